/*
 * test_worst_group_benefit.c - what a private saddle-point method buys
 * (issue 13's evidence): on data where a minority group (public
 * proportion 0.2) follows a different model, saddle.smd_maurey on
 * worst_group_logistic reaches a lower worst-group population loss than
 * mirror_descent.noisy minimising the plain average logistic loss, at the
 * same (epsilon, delta) = (2, 1e-6), n = 2e4, d = 20, both at their
 * defaults over the l1 ball of radius 2 (one-sided paired t-test over 20
 * seeds at level 0.01).
 *
 * Data: features uniform on {-1, +1}^d; group 1 with probability 0.2;
 * labels +1 with probability sigmoid(<w_g, a>), w_0 = 1.5 e_1 + e_2,
 * w_1 = -1.5 e_1 + e_2 (the groups disagree on feature 1, share feature
 * 2).  The average-loss minimiser follows group 0 (80 % of the rows) and
 * is worse than chance on group 1; the worst-group minimiser keeps feature
 * 2 and sets feature 1 near 0.  Population losses on 20,000 fresh rows per
 * group.
 *
 * Measured (2026-11-27): worst-group loss 0.6916 (smd_maurey) against
 * 0.8721 (noisy), t = 119; the zero model scores 0.6931 and w = e_2
 * 0.6618.  So at this size the private saddle method learns little
 * beyond not sacrificing the minority: its defaults (T = 1257, K = 17),
 * K = 1 and T in {300, 1257, 5000} all gave 0.687 to 0.697 (the scores
 * move by tau L_0 per step with L_0 = log(1 + e^2) / 0.2 = 10.6, the
 * y block's bound under the 1/p_min weights).  With the y player's
 * ascent broken (it descends) the figure is the same, 0.6916: at this
 * size the test shows the worst-group objective does not hurt the
 * minority, not that the y player works (test_smd_maurey.c's rate test
 * catches the broken ascent).  At n = 2e5 (90 s of CPU, not run here)
 * smd_maurey reached 0.6834 against the zero model's 0.6931.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "objective.h"
#include "rng.h"
#include "saddle.h"

#define D      20
#define N      20000
#define N_EVAL 20000
#define SEEDS  20
#define P1     0.2

struct data {
	double *x, *y;
	uint32_t *g;
	struct dataset ds;
};

static double
sigmoid(double t)
{
	return 1.0 / (1.0 + exp(-t));
}

static double
log1pexp(double t)
{
	return t > 0.0 ? t + log1p(exp(-t)) : log1p(exp(t));
}

/* n rows; group forced to `group` (0 or 1) or drawn (-1). */
static void
make(struct data *dt, size_t n, int group, uint64_t seed)
{
	struct rng r;

	dt->x = calloc(n * D, sizeof(double));
	dt->y = calloc(n, sizeof(double));
	dt->g = calloc(n, sizeof(uint32_t));
	ck_assert(dt->x != NULL && dt->y != NULL && dt->g != NULL);
	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < n; i++) {
		double z;
		uint32_t k = group >= 0 ? (uint32_t)group : rng_uniform(&r) < P1 ? 1u : 0u;

		for (size_t j = 0; j < D; j++)
			dt->x[i * D + j] = rng_uniform(&r) < 0.5 ? -1.0 : 1.0;
		z = (k == 0 ? 1.5 : -1.5) * dt->x[i * D] + 1.0 * dt->x[i * D + 1];
		dt->y[i] = rng_uniform(&r) < sigmoid(z) ? 1.0 : -1.0;
		dt->g[i] = k;
	}
	memset(&dt->ds, 0, sizeof(dt->ds));
	dt->ds.n = n;
	dt->ds.d = D;
	dt->ds.x = dt->x;
	dt->ds.y = dt->y;
	dt->ds.group = dt->g;
	dt->ds.n_groups = 2;
}

static void
release(struct data *dt)
{
	free(dt->x);
	free(dt->y);
	free(dt->g);
}

static double
mean_loss(const struct data *dt, const double *w)
{
	double s = 0.0;

	for (size_t i = 0; i < dt->ds.n; i++) {
		double z = 0.0;

		for (size_t j = 0; j < D; j++)
			z += dt->x[i * D + j] * w[j];
		s += log1pexp(-dt->y[i] * z);
	}
	return s / (double)dt->ds.n;
}

static void
base_spec(struct run_spec *s, struct data_schema *sch, const struct alg_ops *a)
{
	memset(s, 0, sizeof(*s));
	memset(sch, 0, sizeof(*sch));
	sch->d = D;
	sch->task = TASK_BINARY;
	sch->n_groups = 2;
	sch->bounds = (struct bounds){ 1.0, NAN, NAN, NAN, NAN };
	s->schema = *sch;
	s->n = N;
	s->x = (struct constraint){ .kind = CONSTRAINT_L1_BALL, .radius = 2.0 };
	s->geometry_x = GEOMETRY_L1;
	s->epsilon = 2.0;
	s->delta = 1e-6;
	s->mode = ACCOUNTING_BASIC;
	alg_default_params(a, s->params);
}

/* The model x of one run of name on dt. */
static void
fit(const char *name, const struct data *dt, uint64_t seed, double *w)
{
	const struct alg_ops *a = alg_find(name);
	struct run_spec s;
	struct data_schema sch;
	struct objective_params op;
	struct run_plan plan;
	struct err e = { 0 };
	struct rng r;
	double u[D + 2];
	bool saddle = strcmp(name, "saddle.smd_maurey") == 0;

	ck_assert_ptr_nonnull(a);
	base_spec(&s, &sch, a);
	objective_params_default(&op);
	if (saddle) {
		op.n_group_proportions = 2;
		op.group_proportions[0] = 1.0 - P1;
		op.group_proportions[1] = P1;
	}
	ck_assert_msg(run_spec_set_objective(
			      &s, objective_find(saddle ? "worst_group_logistic" : "logistic"), &op,
			      &e) == ERR_OK,
		      "%s", e.msg);
	if (saddle) {
		s.has_y = true;
		s.y = (struct constraint){ .kind = CONSTRAINT_SIMPLEX, .radius = 1.0 };
		s.geometry_y = GEOMETRY_L1;
	}
	ck_assert_msg(alg_plan(a, &s, &plan, &e) == ERR_OK, "%s: %s", name, e.msg);
	rng_splitmix_init(&r, seed);
	ck_assert_msg(alg_run(a, &s, &plan, &dt->ds, &r, NULL, NULL, u, &e) == ERR_OK, "%s: %s",
		      name, e.msg);
	memcpy(w, u, D * sizeof(double));
}

START_TEST(test_worst_group_benefit)
{
	struct data pop[2];
	double diff[SEEDS], mean = 0.0, var = 0.0, t, ws = 0.0, wn = 0.0;

	make(&pop[0], N_EVAL, 0, 0xabcdef01u);
	make(&pop[1], N_EVAL, 1, 0xabcdef02u);
	for (int k = 0; k < SEEDS; k++) {
		struct data dt;
		double w_s[D], w_n[D], worst_s, worst_n;

		make(&dt, N, -1, 1000u + (uint64_t)k);
		fit("saddle.smd_maurey", &dt, 77u + (uint64_t)k, w_s);
		fit("mirror_descent.noisy", &dt, 77u + (uint64_t)k, w_n);
		worst_s = fmax(mean_loss(&pop[0], w_s), mean_loss(&pop[1], w_s));
		worst_n = fmax(mean_loss(&pop[0], w_n), mean_loss(&pop[1], w_n));
		diff[k] = worst_n - worst_s;
		ws += worst_s;
		wn += worst_n;
		release(&dt);
	}
	for (int k = 0; k < SEEDS; k++)
		mean += diff[k] / SEEDS;
	for (int k = 0; k < SEEDS; k++)
		var += (diff[k] - mean) * (diff[k] - mean) / (SEEDS - 1);
	t = mean / sqrt(var / SEEDS);
	{
		double w0[D] = { 0 }, wb[D] = { 0 };

		wb[1] = 1.0; /* the shared feature only: near the worst-group optimum */
		printf("worst-group population loss over %d seeds: saddle.smd_maurey %.4f, "
		       "mirror_descent.noisy (average loss) %.4f; paired t = %.2f; the zero model "
		       "%.4f, w = e_2 %.4f\n",
		       SEEDS, ws / SEEDS, wn / SEEDS, t,
		       fmax(mean_loss(&pop[0], w0), mean_loss(&pop[1], w0)),
		       fmax(mean_loss(&pop[0], wb), mean_loss(&pop[1], wb)));
	}
	/* One-sided paired t-test, 19 degrees of freedom, level 0.01. */
	ck_assert_msg(t > 2.539, "no worst-group benefit: t = %.2f", t);
	release(&pop[0]);
	release(&pop[1]);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("worst_group_benefit");
	TCase *c = tcase_create("benefit");
	SRunner *sr;
	int failed;

	tcase_set_timeout(c, 600);
	tcase_add_test(c, test_worst_group_benefit);
	suite_add_tcase(s, c);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
