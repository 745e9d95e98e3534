/*
 * objectives/auc.c - "auc_minimax": AUC maximisation with the square
 * surrogate as a saddle problem (docs/algorithms/saddle-objectives.md §2;
 * Y. Ying, L. Wen, S. Lyu, "Stochastic online AUC maximization", NIPS
 * 2016).  A record is (a, l): features a (all d columns, ||a||_2 <= kappa,
 * the row's declared bound) and a label l in {-1, +1}; p = P(l = +1) is
 * public ('objective.class_prior' = [1 - p, p], required), q = 1 - p.  The
 * primal block is x = (w, a_+, b_-) of d + 2 coordinates (the model w and
 * the two class means' estimates), the dual block y = alpha, one
 * coordinate.  With z = <w, a>:
 *
 *	l = +1:  f = q (z - a_+)^2 - 2 (1 + alpha) q z - p q alpha^2
 *	l = -1:  f = p (z - b_-)^2 + 2 (1 + alpha) p z - p q alpha^2
 *
 * (the spec's f with the indicators resolved).  For fixed w, min over (a_+,
 * b_-) and max over alpha of F = E f is p q (E[(1 - <w, a - a'>)^2 | l = +1,
 * l' = -1] - 1) (a, a' independent), at a_+ = E[z | +1], b_- = E[z | -1],
 * alpha = b_- - a_+: the pairwise square loss of the AUC, with one record
 * at a time (test_saddle.c checks the identity).  f is a polynomial of
 * degree 2 in (w, a_+, b_-, alpha): convex in x (a sum of squares and
 * terms linear in x for fixed alpha), concave in alpha.
 *
 *	l = +1:  grad_w = 2 q (z - a_+ - 1 - alpha) a,  d_a+ = -2 q (z - a_+),
 *	         d_alpha = -2 q z - 2 p q alpha
 *	l = -1:  grad_w = 2 p (z - b_- + 1 + alpha) a,  d_b- = -2 p (z - b_-),
 *	         d_alpha = 2 p z - 2 p q alpha
 *
 * Constants.  The sets are the request's (any bounded kind; the spec's are
 * ||w|| <= R, |a_+|, |b_-| <= kappa R, |alpha| <= 2 kappa R, which contain
 * the saddle point).  With m = max(p, q): R_w, R_w1 the l2 and l1 radii of
 * X's projection on w (the same kind of set in d coordinates, so the radii
 * of X in dimension d: exact for every kind), A = X's l_inf radius (>=
 * |a_+|, |b_-|), Z = min(kappa R_w, kappa_inf R_w1) >= |z|, Lambda = Y's
 * radius >= |alpha| and E = max over Y of |1 + alpha|:
 *
 *	||grad_x f||_2 <= 2 m sqrt((Z + A + E)^2 kappa^2 + (Z + A)^2)
 *	    (|z - a_+ - 1 - alpha| <= Z + A + E, |z - a_+| <= Z + A, the same for
 *	    b_-; attained at z = -Z, a_+ = A, alpha = the end of Y farthest from
 *	    -1 on a box X, which holds w and a_+ at their extremes at once)
 *	||grad_x f||_inf <= 2 m max((Z + A + E) kappa_inf, Z + A)
 *	|d_alpha| <= 2 m Z + 2 p q Lambda
 *	own_x = 2 m (kappa^2 + 1) (the Hessian in (w, a_+) is 2 q [a; -1] [a;
 *	    -1]^T, of norm 2 q (||a||^2 + 1)),  own_y = 2 p q
 *	cross = 2 m kappa (d grad_w / d alpha = -2 q a or 2 p a)
 *	|f| <= m (Z + A)^2 + 2 E m Z + p q Lambda^2
 *	third partials 0 (degree 2: the quadratic class).
 *
 * The spec's L <= sqrt((8 kappa^2 R + 2 kappa)^2 + 25 kappa^2 R^2) is this
 * bound at m = 1, p q = 1/4 on its sets (Z = kappa R, A = kappa R, E = 1 +
 * 2 kappa R, Lambda = 2 kappa R: L_x^2 <= 4 ((4 kappa R + 1)^2 kappa^2 + 4
 * kappa^2 R^2), L_y <= 3 kappa R); its beta <= 2 kappa^2 + 8 kappa + 2.5 is
 * looser than own + cross = 2 m (kappa^2 + kappa + 1) (saddle.c's joint
 * rule: max(own_x, own_y) + cross, with 2 p q <= 2 m).
 */
#include <math.h>
#include <stdint.h>

#include "kernels.h"
#include "saddle.h"

static enum err_code
auc_init(struct objective *o, const struct data_schema *s, struct err *e)
{
	if (s->task != TASK_BINARY)
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective 'auc_minimax' ('objective.name') needs binary "
				     "labels");
	if (!o->class_weighted || o->p.n_class_prior != 2)
		return err_set_field(e, ERR_INVALID, "objective.class_prior",
				     "'objective.class_prior' is required (the public [1 - p, p], "
				     "p = P(label = +1))");
	o->block_x = o->block_y = SIZE_MAX;
	o->offset_x = o->offset_y = 0;
	o->dim_x = s->d + 2;
	o->dim_y = 1;
	o->dim = o->dim_x + o->dim_y;
	return ERR_OK;
}

static double
auc_eval(const struct objective *o, const struct dataset *ds, size_t i, const double *x,
	 const double *y, double scale, double *g)
{
	const double p = o->p.class_prior[1], q = o->p.class_prior[0], alpha = y[0];
	const size_t d = o->dim_x - 2;
	const double z = data_row_dot(ds, i, x);

	if (ds->y[i] > 0.0) {
		const double a = x[d], r = z - a;

		if (g != NULL) {
			data_row_axpy(ds, i, scale * 2.0 * q * (r - 1.0 - alpha), g);
			g[d] += scale * (-2.0 * q * r);
			g[o->dim_x] -= scale * (-2.0 * q * z - 2.0 * p * q * alpha);
		}
		return q * r * r - 2.0 * (1.0 + alpha) * q * z - p * q * alpha * alpha;
	} else {
		const double b = x[d + 1], r = z - b;

		if (g != NULL) {
			data_row_axpy(ds, i, scale * 2.0 * p * (r + 1.0 + alpha), g);
			g[d + 1] += scale * (-2.0 * p * r);
			g[o->dim_x] -= scale * (2.0 * p * z - 2.0 * p * q * alpha);
		}
		return p * r * r + 2.0 * (1.0 + alpha) * p * z - p * q * alpha * alpha;
	}
}

static enum err_code
auc_constants(const struct objective *o, const struct data_schema *s, const struct saddle_block *bx,
	      const struct saddle_block *by, struct saddle_constants *ret, struct err *e)
{
	const double p = o->p.class_prior[1], q = o->p.class_prior[0], m = fmax(p, q);
	const size_t d = o->dim_x - 2;
	double K, K_inf, Z, A, lam, lo, hi, E;
	enum err_code rc;

	rc = saddle_block_bounds(s, SIZE_MAX, &K, &K_inf, e);
	if (rc != ERR_OK)
		return rc;
	Z = fmin(K * constraint_l2_radius(&bx->set, d), K_inf * constraint_l1_radius(&bx->set, d));
	A = constraint_radius(&bx->set, o->dim_x, INFINITY);
	lam = constraint_radius(&by->set, 1, INFINITY);
	lo = -lam;
	hi = lam;
	if (by->set.kind == CONSTRAINT_BOX) {
		lo = by->set.lo;
		hi = by->set.hi;
	} else if (by->set.kind == CONSTRAINT_SIMPLEX) {
		lo = hi = by->set.radius; /* one coordinate summing to the scale */
	}
	E = fmax(fabs(1.0 + lo), fabs(1.0 + hi));
	ret->x.lipschitz_l2 = 2.0 * m * hypot((Z + A + E) * K, Z + A);
	ret->x.lipschitz_dual = bx->geometry == GEOMETRY_L1
					? 2.0 * m * fmax((Z + A + E) * K_inf, Z + A)
					: ret->x.lipschitz_l2;
	ret->y.lipschitz_l2 = ret->y.lipschitz_dual = 2.0 * m * Z + 2.0 * p * q * lam;
	ret->x.smooth_own = 2.0 * m * (K * K + 1.0);
	ret->y.smooth_own = 2.0 * p * q;
	ret->x.smooth_cross = ret->y.smooth_cross = 2.0 * m * K;
	ret->value_bound = m * (Z + A) * (Z + A) + 2.0 * E * m * Z + p * q * lam * lam;
	return ERR_OK;
}

static const struct saddle_ops auc_ops = {
	.init = auc_init,
	.eval = auc_eval,
	.constants = auc_constants,
	.sets_x = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		  (1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX),
	.sets_y = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		  (1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_BOX),
	.smoothness = SADDLE_QUADRATIC, /* a polynomial of degree 2: L_2 = 0 */
};

const struct objective_ops objective_auc_minimax = {
	.name = "auc_minimax",
	.doc = "Saddle (min over x, max over y): AUC maximisation with the square loss in the "
	       "Ying-Wen-Lyu form, x = (w, a_+, b_-) (d + 2 coordinates), y = alpha (one): "
	       "f = q (<w, a> - a_+)^2 - 2 (1 + alpha) q <w, a> - p q alpha^2 for label +1, "
	       "p (<w, a> - b_-)^2 + 2 (1 + alpha) p <w, a> - p q alpha^2 for -1 "
	       "(docs/algorithms/saddle-objectives.md §2); min over (a_+, b_-), max over alpha "
	       "gives p q (E[(1 - <w, a - a'>)^2 | +1, -1] - 1).  Tasks: binary.  Params: "
	       "class_prior (required, public [q, p], p = P(+1)).  Sets: any bounded x, y; the "
	       "spec's are ||w|| <= R, |a_+|, |b_-| <= kappa R (a box, or an l2 ball of radius "
	       "R sqrt(1 + 2 kappa^2)) and alpha in [-2 kappa R, 2 kappa R].  Constants from the "
	       "row's declared bound kappa, Z = kappa R_w, A = x's l_inf radius, E = max |1 + "
	       "alpha|, m = max(p, q): L_x = 2 m sqrt((Z + A + E)^2 kappa^2 + (Z + A)^2), L_y = "
	       "2 m Z + 2 p q max |alpha|, smoothness 2 m (kappa^2 + 1) in x, 2 p q in y, cross "
	       "2 m kappa; quadratic.  Gap: projected gradient with a Frank-Wolfe certificate.",
	.tasks = 1u << TASK_BINARY,
	.params = 1u << OBJ_P_CLASS_PRIOR,
	.smooth = true,
	.kind = OBJECTIVE_SADDLE,
	.saddle = &auc_ops,
};
