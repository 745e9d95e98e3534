/*
 * test_portfolio_api.c - the log-optimal portfolio through the API
 * (docs/algorithms/portfolio.md): the catalogue lists it with its one set
 * (simplex); a dataset of returns with
 * bounds.feature_range (its view shows the range, not the implied
 * feature_linf; the range alone, and not with the sparse format when it
 * excludes 0, else 400 naming it; a LIBSVM upload 415), CSV cells outside
 * the range clipped into it (a run on the clipped rows matches the
 * constants: nothing refused), mirror_descent.maurey_sco and
 * frank_wolfe.private at their defaults returning a point of the simplex
 * (frank_wolfe.private evaluated on a public sample: the mean log-loss of
 * its clipped rows at the released portfolio),
 * the refusals naming their fields (another set: constraints.x.kind; a
 * dataset without a range: bounds.feature_range), and no model (400
 * naming objective.name).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static struct h_server srv;
static char db[512];
static char owner[128];

static void
setup(void)
{
	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, NULL);
}

static void
teardown(void)
{
	h_server_stop_fixture(&srv, 30.0);
}

#define DATASET(name, format, bounds)                                                              \
	"{\"name\": \"" name "\", \"schema\": {\"features\": 4, \"task\": \"unlabeled\"" format    \
	"}, \"bounds\": " bounds ", \"budget\": {\"epsilon\": 20, \"delta\": 1e-5},"               \
	" \"accounting_mode\": \"basic\"}"
#define PUBLIC_DATASET(name)                                                                       \
	"{\"name\": \"" name "\", \"schema\": {\"features\": 4, \"task\": \"unlabeled\"},"         \
	" \"bounds\": {\"feature_range\": [0.8, 1.25]}, \"public\": true}"
#define RUN(alg, set)                                                                              \
	"{\"algorithm\": \"" alg "\", \"objective\": {\"name\": \"log_optimal_portfolio\"},"       \
	" \"constraints\": {\"x\": " set "}, \"privacy\": {\"epsilon\": 2, \"delta\": 1e-6}}"
#define SIMPLEX "{\"kind\": \"simplex\", \"scale\": 1}"

/* n rows of 4 gross returns around 1 (asset 0 ahead); every 50th row has
 * a 0 and a 3 (outside [0.8, 1.25]: clipped at upload).  Owned. */
static char *
returns_csv(size_t n, unsigned seed)
{
	size_t cap = n * 64 + 1, len = 0;
	char *csv = malloc(cap);
	unsigned long long st = seed;

	ck_assert_ptr_nonnull(csv);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < 4; j++) {
			double u;

			st = st * 6364136223846793005ULL + 1442695040888963407ULL;
			u = (double)(st >> 11) * 0x1p-53;
			u = 1.0 + (j == 0 ? 0.03 : -0.01) + 0.2 * (u - 0.5);
			if (i % 50 == 0 && j == 1)
				u = 0.0;
			if (i % 50 == 0 && j == 2)
				u = 3.0;
			len += (size_t)snprintf(csv + len, cap - len, "%.6f%s", u,
						j < 3 ? "," : "\n");
		}
	return csv;
}

/* The catalogue: maurey_sco lists the objective, with its one set. */
START_TEST(test_catalogue)
{
	json_t *algs = h_json(&srv, "GET", "/v1/algorithms", owner, NULL, 200), *a, *o;
	size_t i, k;
	bool found = false;

	json_array_foreach (h_get(algs, "algorithms"), i, a) {
		if (strcmp(json_string_value(json_object_get(a, "name")),
			   "mirror_descent.maurey_sco") != 0)
			continue;
		json_array_foreach (json_object_get(a, "objectives"), k, o) {
			if (strcmp(json_string_value(json_object_get(o, "name")),
				   "log_optimal_portfolio") != 0) {
				ck_assert_ptr_null(json_object_get(o, "sets"));
				continue;
			}
			found = true;
			ck_assert_int_eq(json_array_size(json_object_get(o, "sets")), 1);
			ck_assert_str_eq(
				json_string_value(json_array_get(json_object_get(o, "sets"), 0)),
				"simplex");
		}
	}
	ck_assert(found);
	json_decref(algs);
}
END_TEST

START_TEST(test_dataset_with_range)
{
	char ds[40], path[128];
	json_t *j, *r;

	h_dataset_create(&srv, owner, DATASET("returns", "", "{\"feature_range\": [0.8, 1.25]}"),
			 ds);
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	j = h_json(&srv, "GET", path, owner, NULL, 200);
	r = h_get(j, "bounds.feature_range");
	ck_assert_int_eq(json_array_size(r), 2);
	ck_assert_double_eq(json_number_value(json_array_get(r, 0)), 0.8);
	ck_assert_double_eq(json_number_value(json_array_get(r, 1)), 1.25);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "bounds"), "feature_linf"));
	json_decref(j);
	/* LIBSVM lines leave absent cells 0: refused before any row */
	snprintf(path, sizeof(path), "/v1/datasets/%s/data", ds);
	h_expect_error(&srv, "PUT", path, owner, "text/x-libsvm", "1:1.1 2:0.9 3:1 4:1\n", 20, NULL,
		       415, "unsupported_media_type", "Content-Type", "feature_range");
	/* the range alone, and no sparse format without 0 */
	h_expect_error(
		&srv, "POST", "/v1/datasets", owner, "application/json",
		DATASET("r2", "", "{\"feature_range\": [0.8, 1.25], \"feature_l2\": 3}"),
		strlen(DATASET("r2", "", "{\"feature_range\": [0.8, 1.25], \"feature_l2\": 3}")),
		NULL, 400, "invalid_request", "bounds.feature_range", NULL);
	h_expect_error(
		&srv, "POST", "/v1/datasets", owner, "application/json",
		DATASET("r3", ", \"format\": \"sparse\"", "{\"feature_range\": [0.8, 1.25]}"),
		strlen(DATASET("r3", ", \"format\": \"sparse\"",
			       "{\"feature_range\": [0.8, 1.25]}")),
		NULL, 400, "invalid_request", "bounds.feature_range", "sparse");
	h_expect_error(&srv, "POST", "/v1/datasets", owner, "application/json",
		       DATASET("r4", "", "{\"feature_range\": [1.25, 0.8]}"),
		       strlen(DATASET("r4", "", "{\"feature_range\": [1.25, 0.8]}")), NULL, 400,
		       "invalid_request", "bounds.feature_range", "lo < hi");
}
END_TEST

/* Sum and sign of result.x: a point of the unit simplex. */
static void
assert_on_simplex(json_t *run)
{
	json_t *x = h_get(run, "result.x"), *v;
	double s = 0.0;
	size_t i;

	ck_assert_int_eq(json_array_size(x), 4);
	json_array_foreach (x, i, v) {
		ck_assert(json_number_value(v) >= 0.0);
		s += json_number_value(v);
	}
	ck_assert_double_eq_tol(s, 1.0, 1e-9);
}

/* The mean log-loss -ln <clip(r), x> of the CSV rows at x. */
static double
csv_loss(const char *csv, const double *x)
{
	double sum = 0.0, r[4];
	size_t n = 0;
	int used;

	while (sscanf(csv, "%lf,%lf,%lf,%lf\n%n", &r[0], &r[1], &r[2], &r[3], &used) == 4) {
		double z = 0.0;

		for (size_t j = 0; j < 4; j++)
			z += fmax(0.8, fmin(1.25, r[j])) * x[j];
		sum -= log(z);
		n++;
		csv += used;
	}
	ck_assert_uint_eq(n, 1000);
	return sum / (double)n;
}

START_TEST(test_runs)
{
	char ds[40], plain[40], pub[40], run[40], path[128], before[4096], after[4096];
	char body_eval[1024];
	char *csv = returns_csv(3000, 0x77), *test = returns_csv(1000, 0x78);
	double x[4];
	const char *bad_set =
		RUN("mirror_descent.maurey_sco", "{\"kind\": \"l1_ball\", \"radius\": 1}");
	const char *body;
	json_t *j;

	h_dataset_create(&srv, owner, DATASET("market", "", "{\"feature_range\": [0.8, 1.25]}"),
			 ds);
	h_upload(&srv, owner, ds, csv);

	json_decref(h_run_create(&srv, owner, ds, RUN("mirror_descent.maurey_sco", SIMPLEX), run));
	j = h_run_wait(&srv, owner, run, "succeeded", 120);
	assert_on_simplex(j);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), "self_composed");
	/* the lifted L_0 = b / a, the declared clamp */
	ck_assert_double_eq_tol(json_number_value(h_get(j, "plan.params_used.lipschitz_linf")),
				1.25 / 0.8, 1e-12);
	json_decref(j);
	/* no model: a portfolio is not a predictor */
	snprintf(path, sizeof(path), "/v1/runs/%s/model", run);
	h_expect_error(&srv, "GET", path, owner, NULL, NULL, 0, NULL, 400, "invalid_request",
		       "objective.name", "does not predict");

	/* frank_wolfe.private, evaluated on a public sample of the market:
	 * the mean log-loss of the clipped rows at the released portfolio */
	h_dataset_create(&srv, owner, PUBLIC_DATASET("market-public"), pub);
	h_upload(&srv, owner, pub, test);
	snprintf(body_eval, sizeof(body_eval),
		 "{\"algorithm\": \"frank_wolfe.private\", \"objective\": {\"name\":"
		 " \"log_optimal_portfolio\"}, \"constraints\": {\"x\": " SIMPLEX "},"
		 " \"privacy\": {\"epsilon\": 2, \"delta\": 1e-6}, \"eval_dataset_id\": \"%s\"}",
		 pub);
	json_decref(h_run_create(&srv, owner, ds, body_eval, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 120);
	assert_on_simplex(j);
	for (size_t k = 0; k < 4; k++)
		x[k] = json_number_value(json_array_get(h_get(j, "result.x"), k));
	ck_assert_int_eq(json_integer_value(h_get(j, "result.evaluation.n_rows")), 1000);
	ck_assert_double_eq_tol(json_number_value(h_get(j, "result.evaluation.loss")),
				csv_loss(test, x), 1e-12);
	ck_assert_ptr_null(json_object_get(h_get(j, "result.evaluation"), "accuracy"));
	json_decref(j);

	/* refusals, before any charge */
	h_ledger_snapshot(db, before, sizeof(before));
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	h_expect_error(&srv, "POST", path, owner, "application/json", bad_set, strlen(bad_set),
		       NULL, 400, "invalid_request", "constraints.x.kind", NULL);
	body = RUN("dp_sgd.subsampled", SIMPLEX);
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "objective.name", NULL);
	h_dataset_create(&srv, owner, DATASET("plain", "", "{\"feature_linf\": 2}"), plain);
	h_upload(&srv, owner, plain, csv);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", plain);
	body = RUN("mirror_descent.maurey_sco", SIMPLEX);
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "bounds.feature_range", NULL);
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(before, after);
	free(csv);
	free(test);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("portfolio_api");
	TCase *tc = tcase_create("portfolio_api");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_catalogue);
	tcase_add_test(tc, test_dataset_with_range);
	tcase_add_test(tc, test_runs);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
