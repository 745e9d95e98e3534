/*
 * constraint_json.c - the JSON keys of each constraint kind (see
 * constraint_json.h).  Bounds: every radius and scale in (0, 1e9], box
 * ends in [-1e9, 1e9] with lo < hi (a one-point box is usable by the
 * algorithms but never what a request means), p in (1, 2].
 */
#include <stdio.h>
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
parse_radius(const json_t *obj, const char *prefix, struct constraint *c, struct err *e)
{
	return jv_number(obj, prefix, "radius", true, 0, true, API_MAX, &c->radius, NULL, e);
}

static bool
radius_json(const struct constraint *c, json_t *obj)
{
	return json_object_set_new(obj, "radius", json_real(c->radius)) == 0;
}

static enum err_code
parse_scale(const json_t *obj, const char *prefix, struct constraint *c, struct err *e)
{
	return jv_number(obj, prefix, "scale", true, 0, true, API_MAX, &c->radius, NULL, e);
}

static bool
scale_json(const struct constraint *c, json_t *obj)
{
	return json_object_set_new(obj, "scale", json_real(c->radius)) == 0;
}

static enum err_code
parse_box(const json_t *obj, const char *prefix, struct constraint *c, struct err *e)
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
parse_lp(const json_t *obj, const char *prefix, struct constraint *c, struct err *e)
{
	enum err_code rc;

	if ((rc = parse_radius(obj, prefix, c, e)) != ERR_OK)
		return rc;
	return jv_number(obj, prefix, "p", true, 1, true, 2, &c->p, NULL, e);
}

static bool
lp_json(const struct constraint *c, json_t *obj)
{
	return radius_json(c, obj) && json_object_set_new(obj, "p", json_real(c->p)) == 0;
}

static const struct constraint_json_ops json_ops[] = {
	[CONSTRAINT_L2_BALL] = { radius_keys, parse_radius, radius_json },
	[CONSTRAINT_L1_BALL] = { radius_keys, parse_radius, radius_json },
	[CONSTRAINT_SIMPLEX] = { scale_keys, parse_scale, scale_json },
	[CONSTRAINT_BOX] = { box_keys, parse_box, box_json },
	[CONSTRAINT_LP_BALL] = { lp_keys, parse_lp, lp_json },
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
		      struct constraint *ret, json_t **ret_norm, struct err *e)
{
	const struct constraint_json_ops *ops;
	const char *allowed[8] = { "kind" };
	struct constraint c = { 0 };
	const char *kind;
	char path[96], kinds[128];
	size_t na = 1;
	int k;
	enum err_code rc;

	*ret_norm = NULL;
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
	    (rc = ops->parse(obj, prefix, &c, e)) != ERR_OK)
		return rc;
	/* The set's own rules (e.g. 1 < p <= 2), naming the field. */
	if ((rc = constraint_validate(&c, 1, prefix, e)) != ERR_OK)
		return rc;
	*ret_norm = constraint_json(&c);
	if (*ret_norm == NULL)
		return err_set(e, ERR_NOMEM, "cannot normalise the constraint");
	*ret = c;
	return ERR_OK;
}
