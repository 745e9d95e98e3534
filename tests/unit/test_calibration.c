/*
 * test_calibration.c - unit tests of the privacy primitives of the
 * algorithm layer: the analytic Gaussian curve and its calibration
 * (privacy/analytic_gaussian.c), the event names (privacy/event.c) and the
 * continuous Gaussian sampler the level-1 audit uses (test-only,
 * tests/support/polar_gaussian.c).
 *
 * Reference values: docs/privacy-model.md §3 (eps = 1, delta = 1e-5 needs
 * z = 3.7306, the classical bound gives 4.8448; mu = 1 has delta(1) =
 * 0.126936).  The sampler tests use fixed seeds and 6-sigma bounds, so a
 * false failure has probability below 1e-8 per check.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "privacy/analytic_gaussian.h"
#include "privacy/event.h"
#include "polar_gaussian.h"
#include "rng.h"

/* Phi(x) the plain way, fine where neither term underflows. */
static double
phi_naive(double x)
{
	return 0.5 * erfc(-x / sqrt(2.0));
}

static double
delta_naive(double z, double eps)
{
	double mu = 1.0 / z;

	return phi_naive(-eps / mu + mu / 2) - exp(eps) * phi_naive(-eps / mu - mu / 2);
}

static double
delta_of(double z, double eps)
{
	struct err e = { 0 };
	double d = -1.0;

	ck_assert_msg(ag_delta(z, eps, &d, &e) == ERR_OK, "ag_delta(%g, %g): %s", z, eps, e.msg);
	return d;
}

START_TEST(test_reference_value)
{
	struct err e = { 0 };
	double z = 0.0, classical = sqrt(2.0 * log(1.25 / 1e-5)) / 1.0;

	ck_assert_int_eq(ag_calibrate(1.0, 1e-5, &z, &e), ERR_OK);
	printf("calibrate(eps=1, delta=1e-5): z = %.10f (classical %.4f)\n", z, classical);
	fflush(stdout);
	ck_assert_double_eq_tol(z, 3.7306, 5e-5);
	ck_assert_double_eq_tol(classical, 4.8448, 5e-5);
	ck_assert(z < classical);
	/* mu = 1: the three-Gaussian value of docs/privacy-model.md §3 (0.126936,
	 * from a discretised PLD; the closed form gives 0.12693674). */
	ck_assert_double_eq_tol(delta_of(1.0, 1.0), 0.1269367375066439, 1e-13);
}
END_TEST

START_TEST(test_matches_naive_formula)
{
	static const double zs[] = { 0.3, 0.7, 1.0, 2.5, 4.0, 9.0 };
	static const double epss[] = { 0.0, 0.05, 0.5, 1.0, 2.0, 4.0 };

	for (size_t i = 0; i < sizeof(zs) / sizeof(zs[0]); i++)
		for (size_t j = 0; j < sizeof(epss) / sizeof(epss[0]); j++) {
			double got = delta_of(zs[i], epss[j]);
			double want = delta_naive(zs[i], epss[j]);

			if (want < 1e-8)
				continue; /* the naive form has lost its digits */
			ck_assert_msg(fabs(got - want) <= 1e-10 * want,
				      "z=%g eps=%g: %.17g vs %.17g", zs[i], epss[j], got, want);
		}
}
END_TEST

START_TEST(test_monotone)
{
	double prev;

	/* delta(eps) falls as z grows ... */
	prev = 2.0;
	for (double z = 0.05; z < 2000.0; z *= 1.07) {
		double d = delta_of(z, 1.0);

		ck_assert_msg(d >= 0.0 && d <= 1.0, "z=%g: delta %g", z, d);
		/* decreasing up to the rounding of a value near 0 or 1 */
		ck_assert_msg(d < prev || d - prev <= 4.0 * DBL_EPSILON * prev,
			      "not decreasing in z at %g: %.17g > %.17g", z, d, prev);
		prev = d;
	}
	/* ... and as eps grows. */
	prev = 2.0;
	for (double eps = 0.0; eps < 20.0; eps += 0.137) {
		double d = delta_of(3.0, eps);

		ck_assert_msg(d < prev || (d == prev && d == 0.0), "not decreasing in eps at %g",
			      eps);
		prev = d;
	}
	/* The calibrated z falls as either target loosens. */
	prev = INFINITY;
	for (double eps = 0.01; eps < 30.0; eps *= 1.5) {
		double z;

		ck_assert_int_eq(ag_calibrate(eps, 1e-6, &z, NULL), ERR_OK);
		ck_assert_msg(z < prev, "z not decreasing in eps at %g", eps);
		prev = z;
	}
	prev = INFINITY;
	for (double delta = 1e-14; delta < 0.9; delta *= 3.1) {
		double z;

		ck_assert_int_eq(ag_calibrate(1.0, delta, &z, NULL), ERR_OK);
		ck_assert_msg(z < prev, "z not decreasing in delta at %g", delta);
		prev = z;
	}
}
END_TEST

START_TEST(test_round_trip)
{
	static const double epss[] = { 0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 40.0 };
	static const double deltas[] = { 0.1, 1e-3, 1e-5, 1e-6, 1e-9, 1e-12 };

	for (size_t i = 0; i < sizeof(epss) / sizeof(epss[0]); i++)
		for (size_t j = 0; j < sizeof(deltas) / sizeof(deltas[0]); j++) {
			double eps = epss[i], delta = deltas[j], z = 0.0;
			struct err e = { 0 };

			ck_assert_msg(ag_calibrate(eps, delta, &z, &e) == ERR_OK,
				      "eps=%g delta=%g: %s", eps, delta, e.msg);
			ck_assert_msg(delta_of(z, eps) <= delta, "eps=%g delta=%g: z=%.17g unsafe",
				      eps, delta, z);
			/* Smallest: 0.1 % less noise already misses the target,
			 * and so does 1e-8 less (the search is to 1e-9). */
			ck_assert_msg(delta_of(0.999 * z, eps) > delta,
				      "eps=%g delta=%g: z too big", eps, delta);
			ck_assert_msg(delta_of(z * (1.0 - 1e-8), eps) > delta,
				      "eps=%g delta=%g: z not minimal to 1e-8", eps, delta);
			if (eps == 0.01 || eps == 10.0 || delta == 1e-12)
				printf("calibrate(eps=%g, delta=%g): z = %.9g\n", eps, delta, z);
		}
}
END_TEST

START_TEST(test_invalid_inputs)
{
	static const double bad_eps[] = { 0.0, -1.0, NAN, INFINITY, -INFINITY };
	static const double bad_delta[] = { 0.0, 1.0, -1e-6, 1.5, NAN, INFINITY };
	struct err e;
	double z;

	for (size_t i = 0; i < sizeof(bad_eps) / sizeof(bad_eps[0]); i++) {
		memset(&e, 0, sizeof(e));
		z = 42.0;
		ck_assert_int_eq(ag_calibrate(bad_eps[i], 1e-6, &z, &e), ERR_INVALID);
		ck_assert_str_eq(e.field, "privacy.epsilon");
		ck_assert(strstr(e.msg, "privacy.epsilon") != NULL);
		ck_assert(z == 42.0); /* ret_ untouched */
	}
	for (size_t i = 0; i < sizeof(bad_delta) / sizeof(bad_delta[0]); i++) {
		memset(&e, 0, sizeof(e));
		z = 42.0;
		ck_assert_int_eq(ag_calibrate(1.0, bad_delta[i], &z, &e), ERR_INVALID);
		ck_assert_str_eq(e.field, "privacy.delta");
		ck_assert(z == 42.0);
	}
	ck_assert_int_eq(ag_delta(0.0, 1.0, &z, NULL), ERR_INVALID);
	ck_assert_int_eq(ag_delta(-1.0, 1.0, &z, NULL), ERR_INVALID);
	ck_assert_int_eq(ag_delta(NAN, 1.0, &z, NULL), ERR_INVALID);
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(ag_delta(1.0, -0.5, &z, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "privacy.epsilon");
	ck_assert(z == 42.0);
}
END_TEST

START_TEST(test_far_tail_stays_finite)
{
	/* Large z: both terms far below DBL_MIN, yet delta is a tiny positive
	 * (or zero) number, never an error or NaN. */
	for (double z = 10.0; z < 1e4; z *= 2.0) {
		double d = delta_of(z, 1.0);

		ck_assert(d >= 0.0 && d < 1e-20);
	}
	/* Small eps, large z: strong cancellation between the terms. */
	ck_assert(delta_of(5000.0, 1e-3) > 0.0);
	ck_assert(delta_of(5000.0, 1e-3) < 1e-5);
}
END_TEST

START_TEST(test_event_names)
{
	ck_assert_str_eq(dp_relation_name(DP_REPLACE_ONE), "replace_one");
	ck_assert_str_eq(dp_relation_name(DP_ADD_REMOVE), "add_remove");
	ck_assert_str_eq(dp_event_type_name(DP_EVENT_GAUSSIAN), "gaussian");
	ck_assert_str_eq(dp_event_type_name(DP_EVENT_PARALLEL), "parallel");
}
END_TEST

START_TEST(test_noise_moments)
{
	enum { N = 2000001 }; /* odd: the last coordinate takes half a pair */
	const double sigma = 2.5385;
	struct rng r;
	double *x = calloc(N, sizeof(*x));
	double m = 0.0, v = 0.0, k4 = 0.0, inside = 0.0;

	ck_assert_ptr_nonnull(x);
	rng_splitmix_init(&r, 0x5eed2385);
	polar_add_gaussian(&r, sigma, x, N);
	ck_assert(rng_ok(&r));
	for (size_t i = 0; i < N; i++)
		m += x[i];
	m /= N;
	for (size_t i = 0; i < N; i++) {
		double c = (x[i] - m) / sigma;

		v += c * c;
		k4 += c * c * c * c;
		inside += fabs(x[i]) < sigma;
	}
	v /= N;
	k4 /= N;
	inside /= N;
	printf("noise: mean %.5f var/sigma^2 %.5f kurtosis %.4f P(|x|<sigma) %.5f\n", m / sigma, v,
	       k4, inside);
	/* 6 standard errors each. */
	ck_assert(fabs(m / sigma) < 6.0 / sqrt(N));
	ck_assert(fabs(v - 1.0) < 6.0 * sqrt(2.0 / N));
	ck_assert(fabs(k4 - 3.0) < 6.0 * sqrt(96.0 / N));
	ck_assert(fabs(inside - 0.682689492) < 6.0 * sqrt(0.2167 / N));
	ck_assert(isfinite(x[N - 1]) && x[N - 1] != 0.0);
	free(x);
}
END_TEST

START_TEST(test_noise_adds_and_is_reproducible)
{
	double a[7] = { 1, 2, 3, 4, 5, 6, 7 }, b[7] = { 1, 2, 3, 4, 5, 6, 7 };
	double z0[7] = { 0 };
	struct rng r1, r2;

	rng_splitmix_init(&r1, 99);
	rng_splitmix_init(&r2, 99);
	polar_add_gaussian(&r1, 0.3, a, 7);
	polar_add_gaussian(&r2, 0.3, b, 7);
	ck_assert(memcmp(a, b, sizeof(a)) == 0);
	for (int i = 0; i < 7; i++)
		ck_assert(a[i] != (double)(i + 1));
	polar_add_gaussian(&r1, 0.0, z0, 7);
	for (int i = 0; i < 7; i++)
		ck_assert(z0[i] == 0.0);
}
END_TEST

static bool
refill_fails(struct rng *r)
{
	return false;
}

START_TEST(test_noise_failed_generator_terminates)
{
	struct rng r;
	double x[9] = { 0 };

	rng_splitmix_init(&r, 1);
	r.refill = refill_fails;
	polar_add_gaussian(&r, 1.0, x, 9); /* must return, not spin */
	ck_assert(!rng_ok(&r));
}
END_TEST

static Suite *
calibration_suite(void)
{
	Suite *s = suite_create("calibration");
	TCase *tc = tcase_create("analytic_gaussian");
	TCase *tn = tcase_create("noise");

	tcase_add_test(tc, test_reference_value);
	tcase_add_test(tc, test_matches_naive_formula);
	tcase_add_test(tc, test_monotone);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_invalid_inputs);
	tcase_add_test(tc, test_far_tail_stays_finite);
	tcase_add_test(tc, test_event_names);
	suite_add_tcase(s, tc);
	tcase_set_timeout(tn, 60);
	tcase_add_test(tn, test_noise_moments);
	tcase_add_test(tn, test_noise_adds_and_is_reproducible);
	tcase_add_test(tn, test_noise_failed_generator_terminates);
	suite_add_tcase(s, tn);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(calibration_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
