/*
 * test_limits.c - the limits admission enforces from public inputs:
 * delta sanity (ACCOUNTING.md section 4: a budget delta >= 1/n fails the
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
	/* Deleting the first lets the rows be sealed again. */
	snprintf(path, sizeof(path), "/v1/datasets/%s", a);
	json_decref(h_json(&srv, "DELETE", path, owner, NULL, 204));
	h_upload(&srv, owner, b, rev);
	free(rev);
	free(lines);
	free(csv);
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
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
