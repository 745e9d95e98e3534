/*
 * mirror.h - mirror maps: the entropic map on the (scaled) simplex, the
 * l1 ball through the 2d-simplex lifting, and the p-norm map with its
 * exact constrained mirror step (docs/algorithms/geometry.md).
 *
 * Pure functions on caller-owned arrays; nothing allocates and no
 * function needs scratch.  Conventions: a mirror step with gradient g and
 * step size eta is x_+ = argmin_{x in C} <eta g, x> + D_h(x, x_0).
 * Methods and accuracy: algorithms/README.md, "Geometry".
 */
#ifndef ALGORITHMS_MIRROR_H
#define ALGORITHMS_MIRROR_H

#include <stdbool.h>
#include <stddef.h>

#include "constraint.h"
#include "err.h"

/* ---- entropic map, h(x) = sum x_j log x_j, on {x >= 0 : sum x = scale} ----
 *
 * The state is the vector of log-weights theta (x = scale softmax(theta)),
 * never x itself (docs/algorithms/geometry.md §1): x_+ proportional to x exp(-eta g)
 * is theta_+ = theta - eta g, exactly, and no probability underflows to a
 * zero that a later step could not revive.  theta = 0 is the uniform point.
 */

/* theta <- theta - eta g, then shifted so that max theta = 0 (the point is
 * unchanged; the shift keeps the logs bounded over many steps). */
void mirror_entropic_step(double *theta, const double *g, double eta, size_t d);

/* ret_x <- scale softmax(theta) (max-shifted, compensated sum). */
void mirror_entropic_point(const double *theta, size_t d, double scale, double *ret_x);

/* The Bregman divergence of the entropy, the generalised KL divergence
 * sum x_j log(x_j / y_j) - x_j + y_j (= KL(x, y) when both sum to the same
 * scale); 0 log 0 = 0, +inf when some x_j > 0 = y_j. */
double mirror_kl(const double *x, const double *y, size_t d);

/* ---- the l1 ball of radius r through the 2d-simplex lifting ----
 *
 * x = r (u_+ - u_-) with u = (u_+, u_-) on the 2d-simplex; theta has 2d
 * entries (the log-weights of u, theta = 0 is x = 0).  The gradient of
 * f(r (u_+ - u_-)) in u is r (g, -g), so the entropic step on u is
 * theta_+ <- theta_+ - eta r g, theta_- <- theta_- + eta r g.
 */
void mirror_l1_step(double *theta, const double *g, double eta, double radius, size_t d);
void mirror_l1_point(const double *theta, size_t d, double radius, double *ret_x);

/* ---- the p-norm map h(x) = c ||x - a||_p^2 ---- */

/* p = 1 + 1 / max(ln d, 1): docs/algorithms/geometry.md §2, with the
 * correction of its §5 (p <= 2, and p = 2 for d <= 2). */
double mirror_pnorm_p(size_t d);

/* kappa_p = d^{1 - 1/p}: ||u||_1 <= kappa_p ||u||_p on R^d (Hoelder);
 * < e for p = mirror_pnorm_p(d). */
double mirror_pnorm_kappa(double p, size_t d);

struct mirror_pnorm {
	size_t d;
	double p;        /* 1 < p <= 2 */
	double c;        /* h = c ||x - a||_p^2; 1 / (2(p - 1)) is 1-strongly convex in ||.||_p */
	const double *a; /* borrowed centre, d entries; NULL is the origin */
};

/* The map of the general-p algorithms (docs/algorithms/geometry.md §2)
 * in dimension d: p = mirror_pnorm_p(d), c = 1 / (2(p - 1)), centre a
 * (borrowed, may be NULL).  The localized l1 algorithm uses
 * c = 1 / (p - 1): set m->c after this call. */
void mirror_pnorm_init(struct mirror_pnorm *m, size_t d, const double *a);

double mirror_pnorm_value(const struct mirror_pnorm *m, const double *x);

/* grad h(x) = 2c ||y||_p^{2-p} psi(y), y = x - a, psi(t) = sign(t)|t|^{p-1}
 * (0 at y = 0). */
void mirror_pnorm_grad(const struct mirror_pnorm *m, const double *x, double *ret_theta);

/* grad h*(theta) = a + (1/(2c)) ||theta||_q^{2-q} psi^{-1}(theta),
 * psi^{-1}(w) = sign(w)|w|^{q-1}, q = p / (p - 1): the unconstrained
 * minimiser of h(x) - <theta, x>. */
void mirror_pnorm_grad_conj(const struct mirror_pnorm *m, const double *theta, double *ret_x);

/* D_h(x, y) = h(x) - h(y) - <grad h(y), x - y>. */
double mirror_pnorm_bregman(const struct mirror_pnorm *m, const double *x, const double *y);

/* What the exact step solved (for tests and diagnostics). */
struct mirror_step_info {
	double tau;        /* the KKT scalar tau of docs/algorithms/geometry.md §3 */
	double nu;         /* the multiplier of the outer set (l1 ball >= 0; simplex: free) */
	bool outer_active; /* the l1-ball constraint binds (always true on the simplex) */
	bool ball_active;  /* ||x - a||_p = R binds */
	int evals;         /* O(d) passes spent */
};

/*
 * The exact constrained mirror step MS (docs/algorithms/geometry.md §3):
 *
 *	ret_x = argmin_{x in C} c ||x - a||_p^2 - <theta, x>,
 *	C = outer  intersected with  {x : ||x - a||_p <= R},
 *
 * with theta = grad h(x_k) - gamma g for the step from x_k.  outer is
 * NULL (all of R^d), an l1 ball (MS-L1), a simplex of scale s
 * (MS-SIMPLEX) or an lp ball of any exponent p' in (1, 2] (MS-LP);
 * R = INFINITY drops the local ball.  a must lie in outer (up to 1e-9
 * relative); a bad m, R <= 0, another outer kind or a centre outside
 * gives ERR_INVALID, a non-finite theta or a ERR_NUMERIC.  Solved by the
 * nested monotone root finding of that section (tau for fixed nu, then nu;
 * for MS-LP each coordinate is itself a monotone scalar root) with
 * safeguarded regula falsi to machine precision in the multipliers; the
 * result is then put exactly on the outer set when it binds (rescaled
 * onto the l1 or lp sphere, renormalised to sum s on the simplex).  info
 * may be NULL.
 */
enum err_code mirror_pnorm_step(const struct mirror_pnorm *m, const struct constraint *outer,
				double R, const double *theta, double *ret_x,
				struct mirror_step_info *info, struct err *e);

#endif /* ALGORITHMS_MIRROR_H */
