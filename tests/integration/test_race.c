/*
 * test_race.c - concurrent requests against one dataset: admission never
 * overspends the budget, idempotent retries never charge twice, and
 * concurrent uploads seal a dataset once.
 *
 * Threads each make their own libcurl handle (h_http) and are released
 * together by a barrier; they only record what they got, the assertions
 * run in the test's thread afterwards.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define RACERS 64

static struct h_server srv;
static char db[512];
static char owner[128];

struct racer {
	pthread_barrier_t *start;
	const char *method;
	const char *ctype;
	const char *body;
	const char *const *headers;
	char path[128];
	long status;
	char code[64]; /* error.code, "" on success */
	char id[40];   /* the run's id on success */
	char raw[512]; /* the start of the body, for messages */
};

static void *
race(void *arg)
{
	struct racer *r = arg;
	struct h_resp resp;
	const char *v;

	pthread_barrier_wait(r->start);
	h_http(&srv, r->method, r->path, owner, r->ctype, r->body, strlen(r->body), r->headers,
	       &resp);
	r->status = resp.status;
	v = json_string_value(json_object_get(json_object_get(resp.json, "error"), "code"));
	snprintf(r->code, sizeof(r->code), "%s", v != NULL ? v : "");
	v = json_string_value(json_object_get(resp.json, "id"));
	snprintf(r->id, sizeof(r->id), "%s", v != NULL ? v : "");
	snprintf(r->raw, sizeof(r->raw), "%s%s", resp.body, resp.curl_err);
	h_resp_clear(&resp);
	return NULL;
}

/* Run n racers on the same request; returns them (owned). */
static struct racer *
run_racers(int n, const char *method, const char *path, const char *ctype, const char *body,
	   const char *const *headers)
{
	struct racer *rs = calloc((size_t)n, sizeof(*rs));
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	pthread_barrier_t start;

	ck_assert(rs != NULL && th != NULL);
	ck_assert_int_eq(pthread_barrier_init(&start, NULL, (unsigned)n), 0);
	for (int i = 0; i < n; i++) {
		rs[i] = (struct racer){ .start = &start,
					.method = method,
					.ctype = ctype,
					.body = body,
					.headers = headers };
		snprintf(rs[i].path, sizeof(rs[i].path), "%s", path);
		ck_assert_int_eq(pthread_create(&th[i], NULL, race, &rs[i]), 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);
	free(th);
	return rs;
}

static void
setup(void)
{
	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, NULL);
}

/* Exit status 0 and no sanitizer report, or h_finish() fails. */
static void
teardown(void)
{
	h_server_stop_fixture(&srv, 30.0);
}

START_TEST(test_concurrent_admission)
{
	char ds[40], path[128], spent[64], out[256];
	int accepted = 0, refused = 0;
	struct racer *rs;

	/* Room for exactly ten runs of 0.1. */
	h_dataset_sealed(&srv, owner, "1", ds);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	rs = run_racers(RACERS, "POST", path, "application/json", H_RUN_BODY, NULL);
	for (int i = 0; i < RACERS; i++) {
		if (rs[i].status == 202) {
			accepted++;
			for (int k = 0; k < i; k++)
				ck_assert_str_ne(rs[k].id, rs[i].id);
		} else {
			ck_assert_msg(rs[i].status == 409 &&
					      strcmp(rs[i].code, "budget_exceeded") == 0,
				      "racer %d: %ld %s", i, rs[i].status, rs[i].raw);
			refused++;
		}
	}
	free(rs);
	ck_assert_int_eq(accepted, 10);
	ck_assert_int_eq(refused, RACERS - 10);

	/* The ledger holds exactly the accepted charges, and the dataset's
	 * spent budget is their exact sum. */
	h_ledger_check(db, ds, spent, sizeof(spent));
	h_sql(db, out, sizeof(out),
	      "SELECT (SELECT count(*) FROM runs WHERE dataset_id = '%s'),"
	      " (SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s' AND kind = 'charge'),"
	      " (SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s' AND kind = 'refund'),"
	      " (SELECT (sum(charge_epsilon) = d.spent_epsilon AND d.spent_epsilon = 1"
	      "  AND sum(charge_delta) = d.spent_delta)::text FROM runs"
	      "  WHERE dataset_id = '%s')"
	      " FROM datasets d WHERE d.id = '%s'",
	      ds, ds, ds, ds, ds);
	ck_assert_str_eq(out, "10|10|0|true");

	/* Exactly full: one more is refused, and the accepted runs all run. */
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "budget_exceeded", "privacy", "remaining");
	{
		double deadline = h_now() + 60.0;

		while (h_sql_ll(db,
				"SELECT count(*) FROM runs WHERE dataset_id = '%s'"
				" AND state = 'succeeded'",
				ds) < 10) {
			ck_assert_msg(h_now() < deadline, "the ten runs did not all succeed");
			h_sleep(0.1);
		}
	}
}
END_TEST

START_TEST(test_concurrent_idempotent_retries)
{
	const char *const hdr[] = { "Idempotency-Key: same-everywhere", NULL };
	char ds[40], path[128], spent[64];
	struct racer *rs;
	const int n = 16;

	h_dataset_sealed(&srv, owner, "1", ds);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	rs = run_racers(n, "POST", path, "application/json", H_RUN_BODY, hdr);
	for (int i = 0; i < n; i++) {
		ck_assert_msg(rs[i].status == 202, "racer %d: %ld %s", i, rs[i].status, rs[i].raw);
		ck_assert_str_eq(rs[i].id, rs[0].id);
	}
	free(rs);
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.1");
	ck_assert_int_eq(
		h_sql_ll(db, "SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s'", ds), 1);
}
END_TEST

START_TEST(test_concurrent_uploads)
{
	char ds[40], path[128], body[512];
	char *csv = h_csv(H_N, H_D, true, 11);
	int sealed = 0;
	struct racer *rs;
	const int n = 4;

	snprintf(body, sizeof(body), H_DATASET_FMT, "uploads", "1");
	h_dataset_create(&srv, owner, body, ds);
	snprintf(path, sizeof(path), "/v1/datasets/%s/data", ds);
	rs = run_racers(n, "PUT", path, "text/csv", csv, NULL);
	for (int i = 0; i < n; i++) {
		if (rs[i].status == 200)
			sealed++;
		else
			ck_assert_msg(rs[i].status == 409 && strcmp(rs[i].code, "conflict") == 0,
				      "upload %d: %ld %s", i, rs[i].status, rs[i].raw);
	}
	free(rs);
	free(csv);
	ck_assert_int_eq(sealed, 1);
	ck_assert_int_eq(h_sql_ll(db, "SELECT n_rows FROM datasets WHERE id = '%s'", ds), H_N);
	ck_assert_int_eq(
		h_sql_ll(db, "SELECT sum(n_rows) FROM dataset_chunks WHERE dataset_id = '%s'", ds),
		H_N);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("race");
	TCase *tc = tcase_create("race");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_concurrent_admission);
	tcase_add_test(tc, test_concurrent_idempotent_retries);
	tcase_add_test(tc, test_concurrent_uploads);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
