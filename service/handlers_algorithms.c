/*
 * handlers_algorithms.c - GET /v1/algorithms: the catalogue, served from
 * the same tables (alg_ops, objective and constraint registries) that
 * validate requests.
 */
#include <string.h>

#include "alg.h"
#include "handlers.h"

static json_t *
param_json(const struct alg_param *p)
{
	const char *type = p->type == ALG_PARAM_INT    ? "integer"
			   : p->type == ALG_PARAM_BOOL ? "boolean"
						       : "number";

	json_t *r = json_pack("{s:s, s:s, s:f, s:f, s:f, s:s}", "name", p->name, "type", type,
			      "min", p->min, "max", p->max, "default", p->def, "doc", p->doc);

	/* Named values: "choices" lists them in order (min, min + 1, ...). */
	if (r != NULL && p->type == ALG_PARAM_INT && p->choices != NULL) {
		json_t *c = json_array();

		for (size_t k = 0; c != NULL && p->choices[k] != NULL; k++)
			json_array_append_new(c, json_string(p->choices[k]));
		if (json_object_set_new(r, "choices", c) != 0) {
			json_decref(r);
			r = NULL;
		}
	}
	return r;
}

static json_t *
modes_json(unsigned modes)
{
	json_t *a = json_array();

	if (a != NULL && (modes & (1u << ACCOUNTING_BASIC)))
		json_array_append_new(a, json_string("basic"));
	if (a != NULL && (modes & (1u << ACCOUNTING_RENYI)))
		json_array_append_new(a, json_string("renyi"));
	return a;
}

/* "ledger_modes": {"default": modes, "rules": [{"param", "value",
 * "modes", "hint"}]}: which dataset accounting modes can charge the
 * method's runs (alg_mode_rule). */
static json_t *
ledger_modes_json(const struct alg_ops *a)
{
	const unsigned all = (1u << ACCOUNTING__COUNT) - 1u;
	json_t *rules = json_array();

	for (const struct alg_mode_rule *r = a->mode_rules;
	     rules != NULL && r != NULL && r->param != NULL; r++) {
		const struct alg_param *p = alg_param_find(a, r->param);
		const char *name = p != NULL ? alg_param_choice_name(p, r->value) : NULL;
		json_t *value = name != NULL ? json_string(name) : json_real(r->value);

		json_array_append_new(rules,
				      json_pack("{s:s, s:o, s:o, s:s}", "param", r->param, "value",
						value, "modes", modes_json(r->modes), "hint",
						r->hint != NULL ? r->hint : ""));
	}
	return json_pack("{s:o, s:o}", "default", modes_json(a->modes != 0 ? a->modes : all),
			 "rules", rules);
}

static const char *const task_names[TASK__COUNT] = {
	[TASK_BINARY] = "binary",
	[TASK_REGRESSION] = "regression",
	[TASK_MULTICLASS] = "multiclass",
	[TASK_UNLABELED] = "unlabeled",
};

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

/* One objective of the catalogue: name, kind ("minimize", "saddle"), doc
 * (formula and how each constant is derived), the tasks it fits, the
 * request keys it takes and, when it restricts them (objective_ops.sets),
 * the set kinds it takes for constraints.x. */
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

	json_t *r = json_pack("{s:s, s:s, s:s, s:o, s:o, s:b, s:s}", "name", name, "kind",
			      kind != NULL ? kind : "minimize", "doc", o != NULL ? o->doc : "",
			      "tasks", tasks, "params", params, "smooth", o != NULL && o->smooth,
			      "oracle", o != NULL && o->value_only ? "value" : "gradient");

	if (r != NULL && o != NULL && o->sets != 0 &&
	    json_object_set_new(r, "sets", kinds_json(o->sets)) != 0) {
		json_decref(r);
		return NULL;
	}
	return r;
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
	if (r != NULL && a->synthetic && json_object_set_new(r, "synthetic", json_true()) != 0) {
		json_decref(r);
		r = NULL;
	}
	if (r != NULL && a->saddle &&
	    json_object_set_new(json_object_get(r, "constraints"), "y",
				kinds_json(a->constraints_y)) != 0) {
		json_decref(r);
		r = NULL;
	}
	if (r != NULL && json_object_set_new(r, "ledger_modes", ledger_modes_json(a)) != 0) {
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
