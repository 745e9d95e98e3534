/*
 * test_noise.c - statistical and unit tests of the secure noise module
 * (privacy/noise.c, privacy/bigint.c): every sampler against its exact
 * pmf, the lattice front end, refusals, and the test's own power.
 *
 * Goodness of fit is Pearson's chi-square: samples are counted in bins
 * (one per integer for small scales, ranges for large ones, tails merged
 * until every bin expects >= 10 samples), and the test fails if the
 * p-value Q(df / 2, X^2 / 2) is below 1e-6.  Q is the regularized upper
 * incomplete gamma function, implemented below (series for x < a + 1,
 * Legendre's continued fraction otherwise; checked against closed forms).
 * For a correct sampler the false-failure probability of each chi-square
 * check is therefore 1e-6 (the chi-square approximation is accurate at
 * >= 10 expected per bin); with the 38 checks in this file, below 4e-5
 * for a run.  Mean and variance checks use 6 standard errors (two-sided
 * normal tail 2e-9 each, 16 of them).  Seeds are fixed
 * (rng_splitmix_init), so a run is reproducible: a failure means either
 * a broken sampler or a seed in that 3e-5, and a rerun with another seed
 * tells which.
 *
 * Power: each family also runs a deliberately wrong sampler (noise scaled
 * by 0.5, exponential-mechanism temperature halved) through the same
 * check and asserts that it FAILS, so a passing check is evidence.
 *
 * Sources for the pmfs: CKS20 (arXiv:2004.00010), Definition 1 and
 * section 2.1; the discrete Laplace pmf (1 - q) / (1 + q) q^|y|, q =
 * exp(-1 / b) (Inusah & Kozubowski 2006).
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "privacy/bigint.h"
#include "privacy/noise.h"
#include "rng.h"

__extension__ typedef unsigned __int128 u128;

#define P_FAIL      1e-6 /* chi-square threshold on the p-value */
#define MIN_EXPECT  10.0 /* merge bins until each expects this many */
#define MAX_BINS    4096
#define SIGMAS_MEAN 6.0 /* standard errors allowed for mean and variance */

/* --- Regularized incomplete gamma ----------------------------------------- */

/* P(a, x) = x^a e^-x sum_n x^n / Gamma(a + n + 1), for x < a + 1. */
static double
gamma_p_series(double a, double x)
{
	double term = 1.0 / a, sum = term;

	for (int n = 1; n < 100000; n++) {
		term *= x / (a + n);
		sum += term;
		if (term < sum * 1e-17)
			break;
	}
	return sum * exp(a * log(x) - x - lgamma(a));
}

/* Q(a, x) by Legendre's continued fraction (modified Lentz), x >= a + 1. */
static double
gamma_q_cf(double a, double x)
{
	double b = x + 1.0 - a, c = 1.0 / DBL_MIN, d = 1.0 / b, h = d;

	for (int i = 1; i < 100000; i++) {
		double an = -i * (i - a), del;

		b += 2.0;
		d = an * d + b;
		if (fabs(d) < DBL_MIN)
			d = DBL_MIN;
		c = b + an / c;
		if (fabs(c) < DBL_MIN)
			c = DBL_MIN;
		d = 1.0 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1.0) < 1e-16)
			break;
	}
	return exp(a * log(x) - x - lgamma(a)) * h;
}

/* Q(a, x) = Gamma(a, x) / Gamma(a): the upper tail of Gamma(a, 1). */
static double
gamma_q(double a, double x)
{
	if (x <= 0.0)
		return 1.0;
	return x < a + 1.0 ? 1.0 - gamma_p_series(a, x) : gamma_q_cf(a, x);
}

/* P(chi^2_df >= stat). */
static double
chi2_sf(double stat, int df)
{
	return gamma_q(0.5 * df, 0.5 * stat);
}

START_TEST(test_gamma_q)
{
	/* closed forms: Q(1, x) = e^-x; Q(1/2, x) = erfc(sqrt x);
	 * Q(3, x) = e^-x (1 + x + x^2 / 2) */
	static const double xs[] = { 0.01, 0.3, 1.0, 2.5, 7.0, 20.0, 60.0 };

	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		double x = xs[i];

		ck_assert_double_eq_tol(gamma_q(1.0, x) / exp(-x), 1.0, 1e-12);
		ck_assert_double_eq_tol(gamma_q(0.5, x) / erfc(sqrt(x)), 1.0, 1e-10);
		ck_assert_double_eq_tol(gamma_q(3.0, x) / (exp(-x) * (1 + x + x * x / 2)), 1.0,
					1e-10);
	}
	/* the 1 - 1e-6 quantiles of chi^2_1 and chi^2_10: 23.9281269769 and
	 * 46.8630468468 (mpmath 1.3, findroot on gammainc, 30 digits) */
	ck_assert_double_eq_tol(chi2_sf(23.9281269769, 1) / 1e-6, 1.0, 1e-8);
	ck_assert_double_eq_tol(chi2_sf(46.8630468468, 10) / 1e-6, 1.0, 1e-8);
}
END_TEST

/* --- Binned chi-square ----------------------------------------------------- */

/* Bins in order; prob[] sums to 1 (within rounding).  Adjacent bins are
 * merged, left to right, until each expects MIN_EXPECT; a short last group
 * joins its left neighbour.  Returns the p-value and prints the line. */
static double
chi2_binned(const char *name, const double *prob, const uint64_t *count, size_t nb, uint64_t n)
{
	double stat = 0.0, pe = 0.0, total = 0.0, p;
	double gexp[MAX_BINS], gobs[MAX_BINS];
	size_t ng = 0;
	uint64_t co = 0;

	ck_assert_uint_le(nb, MAX_BINS);
	for (size_t i = 0; i < nb; i++) {
		pe += prob[i];
		co += count[i];
		total += prob[i];
		if (pe * (double)n >= MIN_EXPECT) {
			gexp[ng] = pe * (double)n;
			gobs[ng] = (double)co;
			ng++;
			pe = 0.0;
			co = 0;
		}
	}
	if ((pe > 0.0 || co > 0) && ng > 0) {
		gexp[ng - 1] += pe * (double)n;
		gobs[ng - 1] += (double)co;
	}
	ck_assert_msg(fabs(total - 1.0) < 1e-9, "%s: pmf sums to %.12f", name, total);
	ck_assert_uint_ge(ng, 2);
	for (size_t g = 0; g < ng; g++)
		stat += (gobs[g] - gexp[g]) * (gobs[g] - gexp[g]) / gexp[g];
	p = chi2_sf(stat, (int)ng - 1);
	printf("%-46s n=%-8lu bins=%-4zu X2=%-10.2f p=%.3g\n", name, (unsigned long)n, ng, stat, p);
	fflush(stdout);
	return p;
}

/* Integer samples in [lo, hi] one bin each, plus the two tails. */
struct hist {
	int64_t lo, hi, width; /* bins [lo + i w, lo + (i + 1) w - 1] */
	size_t nb;             /* bins between, plus 2 tails: count[0], count[nb + 1] */
	uint64_t count[MAX_BINS];
	double prob[MAX_BINS];
};

static void
hist_init(struct hist *h, int64_t lo, int64_t hi, int64_t width)
{
	memset(h, 0, sizeof(*h));
	h->lo = lo;
	h->width = width;
	h->nb = (size_t)((hi - lo + 1 + width - 1) / width);
	h->hi = lo + (int64_t)h->nb * width - 1;
	ck_assert_uint_le(h->nb + 2, MAX_BINS);
}

static void
hist_add(struct hist *h, int64_t y)
{
	if (y < h->lo)
		h->count[0]++;
	else if (y > h->hi)
		h->count[h->nb + 1]++;
	else
		h->count[1 + (size_t)((y - h->lo) / h->width)]++;
}

/* prob[] from a cdf: F(x) = P(Y <= x) and S(x) = P(Y >= x) (the upper
 * tail given separately keeps its relative precision). */
static void
hist_prob(struct hist *h, double (*cdf)(const void *, int64_t), double (*sf)(const void *, int64_t),
	  const void *arg)
{
	h->prob[0] = cdf(arg, h->lo - 1);
	for (size_t i = 0; i < h->nb; i++) {
		int64_t a = h->lo + (int64_t)i * h->width, b = a + h->width - 1;

		/* mass of [a, b], from whichever side keeps precision */
		if (a > 0)
			h->prob[1 + i] = sf(arg, a) - sf(arg, b + 1);
		else
			h->prob[1 + i] = cdf(arg, b) - cdf(arg, a - 1);
	}
	h->prob[h->nb + 1] = sf(arg, h->hi + 1);
}

static double
hist_chi2(const char *name, struct hist *h, uint64_t n)
{
	return chi2_binned(name, h->prob, h->count, h->nb + 2, n);
}

/* --- Exact pmfs ------------------------------------------------------------ */

struct dg_pmf {
	double sigma2;
	double norm;      /* sum over all y of exp(-y^2 / (2 sigma^2)) */
	int64_t exact_to; /* |y| up to this summed term by term */
};

/* The discrete Gaussian's cdf.  For sigma <= 100 by summing the terms
 * (|y| <= 40 sigma + 10: the rest is below e^-800).  For larger sigma by
 * the midpoint rule: sum_{y >= x} f(y) = int_{x - 1/2}^inf f + O(f' / 24),
 * a relative error below 1 / (24 sigma^2) <= 4e-6 of a bin's mass, far
 * below what 10^6 samples resolve; and the normalizer is sigma sqrt(2 pi)
 * to within exp(-2 pi^2 sigma^2) (Poisson summation). */
static void
dg_pmf_init(struct dg_pmf *d, double sigma2)
{
	double s = sqrt(sigma2);

	d->sigma2 = sigma2;
	d->exact_to = s <= 100.0 ? (int64_t)(40.0 * s) + 10 : -1;
	if (d->exact_to >= 0) {
		long double z = 1.0L;

		for (int64_t y = 1; y <= d->exact_to; y++)
			z += 2.0L * expl(-(long double)y * y / (2.0L * sigma2));
		d->norm = (double)z;
	} else {
		d->norm = s * 2.5066282746310002; /* sqrt(2 pi) */
	}
}

static double
dg_p(const struct dg_pmf *d, int64_t y)
{
	return exp(-(double)y * (double)y / (2.0 * d->sigma2)) / d->norm;
}

/* P(Y >= x) */
static double
dg_sf(const void *arg, int64_t x)
{
	const struct dg_pmf *d = arg;

	if (d->exact_to < 0)
		return 0.5 * erfc(((double)x - 0.5) / sqrt(2.0 * d->sigma2));
	if (x <= -d->exact_to)
		return 1.0;
	if (x > 0) {
		long double s = 0.0L;

		for (int64_t y = d->exact_to; y >= x; y--)
			s += dg_p(d, y);
		return (double)s;
	}
	return 1.0 - dg_sf(arg, 1 - x) + 0.0; /* symmetric: P(Y >= x) = 1 - P(Y >= 1 - x) */
}

static double
dg_cdf(const void *arg, int64_t x)
{
	return dg_sf(arg, -x); /* P(Y <= x) = P(Y >= -x) */
}

/* Exact variance sum_y y^2 p(y) (CKS20: below sigma^2). */
static double
dg_variance(const struct dg_pmf *d)
{
	long double v = 0.0L;

	for (int64_t y = 1; y <= d->exact_to; y++)
		v += 2.0L * (long double)y * y * dg_p(d, y);
	return (double)v;
}

struct dl_pmf {
	double b; /* scale: P(y) = (1 - q) / (1 + q) q^|y|, q = exp(-1 / b) */
};

/* P(Y >= x) = q^x / (1 + q) for x >= 1. */
static double
dl_sf(const void *arg, int64_t x)
{
	const struct dl_pmf *l = arg;
	double q = exp(-1.0 / l->b);

	if (x >= 1)
		return exp(-(double)x / l->b) / (1.0 + q);
	return 1.0 - exp(-(double)(1 - x) / l->b) / (1.0 + q);
}

static double
dl_cdf(const void *arg, int64_t x)
{
	return dl_sf(arg, -x);
}

/* --- Helpers -------------------------------------------------------------- */

static struct dgauss_params
dg_params_real(double sigma)
{
	struct dgauss_params p;
	struct err e = { 0 };

	ck_assert_msg(noise_dgauss_prepare_real(sigma, &p, &e) == ERR_OK, "%s", e.msg);
	return p;
}

static struct dgauss_params
dg_params(uint64_t num, uint64_t den)
{
	struct dgauss_params p;
	struct err e = { 0 };

	ck_assert_msg(noise_dgauss_prepare(num, den, &p, &e) == ERR_OK, "%s", e.msg);
	return p;
}

static int64_t *
samples(size_t n)
{
	int64_t *y = malloc(n * sizeof(*y));

	ck_assert_ptr_nonnull(y);
	return y;
}

/* Which fill dg_chi2() tests: noise_dgauss_fill() (0) or
 * noise_dgauss_fill_batched() (1). */
static int dg_batched;

/* n samples of p into y from the fill dg_batched selects: 0 scalar, 1
 * batched, >= 2 batched with leading parts of that many bits
 * (noise_dgauss_fill_batched_lead: frequent ties). */
static void
dg_fill(struct rng *r, const struct dgauss_params *p, int64_t *y, size_t n, int batched)
{
	struct noise_i128 *w;
	size_t bad = 0;

	if (!batched) {
		noise_dgauss_fill(r, p, y, n);
		return;
	}
	w = malloc(n * sizeof(*w));
	ck_assert_ptr_nonnull(w);
	if (batched == 1)
		noise_dgauss_fill_batched(r, p, w, n);
	else
#ifdef DPOPT_TESTING
		noise_dgauss_fill_batched_lead(r, p, batched, w, n);
#else
		ck_abort_msg("narrow leading parts need a testing build");
#endif
	for (size_t i = 0; i < n; i++) {
		/* every value tested here is far below 2^63 (one assertion at
		 * the end: each ck_assert writes to Check's message channel) */
		bad += w[i].hi != ((int64_t)w[i].lo < 0 ? -1 : 0);
		y[i] = (int64_t)w[i].lo;
	}
	free(w);
	ck_assert_uint_eq(bad, 0);
}

/* chi-square of n discrete Gaussian samples against N_Z(0, sigma2_pmf)
 * with bins of the given width over +-span sigma. */
static double
dg_chi2(const char *name, const struct dgauss_params *p, double sigma2_pmf, uint64_t seed, size_t n,
	int64_t width, double span)
{
	struct rng r;
	struct dg_pmf d;
	static struct hist h;
	int64_t *y = samples(n), lim = (int64_t)ceil(span * sqrt(sigma2_pmf)) + 1;
	double pv;

	rng_splitmix_init(&r, seed);
	dg_fill(&r, p, y, n, dg_batched);
	ck_assert(rng_ok(&r));
	dg_pmf_init(&d, sigma2_pmf);
	hist_init(&h, -lim, lim, width);
	for (size_t i = 0; i < n; i++)
		hist_add(&h, y[i]);
	hist_prob(&h, dg_cdf, dg_sf, &d);
	pv = hist_chi2(name, &h, n);
	free(y);
	return pv;
}

/* --- Discrete Gaussian ------------------------------------------------------ */

/* Small scales, one bin per integer: sigma = 0.5, 1 (exact rationals),
 * 3.7 (sigma^2 = 1369 / 100 exactly) and 3.7 via the real-sigma prepare. */
START_TEST(test_dgauss_small)
{
	struct dgauss_params p;

	p = dg_params(1, 4);
	ck_assert(dg_chi2("dgauss sigma^2 = 1/4", &p, 0.25, 11, 1000000, 1, 12) >= P_FAIL);
	p = dg_params(1, 1);
	ck_assert(dg_chi2("dgauss sigma^2 = 1", &p, 1.0, 12, 1000000, 1, 12) >= P_FAIL);
	p = dg_params(1369, 100);
	ck_assert_uint_eq(p.t, 4);
	ck_assert(dg_chi2("dgauss sigma^2 = 13.69", &p, 13.69, 13, 1000000, 1, 12) >= P_FAIL);
	p = dg_params_real(3.7);
	ck_assert(dg_chi2("dgauss sigma = 3.7 (real)", &p, p.sigma2, 14, 1000000, 1, 12) >= P_FAIL);
	p = dg_params_real(0.25);
	ck_assert(dg_chi2("dgauss sigma = 1/4", &p, p.sigma2, 15, 1000000, 1, 12) >= P_FAIL);
	/* the smallest supported sigma, 1/16: P(y != 0) = 2 e^-128, so all
	 * zeros (a non-zero here has probability 1e-50) */
	p = dg_params_real(0.0625);
	{
		struct rng r;
		int64_t y[10000];

		int nz = 0;

		rng_splitmix_init(&r, 16);
		noise_dgauss_fill(&r, &p, y, 10000);
		for (int i = 0; i < 10000; i++)
			nz += y[i] != 0;
		ck_assert_int_eq(nz, 0);
	}
}
END_TEST

/* sigma = 1000 and the lattice ratio 10^6: shape in bins of sigma / 8
 * over +-8 sigma, and the fine structure: y mod 16 is uniform to within
 * exp(-2 pi^2 sigma^2 / 256) (Poisson summation), i.e. exactly at double
 * precision. */
START_TEST(test_dgauss_large)
{
	static const double sig[] = { 1000.0, 1e6, 1e9 };
	char name[80];

	for (size_t k = 0; k < sizeof(sig) / sizeof(sig[0]); k++) {
		struct dgauss_params p = dg_params_real(sig[k]);
		size_t n = 1000000;
		int64_t *y = samples(n);
		uint64_t cnt[16] = { 0 };
		double prob[16];
		struct rng r;

		snprintf(name, sizeof(name), "dgauss sigma = %g, bins of sigma/8", sig[k]);
		ck_assert(dg_chi2(name, &p, p.sigma2, 21 + k, n, (int64_t)(sig[k] / 8), 8) >=
			  P_FAIL);
		rng_splitmix_init(&r, 31 + k);
		noise_dgauss_fill(&r, &p, y, n);
		for (size_t i = 0; i < n; i++)
			cnt[((y[i] % 16) + 16) % 16]++;
		for (int i = 0; i < 16; i++)
			prob[i] = 1.0 / 16;
		snprintf(name, sizeof(name), "dgauss sigma = %g, y mod 16", sig[k]);
		ck_assert(chi2_binned(name, prob, cnt, 16, n) >= P_FAIL);
		free(y);
	}
}
END_TEST

/* The 512-bit accept path, forced by y_fast = 0 (the params are public),
 * must give the same law. */
START_TEST(test_dgauss_wide_path)
{
	struct dgauss_params p;

	p = dg_params(1369, 100);
	p.y_fast = 0;
	ck_assert(dg_chi2("dgauss sigma^2 = 13.69, 512-bit path", &p, 13.69, 41, 100000, 1, 12) >=
		  P_FAIL);
	p = dg_params_real(1e6);
	p.y_fast = 0;
	ck_assert(dg_chi2("dgauss sigma = 1e6, 512-bit path", &p, p.sigma2, 42, 100000, 250000,
			  8) >= P_FAIL);
}
END_TEST

/* One sample per call (a fresh pool each time) gives the same law. */
/* noise_dgauss_fill_batched() (noise.c, "Discrete Gaussian in batches")
 * against the exact pmf: sigma = 1.5 one bin per integer; the exact
 * rationals sigma^2 = 1/4 (t = 1) and 13.69 (accept-test denominators
 * below 2^24: the exact, not lazy, comparisons); sigma = 1000, 6e7
 * (dp_sgd.one_pass's default lattice ratio) and 1e9 (t near the batched
 * path's limit 2^30, where 7 % of the draws of U are rejected) in bins of
 * sigma / 8 with y mod 16; 1e10 (above 2^30: drawn sample by sample); and
 * y_fast = 0, which sends every candidate to the scalar accept test. */
START_TEST(test_dgauss_batched)
{
	static const double sig[] = { 1000.0, 6e7, 1e9 };
	struct dgauss_params p;
	char name[80];

	dg_batched = 1;
	p = dg_params_real(1.5);
	ck_assert(dg_chi2("batched sigma = 1.5", &p, p.sigma2, 201, 1000000, 1, 12) >= P_FAIL);
	p = dg_params(1, 4);
	ck_assert(dg_chi2("batched sigma^2 = 1/4", &p, 0.25, 202, 300000, 1, 12) >= P_FAIL);
	p = dg_params(1369, 100);
	ck_assert(dg_chi2("batched sigma^2 = 13.69", &p, 13.69, 203, 1000000, 1, 12) >= P_FAIL);
	for (size_t k = 0; k < sizeof(sig) / sizeof(sig[0]); k++) {
		size_t n = 1000000;
		int64_t *y = samples(n);
		uint64_t cnt[16] = { 0 };
		double prob[16];
		struct rng r;

		p = dg_params_real(sig[k]);
		snprintf(name, sizeof(name), "batched sigma = %g, bins of sigma/8", sig[k]);
		ck_assert(dg_chi2(name, &p, p.sigma2, 204 + k, n, (int64_t)(sig[k] / 8), 8) >=
			  P_FAIL);
		rng_splitmix_init(&r, 214 + k);
		dg_fill(&r, &p, y, n, 1);
		for (size_t i = 0; i < n; i++)
			cnt[((y[i] % 16) + 16) % 16]++;
		for (int i = 0; i < 16; i++)
			prob[i] = 1.0 / 16;
		snprintf(name, sizeof(name), "batched sigma = %g, y mod 16", sig[k]);
		ck_assert(chi2_binned(name, prob, cnt, 16, n) >= P_FAIL);
		free(y);
	}
	p = dg_params_real(1e10);
	ck_assert(dg_chi2("batched sigma = 1e10 (scalar)", &p, p.sigma2, 221, 200000, 1250000000,
			  8) >= P_FAIL);
	p = dg_params_real(2.5);
	p.y_fast = 0;
	ck_assert(dg_chi2("batched sigma = 2.5, y_fast = 0", &p, p.sigma2, 222, 100000, 1, 12) >=
		  P_FAIL);
	dg_batched = 0;
}
END_TEST

#ifdef DPOPT_TESTING
/* The batched fill's tie paths: with 24-bit leading parts a lazy
 * comparison ties with probability ~2^-22, so the chi-squares above
 * never exercise the scalar code that finishes ties.  With leading parts
 * of 3 and 8 bits (the same code, noise_dgauss_fill_batched_lead) ties
 * are common (up to ~1/2 and ~1/64 per comparison): sigma = 1.5 one bin
 * per integer, sigma^2 = 13.69 (exact rational), sigma = 6e7 in bins of
 * sigma / 8. */
START_TEST(test_dgauss_batched_ties)
{
	static const int lead[] = { 3, 8 };
	char name[80];

	for (size_t k = 0; k < sizeof(lead) / sizeof(lead[0]); k++) {
		struct dgauss_params p;

		dg_batched = lead[k];
		p = dg_params_real(1.5);
		snprintf(name, sizeof(name), "batched, %d-bit leads, sigma = 1.5", lead[k]);
		ck_assert(dg_chi2(name, &p, p.sigma2, 241 + k, 200000, 1, 12) >= P_FAIL);
		p = dg_params(1369, 100);
		snprintf(name, sizeof(name), "batched, %d-bit leads, sigma^2 = 13.69", lead[k]);
		ck_assert(dg_chi2(name, &p, 13.69, 243 + k, 200000, 1, 12) >= P_FAIL);
		p = dg_params_real(6e7);
		snprintf(name, sizeof(name), "batched, %d-bit leads, sigma = 6e7", lead[k]);
		ck_assert(dg_chi2(name, &p, p.sigma2, 245 + k, 200000, 7500000, 8) >= P_FAIL);
	}
	dg_batched = 0;
}
END_TEST
#endif

/* Two-sample chi-square (homogeneity) of n draws each of the scalar and
 * the batched fill at the same sigma, bins of the given width over +-span
 * sigma, tails merged until each bin expects MIN_EXPECT in the pooled
 * sample.  With equal n, X^2 = sum (a - b)^2 / (a + b) on bins - 1 df. */
static double
dg_two_sample(const char *name, const struct dgauss_params *pa, const struct dgauss_params *pb,
	      uint64_t seed, size_t n, int64_t width, double span)
{
	static struct hist ha, hb;
	static double ga[MAX_BINS], gb[MAX_BINS];
	int64_t *y = samples(n), lim = (int64_t)ceil(span * sqrt(pa->sigma2)) + 1;
	double stat = 0.0, a = 0.0, b = 0.0, pv;
	size_t bins = 0;
	struct rng r;

	hist_init(&ha, -lim, lim, width);
	hist_init(&hb, -lim, lim, width);
	rng_splitmix_init(&r, seed);
	dg_fill(&r, pa, y, n, 0);
	for (size_t i = 0; i < n; i++)
		hist_add(&ha, y[i]);
	rng_splitmix_init(&r, seed + 1);
	dg_fill(&r, pb, y, n, 1);
	for (size_t i = 0; i < n; i++)
		hist_add(&hb, y[i]);
	for (size_t i = 0; i < ha.nb + 2; i++) {
		a += (double)ha.count[i];
		b += (double)hb.count[i];
		if ((a + b) / 2 >= MIN_EXPECT) {
			ga[bins] = a;
			gb[bins] = b;
			bins++;
			a = b = 0.0;
		}
	}
	ck_assert_uint_ge(bins, 2);
	ga[bins - 1] += a; /* a short last group joins its left neighbour */
	gb[bins - 1] += b;
	for (size_t g = 0; g < bins; g++)
		stat += (ga[g] - gb[g]) * (ga[g] - gb[g]) / (ga[g] + gb[g]);
	ck_assert_uint_ge(bins, 2);
	pv = chi2_sf(stat, (int)bins - 1);
	printf("%-46s n=%-8lu bins=%-4zu X2=%-10.2f p=%.3g\n", name, (unsigned long)n, bins, stat,
	       pv);
	free(y);
	return pv;
}

/* The batched fill against the scalar one, same sigma: sigma = 3.7 one
 * bin per integer, 6e7 in bins of sigma / 8.  Power: the same comparison
 * with the batched side at sigma * 1.02 must fail (test_power). */
START_TEST(test_dgauss_batched_vs_scalar)
{
	struct dgauss_params p = dg_params_real(3.7);

	ck_assert(dg_two_sample("scalar vs batched, sigma = 3.7", &p, &p, 231, 1000000, 1, 12) >=
		  P_FAIL);
	p = dg_params_real(6e7);
	ck_assert(dg_two_sample("scalar vs batched, sigma = 6e7", &p, &p, 233, 1000000, 7500000,
				8) >= P_FAIL);
}
END_TEST

START_TEST(test_dgauss_single)
{
	struct dgauss_params p = dg_params_real(2.5);
	struct dg_pmf d;
	static struct hist h;
	struct rng r;
	size_t n = 200000;

	rng_splitmix_init(&r, 51);
	dg_pmf_init(&d, p.sigma2);
	hist_init(&h, -40, 40, 1);
	for (size_t i = 0; i < n; i++)
		hist_add(&h, noise_dgauss_sample(&r, &p));
	hist_prob(&h, dg_cdf, dg_sf, &d);
	ck_assert(hist_chi2("dgauss sigma = 2.5, one per call", &h, n) >= P_FAIL);
}
END_TEST

/* Mean 0 and the exact variance (below sigma^2 for small sigma). */
START_TEST(test_dgauss_moments)
{
	static const double sig[] = { 0.5, 1.0, 3.7, 30.0 };

	for (size_t k = 0; k < sizeof(sig) / sizeof(sig[0]); k++) {
		struct dgauss_params p = dg_params_real(sig[k]);
		struct dg_pmf d;
		size_t n = 1000000;
		int64_t *y = samples(n);
		struct rng r;
		double m1 = 0, m2 = 0, var, m4 = 0, se_m, se_v;

		rng_splitmix_init(&r, 61 + k);
		noise_dgauss_fill(&r, &p, y, n);
		dg_pmf_init(&d, p.sigma2);
		var = dg_variance(&d);
		for (int64_t t = 1; t <= d.exact_to; t++)
			m4 += 2.0 * pow((double)t, 4) * dg_p(&d, t);
		for (size_t i = 0; i < n; i++) {
			m1 += (double)y[i];
			m2 += (double)y[i] * (double)y[i];
		}
		m1 /= (double)n;
		m2 /= (double)n;
		se_m = sqrt(var / (double)n);
		se_v = sqrt((m4 - var * var) / (double)n);
		printf("dgauss sigma = %-4g mean %+.5f (se %.5f)  E y^2 %.5f, exact %.5f, "
		       "sigma^2 %.5f\n",
		       sig[k], m1, se_m, m2, var, p.sigma2);
		ck_assert(fabs(m1) <= SIGMAS_MEAN * se_m);
		ck_assert(fabs(m2 - var) <= SIGMAS_MEAN * se_v);
		if (sig[k] <= 0.5) /* visibly below sigma^2 (0.860 sigma^2 at 0.5) */
			ck_assert(var < 0.999 * p.sigma2);
		free(y);
	}
}
END_TEST

static void
big_pow2(struct bigint *a, int k)
{
	bigint_set(a, 0, 0);
	a->w[k / 64] = (uint64_t)1 << (k % 64);
}

static void
big_mul_u64(struct bigint *a, uint64_t m)
{
	struct bigint b;

	bigint_set(&b, 0, m);
	ck_assert(!bigint_mul(a, a, &b));
}

/* sigma^2 is rounded UP, by a relative 2^-49 at most; dyadic values that
 * fit are kept exactly. */
START_TEST(test_dgauss_representation)
{
	static const double sig[] = { 0.0625,    0.5, 1.0, 3.7,  1000.0,
				      12345.678, 1e6, 1e9, 1e10, 0x1p50 };
	struct dgauss_params p;

	for (size_t k = 0; k < sizeof(sig) / sizeof(sig[0]); k++) {
		struct bigint lhs, rhs, diff;
		uint64_t m;
		int ex, sh;
		long double rel;

		p = dg_params_real(sig[k]);
		ck_assert_uint_eq(p.t, (uint64_t)floor(sig[k]) + 1);
		ck_assert(p.m < ((uint64_t)1 << 63));
		/* sigma = m 2^(ex - 53), sigma^2 = m^2 / 2^sh with sh = 106 - 2 ex;
		 * compare t m 2^sh with m^2 e exactly */
		m = (uint64_t)ldexp(frexp(sig[k], &ex), 53);
		sh = 106 - 2 * ex;
		ck_assert(sh >= 0);
		big_pow2(&lhs, sh);
		big_mul_u64(&lhs, p.t);
		big_mul_u64(&lhs, p.m);
		bigint_set(&rhs, 0, m);
		big_mul_u64(&rhs, m);
		big_mul_u64(&rhs, p.e);
		ck_assert_msg(bigint_cmp(&lhs, &rhs) >= 0, "sigma %g: sigma^2 rounded down",
			      sig[k]);
		/* (lhs - rhs) / rhs < 2^-49: (lhs - rhs) 2^49 < rhs */
		bigint_sub(&diff, &lhs, &rhs);
		big_pow2(&lhs, 49);
		ck_assert(!bigint_mul(&diff, &diff, &lhs));
		ck_assert_msg(bigint_cmp(&diff, &rhs) < 0, "sigma %g: rounded up too far", sig[k]);
		rel = (long double)p.sigma2 / ((long double)sig[k] * sig[k]) - 1.0L;
		printf("sigma %-10g t = %-12lu m = %-17lu e = 2^%-2d sigma^2 used / asked - 1 = "
		       "%.2Le\n",
		       sig[k], (unsigned long)p.t, (unsigned long)p.m, __builtin_ctzll(p.e), rel);
	}
	p = dg_params(1, 4);
	ck_assert(p.t == 1 && p.m == 1 && p.e == 4);
	p = dg_params(1369, 100);
	ck_assert(p.t == 4 && p.m == 1369 && p.e == 400);
	p = dg_params_real(0.5); /* dyadic: represented exactly */
	ck_assert(p.t == 1 && p.m == 1 && p.e == 4);
	p = dg_params_real(3.0);
	ck_assert(p.t == 4 && (u128)p.t * p.m == (u128)9 * p.e);
}
END_TEST

/* --- Discrete Laplace ------------------------------------------------------- */

static double
dl_chi2(const char *name, const struct dlap_params *p, double b_pmf, uint64_t seed, size_t n,
	int64_t width, double span)
{
	struct rng r;
	struct dl_pmf l = { b_pmf };
	static struct hist h;
	int64_t *y = samples(n), lim = (int64_t)ceil(span * b_pmf) + 1;
	double pv;

	rng_splitmix_init(&r, seed);
	noise_dlap_fill(&r, p, y, n);
	ck_assert(rng_ok(&r));
	hist_init(&h, -lim, lim, width);
	for (size_t i = 0; i < n; i++)
		hist_add(&h, y[i]);
	hist_prob(&h, dl_cdf, dl_sf, &l);
	pv = hist_chi2(name, &h, n);
	free(y);
	return pv;
}

static struct dlap_params
dl_params(uint64_t t, uint64_t s)
{
	struct dlap_params p;
	struct err e = { 0 };

	ck_assert_msg(noise_dlap_prepare(t, s, &p, &e) == ERR_OK, "%s", e.msg);
	return p;
}

static struct dlap_params
dl_params_real(double b)
{
	struct dlap_params p;
	struct err e = { 0 };

	ck_assert_msg(noise_dlap_prepare_real(b, &p, &e) == ERR_OK, "%s", e.msg);
	return p;
}

/* Scales 1, 0.3 (s = 10: the division path), 3.5, 7.25 (real), one bin per
 * integer; 10^6 in bins of b / 8; 2^40 + 1/2 (t > 2^31: the lazy tilt) and
 * 2^43 + 2^-20 (t > 2^62: the plain chain). */
START_TEST(test_dlap)
{
	struct dlap_params p;

	p = dl_params(1, 1);
	ck_assert(dl_chi2("dlap b = 1", &p, 1.0, 71, 1000000, 1, 30) >= P_FAIL);
	p = dl_params(3, 10);
	ck_assert_uint_eq(p.shift, 64);
	ck_assert(dl_chi2("dlap b = 3/10", &p, 0.3, 72, 1000000, 1, 30) >= P_FAIL);
	p = dl_params(14, 4); /* reduced to 7 / 2 */
	ck_assert(p.t == 7 && p.s == 2 && p.shift == 1);
	ck_assert(dl_chi2("dlap b = 7/2", &p, 3.5, 73, 1000000, 1, 30) >= P_FAIL);
	p = dl_params_real(7.25);
	ck_assert(p.t == 29 && p.s == 4);
	ck_assert(dl_chi2("dlap b = 7.25 (real)", &p, 7.25, 74, 1000000, 1, 30) >= P_FAIL);
	p = dl_params_real(1e6);
	ck_assert(dl_chi2("dlap b = 1e6, bins of b/8", &p, 1e6, 75, 1000000, 125000, 16) >= P_FAIL);
	p = dl_params(((uint64_t)1 << 41) + 1, 2);
	ck_assert(p.tilt.d == 0 && p.tilt.s > 0);
	ck_assert(dl_chi2("dlap b = 2^40 + 1/2 (lazy tilt)", &p, 0x1p40 + 0.5, 76, 200000,
			  (int64_t)1 << 37, 16) >= P_FAIL);
	p = dl_params(((uint64_t)1 << 63) + 1, (uint64_t)1 << 20);
	ck_assert(p.tilt.s < 0);
	ck_assert(dl_chi2("dlap b = 2^43 + 2^-20 (plain chain)", &p, 0x1p43, 77, 200000,
			  (int64_t)1 << 40, 16) >= P_FAIL);
}
END_TEST

/* Fine structure at b = 10^6 and the moments: Var = 2 q / (1 - q)^2. */
START_TEST(test_dlap_moments)
{
	static const double bs[] = { 0.3, 1.0, 7.25, 1e6 };

	for (size_t k = 0; k < sizeof(bs) / sizeof(bs[0]); k++) {
		struct dlap_params p = dl_params_real(bs[k]);
		size_t n = 1000000;
		int64_t *y = samples(n);
		struct rng r;
		double q = exp(-1.0 / bs[k]), var = 2 * q / ((1 - q) * (1 - q));
		/* E y^4 = 2 q (1 + 10 q + q^2) / (1 - q)^4 for the two-sided geometric */
		double m4 = 2 * q * (1 + 10 * q + q * q) / pow(1 - q, 4), m1 = 0, m2 = 0;

		rng_splitmix_init(&r, 81 + k);
		noise_dlap_fill(&r, &p, y, n);
		for (size_t i = 0; i < n; i++) {
			m1 += (double)y[i];
			m2 += (double)y[i] * (double)y[i];
		}
		m1 /= (double)n;
		m2 /= (double)n;
		printf("dlap b = %-6g mean %+.4g (se %.3g)  E y^2 %.6g, exact %.6g\n", bs[k], m1,
		       sqrt(var / (double)n), m2, var);
		ck_assert(fabs(m1) <= SIGMAS_MEAN * sqrt(var / (double)n));
		ck_assert(fabs(m2 - var) <= SIGMAS_MEAN * sqrt((m4 - var * var) / (double)n));
		if (bs[k] >= 1e6) {
			uint64_t cnt[16] = { 0 };
			double prob[16];

			for (size_t i = 0; i < n; i++)
				cnt[((y[i] % 16) + 16) % 16]++;
			for (int i = 0; i < 16; i++)
				prob[i] = 1.0 / 16; /* to within 1 - exp(-16 / b) ~ 1e-5 relative */
			ck_assert(chi2_binned("dlap b = 1e6, y mod 16", prob, cnt, 16, n) >=
				  P_FAIL);
		}
		free(y);
	}
}
END_TEST

/* --- Bernoulli ------------------------------------------------------------------ */

/* Two-cell chi-square of n draws of f() against probability pr. */
static double
bern_chi2(const char *name, double pr, uint64_t ones, uint64_t n)
{
	double prob[2] = { 1.0 - pr, pr };
	uint64_t cnt[2] = { n - ones, ones };

	return chi2_binned(name, prob, cnt, 2, n);
}

START_TEST(test_bernoulli)
{
	static const struct {
		uint64_t num, den;
	} c[] = {
		{ 1, 3 },
		{ 2, 7 },
		{ 999, 1000 },
		{ ((uint64_t)1 << 62) + 12345, ((uint64_t)1 << 63) - 25 }, /* 64-bit lazy */
		{ 3000, (uint64_t)1 << 25 },                               /* small p, 2^24 < den */
	};
	struct err e = { 0 };
	struct rng r;
	char name[80];
	bool b;

	rng_splitmix_init(&r, 91);
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		uint64_t ones = 0, n = 300000, bad = 0;

		/* no ck_assert in hot loops: in fork mode each one writes a
		 * checkpoint to a file */
		for (uint64_t i = 0; i < n; i++) {
			bad += noise_bernoulli(&r, c[k].num, c[k].den, &b, &e) != ERR_OK;
			ones += b;
		}
		ck_assert_uint_eq(bad, 0);
		snprintf(name, sizeof(name), "bernoulli(%lu / %lu)", (unsigned long)c[k].num,
			 (unsigned long)c[k].den);
		ck_assert(bern_chi2(name, (double)c[k].num / (double)c[k].den, ones, n) >= P_FAIL);
	}
	for (int i = 0; i < 1000; i++) {
		ck_assert(noise_bernoulli(&r, 0, 5, &b, &e) == ERR_OK && !b);
		ck_assert(noise_bernoulli(&r, 5, 5, &b, &e) == ERR_OK && b);
	}
	ck_assert_int_eq(noise_bernoulli(&r, 6, 5, &b, &e), ERR_INVALID);
	ck_assert_int_eq(noise_bernoulli(&r, 0, 0, &b, &e), ERR_INVALID);
}
END_TEST

/* Bernoulli(exp(-num / den)) exactly, including the integer part (x > 1)
 * and a 64-bit denominator (the lazy comparison). */
START_TEST(test_bernoulli_exp)
{
	static const struct {
		uint64_t num, den;
	} c[] = {
		{ 1, 3 },
		{ 1, 1 },
		{ 5, 2 },
		{ 7, 1 },
		{ 1000000007, 1000000000 },
		{ 3 * ((uint64_t)1 << 58) + 1, ((uint64_t)1 << 60) - 5 },
		{ 123456789, 3 }, /* exp(-41152263): never */
	};
	struct err e = { 0 };
	struct rng r;
	char name[96];
	bool b;

	rng_splitmix_init(&r, 101);
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		uint64_t ones = 0, n = 300000, bad = 0;
		double pr = exp(-(double)c[k].num / (double)c[k].den);

		for (uint64_t i = 0; i < n; i++) {
			bad += noise_bernoulli_exp(&r, c[k].num, c[k].den, &b, &e) != ERR_OK;
			ones += b;
		}
		ck_assert_uint_eq(bad, 0);
		if (pr * n < MIN_EXPECT) {
			ck_assert_uint_eq(ones, 0);
			continue;
		}
		snprintf(name, sizeof(name), "bernoulli(exp(-%lu / %lu))", (unsigned long)c[k].num,
			 (unsigned long)c[k].den);
		ck_assert(bern_chi2(name, pr, ones, n) >= P_FAIL);
	}
	for (int i = 0; i < 1000; i++)
		ck_assert(noise_bernoulli_exp(&r, 0, 7, &b, &e) == ERR_OK && b);
	ck_assert_int_eq(noise_bernoulli_exp(&r, 1, 0, &b, &e), ERR_INVALID);
}
END_TEST

/* --- Exponential mechanism ----------------------------------------------------- */

static double
em_chi2(const char *name, const double *w_sample, const double *w_pmf, size_t k, uint64_t seed,
	size_t n)
{
	uint64_t cnt[64] = { 0 };
	double prob[64], mx = -INFINITY, z = 0.0;
	struct err e = { 0 };
	struct rng r;
	size_t j, bad = 0, neg_inf = 0;

	ck_assert_uint_le(k, 64);
	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < n; i++) {
		if (noise_exp_mech(&r, w_sample, k, &j, &e) != ERR_OK || j >= k) {
			bad++;
			continue;
		}
		neg_inf += w_sample[j] == -INFINITY;
		cnt[j]++;
	}
	ck_assert_uint_eq(bad, 0);
	ck_assert_msg(neg_inf == 0, "chose a -inf weight %zu times", neg_inf);
	for (size_t i = 0; i < k; i++)
		mx = fmax(mx, w_pmf[i]);
	for (size_t i = 0; i < k; i++)
		z += exp(w_pmf[i] - mx);
	for (size_t i = 0; i < k; i++)
		prob[i] = exp(w_pmf[i] - mx) / z;
	return chi2_binned(name, prob, cnt, k, n);
}

START_TEST(test_exp_mech)
{
	static const double w[] = { 0.0,       -1.0, -INFINITY, 2.5,   -3.0,
				    -INFINITY, 1.0,  0.3,       -40.0, 1e-3 };
	double w2[sizeof(w) / sizeof(w[0])], big[40];
	size_t k = sizeof(w) / sizeof(w[0]);
	struct rng r;

	ck_assert(em_chi2("exp_mech, 10 weights, two -inf", w, w, k, 111, 1000000) >= P_FAIL);
	for (size_t i = 0; i < k; i++)
		w2[i] = w[i] + 1e6; /* shifting every weight changes nothing */
	ck_assert(em_chi2("exp_mech, same weights + 1e6", w2, w, k, 112, 300000) >= P_FAIL);
	rng_splitmix_init(&r, 113);
	for (size_t i = 0; i < 40; i++)
		big[i] = 3.0 * rng_uniform(&r) - 1.5;
	ck_assert(em_chi2("exp_mech, 40 random weights", big, big, 40, 114, 300000) >= P_FAIL);
}
END_TEST

START_TEST(test_exp_mech_refusals)
{
	double w[3] = { 0.0, 1.0, 2.0 };
	struct err e = { 0 };
	struct rng r;
	size_t j = 77;

	rng_splitmix_init(&r, 121);
	ck_assert_int_eq(noise_exp_mech(&r, w, 0, &j, &e), ERR_INVALID);
	ck_assert_int_eq(noise_exp_mech(&r, NULL, 3, &j, &e), ERR_INVALID);
	w[1] = NAN;
	ck_assert_int_eq(noise_exp_mech(&r, w, 3, &j, &e), ERR_NUMERIC);
	w[1] = INFINITY;
	ck_assert_int_eq(noise_exp_mech(&r, w, 3, &j, &e), ERR_NUMERIC);
	w[0] = w[1] = w[2] = -INFINITY;
	ck_assert_int_eq(noise_exp_mech(&r, w, 3, &j, &e), ERR_NUMERIC);
	ck_assert_uint_eq(j, 77); /* untouched on error */
	w[2] = -1e300;            /* one finite weight, however small, is always chosen */
	for (int i = 0; i < 1000; i++) {
		ck_assert_int_eq(noise_exp_mech(&r, w, 3, &j, &e), ERR_OK);
		ck_assert_uint_eq(j, 2);
	}
}
END_TEST

/* --- Lattice front end ------------------------------------------------------------ */

START_TEST(test_lattice_step)
{
	static const struct {
		enum noise_norm norm;
		double delta;
		size_t d;
	} c[] = {
		{ NOISE_NORM_L2, 2e-4, 100000 }, { NOISE_NORM_L2, 1.0, 1 },
		{ NOISE_NORM_L2, 3.3, 7 },       { NOISE_NORM_L2, 1e3, 1000000 },
		{ NOISE_NORM_L1, 1.0, 1000 },    { NOISE_NORM_L1, 0.02, 3 },
		{ NOISE_NORM_LINF, 0.5, 1 },     { NOISE_NORM_LINF, 1e-30, 50 },
	};
	struct err e = { 0 };

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		long double cf = c[i].norm == NOISE_NORM_L2   ? sqrtl((long double)c[i].d)
				 : c[i].norm == NOISE_NORM_L1 ? (long double)c[i].d
							      : 1.0L;
		long double gamma, added;
		double infl;
		int k = -1000;

		ck_assert_int_eq(noise_lattice_step(c[i].norm, c[i].delta, c[i].d, &k, &e), ERR_OK);
		gamma = ldexpl(1.0L, -k);
		added = gamma * cf;
		/* within the slack, and the largest such power of two */
		ck_assert(added <= 1e-6L * c[i].delta);
		ck_assert(2 * added > 1e-6L * c[i].delta * (1 - 0x1p-29L));
		ck_assert_int_eq(
			noise_lattice_sensitivity(c[i].norm, c[i].delta, c[i].d, k, &infl, &e),
			ERR_OK);
		ck_assert((long double)infl >= (long double)c[i].delta + added);
		ck_assert(infl > c[i].delta);
		ck_assert(infl <= c[i].delta * (1.0 + 1e-6));
		printf("lattice step: norm %d, Delta %g, d %zu: k = %d, Delta' / Delta - 1 = "
		       "%.3g\n",
		       (int)c[i].norm, c[i].delta, c[i].d, k, infl / c[i].delta - 1.0);
	}
}
END_TEST

/* Outputs are lattice points; the noise, in lattice units, is N_Z(0, 9)
 * at sigma = 3 gamma (the rounding of x is deterministic: round(4.8) = 5). */
START_TEST(test_lattice_gaussian)
{
	struct err e = { 0 };
	struct rng r;
	struct dg_pmf d;
	static struct hist h;
	size_t n = 1000000, off = 0;
	double *x = malloc(n * sizeof(*x));
	int k = 4;

	ck_assert_ptr_nonnull(x);
	rng_splitmix_init(&r, 131);
	for (size_t i = 0; i < n; i++)
		x[i] = 0.3;
	ck_assert_int_eq(noise_lattice_gaussian(&r, 3.0 / 16, k, x, n, &e), ERR_OK);
	dg_pmf_init(&d, 9.0);
	hist_init(&h, -40, 40, 1);
	for (size_t i = 0; i < n; i++) {
		double z = ldexp(x[i], k);

		off += z != nearbyint(z); /* off the lattice */
		hist_add(&h, (int64_t)z - 5);
	}
	ck_assert_uint_eq(off, 0);
	hist_prob(&h, dg_cdf, dg_sf, &d);
	ck_assert(hist_chi2("lattice gaussian, sigma = 3 gamma", &h, n) >= P_FAIL);

	/* a realistic case: d = 10^5, Delta = 2e-4, z = 1.1 */
	{
		size_t dd = 100000;
		double sens = 2e-4, infl, sigma;
		int kk;

		off = 0;
		ck_assert_int_eq(noise_lattice_step(NOISE_NORM_L2, sens, dd, &kk, &e), ERR_OK);
		ck_assert_int_eq(noise_lattice_sensitivity(NOISE_NORM_L2, sens, dd, kk, &infl, &e),
				 ERR_OK);
		sigma = 1.1 * infl;
		for (size_t i = 0; i < dd; i++)
			x[i] = 0.001 * (double)(i % 2001) - 1.0;
		ck_assert_int_eq(noise_lattice_gaussian(&r, sigma, kk, x, dd, &e), ERR_OK);
		for (size_t i = 0; i < dd; i++) {
			double z = ldexp(x[i], kk), orig = 0.001 * (double)(i % 2001) - 1.0;

			off += z != nearbyint(z);
			off += !(fabs(x[i] - orig) < 12 * sigma);
		}
		ck_assert_uint_eq(off, 0);
		printf("lattice gaussian: d = %zu, k = %d, sigma / gamma = %.4g\n", dd, kk,
		       ldexp(sigma, kk));
	}
	free(x);
}
END_TEST

/* noise_dgauss_fill_wide() then noise_lattice_add() is
 * noise_lattice_gaussian_prepared() bit for bit (the same draws in the
 * same order), and its samples are noise_dgauss_fill()'s (no saturation
 * in range), at the one-pass scale sigma = 0.9 2^26 and at sigma = 3. */
START_TEST(test_lattice_add_matches)
{
	static const double sig[] = { 0.9 * 67108864.0, 3.0 };
	size_t n = 5000;
	double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	struct noise_i128 *w = malloc(n * sizeof(*w));
	int64_t *y = samples(n);
	struct err e = { 0 };

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(w);
	for (size_t k = 0; k < 2; k++) {
		struct dgauss_params p = dg_params_real(sig[k]);
		struct rng r;

		for (size_t i = 0; i < n; i++)
			a[i] = b[i] = ldexp((double)i - 2500.0, -3);
		rng_splitmix_init(&r, 61 + k);
		ck_assert_int_eq(noise_lattice_gaussian_prepared(&r, &p, 26, a, n, &e), ERR_OK);
		rng_splitmix_init(&r, 61 + k);
		noise_dgauss_fill_wide(&r, &p, w, n);
		ck_assert_int_eq(noise_lattice_add(w, 26, b, n, &e), ERR_OK);
		ck_assert_msg(memcmp(a, b, n * sizeof(*a)) == 0,
			      "fill_wide + lattice_add differs from the prepared lattice call");
		rng_splitmix_init(&r, 61 + k);
		noise_dgauss_fill(&r, &p, y, n);
		for (size_t i = 0; i < n; i++) {
			ck_assert_int_eq(w[i].hi, y[i] < 0 ? -1 : 0);
			ck_assert_uint_eq(w[i].lo, (uint64_t)y[i]);
		}
	}
	/* a value beyond 64 bits and a refused x */
	w[0].hi = 1;
	w[0].lo = 0;
	a[0] = 0.0;
	ck_assert_int_eq(noise_lattice_add(w, 0, a, 1, &e), ERR_OK);
	ck_assert(a[0] == 0x1p64);
	a[0] = INFINITY;
	ck_assert_int_eq(noise_lattice_add(w, 0, a, 1, &e), ERR_NUMERIC);
	free(a);
	free(b);
	free(w);
	free(y);
}
END_TEST

START_TEST(test_lattice_laplace)
{
	struct err e = { 0 };
	struct rng r;
	struct dl_pmf l = { 2.5 };
	static struct hist h;
	size_t n = 1000000, off = 0;
	double *x = malloc(n * sizeof(*x));
	int k = 4;

	ck_assert_ptr_nonnull(x);
	rng_splitmix_init(&r, 141);
	for (size_t i = 0; i < n; i++)
		x[i] = -0.3;
	ck_assert_int_eq(noise_lattice_laplace(&r, 2.5 / 16, k, x, n, &e), ERR_OK);
	hist_init(&h, -80, 80, 1);
	for (size_t i = 0; i < n; i++) {
		double z = ldexp(x[i], k);

		off += z != nearbyint(z);
		hist_add(&h, (int64_t)z + 5); /* round(-4.8) = -5 */
	}
	ck_assert_uint_eq(off, 0);
	hist_prob(&h, dl_cdf, dl_sf, &l);
	ck_assert(hist_chi2("lattice laplace, b = 2.5 gamma", &h, n) >= P_FAIL);
	free(x);
}
END_TEST

START_TEST(test_lattice_refusals)
{
	double x[4] = { 1.0, 2.0, 3.0, 4.0 }, out;
	struct err e = { 0 };
	struct rng r;
	int k;

	rng_splitmix_init(&r, 151);
	x[2] = NAN;
	ck_assert_int_eq(noise_lattice_gaussian(&r, 1.0, 10, x, 4, &e), ERR_NUMERIC);
	ck_assert(x[0] == 1.0 && x[1] == 2.0 && x[3] == 4.0); /* untouched */
	ck_assert_int_eq(noise_lattice_laplace(&r, 1.0, 10, x, 4, &e), ERR_NUMERIC);
	x[2] = INFINITY;
	ck_assert_int_eq(noise_lattice_gaussian(&r, 1.0, 10, x, 4, &e), ERR_NUMERIC);
	x[2] = 0x1p53; /* |x / gamma| = 2^63 > 2^62 at k = 10 */
	ck_assert_int_eq(noise_lattice_gaussian(&r, 1.0, 10, x, 4, &e), ERR_NUMERIC);
	x[2] = 0x1p51; /* 2^61: accepted */
	ck_assert_int_eq(noise_lattice_gaussian(&r, 1.0, 10, x, 4, &e), ERR_OK);
	/* sigma / gamma outside [2^-4, 2^50] */
	ck_assert_int_eq(noise_lattice_gaussian(&r, 0x1p41, 10, x, 4, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_gaussian(&r, 0x1p-15, 10, x, 4, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_gaussian(&r, 0.0, 10, x, 4, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_gaussian(&r, NAN, 10, x, 4, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_gaussian(&r, 1.0, 600, x, 4, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_laplace(&r, 0x1p43, 10, x, 4, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_laplace(&r, -1.0, 10, x, 4, &e), ERR_INVALID);
	/* step and sensitivity */
	ck_assert_int_eq(noise_lattice_step(NOISE_NORM_L2, 0.0, 4, &k, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_step(NOISE_NORM_L2, -1.0, 4, &k, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_step(NOISE_NORM_L2, NAN, 4, &k, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_step(NOISE_NORM_L2, INFINITY, 4, &k, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_step(NOISE_NORM_L2, 1.0, 0, &k, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_step((enum noise_norm)9, 1.0, 4, &k, &e), ERR_INVALID);
	ck_assert_int_eq(noise_lattice_sensitivity(NOISE_NORM_L1, 1.0, 4, 9999, &out, &e),
			 ERR_INVALID);
}
END_TEST

/* --- Prepare refusals ------------------------------------------------------------- */

START_TEST(test_prepare_refusals)
{
	struct dgauss_params g;
	struct dlap_params l;
	struct err e = { 0 };

	ck_assert_int_eq(noise_dgauss_prepare(0, 1, &g, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dgauss_prepare(1, 0, &g, &e), ERR_INVALID);
	/* sigma^2 = (2^64 - 1) / (2^64 - 3), coprime, t = 2: m = 2^64 - 1 and
	 * e = 2 (2^64 - 3) do not fit; sigma^2 = 1 / (2^64 - 1) does */
	ck_assert_int_eq(noise_dgauss_prepare(UINT64_MAX, UINT64_MAX - 2, &g, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dgauss_prepare(1, UINT64_MAX, &g, &e), ERR_OK);
	ck_assert_int_eq(noise_dgauss_prepare_real(NAN, &g, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dgauss_prepare_real(INFINITY, &g, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dgauss_prepare_real(0.06, &g, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dgauss_prepare_real(0x1p50 * 1.0000001, &g, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dgauss_prepare_real(-1.0, &g, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dlap_prepare(0, 1, &l, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dlap_prepare(1, 0, &l, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dlap_prepare(1, 1025, &l, &e), ERR_INVALID); /* < 2^-10 */
	ck_assert_int_eq(noise_dlap_prepare(1, 1024, &l, &e), ERR_OK);      /* = 2^-10 */
	ck_assert_int_eq(noise_dlap_prepare(((uint64_t)1 << 52) + 1, 1, &l, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dlap_prepare_real(0x1p-11, &l, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dlap_prepare_real(NAN, &l, &e), ERR_INVALID);
	ck_assert_int_eq(noise_dlap_prepare_real(0x1p52, &l, &e), ERR_OK);
}
END_TEST

/* --- A failing generator ------------------------------------------------------------ */

/* Refills succeed r->splitmix times, then fail for good. */
static bool
failing_refill(struct rng *r)
{
	if (r->splitmix == 0)
		return false;
	r->splitmix--;
	for (size_t i = 0; i < RNG_BUFFER_BYTES; i++)
		r->buf[i] = (unsigned char)(i * 131 + r->splitmix * 7 + 1);
	return true;
}

/* Every sampler stops (zeros) once the generator fails, never loops. */
START_TEST(test_failing_generator)
{
	struct dgauss_params g = dg_params_real(1e6), g2 = dg_params(1, 4);
	struct dlap_params l = dl_params_real(3.0);
	int64_t y[1000];
	double x[1000], w[3] = { 0, 1, 2 };
	struct err e = { 0 };
	struct rng r;
	size_t j;
	bool b;

	for (uint64_t ok = 0; ok < 3; ok++) {
		rng_splitmix_init(&r, 0);
		r.refill = failing_refill;
		r.splitmix = ok;
		noise_dgauss_fill(&r, &g, y, 1000);
		noise_dgauss_fill(&r, &g2, y, 1000);
		noise_dlap_fill(&r, &l, y, 1000);
		(void)noise_dgauss_sample(&r, &g);
		(void)noise_dlap_sample(&r, &l);
		for (size_t i = 0; i < 1000; i++)
			x[i] = 0.5;
		ck_assert_int_eq(noise_lattice_gaussian(&r, 1.0, 10, x, 1000, &e), ERR_OK);
		ck_assert_int_eq(noise_lattice_laplace(&r, 1.0, 10, x, 1000, &e), ERR_OK);
		ck_assert_int_eq(noise_exp_mech(&r, w, 3, &j, &e), ERR_OK);
		ck_assert_int_eq(noise_bernoulli_exp(&r, 1, 3, &b, &e), ERR_OK);
		ck_assert_int_eq(noise_bernoulli(&r, 1, 3, &b, &e), ERR_OK);
		ck_assert(!rng_ok(&r));
	}
	/* the batched fill: the generator fails during the call (20000
	 * samples need ~10^5 words, 0 to 2 refills of RNG_BUFFER_BYTES hold at
	 * most 16384): all zeros, whatever was drawn before the failure */
	for (uint64_t ok = 0; ok < 3; ok++) {
		static struct noise_i128 wide[20000];

		for (int k = 0; k < 2; k++) {
			size_t nz = 0;

			rng_splitmix_init(&r, 0);
			r.refill = failing_refill;
			r.splitmix = ok;
			noise_dgauss_fill_batched(&r, k == 0 ? &g : &g2, wide, 20000);
			ck_assert(!rng_ok(&r));
			for (size_t i = 0; i < 20000; i++)
				nz += wide[i].lo != 0 || wide[i].hi != 0;
			ck_assert_uint_eq(nz, 0);
		}
	}
}
END_TEST

/* --- Scripted generator: exact decisions at their boundaries ------------- */

/* A generator whose stream starts with script[] (32-bit words, in the
 * order the pool hands them out) and continues with zeros. */
static uint32_t script[8];
static size_t script_len;

static bool
script_refill(struct rng *r)
{
	memset(r->buf, 0, RNG_BUFFER_BYTES);
	memcpy(r->buf, script, script_len * sizeof(script[0]));
	return true;
}

static bool
scripted(bool (*draw)(struct rng *r), size_t n, ...)
{
	struct rng r;
	va_list ap;

	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		script[i] = va_arg(ap, uint32_t);
	va_end(ap);
	script_len = n;
	rng_splitmix_init(&r, 0);
	r.refill = script_refill;
	return draw(&r);
}

static bool
draw_bern_1_3(struct rng *r)
{
	bool b = false;

	ck_assert_int_eq(noise_bernoulli(r, 1, 3, &b, NULL), ERR_OK);
	return b;
}

static bool
draw_bern_lazy(struct rng *r)
{
	bool b = false;

	/* den = 2^25 takes the lazy path: s = 1, bh = 2^24 - 1, x = w >> 8 */
	ck_assert_int_eq(
		noise_bernoulli(r, ((uint64_t)1 << 24) + 1024 + 1, (uint64_t)1 << 25, &b, NULL),
		ERR_OK);
	return b;
}

static bool
draw_exp1(struct rng *r)
{
	bool b = false;

	ck_assert_int_eq(noise_bernoulli_exp(r, 1, 1, &b, NULL), ERR_OK);
	return b;
}

/* Lemire's rejection, the lazy comparison's tie, and the 10! thresholds of
 * Bernoulli(exp(-1)) at both sides of each boundary: exact decisions that
 * a biased implementation gets wrong with probability ~2^-24 per draw, far
 * too rarely for any chi-square test to see. */
START_TEST(test_scripted)
{
	/* uniform below 3 from w = 0: x n = 0 has lo = 0 < 2^32 mod 3 = 1,
	 * rejected; w = 2^32 - 1 gives 2, and 2 < 1 is false */
	ck_assert(!scripted(draw_bern_1_3, 2, 0u, 0xffffffffu));
	ck_assert(scripted(draw_bern_1_3, 1, 0x20000000u)); /* 0 < 1 */
	/* lazy: a = 2^24 + 2^10 + 1, a >> 1 = 0x800200 */
	ck_assert(scripted(draw_bern_lazy, 1, 0x8001ff00u));      /* x < a >> 1 */
	ck_assert(!scripted(draw_bern_lazy, 1, 0x80020100u));     /* x = (a >> 1) + 1 */
	ck_assert(scripted(draw_bern_lazy, 2, 0x80020000u, 0u));  /* tie, c = a - 1 */
	ck_assert(!scripted(draw_bern_lazy, 2, 0x80020000u, 1u)); /* tie, c = a */
	/* Bernoulli(exp(-1)) from x below 10!: the chain stops at the first
	 * K with x >= 10! / K!, and the answer is "K odd".  w = ceil(x 2^32 /
	 * 10!) (+ a few, past the rejection threshold 2096896) gives x. */
	ck_assert(!scripted(draw_exp1, 1, 0x80000001u)); /* x = 1814400: K = 2 */
	ck_assert(scripted(draw_exp1, 1, 0x7ffffb61u));  /* x = 1814399: K = 3 */
	ck_assert(scripted(draw_exp1, 1, 0x2aaaaaacu));  /* x = 604800: K = 3 */
	ck_assert(!scripted(draw_exp1, 1, 0x2aaaa60cu)); /* x = 604799: K = 4 */
	ck_assert(!scripted(draw_exp1, 1, 0x0aaaaaacu)); /* x = 151200: K = 4 */
	ck_assert(scripted(draw_exp1, 1, 0x0aaaa60cu));  /* x = 151199: K = 5 */
}
END_TEST

/* --- bigint ---------------------------------------------------------------------------- */

START_TEST(test_bigint)
{
	struct rng r;
	unsigned long bad = 0;

	rng_splitmix_init(&r, 161);
	for (int it = 0; it < 20000; it++) {
		u128 a = (u128)rng_u64(&r) << 64 | rng_u64(&r);
		u128 d = (u128)rng_u64(&r) << (it % 64) | 1;
		struct bigint A, D, Q, R, T;
		uint64_t hi, lo;

		if (it % 3 == 0)
			d >>= 64; /* 64-bit divisors too */
		if (d == 0)
			d = 1;
		bigint_set(&A, (uint64_t)(a >> 64), (uint64_t)a);
		bigint_set(&D, (uint64_t)(d >> 64), (uint64_t)d);
		/* quotient and remainder agree with u128 arithmetic */
		bigint_divmod(&Q, &R, &A, &D);
		bad += !bigint_get128(&Q, &hi, &lo) || (((u128)hi << 64) | lo) != a / d;
		bad += !bigint_get128(&R, &hi, &lo) || (((u128)hi << 64) | lo) != a % d;
		/* so do the low 128 bits of the product (no ck_assert in this
		 * loop: in fork mode each one writes a checkpoint to a file) */
		bad += bigint_mul(&T, &A, &D);
		bad += T.w[0] != (uint64_t)(a * d) || T.w[1] != (uint64_t)((a * d) >> 64);
		/* a 256-bit identity: T + R = Q D + R' with R' < D */
		bigint_add(&T, &T, &R);
		bigint_divmod(&Q, &R, &T, &D);
		bad += bigint_cmp(&R, &D) >= 0;
		bad += bigint_mul(&Q, &Q, &D);
		bad += bigint_add(&Q, &Q, &R);
		bad += bigint_cmp(&Q, &T) != 0;
	}
	ck_assert_uint_eq(bad, 0);
	{
		struct bigint a, b, c;

		bigint_set(&a, 0, 0);
		bigint_set(&b, 0, 1);
		ck_assert(bigint_sub(&c, &a, &b)); /* borrows */
		for (int i = 0; i < BIGINT_LIMBS; i++)
			ck_assert(c.w[i] == UINT64_MAX);
		ck_assert(bigint_add(&c, &c, &b)); /* and carries back to 0 */
		ck_assert(bigint_is_zero(&c));
		bigint_set(&a, 1, 0);
		bigint_dec(&a);
		ck_assert(a.w[0] == UINT64_MAX && a.w[1] == 0);
		memset(&a, 0xff, sizeof(a));
		ck_assert(bigint_mul(&c, &a, &a)); /* overflows 512 bits */
		ck_assert(!bigint_get128(&a, &a.w[0], &a.w[1]));
	}
}
END_TEST

/* --- Power: deliberately wrong samplers must FAIL the same checks ----------------- */

START_TEST(test_power)
{
	static const double w[] = { 0.0,       -1.0, -INFINITY, 2.5,   -3.0,
				    -INFINITY, 1.0,  0.3,       -40.0, 1e-3 };
	double w2[sizeof(w) / sizeof(w[0])];
	struct dgauss_params p;
	struct dlap_params l;
	double pv;

	/* noise scaled by 0.5: sigma 3.7 / 2 against the pmf of 3.7 */
	p = dg_params_real(3.7 / 2);
	pv = dg_chi2("POWER dgauss sigma/2 vs sigma = 3.7", &p, 3.7 * 3.7, 171, 100000, 1, 12);
	ck_assert(pv < P_FAIL);
	p = dg_params_real(5e5);
	pv = dg_chi2("POWER dgauss sigma/2 vs sigma = 1e6", &p, 1e12, 172, 100000, 125000, 8);
	ck_assert(pv < P_FAIL);
	/* subtler: sigma^2 off by 2% at sigma = 1.  Noncentrality N sum (p' -
	 * p)^2 / p = 200 on 8 df, so this mutant passes with probability
	 * ~1e-9 (noncentral chi-square, computed with mpmath); at 1% it
	 * would be 50 and pass 15% of the time */
	p = dg_params(102, 100);
	pv = dg_chi2("POWER dgauss sigma^2 = 1.02 vs 1", &p, 1.0, 173, 1000000, 1, 12);
	ck_assert(pv < P_FAIL);
	/* the batched fill, sigma * 1.02 at sigma = 1 (sigma^2 off by 4 %:
	 * noncentrality ~800 on 8 df by the computation above) against the
	 * pmf, and against the scalar fill at sigma = 3.7 (two-sample: the
	 * noncentrality of the one-sample check halved, still far past the
	 * threshold) */
	dg_batched = 1;
	p = dg_params_real(1.02);
	pv = dg_chi2("POWER batched sigma*1.02 vs sigma = 1", &p, 1.0, 176, 1000000, 1, 12);
	dg_batched = 0;
	ck_assert(pv < P_FAIL);
	{
		struct dgauss_params pa = dg_params_real(3.7), pb = dg_params_real(3.7 * 1.02);

		pv = dg_two_sample("POWER scalar 3.7 vs batched 3.7*1.02", &pa, &pb, 177, 1000000,
				   1, 12);
		ck_assert(pv < P_FAIL);
	}
	l = dl_params(1, 2);
	pv = dl_chi2("POWER dlap b/2 vs b = 1", &l, 1.0, 174, 100000, 1, 30);
	ck_assert(pv < P_FAIL);
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		w2[i] = 2.0 * w[i]; /* temperature halved */
	pv = em_chi2("POWER exp_mech temperature/2", w2, w, sizeof(w) / sizeof(w[0]), 175, 100000);
	ck_assert(pv < P_FAIL);
}
END_TEST

static Suite *
noise_suite(void)
{
	Suite *s = suite_create("noise");
	TCase *unit = tcase_create("unit"), *stat = tcase_create("statistical");

	tcase_add_test(unit, test_gamma_q);
	tcase_add_test(unit, test_dgauss_representation);
	tcase_add_test(unit, test_lattice_step);
	tcase_add_test(unit, test_lattice_refusals);
	tcase_add_test(unit, test_prepare_refusals);
	tcase_add_test(unit, test_exp_mech_refusals);
	tcase_add_test(unit, test_failing_generator);
	tcase_add_test(unit, test_bigint);
	tcase_add_test(unit, test_scripted);
	tcase_add_test(unit, test_lattice_add_matches);
	tcase_set_timeout(unit, 60);
	suite_add_tcase(s, unit);

	tcase_add_test(stat, test_dgauss_small);
	tcase_add_test(stat, test_dgauss_large);
	tcase_add_test(stat, test_dgauss_wide_path);
	tcase_add_test(stat, test_dgauss_single);
	tcase_add_test(stat, test_dgauss_batched);
	tcase_add_test(stat, test_dgauss_batched_vs_scalar);
#ifdef DPOPT_TESTING /* noise_dgauss_fill_batched_lead() */
	tcase_add_test(stat, test_dgauss_batched_ties);
#endif
	tcase_add_test(stat, test_dgauss_moments);
	tcase_add_test(stat, test_dlap);
	tcase_add_test(stat, test_dlap_moments);
	tcase_add_test(stat, test_bernoulli);
	tcase_add_test(stat, test_bernoulli_exp);
	tcase_add_test(stat, test_exp_mech);
	tcase_add_test(stat, test_lattice_gaussian);
	tcase_add_test(stat, test_lattice_laplace);
	tcase_add_test(stat, test_power);
	tcase_set_timeout(stat, 120);
	suite_add_tcase(s, stat);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(noise_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
