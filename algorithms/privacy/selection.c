/*
 * privacy/selection.c - the capped number of repetitions of private
 * selection (selection.h); the lemma behind the ratios is in
 * docs/privacy-model.md §3 ("capped selection").
 */
#include <math.h>
#include <stdlib.h>

#include "privacy/selection.h"

enum err_code
selection_dist_from_event(const struct dp_event *node, struct selection_dist *ret, struct err *e)
{
	struct selection_dist d = { .type = node->type,
				    .eta = node->eta,
				    .gamma = node->gamma,
				    .mu = node->mu,
				    .k_max = node->k_max };

	if (node->type == DP_EVENT_SELECTION_POISSON) {
		if (!(isfinite(d.mu) && d.mu > 0.0 && d.mu <= 1e9))
			return err_set(e, ERR_INVALID, "selection_poisson needs mu in (0, 1e9]");
	} else if (node->type == DP_EVENT_SELECTION_TNB) {
		if (!(isfinite(d.eta) && d.eta > -1.0 && d.eta <= 1e6 && d.gamma > 0.0 &&
		      d.gamma < 1.0))
			return err_set(e, ERR_INVALID,
				       "selection_tnb needs eta in (-1, 1e6] and gamma in (0, 1)");
	} else {
		return err_set(e, ERR_INVALID, "not a selection event");
	}
	if (d.k_max > SELECTION_MAX_K)
		return err_set(e, ERR_INVALID, "a selection event's k_max is at most %u",
			       SELECTION_MAX_K);
	*ret = d;
	return ERR_OK;
}

double
selection_log_pmf(const struct selection_dist *d, uint64_t k)
{
	double kf = (double)k;

	if (k == 0)
		return -INFINITY;
	if (d->type == DP_EVENT_SELECTION_POISSON)
		/* Poisson(mu) conditioned on K >= 1. */
		return -d->mu + kf * log(d->mu) - lgamma(kf + 1.0) - log(-expm1(-d->mu));
	if (d->eta == 0.0)
		/* The logarithmic distribution (Papernot & Steinke, eta = 0). */
		return kf * log1p(-d->gamma) - log(kf) - log(-log(d->gamma));
	/* C(k + eta - 1, k) (1 - gamma)^k / (gamma^-eta - 1): for eta in
	 * (-1, 0) both the coefficient (Gamma(eta) < 0) and the normaliser are
	 * negative, so their absolute values are taken (lgamma gives
	 * log |Gamma|). */
	return lgamma(kf + d->eta) - lgamma(kf + 1.0) - lgamma(d->eta) + kf * log1p(-d->gamma) -
	       log(fabs(expm1(-d->eta * log(d->gamma))));
}

/* E[K | K >= 1] of the uncapped distribution. */

static double
uncapped_mean(const struct selection_dist *d)
{
	if (d->type == DP_EVENT_SELECTION_POISSON)
		return d->mu / -expm1(-d->mu);
	return dp_selection_tnb_mean(d->eta, d->gamma);
}

/*
 * The lemma (docs/privacy-model.md §3, "capped selection"): for two
 * distributions p, q of K >= 1, the law of the best of K (ties broken
 * uniformly) under q is at most 1 + r1 times, and at least 1/(1 + r2)
 * times, the law under p, where
 *	r1 = max_j S_q(j) / S_p(j) - 1,   r2 = max_j S_p(j) / S_q(j) - 1,
 *	S(j) = sum_{k <= j} k P[K = k].
 * Here p is the event's distribution (conditioned on K >= 1) and q the
 * law selection_draw() really has: its table inverted by a uniform
 * m 2^-53, m in [0, 2^53), so P[draw = k] = (ceil(c_k 2^53) -
 * ceil(c_{k-1} 2^53)) 2^-53 exactly (c the table, c_0 = 0).  Past k_max,
 * S_q stays at its total and S_p grows to E_p[K]: r1's maximum is at some
 * j <= k_max, r2's is E_p[K] / S_q(k_max) or at some j < k_max.
 */
enum err_code
selection_cap_ratios(const struct selection_dist *d, double *ret_r1, double *ret_r2, struct err *e)
{
	long double sp = 0.0L, sq = 0.0L, r1 = 0.0L, r2 = 0.0L, prev = 0.0L, mean;
	double *cdf;
	enum err_code rc;

	if (d->k_max < 1 || d->k_max > SELECTION_MAX_K)
		return err_set(e, ERR_INVALID, "a capped selection needs k_max in [1, %u]",
			       SELECTION_MAX_K);
	mean = uncapped_mean(d);
	if (!(isfinite((double)mean) && mean >= 1.0L))
		return err_set(e, ERR_NUMERIC, "selection: no finite mean number of repetitions");
	cdf = malloc(d->k_max * sizeof(*cdf));
	if (cdf == NULL)
		return err_set(e, ERR_NOMEM, "out of memory");
	if ((rc = selection_cdf(d, cdf, e)) != ERR_OK) {
		free(cdf);
		return rc;
	}
	for (uint64_t k = 1; k <= d->k_max; k++) {
		long double kf = (long double)k, c = ceill(ldexpl((long double)cdf[k - 1], 53));
		long double q = ldexpl(c - prev, -53),
			    p = expl((long double)selection_log_pmf(d, k));

		prev = c;
		sp += kf * p;
		sq += kf * q;
		if (!(sp > 0.0L && sq > 0.0L))
			continue; /* both empty so far: nothing to compare */
		r1 = fmaxl(r1, sq / sp - 1.0L);
		if (k < d->k_max)
			r2 = fmaxl(r2, sp / sq - 1.0L);
	}
	free(cdf);
	if (!(sq > 0.0L))
		return err_set(e, ERR_NUMERIC, "selection: the capped distribution is empty");
	r2 = fmaxl(r2, mean / sq - 1.0L);
	/* exp/lgamma and the sums are good to far better than 1e-12 relative
	 * for at most SELECTION_MAX_K terms: round both up by that much. */
	*ret_r1 = (double)r1 + 1e-12;
	*ret_r2 = (double)r2 + 1e-12;
	if (!(isfinite(*ret_r1) && isfinite(*ret_r2)))
		return err_set(e, ERR_NUMERIC, "selection: the cap's ratios are not usable");
	return ERR_OK;
}

static bool
cap_ok(const struct selection_dist *d, uint64_t k_max, double target)
{
	struct selection_dist c = *d;
	double r1, r2;

	c.k_max = k_max;
	return selection_cap_ratios(&c, &r1, &r2, NULL) == ERR_OK && r1 <= target && r2 <= target;
}

enum err_code
selection_cap_for(const struct selection_dist *d, double target, const char *field,
		  uint64_t *ret_k_max, struct err *e)
{
	uint64_t lo = 0, hi = 1;

	/* Doubling until a cap meets the target, then bisection on "meets the
	 * target", which holds at hi throughout: the result is a cap that
	 * meets it.  (The ratios fall with k_max past the mode while the
	 * sampler's allowance grows as k_max^3, so the caps that meet a
	 * target form one interval in practice, and this finds its start.) */
	while (target > 0.0 && hi <= SELECTION_MAX_K && !cap_ok(d, hi, target)) {
		lo = hi;
		hi *= 2;
	}
	if (hi > SELECTION_MAX_K) {
		hi = SELECTION_MAX_K;
		if (!cap_ok(d, hi, target))
			return err_set_field(e, ERR_INVALID, field,
					     "'%s' makes the number of repetitions too spread "
					     "out: no cap up to %u repetitions holds it",
					     field, SELECTION_MAX_K);
	}
	if (!(target > 0.0))
		return err_set_field(e, ERR_INVALID, field, "'%s': no cap holds a zero target",
				     field);
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (cap_ok(d, mid, target))
			hi = mid;
		else
			lo = mid;
	}
	*ret_k_max = hi;
	return ERR_OK;
}

enum err_code
selection_cdf(const struct selection_dist *d, double *cdf, struct err *e)
{
	double c = 0.0;

	if (d->k_max < 1 || d->k_max > SELECTION_MAX_K)
		return err_set(e, ERR_INVALID, "a capped selection needs k_max in [1, %u]",
			       SELECTION_MAX_K);
	for (uint64_t k = 1; k < d->k_max; k++) {
		double p = exp(selection_log_pmf(d, k));

		if (!(p >= 0.0 && p <= 1.0))
			return err_set(e, ERR_NUMERIC, "selection: a probability is not usable");
		c += p;
		cdf[k - 1] = fmin(c, 1.0);
	}
	cdf[d->k_max - 1] = 1.0; /* the capped mass P[K >= k_max] */
	return ERR_OK;
}

uint64_t
selection_draw(const double *cdf, uint64_t k_max, struct rng *rng)
{
	double u = ldexp((double)(rng_u64(rng) >> 11), -53);
	uint64_t lo = 0, hi = k_max - 1; /* the answer's index is in [lo, hi] */

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (u < cdf[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo + 1;
}
