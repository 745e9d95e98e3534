/*
 * run_blocks.c - run_spec_blocks(): which blocks a run has and whether the
 * method takes them (alg.h).  Kept out of driver.c so that the generic
 * request checks can call it from one place.
 */
#include <math.h>

#include "alg.h"

static enum err_code
check_set(const struct constraint *c, unsigned supported, size_t dim, enum geometry g,
	  const char *field, const char *alg, struct err *e)
{
	enum err_code rc;

	if ((unsigned)c->kind >= CONSTRAINT__COUNT || !(supported & (1u << c->kind)))
		return err_set_field(e, ERR_INVALID, field, "%s does not support this '%s'", alg,
				     field);
	if ((unsigned)g >= GEOMETRY__COUNT)
		return err_set_field(e, ERR_INVALID, field, "'%s' has an unknown geometry", field);
	rc = constraint_validate(c, dim, field, e);
	return rc;
}

enum err_code
run_spec_blocks(const struct alg_ops *alg, const struct run_spec *spec, struct saddle_block *ret_x,
		struct saddle_block *ret_y, struct err *e)
{
	const struct objective *o = &spec->objective;
	bool saddle_obj = o->ops != NULL && o->ops->kind == OBJECTIVE_SADDLE;
	enum err_code rc;

	if (!alg->saddle) {
		if (spec->has_y)
			return err_set_field(e, ERR_INVALID, "constraints.y",
					     "'constraints.y' is for saddle methods; %s minimises",
					     alg->name);
		if (saddle_obj)
			return err_set_field(e, ERR_INVALID, "objective",
					     "%s does not solve saddle objectives", alg->name);
		rc = check_set(&spec->x, alg->constraints, spec->dim, spec->geometry_x,
			       "constraints.x", alg->name, e);
		if (rc != ERR_OK)
			return rc;
		ret_x->set = spec->x;
		ret_x->geometry = spec->geometry_x;
		return ERR_OK;
	}
	if (!saddle_obj)
		return err_set_field(e, ERR_INVALID, "objective",
				     "%s needs a saddle objective ('objective')", alg->name);
	if (!spec->has_y)
		return err_set_field(e, ERR_INVALID, "constraints.y",
				     "%s needs the dual set 'constraints.y'", alg->name);
	if (o->dim_x == 0 || o->dim_y == 0 || o->dim_x + o->dim_y != o->dim || spec->dim != o->dim)
		return err_set(e, ERR_INVALID, "the objective's blocks do not fit the run");
	rc = check_set(&spec->x, alg->constraints, o->dim_x, spec->geometry_x, "constraints.x",
		       alg->name, e);
	if (rc == ERR_OK)
		rc = check_set(&spec->y, alg->constraints_y, o->dim_y, spec->geometry_y,
			       "constraints.y", alg->name, e);
	if (rc != ERR_OK)
		return rc;
	ret_x->set = spec->x;
	ret_x->geometry = spec->geometry_x;
	ret_y->set = spec->y;
	ret_y->geometry = spec->geometry_y;
	return ERR_OK;
}
