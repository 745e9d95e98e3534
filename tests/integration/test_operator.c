/*
 * test_operator.c - the operator features of issue 8: the audit trail
 * (item 11), key management (item 12) and the runs list with feature names
 * (item 14).
 *
 * Audit: every listed state change - dataset create, seal (the upload),
 * patch (a budget change), delete, key create and revoke, run submit and
 * cancel - leaves exactly one row naming the key id, role, tenant, request
 * id (the reply's X-Request-Id) and client address; a refused change and an
 * idempotent replay leave none; GET /v1/audit pages newest first, filters,
 * is owner-only and tenant-scoped, and carries no data value.
 *
 * Keys: a key made by POST /v1/keys is shown once and works on two
 * replicas of one database; revoked through the API or `dpoptd keys
 * revoke`, it is 401 on both at once; `dpoptd keys rotate` keeps tenant and
 * role and honours --grace; the tenant's last owner key needs ?confirm=true.
 *
 * Runs list: GET /v1/runs across datasets, newest first or ?order=asc,
 * ?state= and ?dataset_id=, cursor pages, tenant isolation; a run on a
 * dataset uploaded with a CSV header carries the header's feature names.
 */
#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "harness.h"

struct hdr_sink {
	char rid[129];
};

static size_t
on_hdr(char *buf, size_t size, size_t n, void *arg)
{
	struct hdr_sink *h = arg;
	size_t len = size * n;

	if (len > 13 && strncasecmp(buf, "X-Request-Id:", 13) == 0) {
		size_t a = 13, b = len;

		while (a < b && buf[a] == ' ')
			a++;
		while (b > a && (buf[b - 1] == '\r' || buf[b - 1] == '\n' || buf[b - 1] == ' '))
			b--;
		snprintf(h->rid, sizeof(h->rid), "%.*s", (int)(b - a), buf + a);
	}
	return len;
}

static size_t
on_data(char *buf, size_t size, size_t n, void *arg)
{
	char **p = arg;
	size_t old = *p != NULL ? strlen(*p) : 0, len = size * n;
	char *q = realloc(*p, old + len + 1);

	if (q == NULL)
		return 0;
	memcpy(q + old, buf, len);
	q[old + len] = '\0';
	*p = q;
	return len;
}

/* One keyed request with a body of type ctype (or none), asserting the
 * status (0: 200 or 202); the reply's X-Request-Id goes to rid.  Returns
 * the parsed body (owned, may be NULL). */
static json_t *
call(const struct h_server *s, const char *method, const char *path, const char *key,
     const char *ctype, const char *body, long want, char rid[129])
{
	struct hdr_sink h = { "" };
	struct curl_slist *hl = NULL;
	char url[1024], line[300], *text = NULL;
	long status = 0;
	json_t *j;
	CURL *c = curl_easy_init();

	ck_assert(c != NULL);
	snprintf(url, sizeof(url), "%s%s", s->base, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)(60.0 * h_timeout_scale()));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &text);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_hdr);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &h);
	if (strcmp(method, "GET") != 0)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		snprintf(line, sizeof(line), "Content-Type: %s", ctype);
		hl = curl_slist_append(hl, line);
	}
	hl = curl_slist_append(hl, "Expect:");
	snprintf(line, sizeof(line), "Authorization: Bearer %s", key);
	hl = curl_slist_append(hl, line);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	ck_assert_msg(curl_easy_perform(c) == CURLE_OK, "%s %s: no reply", method, path);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	ck_assert_msg(status == want || (want == 0 && (status == 200 || status == 202)),
		      "%s %s: status %ld, want %ld: %s", method, path, status, want,
		      h_short(text != NULL ? text : ""));
	ck_assert_msg(strlen(h.rid) >= 16, "%s %s: no X-Request-Id", method, path);
	if (rid != NULL)
		memcpy(rid, h.rid, sizeof(h.rid));
	j = text != NULL ? json_loads(text, 0, NULL) : NULL;
	free(text);
	return j;
}

/* The id of a key: the 16 hex digits after "dpk_". */
static void
key_id(const char *key, char out[17])
{
	memcpy(out, key + 4, 16);
	out[16] = '\0';
}

static long
status_of(const struct h_server *s, const char *method, const char *path, const char *key)
{
	struct h_resp r;
	long st;

	h_http(s, method, path, key, NULL, NULL, 0, NULL, &r);
	st = r.status;
	h_resp_clear(&r);
	return st;
}

/* `dpoptd keys ARGS...` on db; returns the exit status; the first line of
 * stdout goes to out. */
static int
keys_cli(const char *db, const char *args, char *out, size_t cap)
{
	char cmd[1024];
	FILE *p;
	int st;

	setenv("DPOPT_DATABASE_URL", db, 1);
	snprintf(cmd, sizeof(cmd), "'%s' keys %s 2>/dev/null", getenv("DPOPT_BIN"), args);
	p = popen(cmd, "r");
	ck_assert(p != NULL);
	if (out != NULL) {
		out[0] = '\0';
		if (fgets(out, (int)cap, p) != NULL)
			out[strcspn(out, "\n")] = '\0';
	}
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Every audit row of the tenant by following the pages of size limit. */
static json_t *
audit_all(const struct h_server *s, const char *key, const char *query, int limit)
{
	json_t *all = json_array();
	char path[512], cursor[32] = "";

	for (int pages = 0; pages < 100; pages++) {
		json_t *page;
		const char *next;

		snprintf(path, sizeof(path), "/v1/audit?limit=%d%s%s%s%s", limit,
			 cursor[0] != '\0' ? "&cursor=" : "", cursor, query != NULL ? "&" : "",
			 query != NULL ? query : "");
		page = h_json(s, "GET", path, key, NULL, 200);
		json_array_extend(all, json_object_get(page, "items"));
		next = json_string_value(json_object_get(page, "next_cursor"));
		snprintf(cursor, sizeof(cursor), "%s", next != NULL ? next : "");
		json_decref(page);
		if (cursor[0] == '\0')
			return all;
	}
	ck_abort_msg("audit pages do not end");
	return all;
}

static const char *
sget(json_t *j, const char *path)
{
	const char *v = json_string_value(h_get(j, path));

	return v != NULL ? v : "";
}

/* The API rows of the audit trail (the command line's key.create rows of
 * the test's own keys left out), newest first. */
static json_t *
api_rows(json_t *all)
{
	json_t *out = json_array(), *row;
	size_t i;

	json_array_foreach (all, i, row) {
		if (strcmp(sget(row, "actor.via"), "api") == 0)
			json_array_append(out, row);
	}
	return out;
}

START_TEST(test_audit_trail)
{
	struct h_server s;
	char db[512], owner[128], analyst[128], other[128], oid[17], aid[17];
	char ds[40], run[40], run2[40], new_key_id[17], path[256], body[512], cell[16];
	char rid[8][129];
	const char *want[8] = {
		"dataset.create", "dataset.seal", "dataset.patch", "run.submit",
		"run.cancel",     "key.create",   "key.revoke",    "dataset.delete"
	};
	const char *who[8] = { oid, oid, oid, aid, aid, oid, oid, oid };
	const char *rp[] = { "Idempotency-Key: op-1", NULL };
	struct h_opts o = { .step_delay_ms = 200 };
	struct h_resp r;
	char *csv = h_csv(H_N, H_D, true, 7), *text;
	json_t *j, *all, *rows, *row;
	long long before;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_key_create(db, "acme", "analyst", analyst, sizeof(analyst));
	h_key_create(db, "other", "owner", other, sizeof(other));
	key_id(owner, oid);
	key_id(analyst, aid);
	h_server_start(&s, db, &o);

	snprintf(body, sizeof(body), H_DATASET_FMT, "audited", "1");
	j = call(&s, "POST", "/v1/datasets", owner, "application/json", body, 201, rid[0]);
	snprintf(ds, sizeof(ds), "%s", sget(j, "id"));
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/datasets/%s/data", ds);
	json_decref(call(&s, "PUT", path, owner, "text/csv", csv, 200, rid[1]));
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	json_decref(call(&s, "PATCH", path, owner, "application/json",
			 "{\"budget\": {\"epsilon\": 2, \"delta\": 1e-4}}", 200, rid[2]));

	/* A refused change leaves no row. */
	before = h_sql_ll(db, "SELECT count(*) FROM audit_log");
	h_expect_error(&s, "PATCH", path, owner, "application/json", "{\"budget\": {}}", 14, NULL,
		       400, "invalid_request", "budget.epsilon", NULL);
	h_expect_error(&s, "DELETE", path, analyst, NULL, NULL, 0, NULL, 403, "forbidden", NULL,
		       NULL);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM audit_log"), before);

	/* The analyst's run, submitted with a key and replayed: one row. */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	h_http(&s, "POST", path, analyst, "application/json", H_RUN_BODY, strlen(H_RUN_BODY), rp,
	       &r);
	ck_assert_int_eq(r.status, 202);
	snprintf(run, sizeof(run), "%s", sget(r.json, "id"));
	h_resp_clear(&r);
	h_http(&s, "POST", path, analyst, "application/json", H_RUN_BODY, strlen(H_RUN_BODY), rp,
	       &r);
	ck_assert_int_eq(r.status, 202);
	ck_assert_str_eq(r.replayed, "true");
	h_resp_clear(&r);
	j = call(&s, "POST", path, analyst, "application/json", H_RUN_BODY, 202, rid[3]);
	snprintf(run2, sizeof(run2), "%s", sget(j, "id"));
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/runs/%s", run2);
	/* 200 if still queued, 202 if a worker has it: both are audited. */
	json_decref(call(&s, "DELETE", path, analyst, NULL, NULL, 0, rid[4]));

	j = call(&s, "POST", "/v1/keys", owner, "application/json", "{\"role\": \"analyst\"}", 201,
		 rid[5]);
	snprintf(new_key_id, sizeof(new_key_id), "%s", sget(j, "id"));
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/keys/%s", new_key_id);
	json_decref(call(&s, "DELETE", path, owner, NULL, NULL, 200, rid[6]));
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	json_decref(call(&s, "DELETE", path, owner, NULL, NULL, 204, rid[7]));

	/* Pages of 3, newest first: the API rows are the changes in reverse;
	 * the first run's row comes before the second's. */
	all = audit_all(&s, owner, NULL, 3);
	rows = api_rows(all);
	ck_assert_msg(json_array_size(rows) == 9, "%zu API rows: %s", json_array_size(rows),
		      h_short(json_dumps(rows, 0)));
	for (int k = 0; k < 9; k++) {
		/* Newest first: delete ... create, with the first submission
		 * (its request id not captured) between patch and the second. */
		static const int order[9] = { 7, 6, 5, 4, 3, -1, 2, 1, 0 };
		int c = order[k];
		const char *action = c >= 0 ? want[c] : "run.submit";

		row = json_array_get(rows, (size_t)k);
		ck_assert_msg(strcmp(sget(row, "action"), action) == 0, "row %d: %s, want %s", k,
			      sget(row, "action"), action);
		ck_assert_str_eq(sget(row, "actor.tenant"), "acme");
		ck_assert_str_eq(sget(row, "client_address"), "127.0.0.1");
		if (c >= 0) {
			ck_assert_str_eq(sget(row, "actor.key_id"), who[c]);
			ck_assert_str_eq(sget(row, "actor.role"),
					 who[c] == oid ? "owner" : "analyst");
			ck_assert_str_eq(sget(row, "request_id"), rid[c]);
		} else {
			ck_assert_str_eq(sget(row, "actor.key_id"), aid);
			ck_assert_str_eq(sget(row, "run_id"), run);
		}
		if (strncmp(action, "dataset.", 8) == 0 || strncmp(action, "run.", 4) == 0)
			ck_assert_str_eq(sget(row, "dataset_id"), ds);
		if (strncmp(action, "key.", 4) == 0)
			ck_assert_str_eq(sget(row, "key_id"), new_key_id);
	}
	ck_assert_str_eq(sget(json_array_get(rows, 3), "run_id"), run2);
	ck_assert_str_eq(sget(json_array_get(rows, 4), "run_id"), run2);
	ck_assert_int_eq(json_integer_value(h_get(json_array_get(rows, 7), "detail.n_rows")), H_N);
	ck_assert(json_number_value(h_get(json_array_get(rows, 6), "detail.budget.epsilon")) ==
		  2.0);
	ck_assert(json_number_value(h_get(json_array_get(rows, 8), "detail.budget.epsilon")) ==
		  1.0);
	/* The command line's rows: operator, no key, no address. */
	row = json_array_get(all, json_array_size(all) - 1);
	ck_assert_str_eq(sget(row, "action"), "key.create");
	ck_assert_str_eq(sget(row, "actor.via"), "cli");
	ck_assert_str_eq(sget(row, "actor.role"), "operator");
	ck_assert(json_is_null(h_get(row, "actor.key_id")));
	ck_assert(json_is_null(h_get(row, "client_address")));
	ck_assert_int_eq(json_array_size(all), 9 + 2);

	/* No data value: the first row's first cell is nowhere. */
	text = json_dumps(all, 0);
	snprintf(cell, sizeof(cell), "%.*s", (int)strcspn(strchr(csv, '\n') + 1, ","),
		 strchr(csv, '\n') + 1);
	ck_assert_msg(strlen(cell) >= 7 && strstr(text, cell) == NULL, "cell %s in the audit",
		      cell);
	free(text);
	json_decref(rows);
	json_decref(all);

	/* Filters. */
	all = audit_all(&s, owner, "action=run.submit", 20);
	ck_assert_int_eq(json_array_size(all), 2);
	json_decref(all);
	snprintf(body, sizeof(body), "dataset_id=%s", ds);
	all = audit_all(&s, owner, body, 2);
	ck_assert_int_eq(json_array_size(all), 7);
	json_decref(all);
	snprintf(body, sizeof(body), "run_id=%s&action=run.cancel", run2);
	all = audit_all(&s, owner, body, 20);
	ck_assert_int_eq(json_array_size(all), 1);
	ck_assert_str_eq(sget(json_array_get(all, 0), "request_id"), rid[4]);
	json_decref(all);
	snprintf(body, sizeof(body), "key_id=%s", new_key_id);
	all = audit_all(&s, owner, body, 20);
	ck_assert_int_eq(json_array_size(all), 2);
	json_decref(all);
	h_expect_error(&s, "GET", "/v1/audit?action=dataset.explode", owner, NULL, NULL, 0, NULL,
		       400, "invalid_request", "action", NULL);
	h_expect_error(&s, "GET", "/v1/audit?dataset_id=nope", owner, NULL, NULL, 0, NULL, 400,
		       "invalid_request", "dataset_id", NULL);
	h_expect_error(&s, "GET", "/v1/audit?cursor=x1", owner, NULL, NULL, 0, NULL, 400,
		       "invalid_request", "cursor", NULL);

	/* Owners only; the other tenant sees its own row only. */
	h_expect_error(&s, "GET", "/v1/audit", analyst, NULL, NULL, 0, NULL, 403, "forbidden", NULL,
		       NULL);
	all = audit_all(&s, other, NULL, 20);
	ck_assert_int_eq(json_array_size(all), 1);
	ck_assert_str_eq(sget(json_array_get(all, 0), "actor.tenant"), "other");
	json_decref(all);
	snprintf(body, sizeof(body), "dataset_id=%s", ds);
	all = audit_all(&s, other, body, 20);
	ck_assert_int_eq(json_array_size(all), 0);
	json_decref(all);

	/* Append-only. */
	ck_assert_int_eq(h_sql_ll(db, "DELETE FROM audit_log; UPDATE audit_log SET action ="
				      " 'dataset.create'; SELECT count(*) FROM audit_log"
				      " WHERE action = 'dataset.create'"),
			 1);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM audit_log"), 12);
	free(csv);
	h_server_stop(&s, SIGTERM, 60.0);
}
END_TEST

#define ZERO_RUN    "/v1/runs/00000000-0000-4000-8000-000000000000"
#define ZERO_BUDGET "/v1/datasets/00000000-0000-4000-8000-000000000000/budget"

START_TEST(test_keys)
{
	struct h_server s1, s2;
	char db[512], owner[128], owner2[128], lone[128], analyst[128], key[128], key2[128];
	char id[17], id2[17], path[128], out[256], rotated[128];
	json_t *j, *item;
	size_t i;
	char *text;
	bool seen = false;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_key_create(db, "acme", "owner", owner2, sizeof(owner2));
	h_key_create(db, "acme", "analyst", analyst, sizeof(analyst));
	h_key_create(db, "lonely", "owner", lone, sizeof(lone));
	h_server_start(&s1, db, NULL);
	h_server_start(&s2, db, NULL);

	/* Created through the API: shown once, valid on both replicas. */
	j = h_json(&s1, "POST", "/v1/keys", owner, "{\"role\": \"analyst\"}", 201);
	snprintf(key, sizeof(key), "%s", sget(j, "key"));
	snprintf(id, sizeof(id), "%s", sget(j, "id"));
	ck_assert_uint_eq(strlen(key), 85);
	ck_assert_int_eq(strncmp(key + 4, id, 16), 0);
	ck_assert_str_eq(sget(j, "role"), "analyst");
	ck_assert_str_eq(sget(j, "state"), "active");
	json_decref(j);
	ck_assert_int_eq(status_of(&s1, "GET", "/v1/datasets", key), 200);
	ck_assert_int_eq(status_of(&s2, "GET", "/v1/datasets", key), 200);
	/* Listed without the key or its hash. */
	j = h_json(&s2, "GET", "/v1/keys?limit=2", owner, NULL, 200);
	ck_assert(!json_is_null(json_object_get(j, "next_cursor")));
	json_decref(j);
	j = h_json(&s2, "GET", "/v1/keys", owner, NULL, 200);
	text = json_dumps(j, 0);
	ck_assert(strstr(text, key + 21) == NULL && strstr(text, "\"key\"") == NULL);
	free(text);
	ck_assert_int_eq(json_array_size(json_object_get(j, "items")), 4);
	json_array_foreach (json_object_get(j, "items"), i, item) {
		ck_assert_str_eq(sget(item, "tenant"), "acme");
		seen = seen || strcmp(sget(item, "id"), id) == 0;
	}
	ck_assert(seen);
	json_decref(j);

	/* Roles and tenants. */
	h_expect_error(&s1, "POST", "/v1/keys", analyst, "application/json",
		       "{\"role\": \"owner\"}", 17, NULL, 403, "forbidden", NULL, NULL);
	h_expect_error(&s1, "GET", "/v1/keys", analyst, NULL, NULL, 0, NULL, 403, "forbidden", NULL,
		       NULL);
	h_expect_error(&s1, "POST", "/v1/keys", owner, "application/json", "{\"role\": \"god\"}",
		       15, NULL, 400, "invalid_request", "role", NULL);
	snprintf(path, sizeof(path), "/v1/keys/%s", id);
	h_expect_error(&s1, "DELETE", path, analyst, NULL, NULL, 0, NULL, 403, "forbidden", NULL,
		       NULL);
	h_expect_error(&s1, "DELETE", path, lone, NULL, NULL, 0, NULL, 404, "not_found", NULL,
		       NULL);
	j = h_json(&s1, "GET", "/v1/keys", lone, NULL, 200);
	ck_assert_int_eq(json_array_size(json_object_get(j, "items")), 1);
	json_decref(j);

	/* Revoked on one replica: 401 on both, at once, also on the reads
	 * that check their key in their own statement (ROUTE_KEY_IN_READ; no
	 * cache there either), which accepted it a moment before (404: no
	 * such run or dataset of the tenant). */
	ck_assert_int_eq(status_of(&s2, "GET", ZERO_RUN, key), 404);
	ck_assert_int_eq(status_of(&s2, "GET", ZERO_BUDGET, key), 404);
	json_decref(h_json(&s1, "DELETE", path, owner, NULL, 200));
	ck_assert_int_eq(status_of(&s2, "GET", "/v1/datasets", key), 401);
	ck_assert_int_eq(status_of(&s1, "GET", "/v1/datasets", key), 401);
	ck_assert_int_eq(status_of(&s2, "GET", ZERO_RUN, key), 401);
	ck_assert_int_eq(status_of(&s2, "GET", ZERO_BUDGET, key), 401);
	h_expect_error(&s2, "DELETE", path, owner, NULL, NULL, 0, NULL, 409, "conflict", NULL,
		       NULL);

	/* Revoked by the command line: the same. */
	j = h_json(&s2, "POST", "/v1/keys", owner, "{\"role\": \"owner\"}", 201);
	snprintf(key2, sizeof(key2), "%s", sget(j, "key"));
	snprintf(id2, sizeof(id2), "%s", sget(j, "id"));
	json_decref(j);
	ck_assert_int_eq(status_of(&s1, "GET", "/v1/keys", key2), 200);
	snprintf(out, sizeof(out), "revoke %s", id2);
	ck_assert_int_eq(keys_cli(db, out, NULL, 0), 0);
	ck_assert_int_eq(status_of(&s1, "GET", "/v1/keys", key2), 401);
	ck_assert_int_eq(status_of(&s2, "GET", "/v1/keys", key2), 401);

	/* Rotation without grace: the old key is 401 at once, the new one
	 * has the same tenant and role. */
	key_id(owner2, id2);
	snprintf(out, sizeof(out), "rotate %s", id2);
	ck_assert_int_eq(keys_cli(db, out, rotated, sizeof(rotated)), 0);
	ck_assert_uint_eq(strlen(rotated), 85);
	ck_assert_int_eq(status_of(&s2, "GET", "/v1/keys", owner2), 401);
	ck_assert_int_eq(status_of(&s1, "GET", "/v1/keys", rotated), 200); /* owner-only route */
	j = h_json(&s1, "GET", "/v1/datasets", rotated, NULL, 200);        /* tenant acme */
	json_decref(j);
	/* With a grace period the old key lasts, as "expiring". */
	key_id(rotated, id2);
	snprintf(out, sizeof(out), "rotate %s --grace 600", id2);
	ck_assert_int_eq(keys_cli(db, out, key2, sizeof(key2)), 0);
	ck_assert_int_eq(status_of(&s1, "GET", "/v1/keys", rotated), 200);
	ck_assert_int_eq(status_of(&s2, "GET", "/v1/keys", key2), 200);
	ck_assert_int_eq(status_of(&s1, "GET", ZERO_RUN, rotated), 404);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM api_keys WHERE id = '%s' AND revoked_at >"
				  " now() + interval '500 seconds'",
				  id2),
			 1);
	key_id(key2, out);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM api_keys WHERE id = '%s' AND"
				  " rotated_from = '%s' AND role = 'owner' AND tenant_id = 'acme'",
				  out, id2),
			 1);
	ck_assert_int_eq(keys_cli(db, "rotate 0000000000000000", NULL, 0), 1);
	ck_assert_int_eq(keys_cli(db, "rotate", NULL, 0), 2);
	ck_assert_int_eq(keys_cli(db, "list --tenant acme", out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "acme") != NULL, "list: %s", out);

	/* The last owner key: refused without ?confirm=true. */
	key_id(lone, id);
	snprintf(path, sizeof(path), "/v1/keys/%s", id);
	h_expect_error(&s1, "DELETE", path, lone, NULL, NULL, 0, NULL, 409, "conflict", "confirm",
		       "last owner key");
	ck_assert_int_eq(status_of(&s2, "GET", "/v1/keys", lone), 200);
	snprintf(path, sizeof(path), "/v1/keys/%s?confirm=true", id);
	json_decref(h_json(&s2, "DELETE", path, lone, NULL, 200));
	ck_assert_int_eq(status_of(&s1, "GET", "/v1/datasets", lone), 401);

	/* Every key change above is in the trail, in its transaction. */
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM audit_log WHERE action = 'key.revoke'"),
			 5);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM audit_log WHERE action = 'key.create'"),
			 4 + 2 + 2);
	h_server_stop(&s1, SIGTERM, 60.0);
	h_server_stop(&s2, SIGTERM, 60.0);
}
END_TEST

/* The ids of a page's items, in order, as "a,b,c". */
static void
page_ids(json_t *page, char *out, size_t cap)
{
	json_t *item;
	size_t i, o = 0;

	out[0] = '\0';
	json_array_foreach (json_object_get(page, "items"), i, item) {
		o += (size_t)snprintf(out + o, cap - o, "%s%s", i > 0 ? "," : "", sget(item, "id"));
	}
}

START_TEST(test_runs_list)
{
	struct h_server s;
	char db[512], owner[128], analyst[128], other[128];
	char d1[40], d2[40], r1[40], r2[40], r3[40], path[256], got[512], want[512];
	char cursor[40] = "", body[512];
	struct h_opts o = { .step_delay_ms = 100 };
	char *csv, *bare;
	json_t *j, *run;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_key_create(db, "acme", "analyst", analyst, sizeof(analyst));
	h_key_create(db, "other", "owner", other, sizeof(other));
	h_server_start(&s, db, &o);

	/* d1 with the standard CSV's header (x1..x5,y), d2 without one. */
	h_dataset_sealed(&s, owner, "5", d1);
	snprintf(body, sizeof(body), H_DATASET_FMT, "bare", "5");
	h_dataset_create(&s, owner, body, d2);
	csv = h_csv(H_N, H_D, true, 3);
	bare = strchr(csv, '\n') + 1;
	h_upload(&s, owner, d2, bare);
	free(csv);

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", d1);
	json_decref(h_run_create(&s, analyst, d1, H_RUN_BODY_10_STEPS, r1));
	json_decref(h_run_create(&s, analyst, d2, H_RUN_BODY_10_STEPS, r2));
	snprintf(path, sizeof(path), "/v1/runs/%s", r2);
	{
		struct h_resp r;

		h_http(&s, "DELETE", path, analyst, NULL, NULL, 0, NULL, &r);
		ck_assert_msg(r.status == 200 || r.status == 202, "cancel: %ld", r.status);
		h_resp_clear(&r);
	}
	json_decref(h_run_create(&s, analyst, d1, H_RUN_BODY_10_STEPS, r3));
	json_decref(h_run_wait(&s, analyst, r1, "succeeded", 120));
	json_decref(h_run_wait(&s, analyst, r2, "cancelled", 120));
	json_decref(h_run_wait(&s, analyst, r3, "succeeded", 120));

	/* Newest first by default, oldest first with order=asc. */
	j = h_json(&s, "GET", "/v1/runs", analyst, NULL, 200);
	page_ids(j, got, sizeof(got));
	snprintf(want, sizeof(want), "%s,%s,%s", r3, r2, r1);
	ck_assert_str_eq(got, want);
	ck_assert(json_is_null(json_object_get(j, "next_cursor")));
	json_decref(j);
	j = h_json(&s, "GET", "/v1/runs?order=asc", owner, NULL, 200);
	page_ids(j, got, sizeof(got));
	snprintf(want, sizeof(want), "%s,%s,%s", r1, r2, r3);
	ck_assert_str_eq(got, want);
	json_decref(j);
	/* Pages of one, both ways. */
	for (int dir = 0; dir < 2; dir++) {
		const char *order = dir == 0 ? "desc" : "asc";
		const char *seq[3] = { dir == 0 ? r3 : r1, r2, dir == 0 ? r1 : r3 };

		cursor[0] = '\0';
		for (int k = 0; k < 3; k++) {
			const char *next;

			snprintf(path, sizeof(path), "/v1/runs?order=%s&limit=1%s%s", order,
				 cursor[0] != '\0' ? "&cursor=" : "", cursor);
			j = h_json(&s, "GET", path, analyst, NULL, 200);
			page_ids(j, got, sizeof(got));
			ck_assert_str_eq(got, seq[k]);
			next = json_string_value(json_object_get(j, "next_cursor"));
			ck_assert(k < 2 ? next != NULL : next == NULL);
			snprintf(cursor, sizeof(cursor), "%s", next != NULL ? next : "");
			json_decref(j);
		}
	}
	/* Filters. */
	snprintf(path, sizeof(path), "/v1/runs?dataset_id=%s", d1);
	j = h_json(&s, "GET", path, analyst, NULL, 200);
	page_ids(j, got, sizeof(got));
	snprintf(want, sizeof(want), "%s,%s", r3, r1);
	ck_assert_str_eq(got, want);
	json_decref(j);
	j = h_json(&s, "GET", "/v1/runs?state=cancelled", analyst, NULL, 200);
	page_ids(j, got, sizeof(got));
	ck_assert_str_eq(got, r2);
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/runs?state=succeeded&dataset_id=%s&order=asc", d1);
	j = h_json(&s, "GET", path, analyst, NULL, 200);
	page_ids(j, got, sizeof(got));
	snprintf(want, sizeof(want), "%s,%s", r1, r3);
	ck_assert_str_eq(got, want);
	json_decref(j);
	j = h_json(&s, "GET", "/v1/runs?state=queued", analyst, NULL, 200);
	ck_assert_int_eq(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
	h_expect_error(&s, "GET", "/v1/runs?state=done", analyst, NULL, NULL, 0, NULL, 400,
		       "invalid_request", "state", NULL);
	h_expect_error(&s, "GET", "/v1/runs?order=up", analyst, NULL, NULL, 0, NULL, 400,
		       "invalid_request", "order", NULL);
	h_expect_error(&s, "GET", "/v1/runs?dataset_id=D1", analyst, NULL, NULL, 0, NULL, 400,
		       "invalid_request", "dataset_id", NULL);
	h_expect_error(&s, "GET", "/v1/runs?cursor=nope", analyst, NULL, NULL, 0, NULL, 400,
		       "invalid_request", "cursor", NULL);

	/* Another tenant sees none of them, with or without filters. */
	j = h_json(&s, "GET", "/v1/runs", other, NULL, 200);
	ck_assert_int_eq(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/runs?dataset_id=%s&cursor=%s", d1, r3);
	j = h_json(&s, "GET", path, other, NULL, 200);
	ck_assert_int_eq(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);

	/* Feature names next to x, from d1's header; none on d2. */
	snprintf(path, sizeof(path), "/v1/runs/%s", r1);
	run = h_json(&s, "GET", path, analyst, NULL, 200);
	j = h_get(run, "result.feature_names");
	ck_assert_msg(j != NULL, "no feature names: %s", h_short(json_dumps(run, 0)));
	ck_assert_int_eq(json_array_size(j), H_D);
	for (size_t k = 0; k < H_D; k++) {
		snprintf(want, sizeof(want), "x%zu", k + 1);
		ck_assert_str_eq(json_string_value(json_array_get(j, k)), want);
	}
	ck_assert_int_eq(json_array_size(h_get(run, "result.x")), H_D);
	json_decref(run);
	j = h_json(&s, "GET", "/v1/runs?state=succeeded", analyst, NULL, 200);
	ck_assert_int_eq(json_array_size(h_get(json_array_get(json_object_get(j, "items"), 0),
					       "result.feature_names")),
			 H_D);
	json_decref(j);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM datasets WHERE id = '%s'"
				  " AND feature_names IS NULL",
				  d2),
			 1);
	/* A header's names are trimmed and unquoted like cells; one unusable
	 * name (over 128 bytes) keeps none, and the upload still seals. */
	for (int k = 0; k < 2; k++) {
		char ds[40], head[512], *rows = h_csv(H_N, H_D, true, 11 + (unsigned)k), *up;
		size_t hl;

		snprintf(body, sizeof(body), H_DATASET_FMT, k == 0 ? "quoted" : "long", "5");
		h_dataset_create(&s, owner, body, ds);
		snprintf(head, sizeof(head), "\"age years\", b ,c,d,%s,y\n",
			 k == 0 ? "\" e \""
				: "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
				  "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
				  "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
		hl = strlen(head);
		up = malloc(hl + strlen(rows) + 1);
		ck_assert(up != NULL);
		memcpy(up, head, hl);
		strcpy(up + hl, strchr(rows, '\n') + 1);
		h_upload(&s, owner, ds, up);
		h_sql(db, got, sizeof(got),
		      "SELECT coalesce(array_to_string(feature_names, '|'), 'NULL') FROM datasets"
		      " WHERE id = '%s'",
		      ds);
		ck_assert_str_eq(got, k == 0 ? "age years|b|c|d|e" : "NULL");
		free(up);
		free(rows);
	}
	h_server_stop(&s, SIGTERM, 60.0);
}
END_TEST

/* The audit row is part of the change's transaction: when it cannot be
 * written, the change does not happen (nothing charged, nothing created),
 * and the client is told to retry (503). */
START_TEST(test_unaudited_change_rolls_back)
{
	struct h_server s;
	char db[512], owner[128], ds[40], path[128], before[256], after[256], run[40];
	const char *patch = "{\"budget\": {\"epsilon\": 3, \"delta\": 1e-4}}";
	const char *role = "{\"role\": \"owner\"}";
	const char *pub = "{\"name\": \"n\", \"public\": true, \"schema\": {\"features\": 1,"
			  " \"task\": \"binary\"}, \"bounds\": {\"feature_l2\": 1}}";
	char body[512], ds2[40], analyst[128], aid[17], *csv = h_csv(H_N, H_D, true, 5);
	long long keys, runs;

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&s, db, NULL);
	h_dataset_sealed(&s, owner, "1", ds);
	json_decref(h_run_create(&s, owner, ds, H_RUN_BODY, run));
	json_decref(h_run_wait(&s, owner, run, NULL, 120));
	snprintf(body, sizeof(body), H_DATASET_FMT, "unsealed", "1");
	h_dataset_create(&s, owner, body, ds2);
	h_key_create(db, "acme", "analyst", analyst, sizeof(analyst));
	key_id(analyst, aid);

	/* Audit rows of these actions now fail to insert. */
	h_sql_ll(db, "ALTER TABLE audit_log ADD CONSTRAINT t_refuse CHECK (action NOT IN"
		     " ('dataset.patch', 'run.submit', 'key.create', 'dataset.delete',"
		     " 'dataset.create', 'dataset.seal', 'key.revoke')) NOT VALID; SELECT 1");
	h_ledger_snapshot(db, before, sizeof(before));
	keys = h_sql_ll(db, "SELECT count(*) FROM api_keys");
	runs = h_sql_ll(db, "SELECT count(*) FROM runs");
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	h_expect_error(&s, "PATCH", path, owner, "application/json", patch, strlen(patch), NULL,
		       503, "database_unavailable", NULL, NULL);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	h_expect_error(&s, "POST", path, owner, "application/json", H_RUN_BODY, strlen(H_RUN_BODY),
		       NULL, 503, "database_unavailable", NULL, NULL);
	h_expect_error(&s, "POST", "/v1/keys", owner, "application/json", role, strlen(role), NULL,
		       503, "database_unavailable", NULL, NULL);
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	h_expect_error(&s, "DELETE", path, owner, NULL, NULL, 0, NULL, 503, "database_unavailable",
		       NULL, NULL);
	h_expect_error(&s, "POST", "/v1/datasets", owner, "application/json", pub, strlen(pub),
		       NULL, 503, "database_unavailable", NULL, NULL);
	snprintf(path, sizeof(path), "/v1/datasets/%s/data", ds2);
	h_expect_error(&s, "PUT", path, owner, "text/csv", csv, strlen(csv), NULL, 503,
		       "database_unavailable", NULL, NULL);
	snprintf(path, sizeof(path), "/v1/keys/%s", aid);
	h_expect_error(&s, "DELETE", path, owner, NULL, NULL, 0, NULL, 503, "database_unavailable",
		       NULL, NULL);
	ck_assert_int_eq(status_of(&s, "GET", "/v1/datasets", analyst), 200);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM datasets WHERE id = '%s' AND state ="
				  " 'created' AND NOT EXISTS (SELECT 1 FROM dataset_chunks"
				  " WHERE dataset_id = '%s')",
				  ds2, ds2),
			 1);
	free(csv);
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(before, after);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM api_keys"), keys);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM runs"), runs);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM datasets"), 2);
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT count(*) FROM datasets WHERE id = '%s' AND state ="
				  " 'sealed' AND budget_epsilon = 1 AND EXISTS (SELECT 1 FROM"
				  " dataset_chunks WHERE dataset_id = '%s')",
				  ds, ds),
			 1);
	h_sql_ll(db, "ALTER TABLE audit_log DROP CONSTRAINT t_refuse; SELECT 1");
	snprintf(path, sizeof(path), "/v1/datasets/%s", ds);
	json_decref(h_json(&s, "PATCH", path, owner,
			   "{\"budget\": {\"epsilon\": 3, \"delta\": 1e-4}}", 200));
	h_server_stop(&s, SIGTERM, 60.0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("operator");
	TCase *tc = tcase_create("operator");
	TCase *hooks = tcase_create("operator_hooks"); /* DPOPT_TEST_STEP_DELAY_MS */
	SRunner *sr;
	int failed;

	h_init();
	/* Measured on 2 cores: the four tests take 9 s wall and 1.0 s of CPU
	 * (tests and dpoptd, PostgreSQL aside), the slowest 2.5 s wall; 300 s
	 * per test leaves room for a loaded machine and sanitizers (x3-5). */
	tcase_set_timeout(tc, 300);
	tcase_set_timeout(hooks, 300);
	tcase_set_tags(hooks, H_TAG_HOOKS);
	tcase_add_test(hooks, test_audit_trail);
	tcase_add_test(tc, test_keys);
	tcase_add_test(hooks, test_runs_list);
	tcase_add_test(tc, test_unaudited_change_rolls_back);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, hooks);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
