/*
 * test_renyi.c - the Rényi filter ledger (the default accounting mode)
 * against a real PostgreSQL: runs are admitted while some order of the
 * dataset's grid has room, refused once none has, the stored spent vector
 * is the upward-rounded sum of the charges that stand, a refund
 * recomputes it, and 200 concurrent submissions admit exactly as many runs
 * as submitting them one by one, never exceeding the filter.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define CONCURRENT 200

static struct h_server srv;
static char db[512];
static char owner[128];

/* Default mode (renyi): no accounting_mode member. */
#define RENYI_DS                                                                                   \
	"{\"name\": \"renyi\", \"schema\": {\"features\": 5, \"task\": \"binary\"},"               \
	" \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": 1, \"delta\": 1e-4}}"

static void
setup(void)
{
	struct h_opts o = { .workers = 1, .step_delay_ms = 20 };

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
renyi_dataset(char *ds)
{
	char *csv = h_csv(H_N, H_D, true, 3);

	h_dataset_create(&srv, owner, RENYI_DS, ds);
	h_upload(&srv, owner, ds, csv);
	free(csv);
}

/* The stored spent vector is the upward-rounded sum of the charges that
 * stand (within rounding), and some order is within its cap. */
static void
check_filter(const char *ds)
{
	char out[64];

	h_sql(db, out, sizeof(out),
	      "WITH s AS (SELECT d.spent_rdp[i] AS spent, d.filter_caps[i] AS cap,"
	      " (SELECT coalesce(sum(r.charge_rdp[i]), 0) FROM runs r"
	      "  WHERE r.dataset_id = d.id AND NOT r.refunded) AS total"
	      " FROM datasets d, generate_subscripts(d.filter_orders, 1) i WHERE d.id = '%s')"
	      " SELECT (bool_and(spent >= total * (1 - 1e-12) AND spent <= total * (1 + 1e-12))"
	      " AND bool_or(spent <= cap))::text FROM s",
	      ds);
	ck_assert_str_eq(out, "true");
}

/* Submit the standard run until the filter refuses; returns how many. */
static int
fill(const char *ds)
{
	char path[128], out[64];
	int n = 0;

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	for (;;) {
		struct h_resp r;

		h_http(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, &r);
		if (r.status == 409) {
			ck_assert_str_eq(json_string_value(h_get(r.json, "error.code")),
					 "budget_exceeded");
			h_resp_clear(&r);
			break;
		}
		ck_assert_msg(r.status == 202, "status %ld: %s", r.status, h_short(r.body));
		h_resp_clear(&r);
		ck_assert_int_lt(++n, 1000);
		check_filter(ds);
	}
	/* Refused because no order has room for one more run. */
	h_sql(db, out, sizeof(out),
	      "SELECT bool_and(d.spent_rdp[i] + r.charge_rdp[i] > d.filter_caps[i])::text"
	      " FROM datasets d, generate_subscripts(d.filter_orders, 1) i,"
	      " (SELECT charge_rdp FROM runs WHERE dataset_id = '%s' LIMIT 1) r"
	      " WHERE d.id = '%s'",
	      ds, ds);
	ck_assert_str_eq(out, "true");
	return n;
}

START_TEST(test_fill_and_refund)
{
	char ds[40], path[128], out[64], last[40];
	int n;
	json_t *j;

	renyi_dataset(ds);
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	j = h_json(&srv, "GET", path, owner, NULL, 200);
	ck_assert_str_eq(json_string_value(h_get(j, "accounting_mode")), "renyi");
	json_decref(j);
	n = fill(ds);
	printf("renyi: %d runs of (0.1, 1e-6) admitted into a budget of (1, 1e-4)\n", n);
	/* (1, 1e-4) holds several Gaussians calibrated to (0.1, 1e-6) each in
	 * RDP, more than the 10 basic composition would allow. */
	ck_assert_msg(n > 10 && n < 200, "%d runs admitted", n);
	/* Pinned: the filter grid for (1, 1e-4) is 6 orders from 12.3 to 65,
	 * z = 39.49 for (0.1, 1e-6) in RDP, so floor(cap(a) 2 z^2 / a) peaks
	 * at 100 (worked out in Python from filter.h's definitions). */
	ck_assert_int_eq(n, 100);
	/* Cancel the newest queued run (the single worker is slowed down, so
	 * some are still queued): refunded, and the vector recomputed. */
	h_sql(db, last, sizeof(last),
	      "SELECT id FROM runs WHERE dataset_id = '%s' AND state = 'queued'"
	      " ORDER BY created_at DESC LIMIT 1",
	      ds);
	snprintf(path, sizeof(path), "/v1/runs/%s", last);
	j = h_json(&srv, "DELETE", path, owner, NULL, 200);
	ck_assert(json_is_true(h_get(j, "privacy.refunded")));
	json_decref(j);
	check_filter(ds);
	h_sql(db, out, sizeof(out),
	      "SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s' AND kind = 'refund'"
	      " AND rdp IS NOT NULL",
	      ds);
	ck_assert_str_eq(out, "1");
	/* Exactly one run fits again. */
	ck_assert_int_eq(fill(ds), 1);
}
END_TEST

/* runs:estimate charges nothing and agrees with admission; the budget
 * view shows the filter and every entry. */
START_TEST(test_estimate_and_budget_view)
{
	char ds[40], path[128], before[256], after[256];
	json_t *j;
	int n;

	renyi_dataset(ds);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", ds);
	h_ledger_snapshot(db, before, sizeof(before));
	j = h_json(&srv, "POST", path, owner, H_RUN_BODY, 200);
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(before, after); /* nothing charged */
	ck_assert(json_is_true(h_get(j, "fits")));
	ck_assert_str_eq(json_string_value(h_get(j, "accounting_mode")), "renyi");
	ck_assert_str_eq(json_string_value(h_get(j, "standalone.accountant")), "rdp");
	ck_assert(json_real_value(h_get(j, "standalone.epsilon")) <= 0.1);
	ck_assert(json_real_value(h_get(j, "standalone.epsilon")) > 0.099);
	ck_assert(json_is_array(h_get(j, "ledger.run_rdp")));
	ck_assert(json_integer_value(h_get(j, "plan.steps")) > 0);
	json_decref(j);
	n = fill(ds);
	j = h_json(&srv, "POST", path, owner, H_RUN_BODY, 200);
	ck_assert(json_is_false(h_get(j, "fits")));
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/datasets/%s/budget", ds);
	j = h_json(&srv, "GET", path, owner, NULL, 200);
	ck_assert_str_eq(json_string_value(h_get(j, "accounting_mode")), "renyi");
	ck_assert_int_eq((int)json_array_size(h_get(j, "entries")), n);
	ck_assert(json_array_size(h_get(j, "renyi.orders")) >= 1);
	ck_assert(json_array_size(h_get(j, "renyi.orders")) ==
		  json_array_size(h_get(j, "renyi.headroom")));
	ck_assert(json_real_value(h_get(j, "renyi.indicative.spent_epsilon")) > 0.5);
	ck_assert(json_is_true(h_get(j, "spent.indicative")));
	json_decref(j);
}
END_TEST

/* PATCH on a renyi dataset moves the caps of its fixed grid. */
START_TEST(test_patch_budget)
{
	char ds[40], path[128];
	const char *zero = "{\"budget\": {\"epsilon\": 2, \"delta\": 0}}";
	const char *tiny = "{\"budget\": {\"epsilon\": 0.05, \"delta\": 1e-4}}";
	json_t *j;

	renyi_dataset(ds);
	ck_assert_int_eq(fill(ds), 100);
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	h_expect_error(&srv, "PATCH", path, owner, "application/json", zero, strlen(zero), NULL,
		       400, "invalid_request", "budget.delta", NULL);
	h_expect_error(&srv, "PATCH", path, owner, "application/json", tiny, strlen(tiny), NULL,
		       400, "invalid_request", "budget.epsilon", "grid");
	j = h_json(&srv, "PATCH", path, owner, "{\"budget\": {\"epsilon\": 2, \"delta\": 1e-4}}",
		   200);
	json_decref(j);
	/* Twice the epsilon, the same grid: room for more runs. */
	ck_assert_int_gt(fill(ds), 50);
	h_expect_error(&srv, "GET", "/v1/datasets/not-a-uuid/budget", owner, NULL, NULL, 0, NULL,
		       404, "not_found", NULL, NULL);
}
END_TEST

START_TEST(test_estimate_basic)
{
	char ds[40], path[128];
	json_t *j;

	h_dataset_sealed(&srv, owner, "1", ds); /* basic */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", ds);
	j = h_json(&srv, "POST", path, owner, H_RUN_BODY, 200);
	ck_assert(json_is_true(h_get(j, "fits")));
	ck_assert_str_eq(json_string_value(h_get(j, "standalone.accountant")), "analytic_gaussian");
	ck_assert(json_real_value(h_get(j, "standalone.epsilon")) <= 0.1);
	ck_assert(json_real_value(h_get(j, "ledger.remaining_epsilon")) == 1.0);
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/datasets/%s/budget", ds);
	j = h_json(&srv, "GET", path, owner, NULL, 200);
	ck_assert_str_eq(json_string_value(h_get(j, "accounting_mode")), "basic");
	ck_assert_ptr_null(h_get(j, "renyi"));
	json_decref(j);
}
END_TEST

struct poster {
	pthread_barrier_t *start;
	char path[128];
	long status;
};

static void *
post(void *arg)
{
	struct poster *p = arg;
	struct h_resp r;

	pthread_barrier_wait(p->start);
	h_http(&srv, "POST", p->path, owner, "application/json", H_RUN_BODY, strlen(H_RUN_BODY),
	       NULL, &r);
	p->status = r.status;
	h_resp_clear(&r);
	return NULL;
}

START_TEST(test_concurrent_submissions)
{
	char a[40], b[40];
	struct poster *ps = calloc(CONCURRENT, sizeof(*ps));
	pthread_t *th = calloc(CONCURRENT, sizeof(*th));
	pthread_barrier_t start;
	int sequential, accepted = 0, refused = 0;

	ck_assert(ps != NULL && th != NULL);
	renyi_dataset(a);
	sequential = fill(a);
	renyi_dataset(b);
	ck_assert_int_eq(pthread_barrier_init(&start, NULL, CONCURRENT), 0);
	for (int i = 0; i < CONCURRENT; i++) {
		ps[i].start = &start;
		snprintf(ps[i].path, sizeof(ps[i].path), "/v1/datasets/%s/runs", b);
		ck_assert_int_eq(pthread_create(&th[i], NULL, post, &ps[i]), 0);
	}
	for (int i = 0; i < CONCURRENT; i++) {
		pthread_join(th[i], NULL);
		accepted += ps[i].status == 202;
		refused += ps[i].status == 409;
	}
	pthread_barrier_destroy(&start);
	/* Admission is serialised by the dataset's row lock: the same number
	 * as one by one, every other one refused, the filter consistent. */
	ck_assert_int_eq(accepted, sequential);
	ck_assert_int_eq(refused, CONCURRENT - sequential);
	check_filter(b);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM ledger_entries WHERE dataset_id = '%s'"
				  " AND kind = 'charge'",
				  b),
			 accepted);
	free(ps);
	free(th);
}
END_TEST

/* A dataset sharing a renyi ledger: submissions on either dataset fill
 * the one filter, which admits exactly what it admits on one dataset, and
 * the stored spent vector is the sum over the runs of both. */
START_TEST(test_shared_filter)
{
	char one[40], a[40], sh[40], body[512], path[2][128], out[64];
	char *csv = h_csv(H_N, H_D, true, 5);
	int single, total = 0;

	renyi_dataset(one);
	single = fill(one);
	h_dataset_create(&srv, owner, RENYI_DS, a);
	h_upload(&srv, owner, a, csv);
	snprintf(body, sizeof(body),
		 "{\"name\": \"shared\", \"schema\": {\"features\": 5, \"task\": \"binary\"},"
		 " \"bounds\": {\"feature_l2\": 1}, \"share_budget_with\": \"%s\"}",
		 a);
	h_dataset_create(&srv, owner, body, sh);
	h_upload(&srv, owner, sh, csv);
	snprintf(path[0], sizeof(path[0]), "/v1/datasets/%s/runs", a);
	snprintf(path[1], sizeof(path[1]), "/v1/datasets/%s/runs", sh);
	for (;;) {
		struct h_resp r;

		h_http(&srv, "POST", path[total % 2], owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, &r);
		if (r.status == 409) {
			h_resp_clear(&r);
			break;
		}
		ck_assert_msg(r.status == 202, "status %ld: %s", r.status, h_short(r.body));
		h_resp_clear(&r);
		ck_assert_int_lt(++total, 1000);
	}
	ck_assert_int_eq(total, single);
	ck_assert_int_gt(total, 2);
	h_sql(db, out, sizeof(out),
	      "SELECT bool_and(abs(d.spent_rdp[i] - (SELECT sum(r.charge_rdp[i]) FROM runs r"
	      " WHERE r.dataset_id IN ('%s', '%s') AND NOT r.refunded)) <= 1e-12 * d.spent_rdp[i])"
	      "::text FROM datasets d, generate_subscripts(d.filter_orders, 1) i WHERE d.id = '%s'",
	      a, sh, a);
	ck_assert_str_eq(out, "true");
	free(csv);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("renyi");
	TCase *tc = tcase_create("renyi");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_fill_and_refund);
	tcase_add_test(tc, test_concurrent_submissions);
	tcase_add_test(tc, test_estimate_and_budget_view);
	tcase_add_test(tc, test_estimate_basic);
	tcase_add_test(tc, test_patch_budget);
	tcase_add_test(tc, test_shared_filter);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
