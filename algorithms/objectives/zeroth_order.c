/*
 * objectives/zeroth_order.c - nonsmooth nonconvex losses offered with
 * function values only (objective_ops.value_only): the zeroth-order methods
 * (algorithms/zeroth_order/, docs/algorithms/zeroth-order.md) evaluate
 * them at arbitrary points, one record at a time, and never ask for a
 * gradient.
 *
 *	sphere_distance       f(w; z) = | ||w||_2 - 1 | + <z, w>
 *	capped_l1_regression  phi(m, y) = min(|m - y|, 1)
 *	ramp_classification   phi(m, y) = min(1, max(0, 1 - y m))
 *	robust_phase_retrieval phi(m, y) = | |m| - y |
 *	relu_neuron           phi(m, y) = | max(0, m) - y |
 *	relu_net              min(| m^-1/2 sum_k v_k max(0, s_k) - y |, 1)
 *
 * with m = <w, x~> the margin; relu_net's s_k = <W_k, x~> are the m hidden
 * pre-activations (objective.width = m, w = W feature-major, then the
 * biases) and v_k = (-1)^k its fixed public output weights.  Each is Lipschitz in w with the
 *constant below, from the declared row bound X (X~ with the intercept's feature); the zeroth-order
 *methods clip every finite difference to it anyway, so a wrong constant costs accuracy, never
 *privacy.
 *
 * sphere_distance is the closed-form test problem of
 * docs/algorithms/zeroth-order.md §1: with the records z centred, F(w) = | ||w|| - 1 | + <zbar, w>
 * is nonconvex (the distance to the unit sphere) and nonsmooth on the
 * sphere and at 0, and for zbar = 0 its Goldstein r-subdifferential norm
 * is known exactly (sphere_distance_goldstein, docs/algorithms/zeroth-order.md).
 */
#include <math.h>
#include <stdint.h>

#include "objective.h"
#include "zeroth_order/zo.h"

/* ---- sphere_distance ---- */

static double
sphere_value(const struct objective *o, double z, double y, const double *w)
{
	double nrm = 0.0;

	(void)y;
	for (size_t j = 0; j < o->dim; j++)
		nrm = hypot(nrm, w[j]);
	return fabs(nrm - 1.0) + z;
}

/* grad = +-w/||w|| + z: ||grad||_2 <= 1 + X, ||grad||_inf <= 1 + X_inf.
 * Not smooth; the value is unbounded below on an unbounded set. */
static enum err_code
sphere_constants(const struct objective *o, const struct objective_geometry *g,
		 struct objective_constants *ret, struct err *e)
{
	(void)o;
	(void)e;
	ret->lipschitz_l2 = 1.0 + g->x_l2;
	ret->lipschitz_linf = 1.0 + g->x_linf;
	ret->smooth_l2 = INFINITY;
	ret->smooth_l1 = INFINITY;
	ret->value_bound = INFINITY; /* <z, w> may be negative: no [0, B] bound */
	return ERR_OK;
}

double
sphere_distance_goldstein(const double *x, size_t d, double r)
{
	double nrm = 0.0;

	for (size_t j = 0; j < d; j++)
		nrm = hypot(nrm, x[j]);
	/* The r-ball holds 0 (every direction) or straddles the sphere
	 * (both +xhat and -xhat): 0 is in the hull.  Else the gradients'
	 * directions form a cap of half-angle arcsin(r/||x||) around +-xhat
	 * and the hull's shortest point is cos(angle) xhat. */
	if (nrm <= r || fabs(nrm - 1.0) < r)
		return 0.0;
	return sqrt(1.0 - (r / nrm) * (r / nrm));
}

const struct objective_ops objective_sphere_distance = {
	.name = "sphere_distance",
	.doc = "| ||w||_2 - 1 | + <z, w>, z the record's features (function values only: "
	       "zeroth-order methods).  Nonconvex, nonsmooth; with centred records F(w) is the "
	       "distance to the unit sphere, whose Goldstein stationarity is known in closed "
	       "form.  Tasks: unlabeled, regression, binary (labels ignored).  Params: none.  "
	       "Constants (X = row l2 bound, X_inf = row l_inf bound): L2 = 1 + X, L_inf = 1 + "
	       "X_inf; not smooth; no value bound.",
	.tasks = (1u << TASK_UNLABELED) | (1u << TASK_REGRESSION) | (1u << TASK_BINARY),
	.params = 0,
	.smooth = false,
	.value_only = true,
	.value = sphere_value,
	.constants = sphere_constants,
};

/* ---- capped_l1_regression ---- */

static double
capped_l1_phi(double z, double y, double delta)
{
	(void)delta;
	return fmin(fabs(z - y), 1.0);
}

/* ---- ramp_classification ---- */

static double
ramp_phi(double z, double y, double delta)
{
	(void)delta;
	return fmin(1.0, fmax(0.0, 1.0 - y * z));
}

/* Both losses are 1-Lipschitz in the margin and take values in [0, 1] on
 * any set: L2 = X~, L_inf = X~_inf, not smooth, value <= 1. */
static enum err_code
capped_constants(const struct objective *o, const struct objective_geometry *g,
		 struct objective_constants *ret, struct err *e)
{
	(void)o;
	(void)e;
	ret->lipschitz_l2 = g->x_l2;
	ret->lipschitz_linf = g->x_linf;
	ret->smooth_l2 = INFINITY;
	ret->smooth_l1 = INFINITY;
	ret->value_bound = 1.0;
	return ERR_OK;
}

const struct objective_ops objective_capped_l1_regression = {
	.name = "capped_l1_regression",
	.doc = "capped absolute error min(|z - y|, 1), z = <w, x> (+ b), real labels y "
	       "(function values only: zeroth-order methods).  Nonconvex, nonsmooth, robust to "
	       "outliers.  Tasks: regression.  Params: intercept.  Constants (X~ = row l2 bound "
	       "with the intercept's feature): |phi'| <= 1 so L2 = X~, L_inf = X~_inf on any "
	       "set; not smooth; value <= 1.",
	.tasks = 1u << TASK_REGRESSION,
	.params = 1u << OBJ_P_INTERCEPT,
	.smooth = false,
	.value_only = true,
	.phi = capped_l1_phi,
	.constants = capped_constants,
};

const struct objective_ops objective_ramp_classification = {
	.name = "ramp_classification",
	.doc = "ramp loss min(1, max(0, 1 - y z)), z = <w, x> (+ b), labels y in {-1, +1} "
	       "(function values only: zeroth-order methods).  Nonconvex, nonsmooth, a bounded "
	       "surrogate of the 0-1 loss.  Tasks: binary.  Params: intercept, class_prior.  "
	       "Constants (X~ = row l2 bound with the intercept's feature, times the largest "
	       "class weight): |phi'| <= 1 so L2 = X~, L_inf = X~_inf on any set; not smooth; "
	       "value <= 1.",
	.tasks = 1u << TASK_BINARY,
	.params = (1u << OBJ_P_INTERCEPT) | (1u << OBJ_P_CLASS_PRIOR),
	.smooth = false,
	.value_only = true,
	.phi = ramp_phi,
	.constants = capped_constants,
};

/* ---- robust_phase_retrieval, relu_neuron ---- */

static double
phase_phi(double z, double y, double delta)
{
	(void)delta;
	return fabs(fabs(z) - y);
}

static double
relu_phi(double z, double y, double delta)
{
	(void)delta;
	return fabs(fmax(0.0, z) - y);
}

/* 1-Lipschitz in the margin: L2 = X~, L_inf = X~_inf; not smooth; value
 * <= Z + Y (margin bound plus label bound), INFINITY on an unbounded set
 * or without bounds.label. */
static enum err_code
abs_constants(const struct objective *o, const struct objective_geometry *g,
	      struct objective_constants *ret, struct err *e)
{
	(void)o;
	(void)e;
	ret->lipschitz_l2 = g->x_l2;
	ret->lipschitz_linf = g->x_linf;
	ret->smooth_l2 = INFINITY;
	ret->smooth_l1 = INFINITY;
	ret->value_bound = isnan(g->label) ? INFINITY : g->margin + g->label;
	return ERR_OK;
}

const struct objective_ops objective_robust_phase_retrieval = {
	.name = "robust_phase_retrieval",
	.doc = "robust (l1, amplitude) phase retrieval | |z| - y |, z = <w, x> (+ b), labels y >= "
	       "0 "
	       "(function values only: zeroth-order methods).  Nonconvex, nonsmooth (abs inside "
	       "abs).  Tasks: regression.  Params: intercept.  Constants (X~ = row l2 bound with "
	       "the intercept's feature): 1-Lipschitz in z so L2 = X~, L_inf = X~_inf; not "
	       "smooth; value <= Z + Y (margin and label bounds).",
	.tasks = 1u << TASK_REGRESSION,
	.params = 1u << OBJ_P_INTERCEPT,
	.smooth = false,
	.value_only = true,
	.phi = phase_phi,
	.constants = abs_constants,
};

const struct objective_ops objective_relu_neuron = {
	.name = "relu_neuron",
	.doc = "single ReLU neuron regression | max(0, z) - y |, z = <w, x> (+ b) (function values "
	       "only: zeroth-order methods).  Nonconvex, nonsmooth.  Tasks: regression.  Params: "
	       "intercept.  Constants (X~ = row l2 bound with the intercept's feature): "
	       "1-Lipschitz in z so L2 = X~, L_inf = X~_inf; not smooth; value <= Z + Y.",
	.tasks = 1u << TASK_REGRESSION,
	.params = 1u << OBJ_P_INTERCEPT,
	.smooth = false,
	.value_only = true,
	.phi = relu_phi,
	.constants = abs_constants,
};

/* ---- relu_net ---- */

/*
 * h(x) = m^-1/2 sum_k v_k max(0, s_k), v_k = +1 for even k, -1 for odd k
 * (fixed, public; m = 1 gives v = +1), and the capped absolute error
 * min(|h - y|, 1).  d loss / d W_k = +-m^-1/2 v_k 1[s_k > 0] x~ where the
 * cap does not bind, so ||grad||_2 = ||x~|| sqrt(#active / m) <= X~ (equal
 * when every unit is active, |h - y| < 1 and ||x~|| = X~) and ||grad||_inf
 * <= X~_inf / sqrt(m); the value is in [0, 1] on any set.
 */
static double
relu_net_hidden(const struct objective *o, const double *s, double y)
{
	const size_t m = o->n_out;
	double h = 0.0;

	for (size_t k = 0; k < m; k++)
		h += (k % 2 == 0 ? 1.0 : -1.0) * fmax(0.0, s[k]);
	return fmin(fabs(h / sqrt((double)m) - y), 1.0);
}

static enum err_code
relu_net_constants(const struct objective *o, const struct objective_geometry *g,
		   struct objective_constants *ret, struct err *e)
{
	(void)e;
	ret->lipschitz_l2 = g->x_l2;
	ret->lipschitz_linf = g->x_linf / sqrt((double)o->n_out);
	ret->smooth_l2 = INFINITY;
	ret->smooth_l1 = INFINITY;
	ret->value_bound = 1.0;
	return ERR_OK;
}

/* splitmix64's output function: a counter-based hash of (seed, index). */
static uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/*
 * The public initial point: W[j m + k] uniform on [-sqrt(3 / c), sqrt(3 /
 * c)] (variance 1 / c, c = d + intercept: s_k has variance ||x~||^2 / c), the
 * uniform the 53 high bits of mix64(init_seed * 2^32 + index + 1) give;
 * biases 0.  A function of the public objective.init_seed and the shape
 * only: every run with the same request starts at the same x_1, and no
 * draw of the run's generator is spent on it.
 */
static void
relu_net_start(const struct objective *o, double *ret_x)
{
	const size_t m = o->n_out, cols = o->dim / m;
	const double a = sqrt(3.0 / (double)cols);
	const uint64_t base = (uint64_t)o->p.init_seed << 32;

	for (size_t i = 0; i < o->d * m; i++) {
		double u = (double)(mix64(base + 0x9e3779b97f4a7c15u * (i + 1)) >> 11) * 0x1.0p-53;

		ret_x[i] = a * (2.0 * u - 1.0);
	}
	for (size_t i = o->d * m; i < o->dim; i++)
		ret_x[i] = 0.0;
}

const struct objective_ops objective_relu_net = {
	.name = "relu_net",
	.doc = "one-hidden-layer ReLU network regression min(| m^-1/2 sum_k v_k max(0, s_k) - y "
	       "|, 1), s_k = <W_k, x> (+ b_k), m = objective.width hidden units, fixed public "
	       "output weights v_k = (-1)^k (function values only: zeroth-order methods); w = all "
	       "first-layer weights W feature-major (W[j m + k]), then the m biases.  Starts "
	       "from its public random initialisation (W uniform of variance 1/(d + intercept) "
	       "from objective.init_seed, biases 0).  Nonconvex, nonsmooth.  Tasks: regression.  "
	       "Params: width (required, 1 .. 256), init_seed (default 0), intercept.  Constants "
	       "(X~ = row l2 bound with the intercept's feature): L2 = X~ (attained: every unit "
	       "active, ||x~|| = X~), L_inf = X~_inf / sqrt(m); not smooth; value <= 1.",
	.tasks = 1u << TASK_REGRESSION,
	.params = (1u << OBJ_P_INTERCEPT) | (1u << OBJ_P_WIDTH) | (1u << OBJ_P_INIT_SEED),
	.smooth = false,
	.value_only = true,
	.hidden = relu_net_hidden,
	.start = relu_net_start,
	.constants = relu_net_constants,
};
