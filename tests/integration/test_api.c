/*
 * test_api.c - the HTTP API against a real dpoptd and a real PostgreSQL:
 * the run flow, budgets and the ledger, idempotency, tenants and roles,
 * every kind of bad input, pagination, deletion and the operational
 * endpoints.
 *
 * Each TCase gets a fresh database and its own dpoptd, started once in an
 * unchecked fixture (in the runner process) and stopped with SIGTERM,
 * which must end it cleanly (exit status 0, no sanitizer report).  Tests
 * in a TCase share the server but make their own datasets.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
/* RUN_VIEW_JSON: the expression runs.view must equal (a macro only). */
#include "../../service/run_view.h"

static struct h_server srv;
static char db[512];
static char owner[128];   /* tenant acme, owner */
static char analyst[128]; /* tenant acme, analyst */
static char other[128];   /* tenant globex, owner */

static void
setup_with(const struct h_opts *opts)
{
	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_key_create(db, "acme", "analyst", analyst, sizeof(analyst));
	h_key_create(db, "globex", "owner", other, sizeof(other));
	h_server_start(&srv, db, opts);
}

static void
setup(void)
{
	setup_with(NULL);
}

/* Small bodies, so that 413 is cheap to provoke. */
static void
setup_small_body(void)
{
	struct h_opts o = { .max_body_bytes = 4096 };

	setup_with(&o);
}

/* Exit status 0 and no sanitizer report, or h_finish() fails. */
static void
teardown(void)
{
	h_server_stop_fixture(&srv, 30.0);
}

/* A PATCH body and its length, for h_expect_error(). */
#define PATCH_BODY(eps)                                                                            \
	"{\"budget\": {\"epsilon\": " eps ", \"delta\": 1e-4}}",                                   \
		strlen("{\"budget\": {\"epsilon\": " eps ", \"delta\": 1e-4}}")

static double
num(json_t *j, const char *path)
{
	json_t *v = h_get(j, path);

	ck_assert_msg(json_is_number(v), "'%s' is not a number", path);
	return json_number_value(v);
}

static const char *
str(json_t *j, const char *path)
{
	json_t *v = h_get(j, path);

	ck_assert_msg(json_is_string(v), "'%s' is not a string", path);
	return json_string_value(v);
}

/* buf (an array) formatted from fmt and one id; evaluates to buf. */
#define path_of(buf, fmt, id) (snprintf(buf, sizeof(buf), fmt, id), buf)

/* Flow */

START_TEST(test_upload_run_result)
{
	char ds[40], run[40], path[128], spent[64], out[256];
	char *csv = h_csv(H_N, H_D, true, 7);
	struct h_resp r;
	json_t *j, *x;

	h_dataset_create(&srv, owner,
			 "{\"name\": \"flow\", \"schema\": {\"features\": 5, \"task\": \"binary\"},"
			 " \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": 1,"
			 " \"delta\": 1e-4}, \"accounting_mode\": \"basic\"}",
			 ds);
	path_of(path, "/v1/datasets/%s/data", ds);
	h_http(&srv, "PUT", path, owner, "text/csv", csv, strlen(csv), NULL, &r);
	ck_assert_msg(r.status == 200, "upload: %ld %s", r.status, h_short(r.body));
	ck_assert_int_eq((long long)num(r.json, "n_rows"), H_N);
	h_resp_clear(&r);
	free(csv);

	j = h_json(&srv, "GET", path_of(path, "/v1/datasets/%s", ds), owner, NULL, 200);
	ck_assert_str_eq(str(j, "state"), "sealed");
	ck_assert_int_eq((long long)num(j, "n_rows"), H_N);
	ck_assert_int_eq((long long)num(j, "schema.features"), H_D);
	json_decref(j);

	/* 202 with a Location to poll. */
	path_of(path, "/v1/datasets/%s/runs", ds);
	h_http(&srv, "POST", path, owner, "application/json", H_RUN_BODY, strlen(H_RUN_BODY), NULL,
	       &r);
	ck_assert_msg(r.status == 202, "run: %ld %s", r.status, h_short(r.body));
	snprintf(run, sizeof(run), "%s", str(r.json, "id"));
	snprintf(path, sizeof(path), "/v1/runs/%s", run);
	ck_assert_str_eq(r.location, path);
	/* The view is read after COMMIT: a worker may hold the run already. */
	ck_assert_msg(strcmp(str(r.json, "state"), "queued") == 0 ||
			      strcmp(str(r.json, "state"), "running") == 0 ||
			      strcmp(str(r.json, "state"), "succeeded") == 0,
		      "state after 202: %s", str(r.json, "state"));
	ck_assert_str_eq(r.replayed, "");
	ck_assert_double_eq(num(r.json, "privacy.charged.epsilon"), 0.1);
	h_resp_clear(&r);

	j = h_run_wait(&srv, owner, run, "succeeded", 60.0);
	x = h_get(j, "result.x");
	ck_assert_msg(json_is_array(x) && json_array_size(x) == H_D, "result.x: %zu numbers",
		      json_array_size(x));
	for (size_t i = 0; i < H_D; i++)
		ck_assert(json_is_number(json_array_get(x, i)) &&
			  isfinite(json_number_value(json_array_get(x, i))));
	ck_assert(json_is_object(h_get(j, "privacy.event")));
	ck_assert_str_eq(str(j, "privacy.event.type"), "parallel");
	ck_assert_double_eq(num(j, "privacy.charged.epsilon"), 0.1);
	ck_assert_double_eq(num(j, "privacy.charged.delta"), 1e-6);
	ck_assert(json_is_false(h_get(j, "privacy.refunded")));
	ck_assert(num(j, "progress.steps_total") > 0);
	ck_assert_double_eq(num(j, "progress.steps_done"), num(j, "progress.steps_total"));
	ck_assert(json_is_null(h_get(j, "error")));
	json_decref(j);

	/* The dataset's spent budget is the charge, in the view and the ledger. */
	j = h_json(&srv, "GET", path_of(path, "/v1/datasets/%s", ds), owner, NULL, 200);
	ck_assert_double_eq(num(j, "budget.epsilon.spent"), 0.1);
	ck_assert_double_eq_tol(num(j, "budget.epsilon.remaining"), 0.9, 1e-12);
	ck_assert_double_eq(num(j, "budget.delta.spent"), 1e-6);
	json_decref(j);
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.1");
	h_sql(db, out, sizeof(out),
	      "SELECT (r.charge_epsilon = d.spent_epsilon AND r.charge_delta = "
	      "d.spent_delta)::text,"
	      " r.attempts FROM runs r JOIN datasets d ON d.id = r.dataset_id WHERE r.id = '%s'",
	      run);
	ck_assert_str_eq(out, "true|1");

	/* The dataset's run list has it. */
	j = h_json(&srv, "GET", path_of(path, "/v1/datasets/%s/runs", ds), analyst, NULL, 200);
	ck_assert_int_eq(json_array_size(h_get(j, "items")), 1);
	ck_assert_str_eq(str(json_array_get(h_get(j, "items"), 0), "id"), run);
	ck_assert(json_is_null(h_get(j, "next_cursor")));
	json_decref(j);
}
END_TEST

/* Basic composition in exact decimals: ten charges of 0.1 fill 1.0. */
START_TEST(test_budget_exhausted)
{
	char ds[40], path[128], rem[128], want[256], spent[64], cursor[64] = "";
	char runs[10][40];
	int seen[10] = { 0 }, pages = 0;
	const char *half = "{\"budget\": {\"epsilon\": 2, \"delta\": 0.5}}";
	const char *no_delta = "{\"budget\": {\"epsilon\": 2}}";
	json_t *j;

	h_dataset_sealed(&srv, owner, "1.0", ds);
	for (int i = 0; i < 10; i++)
		json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, runs[i]));
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT (spent_epsilon = 1)::int FROM datasets"
				  " WHERE id = '%s'",
				  ds),
			 1);

	h_sql(db, rem, sizeof(rem),
	      "SELECT (budget_epsilon - spent_epsilon)::text, (budget_delta - spent_delta)::text"
	      " FROM datasets WHERE id = '%s'",
	      ds);
	*strchr(rem, '|') = ',';
	snprintf(want, sizeof(want), "the dataset has epsilon %.*s, delta %s remaining",
		 (int)(strchr(rem, ',') - rem), rem, strchr(rem, ',') + 1);
	path_of(path, "/v1/datasets/%s/runs", ds);
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "budget_exceeded", "privacy", want);
	/* The analyst is refused the same way. */
	h_expect_error(&srv, "POST", path, analyst, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "budget_exceeded", "privacy", "remaining");
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s'"
				  " AND kind = 'charge'",
				  ds),
			 10);

	/* The owner may raise the budget, never below what is spent. */
	path_of(path, "/v1/datasets/%s", ds);
	h_expect_error(&srv, "PATCH", path, owner, "application/json", PATCH_BODY("0.9"), NULL, 409,
		       "conflict", "budget", NULL);
	h_expect_error(&srv, "PATCH", path, owner, "application/json", half, strlen(half), NULL,
		       400, "invalid_request", "budget.delta", "budget.delta");
	h_expect_error(&srv, "PATCH", path, owner, "application/json", no_delta, strlen(no_delta),
		       NULL, 400, "invalid_request", "budget.delta", NULL);
	j = h_json(&srv, "PATCH", path, owner, "{\"budget\": {\"epsilon\": 1.1, \"delta\": 1e-4}}",
		   200);
	ck_assert_double_eq_tol(num(j, "budget.epsilon.remaining"), 0.1, 1e-12);
	json_decref(j);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, NULL));
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "1.1");
	path_of(path, "/v1/datasets/%s/runs", ds);
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "budget_exceeded", "privacy", "remaining");

	/* The run list, three at a time, has the first ten exactly once. */
	do {
		char p[256];
		json_t *items, *next;

		snprintf(p, sizeof(p), "/v1/datasets/%s/runs?limit=3%s%s", ds,
			 cursor[0] != '\0' ? "&cursor=" : "", cursor);
		j = h_json(&srv, "GET", p, analyst, NULL, 200);
		items = h_get(j, "items");
		for (size_t i = 0; i < json_array_size(items); i++)
			for (int k = 0; k < 10; k++)
				if (strcmp(str(json_array_get(items, i), "id"), runs[k]) == 0)
					seen[k]++;
		next = h_get(j, "next_cursor");
		snprintf(cursor, sizeof(cursor), "%s",
			 json_is_string(next) ? json_string_value(next) : "");
		json_decref(j);
		pages++;
	} while (cursor[0] != '\0');
	ck_assert_int_eq(pages, 4);
	for (int k = 0; k < 10; k++)
		ck_assert_int_eq(seen[k], 1);
}
END_TEST

START_TEST(test_idempotent_retry)
{
	char ds[40], ds2[40], path[128], spent[64], a[40], b[40];
	const char *const hdr[] = { "Idempotency-Key: retry-1", NULL };
	/* Same request, other member order and spacing. */
	const char *same = "{\"privacy\":{\"delta\":1e-6,\"epsilon\":0.1},\"algorithm\":"
			   "\"dp_sgd.one_pass\",\"constraints\":{\"x\":{\"radius\":3,\"kind\":"
			   "\"l2_ball\"}},\"objective\":{\"name\":\"logistic\"}}";
	const char *other_body = "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\":"
				 " \"logistic\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\","
				 " \"radius\": 3}}, \"privacy\": {\"epsilon\": 0.2, \"delta\":"
				 " 1e-6}}";
	struct h_resp r;

	h_dataset_sealed(&srv, owner, "1", ds);
	path_of(path, "/v1/datasets/%s/runs", ds);
	for (int i = 0; i < 3; i++) {
		const char *body = i == 2 ? same : H_RUN_BODY;

		h_http(&srv, "POST", path, i == 1 ? analyst : owner, "application/json", body,
		       strlen(body), hdr, &r);
		ck_assert_msg(r.status == 202, "try %d: %ld %s", i, r.status, h_short(r.body));
		ck_assert_str_eq(r.replayed, i == 0 ? "" : "true");
		snprintf(i == 0 ? a : b, 40, "%s", str(r.json, "id"));
		h_resp_clear(&r);
		if (i > 0)
			ck_assert_str_eq(b, a);
	}
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.1");
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM runs WHERE dataset_id = '%s'", ds), 1);

	/* The key with another body, or on another dataset, is a conflict. */
	h_expect_error(&srv, "POST", path, owner, "application/json", other_body,
		       strlen(other_body), hdr, 409, "conflict", "Idempotency-Key",
		       "Idempotency-Key");
	h_dataset_sealed(&srv, owner, "1", ds2);
	path_of(path, "/v1/datasets/%s/runs", ds2);
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), hdr, 409, "conflict", "Idempotency-Key",
		       "Idempotency-Key");
	/* A fresh key is a fresh run. */
	{
		const char *const hdr2[] = { "Idempotency-Key: retry-2", NULL };

		h_http(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), hdr2, &r);
		ck_assert_int_eq(r.status, 202);
		ck_assert_str_ne(str(r.json, "id"), a);
		h_resp_clear(&r);
	}
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.1");
	h_ledger_check(db, ds2, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.1");
}
END_TEST

START_TEST(test_delete_dataset)
{
	char ds[40], run[40], path[128], spent[64];

	h_dataset_sealed(&srv, owner, "1", ds);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, run));
	json_decref(h_run_wait(&srv, owner, run, "succeeded", 60.0));
	ck_assert_int_gt(
		h_sql_ll(db, "SELECT count(*) FROM dataset_chunks WHERE dataset_id = '%s'", ds), 0);

	path_of(path, "/v1/datasets/%s", ds);
	h_expect_error(&srv, "DELETE", path, analyst, NULL, NULL, 0, NULL, 403, "forbidden", NULL,
		       NULL);
	ck_assert_ptr_null(h_json(&srv, "DELETE", path, owner, NULL, 204));
	h_expect_error(&srv, "GET", path, owner, NULL, NULL, 0, NULL, 404, "not_found", NULL, NULL);
	h_expect_error(&srv, "DELETE", path, owner, NULL, NULL, 0, NULL, 404, "not_found", NULL,
		       NULL);
	h_expect_error(&srv, "POST", path_of(path, "/v1/datasets/%s/runs", ds), owner,
		       "application/json", H_RUN_BODY, strlen(H_RUN_BODY), NULL, 404, "not_found",
		       NULL, NULL);
	/* The rows are gone; the ledger history stays and still adds up. */
	ck_assert_int_eq(
		h_sql_ll(db, "SELECT count(*) FROM dataset_chunks WHERE dataset_id = '%s'", ds), 0);
	ck_assert_int_eq(
		h_sql_ll(db, "SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s'", ds), 1);
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.1");
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM datasets WHERE id = '%s'"
				  " AND state = 'deleted'",
				  ds),
			 1);
}
END_TEST

/* Tenants and roles */

START_TEST(test_other_tenant_sees_nothing)
{
	char ds[40], unsealed[40], run[40], path[128], body[512];
	char *csv = h_csv(50, H_D, true, 3);
	json_t *j;

	h_dataset_sealed(&srv, owner, "1", ds);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, run));
	snprintf(body, sizeof(body), H_DATASET_FMT, "unsealed", "1");
	h_dataset_create(&srv, owner, body, unsealed);

	path_of(path, "/v1/datasets/%s", ds);
	h_expect_error(&srv, "GET", path, other, NULL, NULL, 0, NULL, 404, "not_found", NULL, NULL);
	h_expect_error(&srv, "PATCH", path, other, "application/json", PATCH_BODY("9"), NULL, 404,
		       "not_found", NULL, NULL);
	h_expect_error(&srv, "DELETE", path, other, NULL, NULL, 0, NULL, 404, "not_found", NULL,
		       NULL);
	path_of(path, "/v1/datasets/%s/runs", ds);
	h_expect_error(&srv, "POST", path, other, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 404, "not_found", NULL, NULL);
	h_expect_error(&srv, "GET", path, other, NULL, NULL, 0, NULL, 404, "not_found", NULL, NULL);
	path_of(path, "/v1/datasets/%s/data", unsealed);
	h_expect_error(&srv, "PUT", path, other, "text/csv", csv, strlen(csv), NULL, 404,
		       "not_found", NULL, NULL);
	path_of(path, "/v1/runs/%s", run);
	h_expect_error(&srv, "GET", path, other, NULL, NULL, 0, NULL, 404, "not_found", NULL, NULL);
	h_expect_error(&srv, "DELETE", path, other, NULL, NULL, 0, NULL, 404, "not_found", NULL,
		       NULL);

	/* Nothing of acme in globex's list; acme's own data is untouched. */
	j = h_json(&srv, "GET", "/v1/datasets", other, NULL, 200);
	ck_assert_int_eq(json_array_size(h_get(j, "items")), 0);
	json_decref(j);
	j = h_json(&srv, "GET", path_of(path, "/v1/datasets/%s", unsealed), owner, NULL, 200);
	ck_assert_str_eq(str(j, "state"), "created");
	json_decref(j);
	json_decref(h_run_wait(&srv, owner, run, "succeeded", 60.0));
	h_upload(&srv, owner, unsealed, csv);
	free(csv);
}
END_TEST

START_TEST(test_analyst_role)
{
	char ds[40], unsealed[40], run[40], path[128], body[512];
	char *csv = h_csv(50, H_D, true, 4);
	json_t *j;

	h_dataset_sealed(&srv, owner, "1", ds);
	snprintf(body, sizeof(body), H_DATASET_FMT, "by-analyst", "1");
	h_expect_error(&srv, "POST", "/v1/datasets", analyst, "application/json", body,
		       strlen(body), NULL, 403, "forbidden", NULL, NULL);
	h_dataset_create(&srv, owner, body, unsealed);
	path_of(path, "/v1/datasets/%s/data", unsealed);
	h_expect_error(&srv, "PUT", path, analyst, "text/csv", csv, strlen(csv), NULL, 403,
		       "forbidden", NULL, NULL);
	free(csv);
	path_of(path, "/v1/datasets/%s", ds);
	h_expect_error(&srv, "DELETE", path, analyst, NULL, NULL, 0, NULL, 403, "forbidden", NULL,
		       NULL);
	h_expect_error(&srv, "PATCH", path, analyst, "application/json", PATCH_BODY("9"), NULL, 403,
		       "forbidden", NULL, NULL);

	/* Reads and runs are an analyst's job. */
	j = h_json(&srv, "GET", path, analyst, NULL, 200);
	ck_assert_str_eq(str(j, "id"), ds);
	ck_assert_double_eq(num(j, "budget.epsilon.total"), 1.0);
	json_decref(j);
	j = h_json(&srv, "GET", "/v1/datasets", analyst, NULL, 200);
	ck_assert_int_ge(json_array_size(h_get(j, "items")), 2);
	json_decref(j);
	json_decref(h_run_create(&srv, analyst, ds, H_RUN_BODY, run));
	json_decref(h_run_wait(&srv, analyst, run, "succeeded", 60.0));
	j = h_json(&srv, "GET", "/v1/algorithms", analyst, NULL, 200);
	json_decref(j);
}
END_TEST

START_TEST(test_keys_required)
{
	static const char *const bad[] = {
		NULL,
		"Basic dXNlcjpwYXNz",
		"Bearer",
		"Bearer not-a-key",
		/* well formed, unknown */
		"Bearer dpk_0123456789abcdef_0123456789abcdef0123456789abcdef0123456789abcdef"
		"0123456789abcdef",
		/* upper-case hex is not a key */
		"Bearer dpk_0123456789ABCDEF_0123456789abcdef0123456789abcdef0123456789abcdef"
		"0123456789abcdef",
	};
	char ds[40], path[128], forged[128], hdr[160], run[40];
	json_t *r;

	h_dataset_sealed(&srv, owner, "1", ds);
	r = h_run_create(&srv, owner, ds, H_RUN_BODY, run);
	json_decref(r);
	/* The real key reads both (the keyed reads below refuse the rest). */
	json_decref(h_json(&srv, "GET", path_of(path, "/v1/runs/%s", run), owner, NULL, 200));
	json_decref(
		h_json(&srv, "GET", path_of(path, "/v1/datasets/%s/budget", ds), owner, NULL, 200));
	/* A real key id with another secret. */
	snprintf(forged, sizeof(forged), "%s", owner);
	forged[strlen(forged) - 1] = forged[strlen(forged) - 1] == '0' ? '1' : '0';
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]) + 1; i++) {
		const char *h = i < sizeof(bad) / sizeof(bad[0]) ? bad[i] : NULL;
		const char *const headers[] = { hdr, NULL };

		if (i == sizeof(bad) / sizeof(bad[0]))
			snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", forged);
		else
			snprintf(hdr, sizeof(hdr), "Authorization: %s", h != NULL ? h : "");
		path_of(path, "/v1/datasets/%s", ds);
		h_expect_error(&srv, "GET", path, NULL, NULL, NULL, 0, i == 0 ? NULL : headers, 401,
			       "unauthenticated", "Authorization", NULL);
		path_of(path, "/v1/datasets/%s/runs", ds);
		h_expect_error(&srv, "POST", path, NULL, "application/json", H_RUN_BODY,
			       strlen(H_RUN_BODY), i == 0 ? NULL : headers, 401, "unauthenticated",
			       "Authorization", NULL);
		h_expect_error(&srv, "GET", "/v1/algorithms", NULL, NULL, NULL, 0,
			       i == 0 ? NULL : headers, 401, "unauthenticated", "Authorization",
			       NULL);
		/* The reads that check their key in their own statement
		 * (ROUTE_KEY_IN_READ): 401 before anything else, for a real
		 * resource, a missing one, a malformed id or a bad parameter. */
		char keyed[6][160];

		snprintf(keyed[0], sizeof(keyed[0]), "/v1/datasets/%s/budget", ds);
		snprintf(keyed[1], sizeof(keyed[1]), "/v1/datasets/%s/budget?limit=0", ds);
		snprintf(keyed[2], sizeof(keyed[2]), "/v1/datasets/%s/budget?cursor=x", ds);
		snprintf(keyed[3], sizeof(keyed[3]), "/v1/runs/%s", run);
		snprintf(keyed[4], sizeof(keyed[4]), "/v1/runs/not-a-uuid");
		snprintf(keyed[5], sizeof(keyed[5]),
			 "/v1/runs/00000000-0000-4000-8000-000000000000");
		for (size_t k = 0; k < sizeof(keyed) / sizeof(*keyed); k++) {
			h_expect_error(&srv, "GET", keyed[k], NULL, NULL, NULL, 0,
				       i == 0 ? NULL : headers, 401, "unauthenticated",
				       "Authorization", NULL);
		}
	}
}
END_TEST

/* Bad input: every one names its field and leaves the ledger alone
 * (h_expect_error checks both). */

#define DS_OK_SCHEMA "\"schema\": {\"features\": 5, \"task\": \"binary\"}"
#define DS_OK_BOUNDS "\"bounds\": {\"feature_l2\": 1}"
#define DS_OK_BUDGET "\"budget\": {\"epsilon\": 1, \"delta\": 1e-4}"

static void
bad_dataset(const char *body, long status, const char *code, const char *field,
	    const char *msg_part)
{
	h_expect_error(&srv, "POST", "/v1/datasets", owner, "application/json", body, strlen(body),
		       NULL, status, code, field, msg_part);
}

START_TEST(test_bad_dataset_requests)
{
	long long before = h_sql_ll(db, "SELECT count(*) FROM datasets");

	bad_dataset("{\"name\": \"x\",", 400, "invalid_request", "body", "not valid JSON");
	bad_dataset("", 400, "invalid_request", "body", NULL);
	bad_dataset("[1, 2]", 400, "invalid_request", "body", NULL);
	bad_dataset("{\"name\": \"a\", \"name\": \"b\"}", 400, "invalid_request", "body", NULL);
	bad_dataset("{\"name\": \"x\", " DS_OK_SCHEMA ", " DS_OK_BOUNDS ", " DS_OK_BUDGET
		    ", \"colour\": \"red\"}",
		    400, "invalid_request", "colour", "colour");
	bad_dataset("{\"name\": \"x\", \"schema\": {\"task\": \"binary\"}, " DS_OK_BOUNDS
		    ", " DS_OK_BUDGET "}",
		    400, "invalid_request", "schema.features", "schema.features");
	bad_dataset("{\"name\": \"x\", \"schema\": {\"features\": 0, \"task\": "
		    "\"binary\"}, " DS_OK_BOUNDS ", " DS_OK_BUDGET "}",
		    400, "invalid_request", "schema.features", NULL);
	bad_dataset("{\"name\": \"x\", \"schema\": {\"features\": 5, \"task\": "
		    "\"ranking\"}, " DS_OK_BOUNDS ", " DS_OK_BUDGET "}",
		    400, "invalid_request", "schema.task", "schema.task");
	bad_dataset("{\"name\": \"x\", \"schema\": {\"features\": 5, \"task\": "
		    "\"multiclass\"}, " DS_OK_BOUNDS ", " DS_OK_BUDGET "}",
		    400, "invalid_request", "schema.classes", "schema.classes");
	/* Regression labels need a declared bound: clipping enforces it. */
	bad_dataset("{\"name\": \"x\", \"schema\": {\"features\": 5, \"task\": "
		    "\"regression\"}, " DS_OK_BOUNDS ", " DS_OK_BUDGET "}",
		    400, "invalid_request", "bounds.label", "bounds.label");
	bad_dataset("{\"name\": \"x\", " DS_OK_SCHEMA ", \"bounds\": {}, " DS_OK_BUDGET "}", 400,
		    "invalid_request", "bounds.feature_l2", "feature bound");
	bad_dataset("{\"name\": \"x\", " DS_OK_SCHEMA ", \"bounds\": {\"label\": 1}, " DS_OK_BUDGET
		    "}",
		    400, "invalid_request", "bounds.feature_l2", NULL);
	bad_dataset("{\"name\": \"x\", " DS_OK_SCHEMA ", " DS_OK_BOUNDS
		    ", \"budget\": {\"epsilon\": -1, \"delta\": 1e-4}}",
		    400, "invalid_request", "budget.epsilon", "budget.epsilon");
	bad_dataset("{\"name\": \"x\", " DS_OK_SCHEMA ", " DS_OK_BOUNDS
		    ", \"budget\": {\"epsilon\": 0, \"delta\": 1e-4}}",
		    400, "invalid_request", "budget.epsilon", NULL);
	bad_dataset("{\"name\": \"x\", " DS_OK_SCHEMA ", " DS_OK_BOUNDS
		    ", \"budget\": {\"epsilon\": 1, \"delta\": 0.5}}",
		    400, "invalid_request", "budget.delta", "budget.delta");
	bad_dataset("{\"name\": \"x\", " DS_OK_SCHEMA ", " DS_OK_BOUNDS
		    ", \"budget\": {\"epsilon\": 1, \"delta\": 0.7}}",
		    400, "invalid_request", "budget.delta", NULL);
	bad_dataset("{\"name\": \"x\", " DS_OK_SCHEMA ", " DS_OK_BOUNDS ", " DS_OK_BUDGET
		    ", \"accounting_mode\": \"advanced\"}",
		    400, "invalid_request", "accounting_mode", NULL);
	/* A Rényi filter cannot promise delta = 0. */
	bad_dataset("{\"name\": \"x\", " DS_OK_SCHEMA ", " DS_OK_BOUNDS
		    ", \"budget\": {\"epsilon\": 1, \"delta\": 0}, \"accounting_mode\": \"renyi\"}",
		    400, "invalid_request", "budget.delta", "renyi");
	/* Content types. */
	h_expect_error(&srv, "POST", "/v1/datasets", owner, "text/plain", "{}", 2, NULL, 415,
		       "unsupported_media_type", "Content-Type", "application/json");
	h_expect_error(&srv, "POST", "/v1/datasets", owner, NULL, "{}", 2, NULL, 415,
		       "unsupported_media_type", "Content-Type", NULL);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM datasets"), before);
}
END_TEST

START_TEST(test_bad_csv)
{
	static const struct {
		const char *csv;
		const char *msg_part;
	} cases[] = {
		/* ragged: a seventh cell on line 3 (the header is line 1) */
		{ "a,b,c,d,e,y\n0.1,0.1,0.1,0.1,0.1,1\n0.1,0.1,0.1,0.1,0.1,1,7\n",
		  "line 3, column 7" },
		/* short row */
		{ "0.1,0.1,0.1,0.1,0.1,1\n0.1,0.1,0.1\n", "line 2, column 4" },
		{ "0.1,0.1,abc,0.1,0.1,1\n", "line 1, column 3: not a number" },
		{ "0.1,0.1,0.1,0.1,0.1,1\n0.1,NaN,0.1,0.1,0.1,1\n",
		  "line 2, column 2: not a finite" },
		{ "0.1,0.1,0.1,0.1,0.1,inf\n", "line 1, column 6: not a finite" },
		{ "", "no data rows" },
		{ "a,b,c,d,e,y\n", "no data rows" },
		{ "0.1,0.1,0.1,0.1,0.1,1\n\n0.1,0.1,0.1,0.1,0.1,1\n", "line 2: empty line" },
		/* binary labels are -1 or 1: the message names the label column */
		{ "0.1,0.1,0.1,0.1,0.1,1\n0.1,0.1,0.1,0.1,0.1,0.5\n", "line 2, column 6" },
		{ "0.1,0.1,0.1,0.1,0.1,0\n", "the label must be -1 or 1" },
	};
	char ds[40], path[128], body[512];
	char *good = h_csv(H_N, H_D, true, 5);
	json_t *j;

	snprintf(body, sizeof(body), H_DATASET_FMT, "csv", "1");
	h_dataset_create(&srv, owner, body, ds);
	path_of(path, "/v1/datasets/%s/data", ds);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		h_expect_error(&srv, "PUT", path, owner, "text/csv", cases[i].csv,
			       strlen(cases[i].csv), NULL, 400, "invalid_request", "data",
			       cases[i].msg_part);
		ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM dataset_chunks"), 0);
	}

	/* A bad row after more than one 4 MiB chunk: what was written is
	 * rolled back too. */
	{
		size_t n = 100000, len;
		char *big = h_csv(n, H_D, true, 6);

		len = strlen(big);
		big = realloc(big, len + 64);
		ck_assert_ptr_nonnull(big);
		strcpy(big + len, "0.1,0.1,x,0.1,0.1,1\n");
		h_expect_error(&srv, "PUT", path, owner, "text/csv", big, strlen(big), NULL, 400,
			       "invalid_request", "data", "line 100002, column 3");
		free(big);
		ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM dataset_chunks"), 0);
	}

	h_expect_error(&srv, "PUT", path, owner, "application/json", good, strlen(good), NULL, 415,
		       "unsupported_media_type", "Content-Type", "text/csv");
	h_expect_error(&srv, "PUT", path, owner, NULL, good, strlen(good), NULL, 415,
		       "unsupported_media_type", "Content-Type", NULL);

	/* Still unsealed after all that: a good upload goes through, once. */
	j = h_json(&srv, "GET", path_of(path, "/v1/datasets/%s", ds), owner, NULL, 200);
	ck_assert_str_eq(str(j, "state"), "created");
	json_decref(j);
	h_upload(&srv, owner, ds, good);
	path_of(path, "/v1/datasets/%s/data", ds);
	h_expect_error(&srv, "PUT", path, owner, "text/csv", good, strlen(good), NULL, 409,
		       "conflict", NULL, "sealed");
	free(good);
	ck_assert_int_eq(h_sql_ll(db, "SELECT n_rows FROM datasets WHERE id = '%s'", ds), H_N);
}
END_TEST

static void
bad_run(const char *ds, const char *body, long status, const char *code, const char *field,
	const char *msg_part)
{
	char path[128];

	path_of(path, "/v1/datasets/%s/runs", ds);
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL,
		       status, code, field, msg_part);
}

#define RUN_HEAD "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": \"logistic\"}, "
#define RUN_X    "\"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 3}}"
#define RUN_PRIV "\"privacy\": {\"epsilon\": 0.1, \"delta\": 1e-6}"

START_TEST(test_bad_run_requests)
{
	char ds[40], reg[40], unsealed[40], path[128], body[512];
	char big[6000];
	char *csv = h_csv(H_N, H_D, false, 8);
	const char *const chunked[] = { "Transfer-Encoding: chunked", NULL };
	char long_key[260];
	const char *const long_key_hdr[] = { long_key, NULL };

	h_dataset_sealed(&srv, owner, "1", ds);
	h_dataset_create(
		&srv, owner,
		"{\"name\": \"reg\", \"schema\": {\"features\": 5, \"task\": \"regression\"},"
		" \"bounds\": {\"feature_l2\": 1, \"label\": 1}, \"budget\": {\"epsilon\": 1,"
		" \"delta\": 1e-4}}",
		reg);
	h_upload(&srv, owner, reg, csv);
	free(csv);
	snprintf(body, sizeof(body), H_DATASET_FMT, "unsealed", "1");
	h_dataset_create(&srv, owner, body, unsealed);

	bad_run(ds, "{", 400, "invalid_request", "body", NULL);
	bad_run(ds,
		"{\"algorithm\": \"dp_sgd.two_pass\", \"objective\": {\"name\": "
		"\"logistic\"}, " RUN_X ", " RUN_PRIV "}",
		400, "invalid_request", "algorithm", "dp_sgd.two_pass");
	bad_run(ds, RUN_HEAD RUN_X ", " RUN_PRIV ", \"seed\": 1}", 400, "invalid_request", "seed",
		NULL);
	bad_run(ds, RUN_HEAD RUN_X ", " RUN_PRIV ", \"params\": {\"momentum\": 0.9}}", 400,
		"invalid_request", "params.momentum", "params.momentum");
	bad_run(ds, RUN_HEAD RUN_X ", " RUN_PRIV ", \"params\": {\"batch_size\": 100000000}}", 400,
		"invalid_request", "params.batch_size", NULL);
	bad_run(ds, RUN_HEAD RUN_X ", " RUN_PRIV ", \"params\": {\"batch_size\": -1}}", 400,
		"invalid_request", "params.batch_size", NULL);
	bad_run(ds, RUN_HEAD RUN_X ", " RUN_PRIV ", \"params\": {\"batch_size\": 2.5}}", 400,
		"invalid_request", "params.batch_size", NULL);
	/* More records per batch than the dataset has: known only from n. */
	bad_run(ds, RUN_HEAD RUN_X ", " RUN_PRIV ", \"params\": {\"batch_size\": 2001}}", 400,
		"invalid_request", "params.batch_size", "2001");
	bad_run(ds,
		RUN_HEAD "\"constraints\": {\"x\": {\"kind\": \"lp_ball\", \"radius\": 3, \"p\": "
			 "3}}, " RUN_PRIV "}",
		400, "invalid_request", "constraints.x.p", NULL);
	bad_run(ds,
		RUN_HEAD
		"\"constraints\": {\"x\": {\"kind\": \"sphere\", \"radius\": 3}}, " RUN_PRIV "}",
		400, "invalid_request", "constraints.x.kind", NULL);
	bad_run(ds,
		RUN_HEAD
		"\"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 0}}, " RUN_PRIV "}",
		400, "invalid_request", "constraints.x.radius", NULL);
	bad_run(ds, RUN_HEAD RUN_X ", \"privacy\": {\"epsilon\": 0, \"delta\": 1e-6}}", 400,
		"invalid_request", "privacy.epsilon", "privacy.epsilon");
	bad_run(ds, RUN_HEAD RUN_X ", \"privacy\": {\"epsilon\": -0.5, \"delta\": 1e-6}}", 400,
		"invalid_request", "privacy.epsilon", NULL);
	bad_run(ds, RUN_HEAD RUN_X ", \"privacy\": {\"delta\": 1e-6}}", 400, "invalid_request",
		"privacy.epsilon", NULL);
	bad_run(ds, RUN_HEAD RUN_X ", \"privacy\": {\"epsilon\": 0.1, \"delta\": 0}}", 400,
		"invalid_request", "privacy.delta", NULL);
	bad_run(ds,
		"{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\":"
		" \"svm\"}, " RUN_X ", " RUN_PRIV "}",
		400, "invalid_request", "objective.name", "svm");
	bad_run(ds,
		"{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\":"
		" \"logistic\", \"ridge\": -1}, " RUN_X ", " RUN_PRIV "}",
		400, "invalid_request", "objective.ridge", NULL);
	bad_run(ds,
		"{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\":"
		" \"logistic\", \"bias\": true}, " RUN_X ", " RUN_PRIV "}",
		400, "invalid_request", "objective.bias", NULL);
	bad_run(ds,
		"{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\":"
		" \"logistic\", \"group_proportions\": [0.5, 0.5]}, " RUN_X ", " RUN_PRIV "}",
		400, "invalid_request", "objective.group_proportions", NULL);
	bad_run(reg, H_RUN_BODY, 400, "invalid_request", "objective.name", NULL);
	bad_run(unsealed, H_RUN_BODY, 409, "conflict", NULL, "no data");
	bad_run("00000000-0000-4000-8000-000000000000", H_RUN_BODY, 404, "not_found", NULL, NULL);

	path_of(path, "/v1/datasets/%s/runs", ds);
	h_expect_error(&srv, "POST", path, owner, "text/plain", H_RUN_BODY, strlen(H_RUN_BODY),
		       NULL, 415, "unsupported_media_type", "Content-Type", NULL);
	snprintf(long_key, sizeof(long_key), "Idempotency-Key: %0201d", 7);
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), long_key_hdr, 400, "invalid_request", "Idempotency-Key",
		       NULL);

	/* Over DPOPT_MAX_BODY_BYTES (4096 here): by Content-Length, and by
	 * counting a chunked body. */
	memset(big, ' ', sizeof(big));
	memcpy(big, H_RUN_BODY, strlen(H_RUN_BODY));
	h_expect_error(&srv, "POST", path, owner, "application/json", big, sizeof(big), NULL, 413,
		       "body_too_large", NULL, NULL);
	h_expect_error(&srv, "POST", path, owner, "application/json", big, sizeof(big), chunked,
		       413, "body_too_large", NULL, NULL);
	/* Under the limit, chunked, with blanks: fine. */
	{
		struct h_resp r;

		h_http(&srv, "POST", path, owner, "application/json", big, 4000, chunked, &r);
		ck_assert_msg(r.status == 202, "%ld %s", r.status, h_short(r.body));
		h_resp_clear(&r);
	}
}
END_TEST

/* An Allow header of exactly the methods a and b, in any order. */
static bool
allow_is(const char *allow, const char *a, const char *b)
{
	char ab[64], ba[64];

	snprintf(ab, sizeof(ab), "%s, %s", a, b);
	snprintf(ba, sizeof(ba), "%s, %s", b, a);
	return strcmp(allow, ab) == 0 || strcmp(allow, ba) == 0;
}

START_TEST(test_bad_routes)
{
	char ds[40], path[160];

	h_dataset_sealed(&srv, owner, "1", ds);
	h_expect_error(&srv, "GET", "/v1/nothing", owner, NULL, NULL, 0, NULL, 404, "not_found",
		       NULL, NULL);
	h_expect_error(&srv, "GET", "/", NULL, NULL, NULL, 0, NULL, 404, "not_found", NULL, NULL);
	/* A known path with another method: 405 and the methods it has. */
	h_expect_error(&srv, "POST", "/healthz", NULL, "application/json", "{}", 2, NULL, 405,
		       "method_not_allowed", NULL, "GET");
	h_expect_error(&srv, "PUT", "/v1/datasets", owner, "application/json", "{}", 2, NULL, 405,
		       "method_not_allowed", NULL, NULL);
	{
		struct h_resp r;

		h_http(&srv, "PUT", "/v1/datasets", owner, "application/json", "{}", 2, NULL, &r);
		ck_assert_int_eq(r.status, 405);
		ck_assert(allow_is(r.allow, "GET", "POST"));
		h_resp_clear(&r);
		snprintf(path, sizeof(path), "/v1/runs/%s", ds);
		h_http(&srv, "PATCH", path, owner, "application/json", "{}", 2, NULL, &r);
		ck_assert_int_eq(r.status, 405);
		ck_assert(allow_is(r.allow, "GET", "DELETE"));
		h_resp_clear(&r);
	}
	h_expect_error(&srv, "GET", "/v1/datasets/not-a-uuid", owner, NULL, NULL, 0, NULL, 404,
		       "not_found", NULL, NULL);
	h_expect_error(&srv, "GET", "/v1/runs/12345", owner, NULL, NULL, 0, NULL, 404, "not_found",
		       NULL, NULL);
	h_expect_error(&srv, "DELETE", "/v1/runs/zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", owner, NULL,
		       NULL, 0, NULL, 404, "not_found", NULL, NULL);
	h_expect_error(&srv, "GET", "/v1/datasets/00000000-0000-4000-8000-000000000000-0", owner,
		       NULL, NULL, 0, NULL, 404, "not_found", NULL, NULL);
	h_expect_error(&srv, "POST", "/v1/datasets/not-a-uuid/runs", owner, "application/json",
		       H_RUN_BODY, strlen(H_RUN_BODY), NULL, 404, "not_found", NULL, NULL);
	h_expect_error(&srv, "PUT", "/v1/datasets/not-a-uuid/data", owner, "text/csv", "1\n", 2,
		       NULL, 404, "not_found", NULL, NULL);
	/* Upper case is not the canonical form. */
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	for (char *p = path + strlen("/v1/datasets/"); *p != '\0'; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	h_expect_error(&srv, "GET", path, owner, NULL, NULL, 0, NULL, 404, "not_found", NULL, NULL);

	h_expect_error(&srv, "GET", "/v1/datasets?limit=0", owner, NULL, NULL, 0, NULL, 400,
		       "invalid_request", "limit", "limit");
	h_expect_error(&srv, "GET", "/v1/datasets?limit=101", owner, NULL, NULL, 0, NULL, 400,
		       "invalid_request", "limit", NULL);
	h_expect_error(&srv, "GET", "/v1/datasets?limit=2x", owner, NULL, NULL, 0, NULL, 400,
		       "invalid_request", "limit", NULL);
	h_expect_error(&srv, "GET", "/v1/datasets?cursor=nope", owner, NULL, NULL, 0, NULL, 400,
		       "invalid_request", "cursor", NULL);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs?limit=0", ds);
	h_expect_error(&srv, "GET", path, owner, NULL, NULL, 0, NULL, 400, "invalid_request",
		       "limit", NULL);
}
END_TEST

/* Pagination */

START_TEST(test_pagination)
{
	char key[128], ids[5][40], body[512], path[256], cursor[64] = "";
	int seen[5] = { 0 }, pages = 0, total = 0;

	h_key_create(db, "pager", "owner", key, sizeof(key));
	for (int i = 0; i < 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "page-%d", i);
		snprintf(body, sizeof(body), H_DATASET_FMT, name, "1");
		h_dataset_create(&srv, key, body, ids[i]);
	}
	do {
		json_t *j, *items, *next;

		snprintf(path, sizeof(path), "/v1/datasets?limit=2%s%s",
			 cursor[0] != '\0' ? "&cursor=" : "", cursor);
		j = h_json(&srv, "GET", path, key, NULL, 200);
		items = h_get(j, "items");
		ck_assert_int_le(json_array_size(items), 2);
		for (size_t i = 0; i < json_array_size(items); i++) {
			const char *id = str(json_array_get(items, i), "id");
			bool known = false;

			for (int k = 0; k < 5; k++) {
				if (strcmp(id, ids[k]) == 0) {
					seen[k]++;
					known = true;
				}
			}
			ck_assert_msg(known, "unknown dataset %s in the list", id);
			total++;
		}
		next = h_get(j, "next_cursor");
		ck_assert(json_is_string(next) || json_is_null(next));
		snprintf(cursor, sizeof(cursor), "%s",
			 json_is_string(next) ? json_string_value(next) : "");
		json_decref(j);
		ck_assert_int_lt(++pages, 10);
	} while (cursor[0] != '\0');
	ck_assert_int_eq(pages, 3);
	ck_assert_int_eq(total, 5);
	for (int k = 0; k < 5; k++)
		ck_assert_msg(seen[k] == 1, "dataset %d seen %d times", k, seen[k]);
}
END_TEST

/* The budget's entries come in pages: a bounded response whatever the
 * history.  2,501 entries (one real charge, copied in by SQL: the view
 * shows entries, it does not add them up) are read in pages of 1000, each
 * once, in order; the default page is 100; a bad limit or cursor is 400
 * naming it. */
START_TEST(test_budget_pages)
{
	char key[128], ds[40], path[256], cursor[64] = "", run[40];
	long long first_id, expect_id;
	int pages = 0, total = 0;
	json_t *j, *r;

	h_key_create(db, "ledgerpager", "owner", key, sizeof(key));
	h_dataset_sealed(&srv, key, "1000", ds);
	r = h_run_create(&srv, key, ds, H_RUN_BODY, run);
	json_decref(r);
	h_sql_ll(db,
		 "WITH c AS (INSERT INTO ledger_entries (dataset_id, run_id, kind, epsilon, delta,"
		 " event, rdp) SELECT l.dataset_id, l.run_id, l.kind, l.epsilon, l.delta, l.event,"
		 " l.rdp FROM ledger_entries l, generate_series(1, 2500)"
		 " WHERE l.dataset_id = '%s' RETURNING 1) SELECT count(*) FROM c",
		 ds);
	first_id = h_sql_ll(db, "SELECT min(id) FROM ledger_entries WHERE dataset_id = '%s'", ds);
	expect_id = first_id;

	/* The default page: 100 entries and a cursor. */
	j = h_json(&srv, "GET", path_of(path, "/v1/datasets/%s/budget", ds), key, NULL, 200);
	ck_assert_int_eq(json_array_size(h_get(j, "entries")), 100);
	ck_assert(json_is_string(h_get(j, "next_cursor")));
	ck_assert_double_eq_tol(num(j, "spent.epsilon"), 0.1, 1e-12);
	json_decref(j);

	do {
		json_t *entries, *next;

		snprintf(path, sizeof(path), "/v1/datasets/%s/budget?limit=1000%s%s", ds,
			 cursor[0] != '\0' ? "&cursor=" : "", cursor);
		j = h_json(&srv, "GET", path, key, NULL, 200);
		entries = h_get(j, "entries");
		ck_assert_int_le(json_array_size(entries), 1000);
		for (size_t i = 0; i < json_array_size(entries); i++) {
			ck_assert_str_eq(str(json_array_get(entries, i), "run_id"), run);
			total++;
		}
		next = h_get(j, "next_cursor");
		ck_assert(json_is_string(next) || json_is_null(next));
		if (json_is_string(next)) {
			/* the id of the page's last entry: pages neither skip nor repeat */
			expect_id += (long long)json_array_size(entries);
			ck_assert_int_eq(atoll(json_string_value(next)), expect_id - 1);
		}
		snprintf(cursor, sizeof(cursor), "%s",
			 json_is_string(next) ? json_string_value(next) : "");
		json_decref(j);
		ck_assert_int_lt(++pages, 10);
	} while (cursor[0] != '\0');
	ck_assert_int_eq(pages, 3);
	ck_assert_int_eq(total, 2501);

	/* An exact multiple of the page: the last full page says so. */
	snprintf(path, sizeof(path), "/v1/datasets/%s/budget?limit=1&cursor=%lld", ds,
		 first_id + 2499);
	j = h_json(&srv, "GET", path, key, NULL, 200);
	ck_assert_int_eq(json_array_size(h_get(j, "entries")), 1);
	ck_assert(json_is_null(h_get(j, "next_cursor")));
	json_decref(j);

	const char *bad_limit[] = { "0", "1001", "x", "", "-1" };
	for (size_t i = 0; i < sizeof(bad_limit) / sizeof(*bad_limit); i++) {
		snprintf(path, sizeof(path), "/v1/datasets/%s/budget?limit=%s", ds, bad_limit[i]);
		h_expect_error(&srv, "GET", path, key, NULL, NULL, 0, NULL, 400, "invalid_request",
			       "limit", NULL);
	}
	const char *bad_cursor[] = { "abc", "-5", "1234567890123456789", "" };
	for (size_t i = 0; i < sizeof(bad_cursor) / sizeof(*bad_cursor); i++) {
		snprintf(path, sizeof(path), "/v1/datasets/%s/budget?cursor=%s", ds, bad_cursor[i]);
		h_expect_error(&srv, "GET", path, key, NULL, NULL, 0, NULL, 400, "invalid_request",
			       "cursor", NULL);
	}
}
END_TEST

/* Each entry's JSON is stored when it is inserted (0013_ledger_view.sql's
 * trigger) and the budget read concatenates the stored texts; an entry
 * older than the migration (view NULL, made here by inserting with the
 * trigger disabled) is built by the read from LEDGER_ENTRY_JSON
 * (service/ledger.h).  Both must agree: a copy of a stored entry without
 * its text reads as the same JSON object. */
START_TEST(test_budget_entry_text)
{
	char key[128], ds[40], path[256], run[40];
	json_t *j, *r, *entries;

	h_key_create(db, "ledgertext", "owner", key, sizeof(key));
	h_dataset_sealed(&srv, key, "1000", ds);
	r = h_run_create(&srv, key, ds, H_RUN_BODY, run);
	json_decref(r);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s'"
				  " AND view IS NOT NULL",
				  ds),
			 1);
	ck_assert_int_eq(h_sql_ll(db,
				  "ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_view;"
				  " INSERT INTO ledger_entries (dataset_id, run_id, kind, epsilon,"
				  " delta, event, rdp, created_at) SELECT dataset_id, run_id, kind,"
				  " epsilon, delta, event, rdp, created_at FROM ledger_entries"
				  " WHERE dataset_id = '%s';"
				  " ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_view;"
				  " SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s'"
				  " AND view IS NULL",
				  ds, ds),
			 1);
	j = h_json(&srv, "GET", path_of(path, "/v1/datasets/%s/budget", ds), key, NULL, 200);
	entries = h_get(j, "entries");
	ck_assert_int_eq(json_array_size(entries), 2);
	ck_assert_str_eq(str(json_array_get(entries, 0), "run_id"), run);
	ck_assert_str_eq(str(json_array_get(entries, 0), "dataset_id"), ds);
	ck_assert_msg(json_equal(json_array_get(entries, 0), json_array_get(entries, 1)),
		      "stored and built entries differ: %s", h_short(json_dumps(entries, 0)));
	json_decref(j);
}
END_TEST

/* A run's JSON is stored in the row at every write (0015_run_view.sql's
 * trigger) and GET /v1/runs/{id} returns the stored text.  It must be the
 * text RUN_VIEW_JSON builds from the row now, byte for byte, in every
 * state a run takes (queued, running, succeeded with the dataset's feature
 * names, cancelled), after a progress-only write, and after the dataset's
 * feature names change (the second trigger rewrites the texts). */
static void
run_view_agrees(const char *ds, long long want_runs)
{
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM runs r WHERE r.dataset_id = '%s'", ds),
			 want_runs);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM runs r WHERE r.dataset_id = '%s'"
				  " AND r.view IS DISTINCT FROM " RUN_VIEW_JSON,
				  ds),
			 0);
}

START_TEST(test_run_view_text)
{
	char key[128], ds[40], path[128], run1[40], run2[40], run3[40];
	char *built = malloc(65536);
	struct h_resp r;
	json_t *j;

	ck_assert(built != NULL);
	h_key_create(db, "runview", "owner", key, sizeof(key));
	h_dataset_sealed(&srv, key, "1000", ds);
	json_decref(h_run_create(&srv, key, ds, H_RUN_BODY, run1));
	run_view_agrees(ds, 1); /* queued, or already claimed */
	json_decref(h_run_wait(&srv, key, run1, "succeeded", 60.0));
	run_view_agrees(ds, 1);

	/* A second run, cancelled at once (queued or running then; 409 when
	 * it finished first, as a tiny run can under a fast worker). */
	json_decref(h_run_create(&srv, key, ds, H_RUN_BODY, run2));
	h_http(&srv, "DELETE", path_of(path, "/v1/runs/%s", run2), key, NULL, NULL, 0, NULL, &r);
	ck_assert_msg(r.status == 200 || r.status == 202 || r.status == 409, "cancel: %ld",
		      r.status);
	h_resp_clear(&r);
	json_decref(h_run_wait(&srv, key, run2, NULL, 60.0));
	/* Whichever state it reached: cancelled and refunded, by hand. */
	ck_assert_int_eq(h_sql_ll(db,
				  "UPDATE runs SET state = 'cancelled', cancel_requested = true,"
				  " refunded = true WHERE id = '%s'; SELECT 1",
				  run2),
			 1);
	/* A third, written by hand as running with progress, then failed. */
	json_decref(h_run_create(&srv, key, ds, H_RUN_BODY, run3));
	json_decref(h_run_wait(&srv, key, run3, NULL, 60.0));
	ck_assert_int_eq(h_sql_ll(db,
				  "UPDATE runs SET state = 'running', steps_done = 3,"
				  " finished_at = NULL WHERE id = '%s'; SELECT 1",
				  run3),
			 1);
	run_view_agrees(ds, 3);
	ck_assert_int_eq(h_sql_ll(db,
				  "UPDATE runs SET state = 'failed', error_code = 'internal_error',"
				  " finished_at = now() WHERE id = '%s'; SELECT 1",
				  run3),
			 1);
	run_view_agrees(ds, 3);

	/* The reply is the stored text itself. */
	h_sql(db, built, 65536, "SELECT " RUN_VIEW_JSON " FROM runs r WHERE r.id = '%s'", run1);
	h_http(&srv, "GET", path_of(path, "/v1/runs/%s", run1), key, NULL, NULL, 0, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, built);
	h_resp_clear(&r);

	/* New feature names: the succeeded run shows them at once. */
	ck_assert_int_eq(h_sql_ll(db,
				  "UPDATE datasets SET feature_names = ARRAY(SELECT 'g' || i"
				  " FROM generate_series(1, %d) i) WHERE id = '%s'; SELECT 1",
				  H_D, ds),
			 1);
	run_view_agrees(ds, 3);
	j = h_json(&srv, "GET", path_of(path, "/v1/runs/%s", run1), key, NULL, 200);
	ck_assert_str_eq(json_string_value(json_array_get(h_get(j, "result.feature_names"), 0)),
			 "g1");
	json_decref(j);
	free(built);
}
END_TEST

/* Operations */

START_TEST(test_ops_endpoints)
{
	char ds[40], run[40];
	struct h_resp r;
	json_t *j, *algs, *sgd = NULL, *params;
	bool batch = false, step = false;

	h_dataset_sealed(&srv, owner, "1", ds);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, run));
	json_decref(h_run_wait(&srv, owner, run, "succeeded", 60.0));

	j = h_json(&srv, "GET", "/healthz", NULL, NULL, 200);
	ck_assert_str_eq(str(j, "status"), "ok");
	json_decref(j);
	j = h_json(&srv, "GET", "/readyz", NULL, NULL, 200);
	ck_assert_str_eq(str(j, "status"), "ready");
	json_decref(j);

	h_http(&srv, "GET", "/metrics", NULL, NULL, NULL, 0, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_msg(strncmp(r.ctype, "text/plain", 10) == 0, "metrics type %s", r.ctype);
	ck_assert_msg(strstr(r.body, "\ndpopt_http_requests_total{") != NULL, "%s",
		      h_short(r.body));
	ck_assert_msg(strstr(r.body, "\ndpopt_runs{state=\"succeeded\"} ") != NULL, "%s",
		      h_short(r.body));
	ck_assert_msg(strstr(r.body, "\ndpopt_runs{state=\"succeeded\"} 0\n") == NULL,
		      "the run that succeeded is not counted: %s", h_short(r.body));
	ck_assert_msg(strstr(r.body, ds) == NULL, "a dataset id in /metrics");
	ck_assert_msg(strstr(r.body, run) == NULL, "a run id in /metrics");
	ck_assert_msg(strstr(r.body, "acme") == NULL, "a tenant in /metrics");
	h_resp_clear(&r);

	j = h_json(&srv, "GET", "/v1/algorithms", owner, NULL, 200);
	algs = h_get(j, "algorithms");
	ck_assert(json_is_array(algs));
	for (size_t i = 0; i < json_array_size(algs); i++)
		if (strcmp(str(json_array_get(algs, i), "name"), "dp_sgd.one_pass") == 0)
			sgd = json_array_get(algs, i);
	ck_assert_msg(sgd != NULL, "dp_sgd.one_pass is not listed");
	params = h_get(sgd, "params");
	ck_assert(json_is_array(params));
	for (size_t i = 0; i < json_array_size(params); i++) {
		json_t *p = json_array_get(params, i);

		ck_assert(json_is_number(h_get(p, "min")) && json_is_number(h_get(p, "max")) &&
			  json_is_number(h_get(p, "default")) && json_is_string(h_get(p, "doc")));
		if (strcmp(str(p, "name"), "batch_size") == 0)
			batch = strcmp(str(p, "type"), "integer") == 0;
		if (strcmp(str(p, "name"), "step_size") == 0)
			step = strcmp(str(p, "type"), "number") == 0;
	}
	ck_assert(batch && step);
	ck_assert_int_ge(json_array_size(h_get(sgd, "objectives")), 2);
	ck_assert_str_eq(json_string_value(json_array_get(h_get(sgd, "constraints.x"), 0)),
			 "l2_ball");
	json_decref(j);
}
END_TEST

static Suite *
api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc;

	tc = tcase_create("flow");
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_upload_run_result);
	tcase_add_test(tc, test_budget_exhausted);
	tcase_add_test(tc, test_idempotent_retry);
	tcase_add_test(tc, test_delete_dataset);
	suite_add_tcase(s, tc);

	tc = tcase_create("auth");
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_other_tenant_sees_nothing);
	tcase_add_test(tc, test_analyst_role);
	tcase_add_test(tc, test_keys_required);
	suite_add_tcase(s, tc);

	tc = tcase_create("validation");
	tcase_add_unchecked_fixture(tc, setup_small_body, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_bad_dataset_requests);
	tcase_add_test(tc, test_bad_csv);
	tcase_add_test(tc, test_bad_run_requests);
	tcase_add_test(tc, test_bad_routes);
	suite_add_tcase(s, tc);

	tc = tcase_create("listing_and_ops");
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_pagination);
	tcase_add_test(tc, test_budget_pages);
	tcase_add_test(tc, test_budget_entry_text);
	tcase_add_test(tc, test_run_view_text);
	tcase_add_test(tc, test_ops_endpoints);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	h_init();
	sr = srunner_create(api_suite());
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
