/*
 * privacy/selection.h - the number of repetitions K of private selection
 * with random stopping (Papernot & Steinke, "Hyperparameter tuning with
 * Renyi differential privacy", ICLR 2022), as a run draws it: from the
 * event's distribution conditioned on K >= 1 and capped at k_max.
 *
 * Why a cap.  The theorems bound the best of K outputs only while K is
 * secret, and a service that ran K repetitions would show K in its step
 * count, progress and wall time.  A run therefore always performs k_max
 * repetitions (fixed, public work) and releases the best of the first
 * min(K, k_max).  The capped distribution is not the theorem's; the
 * lemma in docs/privacy-model.md §3 ("capped selection") bounds the
 * difference as an additive Renyi term, from the two ratios computed
 * here:
 *
 *	r1 = P[K > k_max] k_max / E[K 1{K <= k_max}]
 *	r2 = E[K 1{K > k_max}] / E[K 1{K <= k_max}]
 *
 *	D_lambda(capped)  <=  D_lambda(uncapped) + lambda/(lambda-1) log(1 + r1)
 *	                                          + log(1 + r2),
 *
 * both ratios enlarged for the inversion sampler's floating-point error
 * (selection_cap_ratios).  Conditioning on K >= 1 (Poisson only: the
 * truncated negative binomial has no K = 0) never raises the Renyi
 * divergence (same section), and spares the run an empty result.
 */
#ifndef ALGORITHMS_PRIVACY_SELECTION_H
#define ALGORITHMS_PRIVACY_SELECTION_H

#include <stdint.h>

#include "err.h"
#include "privacy/event.h"
#include "rng.h"

/* Largest cap a run may use: the work is k_max repetitions. */
#define SELECTION_MAX_K 100000u

/* The K of one selection node (selection_tnb or selection_poisson with
 * k_max >= 1); ERR_INVALID for another node or parameters out of range. */
struct selection_dist {
	enum dp_event_type type; /* DP_EVENT_SELECTION_TNB or _POISSON */
	double eta, gamma, mu;
	uint64_t k_max;
};

enum err_code selection_dist_from_event(const struct dp_event *node, struct selection_dist *ret,
					struct err *e);

/* log P[K = k | K >= 1] of the uncapped distribution, k >= 1; -inf for
 * k = 0, NaN for parameters out of range. */
double selection_log_pmf(const struct selection_dist *d, uint64_t k);

/* r1, r2 of the header comment for d's cap, each rounded up and enlarged
 * for the sampler's error.  ERR_NUMERIC when a sum does not converge or a
 * value is not finite (fail closed). */
enum err_code selection_cap_ratios(const struct selection_dist *d, double *ret_r1, double *ret_r2,
				   struct err *e);

/* The smallest k_max in [1, SELECTION_MAX_K] whose ratios r1 and r2 are
 * both at most target (d's k_max is ignored); ERR_INVALID naming field
 * when no cap that small reaches it. */
enum err_code selection_cap_for(const struct selection_dist *d, double target, const char *field,
				uint64_t *ret_k_max, struct err *e);

/* The cumulative table of the capped distribution: cdf[k - 1] =
 * P[min(K, k_max) <= k] for k = 1 .. k_max, the last exactly 1.  cdf has
 * d->k_max entries (the caller's allocation). */
enum err_code selection_cdf(const struct selection_dist *d, double *cdf, struct err *e);

/* One draw of min(K, k_max) by inversion of cdf (selection_cdf) with a
 * 53-bit uniform from rng. */
uint64_t selection_draw(const double *cdf, uint64_t k_max, struct rng *rng);

#endif /* ALGORITHMS_PRIVACY_SELECTION_H */
