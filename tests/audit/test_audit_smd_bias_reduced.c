/*
 * test_audit_smd_bias_reduced.c - level 2 of the privacy audit of
 * saddle.smd_bias_reduced (docs/privacy-model.md §7; tests/audit/README.md;
 * docs/algorithms/smd-bias-reduced.md), with its mutation twin.
 *
 * The accountant's unit is one vertex draw, charged as
 * bounded_range(eps_s), eps_s = 2 tau max_N (2 L_0 / b_N)(2 w_N + 1): given
 * the run's past transcript (the levels and every earlier draw), for every
 * vertex o log(P_A(o) / P_B(o)) lies in an interval of width eps_s.  The
 * statistic is the first draw of iteration 2 (the x player's output draw,
 * the first draw that sees data), on two 2-vertex simplices, so the claim
 * audited is the range itself, logit P_A(1) - logit P_B(1) <= eps_s,
 * bounded below from Clopper-Pearson counts (audit_range_lb: both
 * orientations, alpha / 8 each, false-failure probability <= alpha =
 * 1e-6).
 *
 * The worst case needs the canary's gradients at x+, x- and x0 to move
 * the estimate w_N (G+ - G-) + G0 by the whole (2 L_0 / b)(2 w_N + 1): +,
 * - and + respectively.  No listed objective does that (bilinear's
 * gradient in x does not depend on x), so the worlds use a test-only
 * objective under bilinear's name (the method lists objectives by name):
 * f's x gradient is a(z) h(x_1), h(p) = 1 - 2 max(0, 1 - 4 |p - 1/2|) (h =
 * -1 at the midpoint 1/2, +1 at 0, 1/4, 3/4 and 1; |a| <= 1 so L_x = 1),
 * no y gradient (L_y = 1 declared), L_0 = 1.  Every record is zero but the
 * canary, whose a is (1, -1) (A) or (-1, 1) (B).
 *
 * The schedule: U = 4 (M = 1, Z_1 = 1.5, w_0 = 1.5, w_1 = 3), alpha = 2
 * (batches of one record at both levels), n = 8, so eps_s = 2 tau max(2
 * (2 w_0 + 1), 2 (2 w_1 + 1)) = 28 tau, attained at N = 1; tau = 1 / 28
 * given (eps_s = 1, below the cap of epsilon = 30 over the 24 draws).  The
 * canary is batch 1 (hook placement).  The audit conditions on iteration
 * 1's transcript (public levels and data-independent draws from the
 * uniform start, so the same law in both worlds): N_1 = 1, I_1 != I_2 (x-
 * the midpoint: h = -1) and I_3 = I_4 (x+ at 1/4 or 3/4: h = +1), one run
 * in 12.  Then S_x = (2 w_1 + 1) a = 7 a and the audited draw has logit
 * +-14 tau: the range 28 tau = eps_s exactly, the worst case the event
 * assumes.  COND = 6,000 conditioned runs per world (about 72,000 runs).
 *
 * Mutation twin: the temperature 1 / tau halved through the hook's
 * noise_scale (plan, event and charge unchanged): the true range doubles.
 * Its miss probability is bounded before it runs from the exact binomial
 * laws (each count at its 1e-4 quantile on the unfavourable side): the
 * test refuses to run unless that bound exceeds the claim (P[miss] <=
 * 2e-4).
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
#define COND   6000
#define N      8
#define D      4 /* a (2) and b (2) */
#define CANARY 5

static const struct alg_ops *
sbr(void)
{
	/* looked up once: a Check assertion per run is a pipe write */
	static const struct alg_ops *a;

	if (a == NULL) {
		a = alg_find("saddle.smd_bias_reduced");
		ck_assert_ptr_nonnull(a);
	}
	return a;
}

static size_t
param_index(const char *name)
{
	const struct alg_param *p = alg_param_find(sbr(), name);

	ck_assert_msg(p != NULL, "no parameter %s", name);
	return (size_t)(p - sbr()->params);
}

/* ---- the test-only objective ---- */

static double
hat(double p)
{
	return 1.0 - 2.0 * fmax(0.0, 1.0 - 4.0 * fabs(p - 0.5));
}

static double
hat_eval(const struct objective *o, const struct dataset *ds, size_t i, const double *x,
	 const double *y, double scale, double *g)
{
	const double *a = ds->x + i * ds->d + o->offset_x, h = hat(x[0]);

	(void)y;
	if (g != NULL)
		for (size_t j = 0; j < o->dim_x; j++)
			g[j] += scale * a[j] * h;
	return 0.0;
}

static enum err_code
hat_constants(const struct objective *o, const struct data_schema *s, const struct saddle_block *bx,
	      const struct saddle_block *by, struct saddle_constants *ret, struct err *e)
{
	(void)o;
	(void)s;
	(void)bx;
	(void)by;
	(void)e;
	ret->x.lipschitz_l2 = ret->x.lipschitz_dual = 1.0; /* |a_j h| <= 1 */
	ret->y.lipschitz_l2 = ret->y.lipschitz_dual = 1.0; /* declared; the y gradient is 0 */
	ret->value_bound = 0.0;
	return ERR_OK;
}

static struct saddle_ops hat_saddle;
static struct objective_ops hat_ops;

/* ---- the worlds ---- */

struct world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	double x[N * D];
};

struct sbr_audit {
	struct world w[2];
	struct alg_testing_hook hook;
	/* this run's transcript */
	unsigned level1;
	double xdraw[4];
	double drawn; /* NAN when the audited draw is not the x player's */
	double claim;
};

static void
on_release(void *ctx, unsigned long index, const double *v, size_t len)
{
	struct sbr_audit *a = ctx;

	/* No ck_assert here: in fork mode each one writes to Check's pipe,
	 * and this runs 24 times a run. */
	if (len != 4)
		abort();
	if (index == 0)
		a->level1 = (unsigned)v[2];
	if (a->level1 == 1 && index >= 2 && index < 6)
		a->xdraw[index - 2] = v[0];
	if (a->level1 == 1 && index == 10) {
		/* the x player's output draw of iteration 2 */
		a->drawn = v[1] == 0.0 ? v[0] : NAN;
	}
}

static void
worlds_init(struct sbr_audit *a, double scale)
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
	hat_saddle = *o.ops->saddle;
	hat_saddle.eval = hat_eval;
	hat_saddle.constants = hat_constants;
	hat_saddle.smoothness = SADDLE_QUADRATIC; /* a test's claim: accepted */
	hat_ops = *o.ops;
	hat_ops.saddle = &hat_saddle;
	o.ops = &hat_ops;
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
		sp->epsilon = 30.0;
		sp->delta = 1e-6;
		sp->mode = ACCOUNTING_BASIC;
		alg_default_params(sbr(), sp->params);
		sp->params[param_index("stop_budget")] = 4.0;
		sp->params[param_index("batch_ratio")] = 2.0;
		sp->params[param_index("step_size")] = 1.0 / 28.0;
		sp->testing_hook = &a->hook;
		ck_assert_msg(alg_plan(sbr(), sp, &w->plan, &e) == ERR_OK, "plan: %s", e.msg);
	}
	ck_assert(dp_event_equal(&a->w[0].plan.event, &a->w[1].plan.event));
	/* The design's premises, from the plan (not eps_s's formula: the
	 * audit is what checks it). */
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "levels"), 1.0);
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "batch_size_max"), 1.0);
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "score_bound"), 1.0);
	a->claim = run_plan_value(&a->w[0].plan, "draw_epsilon");
	ck_assert(a->claim > 0.25 && a->claim < 4.0);
}

/* Runs in one world until COND of them have the conditioned iteration 1;
 * returns how many of those drew vertex 1 at the audited draw. */
static uint64_t
count_ones(struct sbr_audit *a, int world, uint64_t seed, uint64_t *ret_runs)
{
	struct world *w = &a->w[world];
	uint64_t k = 0, cond = 0, runs = 0;
	struct rng r;
	struct err e = { 0 };
	double u[D];

	rng_splitmix_init(&r, seed);
	while (cond < COND) {
		a->drawn = NAN;
		a->level1 = 99;
		runs++;
		if (alg_run(sbr(), &w->spec, &w->plan, &w->ds, &r, NULL, NULL, u, &e) != ERR_OK)
			ck_abort_msg("run: %s", e.msg);
		if (a->level1 != 1 || a->xdraw[0] == a->xdraw[1] || a->xdraw[2] != a->xdraw[3])
			continue;
		if (!(a->drawn == 0.0 || a->drawn == 1.0))
			ck_abort_msg("drawn %g", a->drawn);
		cond++;
		k += a->drawn == 1.0;
	}
	*ret_runs = runs;
	return k;
}

static double
audit_range(double scale, uint64_t seed, double *ret_claim)
{
	struct sbr_audit *a = calloc(1, sizeof(*a));
	uint64_t k_a, k_b, r_a, r_b;
	double lb, t0 = audit_now();

	ck_assert_ptr_nonnull(a);
	worlds_init(a, scale);
	k_a = count_ones(a, 0, seed, &r_a);
	k_b = count_ones(a, 1, seed ^ 0x9e3779b97f4a7c15u, &r_b);
	lb = audit_range_lb(k_a, k_b, COND, ALPHA);
	*ret_claim = a->claim;
	printf("level2/saddle.smd_bias_reduced (temperature x %.2f): iteration 2's first x vertex "
	       "1 "
	       "in %llu / %d (A, of %llu runs), %llu / %d (B, of %llu runs); bounded-range lower "
	       "bound %.4f vs claimed eps_s %.4f; false failure <= %.0e; wall %.2f s\n",
	       scale, (unsigned long long)k_a, COND, (unsigned long long)r_a,
	       (unsigned long long)k_b, COND, (unsigned long long)r_b, lb, a->claim, ALPHA,
	       audit_now() - t0);
	free(a);
	return lb;
}

START_TEST(test_white_box)
{
	double claim, lb = audit_range(1.0, 0x2b7e151628aed2a6u, &claim);

	ck_assert_msg(lb <= claim, "range lower bound %.4f > claimed %.4f", lb, claim);
}
END_TEST

START_TEST(test_white_box_mutated)
{
	struct sbr_audit *a = calloc(1, sizeof(*a));
	double claim, p_a, lb_plan, lb;
	uint64_t q_a, q_b;

	ck_assert_ptr_nonnull(a);
	worlds_init(a, 1.0);
	claim = a->claim;
	free(a);
	/* Temperature x 0.5: logits +-claim, the range 2 claim (world A
	 * favours vertex 1: its scores -7 tau a). */
	p_a = 1.0 / (1.0 + exp(-claim));
	q_a = audit_binom_quantile(COND, p_a, 1e-4, true);
	q_b = audit_binom_quantile(COND, 1.0 - p_a, 1e-4, false);
	lb_plan = audit_range_lb(q_a, q_b, COND, ALPHA);
	printf("saddle.smd_bias_reduced mutated: true range %.4f vs claim %.4f; with k_A >= %llu "
	       "and k_B <= %llu (each failing w.p. <= 1e-4) the bound is >= %.4f: P[mutation "
	       "missed] <= 2e-4\n",
	       2.0 * claim, claim, (unsigned long long)q_a, (unsigned long long)q_b, lb_plan);
	ck_assert_msg(lb_plan > claim, "the mutation audit is under-powered");
	lb = audit_range(0.5, 0x3c6ef372fe94f82bu, &claim);
	ck_assert_msg(lb > claim, "temperature x 0.5 not detected: %.4f <= %.4f", lb, claim);
}
END_TEST

/* With almost no temperature the audited draw follows the canary: vertex
 * 1 in A, 0 in B (conditioned runs); and a zero hook leaves runs
 * bit-identical. */
START_TEST(test_hook)
{
	struct sbr_audit *a = calloc(1, sizeof(*a));
	struct alg_testing_hook zero = { 0 };
	struct rng r;
	struct err e = { 0 };
	double u0[D], u1[D];
	int seen = 0;

	ck_assert_ptr_nonnull(a);
	worlds_init(a, 1e-6);
	for (int k = 0; k < 2; k++)
		for (uint64_t seed = 1; seed <= 400; seed++) {
			a->level1 = 99;
			rng_splitmix_init(&r, seed);
			ck_assert(alg_run(sbr(), &a->w[k].spec, &a->w[k].plan, &a->w[k].ds, &r,
					  NULL, NULL, u0, &e) == ERR_OK);
			if (a->level1 != 1 || a->xdraw[0] == a->xdraw[1] ||
			    a->xdraw[2] != a->xdraw[3])
				continue;
			seen++;
			ck_assert_double_eq(a->drawn, k == 0 ? 1.0 : 0.0);
		}
	ck_assert(seen >= 20);
	for (uint64_t seed = 1; seed <= 20; seed++) {
		const struct alg_testing_hook *hooks[2] = { &zero, NULL };

		for (int k = 0; k < 2; k++) {
			rng_splitmix_init(&r, seed);
			a->w[0].spec.testing_hook = hooks[k];
			ck_assert(alg_run(sbr(), &a->w[0].spec, &a->w[0].plan, &a->w[0].ds, &r,
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
	Suite *s = suite_create("audit_smd_bias_reduced");
	TCase *hook = tcase_create("hook");
	TCase *wb = tcase_create("white_box");

	tcase_add_test(hook, test_hook);
	suite_add_tcase(s, hook);
	tcase_set_timeout(wb, 300);
	tcase_add_test(wb, test_white_box);
	tcase_add_test(wb, test_white_box_mutated);
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
