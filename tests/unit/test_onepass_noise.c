/*
 * test_onepass_noise.c - the one-pass methods' noise drawn ahead
 * (algorithms/gauss_onepass.h, struct onepass_noise) and the run pool's
 * background call that draws it (service/run_pool.h):
 *
 *  - the law: 2000 steps of p = 101 coordinates (202,000 samples over 13
 *    chunks, the later ones drawn on the pool's helper thread) at
 *    sigma = 0.9 2^26 lattice units (dp_sgd.one_pass's default scale at
 *    n = 10^6, d = 100) are N_Z(0, sigma^2): Pearson's chi-square in bins
 *    of sigma / 4 over +-6 sigma, failing below p = 1e-6 (at this sigma
 *    the discrete Gaussian's bin masses are the normal's to ~exp(-2 pi^2
 *    sigma^2), so the normal cdf gives them); its power: the same samples
 *    against sigma 1.05 times too large must fail (the expected X^2 excess
 *    is ~n 0.1^2 / 2 ~ 1000 on ~48 bins: it fails with certainty in
 *    practice);
 *  - no noise is used twice: the 2000 step vectors' first two coordinates
 *    are all distinct (two equal pairs of independent N_Z(0, sigma^2) at
 *    this sigma: probability below 2000^2 / (4 pi sigma^2) ~ 1e-10), so a
 *    buffer consumed twice or a chunk drawn into the buffer being read
 *    cannot pass;
 *  - the same bits with no executor, a pool of 1 and a pool of 2 (its
 *    helper started), and the same as the reference built from
 *    noise_dgauss_fill_batched() chunk by chunk on the split generator;
 *  - a failing generator fails the step that would use its draws;
 *  - the pool's background call: in place with a pool of 1; with a pool
 *    of 2, given 5 ms before join(), on the helper (at least once in 20:
 *    the caller runs it itself only when no helper has taken it);
 *    join() waits for it.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "privacy/noise.h"
#include "rng.h"
#include "run_pool.h"

#define P_FAIL 1e-6
#define DIM    101
#define STEPS  2000
#define K      26

static struct dgauss_params
params(void)
{
	struct dgauss_params p;
	struct err e = { 0 };

	ck_assert_msg(noise_dgauss_prepare_real(0.9 * ldexp(1.0, K), &p, &e) == ERR_OK, "%s",
		      e.msg);
	return p;
}

/* Upper regularized gamma Q(a, x) (series or continued fraction), for
 * the chi-square p-value Q(df / 2, X^2 / 2). */
static double
gamma_q(double a, double x)
{
	double gln = lgamma(a);

	if (x <= 0.0)
		return 1.0;
	if (x < a + 1.0) {
		double ap = a, sum = 1.0 / a, del = sum;

		for (int n = 0; n < 10000; n++) {
			ap += 1.0;
			del *= x / ap;
			sum += del;
			if (fabs(del) < fabs(sum) * 1e-15)
				break;
		}
		return 1.0 - sum * exp(-x + a * log(x) - gln);
	}
	{
		double b = x + 1.0 - a, c = 1.0 / 1e-300, d = 1.0 / b, h = d;

		for (int i = 1; i < 10000; i++) {
			double an = -i * (i - a), del;

			b += 2.0;
			d = an * d + b;
			if (fabs(d) < 1e-300)
				d = 1e-300;
			c = b + an / c;
			if (fabs(c) < 1e-300)
				c = 1e-300;
			d = 1.0 / d;
			del = d * c;
			h *= del;
			if (fabs(del - 1.0) < 1e-15)
				break;
		}
		return exp(-x + a * log(x) - gln) * h;
	}
}

/* p-value of the samples v[0..n) (lattice units) against N(0, s^2) in
 * bins of s0 / 4 over +-6 s0 plus two tails (s0 the sampler's sigma). */
static double
chi2_normal(const double *v, size_t n, double s0, double s)
{
	enum { NB = 48 };
	double cnt[NB + 2] = { 0 }, x2 = 0.0, w = s0 / 4.0;

	for (size_t i = 0; i < n; i++) {
		double b = floor(v[i] / w) + NB / 2;

		cnt[b < 0 ? 0 : b >= NB ? NB + 1 : (size_t)b + 1] += 1.0;
	}
	for (int i = 0; i < NB + 2; i++) {
		/* bin i covers [lo, hi) in units of w, tails to infinity */
		double lo = i == 0 ? -INFINITY : (double)(i - 1 - NB / 2) * w;
		double hi = i == NB + 1 ? INFINITY : (double)(i - NB / 2) * w;
		double p = 0.5 * (erfc(lo / (s * sqrt(2.0))) - erfc(hi / (s * sqrt(2.0))));
		double ex = p * (double)n;

		x2 += (cnt[i] - ex) * (cnt[i] - ex) / ex;
	}
	return gamma_q((NB + 1) / 2.0, x2 / 2.0);
}

/* The noise of steps steps (g = 0, b = 1: the release is the noise, in
 * lattice units after scaling by 2^K), through a stream on exec. */
static void
draw_steps(uint64_t seed, const struct alg_exec *exec, const double *in, double *out, size_t steps)
{
	struct dgauss_params p = params();
	struct onepass_noise nz;
	struct err e = { 0 };
	struct rng r;

	rng_splitmix_init(&r, seed);
	ck_assert_int_eq(onepass_noise_init(&nz, &r, &p, K, DIM, steps, exec, &e), ERR_OK);
	for (size_t t = 0; t < steps; t++) {
		double *g = out + t * DIM;

		for (size_t j = 0; j < DIM; j++)
			g[j] = in != NULL ? in[t * DIM + j] : 0.0;
		ck_assert_msg(onepass_noise_mean(&nz, g, 1, &e) == ERR_OK, "step %zu: %s", t,
			      e.msg);
	}
	/* past the plan: refused */
	ck_assert_int_ne(onepass_noise_mean(&nz, out, 1, &e), ERR_OK);
	onepass_noise_free(&nz);
	onepass_noise_free(&nz); /* idempotent */
}

static int
cmp_pair(const void *a, const void *b)
{
	const double *x = a, *y = b;

	if (x[0] != y[0])
		return (x[0] > y[0]) - (x[0] < y[0]);
	return (x[1] > y[1]) - (x[1] < y[1]);
}

START_TEST(test_stream_law)
{
	size_t n = (size_t)STEPS * DIM;
	double *v = malloc(n * sizeof(*v)), *pairs = malloc(2 * STEPS * sizeof(*pairs));
	double s0 = 0.9 * ldexp(1.0, K), pv, pv_wrong;
	struct run_pool pool;
	size_t same = 0;

	ck_assert_ptr_nonnull(v);
	ck_assert_ptr_nonnull(pairs);
	run_pool_init(&pool, 2);
	draw_steps(2027, &pool.exec, NULL, v, STEPS);
	ck_assert_msg(pool.started == 1, "the helper thread did not start");
	run_pool_clear(&pool);
	for (size_t i = 0; i < n; i++) {
		v[i] = ldexp(v[i], K); /* exact: an integer below 2^53 */
		ck_assert(v[i] == nearbyint(v[i]));
	}
	pv = chi2_normal(v, n, s0, s0);
	pv_wrong = chi2_normal(v, n, s0, 1.05 * s0);
	printf("onepass noise: %zu samples at sigma %.4g: chi-square p = %.4g; against 1.05 sigma "
	       "p = %.3g\n",
	       n, s0, pv, pv_wrong);
	ck_assert_msg(pv >= P_FAIL, "the drawn-ahead noise is not N_Z(0, sigma^2): p = %g", pv);
	ck_assert_msg(pv_wrong < P_FAIL, "the check has no power: p = %g at 1.05 sigma", pv_wrong);
	for (size_t t = 0; t < STEPS; t++) {
		pairs[2 * t] = v[t * DIM];
		pairs[2 * t + 1] = v[t * DIM + 1];
	}
	qsort(pairs, STEPS, 2 * sizeof(double), cmp_pair);
	for (size_t t = 1; t < STEPS; t++)
		same += pairs[2 * t] == pairs[2 * t - 2] && pairs[2 * t + 1] == pairs[2 * t - 1];
	ck_assert_msg(same == 0, "%zu step vectors repeat an earlier one", same);
	free(v);
	free(pairs);
}
END_TEST

START_TEST(test_stream_threads_identical)
{
	/* chunks of min(16384 / 101, ceil(400 / 4)) = 100 steps */
	size_t steps = 400, n = steps * DIM, chunk = (steps + 3) / 4;
	double *in = malloc(n * sizeof(double)), *out[3], *ref = malloc(n * sizeof(double));
	struct noise_i128 *wide = malloc(chunk * DIM * sizeof(*wide));
	struct dgauss_params p = params();
	struct rng r, *child;
	struct err e = { 0 };

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(ref);
	ck_assert_ptr_nonnull(wide);
	ck_assert_uint_lt(chunk, ONEPASS_NOISE_CHUNK / DIM);
	rng_splitmix_init(&r, 99);
	for (size_t i = 0; i < n; i++)
		in[i] = 2.0 * rng_uniform(&r) - 1.0;
	for (int t = 0; t < 3; t++) {
		struct run_pool pool;

		out[t] = malloc(n * sizeof(double));
		ck_assert_ptr_nonnull(out[t]);
		run_pool_init(&pool, (unsigned)t);
		draw_steps(7, t == 0 ? NULL : &pool.exec, in, out[t], steps);
		if (t == 2)
			ck_assert_msg(pool.started == 1, "the helper thread did not start");
		run_pool_clear(&pool);
	}
	ck_assert_msg(memcmp(out[0], out[1], n * sizeof(double)) == 0,
		      "a pool of 1 differs from no executor");
	ck_assert_msg(memcmp(out[0], out[2], n * sizeof(double)) == 0,
		      "a pool of 2 differs from no executor");
	/* the reference: chunks of whole steps from the split generator */
	rng_splitmix_init(&r, 7);
	child = rng_split(&r, &e);
	ck_assert_ptr_nonnull(child);
	for (size_t t0 = 0; t0 < steps; t0 += chunk) {
		size_t m = steps - t0 < chunk ? steps - t0 : chunk;

		noise_dgauss_fill_batched(child, &p, wide, m * DIM);
		for (size_t t = t0; t < t0 + m; t++) {
			memcpy(ref + t * DIM, in + t * DIM, DIM * sizeof(double));
			ck_assert_int_eq(
				noise_lattice_add(wide + (t - t0) * DIM, K, ref + t * DIM, DIM, &e),
				ERR_OK);
		}
	}
	rng_free(child);
	ck_assert_msg(memcmp(out[0], ref, n * sizeof(double)) == 0,
		      "the stream differs from its chunked reference");
	for (int t = 0; t < 3; t++)
		free(out[t]);
	free(in);
	free(ref);
	free(wide);
}
END_TEST

static bool
refill_fails(struct rng *r)
{
	(void)r;
	return false;
}

static void
heap_free(struct rng *r)
{
	free(r);
}

/* A child whose source fails at its first refill. */
static struct rng *
split_failing(struct rng *r, struct err *e)
{
	struct rng *c = malloc(sizeof(*c));

	(void)r;
	(void)e;
	ck_assert_ptr_nonnull(c);
	rng_splitmix_init(c, 1);
	c->refill = refill_fails;
	c->destroy = heap_free;
	return c;
}

START_TEST(test_stream_failing_generator)
{
	struct dgauss_params p = params();
	struct onepass_noise nz;
	struct err e = { 0 };
	struct rng r;
	double g[DIM] = { 0 };

	for (unsigned t = 1; t <= 2; t++) {
		struct run_pool pool;

		run_pool_init(&pool, t);
		rng_splitmix_init(&r, 3);
		r.split = split_failing;
		ck_assert_int_eq(onepass_noise_init(&nz, &r, &p, K, DIM, 10, &pool.exec, &e),
				 ERR_OK);
		ck_assert_int_ne(onepass_noise_mean(&nz, g, 1, &e), ERR_OK);
		onepass_noise_free(&nz);
		run_pool_clear(&pool);
	}
}
END_TEST

struct bg_arg {
	pthread_t caller, ran_on;
	int calls;
};

static void
bg_fn(void *arg)
{
	struct bg_arg *a = arg;

	a->ran_on = pthread_self();
	a->calls++;
}

START_TEST(test_pool_background)
{
	for (unsigned t = 1; t <= 2; t++) {
		struct run_pool pool;
		struct bg_arg a = { .caller = pthread_self() };

		run_pool_init(&pool, t);
		pool.exec.join(pool.exec.ctx); /* nothing pending: returns */
		for (int i = 0; i < 3; i++) {
			pool.exec.background(pool.exec.ctx, bg_fn, &a);
			pool.exec.join(pool.exec.ctx);
			ck_assert_int_eq(a.calls, i + 1);
		}
		if (t == 1)
			ck_assert_msg(pthread_equal(a.ran_on, a.caller),
				      "a pool of 1 ran it elsewhere");
		run_pool_clear(&pool);
	}
	/* a pool of 2 whose helper is running: the call goes to it */
	{
		struct run_pool pool;
		struct bg_arg a = { .caller = pthread_self() };
		int other = 0;

		run_pool_init(&pool, 2);
		for (int i = 0; i < 20; i++) {
			struct timespec ms5 = { 0, 5000000 };

			pool.exec.background(pool.exec.ctx, bg_fn, &a);
			nanosleep(&ms5, NULL); /* time for the helper to take it */
			pool.exec.join(pool.exec.ctx);
			other += !pthread_equal(a.ran_on, a.caller);
		}
		ck_assert_int_eq(a.calls, 20);
		ck_assert_msg(pool.started == 1, "the helper thread did not start");
		ck_assert_msg(other > 0, "no background call ran on the helper");
		printf("pool of 2: %d of 20 background calls ran on the helper\n", other);
		run_pool_clear(&pool);
	}
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("onepass_noise");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_stream_law);
	tcase_add_test(tc, test_stream_threads_identical);
	tcase_add_test(tc, test_stream_failing_generator);
	tcase_add_test(tc, test_pool_background);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
