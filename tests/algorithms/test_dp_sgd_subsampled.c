/*
 * test_dp_sgd_subsampled.c - method-specific tests of dp_sgd.subsampled.
 *
 * Utility, at the method's defaults (batch size, epochs and step size all
 * "auto", algorithms/sgd/README.md) on synthetic data generated here: rows
 * x ~ N(0, I / d) clipped to ||x||_2 <= 1, a planted model of norm 3.5.
 *  - logistic, n = 5,000 training rows, d = 20, (eps, delta) = (1, 1e-5),
 *    l2 ball of radius SUB_RADIUS: for each of SUB_SEEDS seeds the test
 *    accuracy (5,000 fresh rows) of the private model is compared with the
 *    non-private empirical optimum's (full-batch gradient descent to
 *    convergence, computed here); the mean over the seeds must be within
 *    0.03.
 *  - least_squares, the same sizes, labels <w, x> + N(0, 0.5^2) clipped to
 *    |y| <= 3: over LS_SEEDS = 20 seeds the paired difference (test MSE of
 *    the trivial predictor 0, the labels' symmetric mean) - (test MSE of the
 *    private model) must be positive by a one-sided t-test at level 0.01
 *    (t > 2.539, 19 degrees of freedom).
 * Plumbing: the plan's event is the documented one for both samplings and
 * meets the target on both accountants, epochs and steps give the
 * documented T and b, and contradictory parameters are refused by name.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg.h"
#include "objective.h"
#include "planted_glm.h"
#include "privacy/accountant.h"

#define N_TRAIN    5000
#define N_TEST     5000
#define D          20
#define SUB_SEEDS  5
#define LS_SEEDS   20
#define SUB_RADIUS 10.0

static const struct alg_ops *
sub(void)
{
	const struct alg_ops *a = alg_find("dp_sgd.subsampled");

	ck_assert(a != NULL);
	return a;
}

static void
spec_init(struct run_spec *s, const char *objective, enum task task)
{
	memset(s, 0, sizeof(*s));
	s->x.kind = CONSTRAINT_L2_BALL;
	s->x.radius = SUB_RADIUS;
	s->epsilon = 1.0;
	s->delta = 1e-5;
	alg_default_params(sub(), s->params);
	s->n = N_TRAIN;
	s->schema.d = D;
	s->schema.task = task;
	s->schema.bounds.feature_l2 = 1.0;
	s->schema.bounds.feature_linf = NAN;
	s->schema.bounds.label = task == TASK_REGRESSION ? 3.0 : NAN;
	s->schema.bounds.label_lo = s->schema.bounds.label_hi = NAN;
	ck_assert_int_eq(run_spec_set_objective(s, objective_find(objective), NULL, NULL), ERR_OK);
}

static void
private_run(const struct run_spec *spec, const struct dataset *ds, uint64_t seed, double *w)
{
	struct run_plan plan;
	struct err e = { 0 };
	struct rng r;

	ck_assert_msg(alg_plan(sub(), spec, &plan, &e) == ERR_OK, "plan: %s", e.msg);
	rng_splitmix_init(&r, seed);
	ck_assert_msg(alg_run(sub(), spec, &plan, ds, &r, NULL, NULL, w, &e) == ERR_OK, "run: %s",
		      e.msg);
}

/* The non-private empirical optimum, unconstrained: full-batch gradient
 * descent at step 1/L (L = 1/4 for logistic, 1 for least squares with
 * ||x|| <= 1), to a gradient norm below 1e-6. */
static void
nonprivate(const struct objective *o, const struct dataset *ds, double step, double *w)
{
	double g[D];
	size_t *all = calloc(ds->n, sizeof(*all));

	ck_assert(all != NULL);
	for (size_t i = 0; i < ds->n; i++)
		all[i] = i;
	memset(w, 0, D * sizeof(*w));
	for (int it = 0; it < 20000; it++) {
		double gn = 0.0;

		memset(g, 0, sizeof(g));
		objective_batch_grad(o, ds, all, ds->n, w, INFINITY, g);
		for (int j = 0; j < D; j++) {
			g[j] /= (double)ds->n;
			gn += g[j] * g[j];
			w[j] -= step * g[j];
		}
		if (sqrt(gn) < 1e-6)
			break;
	}
	free(all);
}

static double
mse(const struct dataset *ds, const double *w)
{
	double s = 0.0;

	for (size_t i = 0; i < ds->n; i++) {
		double z = 0.0;

		for (int j = 0; j < D; j++)
			z += w[j] * ds->x[i * D + j];
		s += (z - ds->y[i]) * (z - ds->y[i]);
	}
	return s / (double)ds->n;
}

/* As for the other Gaussian methods (issue 9): a run refuses a plan that
 * is not the one its spec gives (a spec charged less, an edited noise
 * multiplier or step size), and writes nothing. */
START_TEST(test_plan_must_match_spec)
{
	struct planted_split tr, te;
	struct run_spec spec;
	struct run_plan plan, edited;
	struct err e = { 0 };
	struct rng r;
	double w[D + 1] = { 0 };
	int edits = 0;

	planted_glm(&tr, &te, N_TRAIN, N_TEST, D, false, 3.5, 77);
	spec_init(&spec, "logistic", TASK_BINARY);
	spec.epsilon = 2.0;
	ck_assert_msg(alg_plan(sub(), &spec, &plan, &e) == ERR_OK, "%s", e.msg);
	rng_splitmix_init(&r, 1);
	ck_assert_msg(alg_run(sub(), &spec, &plan, &tr.ds, &r, NULL, NULL, w, &e) == ERR_OK, "%s",
		      e.msg);
	spec.epsilon = 1.0; /* the run would be noisier than charged: refused */
	memset(w, 0, sizeof(w));
	ck_assert_int_eq(alg_run(sub(), &spec, &plan, &tr.ds, &r, NULL, NULL, w, &e), ERR_INTERNAL);
	ck_assert(w[0] == 0.0);
	spec.epsilon = 2.0;
	for (size_t i = 0; i < plan.n_used; i++) {
		if (strcmp(plan.used[i].name, "noise_multiplier") != 0 &&
		    strcmp(plan.used[i].name, "step_size") != 0)
			continue;
		edited = plan;
		edited.used[i].value *= 1.5;
		ck_assert_int_eq(alg_run(sub(), &spec, &edited, &tr.ds, &r, NULL, NULL, w, &e),
				 ERR_INTERNAL);
		ck_assert(w[0] == 0.0);
		edits++;
	}
	ck_assert_int_eq(edits, 2);
	planted_split_clear(&tr);
	planted_split_clear(&te);
}
END_TEST

START_TEST(test_logistic_utility)
{
	struct run_spec spec;
	double gap = 0.0;

	spec_init(&spec, "logistic", TASK_BINARY);
	for (int s = 0; s < SUB_SEEDS; s++) {
		struct planted_split tr, te;
		double wp[D], wn[D], ap, an;

		planted_glm(&tr, &te, N_TRAIN, N_TEST, D, false, 3.5, 1000 + (uint64_t)s);
		private_run(&spec, &tr.ds, 77 + (uint64_t)s, wp);
		nonprivate(&spec.objective, &tr.ds, 4.0, wn);
		ap = objective_accuracy(&spec.objective, &te.ds, wp);
		an = objective_accuracy(&spec.objective, &te.ds, wn);
		printf("subsampled logistic seed %d: test accuracy private %.4f non-private %.4f\n",
		       s, ap, an);
		gap += (an - ap) / SUB_SEEDS;
		planted_split_clear(&tr);
		planted_split_clear(&te);
	}
	printf("subsampled logistic: mean accuracy gap %.4f (allowed 0.03)\n", gap);
	ck_assert_msg(gap <= 0.03, "mean accuracy gap %.4f", gap);
}
END_TEST

START_TEST(test_least_squares_utility)
{
	struct run_spec spec;
	double diff[LS_SEEDS], mean = 0.0, var = 0.0, t;
	double zero[D] = { 0 };

	spec_init(&spec, "least_squares", TASK_REGRESSION);
	for (int s = 0; s < LS_SEEDS; s++) {
		struct planted_split tr, te;
		double wp[D];

		planted_glm(&tr, &te, N_TRAIN, N_TEST, D, true, 3.5, 2000 + (uint64_t)s);
		private_run(&spec, &tr.ds, 99 + (uint64_t)s, wp);
		diff[s] = mse(&te.ds, zero) - mse(&te.ds, wp);
		mean += diff[s] / LS_SEEDS;
		planted_split_clear(&tr);
		planted_split_clear(&te);
	}
	for (int s = 0; s < LS_SEEDS; s++)
		var += (diff[s] - mean) * (diff[s] - mean) / (LS_SEEDS - 1);
	t = mean / sqrt(var / LS_SEEDS);
	printf("subsampled least squares: MSE(trivial) - MSE(private) = %.4f +- %.4f, t = %.2f\n",
	       mean, sqrt(var / LS_SEEDS), t);
	ck_assert_msg(t > 2.539, "t = %.3f", t);
}
END_TEST

static size_t
param_index(const char *name)
{
	for (size_t k = 0; sub()->params[k].name != NULL; k++)
		if (strcmp(sub()->params[k].name, name) == 0)
			return k;
	ck_abort_msg("no parameter %s", name);
	return 0;
}

START_TEST(test_plan)
{
	struct run_spec spec;
	struct run_plan p;
	struct accountant_report rep;
	struct err e = { 0 };
	double rho = pow(sqrt(1.0 + log(1e5)) - sqrt(log(1e5)), 2.0), b, t, pdim;

	for (int mode = 0; mode < 2; mode++) {
		spec_init(&spec, "logistic", TASK_BINARY);
		spec.mode = mode == 0 ? ACCOUNTING_BASIC : ACCOUNTING_RENYI;
		ck_assert_msg(alg_plan(sub(), &spec, &p, &e) == ERR_OK, "%s", e.msg);
		/* T = clamp(ceil(rho n^2 / (8 p)), 3, 300), b = n while n T p <= 1e9:
		 * whole-data steps, no sampling in the event. */
		pdim = (double)spec.dim;
		t = fmin(fmax(ceil(rho * N_TRAIN * N_TRAIN / (8.0 * pdim)), 3.0), 300.0);
		b = N_TRAIN;
		ck_assert_double_eq(run_plan_value(&p, "batch_size"), b);
		ck_assert_uint_eq(p.steps, (unsigned long)t);
		ck_assert_int_eq(p.event.node[0].type, DP_EVENT_SELF_COMPOSED);
		ck_assert_uint_eq(p.event.node[0].count, p.steps);
		ck_assert_int_eq(p.event.node[1].type, DP_EVENT_GAUSSIAN);
		/* z = sigma b / (2 C), the replace-one multiplier, C the clip:
		 * for logistic |phi'(0)| = 1/2, so C = X/2 (no intercept here). */
		ck_assert_double_eq_tol(run_plan_value(&p, "clip"), 0.5, 1e-12);
		ck_assert_double_eq_tol(p.event.node[1].noise_multiplier,
					run_plan_value(&p, "noise_sigma") * b /
						(2.0 * run_plan_value(&p, "clip")),
					1e-5 * p.event.node[1].noise_multiplier);
		ck_assert(accountant_epsilon(&p.event, spec.mode, 1e-5, NULL, true, &rep, &e) ==
			  ERR_OK);
		ck_assert(rep.epsilon <= 1.0 && rep.epsilon > 0.99);
		/* A composition of Gaussians: the basic accountant's exact curve,
		 * the RDP conversion on renyi datasets; the plan says which. */
		ck_assert_str_eq(p.accountant, mode == 0 ? "analytic_gaussian" : "rdp");
		printf("subsampled plan (%s): b = %.0f, T = %lu, z = %.4f, step = %.4g, eps = "
		       "%.5f\n",
		       mode == 0 ? "basic" : "renyi", b, p.steps,
		       run_plan_value(&p, "noise_multiplier"), run_plan_value(&p, "step_size"),
		       rep.epsilon);
	}

	/* Past the work bound (n T p > 1e9) the steps sample: b =
	 * max(ceil(1e9 / (T p)), ceil(sqrt n)), the event
	 * self_composed(sampled_without_replacement(n, b, gaussian(z)), T). */
	spec_init(&spec, "logistic", TASK_BINARY);
	spec.n = 1000000;
	ck_assert_msg(alg_plan(sub(), &spec, &p, &e) == ERR_OK, "%s", e.msg);
	pdim = (double)spec.dim;
	b = ceil(1e9 / (300.0 * pdim));
	ck_assert_uint_eq(p.steps, 300);
	ck_assert_double_eq(run_plan_value(&p, "batch_size"), b);
	ck_assert_int_eq(p.event.node[0].type, DP_EVENT_SELF_COMPOSED);
	ck_assert_int_eq(p.event.node[1].type, DP_EVENT_SAMPLED_WOR);
	ck_assert_uint_eq(p.event.node[1].n, 1000000);
	ck_assert_uint_eq(p.event.node[1].batch, (uint64_t)b);
	ck_assert_int_eq(p.event.node[2].type, DP_EVENT_GAUSSIAN);
	/* the sampled event on a basic dataset: the PLD (tighter than the RDP
	 * conversion, which a renyi dataset uses) */
	ck_assert_str_eq(p.accountant, spec.mode == ACCOUNTING_BASIC ? "pld" : "rdp");
	printf("subsampled plan (n = 10^6): b = %.0f, T = %lu, z = %.4f\n", b, p.steps,
	       run_plan_value(&p, "noise_multiplier"));

	/* Few records at a small epsilon: the floor of 3 steps. */
	spec_init(&spec, "logistic", TASK_BINARY);
	spec.n = 200;
	spec.epsilon = 0.5;
	ck_assert_msg(alg_plan(sub(), &spec, &p, &e) == ERR_OK, "%s", e.msg);
	ck_assert_uint_eq(p.steps, 3);
	ck_assert_double_eq(run_plan_value(&p, "batch_size"), 200.0);

	/* params.clip is the sensitivity's input (at most G); the old rule
	 * still holds when epochs are given. */
	spec_init(&spec, "logistic", TASK_BINARY);
	spec.params[param_index("clip")] = 0.25;
	spec.params[param_index("epochs")] = 5.0;
	ck_assert_msg(alg_plan(sub(), &spec, &p, &e) == ERR_OK, "%s", e.msg);
	ck_assert_double_eq(run_plan_value(&p, "clip"), 0.25);
	ck_assert_double_eq_tol(run_plan_value(&p, "sensitivity"),
				2.0 * 0.25 / run_plan_value(&p, "batch_size"), 1e-15);
	b = fmax(ceil(sqrt((double)N_TRAIN)), ceil(N_TRAIN * rho / 5.0));
	ck_assert_double_eq(run_plan_value(&p, "batch_size"), b);
	ck_assert_uint_eq(p.steps, (unsigned long)ceil(5.0 * N_TRAIN / b));
	spec.params[param_index("clip")] = 1e3;
	ck_assert_msg(alg_plan(sub(), &spec, &p, &e) == ERR_OK, "%s", e.msg);
	ck_assert_double_eq(run_plan_value(&p, "clip"), run_plan_value(&p, "grad_bound"));

	/* With an intercept: its feature c = X max(1/sqrt(d), 0.1), the clip
	 * C = sqrt(X^2 + c^2)/2, and a given clip above the bound in the
	 * training coordinates, G sqrt((X^2 + c^2) / (X^2 + 1)), is cut to it. */
	{
		struct objective_params op;

		spec_init(&spec, "logistic", TASK_BINARY);
		objective_params_default(&op);
		op.intercept = true;
		ck_assert_int_eq(
			run_spec_set_objective(&spec, objective_find("logistic"), &op, NULL),
			ERR_OK);
		ck_assert_msg(alg_plan(sub(), &spec, &p, &e) == ERR_OK, "%s", e.msg);
		ck_assert_double_eq_tol(run_plan_value(&p, "intercept_scale"),
					1.0 / sqrt((double)D), 1e-12);
		ck_assert_double_eq_tol(run_plan_value(&p, "clip"), 0.5 * sqrt(1.0 + 1.0 / D),
					1e-12);
		ck_assert_double_eq_tol(run_plan_value(&p, "grad_bound"), sqrt(2.0), 1e-12);
		spec.params[param_index("clip")] = 1e3;
		ck_assert_msg(alg_plan(sub(), &spec, &p, &e) == ERR_OK, "%s", e.msg);
		ck_assert_double_eq_tol(run_plan_value(&p, "clip"), sqrt(1.0 + 1.0 / D), 1e-12);
	}

	/* A small epsilon needs high Renyi orders: the calibration's grid
	 * must keep them (it once stopped at 64 and refused eps = 0.05). */
	spec_init(&spec, "logistic", TASK_BINARY);
	spec.epsilon = 0.05;
	spec.params[param_index("batch_size")] = 100;
	ck_assert_msg(alg_plan(sub(), &spec, &p, &e) == ERR_OK, "eps 0.05: %s", e.msg);
	ck_assert(accountant_epsilon(&p.event, ACCOUNTING_RENYI, 1e-5, NULL, true, &rep, &e) ==
		  ERR_OK);
	ck_assert(rep.epsilon <= 0.05 && rep.epsilon > 0.04);

	/* Shuffled epochs: self_composed(gaussian(z), E), E K steps. */
	spec_init(&spec, "logistic", TASK_BINARY);
	spec.params[param_index("shuffle")] = 1;
	spec.params[param_index("epochs")] = 3;
	spec.params[param_index("batch_size")] = 100;
	ck_assert_msg(alg_plan(sub(), &spec, &p, &e) == ERR_OK, "%s", e.msg);
	ck_assert_uint_eq(p.steps, 3 * (N_TRAIN / 100));
	ck_assert_int_eq(p.event.node[0].type, DP_EVENT_SELF_COMPOSED);
	ck_assert_uint_eq(p.event.node[0].count, 3);
	ck_assert_int_eq(p.event.node[1].type, DP_EVENT_GAUSSIAN);
	ck_assert_uint_eq(p.event.n_nodes, 2);
	/* Plain Gaussians on a basic dataset: the exact curve; renyi: RDP. */
	ck_assert_str_eq(p.accountant, "analytic_gaussian");
	spec.mode = ACCOUNTING_RENYI;
	ck_assert_msg(alg_plan(sub(), &spec, &p, &e) == ERR_OK, "%s", e.msg);
	ck_assert_str_eq(p.accountant, "rdp");

	/* steps overrides the epochs rule; contradictions are refused. */
	spec_init(&spec, "logistic", TASK_BINARY);
	spec.params[param_index("steps")] = 123;
	ck_assert(alg_plan(sub(), &spec, &p, &e) == ERR_OK);
	ck_assert_uint_eq(p.steps, 123);
	spec.params[param_index("epochs")] = 2;
	ck_assert_int_eq(alg_plan(sub(), &spec, &p, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.steps");
	spec_init(&spec, "logistic", TASK_BINARY);
	spec.params[param_index("shuffle")] = 1;
	spec.params[param_index("epochs")] = 2.5;
	ck_assert_int_eq(alg_plan(sub(), &spec, &p, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.epochs");
}
END_TEST

/*
 * The clip is applied, not only planned: one whole-data step of size 1
 * from 0 with clip C = 1e-4 moves the model by at most C plus the noise
 * (|x_1| <= C + 6 sigma sqrt(p)); unclipped, the mean logistic gradient of
 * these rows is about 0.2.  Least squares the same, with its gradient
 * clipped from |y| ||x|| (up to 3) to C.
 */
START_TEST(test_clip_applied)
{
	for (int k = 0; k < 2; k++) {
		enum task task = k == 0 ? TASK_BINARY : TASK_REGRESSION;
		struct run_spec spec;
		struct run_plan plan;
		struct planted_split tr, te;
		struct err e = { 0 };
		struct rng r;
		double w[D], nw = 0.0, sigma, bound;

		spec_init(&spec, k == 0 ? "logistic" : "least_squares", task);
		spec.params[param_index("clip")] = 1e-4;
		spec.params[param_index("steps")] = 1;
		spec.params[param_index("step_size")] = 1.0;
		spec.params[param_index("average")] = 0;
		planted_glm(&tr, &te, N_TRAIN, N_TEST, D, task == TASK_REGRESSION, 3.5,
			    77 + (uint64_t)k);
		ck_assert_msg(alg_plan(sub(), &spec, &plan, &e) == ERR_OK, "plan: %s", e.msg);
		ck_assert_double_eq(run_plan_value(&plan, "clip"), 1e-4);
		rng_splitmix_init(&r, 5 + (uint64_t)k);
		ck_assert_msg(alg_run(sub(), &spec, &plan, &tr.ds, &r, NULL, NULL, w, &e) == ERR_OK,
			      "run: %s", e.msg);
		for (int j = 0; j < D; j++)
			nw += w[j] * w[j];
		sigma = run_plan_value(&plan, "noise_sigma");
		bound = 1e-4 + 6.0 * sigma * sqrt((double)D);
		printf("clip 1e-4 (%s): |x_1| = %.3g, bound %.3g (sigma %.3g)\n",
		       k == 0 ? "logistic" : "least squares", sqrt(nw), bound, sigma);
		ck_assert_msg(sqrt(nw) <= bound, "|x_1| = %g > %g", sqrt(nw), bound);
		planted_split_clear(&tr);
		planted_split_clear(&te);
	}
}
END_TEST

static Suite *
sub_suite(void)
{
	Suite *s = suite_create("dp_sgd_subsampled");
	TCase *u = tcase_create("utility");

	tcase_set_timeout(u, 600);
	tcase_add_test(u, test_plan);
	tcase_add_test(u, test_plan_must_match_spec);
	tcase_add_test(u, test_clip_applied);
	tcase_add_test(u, test_logistic_utility);
	tcase_add_test(u, test_least_squares_utility);
	suite_add_tcase(s, u);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sub_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
