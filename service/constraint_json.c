/*
 * constraint_json.c - the JSON keys of each constraint kind (see
 * constraint_json.h).  Bounds: every radius and scale in (0, 1e9], box
 * ends in [-1e9, 1e9] with lo < hi (a one-point box is usable by the
 * algorithms but never what a request means), p in (1, 2], a polytope's
 * vertices 2 to CONSTRAINT_MAX_VERTICES rows of the same d >= 1 numbers
 * in [-1e9, 1e9] (the service's DPOPT_MAX_VERTICES is checked by the run
 * pipeline, 422; the 1 MB request body bounds the list besides).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraint_json.h"
#include "jv.h"
#include "util.h"

#define API_MAX 1e9

static const char *const radius_keys[] = { "radius", NULL };
static const char *const scale_keys[] = { "scale", NULL };
static const char *const box_keys[] = { "lo", "hi", NULL };
static const char *const lp_keys[] = { "radius", "p", NULL };

static enum err_code
parse_radius(const json_t *obj, const char *prefix, struct constraint *c, double **ret_owned,
	     struct err *e)
{
	return jv_number(obj, prefix, "radius", true, 0, true, API_MAX, &c->radius, NULL, e);
}

static bool
radius_json(const struct constraint *c, json_t *obj)
{
	return json_object_set_new(obj, "radius", json_real(c->radius)) == 0;
}

static enum err_code
parse_scale(const json_t *obj, const char *prefix, struct constraint *c, double **ret_owned,
	    struct err *e)
{
	return jv_number(obj, prefix, "scale", true, 0, true, API_MAX, &c->radius, NULL, e);
}

static bool
scale_json(const struct constraint *c, json_t *obj)
{
	return json_object_set_new(obj, "scale", json_real(c->radius)) == 0;
}

static enum err_code
parse_box(const json_t *obj, const char *prefix, struct constraint *c, double **ret_owned,
	  struct err *e)
{
	char path[96];
	enum err_code rc;

	if ((rc = jv_number(obj, prefix, "lo", true, -API_MAX, false, API_MAX, &c->lo, NULL, e)) !=
		    ERR_OK ||
	    (rc = jv_number(obj, prefix, "hi", true, -API_MAX, false, API_MAX, &c->hi, NULL, e)) !=
		    ERR_OK)
		return rc;
	if (!(c->lo < c->hi)) {
		jv_path(path, sizeof(path), prefix, "hi");
		return err_set_field(e, ERR_INVALID, path, "'%s' must be above lo", path);
	}
	return ERR_OK;
}

static bool
box_json(const struct constraint *c, json_t *obj)
{
	return json_object_set_new(obj, "lo", json_real(c->lo)) == 0 &&
	       json_object_set_new(obj, "hi", json_real(c->hi)) == 0;
}

static enum err_code
parse_lp(const json_t *obj, const char *prefix, struct constraint *c, double **ret_owned,
	 struct err *e)
{
	enum err_code rc;

	if ((rc = parse_radius(obj, prefix, c, ret_owned, e)) != ERR_OK)
		return rc;
	return jv_number(obj, prefix, "p", true, 1, true, 2, &c->p, NULL, e);
}

static bool
lp_json(const struct constraint *c, json_t *obj)
{
	return radius_json(c, obj) && json_object_set_new(obj, "p", json_real(c->p)) == 0;
}

/* "vertices": [[v_11, .., v_1d], .., [v_m1, .., v_md]] into storage owned
 * by *ret_owned (constraint_polytope()'s layout), errors naming
 * prefix.vertices or prefix.vertices[i]. */
static enum err_code
parse_polytope(const json_t *obj, const char *prefix, struct constraint *c, double **ret_owned,
	       struct err *e)
{
	const json_t *rows = json_object_get(obj, "vertices");
	char path[96], row_path[128];
	size_t m, d, n;
	double *storage;
	enum err_code rc;

	jv_path(path, sizeof(path), prefix, "vertices");
	if (rows == NULL)
		return err_set_field(e, ERR_INVALID, path, "'%s' is required", path);
	if (!json_is_array(rows) || json_array_size(rows) < 2)
		return err_set_field(e, ERR_INVALID, path,
				     "'%s' must be an array of at least 2 vertices (arrays of "
				     "numbers)",
				     path);
	m = json_array_size(rows);
	if (m > CONSTRAINT_MAX_VERTICES)
		return err_set_field(e, ERR_NUMERIC, path, "'%s' lists more than %d vertices", path,
				     CONSTRAINT_MAX_VERTICES);
	d = json_is_array(json_array_get(rows, 0)) ? json_array_size(json_array_get(rows, 0)) : 0;
	n = constraint_polytope_storage(m, d);
	for (size_t i = 0; i < m; i++) {
		const json_t *row = json_array_get(rows, i);

		snprintf(row_path, sizeof(row_path), "%s[%zu]", path, i);
		if (!json_is_array(row) || json_array_size(row) == 0 || json_array_size(row) != d)
			return err_set_field(e, ERR_INVALID, row_path,
					     "'%s' must be an array of %zu numbers (every vertex "
					     "has the length of the first, at least 1)",
					     row_path, d > 0 ? d : 1);
		for (size_t k = 0; k < d; k++) {
			const json_t *v = json_array_get(row, k);

			if (!json_is_number(v) || !(fabs(json_number_value(v)) <= API_MAX))
				return err_set_field(e, ERR_INVALID, row_path,
						     "'%s' must hold numbers in [-1e9, 1e9]",
						     row_path);
		}
	}
	if (n == 0)
		return err_set_field(e, ERR_NUMERIC, path, "'%s' is too large", path);
	storage = malloc(n * sizeof(*storage));
	if (storage == NULL)
		return err_set(e, ERR_NOMEM, "cannot store the polytope's vertices");
	for (size_t i = 0; i < m; i++)
		for (size_t k = 0; k < d; k++)
			storage[i * d + k] =
				json_number_value(json_array_get(json_array_get(rows, i), k));
	rc = constraint_polytope(c, m, d, storage, prefix, e);
	if (rc != ERR_OK) {
		free(storage);
		return rc;
	}
	*ret_owned = storage;
	return ERR_OK;
}

static bool
polytope_json(const struct constraint *c, json_t *obj)
{
	json_t *rows = json_array();

	for (size_t i = 0; rows != NULL && i < c->n_vertices; i++) {
		json_t *row = json_array();

		for (size_t k = 0; row != NULL && k < c->vertex_dim; k++)
			if (json_array_append_new(
				    row, json_real(c->vertices[i * c->vertex_dim + k])) != 0) {
				json_decref(row);
				row = NULL;
			}
		if (row == NULL || json_array_append_new(rows, row) != 0) {
			json_decref(rows);
			rows = NULL;
		}
	}
	return rows != NULL && json_object_set_new(obj, "vertices", rows) == 0;
}

static const char *const polytope_keys[] = { "vertices", NULL };

static const struct constraint_json_ops json_ops[] = {
	[CONSTRAINT_L2_BALL] = { radius_keys, parse_radius, radius_json },
	[CONSTRAINT_L1_BALL] = { radius_keys, parse_radius, radius_json },
	[CONSTRAINT_SIMPLEX] = { scale_keys, parse_scale, scale_json },
	[CONSTRAINT_BOX] = { box_keys, parse_box, box_json },
	[CONSTRAINT_LP_BALL] = { lp_keys, parse_lp, lp_json },
	[CONSTRAINT_POLYTOPE] = { polytope_keys, parse_polytope, polytope_json },
};

_Static_assert(ARRAY_SIZE(json_ops) == CONSTRAINT__COUNT,
	       "every constraint kind has a row of JSON keys in json_ops");

const struct constraint_json_ops *
constraint_json_ops_of(enum constraint_kind k)
{
	if ((unsigned)k >= ARRAY_SIZE(json_ops))
		return NULL;
	return &json_ops[k];
}

/* "l2_ball, l1_ball, ..." from the algorithms' table, in enum order. */
static void
kind_list(char *out, size_t cap)
{
	size_t len = 0;

	out[0] = '\0';
	for (int k = 0; k < CONSTRAINT__COUNT && len < cap; k++) {
		int n = snprintf(out + len, cap - len, "%s%s", k > 0 ? ", " : "",
				 constraint_kind_name((enum constraint_kind)k));

		if (n < 0)
			break;
		len += (size_t)n;
	}
}

json_t *
constraint_json(const struct constraint *c)
{
	const struct constraint_json_ops *ops = constraint_json_ops_of(c->kind);
	json_t *obj;

	if (ops == NULL)
		return NULL;
	obj = json_pack("{s:s}", "kind", constraint_kind_name(c->kind));
	if (obj != NULL && !ops->to_json(c, obj)) {
		json_decref(obj);
		obj = NULL;
	}
	return obj;
}

enum err_code
constraint_json_parse(const json_t *obj, const char *prefix, const char *who, unsigned supported,
		      struct constraint *ret, double **ret_owned, json_t **ret_norm, struct err *e)
{
	double *owned = NULL;
	const struct constraint_json_ops *ops;
	const char *allowed[8] = { "kind" };
	struct constraint c = { 0 };
	const char *kind;
	char path[96], kinds[128];
	size_t na = 1;
	int k;
	enum err_code rc;

	*ret_norm = NULL;
	*ret_owned = NULL;
	rc = jv_string(obj, prefix, "kind", true, 32, &kind, e);
	if (rc != ERR_OK)
		return rc;
	jv_path(path, sizeof(path), prefix, "kind");
	k = constraint_kind_from_name(kind);
	if (k < 0) {
		kind_list(kinds, sizeof(kinds));
		return err_set_field(e, ERR_INVALID, path, "'%s' must be one of %s", path, kinds);
	}
	if (!(supported & (1u << k)))
		return err_set_field(e, ERR_INVALID, path, "%s does not support '%s' = '%s'", who,
				     path, kind);
	c.kind = (enum constraint_kind)k;
	ops = constraint_json_ops_of(c.kind);
	for (const char *const *key = ops->keys; *key != NULL && na + 1 < ARRAY_SIZE(allowed);
	     key++)
		allowed[na++] = *key;
	allowed[na] = NULL;
	if ((rc = jv_only_keys(obj, prefix, allowed, e)) != ERR_OK ||
	    (rc = ops->parse(obj, prefix, &c, &owned, e)) != ERR_OK)
		return rc;
	/* The set's own rules (e.g. 1 < p <= 2), naming the field, in its
	 * own dimension (a polytope's vertices fix it; any for the others:
	 * the variable's is checked when the run is planned). */
	if ((rc = constraint_validate(&c, c.vertex_dim > 0 ? c.vertex_dim : 1, prefix, e)) !=
	    ERR_OK) {
		free(owned);
		return rc;
	}
	*ret_norm = constraint_json(&c);
	if (*ret_norm == NULL) {
		free(owned);
		return err_set(e, ERR_NOMEM, "cannot normalise the constraint");
	}
	*ret = c;
	*ret_owned = owned;
	return ERR_OK;
}
