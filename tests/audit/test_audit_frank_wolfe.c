/*
 * test_audit_frank_wolfe.c - level 2 of the privacy audits of
 * frank_wolfe.private_vr (variants pure and approx) and frank_wolfe.private
 * (docs/privacy-model.md §7; tests/audit/README.md), each with its
 * mutation twin.
 *
 * The accountant's unit is one exponential-mechanism selection, charged
 * as bounded_range(eps_leaf): for every output o, log(P_A(o) / P_B(o)) lies
 * in an interval of width eps_leaf.  Here the statistic is the first
 * leaf's vertex (the hook's release at index 0), on d = 1 (two vertices,
 * +r and -r), so the claim audited is the range itself:
 *
 *	range = log(P_A(1) / P_B(1)) - log(P_A(0) / P_B(0))
 *	      = logit P_A(1) - logit P_B(1) <= eps_leaf,
 *
 * with the lower bound logit(CP_lower(k_A)) - logit(CP_upper(k_B))
 * (Clopper-Pearson, each at alpha / 4: both orientations, two bounds each;
 * false-failure probability <= alpha = 1e-6).  Note that the usual
 * (epsilon, 0) test log(P_A(o) / P_B(o)) would see only half of the range
 * here: the bounded-range claim is the one this pair makes tight.
 *
 * Worlds (least_squares, l1 ball of radius 1, feature_l2 = 1, label bound
 * 1, so L = lipschitz_linf = 2): the other records have x = 0 (gradient 0);
 * the canary has x = 1 and y = +100 (A) or -100 (B), beyond the declared
 * bound, so its gradient at the start x_0 = 0 is -+100 and the clamp to
 * [-L, L] is what keeps the sensitivity (the worst case the event
 * assumes: the clamped gradients differ by 2L).
 *  - private_vr: n = 12, params.phases = 1, batch_size = 8 (all records
 *    used), the canary placed in phase 1's root batch through the hook;
 *    the first leaf scores with v = -+L / b, temp_1 = 2 s, so the range is
 *    4 r L / (b temp_1) = 2 Delta_0 / temp_1, the event's root leaf
 *    epsilon (the bounded_range under self_composed(., 2)).
 *  - private: n = 8, params.steps = 1; v = -+L / n, range 2 Delta / temp =
 *    the plan's step_epsilon.
 * The targets make eps_leaf about 1 (p = 0.62 against 0.38).
 *  - private_vr, variant approx: the same worlds and placement; one
 *    temperature temp for every leaf, so the root leaf's range is
 *    2 Delta_0 / temp = 4 L / (b temp), the unit the approx accountant
 *    composes (advanced composition, shuffling: fwvr_approx_epsilon).  Its
 *    event is approx(eps_run, delta_run) only, so the claim is computed
 *    from the plan's temperature and tied to the charge: at T = 1 the run's
 *    epsilon is the right child's 2 Delta_1 / temp = twice the root leaf's
 *    (B_1 = L), asserted against the event before anything runs (a halved
 *    sensitivity in the approx accountant fails that check: tried).
 *
 * Mutation twin: the temperature halved through the hook's noise_scale
 * (plan, event and charge unchanged): the true range doubles.  Before it
 * runs, its miss probability is bounded from the exact binomial laws: the
 * counts q_A (below which world A falls with probability <= 1e-4) and q_B
 * (above which world B does) are found, and the test refuses to run unless
 * logit(CP_lower(q_A)) - logit(CP_upper(q_B)) > eps_leaf, so P[miss] <=
 * 2e-4.  N = 20,000 runs per side.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "audit.h"
#include "objective.h"
#include "testing_hook.h"

#define ALPHA  1e-6
#define RUNS   20000
#define N_MAX  12
#define CANARY 3

struct fw_world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	double x[N_MAX];
	double y[N_MAX];
};

struct fw_audit {
	const struct alg_ops *a;
	struct fw_world w[2];
	struct alg_testing_hook hook;
	double first; /* the first leaf's vertex, from the hook */
	double claim;
	size_t n;
	bool approx; /* private_vr, variant approx */
};

static void
on_release(void *ctx, unsigned long index, const double *value, size_t len)
{
	struct fw_audit *a = ctx;

	ck_assert_uint_eq(len, 1);
	if (index == 0)
		a->first = value[0];
}

static size_t
param_index(const struct alg_ops *a, const char *name)
{
	for (size_t k = 0; a->params[k].name != NULL; k++)
		if (strcmp(a->params[k].name, name) == 0)
			return k;
	ck_abort_msg("no parameter %s", name);
	return 0;
}

/* The unit's claim: the root leaf's bounded_range epsilon (private_vr:
 * the child of self_composed(., 2)), or the plan's step_epsilon. */
static double
unit_claim(const struct fw_audit *f, const struct run_plan *p)
{
	const struct alg_ops *a = f->a;

	if (strcmp(a->name, "frank_wolfe.private") == 0)
		return run_plan_value(p, "step_epsilon");
	if (f->approx) {
		/* One temperature for every leaf; the root leaf's range 2 Delta_0
		 * / temp, Delta_0 = 2 L R_c / b (R_c = 1, b = 8), is what the
		 * approx accountant composes (fwvr_approx_epsilon: at T = 1 the
		 * run's epsilon is the right child's 2 Delta_1 / temp = twice it,
		 * B_1 = L here, checked below against the plan's event). */
		double e1 = 4.0 * run_plan_value(p, "lipschitz_linf") /
			    (8.0 * run_plan_value(p, "temperature_scale"));

		ck_assert_uint_eq(p->event.n_nodes, 1);
		ck_assert_int_eq(p->event.node[0].type, DP_EVENT_APPROX);
		ck_assert_double_eq_tol(p->event.node[0].epsilon, 2.0 * e1, 1e-9);
		return e1;
	}
	for (unsigned i = 0; i < p->event.n_nodes; i++) {
		const struct dp_event *n = &p->event.node[i];

		if (n->type == DP_EVENT_SELF_COMPOSED && n->count == 2)
			return p->event.node[n->first_child].epsilon;
	}
	ck_abort_msg("no root leaf in the event");
	return NAN;
}

static void
worlds_init(struct fw_audit *a, const char *name)
{
	bool approx = strcmp(name, "frank_wolfe.private_vr:approx") == 0;
	bool vr = approx || strcmp(name, "frank_wolfe.private_vr") == 0;
	struct err e = { 0 };

	memset(a, 0, sizeof(*a));
	a->approx = approx;
	a->a = alg_find(vr ? "frank_wolfe.private_vr" : name);
	ck_assert_ptr_nonnull(a->a);
	a->n = vr ? 12 : 8;
	for (int k = 0; k < 2; k++) {
		struct fw_world *w = &a->w[k];
		struct run_spec *s = &w->spec;

		w->x[CANARY] = 1.0;
		w->y[CANARY] = k == 0 ? 100.0 : -100.0;
		w->ds.n = a->n;
		w->ds.d = 1;
		w->ds.x = w->x;
		w->ds.y = w->y;
		s->x.kind = CONSTRAINT_L1_BALL;
		s->x.radius = 1.0;
		s->epsilon = vr ? 2.0 : 1.0;
		s->delta = 1e-5;
		alg_default_params(a->a, s->params);
		if (vr) {
			s->params[param_index(a->a, "phases")] = 1;
			s->params[param_index(a->a, "batch_size")] = 8;
			s->params[param_index(a->a, "variant")] = approx ? 1.0 : 0.0;
		} else {
			s->params[param_index(a->a, "steps")] = 1;
		}
		s->n = a->n;
		s->schema.d = 1;
		s->schema.task = TASK_REGRESSION;
		s->schema.bounds.feature_l2 = 1.0;
		s->schema.bounds.feature_linf = NAN;
		s->schema.bounds.label = 1.0;
		s->schema.bounds.label_lo = s->schema.bounds.label_hi = NAN;
		s->mode = ACCOUNTING_BASIC;
		ck_assert_int_eq(
			run_spec_set_objective(s, objective_find("least_squares"), NULL, NULL),
			ERR_OK);
		a->hook.place_first = vr;
		a->hook.first_record = CANARY;
		a->hook.release = on_release;
		a->hook.ctx = a;
		s->testing_hook = &a->hook;
		ck_assert_msg(alg_plan(a->a, s, &w->plan, &e) == ERR_OK, "plan: %s", e.msg);
	}
	ck_assert(dp_event_equal(&a->w[0].plan.event, &a->w[1].plan.event));
	ck_assert_double_eq(run_plan_value(&a->w[0].plan, "lipschitz_linf"), 2.0);
	a->claim = unit_claim(a, &a->w[0].plan);
	ck_assert(a->claim > 0.5 && a->claim < 2.0);
}

/* Runs per world; returns the count of first vertex 1. */
static uint64_t
count_ones(struct fw_audit *a, int world, uint64_t seed)
{
	struct fw_world *w = &a->w[world];
	uint64_t k = 0;
	struct rng r;
	struct err e = { 0 };
	double x[1];

	rng_splitmix_init(&r, seed);
	for (int i = 0; i < RUNS; i++) {
		a->first = NAN;
		if (alg_run(a->a, &w->spec, &w->plan, &w->ds, &r, NULL, NULL, x, &e) != ERR_OK)
			ck_abort_msg("run: %s", e.msg);
		ck_assert(a->first == 0.0 || a->first == 1.0);
		k += a->first == 1.0;
	}
	return k;
}

/* The range's lower bound from the counts, both orientations. */
static double
range_lb(uint64_t k_a, uint64_t k_b)
{
	return audit_range_lb(k_a, k_b, RUNS, ALPHA);
}

static double
audit_range(const char *name, double scale, uint64_t seed, double *ret_claim)
{
	struct fw_audit *a = calloc(1, sizeof(*a));
	uint64_t k_a, k_b;
	double lb, t0 = audit_now();

	ck_assert_ptr_nonnull(a);
	worlds_init(a, name);
	a->hook.noise_scale = scale;
	k_a = count_ones(a, 0, seed);
	k_b = count_ones(a, 1, seed ^ 0x9e3779b97f4a7c15u);
	lb = range_lb(k_a, k_b);
	*ret_claim = a->claim;
	printf("level2/%s (temperature x %.2f): first vertex 1 in %llu / %d (A), %llu / %d (B); "
	       "bounded-range lower bound %.4f vs claimed eps_leaf %.4f; false failure <= %.0e; "
	       "wall %.2f s\n",
	       name, scale, (unsigned long long)k_a, RUNS, (unsigned long long)k_b, RUNS, lb,
	       a->claim, ALPHA, audit_now() - t0);
	free(a);
	return lb;
}

static void
white_box(const char *name, uint64_t seed)
{
	double claim, lb = audit_range(name, 1.0, seed, &claim);

	ck_assert_msg(lb <= claim, "%s: range lower bound %.4f > claimed %.4f", name, lb, claim);
}

static uint64_t
quantile(double p, double tail, bool lower)
{
	return audit_binom_quantile(RUNS, p, tail, lower);
}

static void
white_box_mutated(const char *name, uint64_t seed)
{
	struct fw_audit *a = calloc(1, sizeof(*a));
	double claim, half, p_a, p_b, lb_plan, lb;
	uint64_t q_a, q_b;

	ck_assert_ptr_nonnull(a);
	worlds_init(a, name);
	claim = a->claim;
	free(a);
	/* Temperature x 0.5: the logits are +-claim (the range is 2 claim).
	 * The worlds are mirror images (vertex 1 in A has the law of vertex
	 * 0 in B), so the orientation in which the favoured world's count is
	 * high has this law whichever world it is. */
	half = claim;
	p_a = 1.0 / (1.0 + exp(-half));
	p_b = 1.0 - p_a;
	q_a = quantile(p_a, 1e-4, true);
	q_b = quantile(p_b, 1e-4, false);
	lb_plan = range_lb(q_a, q_b);
	printf("%s mutated: true range %.4f vs claim %.4f; with k_A >= %llu and k_B <= %llu "
	       "(each failing w.p. <= 1e-4) the bound is >= %.4f: P[mutation missed] <= 2e-4\n",
	       name, 2.0 * claim, claim, (unsigned long long)q_a, (unsigned long long)q_b, lb_plan);
	ck_assert_msg(lb_plan > claim, "the mutation audit is under-powered");
	lb = audit_range(name, 0.5, seed, &claim);
	ck_assert_msg(lb > claim, "%s: temperature x 0.5 not detected: %.4f <= %.4f", name, lb,
		      claim);
}

START_TEST(test_vr)
{
	white_box("frank_wolfe.private_vr", 0x243f6a8885a308d3u);
}
END_TEST

START_TEST(test_vr_mutated)
{
	white_box_mutated("frank_wolfe.private_vr", 0x13198a2e03707344u);
}
END_TEST

START_TEST(test_vr_approx)
{
	white_box("frank_wolfe.private_vr:approx", 0x7b54a41dc25a59b5u);
}
END_TEST

START_TEST(test_vr_approx_mutated)
{
	white_box_mutated("frank_wolfe.private_vr:approx", 0x9c30d5392af26013u);
}
END_TEST

START_TEST(test_private)
{
	white_box("frank_wolfe.private", 0xa4093822299f31d0u);
}
END_TEST

START_TEST(test_private_mutated)
{
	white_box_mutated("frank_wolfe.private", 0x082efa98ec4e6c89u);
}
END_TEST

/* The hook: a zero hook leaves private_vr's runs bit-identical; the
 * placement puts the canary in phase 1's root batch (with almost no
 * temperature the first vertex is then always the canary's side). */
START_TEST(test_hook)
{
	struct fw_audit *a = calloc(1, sizeof(*a));
	struct alg_testing_hook zero = { 0 };
	struct fw_world *w;
	double x0[1], x1[1];
	struct rng r;
	struct err e = { 0 };

	ck_assert_ptr_nonnull(a);
	worlds_init(a, "frank_wolfe.private_vr");
	w = &a->w[0];
	for (uint64_t seed = 1; seed <= 20; seed++) {
		const struct alg_testing_hook *hooks[2] = { &zero, NULL };

		for (int k = 0; k < 2; k++) {
			rng_splitmix_init(&r, seed);
			w->spec.testing_hook = hooks[k];
			ck_assert(alg_run(a->a, &w->spec, &w->plan, &w->ds, &r, NULL, NULL,
					  k == 0 ? x0 : x1, &e) == ERR_OK);
		}
		ck_assert(memcmp(x0, x1, sizeof(x0)) == 0);
	}
	a->hook.noise_scale = 1e-6;
	for (int k = 0; k < 2; k++) {
		w = &a->w[k];
		w->spec.testing_hook = &a->hook;
		for (uint64_t seed = 1; seed <= 200; seed++) {
			rng_splitmix_init(&r, seed);
			ck_assert(alg_run(a->a, &w->spec, &w->plan, &w->ds, &r, NULL, NULL, x0,
					  &e) == ERR_OK);
			/* A: y = +100, gradient -L, v < 0: the score r v favours +r (0). */
			ck_assert_double_eq(a->first, k == 0 ? 0.0 : 1.0);
		}
	}
	free(a);
}
END_TEST

static Suite *
audit_suite(void)
{
	Suite *s = suite_create("audit_frank_wolfe");
	TCase *hook = tcase_create("hook");
	TCase *wb = tcase_create("white_box");

	tcase_add_test(hook, test_hook);
	suite_add_tcase(s, hook);
	tcase_set_timeout(wb, 300);
	tcase_add_test(wb, test_vr);
	tcase_add_test(wb, test_vr_mutated);
	tcase_add_test(wb, test_vr_approx);
	tcase_add_test(wb, test_vr_approx_mutated);
	tcase_add_test(wb, test_private);
	tcase_add_test(wb, test_private_mutated);
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
