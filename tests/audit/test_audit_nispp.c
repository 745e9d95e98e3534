/*
 * test_audit_nispp.c - level 2 privacy audit of saddle.nispp, both
 * variants (docs/privacy-model.md §7; tests/audit/README.md), with the
 * sigma x 0.5 mutation twins, in the design of test_audit_nseg.c.
 *
 * The unit.  Every release of NISPP is one noisy prox point w_1 = u_1 +
 * N(0, sigma^2 I), sigma = z Delta', Delta' >= 4 M / (lambda B) (the
 * lattice's rounding raises it by <= 1e-6 relative).  The charged 4 M /
 * (lambda B) is Proposition 9's bound for nu-accurate answers; exact
 * answers differ by at most 2 M / (lambda B), and that is what the
 * construction realises (L = 0: the fixed point is exact after its one
 * step).  So the claim audited is the tighter one, epsilon(delta) of a
 * Gaussian mechanism with mu = (2 M / (lambda B)) / sigma on the exact
 * analytic curve (below the run's charge): a run adding less noise than
 * its plan says, or computing its sensitivity too small by 2x, is
 * detected.  Through the DPOPT_TESTING hook the canary goes into the first
 * batch (single pass: slot 0 of the secret order; multi-pass: into the
 * first draw, conditioning on its inclusion as test_audit_nseg.c does)
 * and the test reads the first release w_1.
 *
 * Data: bilinear with coupling 0, blocks a and b of one column each (|a|,
 * |b| <= 1), X = Y = [-1, 1]: a record's operator is (a, b) at every u, M
 * = sqrt 2, L = 0.  From w_0 = 0 the prox point is u_1 = -F_B / lambda
 * (inside W here, so no projection acts).  The canary (record 5) is (1,
 * 1) in world A and (-1, -1) in world B; the others are (t, -t),
 * orthogonal to (1, 1).  So s = -<w_1, (1, 1) / sqrt 2> is exactly +-
 * sqrt 2 / (lambda B) + N(0, sigma^2).  n = 8, p = 2, (2, 1e-5) on a
 * 'basic' dataset; single_pass B = 2 (four disjoint batches), multi_pass
 * B = 1 and one step.
 *
 * Bound: Bonferroni grid of 73 thresholds u sigma, u = -4.5 .. 4.5 step
 * 0.125, both directions; false-failure probability <= 1e-6.  Mutation
 * twins: sigma x 0.5 through the hook's noise_scale, their miss
 * probability computed from the plan before they run (audit_miss()).
 * Code mutation checked by hand (commit message): the sensitivity 2 M /
 * (lambda B) for 4 M / (lambda B) in nispp_schedule() makes the
 * unmutated single-pass audit fail.
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
#include "saddle_worlds.h"
#include "testing_hook.h"

#define CLAIM_EPS   2.0
#define CLAIM_DELTA 1e-5
#define ALPHA       1e-6
#define GRID_K      73
#define GRID_U      4.5

#define WB_N      8
#define WB_CANARY 5
#define WB_RUNS   200000 /* per side; see the power computation */

/* The variant of the worlds (0 single_pass, 1 multi_pass); each test sets
 * it before building anything (test-only global, forked per test). */
static int wb_variant;

static size_t
wb_batch(void)
{
	return wb_variant == 0 ? 2 : 1;
}

static const struct alg_ops *
nispp(void)
{
	/* looked up once: a Check assertion per run is a pipe write */
	static const struct alg_ops *a;

	if (a == NULL) {
		a = alg_find("saddle.nispp");
		ck_assert_ptr_nonnull(a);
	}
	return a;
}

struct world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	double x[WB_N * 2];
};

struct nispp_audit {
	struct world w[2];
	struct alg_testing_hook hook;
	double captured;
};

static void
on_release(void *ctx, unsigned long index, const double *value, size_t len)
{
	struct nispp_audit *a = ctx;

	if (index == 0 && len == 2)
		a->captured = -(value[0] + value[1]) / sqrt(2.0); /* world A above */
}

static void
spec_init(struct run_spec *s)
{
	saddle_world_spec(s, nispp(), WB_N, CLAIM_EPS, CLAIM_DELTA);
	ck_assert_str_eq(nispp()->params[0].name, "variant");
	ck_assert_str_eq(nispp()->params[1].name, "batch_size");
	ck_assert_str_eq(nispp()->params[2].name, "iterations");
	s->params[0] = wb_variant;
	s->params[1] = (double)wb_batch();
	if (wb_variant == 1)
		s->params[2] = 1;
	ck_assert_str_eq(nispp()->params[4].name, "inner_solver");
}

/* mu of the exact-answer mechanism at the charged noise: (2 M / (lambda
 * B)) / (z 4 M / (lambda B)) = 1 / (2 z), z the accountant's multiplier
 * (not the plan's sigma, so that a sensitivity computed too small in the
 * code is caught, not absorbed into the claim). */
static double
tight_mu(const struct run_plan *p)
{
	return 0.5 / saddle_used(p, "noise_multiplier");
}

/* The claim audited: epsilon(delta) of gaussian(mu) for that mu; below
 * what the event charges for its unit (checked): single pass, the run's
 * charge (one parallel Gaussian); multi-pass, the base mechanism
 * gaussian(z) on the charged sensitivity, mu = 1/z -- not the run's
 * charge, which the amplification by sampling can put below one placed
 * step's epsilon under the PLD accountant. */
static double
claimed(const struct run_plan *p)
{
	struct accountant_report rep;
	struct err e = { 0 };
	double eps, unit;

	ck_assert_int_eq(ag_epsilon_mu(tight_mu(p), CLAIM_DELTA, &eps, NULL), ERR_OK);
	if (wb_variant == 0) {
		ck_assert_msg(accountant_epsilon(&p->event, ACCOUNTING_BASIC, CLAIM_DELTA, NULL,
						 true, &rep, &e) == ERR_OK,
			      "accountant: %s", e.msg);
		unit = rep.epsilon;
	} else {
		ck_assert_int_eq(ag_epsilon_mu(1.0 / saddle_used(p, "noise_multiplier"),
					       CLAIM_DELTA, &unit, NULL),
				 ERR_OK);
	}
	ck_assert(eps > 0.0 && eps <= unit);
	return eps;
}

static void
worlds_init(struct nispp_audit *a, double scale)
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

		saddle_world_rows(w->x, WB_N, WB_CANARY, k);
		w->ds.n = WB_N;
		w->ds.d = 2;
		w->ds.x = w->x;
		spec_init(&w->spec);
		w->spec.testing_hook = &a->hook;
		ck_assert_msg(alg_plan(nispp(), &w->spec, &w->plan, &e) == ERR_OK, "plan: %s",
			      e.msg);
	}
	ck_assert(dp_event_equal(&a->w[0].plan.event, &a->w[1].plan.event));
}

static double
nispp_sample(void *ctx, int world, struct rng *r)
{
	struct nispp_audit *a = ctx;
	const struct world *w = &a->w[world];
	double u[2];
	struct err e = { 0 };

	a->captured = NAN;
	if (alg_run(nispp(), &w->spec, &w->plan, &w->ds, r, NULL, NULL, u, &e) != ERR_OK)
		ck_abort_msg("run: %s", e.msg);
	if (!isfinite(a->captured))
		ck_abort_msg("the hook saw no first release");
	return a->captured;
}

static double
white_box_audit(const char *name, double scale, uint64_t seed, double *ret_claim)
{
	struct nispp_audit *a = calloc(1, sizeof(*a));
	struct audit_config c;
	struct audit_result r;
	double sigma, M, *xa = malloc(WB_RUNS * sizeof(double)),
			 *xb = malloc(WB_RUNS * sizeof(double));
	double t0 = audit_now();

	ck_assert(a != NULL && xa != NULL && xb != NULL);
	worlds_init(a, scale);
	sigma = saddle_used(&a->w[0].plan, "noise_sigma");
	M = saddle_used(&a->w[0].plan, "operator_bound");
	ck_assert_uint_eq(a->w[0].plan.steps, wb_variant == 0 ? 4 : 1);
	ck_assert_double_eq_tol(M, sqrt(2.0), 1e-15);
	ck_assert(saddle_used(&a->w[0].plan, "sensitivity_lattice") <=
		  4.0 * M / (saddle_used(&a->w[0].plan, "prox_weight") * (double)wb_batch()) *
			  (1.0 + 1e-6));
	ck_assert_double_eq(saddle_used(&a->w[0].plan, "operator_lipschitz"), 0.0);
	*ret_claim = claimed(&a->w[0].plan);
	c = (struct audit_config){ .name = name,
				   .delta = CLAIM_DELTA,
				   .alpha = ALPHA,
				   .method = AUDIT_GRID,
				   .lo = -GRID_U * sigma,
				   .hi = GRID_U * sigma,
				   .k = GRID_K };
	audit_draw(nispp_sample, a, 0, seed, xa, WB_RUNS);
	audit_draw(nispp_sample, a, 1, seed ^ 0x9e3779b97f4a7c15u, xb, WB_RUNS);
	ck_assert_int_eq(audit_eps_lb(&c, xa, WB_RUNS, xb, WB_RUNS, &r), 0);
	audit_print(stdout, &c, &r, *ret_claim);
	printf("audit %s: N = %d runs per side, noise scale %.2f, wall time %.2f s\n", name,
	       WB_RUNS, scale, audit_now() - t0);
	free(xa);
	free(xb);
	free(a);
	return r.eps_lb;
}

/* The planned mutation test, from the plan alone: the mutated
 * mechanism's true epsilon and the miss probability of the grid test at
 * u = 1.125 (index 45). */
static void
mutation_power(const char *name)
{
	struct run_spec s;
	struct run_plan p;
	double z, mu, eps, eps_true, miss, u, sm, h;

	spec_init(&s);
	ck_assert(alg_plan(nispp(), &s, &p, NULL) == ERR_OK);
	eps = claimed(&p);
	z = saddle_used(&p, "noise_multiplier");
	mu = 2.0 * tight_mu(&p);
	ck_assert_int_eq(ag_epsilon_mu(mu, CLAIM_DELTA, &eps_true, NULL), ERR_OK);
	u = -GRID_U + 2.0 * GRID_U * 45 / (GRID_K - 1);
	sm = 0.5;
	h = 0.5 * mu * sm; /* the canary's shift, in planned sigmas */
	miss = audit_miss(WB_RUNS, audit_normal_sf((u - h) / sm), WB_RUNS,
			  audit_normal_sf((u + h) / sm), ALPHA / (4.0 * GRID_K), CLAIM_DELTA, eps);
	printf("%s: sigma x 0.5, z = %.4f, mu = %.4f, true eps(%.0e) = %.4f (claimed %.4f); "
	       "planned test u = %.3f, N = %d: P[mutation missed] <= %.2g\n",
	       name, z, mu, CLAIM_DELTA, eps_true, eps, u, WB_RUNS, miss);
	ck_assert(eps_true > eps);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.6f", miss);
}

START_TEST(test_white_box)
{
	double eps, lb;

	wb_variant = 0;
	lb = white_box_audit("level2/nispp-sp-first-prox-point", 1.0, 0x1f83d9abfb41bd6bu, &eps);
	ck_assert_msg(lb <= eps, "nispp single_pass: eps_lb %.4f > claimed %.4f", lb, eps);
}
END_TEST

START_TEST(test_white_box_mutated)
{
	double eps, lb;

	wb_variant = 0;
	mutation_power("level2/nispp-sp-first-prox-point-mutated");
	lb = white_box_audit("level2/nispp-sp-first-prox-point-mutated", 0.5, 0x5be0cd19137e2179u,
			     &eps);
	ck_assert_msg(lb > eps, "sigma x 0.5 not detected: eps_lb %.4f <= claimed %.4f", lb, eps);
}
END_TEST

START_TEST(test_white_box_mp)
{
	double eps, lb;

	wb_variant = 1;
	lb = white_box_audit("level2/nispp-mp-first-prox-point", 1.0, 0x3c6ef372fe94f82bu, &eps);
	ck_assert_msg(lb <= eps, "nispp multi_pass: eps_lb %.4f > claimed %.4f", lb, eps);
}
END_TEST

START_TEST(test_white_box_mp_mutated)
{
	double eps, lb;

	wb_variant = 1;
	mutation_power("level2/nispp-mp-first-prox-point-mutated");
	lb = white_box_audit("level2/nispp-mp-first-prox-point-mutated", 0.5, 0x510e527fade682d1u,
			     &eps);
	ck_assert_msg(lb > eps, "sigma x 0.5 not detected: eps_lb %.4f <= claimed %.4f", lb, eps);
}
END_TEST

/* The hook, both variants: with the noise scaled to almost nothing the
 * first release is the canary's +-sqrt 2 / (lambda B) along (1, 1) / sqrt 2 in
 * every run (the placement works), and a zero hook leaves a run
 * bit-identical. */
START_TEST(test_hook)
{
	for (wb_variant = 0; wb_variant < 2; wb_variant++) {
		struct nispp_audit *a = calloc(1, sizeof(*a));
		struct alg_testing_hook zero = { 0 };
		struct rng r;
		struct err e = { 0 };
		double u0[2], u1[2];

		ck_assert_ptr_nonnull(a);
		worlds_init(a, 1e-6);
		for (uint64_t seed = 1; seed <= 20; seed++) {
			for (int k = 0; k < 2; k++) {
				rng_splitmix_init(&r, seed);
				ck_assert_double_eq_tol(
					nispp_sample(a, k, &r),
					(k == 0 ? 1.0 : -1.0) * sqrt(2.0) /
						(saddle_used(&a->w[k].plan, "prox_weight") *
						 (double)wb_batch()),
					1e-4);
			}
			a->w[0].spec.testing_hook = &zero;
			rng_splitmix_init(&r, seed);
			ck_assert(alg_run(nispp(), &a->w[0].spec, &a->w[0].plan, &a->w[0].ds, &r,
					  NULL, NULL, u0, &e) == ERR_OK);
			a->w[0].spec.testing_hook = NULL;
			rng_splitmix_init(&r, seed);
			ck_assert(alg_run(nispp(), &a->w[0].spec, &a->w[0].plan, &a->w[0].ds, &r,
					  NULL, NULL, u1, &e) == ERR_OK);
			ck_assert(memcmp(u0, u1, sizeof(u0)) == 0);
			a->w[0].spec.testing_hook = &a->hook;
		}
		free(a);
	}
}
END_TEST

static Suite *
nispp_audit_suite(void)
{
	Suite *s = suite_create("audit_nispp");
	TCase *wb = tcase_create("white_box");
	TCase *hook = tcase_create("hook");

	tcase_add_test(hook, test_hook);
	suite_add_tcase(s, hook);
	tcase_set_timeout(wb, 300); /* seconds in release; minutes under sanitizers */
	tcase_add_test(wb, test_white_box);
	tcase_add_test(wb, test_white_box_mutated);
	tcase_add_test(wb, test_white_box_mp);
	tcase_add_test(wb, test_white_box_mp_mutated);
	suite_add_tcase(s, wb);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(nispp_audit_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
