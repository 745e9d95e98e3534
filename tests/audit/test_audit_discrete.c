/*
 * test_audit_discrete.c - level 1 of the privacy audits (docs/privacy-model.md
 * §7; tests/audit/README.md) for the exact discrete samplers and
 * the exponential mechanism, black box, each with its mutation twin.  Same
 * harness, same Bonferroni grid and power computation as
 * test_audit_mechanisms.c; confidence 1 - 1e-6 per audit, fixed seeds.
 *
 * 1. Discrete Gaussian on the lattice, as dp_sgd will draw it.  Scalar
 *    query, q(A) = Delta = 1, q(B) = 0 (both on the lattice).  k from
 *    noise_lattice_step(l2, 1, d = 1) (gamma = 2^-20), Delta' =
 *    noise_lattice_sensitivity() = 1 + gamma, sigma = z Delta' with z =
 *    ag_calibrate(1, 1e-5); noise through noise_lattice_gaussian().  Claim:
 *    the accountant's epsilon for {gaussian z} at delta = 1e-5 (1, a hair
 *    below).  Statistic: the released value.  Grid: 73 thresholds
 *    Delta/2 + u sigma, u = -4.5 .. 4.5, both directions (292 bounds at
 *    3.4e-9).  Twin: sigma x 0.5.  At sigma / gamma = 3.9e6 lattice units
 *    the discrete law is the continuous one to within ~1e-12 in every tail
 *    probability used, so the plan of test_audit_mechanisms.c carries
 *    over (each draw costs ~0.45 us): true epsilon of the twin
 *    (mu = 2 / (z Delta') = 0.536) 2.155 > 1; best grid test "up" at u = 1.125, power 0.999 from
 *    N >= 151,000 per side (recomputed below at the N used).
 *
 * 2. Discrete Laplace on the lattice.  Same query; k from
 *    noise_lattice_step(l1, 1, 1), Delta' from noise_lattice_sensitivity(l1),
 *    b = Delta' / epsilon, claim pure epsilon = 1 (the lattice values
 *    differ by Delta = 1 <= Delta', so the true epsilon is 1 / (1 + gamma)).
 *    The bound uses delta = 0.  Grid: 73 thresholds Delta/2 + u b,
 *    u = -4.5 .. 4.5, both directions.  Twin: b x 0.5, true epsilon
 *    2 / (1 + gamma) = 2.  For a shifted Laplace the ratio
 *    P_A(s >= t) / P_B(s >= t) is e^epsilon for every t >= Delta and
 *    smaller below, so the best test is the first grid point above Delta:
 *    "up" at u = 0.5 (t = 1 + gamma / 2), TPR = P(X >= 1 lattice unit) =
 *    0.5, FPR = P(X >= 2^20 + 1) = 0.068 for the twin (exact discrete
 *    tails P(X >= m) = q^m / (1 + q), q = exp(-gamma / b'), computed
 *    below).  audit_miss() at delta = 0 (292 bounds at 3.4e-9): miss
 *    0.013 at N = 1,000 per side, 1.6e-6 at N = 1,500, 1e-11 at N =
 *    2,000: power 0.999 needs N of about 1,200.  N = 500,000 is used
 *    (miss below 1e-20), as for the tightness of the unmutated bound.
 *
 * 3. Exponential mechanism, k = 2 candidates, noise_exp_mech() with log
 *    weights c u_j.  Claim (McSherry-Talwar): scores of sensitivity
 *    Delta_u = 1 (each score moves by at most 1 between neighbours, in
 *    any direction) and c = epsilon / (2 Delta_u) give epsilon-DP; claimed
 *    epsilon = 1, c = 0.5.  (If all scores moved in one common direction,
 *    c = epsilon would already be epsilon-DP, and the halved temperature
 *    c = 1 of the twin could not exceed the claim: the twin is only
 *    detectable with neighbours that move the scores in opposite
 *    directions.)  Neighbours: B has scores (g, 0), A has (g - 1, 1).
 *    The statistic is the chosen index (A pushes it up); for a binary
 *    output the true epsilon is the larger log-ratio, here
 *
 *	P_A(1) / P_B(1) = (1 + e^{c g}) / (1 + e^{c (g - 2)}) -> e^{2 c},
 *
 *    the other ratio being smaller.  With equal scores and one score
 *    moving by 1 (B (0, 0), A (0, 1)), the twin c = 1 would only reach
 *    log((1 + e) / 2) = 0.620 < 1, and with g = 0 here log(2 / (1 +
 *    e^-2)) = 0.566: undetectable at any N.  A larger gap g approaches
 *    the worst case e^{2 c}: g = 4 gives, at c = 0.5, epsilon = log((1 + e^2) / (1 + e)) =
 *    0.814 <= 1 and, for the twin c = 1, epsilon = log((1 + e^4) /
 *    (1 + e^2)) = 1.890 > 1 with TPR = 1 / (1 + e^2) = 0.119, FPR =
 *    1 / (1 + e^4) = 0.0180.  Grid: thresholds 0.5 and 1.5 (the second
 *    is empty), both directions: 8 bounds at 1.25e-7.  Power (exact):
 *    miss 0.53 at N = 3,000 per side, 1.2e-3 at 6,000, 4.7e-5 at 7,000,
 *    1.3e-6 at 8,000: power 0.999 needs N of about 6,100.  N = 1,000,000
 *    is used (each draw costs ~0.2 us), miss below 1e-20.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "audit.h"
#include "privacy/accountant.h"
#include "privacy/analytic_gaussian.h"
#include "privacy/event.h"
#include "privacy/noise.h"

#define CLAIM_EPS   1.0
#define CLAIM_DELTA 1e-5
#define ALPHA       1e-6
#define GRID_K      73
#define GRID_U      4.5
#define DELTA_Q     1.0 /* q(A) - q(B), on the lattice */
#define N_DGAUSS    1000000
#define N_DLAP      500000
#define N_EXP       1000000
#define EXP_GAP     4.0

/* --- 1. Discrete Gaussian on the lattice ------------------------------ */

struct lattice_mech {
	int k;        /* gamma = 2^-k */
	double scale; /* sigma or b actually used */
};

static double
dgauss_sample(void *ctx, int world, struct rng *r)
{
	const struct lattice_mech *m = ctx;
	double x = world == 0 ? DELTA_Q : 0.0;
	struct err e = { 0 };

	if (noise_lattice_gaussian(r, m->scale, m->k, &x, 1, &e) != ERR_OK)
		ck_abort_msg("noise_lattice_gaussian: %s", e.msg);
	return x;
}

static double
dlap_sample(void *ctx, int world, struct rng *r)
{
	const struct lattice_mech *m = ctx;
	double x = world == 0 ? DELTA_Q : 0.0;
	struct err e = { 0 };

	if (noise_lattice_laplace(r, m->scale, m->k, &x, 1, &e) != ERR_OK)
		ck_abort_msg("noise_lattice_laplace: %s", e.msg);
	return x;
}

/* k and Delta' of the lattice for the scalar query under norm. */
static void
lattice(enum noise_norm norm, int *ret_k, double *ret_sens)
{
	struct err e = { 0 };

	ck_assert_int_eq(noise_lattice_step(norm, DELTA_Q, 1, ret_k, &e), ERR_OK);
	ck_assert_int_eq(noise_lattice_sensitivity(norm, DELTA_Q, 1, *ret_k, ret_sens, &e), ERR_OK);
	ck_assert(*ret_sens >= DELTA_Q && *ret_sens <= DELTA_Q * (1.0 + 2.0 * NOISE_LATTICE_SLACK));
}

/* z and the accountant's epsilon for {gaussian z}: the claim audited. */
static double
gauss_claimed(double *ret_z)
{
	double eps = audit_gauss_claim(CLAIM_EPS, CLAIM_DELTA, ret_z);

	ck_assert_msg(eps > 0.0 && eps <= CLAIM_EPS, "claim: %g", eps); /* NAN fails too */
	return eps;
}

/* Draw n per side from fn, bound on the grid lo .. hi (k points), print. */
static double
run_audit(const char *name, audit_sample_fn fn, void *ctx, size_t n, double lo, double hi, size_t k,
	  double delta, uint64_t seed, double eps_claim)
{
	double t0 = audit_now();
	struct audit_config c = { .name = name,
				  .delta = delta,
				  .alpha = ALPHA,
				  .method = AUDIT_GRID,
				  .lo = lo,
				  .hi = hi,
				  .k = k };
	struct audit_result r;
	double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));

	ck_assert(a != NULL && b != NULL);
	audit_draw(fn, ctx, 0, seed, a, n);
	audit_draw(fn, ctx, 1, seed ^ 0x5bd1e995u, b, n);
	ck_assert_int_eq(audit_eps_lb(&c, a, n, b, n, &r), 0);
	audit_print(stdout, &c, &r, eps_claim);
	printf("audit %s: N = %zu per side, wall time %.2f s\n", name, n, audit_now() - t0);
	free(a);
	free(b);
	return r.eps_lb;
}

static double
dgauss_audit(const char *name, double scale, uint64_t seed, double eps_claim)
{
	double z, sens, sigma;
	struct lattice_mech m;

	gauss_claimed(&z);
	lattice(NOISE_NORM_L2, &m.k, &sens);
	sigma = z * sens;
	m.scale = sigma * scale;
	return run_audit(name, dgauss_sample, &m, N_DGAUSS, DELTA_Q / 2 - GRID_U * sigma,
			 DELTA_Q / 2 + GRID_U * sigma, GRID_K, CLAIM_DELTA, seed, eps_claim);
}

START_TEST(test_dgauss)
{
	double z, eps = gauss_claimed(&z);
	double lb = dgauss_audit("level1/dgauss", 1.0, 0x3c6ef372fe94f82bu, eps);

	ck_assert_msg(lb <= eps, "discrete Gaussian: eps_lb %.4f > claimed %.4f", lb, eps);
}
END_TEST

START_TEST(test_dgauss_mutated)
{
	double z, eps = gauss_claimed(&z), sens, eps_true, miss, lb, sm;
	int k;
	/* The planned test: grid index 45, u = 1.125 claimed sigmas above
	 * the midpoint (continuous tails; see the header for the error). */
	const double u = -GRID_U + 2.0 * GRID_U * 45 / (GRID_K - 1);
	struct err e = { 0 };

	lattice(NOISE_NORM_L2, &k, &sens);
	sm = 0.5 * z * sens; /* mutated sigma, Delta = 1 */
	ck_assert_int_eq(ag_epsilon_mu(DELTA_Q / sm, CLAIM_DELTA, &eps_true, &e), ERR_OK);
	miss = audit_miss(N_DGAUSS, audit_normal_sf((0.5 + u * z * sens - 1.0) / sm), N_DGAUSS,
			  audit_normal_sf((0.5 + u * z * sens) / sm), ALPHA / (4.0 * GRID_K),
			  CLAIM_DELTA, eps);
	printf("level1/dgauss-mutated: sigma x 0.5, true eps(%.0e) = %.4f; power at u = %.3f "
	       "with N = %d: P[mutation missed] <= %.2g\n",
	       CLAIM_DELTA, eps_true, u, N_DGAUSS, miss);
	ck_assert(eps_true > eps);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.6f", miss);

	lb = dgauss_audit("level1/dgauss-mutated", 0.5, 0xa54ff53a5f1d36f1u, eps);
	ck_assert_msg(lb > eps, "sigma x 0.5 not detected: eps_lb %.4f <= claimed %.4f", lb, eps);
}
END_TEST

/* --- 2. Discrete Laplace on the lattice ------------------------------- */

static double
dlap_audit(const char *name, double scale, uint64_t seed)
{
	double sens, b;
	struct lattice_mech m;

	lattice(NOISE_NORM_L1, &m.k, &sens);
	b = sens / CLAIM_EPS;
	m.scale = b * scale;
	return run_audit(name, dlap_sample, &m, N_DLAP, DELTA_Q / 2 - GRID_U * b,
			 DELTA_Q / 2 + GRID_U * b, GRID_K, 0.0, seed, CLAIM_EPS);
}

/* P(X >= m) for X ~ Lap_Z(s) (lattice units), m any integer. */
static double
dlap_tail(double m, double s)
{
	double q = exp(-1.0 / s);

	return m >= 1.0 ? pow(q, m) / (1.0 + q) : 1.0 - pow(q, 1.0 - m) / (1.0 + q);
}

START_TEST(test_dlap)
{
	double lb = dlap_audit("level1/dlap", 1.0, 0x510e527fade682d1u);

	ck_assert_msg(lb <= CLAIM_EPS, "discrete Laplace: eps_lb %.4f > claimed %.4f", lb,
		      CLAIM_EPS);
}
END_TEST

START_TEST(test_dlap_mutated)
{
	double sens, b, gamma, t, s, eps_true, miss, lb;
	int k;
	/* The planned test: grid index 40, u = 0.5, t = Delta/2 + b / 2 = the
	 * first grid point above Delta. */
	const double u = -GRID_U + 2.0 * GRID_U * 40 / (GRID_K - 1);

	lattice(NOISE_NORM_L1, &k, &sens);
	b = sens / CLAIM_EPS;
	gamma = ldexp(1.0, -k);
	t = DELTA_Q / 2 + u * b;
	s = 0.5 * b / gamma; /* mutated scale in lattice units */
	eps_true = DELTA_Q / (0.5 * b);
	/* s >= t <=> lattice value >= ceil(t / gamma); world A sits at
	 * Delta / gamma lattice units. */
	miss = audit_miss(N_DLAP, dlap_tail(ceil(t / gamma) - DELTA_Q / gamma, s), N_DLAP,
			  dlap_tail(ceil(t / gamma), s), ALPHA / (4.0 * GRID_K), 0.0, CLAIM_EPS);
	printf("level1/dlap-mutated: b x 0.5, true eps = %.4f; power at u = %.3f with N = %d: "
	       "P[mutation missed] <= %.2g\n",
	       eps_true, u, N_DLAP, miss);
	ck_assert(eps_true > CLAIM_EPS);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.6f", miss);

	lb = dlap_audit("level1/dlap-mutated", 0.5, 0x9b05688c2b3e6c1fu);
	ck_assert_msg(lb > CLAIM_EPS, "b x 0.5 not detected: eps_lb %.4f <= claimed %.4f", lb,
		      CLAIM_EPS);
}
END_TEST

/* --- 3. Exponential mechanism ----------------------------------------- */

struct exp_mech {
	double c; /* log weight per unit of score: epsilon / (2 Delta_u) */
};

/* Scores: world B (g, 0), world A (g - 1, 1); the chosen index. */
static double
exp_sample(void *ctx, int world, struct rng *r)
{
	const struct exp_mech *m = ctx;
	double u[2] = { world == 0 ? EXP_GAP - 1.0 : EXP_GAP, world == 0 ? 1.0 : 0.0 };
	double w[2] = { m->c * u[0], m->c * u[1] };
	size_t j = 0;
	struct err e = { 0 };

	if (noise_exp_mech(r, w, 2, &j, &e) != ERR_OK)
		ck_abort_msg("noise_exp_mech: %s", e.msg);
	return (double)j;
}

/* True epsilon of the k = 2 mechanism at c: the larger log-ratio. */
static double
exp_true_eps(double c, double *ret_tpr, double *ret_fpr)
{
	double pa = 1.0 / (1.0 + exp(c * (EXP_GAP - 2.0))), pb = 1.0 / (1.0 + exp(c * EXP_GAP));

	*ret_tpr = pa;
	*ret_fpr = pb;
	return fmax(log(pa / pb), log((1.0 - pb) / (1.0 - pa)));
}

static double
exp_audit(const char *name, double temp_scale, uint64_t seed)
{
	struct exp_mech m = { .c = CLAIM_EPS / 2.0 / temp_scale };

	return run_audit(name, exp_sample, &m, N_EXP, 0.5, 1.5, 2, 0.0, seed, CLAIM_EPS);
}

START_TEST(test_exp_mech)
{
	double tpr, fpr, eps_true = exp_true_eps(CLAIM_EPS / 2.0, &tpr, &fpr);
	double lb;

	ck_assert(eps_true <= CLAIM_EPS);
	lb = exp_audit("level1/exp_mech", 1.0, 0x1f83d9abfb41bd6bu);
	printf("level1/exp_mech: gap %.0f, true eps = %.4f\n", EXP_GAP, eps_true);
	ck_assert_msg(lb <= CLAIM_EPS, "exponential mechanism: eps_lb %.4f > claimed %.4f", lb,
		      CLAIM_EPS);
}
END_TEST

START_TEST(test_exp_mech_mutated)
{
	double tpr, fpr, eps_true = exp_true_eps(CLAIM_EPS, &tpr, &fpr), miss, lb;

	/* The planned test: "up" at t = 0.5 (index 1 chosen); 2 thresholds,
	 * 8 bounds. */
	miss = audit_miss(N_EXP, tpr, N_EXP, fpr, ALPHA / 8.0, 0.0, CLAIM_EPS);
	printf("level1/exp_mech-mutated: temperature x 0.5, gap %.0f, true eps = %.4f (TPR %.4f, "
	       "FPR %.5f); N = %d: P[mutation missed] <= %.2g\n",
	       EXP_GAP, eps_true, tpr, fpr, N_EXP, miss);
	ck_assert(eps_true > CLAIM_EPS);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.6f", miss);

	lb = exp_audit("level1/exp_mech-mutated", 0.5, 0x5be0cd19137e2179u);
	ck_assert_msg(lb > CLAIM_EPS, "temperature x 0.5 not detected: eps_lb %.4f <= claimed %.4f",
		      lb, CLAIM_EPS);
}
END_TEST

static Suite *
discrete_suite(void)
{
	Suite *s = suite_create("audit_discrete");
	TCase *tc = tcase_create("discrete");

	tcase_set_timeout(tc, 300); /* seconds in release; minutes under sanitizers */
	tcase_add_test(tc, test_dgauss);
	tcase_add_test(tc, test_dgauss_mutated);
	tcase_add_test(tc, test_dlap);
	tcase_add_test(tc, test_dlap_mutated);
	tcase_add_test(tc, test_exp_mech);
	tcase_add_test(tc, test_exp_mech_mutated);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(discrete_suite());
	double t0 = audit_now();
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	printf("test_audit_discrete: wall time %.2f s\n", audit_now() - t0);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
