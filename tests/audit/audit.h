/*
 * audit.h - statistical privacy audits: an empirical lower bound on epsilon
 * from samples of a scalar statistic in two neighbouring worlds
 * (docs/privacy-model.md §7).  Test code only, linked into the audit suite.
 *
 * The bound is the standard one (M. Jagielski, J. Ullman, A. Oprea,
 * "Auditing differentially private machine learning: how private is
 * private SGD?", NeurIPS 2020; M. Nasr, S. Song, A. Thakurta, N. Papernot,
 * N. Carlini, "Adversary instantiation: lower bounds for differentially
 * private machine learning", IEEE S&P 2021).  World A holds the canary
 * record pushing the statistic up, world B its neighbour.  A test is a set
 * S = {s >= t} ("direction up": A is the positive world) or S = {s < t}
 * ("direction down": B is).  (epsilon, delta)-DP gives, for every S and both
 * orders of the worlds,
 *
 *	P_pos(S) <= e^epsilon P_neg(S) + delta,
 *
 * so with a Clopper-Pearson lower bound TPR_lb on P_pos(S) and upper bound
 * FPR_ub on P_neg(S), each from independent samples,
 *
 *	epsilon >= epsilon_lb = log((TPR_lb - delta) / FPR_ub)
 *
 * unless one of the bounds failed.  The audit reports the largest
 * epsilon_lb over its tests.  Thresholds come from one of two methods:
 *
 * - AUDIT_GRID: Bonferroni over a fixed grid of k thresholds on [lo, hi],
 *   chosen before sampling from public parameters (the claimed sigma and
 *   sensitivity), both directions: 4 k one-sided bounds, each at
 *   alpha / (4 k), all samples used.  The power of such an audit is exactly
 *   computable (audit_power()), which is why the mutation audits use it.
 * - AUDIT_SPLIT: the first half of each sample calibrates, the second
 *   evaluates.  On the calibration half every direction picks, among
 *   `candidates` thresholds at evenly spaced ranks of the pooled half, the
 *   one with the largest epsilon_lb (computed at the evaluation's
 *   confidence); the evaluation half then gives one epsilon_lb per
 *   direction: 4 bounds, each at alpha / 4.  Needs no knowledge of the
 *   statistic's scale (used end to end, where its law is unknown).
 *
 * False failure.  If the mechanism really is (epsilon, delta)-DP,
 * epsilon_lb > epsilon needs TPR_lb > P_pos(S) or FPR_ub < P_neg(S) for the
 * reported S; by the union bound over all bounds computed, that has
 * probability at most alpha (1e-6 per audit in this suite), whatever the
 * thresholds.  The calibration half is independent of the evaluation half,
 * so its choices are fixed as far as the evaluation is concerned.
 */
#ifndef TESTS_AUDIT_AUDIT_H
#define TESTS_AUDIT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rng.h"

/* --- Beta and binomial ------------------------------------------------- */

/* Regularised incomplete beta I_x(a, b), a, b > 0, by Lentz's continued
 * fraction (on the side of the mean where it converges fast). */
double audit_incbeta(double a, double b, double x);

/* The x in [0, 1] with I_x(a, b) = p, by bisection (absolute error below
 * 1e-15 and relative error below 1e-12). */
double audit_beta_quantile(double a, double b, double p);

/* One-sided Clopper-Pearson bounds for k successes in n trials, each
 * failing with probability at most alpha; rounded to the safe side. */
double audit_cp_lower(uint64_t k, uint64_t n, double alpha);
double audit_cp_upper(uint64_t k, uint64_t n, double alpha);

/* P(Bin(n, p) = k), P(Bin(n, p) >= k) and P(Bin(n, p) <= k). */
double audit_binom_pmf(uint64_t k, uint64_t n, double p);
double audit_binom_sf(uint64_t k, uint64_t n, double p);
double audit_binom_cdf(uint64_t k, uint64_t n, double p);

/* log((cp_lower(k_pos) - delta) / cp_upper(k_neg)) at alpha_each per bound;
 * -INFINITY when the lower bound does not exceed delta. */
double audit_eps_from_counts(uint64_t k_pos, uint64_t n_pos, uint64_t k_neg, uint64_t n_neg,
			     double alpha_each, double delta);

/*
 * Power of one fixed test: the probability that epsilon_lb > eps_claim
 * when the test's true rates are tpr (on n_pos samples) and fpr (on n_neg),
 * at alpha_each per bound.  audit_miss() is 1 - power, summed directly so
 * that tiny miss probabilities keep their digits.  Exact binomial sums,
 * except that negative counts beyond 10 standard deviations are counted
 * as misses: the power errs low.  An audit that takes the best of several
 * tests has at least the power of each of them.
 */
double audit_miss(uint64_t n_pos, double tpr, uint64_t n_neg, double fpr, double alpha_each,
		  double delta, double eps_claim);
double audit_power(uint64_t n_pos, double tpr, uint64_t n_neg, double fpr, double alpha_each,
		   double delta, double eps_claim);

/* --- Audits ------------------------------------------------------------- */

enum audit_method {
	AUDIT_GRID,
	AUDIT_SPLIT,
};

enum audit_direction {
	AUDIT_UP,   /* S = {s >= t}: A positive, B negative */
	AUDIT_DOWN, /* S = {s < t}: B positive, A negative */
};

struct audit_config {
	const char *name;
	double delta; /* the claimed delta */
	double alpha; /* false-failure budget of the whole audit */
	enum audit_method method;
	double lo, hi; /* AUDIT_GRID: thresholds lo + i (hi - lo) / (k - 1), i < k */
	size_t k;
	size_t candidates; /* AUDIT_SPLIT: thresholds tried on the calibration half */
};

struct audit_result {
	double eps_lb; /* max over the tests; -INFINITY if none gave a bound */
	enum audit_direction direction;
	double threshold;
	uint64_t k_pos, n_pos; /* positive world: samples in S, samples used */
	uint64_t k_neg, n_neg; /* negative world */
	double tpr_lb, fpr_ub;
	size_t n_bounds;      /* one-sided bounds the union bound covers */
	double alpha_each;    /* = alpha / n_bounds */
	double false_failure; /* <= alpha: the union bound */
};

/*
 * epsilon_lb from a[na] (world A) and b[nb] (world B); both arrays are
 * sorted in place.  Returns 0, or -1 for a bad configuration.
 */
int audit_eps_lb(const struct audit_config *c, double *a, size_t na, double *b, size_t nb,
		 struct audit_result *ret);

/* --- Power of a calibration-split audit ---------------------------------- */

/* The true rates of the test {s >= t} ("up"): *tpr = P_A(s >= t) and *fpr =
 * P_B(s >= t), both non-increasing in t; t may be -INFINITY or INFINITY. */
typedef void (*audit_rates_fn)(void *ctx, double t, double *tpr, double *fpr);

/* How audit_split_miss() cuts the threshold line; all of it fixed before
 * sampling (from the law, not the samples). */
struct audit_split_plan {
	double lo, hi; /* (-inf, lo], `pieces` equal parts of [lo, hi], [hi, inf) */
	size_t pieces;
	double step; /* the finest part (pieces are halved down to it); the pick's parts */
	double cut;  /* the calibration bound that separates good thresholds from bad */
};

struct audit_split_power {
	double pick_lo, pick_hi; /* the pick, chosen from the law */
	double p_candidate;      /* (i) no calibration candidate in the pick */
	double p_pick;           /* (ii) every candidate there has a calibration bound <= cut */
	double p_good;           /* (iii) the largest evaluation miss over the good pieces */
	double p_rest;           /* (iv) over the other pieces: choice there, then a miss */
	size_t n_pieces, n_good; /* pieces evaluated; parts of [lo, hi] counted good */
	double miss; /* min(1, the sum of all four): P[epsilon_lb <= eps_claim] <= this */
};

/*
 * An upper bound on the miss probability of an AUDIT_SPLIT audit (c, na
 * and nb samples) whose statistic has the rates of `rates`, through its
 * "up" direction alone (the audit reports the larger of both directions,
 * so it misses at most as often).  Write K_A(t), K_B(t) for the samples
 * >= t in each world and eps(k_A, k_B) for the bound from those counts:
 * it increases with k_A and decreases with k_B, so on a piece [u, v] of
 * thresholds every bound lies between eps(K_A(v), K_B(u)) and
 * eps(K_A(u), K_B(v)).  For a piece J = [u, v] let b_J = P[eps(K_A(u),
 * K_B(v)) > cut] on the calibration half, and m_J = P[eps(K_A(v), K_B(u))
 * <= eps_claim] on the evaluation half: at least the evaluation's miss at
 * any threshold in J, and independent of the calibration.  The audit
 * misses only if
 *
 * (i)   no candidate lies in the pick [pick_lo, pick_hi]: fewer pooled
 *       samples there than the largest gap between candidate ranks, or
 *       none below it or above it (binomial tails of world A's count
 *       alone, which the pool can only exceed); or
 * (ii)  every candidate in the pick has a calibration bound <= cut: at
 *       most the sum over the pick's parts [u, v] of P[eps(K_A(v), K_B(u))
 *       <= cut]; or else the choice beats that candidate, so its
 *       calibration bound is > cut, it lies in one piece J (probability
 *       b_J at most), and the evaluation misses there (m_J at most): for
 *       any set G of pieces, at most
 * (iii) the largest m_J over J in G, plus
 * (iv)  the sum over the other pieces of b_J m_J.
 *
 * A piece that matters (b_J and m_J both above 1e-10, the bounds' own
 * floor being about 1e-11) is halved down to `step`, and counts the
 * smaller of b_J times the largest m of its finest parts and the sum over
 * its halves.  G is the set of parts of [lo, hi] (and tails) whose largest
 * m is below a level, the level that makes (iii) + (iv) least.  The pick
 * grows from the part of width `step` around the threshold whose
 * calibration bound at the expected counts is largest (on a grid of [lo,
 * hi] 8 times finer than the parts), one part at a time towards the
 * smaller (ii) term, and
 * the run with the least (i) + (ii) is kept: all of it from the law, fixed
 * before sampling.  Each probability of a bound is summed over the
 * negative count in blocks, each at its worst end, with exact binomial
 * tails and the harness's own Clopper-Pearson bounds: an upper bound, not
 * an estimate, to the accuracy of the incomplete beta (about 1e-9
 * relative).  Returns 0, or -1 for a bad configuration.
 */
int audit_split_miss(const struct audit_config *c, size_t na, size_t nb, audit_rates_fn rates,
		     void *ctx, const struct audit_split_plan *plan, double eps_claim,
		     struct audit_split_power *ret);

/* One sample of the statistic in world 0 (A) or 1 (B), drawing from r. */
typedef double (*audit_sample_fn)(void *ctx, int world, struct rng *r);

/* out[i] = fn(ctx, world, r) for i < n, with r a splitmix generator seeded
 * with seed (fixed seeds: the audit is reproducible). */
void audit_draw(audit_sample_fn fn, void *ctx, int world, uint64_t seed, double *out, size_t n);

/* One line per audit: bound, claim, test, counts, false-failure bound. */
void audit_print(FILE *f, const struct audit_config *c, const struct audit_result *r,
		 double eps_claim);

/* Seconds on the monotonic clock. */
double audit_now(void);

/* P[N(0, 1) > x], for the power computations of the Gaussian audits. */
double audit_normal_sf(double x);

/* The claim a Gaussian audit checks: *ret_z = the noise multiplier
 * calibrated to (epsilon, delta) on the exact curve, and the returned
 * epsilon is what the accountant (basic mode) reports for {gaussian z} at
 * delta; NAN when either fails. */
double audit_gauss_claim(double epsilon, double delta, double *ret_z);

/*
 * The bounded range of a two-outcome release (a selection between two
 * vertices) from k_a of n runs in world A and k_b of n in world B showing
 * the outcome: the lower bound logit(CP_lower(k_a)) - logit(CP_upper(k_b)),
 * or the same with the worlds swapped, whichever is larger; each of the
 * four Clopper-Pearson bounds at alpha / 8 (false-failure probability <=
 * alpha for a claimed range).
 */
double audit_range_lb(uint64_t k_a, uint64_t k_b, uint64_t n, double alpha);

/* The smallest count q with P[Bin(n, p) < q] <= tail (lower), or the
 * largest with P[Bin(n, p) > q] <= tail (upper): the counts a twin's
 * power bound assumes. */
uint64_t audit_binom_quantile(uint64_t n, double p, double tail, bool lower);

/*
 * The law of the level-3 statistic of a one-release design
 * (test_audit_dp_sgd_subsampled_e2e.c, test_audit_mirror_descent_e2e.c):
 * s = +-m C + N(0, sd^2) (+ in world A, - in B), C ~ Bernoulli(q) the
 * canary's inclusion.  Its likelihood ratio is increasing in s, so
 * threshold tests s >= t are the most powerful.
 */
struct audit_mixture {
	double q, m, sd;
};

/* P_A(s >= t) and P_B(s >= t); ctx a struct audit_mixture (an
 * audit_rates_fn for audit_split_miss()). */
void audit_mixture_rates(void *ctx, double t, double *tpr, double *fpr);

/* sup_t P_A(s >= t) - e^eps P_B(s >= t), on a grid of 0.001 sd over
 * [-8, 8] sd. */
double audit_mixture_delta(const struct audit_mixture *l, double eps);

/* The statistic's true epsilon(delta), by bisection on
 * audit_mixture_delta() (0 when the statistic is (0, delta)-DP). */
double audit_mixture_epsilon(const struct audit_mixture *l, double delta);

/* The best threshold test at the true rates (grid of 0.001 sd over
 * [-4, 6] sd): its epsilon, and its threshold in *ret_t. */
double audit_mixture_best_test(const struct audit_mixture *l, double delta, double *ret_t);

/* --- The Gaussian grid audit of one white-box release ------------------- */

/*
 * A level-2 unit whose statistic is s = +-shift/2 + N(0, (scale sigma)^2)
 * (+ in world A, - in B): the Bonferroni grid of k thresholds u sigma, u =
 * -u_max .. u_max, both directions, at alpha over all 4 k bounds (the
 * design of test_audit_sgda.c, test_audit_nseg.c and
 * test_audit_recursive_regularization.c).
 */
struct audit_gauss_grid {
	const char *name;
	double sigma; /* the planned sigma: the grid's unit */
	double delta; /* the claimed delta */
	double alpha; /* false-failure budget of the audit */
	size_t k;     /* thresholds */
	double u_max; /* the grid spans [-u_max, u_max] sigma */
	uint64_t n;   /* runs per world */
};

/* Draws c->n samples a world with fn (seeds seed and seed ^ a constant),
 * computes epsilon_lb, prints it with the wall time and returns it. */
double audit_gauss_grid_run(const struct audit_gauss_grid *c, audit_sample_fn fn, void *ctx,
			    uint64_t seed, double noise_scale, double eps_claim);

/*
 * The miss probability of that audit when the noise is scale sigma and the
 * worlds' means differ by shift: the smallest audit_miss() over the three
 * "up" tests of the grid with the largest bound at the expected counts
 * (the audit reports the best of all its tests, so it misses at most as
 * often as any one); *ret_u (may be NULL) gets that test's u.
 */
double audit_gauss_grid_miss(const struct audit_gauss_grid *c, double shift, double scale,
			     double eps_claim, double *ret_u);

#endif /* TESTS_AUDIT_AUDIT_H */
