/*
 * test_audit_zeroth_order.c - level 2 privacy audit of
 * zeroth_order.o2nc_tree (docs/privacy-model.md §7; tests/audit/README.md)
 * with its mutation twin, in the design of test_audit_sgda.c.
 *
 * What is audited: the noisy tree outputs g~_t = g_t + TREE(t) of round 1,
 * exposed by the testing hook, with the canary placed at leaf 1 (the
 * GRAD batch: slot 0 of the secret order).  Leaf 1 lies in the Lambda
 * used nodes (1, 1), (1, 2), (1, 4), ..., and g~_{2^j} = g_{2^j} + xi_{2^j}
 * is exactly node (1, 2^j): independent noises.  The statistic is
 * s = (g~_1 + g~_2 + g~_4) / sqrt(3) (Lambda = 3 here).
 *
 * Data, d = 1, capped_l1_regression min(|w x - y|, 1), declared bounds
 * feature_l2 = 1 and label = 1 (L = 1), start w_1 = 0, gold_delta 0.1.
 * The other 13 rows are (x, y) = (0, 0): f = 0 everywhere, so every DIFF
 * is 0 and g_t = g_1 for all t.  The canary is (10, -1) in world A and
 * (-10, -1) in world B: it breaks the declared row bound (ingestion
 * would clip it; this data bypasses ingestion), and its unclipped finite
 * differences are +-1, five times the 2 L delta = 0.2 the declared L
 * allows.  The clip of every finite difference brings each direction's
 * term back to +-L: GRAD = +-1 / B1, exactly the declared worst case s_G /
 * 2.  So s = +-sqrt(3) / B1 + N(0, sigma^2): a Gaussian mechanism with
 * mu_audit = 2 sqrt(3) / (B1 sigma) = sqrt(Lambda) s_G / sigma.
 *
 * Why mu_audit is below the charged rho_eff (0.536 of it here): the
 * charge covers a DIFF leaf at s_D = 4 d L D / delta, which needs
 * ||w_t - w_{t-1}|| = 2D; no data can force that (w_2 - w_1 = s Delta_2 with
 * s uniform), so no canary realises the bound.  Hence the twin scales
 * sigma by 0.25, not 0.5 (sigma x 0.5 would give 1.07 rho_eff, beyond any
 * affordable N): computed before running, as in test_audit_sgda.c.
 *
 * n = 14 rows, f_star = 1e-3: T = 7, K = 1, B1 = 8, Lambda = 3.  Claim:
 * the accountant's epsilon of the run's event at delta = 1e-5 (basic
 * mode, target (1, 1e-5)).  Bonferroni grid of 73 thresholds u sigma, u =
 * -4.5 .. 4.5; false-failure probability <= 1e-6.
 *
 * Code mutation checked by hand (commit message): without the clip in
 * zo_grad_record the unmutated audit fails (the canary's GRAD is +-5 / B1).
 *
 * Level 3 (test_end_to_end): the same worlds, the returned point itself
 * (the average of the one round's points, d = 1) as the statistic, no
 * hook but the placement; thresholds by a calibration split (the
 * statistic's law is not known in closed form), N = 100,000 runs per
 * side.  Only "epsilon_lb <= claimed" is asserted: the canary moves the
 * average only through the noisy steps' sum, so the release is far
 * weaker than the tree outputs audited above.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "audit.h"
#include "objective.h"
#include "privacy/accountant.h"
#include "privacy/analytic_gaussian.h"
#include "testing_hook.h"

#define CLAIM_EPS   1.0
#define CLAIM_DELTA 1e-5
#define ALPHA       1e-6
#define GRID_K      73
#define GRID_U      4.5

#define WB_N      14
#define WB_CANARY 9
#define WB_RUNS   200000 /* per side; see the power computation */

static const struct alg_ops *
zo(void)
{
	static const struct alg_ops *a;

	if (a == NULL) {
		a = alg_find("zeroth_order.o2nc_tree");
		ck_assert_ptr_nonnull(a);
	}
	return a;
}

struct world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	double x[WB_N], y[WB_N];
};

struct zo_audit {
	struct world w[2];
	struct alg_testing_hook hook;
	double sum;
	unsigned seen;
};

/* Round 1's releases at t = 1, 2, 4 (index t - 1): the nodes (1, 2^j). */
static void
on_release(void *ctx, unsigned long index, const double *value, size_t len)
{
	struct zo_audit *a = ctx;

	if (len == 1 && (index == 0 || index == 1 || index == 3)) {
		a->sum += value[0];
		a->seen++;
	}
}

static void
spec_init(struct run_spec *s)
{
	const struct alg_param *p;

	memset(s, 0, sizeof(*s));
	s->x = (struct constraint){ .kind = CONSTRAINT_L2_BALL, .radius = 10.0 };
	s->epsilon = CLAIM_EPS;
	s->delta = CLAIM_DELTA;
	alg_default_params(zo(), s->params);
	p = alg_param_find(zo(), "f_star");
	ck_assert_ptr_nonnull(p);
	s->params[p - zo()->params] = 1e-3;
	s->n = WB_N;
	s->schema.d = 1;
	s->schema.task = TASK_REGRESSION;
	s->schema.bounds = (struct bounds){ NAN, 1.0, 1.0, NAN, NAN };
	s->mode = ACCOUNTING_BASIC;
	ck_assert_int_eq(
		run_spec_set_objective(s, objective_find("capped_l1_regression"), NULL, NULL),
		ERR_OK);
}

static double
claimed(const struct run_plan *p)
{
	struct accountant_report rep;
	struct err e = { 0 };

	ck_assert_msg(accountant_epsilon(&p->event, ACCOUNTING_BASIC, CLAIM_DELTA, NULL, true, &rep,
					 &e) == ERR_OK,
		      "accountant: %s", e.msg);
	ck_assert(rep.epsilon > 0.0 && rep.epsilon <= CLAIM_EPS);
	return rep.epsilon;
}

static void
worlds_init(struct zo_audit *a, double scale)
{
	struct err e = { 0 };

	memset(a, 0, sizeof(*a));
	a->hook.place_first = true;
	a->hook.first_record = WB_CANARY;
	a->hook.release = on_release;
	a->hook.ctx = a;
	a->hook.noise_scale = scale;
	for (int k = 0; k < 2; k++) {
		struct world *w = &a->w[k];

		w->x[WB_CANARY] = k == 0 ? 10.0 : -10.0;
		w->y[WB_CANARY] = -1.0;
		w->ds.n = WB_N;
		w->ds.d = 1;
		w->ds.x = w->x;
		w->ds.y = w->y;
		spec_init(&w->spec);
		w->spec.testing_hook = &a->hook;
		ck_assert_msg(alg_plan(zo(), &w->spec, &w->plan, &e) == ERR_OK, "plan: %s", e.msg);
	}
	ck_assert(dp_event_equal(&a->w[0].plan.event, &a->w[1].plan.event));
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "round_length"), 7.0);
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "rounds"), 1.0);
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "tree_levels"), 3.0);
}

static double
zo_sample(void *ctx, int world, struct rng *r)
{
	struct zo_audit *a = ctx;
	const struct world *w = &a->w[world];
	double u[1];
	struct err e = { 0 };

	a->sum = 0.0;
	a->seen = 0;
	if (alg_run(zo(), &w->spec, &w->plan, &w->ds, r, NULL, NULL, u, &e) != ERR_OK)
		ck_abort_msg("run: %s", e.msg);
	if (a->seen != 3)
		ck_abort_msg("the hook saw %u of the three releases", a->seen);
	return a->sum / sqrt(3.0);
}

static double
white_box_audit(const char *name, double scale, uint64_t seed, double *ret_claim)
{
	struct zo_audit *a = calloc(1, sizeof(*a));
	struct audit_config c;
	struct audit_result r;
	double sigma, *xa = malloc(WB_RUNS * sizeof(double)),
		      *xb = malloc(WB_RUNS * sizeof(double));
	double t0 = audit_now();

	ck_assert(a != NULL && xa != NULL && xb != NULL);
	worlds_init(a, scale);
	sigma = run_plan_value(&a->w[0].plan, "noise_sigma");
	*ret_claim = claimed(&a->w[0].plan);
	c = (struct audit_config){ .name = name,
				   .delta = CLAIM_DELTA,
				   .alpha = ALPHA,
				   .method = AUDIT_GRID,
				   .lo = -GRID_U * sigma,
				   .hi = GRID_U * sigma,
				   .k = GRID_K };
	audit_draw(zo_sample, a, 0, seed, xa, WB_RUNS);
	audit_draw(zo_sample, a, 1, seed ^ 0x9e3779b97f4a7c15u, xb, WB_RUNS);
	ck_assert_int_eq(audit_eps_lb(&c, xa, WB_RUNS, xb, WB_RUNS, &r), 0);
	audit_print(stdout, &c, &r, *ret_claim);
	printf("audit %s: N = %d runs per side, noise scale %.2f, wall time %.2f s\n", name,
	       WB_RUNS, scale, audit_now() - t0);
	free(xa);
	free(xb);
	free(a);
	return r.eps_lb;
}

START_TEST(test_white_box)
{
	double eps, lb = white_box_audit("level2/o2nc-tree-leaf1", 1.0, 0x243f6a8885a308d3u, &eps);

	ck_assert_msg(lb <= eps, "o2nc_tree leaf 1: eps_lb %.4f > claimed %.4f", lb, eps);
}
END_TEST

START_TEST(test_white_box_mutated)
{
	const double scale = 0.25;
	struct zo_audit *a = calloc(1, sizeof(*a));
	double sigma, B1, half, mu, eps, eps_true, miss = 1.0, best_u = NAN, lb, rho_eff;

	/* Design check from the plan alone: the mutated mechanism's true
	 * epsilon and the power of the best planned grid test. */
	ck_assert_ptr_nonnull(a);
	worlds_init(a, 1.0);
	eps = claimed(&a->w[0].plan);
	sigma = run_plan_value(&a->w[0].plan, "noise_sigma");
	B1 = run_plan_value(&a->w[0].plan, "batch_size");
	rho_eff = run_plan_value(&a->w[0].plan, "rho_eff");
	half = sqrt(3.0) / B1; /* the canary's shift of s, each side */
	mu = 2.0 * half / (scale * sigma);
	ck_assert_int_eq(ag_epsilon_mu(mu, CLAIM_DELTA, &eps_true, NULL), ERR_OK);
	for (int i = 0; i < GRID_K; i++) {
		double u = -GRID_U + 2.0 * GRID_U * i / (GRID_K - 1), sm = scale * sigma;
		double m = audit_miss(WB_RUNS, audit_normal_sf((u * sigma - half) / sm), WB_RUNS,
				      audit_normal_sf((u * sigma + half) / sm),
				      ALPHA / (4.0 * GRID_K), CLAIM_DELTA, eps);

		if (m < miss) {
			miss = m;
			best_u = u;
		}
	}
	printf("level2/o2nc-tree-leaf1-mutated: sigma x %.2f, mu_audit = %.4f (unmutated %.4f = "
	       "%.3f rho_eff), true eps(%.0e) = %.4f (claimed %.4f); best planned test u = %.3f, "
	       "N = %d: P[mutation missed] <= %.2g\n",
	       scale, mu, mu * scale, mu * scale / rho_eff, CLAIM_DELTA, eps_true, eps, best_u,
	       WB_RUNS, miss);
	free(a);
	ck_assert(eps_true > eps);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.6f", miss);

	lb = white_box_audit("level2/o2nc-tree-leaf1-mutated", scale, 0x13198a2e03707344u, &eps);
	ck_assert_msg(lb > eps, "sigma x %.2f not detected: eps_lb %.4f <= claimed %.4f", scale, lb,
		      eps);
}
END_TEST

static double
zo_result_sample(void *ctx, int world, struct rng *r)
{
	struct zo_audit *a = ctx;
	const struct world *w = &a->w[world];
	double u[1];
	struct err e = { 0 };

	if (alg_run(zo(), &w->spec, &w->plan, &w->ds, r, NULL, NULL, u, &e) != ERR_OK)
		ck_abort_msg("run: %s", e.msg);
	return -u[0]; /* world A's GRAD is +1 / B1: its point moves down */
}

START_TEST(test_end_to_end)
{
	enum { N = 100000 };
	struct zo_audit *a = calloc(1, sizeof(*a));
	double *xa = malloc(N * sizeof(double)), *xb = malloc(N * sizeof(double)), eps;
	struct audit_config c = { .name = "level3/o2nc-tree-result",
				  .delta = CLAIM_DELTA,
				  .alpha = ALPHA,
				  .method = AUDIT_SPLIT,
				  .candidates = 256 };
	struct audit_result r;
	double t0 = audit_now();

	ck_assert(a != NULL && xa != NULL && xb != NULL);
	worlds_init(a, 1.0);
	a->hook.release = NULL; /* placement only */
	eps = claimed(&a->w[0].plan);
	audit_draw(zo_result_sample, a, 0, 0x452821e638d01377u, xa, N);
	audit_draw(zo_result_sample, a, 1, 0xbe5466cf34e90c6cu, xb, N);
	ck_assert_int_eq(audit_eps_lb(&c, xa, N, xb, N, &r), 0);
	audit_print(stdout, &c, &r, eps);
	printf("audit level3/o2nc-tree-result: N = %d runs per side, wall time %.2f s\n", N,
	       audit_now() - t0);
	ck_assert_msg(r.eps_lb <= eps, "end to end: eps_lb %.4f > claimed %.4f", r.eps_lb, eps);
	free(xa);
	free(xb);
	free(a);
}
END_TEST

/*
 * Level 3's mutation twin: the returned point of the same worlds (no hook
 * but placement and the mutation), sigma x E2E_SCALE, a fixed threshold 0
 * (grid {0, 1e-9}: 2 thresholds, 8 bounds).  Its power, computed from the
 * plan before sampling, from a sign argument that holds whatever the
 * projections do: g~_1 .. g~_6 reach the returned point (g~_7 is released
 * after the last step), g~_t = +-mu + TREE(t) with mu = 1/B1 the canary's
 * clipped GRAD (d = 1, every other record's f is 0), TREE(t) the sum of
 * popcount(t) independent lattice Gaussians of parameter s sigma, each
 * s^2 sigma^2-sub-Gaussian (Canonne, Kamath, Steinke 2020), so
 * P[TREE(t) <= -mu] <= exp(-mu^2 / (2 popcount(t) s^2 sigma^2)).  When
 * every g~_t > 0 (world A), every Delta_t < 0 for t >= 2 (Pi_D scales,
 * never flips), x_t <= 0, w_3 < 0 and the returned average is < 0 (the
 * projection onto the ball keeps the sign): the statistic -u > 0.  World B
 * is the mirror image.  So tpr(0) >= 1 - p, fpr(0) <= p with p = sum_{t <=
 * 6} exp(-mu^2 / (2 popcount(t) s^2 sigma^2)), and audit_miss at those
 * rates bounds the miss (eps_from_counts grows with k_A and falls with
 * k_B).  The scale is the largest of {0.5, 0.25, 0.1, 0.05, 0.02, 0.015,
 * 0.0125, 0.01, 0.005} whose bound is <= 1e-3 at N = 20,000 runs a side; above
 * about 0.013 this sign argument cannot certify it (p nears 1/2 - the claim
 * margin), and at s >= 0.536 no
 * audit can detect it at any N (the returned point is a post-processing
 * of the three canary nodes, mu_audit / s <= rho_eff; README).
 */
START_TEST(test_end_to_end_mutated)
{
	enum { N = 20000 };
	static const double scales[] = { 0.5, 0.25, 0.1, 0.05, 0.02, 0.015, 0.0125, 0.01, 0.005 };
	static const unsigned pop[] = { 1, 1, 2, 1, 2, 2 }; /* popcount(t), t = 1 .. 6 */
	struct zo_audit *a = calloc(1, sizeof(*a));
	double *xa = malloc(N * sizeof(double)), *xb = malloc(N * sizeof(double)), eps;
	double sigma, mu, scale = NAN, p = NAN, miss = 1.0, t0;
	struct audit_config c = { .name = "level3/o2nc-tree-result-mutated",
				  .delta = CLAIM_DELTA,
				  .alpha = ALPHA,
				  .method = AUDIT_GRID,
				  .lo = 0.0,
				  .hi = 1e-9,
				  .k = 2 };
	struct audit_result r;

	ck_assert(a != NULL && xa != NULL && xb != NULL);
	worlds_init(a, 1.0);
	eps = claimed(&a->w[0].plan);
	sigma = run_plan_value(&a->w[0].plan, "noise_sigma");
	mu = 1.0 / run_plan_value(&a->w[0].plan, "batch_size") - 1e-6; /* lattice rounding */
	for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]); i++) {
		double ps = 0.0, m;

		for (int t = 0; t < 6; t++)
			ps += exp(-mu * mu /
				  (2.0 * pop[t] * scales[i] * scales[i] * sigma * sigma));
		ps = fmin(ps, 0.5);
		m = audit_miss(N, 1.0 - ps, N, ps, ALPHA / (4.0 * c.k), CLAIM_DELTA, eps);
		printf("level3/o2nc-tree-result-mutated: sigma x %.4f: p <= %.3g, P[missed] <= "
		       "%.3g\n",
		       scales[i], ps, m);
		if (m <= 1e-3) {
			scale = scales[i];
			p = ps;
			miss = m;
			break;
		}
	}
	ck_assert_msg(!isnan(scale), "no scale of the list is certified at N = %d", N);
	printf("level3/o2nc-tree-result-mutated: sigma %.4f x %.4f, mu = 1/B1 = %.4f: tpr(0) >= "
	       "%.4f, fpr(0) <= %.4f, N = %d: P[mutation missed] <= %.2g (computed before "
	       "sampling)\n",
	       sigma, scale, mu, 1.0 - p, p, N, miss);
	worlds_init(a, scale);
	a->hook.release = NULL; /* placement and mutation only */
	t0 = audit_now();
	audit_draw(zo_result_sample, a, 0, 0x3f84d5b5b5470917u, xa, N);
	audit_draw(zo_result_sample, a, 1, 0x9216d5d98979fb1bu, xb, N);
	ck_assert_int_eq(audit_eps_lb(&c, xa, N, xb, N, &r), 0);
	audit_print(stdout, &c, &r, eps);
	printf("audit level3/o2nc-tree-result-mutated: N = %d runs per side, wall time %.2f s\n", N,
	       audit_now() - t0);
	ck_assert_msg(r.eps_lb > eps, "sigma x %.4f not detected end to end: eps_lb %.4f <= %.4f",
		      scale, r.eps_lb, eps);
	free(xa);
	free(xb);
	free(a);
}
END_TEST

/* The hook: with the noise scaled to almost nothing s is the canary's
 * +-sqrt(3) / B1 in every run (placement and clip work). */
START_TEST(test_hook)
{
	struct zo_audit *a = calloc(1, sizeof(*a));
	struct rng r;

	ck_assert_ptr_nonnull(a);
	worlds_init(a, 1e-6);
	for (uint64_t seed = 1; seed <= 20; seed++)
		for (int k = 0; k < 2; k++) {
			rng_splitmix_init(&r, seed);
			ck_assert_double_eq_tol(zo_sample(a, k, &r),
						(k == 0 ? 1.0 : -1.0) * sqrt(3.0) / 8.0, 1e-4);
		}
	free(a);
}
END_TEST

static Suite *
zo_audit_suite(void)
{
	Suite *s = suite_create("audit_zeroth_order");
	TCase *wb = tcase_create("white_box");
	TCase *hook = tcase_create("hook");

	tcase_add_test(hook, test_hook);
	suite_add_tcase(s, hook);
	tcase_set_timeout(wb, 300);
	tcase_add_test(wb, test_white_box);
	tcase_add_test(wb, test_white_box_mutated);
	tcase_add_test(wb, test_end_to_end);
	tcase_add_test(wb, test_end_to_end_mutated);
	suite_add_tcase(s, wb);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(zo_audit_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
