/*
 * test_replicas.c - two replicas of dpoptd on one PostgreSQL, as the
 * Kubernetes Deployment runs them (deploy/kubernetes): a run submitted to
 * one is visible from the other; SIGTERM to the replica running it (a
 * rolling update) drains within the bound, puts the run back in the queue,
 * and the other replica resumes it: it finishes exactly once, with one
 * charge in the ledger; a drain longer than DPOPT_SHUTDOWN_SECONDS is cut
 * and the run is still resumed.  The drain times are printed.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

START_TEST(test_sigterm_hands_the_run_over)
{
	/* A run of ten steps of 500 ms on replica a; b is started only once a
	 * holds the run, so that a is the one running it. */
	struct h_opts slow = { .workers = 1, .step_delay_ms = 500 };
	struct h_opts other = { .workers = 1, .step_delay_ms = 50 };
	struct h_server a, b;
	char db[512], key[128], ds[40], run[40], path[128], owner[128], want[64], out[256];
	double t0, drain;
	int status;
	json_t *j;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", key, sizeof(key));
	h_server_start(&a, db, &slow);
	h_dataset_sealed(&a, key, "1", ds);
	json_decref(h_run_create(&a, key, ds, H_RUN_BODY_10_STEPS, run));
	json_decref(h_run_wait(&a, key, run, "running", 30.0));
	h_sql(db, owner, sizeof(owner), "SELECT lease_owner FROM runs WHERE id = '%s'", run);
	snprintf(want, sizeof(want), ":%d/w0", (int)a.pid);
	ck_assert_msg(strlen(owner) > strlen(want) &&
			      strcmp(owner + strlen(owner) - strlen(want), want) == 0,
		      "run held by %s, not by replica a (pid %d)", owner, (int)a.pid);

	/* The other replica sees it: the queue and the runs are PostgreSQL's. */
	h_server_start(&b, db, &other);
	snprintf(path, sizeof(path), "/v1/runs/%s", run);
	j = h_json(&b, "GET", path, key, NULL, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "running");
	json_decref(j);
	h_sleep(1.2); /* a few of a's steps */

	t0 = h_now();
	status = h_server_stop(&a, SIGTERM, 15.0);
	drain = h_now() - t0;
	printf("drain: SIGTERM to exit of replica a: %.0f ms\n", drain * 1e3);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "replica a did not exit cleanly on SIGTERM (status 0x%x)", status);
	/* The bound: DPOPT_SHUTDOWN_GRACE_SECONDS (10) covers requests; a
	 * worker stops after its current step (500 ms here). */
	ck_assert_msg(drain < 5.0 * h_timeout_scale(), "the drain took %.1f s", drain);

	/* Handed over at once, not after a's lease expires: back in the
	 * queue, or already b's. */
	h_sql(db, owner, sizeof(owner),
	      "SELECT coalesce(lease_owner, '') FROM runs WHERE id = '%s'", run);
	ck_assert_msg(strstr(owner, want) == NULL,
		      "replica a still holds the run after its exit: %s", owner);

	/* b resumes it from the queue and finishes it, once. */
	j = h_run_wait(&b, key, run, "succeeded", 60.0);
	ck_assert_int_eq(json_array_size(h_get(j, "result.x")), H_D);
	json_decref(j);
	h_sql(db, out, sizeof(out),
	      "SELECT attempts || '|' || refunded::text || '|' || (result IS NOT NULL)::text"
	      " FROM runs WHERE id = '%s'",
	      run);
	ck_assert_str_eq(out, "2|false|true");
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM ledger_entries WHERE run_id = '%s' AND "
				  "kind = 'charge'",
				  run),
			 1);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM ledger_entries WHERE kind = 'refund'"),
			 0);
	h_ledger_check(db, ds, out, sizeof(out));
	ck_assert_str_eq(out, "0.1");
	/* Finished on b: a's log says it re-queued the run, b's that it ran. */
	status = h_server_stop(&b, SIGTERM, 15.0);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "replica b did not exit cleanly on SIGTERM (status 0x%x)", status);
}
END_TEST

/* A step longer than the drain's bound (DPOPT_SHUTDOWN_SECONDS=2): the
 * replica exits at the bound instead of waiting for the step, like a crash;
 * its lease (3 s) expires and the other replica resumes the run, which still
 * finishes once under its one charge. */
START_TEST(test_drain_is_bounded)
{
	struct h_opts stuck = { .workers = 1,
				.lease_seconds = 3,
				.step_delay_ms = 30000,
				.env_more = { "DPOPT_SHUTDOWN_SECONDS=2",
					      "DPOPT_SHUTDOWN_GRACE_SECONDS=1", NULL } };
	struct h_opts other = { .workers = 1, .lease_seconds = 3, .step_delay_ms = 50 };
	struct h_server a, b;
	char db[512], key[128], ds[40], run[40], out[256];
	double t0, drain;
	int status;
	json_t *j;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", key, sizeof(key));
	h_server_start(&a, db, &stuck);
	h_dataset_sealed(&a, key, "1", ds);
	json_decref(h_run_create(&a, key, ds, H_RUN_BODY_10_STEPS, run));
	json_decref(h_run_wait(&a, key, run, "running", 30.0));
	h_server_start(&b, db, &other);
	h_sleep(0.5);

	t0 = h_now();
	status = h_server_stop(&a, SIGTERM, 15.0); /* the step alone takes 30 s */
	drain = h_now() - t0;
	printf("bounded drain: SIGTERM to exit of replica a: %.0f ms (bound 2 s)\n", drain * 1e3);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1,
		      "replica a did not exit 1 at the drain's bound (status 0x%x)", status);
	ck_assert_msg(drain >= 1.9 && drain < 2.0 + 3.0 * h_timeout_scale(),
		      "the bounded drain took %.1f s", drain);

	j = h_run_wait(&b, key, run, "succeeded", 60.0);
	ck_assert_int_eq(json_array_size(h_get(j, "result.x")), H_D);
	json_decref(j);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM ledger_entries WHERE run_id = '%s' AND "
				  "kind = 'charge'",
				  run),
			 1);
	h_ledger_check(db, ds, out, sizeof(out));
	ck_assert_str_eq(out, "0.1");
	status = h_server_stop(&b, SIGTERM, 15.0);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "replica b did not exit cleanly on SIGTERM (status 0x%x)", status);
}
END_TEST

/* DPOPT_SHUTDOWN_DELAY_SECONDS=2: after SIGTERM /readyz answers 503 at
 * once while the API is still served (a load balancer stops sending before
 * the listener closes); then the drain as usual. */
START_TEST(test_readyz_503_at_once)
{
	struct h_opts o = { .workers = 1, .env_more = { "DPOPT_SHUTDOWN_DELAY_SECONDS=2", NULL } };
	struct h_server a;
	struct h_resp r;
	char db[512], key[128];
	double t0, took;
	int status;
	json_t *j;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", key, sizeof(key));
	h_server_start(&a, db, &o);
	j = h_json(&a, "GET", "/readyz", NULL, NULL, 200);
	json_decref(j);

	t0 = h_now();
	ck_assert_int_eq(kill(a.pid, SIGTERM), 0);
	h_sleep(0.3);
	h_http(&a, "GET", "/readyz", NULL, NULL, NULL, 0, NULL, &r);
	ck_assert_msg(r.status == 503, "/readyz after SIGTERM: %ld %s", r.status, h_short(r.body));
	h_resp_clear(&r);
	json_decref(h_json(&a, "GET", "/healthz", NULL, NULL, 200));
	json_decref(h_json(&a, "GET", "/v1/datasets", key, NULL, 200));

	status = h_server_stop(&a, SIGTERM, 15.0);
	took = h_now() - t0;
	printf("readiness delay: SIGTERM to exit %.0f ms (delay 2 s)\n", took * 1e3);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "dpoptd did not exit cleanly on SIGTERM (status 0x%x)", status);
	ck_assert_msg(took >= 1.9 && took < 2.0 + 5.0 * h_timeout_scale(), "took %.1f s", took);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("replicas");
	TCase *tc = tcase_create("replicas");
	SRunner *sr;
	int failed;

	h_init();
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_sigterm_hands_the_run_over);
	tcase_add_test(tc, test_drain_is_bounded);
	tcase_add_test(tc, test_readyz_503_at_once);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
