/*
 * vi.c - operator objectives: constants, the batch operator and the gaps
 * (vi.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "saddle.h"
#include "vi.h"

enum err_code
vi_constants(const struct objective *o, const struct data_schema *s, const struct constraint *u,
	     struct vi_constants *ret, struct err *e)
{
	const struct vi_ops *vo;
	struct vi_constants k;
	enum err_code rc;

	if (o->ops == NULL || o->ops->kind != OBJECTIVE_OPERATOR || o->ops->vi == NULL)
		return err_set_field(e, ERR_INVALID, "objective", "not an operator objective");
	vo = o->ops->vi;
	if ((unsigned)u->kind >= CONSTRAINT__COUNT || !(vo->sets & (1u << u->kind)))
		return err_set_field(e, ERR_INVALID, "constraints.x",
				     "objective '%s' has no constants over 'constraints.x'",
				     o->ops->name);
	rc = constraint_validate(u, o->dim, "constraints.x", e);
	if (rc != ERR_OK)
		return rc;
	if (!isfinite(constraint_l2_radius(u, o->dim)))
		return err_set_field(e, ERR_INVALID, "constraints.x",
				     "'constraints.x' must be a bounded set");
	memset(&k, 0, sizeof(k));
	rc = vo->constants(o, s, u, &k, e);
	if (rc != ERR_OK)
		return rc;
	if (!isfinite(k.lipschitz_l2) || !isfinite(k.smooth_l2))
		return err_set(e, ERR_NUMERIC, "the constants of objective '%s' are not finite",
			       o->ops->name);
	*ret = k;
	return ERR_OK;
}

void
vi_operator(const struct objective *o, const struct dataset *ds, size_t i, const double *u,
	    double scale, double *g)
{
	o->ops->vi->eval(o, ds, i, u, scale, g);
}

void
vi_batch_operator(const struct objective *o, const struct dataset *ds, const size_t *idx, size_t m,
		  const double *u, double clip, double *scratch, double *g)
{
	operator_batch_clipped(o, ds, idx, m, u, clip, vi_operator, scratch, g);
}

/* ret = the mean operator of ds at u (dim entries). */
static void
mean_operator(const struct objective *o, const struct dataset *ds, const double *u, double *ret)
{
	memset(ret, 0, o->dim * sizeof(*ret));
	vi_batch_operator(o, ds, NULL, ds->n, u, INFINITY, NULL, ret);
	for (size_t j = 0; j < o->dim; j++)
		ret[j] /= (double)ds->n;
}

enum err_code
vi_gap_eval(const struct objective *o, const struct dataset *ds, const struct constraint *u,
	    const double *u_bar, double *ret_strong, double *ret_weak, struct err *e)
{
	const size_t d = o->dim;
	double *fu, *c, *s, min_v, fu_u = 0.0, c_u = 0.0;
	enum err_code rc;

	if (o->ops == NULL || o->ops->kind != OBJECTIVE_OPERATOR || o->ops->vi == NULL)
		return err_set_field(e, ERR_INVALID, "objective", "not an operator objective");
	if (ds->n == 0 || d == 0)
		return err_set(e, ERR_INVALID, "the evaluation dataset is empty");
	rc = constraint_validate(u, d, "constraints.x", e);
	if (rc != ERR_OK)
		return rc;
	fu = calloc(d, sizeof(*fu));
	c = calloc(d, sizeof(*c));
	s = calloc(d, sizeof(*s));
	if (fu == NULL || c == NULL || s == NULL) {
		free(fu);
		free(c);
		free(s);
		return err_set(e, ERR_NOMEM, "cannot allocate the gap's scratch");
	}
	mean_operator(o, ds, u_bar, fu);
	min_v = constraint_lmo(u, fu, d, s); /* min_{v in U} <F(u_bar), v> */
	for (size_t j = 0; j < d; j++)
		fu_u += fu[j] * u_bar[j];
	if (ret_strong != NULL)
		*ret_strong = fu_u - min_v;
	if (ret_weak != NULL) {
		*ret_weak = NAN;
		if (o->ops->vi->skew_affine) {
			/* c = F(0), the mean of the records' c(z). */
			memset(s, 0, d * sizeof(*s));
			mean_operator(o, ds, s, c);
			for (size_t j = 0; j < d; j++)
				c_u += c[j] * u_bar[j];
			*ret_weak = c_u - min_v;
		}
	}
	free(fu);
	free(c);
	free(s);
	return ERR_OK;
}
