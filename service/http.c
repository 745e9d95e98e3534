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
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <microhttpd.h>
#include <openssl/rand.h>

#include "auth.h"
#include "http.h"
#include "log.h"
#include "metrics.h"

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
		return 422;
	case ERR_DB:
		return MHD_HTTP_SERVICE_UNAVAILABLE;
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

static void
request_new_id(char out[17])
{
	unsigned char b[8] = { 0 };

	(void)RAND_bytes(b, sizeof(b)); /* an id, not a secret: zeros are survivable */
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static double
seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

static enum MHD_Result
send_reply(struct server *srv, struct MHD_Connection *conn, struct request *rq, struct reply *r)
{
	struct MHD_Response *resp;
	const char *type = "application/json";
	char *text;
	enum MHD_Result ret;

	if (r->text != NULL) {
		text = r->text;
		r->text = NULL;
		type = r->text_type;
	} else if (r->body != NULL) {
		text = json_dumps(r->body, JSON_COMPACT);
	} else {
		text = strdup("");
	}
	json_decref(r->body);
	r->body = NULL;
	if (text == NULL)
		return MHD_NO;
	/* MUST_FREE: MHD frees text with free() when it is done with it. */
	resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(text);
		return MHD_NO;
	}
	if (r->status != MHD_HTTP_NO_CONTENT)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, "X-Request-Id", rq->id);
	if (r->location[0] != '\0')
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location);
	if (r->replayed)
		MHD_add_response_header(resp, "Idempotent-Replayed", "true");
	if (r->status == MHD_HTTP_METHOD_NOT_ALLOWED && rq->allow[0] != '\0')
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, rq->allow);
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

/* Everything decided after the headers: route, auth, content type,
 * declared length, and the start of a streamed upload. */
static enum err_code
request_begin(struct server *srv, struct request *rq, const char *method, const char *url,
	      struct err *e)
{
	const char *len_hdr = http_header(rq, MHD_HTTP_HEADER_CONTENT_LENGTH);
	enum err_code rc;

	rq->route = router_match(method, url, rq->path_id, rq->allow);
	if (rq->route == NULL && rq->allow[0] != '\0')
		return err_set(e, ERR_METHOD, "method %s is not allowed on %s (allowed: %s)",
			       method, url, rq->allow);
	if (rq->route == NULL)
		return err_set(e, ERR_NOT_FOUND, "no such resource: %s", url);
	if (rq->route->flags & ROUTE_AUTH) {
		rq->db = db_pool_acquire(srv->pool, e);
		if (rq->db == NULL)
			return e->code;
		rc = auth_check(rq->db, http_header(rq, MHD_HTTP_HEADER_AUTHORIZATION), &rq->auth,
				e);
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

static void
release_db(struct server *srv, struct request *rq)
{
	if (rq->upload != NULL && rq->route != NULL && rq->route->stream != NULL)
		rq->route->stream->abort(srv, rq); /* rolls back and frees rq->upload */
	db_pool_release(srv->pool, rq->db);
	rq->db = NULL;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
	   const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
	struct server *srv = cls;
	struct request *rq = *req_cls;
	struct reply reply = { 0 };
	enum MHD_Result ret;

	if (rq == NULL) {
		rq = calloc(1, sizeof(*rq));
		if (rq == NULL)
			return MHD_NO; /* MHD closes the connection */
		request_new_id(rq->id);
		clock_gettime(CLOCK_MONOTONIC, &rq->started);
		rq->conn = conn;
		*req_cls = rq;
		if (request_begin(srv, rq, method, url, &rq->err) != ERR_OK) {
			/* Answer now, before any body is read (no 100 Continue);
			 * MHD discards the body and closes the connection. */
			rq->failed = true;
			rq->replied = true;
			release_db(srv, rq);
			return send_error(srv, conn, rq, &rq->err);
		}
		return MHD_YES;
	}
	if (rq->replied) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (rq->failed) {
			/* drain */
		} else if (rq->route->stream != NULL) {
			if (rq->route->stream->chunk(srv, rq, upload, *upload_size, &rq->err) !=
			    ERR_OK) {
				rq->failed = true;
				release_db(srv, rq);
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

	if (!rq->failed) {
		if (rq->route->stream != NULL)
			(void)rq->route->stream->finish(srv, rq, &reply, &rq->err);
		else
			(void)rq->route->handler(srv, rq, &reply, &rq->err);
		rq->failed = rq->err.code != ERR_OK;
	}
	release_db(srv, rq);
	if (rq->failed) {
		json_decref(reply.body);
		free(reply.text);
		return send_error(srv, conn, rq, &rq->err);
	}
	ret = send_reply(srv, conn, rq, &reply);
	return ret;
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
	     enum MHD_RequestTerminationCode toe)
{
	struct server *srv = cls;
	struct request *rq = *req_cls;

	if (rq == NULL)
		return;
	release_db(srv, rq); /* a dropped upload is rolled back here */
	free(rq->body);
	free(rq);
	*req_cls = NULL;
}

enum err_code
http_start(struct server *srv, struct err *e)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct MHD_Daemon *d;

	if (inet_pton(AF_INET, srv->cfg.listen_host, &addr.sin_addr) != 1)
		return err_set_field(e, ERR_INVALID, "DPOPT_LISTEN",
				     "DPOPT_LISTEN host must be an IPv4 address");
	addr.sin_port = htons((uint16_t)srv->cfg.listen_port);
	d = MHD_start_daemon(
		MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)srv->cfg.listen_port,
		NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)srv->cfg.http_threads,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)120, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)1024, MHD_OPTION_END);
	if (d == NULL)
		return err_set(e, ERR_INTERNAL, "cannot listen on %s:%u", srv->cfg.listen_host,
			       srv->cfg.listen_port);
	srv->mhd = d;
	return ERR_OK;
}

void
http_stop(struct server *srv)
{
	if (srv->mhd != NULL)
		MHD_stop_daemon(srv->mhd);
	srv->mhd = NULL;
}
