/*
 * test_rng_gauss.c - the non-privacy samplers of common/rng_gauss.h and
 * the uniform draws of rng.h they document as sanctioned: goodness of fit
 * against the exact distributions, moments, the sphere's uniformity, a
 * failed generator.
 *
 * False failures.  Every statistical check rejects at probability at most
 * 1e-6 under a correct sampler (stated at each check); the seeds are
 * fixed, so a run either passes or fails for ever, and the 1e-6 is the
 * chance that a correct sampler would have been unlucky on these seeds.
 * With 13 such checks the whole file falsely fails with probability below
 * 2e-5.  Sizes: about 1 s of CPU in a debugoptimized build.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "rng_gauss.h"

#define ALPHA 1e-6

/* Upper ALPHA point of the Kolmogorov distribution, from its first term
 * 2 exp(-2 t^2) (the series alternates, so this over-states the level by
 * a relative 1e-6 at most): P(sqrt(n) D_n > t) <= ALPHA asymptotically. */
static double
ks_critical(void)
{
	return sqrt(log(2.0 / ALPHA) / 2.0);
}

/* Upper ALPHA point of chi-square with k degrees of freedom by the
 * Wilson-Hilferty cube (relative error under 1% for k >= 10 at this
 * level); z = 4.7534 is the upper 1e-6 point of N(0, 1). */
static double
chi2_critical(int k)
{
	double c = 2.0 / (9.0 * k), t = 1.0 - c + 4.7534 * sqrt(c);

	return k * t * t * t;
}

static double
normal_cdf(double z)
{
	return 0.5 * erfc(-z / sqrt(2.0));
}

static int
cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* sqrt(n) sup |F_n - F| of the n values v (sorted here) against cdf. */
static double
ks_stat(double *v, size_t n, double (*cdf)(double))
{
	double dmax = 0.0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++) {
		double f = cdf(v[i]);

		dmax = fmax(dmax, fmax(f - (double)i / n, (double)(i + 1) / n - f));
	}
	return sqrt((double)n) * dmax;
}

START_TEST(test_normal_ks)
{
	enum { N = 1000000 };
	struct rng r;
	double *v = malloc(N * sizeof(*v)), t;

	ck_assert_ptr_nonnull(v);
	rng_splitmix_init(&r, 0x216a7);
	for (size_t i = 0; i < N; i++)
		v[i] = rng_normal(&r);
	t = ks_stat(v, N, normal_cdf);
	printf("rng_normal: KS sqrt(n) D = %.4f (reject above %.4f, level 1e-6)\n", t,
	       ks_critical());
	ck_assert_msg(t < ks_critical(), "KS %.4f", t);
	free(v);
}
END_TEST

/*
 * Chi-square on bins of width 0.25 over [-4.5, 4.5] and the two outer
 * rays (expected count 34 each at n = 1e7), so the tail algorithm beyond
 * R = 3.654 and the wedges are each tested on their own bins.
 */
START_TEST(test_normal_chi2_with_tails)
{
	enum { N = 10000000, NB = 38 };
	struct rng r;
	double cnt[NB] = { 0 }, chi2 = 0.0;

	rng_splitmix_init(&r, 0xc412);
	for (size_t i = 0; i < N; i++) {
		double z = rng_normal(&r);
		int b = z < -4.5 ? 0 : z >= 4.5 ? NB - 1 : 1 + (int)floor((z + 4.5) / 0.25);

		if (b == NB - 1 && z < 4.5) /* rounding of (z + 4.5) / 0.25 just below 36 */
			b = NB - 2;
		cnt[b]++;
	}
	for (int b = 0; b < NB; b++) {
		double lo = b == 0 ? -INFINITY : -4.5 + 0.25 * (b - 1);
		double hi = b == NB - 1 ? INFINITY : -4.5 + 0.25 * b;
		double p = b == 0        ? normal_cdf(hi)
			   : b == NB - 1 ? normal_cdf(-lo)
					 : normal_cdf(hi) - normal_cdf(lo);
		double ex = N * p;

		chi2 += (cnt[b] - ex) * (cnt[b] - ex) / ex;
	}
	printf("rng_normal: chi-square %.2f on %d df (reject above %.2f, level 1e-6); "
	       "tails %.0f, %.0f (expected %.1f)\n",
	       chi2, NB - 1, chi2_critical(NB - 1), cnt[0], cnt[NB - 1], N * normal_cdf(-4.5));
	ck_assert_msg(chi2 < chi2_critical(NB - 1), "chi-square %.2f", chi2);
}
END_TEST

/* Mean, variance, kurtosis and P(|Z| > R) each within 5.3 standard errors
 * (two-sided normal tail 1.2e-7 each). */
START_TEST(test_normal_moments)
{
	enum { N = 4000000 };
	const double R = 3.6541528853610088, p_tail = 2.0 * normal_cdf(-R);
	struct rng r;
	double m = 0.0, v = 0.0, k4 = 0.0, tails = 0.0;

	rng_splitmix_init(&r, 0x3011);
	for (size_t i = 0; i < N; i++) {
		double z = rng_normal(&r);

		m += z;
		v += z * z;
		k4 += z * z * z * z;
		tails += fabs(z) > R;
	}
	m /= N;
	v /= N;
	k4 /= N;
	tails /= N;
	printf("rng_normal: mean %.5f var %.5f E z^4 %.4f P(|z| > R) %.3e (exact %.3e)\n", m, v, k4,
	       tails, p_tail);
	ck_assert(fabs(m) < 5.3 / sqrt(N));
	ck_assert(fabs(v - 1.0) < 5.3 * sqrt(2.0 / N));
	ck_assert(fabs(k4 - 3.0) < 5.3 * sqrt(96.0 / N));
	ck_assert(fabs(tails - p_tail) < 5.3 * sqrt(p_tail / N));
	ck_assert(rng_ok(&r));
}
END_TEST

/* The vector fill is the scalar sampler in order: same seed, same draws. */
START_TEST(test_vector_is_scalar_stream)
{
	struct rng a, b;
	double x[33];

	rng_splitmix_init(&a, 77);
	rng_splitmix_init(&b, 77);
	rng_normal_vector(&a, x, 33);
	for (int j = 0; j < 33; j++)
		ck_assert(x[j] == rng_normal(&b));
	rng_normal_vector(&a, x, 0); /* d = 0 draws nothing */
	ck_assert(rng_normal(&a) == rng_normal(&b));
}
END_TEST

static double
uniform_pm1_cdf(double t)
{
	return t <= -1.0 ? 0.0 : t >= 1.0 ? 1.0 : (t + 1.0) / 2.0;
}

static double
uniform01_cdf(double t)
{
	return t <= 0.0 ? 0.0 : t >= 1.0 ? 1.0 : t;
}

/*
 * Uniform on the sphere: unit norm; in d = 3 each coordinate is uniform
 * on [-1, 1] (Archimedes), in d = 2 the angle is uniform (KS, level 1e-6
 * each); in d = 8 the second moments are 1/d and the cross moments 0
 * (5.3 standard errors each, the variance of x_j^2 being
 * 2(d - 1)/(d^2 (d + 2)) and of x_i x_j 1/(d (d + 2))).
 */
START_TEST(test_sphere_uniform)
{
	enum { N = 200000, D = 8 };
	struct rng r;
	double *a = malloc(N * sizeof(*a)), *z = malloc(N * sizeof(*z)), x[D];
	double m2[D] = { 0 }, cross = 0.0, ta, tz;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(z);
	rng_splitmix_init(&r, 0x5fe4e);
	for (size_t i = 0; i < N; i++) {
		rng_sphere(&r, x, 3);
		ck_assert(fabs(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] - 1.0) < 1e-15);
		z[i] = x[2];
		rng_sphere(&r, x, 2);
		ck_assert(fabs(hypot(x[0], x[1]) - 1.0) < 1e-15);
		a[i] = atan2(x[1], x[0]) / acos(-1.0); /* uniform on (-1, 1] */
		rng_sphere(&r, x, D);
		for (int j = 0; j < D; j++)
			m2[j] += x[j] * x[j];
		cross += x[0] * x[D - 1];
	}
	tz = ks_stat(z, N, uniform_pm1_cdf);
	ta = ks_stat(a, N, uniform_pm1_cdf);
	printf("rng_sphere: KS d=3 coordinate %.4f, d=2 angle %.4f (reject above %.4f)\n", tz, ta,
	       ks_critical());
	ck_assert_msg(tz < ks_critical(), "d = 3: KS %.4f", tz);
	ck_assert_msg(ta < ks_critical(), "d = 2: KS %.4f", ta);
	for (int j = 0; j < D; j++)
		ck_assert_msg(fabs(m2[j] / N - 1.0 / D) <
				      5.3 * sqrt(2.0 * (D - 1) / (D * D * (D + 2.0)) / N),
			      "E x_%d^2 = %.5f", j, m2[j] / N);
	ck_assert_msg(fabs(cross / N) < 5.3 * sqrt(1.0 / (D * (D + 2.0)) / N), "E x_0 x_7 = %.5f",
		      cross / N);
	rng_sphere(&r, x, 1); /* the 0-sphere is {-1, 1} */
	ck_assert(fabs(x[0]) == 1.0);
	free(a);
	free(z);
}
END_TEST

/* rng_uniform: in [0, 1) and uniform (KS, level 1e-6). */
START_TEST(test_uniform_ks)
{
	enum { N = 1000000 };
	struct rng r;
	double *v = malloc(N * sizeof(*v)), t;

	ck_assert_ptr_nonnull(v);
	rng_splitmix_init(&r, 0xf1a7);
	for (size_t i = 0; i < N; i++) {
		v[i] = rng_uniform(&r);
		ck_assert(v[i] >= 0.0 && v[i] < 1.0);
	}
	t = ks_stat(v, N, uniform01_cdf);
	ck_assert_msg(t < ks_critical(), "KS %.4f", t);
	free(v);
}
END_TEST

/*
 * rng_below without modulo bias.  bound = 3 * 2^62: a plain v % bound
 * would put the values below 2^62 twice as often as the others (2^64 =
 * bound + 2^62), so thirds of the range by chi-square (2 df, level 1e-6:
 * 27.63) see it at once; bound = 7 over its 7 values (6 df: 39.7, from
 * chi2_critical).
 */
START_TEST(test_below_unbiased)
{
	enum { N = 300000 };
	const uint64_t big = 3ULL << 62, third = 1ULL << 62;
	struct rng r;
	double c3[3] = { 0 }, c7[7] = { 0 }, chi3 = 0.0, chi7 = 0.0;

	rng_splitmix_init(&r, 0xb0b);
	for (size_t i = 0; i < N; i++) {
		uint64_t v = rng_below(&r, big), s = rng_below(&r, 7);

		ck_assert(v < big && s < 7);
		c3[v / third]++;
		c7[s]++;
	}
	for (int k = 0; k < 3; k++)
		chi3 += (c3[k] - N / 3.0) * (c3[k] - N / 3.0) / (N / 3.0);
	for (int k = 0; k < 7; k++)
		chi7 += (c7[k] - N / 7.0) * (c7[k] - N / 7.0) / (N / 7.0);
	printf("rng_below: chi-square thirds %.2f (reject above 27.63), sevenths %.2f\n", chi3,
	       chi7);
	ck_assert_msg(chi3 < 27.63, "thirds of 3 * 2^62: chi-square %.2f", chi3);
	ck_assert_msg(chi7 < 39.7, "bound 7: chi-square %.2f", chi7);
	ck_assert(rng_below(&r, 1) == 0);
}
END_TEST

static bool
refill_fails(struct rng *r)
{
	return false;
}

/* A failed generator: every sampler returns (zeros), none spins. */
START_TEST(test_failed_generator_terminates)
{
	struct rng r;
	double x[5] = { 1, 1, 1, 1, 1 };

	rng_splitmix_init(&r, 1);
	r.refill = refill_fails;
	r.pos = RNG_BUFFER_BYTES; /* the next draw refills, and fails */
	ck_assert(rng_normal(&r) == 0.0);
	ck_assert(!rng_ok(&r));
	rng_sphere(&r, x, 5);
	for (int j = 0; j < 5; j++)
		ck_assert(x[j] == 0.0);
	rng_normal_vector(&r, x, 5);
	for (int j = 0; j < 5; j++)
		ck_assert(x[j] == 0.0);
}
END_TEST

static Suite *
rng_gauss_suite(void)
{
	Suite *s = suite_create("rng_gauss");
	TCase *tc = tcase_create("samplers");

	tcase_add_test(tc, test_normal_ks);
	tcase_add_test(tc, test_normal_chi2_with_tails);
	tcase_add_test(tc, test_normal_moments);
	tcase_add_test(tc, test_vector_is_scalar_stream);
	tcase_add_test(tc, test_sphere_uniform);
	tcase_add_test(tc, test_uniform_ks);
	tcase_add_test(tc, test_below_unbiased);
	tcase_add_test(tc, test_failed_generator_terminates);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(rng_gauss_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
