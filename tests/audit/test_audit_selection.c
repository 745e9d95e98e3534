/*
 * test_audit_selection.c - the private-selection event selection_tnb
 * (Papernot & Steinke, ICLR 2022, Theorem 2; algorithms/privacy/rdp.c)
 * audited on the mechanism the theorem describes, black box, with its
 * mutation twin that ignores the random stopping (docs/privacy-model.md
 * §7; tests/audit/README.md).  Same harness as test_audit_discrete.c:
 * Bonferroni grid, confidence 1 - 1e-6 per audit, fixed seeds.
 *
 * Mechanism.  The base Q is randomized response on the canary's bit with
 * eps0 = 0.5 (reports the true bit with probability e^eps0 / (1 + e^eps0);
 * eps0-DP, event pure(eps0)); its output is also its score.  The
 * selection runs Q K times, K ~ geometric(gamma = 0.1) (selection_tnb with
 * eta = 1, E[K] = 10), and releases the best score: s = max of the K
 * reports.  World A holds the canary bit 1, world B the bit 0
 * (replace-one).  Claim: the Renyi accountant's epsilon for
 * selection_tnb(pure(0.5), eta 1, gamma 0.1) at delta = 1e-5 (1.509,
 * recomputed below).  Statistic s in {0, 1}; grid of 2 thresholds 0.25,
 * 0.75 (both the set {s = 1}), both directions: 8 bounds at 1.25e-7.
 *
 * With a = 1 / (1 + e^eps0), b = 1 - a, the test "down" (S = {s = 0}, B
 * positive) has P_B(S) = E[b^K] and P_A(S) = E[a^K]:
 *	geometric K: E[x^K] = gamma x / (1 - (1 - gamma) x), log-ratio 0.906;
 *	fixed K = 10 (the twin: the same claim, no random stopping):
 *	    b^10 = 0.0088 and a^10 = 5.9e-5, log-ratio 10 eps0 = 5 > 1.509.
 * The twin's power at N = 1,000,000 per side is computed below
 * (audit_miss()) and asserted >= 0.999.  Each sample costs ~10 draws of
 * splitmix: well under a second of CPU per audit.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit.h"
#include "privacy/accountant.h"
#include "privacy/event.h"
#include "privacy/selection.h"
#include "rng.h"

#define ALPHA       1e-6
#define CLAIM_DELTA 1e-5
#define EPS0        0.5
#define GAMMA       0.1
#define FIXED_K     10 /* the twin: E[K], every time */
#define N_SEL       1000000
#define GRID_K      2

struct sel_mech {
	bool random_stopping; /* false: the twin */
};

/* K ~ geometric(gamma) on {1, 2, ...} by inversion. */
static unsigned long
geometric(struct rng *r)
{
	double u = rng_uniform(r);

	while (!(u > 0.0))
		u = rng_uniform(r);
	return 1ul + (unsigned long)floor(log(u) / log1p(-GAMMA));
}

static double
sel_sample(void *ctx, int world, struct rng *r)
{
	const struct sel_mech *m = ctx;
	unsigned long k = m->random_stopping ? geometric(r) : FIXED_K;
	double keep = exp(EPS0) / (1.0 + exp(EPS0));
	int bit = world == 0 ? 1 : 0, best = 0;

	for (unsigned long i = 0; i < k; i++) {
		int report = rng_uniform(r) < keep ? bit : 1 - bit;

		best = report > best ? report : best;
	}
	return best;
}

/* The claim: the accountant's epsilon for the selection event. */
static double
claimed(void)
{
	struct dp_event_tree t;
	struct dp_event p = { .type = DP_EVENT_SELECTION_TNB, .eta = 1.0, .gamma = GAMMA };
	struct accountant_report rep = { 0 };
	struct err e = { 0 };

	dp_event_pure(&t, DP_REPLACE_ONE, EPS0);
	ck_assert_int_eq(dp_event_wrap(&t, &p, &e), ERR_OK);
	ck_assert_msg(accountant_epsilon(&t, ACCOUNTING_RENYI, CLAIM_DELTA, NULL, true, &rep, &e) ==
			      ERR_OK,
		      "%s", e.msg);
	ck_assert_msg(rep.epsilon > 1.4 && rep.epsilon < 1.6, "claim %g", rep.epsilon);
	return rep.epsilon;
}

/* One audit of a {0, 1} statistic drawn by fn (the two worlds, N_SEL runs
 * each, seeds seed and seed ^ 0x5bd1e995). */
static double
run_sampled(const char *name, audit_sample_fn fn, void *ctx, uint64_t seed, double eps_claim)
{
	double t0 = audit_now();
	struct audit_config c = { .name = name,
				  .delta = CLAIM_DELTA,
				  .alpha = ALPHA,
				  .method = AUDIT_GRID,
				  .lo = 0.25,
				  .hi = 0.75,
				  .k = GRID_K };
	struct audit_result r;
	double *a = malloc(N_SEL * sizeof(*a)), *b = malloc(N_SEL * sizeof(*b));

	ck_assert(a != NULL && b != NULL);
	audit_draw(fn, ctx, 0, seed, a, N_SEL);
	audit_draw(fn, ctx, 1, seed ^ 0x5bd1e995u, b, N_SEL);
	ck_assert_int_eq(audit_eps_lb(&c, a, N_SEL, b, N_SEL, &r), 0);
	audit_print(stdout, &c, &r, eps_claim);
	printf("audit %s: N = %d per side, wall time %.2f s\n", name, N_SEL, audit_now() - t0);
	free(a);
	free(b);
	return r.eps_lb;
}

static double
run_audit(const char *name, bool random_stopping, uint64_t seed, double eps_claim)
{
	struct sel_mech m = { .random_stopping = random_stopping };

	return run_sampled(name, sel_sample, &m, seed, eps_claim);
}

START_TEST(test_selection)
{
	double eps = claimed();
	double lb = run_audit("level1/selection_tnb", true, 0x9e3779b97f4a7c15u, eps);

	ck_assert_msg(lb <= eps, "selection: eps_lb %.4f > claimed %.4f", lb, eps);
}
END_TEST

START_TEST(test_selection_fixed_k)
{
	double eps = claimed(), a = 1.0 / (1.0 + exp(EPS0)), b = 1.0 - a;
	double tpr = pow(b, FIXED_K), fpr = pow(a, FIXED_K), miss, lb;

	miss = audit_miss(N_SEL, tpr, N_SEL, fpr, ALPHA / (4.0 * GRID_K), CLAIM_DELTA, eps);
	printf("level1/selection-fixed-k: K = %d always, true eps on {s = 0} = %.4f; "
	       "P[mutation missed] <= %.2g\n",
	       FIXED_K, log(tpr / fpr), miss);
	ck_assert(log(tpr / fpr) > eps);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.6f", miss);
	lb = run_audit("level1/selection-fixed-k", false, 0xbb67ae8584caa73bu, eps);
	ck_assert_msg(lb > eps, "fixed K not detected: eps_lb %.4f <= claimed %.4f", lb, eps);
}
END_TEST

/*
 * The capped run of select.random_stopping (privacy/selection.h): K from
 * the real sampler (selection_cdf / selection_draw) for Poisson(MU)
 * conditioned on K >= 1, capped at the k_max select.random_stopping would
 * pick, and the best of the first min(K, k_max) of the same randomized
 * response released.  Claim: the accountant's epsilon for
 * selection_poisson{MU, k_max}(pure(EPS0)), the cap's term included.
 * Twin (ignores the random stopping: K = MU every time, still k_max
 * repetitions performed): P[s = 0] is b^5 against a^5, log-ratio
 * 5 eps0 = 2.5, above the claim (1.99); its power is computed and
 * asserted.
 */
#define MU 5.0

struct cap_mech {
	const double *cdf;
	uint64_t k_max;
	bool random_stopping;
};

static double
cap_sample(void *ctx, int world, struct rng *r)
{
	const struct cap_mech *m = ctx;
	uint64_t k = m->random_stopping ? selection_draw(m->cdf, m->k_max, r) : (uint64_t)MU;
	double keep = exp(EPS0) / (1.0 + exp(EPS0));
	int bit = world == 0 ? 1 : 0, best = 0;

	for (uint64_t i = 0; i < m->k_max; i++) { /* every repetition is performed */
		int report = rng_uniform(r) < keep ? bit : 1 - bit;

		if (i < k)
			best = report > best ? report : best;
	}
	return best;
}

static double
cap_claim(struct dp_event *sel, double **ret_cdf)
{
	struct dp_event_tree t;
	struct selection_dist d;
	struct accountant_report rep = { 0 };
	struct err e = { 0 };

	*sel = (struct dp_event){ .type = DP_EVENT_SELECTION_POISSON, .mu = MU };
	ck_assert_int_eq(selection_dist_from_event(sel, &d, &e), ERR_OK);
	ck_assert_int_eq(selection_cap_for(&d, 1e-6, "mu", &sel->k_max, &e), ERR_OK);
	d.k_max = sel->k_max;
	*ret_cdf = malloc(d.k_max * sizeof(**ret_cdf));
	ck_assert(*ret_cdf != NULL);
	ck_assert_int_eq(selection_cdf(&d, *ret_cdf, &e), ERR_OK);
	dp_event_pure(&t, DP_REPLACE_ONE, EPS0);
	ck_assert_int_eq(dp_event_wrap(&t, sel, &e), ERR_OK);
	ck_assert_msg(accountant_epsilon(&t, ACCOUNTING_RENYI, CLAIM_DELTA, NULL, true, &rep, &e) ==
			      ERR_OK,
		      "%s", e.msg);
	printf("capped selection_poisson: mu %g, k_max %llu, claim %.4f\n", MU,
	       (unsigned long long)sel->k_max, rep.epsilon);
	return rep.epsilon;
}

static double
run_cap_audit(const char *name, const struct cap_mech *m, uint64_t seed, double eps_claim)
{
	return run_sampled(name, cap_sample, (void *)m, seed, eps_claim);
}

START_TEST(test_selection_capped)
{
	struct dp_event sel;
	double *cdf, eps = cap_claim(&sel, &cdf), lb;
	struct cap_mech m = { .cdf = cdf, .k_max = sel.k_max, .random_stopping = true };

	lb = run_cap_audit("level1/selection_poisson-capped", &m, 0x3c6ef372fe94f82bu, eps);
	ck_assert_msg(lb <= eps, "capped selection: eps_lb %.4f > claimed %.4f", lb, eps);
	free(cdf);
}
END_TEST

START_TEST(test_selection_capped_ignores_stopping)
{
	struct dp_event sel;
	double *cdf, eps = cap_claim(&sel, &cdf), lb, miss;
	double a = 1.0 / (1.0 + exp(EPS0)), b = 1.0 - a;
	double tpr = pow(b, MU), fpr = pow(a, MU);
	struct cap_mech m = { .cdf = cdf, .k_max = sel.k_max, .random_stopping = false };

	miss = audit_miss(N_SEL, tpr, N_SEL, fpr, ALPHA / (4.0 * GRID_K), CLAIM_DELTA, eps);
	printf("level1/selection_poisson-capped, K = mu always: true eps on {s = 0} = "
	       "%.4f; P[mutation missed] <= %.2g\n",
	       log(tpr / fpr), miss);
	ck_assert(log(tpr / fpr) > eps);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.6f", miss);
	lb = run_cap_audit("level1/selection_poisson-capped-fixed-k", &m, 0xa54ff53a5f1d36f1u, eps);
	ck_assert_msg(lb > eps, "ignoring the stopping not detected: eps_lb %.4f <= claimed %.4f",
		      lb, eps);
	free(cdf);
}
END_TEST

static Suite *
selection_suite(void)
{
	Suite *s = suite_create("audit_selection");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_selection);
	tcase_add_test(tc, test_selection_fixed_k);
	tcase_add_test(tc, test_selection_capped);
	tcase_add_test(tc, test_selection_capped_ignores_stopping);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(selection_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
