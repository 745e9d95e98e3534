/*
 * test_audit_stats.c - the audit harness's own numerics, against values
 * that do not come from it: closed forms of the incomplete beta, direct
 * binomial sums, published Clopper-Pearson intervals (R's binom.test), the
 * bound's behaviour on samples of known law, and the power computations
 * against simulated audits.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "audit.h"

/* P(Bin(n, p) >= k) by summing the pmf in log space, independently of the
 * incomplete beta. */
static double
binom_sf_direct(unsigned k, unsigned n, double p)
{
	double s = 0.0;

	for (unsigned j = k; j <= n; j++)
		s += exp(lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0) + j * log(p) +
			 (n - j) * log1p(-p));
	return s;
}

START_TEST(test_incbeta_closed_forms)
{
	/* I_x(a, 1) = x^a, I_x(1, b) = 1 - (1 - x)^b, I_1/2(a, a) = 1/2,
	 * I_x(2, 2) = 3 x^2 - 2 x^3. */
	const double xs[] = { 1e-9, 1e-3, 0.2, 0.5, 0.77, 0.999 };

	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		double x = xs[i];

		ck_assert_double_eq_tol(audit_incbeta(3.5, 1.0, x), pow(x, 3.5),
					1e-13 * fmax(pow(x, 3.5), 1e-300));
		ck_assert_double_eq_tol(audit_incbeta(1.0, 7.0, x), -expm1(7.0 * log1p(-x)),
					1e-13 * -expm1(7.0 * log1p(-x)));
		ck_assert_double_eq_tol(audit_incbeta(2.0, 2.0, x), 3 * x * x - 2 * x * x * x,
					1e-13);
	}
	for (double a = 0.5; a < 5000.0; a *= 3.0)
		ck_assert_double_eq_tol(audit_incbeta(a, a, 0.5), 0.5, 1e-12);
	ck_assert(audit_incbeta(2.0, 3.0, 0.0) == 0.0);
	ck_assert(audit_incbeta(2.0, 3.0, 1.0) == 1.0);
}
END_TEST

/* I_p(k, n - k + 1) = P(Bin(n, p) >= k), small and large n, both tails. */
START_TEST(test_incbeta_binomial)
{
	const struct {
		unsigned k, n;
		double p;
	} c[] = {
		{ 2, 5, 0.3 },
		{ 1, 10, 0.01 },
		{ 30, 100, 0.2 },
		{ 500, 1000, 0.45 },
		{ 10, 1000, 0.002 },
		{ 4000, 1000000, 0.0035 },
		{ 3000, 1000000, 0.0035 },
		{ 2500, 1000000, 0.0035 },
	};

	/* Exact for the first: 1 - 0.7^5 - 5 0.3 0.7^4. */
	ck_assert_double_eq_tol(audit_incbeta(2, 4, 0.3), 1.0 - 0.16807 - 0.36015, 1e-14);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		double want = binom_sf_direct(c[i].k, c[i].n, c[i].p);
		double got = audit_binom_sf(c[i].k, c[i].n, c[i].p);

		ck_assert_msg(fabs(got - want) <= 1e-8 * want + 1e-300,
			      "P(Bin(%u, %g) >= %u): %.15g, direct %.15g", c[i].n, c[i].p, c[i].k,
			      got, want);
	}
	/* The pmf sums to one. */
	{
		double s = 0.0;

		for (unsigned k = 0; k <= 200; k++)
			s += audit_binom_pmf(k, 200, 0.37);
		ck_assert_double_eq_tol(s, 1.0, 1e-12);
	}
}
END_TEST

START_TEST(test_beta_quantile)
{
	/* Closed forms: Beta(a, 1) has quantile p^(1/a), Beta(1, b)
	 * 1 - (1 - p)^(1/b). */
	const double ps[] = { 1e-9, 2.5e-7, 0.025, 0.5, 0.975, 1 - 1e-6 };

	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double p = ps[i];

		ck_assert_double_eq_tol(audit_beta_quantile(4.0, 1.0, p), pow(p, 0.25),
					1e-11 * pow(p, 0.25));
		ck_assert_double_eq_tol(audit_beta_quantile(1.0, 9.0, p), -expm1(log1p(-p) / 9.0),
					1e-11 * -expm1(log1p(-p) / 9.0));
	}
	/* Round trips where no closed form exists, down to the tails the
	 * audits use. */
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double p = ps[i], x = audit_beta_quantile(2500.0, 997501.0, p);
		double back = p <= 0.5 ? audit_incbeta(2500.0, 997501.0, x)
				       : 1.0 - audit_incbeta(997501.0, 2500.0, 1.0 - x);

		ck_assert_msg(fabs(back - p) <= 1e-9 * fmin(p, 1.0 - p), "p %g: back %.15g", p,
			      back);
	}
}
END_TEST

/* Two-sided 95 % Clopper-Pearson intervals as R's binom.test prints
 * them (each side at 0.025). */
START_TEST(test_clopper_pearson)
{
	ck_assert_double_eq_tol(audit_cp_lower(5, 10, 0.025), 0.1870860, 5e-8);
	ck_assert_double_eq_tol(audit_cp_upper(5, 10, 0.025), 0.8129140, 5e-8);
	ck_assert_double_eq_tol(audit_cp_lower(1, 10, 0.025), 0.002528579, 5e-10);
	ck_assert_double_eq_tol(audit_cp_upper(1, 10, 0.025), 0.4450161, 5e-8);
	/* k = 0 and k = n: 1 - alpha^(1/n) and alpha^(1/n) exactly. */
	ck_assert_double_eq_tol(audit_cp_upper(0, 1000, 1e-6), 1.0 - pow(1e-6, 1e-3), 1e-14);
	ck_assert_double_eq_tol(audit_cp_lower(1000, 1000, 1e-6), pow(1e-6, 1e-3), 1e-12);
	ck_assert(audit_cp_lower(0, 1000, 1e-6) == 0.0);
	ck_assert(audit_cp_upper(1000, 1000, 1e-6) == 1.0);
	/* The defining property, on the safe side: at the bound, the
	 * observed count is at the alpha edge. */
	{
		double lb = audit_cp_lower(2500, 1000000, 2.5e-7);
		double ub = audit_cp_upper(2500, 1000000, 2.5e-7);

		ck_assert(lb < 2.5e-3 && ub > 2.5e-3);
		ck_assert(audit_binom_sf(2500, 1000000, lb) <= 2.5e-7 * (1 + 1e-9));
		ck_assert(1.0 - audit_binom_sf(2501, 1000000, ub) <= 2.5e-7 * (1 + 1e-9));
	}
}
END_TEST

/* Standard normal by Box-Muller, independent of the code under audit. */
static double
std_normal(struct rng *r)
{
	double u = 1.0 - rng_uniform(r), v = rng_uniform(r);

	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

struct shift {
	double mu;
};

static double
shifted_normal(void *ctx, int world, struct rng *r)
{
	const struct shift *s = ctx;

	return std_normal(r) + (world == 0 ? s->mu : 0.0);
}

/*
 * Identical worlds: whatever the method, the bound must stay at or below
 * 0 (it can only exceed 0 through a failed bound); worlds N(mu, 1) vs
 * N(0, 1) with mu = 1 must give a clearly positive bound below the true
 * epsilon(delta = 1e-5) = 4.377 (analytic Gaussian curve at mu = 1).
 */
START_TEST(test_audit_known_laws)
{
	const size_t n = 200000;
	double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	struct shift s;
	struct audit_config grid = { .name = "stats/grid",
				     .delta = 1e-5,
				     .alpha = 1e-6,
				     .method = AUDIT_GRID,
				     .lo = -5.0,
				     .hi = 6.0,
				     .k = 45 };
	struct audit_config split = { .name = "stats/split",
				      .delta = 1e-5,
				      .alpha = 1e-6,
				      .method = AUDIT_SPLIT,
				      .candidates = 200 };
	struct audit_result r;

	ck_assert(a != NULL && b != NULL);
	s.mu = 0.0;
	for (int m = 0; m < 2; m++) {
		const struct audit_config *c = m == 0 ? &grid : &split;

		audit_draw(shifted_normal, &s, 0, 11 + m, a, n);
		audit_draw(shifted_normal, &s, 1, 21 + m, b, n);
		ck_assert_int_eq(audit_eps_lb(c, a, n, b, n, &r), 0);
		audit_print(stdout, c, &r, 0.0);
		ck_assert(r.eps_lb <= 0.0);
		ck_assert_double_eq_tol(r.false_failure, 1e-6, 1e-18);
	}
	s.mu = 1.0;
	for (int m = 0; m < 2; m++) {
		const struct audit_config *c = m == 0 ? &grid : &split;

		audit_draw(shifted_normal, &s, 0, 31 + m, a, n);
		audit_draw(shifted_normal, &s, 1, 41 + m, b, n);
		ck_assert_int_eq(audit_eps_lb(c, a, n, b, n, &r), 0);
		audit_print(stdout, c, &r, 4.377);
		ck_assert(r.eps_lb > 2.0 && r.eps_lb < 4.377);
	}
	free(a);
	free(b);
}
END_TEST

/* Power against a direct simulation of the counts: at a fixed threshold
 * the fraction of simulated audits beating the claim matches. */
START_TEST(test_power)
{
	/* N(0.8, 1) vs N(0, 1), threshold 2.5, n = 20000 per side. */
	const uint64_t n = 20000;
	const double tpr = 0.5 * erfc((2.5 - 0.8) / sqrt(2.0)), fpr = 0.5 * erfc(2.5 / sqrt(2.0));
	double p = audit_power(n, tpr, n, fpr, 1e-3, 1e-5, 1.6);
	struct rng r;
	int wins = 0, trials = 2000;

	rng_splitmix_init(&r, 77);
	for (int t = 0; t < trials; t++) {
		uint64_t kp = 0, kn = 0;

		for (uint64_t i = 0; i < n; i++) {
			kp += rng_uniform(&r) < tpr;
			kn += rng_uniform(&r) < fpr;
		}
		wins += audit_eps_from_counts(kp, n, kn, n, 1e-3, 1e-5) > 1.6;
	}
	printf("power: computed %.4f, simulated %.4f (%d trials)\n", p, (double)wins / trials,
	       trials);
	ck_assert(p > 0.05 && p < 0.95); /* a case where the comparison means something */
	ck_assert_double_eq_tol(p, (double)wins / trials, 0.05);
	/* Monotone in n. */
	ck_assert(audit_power(4 * n, tpr, 4 * n, fpr, 1e-3, 1e-5, 1.6) > p);
}
END_TEST

/* P_A(s >= t) and P_B(s >= t) for N(mu, 1) against N(0, 1). */
static void
shift_rates(void *ctx, double t, double *tpr, double *fpr)
{
	const struct shift *s = ctx;

	*tpr = audit_normal_sf(t - s->mu);
	*fpr = audit_normal_sf(t);
}

/*
 * audit_split_miss() against simulated split audits of N(2, 1) vs N(0, 1),
 * 2000 samples per side, 64 candidates.  At claim 1.0 it must certify a
 * small miss probability, and the simulated audits must not miss; at claim
 * 2.0, where they do miss (about 10 %), it must not fall below the
 * simulated rate (beyond 3 standard errors).  The bound is conservative:
 * at claim 1.4 it gives 0.36 where 200 simulated audits miss none (its
 * union bounds over the calibration's possible choices cost about 0.4 in
 * epsilon here).
 */
/*
 * The mixture law of the level-3 audits against independent values.  With
 * q = 1 it is a Gaussian shift of mu = 2m / sd, whose epsilon(delta) the
 * analytic Gaussian calibration (Balle & Wang 2018, in the library) gives:
 * z calibrated to (1, 1e-5) must read back epsilon 1 (to the 0.001 sd
 * grid).  With q = 0 the worlds agree: epsilon 0.  And the rates are the
 * closed form at one point: P_A(s >= m) = 1/2 (q = 1).
 */
START_TEST(test_mixture_law)
{
	double z, t = 0.0, tpr, fpr;
	struct audit_mixture g, none;

	ck_assert(!isnan(audit_gauss_claim(1.0, 1e-5, &z)));
	g = (struct audit_mixture){ .q = 1.0, .m = 0.5, .sd = z };
	ck_assert_double_eq_tol(audit_mixture_epsilon(&g, 1e-5), 1.0, 2e-3);
	ck_assert(audit_mixture_best_test(&g, 1e-5, &t) <= 1.0 + 1e-9);
	audit_mixture_rates(&g, 0.5, &tpr, &fpr);
	ck_assert_double_eq_tol(tpr, 0.5, 1e-12);
	ck_assert_double_eq_tol(fpr, audit_normal_sf(1.0 / z), 1e-12);
	none = (struct audit_mixture){ .q = 0.0, .m = 0.5, .sd = z };
	ck_assert_double_eq(audit_mixture_epsilon(&none, 1e-5), 0.0);
}
END_TEST

START_TEST(test_split_power)
{
	const size_t n = 2000;
	const int trials = 100;
	const double claims[2] = { 1.0, 2.0 }, cuts[2] = { 1.6, 2.1 };
	double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	struct shift s = { .mu = 2.0 };
	struct audit_config c = { .name = "stats/split-power",
				  .delta = 1e-5,
				  .alpha = 1e-6,
				  .method = AUDIT_SPLIT,
				  .candidates = 64 };

	ck_assert(a != NULL && b != NULL);
	{
		struct audit_config grid = { .name = "stats/grid", .method = AUDIT_GRID };
		struct audit_split_plan bad = { .lo = 1.0, .hi = 0.0, .pieces = 1, .step = 0.1 };
		struct audit_split_power pw;

		ck_assert_int_eq(audit_split_miss(&grid, n, n, shift_rates, &s, &bad, 1.0, &pw),
				 -1);
		ck_assert_int_eq(audit_split_miss(&c, n, n, shift_rates, &s, &bad, 1.0, &pw), -1);
	}
	for (int k = 0; k < 2; k++) {
		struct audit_split_plan plan = {
			.lo = -4.0, .hi = 7.0, .pieces = 22, .step = 0.01, .cut = cuts[k]
		};
		struct audit_split_power pw;
		struct audit_result r;
		int misses = 0;
		double sim, se;

		ck_assert_int_eq(audit_split_miss(&c, n, n, shift_rates, &s, &plan, claims[k], &pw),
				 0);
		for (int t = 0; t < trials; t++) {
			audit_draw(shifted_normal, &s, 0, 1000 + (uint64_t)t, a, n);
			audit_draw(shifted_normal, &s, 1, 5000 + (uint64_t)t, b, n);
			ck_assert_int_eq(audit_eps_lb(&c, a, n, b, n, &r), 0);
			misses += !(r.eps_lb > claims[k]);
		}
		sim = (double)misses / trials;
		se = sqrt(fmax(sim * (1.0 - sim), 1.0 / trials) / trials);
		printf("split power: claim %.2f, miss bound %.4g (pick [%.3f, %.3f]: %.2g + %.2g, "
		       "good %.2g, rest %.2g), simulated %.4f (%d trials)\n",
		       claims[k], pw.miss, pw.pick_lo, pw.pick_hi, pw.p_candidate, pw.p_pick,
		       pw.p_good, pw.p_rest, sim, trials);
		fflush(stdout);
		ck_assert(pw.miss >= sim - 3.0 * se);
		if (k == 0)
			ck_assert(pw.miss < 0.05 && misses == 0);
		else
			ck_assert(misses > 0);
	}
	free(a);
	free(b);
}
END_TEST

static Suite *
stats_suite(void)
{
	Suite *s = suite_create("audit_stats");
	TCase *tc = tcase_create("stats");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_incbeta_closed_forms);
	tcase_add_test(tc, test_incbeta_binomial);
	tcase_add_test(tc, test_beta_quantile);
	tcase_add_test(tc, test_clopper_pearson);
	tcase_add_test(tc, test_audit_known_laws);
	tcase_add_test(tc, test_power);
	tcase_add_test(tc, test_split_power);
	tcase_add_test(tc, test_mixture_law);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(stats_suite());
	double t0 = audit_now();
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	printf("test_audit_stats: wall time %.2f s\n", audit_now() - t0);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
