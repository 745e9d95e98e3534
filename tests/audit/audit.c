/*
 * audit.c - the audit harness (see audit.h): Beta and binomial functions,
 * Clopper-Pearson bounds, epsilon lower bounds, power.
 *
 * Numerics.  I_x(a, b) is evaluated as x^a (1 - x)^b / (a B(a, b)) times
 * Lentz's continued fraction (Numerical Recipes section 6.4; Abramowitz &
 * Stegun 26.5.8) on the side of the mean where that fraction converges
 * (x < (a + 1) / (a + b + 2)), and through I_x(a, b) = 1 - I_{1-x}(b, a) on
 * the other.  Quantiles of tails are searched on the side where the tail is
 * computed directly, never as 1 minus a number close to 1, so the 1e-9-ish
 * probabilities the bounds work at keep their relative accuracy (about
 * 1e-9 from the log-gamma terms at n ~ 1e6: far below the statistical
 * error).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "privacy/accountant.h"
#include "privacy/analytic_gaussian.h"

#define CF_MAX_ITER 1000000
#define CF_EPS      1e-15
#define CF_TINY     1e-300

/* The continued fraction of I_x(a, b) (without its front factor). */
static double
beta_cf(double a, double b, double x)
{
	double qab = a + b, qap = a + 1.0, qam = a - 1.0;
	double c = 1.0, d = 1.0 - qab * x / qap, h;

	if (fabs(d) < CF_TINY)
		d = CF_TINY;
	d = 1.0 / d;
	h = d;
	for (int m = 1; m <= CF_MAX_ITER; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1.0 + aa * d;
		if (fabs(d) < CF_TINY)
			d = CF_TINY;
		c = 1.0 + aa / c;
		if (fabs(c) < CF_TINY)
			c = CF_TINY;
		d = 1.0 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1.0 + aa * d;
		if (fabs(d) < CF_TINY)
			d = CF_TINY;
		c = 1.0 + aa / c;
		if (fabs(c) < CF_TINY)
			c = CF_TINY;
		d = 1.0 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1.0) < CF_EPS)
			return h;
	}
	/* Never seen for the sizes used here; a silent wrong bound is worse
	 * than a crash in a test. */
	fprintf(stderr, "audit: incomplete beta did not converge (a %g, b %g, x %g)\n", a, b, x);
	abort();
}

double
audit_incbeta(double a, double b, double x)
{
	double front;

	if (x <= 0.0)
		return 0.0;
	if (x >= 1.0)
		return 1.0;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1.0) / (a + b + 2.0))
		return front * beta_cf(a, b, x) / a;
	return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

/*
 * Bisection for I_x(a, b) = p with p <= 1/2, on the side where I is small
 * and computed directly.  Returns lo with I_lo(a, b) <= p (so lo is at most
 * the exact quantile, up to the evaluation's rounding) and stores hi.
 */
static double
quantile_lo(double a, double b, double p, double *ret_hi)
{
	double lo = 0.0, hi = 1.0;

	for (int it = 0; it < 4000; it++) {
		double mid = 0.5 * (lo + hi);

		if (hi - lo <= 1e-15 && hi - lo <= 1e-12 * hi)
			break;
		if (!(mid > lo && mid < hi))
			break;
		if (audit_incbeta(a, b, mid) <= p)
			lo = mid;
		else
			hi = mid;
	}
	if (ret_hi != NULL)
		*ret_hi = hi;
	return lo;
}

double
audit_beta_quantile(double a, double b, double p)
{
	double hi, lo;

	if (p <= 0.0)
		return 0.0;
	if (p >= 1.0)
		return 1.0;
	if (p <= 0.5) {
		lo = quantile_lo(a, b, p, &hi);
		return 0.5 * (lo + hi);
	}
	lo = quantile_lo(b, a, 1.0 - p, &hi);
	return 1.0 - 0.5 * (lo + hi);
}

/* P(Bin(n, p) >= k) <= alpha at p = lower bound: the alpha quantile of
 * Beta(k, n - k + 1). */
double
audit_cp_lower(uint64_t k, uint64_t n, double alpha)
{
	if (k == 0)
		return 0.0;
	return quantile_lo((double)k, (double)(n - k + 1), alpha, NULL);
}

/* The 1 - alpha quantile of Beta(k + 1, n - k), found as 1 minus the alpha
 * quantile of Beta(n - k, k + 1) (small tail, directly computed), rounded
 * up. */
double
audit_cp_upper(uint64_t k, uint64_t n, double alpha)
{
	double y;

	if (k >= n)
		return 1.0;
	y = quantile_lo((double)(n - k), (double)(k + 1), alpha, NULL);
	return fmin(1.0, nextafter(1.0 - y, 2.0));
}

double
audit_binom_pmf(uint64_t k, uint64_t n, double p)
{
	double kk = (double)k, nn = (double)n;

	if (k > n)
		return 0.0;
	if (p <= 0.0)
		return k == 0 ? 1.0 : 0.0;
	if (p >= 1.0)
		return k == n ? 1.0 : 0.0;
	return exp(lgamma(nn + 1.0) - lgamma(kk + 1.0) - lgamma(nn - kk + 1.0) + kk * log(p) +
		   (nn - kk) * log1p(-p));
}

double
audit_binom_sf(uint64_t k, uint64_t n, double p)
{
	if (k == 0)
		return 1.0;
	if (k > n)
		return 0.0;
	return audit_incbeta((double)k, (double)(n - k + 1), p);
}

double
audit_eps_from_counts(uint64_t k_pos, uint64_t n_pos, uint64_t k_neg, uint64_t n_neg,
		      double alpha_each, double delta)
{
	double tlb = audit_cp_lower(k_pos, n_pos, alpha_each);
	double fub = audit_cp_upper(k_neg, n_neg, alpha_each);

	if (!(tlb > delta))
		return -INFINITY;
	return log((tlb - delta) / fub);
}

double
audit_binom_cdf(uint64_t k, uint64_t n, double p)
{
	if (k >= n)
		return 1.0;
	return audit_incbeta((double)(n - k), (double)(k + 1), 1.0 - p);
}

/*
 * The miss probability, summed directly (not as 1 minus a power close to
 * 1): over the negative count k_B, P(k_B) P(K_A < kmin(k_B)), kmin the
 * smallest positive count whose lower bound beats delta + e^eps
 * FPR_ub(k_B); kmin grows with k_B, so one pointer walks up once.  Negative
 * counts more than 10 standard deviations out, on either side, count as
 * misses.
 */
double
audit_miss(uint64_t n_pos, double tpr, uint64_t n_neg, double fpr, double alpha_each, double delta,
	   double eps_claim)
{
	double sd = sqrt((double)n_neg * fpr * (1.0 - fpr)), mean = (double)n_neg * fpr;
	double lo_f = floor(mean - 10.0 * sd - 1.0), hi_f = ceil(mean + 10.0 * sd + 1.0);
	uint64_t lo = lo_f < 0.0 ? 0 : (uint64_t)lo_f;
	uint64_t hi = hi_f > (double)n_neg ? n_neg : (uint64_t)hi_f;
	uint64_t kmin = 0, kb, a, b;
	double miss = lo > 0 ? audit_binom_cdf(lo - 1, n_neg, fpr) : 0.0;
	double growth = exp(eps_claim);

	for (kb = lo; kb <= hi; kb++) {
		double need = delta + growth * audit_cp_upper(kb, n_neg, alpha_each);

		if (need >= 1.0)
			break; /* larger counts need even more: all misses */
		if (kb == lo) {
			/* Binary search for the smallest k with cp_lower(k) >
			 * need (n_pos + 1 if none). */
			a = 0;
			b = n_pos + 1;
			while (a < b) {
				uint64_t m = a + (b - a) / 2;

				if (m <= n_pos && audit_cp_lower(m, n_pos, alpha_each) > need)
					b = m;
				else
					a = m + 1;
			}
			kmin = a;
		} else {
			while (kmin <= n_pos && !(audit_cp_lower(kmin, n_pos, alpha_each) > need))
				kmin++;
		}
		if (kmin > n_pos)
			break;
		if (kmin > 0)
			miss += audit_binom_pmf(kb, n_neg, fpr) *
				audit_binom_cdf(kmin - 1, n_pos, tpr);
	}
	/* kb is the first negative count not summed: all of them and beyond
	 * are misses. */
	if (kb <= n_neg)
		miss += audit_binom_sf(kb, n_neg, fpr);
	return fmin(1.0, miss);
}

double
audit_power(uint64_t n_pos, double tpr, uint64_t n_neg, double fpr, double alpha_each, double delta,
	    double eps_claim)
{
	return 1.0 - audit_miss(n_pos, tpr, n_neg, fpr, alpha_each, delta, eps_claim);
}

static int
cmp_double(const void *x, const void *y)
{
	double u = *(const double *)x, v = *(const double *)y;

	return (u > v) - (u < v);
}

/* Index of the first element >= t in sorted v[n]: the count below t. */
static size_t
count_below(const double *v, size_t n, double t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (v[m] < t)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

struct test_counts {
	uint64_t k_pos, n_pos, k_neg, n_neg;
};

static struct test_counts
counts(enum audit_direction dir, double t, const double *a, size_t na, const double *b, size_t nb)
{
	struct test_counts c;
	size_t a_below = count_below(a, na, t), b_below = count_below(b, nb, t);

	if (dir == AUDIT_UP) {
		c.k_pos = na - a_below;
		c.n_pos = na;
		c.k_neg = nb - b_below;
		c.n_neg = nb;
	} else {
		c.k_pos = b_below;
		c.n_pos = nb;
		c.k_neg = a_below;
		c.n_neg = na;
	}
	return c;
}

/* Evaluate one test and keep it in *best if it gives a larger bound. */
static void
consider(enum audit_direction dir, double t, const double *a, size_t na, const double *b, size_t nb,
	 double alpha_each, double delta, struct audit_result *best)
{
	struct test_counts c = counts(dir, t, a, na, b, nb);
	double eps = audit_eps_from_counts(c.k_pos, c.n_pos, c.k_neg, c.n_neg, alpha_each, delta);

	if (eps > best->eps_lb || best->n_pos == 0) {
		best->eps_lb = eps;
		best->direction = dir;
		best->threshold = t;
		best->k_pos = c.k_pos;
		best->n_pos = c.n_pos;
		best->k_neg = c.k_neg;
		best->n_neg = c.n_neg;
	}
}

/* The calibration half's choice for one direction: the candidate with the
 * largest epsilon_lb there. */
static double
calibrate(enum audit_direction dir, const double *pool, size_t m, size_t candidates,
	  const double *a, size_t na, const double *b, size_t nb, double alpha_each, double delta)
{
	struct audit_result best;

	memset(&best, 0, sizeof(best));
	best.eps_lb = -INFINITY;
	for (size_t i = 0; i < candidates; i++) {
		size_t r = (size_t)(((double)i + 0.5) / (double)candidates * (double)m);

		consider(dir, pool[r < m ? r : m - 1], a, na, b, nb, alpha_each, delta, &best);
	}
	return best.threshold;
}

int
audit_eps_lb(const struct audit_config *c, double *a, size_t na, double *b, size_t nb,
	     struct audit_result *ret)
{
	struct audit_result r;

	memset(&r, 0, sizeof(r));
	r.eps_lb = -INFINITY;
	if (!(c->alpha > 0.0 && c->alpha < 1.0) || !(c->delta >= 0.0 && c->delta < 1.0) || na < 2 ||
	    nb < 2)
		return -1;

	if (c->method == AUDIT_GRID) {
		if (c->k < 2 || !(c->lo < c->hi))
			return -1;
		r.n_bounds = 4 * c->k;
		r.alpha_each = c->alpha / (double)r.n_bounds;
		qsort(a, na, sizeof(*a), cmp_double);
		qsort(b, nb, sizeof(*b), cmp_double);
		for (size_t i = 0; i < c->k; i++) {
			double t = c->lo + (c->hi - c->lo) * (double)i / (double)(c->k - 1);

			consider(AUDIT_UP, t, a, na, b, nb, r.alpha_each, c->delta, &r);
			consider(AUDIT_DOWN, t, a, na, b, nb, r.alpha_each, c->delta, &r);
		}
	} else {
		/* Halves in the sampling order (the draws are i.i.d.). */
		size_t ha = na / 2, hb = nb / 2, m = ha + hb;
		double *pool, t_up, t_down;

		if (c->candidates < 1)
			return -1;
		r.n_bounds = 4;
		r.alpha_each = c->alpha / (double)r.n_bounds;
		qsort(a, ha, sizeof(*a), cmp_double);
		qsort(b, hb, sizeof(*b), cmp_double);
		qsort(a + ha, na - ha, sizeof(*a), cmp_double);
		qsort(b + hb, nb - hb, sizeof(*b), cmp_double);
		pool = malloc(m * sizeof(*pool));
		if (pool == NULL)
			return -1;
		memcpy(pool, a, ha * sizeof(*a));
		memcpy(pool + ha, b, hb * sizeof(*b));
		qsort(pool, m, sizeof(*pool), cmp_double);
		t_up = calibrate(AUDIT_UP, pool, m, c->candidates, a, ha, b, hb, r.alpha_each,
				 c->delta);
		t_down = calibrate(AUDIT_DOWN, pool, m, c->candidates, a, ha, b, hb, r.alpha_each,
				   c->delta);
		free(pool);
		consider(AUDIT_UP, t_up, a + ha, na - ha, b + hb, nb - hb, r.alpha_each, c->delta,
			 &r);
		consider(AUDIT_DOWN, t_down, a + ha, na - ha, b + hb, nb - hb, r.alpha_each,
			 c->delta, &r);
	}
	r.tpr_lb = audit_cp_lower(r.k_pos, r.n_pos, r.alpha_each);
	r.fpr_ub = audit_cp_upper(r.k_neg, r.n_neg, r.alpha_each);
	r.false_failure = r.alpha_each * (double)r.n_bounds;
	*ret = r;
	return 0;
}

/* Rank of the i-th calibration candidate in a pool of m (as calibrate()). */
static size_t
candidate_rank(size_t i, size_t candidates, size_t m)
{
	size_t r = (size_t)(((double)i + 0.5) / (double)candidates * (double)m);

	return r < m ? r : m - 1;
}

/* P(K < k) for K ~ Bin(n, p); 0 when k = 0. */
static double
binom_below(uint64_t k, uint64_t n, double p)
{
	p = fmin(1.0, fmax(0.0, p));
	if (k == 0)
		return 0.0;
	if (p <= 0.0)
		return 1.0;
	return audit_binom_cdf(k - 1, n, p);
}

/* P(K >= k) for K ~ Bin(n, p). */
static double
binom_from(uint64_t k, uint64_t n, double p)
{
	p = fmin(1.0, fmax(0.0, p));
	if (k > n)
		return 0.0;
	if (p <= 0.0)
		return k == 0 ? 1.0 : 0.0;
	return audit_binom_sf(k, n, p);
}

/* audit_cp_lower() or audit_cp_upper() at (k, n, a) for one n and a, each
 * computed once (NAN: not yet; v NULL: no caching). */
struct cp_cache {
	uint64_t n;
	double a;
	double *v; /* n + 2 entries */
	bool upper;
};

static double
cp_cached(struct cp_cache *c, uint64_t k)
{
	double x;

	if (c->v != NULL && !isnan(c->v[k]))
		return c->v[k];
	x = c->upper ? audit_cp_upper(k, c->n, c->a) : audit_cp_lower(k, c->n, c->a);
	if (c->v != NULL)
		c->v[k] = x;
	return x;
}

/*
 * The smallest count k with audit_cp_lower(k, n, a) > need, n + 1 if none.
 * Bisection on P(Bin(n, need) >= k) < a, the definition of the Clopper-
 * Pearson bound (one incomplete beta per step instead of a quantile),
 * which agrees with audit_cp_lower() up to one count (the quantile is
 * solved to 1e-12, far finer than one count); the answer is then moved
 * until audit_cp_lower() itself, which the audit uses, agrees.
 */
static uint64_t
kmin_above(struct cp_cache *pos, double need)
{
	uint64_t n = pos->n, lo = 1, hi = n + 1;

	if (!(need < 1.0))
		return n + 1;
	while (lo < hi) {
		uint64_t k = lo + (hi - lo) / 2;

		if (audit_binom_sf(k, n, fmax(need, 0.0)) < pos->a)
			hi = k;
		else
			lo = k + 1;
	}
	while (lo > 1 && cp_cached(pos, lo - 1) > need)
		lo--;
	while (lo <= n && !(cp_cached(pos, lo) > need))
		lo++;
	return lo;
}

/* One kind of bound: eps(K_A, K_B) against x, with K_A on pos's sample
 * size and K_B on neg's, and k_min for each negative count computed once
 * (kmin[k] = 0: not yet). */
struct bound_kind {
	struct cp_cache *pos, *neg;
	double delta, x;
	uint64_t *kmin; /* neg->n + 1 entries */
};

static uint64_t
kmin_for(struct bound_kind *b, uint64_t k)
{
	if (b->kmin[k] == 0)
		b->kmin[k] = kmin_above(b->pos, b->delta + exp(b->x) * cp_cached(b->neg, k));
	return b->kmin[k];
}

/*
 * Upper bounds on P[eps(K_A, K_B) <= x] (want_miss) or on P[eps(K_A, K_B) >
 * x], K_A ~ Bin(pos->n, tpr), K_B ~ Bin(neg->n, fpr): audit_miss()'s sum
 * over K_B, the counts taken in blocks, each at its worst end (eps falls as
 * K_B grows: the miss at the block's top, the power at its bottom): [0,
 * lo), blocks of a power of two near a quarter standard deviation (aligned,
 * so that neighbouring laws share their ends and the caches work) up to
 * hi, and (hi, n], with lo and hi 7 standard deviations out.
 */
static double
block_bound(struct bound_kind *bk, double tpr, double fpr, bool want_miss)
{
	uint64_t n_neg = bk->neg->n, n_pos = bk->pos->n, w = 1, lo, hi, k1 = 0;
	double mean = (double)n_neg * fpr, sd = sqrt(mean * (1.0 - fpr)), sum = 0.0;
	double lo_f = mean - 7.0 * sd, hi_f = ceil(mean + 7.0 * sd);

	while ((double)(2 * w) <= 0.25 * sd)
		w *= 2;
	lo = lo_f < 0.0 ? 0 : (uint64_t)(lo_f / (double)w) * w;
	hi = hi_f > (double)n_neg ? n_neg : (uint64_t)hi_f;
	while (k1 <= n_neg) {
		uint64_t k2 = k1 < lo           ? lo - 1
			      : k1 > hi         ? n_neg
			      : k1 + w - 1 < hi ? k1 + w - 1
						: hi;
		double pb = binom_from(k1, n_neg, fpr) - binom_from(k2 + 1, n_neg, fpr);
		uint64_t km;

		if (pb > 0.0) {
			km = kmin_for(bk, want_miss ? k2 : k1);
			sum += pb * (want_miss ? binom_below(km, n_pos, tpr)
					       : binom_from(km, n_pos, tpr));
		}
		k1 = k2 + 1;
	}
	return fmin(1.0, sum);
}

/* What audit_split_miss() needs about one audit. */
struct split_ctx {
	audit_rates_fn rates;
	void *ctx;
	struct cp_cache cal_a, eval_a; /* world A: lower bounds, both halves */
	struct cp_cache cal, eval;     /* world B: upper bounds */
	struct bound_kind at_cut;      /* calibration half against cut */
	struct bound_kind at_claim;    /* evaluation half against the claim */
	double step;
	size_t pieces;
};

/* A piece [u, v] of thresholds, (iii) and (iv) for it: best is a bound on
 * P[choice in it and the evaluation misses], worst the largest m over its
 * finest parts. */
struct split_piece {
	double best, worst;
};

/*
 * The piece [u, v] (rates at its ends given): b = P[eps(K_A(u), K_B(v)) >
 * cut] on the calibration half bounds P[choice in it]; if b is negligible
 * (below 1e-10: the bounds' own floor is about 1e-11), or its coarse m (at
 * eps(K_A(v), K_B(u))) or b m already below 1e-10, or it is no wider
 * than the step, it is a leaf with best = b m.  Otherwise it is halved and
 * best = min(b max(worst of the halves), sum of the halves' best): the
 * choice is in one half, and any threshold in the piece misses with at most
 * the largest of the halves' m.
 */
static struct split_piece
piece_eval(struct split_ctx *s, double u, double v, double tpr_u, double fpr_u, double tpr_v,
	   double fpr_v)
{
	struct split_piece r, left, right;
	double b = block_bound(&s->at_cut, tpr_u, fpr_v, false), m, w, tw, fw;

	s->pieces++;
	if (b < 1e-10) {
		r.best = b;
		r.worst = 1.0;
		return r;
	}
	m = block_bound(&s->at_claim, tpr_v, fpr_u, true);
	if (b * m < 1e-10 || m < 1e-10 || !isfinite(u) || !isfinite(v) || !(v - u > s->step)) {
		r.best = b * m;
		r.worst = m;
		return r;
	}
	w = 0.5 * (u + v);
	s->rates(s->ctx, w, &tw, &fw);
	left = piece_eval(s, u, w, tpr_u, fpr_u, tw, fw);
	right = piece_eval(s, w, v, tw, fw, tpr_v, fpr_v);
	r.worst = fmax(left.worst, right.worst);
	r.best = fmin(b * r.worst, left.best + right.best);
	return r;
}

/* (ii) of the pick part [u, v]. */
static double
pick_term(struct split_ctx *s, double u, double v)
{
	double tu, fu, tv, fv;

	s->rates(s->ctx, u, &tu, &fu);
	s->rates(s->ctx, v, &tv, &fv);
	return block_bound(&s->at_cut, tv, fu, true);
}

static int
cmp_worst(const void *x, const void *y)
{
	double u = ((const struct split_piece *)x)->worst,
	       v = ((const struct split_piece *)y)->worst;

	return (u > v) - (u < v);
}

/* The pick: grown from [t_best - step/2, t_best + step/2] one part at a
 * time towards the smaller (ii) term; the run with the least (i) + (ii) is
 * kept in r. */
static void
split_pick(struct split_ctx *s, const struct audit_config *c, size_t m, double t_best,
	   struct audit_split_power *r)
{
	double lo = t_best - 0.5 * s->step, hi = t_best + 0.5 * s->step;
	double sum = pick_term(s, lo, hi), below = pick_term(s, lo - s->step, lo);
	double above = pick_term(s, hi, hi + s->step), fail = INFINITY;
	size_t gap = 0, first = candidate_rank(0, c->candidates, m);
	size_t last = candidate_rank(c->candidates - 1, c->candidates, m);

	for (size_t i = 0; i + 1 < c->candidates; i++) {
		size_t d = candidate_rank(i + 1, c->candidates, m) -
			   candidate_rank(i, c->candidates, m);

		gap = d > gap ? d : gap;
	}
	for (int steps = 0; steps < 4096; steps++) {
		double tl, fl, th, fh, cand;

		s->rates(s->ctx, lo, &tl, &fl);
		s->rates(s->ctx, hi, &th, &fh);
		cand = binom_below(gap, s->cal_a.n, tl - th) +
		       binom_below(first + 1, s->cal_a.n, 1.0 - th) +
		       binom_below(m - last, s->cal_a.n, tl);
		if (cand + sum < fail) {
			fail = cand + sum;
			r->p_candidate = cand;
			r->p_pick = sum;
			r->pick_lo = lo;
			r->pick_hi = hi;
		}
		if (cand < 1e-15 || sum >= 1.0)
			break;
		if (below <= above) {
			sum += below;
			lo -= s->step;
			below = pick_term(s, lo - s->step, lo);
		} else {
			sum += above;
			hi += s->step;
			above = pick_term(s, hi, hi + s->step);
		}
	}
}

int
audit_split_miss(const struct audit_config *c, size_t na, size_t nb, audit_rates_fn rates,
		 void *ctx, const struct audit_split_plan *p, double eps_claim,
		 struct audit_split_power *ret)
{
	struct split_ctx s = { .rates = rates, .ctx = ctx };
	struct cp_cache *caches[4] = { &s.cal_a, &s.eval_a, &s.cal, &s.eval };
	size_t np = p->pieces;
	double t_best = p->lo, e_best = -INFINITY, u, tu, fu, rest;
	struct split_piece *top = NULL;
	struct audit_split_power r;
	bool ok;

	memset(&r, 0, sizeof(r));
	if (c->method != AUDIT_SPLIT || c->candidates < 1 || na < 2 || nb < 2 || np < 1 ||
	    !(p->lo < p->hi) || !(p->step > 0.0))
		return -1;
	s.cal_a = (struct cp_cache){ .n = na / 2, .a = c->alpha / 4.0 };
	s.eval_a = (struct cp_cache){ .n = na - na / 2, .a = c->alpha / 4.0 };
	s.cal = (struct cp_cache){ .n = nb / 2, .a = c->alpha / 4.0, .upper = true };
	s.eval = (struct cp_cache){ .n = nb - nb / 2, .a = c->alpha / 4.0, .upper = true };
	s.at_cut = (struct bound_kind){ &s.cal_a, &s.cal, c->delta, p->cut,
					calloc(s.cal.n + 1, sizeof(uint64_t)) };
	s.at_claim = (struct bound_kind){ &s.eval_a, &s.eval, c->delta, eps_claim,
					  calloc(s.eval.n + 1, sizeof(uint64_t)) };
	top = malloc((np + 2) * sizeof(*top));
	ok = top != NULL && s.at_cut.kmin != NULL && s.at_claim.kmin != NULL;
	for (int i = 0; i < 4; i++) {
		caches[i]->v = malloc((caches[i]->n + 2) * sizeof(double));
		ok = ok && caches[i]->v != NULL;
		for (uint64_t k = 0; caches[i]->v != NULL && k <= caches[i]->n + 1; k++)
			caches[i]->v[k] = NAN;
	}
	if (!ok)
		goto out;
	s.step = p->step;

	/* (iii) and (iv) on (-inf, lo], the parts of [lo, hi], [hi, inf). */
	u = -INFINITY;
	rates(ctx, u, &tu, &fu);
	for (size_t k = 0; k <= np + 1; k++) {
		double v =
			k == np + 1 ? INFINITY : p->lo + (p->hi - p->lo) * (double)k / (double)np;
		double tv, fv;

		rates(ctx, v, &tv, &fv);
		top[k] = piece_eval(&s, u, v, tu, fu, tv, fv);
		u = v;
		tu = tv;
		fu = fv;
	}
	/* G = the parts of smallest worst m: (iii) = the largest worst in G,
	 * (iv) = the sum of best outside; the G that makes their sum least. */
	qsort(top, np + 2, sizeof(*top), cmp_worst);
	rest = 0.0;
	for (size_t k = 0; k < np + 2; k++)
		rest += top[k].best;
	r.p_rest = rest;
	for (size_t g = 1; g <= np + 2; g++) {
		rest = 0.0;
		for (size_t k = g; k < np + 2; k++)
			rest += top[k].best;
		if (top[g - 1].worst + rest < r.p_good + r.p_rest) {
			r.p_good = top[g - 1].worst;
			r.p_rest = rest;
			r.n_good = g;
		}
	}
	r.n_pieces = s.pieces;

	/* The pick starts at the threshold whose calibration bound at the
	 * expected counts is largest, on a grid 8 times finer than the parts. */
	for (size_t k = 0; k <= 8 * np; k++) {
		double t = p->lo + (p->hi - p->lo) * (double)k / (double)(8 * np), tt, ft, e;

		rates(ctx, t, &tt, &ft);
		e = audit_eps_from_counts((uint64_t)round(tt * (double)s.cal_a.n), s.cal_a.n,
					  (uint64_t)round(ft * (double)s.cal.n), s.cal.n,
					  c->alpha / 4.0, c->delta);
		if (e > e_best) {
			e_best = e;
			t_best = t;
		}
	}
	split_pick(&s, c, nb / 2 + na / 2, t_best, &r);
	r.miss = fmin(1.0, r.p_candidate + r.p_pick + r.p_good + r.p_rest);
	*ret = r;
out:
	for (int i = 0; i < 4; i++)
		free(caches[i]->v);
	free(s.at_cut.kmin);
	free(s.at_claim.kmin);
	free(top);
	return ok ? 0 : -1;
}

void
audit_draw(audit_sample_fn fn, void *ctx, int world, uint64_t seed, double *out, size_t n)
{
	struct rng r;

	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < n; i++)
		out[i] = fn(ctx, world, &r);
}

void
audit_print(FILE *f, const struct audit_config *c, const struct audit_result *r, double eps_claim)
{
	fprintf(f,
		"audit %s: eps_lb = %.4f vs claimed eps = %.4f (delta %.3g); %s, %s s %s %.6g: "
		"positive %llu/%llu (TPR_lb %.4g), negative %llu/%llu (FPR_ub %.4g); "
		"false-failure probability <= %.2g (%zu Clopper-Pearson bounds at %.3g each)\n",
		c->name, r->eps_lb, eps_claim, c->delta,
		c->method == AUDIT_GRID ? "Bonferroni grid" : "calibration split",
		r->direction == AUDIT_UP ? "up" : "down", r->direction == AUDIT_UP ? ">=" : "<",
		r->threshold, (unsigned long long)r->k_pos, (unsigned long long)r->n_pos, r->tpr_lb,
		(unsigned long long)r->k_neg, (unsigned long long)r->n_neg, r->fpr_ub,
		r->false_failure, r->n_bounds, r->alpha_each);
	fflush(f);
}

double
audit_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double
audit_normal_sf(double x)
{
	return 0.5 * erfc(x / sqrt(2.0));
}

double
audit_gauss_claim(double epsilon, double delta, double *ret_z)
{
	struct dp_event_tree ev;
	struct accountant_report rep;

	if (ag_calibrate(epsilon, delta, ret_z, NULL) != ERR_OK)
		return NAN;
	dp_event_gaussian(&ev, DP_REPLACE_ONE, *ret_z);
	if (accountant_epsilon(&ev, ACCOUNTING_BASIC, delta, NULL, true, &rep, NULL) != ERR_OK)
		return NAN;
	return rep.epsilon;
}

void
audit_mixture_rates(void *ctx, double t, double *tpr, double *fpr)
{
	const struct audit_mixture *l = ctx;
	double common = (1.0 - l->q) * audit_normal_sf(t / l->sd);

	*tpr = common + l->q * audit_normal_sf((t - l->m) / l->sd);
	*fpr = common + l->q * audit_normal_sf((t + l->m) / l->sd);
}

double
audit_mixture_delta(const struct audit_mixture *l, double eps)
{
	double best = 0.0;

	for (int i = -8000; i <= 8000; i++) {
		double tpr, fpr;

		audit_mixture_rates((void *)l, 0.001 * i * l->sd, &tpr, &fpr);
		best = fmax(best, tpr - exp(eps) * fpr);
	}
	return best;
}

double
audit_mixture_epsilon(const struct audit_mixture *l, double delta)
{
	double lo = 0.0, hi = 20.0;

	if (audit_mixture_delta(l, 0.0) <= delta)
		return 0.0;
	for (int it = 0; it < 40; it++) {
		double mid = 0.5 * (lo + hi);

		if (audit_mixture_delta(l, mid) > delta)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

double
audit_mixture_best_test(const struct audit_mixture *l, double delta, double *ret_t)
{
	double best = -INFINITY;

	for (int i = -4000; i <= 6000; i++) {
		double t = 0.001 * i * l->sd, tpr, fpr;

		audit_mixture_rates((void *)l, t, &tpr, &fpr);
		if (tpr > delta && fpr > 0.0 && log((tpr - delta) / fpr) > best) {
			best = log((tpr - delta) / fpr);
			*ret_t = t;
		}
	}
	return best;
}

static double
logit(double p)
{
	return log(p) - log1p(-p);
}

double
audit_range_lb(uint64_t k_a, uint64_t k_b, uint64_t n, double alpha)
{
	double al = alpha / 8.0;
	double up = logit(audit_cp_lower(k_a, n, al)) - logit(audit_cp_upper(k_b, n, al));
	double down = logit(audit_cp_lower(k_b, n, al)) - logit(audit_cp_upper(k_a, n, al));

	return fmax(up, down);
}

uint64_t
audit_binom_quantile(uint64_t n, double p, double tail, bool lower)
{
	if (lower) {
		uint64_t q = 0;

		while (q + 1 <= n && audit_binom_cdf(q, n, p) <= tail)
			q++;
		return q;
	} else {
		uint64_t q = n;

		while (q > 0 && audit_binom_sf(q, n, p) <= tail)
			q--;
		return q;
	}
}

double
audit_gauss_grid_run(const struct audit_gauss_grid *c, audit_sample_fn fn, void *ctx, uint64_t seed,
		     double noise_scale, double eps_claim)
{
	struct audit_config cfg = { .name = c->name,
				    .delta = c->delta,
				    .alpha = c->alpha,
				    .method = AUDIT_GRID,
				    .lo = -c->u_max * c->sigma,
				    .hi = c->u_max * c->sigma,
				    .k = c->k };
	struct audit_result r;
	double *xa = malloc(c->n * sizeof(double)), *xb = malloc(c->n * sizeof(double));
	double t0 = audit_now();

	if (xa == NULL || xb == NULL) {
		free(xa);
		free(xb);
		return NAN;
	}
	audit_draw(fn, ctx, 0, seed, xa, c->n);
	audit_draw(fn, ctx, 1, seed ^ 0x9e3779b97f4a7c15u, xb, c->n);
	if (audit_eps_lb(&cfg, xa, c->n, xb, c->n, &r) != 0)
		r.eps_lb = NAN;
	else
		audit_print(stdout, &cfg, &r, eps_claim);
	printf("audit %s: N = %llu runs per side, noise scale %.2f, wall time %.2f s\n", c->name,
	       (unsigned long long)c->n, noise_scale, audit_now() - t0);
	free(xa);
	free(xb);
	return r.eps_lb;
}

double
audit_gauss_grid_miss(const struct audit_gauss_grid *c, double shift, double scale,
		      double eps_claim, double *ret_u)
{
	/* audit_miss() costs exact binomial sums: only the three tests with
	 * the largest bound at the expected counts are summed */
	double best = 1.0, best_u = NAN, h = 0.5 * shift / c->sigma;
	double alpha_each = c->alpha / (4.0 * (double)c->k);
	double top_e[3] = { -INFINITY, -INFINITY, -INFINITY }, top_u[3] = { NAN, NAN, NAN };

	for (size_t i = 0; i < c->k; i++) {
		double u = -c->u_max + 2.0 * c->u_max * (double)i / (double)(c->k - 1);
		double tpr = audit_normal_sf((u - h) / scale),
		       fpr = audit_normal_sf((u + h) / scale);
		double ee = audit_eps_from_counts((uint64_t)floor((double)c->n * tpr), c->n,
						  (uint64_t)ceil((double)c->n * fpr), c->n,
						  alpha_each, c->delta);

		for (int j = 0; j < 3; j++) {
			if (ee > top_e[j]) {
				for (int m = 2; m > j; m--) {
					top_e[m] = top_e[m - 1];
					top_u[m] = top_u[m - 1];
				}
				top_e[j] = ee;
				top_u[j] = u;
				break;
			}
		}
	}
	for (int j = 0; j < 3; j++) {
		double u = top_u[j], m;

		if (isnan(u))
			continue;
		m = audit_miss(c->n, audit_normal_sf((u - h) / scale), c->n,
			       audit_normal_sf((u + h) / scale), alpha_each, c->delta, eps_claim);
		if (m < best) {
			best = m;
			best_u = u;
		}
	}
	if (ret_u != NULL)
		*ret_u = best_u;
	return best;
}
