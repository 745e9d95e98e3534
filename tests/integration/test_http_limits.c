/*
 * test_http_limits.c - the HTTP layer under slow, aborted, flooding,
 * hammering and browser clients (issue 8 items 5, 5c, 6, 7, 9, 11, 13):
 *
 *   - slow bodies hold no database connection: GET and /readyz answer
 *     while more slow bodies than pooled connections trickle in, and
 *     uploads past their slots get 429 with Retry-After;
 *   - an aborted upload is rolled back at once: a retry is not 409;
 *   - SIGTERM answers an upload in flight 503, and keeps nothing of it;
 *   - 1100 idle connections from one address leave /healthz answering;
 *   - per-key request rate limits and failed-authentication throttling
 *     (429 with Retry-After);
 *   - CORS preflight and headers for allowed origins only;
 *   - X-Request-Id / traceparent in replies, error bodies and the access
 *     log, which carries no query string;
 *   - malformed requests that reach the service get the JSON error shape.
 *
 * Raw sockets, not libcurl, where a test needs to misbehave or read
 * headers the harness does not keep.  Every connection goes to
 * 127.0.0.1; the flood comes from the source address 127.0.0.2 so that
 * the test's own requests (from 127.0.0.1) are another client.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "harness.h"

#define FLOOD 1100

/* One raw request on a new connection from 127.0.0.1; the reply text. */
static char *
raw_request(const struct h_server *s, const char *req, double timeout_s)
{
	int fd = h_raw_connect(NULL, s->port);
	char *reply;

	ck_assert_msg(fd >= 0, "connect: %s", strerror(errno));
	ck_assert(h_send_all(fd, req, strlen(req)));
	reply = h_read_reply(fd, timeout_s);
	close(fd);
	return reply;
}

static long
reply_status(const char *reply)
{
	return strncmp(reply, "HTTP/1.", 7) == 0 ? strtol(reply + 9, NULL, 10) : 0;
}

/* The value of header name in a reply ("" when absent). */
static const char *
reply_header(const char *reply, const char *name, char *out, size_t cap)
{
	const char *end = strstr(reply, "\r\n\r\n");
	size_t n = strlen(name);

	out[0] = '\0';
	for (const char *l = strstr(reply, "\r\n"); l != NULL && (end == NULL || l < end);
	     l = strstr(l + 2, "\r\n")) {
		const char *v = l + 2;

		if (strncasecmp(v, name, n) == 0 && v[n] == ':') {
			size_t k;

			v += n + 1;
			while (*v == ' ')
				v++;
			k = strcspn(v, "\r\n");
			if (k >= cap)
				k = cap - 1;
			memcpy(out, v, k);
			out[k] = '\0';
			break;
		}
	}
	return out;
}

/* The JSON body of a reply (owned) or NULL. */
static json_t *
reply_json(const char *reply)
{
	const char *b = strstr(reply, "\r\n\r\n");

	return b != NULL ? json_loads(b + 4, 0, NULL) : NULL;
}

/* Assert reply is an error in the one JSON shape with status and code. */
static void
expect_json_error(const char *reply, long status, const char *code)
{
	char ctype[128];
	json_t *j = reply_json(reply);
	const char *got = json_string_value(h_get(j, "error.code"));

	ck_assert_msg(reply_status(reply) == status, "status %ld, want %ld: %s",
		      reply_status(reply), status, h_short(reply));
	reply_header(reply, "Content-Type", ctype, sizeof(ctype));
	ck_assert_msg(strncmp(ctype, "application/json", 16) == 0, "not JSON: %s", h_short(reply));
	ck_assert_msg(got != NULL && strcmp(got, code) == 0, "error.code, want %s: %s", code,
		      h_short(reply));
	ck_assert_msg(json_is_string(h_get(j, "error.message")) &&
			      json_is_string(h_get(j, "error.request_id")),
		      "error shape: %s", h_short(reply));
	json_decref(j);
}

static void
expect_get(const struct h_server *s, const char *path, const char *key, long status, double max_s)
{
	struct h_resp r;
	double t0 = h_now();

	h_http(s, "GET", path, key, NULL, NULL, 0, NULL, &r);
	ck_assert_msg(r.status == status, "GET %s: %ld after %.2f s, want %ld: %s%s", path,
		      r.status, h_now() - t0, status, h_short(r.body), r.curl_err);
	ck_assert_msg(h_now() - t0 < max_s, "GET %s took %.2f s", path, h_now() - t0);
	h_resp_clear(&r);
}

/* Slow clients hold no database connection */

START_TEST(test_slow_bodies_hold_no_connection)
{
	/* Pool of 4: before the fix, 4 slow bodies took every connection. */
	static const char *const env[] = { "DPOPT_DB_POOL=4", "DPOPT_MAX_UPLOADS=2",
					   "DPOPT_MAX_UPLOADS_PER_TENANT=2", NULL };
	struct h_opts o = { .env = env };
	struct h_server srv;
	char db[512], owner[128], body[512], req[1024];
	int fds[8];
	size_t blen;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, &o);
	snprintf(body, sizeof(body), H_DATASET_FMT, "slow", "1");
	blen = strlen(body);
	/* 8 dataset creations, their bodies sent byte by byte: half now... */
	for (int i = 0; i < 8; i++) {
		fds[i] = h_raw_connect(NULL, srv.port);
		ck_assert(fds[i] >= 0);
		snprintf(req, sizeof(req),
			 "POST /v1/datasets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
			 "Content-Type: application/json\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 owner, blen);
		ck_assert(h_send_all(fds[i], req, strlen(req)));
	}
	for (size_t k = 0; k < blen / 2; k++) {
		for (int i = 0; i < 8; i++)
			ck_assert(h_send_all(fds[i], body + k, 1));
		h_sleep(0.002);
	}
	/* ...a keyed read and /readyz answer at once meanwhile... */
	expect_get(&srv, "/v1/datasets", owner, 200, 30.0);
	expect_get(&srv, "/readyz", NULL, 200, 30.0);
	expect_get(&srv, "/v1/algorithms", owner, 200, 30.0);
	/* ...and the slow ones complete. */
	for (size_t k = blen / 2; k < blen; k++) {
		for (int i = 0; i < 8; i++)
			ck_assert(h_send_all(fds[i], body + k, 1));
		h_sleep(0.002);
	}
	for (int i = 0; i < 8; i++) {
		char *reply = h_read_reply(fds[i], 30.0);

		ck_assert_msg(reply_status(reply) == 201, "slow create %d: %s", i, h_short(reply));
		free(reply);
		close(fds[i]);
	}
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM datasets"), 8);
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

START_TEST(test_upload_slots)
{
	static const char *const env[] = { "DPOPT_DB_POOL=4", "DPOPT_MAX_UPLOADS=3",
					   "DPOPT_MAX_UPLOADS_PER_TENANT=2", NULL };
	struct h_opts o = { .env = env };
	struct h_server srv;
	char db[512], acme[128], other[128], ds[4][40], req[1024], ra[16];
	char *csv[4];
	int fds[3];
	char *reply;

	for (int i = 0; i < 4; i++)
		csv[i] = h_csv(H_N, H_D, true, 11 + (unsigned)i);

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", acme, sizeof(acme));
	h_key_create(db, "other", "owner", other, sizeof(other));
	h_server_start(&srv, db, &o);
	h_dataset_create(&srv, acme,
			 "{\"name\": \"a\", \"schema\": {\"features\": 5, \"task\":"
			 " \"binary\"}, \"bounds\": {\"feature_l2\": 1},"
			 " \"budget\": {\"epsilon\": 1, \"delta\": 1e-4}}",
			 ds[0]);
	for (int i = 1; i < 3; i++)
		h_dataset_create(&srv, i == 1 ? acme : other,
				 "{\"name\": \"b\", \"schema\": {\"features\": 5, \"task\":"
				 " \"binary\"}, \"bounds\": {\"feature_l2\": 1},"
				 " \"budget\": {\"epsilon\": 1, \"delta\": 1e-4}}",
				 ds[i]);
	h_dataset_create(&srv, acme,
			 "{\"name\": \"c\", \"schema\": {\"features\": 5, \"task\":"
			 " \"binary\"}, \"bounds\": {\"feature_l2\": 1},"
			 " \"budget\": {\"epsilon\": 1, \"delta\": 1e-4}}",
			 ds[3]);
	/* Two slow uploads of acme (its two slots) and one of other (the
	 * last slot): headers and half of the body. */
	for (int i = 0; i < 3; i++) {
		const char *key = i == 2 ? other : acme;

		fds[i] = h_raw_connect(NULL, srv.port);
		ck_assert(fds[i] >= 0);
		snprintf(req, sizeof(req),
			 "PUT /v1/datasets/%s/data HTTP/1.1\r\nHost: t\r\n"
			 "Authorization: Bearer %s\r\nContent-Type: text/csv\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			 ds[i], key, strlen(csv[i]));
		ck_assert(h_send_all(fds[i], req, strlen(req)));
		ck_assert(h_send_all(fds[i], csv[i], strlen(csv[i]) / 2));
	}
	h_sleep(0.2);
	/* acme's third upload: its tenant is at its limit (429, Retry-After). */
	snprintf(req, sizeof(req),
		 "PUT /v1/datasets/%s/data HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
		 "Content-Type: text/csv\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
		 ds[3], acme, strlen(csv[3]), "");
	reply = raw_request(&srv, req, 10.0);
	expect_json_error(reply, 429, "rate_limited");
	ck_assert_msg(atoi(reply_header(reply, "Retry-After", ra, sizeof(ra))) >= 1, "%s",
		      h_short(reply));
	free(reply);
	/* Reads and admissions still have connections. */
	expect_get(&srv, "/v1/datasets", acme, 200, 30.0);
	expect_get(&srv, "/readyz", NULL, 200, 30.0);
	/* The uploads in flight complete. */
	for (int i = 0; i < 3; i++) {
		size_t clen = strlen(csv[i]);

		ck_assert(h_send_all(fds[i], csv[i] + clen / 2, clen - clen / 2));
		reply = h_read_reply(fds[i], 60.0);
		ck_assert_msg(reply_status(reply) == 200, "upload %d: %s", i, h_short(reply));
		free(reply);
		close(fds[i]);
	}
	/* Slots are given back: the refused one now goes through. */
	h_upload(&srv, acme, ds[3], csv[3]);
	for (int i = 0; i < 4; i++)
		free(csv[i]);
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

/* Aborted uploads and shutdown */

START_TEST(test_aborted_upload_released_at_once)
{
	struct h_server srv;
	char db[512], owner[128], ds[40], req[1024], path[128];
	const size_t sent = 22u * 240000u; /* 5 MiB of valid rows, of a declared 10 MiB */
	char *junk = malloc(sent), *csv = h_csv(H_N, H_D, true, 21);
	struct h_resp r;
	double t0, waited;
	long status = 0;
	int fd, tries = 0;

	ck_assert(junk != NULL);
	for (size_t i = 0; i < sent; i += 22)
		memcpy(junk + i, "0.1,0.2,0.1,0.2,0.1,1\n", 22);
	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, NULL);
	h_dataset_sealed(&srv, owner, "1", ds); /* warms the pool and the code paths */
	h_dataset_create(&srv, owner,
			 "{\"name\": \"abort\", \"schema\": {\"features\": 5, \"task\":"
			 " \"binary\"}, \"bounds\": {\"feature_l2\": 1},"
			 " \"budget\": {\"epsilon\": 1, \"delta\": 1e-4}}",
			 ds);
	fd = h_raw_connect(NULL, srv.port);
	ck_assert(fd >= 0);
	snprintf(req, sizeof(req),
		 "PUT /v1/datasets/%s/data HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
		 "Content-Type: text/csv\r\nContent-Length: %zu\r\n\r\n",
		 ds, owner, 2 * sent);
	ck_assert(h_send_all(fd, req, strlen(req)));
	ck_assert(h_send_all(fd, junk, sent));
	close(fd); /* the client gives up half way */
	t0 = h_now();
	/* The retry: 409 only while the server still reads what was sent. */
	snprintf(path, sizeof(path), "/v1/datasets/%s/data", ds);
	do {
		if (tries++ > 0)
			h_sleep(0.05);
		h_http(&srv, "PUT", path, owner, "text/csv", csv, strlen(csv), NULL, &r);
		status = r.status;
		h_resp_clear(&r);
	} while (status == 409 && h_now() - t0 < 10.0);
	waited = h_now() - t0;
	fprintf(stderr, "aborted upload: retry answered %ld after %.3f s, %d tries\n", status,
		waited, tries);
	/* Before: 409 until the connection's timeout (120 s). */
	ck_assert_msg(status == 200, "retry after an aborted upload: %ld after %.1f s", status,
		      waited);
	ck_assert_int_eq(h_sql_ll(db, "SELECT n_rows FROM datasets WHERE id = '%s'", ds), H_N);
	free(junk);
	free(csv);
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

START_TEST(test_sigterm_answers_upload_503)
{
	struct h_server srv;
	char db[512], owner[128], ds[40], req[1024], state[32];
	char *csv = h_csv(H_N, H_D, true, 31);
	size_t clen = strlen(csv);
	char *reply;
	int fd, status = 0;
	json_t *j;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, NULL);
	h_dataset_create(&srv, owner,
			 "{\"name\": \"term\", \"schema\": {\"features\": 5, \"task\":"
			 " \"binary\"}, \"bounds\": {\"feature_l2\": 1},"
			 " \"budget\": {\"epsilon\": 1, \"delta\": 1e-4}}",
			 ds);
	fd = h_raw_connect(NULL, srv.port);
	ck_assert(fd >= 0);
	snprintf(req, sizeof(req),
		 "PUT /v1/datasets/%s/data HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
		 "Content-Type: text/csv\r\nContent-Length: %zu\r\n\r\n",
		 ds, owner, clen);
	ck_assert(h_send_all(fd, req, strlen(req)));
	ck_assert(h_send_all(fd, csv, clen / 2));
	h_sleep(0.3);
	kill(srv.pid, SIGTERM);
	h_sleep(0.3);
	/* The rest of the body, then the answer: 503 in the JSON shape. */
	ck_assert(h_send_all(fd, csv + clen / 2, clen - clen / 2));
	reply = h_read_reply(fd, 30.0);
	close(fd);
	expect_json_error(reply, 503, "database_unavailable");
	j = reply_json(reply);
	ck_assert_msg(strstr(json_string_value(h_get(j, "error.message")), "shutting down") != NULL,
		      "%s", h_short(reply));
	json_decref(j);
	free(reply);
	/* dpoptd exits cleanly (a second SIGTERM changes nothing), and
	 * nothing of the upload was kept. */
	status = h_server_stop(&srv, SIGTERM, 30.0);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status 0x%x", status);
	h_sql(db, state, sizeof(state), "SELECT state FROM datasets WHERE id = '%s'", ds);
	ck_assert_str_eq(state, "created");
	ck_assert_int_eq(
		h_sql_ll(db, "SELECT count(*) FROM dataset_chunks WHERE dataset_id = '%s'", ds), 0);
	/* Restarted, the same upload goes through. */
	h_server_restart(&srv);
	h_upload(&srv, owner, ds, csv);
	free(csv);
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

/* Connection floods */

START_TEST(test_connection_flood)
{
	static const char *const env[] = { "DPOPT_MAX_CONNECTIONS_PER_CLIENT=32", NULL };
	struct h_opts o = { .env = env };
	struct h_server srv;
	struct rlimit rl;
	char db[512], *reply;
	static int fds[FLOOD];
	int opened = 0, closed_by_server = 0;

	/* Room for the flood in this process. */
	ck_assert(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	if (rl.rlim_cur < FLOOD + 256) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= FLOOD + 256
				      ? FLOOD + 256
				      : rl.rlim_max;
		ck_assert(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	}
	ck_assert_msg(rl.rlim_cur >= FLOOD + 64, "RLIMIT_NOFILE %llu is too low for the test",
		      (unsigned long long)rl.rlim_cur);
	h_db_create(db, sizeof(db));
	h_server_start(&srv, db, &o);
	/* 1100 idle connections from 127.0.0.2. */
	for (int i = 0; i < FLOOD; i++) {
		fds[i] = h_raw_connect("127.0.0.2", srv.port);
		if (fds[i] >= 0)
			opened++;
	}
	ck_assert_msg(opened > FLOOD / 2, "only %d connections opened", opened);
	/* /healthz from another address answers, at once. */
	reply = raw_request(&srv, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
			    10.0);
	ck_assert_msg(reply_status(reply) == 200, "healthz during the flood: %s", h_short(reply));
	free(reply);
	expect_get(&srv, "/readyz", NULL, 200, 30.0);
	/* The server kept at most its per-client limit of them. */
	h_sleep(0.5);
	for (int i = 0; i < FLOOD; i++) {
		char c;

		if (fds[i] < 0)
			continue;
		if (recv(fds[i], &c, 1, MSG_DONTWAIT) == 0)
			closed_by_server++;
		close(fds[i]);
	}
	fprintf(stderr, "flood: %d opened, %d closed by the server\n", opened, closed_by_server);
	ck_assert_msg(opened - closed_by_server <= 32, "server kept %d of %d",
		      opened - closed_by_server, opened);
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

/* Many connections from one address, each within the per-client limit
 * but together at the total: the reserve still lets a client holding at
 * most one (a health checker) in, probe after probe. */
START_TEST(test_connection_reserve)
{
	static const char *const env[] = { "DPOPT_MAX_CONNECTIONS=32", "DPOPT_CONNECTION_RESERVE=8",
					   "DPOPT_MAX_CONNECTIONS_PER_CLIENT=1000", NULL };
	struct h_opts o = { .env = env };
	struct h_server srv;
	char db[512], *reply;
	int fds[40], opened = 0, closed_by_server = 0;

	h_db_create(db, sizeof(db));
	h_server_start(&srv, db, &o);
	for (int i = 0; i < 40; i++) {
		fds[i] = h_raw_connect("127.0.0.2", srv.port);
		opened += fds[i] >= 0;
	}
	h_sleep(0.5);
	/* Each probe from its own address: the reserve admits an address that
	 * holds at most one connection, and on a loaded machine a probe's
	 * closed connection (or the harness's kept-alive readiness check from
	 * 127.0.0.1) can still be counted when the next probe arrives. */
	for (int i = 0; i < 3; i++) {
		static const char probe[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n"
					    "Connection: close\r\n\r\n";
		char src[32];
		int fd;

		snprintf(src, sizeof(src), "127.0.2.%d", i + 1);
		fd = h_raw_connect(src, srv.port);
		ck_assert_msg(fd >= 0, "connect from %s: %s", src, strerror(errno));
		ck_assert(h_send_all(fd, probe, strlen(probe)));
		reply = h_read_reply(fd, 10.0);
		close(fd);
		ck_assert_msg(reply_status(reply) == 200, "healthz %d at the total: %s", i,
			      h_short(reply));
		free(reply);
	}
	for (int i = 0; i < 40; i++) {
		char c;

		if (fds[i] < 0)
			continue;
		if (recv(fds[i], &c, 1, MSG_DONTWAIT) == 0)
			closed_by_server++;
		close(fds[i]);
	}
	fprintf(stderr, "reserve: %d opened, %d kept\n", opened, opened - closed_by_server);
	ck_assert_int_eq(opened, 40);
	ck_assert_msg(opened - closed_by_server <= 25, "kept %d", opened - closed_by_server);
	/* The counts come back to zero: after 100 addresses came and went,
	 * one address again gets the soft limit, not less. */
	for (int i = 0; i < 100; i++) {
		char src[32];

		snprintf(src, sizeof(src), "127.0.1.%d", i + 1);
		fds[i % 40] = h_raw_connect(src, srv.port);
		if (fds[i % 40] >= 0)
			close(fds[i % 40]);
	}
	h_sleep(0.5);
	opened = closed_by_server = 0;
	for (int i = 0; i < 40; i++) {
		fds[i] = h_raw_connect("127.0.0.3", srv.port);
		opened += fds[i] >= 0;
	}
	h_sleep(0.5);
	for (int i = 0; i < 40; i++) {
		char c;

		if (fds[i] >= 0 && recv(fds[i], &c, 1, MSG_DONTWAIT) == 0)
			closed_by_server++;
		if (fds[i] >= 0)
			close(fds[i]);
	}
	fprintf(stderr, "reserve, again: %d opened, %d kept\n", opened, opened - closed_by_server);
	ck_assert_msg(opened - closed_by_server >= 20 && opened - closed_by_server <= 25, "kept %d",
		      opened - closed_by_server);
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

/* Rate limits */

START_TEST(test_key_rate_limit)
{
	static const char *const env[] = { "DPOPT_RATE_LIMIT_PER_SECOND=0.5",
					   "DPOPT_RATE_LIMIT_BURST=5", NULL };
	struct h_opts o = { .env = env };
	struct h_server srv;
	char db[512], k1[128], k2[128], k3[128], req[512], ra[16];
	char *reply;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "analyst", k1, sizeof(k1));
	h_key_create(db, "acme", "analyst", k2, sizeof(k2));
	h_key_create(db, "acme", "analyst", k3, sizeof(k3));
	h_server_start(&srv, db, &o);
	/* A read that checks its key itself (ROUTE_KEY_IN_READ) pays the same
	 * rate, a 404 as well as a 200. */
	for (int i = 0; i < 5; i++)
		expect_get(&srv, "/v1/runs/00000000-0000-4000-8000-000000000000", k3, 404, 30.0);
	snprintf(req, sizeof(req),
		 "GET /v1/datasets/00000000-0000-4000-8000-000000000000/budget HTTP/1.1\r\n"
		 "Host: t\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n",
		 k3);
	reply = raw_request(&srv, req, 10.0);
	expect_json_error(reply, 429, "rate_limited");
	ck_assert_msg(atoi(reply_header(reply, "Retry-After", ra, sizeof(ra))) >= 1, "%s",
		      h_short(reply));
	free(reply);
	for (int i = 0; i < 5; i++)
		expect_get(&srv, "/v1/datasets", k1, 200, 30.0);
	snprintf(req, sizeof(req),
		 "GET /v1/datasets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
		 "Connection: close\r\n\r\n",
		 k1);
	reply = raw_request(&srv, req, 10.0);
	expect_json_error(reply, 429, "rate_limited");
	ck_assert_msg(atoi(reply_header(reply, "Retry-After", ra, sizeof(ra))) >= 1, "%s",
		      h_short(reply));
	free(reply);
	/* Per key: the other key of the same tenant is not limited. */
	expect_get(&srv, "/v1/datasets", k2, 200, 30.0);
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

START_TEST(test_auth_failure_throttle)
{
	static const char *const env[] = { "DPOPT_AUTH_FAILURES_BURST=5",
					   "DPOPT_AUTH_FAILURES_PER_MINUTE=6", NULL };
	struct h_opts o = { .env = env };
	struct h_server srv;
	char db[512], key[128], bad[128], req[512], ra[16];
	int n401 = 0, n429 = 0;
	char *reply;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", key, sizeof(key));
	h_server_start(&srv, db, &o);
	/* A well-formed key that does not exist: the secret's last digit. */
	snprintf(bad, sizeof(bad), "%s", key);
	bad[strlen(bad) - 1] = bad[strlen(bad) - 1] == '0' ? '1' : '0';
	for (int i = 0; i < 100; i++) {
		struct h_resp r;

		/* Every other one on a read that checks its key itself
		 * (ROUTE_KEY_IN_READ): its failures count the same. */
		h_http(&srv, "GET",
		       i % 2 == 0 ? "/v1/datasets"
				  : "/v1/runs/00000000-0000-4000-8000-000000000000",
		       bad, NULL, NULL, 0, NULL, &r);
		n401 += r.status == 401;
		n429 += r.status == 429;
		h_resp_clear(&r);
	}
	fprintf(stderr, "100 wrong keys: %d x 401, %d x 429\n", n401, n429);
	ck_assert_msg(n401 <= 6 && n429 >= 94, "%d x 401, %d x 429", n401, n429);
	snprintf(req, sizeof(req),
		 "GET /v1/datasets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
		 "Connection: close\r\n\r\n",
		 bad);
	reply = raw_request(&srv, req, 10.0);
	expect_json_error(reply, 429, "rate_limited");
	ck_assert_msg(atoi(reply_header(reply, "Retry-After", ra, sizeof(ra))) >= 1, "%s",
		      h_short(reply));
	free(reply);
	/* Probes need no key: /healthz is not throttled. */
	expect_get(&srv, "/healthz", NULL, 200, 30.0);
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

/* CORS */

static char *
preflight(const struct h_server *s, const char *origin, const char *method)
{
	char req[512];

	snprintf(req, sizeof(req),
		 "OPTIONS /v1/datasets HTTP/1.1\r\nHost: t\r\nOrigin: %s\r\n"
		 "Access-Control-Request-Method: %s\r\n"
		 "Access-Control-Request-Headers: authorization, content-type\r\n"
		 "Connection: close\r\n\r\n",
		 origin, method);
	return raw_request(s, req, 10.0);
}

START_TEST(test_cors)
{
	static const char *const listed[] = {
		"DPOPT_CORS_ORIGINS=https://dash.example, https://ops.example:8443", NULL
	};
	static const char *const any[] = { "DPOPT_CORS_ORIGINS=*", NULL };
	struct h_opts o = { .env = listed };
	struct h_server srv;
	char db[512], key[128], req[512], h[256];
	char *reply;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", key, sizeof(key));
	h_server_start(&srv, db, &o);
	/* An allowed origin: preflight answered. */
	reply = preflight(&srv, "https://ops.example:8443", "POST");
	ck_assert_msg(reply_status(reply) == 204, "%s", h_short(reply));
	ck_assert_str_eq(reply_header(reply, "Access-Control-Allow-Origin", h, sizeof(h)),
			 "https://ops.example:8443");
	ck_assert_msg(strstr(reply_header(reply, "Access-Control-Allow-Methods", h, sizeof(h)),
			     "POST") != NULL,
		      "%s", h_short(reply));
	ck_assert_msg(strstr(reply_header(reply, "Access-Control-Allow-Headers", h, sizeof(h)),
			     "Authorization") != NULL,
		      "%s", h_short(reply));
	ck_assert_str_eq(reply_header(reply, "Access-Control-Allow-Credentials", h, sizeof(h)),
			 "true");
	free(reply);
	/* Another origin: refused, in the JSON shape, without CORS headers. */
	reply = preflight(&srv, "https://evil.example", "POST");
	expect_json_error(reply, 403, "forbidden");
	ck_assert_str_eq(reply_header(reply, "Access-Control-Allow-Origin", h, sizeof(h)), "");
	free(reply);
	/* Actual requests: the header for the allowed origin only. */
	snprintf(req, sizeof(req),
		 "GET /v1/datasets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
		 "Origin: https://dash.example\r\nConnection: close\r\n\r\n",
		 key);
	reply = raw_request(&srv, req, 10.0);
	ck_assert_msg(reply_status(reply) == 200, "%s", h_short(reply));
	ck_assert_str_eq(reply_header(reply, "Access-Control-Allow-Origin", h, sizeof(h)),
			 "https://dash.example");
	ck_assert_str_eq(reply_header(reply, "Vary", h, sizeof(h)), "Origin");
	ck_assert_msg(strstr(reply_header(reply, "Access-Control-Expose-Headers", h, sizeof(h)),
			     "X-Request-Id") != NULL,
		      "%s", h_short(reply));
	free(reply);
	snprintf(req, sizeof(req),
		 "GET /v1/datasets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
		 "Origin: https://dash.example.evil\r\nConnection: close\r\n\r\n",
		 key);
	reply = raw_request(&srv, req, 10.0);
	ck_assert_msg(reply_status(reply) == 200, "%s", h_short(reply));
	ck_assert_str_eq(reply_header(reply, "Access-Control-Allow-Origin", h, sizeof(h)), "");
	free(reply);
	h_server_stop(&srv, SIGTERM, 30.0);

	/* "*": any origin, never with credentials. */
	o.env = any;
	h_server_start(&srv, db, &o);
	reply = preflight(&srv, "https://anyone.example", "GET");
	ck_assert_msg(reply_status(reply) == 204, "%s", h_short(reply));
	ck_assert_str_eq(reply_header(reply, "Access-Control-Allow-Origin", h, sizeof(h)), "*");
	ck_assert_str_eq(reply_header(reply, "Access-Control-Allow-Credentials", h, sizeof(h)), "");
	free(reply);
	h_server_stop(&srv, SIGTERM, 30.0);

	/* No DPOPT_CORS_ORIGINS: no browser origin is allowed. */
	h_server_start(&srv, db, NULL);
	reply = preflight(&srv, "https://dash.example", "GET");
	expect_json_error(reply, 403, "forbidden");
	free(reply);
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

/* Request ids and the access log */

START_TEST(test_request_id_and_access_log)
{
	struct h_server srv;
	char db[512], key[128], h[128], want[160];
	const char *bad_hdr[] = { "X-Request-Id: <script>\"x", NULL };
	const char *tp_hdr[] = {
		"traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", NULL
	};
	const char *id_hdr[] = { "X-Request-Id: dash-7f3c.1", NULL };
	struct h_resp r;
	char *log, *reply;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", key, sizeof(key));
	h_server_start(&srv, db, NULL);
	/* A client id: echoed in the header and the error body. */
	reply = raw_request(&srv,
			    "GET /v1/nothing-here HTTP/1.1\r\nHost: t\r\n"
			    "X-Request-Id: dash-7f3c.1\r\nConnection: close\r\n\r\n",
			    10.0);
	expect_json_error(reply, 404, "not_found");
	ck_assert_str_eq(reply_header(reply, "X-Request-Id", h, sizeof(h)), "dash-7f3c.1");
	ck_assert_msg(strstr(reply, "\"request_id\":\"dash-7f3c.1\"") != NULL, "%s",
		      h_short(reply));
	free(reply);
	/* An unsafe one is replaced by a generated id. */
	h_http(&srv, "GET", "/v1/nothing-here", NULL, NULL, NULL, 0, bad_hdr, &r);
	ck_assert_int_eq(r.status, 404);
	ck_assert_msg(strlen(json_string_value(h_get(r.json, "error.request_id"))) == 16, "%s",
		      r.body);
	ck_assert_msg(strstr(r.body, "script") == NULL, "%s", r.body);
	h_resp_clear(&r);
	/* A W3C traceparent gives its trace id. */
	h_http(&srv, "GET", "/v1/nothing-here", NULL, NULL, NULL, 0, tp_hdr, &r);
	ck_assert_str_eq(json_string_value(h_get(r.json, "error.request_id")),
			 "4bf92f3577b34da6a3ce929d0e0e4736");
	h_resp_clear(&r);
	/* A successful request is access-logged: method, route template,
	 * status, duration, key id, request id; no query string. */
	h_http(&srv, "GET", "/v1/datasets?limit=7", key, NULL, NULL, 0, id_hdr, &r);
	ck_assert_int_eq(r.status, 200);
	h_resp_clear(&r);
	h_server_stop(&srv, SIGTERM, 30.0);
	log = h_read_log(&srv);
	snprintf(want, sizeof(want), "key_id=%.16s", key + 4);
	ck_assert_msg(strstr(log,
			     "\"ctx\":\"dash-7f3c.1\",\"code\":\"\",\"msg\":\"access "
			     "method=GET route=/v1/datasets status=200 duration_ms=") != NULL &&
			      strstr(log, want) != NULL,
		      "no access line: %s", h_short(log));
	ck_assert_msg(strstr(log, "\"ctx\":\"dash-7f3c.1\",\"code\":\"not_found\"") != NULL,
		      "error not logged with the client's id: %s", h_short(log));
	ck_assert_msg(strstr(log, "limit=7") == NULL, "query string in the log");
	ck_assert_msg(strstr(log, key + 21) == NULL, "key secret in the log");
	free(log);
}
END_TEST

/* A body over DPOPT_MAX_BODY_BYTES is read (and discarded) before its 413,
 * so a client still writing it gets the answer, not a reset connection
 * (curl: "Failed sending data to the peer"); past HTTP_DRAIN_MAX (8 MiB)
 * the 413 comes at once, without waiting for the body. */
START_TEST(test_too_large_body_drained)
{
	struct h_opts o = { .max_body_bytes = 4096 };
	struct h_server srv;
	char db[512], owner[128], req[1024], *body, *reply;
	const size_t len = 200000;
	struct pollfd p;
	int fd;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, &o);
	body = malloc(len);
	ck_assert_ptr_nonnull(body);
	memset(body, ' ', len);
	/* Declared 200,000 bytes: no answer while the body is still due... */
	fd = h_raw_connect(NULL, srv.port);
	ck_assert(fd >= 0);
	snprintf(req, sizeof(req),
		 "POST /v1/datasets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
		 "Content-Type: application/json\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n",
		 owner, len);
	ck_assert(h_send_all(fd, req, strlen(req)));
	ck_assert(h_send_all(fd, body, len / 2));
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	ck_assert_msg(poll(&p, 1, 300) == 0, "answered before the body arrived");
	/* ...and the 413 once all of it has. */
	ck_assert(h_send_all(fd, body + len / 2, len - len / 2));
	reply = h_read_reply(fd, 30.0);
	close(fd);
	expect_json_error(reply, 413, "body_too_large");
	free(reply);
	/* Declared 9 MiB: answered at once, nothing sent after the headers. */
	snprintf(req, sizeof(req),
		 "POST /v1/datasets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
		 "Content-Type: application/json\r\nContent-Length: %d\r\n"
		 "Connection: close\r\n\r\n",
		 owner, 9 << 20);
	reply = raw_request(&srv, req, 10.0);
	expect_json_error(reply, 413, "body_too_large");
	free(reply);
	free(body);
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

/* Malformed HTTP */

START_TEST(test_malformed_http_gets_json)
{
	static const char *const cases[][2] = {
		{ "BREW /v1/datasets HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
		  "method_not_allowed" },
		{ "GET /v1/datasets/%zz%00/runs HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
		  "unauthenticated" },
		{ "GET /v1/../../etc/passwd HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
		  "not_found" },
		{ "GET /v1/datasets HTTP/1.0\r\n\r\n", "unauthenticated" },
		{ "GET /v1/datasets HTTP/1.1\r\nAuthorization: Basic Zm9vOmJhcg==\r\n"
		  "Connection: close\r\n\r\n",
		  "unauthenticated" },
		{ "OPTIONS /v1/datasets HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
		  "method_not_allowed" },
		{ "POST /v1/datasets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer x\r\n"
		  "Content-Type: application/json\r\nContent-Length: 3\r\n"
		  "Connection: close\r\n\r\n{{{",
		  "unauthenticated" },
	};
	struct h_server srv;
	char db[512];

	h_db_create(db, sizeof(db));
	h_server_start(&srv, db, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *reply = raw_request(&srv, cases[i][0], 10.0);
		json_t *j = reply_json(reply);
		const char *code = json_string_value(h_get(j, "error.code"));

		ck_assert_msg(code != NULL && strcmp(code, cases[i][1]) == 0,
			      "case %zu: want %s: %s", i, cases[i][1], h_short(reply));
		json_decref(j);
		free(reply);
	}
	h_server_stop(&srv, SIGTERM, 30.0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("http_limits");
	TCase *tc = tcase_create("http_limits");
	SRunner *sr;
	int failed;

	setenv("DPOPT_TEST_LOG_LEVEL", "info", 1); /* the access log is at info */
	h_init();
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_slow_bodies_hold_no_connection);
	tcase_add_test(tc, test_upload_slots);
	tcase_add_test(tc, test_aborted_upload_released_at_once);
	tcase_add_test(tc, test_sigterm_answers_upload_503);
	tcase_add_test(tc, test_connection_flood);
	tcase_add_test(tc, test_connection_reserve);
	tcase_add_test(tc, test_key_rate_limit);
	tcase_add_test(tc, test_auth_failure_throttle);
	tcase_add_test(tc, test_cors);
	tcase_add_test(tc, test_request_id_and_access_log);
	tcase_add_test(tc, test_too_large_body_drained);
	tcase_add_test(tc, test_malformed_http_gets_json);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
