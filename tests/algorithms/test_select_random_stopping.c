/*
 * test_select_random_stopping.c - method-specific tests of
 * select.random_stopping (algorithms/select/random_stopping.c).
 *
 * Selection quality.  Synthetic least squares (rows x ~ N(0, I/d) clipped
 * to ||x||_2 <= 1, a planted model of norm 3.5, labels <w, x> + N(0, 0.5^2)
 * clipped to |y| <= 3), n = 10,000, d = 10, (eps, delta) = (1, 1e-5), an l2
 * ball of radius 4 and a user's wide grid of step sizes [1e-4, 10] (5
 * candidates; on logistic data every candidate had the same accuracy, as
 * accuracy does not see the model's scale, so nothing could fail there).
 * For each of SEEDS = 20 seeds: the test MSE (5,000 fresh rows) of the
 * released model, and the test MSEs of every candidate of its grid
 * (dp_sgd.subsampled at the run's own noise multiplier and each grid step
 * size, trained on n_train rows, no selection).  The selected model must
 * be better than the median candidate: the one-sided paired t-test of
 * (median MSE - selected MSE) must be positive at level 0.01 (t > 2.539,
 * 19 degrees of freedom).  Measured: mean +0.40, t = 7.9; selecting the
 * worst-scoring repetition instead gives mean -0.30, t = -7.3 (fails).
 *
 * Plumbing: the plan's event (selection_poisson or selection_tnb with its
 * k_max, over parallel(training, score)) meets the target on both
 * accountants; the step count is k_max (T + 1), whatever K is; init()
 * refuses a stored plan that is not the one derived again; refusals by
 * field.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "objective.h"
#include "planted_glm.h"
#include "privacy/accountant.h"
#include "sgd/subsampled.h"

#define N_TRAIN 10000
#define N_TEST  5000
#define D       10
#define SEEDS   20

static const struct alg_ops *
sel(void)
{
	const struct alg_ops *a = alg_find("select.random_stopping");

	ck_assert(a != NULL);
	return a;
}

static void
spec_task(struct run_spec *s, const struct alg_ops *a, size_t n, bool regression)
{
	memset(s, 0, sizeof(*s));
	s->x.kind = CONSTRAINT_L2_BALL;
	s->x.radius = 10.0;
	s->epsilon = 1.0;
	s->delta = 1e-5;
	alg_default_params(a, s->params);
	s->n = n;
	s->schema.d = D;
	s->schema.task = regression ? TASK_REGRESSION : TASK_BINARY;
	if (regression)
		s->x.radius = 4.0; /* the planted model's norm is 3.5 */
	s->schema.bounds.feature_l2 = 1.0;
	s->schema.bounds.feature_linf = NAN;
	s->schema.bounds.label = regression ? 3.0 : NAN;
	s->schema.bounds.label_lo = s->schema.bounds.label_hi = NAN;
	ck_assert_int_eq(
		run_spec_set_objective(s, objective_find(regression ? "least_squares" : "logistic"),
				       NULL, NULL),
		ERR_OK);
}

static void
spec_init(struct run_spec *s, const struct alg_ops *a, size_t n)
{
	spec_task(s, a, n, false);
}

/* Test mean squared error of w (no intercept). */
static double
test_mse(const struct dataset *ds, const double *w)
{
	double sum = 0.0;

	for (size_t i = 0; i < ds->n; i++) {
		double z = 0.0;

		for (size_t j = 0; j < ds->d; j++)
			z += ds->x[i * ds->d + j] * w[j];
		sum += (z - ds->y[i]) * (z - ds->y[i]);
	}
	return sum / (double)ds->n;
}

static void
plan_of(const struct run_spec *s, struct run_plan *p)
{
	struct err e = { 0 };

	ck_assert_msg(alg_plan(sel(), s, p, &e) == ERR_OK, "plan: %s (%s)", e.msg, e.field);
}

START_TEST(test_not_worse_than_median_candidate)
{
	const struct alg_ops *base = alg_find("dp_sgd.subsampled");
	double diff[SEEDS], mean = 0.0, var = 0.0, t;

	ck_assert(base != NULL);
	for (int k = 0; k < SEEDS; k++) {
		struct planted_split tr, te;
		struct run_spec s, bs;
		struct run_plan p;
		struct rng r;
		struct err e = { 0 };
		double w[D], acc[64], chosen;
		unsigned g;
		size_t n_train;

		planted_glm(&tr, &te, N_TRAIN, N_TEST, D, true, 3.5, 0x5e1ec7u + (uint64_t)k);
		spec_task(&s, sel(), N_TRAIN, true);
		s.params[3] = 1e-4; /* a user's wide grid: step_size_min */
		s.params[4] = 10.0; /* step_size_max */
		s.params[5] = 5.0;  /* grid_size */
		s.params[10] = 1.0; /* clip_grid_size: the default clip only */
		plan_of(&s, &p);
		rng_splitmix_init(&r, 0xabcdef12u + (uint64_t)k);
		ck_assert_msg(alg_run(sel(), &s, &p, &tr.ds, &r, NULL, NULL, w, &e) == ERR_OK,
			      "run: %s", e.msg);
		chosen = test_mse(&te.ds, w);
		/* The grid's candidates, each trained once at the run's z. */
		g = (unsigned)run_plan_value(&p, "grid_size");
		n_train = (size_t)run_plan_value(&p, "training_rows");
		ck_assert(g >= 3 && g <= 64);
		spec_task(&bs, base, n_train, true);
		for (unsigned j = 0; j < g; j++) {
			double lo = run_plan_value(&p, "step_size_min");
			double hi = run_plan_value(&p, "step_size_max");
			struct run_plan bp;
			struct dataset part = tr.ds;

			part.n = n_train;
			bs.params[3] =
				lo * pow(hi / lo, (double)j / (double)(g - 1)); /* step_size */
			ck_assert_int_eq(subsampled_plan_at(&bs,
							    run_plan_value(&p, "noise_multiplier"),
							    &bp, &e),
					 ERR_OK);
			ck_assert_msg(alg_run(base, &bs, &bp, &part, &r, NULL, NULL, w, &e) ==
					      ERR_OK,
				      "candidate: %s", e.msg);
			acc[j] = test_mse(&te.ds, w);
		}
		/* median of g values */
		for (unsigned a = 0; a < g; a++)
			for (unsigned b = a + 1; b < g; b++)
				if (acc[b] < acc[a]) {
					double tmp = acc[a];

					acc[a] = acc[b];
					acc[b] = tmp;
				}
		diff[k] = (g % 2 ? acc[g / 2] : 0.5 * (acc[g / 2 - 1] + acc[g / 2])) - chosen;
		printf("seed %d: selected MSE %.4f, candidates %.4f .. %.4f, median - selected "
		       "%+.4f\n",
		       k, chosen, acc[0], acc[g - 1], diff[k]);
		planted_split_clear(&tr);
		planted_split_clear(&te);
	}
	for (int k = 0; k < SEEDS; k++)
		mean += diff[k] / SEEDS;
	for (int k = 0; k < SEEDS; k++)
		var += (diff[k] - mean) * (diff[k] - mean) / (SEEDS - 1);
	t = mean / sqrt(var / SEEDS);
	printf("median candidate MSE - selected MSE: mean %+.4f, t = %.2f (need > 2.539)\n", mean,
	       t);
	ck_assert_msg(t > 2.539, "selected worse than the median candidate: mean %+.4f, t %.2f",
		      mean, t);
}
END_TEST

/*
 * params.grid over dp_sgd.subsampled's steps and clip: 4 candidates, two
 * step counts (5 and 20), so two distinct events under one mixture; every
 * repetition takes T_max + 1 = 21 driver steps whatever candidate it
 * draws (the shorter one idles), the progress counter reaches the plan's
 * step count, and the released model is one of the candidates' and beats
 * the trivial accuracy.
 */
static unsigned long grid_progress;

static bool
grid_progress_cb(void *ctx, unsigned long done, unsigned long total)
{
	(void)ctx;
	(void)total;
	grid_progress = done;
	return true;
}

START_TEST(test_grid_candidates)
{
	const struct alg_ops *base = alg_find("dp_sgd.subsampled");
	struct planted_split tr, te;
	struct run_spec s;
	struct run_plan p;
	struct rng r;
	struct err e = { 0 };
	double w[D], acc = 0.0;
	unsigned steps_k = 0, clip_k = 0;

	for (unsigned k = 0; base->params[k].name != NULL; k++) {
		if (strcmp(base->params[k].name, "steps") == 0)
			steps_k = k;
		if (strcmp(base->params[k].name, "clip") == 0)
			clip_k = k;
	}
	planted_glm(&tr, &te, N_TRAIN, N_TEST, D, false, 8.0, 0x6121du);
	spec_init(&s, sel(), N_TRAIN);
	s.grid.n_dims = 2;
	s.grid.dim[0] = (struct alg_grid_dim){ .param = steps_k, .n = 2, .value = { 5, 20 } };
	s.grid.dim[1] = (struct alg_grid_dim){ .param = clip_k, .n = 2, .value = { 0.5, 0.125 } };
	plan_of(&s, &p);
	ck_assert(run_plan_value(&p, "candidates") == 4.0);
	ck_assert(run_plan_value(&p, "candidate_events") == 2.0);
	ck_assert(run_plan_value(&p, "steps_per_repetition") == 20.0);
	ck_assert_uint_eq(p.steps, (unsigned long)run_plan_value(&p, "repetitions_performed") * 21);
	ck_assert_int_eq(p.event.node[2].type, DP_EVENT_MIXTURE);
	{
		/* Each candidate at its own z: whole-data steps here, so the
		 * 5-step one has z sqrt(5/20) and both curves are the same. */
		const struct dp_event *m = &p.event.node[2];
		const struct dp_event *c0 = &p.event.node[m->first_child];
		const struct dp_event *c1 = &p.event.node[m->first_child + 1];
		double z0 = p.event.node[c0->first_child].noise_multiplier;
		double z1 = p.event.node[c1->first_child].noise_multiplier;

		ck_assert_uint_eq(c0->count, 5);
		ck_assert_uint_eq(c1->count, 20);
		ck_assert_double_eq_tol(z0 / z1, 0.5, 1e-12);
		ck_assert_double_eq(z1, run_plan_value(&p, "noise_multiplier"));
	}
	rng_splitmix_init(&r, 0x77u);
	grid_progress = 0;
	ck_assert_msg(alg_run(sel(), &s, &p, &tr.ds, &r, grid_progress_cb, NULL, w, &e) == ERR_OK,
		      "run: %s", e.msg);
	ck_assert_uint_eq(grid_progress, p.steps);
	for (size_t i = 0; i < te.ds.n; i++) {
		double z = 0.0;

		for (int j = 0; j < D; j++)
			z += te.ds.x[i * D + j] * w[j];
		acc += ((z > 0.0) == (te.ds.y[i] > 0.0)) / (double)te.ds.n;
	}
	printf("grid over steps x clip: test accuracy %.4f\n", acc);
	ck_assert(acc > 0.6);
	planted_split_clear(&tr);
	planted_split_clear(&te);
}
END_TEST

START_TEST(test_plan_event_and_steps)
{
	struct run_spec s;
	struct run_plan p;
	struct err e = { 0 };

	for (int mode = 0; mode < 2; mode++) {
		const struct dp_event *root;
		struct accountant_report rep = { 0 };
		double k_max, t;

		spec_init(&s, sel(), 5000);
		s.mode = mode == 0 ? ACCOUNTING_RENYI : ACCOUNTING_BASIC;
		plan_of(&s, &p);
		root = &p.event.node[0];
		ck_assert(root->type == DP_EVENT_SELECTION_POISSON ||
			  root->type == DP_EVENT_SELECTION_TNB);
		ck_assert(root->k_max >= 2);
		ck_assert(p.event.node[root->first_child].type == DP_EVENT_PARALLEL);
		k_max = run_plan_value(&p, "repetitions_performed");
		t = run_plan_value(&p, "steps_per_repetition");
		ck_assert(k_max == (double)root->k_max);
		ck_assert(p.steps == (unsigned long)(k_max * (t + 1.0)));
		ck_assert(run_plan_value(&p, "validation_rows") == 1000.0);
		ck_assert_msg(accountant_epsilon(&p.event, s.mode, s.delta, NULL, true, &rep, &e) ==
				      ERR_OK,
			      "%s", e.msg);
		ck_assert_msg(rep.epsilon <= s.epsilon, "eps %.17g", rep.epsilon);
		ck_assert_msg(rep.epsilon >= 0.99 * s.epsilon, "eps %.17g (loose)", rep.epsilon);
	}
	/* Explicit distributions give their event types. */
	spec_init(&s, sel(), 5000);
	s.params[1] = 2; /* distribution: geometric */
	plan_of(&s, &p);
	ck_assert(p.event.node[0].type == DP_EVENT_SELECTION_TNB && p.event.node[0].eta == 1.0);
	s.params[1] = 1;
	plan_of(&s, &p);
	ck_assert(p.event.node[0].type == DP_EVENT_SELECTION_POISSON);
}
END_TEST

START_TEST(test_stored_plan_checked)
{
	struct planted_split tr, te;
	struct run_spec s;
	struct run_plan p;
	struct rng r;
	struct err e = { 0 };
	double w[D];

	planted_glm(&tr, &te, N_TRAIN, N_TEST, D, false, 8.0, 7);
	spec_init(&s, sel(), N_TRAIN);
	s.params[5] = 3; /* grid_size */
	plan_of(&s, &p);
	for (size_t i = 0; i < p.n_used; i++)
		if (strcmp(p.used[i].name, "noise_multiplier") == 0)
			p.used[i].value *= 0.9;
	rng_splitmix_init(&r, 1);
	ck_assert_int_eq(alg_run(sel(), &s, &p, &tr.ds, &r, NULL, NULL, w, &e), ERR_INTERNAL);
	plan_of(&s, &p);
	p.event.node[0].k_max -= 1;
	ck_assert_int_eq(alg_run(sel(), &s, &p, &tr.ds, &r, NULL, NULL, w, &e), ERR_INTERNAL);
	planted_split_clear(&tr);
	planted_split_clear(&te);
}
END_TEST

START_TEST(test_refusals)
{
	struct run_spec s;
	struct run_plan p;
	struct err e = { 0 };

	spec_init(&s, sel(), 3);
	ck_assert_int_eq(alg_plan(sel(), &s, &p, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.validation_fraction");
	spec_init(&s, sel(), 5000);
	s.params[3] = 0.1; /* step_size_min without step_size_max */
	ck_assert_int_eq(alg_plan(sel(), &s, &p, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.step_size_min");
	spec_init(&s, sel(), 5000);
	s.params[0] = 1.0; /* mean 1 with the geometric law */
	s.params[1] = 2;
	ck_assert_int_eq(alg_plan(sel(), &s, &p, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.mean_repetitions");
	spec_init(&s, sel(), 5000);
	s.params[6] = 4500; /* batch_size above the training part */
	ck_assert_int_eq(alg_plan(sel(), &s, &p, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.batch_size");
}
END_TEST

static Suite *
select_suite(void)
{
	Suite *s = suite_create("select_random_stopping");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_not_worse_than_median_candidate);
	tcase_add_test(tc, test_plan_event_and_steps);
	tcase_add_test(tc, test_grid_candidates);
	tcase_add_test(tc, test_stored_plan_checked);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(select_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
