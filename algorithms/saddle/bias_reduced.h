/*
 * saddle/bias_reduced.h - the parts of saddle.smd_bias_reduced
 * (saddle/smd_bias_reduced.c; docs/algorithms/smd-bias-reduced.md) that
 * its tests call directly: the truncated geometric law TG(1/2, M), the
 * defaults of Theorem 4.3, the batch sizes and the per-draw privacy unit,
 * and Algorithm 2 (the bias-reduced gradient) on a caller's log-weights.
 * Nothing here allocates but brg_alloc().
 */
#ifndef ALGORITHMS_SADDLE_BIAS_REDUCED_H
#define ALGORITHMS_SADDLE_BIAS_REDUCED_H

#include <stddef.h>
#include <stdint.h>

#include "constraint.h"
#include "data.h"
#include "err.h"
#include "objective.h"
#include "rng.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

/* The per-draw privacy multiplier of Theorem 4.3, each draw (kappa tau
 * alpha L_0)-DP: the paper's 9 is not a bound (erratum ER3); 4 (2 Z_M + 1)
 * < 20 is. */
#define BRG_KAPPA 20.0

/* The deepest level supported (2^(M+1) draws per player per step). */
#define BRG_MAX_LEVELS 30u

/* TG(1/2, M) on {0, .., M}: P[N = k] = 2^-k / Z_M, Z_M = 2 - 2^-M. */
double tg_norm(unsigned m);
double tg_prob(unsigned k, unsigned m);
/* w_k = 1 / P[N = k] = Z_M 2^k (erratum ER5: not 2^k). */
double tg_weight(unsigned k, unsigned m);
/* E[2^N] = (M + 1) / Z_M. */
double tg_mean_pow2(unsigned m);
/* One draw by the inverse CDF from one uniform of r. */
unsigned tg_sample(struct rng *r, unsigned m);

/* Theorem 4.3's choices (spec §4.5 with L_0 outside the root, ER4):
 *	Lambda^2 = L_0^2 + L_2^2 + l L_1^2,
 *	U = min(n eps Lambda / (kappa L_0 sqrt(192 l ln(1/delta))), n / 2),
 *	M = floor(log2(U) / 2),  tau = sqrt(l / (Lambda^2 U)),
 *	alpha = (2 eps^2 / (48 kappa^2 ln(1/delta) (tau L_0)^2 n))^(1/3). */
struct brg_theorem {
	double lambda, stop, tau, alpha, mean_pow2;
	unsigned levels;
};
void brg_theorem(double n, double eps, double delta, double ell, double l0, double l1, double l2,
		 double kappa, struct brg_theorem *ret);

/* M = floor(log2(U) / 2) for U >= 1 (capped at BRG_MAX_LEVELS). */
unsigned brg_levels(double stop);

/* The loop's largest number of iterations: floor(U - 2^M) + 1 (the rule
 * "while sum_{i<t} 2^(N_i) <= U - 2^M" admits iteration t only when t - 1
 * <= U - 2^M, each 2^(N_i) >= 1). */
unsigned long brg_max_steps(double stop, unsigned m);

/* b_k = max(1, ceil(2^k / alpha)). */
size_t brg_batch(unsigned k, double alpha);

/* The per-draw epsilon at temperature 1 (tau = 1): 2 max_k (2 l0 / b_k)
 * (2 w_k + 1), k = 0 .. M (spec §5.3; ||Delta g||_inf <= (2 L_0 / b)(2 w +
 * 1) for g = w (G+ - G-) + G0, each G a batch mean of clamped gradients). */
double brg_unit(double l0, unsigned m, double alpha);

/* floor(r U) with r = max_k b_k / 2^k: a bound on the records a run reads
 * (sum_t b_t <= r sum_t 2^(N_t) <= r U). */
double brg_max_records(double stop, unsigned m, double alpha);

/*
 * Algorithm 2 on one batch.  The caller sets the log-weights wx (m_x) and
 * wy (m_y) of the players' vertices; brg_estimate() draws 2^(N+1) vertices
 * per player from softmax(w) (noise_exp_mech), forms x+ (all of them), x-
 * (the first 2^N) and x0 (the first), and returns
 *	g = w_N (G(x+, y+) - G(x-, y-)) + G(x0, y0),
 * G the batch mean of the clamped operators (grad_x f, -grad_y f) (x
 * block clamped to [-lip_x, lip_x], y to [-lip_y, lip_y]).  Every draw
 * goes through brg_draw(), which counts it in draws (and in test builds
 * releases (vertex, block, level, position) to the hook).
 */
struct brg {
	const struct objective *obj;
	const struct dataset *ds;
	struct rng *rng;
	struct constraint set_x, set_y;
	size_t dim_x, dim_y, dim, m_x, m_y;
	double lip_x, lip_y;
	unsigned levels;      /* M */
	uint64_t draws;       /* vertex draws so far */
	double *wx, *wy;      /* owned: m_x, m_y log-weights (the caller's input) */
	double *up, *um, *u0; /* owned: dim each, the three query points */
	double *gp, *gm, *g0; /* owned: dim each, the three batch sums */
	double *g;            /* owned: dim, one record's operator */
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook; /* borrowed, may be NULL */
#endif
};

/* Allocate the arrays of b (its sizes set); ERR_NOMEM. */
enum err_code brg_alloc(struct brg *b, struct err *e);
void brg_free(struct brg *b);

/* One vertex of block (0: x, 1: y) from its log-weights; level and pos
 * only label the hook's release. */
enum err_code brg_draw(struct brg *b, unsigned block, unsigned level, unsigned long pos,
		       size_t *ret_vertex, struct err *e);

/* ret_g (dim) <- Algorithm 2's estimate at level N on the records
 * batch[0 .. nb - 1]. */
enum err_code brg_estimate(struct brg *b, unsigned level, const size_t *batch, size_t nb,
			   double *ret_g, struct err *e);

#endif /* ALGORITHMS_SADDLE_BIAS_REDUCED_H */
