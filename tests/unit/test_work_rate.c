/*
 * test_work_rate.c - the start-up speed benchmark (service/work_rate.h):
 * a finite positive rate, measured in well under a second of CPU time,
 * and one that predicts a real run: the CPU time of a dp_sgd.one_pass run
 * of another shape stays within a factor of the estimate work / rate that
 * the run timeout's margin covers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "alg.h"
#include "objective.h"
#include "work_rate.h"

static double
cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* DPOPT_TEST_TIMEOUT_SCALE (scripts/test, meson's test setup), or 1. */
static double
timeout_scale(void)
{
	const char *v = getenv("DPOPT_TEST_TIMEOUT_SCALE");
	double s = v != NULL ? strtod(v, NULL) : 1.0;

	return isfinite(s) && s >= 1.0 ? s : 1.0;
}

START_TEST(test_rate_is_measured_quickly)
{
	struct err e = { 0 };
	double rate = 0.0, wall = 0.0, c0 = cpu_seconds(), cpu;

	ck_assert_int_eq(work_rate_measure(&rate, &wall, &e), ERR_OK);
	cpu = cpu_seconds() - c0;
	ck_assert_msg(isfinite(rate) && rate > 1e3, "rate %g", rate);
	ck_assert_msg(wall >= 0.0 && isfinite(wall), "wall %g", wall);
	/* "Well under a second" on an idle core: the bound is 2 s of CPU,
	 * times the sanitizer scale (DPOPT_TEST_TIMEOUT_SCALE, 10 under
	 * ASan+UBSan, which made the same code take 2.2 s once every method
	 * was timed). */
	ck_assert_msg(cpu < 2.0 * timeout_scale(),
		      "the benchmark took %.3f s of CPU (bound %.1f s)", cpu,
		      2.0 * timeout_scale());
}
END_TEST

/* A run of a shape the benchmark does not use (d = 200, 5000 rows) takes
 * at most 3x the CPU time work / rate predicts: the default margin (10)
 * leaves room for a loaded machine on top. */
START_TEST(test_rate_predicts_a_run)
{
	const struct alg_ops *alg = alg_find("dp_sgd.one_pass");
	size_t n = 5000, d = 200;
	double *x = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
	double *w = calloc(d, sizeof(double)), rate = 0.0, wall, best = INFINITY;
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds = { 0 };
	struct rng r;
	struct err e = { 0 };

	ck_assert_ptr_nonnull(alg);
	ck_assert(x != NULL && y != NULL && w != NULL);
	rng_splitmix_init(&r, 7);
	for (size_t i = 0; i < n * d; i++)
		x[i] = (2.0 * rng_uniform(&r) - 1.0) / sqrt((double)d);
	for (size_t i = 0; i < n; i++)
		y[i] = rng_uniform(&r) < 0.5 ? -1.0 : 1.0;
	ds.n = n;
	ds.d = d;
	ds.x = x;
	ds.y = y;
	memset(&spec, 0, sizeof(spec));
	spec.x.kind = CONSTRAINT_L2_BALL;
	spec.x.radius = 5.0;
	spec.epsilon = 1.0;
	spec.delta = 1e-6;
	alg_default_params(alg, spec.params);
	spec.n = n;
	spec.schema.d = d;
	spec.schema.task = TASK_BINARY;
	spec.schema.bounds.feature_l2 = 1.0;
	spec.schema.bounds.feature_linf = NAN;
	spec.schema.bounds.label = NAN;
	spec.schema.bounds.label_lo = NAN;
	spec.schema.bounds.label_hi = NAN;
	ck_assert_int_eq(run_spec_set_objective(&spec, objective_find("logistic"), NULL, &e),
			 ERR_OK);
	ck_assert_int_eq(alg_plan(alg, &spec, &plan, &e), ERR_OK);
	ck_assert_int_eq(work_rate_measure(&rate, &wall, &e), ERR_OK);
	for (int rep = 0; rep < 3; rep++) {
		double c0 = cpu_seconds();

		ck_assert_int_eq(alg_run(alg, &spec, &plan, &ds, &r, NULL, NULL, w, &e), ERR_OK);
		best = fmin(best, cpu_seconds() - c0);
	}
	ck_assert_msg(best <= 3.0 * alg->work(&spec, &plan) / rate + 0.01,
		      "run took %.4f s of CPU, estimate %.4f s", best,
		      alg->work(&spec, &plan) / rate);
	free(x);
	free(y);
	free(w);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("work_rate");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_rate_is_measured_quickly);
	tcase_add_test(tc, test_rate_predicts_a_run);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
