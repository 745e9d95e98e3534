/*
 * objectives/worst_group.c - "worst_group_logistic": group-robust
 * logistic regression as a saddle problem (docs/algorithms/saddle.md §4;
 * M. Mohri, G. Sivek, A. T. Suresh, "Agnostic
 * federated learning", ICML 2019):
 *
 *	f(x, y; a, l, k) = (y_k / p_k) log(1 + exp(-l <x, a>))
 *
 * for a record with features a (all d columns), label l in {-1, +1} and
 * group k < G; p = 'objective.group_proportions', public (required).  So
 * F(x, y) = sum_k y_k R_k(x) with R_k the empirical risk of group k scaled
 * by its public proportion, and max over the simplex {y >= 0, sum y = s}
 * is s max_k R_k(x): the worst group.  x has d coordinates (no
 * intercept), y has G.
 *
 *	grad_x f = (y_k / p_k) phi'(z) a,  phi'(z) = -l sigmoid(-l z), |phi'| < 1
 *	grad_y f = (phi(z) / p_k) e_k,     0 <= phi(z) <= log(1 + e^Z)
 *
 * with z = <x, a>, |z| <= Z = min(R_x X, R_1 X_inf) (X, X_inf the row's
 * declared bounds, R_x, R_1 the l2 and l1 radii of X).  With Y_max >= |y_k|
 * (the l2 radius of Y: the simplex's scale s) and p_min = min_k p_k:
 *
 *	||grad_x f||_2 <= Y_max X / p_min      (l1 geometry: Y_max X_inf / p_min)
 *	||grad_y f||_2 = ||grad_y f||_inf <= log(1 + e^Z) / p_min (one entry)
 *	own_x = Y_max X^2 / (4 p_min)  (phi'' <= 1/4),  own_y = 0 (linear in y)
 *	cross_x = cross_y = X / p_min  (d grad_x / d y = phi'(z) a e_k^T / p_k)
 *	|f| <= Y_max log(1 + e^Z) / p_min.
 *
 * Jointly, for s = 1: L = sqrt(X^2 + l_max^2) / p_min (l_max = log(1 +
 * e^Z)) and smoothness (X^2/4 + X) / p_min = own_x + cross (saddle.h).
 */
#include <math.h>
#include <stdint.h>

#include "kernels.h"
#include "saddle.h"

static double
log1pexp(double t)
{
	if (t > 0.0)
		return t + log1p(exp(-t));
	return log1p(exp(t));
}

static double
sigmoid(double t)
{
	if (t >= 0.0)
		return 1.0 / (1.0 + exp(-t));
	return exp(t) / (1.0 + exp(t));
}

static enum err_code
wg_init(struct objective *o, const struct data_schema *s, struct err *e)
{
	if (s->task != TASK_BINARY || s->n_groups < 2)
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective 'worst_group_logistic' ('objective.name') needs "
				     "binary labels and a group column");
	if (!o->group_weighted || o->p.n_group_proportions != s->n_groups)
		return err_set_field(e, ERR_INVALID, "objective.group_proportions",
				     "'objective.group_proportions' is required (one public "
				     "proportion per group)");
	o->block_x = o->block_y = SIZE_MAX;
	o->offset_x = o->offset_y = 0;
	o->dim_x = s->d;
	o->dim_y = s->n_groups;
	o->dim = o->dim_x + o->dim_y;
	return ERR_OK;
}

static double
wg_eval(const struct objective *o, const struct dataset *ds, size_t i, const double *x,
	const double *y, double scale, double *g)
{
	const size_t k = ds->group[i];
	const double inv_p = 1.0 / o->p.group_proportions[k], l = ds->y[i] > 0.0 ? 1.0 : -1.0;
	const double z = data_row_dot(ds, i, x), loss = log1pexp(-l * z);

	if (g != NULL) {
		double c = scale * y[k] * inv_p * (-l * sigmoid(-l * z));

		data_row_axpy(ds, i, c, g);
		g[o->dim_x + k] -= scale * loss * inv_p;
	}
	return y[k] * inv_p * loss;
}

static enum err_code
wg_constants(const struct objective *o, const struct data_schema *s, const struct saddle_block *bx,
	     const struct saddle_block *by, struct saddle_constants *ret, struct err *e)
{
	double X, X_inf, Rx, R1, Z, Ymax, pmin = INFINITY, lmax;
	enum err_code rc;

	rc = saddle_block_bounds(s, SIZE_MAX, &X, &X_inf, e);
	if (rc != ERR_OK)
		return rc;
	for (size_t k = 0; k < o->p.n_group_proportions; k++)
		pmin = fmin(pmin, o->p.group_proportions[k]);
	Rx = constraint_l2_radius(&bx->set, o->dim_x);
	R1 = constraint_l1_radius(&bx->set, o->dim_x);
	Z = fmin(Rx * X, R1 * X_inf);
	Ymax = constraint_l2_radius(&by->set, o->dim_y);
	lmax = log1pexp(Z);
	ret->x.lipschitz_l2 = Ymax * X / pmin;
	ret->x.lipschitz_dual =
		bx->geometry == GEOMETRY_L1 ? Ymax * X_inf / pmin : ret->x.lipschitz_l2;
	ret->y.lipschitz_l2 = ret->y.lipschitz_dual = lmax / pmin;
	ret->x.smooth_own = Ymax * X * X / (4.0 * pmin);
	ret->y.smooth_own = 0.0;
	ret->x.smooth_cross = ret->y.smooth_cross = X / pmin;
	ret->value_bound = Ymax * lmax / pmin;
	/* Third partials: d^3 / dx_i dx_j dx_m = (y_k / p_k) phi''' a_i a_j a_m
	 * with |phi'''| <= 1 / (6 sqrt 3) (the largest |s (1 - s) (1 - 2 s)| of
	 * the sigmoid s), d^3 / dx_i dx_j dy_k = phi'' a_i a_j / p_k with phi''
	 * <= 1/4; f is linear in y, so no other is non-zero. */
	/* F(x, y) = sum_k y_k R_k(x), R_k the group's conditional risk in
	 * [0, log(1 + e^Z)] (the public proportions weigh each group's
	 * records to its conditional mean), so F lies in [0, Y_max l_max]. */
	ret->gap_range = Ymax * lmax;
	ret->third =
		fmax(Ymax * X_inf * X_inf * X_inf / (6.0 * sqrt(3.0)), X_inf * X_inf / 4.0) / pmin;
	return ERR_OK;
}

static const struct saddle_ops wg_ops = {
	.init = wg_init,
	.eval = wg_eval,
	.constants = wg_constants,
	.sets_x = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		  (1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX) |
		  (1u << CONSTRAINT_POLYTOPE),
	.sets_y = 1u << CONSTRAINT_SIMPLEX,
	.smoothness = SADDLE_SECOND_ORDER,
};

const struct objective_ops objective_worst_group_logistic = {
	.name = "worst_group_logistic",
	.doc = "Saddle (min over x, max over y): f(x, y; a, l, k) = (y_k / p_k) log(1 + "
	       "exp(-l <x, a>)) for binary labels l and groups k < G, y on a simplex of G "
	       "entries: max over y is the worst group's risk (docs/algorithms/saddle.md §4).  "
	       "Tasks: "
	       "binary, with a group column.  Params: group_proportions (required, public p).  "
	       "Constants from the row's declared bounds "
	       "X and the sets: L_x = s X / p_min, L_y = log(1 + e^Z) / p_min with Z the margin "
	       "bound, own smoothness s X^2 / (4 p_min) in x and 0 in y, cross X / p_min (s the "
	       "simplex's scale).  Gap: the max over y in closed form, the min over x by "
	       "projected gradient with a Frank-Wolfe certificate.",
	.tasks = 1u << TASK_BINARY,
	.params = 1u << OBJ_P_GROUP_PROPORTIONS,
	.smooth = true,
	.kind = OBJECTIVE_SADDLE,
	.saddle = &wg_ops,
};
