/*
 * objectives/portfolio.c - log_optimal_portfolio: the log-optimal
 * (growth-optimal, Kelly) portfolio, f(x; r) = -ln <r, x>, minimised over
 * the simplex {x >= 0, sum x = s} of portfolio weights
 * (docs/algorithms/portfolio.md).
 *
 * A record is the gross-return vector r of d assets in one period, every
 * cell in the declared public range [a, b], 0 < a < b
 * ("bounds.feature_range", clipped at ingestion).  It is a one-margin loss
 * of z = <r, x> with no label: phi(z) = -ln z, phi'(z) = -1/z, so
 *
 *	grad f = -r / z,  Hess f = r r^T / z^2,  D^3 f = -2 r (x) r (x) r / z^3.
 *
 * On the simplex of scale s every z lies in [s a, s b] (z is a weighted
 * sum of cells in [a, b] with weights summing to s), and with d >= 2
 * (d = 1 below):
 *
 *	L_inf  = sup ||grad||_inf  = b / (s a)
 *	L_2    = sup ||grad||_2    = sqrt(a^2 + (d - 1) b^2) / (s a)
 *	beta_1 = sup max_jk |H_jk| = b^2 / (s a)^2      (l1 -> l_inf)
 *	beta_2 = sup ||H||_2 = sup ||r||_2^2 / z^2 = L_2^2
 *	L_3    = 2 b^3 / (s a)^3                          (catalogue only)
 *
 * Each is attained: at x = s e_j with r_j = a and every other cell b (z =
 * s a).  They are the sups: for x in the simplex let m = min r_j over the
 * support of x, then z >= s m and ||r||_2^2 <= m^2 + (d - 1) b^2, and
 * (m^2 + (d - 1) b^2) / m^2 decreases in m, so m = a is the worst.  With
 * d = 1 the only point is x = s, z = s r and every constant is that of
 * -ln(s r): L = 1/s, beta = 1/s^2.  At s = 1 these are the spec's
 * L_0 = b/a, L_1 = (b/a)^2, L_2 = 2 (b/a)^3 (its "valid on ||x||_1 >= 1");
 * for s < 1 they grow as 1/s, which is still a bound, so every scale is
 * taken.
 *
 * The value lies in [-ln(s b), -ln(s a)]: it is negative when s b > 1, so
 * "0 <= f <= V" (value_bound, for methods that need a nonnegative bounded
 * loss) holds only when s b <= 1, with V = -ln(s a); otherwise infinity.
 *
 * Outside the domain (z <= 0: no point of the simplex with a declared
 * range gives one) phi is +infinity and phi' the finite -1/DBL_MIN, so a
 * method's clamp or clip still returns a finite vector.
 */
#include <float.h>
#include <math.h>

#include "objective.h"

static double
portfolio_phi(double z, double y, double delta)
{
	(void)y;
	(void)delta;
	return z > 0.0 ? -log(z) : INFINITY;
}

static double
portfolio_dphi(double z, double y, double delta)
{
	(void)y;
	(void)delta;
	return -1.0 / (z > DBL_MIN ? z : DBL_MIN);
}

static enum err_code
portfolio_constants(const struct objective *o, const struct objective_geometry *g,
		    struct objective_constants *ret, struct err *e)
{
	const double s = g->simplex_scale, a = g->x_lo, b = g->x_hi, d = (double)o->d;
	double za, l2;

	if (!(isfinite(s) && s > 0.0))
		return err_set_field(e, ERR_INVALID, "constraints.x.kind",
				     "objective '%s' takes the simplex only ('constraints.x.kind')",
				     o->ops->name);
	if (!(isfinite(a) && isfinite(b) && a > 0.0 && a < b))
		return err_set_field(e, ERR_INVALID, "bounds.feature_range",
				     "objective '%s' needs the dataset's 'bounds.feature_range' "
				     "[lo, hi] with lo > 0 (the returns' public range)",
				     o->ops->name);
	za = s * a;
	if (o->d < 2) {
		ret->lipschitz_l2 = ret->lipschitz_linf = 1.0 / s;
		ret->smooth_l2 = ret->smooth_l1 = 1.0 / (s * s);
	} else {
		/* hypot-style: sqrt(a^2 + (d - 1) b^2) / (s a) without overflow
		 * for cells up to 1e12 and d up to 1e6. */
		l2 = sqrt(1.0 + (d - 1.0) * (b / a) * (b / a)) / s;
		ret->lipschitz_l2 = l2;
		ret->lipschitz_linf = b / za;
		ret->smooth_l2 = l2 * l2;
		ret->smooth_l1 = (b / za) * (b / za);
	}
	ret->value_bound = s * b <= 1.0 ? -log(za) : INFINITY;
	if (!isfinite(ret->lipschitz_l2) || !isfinite(ret->smooth_l1) || !isfinite(ret->smooth_l2))
		return err_set_field(e, ERR_INVALID, "bounds.feature_range",
				     "the range of 'bounds.feature_range' and the simplex scale "
				     "give no finite gradient bound");
	return ERR_OK;
}

const struct objective_ops objective_log_optimal_portfolio = {
	.name = "log_optimal_portfolio",
	.doc = "log-optimal (growth-optimal) portfolio: -ln <r, x> over portfolio weights x in the "
	       "simplex of scale s, a record r the gross returns of the d assets in one period "
	       "(unlabeled dataset, every cell in the declared bounds.feature_range [a, b], a > 0, "
	       "clipped at ingestion).  Gradient -r / <r, x>.  Tasks: unlabeled.  Params: none.  "
	       "Sets: simplex only.  Constants (z = <r, x> >= s a on the simplex; d >= 2): L_inf "
	       "= b / (s a), L2 = sqrt(a^2 + (d - 1) b^2) / (s a), beta1 = (b / (s a))^2, beta2 = "
	       "L2^2, third-order 2 (b / (s a))^3, each attained at x = s e_j, r_j = a, other "
	       "cells b; d = 1: L = 1/s, beta = 1/s^2.  Value in [-ln(s b), -ln(s a)]: bound "
	       "-ln(s a) when s b <= 1, else none (the loss is negative).",
	.tasks = 1u << TASK_UNLABELED,
	.params = 0,
	.smooth = true,
	.phi = portfolio_phi,
	.dphi = portfolio_dphi,
	.constants = portfolio_constants,
	.sets = 1u << CONSTRAINT_SIMPLEX,
};
