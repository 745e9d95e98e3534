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

/* psi(v) = <c + J v, u_bar - v> (jv: d doubles of scratch). */
static double
affine_psi(const struct objective *o, const double *c, const double *u_bar, const double *v,
	   double *jv)
{
	double val = 0.0;

	memcpy(jv, c, o->dim * sizeof(*jv));
	o->ops->vi->jacobian(o, v, jv);
	for (size_t j = 0; j < o->dim; j++)
		val += jv[j] * (u_bar[j] - v[j]);
	return val;
}

/* The weak gap of an affine monotone F = c + J u (vi.h): the upper end of
 * a certified bracket of max_U psi, psi(v) = <c + J v, u_bar - v>, whose
 * gradient is J^T (u_bar - v) - (c + J v).  w: 5 d doubles of scratch,
 * ps: the projection's. */
static double
affine_weak_gap(const struct objective *o, const struct constraint *u, const double *u_bar,
		const double *c, double *w, double *ps, double *ret_lo)
{
	const struct vi_ops *vo = o->ops->vi;
	const size_t d = o->dim;
	double *v = w, *jv = w + d, *grad = w + 2 * d, *s = w + 3 * d, *t = w + 4 * d;
	double beta = 0.0, lo = -INFINITY, hi = INFINITY;

	/* beta ~ ||J + J^T|| by power iteration from a fixed generic start;
	 * the bracket holds for any step, the estimate only sets the pace. */
	for (size_t j = 0; j < d; j++)
		v[j] = 1.0 + 0.1 * (double)j;
	for (int it = 0; it < 200; it++) {
		double nn = 0.0, vn = 0.0;

		memset(jv, 0, d * sizeof(*jv));
		vo->jacobian(o, v, jv);
		vo->jacobian_t(o, v, jv);
		for (size_t j = 0; j < d; j++) {
			nn += jv[j] * jv[j];
			vn += v[j] * v[j];
		}
		if (!(nn > 0.0) || !(vn > 0.0)) {
			beta = 0.0;
			break;
		}
		nn = sqrt(nn);
		beta = nn / sqrt(vn);
		for (size_t j = 0; j < d; j++)
			v[j] = jv[j] / nn;
	}
	memset(v, 0, d * sizeof(*v));
	constraint_project(u, v, d, ps);
	for (unsigned long k = 0;; k++) {
		double val = affine_psi(o, c, u_bar, v, jv), gv = 0.0, lin;

		for (size_t j = 0; j < d; j++) {
			t[j] = u_bar[j] - v[j];
			grad[j] = -jv[j];
		}
		vo->jacobian_t(o, t, grad);
		lo = fmax(lo, val);
		/* max_s <grad, s> = -min_s <-grad, s>, at the LMO's vertex s. */
		for (size_t j = 0; j < d; j++) {
			t[j] = -grad[j];
			gv += grad[j] * v[j];
		}
		lin = -constraint_lmo(u, t, d, s);
		hi = fmin(hi, val + lin - gv);
		lo = fmax(lo, affine_psi(o, c, u_bar, s, t));
		if (hi - lo <= 1e-10 * (1.0 + fabs(hi)) || k + 1 >= 100000 || !(beta > 0.0))
			break;
		for (size_t j = 0; j < d; j++)
			v[j] += grad[j] / beta;
		constraint_project(u, v, d, ps);
	}
	*ret_lo = lo;
	return fmax(hi, lo);
}

enum err_code
vi_gap_eval(const struct objective *o, const struct dataset *ds, const struct constraint *u,
	    const double *u_bar, double *ret_strong, double *ret_weak, struct err *e)
{
	double lo;

	return vi_gap_bracket(o, ds, u, u_bar, ret_strong, ret_weak != NULL ? &lo : NULL, ret_weak,
			      e);
}

enum err_code
vi_gap_bracket(const struct objective *o, const struct dataset *ds, const struct constraint *u,
	       const double *u_bar, double *ret_strong, double *ret_weak_lo, double *ret_weak,
	       struct err *e)
{
	const size_t d = o->dim;
	const bool affine = o->ops->vi != NULL && o->ops->vi->jacobian != NULL &&
			    o->ops->vi->jacobian_t != NULL;
	double *fu, *c, *s, *w = NULL, *ps = NULL, min_v, fu_u = 0.0, c_u = 0.0;
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
	if (affine) {
		w = calloc(5 * d, sizeof(*w));
		ps = calloc(d, sizeof(*ps));
	}
	if (fu == NULL || c == NULL || s == NULL || (affine && (w == NULL || ps == NULL))) {
		free(fu);
		free(c);
		free(s);
		free(w);
		free(ps);
		return err_set(e, ERR_NOMEM, "cannot allocate the gap's scratch");
	}
	mean_operator(o, ds, u_bar, fu);
	min_v = constraint_lmo(u, fu, d, s); /* min_{v in U} <F(u_bar), v> */
	for (size_t j = 0; j < d; j++)
		fu_u += fu[j] * u_bar[j];
	if (ret_strong != NULL)
		*ret_strong = fu_u - min_v;
	if (ret_weak != NULL && ret_weak_lo != NULL) {
		*ret_weak = *ret_weak_lo = NAN;
		if (o->ops->vi->skew_affine) {
			/* c = F(0), the mean of the records' c(z). */
			memset(s, 0, d * sizeof(*s));
			mean_operator(o, ds, s, c);
			for (size_t j = 0; j < d; j++)
				c_u += c[j] * u_bar[j];
			*ret_weak = *ret_weak_lo = c_u - min_v;
		} else if (affine) {
			/* c = F(0), the mean of the records' c(z). */
			memset(s, 0, d * sizeof(*s));
			mean_operator(o, ds, s, c);
			*ret_weak = affine_weak_gap(o, u, u_bar, c, w, ps, ret_weak_lo);
		}
	}
	free(fu);
	free(c);
	free(s);
	free(w);
	free(ps);
	return ERR_OK;
}
