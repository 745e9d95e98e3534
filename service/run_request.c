/*
 * run_request.c - validate a run request and normalise it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraint_json.h"
#include "event_json.h"
#include "jv.h"
#include "run_request.h"
#include "sgd/subsampled.h"
#include "synthetic/kway.h"

/* An optional array of 1..max finite numbers at objective.<key>. */
static enum err_code
parse_prior(const json_t *obj, const char *key, size_t max, double *v, size_t *ret_n, struct err *e)
{
	json_t *a = json_object_get(obj, key), *x;
	char path[64];
	size_t i;

	jv_path(path, sizeof(path), "objective", key);
	*ret_n = 0;
	if (a == NULL)
		return ERR_OK;
	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > max)
		return err_set_field(e, ERR_INVALID, path,
				     "'%s' must be an array of 1 to %zu numbers", path, max);
	json_array_foreach (a, i, x) {
		if (!json_is_number(x) || !isfinite(json_number_value(x)))
			return err_set_field(e, ERR_INVALID, path, "'%s' must hold numbers", path);
		v[i] = json_number_value(x);
	}
	*ret_n = json_array_size(a);
	return ERR_OK;
}

/* "objective.matrix": a square array of arrays of numbers, at most
 * OBJECTIVE_MAX_MATRIX_DIM rows, into p (row-major). */
static enum err_code
parse_matrix(const json_t *obj, struct objective_params *p, struct err *e)
{
	const char *path = "objective.matrix";
	json_t *a = json_object_get(obj, "matrix"), *row, *x;
	size_t n, i, j;

	p->matrix_dim = 0;
	if (a == NULL)
		return ERR_OK;
	n = json_is_array(a) ? json_array_size(a) : 0;
	if (n == 0 || n > OBJECTIVE_MAX_MATRIX_DIM)
		return err_set_field(e, ERR_INVALID, path, "'%s' must be an array of 1 to %d rows",
				     path, OBJECTIVE_MAX_MATRIX_DIM);
	json_array_foreach (a, i, row) {
		if (!json_is_array(row) || json_array_size(row) != n)
			return err_set_field(e, ERR_INVALID, path,
					     "'%s' must be square: row %zu must be an array of %zu "
					     "numbers",
					     path, i, n);
		json_array_foreach (row, j, x) {
			if (!json_is_number(x) || !isfinite(json_number_value(x)))
				return err_set_field(e, ERR_INVALID, path, "'%s' must hold numbers",
						     path);
			p->matrix[i * n + j] = json_number_value(x);
		}
	}
	p->matrix_dim = n;
	return ERR_OK;
}

/* The rows of a square row-major matrix as an array of arrays. */
static json_t *
matrix_json(const double *m, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < n; i++) {
		json_t *row = json_array();

		for (size_t j = 0; row != NULL && j < n; j++)
			json_array_append_new(row, json_real(m[i * n + j]));
		if (row == NULL || json_array_append_new(a, row) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *
array_json(const double *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < n; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

/*
 * The "objective" object: {"name", "intercept", "ridge", "l1",
 * "huber_delta", "class_prior", "group_proportions", "coupling",
 * "parity_tolerance", "matrix", "width", "init_seed"}, checked against the
 * dataset's public schema by objective_init().  "params": {} is still
 * accepted (and dropped) so that runs stored before objectives had
 * parameters parse again in the worker.  *ret_norm (owned) is the object
 * with every default filled in.
 */
static enum err_code
parse_objective(const json_t *obj, const struct alg_ops *alg, const struct data_schema *schema,
		struct objective *ret, json_t **ret_norm, struct err *e)
{
	static const char *const keys[] = { "name",
					    "intercept",
					    "ridge",
					    "l1",
					    "huber_delta",
					    "class_prior",
					    "group_proportions",
					    "params",
					    "coupling",
					    "parity_tolerance",
					    "matrix",
					    "width",
					    "init_seed",
					    NULL };
	static const char *const no_keys[] = { NULL };
	struct objective_params p;
	const struct objective_ops *ops;
	const char *name;
	json_t *legacy, *icpt, *norm;
	long long width = 0, init_seed = OBJECTIVE_DEFAULT_INIT_SEED;
	enum err_code rc;

	objective_params_default(&p);
	if ((rc = jv_only_keys(obj, "objective", keys, e)) != ERR_OK ||
	    (rc = jv_string(obj, "objective", "name", true, 64, &name, e)) != ERR_OK ||
	    (rc = jv_object(obj, "objective", "params", false, &legacy, e)) != ERR_OK)
		return rc;
	if (legacy != NULL && (rc = jv_only_keys(legacy, "objective.params", no_keys, e)) != ERR_OK)
		return rc;
	ops = objective_find(name);
	if (ops == NULL || !alg_supports_objective(alg, name))
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective '%s' is not supported by %s", name, alg->name);
	icpt = json_object_get(obj, "intercept");
	if (icpt != NULL && !json_is_boolean(icpt))
		return err_set_field(e, ERR_INVALID, "objective.intercept",
				     "'objective.intercept' must be a boolean");
	/* Intercept: off by default, except for the methods with defaults
	 * from the bounds (alg_ops.defaults_from_bounds: dp_sgd.subsampled,
	 * select.random_stopping) on a one-margin loss that takes one
	 * (algorithms/sgd/README.md). */
	if (icpt != NULL)
		p.intercept = json_is_true(icpt);
	else
		p.intercept = alg->defaults_from_bounds && ops->phi != NULL &&
			      (ops->params & (1u << OBJ_P_INTERCEPT)) != 0;
	if ((rc = jv_number(obj, "objective", "ridge", false, 0, false, 1e9, &p.ridge, NULL, e)) !=
		    ERR_OK ||
	    (rc = jv_number(obj, "objective", "l1", false, 0, false, 1e9, &p.l1, NULL, e)) !=
		    ERR_OK ||
	    (rc = jv_number(obj, "objective", "huber_delta", false, 0, true, 1e9, &p.huber_delta,
			    NULL, e)) != ERR_OK ||
	    (rc = jv_number(obj, "objective", "coupling", false, 0, false, 1e9, &p.coupling, NULL,
			    e)) != ERR_OK ||
	    (rc = jv_number(obj, "objective", "parity_tolerance", false, 0, false, 1e9,
			    &p.parity_tolerance, NULL, e)) != ERR_OK ||
	    (rc = jv_integer(obj, "objective", "width", false, 1, OBJECTIVE_MAX_WIDTH, &width, NULL,
			     e)) != ERR_OK ||
	    (rc = jv_integer(obj, "objective", "init_seed", false, 0, 4294967295LL, &init_seed,
			     NULL, e)) != ERR_OK ||
	    (rc = parse_matrix(obj, &p, e)) != ERR_OK ||
	    (rc = parse_prior(obj, "class_prior", DATA_MAX_CLASSES, p.class_prior, &p.n_class_prior,
			      e)) != ERR_OK ||
	    (rc = parse_prior(obj, "group_proportions", DATA_MAX_GROUPS, p.group_proportions,
			      &p.n_group_proportions, e)) != ERR_OK)
		return rc;
	p.width = (size_t)width;
	p.init_seed = (unsigned long long)init_seed;
	rc = objective_init(ret, ops, &p, schema, e);
	if (rc != ERR_OK)
		return rc;

	norm = json_pack("{s:s, s:b, s:f, s:f}", "name", ops->name, "intercept", p.intercept,
			 "ridge", p.ridge, "l1", p.l1);
	if (norm != NULL && ops->params & (1u << OBJ_P_HUBER_DELTA))
		json_object_set_new(norm, "huber_delta", json_real(ret->delta));
	if (norm != NULL && ops->params & (1u << OBJ_P_COUPLING))
		json_object_set_new(norm, "coupling", json_real(p.coupling));
	if (norm != NULL && ops->params & (1u << OBJ_P_PARITY_TOLERANCE))
		json_object_set_new(norm, "parity_tolerance", json_real(p.parity_tolerance));
	if (norm != NULL && ops->params & (1u << OBJ_P_WIDTH))
		json_object_set_new(norm, "width", json_integer((json_int_t)p.width));
	if (norm != NULL && ops->params & (1u << OBJ_P_INIT_SEED))
		json_object_set_new(norm, "init_seed", json_integer((json_int_t)p.init_seed));
	if (norm != NULL && p.matrix_dim > 0)
		json_object_set_new(norm, "matrix", matrix_json(p.matrix, p.matrix_dim));
	if (norm != NULL && p.n_class_prior > 0)
		json_object_set_new(norm, "class_prior",
				    array_json(p.class_prior, p.n_class_prior));
	if (norm != NULL && p.n_group_proportions > 0)
		json_object_set_new(norm, "group_proportions",
				    array_json(p.group_proportions, p.n_group_proportions));
	if (norm == NULL)
		return err_set(e, ERR_NOMEM, "cannot normalise the objective");
	*ret_norm = norm;
	return ERR_OK;
}

/* A named value of an integer parameter with choices ("variant":
 * "pure"): *ret = min + its index; 400 naming the parameter and listing
 * the names otherwise. */
static enum err_code
param_choice(const struct alg_param *p, const json_t *s, long long *ret, struct err *e)
{
	char path[128], names[256] = "";
	size_t len = 0;
	double v;

	if (alg_param_choice_value(p, json_string_value(s), &v)) {
		*ret = (long long)v;
		return ERR_OK;
	}
	for (size_t k = 0; p->choices[k] != NULL; k++)
		len += (size_t)snprintf(names + len, len < sizeof(names) ? sizeof(names) - len : 0,
					"%s'%s'", k > 0 ? ", " : "", p->choices[k]);
	jv_path(path, sizeof(path), "params", p->name);
	return err_set_field(e, ERR_INVALID, path, "'%s' must be one of %s", path, names);
}

/* One value of a grid dimension, checked against the base parameter's
 * schema entry p; field names the value ("params.grid.clip[2]"). */
static enum err_code
grid_value(const json_t *v, const struct alg_param *p, const char *field, double *ret,
	   struct err *e)
{
	double x;

	if (p->type == ALG_PARAM_BOOL) {
		if (!json_is_boolean(v))
			return err_set_field(e, ERR_INVALID, field, "'%s' must be a boolean",
					     field);
		*ret = json_is_true(v) ? 1.0 : 0.0;
		return ERR_OK;
	}
	if (p->type == ALG_PARAM_INT && p->choices != NULL && json_is_string(v)) {
		if (alg_param_choice_value(p, json_string_value(v), ret))
			return ERR_OK;
		return err_set_field(e, ERR_INVALID, field, "'%s' is not a value of '%s'", field,
				     p->name);
	}
	if (!json_is_number(v))
		return err_set_field(e, ERR_INVALID, field, "'%s' must be a number", field);
	x = json_number_value(v);
	if (!(x >= p->min && x <= p->max) || (p->type == ALG_PARAM_INT && x != floor(x)))
		return err_set_field(e, ERR_INVALID, field, "'%s' must be %s in [%g, %g]", field,
				     p->type == ALG_PARAM_INT ? "an integer" : "a number", p->min,
				     p->max);
	*ret = x;
	return ERR_OK;
}

/*
 * "params.grid" of a selection method: an object mapping names of the
 * base method's parameters to non-empty arrays of values (struct
 * alg_grid's limits), normalised into norm as the same object with each
 * value in its schema type.
 */
static enum err_code
parse_grid(const json_t *g, const struct alg_ops *base, struct alg_grid *ret, json_t *norm,
	   struct err *e)
{
	const char *key;
	json_t *vals, *out = json_object();
	char path[96], item[128];
	size_t total = 1;
	enum err_code rc = ERR_OK;

	memset(ret, 0, sizeof(*ret));
	if (out == NULL)
		return err_set(e, ERR_NOMEM, "cannot normalise params.grid");
	if (!json_is_object(g) || json_object_size(g) == 0) {
		json_decref(out);
		return err_set_field(e, ERR_INVALID, "params.grid",
				     "'params.grid' must be an object naming 1 to %d of %s's "
				     "parameters, each with an array of values",
				     ALG_GRID_MAX_DIMS, base->name);
	}
	json_object_foreach ((json_t *)g, key, vals) {
		struct alg_grid_dim *d;
		const struct alg_param *p = NULL;
		json_t *arr;
		unsigned k;

		jv_path(path, sizeof(path), "params.grid", key);
		for (k = 0; base->params[k].name != NULL; k++)
			if (strcmp(base->params[k].name, key) == 0) {
				p = &base->params[k];
				break;
			}
		if (p == NULL) {
			rc = err_set_field(e, ERR_INVALID, path, "'%s' is not a parameter of %s",
					   path, base->name);
			break;
		}
		if (ret->n_dims == ALG_GRID_MAX_DIMS) {
			rc = err_set_field(e, ERR_INVALID, "params.grid",
					   "'params.grid' names more than %d parameters",
					   ALG_GRID_MAX_DIMS);
			break;
		}
		if (!json_is_array(vals) || json_array_size(vals) == 0 ||
		    json_array_size(vals) > ALG_GRID_MAX_VALUES) {
			rc = err_set_field(e, ERR_INVALID, path,
					   "'%s' must be an array of 1 to %d values", path,
					   ALG_GRID_MAX_VALUES);
			break;
		}
		d = &ret->dim[ret->n_dims++];
		d->param = k;
		d->n = (unsigned)json_array_size(vals);
		arr = json_array();
		for (unsigned i = 0; i < d->n && rc == ERR_OK; i++) {
			snprintf(item, sizeof(item), "%.90s[%u]", path, i);
			rc = grid_value(json_array_get(vals, i), p, item, &d->value[i], e);
			if (rc == ERR_OK && arr != NULL)
				json_array_append_new(
					arr, p->type == ALG_PARAM_BOOL
						     ? json_boolean(d->value[i] != 0.0)
					     : p->type == ALG_PARAM_INT
						     ? json_integer((json_int_t)d->value[i])
						     : json_real(d->value[i]));
		}
		if (arr != NULL)
			json_object_set_new(out, key, arr);
		if (rc != ERR_OK)
			break;
		total *= d->n;
	}
	if (rc == ERR_OK && total > ALG_GRID_MAX_CANDIDATES)
		rc = err_set_field(e, ERR_INVALID, "params.grid",
				   "'params.grid' has %zu candidates; at most %d are allowed",
				   total, ALG_GRID_MAX_CANDIDATES);
	if (rc != ERR_OK) {
		json_decref(out);
		memset(ret, 0, sizeof(*ret));
		return rc;
	}
	json_object_set_new(norm, "grid", out);
	return ERR_OK;
}

static enum err_code
parse_params(const json_t *params, const struct alg_ops *alg, double *v, struct alg_grid *grid,
	     json_t *norm, struct err *e)
{
	const struct alg_param *p;
	const char *key;
	json_t *val;
	char path[96];
	enum err_code rc;

	alg_default_params(alg, v);
	memset(grid, 0, sizeof(*grid));
	json_object_foreach ((json_t *)params, key, val) {
		bool known = false;

		if (alg->grid_base != NULL && strcmp(key, "grid") == 0) {
			rc = parse_grid(val, alg->grid_base, grid, norm, e);
			if (rc != ERR_OK)
				return rc;
			continue;
		}
		for (p = alg->params; p->name != NULL && !known; p++)
			known = strcmp(p->name, key) == 0;
		if (!known) {
			jv_path(path, sizeof(path), "params", key);
			return err_set_field(e, ERR_INVALID, path, "unknown parameter '%s' for %s",
					     path, alg->name);
		}
	}
	for (size_t i = 0; alg->params[i].name != NULL; i++) {
		p = &alg->params[i];
		switch (p->type) {
		case ALG_PARAM_INT: {
			long long x = (long long)p->def;
			const json_t *s = json_object_get(params, p->name);

			if (p->choices != NULL && json_is_string(s)) {
				rc = param_choice(p, s, &x, e);
			} else {
				rc = jv_integer(params, "params", p->name, false, (long long)p->min,
						(long long)p->max, &x, NULL, e);
			}
			if (rc != ERR_OK)
				return rc;
			v[i] = (double)x;
			if (p->choices != NULL)
				json_object_set_new(
					norm, p->name,
					json_string(alg_param_choice_name(p, (double)x)));
			else
				json_object_set_new(norm, p->name, json_integer(x));
			break;
		}
		case ALG_PARAM_REAL:
			rc = jv_number(params, "params", p->name, false, p->min, false, p->max,
				       &v[i], NULL, e);
			if (rc != ERR_OK)
				return rc;
			json_object_set_new(norm, p->name, json_real(v[i]));
			break;
		case ALG_PARAM_BOOL: {
			json_t *b = json_object_get(params, p->name);

			if (b != NULL && !json_is_boolean(b)) {
				jv_path(path, sizeof(path), "params", p->name);
				return err_set_field(e, ERR_INVALID, path, "'%s' must be a boolean",
						     path);
			}
			if (b != NULL)
				v[i] = json_is_true(b) ? 1.0 : 0.0;
			json_object_set_new(norm, p->name, json_boolean(v[i] != 0.0));
			break;
		}
		}
	}
	return ERR_OK;
}

/*
 * The rest of a request for a synthetic-data method (alg_ops.synthetic): no
 * "objective", no "constraints"; the variable is the histogram over the
 * universe of the categorical attributes (spec.dim = kway_universe(),
 * SIZE_MAX past KWAY_MAX_UNIVERSE: plan() refuses it).
 */
static enum err_code
parse_synthetic(const json_t *doc, const struct dataset_meta *meta, const char *eval_id,
		struct run_request *r, struct run_request *ret, struct err *e)
{
	static const char *const privacy_keys[] = { "epsilon", "delta", NULL };
	json_t *privacy, *params, *empty = NULL, *norm_params = NULL;
	enum err_code rc;

	if (json_object_get(doc, "objective") != NULL)
		return err_set_field(e, ERR_INVALID, "objective",
				     "%s takes no objective: it releases synthetic rows of the "
				     "dataset's categorical attributes",
				     r->alg->name);
	if (json_object_get(doc, "constraints") != NULL)
		return err_set_field(e, ERR_INVALID, "constraints", "%s takes no constraints",
				     r->alg->name);
	if (meta->schema.n_categorical == 0)
		return err_set_field(e, ERR_INVALID, "schema.categorical",
				     "%s needs a dataset with categorical attributes",
				     r->alg->name);
	r->spec.dim = kway_universe(&meta->schema);
	if ((rc = jv_object(doc, "", "privacy", true, &privacy, e)) != ERR_OK ||
	    (rc = jv_only_keys(privacy, "privacy", privacy_keys, e)) != ERR_OK ||
	    (rc = jv_number(privacy, "privacy", "epsilon", true, 0, true, 100, &r->spec.epsilon,
			    NULL, e)) != ERR_OK ||
	    (rc = jv_number(privacy, "privacy", "delta", true, 0, true, 0.5, &r->spec.delta, NULL,
			    e)) != ERR_OK ||
	    (rc = jv_object(doc, "", "params", false, &params, e)) != ERR_OK)
		return rc;
	if (params == NULL)
		params = empty = json_object();
	norm_params = json_object();
	if (params == NULL || norm_params == NULL) {
		rc = err_set(e, ERR_NOMEM, "cannot normalise the request");
		goto out;
	}
	rc = parse_params(params, r->alg, r->spec.params, &r->spec.grid, norm_params, e);
	if (rc != ERR_OK)
		goto out;
	r->spec.n = (size_t)meta->n_rows;
	r->spec.mode = strcmp(meta->mode, "renyi") == 0 ? ACCOUNTING_RENYI : ACCOUNTING_BASIC;
	r->normalised = json_pack("{s:s, s:{s:f, s:f}, s:O}", "algorithm", r->alg->name, "privacy",
				  "epsilon", r->spec.epsilon, "delta", r->spec.delta, "params",
				  norm_params);
	if (r->normalised != NULL && eval_id != NULL &&
	    json_object_set_new(r->normalised, "eval_dataset_id", json_string(eval_id)) != 0) {
		json_decref(r->normalised);
		r->normalised = NULL;
	}
	if (r->normalised == NULL) {
		rc = err_set(e, ERR_NOMEM, "cannot normalise the request");
		goto out;
	}
	*ret = *r;
out:
	json_decref(norm_params);
	json_decref(empty);
	return rc;
}

enum err_code
run_request_parse(const json_t *doc, const struct dataset_meta *meta, struct run_request *ret,
		  struct err *e)
{
	static const char *const top[] = { "algorithm", "objective",       "constraints", "privacy",
					   "params",    "eval_dataset_id", NULL };
	static const char *const constraint_keys[] = { "x", "y", NULL };
	static const char *const privacy_keys[] = { "epsilon", "delta", NULL };
	struct run_request r = { 0 };
	const char *alg_name;
	json_t *objective, *constraints, *cx, *cy, *privacy, *params, *empty = NULL;
	json_t *norm_x = NULL, *norm_y = NULL, *norm_params = NULL, *norm_obj = NULL;
	json_t *empty_constraints = NULL, *default_x = NULL;
	const char *eval_id = NULL;
	bool has_default_x;
	enum err_code rc;

	if ((rc = jv_only_keys(doc, "", top, e)) != ERR_OK ||
	    (rc = jv_string(doc, "", "algorithm", true, 64, &alg_name, e)) != ERR_OK ||
	    (rc = jv_string(doc, "", "eval_dataset_id", false, 64, &eval_id, e)) != ERR_OK)
		return rc;
	if (eval_id != NULL && !is_uuid(eval_id))
		return err_set_field(e, ERR_INVALID, "eval_dataset_id",
				     "'eval_dataset_id' must be the id of a public dataset");
	if (eval_id != NULL)
		snprintf(r.eval_dataset_id, sizeof(r.eval_dataset_id), "%s", eval_id);
	r.alg = alg_find(alg_name);
	if (r.alg == NULL)
		return err_set_field(e, ERR_INVALID, "algorithm",
				     "unknown algorithm '%s' (GET /v1/algorithms lists them)",
				     alg_name);
	/* The dataset's whole public schema: classes, groups, blocks. */
	r.spec.schema = meta->schema;
	if (r.alg->synthetic)
		return parse_synthetic(doc, meta, eval_id, &r, ret, e);
	if ((rc = jv_object(doc, "", "objective", true, &objective, e)) != ERR_OK ||
	    (rc = parse_objective(objective, r.alg, &r.spec.schema, &r.spec.objective, &norm_obj,
				  e)) != ERR_OK)
		return rc;
	r.spec.dim = r.spec.objective.dim;
	/* The methods with defaults from the bounds have a default feasible
	 * set (sgd/subsampled.h); every other method needs constraints.x. */
	has_default_x = r.alg->defaults_from_bounds;
	if ((rc = jv_object(doc, "", "constraints", !has_default_x, &constraints, e)) != ERR_OK)
		goto out_free;
	if (constraints == NULL)
		constraints = empty_constraints = json_object();
	if (constraints == NULL) {
		rc = err_set(e, ERR_NOMEM, "cannot normalise the request");
		goto out_free;
	}
	if ((rc = jv_only_keys(constraints, "constraints", constraint_keys, e)) != ERR_OK ||
	    (rc = jv_object(constraints, "constraints", "x", !has_default_x, &cx, e)) != ERR_OK ||
	    (rc = jv_object(constraints, "constraints", "y", false, &cy, e)) != ERR_OK)
		goto out_free;
	if (cx == NULL) {
		/* The default set, written into the stored request like any
		 * other default. */
		struct constraint def;

		if ((rc = subsampled_default_set(&r.spec.objective, &r.spec.schema, &def, e)) !=
		    ERR_OK)
			goto out_free;
		cx = default_x = json_pack("{s:s, s:f}", "kind", "l2_ball", "radius", def.radius);
		if (cx == NULL) {
			rc = err_set(e, ERR_NOMEM, "cannot normalise the request");
			goto out_free;
		}
	}
	/* The blocks: y for saddle methods only, and then required (the
	 * driver's run_spec_blocks() checks the same again on the spec). */
	if (cy != NULL && !r.alg->saddle) {
		rc = err_set_field(e, ERR_INVALID, "constraints.y",
				   "%s is not a saddle-point method: 'constraints.y' is not used",
				   r.alg->name);
		goto out_free;
	}
	if (cy != NULL && r.spec.objective.ops->kind == OBJECTIVE_OPERATOR) {
		rc = err_set_field(e, ERR_INVALID, "constraints.y",
				   "objective '%s' is an operator (VI) objective on one set: "
				   "'constraints.y' is not used",
				   r.spec.objective.ops->name);
		goto out_free;
	}
	if (cy == NULL && r.alg->saddle && r.spec.objective.ops->kind != OBJECTIVE_OPERATOR) {
		rc = err_set_field(e, ERR_INVALID, "constraints.y",
				   "%s is a saddle-point method: 'constraints.y' (the set of y) "
				   "is required",
				   r.alg->name);
		goto out_free;
	}
	if ((rc = constraint_json_parse(cx, "constraints.x", r.alg->name, r.alg->constraints,
					&r.spec.x, &r.owned_x, &norm_x, e)) != ERR_OK)
		goto out_free;
	if (cy != NULL &&
	    (rc = constraint_json_parse(cy, "constraints.y", r.alg->name, r.alg->constraints_y,
					&r.spec.y, &r.owned_y, &norm_y, e)) != ERR_OK)
		goto out_free;
	r.spec.has_y = cy != NULL;
	if ((rc = jv_object(doc, "", "privacy", true, &privacy, e)) != ERR_OK ||
	    (rc = jv_only_keys(privacy, "privacy", privacy_keys, e)) != ERR_OK ||
	    (rc = jv_number(privacy, "privacy", "epsilon", true, 0, true, 100, &r.spec.epsilon,
			    NULL, e)) != ERR_OK ||
	    (rc = jv_number(privacy, "privacy", "delta", true, 0, true, 0.5, &r.spec.delta, NULL,
			    e)) != ERR_OK)
		goto out_free;
	if ((rc = jv_object(doc, "", "params", false, &params, e)) != ERR_OK)
		goto out_free;
	if (params == NULL)
		params = empty = json_object();
	norm_params = json_object();
	if (params == NULL || norm_params == NULL) {
		rc = err_set(e, ERR_NOMEM, "cannot normalise the request");
		goto out_free;
	}
	rc = parse_params(params, r.alg, r.spec.params, &r.spec.grid, norm_params, e);
	if (rc != ERR_OK)
		goto out_free;
	r.spec.n = (size_t)meta->n_rows;
	r.spec.mode = strcmp(meta->mode, "renyi") == 0 ? ACCOUNTING_RENYI : ACCOUNTING_BASIC;
	r.normalised =
		json_pack("{s:s, s:O, s:{s:O}, s:{s:f, s:f}, s:O}", "algorithm", r.alg->name,
			  "objective", norm_obj, "constraints", "x", norm_x, "privacy", "epsilon",
			  r.spec.epsilon, "delta", r.spec.delta, "params", norm_params);
	if (r.normalised != NULL && norm_y != NULL &&
	    json_object_set(json_object_get(r.normalised, "constraints"), "y", norm_y) != 0) {
		json_decref(r.normalised);
		r.normalised = NULL;
	}
	if (r.normalised != NULL && eval_id != NULL &&
	    json_object_set_new(r.normalised, "eval_dataset_id", json_string(eval_id)) != 0) {
		json_decref(r.normalised);
		r.normalised = NULL;
	}
	if (r.normalised == NULL) {
		rc = err_set(e, ERR_NOMEM, "cannot normalise the request");
		goto out_free;
	}
	*ret = r;
	r.owned_x = r.owned_y = NULL; /* moved into *ret */
out_free:
	free(r.owned_x);
	free(r.owned_y);
	json_decref(norm_obj);
	json_decref(norm_x);
	json_decref(norm_y);
	json_decref(norm_params);
	json_decref(empty);
	json_decref(empty_constraints);
	json_decref(default_x);
	return rc;
}

void
run_request_clear(struct run_request *r)
{
	json_decref(r->normalised);
	free(r->owned_x);
	free(r->owned_y);
	*r = (struct run_request){ 0 };
}

json_t *
run_plan_json(const struct run_plan *plan, enum accounting_mode mode)
{
	const char *source = accountant_source(plan->accountant);
	json_t *used, *j;
	char label[128];

	/* The accountant that bounded this plan's event (its calibration's),
	 * then the ledger the dataset's mode charges. */
	if (source == NULL)
		return NULL;
	snprintf(label, sizeof(label), "%s (%s); %s", plan->accountant, source,
		 mode == ACCOUNTING_BASIC ? "basic composition ledger" : "Rényi filter ledger");
	used = json_object();
	for (size_t i = 0; used != NULL && i < plan->n_used; i++)
		json_object_set_new(used, plan->used[i].name, json_real(plan->used[i].value));
	j = json_pack("{s:I, s:o, s:s, s:{s:f, s:f}, s:o}", "steps", (json_int_t)plan->steps,
		      "event", dp_event_to_json(&plan->event), "accountant", label, "charge",
		      "epsilon", plan->charge_epsilon, "delta", plan->charge_delta, "params_used",
		      used);
	return j;
}

bool
run_plan_warnings(const struct run_plan *plan, json_t *arr)
{
	const double bound = run_plan_value(plan, "gap_bound"),
		     trivial = run_plan_value(plan, "trivial_gap_bound");
	char msg[320];

	if (!(bound >= trivial))
		return true; /* also when either is absent (NAN) */
	snprintf(msg, sizeof(msg),
		 "the theoretical gap bound %.4g is not below the trivial bound %.4g (the "
		 "population objective's range): at this n, epsilon and these declared constants "
		 "(for worst_group_logistic they grow as 1/min group_proportions) the guarantee "
		 "says nothing; more records, a larger epsilon or tighter bounds help",
		 bound, trivial);
	return json_array_append_new(arr, json_string(msg)) == 0;
}

enum err_code
run_request_check_eval(const struct run_request *r, const struct dataset_meta *eval, struct err *e)
{
	const struct data_schema *a = &r->spec.schema, *b = &eval->schema;

	if (!eval->is_public)
		return err_set_field(
			e, ERR_INVALID, "eval_dataset_id",
			"dataset '%s' is not public: metrics on private data are never "
			"returned",
			eval->id);
	if (strcmp(eval->state, "sealed") != 0)
		return err_set_field(e, ERR_INVALID, "eval_dataset_id",
				     "dataset '%s' has no data yet", eval->id);
	if (r->alg->synthetic) {
		/* The same universe: the categorical attributes' names and
		 * sizes, in order. */
		bool same = a->n_categorical == b->n_categorical;

		for (size_t i = 0; same && i < a->n_categorical; i++)
			same = a->categorical[i].size == b->categorical[i].size &&
			       strcmp(a->categorical[i].name, b->categorical[i].name) == 0;
		if (!same)
			return err_set_field(
				e, ERR_INVALID, "eval_dataset_id",
				"dataset '%s' does not have this dataset's categorical "
				"attributes (names and sizes, in order)",
				eval->id);
		return ERR_OK;
	}
	if (a->d != b->d || a->task != b->task || a->n_classes != b->n_classes ||
	    (r->spec.objective.p.n_group_proportions > 0 && a->n_groups != b->n_groups))
		return err_set_field(e, ERR_INVALID, "eval_dataset_id",
				     "dataset '%s' does not have this dataset's features, task and "
				     "classes (and groups for a group-weighted objective)",
				     eval->id);
	/* A saddle objective reads its two vectors from the schema's blocks
	 * (and worst_group_logistic the group column): the same columns. */
	if (r->spec.objective.ops->kind == OBJECTIVE_SADDLE ||
	    r->spec.objective.ops->kind == OBJECTIVE_OPERATOR) {
		bool same = a->n_groups == b->n_groups && a->n_blocks == b->n_blocks;

		for (size_t i = 0; same && i < a->n_blocks; i++)
			same = a->blocks[i].offset == b->blocks[i].offset &&
			       a->blocks[i].size == b->blocks[i].size;
		if (!same)
			return err_set_field(e, ERR_INVALID, "eval_dataset_id",
					     "dataset '%s' does not have this dataset's blocks and "
					     "groups (a saddle objective reads them)",
					     eval->id);
	}
	return ERR_OK;
}

/* A synthetic-data run's result: "synthetic": {"rows", "universe",
 * "cells": [[universe index, count], ...]} (the nonzero counts of its
 * histogram, increasing index) in place of "x". */
static json_t *
synthetic_result_json(const struct run_request *req, const struct run_plan *plan,
		      const double *hist, double wall_ms)
{
	json_t *plan_json = run_plan_json(plan, req->spec.mode), *cells = json_array(), *r = NULL;
	double rows = 0.0;

	for (size_t u = 0; cells != NULL && u < req->spec.dim; u++) {
		if (hist[u] <= 0.0)
			continue;
		rows += hist[u];
		if (json_array_append_new(
			    cells, json_pack("[I, I]", (json_int_t)u, (json_int_t)hist[u])) != 0) {
			json_decref(cells);
			cells = NULL;
		}
	}
	if (cells != NULL && plan_json != NULL)
		r = json_pack("{s:{s:I, s:I, s:O}, s:{s:O, s:O, s:O}, s:O, s:I, s:f}", "synthetic",
			      "rows", (json_int_t)rows, "universe", (json_int_t)req->spec.dim,
			      "cells", cells, "privacy", "event",
			      json_object_get(plan_json, "event"), "charged",
			      json_object_get(plan_json, "charge"), "accountant",
			      json_object_get(plan_json, "accountant"), "params_used",
			      json_object_get(plan_json, "params_used"), "steps",
			      (json_int_t)plan->steps, "wall_time_ms", wall_ms);
	json_decref(cells);
	json_decref(plan_json);
	return r;
}

json_t *
run_result_json(const struct run_request *req, const struct run_plan *plan, const double *x,
		double wall_ms)
{
	if (req->alg->synthetic)
		return synthetic_result_json(req, plan, x, wall_ms);
	/* A saddle run's u = (x, y): its blocks separately (run_spec). */
	size_t dim_x = req->spec.has_y ? req->spec.objective.dim_x : req->spec.dim;
	json_t *xs = array_json(x, dim_x);
	json_t *plan_json = run_plan_json(plan, req->spec.mode);
	json_t *r;

	if (xs == NULL || json_array_size(xs) != dim_x) {
		json_decref(xs);
		json_decref(plan_json);
		return NULL;
	}
	r = json_pack("{s:o, s:{s:O, s:O, s:O}, s:O, s:I, s:f}", "x", xs, "privacy", "event",
		      json_object_get(plan_json, "event"), "charged",
		      json_object_get(plan_json, "charge"), "accountant",
		      json_object_get(plan_json, "accountant"), "params_used",
		      json_object_get(plan_json, "params_used"), "steps", (json_int_t)plan->steps,
		      "wall_time_ms", wall_ms);
	json_decref(plan_json); /* "O" took references of its own */
	if (r != NULL && req->spec.has_y &&
	    json_object_set_new(r, "y", array_json(x + dim_x, req->spec.dim - dim_x)) != 0) {
		json_decref(r);
		r = NULL;
	}
	return r;
}
