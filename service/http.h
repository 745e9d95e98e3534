/*
 * http.h - the request and reply types handlers see, and the
 * libmicrohttpd glue that drives them.
 *
 * A handler never touches libmicrohttpd: it reads a struct request and
 * fills a struct reply (or returns an error, which http.c turns into the
 * one JSON error shape).  A request owns its body and everything parsed
 * from it; all of it is freed in the completion callback.
 */
#ifndef SERVICE_HTTP_H
#define SERVICE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "db.h"
#include "err.h"
#include "server.h"

enum role {
	ROLE_NONE,
	ROLE_ANALYST, /* may request runs and read */
	ROLE_OWNER,   /* may also create and delete datasets and set budgets */
};

struct auth {
	char tenant[65]; /* authenticated tenant id */
	enum role role;
	char key_id[65]; /* the key's id (api_keys primary key), for logs and limits */
};

/* A bearer key parsed from its header, not yet checked (auth.h). */
struct auth_key {
	char id[17];       /* the public id, 16 hex digits */
	char hash_hex[65]; /* SHA-256 of the whole key, lower-case hex */
};

struct route;
struct upload;

/* A request id: the client's X-Request-Id (1-64 of [A-Za-z0-9._:-]), else
 * the trace id of a valid W3C traceparent, else 64 random bits in hex. */
#define HTTP_REQUEST_ID_MAX 64

struct request {
	char id[HTTP_REQUEST_ID_MAX + 1]; /* echoed in errors, logs and X-Request-Id */
	void *conn;                       /* borrowed: struct MHD_Connection */
	const struct route *route;        /* matched route, NULL when none */
	char path_id[37];                 /* the {id} segment of the path, if any */
	char *body;                       /* owned: JSON body, NUL-terminated */
	size_t len, cap;
	bool too_large; /* body exceeded its limit: drained, then refused */
	bool failed;    /* err holds an error found while the body streamed */
	bool replied;   /* a reply was queued after the headers */
	char allow[64]; /* methods of the path, for a 405 */
	struct err err;
	struct auth auth;      /* ROUTE_KEY_IN_READ: filled by the handler's read */
	struct auth_key key;   /* ROUTE_KEY_IN_READ: the key to verify in the read */
	struct db_conn *db;    /* borrowed from the pool for the request's life */
	struct upload *upload; /* owned: streaming upload state */
	struct timespec started;
	unsigned status; /* status sent, for metrics */
	/* Limits (http.c). */
	char method[16];               /* for the access log; "?" when not a plain token */
	bool upload_slot;              /* holds one of the upload slots */
	long long content_length;      /* declared body length, -1 when none (chunked) */
	unsigned long long body_bytes; /* body bytes received so far */
	unsigned retry_after;          /* Retry-After seconds of a 429 or 503, 0: none */
};

struct reply {
	unsigned status;
	json_t *body;          /* owned: JSON reply, or NULL */
	char *text;            /* owned: plain text reply (metrics), or NULL */
	const char *text_type; /* static content type of text */
	char location[128];    /* Location header, if any */
	bool replayed;         /* an idempotent replay: Idempotent-Replayed: true */
	/* A body streamed in chunks of unknown total size (HTTP/1.1 chunked),
	 * when read != NULL: read(cls, buf, max) fills up to max bytes and
	 * returns 0 at the end only; close(cls) once, whether the body was
	 * sent or not.  Owned: http.c closes it.  text_type its content type. */
	struct reply_stream {
		size_t (*read)(void *cls, char *buf, size_t max);
		void (*close)(void *cls);
		void *cls;
	} stream;
};

/* Close r's stream (if any) and forget it. */
void reply_stream_close(struct reply *r);

/* Handler of a JSON route: fill *ret or return an error. */
typedef enum err_code (*handler_fn)(struct server *srv, struct request *rq, struct reply *ret,
				    struct err *e);

/* A streaming body (dataset upload): begin after the headers, chunk for
 * every piece of body, finish at the end.  After an error the rest of the
 * body is drained and abort() called instead of finish(). */
struct stream_ops {
	enum err_code (*begin)(struct server *srv, struct request *rq, struct err *e);
	enum err_code (*chunk)(struct server *srv, struct request *rq, const char *data, size_t len,
			       struct err *e);
	enum err_code (*finish)(struct server *srv, struct request *rq, struct reply *ret,
				struct err *e);
	void (*abort)(struct server *srv, struct request *rq);
};

enum route_flags {
	ROUTE_AUTH = 1u << 0,      /* needs a bearer key (and a database connection) */
	ROUTE_JSON_BODY = 1u << 1, /* body must be application/json */
	ROUTE_OWNER = 1u << 2,     /* only owner keys */
	/* With ROUTE_AUTH, not ROUTE_OWNER: the handler verifies rq->key in
	 * its own statement (auth.h) and fills rq->auth, so the request makes
	 * one round trip, not two; http.c parses the key first, and after
	 * the handler counts a 401 against the client address and a success
	 * against the key's rate limit (a 429 then replaces the reply). */
	ROUTE_KEY_IN_READ = 1u << 3,
};

struct route {
	const char *method;
	const char *pattern; /* "/v1/datasets/{id}/runs"; {id} is a UUID */
	handler_fn handler;
	const struct stream_ops *stream; /* non-NULL: streaming body */
	unsigned flags;
	const char *content_type; /* accepted types of a streamed body, ", "-separated */
};

/* router.c: the route table. */
size_t router_count(void);
const struct route *router_at(size_t i);
/* Match method and path; fills path_id.  When only the method differs,
 * returns NULL and writes the allowed methods ("GET, DELETE") to ret_allow
 * (ret_allow[0] is '\0' when the path is unknown). */
const struct route *router_match(const char *method, const char *path, char path_id[37],
				 char ret_allow[64]);

/* Start and stop the HTTP daemon on cfg.listen_*.  http_stop() first stops
 * accepting, then gives requests in flight up to cfg.shutdown_grace
 * seconds to end (srv->stopping must be set: an upload still streaming
 * is rolled back and answered 503, new requests on open connections get
 * 503), then closes every connection. */
enum err_code http_start(struct server *srv, struct err *e);
void http_stop(struct server *srv);

/* Request accessors for handlers (NULL when absent). */
const char *http_header(const struct request *rq, const char *name);

/* True when the request's Content-Type is want (parameters ignored). */
bool http_content_type_is(const struct request *rq, const char *want);
const char *http_query(const struct request *rq, const char *name);

/* The client's address as text (IPv4 or IPv6), "?" when unknown. */
#define HTTP_ADDRESS_LEN 46 /* INET6_ADDRSTRLEN */
void http_client_address(const struct request *rq, char out[HTTP_ADDRESS_LEN]);

/* The HTTP status for an error code: the one place this mapping lives. */
unsigned http_status_for(enum err_code code);

/* The error body {"error": {code, message, field, detail, request_id}}. */
json_t *http_error_body(const struct request *rq, const struct err *e);

#endif /* SERVICE_HTTP_H */
