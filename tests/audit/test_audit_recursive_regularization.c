/*
 * test_audit_recursive_regularization.c - level 2 privacy audits of
 * saddle.recursive_regularization, all three round solvers (docs/
 * privacy-model.md §7; tests/audit/README.md), each with its sigma x 0.5
 * mutation twin, on the shared Gaussian grid audit of audit.h
 * (audit_gauss_grid_run, audit_gauss_grid_miss).
 *
 * Data (as test_audit_nseg.c), so that the canary realises the declared
 * worst case exactly: bilinear with coupling 0, blocks a and b of one
 * column each (|a|, |b| <= 1), X = Y = the l2 ball of radius 1 in R (the
 * interval [-1, 1]): a record's operator is (a, b) at every u and M =
 * sqrt 2.  The canary (record 5) is (1, 1) in world A and (-1, -1) in
 * world B; the others are (t, -t), |t| <= 0.7, orthogonal to (1, 1).
 * Through the DPOPT_TESTING hook the canary goes into slot 0 of the secret
 * order (round 1's chunk, its first batch) and the test reads the first
 * release along (1, 1) / sqrt 2: s = +-shift / 2 + N(0, sigma^2) exactly.
 * (1, 1e-5) on a 'basic' dataset.  The claim audited is the run's own
 * charge (the accountant on the plan's event): every design below makes
 * the event one Gaussian mechanism by parallel composition.
 *
 * - sgda (n = 64, n' = 10, multiplier 0.5: T = 2, b = 2: K = 5).  The
 *   release is the noisy batch mean at u_0 (the regulariser's gradient is
 *   added after the noise): shift = 2 M / b, sigma = z Delta', Delta' >=
 *   2 M / b (lattice rounding <= 1e-6 relative).  Event {parallel, parts T
 *   K: gaussian z}.
 * - outpert_cert (n = 16, n' = 4, multiplier 0.5, epsilon 2: T = 1).  The
 *   release is the certified point of F_1 plus N(0, (z Delta_1)^2 I), Delta_1 = 2 M /
 *   (mu_1 n') + 2 tol_1 = 1.1 * 2 M / (mu_1 n').  The exact saddle point is
 *   interior (|x*|, |y*| <= (1 + 3 * 0.7) / (n' mu_1) = 0.78 < 1), so the
 *   canary moves it by exactly the sensitivity 2 M / (mu_1 n') along (1, 1)
 *   / sqrt 2: shift = 2 M / (mu_1 n') = Delta_1 / 1.1, the most a
 *   certified point can be made to move short of the solver's own error
 *   (C / tol <= 1.2e-5 measured).  A tiny chunk keeps the k_1 = 53
 *   extragradient iterations cheap (about 30 us a run), and the event is
 *   {parallel, parts 1: gaussian z}.  epsilon = 2 (z = 1.9938) because the
 *   twin's mu' = 2 / (1.1 z) is 10 % below sgda's: at epsilon = 1 its miss
 *   would be 0.25 at 200,000 runs a side (7e-6 at 400,000); at epsilon = 2
 *   it is 2.0e-4 at 200,000 (0.43 at 100,000; audit_gauss_grid_miss()).
 *   on_release() orients the statistic: the canary (1, 1) pushes -gbar /
 *   mu_1 down, and both directions of the grid take world A as the larger
 *   (read unoriented, the audit sees no separation at all).
 * - sgda_multi_pass (n = 256, n' = 32, multiplier 1: T = 2; batch_size =
 *   n' = 32: every step's batch is the whole chunk, so K = floor(min(n'/8,
 *   n'^2 eps^2 / (32 p ln(1/delta)))) = 1 and the event is parallel(2:
 *   self_composed(gaussian z, 1)), no sampling: the run's charge is one
 *   Gaussian mechanism and the canary is in the first batch whatever the
 *   partial Fisher-Yates draws).  shift = 2 M / 32, sigma = z Delta'.
 *   Sampling amplification (m < n') is the accountant's WBK19 bound and is
 *   not what a level-2 audit of the base mechanism measures (as
 *   test_audit_dp_sgd_subsampled.c's whole-data case).
 *
 * Bound: Bonferroni grid of 73 thresholds u sigma, u = -4.5 .. 4.5 step
 * 0.125, both directions; false-failure probability <= 1e-6 per audit.
 *
 * Mutation twins: sigma x 0.5 through the hook's noise_scale.  Before a
 * twin runs, its true epsilon (analytic Gaussian at mu' = shift / (0.5
 * sigma)) and the miss probability of the grid's best test
 * (audit_gauss_grid_miss(), exact binomial sums) are computed from the
 * plan and printed; the test refuses an audit whose miss exceeds 1e-3.
 * Code mutations checked by hand (commit messages).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "audit.h"
#include "privacy/accountant.h"
#include "privacy/analytic_gaussian.h"
#include "saddle_worlds.h"
#include "testing_hook.h"

#define CLAIM_DELTA 1e-5
#define ALPHA       1e-6
#define GRID_K      73
#define GRID_U      4.5

#define WB_CANARY 5

enum { V_SGDA = 0, V_OUTPERT = 1, V_MP = 2 };

/* One design per variant (the file comment). */
struct design {
	const char *name;
	int variant;
	size_t n;
	double multiplier, batch;
	unsigned long steps; /* plan->steps */
	double rounds;
	double epsilon;     /* the spec's; delta is CLAIM_DELTA */
	uint64_t runs;      /* per side, the audit (asserts epsilon_lb <= claim) */
	uint64_t runs_twin; /* per side, the twin; see the power computation */
	uint64_t seed, seed_twin;
};

static const struct design DESIGNS[3] = {
	{ "level2/rr-sgda-first-batch", V_SGDA, 64, 0.5, 2.0, 10, 2.0, 1.0, 200000, 200000,
	  0x1f83d9abfb41bd6bu, 0x5be0cd19137e2179u },
	{ "level2/rr-outpert-cert-round1", V_OUTPERT, 16, 0.5, 0.0, 1, 1.0, 2.0, 200000, 200000,
	  0x510e527fade682d1u, 0x9b05688c2b3e6c1fu },
	{ "level2/rr-sgda-multi-pass-first-step", V_MP, 256, 1.0, 32.0, 2, 2.0, 1.0, 200000, 200000,
	  0x6a09e667bb67ae85u, 0x3c6ef372a54ff53au },
};

struct rr_audit {
	const struct design *d;
	struct saddle_world w[2];
	struct alg_testing_hook hook;
	double captured;
};

static void
on_release(void *ctx, unsigned long index, const double *value, size_t len)
{
	struct rr_audit *a = ctx;

	/* oriented so that world A (canary (1, 1)) is the larger: outpert_cert's
	 * point is -gbar / mu_1, so there the canary pushes it down */
	if (index == 0 && len == 2)
		a->captured = (a->d->variant == V_OUTPERT ? -1.0 : 1.0) * (value[0] + value[1]) /
			      sqrt(2.0);
}

static void
spec_init(const struct design *d, struct run_spec *s)
{
	saddle_world_spec(s, saddle_rr(), d->n, d->epsilon, CLAIM_DELTA);
	ck_assert_str_eq(saddle_rr()->params[0].name, "variant");
	ck_assert_str_eq(saddle_rr()->params[1].name, "regularization_multiplier");
	ck_assert_str_eq(saddle_rr()->params[2].name, "batch_size");
	s->params[0] = d->variant;
	s->params[1] = d->multiplier;
	s->params[2] = d->batch;
}

/* The claim audited: the run's own charge. */
static double
claimed(const struct run_plan *p)
{
	double eps = saddle_charge(p, CLAIM_DELTA);

	ck_assert(eps > 0.0);
	return eps;
}

static void
worlds_init(struct rr_audit *a, const struct design *d, double scale)
{
	struct err e = { 0 };

	memset(a, 0, sizeof(*a));
	a->d = d;
	a->hook.place_first = true;
	a->hook.first_record = WB_CANARY;
	a->hook.release = on_release;
	a->hook.ctx = a;
	a->hook.noise_scale = scale;
	for (int k = 0; k < 2; k++) {
		struct saddle_world *w = &a->w[k];

		saddle_world_rows(w->x, d->n, WB_CANARY, k);
		saddle_world_data(w, d->n);
		spec_init(d, &w->spec);
		w->spec.testing_hook = &a->hook;
		ck_assert_msg(alg_plan(saddle_rr(), &w->spec, &w->plan, &e) == ERR_OK, "plan: %s",
			      e.msg);
	}
	ck_assert(dp_event_equal(&a->w[0].plan.event, &a->w[1].plan.event));
}

static double
rr_sample(void *ctx, int world, struct rng *r)
{
	struct rr_audit *a = ctx;
	double u[2];

	a->captured = NAN;
	saddle_world_run(saddle_rr(), &a->w[world], r, u);
	if (!isfinite(a->captured))
		ck_abort_msg("the hook saw no first release");
	return a->captured;
}

/* The difference of the worlds' first-release means along (1, 1) / sqrt
 * 2 (the canary's full effect), from the plan: 2 M / b for the SGDA
 * variants, 2 M / (mu_1 n') for outpert_cert. */
static double
shift_of(const struct design *d, const struct run_plan *p)
{
	double M = saddle_used(p, "operator_bound");

	if (d->variant == V_OUTPERT)
		return 2.0 * M /
		       (4.0 * saddle_used(p, "regularization_lambda") *
			saddle_used(p, "chunk_size"));
	return 2.0 * M / saddle_used(p, "batch_size");
}

/* The plan's shape, the design's promises checked. */
static void
check_plan(const struct design *d, const struct run_plan *p)
{
	double M = saddle_used(p, "operator_bound");

	ck_assert_uint_eq(p->steps, d->steps);
	ck_assert_double_eq(saddle_used(p, "rounds"), d->rounds);
	ck_assert_double_eq(saddle_used(p, "variant"), (double)d->variant);
	ck_assert_double_eq_tol(M, sqrt(2.0), 1e-15);
	if (d->variant == V_OUTPERT) {
		/* sigma = z Delta_1, Delta_1 = 1.1 x the exact point's shift */
		ck_assert_double_eq_tol(saddle_used(p, "sensitivity"), 1.1 * shift_of(d, p), 1e-12);
		ck_assert_double_eq(saddle_used(p, "chunk_size"), 4.0);
		/* the exact saddle point is interior in every placement */
		ck_assert(1.0 + 3.0 * 0.7 < 4.0 * saddle_used(p, "regularization_lambda") * 4.0);
	} else {
		ck_assert(saddle_used(p, "sensitivity_lattice") <= shift_of(d, p) * (1.0 + 1e-6));
		ck_assert(saddle_used(p, "sensitivity_lattice") >= shift_of(d, p));
	}
	if (d->variant == V_MP) {
		ck_assert_double_eq(saddle_used(p, "round_steps"), 1.0);
		ck_assert_double_eq(saddle_used(p, "batch_size"), saddle_used(p, "chunk_size"));
	}
}

static struct audit_gauss_grid
grid_of(const struct design *d, const struct run_plan *p, const char *name, bool twin)
{
	return (struct audit_gauss_grid){ .name = name,
					  .sigma = saddle_used(p, "noise_sigma"),
					  .delta = CLAIM_DELTA,
					  .alpha = ALPHA,
					  .k = GRID_K,
					  .u_max = GRID_U,
					  .n = twin ? d->runs_twin : d->runs };
}

static double
white_box_audit(const struct design *d, const char *name, double scale, uint64_t seed,
		double *ret_claim)
{
	struct rr_audit *a = calloc(1, sizeof(*a));
	struct audit_gauss_grid g;
	double lb;

	ck_assert(a != NULL);
	worlds_init(a, d, scale);
	check_plan(d, &a->w[0].plan);
	*ret_claim = claimed(&a->w[0].plan);
	g = grid_of(d, &a->w[0].plan, name, scale != 1.0);
	lb = audit_gauss_grid_run(&g, rr_sample, a, seed, scale, *ret_claim);
	ck_assert(!isnan(lb));
	free(a);
	return lb;
}

/* The planned mutation test, from the plan alone: the mutated mechanism's
 * true epsilon and the miss probability of the grid's best test. */
static void
mutation_power(const struct design *d, const char *name)
{
	struct run_spec s;
	struct run_plan p;
	struct audit_gauss_grid g;
	double shift, eps, eps_true, miss, u, mu;

	spec_init(d, &s);
	ck_assert(alg_plan(saddle_rr(), &s, &p, NULL) == ERR_OK);
	eps = claimed(&p);
	/* the noise drawn is >= 0.5 sigma (lattice rounding raises it by at
	 * most 1e-6 relative): the power is computed for the weaker twin */
	shift = shift_of(d, &p) / (1.0 + 1e-6);
	g = grid_of(d, &p, name, true);
	mu = shift / (0.5 * g.sigma);
	ck_assert_int_eq(ag_epsilon_mu(mu, CLAIM_DELTA, &eps_true, NULL), ERR_OK);
	miss = audit_gauss_grid_miss(&g, shift, 0.5, eps, &u);
	printf("%s: sigma x 0.5, z = %.4f, mu = %.4f, true eps(%.0e) = %.4f (claimed %.4f); "
	       "best planned test u = %.3f, N = %llu: P[mutation missed] <= %.2g\n",
	       name, saddle_used(&p, "noise_multiplier"), mu, CLAIM_DELTA, eps_true, eps, u,
	       (unsigned long long)d->runs_twin, miss);
	ck_assert(eps_true > eps);
	ck_assert_msg(miss <= 1e-3, "the mutation audit is under-powered: miss %.6f", miss);
}

static void
audit_pair(int variant, bool twin)
{
	const struct design *d = &DESIGNS[variant];
	char name[96];
	double eps, lb;

	if (!twin) {
		lb = white_box_audit(d, d->name, 1.0, d->seed, &eps);
		ck_assert_msg(lb <= eps, "%s: eps_lb %.4f > claimed %.4f", d->name, lb, eps);
		return;
	}
	snprintf(name, sizeof(name), "%s-mutated", d->name);
	mutation_power(d, name);
	lb = white_box_audit(d, name, 0.5, d->seed_twin, &eps);
	ck_assert_msg(lb > eps, "%s: sigma x 0.5 not detected: eps_lb %.4f <= claimed %.4f", name,
		      lb, eps);
}

START_TEST(test_white_box)
{
	audit_pair(_i, false);
}
END_TEST

START_TEST(test_white_box_mutated)
{
	audit_pair(_i, true);
}
END_TEST

/* The first release along (1, 1) / sqrt 2 without noise in world A: the
 * SGDA variants the canary's sqrt 2 / b (sgda_multi_pass: b = n', the
 * whole chunk); outpert_cert the regularised saddle point -gbar / mu_1
 * (interior), -sqrt 2 / (n' mu_1). */
static double
hook_value(const struct rr_audit *a)
{
	const struct run_plan *p = &a->w[0].plan;

	return 0.5 * shift_of(a->d, p);
}

/* The hook: with the noise scaled to almost nothing the first release is
 * the canary's value along (1, 1) / sqrt 2 in every run (the placement
 * works), and a zero hook leaves a run bit-identical. */
START_TEST(test_hook)
{
	struct rr_audit *a = calloc(1, sizeof(*a));
	struct alg_testing_hook zero = { 0 };
	struct rng r;
	struct err e = { 0 };
	double u0[2], u1[2];

	ck_assert_ptr_nonnull(a);
	worlds_init(a, &DESIGNS[_i], 1e-6);
	check_plan(&DESIGNS[_i], &a->w[0].plan);
	for (uint64_t seed = 1; seed <= 20; seed++) {
		for (int k = 0; k < 2; k++) {
			rng_splitmix_init(&r, seed);
			ck_assert_double_eq_tol(rr_sample(a, k, &r),
						(k == 0 ? 1.0 : -1.0) * hook_value(a), 1e-4);
		}
		a->w[0].spec.testing_hook = &zero;
		rng_splitmix_init(&r, seed);
		ck_assert(alg_run(saddle_rr(), &a->w[0].spec, &a->w[0].plan, &a->w[0].ds, &r, NULL,
				  NULL, u0, &e) == ERR_OK);
		a->w[0].spec.testing_hook = NULL;
		rng_splitmix_init(&r, seed);
		ck_assert(alg_run(saddle_rr(), &a->w[0].spec, &a->w[0].plan, &a->w[0].ds, &r, NULL,
				  NULL, u1, &e) == ERR_OK);
		ck_assert(memcmp(u0, u1, sizeof(u0)) == 0);
		a->w[0].spec.testing_hook = &a->hook;
	}
	free(a);
}
END_TEST

static Suite *
rr_audit_suite(void)
{
	Suite *s = suite_create("audit_recursive_regularization");
	TCase *wb = tcase_create("white_box");
	TCase *hook = tcase_create("hook");

	tcase_add_loop_test(hook, test_hook, 0, 3);
	suite_add_tcase(s, hook);
	tcase_set_timeout(wb, 300); /* seconds in release; minutes under sanitizers */
	tcase_add_loop_test(wb, test_white_box, 0, 3);
	tcase_add_loop_test(wb, test_white_box_mutated, 0, 3);
	suite_add_tcase(s, wb);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(rr_audit_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
