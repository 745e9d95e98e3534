/*
 * http.c - libmicrohttpd glue: request lifetime, body limits, dispatch,
 * replies, and the error shape.
 *
 * libmicrohttpd calls on_request() several times per request: once after
 * the headers (req_cls still NULL), once per body chunk, then once more
 * with no data, when the reply must be queued.  A reply cannot be queued
 * while body data is being delivered, so a request that fails early
 * (unknown route, bad key, oversized or malformed body) drains the rest of
 * its body and is answered at the end.  on_completed() runs for every
 * request however it ended and is the one place a request is freed.
 *
 * Slow clients hold no database connection: a keyed request borrows one
 * to check its key and gives it back at once, and borrows one again when
 * its body is complete.  Only an upload holds one while its body streams
 * (into one transaction), so uploads have their own slots, fewer than the
 * pool (DPOPT_MAX_UPLOADS, per tenant DPOPT_MAX_UPLOADS_PER_TENANT).
 *
 * Limits, all in memory and so per replica: token buckets per key and
 * per client address for failed authentications (ratelimit.h), upload
 * slots, connections per client address and in total (with a reserve
 * for addresses holding at most one, such as a health checker), and an idle
 * timeout (libmicrohttpd's options).
 *
 * libmicrohttpd answers some malformed requests itself, before
 * on_request() is ever called, with a built-in HTML body that 0.9.75 has
 * no option or callback to replace: a request line or header line it
 * cannot parse (400), headers or URI over the connection's memory (431,
 * 414), an HTTP version other than 1.x (505), a malformed or huge
 * Content-Length (400, 413) and malformed chunked encoding (400, 413).
 * Everything that reaches on_request() is answered in the JSON shape.
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>
#include <openssl/rand.h>

#include "auth.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "ratelimit.h"

#define RATE_SLOTS          4096 /* buckets of each rate table */
#define UPLOAD_RETRY_AFTER  5    /* seconds, when every upload slot is taken */
#define CORS_MAX_AGE        "600"
#define CORS_ALLOW_HEADERS  "Authorization, Content-Type, Idempotency-Key, X-Request-Id, traceparent"
#define CORS_EXPOSE_HEADERS "X-Request-Id, Retry-After, Location, Idempotent-Replayed"

/* Uploads in flight of one tenant. */
struct tenant_uploads {
	char tenant[65];
	unsigned n; /* 0: a free entry */
};

/* Open connections of one client address; n == 0: a free slot. */
struct conn_count {
	uint32_t addr;
	unsigned n;
};

/* The daemon and its limits: srv->mhd points here. */
struct http_ctx {
	struct server *srv;         /* borrowed */
	struct MHD_Daemon *d;       /* owned */
	struct ratelimit *key_rate; /* owned: per key id; NULL when DPOPT_RATE_LIMIT_PER_SECOND=0 */
	struct ratelimit *auth_fail;       /* owned: failed authentications per client address */
	pthread_mutex_t lock;              /* guards uploads and per_tenant */
	unsigned uploads;                  /* upload slots taken */
	struct tenant_uploads *per_tenant; /* owned: cfg.max_uploads entries */
	atomic_uint active;                /* requests begun and not completed */
	/* Open connections per client address (IPv4), for the reserve: the
	 * last cfg.connection_reserve connections go only to addresses that
	 * hold at most one, such as a health checker's, so that no flood of a
	 * few clients takes them all.  Open addressing, backward-shift
	 * deletion. */
	pthread_mutex_t conn_lock; /* guards the three below */
	unsigned conn_open;        /* connections open */
	unsigned conn_limit;       /* the total limit in force (connection_limit()) */
	size_t conn_mask;          /* table slots - 1 */
	struct conn_count *conns;  /* owned: conn_mask + 1 slots */
};

unsigned
http_status_for(enum err_code code)
{
	switch (code) { /* no default: -Wswitch flags a new code left out */
	case ERR_OK:
		return MHD_HTTP_OK;
	case ERR_INVALID:
		return MHD_HTTP_BAD_REQUEST;
	case ERR_UNAUTHENTICATED:
		return MHD_HTTP_UNAUTHORIZED;
	case ERR_FORBIDDEN:
		return MHD_HTTP_FORBIDDEN;
	case ERR_NOT_FOUND:
		return MHD_HTTP_NOT_FOUND;
	case ERR_METHOD:
		return MHD_HTTP_METHOD_NOT_ALLOWED;
	case ERR_CONFLICT:
	case ERR_BUDGET:
	case ERR_MODE:
		return MHD_HTTP_CONFLICT;
	case ERR_TOO_LARGE:
		return MHD_HTTP_CONTENT_TOO_LARGE;
	case ERR_MEDIA_TYPE:
		return MHD_HTTP_UNSUPPORTED_MEDIA_TYPE;
	case ERR_NUMERIC:
	case ERR_TOO_SMALL:
		return 422;
	case ERR_DB:
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	case ERR_RATE_LIMITED:
		return MHD_HTTP_TOO_MANY_REQUESTS;
	case ERR_CANCELLED:
	case ERR_NOMEM:
	case ERR_INTERNAL:
	case ERR__COUNT:
		break;
	}
	return MHD_HTTP_INTERNAL_SERVER_ERROR;
}

json_t *
http_error_body(const struct request *rq, const struct err *e)
{
	unsigned status = http_status_for(e->code);
	json_t *err;

	/* A 4xx tells the client what it did wrong; a 5xx keeps internals in
	 * the log.  503 keeps its (static) message: it says "retry later". */
	err = json_pack("{s:s, s:s, s:s}", "code", err_code_name(e->code), "message",
			status < 500 || status == 503 ? e->msg
						      : "internal error, see the service log",
			"request_id", rq->id);
	if (err == NULL)
		return NULL;
	if (status < 500 && e->field[0] != '\0')
		json_object_set_new(err, "field", json_string(e->field));
	if (status < 500 && e->detail[0] != '\0')
		json_object_set_new(err, "detail", json_string(e->detail));
	return json_pack("{s:o}", "error", err);
}

const char *
http_header(const struct request *rq, const char *name)
{
	return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

const char *
http_query(const struct request *rq, const char *name)
{
	return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
}

static double
now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
request_new_id(char out[HTTP_REQUEST_ID_MAX + 1])
{
	unsigned char b[8] = { 0 };

	(void)RAND_bytes(b, sizeof(b)); /* an id, not a secret: zeros are survivable */
	for (int i = 0; i < 8; i++) {
		out[2 * i] = "0123456789abcdef"[b[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[b[i] & 15];
	}
	out[16] = '\0';
}

static bool
id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == ':';
}

static bool
all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The request id: a well-formed client X-Request-Id, else a valid
 * traceparent's trace id, else a new one.  Anything else a client sends
 * is ignored, so an id never carries quotes, control bytes or length into
 * a log line or a header. */
static void
request_id(struct MHD_Connection *conn, char out[HTTP_REQUEST_ID_MAX + 1])
{
	const char *x = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Request-Id");
	const char *tp = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "traceparent");
	size_t n = x != NULL ? strlen(x) : 0;
	bool ok = n >= 1 && n <= HTTP_REQUEST_ID_MAX;

	for (size_t i = 0; ok && i < n; i++)
		ok = id_char(x[i]);
	if (ok) {
		memcpy(out, x, n + 1);
		return;
	}
	/* version "-" trace-id (32 hex, not all zero) "-" parent (16 hex) "-" flags */
	if (tp != NULL && strlen(tp) >= 55 && all_hex(tp, 2) && strncmp(tp, "ff", 2) != 0 &&
	    tp[2] == '-' && all_hex(tp + 3, 32) && strspn(tp + 3, "0") < 32 && tp[35] == '-' &&
	    all_hex(tp + 36, 16) && tp[52] == '-' && all_hex(tp + 53, 2) &&
	    (tp[55] == '\0' || tp[55] == '-')) {
		memcpy(out, tp + 3, 32);
		out[32] = '\0';
		return;
	}
	request_new_id(out);
}

/* The method for the access log: a short token of capitals, else "?". */
static void
request_method(const char *method, char out[16])
{
	size_t n = strlen(method);

	if (n == 0 || n >= 16 || strspn(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != n)
		n = 0;
	memcpy(out, n > 0 ? method : "?", n > 0 ? n : 1);
	out[n > 0 ? n : 1] = '\0';
}

static double
seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* The client's IPv4 address as text ("?" when unknown). */
static void
client_address(struct MHD_Connection *conn, char out[INET6_ADDRSTRLEN])
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;

	snprintf(out, INET6_ADDRSTRLEN, "?");
	if (sa != NULL && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out,
			  INET6_ADDRSTRLEN);
	else if (sa != NULL && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out,
			  INET6_ADDRSTRLEN);
}

void
http_client_address(const struct request *rq, char out[HTTP_ADDRESS_LEN])
{
	client_address(rq->conn, out);
}

/* True when origin is in cfg.cors_origins ("*" admits any); never for an
 * origin with characters a header value must not carry. */
static bool
cors_allowed(const struct config *cfg, const char *origin, bool *ret_any)
{
	const char *list = cfg->cors_origins;
	size_t olen = origin != NULL ? strlen(origin) : 0;

	*ret_any = false;
	if (olen == 0 || olen > 256)
		return false;
	for (size_t i = 0; i < olen; i++)
		if ((unsigned char)origin[i] <= 0x20 || origin[i] == ',' || origin[i] == 0x7f)
			return false;
	while (*list != '\0') {
		size_t n;

		while (*list == ',' || *list == ' ')
			list++;
		n = strcspn(list, ", ");
		if (n == 1 && list[0] == '*') {
			*ret_any = true;
			return true;
		}
		if (n > 0 && n == olen && strncmp(list, origin, n) == 0)
			return true;
		list += n;
	}
	return false;
}

/* CORS headers of an actual (not preflight) request's reply.  With "*"
 * the reply says "*" and never allows credentials; a listed origin is
 * echoed, with Vary: Origin. */
static void
cors_headers(const struct server *srv, const struct request *rq, struct MHD_Response *resp)
{
	const char *origin = http_header(rq, "Origin");
	bool any;

	if (!cors_allowed(&srv->cfg, origin, &any))
		return;
	MHD_add_response_header(resp, "Access-Control-Allow-Origin", any ? "*" : origin);
	if (!any) {
		MHD_add_response_header(resp, "Vary", "Origin");
		MHD_add_response_header(resp, "Access-Control-Allow-Credentials", "true");
	}
	MHD_add_response_header(resp, "Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
}

void
reply_stream_close(struct reply *r)
{
	if (r->stream.read != NULL && r->stream.close != NULL)
		r->stream.close(r->stream.cls);
	r->stream = (struct reply_stream){ 0 };
}

/* MHD's reader of a streamed reply: cls a malloc'd struct reply_stream. */
static ssize_t
stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct reply_stream *s = cls;
	size_t n;

	(void)pos;
	n = max > 0 ? s->read(s->cls, buf, max) : 0;
	return n > 0 ? (ssize_t)n : (ssize_t)MHD_CONTENT_READER_END_OF_STREAM;
}

static void
stream_free(void *cls)
{
	struct reply_stream *s = cls;

	if (s->close != NULL)
		s->close(s->cls);
	free(s);
}

/* The response of a streamed reply (r->stream moves into it, or is
 * closed); NULL on failure. */
static struct MHD_Response *
stream_response(struct reply *r)
{
	struct reply_stream *s = malloc(sizeof(*s));
	struct MHD_Response *resp;

	if (s == NULL) {
		reply_stream_close(r);
		return NULL;
	}
	*s = r->stream;
	r->stream = (struct reply_stream){ 0 };
	/* 64 KiB: MHD's buffer, filled by the reader between socket writes. */
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_reader, s,
						 stream_free);
	if (resp == NULL)
		stream_free(s);
	return resp;
}

/* The response of reply r (its body, text or stream moves into it) and its
 * content type; NULL on failure (r's parts are freed). */
static struct MHD_Response *
reply_response(struct reply *r, const char **ret_type)
{
	struct MHD_Response *resp;
	char *text;

	*ret_type = "application/json";
	if (r->stream.read != NULL) {
		*ret_type = r->text_type;
		json_decref(r->body);
		r->body = NULL;
		free(r->text);
		r->text = NULL;
		return stream_response(r);
	}
	if (r->text != NULL) {
		text = r->text;
		r->text = NULL;
		*ret_type = r->text_type;
	} else if (r->body != NULL) {
		text = json_dumps(r->body, JSON_COMPACT);
	} else {
		text = strdup("");
	}
	json_decref(r->body);
	r->body = NULL;
	if (text == NULL)
		return NULL;
	/* MUST_FREE: MHD frees text with free() when it is done with it. */
	resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (resp == NULL)
		free(text);
	return resp;
}

static enum MHD_Result
send_reply(struct server *srv, struct MHD_Connection *conn, struct request *rq, struct reply *r)
{
	const char *type;
	struct MHD_Response *resp = reply_response(r, &type);
	char num[16];
	enum MHD_Result ret;

	if (resp == NULL)
		return MHD_NO;
	if (r->status != MHD_HTTP_NO_CONTENT)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, "X-Request-Id", rq->id);
	if (r->location[0] != '\0')
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location);
	if (r->replayed)
		MHD_add_response_header(resp, "Idempotent-Replayed", "true");
	if (r->status == MHD_HTTP_METHOD_NOT_ALLOWED && rq->allow[0] != '\0')
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, rq->allow);
	if (rq->retry_after > 0 && (r->status == 429 || r->status == 503)) {
		snprintf(num, sizeof(num), "%u", rq->retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, num);
	}
	cors_headers(srv, rq, resp);
	rq->status = r->status;
	metrics_observe_request(srv->metrics,
				rq->route != NULL ? (size_t)(rq->route - router_at(0))
						  : router_count(),
				r->status, seconds_since(&rq->started));
	ret = MHD_queue_response(conn, r->status, resp);
	MHD_destroy_response(resp); /* drops our reference; MHD holds its own */
	return ret;
}

static enum MHD_Result
send_error(struct server *srv, struct MHD_Connection *conn, struct request *rq, const struct err *e)
{
	struct reply r = { .status = http_status_for(e->code) };

	log_err(rq->id, e);
	r.body = http_error_body(rq, e);
	return send_reply(srv, conn, rq, &r);
}

bool
http_content_type_is(const struct request *rq, const char *want)
{
	const char *ct = http_header(rq, MHD_HTTP_HEADER_CONTENT_TYPE);
	size_t n = strlen(want);

	return ct != NULL && strncasecmp(ct, want, n) == 0 &&
	       (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* True when the Content-Type is one of list ("a/b, c/d"). */
static bool
content_type_in(const struct request *rq, const char *list)
{
	char one[64];

	while (*list != '\0') {
		size_t n = strcspn(list, ",");

		if (n < sizeof(one)) {
			memcpy(one, list, n);
			one[n] = '\0';
			if (http_content_type_is(rq, one))
				return true;
		}
		list += n;
		while (*list == ',' || *list == ' ')
			list++;
	}
	return false;
}

/* A CORS preflight (OPTIONS with Origin and Access-Control-Request-Method):
 * 204 with the path's methods for an allowed origin, 403 otherwise.  An
 * OPTIONS that is not a preflight is an unknown method (405). */
static enum err_code
preflight(struct server *srv, struct request *rq, const char *url, struct reply *ret, struct err *e)
{
	const char *origin = http_header(rq, "Origin");
	const char *want = http_header(rq, "Access-Control-Request-Method");
	char id[37];
	bool any;

	if (origin == NULL || want == NULL) {
		(void)router_match("OPTIONS", url, id, rq->allow);
		if (rq->allow[0] == '\0')
			return err_set(e, ERR_NOT_FOUND, "no such resource");
		return err_set(e, ERR_METHOD, "method OPTIONS is not allowed here (allowed: %s)",
			       rq->allow);
	}
	if (!cors_allowed(&srv->cfg, origin, &any))
		return err_set_field(e, ERR_FORBIDDEN, "Origin",
				     "this origin may not call the API from a browser");
	(void)router_match("OPTIONS", url, id, rq->allow);
	if (rq->allow[0] == '\0')
		return err_set(e, ERR_NOT_FOUND, "no such resource");
	ret->status = MHD_HTTP_NO_CONTENT;
	return ERR_OK;
}

/* Preflight headers on a 204 (the origin was checked by preflight()). */
static enum MHD_Result
send_preflight(struct server *srv, struct MHD_Connection *conn, struct request *rq)
{
	const char *origin = http_header(rq, "Origin");
	struct MHD_Response *resp;
	bool any;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return MHD_NO;
	(void)cors_allowed(&srv->cfg, origin, &any);
	MHD_add_response_header(resp, "X-Request-Id", rq->id);
	MHD_add_response_header(resp, "Access-Control-Allow-Origin", any ? "*" : origin);
	if (!any) {
		MHD_add_response_header(resp, "Vary", "Origin");
		MHD_add_response_header(resp, "Access-Control-Allow-Credentials", "true");
	}
	MHD_add_response_header(resp, "Access-Control-Allow-Methods", rq->allow);
	MHD_add_response_header(resp, "Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
	MHD_add_response_header(resp, "Access-Control-Max-Age", CORS_MAX_AGE);
	rq->status = MHD_HTTP_NO_CONTENT;
	metrics_observe_request(srv->metrics, router_count(), MHD_HTTP_NO_CONTENT,
				seconds_since(&rq->started));
	ret = MHD_queue_response(conn, MHD_HTTP_NO_CONTENT, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Take an upload slot for tenant: one of cfg.max_uploads, and one of the
 * tenant's cfg.max_uploads_per_tenant. */
static bool
upload_slot_take(struct http_ctx *ctx, const char *tenant)
{
	const struct config *cfg = &ctx->srv->cfg;
	struct tenant_uploads *mine = NULL, *free_entry = NULL;
	bool ok = false;

	pthread_mutex_lock(&ctx->lock);
	for (unsigned i = 0; i < cfg->max_uploads; i++) {
		struct tenant_uploads *t = &ctx->per_tenant[i];

		if (t->n > 0 && strcmp(t->tenant, tenant) == 0)
			mine = t;
		else if (t->n == 0 && free_entry == NULL)
			free_entry = t;
	}
	if (ctx->uploads < cfg->max_uploads &&
	    (mine != NULL ? mine->n < cfg->max_uploads_per_tenant : free_entry != NULL)) {
		if (mine == NULL) {
			mine = free_entry;
			snprintf(mine->tenant, sizeof(mine->tenant), "%s", tenant);
		}
		mine->n++;
		ctx->uploads++;
		ok = true;
	}
	pthread_mutex_unlock(&ctx->lock);
	return ok;
}

static void
upload_slot_release(struct http_ctx *ctx, const char *tenant)
{
	pthread_mutex_lock(&ctx->lock);
	for (unsigned i = 0; i < ctx->srv->cfg.max_uploads; i++) {
		struct tenant_uploads *t = &ctx->per_tenant[i];

		if (t->n > 0 && strcmp(t->tenant, tenant) == 0) {
			t->n--;
			ctx->uploads--;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
}

/* The client's address into addr; ERR_RATE_LIMITED when it has had too
 * many failed authentications (refused before any lookup of its key). */
static enum err_code
auth_address(struct http_ctx *ctx, struct request *rq, char addr[INET6_ADDRSTRLEN], struct err *e)
{
	client_address(rq->conn, addr);
	if (!ratelimit_peek(ctx->auth_fail, addr, now_seconds(), &rq->retry_after))
		return err_set(e, ERR_RATE_LIMITED,
			       "too many failed authentications from this address; retry in %u s",
			       rq->retry_after);
	return ERR_OK;
}

/* The key check: a pooled connection for the lookup only.  A client
 * address with too many failed checks is refused before any lookup. */
static enum err_code
authenticate(struct http_ctx *ctx, struct request *rq, struct err *e)
{
	struct server *srv = ctx->srv;
	char addr[INET6_ADDRSTRLEN];
	struct db_conn *db;
	enum err_code rc;

	if ((rc = auth_address(ctx, rq, addr, e)) != ERR_OK)
		return rc;
	db = db_pool_acquire(srv->pool, e);
	if (db == NULL)
		return err_failed(e);
	rc = auth_check(db, http_header(rq, MHD_HTTP_HEADER_AUTHORIZATION), &rq->auth, e);
	db_pool_release(srv->pool, db);
	if (rc == ERR_UNAUTHENTICATED)
		(void)ratelimit_take(ctx->auth_fail, addr, now_seconds(), NULL);
	if (rc != ERR_OK)
		return rc;
	if (ctx->key_rate != NULL &&
	    !ratelimit_take(ctx->key_rate, rq->auth.key_id, now_seconds(), &rq->retry_after))
		return err_set(e, ERR_RATE_LIMITED,
			       "request rate limit of this key exceeded; retry in %u s",
			       rq->retry_after);
	return ERR_OK;
}

/* Each connection's libmicrohttpd memory pool: headers, the read buffer
 * (a streamed upload's pieces come from it) and the reply's headers; JSON
 * bodies and replies live outside it.  libmicrohttpd 0.9.75 zeroes the
 * whole pool after every request of a kept-alive connection
 * (MHD_pool_reset), so its size is paid per request: at 256 KiB that
 * memset was a third of the HTTP threads' CPU on GET /v1/runs/{id}. */
#ifndef HTTP_CONNECTION_MEMORY
#define HTTP_CONNECTION_MEMORY (64 * 1024)
#endif

/* ROUTE_KEY_IN_READ, before the handler: the address's failure limit and
 * the header's form; the key itself is checked in the handler's read. */
static enum err_code
key_parse(struct http_ctx *ctx, struct request *rq, struct err *e)
{
	char addr[INET6_ADDRSTRLEN];
	enum err_code rc;

	if ((rc = auth_address(ctx, rq, addr, e)) != ERR_OK)
		return rc;
	rc = auth_parse(http_header(rq, MHD_HTTP_HEADER_AUTHORIZATION), &rq->key, e);
	if (rc == ERR_UNAUTHENTICATED)
		(void)ratelimit_take(ctx->auth_fail, addr, now_seconds(), NULL);
	return rc;
}

/* ROUTE_KEY_IN_READ, after the handler: what authenticate() does after its
 * lookup.  A 401 counts against the address; a verified key pays its rate
 * whatever the handler answered (the read is done, but its reply or error
 * is replaced by the 429). */
static void
key_settle(struct http_ctx *ctx, struct request *rq, struct reply *reply)
{
	char addr[INET6_ADDRSTRLEN];

	if (rq->err.code == ERR_UNAUTHENTICATED) {
		client_address(rq->conn, addr);
		(void)ratelimit_take(ctx->auth_fail, addr, now_seconds(), NULL);
		return;
	}
	if (rq->auth.key_id[0] == '\0' || ctx->key_rate == NULL ||
	    ratelimit_take(ctx->key_rate, rq->auth.key_id, now_seconds(), &rq->retry_after))
		return;
	json_decref(reply->body);
	reply->body = NULL;
	free(reply->text);
	reply->text = NULL;
	reply_stream_close(reply);
	err_set(&rq->err, ERR_RATE_LIMITED,
		"request rate limit of this key exceeded; retry in %u s", rq->retry_after);
	rq->failed = true;
}

/* Everything decided after the headers: route, auth, content type,
 * declared length, and the start of a streamed upload. */
static enum err_code
request_begin(struct http_ctx *ctx, struct request *rq, const char *method, const char *url,
	      struct err *e)
{
	struct server *srv = ctx->srv;
	const char *len_hdr = http_header(rq, MHD_HTTP_HEADER_CONTENT_LENGTH);
	enum err_code rc;

	rq->content_length = len_hdr != NULL ? (long long)strtoull(len_hdr, NULL, 10) : -1;
	rq->route = router_match(method, url, rq->path_id, rq->allow);
	if (rq->route == NULL && rq->allow[0] != '\0')
		return err_set(e, ERR_METHOD, "method %s is not allowed on %s (allowed: %s)",
			       method, url, rq->allow);
	if (rq->route == NULL)
		return err_set(e, ERR_NOT_FOUND, "no such resource: %s", url);
	/* During the shutdown grace the probes still answer (readyz says
	 * 503 itself); keyed work is refused. */
	if ((rq->route->flags & ROUTE_AUTH) && atomic_load(&srv->stopping)) {
		rq->retry_after = 1;
		return err_set(e, ERR_DB, "the service is shutting down");
	}
	if ((rq->route->flags & (ROUTE_AUTH | ROUTE_KEY_IN_READ)) ==
	    (ROUTE_AUTH | ROUTE_KEY_IN_READ)) {
		rc = key_parse(ctx, rq, e);
		if (rc != ERR_OK)
			return rc;
	} else if (rq->route->flags & ROUTE_AUTH) {
		rc = authenticate(ctx, rq, e);
		if (rc != ERR_OK)
			return rc;
		if ((rq->route->flags & ROUTE_OWNER) && rq->auth.role != ROLE_OWNER)
			return err_set(e, ERR_FORBIDDEN, "this operation needs an owner key");
	}
	if (rq->route->stream == NULL && len_hdr != NULL &&
	    strtoull(len_hdr, NULL, 10) > srv->cfg.max_body_bytes)
		return err_set(e, ERR_TOO_LARGE, "request body larger than %zu bytes",
			       srv->cfg.max_body_bytes);
	if ((rq->route->flags & ROUTE_JSON_BODY) && !http_content_type_is(rq, "application/json"))
		return err_set_field(e, ERR_MEDIA_TYPE, "Content-Type",
				     "Content-Type must be application/json");
	if (rq->route->stream != NULL) {
		if (!content_type_in(rq, rq->route->content_type))
			return err_set_field(e, ERR_MEDIA_TYPE, "Content-Type",
					     "Content-Type must be one of: %s",
					     rq->route->content_type);
		if (len_hdr != NULL && strtoull(len_hdr, NULL, 10) > srv->cfg.max_upload_bytes)
			return err_set(e, ERR_TOO_LARGE, "upload larger than %llu bytes",
				       (unsigned long long)srv->cfg.max_upload_bytes);
		/* An upload holds a connection for its whole body: a slot first. */
		if (!upload_slot_take(ctx, rq->auth.tenant)) {
			rq->retry_after = UPLOAD_RETRY_AFTER;
			return err_set(e, ERR_RATE_LIMITED,
				       "too many uploads in progress (at most %u, %u per tenant); "
				       "retry later",
				       srv->cfg.max_uploads, srv->cfg.max_uploads_per_tenant);
		}
		rq->upload_slot = true;
		rq->db = db_pool_acquire(srv->pool, e);
		if (rq->db == NULL)
			return err_failed(e);
		return rq->route->stream->begin(srv, rq, e);
	}
	return ERR_OK;
}

static enum err_code
request_append(struct request *rq, const char *data, size_t len, size_t max)
{
	size_t need = rq->len + len + 1;

	if (need > max + 1)
		return ERR_TOO_LARGE;
	if (need > rq->cap) {
		size_t cap = rq->cap != 0 ? rq->cap : 1024;
		char *p;

		while (cap < need)
			cap *= 2;
		p = realloc(rq->body, cap);
		if (p == NULL)
			return ERR_NOMEM;
		rq->body = p;
		rq->cap = cap;
	}
	memcpy(rq->body + rq->len, data, len);
	rq->len += len;
	rq->body[rq->len] = '\0';
	return ERR_OK;
}

/* Give back what the request holds: the upload (rolled back unless it
 * committed), the connection, the upload slot. */
static void
release_db(struct http_ctx *ctx, struct request *rq)
{
	struct server *srv = ctx->srv;

	if (rq->upload != NULL && rq->route != NULL && rq->route->stream != NULL)
		rq->route->stream->abort(srv, rq); /* rolls back and frees rq->upload */
	db_pool_release(srv->pool, rq->db);
	rq->db = NULL;
	if (rq->upload_slot)
		upload_slot_release(ctx, rq->auth.tenant);
	rq->upload_slot = false;
}

/* True when the client closed its side of the connection before the
 * declared body could all arrive: what it sent so far (to us, plus what
 * waits in the socket) is short of Content-Length, and it will send no
 * more.  Without a declared length (chunked) the library notices the
 * close itself once it has read everything. */
static bool
client_gone(struct MHD_Connection *conn, const struct request *rq)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p = { .events = POLLRDHUP };
	int pending = 0;

	if (ci == NULL)
		return false;
	p.fd = ci->connect_fd;
	if (poll(&p, 1, 0) != 1)
		return false;
	if (p.revents & (POLLERR | POLLHUP))
		return true;
	if (!(p.revents & POLLRDHUP) || rq->content_length < 0)
		return false;
	if (ioctl(p.fd, FIONREAD, &pending) != 0 || pending < 0)
		return false;
	return rq->body_bytes + (unsigned long long)pending <
	       (unsigned long long)rq->content_length;
}

/*
 * Whether a request refused after its headers is answered only once its
 * declared body has arrived (read and discarded), instead of at once.
 * Answering at once and closing with the body unread makes the kernel
 * reset the connection, and a client still writing a large body then sees
 * "connection reset" instead of the error (curl: "Failed sending data to
 * the peer", status 0): so a body up to HTTP_DRAIN_MAX is drained first,
 * as web servers do with a lingering close.  Not for streamed uploads
 * (their bodies are large and a slot or key refusal must not wait for
 * them), nor for chunked bodies (no declared bound), nor past
 * HTTP_DRAIN_MAX: those are answered at once, as before.  The connection
 * timeout still bounds a client that stops sending.
 */
#define HTTP_DRAIN_MAX (8ull << 20)

static bool
drain_first(const struct request *rq)
{
	return (rq->route == NULL || rq->route->stream == NULL) && rq->content_length > 0 &&
	       (unsigned long long)rq->content_length <= HTTP_DRAIN_MAX;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
	   const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
	struct http_ctx *ctx = cls;
	struct server *srv = ctx->srv;
	struct request *rq = *req_cls;
	struct reply reply = { 0 };
	enum MHD_Result ret;

	if (rq == NULL) {
		rq = calloc(1, sizeof(*rq));
		if (rq == NULL)
			return MHD_NO; /* MHD closes the connection */
		atomic_fetch_add(&ctx->active, 1);
		clock_gettime(CLOCK_MONOTONIC, &rq->started);
		rq->conn = conn;
		request_id(conn, rq->id);
		request_method(method, rq->method);
		*req_cls = rq;
		if (strcmp(method, "OPTIONS") == 0 &&
		    preflight(srv, rq, url, &reply, &rq->err) == ERR_OK) {
			rq->replied = true;
			return send_preflight(srv, conn, rq);
		}
		if (rq->err.code != ERR_OK ||
		    request_begin(ctx, rq, method, url, &rq->err) != ERR_OK) {
			rq->failed = true;
			release_db(ctx, rq);
			if (drain_first(rq))
				return MHD_YES; /* answered at the end of the body */
			/* Answer now, before any body is read (no 100 Continue);
			 * MHD discards the body and closes the connection. */
			rq->replied = true;
			return send_error(srv, conn, rq, &rq->err);
		}
		return MHD_YES;
	}
	if (rq->replied) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size > 0) {
		rq->body_bytes += *upload_size;
		if (rq->failed) {
			/* drain */
		} else if (rq->route->stream != NULL) {
			if (atomic_load(&srv->stopping)) {
				/* Shutting down: roll back now, answer 503 at the end
				 * of the body (or be cut at the end of the grace). */
				rq->retry_after = 1;
				err_set(&rq->err, ERR_DB,
					"the service is shutting down; nothing of this upload was "
					"kept, retry it");
				rq->failed = true;
				release_db(ctx, rq);
			} else if (rq->route->stream->chunk(srv, rq, upload, *upload_size,
							    &rq->err) != ERR_OK) {
				rq->failed = true;
				release_db(ctx, rq);
			} else if (client_gone(conn, rq)) {
				/* Aborted: roll back and free the slot now, not at the
				 * connection's timeout. */
				log_msg(LOG_INFO, rq->id, "upload aborted by the client");
				rq->failed = true;
				release_db(ctx, rq);
				*upload_size = 0;
				return MHD_NO; /* MHD closes the connection */
			}
		} else if (request_append(rq, upload, *upload_size, srv->cfg.max_body_bytes) !=
			   ERR_OK) {
			err_set(&rq->err, ERR_TOO_LARGE, "request body larger than %zu bytes",
				srv->cfg.max_body_bytes);
			rq->failed = true;
		}
		*upload_size = 0;
		return MHD_YES;
	}

	/* The body is complete: now a keyed handler gets its connection. */
	if (!rq->failed && rq->route->stream == NULL && (rq->route->flags & ROUTE_AUTH)) {
		rq->db = db_pool_acquire(srv->pool, &rq->err);
		rq->failed = rq->db == NULL;
	}
	if (!rq->failed) {
		if (rq->route->stream != NULL)
			(void)rq->route->stream->finish(srv, rq, &reply, &rq->err);
		else
			(void)rq->route->handler(srv, rq, &reply, &rq->err);
		rq->failed = rq->err.code != ERR_OK;
		if (rq->route->flags & ROUTE_KEY_IN_READ)
			key_settle(ctx, rq, &reply);
	}
	release_db(ctx, rq);
	if (rq->failed) {
		json_decref(reply.body);
		free(reply.text);
		reply_stream_close(&reply);
		return send_error(srv, conn, rq, &rq->err);
	}
	ret = send_reply(srv, conn, rq, &reply);
	return ret;
}

static const char *
termination_name(enum MHD_RequestTerminationCode toe)
{
	switch (toe) {
	case MHD_REQUEST_TERMINATED_COMPLETED_OK:
		return "completed";
	case MHD_REQUEST_TERMINATED_WITH_ERROR:
		return "error";
	case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED:
		return "timeout";
	case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN:
		return "shutdown";
	case MHD_REQUEST_TERMINATED_READ_ERROR:
		return "read_error";
	case MHD_REQUEST_TERMINATED_CLIENT_ABORT:
		return "client_abort";
	}
	return "other";
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
	     enum MHD_RequestTerminationCode toe)
{
	struct http_ctx *ctx = cls;
	struct request *rq = *req_cls;

	if (rq == NULL)
		return;
	release_db(ctx, rq); /* a dropped upload is rolled back here */
	/* The access log: no query string, no body, the route's template. */
	log_msg(LOG_INFO, rq->id,
		"access method=%s route=%s status=%u duration_ms=%.1f key_id=%s end=%s", rq->method,
		rq->route != NULL ? rq->route->pattern : "-", rq->status,
		seconds_since(&rq->started) * 1e3,
		rq->auth.key_id[0] != '\0' ? rq->auth.key_id : "-", termination_name(toe));
	free(rq->body);
	free(rq);
	*req_cls = NULL;
	atomic_fetch_sub(&ctx->active, 1);
}

/* The IPv4 address of sa as a key, or false for another family. */
static bool
ipv4_key(const struct sockaddr *sa, uint32_t *ret)
{
	if (sa == NULL || sa->sa_family != AF_INET)
		return false;
	*ret = ((const struct sockaddr_in *)sa)->sin_addr.s_addr;
	return true;
}

static size_t
conn_slot(const struct http_ctx *ctx, uint32_t addr)
{
	return (size_t)((addr * 2654435761u) >> 7) & ctx->conn_mask;
}

/* addr's slot, or the free slot where it would go.  conn_lock held. */
static struct conn_count *
conn_find(struct http_ctx *ctx, uint32_t addr)
{
	size_t i = conn_slot(ctx, addr);

	while (ctx->conns[i].n > 0 && ctx->conns[i].addr != addr)
		i = (i + 1) & ctx->conn_mask;
	return &ctx->conns[i];
}

/* Remove the emptied slot at i, moving later entries of its run back so
 * that every entry stays reachable from its home slot. */
static void
conn_delete(struct http_ctx *ctx, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & ctx->conn_mask;
		if (ctx->conns[j].n == 0)
			break;
		home = conn_slot(ctx, ctx->conns[j].addr);
		/* Move j to i unless its home lies cyclically in (i, j]. */
		if ((i <= j) ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		ctx->conns[i] = ctx->conns[j];
		ctx->conns[j].n = 0;
		i = j;
	}
	ctx->conns[i].n = 0;
}

/* Accept policy: past cfg.max_connections - cfg.connection_reserve open
 * connections, only an address holding at most one gets one (one: a
 * prober's previous connection may not be cleaned up yet when its next
 * one arrives).  libmicrohttpd applies the total and per-address limits
 * itself before this. */
static enum MHD_Result
on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct http_ctx *ctx = cls;
	uint32_t key;
	bool ok = true;

	if (!ipv4_key(addr, &key))
		return MHD_YES;
	pthread_mutex_lock(&ctx->conn_lock);
	if (ctx->conn_open + ctx->srv->cfg.connection_reserve >= ctx->conn_limit)
		ok = conn_find(ctx, key)->n <= 1;
	pthread_mutex_unlock(&ctx->conn_lock);
	return ok ? MHD_YES : MHD_NO;
}

/* Count connections per address as they open and close; the address
 * rides in the connection's socket context (1 + the IPv4 key). */
static void
on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
	      enum MHD_ConnectionNotificationCode toe)
{
	struct http_ctx *ctx = cls;
	const union MHD_ConnectionInfo *ci;
	struct conn_count *c;
	uint32_t key;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ci == NULL || !ipv4_key(ci->client_addr, &key))
			return;
		pthread_mutex_lock(&ctx->conn_lock);
		c = conn_find(ctx, key);
		c->addr = key;
		c->n++;
		ctx->conn_open++;
		pthread_mutex_unlock(&ctx->conn_lock);
		*socket_context = (void *)((uintptr_t)key + 1);
		return;
	}
	if (*socket_context == NULL)
		return;
	key = (uint32_t)((uintptr_t)*socket_context - 1);
	*socket_context = NULL;
	pthread_mutex_lock(&ctx->conn_lock);
	c = conn_find(ctx, key);
	if (c->n > 0) {
		ctx->conn_open--;
		if (--c->n == 0)
			conn_delete(ctx, (size_t)(c - ctx->conns));
	}
	pthread_mutex_unlock(&ctx->conn_lock);
}

static void
ctx_free(struct http_ctx *ctx)
{
	if (ctx == NULL)
		return;
	ratelimit_free(ctx->key_rate);
	ratelimit_free(ctx->auth_fail);
	free(ctx->per_tenant);
	free(ctx->conns);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->conn_lock);
	free(ctx);
}

/* Room in the process's descriptors for the connection limit: the soft
 * limit is raised to the hard one, and the limit is lowered to what fits
 * beside the database connections, the log and the listening socket. */
static unsigned
connection_limit(const struct config *cfg)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)cfg->max_connections + cfg->db_pool + cfg->workers + 64;
	unsigned limit = cfg->max_connections;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return limit;
	if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur =
			rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		rlim_t room = rl.rlim_cur > need - limit ? rl.rlim_cur - (need - limit) : 16;

		limit = room < limit ? (unsigned)room : limit;
		log_msg(LOG_WARN, "http",
			"DPOPT_MAX_CONNECTIONS lowered to %u: the descriptor limit is %llu", limit,
			(unsigned long long)rl.rlim_cur);
	}
	return limit;
}

enum err_code
http_start(struct server *srv, struct err *e)
{
	const struct config *cfg = &srv->cfg;
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct http_ctx *ctx;

	if (inet_pton(AF_INET, cfg->listen_host, &addr.sin_addr) != 1)
		return err_set_field(e, ERR_INVALID, "DPOPT_LISTEN",
				     "DPOPT_LISTEN host must be an IPv4 address");
	addr.sin_port = htons((uint16_t)cfg->listen_port);
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the HTTP state");
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->conn_lock, NULL);
	atomic_init(&ctx->active, 0);
	ctx->srv = srv;
	ctx->conn_limit = connection_limit(cfg);
	/* At most conn_limit addresses at once: a table twice that size. */
	for (ctx->conn_mask = 15; ctx->conn_mask < 2 * (size_t)ctx->conn_limit;)
		ctx->conn_mask = 2 * ctx->conn_mask + 1;
	ctx->conns = calloc(ctx->conn_mask + 1, sizeof(*ctx->conns));
	ctx->per_tenant = calloc(cfg->max_uploads, sizeof(*ctx->per_tenant));
	ctx->auth_fail = ratelimit_new(cfg->auth_failures_per_minute / 60.0,
				       cfg->auth_failures_burst, RATE_SLOTS);
	if (cfg->rate_limit > 0.0)
		ctx->key_rate = ratelimit_new(cfg->rate_limit, cfg->rate_limit_burst, RATE_SLOTS);
	if (ctx->per_tenant == NULL || ctx->conns == NULL || ctx->auth_fail == NULL ||
	    (cfg->rate_limit > 0.0 && ctx->key_rate == NULL)) {
		ctx_free(ctx);
		return err_set(e, ERR_NOMEM, "cannot allocate the HTTP state");
	}
	/* poll(), not epoll: 0.9.75's edge-triggered epoll loop can miss a
	 * client's close that arrives with the last of its data, and then an
	 * aborted upload held its transaction until the idle timeout.  ITC:
	 * MHD_quiesce_daemon() at shutdown. */
	ctx->d = MHD_start_daemon(
		MHD_USE_POLL | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC,
		(uint16_t)cfg->listen_port, on_accept, ctx, on_request, ctx, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->http_threads,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, ctx, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)cfg->http_idle_timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)HTTP_CONNECTION_MEMORY, MHD_OPTION_CONNECTION_LIMIT, ctx->conn_limit,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, ctx,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)cfg->max_connections_per_ip,
		MHD_OPTION_END);
	if (ctx->d == NULL) {
		ctx_free(ctx);
		return err_set(e, ERR_INTERNAL, "cannot listen on %s:%u", cfg->listen_host,
			       cfg->listen_port);
	}
	srv->mhd = ctx;
	return ERR_OK;
}

void
http_stop(struct server *srv)
{
	struct http_ctx *ctx = srv->mhd;
	double deadline;
	MHD_socket listen_fd;

	if (ctx == NULL)
		return;
	/* No new connections; requests in flight get the grace period. */
	listen_fd = MHD_quiesce_daemon(ctx->d);
	deadline = now_seconds() + srv->cfg.shutdown_grace;
	while (atomic_load(&ctx->active) > 0 && now_seconds() < deadline) {
		struct timespec t = { .tv_nsec = 10 * 1000 * 1000 };

		nanosleep(&t, NULL);
	}
	if (atomic_load(&ctx->active) > 0)
		log_msg(LOG_WARN, "http", "%u request(s) still open after %u s: closed",
			atomic_load(&ctx->active), srv->cfg.shutdown_grace);
	MHD_stop_daemon(ctx->d);
	if (listen_fd != MHD_INVALID_SOCKET)
		close(listen_fd);
	ctx_free(ctx);
	srv->mhd = NULL;
}
