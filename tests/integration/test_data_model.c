/*
 * test_data_model.c - the data model through the API: LIBSVM uploads
 * (sparse, stored as CSR), schemas with multiclass labels, a group column,
 * categorical attributes given by label, and column blocks; the same rows
 * as CSV and as LIBSVM are one dataset for the laundering check; every bad
 * row names its line and column and keeps nothing.
 */
#include <check.h>
#include <stdbool.h>
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

#define BUDGET " \"budget\": {\"epsilon\": 1, \"delta\": 1e-6}"

static void
put(const char *ds, const char *ctype, const char *body, long status, const char *field,
    const char *msg)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/datasets/%s/data", ds);
	if (status == 200) {
		struct h_resp r;

		h_http(&srv, "PUT", path, owner, ctype, body, strlen(body), NULL, &r);
		ck_assert_msg(r.status == 200, "PUT %s: %ld %s", ctype, r.status, h_short(r.body));
		h_resp_clear(&r);
	} else {
		h_expect_error(&srv, "PUT", path, owner, ctype, body, strlen(body), NULL, status,
			       status == 415   ? "unsupported_media_type"
			       : status == 409 ? "conflict"
					       : "invalid_request",
			       field, msg);
	}
}

static void
state_is(const char *ds, const char *state, const char *layout)
{
	char out[64];

	h_sql(db, out, sizeof(out), "SELECT state || '/' || layout FROM datasets WHERE id = '%s'",
	      ds);
	snprintf(out + strlen(out), 0, "%s", "");
	{
		char want[64];

		snprintf(want, sizeof(want), "%s/%s", state, layout);
		ck_assert_str_eq(out, want);
	}
}

START_TEST(test_libsvm_upload)
{
	char a[40], b[40];
	const char *svm = "1 1:0.5 3:-0.25\n"
			  "-1 2:0.125 # a comment\n"
			  "# a comment line\n"
			  "+1 1:0.1 2:0 4:0.3\n";
	/* The same rows, dense, in another order. */
	const char *csv = "x1,x2,x3,x4,y\n"
			  "0.1,0,0,0.3,1\n"
			  "0,0.125,0,0,-1\n"
			  "0.5,0,-0.25,0,1\n";

	h_dataset_create(&srv, owner,
			 "{\"name\": \"svm\", \"schema\": {\"features\": 4, \"task\": \"binary\","
			 " \"format\": \"sparse\"}, \"bounds\": {\"feature_l2\": 1}," BUDGET "}",
			 a);
	put(a, "text/plain", svm, 415, "Content-Type", "text/x-libsvm");
	put(a, "text/x-libsvm", "1 5:0.1\n", 400, "data", "line 1");
	put(a, "text/x-libsvm", "1 1:0.1\n1 3:0.1 2:0.2\n", 400, "data", "line 2");
	put(a, "text/x-libsvm", "0.5 1:0.1\n", 400, "data", "line 1, entry 1: the label");
	put(a, "text/x-libsvm", "1 qid:1 1:0.1\n", 400, "data", "no group column");
	state_is(a, "created", "dense");
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM dataset_chunks"), 0);
	put(a, "text/x-libsvm", svm, 200, NULL, NULL);
	state_is(a, "sealed", "csr");
	ck_assert_int_eq(h_sql_ll(db, "SELECT nnz FROM datasets WHERE id = '%s'", a), 5);
	ck_assert_int_eq(h_sql_ll(db, "SELECT n_rows FROM datasets WHERE id = '%s'", a), 3);

	/* The same rows as CSV: the same data for the laundering check. */
	h_dataset_create(&srv, owner,
			 "{\"name\": \"csv\", \"schema\": {\"features\": 4, \"task\": \"binary\"},"
			 " \"bounds\": {\"feature_l2\": 1}," BUDGET "}",
			 b);
	put(b, "text/csv", csv, 409, "data", a);
}
END_TEST

START_TEST(test_rich_schema)
{
	char m[40], g[40], c[40], k[40];

	/* multiclass: labels are class indices */
	h_dataset_create(
		&srv, owner,
		"{\"name\": \"mc\", \"schema\": {\"features\": 2, \"task\": \"multiclass\","
		" \"classes\": 3}, \"bounds\": {\"feature_linf\": 1}," BUDGET "}",
		m);
	put(m, "text/csv", "0.1,0.2,3\n", 400, "data",
	    "line 1, column 3: the label must be a class");
	put(m, "text/csv", "0.1,0.2,2\n0.3,0.4,0\n", 200, NULL, NULL);

	/* a group column before the label; LIBSVM gives it as qid */
	h_dataset_create(&srv, owner,
			 "{\"name\": \"grp\", \"schema\": {\"features\": 2, \"task\": \"binary\","
			 " \"group\": {\"groups\": 2}}, \"bounds\": {\"feature_l2\": 1}," BUDGET
			 "}",
			 g);
	put(g, "text/csv", "0.1,0.2,2,1\n", 400, "data", "line 1, column 3: the group");
	put(g, "text/x-libsvm", "1 1:0.1\n", 400, "data", "qid");
	put(g, "text/x-libsvm", "1 qid:2 1:0.1\n", 400, "data", "line 1, entry 2: the group");
	put(g, "text/x-libsvm", "0 qid:1 1:0.1\n", 400, "data", "line 1, entry 1: the label");
	put(g, "text/x-libsvm", "1 qid:1 1:0.1\n-1 qid:0 2:0.2\n", 200, NULL, NULL);

	/* categorical attributes, cells by label or index; no LIBSVM */
	h_dataset_create(
		&srv, owner,
		"{\"name\": \"cat\", \"schema\": {\"features\": 0, \"task\": \"unlabeled\","
		" \"categorical\": [{\"name\": \"colour\", \"labels\": [\"red\", \"green\"]},"
		" {\"name\": \"size\", \"size\": 3}]}, \"bounds\": {}," BUDGET "}",
		c);
	put(c, "text/x-libsvm", "1:1\n", 415, "Content-Type", "categorical");
	put(c, "text/csv", "colour,size\nred,2\nblue,0\n", 400, "data", "line 3, column 1");
	put(c, "text/csv", "colour,size\nred,3\n", 400, "data", "line 2, column 2");
	put(c, "text/csv", "colour,size\nred,2\n1,0\ngreen,1\n", 200, NULL, NULL);

	/* column blocks with their own bounds (saddle-point records) */
	h_dataset_create(
		&srv, owner,
		"{\"name\": \"blk\", \"schema\": {\"features\": 3, \"task\": \"unlabeled\","
		" \"blocks\": [{\"name\": \"a\", \"size\": 2, \"bounds\": {\"l2\": 1}},"
		" {\"name\": \"b\", \"size\": 1, \"bounds\": {\"linf\": 0.5}}]},"
		" \"bounds\": {\"feature_l2\": 2}," BUDGET "}",
		k);
	put(k, "text/csv", "3,4,9\n0.1,0.1,-0.2\n", 200, NULL, NULL);
	/* Stored clipped: (0.6, 0.8, 0.5) for the first row, up to the last
	 * two bytes of each little-endian double (rounding of the scaling). */
	ck_assert_int_eq(
		h_sql_ll(db,
			 "SELECT (substring(data from 3 for 6) = '\\x33333333e33f'::bytea"
			 " AND substring(data from 11 for 6) = '\\x99999999e93f'::bytea"
			 " AND substring(data from 17 for 8) = '\\x000000000000e03f'::bytea"
			 ")::int FROM dataset_chunks WHERE dataset_id = '%s'",
			 k),
		1);
}
END_TEST

/* n rows of d features: LIBSVM (sparse, ~d/3 non-zeros) or CSV; binary
 * labels, or class indices 0..k-1 when k > 0; the row norm stays below 1. */
static char *
rows_text(size_t n, size_t d, unsigned k, bool libsvm, unsigned seed)
{
	size_t cap = n * (d * 24 + 32) + 1, len = 0;
	char *t = malloc(cap);
	unsigned long long st = 0x9e3779b97f4a7c15ULL * (seed + 1);

	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < n; i++) {
		double x[64], z = 0.0;

		ck_assert_uint_le(d, 64);
		for (size_t j = 0; j < d; j++) {
			st ^= st << 13;
			st ^= st >> 7;
			st ^= st << 17;
			x[j] = (st % 3 == 0) ? ((double)(st >> 11) * 0x1p-53 - 0.5) / (double)d
					     : 0.0;
			z += (double)(j % 2 ? 1 : -1) * x[j];
		}
		if (libsvm) {
			len += (size_t)snprintf(t + len, cap - len, "%d",
						k > 0 ? (int)(i % k) : (z > 0 ? 1 : -1));
			for (size_t j = 0; j < d; j++)
				if (x[j] != 0.0)
					len += (size_t)snprintf(t + len, cap - len, " %zu:%.6f",
								j + 1, x[j]);
		} else {
			for (size_t j = 0; j < d; j++)
				len += (size_t)snprintf(t + len, cap - len, "%.6f,", x[j]);
			len += (size_t)snprintf(t + len, cap - len, "%d",
						k > 0 ? (int)(i % k) : (z > 0 ? 1 : -1));
		}
		t[len++] = '\n';
	}
	t[len] = '\0';
	return t;
}

/* Runs on a CSR dataset and on a multiclass one succeed, and the result
 * has the objective's dimension. */
START_TEST(test_runs_on_new_data)
{
	char a[40], m[40], run[40];
	char *svm = rows_text(2000, 20, 0, true, 1), *mc = rows_text(2000, 6, 3, false, 2);
	json_t *j;

	h_dataset_create(&srv, owner,
			 "{\"name\": \"svm\", \"schema\": {\"features\": 20, \"task\": \"binary\"},"
			 " \"bounds\": {\"feature_l2\": 1}," BUDGET "}",
			 a);
	put(a, "text/x-libsvm", svm, 200, NULL, NULL);
	state_is(a, "sealed", "csr");
	j = h_run_create(&srv, owner, a, H_RUN_BODY, run);
	json_decref(j);
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	ck_assert_uint_eq(json_array_size(h_get(j, "result.x")), 20);
	json_decref(j);

	h_dataset_create(
		&srv, owner,
		"{\"name\": \"mc\", \"schema\": {\"features\": 6, \"task\": \"multiclass\","
		" \"classes\": 3}, \"bounds\": {\"feature_l2\": 1}," BUDGET "}",
		m);
	put(m, "text/csv", mc, 200, NULL, NULL);
	j = h_run_create(&srv, owner, m,
			 "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\":"
			 " \"multiclass_logistic\", \"intercept\": true,"
			 " \"class_prior\": [0.3, 0.3, 0.4]},"
			 " \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 3}},"
			 " \"privacy\": {\"epsilon\": 0.5, \"delta\": 1e-7}}",
			 run);
	json_decref(j);
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	ck_assert_uint_eq(json_array_size(h_get(j, "result.x")), (6 + 1) * 3);
	json_decref(j);
	/* Both datasets were loaded once into the workers' cache. */
	{
		struct h_resp r;

		h_http(&srv, "GET", "/metrics", NULL, NULL, NULL, 0, NULL, &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_ptr_nonnull(
			strstr(r.body, "dpopt_dataset_cache_lookups_total{outcome=\"miss\"} 2\n"));
		ck_assert_ptr_nonnull(strstr(r.body, "dpopt_dataset_cache_entries 2\n"));
		h_resp_clear(&r);
	}
	free(svm);
	free(mc);
}
END_TEST

#define EVAL_RUN(id)                                                                               \
	"{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": \"logistic\"},"            \
	" \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 3}},"                       \
	" \"privacy\": {\"epsilon\": 0.1, \"delta\": 1e-7}, \"eval_dataset_id\": \"" id "\"}"

/* A run evaluated on a public dataset reports loss and accuracy there;
 * private, unknown or mismatched evaluation datasets are refused at
 * admission and nothing is charged. */
START_TEST(test_public_evaluation)
{
	char a[40], p[40], q[40], other[40], run[40], body[1024], path[128];
	char *train = rows_text(2000, 20, 0, false, 7), *test = rows_text(500, 20, 0, true, 8);
	char *small = rows_text(100, 5, 0, false, 9);
	json_t *j;
	double loss, acc;

	h_dataset_create(&srv, owner,
			 "{\"name\": \"train\", \"schema\": {\"features\": 20, \"task\": "
			 "\"binary\"}, \"bounds\": {\"feature_l2\": 1}," BUDGET "}",
			 a);
	put(a, "text/csv", train, 200, NULL, NULL);
	h_dataset_create(&srv, owner,
			 "{\"name\": \"test\", \"schema\": {\"features\": 20, \"task\": "
			 "\"binary\"}, \"bounds\": {\"feature_l2\": 1}, \"public\": true}",
			 p);
	put(p, "text/x-libsvm", test, 200, NULL, NULL);
	h_dataset_create(&srv, owner,
			 "{\"name\": \"small\", \"schema\": {\"features\": 5, \"task\": "
			 "\"binary\"}, \"bounds\": {\"feature_l2\": 1}, \"public\": true}",
			 q);
	put(q, "text/csv", small, 200, NULL, NULL);
	h_dataset_create(&srv, owner,
			 "{\"name\": \"private\", \"schema\": {\"features\": 20, \"task\": "
			 "\"binary\"}, \"bounds\": {\"feature_l2\": 1}," BUDGET "}",
			 other);

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	snprintf(body, sizeof(body), EVAL_RUN("%s"), other);
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "eval_dataset_id", "not public");
	snprintf(body, sizeof(body), EVAL_RUN("%s"), q);
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "eval_dataset_id", "features");
	snprintf(body, sizeof(body), EVAL_RUN("%s"), "00000000-0000-4000-8000-000000000000");
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "eval_dataset_id", NULL);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM runs WHERE dataset_id = '%s'", a), 0);

	snprintf(body, sizeof(body), EVAL_RUN("%s"), p);
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	ck_assert_str_eq(json_string_value(h_get(j, "result.evaluation.dataset_id")), p);
	ck_assert_int_eq(json_integer_value(h_get(j, "result.evaluation.n_rows")), 500);
	loss = json_number_value(h_get(j, "result.evaluation.loss"));
	acc = json_number_value(h_get(j, "result.evaluation.accuracy"));
	ck_assert(loss > 0.0 && loss < 5.0);
	ck_assert(acc >= 0.0 && acc <= 1.0);
	json_decref(j);
	free(train);
	free(test);
	free(small);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("data_model");
	TCase *tc = tcase_create("data_model");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_libsvm_upload);
	tcase_add_test(tc, test_rich_schema);
	tcase_add_test(tc, test_runs_on_new_data);
	tcase_add_test(tc, test_public_evaluation);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
