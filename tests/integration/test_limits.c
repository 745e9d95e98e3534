/*
 * test_limits.c - the limits admission enforces from public inputs:
 * delta sanity (docs/privacy-model.md §4.4: a budget delta >= 1/n fails the
 * seal, a run delta >= 1/n fails admission, unless the owner acknowledged
 * it at creation) and the work limit (DPOPT_MAX_RUN_WORK: 422 naming
 * params).  Every refusal leaves the ledger as it was.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static struct h_server srv;
static char db[512];
static char owner[128];

#define DS_BODY(delta, extra)                                                                      \
	"{\"name\": \"limits\", \"schema\": {\"features\": 5, \"task\": \"binary\"},"              \
	" \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": 1, \"delta\": " delta "},"    \
	" \"accounting_mode\": \"basic\"" extra "}"

static void
setup(void)
{
	/* 2000 rows of 5 features: a pass is 10^4 work units plus noise. */
	struct h_opts o = { .max_run_work = 20000.0 };

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, &o);
}

static void
teardown(void)
{
	h_server_stop_fixture(&srv, 30.0);
}

static void
put_csv(const char *ds, long want, const char *code, const char *field)
{
	char path[128];
	char *csv = h_csv(H_N, H_D, true, 7);

	snprintf(path, sizeof(path), "/v1/datasets/%s/data", ds);
	if (want == 200)
		h_upload(&srv, owner, ds, csv);
	else
		h_expect_error(&srv, "PUT", path, owner, "text/csv", csv, strlen(csv), NULL, want,
			       code, field, NULL);
	free(csv);
}

START_TEST(test_seal_refuses_large_budget_delta)
{
	char ds[40], path[128], state[32];
	json_t *j;

	/* 1e-3 >= 1/2000: the seal fails, nothing is kept, still unsealed. */
	h_dataset_create(&srv, owner, DS_BODY("1e-3", ""), ds);
	put_csv(ds, 422, "unprocessable", "budget.delta");
	h_sql(db, state, sizeof(state), "SELECT state FROM datasets WHERE id = '%s'", ds);
	ck_assert_str_eq(state, "created");
	ck_assert_int_eq(
		h_sql_ll(db, "SELECT count(*) FROM dataset_chunks WHERE dataset_id = '%s'", ds), 0);
	/* Lowered below 1/n, the same upload seals. */
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	j = h_json(&srv, "PATCH", path, owner, "{\"budget\": {\"epsilon\": 1, \"delta\": 1e-4}}",
		   200);
	json_decref(j);
	put_csv(ds, 200, NULL, NULL);
	/* Sealed, n is known: raising delta to 1/n or more is refused. */
	h_expect_error(&srv, "PATCH", path, owner, "application/json",
		       "{\"budget\": {\"epsilon\": 1, \"delta\": 1e-3}}",
		       strlen("{\"budget\": {\"epsilon\": 1, \"delta\": 1e-3}}"), NULL, 422,
		       "unprocessable", "budget.delta", "1/n");
}
END_TEST

START_TEST(test_acknowledged_large_delta)
{
	char ds[40], path[128];
	json_t *j;

	h_dataset_create(&srv, owner, DS_BODY("1e-3", ", \"acknowledge_large_delta\": true"), ds);
	put_csv(ds, 200, NULL, NULL);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	j = h_run_create(&srv, owner, ds,
			 "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": "
			 "\"logistic\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", "
			 "\"radius\": 3}}, \"privacy\": {\"epsilon\": 0.1, \"delta\": 5e-4}}",
			 NULL);
	ck_assert_ptr_nonnull(h_get(j, "id"));
	json_decref(j);
	h_expect_error(&srv, "POST", "/v1/datasets", owner, "application/json",
		       DS_BODY("1e-3", ", \"acknowledge_large_delta\": 1"),
		       strlen(DS_BODY("1e-3", ", \"acknowledge_large_delta\": 1")), NULL, 400,
		       "invalid_request", "acknowledge_large_delta", NULL);
}
END_TEST

START_TEST(test_run_delta_checked_against_n)
{
	char ds[40], path[128];
	const char *body = "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": "
			   "\"logistic\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", "
			   "\"radius\": 3}}, \"privacy\": {\"epsilon\": 0.1, \"delta\": 5e-4}}";

	h_dataset_create(&srv, owner, DS_BODY("1e-4", ""), ds);
	put_csv(ds, 200, NULL, NULL);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	/* 5e-4 = 1/2000 is not below 1/n. */
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 422,
		       "unprocessable", "privacy.delta", "1/n");
}
END_TEST

START_TEST(test_work_limit)
{
	char ds[40], path[128];
	const char *small = "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": "
			    "\"logistic\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", "
			    "\"radius\": 3}}, \"privacy\": {\"epsilon\": 0.1, \"delta\": 1e-6}}";
	const char *big = "{\"name\": \"wide\", \"schema\": {\"features\": 20, \"task\": "
			  "\"binary\"}, \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": "
			  "1, \"delta\": 1e-5}, \"accounting_mode\": \"basic\"}";
	char *csv;
	json_t *j;

	/* n d = 10^4 fits the limit of 2 10^4. */
	h_dataset_create(&srv, owner, DS_BODY("1e-4", ""), ds);
	put_csv(ds, 200, NULL, NULL);
	j = h_run_create(&srv, owner, ds, small, NULL);
	json_decref(j);
	/* n d = 4 10^4 does not. */
	h_dataset_create(&srv, owner, big, ds);
	csv = h_csv(H_N, 20, true, 11);
	h_upload(&srv, owner, ds, csv);
	free(csv);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	h_expect_error(&srv, "POST", path, owner, "application/json", small, strlen(small), NULL,
		       422, "unprocessable", "params", "DPOPT_MAX_RUN_WORK");
}
END_TEST

/* Budget laundering: the same rows, in another order and spelled
 * differently, cannot be sealed again by the same tenant under a second
 * budget; another tenant may (and learns nothing). */
START_TEST(test_same_rows_refused)
{
	char a[40], b[40], c[40], path[128], other[128], state[32];
	char *csv = h_csv(H_N, H_D, true, 21), *rev, *line, *save = NULL;
	size_t len = strlen(csv), used = 0;
	char **lines = calloc(H_N + 1, sizeof(*lines));
	size_t k = 0;

	ck_assert_ptr_nonnull(lines);
	h_dataset_create(&srv, owner, DS_BODY("1e-4", ""), a);
	h_upload(&srv, owner, a, csv);
	/* The same rows reversed, without the header, with "+" signs. */
	rev = malloc(2 * len + 1);
	ck_assert_ptr_nonnull(rev);
	for (line = strtok_r(csv, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
		lines[k++] = line;
	for (size_t i = k; i-- > 1;) {
		for (const char *p = lines[i]; *p != '\0'; p++) {
			if ((p == lines[i] || p[-1] == ',') && *p != '-')
				rev[used++] = '+';
			rev[used++] = *p;
		}
		rev[used++] = '\n';
	}
	rev[used] = '\0';
	h_dataset_create(&srv, owner, DS_BODY("1e-4", ""), b);
	snprintf(path, sizeof(path), "/v1/datasets/%s/data", b);
	h_expect_error(&srv, "PUT", path, owner, "text/csv", rev, used, NULL, 409, "conflict",
		       "data", a);
	h_sql(db, state, sizeof(state), "SELECT state FROM datasets WHERE id = '%s'", b);
	ck_assert_str_eq(state, "created");
	/* Another tenant's identical upload is its own business. */
	h_key_create(db, "globex", "owner", other, sizeof(other));
	h_dataset_create(&srv, other, DS_BODY("1e-4", ""), c);
	h_upload(&srv, other, c, rev);
	/* Deleting the first does not free the rows: its ledger lives on,
	 * and a fresh budget for the same people would launder it. */
	snprintf(path, sizeof(path), "/v1/datasets/%s", a);
	json_decref(h_json(&srv, "DELETE", path, owner, NULL, 204));
	snprintf(path, sizeof(path), "/v1/datasets/%s/data", b);
	h_expect_error(&srv, "PUT", path, owner, "text/csv", rev, used, NULL, 409, "conflict",
		       "data", "share_budget_with");
	free(rev);
	free(lines);
	free(csv);
}
END_TEST

#define SHARED_BODY(extra)                                                                         \
	"{\"name\": \"shared\", \"schema\": {\"features\": 5, \"task\": \"binary\"},"              \
	" \"bounds\": {\"feature_l2\": 1}" extra "}"

/* A duplicate linked to the existing ledger: both datasets pay from one
 * budget, the budget is changed only on the ledger's own dataset, and the
 * budget view of either shows the one ledger. */
START_TEST(test_shared_ledger)
{
	char a[40], s[40], x[40], body[512], path[160], out[256];
	char *csv = h_csv(H_N, H_D, true, 31);
	json_t *j;

	h_dataset_create(&srv, owner,
			 "{\"name\": \"root\", \"schema\": {\"features\": 5, \"task\": \"binary\"},"
			 " \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": 0.3,"
			 " \"delta\": 1e-4}, \"accounting_mode\": \"basic\"}",
			 a);
	h_upload(&srv, owner, a, csv);
	/* Refusals name their field and create nothing. */
	snprintf(body, sizeof(body),
		 SHARED_BODY(", \"share_budget_with\": \"%s\", \"budget\": {\"epsilon\": 1,"
			     " \"delta\": 1e-5}"),
		 a);
	h_expect_error(&srv, "POST", "/v1/datasets", owner, "application/json", body, strlen(body),
		       NULL, 400, "invalid_request", "budget", NULL);
	snprintf(body, sizeof(body),
		 SHARED_BODY(", \"share_budget_with\": \"%s\", \"accounting_mode\": \"renyi\""), a);
	h_expect_error(&srv, "POST", "/v1/datasets", owner, "application/json", body, strlen(body),
		       NULL, 400, "invalid_request", "accounting_mode", NULL);
	snprintf(body, sizeof(body),
		 SHARED_BODY(", \"share_budget_with\": \"00000000-0000-0000-0000-000000000000\""));
	h_expect_error(&srv, "POST", "/v1/datasets", owner, "application/json", body, strlen(body),
		       NULL, 400, "invalid_request", "share_budget_with", NULL);
	snprintf(body, sizeof(body), SHARED_BODY(", \"share_budget_with\": \"not-a-uuid\""));
	h_expect_error(&srv, "POST", "/v1/datasets", owner, "application/json", body, strlen(body),
		       NULL, 400, "invalid_request", "share_budget_with", NULL);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM datasets WHERE name = 'shared'"), 0);

	snprintf(body, sizeof(body), SHARED_BODY(", \"share_budget_with\": \"%s\""), a);
	h_dataset_create(&srv, owner, body, s);
	h_upload(&srv, owner, s, csv); /* the same rows: allowed on the same ledger */
	/* A dataset sharing s's budget shares a's: no chains. */
	snprintf(body, sizeof(body), SHARED_BODY(", \"share_budget_with\": \"%s\""), s);
	h_dataset_create(&srv, owner, body, x);
	h_sql(db, out, sizeof(out), "SELECT ledger_of FROM datasets WHERE id = '%s'", x);
	ck_assert_str_eq(out, a);

	snprintf(path, sizeof(path), "/v1/datasets/%s", s);
	j = h_json(&srv, "GET", path, owner, NULL, 200);
	ck_assert_str_eq(json_string_value(h_get(j, "budget_shared_with")), a);
	ck_assert_str_eq(json_string_value(h_get(j, "accounting_mode")), "basic");
	ck_assert_double_eq(json_number_value(h_get(j, "budget.epsilon.total")), 0.3);
	json_decref(j);

	/* 0.3 pays for three runs of 0.1, wherever they are submitted. */
	json_decref(h_run_create(&srv, owner, a, H_RUN_BODY, NULL));
	json_decref(h_run_create(&srv, owner, s, H_RUN_BODY, NULL));
	json_decref(h_run_create(&srv, owner, s, H_RUN_BODY, NULL));
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", s);
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "budget_exceeded", "privacy", NULL);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "budget_exceeded", "privacy", NULL);
	h_ledger_check(db, a, out, sizeof(out)); /* spent = the sum of the entries */
	ck_assert_str_eq(out, "0.3");
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s'"
				  " AND kind = 'charge'",
				  a),
			 3);

	snprintf(path, sizeof(path), "/v1/datasets/%s/budget", s);
	j = h_json(&srv, "GET", path, owner, NULL, 200);
	ck_assert_str_eq(json_string_value(h_get(j, "ledger_dataset_id")), a);
	ck_assert_int_eq(json_array_size(h_get(j, "entries")), 3);
	json_decref(j);

	/* The budget is changed on the ledger's own dataset only. */
	snprintf(path, sizeof(path), "/v1/datasets/%s", s);
	h_expect_error(&srv, "PATCH", path, owner, "application/json",
		       "{\"budget\": {\"epsilon\": 5, \"delta\": 1e-4}}",
		       strlen("{\"budget\": {\"epsilon\": 5, \"delta\": 1e-4}}"), NULL, 409,
		       "conflict", "budget", a);
	snprintf(path, sizeof(path), "/v1/datasets/%s", a);
	json_decref(h_json(&srv, "PATCH", path, owner,
			   "{\"budget\": {\"epsilon\": 0.4, \"delta\": 1e-4}}", 200));
	json_decref(h_run_create(&srv, owner, s, H_RUN_BODY, NULL));
	h_ledger_check(db, a, out, sizeof(out));
	ck_assert_str_eq(out, "0.4");
	free(csv);
}
END_TEST

#define PUBLIC_BODY(extra)                                                                         \
	"{\"name\": \"public\", \"schema\": {\"features\": 5, \"task\": \"binary\"},"              \
	" \"bounds\": {\"feature_l2\": 1}, \"public\": true" extra "}"

/* A public dataset has no budget and no runs, and cannot publish rows
 * that are one of the tenant's private datasets. */
START_TEST(test_public_dataset)
{
	char a[40], p[40], q[40], path[160];
	char *private_rows = h_csv(H_N, H_D, true, 41), *public_rows = h_csv(H_N, H_D, true, 42);
	const char *patch = "{\"budget\": {\"epsilon\": 5, \"delta\": 1e-4}}";
	json_t *j;

	h_dataset_create(&srv, owner, DS_BODY("1e-4", ""), a);
	h_upload(&srv, owner, a, private_rows);
	h_expect_error(&srv, "POST", "/v1/datasets", owner, "application/json",
		       PUBLIC_BODY(", \"budget\": {\"epsilon\": 1, \"delta\": 0}"),
		       strlen(PUBLIC_BODY(", \"budget\": {\"epsilon\": 1, \"delta\": 0}")), NULL,
		       400, "invalid_request", "budget", NULL);
	h_expect_error(&srv, "POST", "/v1/datasets", owner, "application/json",
		       DS_BODY("1e-4", ", \"public\": 1"),
		       strlen(DS_BODY("1e-4", ", \"public\": 1")), NULL, 400, "invalid_request",
		       "public", NULL);
	h_dataset_create(&srv, owner, PUBLIC_BODY(""), p);
	snprintf(path, sizeof(path), "/v1/datasets/%s", p);
	j = h_json(&srv, "GET", path, owner, NULL, 200);
	ck_assert(json_is_true(h_get(j, "public")));
	ck_assert(json_is_null(h_get(j, "budget")));
	json_decref(j);
	/* The private dataset's rows cannot become public... */
	snprintf(path, sizeof(path), "/v1/datasets/%s/data", p);
	h_expect_error(&srv, "PUT", path, owner, "text/csv", private_rows, strlen(private_rows),
		       NULL, 409, "conflict", "data", a);
	/* ...other rows can, and may be uploaded privately as well. */
	h_upload(&srv, owner, p, public_rows);
	h_dataset_create(&srv, owner, DS_BODY("1e-4", ""), q);
	h_upload(&srv, owner, q, public_rows);
	/* No runs, no budget, no PATCH. */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", p);
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "conflict", NULL, "public");
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", p);
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "conflict", NULL, "public");
	snprintf(path, sizeof(path), "/v1/datasets/%s/budget", p);
	h_expect_error(&srv, "GET", path, owner, NULL, NULL, 0, NULL, 409, "conflict", "dataset",
		       "public");
	snprintf(path, sizeof(path), "/v1/datasets/%s", p);
	h_expect_error(&srv, "PATCH", path, owner, "application/json", patch, strlen(patch), NULL,
		       409, "conflict", "budget", "public");
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM runs WHERE dataset_id = '%s'", p), 0);
	free(private_rows);
	free(public_rows);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("limits");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_seal_refuses_large_budget_delta);
	tcase_add_test(tc, test_acknowledged_large_delta);
	tcase_add_test(tc, test_run_delta_checked_against_n);
	tcase_add_test(tc, test_work_limit);
	tcase_add_test(tc, test_same_rows_refused);
	tcase_add_test(tc, test_shared_ledger);
	tcase_add_test(tc, test_public_dataset);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
