/*
 * objectives/glm.c - the one-margin losses phi(z, y) at z = <w, x~>:
 * logistic, least_squares, hinge, huber.
 *
 * The gradient of phi(<w, x~>, y) is phi'(z, y) x~ and its Hessian
 * phi''(z, y) x~ x~^T, so with X~, X~_inf, the margin bound Z and the
 * label bound Y of objective.c:
 *
 *	||grad||_2   <= sup |phi'| X~          ||grad||_inf <= sup |phi'| X~_inf
 *	||H||_2      <= sup phi'' X~^2         ||H||_{1->inf} = max |H_jk|
 *	                                                     <= sup phi'' X~_inf^2
 *
 * (the l1 -> l_inf operator norm of a matrix is its largest entry).  The
 * sups run over |z| <= Z and the labels allowed; each loss below states
 * them.  Everything is unweighted here: objective.c multiplies by the
 * largest record weight.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "objective.h"

/* log(1 + exp(t)) without overflow for large t or cancellation for small. */
static double
log1pexp(double t)
{
	if (t > 0.0)
		return t + log1p(exp(-t));
	return log1p(exp(t));
}

/*
 * 1 / (1 + exp(-t)), without overflow on either side: with u = exp(-|t|),
 * 1 / (1 + u) for t >= 0 and u / (1 + u) for t < 0.  One exp() and a
 * select, no branch on the sign of t (random in a gradient pass, so a
 * branch there is mispredicted half the time).
 */
static double
sigmoid(double t)
{
	const double one = 1.0, u = exp(-fabs(t));
	const uint64_t pos = -(uint64_t)(t >= 0.0); /* all ones when t >= 0 */
	uint64_t a, b;
	double num;

	/* num = t >= 0 ? 1 : u, as bits (compilers turn the ?: into a branch) */
	memcpy(&a, &one, sizeof(a));
	memcpy(&b, &u, sizeof(b));
	a = (a & pos) | (b & ~pos);
	memcpy(&num, &a, sizeof(num));
	return num / (1.0 + u);
}

/* ---- logistic ---- */

static double
logistic_phi(double z, double y, double delta)
{
	return log1pexp(-y * z);
}

static double
logistic_dphi(double z, double y, double delta)
{
	return -y * sigmoid(-y * z);
}

/* |phi'| = sigmoid(-y z) < 1 and phi'' = sigmoid(z) sigmoid(-z) <= 1/4 for
 * every z: the set does not matter for L and beta.  phi <= log(1 + e^Z). */
static enum err_code
logistic_constants(const struct objective *o, const struct objective_geometry *g,
		   struct objective_constants *ret, struct err *e)
{
	ret->lipschitz_l2 = g->x_l2;
	ret->lipschitz_linf = g->x_linf;
	ret->smooth_l2 = g->x_l2 * g->x_l2 / 4.0;
	ret->smooth_l1 = g->x_linf * g->x_linf / 4.0;
	ret->value_bound = log1pexp(g->margin); /* INFINITY on an unbounded set */
	return ERR_OK;
}

const struct objective_ops objective_logistic = {
	.name = "logistic",
	.doc = "logistic loss log(1 + exp(-y z)), z = <w, x> (+ b), labels y in {-1, +1}.  "
	       "Tasks: binary.  Params: intercept, ridge, l1, class_prior ([pi_-1, pi_+1]), "
	       "group_proportions.  Constants (X = row l2 bound, X_inf = row l_inf bound; with "
	       "an intercept X~ = sqrt(X^2 + 1), X~_inf = max(X_inf, 1); times the largest "
	       "weight 1/(K pi_min) 1/(G pi_min)): |phi'| < 1 so L2 = X~, L_inf = X~_inf on "
	       "any set; phi'' <= 1/4 so beta2 = X~^2/4, beta1 = X~_inf^2/4; value <= "
	       "log(1 + e^Z), Z = min(R X~, R_1 X~_inf) the margin bound over the set.",
	.tasks = 1u << TASK_BINARY,
	.params = (1u << OBJ_P_INTERCEPT) | (1u << OBJ_P_RIDGE) | (1u << OBJ_P_L1) |
		  (1u << OBJ_P_CLASS_PRIOR) | (1u << OBJ_P_GROUP_PROPORTIONS),
	.smooth = true,
	.phi = logistic_phi,
	.dphi = logistic_dphi,
	.constants = logistic_constants,
};

/* ---- least squares ---- */

static double
least_squares_phi(double z, double y, double delta)
{
	double r = z - y;

	return 0.5 * r * r;
}

static double
least_squares_dphi(double z, double y, double delta)
{
	return z - y;
}

/* The residual a label needs, or an error naming what is missing. */
static enum err_code
residual_bound(const char *name, const struct objective_geometry *g, double *ret, struct err *e)
{
	if (isnan(g->label))
		return err_set_field(e, ERR_INVALID, "bounds.label",
				     "%s on real labels needs 'bounds.label'", name);
	if (!isfinite(g->margin))
		return err_set_field(e, ERR_INVALID, "constraints.x",
				     "%s needs a bounded feasible set in 'constraints.x'", name);
	*ret = g->margin + g->label;
	return ERR_OK;
}

/* |phi'| = |z - y| <= Z + Y, attained by w = R u, x = X u, y = -Y;
 * phi'' = 1; phi <= (Z + Y)^2 / 2. */
static enum err_code
least_squares_constants(const struct objective *o, const struct objective_geometry *g,
			struct objective_constants *ret, struct err *e)
{
	double r = INFINITY;
	enum err_code rc = residual_bound("least_squares", g, &r, e);

	if (rc != ERR_OK)
		return rc;
	ret->lipschitz_l2 = g->x_l2 * r;
	ret->lipschitz_linf = g->x_linf * r;
	ret->smooth_l2 = g->x_l2 * g->x_l2;
	ret->smooth_l1 = g->x_linf * g->x_linf;
	ret->value_bound = 0.5 * r * r;
	return ERR_OK;
}

const struct objective_ops objective_least_squares = {
	.name = "least_squares",
	.doc = "squared error (z - y)^2 / 2, z = <w, x> (+ b).  Tasks: binary (y = +-1), "
	       "regression (needs bounds.label = Y).  Params: intercept, ridge, l1, "
	       "class_prior (binary), group_proportions.  Constants (notation of logistic): "
	       "|phi'| = |z - y| <= Z + Y, so L2 = X~ (Z + Y), L_inf = X~_inf (Z + Y), which "
	       "needs a bounded set; phi'' = 1 so beta2 = X~^2, beta1 = X~_inf^2; value <= "
	       "(Z + Y)^2 / 2.",
	.tasks = (1u << TASK_BINARY) | (1u << TASK_REGRESSION),
	.params = (1u << OBJ_P_INTERCEPT) | (1u << OBJ_P_RIDGE) | (1u << OBJ_P_L1) |
		  (1u << OBJ_P_CLASS_PRIOR) | (1u << OBJ_P_GROUP_PROPORTIONS),
	.smooth = true,
	.phi = least_squares_phi,
	.dphi = least_squares_dphi,
	.constants = least_squares_constants,
};

/* ---- hinge ---- */

static double
hinge_phi(double z, double y, double delta)
{
	return fmax(0.0, 1.0 - y * z);
}

/* The subgradient -y 1[y z < 1] (0 at the kink). */
static double
hinge_dphi(double z, double y, double delta)
{
	return y * z < 1.0 ? -y : 0.0;
}

/* |phi'| <= 1; not differentiable at y z = 1, so no smoothness;
 * phi <= 1 + Z. */
static enum err_code
hinge_constants(const struct objective *o, const struct objective_geometry *g,
		struct objective_constants *ret, struct err *e)
{
	ret->lipschitz_l2 = g->x_l2;
	ret->lipschitz_linf = g->x_linf;
	ret->smooth_l2 = INFINITY;
	ret->smooth_l1 = INFINITY;
	ret->value_bound = 1.0 + g->margin;
	return ERR_OK;
}

const struct objective_ops objective_hinge = {
	.name = "hinge",
	.doc = "hinge loss max(0, 1 - y z), z = <w, x> (+ b), labels y in {-1, +1}; nonsmooth, "
	       "subgradient -y x~ 1[y z < 1].  Tasks: binary.  Params: intercept, ridge, l1, "
	       "class_prior, group_proportions.  Constants (notation of logistic): |phi'| <= 1 "
	       "so L2 = X~, L_inf = X~_inf on any set; beta = infinity (not smooth); value <= "
	       "1 + Z.",
	.tasks = 1u << TASK_BINARY,
	.params = (1u << OBJ_P_INTERCEPT) | (1u << OBJ_P_RIDGE) | (1u << OBJ_P_L1) |
		  (1u << OBJ_P_CLASS_PRIOR) | (1u << OBJ_P_GROUP_PROPORTIONS),
	.smooth = false,
	.phi = hinge_phi,
	.dphi = hinge_dphi,
	.constants = hinge_constants,
};

/* ---- huber ---- */

static double
huber_phi(double z, double y, double delta)
{
	double r = fabs(z - y);

	return r <= delta ? 0.5 * r * r : delta * (r - 0.5 * delta);
}

static double
huber_dphi(double z, double y, double delta)
{
	return fmax(-delta, fmin(delta, z - y));
}

/*
 * |phi'| = min(|z - y|, delta) <= min(delta, Z + Y): finite on any set
 * (delta), tighter on a bounded one with a declared label bound.  phi''
 * is 1 or 0, so beta as least_squares.  phi is increasing in |z - y|:
 * value <= phi(Z + Y), infinite when Z or Y is.
 */
static enum err_code
huber_constants(const struct objective *o, const struct objective_geometry *g,
		struct objective_constants *ret, struct err *e)
{
	double r = isnan(g->label) ? INFINITY : g->margin + g->label;
	double c = fmin(o->delta, r);

	ret->lipschitz_l2 = g->x_l2 * c;
	ret->lipschitz_linf = g->x_linf * c;
	ret->smooth_l2 = g->x_l2 * g->x_l2;
	ret->smooth_l1 = g->x_linf * g->x_linf;
	ret->value_bound = isfinite(r) ? huber_phi(r, 0.0, o->delta) : INFINITY;
	return ERR_OK;
}

const struct objective_ops objective_huber = {
	.name = "huber",
	.doc = "Huber loss of the residual r = z - y, z = <w, x> (+ b): r^2/2 for |r| <= delta, "
	       "delta (|r| - delta/2) beyond.  Tasks: binary, regression.  Params: huber_delta "
	       "(default 1), intercept, ridge, l1, class_prior (binary), group_proportions.  "
	       "Constants (notation of logistic and least_squares): |phi'| = min(|r|, delta) <= "
	       "c = min(delta, Z + Y), so L2 = X~ c, L_inf = X~_inf c, finite on any set; "
	       "phi'' <= 1 so beta2 = X~^2, beta1 = X~_inf^2; value <= phi(Z + Y) (infinite "
	       "without a bounded set and a label bound).",
	.tasks = (1u << TASK_BINARY) | (1u << TASK_REGRESSION),
	.params = (1u << OBJ_P_INTERCEPT) | (1u << OBJ_P_RIDGE) | (1u << OBJ_P_L1) |
		  (1u << OBJ_P_HUBER_DELTA) | (1u << OBJ_P_CLASS_PRIOR) |
		  (1u << OBJ_P_GROUP_PROPORTIONS),
	.smooth = true,
	.phi = huber_phi,
	.dphi = huber_dphi,
	.constants = huber_constants,
};
