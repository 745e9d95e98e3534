/*
 * test_audit_smd_maurey.c - level 2 of the privacy audit of
 * saddle.smd_maurey (docs/privacy-model.md §7; tests/audit/README.md;
 * docs/algorithms/smd-maurey.md), with its mutation twin.
 *
 * The accountant's unit is one vertex draw, charged as
 * bounded_range(eps_0), eps_0 = 4 tau L_0 / B: for every vertex o,
 * log(P_A(o) / P_B(o)) lies in an interval of width eps_0.  The statistic
 * is the x player's first draw of step 2 (the first draw that sees data;
 * the hook's release at index 2 (K + 1)), on two 2-vertex simplices, so the
 * claim audited is the range itself, logit P_A(1) - logit P_B(1) <= eps_0,
 * bounded below from Clopper-Pearson counts (audit_range_lb: both
 * orientations, alpha / 8 each, false-failure probability <= alpha =
 * 1e-6).
 *
 * Worlds (bilinear, coupling 0, blocks a and b of two coordinates with
 * entries in [-1, 1], so L_x = L_y = 1 and L_0 = 1 on simplices of scale
 * 1): every record is zero but the canary, whose a is (1, -1) (A) or
 * (-1, 1) (B) and b zero.  Its x gradient is a whatever the query point,
 * so after step 1 (the canary put in batch 1 through the hook) the scores
 * -tau <e_i, G^1> differ between the worlds by tau 2 / B with opposite
 * signs on the two vertices: the range is 4 tau / B = eps_0 exactly, the
 * worst case the event assumes.  n = 8, T = 2 (B = 4), K = 1, the step
 * size given (tau = 1: eps_0 = 1, below the cap of epsilon = 10 over the
 * 8 draws), so the first vertex has p = 0.62 against 0.38.
 *
 * Mutation twin: the temperature 1 / tau halved through the hook's
 * noise_scale (plan, event and charge unchanged): the true range doubles.
 * Its miss probability is bounded before it runs from the exact binomial
 * laws (each count at its 1e-4 quantile on the unfavourable side): the
 * test refuses to run unless that bound exceeds the claim (P[miss] <=
 * 2e-4).  N = 20,000 runs per side.
 *
 * The same audit with x over a vertex list (issue 13): the segment
 * {(1, 0), (0, 0)} as a "polytope" (its centre (0.5, 0), R_c = 0.5, half
 * the simplex's), y on the simplex of scale 0.1 so that L_0 = max(R_c,x
 * L_x, R_c,y L_y) = 0.5 is x's: the scores -tau <v_i - c, G^1> differ
 * between the worlds by tau 1 / B with opposite signs, the range 2 tau / B
 * = 4 tau R_c / B = eps_0 exactly again.  An R_c computed too small (the
 * lifted sensitivity under-stated) makes the claim smaller than the range
 * and the audit fail; the temperature x 0.5 twin likewise.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "audit.h"
#include "objective.h"
#include "saddle.h"
#include "testing_hook.h"

#define ALPHA  1e-6
#define RUNS   20000
#define N      8
#define D      4 /* a (2) and b (2) */
#define CANARY 5

struct world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	double x[N * D];
};

struct smd_audit {
	struct world w[2];
	double seg[2 * 2 + 2 * 2 + 2]; /* the segment's storage (constraint_polytope()) */
	struct alg_testing_hook hook;
	unsigned long index; /* the release audited */
	double drawn;        /* its vertex */
	double claim;
};

static const struct alg_ops *
smd(void)
{
	/* looked up once: a Check assertion per run is a pipe write */
	static const struct alg_ops *a;

	if (a == NULL) {
		a = alg_find("saddle.smd_maurey");
		ck_assert_ptr_nonnull(a);
	}
	return a;
}

static size_t
param_index(const char *name)
{
	const struct alg_param *p = alg_param_find(smd(), name);

	ck_assert_msg(p != NULL, "no parameter %s", name);
	return (size_t)(p - smd()->params);
}

static void
on_release(void *ctx, unsigned long index, const double *value, size_t len)
{
	struct smd_audit *a = ctx;

	if (len != 1) /* no ck_assert() per release: a pipe write each */
		ck_abort_msg("release of length %zu", len);
	if (index == a->index)
		a->drawn = value[0];
}

static struct constraint
segment(double *st)
{
	struct constraint c;
	struct err e = { 0 };

	st[0] = 1.0;
	st[1] = 0.0;
	st[2] = 0.0;
	st[3] = 0.0;
	ck_assert_int_eq(constraint_polytope(&c, 2, 2, st, "constraints.x", &e), ERR_OK);
	ck_assert(c.centre_radius == 0.5);
	return c;
}

/* poly: x over segment() and y over the simplex of scale 0.1. */
static void
worlds_init(struct smd_audit *a, double scale, bool poly)
{
	struct objective_params op;
	struct data_schema s;
	struct objective o;
	struct err e = { 0 };

	memset(a, 0, sizeof(*a));
	memset(&s, 0, sizeof(s));
	s.d = D;
	s.task = TASK_UNLABELED;
	s.n_blocks = 2;
	s.blocks[0] = (struct data_block){ "a", 0, 2, NAN, 1.0 };
	s.blocks[1] = (struct data_block){ "b", 2, 2, NAN, 1.0 };
	s.bounds = (struct bounds){ 1.0, NAN, NAN, NAN, NAN };
	objective_params_default(&op);
	ck_assert_msg(objective_init(&o, objective_find("bilinear"), &op, &s, &e) == ERR_OK, "%s",
		      e.msg);
	a->hook.place_first = true;
	a->hook.first_record = CANARY;
	a->hook.noise_scale = scale;
	a->hook.release = on_release;
	a->hook.ctx = a;
	for (int k = 0; k < 2; k++) {
		struct world *w = &a->w[k];
		struct run_spec *sp = &w->spec;

		w->x[CANARY * D + 0] = k == 0 ? 1.0 : -1.0;
		w->x[CANARY * D + 1] = k == 0 ? -1.0 : 1.0;
		w->ds.n = N;
		w->ds.d = D;
		w->ds.x = w->x;
		sp->objective = o;
		sp->dim = o.dim;
		sp->schema = s;
		sp->n = N;
		sp->x = (struct constraint){ .kind = CONSTRAINT_SIMPLEX, .radius = 1.0 };
		sp->has_y = true;
		sp->y = sp->x;
		if (poly) {
			sp->x = segment(a->seg);
			sp->y.radius = 0.1;
		}
		sp->epsilon = 10.0;
		sp->delta = 1e-6;
		sp->mode = ACCOUNTING_BASIC;
		alg_default_params(smd(), sp->params);
		sp->params[param_index("steps")] = 2;
		sp->params[param_index("draws")] = 1;
		sp->params[param_index("step_size")] = 1.0;
		sp->testing_hook = &a->hook;
		ck_assert_msg(alg_plan(smd(), sp, &w->plan, &e) == ERR_OK, "plan: %s", e.msg);
	}
	ck_assert(dp_event_equal(&a->w[0].plan.event, &a->w[1].plan.event));
	/* The design's premises, from the plan (not eps_0's formula: the
	 * audit is what checks it). */
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "batch_size"), 4.0);
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "lipschitz_linf_x"), 1.0);
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "step_size"), 1.0);
	a->index = 2u * (1u + 1u); /* step 2, block x, its first draw */
	a->claim = run_plan_value(&a->w[0].plan, "draw_epsilon");
	ck_assert(a->claim > 0.25 && a->claim < 4.0);
}

/* Runs per world; returns the count of vertex 1 at the audited draw. */
static uint64_t
count_ones(struct smd_audit *a, int world, uint64_t seed)
{
	const struct alg_ops *alg = smd(); /* once: smd() asserts, a pipe write each */
	struct world *w = &a->w[world];
	uint64_t k = 0;
	struct rng r;
	struct err e = { 0 };
	double u[D];

	rng_splitmix_init(&r, seed);
	for (int i = 0; i < RUNS; i++) {
		a->drawn = NAN;
		if (alg_run(alg, &w->spec, &w->plan, &w->ds, &r, NULL, NULL, u, &e) != ERR_OK)
			ck_abort_msg("run: %s", e.msg);
		if (!(a->drawn == 0.0 || a->drawn == 1.0))
			ck_abort_msg("drawn %g", a->drawn);
		k += a->drawn == 1.0;
	}
	return k;
}

static double
audit_range(double scale, bool poly, uint64_t seed, double *ret_claim)
{
	struct smd_audit *a = calloc(1, sizeof(*a));
	uint64_t k_a, k_b;
	double lb, t0 = audit_now();

	ck_assert_ptr_nonnull(a);
	worlds_init(a, scale, poly);
	if (poly) /* the design's premise: x's R_c L_x = 0.5 is L_0 */
		ck_assert_double_eq(run_plan_value(&a->w[0].plan, "score_bound"), 0.5);
	k_a = count_ones(a, 0, seed);
	k_b = count_ones(a, 1, seed ^ 0x9e3779b97f4a7c15u);
	lb = audit_range_lb(k_a, k_b, RUNS, ALPHA);
	*ret_claim = a->claim;
	printf("level2/saddle.smd_maurey%s (temperature x %.2f): step 2's first x vertex 1 in %llu "
	       "/ "
	       "%d (A), %llu / %d (B); bounded-range lower bound %.4f vs claimed eps_0 %.4f; "
	       "false failure <= %.0e; wall %.2f s\n",
	       poly ? " over a polytope" : "", scale, (unsigned long long)k_a, RUNS,
	       (unsigned long long)k_b, RUNS, lb, a->claim, ALPHA, audit_now() - t0);
	free(a);
	return lb;
}

/* Loop index: 0 the simplices, 1 x over a vertex list. */
START_TEST(test_white_box)
{
	double claim, lb = audit_range(1.0, _i == 1, 0x4b7a70e9b5b32944u + (uint64_t)_i, &claim);

	ck_assert_msg(lb <= claim, "range lower bound %.4f > claimed %.4f", lb, claim);
}
END_TEST

START_TEST(test_white_box_mutated)
{
	struct smd_audit *a = calloc(1, sizeof(*a));
	double claim, p_a, lb_plan, lb;
	uint64_t q_a, q_b;

	ck_assert_ptr_nonnull(a);
	worlds_init(a, 1.0, _i == 1);
	claim = a->claim;
	free(a);
	/* Temperature x 0.5: logits +-claim, the range 2 claim (world A
	 * favours vertex 1: its scores -tau <e_i, a> / B). */
	p_a = 1.0 / (1.0 + exp(-claim));
	q_a = audit_binom_quantile(RUNS, p_a, 1e-4, true);
	q_b = audit_binom_quantile(RUNS, 1.0 - p_a, 1e-4, false);
	lb_plan = audit_range_lb(q_a, q_b, RUNS, ALPHA);
	printf("saddle.smd_maurey mutated: true range %.4f vs claim %.4f; with k_A >= %llu and "
	       "k_B <= %llu (each failing w.p. <= 1e-4) the bound is >= %.4f: P[mutation missed] "
	       "<= 2e-4\n",
	       2.0 * claim, claim, (unsigned long long)q_a, (unsigned long long)q_b, lb_plan);
	ck_assert_msg(lb_plan > claim, "the mutation audit is under-powered");
	lb = audit_range(0.5, _i == 1, 0x6c44198c4a475817u + (uint64_t)_i, &claim);
	ck_assert_msg(lb > claim, "temperature x 0.5 not detected: %.4f <= %.4f", lb, claim);
}
END_TEST

/* With almost no temperature the audited draw follows the canary: vertex
 * 1 in A (a = (1, -1): score of e_1 -tau / B, of e_2 +tau / B), 0 in B;
 * and a zero hook leaves runs bit-identical. */
START_TEST(test_hook)
{
	struct smd_audit *a = calloc(1, sizeof(*a));
	struct alg_testing_hook zero = { 0 };
	struct rng r;
	struct err e = { 0 };
	double u0[D], u1[D];

	ck_assert_ptr_nonnull(a);
	worlds_init(a, 1e-6, false);
	for (int k = 0; k < 2; k++)
		for (uint64_t seed = 1; seed <= 200; seed++) {
			rng_splitmix_init(&r, seed);
			ck_assert(alg_run(smd(), &a->w[k].spec, &a->w[k].plan, &a->w[k].ds, &r,
					  NULL, NULL, u0, &e) == ERR_OK);
			ck_assert_double_eq(a->drawn, k == 0 ? 1.0 : 0.0);
		}
	for (uint64_t seed = 1; seed <= 20; seed++) {
		const struct alg_testing_hook *hooks[2] = { &zero, NULL };

		for (int k = 0; k < 2; k++) {
			rng_splitmix_init(&r, seed);
			a->w[0].spec.testing_hook = hooks[k];
			ck_assert(alg_run(smd(), &a->w[0].spec, &a->w[0].plan, &a->w[0].ds, &r,
					  NULL, NULL, k == 0 ? u0 : u1, &e) == ERR_OK);
		}
		ck_assert(memcmp(u0, u1, sizeof(u0)) == 0);
	}
	free(a);
}
END_TEST

static Suite *
audit_suite(void)
{
	Suite *s = suite_create("audit_smd_maurey");
	TCase *hook = tcase_create("hook");
	TCase *wb = tcase_create("white_box");

	tcase_add_test(hook, test_hook);
	suite_add_tcase(s, hook);
	tcase_set_timeout(wb, 300);
	tcase_add_loop_test(wb, test_white_box, 0, 2);
	tcase_add_loop_test(wb, test_white_box_mutated, 0, 2);
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
