/*
 * test_audit_smd_queries.c - level 2 of the privacy audit of
 * synthetic.smd_queries (docs/privacy-model.md §7; tests/audit/README.md;
 * docs/algorithms/smd-queries.md §3), with its mutation twin.
 *
 * The accountant's unit is one query draw: the draw of J_t is charged as
 * (2 tau_y (t - 1) / n)-bounded-range (its square over 8 summed into the
 * run's zcdp rho).  The statistic is J_2, the first draw that sees the
 * data (the hook's release at index 1), and the claim audited is the range
 * itself, eps_2 = 2 tau_y sensitivity with the plan's tau_y and
 * sensitivity, bounded below from Clopper-Pearson counts of the event
 * "J_2 is q_0 or -q_1" (audit_range_lb: both orientations, alpha / 8
 * each, false-failure probability <= alpha = 1e-6).  The test also checks
 * that the plan's rho is eps_2^2 / 8 (T = 2: the draw of J_1 is free), so
 * the audited range is the charged one.
 *
 * Worlds: one categorical attribute of 2 values (universe 2, k = 1, the
 * queries q_0, q_1, -q_0, -q_1), n = 5 records {canary, 0, 0, 1, 1}, the
 * canary 0 (A) or 1 (B).  The answers a = (0.6, 0.4) and (0.4, 0.6) differ
 * by 1 / n with opposite signs on q_0 and q_1 (and on their negations), so
 * after step 1 (x^1 uniform either way) the scores of q_0 and -q_1 move by
 * +tau / n and those of q_1 and -q_0 by -tau / n: the range is 2 tau / n,
 * the worst case the event assumes.  T = 2, tau_y = 2.5 given (eps_2 = 1,
 * below the cap of epsilon = 10), so the event has p = 0.62 against 0.38.
 *
 * Level 3 (e2e): the same worlds, T = 3, tau_x = 20 and m = 400 rows
 * given, no hook but the twin's noise_scale: the released histogram.  The
 * output depends on the data only through J_2 (J_1 is data-independent,
 * J_3 moves only x^4, which is not averaged), so it is post-processing of
 * the one (2 tau_y / n)-bounded-range draw and its range is at most eps_2:
 * the claim.  With tau_x = 20, x^2 and x^3 sit on the cells of J_1 and
 * J_1 + J_2, xbar_0 is 5/6, 2/3, 1/3 or 1/6, and the statistic "count_0 >
 * 300 or 100 < count_0 < 200" decodes "J_2 in {q_0, -q_1}" up to the
 * binomial error eta computed in the test (< 1e-3).  The twin's miss
 * probability is bounded the same way with eta folded in.
 *
 * Mutation twin: the temperature 1 / tau_y halved through the hook's
 * noise_scale (plan, event and charge unchanged): the true range doubles
 * (the same as a sensitivity taken as 1 / (2n)).  Its miss probability is
 * bounded before it runs from the exact binomial laws (each count at its
 * 1e-4 quantile on the unfavourable side): the test refuses to run unless
 * that bound exceeds the claim (P[miss] <= 2e-4).  N = 20,000 runs per
 * side.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "audit.h"
#include "testing_hook.h"

#define ALPHA  1e-6
#define RUNS   20000
#define N      5
#define CANARY 0

struct world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	uint32_t cat[N];
};

struct smdq_audit {
	struct world w[2];
	struct alg_testing_hook hook;
	double drawn; /* J_2 */
	double claim;
};

static const struct alg_ops *
smdq(void)
{
	/* looked up once: a Check assertion per run is a pipe write */
	static const struct alg_ops *a;

	if (a == NULL) {
		a = alg_find("synthetic.smd_queries");
		ck_assert_ptr_nonnull(a);
	}
	return a;
}

static size_t
param_index(const char *name)
{
	const struct alg_param *p = alg_param_find(smdq(), name);

	ck_assert_msg(p != NULL, "no parameter %s", name);
	return (size_t)(p - smdq()->params);
}

static void
on_release(void *ctx, unsigned long index, const double *value, size_t len)
{
	struct smdq_audit *a = ctx;

	ck_assert_uint_eq(len, 1);
	if (index == 1)
		a->drawn = value[0];
}

static void
worlds_init(struct smdq_audit *a, double scale)
{
	static const uint32_t others[N - 1] = { 0, 0, 1, 1 };
	struct err e = { 0 };
	double tau, sens;

	memset(a, 0, sizeof(*a));
	a->hook.noise_scale = scale;
	a->hook.release = on_release;
	a->hook.ctx = a;
	for (int k = 0; k < 2; k++) {
		struct world *w = &a->w[k];
		struct run_spec *sp = &w->spec;

		w->cat[CANARY] = k == 0 ? 0 : 1;
		memcpy(w->cat + 1, others, sizeof(others));
		w->ds.n = N;
		w->ds.cat = w->cat;
		w->ds.n_categorical = 1;
		sp->schema.task = TASK_UNLABELED;
		sp->schema.n_categorical = 1;
		strcpy(sp->schema.categorical[0].name, "c");
		sp->schema.categorical[0].size = 2;
		sp->schema.bounds = (struct bounds){ NAN, NAN, NAN, NAN, NAN };
		sp->dim = 2;
		sp->n = N;
		sp->epsilon = 10.0;
		sp->delta = 1e-6;
		sp->mode = ACCOUNTING_BASIC;
		alg_default_params(smdq(), sp->params);
		sp->params[param_index("k")] = 1;
		sp->params[param_index("steps")] = 2;
		sp->params[param_index("step_size_y")] = 2.5;
		sp->testing_hook = &a->hook;
		ck_assert_msg(alg_plan(smdq(), sp, &w->plan, &e) == ERR_OK, "plan: %s", e.msg);
	}
	ck_assert(dp_event_equal(&a->w[0].plan.event, &a->w[1].plan.event));
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "queries"), 4.0);
	tau = run_plan_value(&a->w[0].plan, "step_size_y");
	sens = run_plan_value(&a->w[0].plan, "sensitivity");
	ck_assert_double_eq(tau, 2.5);
	/* The range of the draw of J_2 the plan assumes, and the charge is
	 * exactly its zCDP cost. */
	a->claim = 2.0 * tau * (2.0 - 1.0) * sens;
	ck_assert_int_eq(a->w[0].plan.event.node[0].type, DP_EVENT_ZCDP);
	ck_assert_double_eq_tol(a->w[0].plan.event.node[0].rho, a->claim * a->claim / 8.0, 1e-15);
	ck_assert(a->claim > 0.25 && a->claim < 4.0);
}

/* Runs per world; returns how often J_2 was q_0 (index 0) or -q_1
 * (index 3). */
static uint64_t
count_event(struct smdq_audit *a, int world, uint64_t seed)
{
	struct world *w = &a->w[world];
	uint64_t k = 0;
	struct rng r;
	struct err e = { 0 };
	double hist[2];

	rng_splitmix_init(&r, seed);
	for (int i = 0; i < RUNS; i++) {
		a->drawn = NAN;
		if (alg_run(smdq(), &w->spec, &w->plan, &w->ds, &r, NULL, NULL, hist, &e) != ERR_OK)
			ck_abort_msg("run: %s", e.msg);
		if (!(a->drawn >= 0.0 && a->drawn <= 3.0))
			ck_abort_msg("drawn %g", a->drawn);
		k += a->drawn == 0.0 || a->drawn == 3.0;
	}
	return k;
}

static double
audit_range(double scale, uint64_t seed, double *ret_claim)
{
	struct smdq_audit *a = calloc(1, sizeof(*a));
	uint64_t k_a, k_b;
	double lb, t0 = audit_now();

	ck_assert_ptr_nonnull(a);
	worlds_init(a, scale);
	k_a = count_event(a, 0, seed);
	k_b = count_event(a, 1, seed ^ 0x9e3779b97f4a7c15u);
	lb = audit_range_lb(k_a, k_b, RUNS, ALPHA);
	*ret_claim = a->claim;
	printf("level2/synthetic.smd_queries (temperature x %.2f): J_2 in {q_0, -q_1} in %llu / "
	       "%d (A), %llu / %d (B); bounded-range lower bound %.4f vs claimed eps_2 %.4f; "
	       "false failure <= %.0e; wall %.2f s\n",
	       scale, (unsigned long long)k_a, RUNS, (unsigned long long)k_b, RUNS, lb, a->claim,
	       ALPHA, audit_now() - t0);
	free(a);
	return lb;
}

START_TEST(test_white_box)
{
	double claim, lb = audit_range(1.0, 0x2f1c9a7d35e0b4c1u, &claim);

	ck_assert_msg(lb <= claim, "range lower bound %.4f > claimed %.4f", lb, claim);
}
END_TEST

START_TEST(test_white_box_mutated)
{
	struct smdq_audit *a = calloc(1, sizeof(*a));
	double claim, p_a, lb_plan, lb;
	uint64_t q_a, q_b;

	ck_assert_ptr_nonnull(a);
	worlds_init(a, 1.0);
	claim = a->claim;
	free(a);
	/* Temperature x 0.5: the scores of the event's queries +-claim / 2
	 * in A (and their complement's -+), so logit P_A = claim; B the
	 * mirror image. */
	p_a = 1.0 / (1.0 + exp(-claim));
	q_a = audit_binom_quantile(RUNS, p_a, 1e-4, true);
	q_b = audit_binom_quantile(RUNS, 1.0 - p_a, 1e-4, false);
	lb_plan = audit_range_lb(q_a, q_b, RUNS, ALPHA);
	printf("synthetic.smd_queries mutated: true range %.4f vs claim %.4f; with k_A >= %llu "
	       "and k_B <= %llu (each failing w.p. <= 1e-4) the bound is >= %.4f: P[mutation "
	       "missed] <= 2e-4\n",
	       2.0 * claim, claim, (unsigned long long)q_a, (unsigned long long)q_b, lb_plan);
	ck_assert_msg(lb_plan > claim, "the mutation audit is under-powered");
	lb = audit_range(0.5, 0x7a3e51c08d92f64bu, &claim);
	ck_assert_msg(lb > claim, "temperature x 0.5 not detected: %.4f <= %.4f", lb, claim);
}
END_TEST

/* With almost no temperature J_2 follows the canary: in {q_0, -q_1} in A,
 * in {q_1, -q_0} in B; and a zero hook leaves runs bit-identical. */
START_TEST(test_hook)
{
	struct smdq_audit *a = calloc(1, sizeof(*a));
	struct alg_testing_hook zero = { 0 };
	struct rng r;
	struct err e = { 0 };
	double h0[2], h1[2];

	ck_assert_ptr_nonnull(a);
	worlds_init(a, 1e-6);
	for (int k = 0; k < 2; k++)
		for (uint64_t seed = 1; seed <= 200; seed++) {
			bool in_event;

			rng_splitmix_init(&r, seed);
			ck_assert(alg_run(smdq(), &a->w[k].spec, &a->w[k].plan, &a->w[k].ds, &r,
					  NULL, NULL, h0, &e) == ERR_OK);
			in_event = a->drawn == 0.0 || a->drawn == 3.0;
			ck_assert(in_event == (k == 0));
		}
	for (uint64_t seed = 1; seed <= 20; seed++) {
		const struct alg_testing_hook *hooks[2] = { &zero, NULL };

		for (int k = 0; k < 2; k++) {
			rng_splitmix_init(&r, seed);
			a->w[0].spec.testing_hook = hooks[k];
			ck_assert(alg_run(smdq(), &a->w[0].spec, &a->w[0].plan, &a->w[0].ds, &r,
					  NULL, NULL, k == 0 ? h0 : h1, &e) == ERR_OK);
		}
		ck_assert(memcmp(h0, h1, sizeof(h0)) == 0);
	}
	free(a);
}
END_TEST

/* Level 3: the released histogram of m = 400 rows. */
#define E2E_ROWS 400

static bool
decodes_event(double count0)
{
	return count0 > 300.0 || (count0 > 100.0 && count0 < 200.0);
}

/* The largest probability that the statistic misreads J_2 (xbar_0 in
 * {5/6, 1/3}: the event; {2/3, 1/6}: not), from the exact binomial
 * laws; the x^t are within 1e-8 of their cells (tau_x = 20). */
static double
decoding_error(void)
{
	static const double p[4] = { 5.0 / 6.0, 1.0 / 3.0, 2.0 / 3.0, 1.0 / 6.0 };
	double worst = 0.0;

	for (int c = 0; c < 4; c++) {
		double miss = 0.0;

		for (uint64_t k = 0; k <= E2E_ROWS; k++)
			if (decodes_event((double)k) != (c < 2))
				miss += audit_binom_pmf(k, E2E_ROWS, p[c]);
		worst = fmax(worst, miss);
	}
	return worst + 1e-6;
}

static void
e2e_init(struct smdq_audit *a, double scale)
{
	struct err e = { 0 };

	worlds_init(a, scale);
	a->hook.release = NULL;
	for (int k = 0; k < 2; k++) {
		struct run_spec *sp = &a->w[k].spec;

		sp->params[param_index("steps")] = 3;
		sp->params[param_index("step_size_x")] = 20.0;
		sp->params[param_index("rows")] = E2E_ROWS;
		ck_assert_msg(alg_plan(smdq(), sp, &a->w[k].plan, &e) == ERR_OK, "plan: %s", e.msg);
	}
	/* The range of J_2, the one draw the output depends on. */
	ck_assert_double_eq(a->claim, 2.0 * run_plan_value(&a->w[0].plan, "step_size_y") *
					      run_plan_value(&a->w[0].plan, "sensitivity"));
}

static uint64_t
count_decoded(struct smdq_audit *a, int world, uint64_t seed)
{
	struct world *w = &a->w[world];
	uint64_t k = 0;
	struct rng r;
	struct err e = { 0 };
	double hist[2];

	rng_splitmix_init(&r, seed);
	for (int i = 0; i < RUNS; i++) {
		if (alg_run(smdq(), &w->spec, &w->plan, &w->ds, &r, NULL, NULL, hist, &e) != ERR_OK)
			ck_abort_msg("run: %s", e.msg);
		ck_assert(hist[0] + hist[1] == E2E_ROWS);
		k += decodes_event(hist[0]);
	}
	return k;
}

static double
audit_e2e(double scale, uint64_t seed, double *ret_claim)
{
	struct smdq_audit *a = calloc(1, sizeof(*a));
	uint64_t k_a, k_b;
	double lb, t0 = audit_now();

	ck_assert_ptr_nonnull(a);
	e2e_init(a, scale);
	k_a = count_decoded(a, 0, seed);
	k_b = count_decoded(a, 1, seed ^ 0x9e3779b97f4a7c15u);
	lb = audit_range_lb(k_a, k_b, RUNS, ALPHA);
	*ret_claim = a->claim;
	printf("level3/synthetic.smd_queries (temperature x %.2f): %d released rows decode J_2 in "
	       "{q_0, -q_1} in %llu / %d (A), %llu / %d (B); range lower bound %.4f vs claimed "
	       "eps_2 %.4f; false failure <= %.0e; wall %.2f s\n",
	       scale, E2E_ROWS, (unsigned long long)k_a, RUNS, (unsigned long long)k_b, RUNS, lb,
	       a->claim, ALPHA, audit_now() - t0);
	free(a);
	return lb;
}

START_TEST(test_e2e)
{
	double claim, lb = audit_e2e(1.0, 0x51ab3f0e9c2d7486u, &claim);

	ck_assert_msg(lb <= claim, "range lower bound %.4f > claimed %.4f", lb, claim);
}
END_TEST

START_TEST(test_e2e_mutated)
{
	struct smdq_audit *a = calloc(1, sizeof(*a));
	double claim, p, eta = decoding_error(), lb_plan, lb;
	uint64_t q_a, q_b;

	ck_assert_ptr_nonnull(a);
	e2e_init(a, 1.0);
	claim = a->claim;
	free(a);
	ck_assert_msg(eta < 1e-3, "decoding error %g", eta);
	/* Temperature x 0.5: P_A[J_2 in the event] = p, P_B = 1 - p; the
	 * statistic keeps at least p (1 - eta) in A and at most 1 - p + p
	 * eta in B. */
	p = 1.0 / (1.0 + exp(-claim));
	q_a = audit_binom_quantile(RUNS, p * (1.0 - eta), 1e-4, true);
	q_b = audit_binom_quantile(RUNS, 1.0 - p + p * eta, 1e-4, false);
	lb_plan = audit_range_lb(q_a, q_b, RUNS, ALPHA);
	printf("synthetic.smd_queries e2e mutated: decoding error <= %.2e; with k_A >= %llu and "
	       "k_B <= %llu (each failing w.p. <= 1e-4) the bound is >= %.4f vs claim %.4f: "
	       "P[mutation missed] <= 2e-4\n",
	       eta, (unsigned long long)q_a, (unsigned long long)q_b, lb_plan, claim);
	ck_assert_msg(lb_plan > claim, "the mutation audit is under-powered");
	lb = audit_e2e(0.5, 0x0d6b2e94f7a1c358u, &claim);
	ck_assert_msg(lb > claim, "temperature x 0.5 not detected: %.4f <= %.4f", lb, claim);
}
END_TEST

static Suite *
audit_suite(void)
{
	Suite *s = suite_create("audit_smd_queries");
	TCase *hook = tcase_create("hook");
	TCase *wb = tcase_create("white_box");
	TCase *e2e = tcase_create("e2e");

	tcase_add_test(hook, test_hook);
	suite_add_tcase(s, hook);
	tcase_set_timeout(wb, 300);
	tcase_add_test(wb, test_white_box);
	tcase_add_test(wb, test_white_box_mutated);
	suite_add_tcase(s, wb);
	tcase_set_timeout(e2e, 300);
	tcase_add_test(e2e, test_e2e);
	tcase_add_test(e2e, test_e2e_mutated);
	suite_add_tcase(s, e2e);
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
