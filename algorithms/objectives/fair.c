/*
 * objectives/fair.c - "fair_logistic_lagrangian": logistic regression under
 * a demographic-parity constraint on the mean score, as the saddle problem
 * of its Lagrangian (docs/algorithms/saddle-objectives.md §1).  A
 * record is (a, l, s): features a (all d columns), a label l in {-1, +1}
 * and a sensitive attribute s in {0, 1}, the dataset's group column with
 * G = 2 groups (group k is s = k).  With the public proportions p_0, p_1
 * ('objective.group_proportions', required, p_1 = P(s = 1)), c(s) = s /
 * p_1 - (1 - s) / p_0 and h(x; z) = c(s) <x, a>, so E h = E[<x, a> | s =
 * 1] - E[<x, a> | s = 0] (mean-score parity).  The
 * constraint |E h| <= tau_f ('objective.parity_tolerance', default 0:
 * exact parity) enters through two multipliers y = (theta_1, theta_2) in
 * the box [0, Lambda_max]^2, 'constraints.y' = {"kind": "box", "lo": 0,
 * "hi": Lambda_max} (any other y set is refused: a multiplier of an
 * inequality is non-negative, and its cap is the box's hi):
 *
 *	f(x, y; z) = phi(l <x, a>) + theta_1 (h - tau_f) + theta_2 (-h - tau_f)
 *
 * phi(t) = log(1 + e^-t).  Convex in x (h is linear), linear in y.
 *
 *	grad_x f = (phi'(z) + (theta_1 - theta_2) c) a,  z = <x, a>, phi'(z) =
 *	    -l sigmoid(-l z)
 *	grad_y f = (h - tau_f, -h - tau_f)
 *
 * Constants.  X, X_inf the row's declared bounds, R_x, R_1 the l2 and l1
 * radii of X, Z = min(R_x X, R_1 X_inf) >= |z|, p_min = min(p_0, p_1) so
 * |c| <= 1 / p_min and |h| <= H = Z / p_min, Lambda = Lambda_max:
 *
 *	||grad_x f||_2 <= X (sigmoid(Z) + Lambda / p_min)
 *	    (|phi'(z)| = sigmoid(-l z) <= sigmoid(Z), |theta_1 - theta_2| <=
 *	    Lambda; attained when z = -l Z and theta_1 - theta_2 has the sign
 *	    of phi' c.  The spec's X (1 + Lambda / p_min) is the Z -> inf
 *	    limit: valid, looser.)
 *	||grad_y f||_2 = sqrt((h - tau)^2 + (h + tau)^2) = sqrt(2 (h^2 + tau^2))
 *	    <= sqrt(2 (H^2 + tau^2))
 *	    (the spec's sqrt 2 (H + tau) is looser by up to sqrt 2 when H = tau:
 *	    (H + tau)^2 = H^2 + tau^2 + 2 H tau >= H^2 + tau^2.)
 *	||grad_y f||_inf = max(|h - tau|, |h + tau|) = |h| + tau <= H + tau
 *	own_x = X^2 / 4 (phi'' <= 1/4; h is linear),  own_y = 0 (linear in y)
 *	cross = sqrt 2 X / p_min (d grad_x / d y = [c a, -c a], of norm
 *	    sqrt 2 |c| ||a||)
 *	|f| <= max(log(1 + e^Z) + Lambda max(H - tau, 0), Lambda (tau + max(H,
 *	    tau))): the loss is in [0, log(1 + e^Z)], T = theta_1 (h - tau) +
 *	    theta_2 (-h - tau) has max Lambda max(|h| - tau, 0) (at most one
 *	    bracket is positive) and min -Lambda (tau + max(|h|, tau))
 *	third partials: only d^3 / dx^3 of the logistic term, |phi'''| <=
 *	    1 / (6 sqrt 3): X_inf^3 / (6 sqrt 3); the products theta h are
 *	    bilinear, so every mixed third partial is 0.
 *
 * Jointly (saddle.c): L = sqrt(L_x^2 + L_y^2), smoothness X^2/4 + sqrt 2 X
 * / p_min, which is the spec's beta.
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
fair_init(struct objective *o, const struct data_schema *s, struct err *e)
{
	if (s->task != TASK_BINARY || s->n_groups != 2)
		return err_set_field(
			e, ERR_INVALID, "objective.name",
			"objective 'fair_logistic_lagrangian' ('objective.name') needs "
			"binary labels and a group column of 2 groups (the sensitive "
			"attribute s = 0, 1)");
	if (!o->group_weighted || o->p.n_group_proportions != 2)
		return err_set_field(e, ERR_INVALID, "objective.group_proportions",
				     "'objective.group_proportions' is required (the public p_0, "
				     "p_1 = P(s = 1))");
	o->block_x = o->block_y = SIZE_MAX;
	o->offset_x = o->offset_y = 0;
	o->dim_x = s->d;
	o->dim_y = 2;
	o->dim = o->dim_x + o->dim_y;
	return ERR_OK;
}

/* c(s) = s / p_1 - (1 - s) / p_0. */
static double
fair_c(const struct objective *o, size_t s)
{
	return s == 1 ? 1.0 / o->p.group_proportions[1] : -1.0 / o->p.group_proportions[0];
}

static double
fair_eval(const struct objective *o, const struct dataset *ds, size_t i, const double *x,
	  const double *y, double scale, double *g)
{
	const double c = fair_c(o, ds->group[i]), l = ds->y[i] > 0.0 ? 1.0 : -1.0;
	const double tau = o->p.parity_tolerance;
	const double z = data_row_dot(ds, i, x), h = c * z;

	if (g != NULL) {
		double dphi = -l * sigmoid(-l * z);

		data_row_axpy(ds, i, scale * (dphi + (y[0] - y[1]) * c), g);
		g[o->dim_x] -= scale * (h - tau);
		g[o->dim_x + 1] -= scale * (-h - tau);
	}
	return log1pexp(-l * z) + y[0] * (h - tau) + y[1] * (-h - tau);
}

static enum err_code
fair_constants(const struct objective *o, const struct data_schema *s,
	       const struct saddle_block *bx, const struct saddle_block *by,
	       struct saddle_constants *ret, struct err *e)
{
	const double tau = o->p.parity_tolerance;
	const double pmin = fmin(o->p.group_proportions[0], o->p.group_proportions[1]);
	double X, X_inf, Z, H, lam, sz;
	enum err_code rc;

	if (by->set.kind != CONSTRAINT_BOX || by->set.lo != 0.0 || !(by->set.hi > 0.0))
		return err_set_field(e, ERR_INVALID, "constraints.y.lo",
				     "'constraints.y' of 'fair_logistic_lagrangian' is the "
				     "multipliers' box {\"kind\": \"box\", \"lo\": 0, \"hi\": "
				     "Lambda_max} with Lambda_max > 0");
	rc = saddle_block_bounds(s, SIZE_MAX, &X, &X_inf, e);
	if (rc != ERR_OK)
		return rc;
	lam = by->set.hi;
	Z = fmin(constraint_l2_radius(&bx->set, o->dim_x) * X,
		 constraint_l1_radius(&bx->set, o->dim_x) * X_inf);
	H = Z / pmin;
	sz = sigmoid(Z);
	ret->x.lipschitz_l2 = X * (sz + lam / pmin);
	ret->x.lipschitz_dual =
		bx->geometry == GEOMETRY_L1 ? X_inf * (sz + lam / pmin) : ret->x.lipschitz_l2;
	ret->y.lipschitz_l2 = sqrt(2.0 * (H * H + tau * tau));
	ret->y.lipschitz_dual = by->geometry == GEOMETRY_L1 ? H + tau : ret->y.lipschitz_l2;
	ret->x.smooth_own = X * X / 4.0;
	ret->y.smooth_own = 0.0;
	ret->x.smooth_cross = ret->y.smooth_cross = sqrt(2.0) * X / pmin;
	ret->value_bound = fmax(log1pexp(Z) + lam * fmax(H - tau, 0.0), lam * (tau + fmax(H, tau)));
	ret->third = X_inf * X_inf * X_inf / (6.0 * sqrt(3.0));
	return ERR_OK;
}

static const struct saddle_ops fair_ops = {
	.init = fair_init,
	.eval = fair_eval,
	.constants = fair_constants,
	.sets_x = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		  (1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX),
	.sets_y = 1u << CONSTRAINT_BOX,
	.smoothness = SADDLE_SECOND_ORDER,
};

const struct objective_ops objective_fair_logistic_lagrangian = {
	.name = "fair_logistic_lagrangian",
	.doc = "Saddle (min over x, max over y): logistic regression under mean-score "
	       "demographic parity |E[<x, a> | s = 1] - E[<x, a> | s = 0]| <= tau_f as its "
	       "Lagrangian, f(x, y; a, l, s) = log(1 + exp(-l <x, a>)) + theta_1 (h - tau_f) + "
	       "theta_2 (-h - tau_f) with h = c(s) <x, a>, c(s) = s / p_1 - (1 - s) / p_0 "
	       "(docs/algorithms/saddle-objectives.md §1).  Tasks: binary, with a group column of "
	       "2 groups "
	       "(the sensitive attribute s).  Params: group_proportions (required, public [p_0, "
	       "p_1]), parity_tolerance (tau_f >= 0, default 0).  y = (theta_1, theta_2) in "
	       "'constraints.y' = box [0, Lambda_max] (lo must be 0).  Constants from the row's "
	       "declared bound X, Z the margin bound, H = Z / p_min: L_x = X (sigmoid(Z) + "
	       "Lambda_max / p_min), L_y = sqrt(2 (H^2 + tau_f^2)), smoothness X^2 / 4 in x, 0 in "
	       "y, cross sqrt 2 X / p_min.  Gap: the max over y in closed form (R(x) + "
	       "Lambda_max (max(0, H(x) - tau_f) + max(0, -H(x) - tau_f))), the min over x by "
	       "projected gradient with a Frank-Wolfe certificate.",
	.tasks = 1u << TASK_BINARY,
	.params = (1u << OBJ_P_GROUP_PROPORTIONS) | (1u << OBJ_P_PARITY_TOLERANCE),
	.smooth = true,
	.kind = OBJECTIVE_SADDLE,
	.saddle = &fair_ops,
};
