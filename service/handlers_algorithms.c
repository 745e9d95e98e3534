/*
 * handlers_algorithms.c - GET /v1/algorithms: the catalogue, served from
 * the same tables (alg_ops, objective and constraint registries) that
 * validate requests.
 */
#include "alg.h"
#include "handlers.h"

static json_t *
param_json(const struct alg_param *p)
{
	const char *type = p->type == ALG_PARAM_INT    ? "integer"
			   : p->type == ALG_PARAM_BOOL ? "boolean"
						       : "number";

	return json_pack("{s:s, s:s, s:f, s:f, s:f, s:s}", "name", p->name, "type", type, "min",
			 p->min, "max", p->max, "default", p->def, "doc", p->doc);
}

static const char *const task_names[TASK__COUNT] = {
	[TASK_BINARY] = "binary",
	[TASK_REGRESSION] = "regression",
	[TASK_MULTICLASS] = "multiclass",
	[TASK_UNLABELED] = "unlabeled",
};

/* One objective of the catalogue: name, kind ("minimize", "saddle"), doc
 * (formula and how each constant is derived), the tasks it fits and the
 * request keys it takes. */
static json_t *
objective_json(const char *name, const struct objective_ops *o)
{
	json_t *tasks = json_array(), *params = json_array();

	for (int t = 0; o != NULL && t < TASK__COUNT; t++)
		if (o->tasks & (1u << t))
			json_array_append_new(tasks, json_string(task_names[t]));
	for (int p = 0; o != NULL && p < OBJ_P__COUNT; p++)
		if (o->params & (1u << p))
			json_array_append_new(
				params, json_string(objective_param_name((enum objective_param)p)));
	const char *kind = o != NULL ? objective_kind_name(o->kind) : NULL;

	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:b}", "name", name, "kind",
			 kind != NULL ? kind : "minimize", "doc", o != NULL ? o->doc : "", "tasks",
			 tasks, "params", params, "smooth", o != NULL && o->smooth);
}

/* The set kinds of the bits of mask (1u << CONSTRAINT_*). */
static json_t *
kinds_json(unsigned mask)
{
	json_t *kinds = json_array();

	for (int k = 0; kinds != NULL && k < CONSTRAINT__COUNT; k++)
		if (mask & (1u << k))
			json_array_append_new(
				kinds, json_string(constraint_kind_name((enum constraint_kind)k)));
	return kinds;
}

/* One algorithm: ... "saddle" (solves min_x max_y of saddle objectives),
 * "constraints": {"x": kinds[, "y": kinds for saddle methods]}, and for a
 * selection method "grid_base", the method whose parameters its
 * "params.grid" names. */
static json_t *
alg_json(const struct alg_ops *a)
{
	json_t *params = json_array(), *objectives = json_array(), *r;

	for (const struct alg_param *p = a->params; p->name != NULL; p++)
		json_array_append_new(params, param_json(p));
	for (size_t i = 0; a->objectives[i] != NULL; i++) {
		const struct objective_ops *o = objective_find(a->objectives[i]);

		json_array_append_new(objectives, objective_json(a->objectives[i], o));
	}
	r = json_pack("{s:s, s:i, s:s, s:s, s:s, s:b, s:o, s:o, s:{s:o}}", "name", a->name,
		      "version", (int)a->version, "doc", a->doc, "paper", a->paper, "privacy_model",
		      a->privacy_model, "saddle", a->saddle, "params", params, "objectives",
		      objectives, "constraints", "x", kinds_json(a->constraints));
	if (r != NULL && a->saddle &&
	    json_object_set_new(json_object_get(r, "constraints"), "y",
				kinds_json(a->constraints_y)) != 0) {
		json_decref(r);
		r = NULL;
	}
	/* A selection method: "params.grid" names this method's parameters. */
	if (r != NULL && a->grid_base != NULL &&
	    json_object_set_new(r, "grid_base", json_string(a->grid_base->name)) != 0) {
		json_decref(r);
		r = NULL;
	}
	return r;
}

json_t *
catalogue_json(void)
{
	json_t *items = json_array();

	for (size_t i = 0; items != NULL && i < alg_count(); i++)
		json_array_append_new(items, alg_json(alg_at(i)));
	return json_pack("{s:o}", "algorithms", items);
}

HANDLER(handle_algorithms)
{
	ret->status = 200;
	ret->body = catalogue_json();
	return ret->body != NULL ? ERR_OK : err_set(e, ERR_NOMEM, "out of memory");
}
