/*
 * test_predict.c - a run's model and predictions through the API (issue
 * 11): GET /v1/runs/{id}/model and POST /v1/runs/{id}/predict.  Margins,
 * probabilities and classes recomputed here from the downloaded
 * coefficients and intercept (binary with declared labels no/yes, CSV
 * and JSON bodies alike; multiclass; regression); declared labels mapped
 * at upload and back in predictions; nothing charged; another tenant's
 * run is 404, a run not yet succeeded 409; bad bodies 400 / 413 / 415
 * naming their field.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static struct h_server srv;
static char db[512];
static char owner[128], analyst[128], other[128];

static void
setup_opts(const struct h_opts *o)
{
	setenv("DPOPT_TEST_LOG_LEVEL", "debug", 1); /* every request logged: test_nothing_logged */
	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_key_create(db, "acme", "analyst", analyst, sizeof(analyst));
	h_key_create(db, "globex", "owner", other, sizeof(other));
	h_server_start(&srv, db, o);
}

static void
setup(void)
{
	setup_opts(NULL);
}

static void
setup_slow(void)
{
	struct h_opts o = { .step_delay_ms = 200, .workers = 1 };

	setup_opts(&o);
}

static void
teardown(void)
{
	h_server_stop_fixture(&srv, 30.0);
}

static unsigned long long
next(unsigned long long *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

static double
unif(unsigned long long *st)
{
	return (double)(next(st) >> 11) * 0x1p-53;
}

/* n rows of d features in [-0.5, 0.5] / sqrt(d) (inside the unit l2 ball,
 * no clipping), then the label: kind 'b' no/yes by a linear rule with 10%
 * flips, 'm' a class 0..2 by the largest of three scores, 'r' a real in
 * [-1, 1]; with label false the row stops after the features.  A header
 * "f1,...,fd[,y]" first.  Owned. */
static char *
rows(size_t n, size_t d, char kind, bool label, unsigned seed)
{
	size_t cap = n * (d + 1) * 16 + 256, len = 0;
	char *t = malloc(cap);
	unsigned long long st = 0x9e3779b97f4a7c15ULL * (seed + 1);
	double s = 1.0 / sqrt((double)d);

	ck_assert_ptr_nonnull(t);
	for (size_t j = 0; j < d; j++)
		len += (size_t)snprintf(t + len, cap - len, "%sf%zu", j > 0 ? "," : "", j + 1);
	len += (size_t)snprintf(t + len, cap - len, label ? ",y\n" : "\n");
	for (size_t i = 0; i < n; i++) {
		double x[8], z = 0.0;

		for (size_t j = 0; j < d; j++) {
			x[j] = (unif(&st) - 0.5) * s;
			z += x[j] * (j % 2 == 0 ? 3.0 : -2.0);
			len += (size_t)snprintf(t + len, cap - len, "%s%.6f", j > 0 ? "," : "",
						x[j]);
		}
		if (!label) {
			len += (size_t)snprintf(t + len, cap - len, "\n");
			continue;
		}
		if (kind == 'b') {
			bool pos = (z > 0) != (unif(&st) < 0.1);

			len += (size_t)snprintf(t + len, cap - len, ",%s\n", pos ? "yes" : "no");
		} else if (kind == 'm') {
			double a = x[0], b = x[1], c = -x[0] - x[1];
			int k = a >= b && a >= c ? 0 : b >= c ? 1 : 2;

			len += (size_t)snprintf(t + len, cap - len, ",%d\n", k);
		} else {
			len += (size_t)snprintf(t + len, cap - len, ",%.6f\n",
						fmax(-1, fmin(1, z)));
		}
	}
	return t;
}

/* The CSV's data rows (after the header) as numbers: d a row. */
static size_t
parse_rows(const char *csv, size_t d, double *out, size_t max)
{
	const char *p = strchr(csv, '\n') + 1;
	size_t n = 0;

	while (*p != '\0' && n < max) {
		for (size_t j = 0; j < d; j++) {
			char *end;

			out[n * d + j] = strtod(p, &end);
			p = end + 1;
		}
		n++;
	}
	return n;
}

static double
num_at(json_t *a, size_t i)
{
	ck_assert(json_is_number(json_array_get(a, i)));
	return json_number_value(json_array_get(a, i));
}

/* A dataset of tenant acme from a body and CSV; its id. */
static void
dataset(const char *body, const char *csv, char *id)
{
	h_dataset_create(&srv, owner, body, id);
	h_upload(&srv, owner, id, csv);
}

static void
succeeded_run(const char *ds, const char *body, char *run)
{
	json_decref(h_run_create(&srv, analyst, ds, body, run));
	json_decref(h_run_wait(&srv, analyst, run, "succeeded", 60));
}

static json_t *
post_rows(const char *run, const char *key, const char *ctype, const char *body, long want)
{
	char path[128];
	struct h_resp r = { 0 };
	json_t *j;

	snprintf(path, sizeof(path), "/v1/runs/%s/predict", run);
	h_http(&srv, "POST", path, key, ctype, body, strlen(body), NULL, &r);
	ck_assert_msg(r.status == want, "predict: status %ld, want %ld: %s", r.status, want,
		      h_short(r.body != NULL ? r.body : ""));
	j = json_incref(r.json);
	h_resp_clear(&r);
	return j;
}

#define BIN_DS                                                                                     \
	"{\"name\": \"yn\", \"schema\": {\"features\": 3, \"task\": \"binary\","                   \
	" \"labels\": [\"no\", \"yes\"]}, \"bounds\": {\"feature_l2\": 1},"                        \
	" \"budget\": {\"epsilon\": 10, \"delta\": 1e-4}, \"accounting_mode\": \"basic\"}"
#define LOGISTIC_RUN                                                                               \
	"{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": \"logistic\","             \
	" \"intercept\": true}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 5}}," \
	" \"privacy\": {\"epsilon\": 2, \"delta\": 1e-6}}"

/* Binary with labels no/yes: the model document, predictions recomputed
 * from it (CSV and JSON), classes back as no/yes, nothing charged. */
START_TEST(test_binary_labels)
{
	char ds[64], run[64], path[128], before[4096], after[4096], *csv, *score;
	double x[40 * 3], w[3], b;
	json_t *m, *p, *pj, *preds;
	size_t n;

	csv = rows(2000, 3, 'b', true, 1);
	dataset(BIN_DS, csv, ds);
	free(csv);
	succeeded_run(ds, LOGISTIC_RUN, run);

	snprintf(path, sizeof(path), "/v1/runs/%s/model", run);
	m = h_json(&srv, "GET", path, analyst, NULL, 200);
	ck_assert_str_eq(json_string_value(h_get(m, "run_id")), run);
	ck_assert_str_eq(json_string_value(h_get(m, "algorithm")), "dp_sgd.one_pass");
	ck_assert_str_eq(json_string_value(h_get(m, "objective.name")), "logistic");
	ck_assert_str_eq(json_string_value(json_array_get(h_get(m, "schema.labels"), 1)), "yes");
	ck_assert_str_eq(json_string_value(json_array_get(h_get(m, "feature_names"), 2)), "f3");
	ck_assert_ptr_nonnull(h_get(m, "privacy.event.type"));
	ck_assert_uint_eq(json_array_size(h_get(m, "coefficients")), 3);
	for (size_t j = 0; j < 3; j++)
		w[j] = num_at(h_get(m, "coefficients"), j);
	ck_assert(json_is_number(h_get(m, "intercept")));
	b = json_number_value(h_get(m, "intercept"));

	score = rows(40, 3, 'b', false, 7);
	n = parse_rows(score, 3, x, 40);
	ck_assert_uint_eq(n, 40);
	h_ledger_snapshot(db, before, sizeof(before));
	p = post_rows(run, analyst, "text/csv", score, 200);
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(before, after); /* nothing charged */
	ck_assert_int_eq(json_integer_value(h_get(p, "n_rows")), 40);
	preds = h_get(p, "predictions");
	ck_assert_uint_eq(json_array_size(preds), 40);
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(preds, i);
		double z = b + w[0] * x[3 * i] + w[1] * x[3 * i + 1] + w[2] * x[3 * i + 2];

		ck_assert_double_eq_tol(json_number_value(h_get(r, "margin")), z, 1e-12);
		ck_assert_double_eq_tol(json_number_value(h_get(r, "probability")),
					1.0 / (1.0 + exp(-z)), 1e-12);
		ck_assert_str_eq(json_string_value(h_get(r, "class")), z > 0 ? "yes" : "no");
	}

	/* The same rows as JSON score the same. */
	{
		size_t cap = 40 * 3 * 24 + 64, len = 0;
		char *body = malloc(cap);

		ck_assert_ptr_nonnull(body);
		len += (size_t)snprintf(body + len, cap - len, "{\"rows\": [");
		for (size_t i = 0; i < n; i++)
			len += (size_t)snprintf(body + len, cap - len, "%s[%.6f, %.6f, %.6f]",
						i > 0 ? ", " : "", x[3 * i], x[3 * i + 1],
						x[3 * i + 2]);
		snprintf(body + len, cap - len, "]}");
		pj = post_rows(run, owner, "application/json", body, 200);
		ck_assert(json_equal(h_get(pj, "predictions"), preds));
		free(body);
		json_decref(pj);
	}
	free(score);
	json_decref(p);
	json_decref(m);
}
END_TEST

/* Labels at upload: a cell neither no nor yes is refused naming data and
 * its line; numeric labels [0, 1] come back as 0 / 1. */
START_TEST(test_labels_upload)
{
	char ds[64], run[64], path[128];
	const char *bad = "f1,f2,f3,y\n0.1,0.1,0.1,yes\n0.2,0.1,0.1,maybe\n";
	json_t *p, *r;
	char *csv;
	size_t k;

	h_dataset_create(&srv, owner, BIN_DS, ds);
	snprintf(path, sizeof(path), "/v1/datasets/%s/data", ds);
	h_expect_error(&srv, "PUT", path, owner, "text/csv", bad, strlen(bad), NULL, 400,
		       "invalid_request", "data", "line 3");
	h_expect_error(&srv, "PUT", path, owner, "text/x-libsvm", "1 1:0.5\n", 8, NULL, 415,
		       "unsupported_media_type", "Content-Type", "string labels");

	/* [0, 1]: the yes/no file with 1/0 */
	csv = rows(2000, 3, 'b', true, 2);
	for (char *q = csv; (q = strstr(q, ",yes\n")) != NULL;)
		memcpy(q, ",1  \n", 5), q += 5;
	for (char *q = csv; (q = strstr(q, ",no\n")) != NULL;)
		memcpy(q, ",0 \n", 4), q += 4;
	dataset("{\"name\": \"01\", \"schema\": {\"features\": 3, \"task\": \"binary\","
		" \"labels\": [0, 1]}, \"bounds\": {\"feature_l2\": 1},"
		" \"budget\": {\"epsilon\": 10, \"delta\": 1e-4}, \"accounting_mode\": \"basic\"}",
		csv, ds);
	free(csv);
	succeeded_run(ds, LOGISTIC_RUN, run);
	p = post_rows(run, analyst, "application/json",
		      "{\"rows\": [[0.5, -0.5, 0.5], [-0.5, 0.5, -0.5]]}", 200);
	json_array_foreach (h_get(p, "predictions"), k, r) {
		json_t *c = h_get(r, "class");

		ck_assert(json_is_integer(c));
		ck_assert_int_eq(json_integer_value(c),
				 json_number_value(h_get(r, "margin")) > 0 ? 1 : 0);
	}
	json_decref(p);
}
END_TEST

/* Multiclass (margins, probabilities, argmax) and regression (prediction
 * = margin), each recomputed from the model. */
START_TEST(test_multiclass_regression)
{
	char ds[64], run[64], path[128], *csv, *score;
	double x[20 * 2];
	json_t *m, *p;
	size_t n;

	csv = rows(3000, 2, 'm', true, 3);
	dataset("{\"name\": \"mc\", \"schema\": {\"features\": 2, \"task\": \"multiclass\","
		" \"classes\": 3}, \"bounds\": {\"feature_l2\": 1},"
		" \"budget\": {\"epsilon\": 10, \"delta\": 1e-4}, \"accounting_mode\": \"basic\"}",
		csv, ds);
	free(csv);
	succeeded_run(ds,
		      "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\":"
		      " \"multiclass_logistic\", \"intercept\": true}, \"constraints\": {\"x\":"
		      " {\"kind\": \"l2_ball\", \"radius\": 5}}, \"privacy\": {\"epsilon\": 2,"
		      " \"delta\": 1e-6}}",
		      run);
	snprintf(path, sizeof(path), "/v1/runs/%s/model", run);
	m = h_json(&srv, "GET", path, owner, NULL, 200);
	ck_assert_uint_eq(json_array_size(h_get(m, "coefficients")), 3);
	ck_assert_uint_eq(json_array_size(h_get(m, "intercept")), 3);
	score = rows(20, 2, 'm', false, 9);
	n = parse_rows(score, 2, x, 20);
	p = post_rows(run, analyst, "text/csv", score, 200);
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(h_get(p, "predictions"), i);
		double s[3], top = -INFINITY, sum = 0;
		long arg = 0;

		for (size_t k = 0; k < 3; k++) {
			json_t *wk = json_array_get(h_get(m, "coefficients"), k);

			s[k] = num_at(h_get(m, "intercept"), k) + num_at(wk, 0) * x[2 * i] +
			       num_at(wk, 1) * x[2 * i + 1];
			if (s[k] > top) {
				top = s[k];
				arg = (long)k;
			}
		}
		for (size_t k = 0; k < 3; k++)
			sum += exp(s[k] - top);
		for (size_t k = 0; k < 3; k++) {
			ck_assert_double_eq_tol(num_at(h_get(r, "margins"), k), s[k], 1e-12);
			ck_assert_double_eq_tol(num_at(h_get(r, "probabilities"), k),
						exp(s[k] - top) / sum, 1e-12);
		}
		ck_assert_int_eq(json_integer_value(h_get(r, "class")), arg);
	}
	free(score);
	json_decref(p);
	json_decref(m);

	csv = rows(2000, 2, 'r', true, 4);
	dataset("{\"name\": \"reg\", \"schema\": {\"features\": 2, \"task\": \"regression\"},"
		" \"bounds\": {\"feature_l2\": 1, \"label\": 1},"
		" \"budget\": {\"epsilon\": 10, \"delta\": 1e-4}, \"accounting_mode\": \"basic\"}",
		csv, ds);
	free(csv);
	succeeded_run(ds,
		      "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\":"
		      " \"least_squares\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\","
		      " \"radius\": 3}}, \"privacy\": {\"epsilon\": 2, \"delta\": 1e-6}}",
		      run);
	snprintf(path, sizeof(path), "/v1/runs/%s/model", run);
	m = h_json(&srv, "GET", path, owner, NULL, 200);
	ck_assert(json_is_null(h_get(m, "intercept")));
	p = post_rows(run, analyst, "application/json", "{\"rows\": [[0.25, -0.5]]}", 200);
	{
		json_t *r = json_array_get(h_get(p, "predictions"), 0);
		double z = 0.25 * num_at(h_get(m, "coefficients"), 0) -
			   0.5 * num_at(h_get(m, "coefficients"), 1);

		ck_assert_double_eq_tol(json_number_value(h_get(r, "margin")), z, 1e-12);
		ck_assert_double_eq_tol(json_number_value(h_get(r, "prediction")), z, 1e-12);
		ck_assert_ptr_null(h_get(r, "class"));
	}
	json_decref(p);
	json_decref(m);
}
END_TEST

/* Another tenant's run is 404; bad bodies name their field. */
START_TEST(test_refusals)
{
	char ds[64], run[64], path[128], mpath[128];
	const char *wide = "0,0,0,0,0\n0.1,0.2\n";
	char *many, *huge;
	size_t cap, len = 0;

	h_dataset_sealed(&srv, owner, "5", ds);
	succeeded_run(ds, H_RUN_BODY, run);
	snprintf(path, sizeof(path), "/v1/runs/%s/predict", run);
	snprintf(mpath, sizeof(mpath), "/v1/runs/%s/model", run);
	h_expect_error(&srv, "GET", mpath, other, NULL, NULL, 0, NULL, 404, "not_found", NULL,
		       NULL);
	h_expect_error(&srv, "POST", path, other, "text/csv", "1,2,3,4,5\n", 10, NULL, 404,
		       "not_found", NULL, NULL);
	h_expect_error(&srv, "GET", "/v1/runs/6f1e2d3c-0000-4000-8000-000000000000/model", owner,
		       NULL, NULL, 0, NULL, 404, "not_found", NULL, NULL);
	h_expect_error(&srv, "POST", path, owner, "text/plain", "1,2,3,4,5\n", 10, NULL, 415,
		       "unsupported_media_type", "Content-Type", NULL);
	h_expect_error(&srv, "POST", path, owner, "text/csv", wide, strlen(wide), NULL, 400,
		       "invalid_request", "rows", "line 2");
	h_expect_error(&srv, "POST", path, owner, "text/csv", "", 0, NULL, 400, "invalid_request",
		       "rows", NULL);
	{
		static const char *const bad[][2] = {
			{ "{\"rows\": 3}", "rows" },
			{ "{\"rows\": []}", "rows" },
			{ "{\"rows\": [[1, 2, 3, 4, 5], [1, 2, \"x\", 4, 5]]}", "rows[1]" },
			{ "{\"rows\": [[1, 2, 3, 4, 5], [1, 2, 3, 4]]}", "rows[1]" },
			{ "{\"rows\": [[1, 2, 3, 4, 5]], \"extra\": 1}", "extra" },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			h_expect_error(&srv, "POST", path, owner, "application/json", bad[i][0],
				       strlen(bad[i][0]), NULL, 400, "invalid_request", bad[i][1],
				       NULL);
	}
	/* 10001 rows: 400 naming rows, under the body limit */
	cap = 10001 * 12 + 64;
	many = malloc(cap);
	ck_assert_ptr_nonnull(many);
	for (size_t i = 0; i < 10001; i++)
		len += (size_t)snprintf(many + len, cap - len, "0,0,0,0,0\n");
	h_expect_error(&srv, "POST", path, owner, "text/csv", many, len, NULL, 400,
		       "invalid_request", "rows", "more than 10000 rows");
	free(many);
	/* over DPOPT_MAX_BODY_BYTES (1 MiB by default): 413 */
	cap = (1u << 20) + 4096;
	huge = malloc(cap);
	ck_assert_ptr_nonnull(huge);
	memset(huge, '0', cap);
	for (size_t i = 9; i < cap; i += 10)
		huge[i] = i % 20 == 19 ? '\n' : ',';
	h_expect_error(&srv, "POST", path, owner, "text/csv", huge, cap, NULL, 413,
		       "body_too_large", NULL, NULL);
	free(huge);
}
END_TEST

/* A saddle run (bilinear) has no predictor: 400 naming objective.name. */
START_TEST(test_saddle_no_model)
{
	char ds[64], run[64], path[128];
	size_t cap = 3000 * 24 + 1, len = 0;
	char *csv = malloc(cap);
	unsigned long long st = 12345;

	ck_assert_ptr_nonnull(csv);
	for (size_t i = 0; i < 3000; i++)
		for (size_t j = 0; j < 4; j++)
			len += (size_t)snprintf(csv + len, cap - len, "%s%s",
						next(&st) % 2 ? "0.7" : "-0.7", j < 3 ? "," : "\n");
	dataset("{\"name\": \"pairs\", \"schema\": {\"features\": 4, \"task\": \"unlabeled\","
		" \"blocks\": [{\"name\": \"a\", \"size\": 2, \"bounds\": {\"l2\": 1}},"
		" {\"name\": \"b\", \"size\": 2, \"bounds\": {\"l2\": 1}}]},"
		" \"bounds\": {\"feature_l2\": 1.5},"
		" \"budget\": {\"epsilon\": 10, \"delta\": 1e-4}, \"accounting_mode\": \"basic\"}",
		csv, ds);
	free(csv);
	succeeded_run(
		ds,
		"{\"algorithm\": \"saddle.sgda_one_pass\", \"objective\": {\"name\":"
		" \"bilinear\", \"coupling\": 0.5}, \"constraints\": {\"x\": {\"kind\":"
		" \"l2_ball\", \"radius\": 1}, \"y\": {\"kind\": \"l2_ball\", \"radius\": 1}},"
		" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}}",
		run);
	snprintf(path, sizeof(path), "/v1/runs/%s/model", run);
	h_expect_error(&srv, "GET", path, owner, NULL, NULL, 0, NULL, 400, "invalid_request",
		       "objective.name", "does not predict");
	snprintf(path, sizeof(path), "/v1/runs/%s/predict", run);
	h_expect_error(&srv, "POST", path, owner, "text/csv", "1,2,3,4\n", 8, NULL, 400,
		       "invalid_request", "objective.name", "does not predict");
}
END_TEST

/* Nothing of the rows scored, nor of a refused cell or label, reaches the
 * log: scored rows, a bad cell, a label neither no nor yes. */
START_TEST(test_nothing_logged)
{
	char ds[64], run[64], path[128], *log;
	const char *ok = "0.4242421,0.1,0.1,0.1,0.1\n";
	const char *bad = "0.1,0.1,0.1,0.1,0.1\n0.1,0.1,7.7777xyz,0.1,0.1\n";
	const char *lab = "f1,f2,f3,y\n0.1,0.1,0.1,yes\n0.2,0.1,0.1,maybeQQ\n";

	h_dataset_sealed(&srv, owner, "5", ds);
	succeeded_run(ds, H_RUN_BODY, run);
	json_decref(post_rows(run, analyst, "text/csv", ok, 200));
	json_decref(post_rows(run, analyst, "text/csv", bad, 400));
	h_dataset_create(&srv, owner, BIN_DS, ds);
	snprintf(path, sizeof(path), "/v1/datasets/%s/data", ds);
	h_expect_error(&srv, "PUT", path, owner, "text/csv", lab, strlen(lab), NULL, 400,
		       "invalid_request", "data", "line 3");
	log = h_read_log(&srv);
	ck_assert_msg(strstr(log, "/predict") != NULL, "no predict request logged");
	ck_assert_msg(strstr(log, "4242421") == NULL, "a scored cell in the log");
	ck_assert_msg(strstr(log, "7777xyz") == NULL, "a refused cell in the log");
	ck_assert_msg(strstr(log, "maybeQQ") == NULL, "a refused label in the log");
	free(log);
}
END_TEST

/* A run still running has no model yet: 409 for both routes. */
START_TEST(test_not_succeeded)
{
	char ds[64], run[64], path[128];

	h_dataset_sealed(&srv, owner, "5", ds);
	json_decref(h_run_create(&srv, analyst, ds, H_RUN_BODY_10_STEPS, run));
	snprintf(path, sizeof(path), "/v1/runs/%s/model", run);
	h_expect_error(&srv, "GET", path, analyst, NULL, NULL, 0, NULL, 409, "conflict", NULL,
		       "has not succeeded");
	snprintf(path, sizeof(path), "/v1/runs/%s/predict", run);
	h_expect_error(&srv, "POST", path, analyst, "text/csv", "1,2,3,4,5\n", 10, NULL, 409,
		       "conflict", NULL, "has not succeeded");
	json_decref(h_run_wait(&srv, analyst, run, "succeeded", 60));
	snprintf(path, sizeof(path), "/v1/runs/%s/model", run);
	json_decref(h_json(&srv, "GET", path, analyst, NULL, 200));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("predict");
	TCase *tc = tcase_create("predict");
	TCase *slow = tcase_create("predict_slow");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_unchecked_fixture(slow, setup_slow, teardown);
	tcase_set_timeout(tc, 120);
	tcase_set_timeout(slow, 120);
	tcase_set_tags(slow, H_TAG_HOOKS);
	tcase_add_test(tc, test_binary_labels);
	tcase_add_test(tc, test_labels_upload);
	tcase_add_test(tc, test_multiclass_regression);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_nothing_logged);
	tcase_add_test(tc, test_saddle_no_model);
	tcase_add_test(slow, test_not_succeeded);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, slow);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
