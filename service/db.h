/*
 * db.h - PostgreSQL connections: one per worker for life, and a small
 * pool that HTTP threads borrow from for the span of one handler.
 *
 * libpq rule: never two threads on one PGconn.  Workers own theirs; an
 * HTTP handler holds a pooled one from db_pool_acquire() to
 * db_pool_release() and nobody else touches it meanwhile.
 */
#ifndef SERVICE_DB_H
#define SERVICE_DB_H

#include <stdbool.h>
#include <pthread.h>

#include <libpq-fe.h>

#include "err.h"

struct db_conn {
	PGconn *pg; /* owned */
};

/* Open a connection; owned result or NULL with ERR_DB. */
struct db_conn *db_connect(const char *url, struct err *e);
void db_close(struct db_conn *db); /* accepts NULL */

/* Reconnect if the connection is broken; ERR_DB if that fails. */
enum err_code db_ensure(struct db_conn *db, struct err *e);

/* Map a result to an error: ERR_OK when its status is want.  SQLSTATE
 * 40001/40P01 → ERR_CONFLICT (retryable), 23505 → ERR_CONFLICT, anything
 * else → ERR_DB with SQLSTATE and server text in detail. */
enum err_code db_check(struct db_conn *db, const PGresult *res, ExecStatusType want, struct err *e);

/* Run a statement without results ("BEGIN", "COMMIT", ...). */
enum err_code db_command(struct db_conn *db, const char *sql, struct err *e);

/* PQexecParams with text parameters; returns the result (caller PQclears)
 * or NULL with *e set when the status is not want. */
PGresult *db_exec(struct db_conn *db, const char *sql, int nparams, const char *const *values,
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
