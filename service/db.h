/*
 * db.h - PostgreSQL connections: one per worker for life, and a small
 * pool that HTTP threads borrow from for the span of one handler.
 *
 * libpq rule: never two threads on one PGconn.  Workers own theirs; an
 * HTTP handler holds a pooled one from db_pool_acquire() to
 * db_pool_release() and nobody else touches it meanwhile.
 *
 * Nothing waits on the database without a bound (db_configure()): a
 * connection attempt gives up after the connect timeout, every session
 * runs under statement_timeout, TCP connections send keepalives, and
 * db_exec() and db_command() stop waiting for an answer a grace period
 * after the statement timeout, so a hung server (SIGSTOP, a dead host
 * without RST) makes the call fail with ERR_DB instead of blocking.  A
 * connection abandoned that way is closed; db_ensure() opens a new one.
 */
#ifndef SERVICE_DB_H
#define SERVICE_DB_H

#include <stdbool.h>
#include <pthread.h>

#include <libpq-fe.h>

#include "err.h"

/* The bounds every connection of the process uses; set once by
 * db_configure() before any thread connects. */
struct db_limits {
	unsigned connect_timeout_s;    /* libpq connect_timeout (>= 2) */
	unsigned statement_timeout_ms; /* server-side statement_timeout; 0: none */
	unsigned answer_grace_ms;      /* client-side wait past statement_timeout */
};

/* Defaults: 5 s to connect, 30 s per statement, 5 s of grace. */
void db_configure(const struct db_limits *lim);

/* Parameterised statements a connection keeps prepared; past this many
 * distinct texts the rest run unprepared (PQexecParams), so a caller that
 * builds its SQL at run time cannot grow a session's memory without bound. */
#define DB_PREPARED_MAX 96

/* Whether db_exec() prepares statements (default true).  Set once, before
 * any thread connects: false for a transaction-pooling proxy in front of
 * PostgreSQL, which cannot keep a session's prepared statements. */
void db_set_prepare(bool on);

struct db_conn {
	PGconn *pg; /* owned; NULL after a timed-out wait closed it */
	char *url;  /* owned: for reconnecting */
	/* Bumped by every (re)connection: session state such as LISTEN is
	 * gone when it changes. */
	unsigned generation;
	/* Client-side wait for an answer in ms; 0: the statement timeout
	 * plus the grace (db_set_wait() narrows it, e.g. for /readyz). */
	unsigned wait_ms;
	/* Statements prepared on this session (db_exec() and friends prepare
	 * every parameterised statement on first use and execute it by name
	 * after); emptied when generation changes, since a new session has
	 * none.  Owned texts. */
	unsigned prepared_count;
	unsigned prepared_generation;
	char *prepared[DB_PREPARED_MAX];
	unsigned long prepared_hash[DB_PREPARED_MAX];
};

/* Open a connection; owned result or NULL with ERR_DB. */
struct db_conn *db_connect(const char *url, struct err *e);
void db_close(struct db_conn *db); /* accepts NULL */

/* Reconnect if the connection is broken (or was closed after a timed-out
 * wait); ERR_DB if that fails.  Does not notice a server that closed an
 * idle connection until something is read: see db_validate(). */
enum err_code db_ensure(struct db_conn *db, struct err *e);

/* db_ensure(), after replacing an idle connection that has anything to
 * read: a server that restarted has closed its end, which libpq learns
 * only on the next query.  Pool checkouts use it, so the first request
 * after a database restart gets a fresh connection, not 503.  Not for
 * connections that LISTEN. */
enum err_code db_validate(struct db_conn *db, struct err *e);

/* Client-side bound on waiting for an answer on db, in ms; 0 restores the
 * default (statement timeout plus grace).  db_pool_release() restores it. */
void db_set_wait(struct db_conn *db, unsigned wait_ms);

/* Wait until a result of the query in flight can be read without
 * blocking (PQisBusy false), at most db's wait bound after the last byte
 * received; on timeout the connection is closed and ERR_DB returned.
 * For callers that drive libpq's asynchronous API themselves. */
enum err_code db_wait_readable(struct db_conn *db, struct err *e);

/* Map a result to an error: ERR_OK when its status is want.  SQLSTATE
 * 40001/40P01 → ERR_CONFLICT (retryable), 23505 → ERR_CONFLICT, anything
 * else → ERR_DB with SQLSTATE and server text in detail. */
enum err_code db_check(struct db_conn *db, const PGresult *res, ExecStatusType want, struct err *e);

/* Run a statement without results ("BEGIN", "COMMIT", ...). */
enum err_code db_command(struct db_conn *db, const char *sql, struct err *e);

/* PQexecParams with text parameters; returns the result (caller PQclears)
 * or NULL with *e set when the status is not want.  A statement with
 * parameters is prepared on the connection the first time its text is seen
 * (one extra round trip, once per session) and executed by name after, so
 * the server plans it once per session, not per call; the result is the
 * same.  Without parameters (values NULL) the simple protocol runs, which
 * takes several statements at once. */
PGresult *db_exec(struct db_conn *db, const char *sql, int nparams, const char *const *values,
		  ExecStatusType want, struct err *e);

/* db_exec() with lengths and formats per parameter (1: binary), for
 * binary values such as an upload's chunk of rows; the same wait bound. */
PGresult *db_exec_binary(struct db_conn *db, const char *sql, int nparams,
			 const char *const *values, const int *lengths, const int *formats,
			 ExecStatusType want, struct err *e);

/* db_exec() of a statement that returns no rows (PGRES_COMMAND_OK). */
enum err_code db_exec_command(struct db_conn *db, const char *sql, int nparams,
			      const char *const *values, struct err *e);

struct db_pool {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	char *url; /* owned */
	unsigned size;
	unsigned idle_count;
	unsigned open_count;   /* connections that exist (idle + lent) */
	struct db_conn **idle; /* owned: idle_count connections */
};

/* Create a pool of at most size connections (opened lazily). */
struct db_pool *db_pool_new(const char *url, unsigned size, struct err *e);
void db_pool_free(struct db_pool *p); /* all connections must be released */

/* Borrow a connection, waiting up to 5 s for one; NULL with ERR_DB. */
struct db_conn *db_pool_acquire(struct db_pool *p, struct err *e);

/* Give a connection back (NULL is ignored).  A connection left inside a
 * transaction or broken is closed instead of reused. */
void db_pool_release(struct db_pool *p, struct db_conn *db);

/* Shortest decimal text that reads back as the same double (for numeric
 * parameters: 0.1 goes over the wire as "0.1", not 0.10000000000000001). */
void db_double_text(double v, char out[32]);

#endif /* SERVICE_DB_H */
