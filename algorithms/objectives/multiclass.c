/*
 * objectives/multiclass.c - "multiclass_logistic": the softmax
 * cross-entropy over K classes.
 *
 * Margins s_k = <W_k, x~> (W feature-major, objective.h), loss
 * l(s, y) = log sum_k exp(s_k) - s_y, residual r = softmax(s) - e_y, and
 * gradient x~ r^T (the d x K outer product; the intercept row gets r).
 *
 *	L2      ||x~ r^T||_F = ||x~|| ||r||, and ||r||^2 = (1 - p_y)^2 +
 *	        sum_{k != y} p_k^2 <= 2 (1 - p_y)^2 < 2: L2 = sqrt(2) X~.
 *	L_inf   max_jk |x~_j| |r_k| and |r_k| < 1: L_inf = X~_inf.
 *	beta2   the Hessian is (diag p - p p^T) (x) x~ x~^T, and the eigenvalues
 *	        of A = diag p - p p^T are <= max_k (A_kk + sum_{j != k} |A_kj|)
 *	        = max_k 2 p_k (1 - p_k) <= 1/2 (Gershgorin): beta2 = X~^2 / 2.
 *	        (B. Gao, L. Pavel, "On the properties of the softmax function
 *	        with application in game theory and reinforcement learning",
 *	        2017, show the looser 1.)
 *	beta1   the largest entry of the Hessian: |A_kj| <= 1/4 (p(1 - p) on
 *	        the diagonal, p_k p_j <= 1/4 off it): beta1 = X~_inf^2 / 4.
 *	value   l <= log K + max_k (s_k - s_y), s_k - s_y = <W_k - W_y, x~> <=
 *	        ||W_k - W_y|| X~ <= sqrt(2) ||W||_F X~, or <= ||W||_1 X~_inf:
 *	        value <= log K + min(sqrt(2) R X~, R_1 X~_inf).
 */
#include <math.h>

#include "objective.h"

static double
softmax_loss(const double *s, size_t K, size_t y, double *ret_r)
{
	double m = s[0], sum = 0.0;

	for (size_t k = 1; k < K; k++)
		m = fmax(m, s[k]);
	for (size_t k = 0; k < K; k++)
		sum += exp(s[k] - m);
	if (ret_r != NULL) {
		for (size_t k = 0; k < K; k++)
			ret_r[k] = exp(s[k] - m) / sum;
		ret_r[y] -= 1.0;
	}
	/* >= 0 up to rounding: s_y <= m and sum >= 1 */
	return fmax(0.0, m + log(sum) - s[y]);
}

static enum err_code
softmax_constants(const struct objective *o, const struct objective_geometry *g,
		  struct objective_constants *ret, struct err *e)
{
	ret->lipschitz_l2 = sqrt(2.0) * g->x_l2;
	ret->lipschitz_linf = g->x_linf;
	ret->smooth_l2 = g->x_l2 * g->x_l2 / 2.0;
	ret->smooth_l1 = g->x_linf * g->x_linf / 4.0;
	ret->value_bound = log((double)g->n_classes) +
			   fmin(sqrt(2.0) * g->r_l2 * g->x_l2, g->r_l1 * g->x_linf);
	return ERR_OK;
}

const struct objective_ops objective_multiclass_logistic = {
	.name = "multiclass_logistic",
	.doc = "softmax cross-entropy log sum_k exp(s_k) - s_y over K classes, s_k = <W_k, x> "
	       "(+ b_k); W is d x K stored feature-major (w[j K + k]), then the K intercepts: "
	       "dim = (d + intercept) K.  Tasks: multiclass (class indices 0 .. K - 1).  "
	       "Params: intercept, ridge, l1, class_prior (K entries), group_proportions.  "
	       "Constants (notation of logistic): the gradient is x~ (softmax(s) - e_y)^T and "
	       "||softmax - e_y||_2 < sqrt(2), so L2 = sqrt(2) X~, L_inf = X~_inf; Hessian "
	       "(diag p - p p^T) (x) x~ x~^T with eigenvalues <= 1/2 (Gershgorin) and entries "
	       "<= 1/4, so beta2 = X~^2/2, beta1 = X~_inf^2/4; value <= log K + min(sqrt(2) R X~, "
	       "R_1 X~_inf).",
	.tasks = 1u << TASK_MULTICLASS,
	.params = (1u << OBJ_P_INTERCEPT) | (1u << OBJ_P_RIDGE) | (1u << OBJ_P_L1) |
		  (1u << OBJ_P_CLASS_PRIOR) | (1u << OBJ_P_GROUP_PROPORTIONS),
	.smooth = true,
	.multi = softmax_loss,
	.constants = softmax_constants,
};
