/*
 * test_audit_dp_sgd_subsampled.c - level 2 of the privacy audits of
 * dp_sgd.subsampled (docs/privacy-model.md §7; tests/audit/README.md),
 * with its mutation twin.
 *
 * The event is self_composed(sampled_without_replacement(n, b,
 * gaussian(z)), T).  The accountant's unit is the base mechanism: one
 * batch mean, released with N(0, sigma^2 I) noise, sigma = z Delta, Delta =
 * 2 G / b (replace-one).  The amplification by sampling is the accountant's
 * (WBK19) and is not what this audit measures: through the DPOPT_TESTING
 * hook the canary is put into the first batch (conditioning on its
 * inclusion) and the noisy first-batch gradient g_1 is read, so the claim
 * audited is epsilon(delta) of gaussian(z) alone, on the exact analytic
 * curve, which is larger than the run's amplified charge.
 *
 * Data as in test_audit_dp_sgd.c: least_squares, feature_l2 = 1, label = 1,
 * ball radius R = 1e-3, so G = 1.001 and the default clip C = X Y = 1 (the
 * gradient bound at the start); n = 8, d = 2, b = 4, params.steps = 1
 * (T = 1; the run's (epsilon, delta) = (1, 1e-5) on a 'basic' dataset).
 * The canary (record 5) has label -1 and features +e_1 or -e_1; the other
 * records lie on e_2, so s = <g_1, e_1> is exactly +-1/b + N(0, sigma^2),
 * sigma = z 2C/b: a Gaussian mechanism with mu = 1 / z.
 *
 * The same pair with b = n = 8 (whole-data steps, the default rule's
 * batch on small data): the event is self_composed(gaussian(z), 1), no
 * sampling, so the unit's claim is the run's charge itself; the canary is
 * in the batch without the hook's placement (the run reads every row in
 * order).  Bound: Bonferroni grid of 73
 * thresholds u sigma, u = -4.5 .. 4.5 step 0.125, both directions;
 * false-failure probability <= 1e-6.
 *
 * Mutation twin: the add/remove noise multiplier, z' = sigma b / G instead
 * of sigma b / (2G), i.e. the noise calibrated to half the replace-one
 * sensitivity: sigma x 0.5 through the hook's noise_scale (plan and event
 * unchanged).  Its true epsilon and the power of the planned test (the best
 * grid threshold, audit_miss(), exact binomial sums) are computed from the
 * plan in test_white_box_mutated before the audit runs and printed; the
 * test refuses to run an audit whose miss probability exceeds 1e-3.
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
#define WB_CANARY 5
#define WB_RADIUS 1e-3
#define WB_RUNS   200000 /* per side; power computed in test_white_box_mutated */

/* The batch size of the worlds (WB_B, or WB_N for whole-data steps); each
 * test sets it before building anything (test-only global, forked per test). */
static int wb_b = WB_B;

static const struct alg_ops *
sub(void)
{
	/* looked up once: a Check assertion per run is a pipe write */
	static const struct alg_ops *a;

	if (a == NULL) {
		a = alg_find("dp_sgd.subsampled");
		ck_assert_ptr_nonnull(a);
	}
	return a;
}

struct world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	double x[WB_N * WB_D];
	double y[WB_N];
};

struct sub_audit {
	struct world w[2];
	struct alg_testing_hook hook;
	double captured; /* <g_1, e_1>, written by the hook */
};

static void
on_release(void *ctx, unsigned long index, const double *value, size_t len)
{
	struct sub_audit *a = ctx;

	(void)len;
	if (index == 0)
		a->captured = value[0];
}

static size_t
param_index(const char *name)
{
	for (size_t k = 0; sub()->params[k].name != NULL; k++)
		if (strcmp(sub()->params[k].name, name) == 0)
			return k;
	ck_abort_msg("no parameter %s", name);
	return 0;
}

static void
spec_init(struct run_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->x.kind = CONSTRAINT_L2_BALL;
	s->x.radius = WB_RADIUS;
	s->epsilon = 1.0;
	s->delta = CLAIM_DELTA;
	alg_default_params(sub(), s->params);
	s->params[param_index("batch_size")] = wb_b;
	s->params[param_index("steps")] = 1;
	s->n = WB_N;
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

/* The unit's claim: epsilon(delta) of one gaussian(z), z the plan's. */
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
	/* The run's own (amplified) charge is met and below the unit's; the
	 * unit is the run itself with whole-data steps (T = 1). */
	ck_assert(accountant_epsilon(&p->event, ACCOUNTING_BASIC, CLAIM_DELTA, NULL, true, &run,
				     &e) == ERR_OK);
	ck_assert(run.epsilon <= 1.0);
	if (wb_b < WB_N)
		ck_assert(run.epsilon < rep.epsilon);
	else
		ck_assert(run.epsilon == rep.epsilon && p->event.node[1].type == DP_EVENT_GAUSSIAN);
	return rep.epsilon;
}

static void
worlds_init(struct sub_audit *a)
{
	struct rng r;
	struct err e = { 0 };

	memset(a, 0, sizeof(*a));
	for (int k = 0; k < 2; k++) {
		struct world *w = &a->w[k];

		rng_splitmix_init(&r, 0x3c6ef372fe94f82bu);
		for (size_t i = 0; i < WB_N; i++) {
			w->x[i * WB_D + 1] = 2.0 * rng_uniform(&r) - 1.0;
			w->y[i] = 2.0 * rng_uniform(&r) - 1.0;
		}
		memset(w->x + WB_CANARY * WB_D, 0, WB_D * sizeof(double));
		w->x[WB_CANARY * WB_D] = k == 0 ? 1.0 : -1.0;
		w->y[WB_CANARY] = -1.0;
		w->ds.n = WB_N;
		w->ds.d = WB_D;
		w->ds.x = w->x;
		w->ds.y = w->y;
		spec_init(&w->spec);
		a->hook.place_first = true;
		a->hook.first_record = WB_CANARY;
		a->hook.release = on_release;
		a->hook.ctx = a;
		w->spec.testing_hook = &a->hook;
		ck_assert_msg(alg_plan(sub(), &w->spec, &w->plan, &e) == ERR_OK, "plan: %s", e.msg);
	}
	ck_assert(dp_event_equal(&a->w[0].plan.event, &a->w[1].plan.event));
}

static double
sub_sample(void *ctx, int world, struct rng *r)
{
	struct sub_audit *a = ctx;
	const struct world *w = &a->w[world];
	double x[WB_D];
	struct err e = { 0 };

	a->captured = NAN;
	if (alg_run(sub(), &w->spec, &w->plan, &w->ds, r, NULL, NULL, x, &e) != ERR_OK)
		ck_abort_msg("run: %s", e.msg);
	if (!isfinite(a->captured))
		ck_abort_msg("the hook saw no first release");
	return a->captured;
}

static double
white_box_audit(const char *name, double scale, uint64_t seed, double *ret_claim)
{
	struct sub_audit *a = calloc(1, sizeof(*a));
	double *xa = malloc(WB_RUNS * sizeof(double)), *xb = malloc(WB_RUNS * sizeof(double));
	struct audit_config c;
	struct audit_result r;
	double sigma, z, g, c_clip, t0 = audit_now();

	ck_assert(a != NULL && xa != NULL && xb != NULL);
	worlds_init(a);
	a->hook.noise_scale = scale;
	sigma = used_value(&a->w[0].plan, "noise_sigma");
	z = used_value(&a->w[0].plan, "noise_multiplier");
	g = used_value(&a->w[0].plan, "grad_bound");
	c_clip = used_value(&a->w[0].plan, "clip");
	ck_assert_uint_eq(a->w[0].plan.steps, 1);
	ck_assert_double_eq_tol(g, 1.0 + WB_RADIUS, 1e-15);
	ck_assert_double_eq_tol(c_clip, 1.0, 1e-15);
	ck_assert_double_eq(used_value(&a->w[0].plan, "batch_size"), (double)wb_b);
	ck_assert_double_eq_tol(sigma, z * used_value(&a->w[0].plan, "sensitivity_lattice"), 1e-15);
	ck_assert(used_value(&a->w[0].plan, "sensitivity_lattice") <=
		  2.0 * c_clip / wb_b * (1.0 + 1e-6));
	*ret_claim = claimed_unit(&a->w[0].plan);
	c = (struct audit_config){ .name = name,
				   .delta = CLAIM_DELTA,
				   .alpha = ALPHA,
				   .method = AUDIT_GRID,
				   .lo = -GRID_U * sigma,
				   .hi = GRID_U * sigma,
				   .k = GRID_K };
	printf("%s: n = %d, b = %d, T = 1, z = %.6f, sigma = %.6f (x %.2f)\n", name, WB_N, wb_b, z,
	       sigma, scale);
	audit_draw(sub_sample, a, 0, seed, xa, WB_RUNS);
	audit_draw(sub_sample, a, 1, seed ^ 0x9e3779b97f4a7c15u, xb, WB_RUNS);
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
	double z, c, mu, eps, eps_true, miss = 1.0, best_u = NAN, lb;

	spec_init(&s);
	ck_assert(alg_plan(sub(), &s, &p, NULL) == ERR_OK);
	eps = claimed_unit(&p);
	z = used_value(&p, "noise_multiplier");
	c = used_value(&p, "clip");
	/* The mutated sigma is z C / b (the add/remove multiplier). */
	mu = (2.0 / wb_b) / (z * c / wb_b);
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

START_TEST(test_white_box)
{
	wb_b = WB_B;
	white_box("level2/dp_sgd_subsampled-batch", 0x510e527fade682d1u);
}
END_TEST

START_TEST(test_white_box_mutated)
{
	wb_b = WB_B;
	white_box_mutated("level2/dp_sgd_subsampled-batch-mutated", 0x9b05688c2b3e6c1fu);
}
END_TEST

START_TEST(test_white_box_whole)
{
	wb_b = WB_N;
	white_box("level2/dp_sgd_subsampled-whole", 0x1f83d9abfb41bd6bu);
}
END_TEST

START_TEST(test_white_box_whole_mutated)
{
	wb_b = WB_N;
	white_box_mutated("level2/dp_sgd_subsampled-whole-mutated", 0x5be0cd19137e2179u);
}
END_TEST

/* The hook: a zero hook leaves runs bit-identical; with almost no noise
 * the first release is the canary's exact +-e_1 / b in every run (the
 * placement works: without it the canary misses the batch half the
 * time). */
START_TEST(test_hook)
{
	struct sub_audit *a = calloc(1, sizeof(*a));
	struct alg_testing_hook zero = { 0 };
	struct world *w;
	double x0[WB_D], x1[WB_D];
	struct rng r;
	struct err e = { 0 };

	ck_assert_ptr_nonnull(a);
	wb_b = WB_B;
	worlds_init(a);
	w = &a->w[0];
	for (uint64_t seed = 1; seed <= 20; seed++) {
		const struct alg_testing_hook *hooks[2] = { &zero, NULL };

		for (int k = 0; k < 2; k++) {
			rng_splitmix_init(&r, seed);
			w->spec.testing_hook = hooks[k];
			ck_assert(alg_run(sub(), &w->spec, &w->plan, &w->ds, &r, NULL, NULL,
					  k == 0 ? x0 : x1, &e) == ERR_OK);
		}
		ck_assert(memcmp(x0, x1, sizeof(x0)) == 0);
	}
	w->spec.testing_hook = &a->hook;
	a->hook.noise_scale = 0.1 / ldexp(used_value(&w->plan, "noise_sigma"),
					  -(int)used_value(&w->plan, "lattice_step_log2"));
	for (uint64_t seed = 1; seed <= 200; seed++) {
		double want = (seed & 1) ? -1.0 / WB_B : 1.0 / WB_B;

		rng_splitmix_init(&r, seed);
		ck_assert_double_eq_tol(sub_sample(a, (int)(seed & 1), &r), want, 1e-9);
	}
	free(a);
}
END_TEST

static Suite *
audit_suite(void)
{
	Suite *s = suite_create("audit_dp_sgd_subsampled");
	TCase *wb = tcase_create("white_box");
	TCase *hook = tcase_create("hook");

	tcase_add_test(hook, test_hook);
	suite_add_tcase(s, hook);
	tcase_set_timeout(wb, 300);
	tcase_add_test(wb, test_white_box);
	tcase_add_test(wb, test_white_box_mutated);
	tcase_add_test(wb, test_white_box_whole);
	tcase_add_test(wb, test_white_box_whole_mutated);
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
