/*
 * test_audit_frank_wolfe_e2e.c - level 3 of the privacy audits of
 * frank_wolfe.private_vr (variant pure) and frank_wolfe.private
 * (docs/privacy-model.md §7; tests/audit/README.md): the released result of
 * plain runs -- no placement, no exposure, the secret order drawn as in
 * production -- with a mutation twin each whose detection power is computed
 * before it runs.
 *
 * Both methods release x_K, a convex combination of the chosen vertices
 * with public weights.  On d = 1 (the l1 ball of radius 1: two vertices,
 * +1 and -1) with two selections the result decodes them: frank_wolfe.
 * private (params.steps = 2, eta_k = 2 / (k + 2)) gives x_2 = w_0 / 3 +
 * w_1 / 2, private_vr (params.phases = 1: a root and two leaves, eta_k =
 * 2 / (k + 1)) x_2 = w_1 / 3 + 2 w_2 / 3.  The statistic is K, the number
 * of selections of +1: K = 2 iff x_2 > 1/2, K = 0 iff x_2 < -1/2.
 *
 * The claim.  Every leaf of both events is bounded_range, composed by
 * self_composed and parallel, so the event says that the whole run is
 * eps_run-bounded-range with eps_run its basic (pure) epsilon
 * (accountant_basic, delta 0): for any outputs o, o',
 *	log(P_A(o) / P_B(o)) - log(P_A(o') / P_B(o')) <= eps_run,
 * and post-processing keeps it.  The audit bounds that range from below at
 * o = {K = 2}, o' = {K = 0} (Clopper-Pearson on the four marginal counts,
 * both orientations, alpha / 8 each: false-failure probability <= alpha
 * = 1e-6).
 *
 * That argument covers a run given its secret order.  A plain run draws
 * the order too, so its law is a mixture over the canary's position, and a
 * mixture of eps-bounded-range mechanisms (weights independent of the
 * data) is eps-DP but in general only (2 eps)-bounded-range: the
 * normalisers of its components move differently.  For private (no
 * sampling: every position gives the same law) nothing changes.  For
 * private_vr the claim eps_run on the range of K is therefore not implied
 * by the event alone; it holds for this world because the law below is
 * computed exactly: its true range is 1.419 at the audited temperature
 * (the level-3 line prints it; eps_run = 1.999).  A world where the
 * mixture's range exceeded eps_run would need the claim 2 eps_run (or
 * eps_run on |log P_A(o) / P_B(o)|, the pure-DP statement), not a weaker
 * method.
 *
 * Worlds (least_squares, feature_l2 = 1, label 1, so L = lipschitz_linf =
 * 2, as in test_audit_frank_wolfe.c): the other records are x = 0, y = 0
 * (gradient 0 everywhere); the canary has x = 1, y = +100 (A) or -100 (B),
 * so its gradient -y + x_k is clamped to -+L at every iterate: the worst
 * case the event assumes.  Its law, with a the selection's log-odds:
 *  - private (n = 8, no sampling): both selections see v = -+L / n, so K ~
 *    Binomial(2, p_W), logit p_A = -logit p_B = a = eps_step / 2.  The range
 *    of K is 4 a = 2 eps_step = eps_run: the claim is tight.
 *  - private_vr (n = 12, batch_size 8, all records used: the root reads 8,
 *    the right child 4, in the secret order): with probability 2/3 the
 *    canary is in the root and both leaves see v_0 = -+L / 8, K ~
 *    Binomial(2, p_W) with a = eps_leaf / 2 (eps_leaf the root's
 *    bounded_range); with probability 1/3 it is in the right child, whose
 *    correction clamp(grad(x_1) - grad(x_0)) = x_1 = w_1 is the same in
 *    both worlds: w_1 is uniform and w_2 = -w_1 with log-odds eps_leaf / 2
 *    (v_1 = w_1 / 4), so K = 1 with probability sigma(eps_leaf / 2) and 0
 *    or 2 with half the rest each.  The claim is max(eps_0, eps_1) =
 *    2 eps_leaf (B_1 = min(2 L, beta D) = L here), which the undiluted root
 *    case attains; the right child's third dilutes it.
 * test_law checks the law against the code with the temperature scaled to
 * nothing (private: K = 2 in A, 0 in B; private_vr: K = 2 in A at the rate
 * 2/3, else K = 1), and every audit checks its counts against the law at
 * its own temperature (6 standard deviations per category).
 *
 * Mutation twin: the temperature x 0.5 through the hook's noise_scale (no
 * other member of the hook: plain runs otherwise; plan, event and charge
 * unchanged).  a doubles.  Its miss probability is bounded from the law
 * before it runs: each of the four counts is put at its 2.5e-5 quantile
 * on the unfavourable side, and the test refuses to run unless the bound
 * computed from those counts exceeds the claim (P[miss] <= 1e-4).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "audit.h"
#include "objective.h"
#include "privacy/accountant.h"
#include "testing_hook.h"

#define ALPHA  1e-6
#define RUNS   100000 /* per side; power computed in the twins */
#define N_MAX  12
#define CANARY 3
#define TAIL   2.5e-5 /* each count's planned tail in the twins' power bound */

struct fw_world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	double x[N_MAX];
	double y[N_MAX];
};

struct fw_e2e {
	const struct alg_ops *a;
	bool vr;
	size_t n;
	struct fw_world w[2];
	struct alg_testing_hook hook;
	double claim;    /* eps_run: the event's basic epsilon, delta 0 */
	double eps_unit; /* private: eps_step; private_vr: the root's eps_leaf */
};

/* P(K = k), k = 0, 1, 2, in both worlds. */
struct law {
	double p[2][3];
};

static size_t
param_index(const struct alg_ops *a, const char *name)
{
	const struct alg_param *p = alg_param_find(a, name);

	ck_assert_msg(p != NULL, "no parameter %s", name);
	return (size_t)(p - a->params);
}

/* private: the plan's step_epsilon; private_vr: the bounded_range child of
 * the root's self_composed(., 2). */
static double
unit_epsilon(const struct fw_e2e *f)
{
	const struct dp_event_tree *t = &f->w[0].plan.event;

	if (!f->vr)
		return run_plan_value(&f->w[0].plan, "step_epsilon");
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (t->node[i].type == DP_EVENT_SELF_COMPOSED && t->node[i].count == 2)
			return t->node[t->node[i].first_child].epsilon;
	ck_abort_msg("no root leaf in the event");
	return NAN;
}

/* The claim: every leaf bounded_range, so the basic epsilon is the range. */
static double
run_claim(const struct run_plan *p)
{
	double eps, delta;
	struct err e = { 0 };

	for (unsigned i = 0; i < p->event.n_nodes; i++) {
		enum dp_event_type ty = p->event.node[i].type;

		ck_assert_msg(ty == DP_EVENT_BOUNDED_RANGE || ty == DP_EVENT_SELF_COMPOSED ||
				      ty == DP_EVENT_PARALLEL,
			      "node %u: not a bounded-range event", i);
	}
	ck_assert_msg(accountant_basic(&p->event, &eps, &delta, &e) == ERR_OK, "basic: %s", e.msg);
	ck_assert(delta == 0.0);
	return eps;
}

/* Both worlds; the temperature scaled by `scale` (1: no hook at all). */
static void
worlds_init(struct fw_e2e *f, const char *name, double scale)
{
	struct err e = { 0 };

	memset(f, 0, sizeof(*f));
	f->a = alg_find(name);
	ck_assert_ptr_nonnull(f->a);
	f->vr = strcmp(name, "frank_wolfe.private_vr") == 0;
	f->n = f->vr ? 12 : 8;
	f->hook.noise_scale = scale;
	for (int k = 0; k < 2; k++) {
		struct fw_world *w = &f->w[k];
		struct run_spec *s = &w->spec;

		w->x[CANARY] = 1.0;
		w->y[CANARY] = k == 0 ? 100.0 : -100.0;
		w->ds.n = f->n;
		w->ds.d = 1;
		w->ds.x = w->x;
		w->ds.y = w->y;
		s->x.kind = CONSTRAINT_L1_BALL;
		s->x.radius = 1.0;
		s->epsilon = 2.0;
		s->delta = 1e-5;
		alg_default_params(f->a, s->params);
		if (f->vr) {
			s->params[param_index(f->a, "phases")] = 1;
			s->params[param_index(f->a, "batch_size")] = 8;
		} else {
			s->params[param_index(f->a, "steps")] = 2;
		}
		s->n = f->n;
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
		if (scale != 1.0)
			s->testing_hook = &f->hook;
		ck_assert_msg(alg_plan(f->a, s, &w->plan, &e) == ERR_OK, "plan: %s", e.msg);
	}
	ck_assert(dp_event_equal(&f->w[0].plan.event, &f->w[1].plan.event));
	/* The design's premises, from the plan (not the sensitivity or the
	 * temperature: the audit is what checks those). */
	ck_assert_double_eq(run_plan_value(&f->w[0].plan, "lipschitz_linf"), 2.0);
	if (f->vr)
		ck_assert_double_eq(run_plan_value(&f->w[0].plan, "records_used"), 12.0);
	ck_assert_uint_eq(f->w[0].plan.steps, 2);
	f->claim = run_claim(&f->w[0].plan);
	f->eps_unit = unit_epsilon(f);
	ck_assert_msg(fabs(f->claim - 2.0 * f->eps_unit) <= 1e-9 * f->claim,
		      "claim %.6f is not twice the unit %.6f", f->claim, f->eps_unit);
}

static double
sigmoid(double t)
{
	return 1.0 / (1.0 + exp(-t));
}

/* The law of K at the temperature scaled by `scale`. */
static struct law
law_of(const struct fw_e2e *f, double scale)
{
	double a = f->eps_unit / (2.0 * scale), q = f->vr ? 8.0 / 12.0 : 1.0;
	double opp = sigmoid(a); /* private_vr, right child: w_2 = -w_1 */
	struct law l;

	for (int k = 0; k < 2; k++) {
		double p = sigmoid(k == 0 ? a : -a);

		l.p[k][2] = q * p * p + (1.0 - q) * 0.5 * (1.0 - opp);
		l.p[k][1] = q * 2.0 * p * (1.0 - p) + (1.0 - q) * opp;
		l.p[k][0] = q * (1.0 - p) * (1.0 - p) + (1.0 - q) * 0.5 * (1.0 - opp);
	}
	return l;
}

/* Runs per world; counts[k] the runs with K = k. */
static void
count_k(struct fw_e2e *f, int world, uint64_t seed, int runs, uint64_t counts[3])
{
	struct fw_world *w = &f->w[world];
	struct rng r;
	struct err e = { 0 };
	double x[1];

	counts[0] = counts[1] = counts[2] = 0;
	rng_splitmix_init(&r, seed);
	for (int i = 0; i < runs; i++) {
		/* No ck_assert() per run: Check writes a pipe message for each. */
		if (alg_run(f->a, &w->spec, &w->plan, &w->ds, &r, NULL, NULL, x, &e) != ERR_OK)
			ck_abort_msg("run: %s", e.msg);
		counts[x[0] > 0.5 ? 2 : x[0] < -0.5 ? 0 : 1]++;
	}
}

/* The range's lower bound at o = {K = 2}, o' = {K = 0}, both orientations;
 * c[w][k] the counts of N runs per world. */
static double
range_lb(const uint64_t c[2][3], uint64_t n)
{
	double al = ALPHA / 8.0, best = -INFINITY;

	for (int o = 0; o < 2; o++) { /* o = 0: A favours K = 2; 1: B does */
		const uint64_t *fa = c[o], *fb = c[1 - o];
		double lb = log(audit_cp_lower(fa[2], n, al)) - log(audit_cp_upper(fb[2], n, al)) +
			    log(audit_cp_lower(fb[0], n, al)) - log(audit_cp_upper(fa[0], n, al));

		best = fmax(best, lb);
	}
	return best;
}

/* Each count within 6 standard deviations of the law. */
static void
check_law(const char *name, const struct law *l, const uint64_t c[2][3], int runs)
{
	for (int w = 0; w < 2; w++)
		for (int k = 0; k < 3; k++) {
			double m = runs * l->p[w][k],
			       sd = sqrt(runs * l->p[w][k] * (1 - l->p[w][k]));

			ck_assert_msg(
				fabs((double)c[w][k] - m) <= 6.0 * sd + 1e-9,
				"%s: world %c, K = %d in %llu runs, the law says %.1f (sd %.1f)",
				name, 'A' + w, k, (unsigned long long)c[w][k], m, sd);
		}
}

static double
audit_e2e(const char *name, double scale, uint64_t seed, double *ret_claim)
{
	struct fw_e2e *f = calloc(1, sizeof(*f));
	uint64_t c[2][3];
	struct law l;
	double lb, t0 = audit_now();

	ck_assert_ptr_nonnull(f);
	worlds_init(f, name, scale);
	count_k(f, 0, seed, RUNS, c[0]);
	count_k(f, 1, seed ^ 0x9e3779b97f4a7c15u, RUNS, c[1]);
	lb = range_lb(c, RUNS);
	l = law_of(f, scale);
	printf("level3/%s-result (temperature x %.2f): K = 0, 1, 2 in %llu, %llu, %llu (A) and "
	       "%llu, %llu, %llu (B) of %d; the law: %.4f, %.4f, %.4f (A); true range %.4f; "
	       "bounded-range lower bound %.4f vs claimed eps_run %.4f (unit %.4f); false "
	       "failure <= %.0e; wall %.2f s\n",
	       name, scale, (unsigned long long)c[0][0], (unsigned long long)c[0][1],
	       (unsigned long long)c[0][2], (unsigned long long)c[1][0],
	       (unsigned long long)c[1][1], (unsigned long long)c[1][2], RUNS, l.p[0][0], l.p[0][1],
	       l.p[0][2], log(l.p[0][2] / l.p[1][2]) - log(l.p[0][0] / l.p[1][0]), lb, f->claim,
	       f->eps_unit, ALPHA, audit_now() - t0);
	*ret_claim = f->claim;
	/* The bound first (what the audit is for), then the law the power
	 * computation rests on. */
	if (scale == 1.0)
		ck_assert_msg(lb <= f->claim, "%s: range lower bound %.4f > claimed %.4f", name, lb,
			      f->claim);
	check_law(name, &l, (const uint64_t(*)[3])c, RUNS);
	free(f);
	return lb;
}

/* The smallest count q with P[Bin(RUNS, p) < q] <= tail (lower), or the
 * largest with P[Bin(RUNS, p) > q] <= tail (upper). */
static uint64_t
quantile(double p, double tail, bool lower)
{
	double m = RUNS * p, sd = sqrt(RUNS * p * (1 - p));

	if (lower) {
		uint64_t q = (uint64_t)fmax(0.0, m - 8.0 * sd);

		while (q + 1 <= RUNS && audit_binom_cdf(q, RUNS, p) <= tail)
			q++;
		return q;
	} else {
		uint64_t q = (uint64_t)fmin(RUNS, m + 8.0 * sd);

		while (q > 0 && audit_binom_sf(q, RUNS, p) <= tail)
			q--;
		return q;
	}
}

static void
mutated(const char *name, uint64_t seed)
{
	struct fw_e2e *f = calloc(1, sizeof(*f));
	uint64_t plan[2][3] = { { 0 } };
	double claim, lb_plan, lb, range;
	struct law l;

	ck_assert_ptr_nonnull(f);
	worlds_init(f, name, 1.0);
	claim = f->claim;
	l = law_of(f, 0.5);
	free(f);
	/* The favoured orientation (A favours K = 2), each count at its
	 * unfavourable 2.5e-5 quantile: four tails, P[miss] <= 1e-4. */
	plan[0][2] = quantile(l.p[0][2], TAIL, true);
	plan[1][2] = quantile(l.p[1][2], TAIL, false);
	plan[1][0] = quantile(l.p[1][0], TAIL, true);
	plan[0][0] = quantile(l.p[0][0], TAIL, false);
	lb_plan = range_lb((const uint64_t(*)[3])plan, RUNS);
	range = log(l.p[0][2] / l.p[1][2]) - log(l.p[0][0] / l.p[1][0]);
	printf("%s-result mutated: true range of K %.4f vs claim %.4f; with every count at its "
	       "%.1e quantile the bound is %.4f: P[mutation missed] <= 1e-4\n",
	       name, range, claim, TAIL, lb_plan);
	ck_assert(range > claim);
	ck_assert_msg(lb_plan > claim, "the mutation audit is under-powered");
	lb = audit_e2e(name, 0.5, seed, &claim);
	ck_assert_msg(lb > claim, "%s: temperature x 0.5 not detected: %.4f <= %.4f", name, lb,
		      claim);
}

START_TEST(test_vr)
{
	double claim;

	audit_e2e("frank_wolfe.private_vr", 1.0, 0x452821e638d01377u, &claim);
}
END_TEST

START_TEST(test_vr_mutated)
{
	mutated("frank_wolfe.private_vr", 0xbe5466cf34e90c6cu);
}
END_TEST

START_TEST(test_private)
{
	double claim;

	audit_e2e("frank_wolfe.private", 1.0, 0xc0ac29b7c97c50ddu, &claim);
}
END_TEST

START_TEST(test_private_mutated)
{
	mutated("frank_wolfe.private", 0x3f84d5b5b5470917u);
}
END_TEST

/* The law with the temperature scaled to nothing: every selection follows
 * the sign of its score. */
START_TEST(test_law)
{
	static const char *const names[2] = { "frank_wolfe.private", "frank_wolfe.private_vr" };
	const int runs = 3000;

	for (int m = 0; m < 2; m++) {
		struct fw_e2e *f = calloc(1, sizeof(*f));
		uint64_t c[2][3];

		ck_assert_ptr_nonnull(f);
		worlds_init(f, names[m], 1e-9);
		count_k(f, 0, 0x9216d5d98979fb1bu + (uint64_t)m, runs, c[0]);
		count_k(f, 1, 0xd1310ba698dfb5acu + (uint64_t)m, runs, c[1]);
		printf("law/%s: K = 0, 1, 2 in %llu, %llu, %llu (A), %llu, %llu, %llu (B)\n",
		       names[m], (unsigned long long)c[0][0], (unsigned long long)c[0][1],
		       (unsigned long long)c[0][2], (unsigned long long)c[1][0],
		       (unsigned long long)c[1][1], (unsigned long long)c[1][2]);
		ck_assert_uint_eq(c[0][0], 0);
		ck_assert_uint_eq(c[1][2], 0);
		if (!f->vr) {
			ck_assert_uint_eq(c[0][2], runs);
			ck_assert_uint_eq(c[1][0], runs);
		} else {
			/* In the root with probability 2/3, else w_2 = -w_1. */
			double sd = sqrt(runs * (2.0 / 9.0));

			ck_assert(fabs((double)c[0][2] - runs * 2.0 / 3.0) <= 5.0 * sd);
			ck_assert(fabs((double)c[1][0] - runs * 2.0 / 3.0) <= 5.0 * sd);
		}
		free(f);
	}
}
END_TEST

static Suite *
e2e_suite(void)
{
	Suite *s = suite_create("audit_frank_wolfe_e2e");
	TCase *law = tcase_create("law");
	TCase *e2e = tcase_create("end_to_end");

	tcase_add_test(law, test_law);
	suite_add_tcase(s, law);
	tcase_set_timeout(e2e, 300); /* seconds in release; minutes under sanitizers */
	tcase_add_test(e2e, test_vr);
	tcase_add_test(e2e, test_vr_mutated);
	tcase_add_test(e2e, test_private);
	tcase_add_test(e2e, test_private_mutated);
	suite_add_tcase(s, e2e);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(e2e_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
