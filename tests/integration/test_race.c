/*
 * test_race.c - concurrent requests against one dataset: admission never
 * overspends the budget, idempotent retries never charge twice,
 * concurrent uploads seal a dataset once, and an upload in progress
 * blocks no other request (with a single HTTP thread, where a request
 * that waited for the upload would wait for itself).
 *
 * Threads each make their own libcurl handle (h_http) and are released
 * together by a barrier; they only record what they got, the assertions
 * run in the test's thread afterwards.
 */
#include <check.h>
#include <curl/curl.h>
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
		double deadline = h_now() + 60.0 * h_timeout_scale();

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

/* An upload whose body stops halfway until released. */
struct slow_upload {
	const char *csv;
	size_t len, sent;
	volatile int release; /* set by the test thread; polled by curl's callback */
	char url[256], auth[160];
	long status;
	char err[256];
	char body[512]; /* the start of the reply */
	size_t body_len;
};

static size_t
slow_write(char *data, size_t size, size_t nmemb, void *ud)
{
	struct slow_upload *u = ud;
	size_t n = size * nmemb, room = sizeof(u->body) - 1 - u->body_len;

	memcpy(u->body + u->body_len, data, n < room ? n : room);
	u->body_len += n < room ? n : room;
	u->body[u->body_len] = '\0';
	return n;
}

static size_t
slow_read(char *buf, size_t size, size_t nmemb, void *ud)
{
	struct slow_upload *u = ud;
	size_t half = u->len / 2, n = size * nmemb, end;

	while (u->sent >= half && !__atomic_load_n(&u->release, __ATOMIC_ACQUIRE))
		h_sleep(0.01);
	end = u->sent < half ? half : u->len;
	if (n > end - u->sent)
		n = end - u->sent;
	memcpy(buf, u->csv + u->sent, n);
	u->sent += n;
	return n;
}

static void *
slow_upload_main(void *arg)
{
	struct slow_upload *u = arg;
	struct curl_slist *hl = NULL;
	CURL *c = curl_easy_init();
	CURLcode cc;

	hl = curl_slist_append(hl, "Content-Type: text/csv");
	hl = curl_slist_append(hl, "Expect:");
	hl = curl_slist_append(hl, u->auth);
	curl_easy_setopt(c, CURLOPT_URL, u->url);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L); /* PUT */
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)u->len);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, slow_read);
	curl_easy_setopt(c, CURLOPT_READDATA, u);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, slow_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, u);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	cc = curl_easy_perform(c);
	if (cc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &u->status);
	else
		snprintf(u->err, sizeof(u->err), "%s", curl_easy_strerror(cc));
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	return NULL;
}

static void
slow_upload_start(struct slow_upload *u, pthread_t *th, const char *ds, const char *csv)
{
	double deadline = h_now() + 20.0 * h_timeout_scale();

	memset(u, 0, sizeof(*u));
	u->csv = csv;
	u->len = strlen(csv);
	snprintf(u->url, sizeof(u->url), "%s/v1/datasets/%s/data", srv.base, ds);
	snprintf(u->auth, sizeof(u->auth), "Authorization: Bearer %s", owner);
	ck_assert_int_eq(pthread_create(th, NULL, slow_upload_main, u), 0);
	/* Wait until a chunk is written: the upload then holds what its
	 * transaction holds, the foreign key's lock on the dataset included. */
	while (h_sql_ll(db, "SELECT count(*) FROM pg_stat_activity WHERE datname ="
			    " current_database() AND state = 'idle in transaction'"
			    " AND query LIKE 'INSERT INTO dataset_chunks%%'") == 0) {
		ck_assert_msg(h_now() < deadline, "the upload did not get going");
		h_sleep(0.02);
	}
}

static long
slow_upload_finish(struct slow_upload *u, pthread_t th)
{
	__atomic_store_n(&u->release, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ck_assert_msg(u->status != 0, "the upload: %s", u->err);
	printf("upload of %zu bytes: %ld %s\n", u->len, u->status, u->body);
	return u->status;
}

/* One request during the upload: it must be answered, and soon. */
static void
during(const char *method, const char *ds, const char *suffix, const char *ctype, const char *body,
       long want)
{
	char path[128];
	struct h_resp r;
	double t0 = h_now();

	snprintf(path, sizeof(path), "/v1/datasets/%s%s", ds, suffix);
	h_http(&srv, method, path, owner, ctype, body, body != NULL ? strlen(body) : 0, NULL, &r);
	ck_assert_msg(r.status == want && h_now() - t0 < 10.0 * h_timeout_scale(),
		      "%s %s during an upload: %ld after %.1f s, want %ld: %s%s", method, path,
		      r.status, h_now() - t0, want, h_short(r.body), r.curl_err);
	h_resp_clear(&r);
}

/* With one HTTP thread, every other request is served by the thread that
 * streams the upload: a request that waited for something the upload's
 * transaction holds would wait for itself.  Each must be answered at
 * once: another upload and a run are refused, a budget change and reads
 * go through, and a deletion wins over the upload. */
START_TEST(test_upload_in_progress)
{
	struct slow_upload u;
	char ds[40], ds2[40], body[512];
	/* Over 4 MiB in the first half: a chunk is written before the pause. */
	char *csv = h_csv(200000, H_D, true, 12);
	pthread_t th;

	snprintf(body, sizeof(body), H_DATASET_FMT, "slow", "1");
	h_dataset_create(&srv, owner, body, ds);
	h_dataset_create(&srv, owner, body, ds2);

	slow_upload_start(&u, &th, ds, csv);
	during("PUT", ds, "/data", "text/csv", "0,0,0,0,0,1\n", 409);
	during("POST", ds, "/runs", "application/json", H_RUN_BODY, 409);
	during("PATCH", ds, "", "application/json",
	       "{\"budget\": {\"epsilon\": 2, \"delta\": 1e-6}}", 200); /* < 1/n at the seal */
	during("GET", ds, "", NULL, NULL, 200);
	during("GET", ds, "/runs", NULL, NULL, 200);
	ck_assert_int_eq(slow_upload_finish(&u, th), 200);
	ck_assert_int_eq(h_sql_ll(db, "SELECT n_rows FROM datasets WHERE id = '%s'", ds), 200000);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT (budget_epsilon = 2)::int FROM datasets"
				  " WHERE id = '%s'",
				  ds),
			 1);

	/* Deleted while its data streams in: the upload keeps nothing. */
	slow_upload_start(&u, &th, ds2, csv);
	during("DELETE", ds2, "", NULL, NULL, 204);
	ck_assert_int_eq(slow_upload_finish(&u, th), 404);
	ck_assert_int_eq(
		h_sql_ll(db, "SELECT count(*) FROM dataset_chunks WHERE dataset_id = '%s'", ds2),
		0);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM datasets WHERE id = '%s'"
				  " AND state = 'deleted' AND n_rows IS NULL",
				  ds2),
			 1);
	free(csv);
}
END_TEST

static void
setup_one_thread(void)
{
	/* A pool of 8 as before the pool followed the thread count: room for
	 * a second upload, so the one to the same dataset meets its 409, not
	 * the global upload limit's 429. */
	static const char *const env[] = { "DPOPT_DB_POOL=8", NULL };
	struct h_opts o = { .http_threads = 1, .env = env };

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, &o);
}

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
	tc = tcase_create("upload_in_progress");
	tcase_add_unchecked_fixture(tc, setup_one_thread, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_upload_in_progress);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
