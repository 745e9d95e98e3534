/*
 * test_audit_smd_maurey_e2e.c - level 3 of the privacy audit of
 * saddle.smd_maurey (docs/privacy-model.md §7; tests/audit/README.md;
 * docs/algorithms/smd-maurey.md): the released result of plain runs -- no
 * placement, no exposure, the secret order drawn by the run as in
 * production -- with a mutation twin whose detection power is computed
 * before it runs.
 *
 * The instance.  bilinear with coupling 0, blocks a and b of two
 * coordinates with entries in [-1, 1] (L_x = L_y = L_0 = 1), x and y on
 * 2-vertex simplices of scale 1, n = 4, params steps T = 2 (B = 2, every
 * record used), draws K = 1, step_size tau = 2.  Every record has b = 0 and
 * a = (1, -1) (it lowers the score of x's vertex 0), except the canary in
 * world A, a = (-1, 1); world B's canary is like the others.  The run
 * releases x = (c_{I_1} + c_{I_2}) / 2, I_t the x player's output draw of
 * step t, so the statistic K, the number of output draws of vertex 0, is
 * 2 x_1.  Since the coupling is 0 the x operator is a whatever the query
 * point: the query draws and the y player change nothing in K.  I_1 is
 * uniform (theta = 0 before any data); I_2 has logit(vertex 0) = -tau (G_0 -
 * G_1) with G the batch-1 mean of a: -2 tau in world B and in world A when
 * the canary is in batch 2, 0 in world A when it is in batch 1 (the secret
 * order: probability 1/2).  With pi = sigma(-2 tau):
 *	P_B(K = 2) = pi / 2,  P_A(K = 2) = 1/8 + pi / 4
 * (batch 2 is read by step 2 only after its draws: the last batch never
 * reaches a released draw).
 *
 * The claim.  The event, self_composed(bounded_range(eps_0), 2 T (K + 1)),
 * eps_0 the plan's draw_epsilon = 4 tau L_0 / B, counts 8 draws; K is a
 * function of the two x output draws, of which I_1 sees no data, and for
 * each secret order I_2 is one exponential-mechanism draw, eps_0-bounded-
 * range hence eps_0-DP; a mixture over the data-independent order keeps
 * pure DP (not bounded range: a mixture of bounded-range mechanisms is
 * only twice that).  So the audited claim is P_pos(S) <= e^eps_0 P_neg(S)
 * for every S, both orders of the worlds (delta 0): a restriction of the
 * event to the draws K can see.  The event's basic epsilon (8 eps_0 = 32)
 * is asserted too, but it is far out of reach of any statistic of the
 * result (the twin cannot pass it).  Two fixed tests: S = {K = 2} with A
 * positive and S = {K = 0} with B positive, four Clopper-Pearson bounds at
 * alpha / 4 (false-failure probability <= alpha = 1e-6).  At tau = 2,
 * eps_0 = 4: the true log P_A(K = 2) / P_B(K = 2) is log(1 / (4 pi) + 1/2)
 * = 2.667, the dilution being the order (the canary in batch 2 half the
 * time) and I_1.
 *
 * Mutation twin: the temperature 1 / tau halved through the hook's
 * noise_scale (no other member: plain runs; plan, event and claim
 * unchanged): pi = sigma(-8), the true ratio 6.615 > 4.  Its miss
 * probability, the exact power of the test {K = 2} (audit_miss() at the
 * law's rates), is computed and asserted <= 1e-3 before it runs: 3.0e-15
 * at N = 50,000 runs per side (about 5 us a run).  Every audit also checks its counts against
 * the law at its own temperature (6 standard deviations per category), and
 * test_law the law with the temperature scaled to nothing (K = 2 in A at
 * the rate 1/8, never in B: the canary lands in batch 1 half the time).
 *
 * Broken on purpose (then reverted): with the score sensitivity halved in
 * smd_maurey.c (the unit 2 L_0 / B instead of 4 L_0 / B, so draw_epsilon
 * = 2 at the same tau) the unmutated audit fails: the truth 2.667 exceeds
 * the claim 2; test_result computes that miss probability from the law
 * (2.2e-21 at this N) and asserts it <= 1e-3, so the design can see it.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "audit.h"
#include "objective.h"
#include "privacy/accountant.h"
#include "saddle.h"
#include "testing_hook.h"

#define ALPHA  1e-6
#define RUNS   50000 /* per side; the twin's power computed from it */
#define N      4
#define D      4 /* a (2) and b (2) */
#define CANARY 3
#define TAU    2.0

struct world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	double x[N * D];
};

struct smd_e2e {
	const struct alg_ops *alg; /* looked up once: smd() asserts, a pipe write each */
	struct world w[2];
	struct alg_testing_hook hook;
	double claim;     /* draw_epsilon */
	double event_eps; /* the event's basic epsilon */
};

/* P(K = k), k = 0, 1, 2, in both worlds. */
struct law {
	double p[2][3];
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

/* The event's basic epsilon; every leaf bounded_range. */
static double
event_epsilon(const struct run_plan *p)
{
	double eps, delta;
	struct err e = { 0 };

	for (unsigned i = 0; i < p->event.n_nodes; i++) {
		enum dp_event_type ty = p->event.node[i].type;

		ck_assert_msg(ty == DP_EVENT_BOUNDED_RANGE || ty == DP_EVENT_SELF_COMPOSED,
			      "node %u: not a bounded-range event", i);
	}
	ck_assert_msg(accountant_basic(&p->event, &eps, &delta, &e) == ERR_OK, "basic: %s", e.msg);
	ck_assert(delta == 0.0);
	return eps;
}

/* Both worlds; the temperature scaled by `scale` (1: no hook at all). */
static void
worlds_init(struct smd_e2e *f, double scale)
{
	struct objective_params op;
	struct data_schema s;
	struct objective o;
	struct err e = { 0 };

	memset(f, 0, sizeof(*f));
	f->alg = smd();
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
	f->hook.noise_scale = scale;
	for (int k = 0; k < 2; k++) {
		struct world *w = &f->w[k];
		struct run_spec *sp = &w->spec;

		for (size_t i = 0; i < N; i++) {
			bool up = k == 0 && i == CANARY;

			w->x[i * D + 0] = up ? -1.0 : 1.0;
			w->x[i * D + 1] = up ? 1.0 : -1.0;
		}
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
		sp->epsilon = 40.0;
		sp->delta = 1e-6;
		sp->mode = ACCOUNTING_BASIC;
		alg_default_params(smd(), sp->params);
		sp->params[param_index("steps")] = 2;
		sp->params[param_index("draws")] = 1;
		sp->params[param_index("step_size")] = TAU;
		if (scale != 1.0)
			sp->testing_hook = &f->hook;
		ck_assert_msg(alg_plan(smd(), sp, &w->plan, &e) == ERR_OK, "plan: %s", e.msg);
	}
	ck_assert(dp_event_equal(&f->w[0].plan.event, &f->w[1].plan.event));
	/* The design's premises, from the plan (not eps_0's formula: the
	 * audit is what checks it). */
	ck_assert_uint_eq(f->w[0].plan.steps, 2);
	ck_assert_double_eq(run_plan_value(&f->w[0].plan, "batch_size"), 2.0);
	ck_assert_double_eq(run_plan_value(&f->w[0].plan, "unused_records"), 0.0);
	ck_assert_double_eq(run_plan_value(&f->w[0].plan, "draws"), 1.0);
	ck_assert_double_eq(run_plan_value(&f->w[0].plan, "lipschitz_linf_x"), 1.0);
	ck_assert_double_eq(run_plan_value(&f->w[0].plan, "step_size"), TAU);
	f->claim = run_plan_value(&f->w[0].plan, "draw_epsilon");
	f->event_eps = event_epsilon(&f->w[0].plan);
	ck_assert(f->claim > 1.0 && f->claim < 10.0);
}

static double
sigmoid(double t)
{
	return 1.0 / (1.0 + exp(-t));
}

/* The law of K at the temperature scaled by `scale`: I_1 uniform, I_2 of
 * logit -2 tau / scale, or 0 in world A when the canary is in batch 1. */
static struct law
law_of(double scale)
{
	double pi = sigmoid(-2.0 * TAU / scale);
	struct law l;

	for (int k = 0; k < 2; k++) {
		double q = k == 0 ? 0.5 : 0.0; /* P[canary in batch 1 and seen] */

		l.p[k][2] = q * 0.25 + (1.0 - q) * 0.5 * pi;
		l.p[k][1] = q * 0.5 + (1.0 - q) * 0.5;
		l.p[k][0] = q * 0.25 + (1.0 - q) * 0.5 * (1.0 - pi);
	}
	return l;
}

/* Runs per world; counts[k] the runs with K = k. */
static void
count_k(struct smd_e2e *f, int world, uint64_t seed, int runs, uint64_t counts[3])
{
	struct world *w = &f->w[world];
	struct rng r;
	struct err e = { 0 };
	double u[D];

	counts[0] = counts[1] = counts[2] = 0;
	rng_splitmix_init(&r, seed);
	for (int i = 0; i < runs; i++) {
		double k;

		/* No ck_assert() per run: Check writes a pipe message for each. */
		if (alg_run(f->alg, &w->spec, &w->plan, &w->ds, &r, NULL, NULL, u, &e) != ERR_OK)
			ck_abort_msg("run: %s", e.msg);
		k = 2.0 * u[0];
		if (!(k == 0.0 || k == 1.0 || k == 2.0) || u[0] + u[1] != 1.0)
			ck_abort_msg("x = (%g, %g) is not an average of two vertices", u[0], u[1]);
		counts[(int)k]++;
	}
}

/* The two fixed tests: {K = 2} with A positive, {K = 0} with B positive;
 * four bounds at alpha / 4. */
static double
dp_lb(const uint64_t c[2][3], uint64_t n)
{
	double al = ALPHA / 4.0;

	return fmax(audit_eps_from_counts(c[0][2], n, c[1][2], n, al, 0.0),
		    audit_eps_from_counts(c[1][0], n, c[0][0], n, al, 0.0));
}

/* Each count within 6 standard deviations of the law. */
static void
check_law(const struct law *l, const uint64_t c[2][3], int runs)
{
	for (int w = 0; w < 2; w++)
		for (int k = 0; k < 3; k++) {
			double m = runs * l->p[w][k],
			       sd = sqrt(runs * l->p[w][k] * (1 - l->p[w][k]));

			ck_assert_msg(fabs((double)c[w][k] - m) <= 6.0 * sd + 1e-9,
				      "world %c, K = %d in %llu runs, the law says %.1f (sd %.1f)",
				      'A' + w, k, (unsigned long long)c[w][k], m, sd);
		}
}

static double
audit_e2e(double scale, uint64_t seed, double *ret_claim)
{
	struct smd_e2e *f = calloc(1, sizeof(*f));
	uint64_t c[2][3];
	struct law l;
	double lb, t0 = audit_now();

	ck_assert_ptr_nonnull(f);
	worlds_init(f, scale);
	count_k(f, 0, seed, RUNS, c[0]);
	count_k(f, 1, seed ^ 0x9e3779b97f4a7c15u, RUNS, c[1]);
	lb = dp_lb((const uint64_t(*)[3])c, RUNS);
	l = law_of(scale);
	printf("level3/saddle.smd_maurey-result (temperature x %.2f): K = 0, 1, 2 in %llu, %llu, "
	       "%llu (A) and %llu, %llu, %llu (B) of %d; the law: %.4f, %.4f, %.4f (A), %.4f, "
	       "%.4f, %.4f (B); true log P_A(K=2)/P_B(K=2) %.4f; epsilon lower bound %.4f vs "
	       "claimed eps_0 %.4f (the event's basic epsilon %.4f); false failure <= %.0e; wall "
	       "%.2f s\n",
	       scale, (unsigned long long)c[0][0], (unsigned long long)c[0][1],
	       (unsigned long long)c[0][2], (unsigned long long)c[1][0],
	       (unsigned long long)c[1][1], (unsigned long long)c[1][2], RUNS, l.p[0][0], l.p[0][1],
	       l.p[0][2], l.p[1][0], l.p[1][1], l.p[1][2], log(l.p[0][2] / l.p[1][2]), lb, f->claim,
	       f->event_eps, ALPHA, audit_now() - t0);
	*ret_claim = f->claim;
	/* The bound first (what the audit is for), then the law the power
	 * computation rests on. */
	if (scale == 1.0) {
		ck_assert_msg(lb <= f->claim, "epsilon lower bound %.4f > claimed eps_0 %.4f", lb,
			      f->claim);
		ck_assert(lb <= f->event_eps);
	}
	check_law(&l, (const uint64_t(*)[3])c, RUNS);
	free(f);
	return lb;
}

START_TEST(test_result)
{
	struct law l = law_of(1.0);
	double claim, miss;

	audit_e2e(1.0, 0x7a5c9e3d1b2f4861u, &claim);
	/* What the design can see: a claim half the true unit (the score
	 * sensitivity halved in the code) is exceeded but for this miss. */
	miss = audit_miss(RUNS, l.p[0][2], RUNS, l.p[1][2], ALPHA / 4.0, 0.0, claim / 2.0);
	printf("saddle.smd_maurey-result: a claim of eps_0 / 2 = %.4f (the sensitivity halved) "
	       "would be missed with probability %.2e\n",
	       claim / 2.0, miss);
	ck_assert_msg(miss <= 1e-3, "a halved sensitivity would pass: miss %.2e", miss);
}
END_TEST

START_TEST(test_result_mutated)
{
	struct smd_e2e *f = calloc(1, sizeof(*f));
	struct law l = law_of(0.5);
	double claim, truth, miss, lb;

	ck_assert_ptr_nonnull(f);
	worlds_init(f, 1.0);
	claim = f->claim;
	free(f);
	truth = log(l.p[0][2] / l.p[1][2]);
	miss = audit_miss(RUNS, l.p[0][2], RUNS, l.p[1][2], ALPHA / 4.0, 0.0, claim);
	printf("saddle.smd_maurey-result mutated: true log P_A(K=2)/P_B(K=2) %.4f vs claim %.4f; "
	       "P[mutation missed] by the test {K = 2} alone = %.2e\n",
	       truth, claim, miss);
	ck_assert(truth > claim);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.2e", miss);
	lb = audit_e2e(0.5, 0x2d8f4b6a9c1e3570u, &claim);
	ck_assert_msg(lb > claim, "temperature x 0.5 not detected: %.4f <= %.4f", lb, claim);
}
END_TEST

/* The law with the temperature scaled to nothing: I_2 is vertex 0 only in
 * world A with the canary in batch 1 (then uniform), so K = 2 at the rate
 * 1/8 in A and never in B. */
START_TEST(test_law)
{
	struct smd_e2e *f = calloc(1, sizeof(*f));
	const int runs = 4000;
	uint64_t c[2][3];
	double sd = sqrt(runs * (1.0 / 8.0) * (7.0 / 8.0));

	ck_assert_ptr_nonnull(f);
	worlds_init(f, 1e-9);
	count_k(f, 0, 0x5be0cd19137e2179u, runs, c[0]);
	count_k(f, 1, 0x1f83d9abfb41bd6bu, runs, c[1]);
	printf("law/saddle.smd_maurey-result: K = 0, 1, 2 in %llu, %llu, %llu (A), %llu, %llu, "
	       "%llu (B)\n",
	       (unsigned long long)c[0][0], (unsigned long long)c[0][1],
	       (unsigned long long)c[0][2], (unsigned long long)c[1][0],
	       (unsigned long long)c[1][1], (unsigned long long)c[1][2]);
	ck_assert_uint_eq(c[1][2], 0);
	ck_assert(fabs((double)c[0][2] - runs / 8.0) <= 5.0 * sd);
	ck_assert(fabs((double)c[1][1] - runs / 2.0) <= 5.0 * sqrt(runs / 4.0));
	free(f);
}
END_TEST

static Suite *
e2e_suite(void)
{
	Suite *s = suite_create("audit_smd_maurey_e2e");
	TCase *law = tcase_create("law");
	TCase *e2e = tcase_create("end_to_end");

	tcase_add_test(law, test_law);
	suite_add_tcase(s, law);
	tcase_set_timeout(e2e, 300); /* seconds in release; minutes under sanitizers */
	tcase_add_test(e2e, test_result);
	tcase_add_test(e2e, test_result_mutated);
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
