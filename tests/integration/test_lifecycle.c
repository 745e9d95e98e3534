/*
 * test_lifecycle.c - runs across cancellation, deletion, a crash and a
 * graceful stop.  Each test starts its own dpoptd on a fresh database with
 * one worker and DPOPT_TEST_STEP_DELAY_MS, so that a run of ten steps
 * (H_RUN_BODY_10_STEPS) takes seconds and the queue behind it is
 * predictable.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

static char db[512];
static char key[128];

static void
start(struct h_server *s, unsigned lease_seconds, unsigned step_delay_ms)
{
	struct h_opts o = { .workers = 1,
			    .lease_seconds = lease_seconds,
			    .step_delay_ms = step_delay_ms };

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", key, sizeof(key));
	h_server_start(s, db, &o);
}

static void
stop_clean(struct h_server *s)
{
	int status = h_server_stop(s, SIGTERM, 15.0);

	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "dpoptd did not exit cleanly on SIGTERM (status 0x%x)", status);
}

static json_t *
cancel(struct h_server *s, const char *run, long want_status)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/runs/%s", run);
	return h_json(s, "DELETE", path, key, NULL, want_status);
}

static const char *
state_of(json_t *run)
{
	return json_string_value(json_object_get(run, "state"));
}

static bool
refunded(json_t *run)
{
	return json_is_true(h_get(run, "privacy.refunded"));
}

START_TEST(test_cancel)
{
	struct h_server s;
	char ds[40], a[40], b[40], c[40], d[40], path[128], spent[64], out[256];
	json_t *j;

	/* A step takes a second: a run holds the only worker for ten. */
	start(&s, 0, 1000);
	h_dataset_sealed(&s, key, "1", ds);
	json_decref(h_run_create(&s, key, ds, H_RUN_BODY_10_STEPS, a));
	json_decref(h_run_wait(&s, key, a, "running", 30.0));
	json_decref(h_run_create(&s, key, ds, H_RUN_BODY_10_STEPS, b));
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.2");

	/* Queued: cancelled at once, and refunded. */
	j = cancel(&s, b, 200);
	ck_assert_str_eq(state_of(j), "cancelled");
	ck_assert(refunded(j));
	ck_assert(json_is_null(h_get(j, "result")));
	json_decref(j);
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.1");
	j = h_json(&s, "GET", (snprintf(path, sizeof(path), "/v1/datasets/%s", ds), path), key,
		   NULL, 200);
	ck_assert_double_eq_tol(json_number_value(h_get(j, "budget.epsilon.remaining")), 0.9,
				1e-12);
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/runs/%s", b);
	h_expect_error(&s, "DELETE", path, key, NULL, NULL, 0, NULL, 409, "conflict", NULL,
		       "already ended");

	/* Running: asked to stop (202), stops at a step boundary, keeps its
	 * charge. */
	j = cancel(&s, a, 202);
	ck_assert_str_eq(state_of(j), "running");
	ck_assert(json_is_true(h_get(j, "cancel_requested")));
	json_decref(j);
	j = h_run_wait(&s, key, a, "cancelled", 15.0);
	ck_assert(!refunded(j));
	ck_assert(json_is_null(h_get(j, "result")));
	ck_assert(json_number_value(h_get(j, "progress.steps_done")) <
		  json_number_value(h_get(j, "progress.steps_total")));
	json_decref(j);
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.1");
	h_sql(db, out, sizeof(out),
	      "SELECT string_agg(r.id::text || ':' || l.kind, ',' ORDER BY l.id)"
	      " FROM ledger_entries l JOIN runs r ON r.id = l.run_id WHERE l.dataset_id = '%s'",
	      ds);
	{
		char want[256];

		snprintf(want, sizeof(want), "%s:charge,%s:charge,%s:refund", a, b, b);
		ck_assert_str_eq(out, want);
	}

	/* Deleting the dataset cancels and refunds what is queued, stops what
	 * runs (its charge stands), and keeps the ledger. */
	json_decref(h_run_create(&s, key, ds, H_RUN_BODY_10_STEPS, c));
	json_decref(h_run_wait(&s, key, c, "running", 30.0));
	json_decref(h_run_create(&s, key, ds, H_RUN_BODY_10_STEPS, d));
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	ck_assert_ptr_null(h_json(&s, "DELETE", path, key, NULL, 204));
	j = h_run_wait(&s, key, d, "cancelled", 1.0);
	ck_assert(refunded(j));
	json_decref(j);
	j = h_run_wait(&s, key, c, "cancelled", 15.0);
	ck_assert(!refunded(j));
	json_decref(j);
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.2");
	ck_assert_int_eq(
		h_sql_ll(db, "SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s'", ds), 6);
	stop_clean(&s);
}
END_TEST

START_TEST(test_crash_and_lease_expiry)
{
	struct h_server s;
	char ds[40], runs[3][40], out[256], spent[64];
	int status;
	json_t *j;

	/* Three seconds a run, a three-second lease. */
	start(&s, 3, 300);
	h_dataset_sealed(&s, key, "1", ds);
	for (int i = 0; i < 3; i++)
		json_decref(h_run_create(&s, key, ds, H_RUN_BODY_10_STEPS, runs[i]));
	json_decref(h_run_wait(&s, key, runs[0], "running", 30.0));
	h_sleep(0.8); /* mid-run, lease renewed at least once */

	status = h_server_stop(&s, SIGKILL, 10.0);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	h_sql(db, out, sizeof(out),
	      "SELECT string_agg(state || ':' || attempts, ',' ORDER BY created_at) FROM runs");
	ck_assert_str_eq(out, "running:1,queued:0,queued:0");

	/* The new process re-queues the run once its lease has expired. */
	h_server_restart(&s);
	for (int i = 0; i < 3; i++) {
		j = h_run_wait(&s, key, runs[i], "succeeded", 60.0);
		ck_assert_int_eq(json_array_size(h_get(j, "result.x")), H_D);
		ck_assert(json_number_value(h_get(j, "progress.steps_done")) == 10);
		json_decref(j);
	}
	h_sql(db, out, sizeof(out),
	      "SELECT string_agg(attempts::text, ',' ORDER BY created_at) FROM runs");
	ck_assert_str_eq(out, "2,1,1");

	/* No charge lost or doubled. */
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.3");
	h_sql(db, out, sizeof(out),
	      "SELECT (SELECT count(*) FROM ledger_entries WHERE kind = 'charge'),"
	      " (SELECT count(*) FROM ledger_entries WHERE kind = 'refund'),"
	      " (SELECT (sum(charge_epsilon) = d.spent_epsilon)::text FROM runs)"
	      " FROM datasets d WHERE d.id = '%s'",
	      ds);
	ck_assert_str_eq(out, "3|0|true");
	stop_clean(&s);
}
END_TEST

START_TEST(test_sigterm_requeues)
{
	struct h_server s;
	char ds[40], run[40], out[256], spent[64];
	double t0, took;
	json_t *j;

	start(&s, 0, 300);
	h_dataset_sealed(&s, key, "1", ds);
	json_decref(h_run_create(&s, key, ds, H_RUN_BODY_10_STEPS, run));
	json_decref(h_run_wait(&s, key, run, "running", 30.0));
	h_sleep(0.5);

	t0 = h_now();
	stop_clean(&s);
	took = h_now() - t0;
	ck_assert_msg(took < 5.0 * h_timeout_scale(), "SIGTERM took %.1f s", took);
	/* Back in the queue under the charge it paid, for any replica. */
	h_sql(db, out, sizeof(out),
	      "SELECT state, attempts, (lease_owner IS NULL)::text, refunded::text, result IS NULL"
	      " FROM runs WHERE id = '%s'",
	      run);
	ck_assert_str_eq(out, "queued|1|true|false|t");

	h_server_restart(&s);
	j = h_run_wait(&s, key, run, "succeeded", 60.0);
	ck_assert_int_eq(json_array_size(h_get(j, "result.x")), H_D);
	json_decref(j);
	ck_assert_int_eq(h_sql_ll(db, "SELECT attempts FROM runs WHERE id = '%s'", run), 2);
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.1");
	stop_clean(&s);
}
END_TEST

/* A run orphaned by a crash is still 'running' until its lease expires.
 * Cancelling it then works, and as a worker claimed it (it may have read
 * the data) its charge stands. */
START_TEST(test_cancel_orphaned_run)
{
	struct h_server s;
	char ds[40], run[40], path[128], spent[64];
	struct h_resp r;
	int status;
	json_t *j;

	start(&s, 3, 300);
	h_dataset_sealed(&s, key, "1", ds);
	json_decref(h_run_create(&s, key, ds, H_RUN_BODY_10_STEPS, run));
	json_decref(h_run_wait(&s, key, run, "running", 30.0));
	status = h_server_stop(&s, SIGKILL, 10.0);
	ck_assert(WIFSIGNALED(status));
	h_server_restart(&s);

	/* 202 while the lease runs (or a new worker holds it); 200 only in the
	 * instant between its re-queueing and the next claim. */
	snprintf(path, sizeof(path), "/v1/runs/%s", run);
	h_http(&s, "DELETE", path, key, NULL, NULL, 0, NULL, &r);
	ck_assert_msg(r.status == 202 || r.status == 200, "%ld %s", r.status, h_short(r.body));
	h_resp_clear(&r);
	j = h_run_wait(&s, key, run, "cancelled", 30.0);
	ck_assert(!refunded(j));
	ck_assert(json_is_null(h_get(j, "result")));
	json_decref(j);
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.1");
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM ledger_entries WHERE kind = 'refund'"),
			 0);
	stop_clean(&s);
}
END_TEST

/* Two replicas share the queue.  Runs last twice the lease, and one of
 * the three workers is always idle, polling for expired leases: only the
 * renewals keep it from re-queueing (stealing) a run. */
START_TEST(test_replicas_and_lease_renewal)
{
	struct h_opts one = { .workers = 1, .lease_seconds = 2, .step_delay_ms = 400 };
	struct h_opts two = { .workers = 2, .lease_seconds = 2, .step_delay_ms = 400 };
	struct h_server a, b;
	char ds[40], runs[2][40], out[256], spent[64];
	long long most_running = 0;
	double deadline;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", key, sizeof(key));
	h_server_start(&a, db, &one);
	h_server_start(&b, db, &two);
	h_dataset_sealed(&a, key, "1", ds);
	json_decref(h_run_create(&a, key, ds, H_RUN_BODY_10_STEPS, runs[0]));
	json_decref(h_run_create(&b, key, ds, H_RUN_BODY_10_STEPS, runs[1]));

	deadline = h_now() + 60.0 * h_timeout_scale();
	while (h_sql_ll(db, "SELECT count(*) FROM runs WHERE state IN ('queued', 'running')") > 0) {
		long long n = h_sql_ll(db, "SELECT count(*) FROM runs WHERE state = 'running'");

		most_running = n > most_running ? n : most_running;
		ck_assert_msg(h_now() < deadline, "the runs did not finish");
		h_sleep(0.1);
	}
	ck_assert_int_eq(most_running, 2);
	h_sql(db, out, sizeof(out),
	      "SELECT string_agg(state || ':' || attempts, ',' ORDER BY created_at) FROM runs");
	ck_assert_str_eq(out, "succeeded:1,succeeded:1");
	for (int i = 0; i < 2; i++) {
		json_t *j = h_run_wait(i == 0 ? &b : &a, key, runs[i], "succeeded", 1.0);

		ck_assert_int_eq(json_array_size(h_get(j, "result.x")), H_D);
		json_decref(j);
	}
	h_ledger_check(db, ds, spent, sizeof(spent));
	ck_assert_str_eq(spent, "0.2");
	stop_clean(&a);
	stop_clean(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("lifecycle");
	TCase *tc = tcase_create("lifecycle");
	SRunner *sr;
	int failed;

	h_init();
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_cancel);
	tcase_add_test(tc, test_crash_and_lease_expiry);
	tcase_add_test(tc, test_sigterm_requeues);
	tcase_add_test(tc, test_cancel_orphaned_run);
	tcase_add_test(tc, test_replicas_and_lease_renewal);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
