/*
 * test_audit_mirror_descent.c - level 2 of the privacy audits of
 * mirror_descent.noisy and mirror_descent.localized (docs/privacy-model.md
 * §7; tests/audit/README.md), each with its mutation twin.  The pattern is
 * test_audit_dp_sgd_subsampled.c's.
 *
 * noisy: the event is self_composed(sampled_without_replacement(n, b,
 * gaussian(z)), T).  The accountant's unit is the base mechanism: one
 * batch mean released with N(0, sigma^2 I), sigma = z Delta, Delta = 2C/b
 * (replace-one).  Through the DPOPT_TESTING hook the canary is put into
 * the first batch and the first noisy batch mean is read, so the claim
 * audited is epsilon(delta) of gaussian(z) alone, on the exact analytic
 * curve (larger than the run's amplified charge at T = 1).
 *
 * localized: the event is parallel over phases of the same form, phase 1
 * calibrated to the full epsilon (the worst phase: the later ones get
 * 2^(1-i) epsilon); the canary is put into phase 1's first batch and the
 * run's first release is read; the claim is gaussian(z_1) alone.
 *
 * Data: least_squares, feature_l2 = 1, label = 1, the l1 ball of radius
 * R = 1e-3, so the clip is C = G = 1.001 (min(G, L_inf sqrt(d)) with L_inf
 * = G here); n = 8, d = 2, (epsilon, delta) = (1, 1e-5) on a 'basic'
 * dataset.  noisy: n = 8, b = 4, params.steps = 1; localized: its own
 * schedule at n = 5 (one phase, n_1 = b_1 = 2, T_1 = 1: the whole chunk,
 * so the unit's claim is the run's charge).  The canary (record 3)
 * has label -1 and features +e_1 or -e_1; the other records lie on e_2,
 * so s = <g_1, e_1> is exactly +-1/b + N(0, sigma^2) (every run starts at
 * x_0 = 0): a Gaussian mechanism with mu = 2 / (b sigma) <= 1 / z.
 * Bound: Bonferroni grid of 73 thresholds u sigma, u = -4.5 .. 4.5 step
 * 0.125, both directions; false-failure probability <= 1e-6.
 *
 * Mutation twin: the add/remove noise multiplier, sigma b / C instead of
 * sigma b / (2C), i.e. the noise calibrated to half the replace-one
 * sensitivity: sigma x 0.5 through the hook's noise_scale (plan and event
 * unchanged).  Its true epsilon and the power of the planned test (the
 * best grid threshold, audit_miss(), exact binomial sums) are computed
 * from the plan before the audit runs and printed; the test refuses to run
 * an audit whose miss probability exceeds 1e-3.
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

#define CLAIM_DELTA 1e-5
#define ALPHA       1e-6
#define GRID_K      73
#define GRID_U      4.5

#define WB_N      8
#define WB_D      2
#define WB_B      4
#define WB_CANARY 3
#define WB_RADIUS 1e-3
#define WB_RUNS   200000 /* per side; power computed in white_box_mutated */

/* The method under audit; each test sets it before building anything
 * (test-only global, forked per test). */
static const char *wb_alg = "mirror_descent.noisy";

static const struct alg_ops *
md(void)
{
	const struct alg_ops *a = alg_find(wb_alg);

	ck_assert_ptr_nonnull(a);
	return a;
}

struct world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	double x[WB_N * WB_D];
	double y[WB_N];
};

struct md_audit {
	struct world w[2];
	struct alg_testing_hook hook;
	double captured; /* <g_1, e_1>, written by the hook */
};

static void
on_release(void *ctx, unsigned long index, const double *value, size_t len)
{
	struct md_audit *a = ctx;

	(void)len;
	if (index == 0)
		a->captured = value[0];
}

static void
set_param(struct run_spec *s, const char *name, double v)
{
	for (size_t k = 0; md()->params[k].name != NULL; k++) {
		if (strcmp(md()->params[k].name, name) == 0) {
			s->params[k] = v;
			return;
		}
	}
	ck_abort_msg("no parameter %s", name);
}

static bool
is_noisy(void)
{
	return strcmp(wb_alg, "mirror_descent.noisy") == 0;
}

/* Records: WB_N (noisy), 5 (localized: one phase of n_1 = 2 = b_1, T_1 = 1). */
static size_t
wb_n(void)
{
	return is_noisy() ? WB_N : 5;
}

static void
spec_init(struct run_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->x.kind = CONSTRAINT_L1_BALL;
	s->x.radius = WB_RADIUS;
	s->epsilon = 1.0;
	s->delta = CLAIM_DELTA;
	alg_default_params(md(), s->params);
	if (is_noisy()) {
		set_param(s, "batch_size", WB_B);
		set_param(s, "steps", 1);
	}
	s->n = wb_n();
	s->schema.d = WB_D;
	s->schema.task = TASK_REGRESSION;
	s->schema.bounds.feature_l2 = 1.0;
	s->schema.bounds.feature_linf = NAN;
	s->schema.bounds.label = 1.0;
	s->mode = ACCOUNTING_BASIC;
	ck_assert_int_eq(run_spec_set_objective(s, objective_find("least_squares"), NULL, NULL),
			 ERR_OK);
}

static double
used_value(const struct run_plan *p, const char *name)
{
	double v = run_plan_value(p, name);

	ck_assert_msg(!isnan(v), "no used value '%s'", name);
	return v;
}

/* The unit's claim: epsilon(delta) of one gaussian(z), z the plan's (phase
 * 1's for localized); the run's own charge is met and below it. */
static double
claimed_unit(const struct run_plan *p)
{
	struct dp_event_tree t;
	struct accountant_report rep, run;
	struct err e = { 0 };

	dp_event_gaussian(&t, DP_REPLACE_ONE, used_value(p, "noise_multiplier"));
	ck_assert_msg(accountant_epsilon(&t, ACCOUNTING_BASIC, CLAIM_DELTA, NULL, true, &rep, &e) ==
			      ERR_OK,
		      "accountant: %s", e.msg);
	ck_assert(accountant_epsilon(&p->event, ACCOUNTING_BASIC, CLAIM_DELTA, NULL, true, &run,
				     &e) == ERR_OK);
	ck_assert(run.epsilon <= 1.0);
	/* noisy: the amplified charge is below the unit's; localized: one
	 * phase, one whole-chunk step, the unit is the run. */
	if (is_noisy())
		ck_assert(run.epsilon < rep.epsilon);
	else
		ck_assert(run.epsilon == rep.epsilon && p->steps == 1);
	return rep.epsilon;
}

static void
worlds_init(struct md_audit *a)
{
	struct rng r;
	struct err e = { 0 };

	memset(a, 0, sizeof(*a));
	for (int k = 0; k < 2; k++) {
		struct world *w = &a->w[k];

		rng_splitmix_init(&r, 0x3c6ef372fe94f82bu);
		for (size_t i = 0; i < wb_n(); i++) {
			w->x[i * WB_D + 1] = 2.0 * rng_uniform(&r) - 1.0;
			w->y[i] = 2.0 * rng_uniform(&r) - 1.0;
		}
		memset(w->x + WB_CANARY * WB_D, 0, WB_D * sizeof(double));
		w->x[WB_CANARY * WB_D] = k == 0 ? 1.0 : -1.0;
		w->y[WB_CANARY] = -1.0;
		w->ds.n = wb_n();
		w->ds.d = WB_D;
		w->ds.x = w->x;
		w->ds.y = w->y;
		spec_init(&w->spec);
		a->hook.place_first = true;
		a->hook.first_record = WB_CANARY;
		a->hook.release = on_release;
		a->hook.ctx = a;
		w->spec.testing_hook = &a->hook;
		ck_assert_msg(alg_plan(md(), &w->spec, &w->plan, &e) == ERR_OK, "plan: %s", e.msg);
	}
	ck_assert(dp_event_equal(&a->w[0].plan.event, &a->w[1].plan.event));
}

static double
md_sample(void *ctx, int world, struct rng *r)
{
	struct md_audit *a = ctx;
	const struct world *w = &a->w[world];
	double x[WB_D];
	struct err e = { 0 };

	a->captured = NAN;
	if (alg_run(md(), &w->spec, &w->plan, &w->ds, r, NULL, NULL, x, &e) != ERR_OK)
		ck_abort_msg("run: %s", e.msg);
	if (!isfinite(a->captured))
		ck_abort_msg("the hook saw no first release");
	return a->captured;
}

/* The first batch's size: b (noisy), b_1 (localized). */
static double
first_batch(const struct run_plan *p)
{
	return used_value(p, "batch_size");
}

static double
white_box_audit(const char *name, double scale, uint64_t seed, double *ret_claim)
{
	struct md_audit *a = calloc(1, sizeof(*a));
	double *xa = malloc(WB_RUNS * sizeof(double)), *xb = malloc(WB_RUNS * sizeof(double));
	struct audit_config c;
	struct audit_result r;
	double sigma, z, c_clip, b, t0 = audit_now();

	ck_assert(a != NULL && xa != NULL && xb != NULL);
	worlds_init(a);
	a->hook.noise_scale = scale;
	sigma = used_value(&a->w[0].plan, "noise_sigma");
	z = used_value(&a->w[0].plan, "noise_multiplier");
	c_clip = used_value(&a->w[0].plan, "clip");
	b = first_batch(&a->w[0].plan);
	ck_assert_double_eq_tol(c_clip, 1.0 + WB_RADIUS, 1e-12);
	ck_assert_double_eq(b, is_noisy() ? (double)WB_B : 2.0);
	if (!is_noisy())
		ck_assert_double_eq(used_value(&a->w[0].plan, "phases"), 1.0);
	ck_assert_double_eq_tol(sigma, z * used_value(&a->w[0].plan, "sensitivity_lattice"), 1e-15);
	ck_assert(used_value(&a->w[0].plan, "sensitivity_lattice") <=
		  2.0 * c_clip / b * (1.0 + 1e-6));
	*ret_claim = claimed_unit(&a->w[0].plan);
	c = (struct audit_config){ .name = name,
				   .delta = CLAIM_DELTA,
				   .alpha = ALPHA,
				   .method = AUDIT_GRID,
				   .lo = -GRID_U * sigma,
				   .hi = GRID_U * sigma,
				   .k = GRID_K };
	printf("%s: n = %zu, b = %.0f, T = %lu, z = %.6f, sigma = %.6f (x %.2f)\n", name, wb_n(), b,
	       a->w[0].plan.steps, z, sigma, scale);
	audit_draw(md_sample, a, 0, seed, xa, WB_RUNS);
	audit_draw(md_sample, a, 1, seed ^ 0x9e3779b97f4a7c15u, xb, WB_RUNS);
	ck_assert_int_eq(audit_eps_lb(&c, xa, WB_RUNS, xb, WB_RUNS, &r), 0);
	audit_print(stdout, &c, &r, *ret_claim);
	printf("audit %s: N = %d runs per side, wall time %.2f s\n", name, WB_RUNS,
	       audit_now() - t0);
	free(xa);
	free(xb);
	free(a);
	return r.eps_lb;
}

static void
white_box(const char *name, uint64_t seed)
{
	double eps, lb = white_box_audit(name, 1.0, seed, &eps);

	ck_assert_msg(lb <= eps, "eps_lb %.4f > claimed %.4f", lb, eps);
}

static void
white_box_mutated(const char *name, uint64_t seed)
{
	struct run_spec s;
	struct run_plan p;
	double z, c, b, mu, eps, eps_true, miss = 1.0, best_u = NAN, lb;

	spec_init(&s);
	ck_assert(alg_plan(md(), &s, &p, NULL) == ERR_OK);
	eps = claimed_unit(&p);
	z = used_value(&p, "noise_multiplier");
	c = used_value(&p, "clip");
	b = first_batch(&p);
	/* The canary moves the mean by 2/b; the mutated sigma is z C / b (the
	 * add/remove multiplier). */
	mu = (2.0 / b) / (z * c / b);
	ck_assert_int_eq(ag_epsilon_mu(mu, CLAIM_DELTA, &eps_true, NULL), ERR_OK);
	for (int k = 0; k < GRID_K; k++) {
		double u = -GRID_U + 2.0 * GRID_U * k / (GRID_K - 1), sm = 0.5, h = 0.5 * mu * sm;
		double m = audit_miss(WB_RUNS, audit_normal_sf((u - h) / sm), WB_RUNS,
				      audit_normal_sf((u + h) / sm), ALPHA / (4.0 * GRID_K),
				      CLAIM_DELTA, eps);

		if (m < miss) {
			miss = m;
			best_u = u;
		}
	}
	printf("%s: sigma x 0.5 (add/remove multiplier), mu = %.4f, true eps(%.0e) = %.4f vs "
	       "claimed %.4f; best planned test u = %.3f, N = %d: P[mutation missed] <= %.2g\n",
	       name, mu, CLAIM_DELTA, eps_true, eps, best_u, WB_RUNS, miss);
	ck_assert(eps_true > eps);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.6f", miss);

	lb = white_box_audit(name, 0.5, seed, &eps);
	ck_assert_msg(lb > eps, "sigma x 0.5 not detected: eps_lb %.4f <= claimed %.4f", lb, eps);
}

START_TEST(test_noisy)
{
	wb_alg = "mirror_descent.noisy";
	white_box("level2/mirror_descent_noisy", 0x510e527fade682d3u);
}
END_TEST

START_TEST(test_noisy_mutated)
{
	wb_alg = "mirror_descent.noisy";
	white_box_mutated("level2/mirror_descent_noisy-mutated", 0x9b05688c2b3e6c11u);
}
END_TEST

START_TEST(test_localized)
{
	wb_alg = "mirror_descent.localized";
	white_box("level2/mirror_descent_localized", 0x1f83d9abfb41bd65u);
}
END_TEST

START_TEST(test_localized_mutated)
{
	wb_alg = "mirror_descent.localized";
	white_box_mutated("level2/mirror_descent_localized-mutated", 0x5be0cd19137e2173u);
}
END_TEST

/* The hook, for both methods: a zero hook leaves runs bit-identical; with
 * almost no noise the first release is the canary's exact +-e_1 / b in
 * every run (the placement works). */
START_TEST(test_hook)
{
	static const char *const names[2] = { "mirror_descent.noisy", "mirror_descent.localized" };

	for (int m = 0; m < 2; m++) {
		struct md_audit *a = calloc(1, sizeof(*a));
		struct alg_testing_hook zero = { 0 };
		struct world *w;
		double x0[WB_D], x1[WB_D], b;
		struct rng r;
		struct err e = { 0 };

		ck_assert_ptr_nonnull(a);
		wb_alg = names[m];
		worlds_init(a);
		w = &a->w[0];
		b = first_batch(&w->plan);
		for (uint64_t seed = 1; seed <= 20; seed++) {
			const struct alg_testing_hook *hooks[2] = { &zero, NULL };

			for (int k = 0; k < 2; k++) {
				rng_splitmix_init(&r, seed);
				w->spec.testing_hook = hooks[k];
				ck_assert(alg_run(md(), &w->spec, &w->plan, &w->ds, &r, NULL, NULL,
						  k == 0 ? x0 : x1, &e) == ERR_OK);
			}
			ck_assert(memcmp(x0, x1, sizeof(x0)) == 0);
		}
		w->spec.testing_hook = &a->hook;
		a->hook.noise_scale = 0.1 / ldexp(used_value(&w->plan, "noise_sigma"),
						  -(int)used_value(&w->plan, "lattice_step_log2"));
		for (uint64_t seed = 1; seed <= 200; seed++) {
			double want = (seed & 1) ? -1.0 / b : 1.0 / b;

			rng_splitmix_init(&r, seed);
			ck_assert_double_eq_tol(md_sample(a, (int)(seed & 1), &r), want, 1e-9);
		}
		free(a);
	}
}
END_TEST

static Suite *
audit_suite(void)
{
	Suite *s = suite_create("audit_mirror_descent");
	TCase *wb = tcase_create("white_box");
	TCase *hook = tcase_create("hook");

	tcase_add_test(hook, test_hook);
	suite_add_tcase(s, hook);
	tcase_set_timeout(wb, 300);
	tcase_add_test(wb, test_noisy);
	tcase_add_test(wb, test_noisy_mutated);
	tcase_add_test(wb, test_localized);
	tcase_add_test(wb, test_localized_mutated);
	suite_add_tcase(s, wb);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(audit_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
