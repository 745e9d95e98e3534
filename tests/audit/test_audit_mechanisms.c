/*
 * test_audit_mechanisms.c - level 1 of the privacy audits (docs/privacy-model.md
 * §7; tests/audit/README.md): the continuous Gaussian mechanism
 * (the polar-method sampler dp_sgd.one_pass drew before the lattice
 * Gaussian; test-only, tests/support/polar_gaussian.h), black box.
 *
 * Mechanism.  A scalar query whose neighbours differ by Delta (world A:
 * q = Delta, world B: q = 0) released as q + N(0, sigma^2) through
 * polar_add_gaussian(), with sigma = z Delta and z = ag_calibrate(1, 1e-5)
 * (3.7306), the calibration dp_sgd uses in basic mode.  The claim is what
 * the accountant reports for the event {gaussian z}: epsilon = 1 (a hair
 * below) at delta = 1e-5.  Statistic: the released value itself (for two
 * Gaussians of equal variance the likelihood ratio is monotone in it, so
 * threshold tests lose nothing).
 *
 * Bound: Bonferroni grid of 73 thresholds Delta/2 + u sigma, u = -4.5,
 * -4.375, .., 4.5 (sigma the claimed one), both directions: 292 one-sided
 * Clopper-Pearson bounds at 1e-6 / 292 = 3.4e-9 each, so the probability
 * that a correct mechanism fails the audit is at most 1e-6.
 *
 * Mutation twin: the test multiplies sigma by 0.5 (the scale is a
 * parameter of this test's sampler; noise.c is untouched).  Computed
 * before writing it, on the analytic curve: the mutated mechanism has
 * z' = z / 2 = 1.8653 (mu = 0.536), epsilon(delta = 1e-5) = 2.155 > 1.
 * Power (audit_power(), exact binomial sums): the best single grid test is
 * "up" at u = 1.125 (2.25 mutated sigmas; TPR 0.0344, FPR 0.00578 per
 * draw); with N draws per side the bound exceeds the claim with
 * probability 0.927 (N = 110,000), 0.9989 (N = 150,000), 0.9997
 * (N = 160,000), 1 - 8e-7 (N = 200,000): power 0.999 needs N >= 151,000
 * per side.  Draws cost about 0.1 us, so both audits use N = 1,000,000 per
 * side (miss probability below 1e-20, recomputed and asserted <= 1e-3
 * below), about 1.5 s in all.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "audit.h"
#include "privacy/accountant.h"
#include "privacy/analytic_gaussian.h"
#include "privacy/event.h"
#include "polar_gaussian.h"

#define CLAIM_EPS   1.0
#define CLAIM_DELTA 1e-5
#define ALPHA       1e-6
#define N_DRAWS     1000000
#define GRID_K      73
#define GRID_U      4.5
#define DELTA_Q     0.37 /* any sensitivity: the audit is scale-free */

struct gauss_mech {
	double delta_q; /* |q(A) - q(B)| */
	double sigma;   /* the noise actually drawn */
};

/* The release q + N(0, sigma^2), drawn as dp_sgd draws it. */
static double
gauss_sample(void *ctx, int world, struct rng *r)
{
	const struct gauss_mech *m = ctx;
	double x = world == 0 ? m->delta_q : 0.0;

	polar_add_gaussian(r, m->sigma, &x, 1);
	return x;
}

/* z and the accountant's epsilon for {gaussian z}: the claim audited. */
static double
claimed(double *ret_z)
{
	double eps = audit_gauss_claim(CLAIM_EPS, CLAIM_DELTA, ret_z);

	ck_assert_msg(eps > 0.0 && eps <= CLAIM_EPS, "claim: %g", eps); /* NAN fails too */
	return eps;
}

/* Draw, bound, print; returns epsilon_lb. */
static double
gauss_audit(const char *name, double scale, uint64_t seed, double eps_claim)
{
	double z, t0 = audit_now();
	struct gauss_mech m;
	struct audit_config c;
	struct audit_result r;
	double *a = malloc(N_DRAWS * sizeof(*a)), *b = malloc(N_DRAWS * sizeof(*b));

	ck_assert(a != NULL && b != NULL);
	claimed(&z);
	m.delta_q = DELTA_Q;
	m.sigma = z * DELTA_Q * scale;
	c = (struct audit_config){ .name = name,
				   .delta = CLAIM_DELTA,
				   .alpha = ALPHA,
				   .method = AUDIT_GRID,
				   .lo = DELTA_Q / 2 - GRID_U * z * DELTA_Q,
				   .hi = DELTA_Q / 2 + GRID_U * z * DELTA_Q,
				   .k = GRID_K };
	audit_draw(gauss_sample, &m, 0, seed, a, N_DRAWS);
	audit_draw(gauss_sample, &m, 1, seed ^ 0x5bd1e995u, b, N_DRAWS);
	ck_assert_int_eq(audit_eps_lb(&c, a, N_DRAWS, b, N_DRAWS, &r), 0);
	audit_print(stdout, &c, &r, eps_claim);
	printf("audit %s: N = %d per side, sigma scale %.2f, wall time %.2f s\n", name, N_DRAWS,
	       scale, audit_now() - t0);
	free(a);
	free(b);
	return r.eps_lb;
}

START_TEST(test_gaussian_mechanism)
{
	double z, eps = claimed(&z);
	double lb = gauss_audit("level1/gaussian", 1.0, 0x6a09e667f3bcc908u, eps);

	ck_assert_msg(lb <= eps, "Gaussian mechanism: eps_lb %.4f > claimed %.4f", lb, eps);
}
END_TEST

START_TEST(test_gaussian_mechanism_mutated)
{
	double z, eps = claimed(&z), eps_true, miss, lb;
	/* The planned test: grid index 45, u = 1.125 claimed sigmas above
	 * the midpoint, i.e. 2.25 mutated sigmas. */
	const double u = -GRID_U + 2.0 * GRID_U * 45 / (GRID_K - 1);
	const double sm = 0.5 * z; /* mutated sigma in units of Delta */
	struct err e = { 0 };

	ck_assert_int_eq(ag_epsilon_mu(2.0 / z, CLAIM_DELTA, &eps_true, &e), ERR_OK);
	miss = audit_miss(N_DRAWS, audit_normal_sf((0.5 + u * z - 1.0) / sm), N_DRAWS,
			  audit_normal_sf((0.5 + u * z) / sm), ALPHA / (4.0 * GRID_K), CLAIM_DELTA,
			  eps);
	printf("level1/gaussian-mutated: sigma x 0.5, true eps(%.0e) = %.4f; power at u = %.3f "
	       "with N = %d: P[mutation missed] <= %.2g\n",
	       CLAIM_DELTA, eps_true, u, N_DRAWS, miss);
	ck_assert(eps_true > eps);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.6f", miss);

	lb = gauss_audit("level1/gaussian-mutated", 0.5, 0xbb67ae8584caa73bu, eps);
	ck_assert_msg(lb > eps, "sigma x 0.5 not detected: eps_lb %.4f <= claimed %.4f", lb, eps);
}
END_TEST

static Suite *
mechanisms_suite(void)
{
	Suite *s = suite_create("audit_mechanisms");
	TCase *tc = tcase_create("gaussian");

	tcase_set_timeout(tc, 300); /* seconds in release; minutes under sanitizers */
	tcase_add_test(tc, test_gaussian_mechanism);
	tcase_add_test(tc, test_gaussian_mechanism_mutated);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(mechanisms_suite());
	double t0 = audit_now();
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	printf("test_audit_mechanisms: wall time %.2f s\n", audit_now() - t0);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
