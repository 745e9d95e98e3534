/*
 * db.c - libpq wrappers: connect, check results, a bounded pool.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"

/* Server notices ("relation already exists, skipping") are not errors and
 * would break the JSON-lines log if libpq printed them: drop them. */
static void
ignore_notice(void *arg, const char *message)
{
}

static bool prepare_statements = true;

void
db_set_prepare(bool on)
{
	prepare_statements = on;
}

static struct db_limits limits = {
	.connect_timeout_s = 5,
	.statement_timeout_ms = 30000,
	.answer_grace_ms = 5000,
};

void
db_configure(const struct db_limits *lim)
{
	limits = *lim;
	if (limits.connect_timeout_s < 2)
		limits.connect_timeout_s = 2; /* libpq's own minimum */
}

static unsigned
wait_bound_ms(const struct db_conn *db)
{
	if (db->wait_ms != 0)
		return db->wait_ms;
	if (limits.statement_timeout_ms == 0)
		return 0; /* none: wait as long as the server takes */
	return limits.statement_timeout_ms + limits.answer_grace_ms;
}

/*
 * Open db->pg.  The defaults come first and the caller's conninfo last:
 * with expand_dbname, what the URL names overrides them.  Keepalives only
 * apply to TCP; a Unix socket to a hung server is bounded by the
 * client-side wait alone.  statement_timeout is set by a SET after the
 * connection (not by "options", which a URL may carry for its own use).
 */
static enum err_code
open_pg(struct db_conn *db, struct err *e)
{
	char connect_timeout[16], statement[80];
	const char *keys[] = { "connect_timeout",
			       "keepalives",
			       "keepalives_idle",
			       "keepalives_interval",
			       "keepalives_count",
			       "dbname",
			       NULL };
	const char *values[] = { connect_timeout, "1", "10", "5", "3", db->url, NULL };
	PGresult *res;

	snprintf(connect_timeout, sizeof(connect_timeout), "%u", limits.connect_timeout_s);
	PQfinish(db->pg);
	db->pg = PQconnectdbParams(keys, values, 1);
	db->generation++;
	if (db->pg == NULL || PQstatus(db->pg) != CONNECTION_OK) {
		err_set(e, ERR_DB, "cannot connect to the database");
		err_detail(e, "%s", db->pg != NULL ? PQerrorMessage(db->pg) : "out of memory");
		PQfinish(db->pg);
		db->pg = NULL;
		return ERR_DB;
	}
	PQsetNoticeProcessor(db->pg, ignore_notice, NULL);
	snprintf(statement, sizeof(statement), "SET statement_timeout = %u",
		 limits.statement_timeout_ms);
	res = PQexec(db->pg, statement);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		err_set(e, ERR_DB, "cannot set the statement timeout");
		err_detail(e, "%s", PQerrorMessage(db->pg));
		PQclear(res);
		PQfinish(db->pg);
		db->pg = NULL;
		return ERR_DB;
	}
	PQclear(res);
	/*
	 * Non-blocking sends: a query whose parameters exceed the socket's
	 * buffer (an upload's 4 MiB chunk) would otherwise block inside
	 * PQsendQueryParams() on a hung server, before db_wait_readable()'s
	 * bound applies; now the send is queued and flushed under that bound.
	 * PQexec() (start-up, migrations) still blocks, as libpq documents.
	 */
	if (PQsetnonblocking(db->pg, 1) != 0) {
		err_set(e, ERR_DB, "cannot make the database connection non-blocking");
		err_detail(e, "%s", PQerrorMessage(db->pg));
		PQfinish(db->pg);
		db->pg = NULL;
		return ERR_DB;
	}
	return ERR_OK;
}

struct db_conn *
db_connect(const char *url, struct err *e)
{
	struct db_conn *db = calloc(1, sizeof(*db));

	if (db == NULL || (db->url = strdup(url)) == NULL) {
		free(db);
		err_set(e, ERR_NOMEM, "cannot allocate a database connection");
		return NULL;
	}
	if (open_pg(db, e) != ERR_OK) {
		db_close(db);
		return NULL;
	}
	return db;
}

/* Forget the statements of an earlier session (a reconnection). */
static void
prepared_forget(struct db_conn *db)
{
	for (unsigned i = 0; i < db->prepared_count; i++)
		free(db->prepared[i]);
	db->prepared_count = 0;
	db->prepared_generation = db->generation;
}

void
db_close(struct db_conn *db)
{
	if (db == NULL)
		return;
	prepared_forget(db);
	PQfinish(db->pg);
	free(db->url);
	free(db);
}

/* Give up on a connection whose server stopped answering: closed without
 * waiting (non-blocking, so the goodbye message cannot block on a full
 * socket); db_ensure() opens a new one. */
static void
abandon(struct db_conn *db)
{
	if (db->pg != NULL)
		(void)PQsetnonblocking(db->pg, 1);
	PQfinish(db->pg);
	db->pg = NULL;
}

enum err_code
db_ensure(struct db_conn *db, struct err *e)
{
	if (db->pg != NULL && PQstatus(db->pg) == CONNECTION_OK)
		return ERR_OK;
	return open_pg(db, e);
}

enum err_code
db_validate(struct db_conn *db, struct err *e)
{
	if (db->pg != NULL && PQstatus(db->pg) == CONNECTION_OK &&
	    PQtransactionStatus(db->pg) == PQTRANS_IDLE) {
		struct pollfd pfd = { .fd = PQsocket(db->pg), .events = POLLIN };

		/* A pooled connection never LISTENs, so while idle it has nothing
		 * to read; anything readable is the server's goodbye (a restart:
		 * "terminating connection due to administrator command", then
		 * EOF), which libpq would only notice on the next query.  Such a
		 * connection is replaced, not used. */
		if (pfd.fd < 0 || poll(&pfd, 1, 0) != 0)
			abandon(db);
	}
	return db_ensure(db, e);
}

void
db_set_wait(struct db_conn *db, unsigned wait_ms)
{
	db->wait_ms = wait_ms;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Flush the query and wait until a result can be read without blocking,
 * restarting the bound whenever bytes arrive (a long result streams). */
enum err_code
db_wait_readable(struct db_conn *db, struct err *e)
{
	unsigned bound = wait_bound_ms(db);
	double deadline = now_ms() + bound;
	int flushing = 1;

	if (db->pg == NULL)
		return err_set(e, ERR_DB, "the database connection is closed");
	while (flushing != 0 || PQisBusy(db->pg)) {
		struct pollfd pfd = { .fd = PQsocket(db->pg), .events = POLLIN };
		double left = deadline - now_ms();
		int ready;

		if (flushing != 0) {
			flushing = PQflush(db->pg);
			if (flushing < 0)
				break; /* the error is in the connection's message */
			if (flushing > 0)
				pfd.events |= POLLOUT;
			else if (!PQisBusy(db->pg))
				break;
		}
		if (bound != 0 && left <= 0.0) {
			abandon(db);
			err_set(e, ERR_DB, "the database did not answer");
			err_detail(e, "No answer within %u ms; the connection was closed.", bound);
			return ERR_DB;
		}
		ready = poll(&pfd, 1, bound != 0 ? (int)left + 1 : -1);
		if (ready < 0 && errno != EINTR)
			break;
		if (ready > 0 && (pfd.revents & ~POLLOUT) != 0) {
			if (PQconsumeInput(db->pg) == 0)
				break; /* PQgetResult() reports the failure */
			deadline = now_ms() + bound;
		}
	}
	return ERR_OK;
}

/* Collect the result of the query in flight within the wait bound: NULL
 * when nothing came (the connection failed or was abandoned; *e set). */
static PGresult *
collect(struct db_conn *db, struct err *e)
{
	PGresult *res = NULL, *r;

	for (;;) {
		if (db_wait_readable(db, e) != ERR_OK) {
			PQclear(res);
			return NULL;
		}
		r = PQgetResult(db->pg);
		if (r == NULL)
			break;
		/* One statement, one result; keep an error over anything else. */
		if (res == NULL || PQresultStatus(r) == PGRES_FATAL_ERROR) {
			PQclear(res);
			res = r;
		} else {
			PQclear(r);
		}
	}
	if (res == NULL) {
		err_set(e, ERR_DB, "database request failed");
		err_detail(e, "%s", PQerrorMessage(db->pg));
	}
	return res;
}

static unsigned long
sql_hash(const char *sql)
{
	unsigned long h = 1469598103934665603UL; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)sql; *p != '\0'; p++)
		h = (h ^ *p) * 1099511628211UL;
	return h;
}

/*
 * The name of sql's prepared statement on db's session ("dp<index>"),
 * preparing it first if this session has not seen the text: 1 with the
 * name written, 0 when it is to run unprepared (preparing is off or the
 * session keeps DB_PREPARED_MAX already), -1 when preparing failed, with
 * the server's error in *ret_res (the caller's result: a statement that
 * cannot be prepared cannot run either) or NULL and *e set.  Prepared
 * statements belong to the session, not to a transaction: one prepared
 * inside a transaction that rolls back stays.
 */
static int
prepared_name(struct db_conn *db, const char *sql, int nparams, char name[16], PGresult **ret_res,
	      struct err *e)
{
	unsigned long h;
	unsigned i;
	PGresult *res;

	if (!prepare_statements)
		return 0;
	if (db->prepared_generation != db->generation)
		prepared_forget(db);
	h = sql_hash(sql);
	for (i = 0; i < db->prepared_count; i++)
		if (db->prepared_hash[i] == h && strcmp(db->prepared[i], sql) == 0)
			break;
	snprintf(name, 16, "dp%u", i);
	if (i < db->prepared_count)
		return 1;
	if (i >= DB_PREPARED_MAX)
		return 0;
	if (!PQsendPrepare(db->pg, name, sql, nparams, NULL)) {
		err_set(e, ERR_DB, "database request failed");
		err_detail(e, "%s", PQerrorMessage(db->pg));
		*ret_res = NULL;
		return -1;
	}
	res = collect(db, e);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK) {
		*ret_res = res;
		return -1;
	}
	PQclear(res);
	db->prepared[i] = strdup(sql);
	if (db->prepared[i] == NULL) {
		/* Prepared on the server but not remembered: a later call would
		 * try the same name again and fail, so forget the session. */
		abandon(db);
		err_set(e, ERR_NOMEM, "cannot remember a prepared statement");
		*ret_res = NULL;
		return -1;
	}
	db->prepared_hash[i] = h;
	db->prepared_count++;
	return 1;
}

/* Send a query and collect its result within the wait bound: NULL when
 * nothing came (the connection failed or was abandoned; *e set).  values
 * NULL: the simple protocol, which takes several statements (migrations)
 * like PQexec(); with parameters, the statement prepared on the session
 * (prepared_name()). */
static PGresult *
exec_bounded_params(struct db_conn *db, const char *sql, int nparams, const char *const *values,
		    const int *lengths, const int *formats, struct err *e)
{
	char name[16];
	int sent, named = 0;
	PGresult *res = NULL;

	if (db->pg == NULL) {
		err_set(e, ERR_DB, "the database connection is closed");
		return NULL;
	}
	if (values != NULL && nparams > 0) {
		named = prepared_name(db, sql, nparams, name, &res, e);
		if (named < 0)
			return res;
	}
	if (values == NULL && nparams == 0)
		sent = PQsendQuery(db->pg, sql);
	else if (named > 0)
		sent = PQsendQueryPrepared(db->pg, name, nparams, values, lengths, formats, 0);
	else
		sent = PQsendQueryParams(db->pg, sql, nparams, NULL, values, lengths, formats, 0);
	if (!sent) {
		err_set(e, ERR_DB, "database request failed");
		err_detail(e, "%s", PQerrorMessage(db->pg));
		return NULL;
	}
	return collect(db, e);
}

static PGresult *
exec_bounded(struct db_conn *db, const char *sql, int nparams, const char *const *values,
	     struct err *e)
{
	return exec_bounded_params(db, sql, nparams, values, NULL, NULL, e);
}

enum err_code
db_check(struct db_conn *db, const PGresult *res, ExecStatusType want, struct err *e)
{
	const char *state;
	enum err_code code;

	if (res == NULL) {
		err_set(e, ERR_DB, "database request failed");
		err_detail(e, "%s", PQerrorMessage(db->pg));
		return ERR_DB;
	}
	if (PQresultStatus(res) == want)
		return ERR_OK;
	state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	/* The code is decided here, never read back from *e: e may be NULL. */
	if (state != NULL && (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0))
		code = err_set(e, ERR_CONFLICT, "concurrent update, please retry");
	else if (state != NULL && strcmp(state, "23505") == 0)
		code = err_set(e, ERR_CONFLICT,
			       "a concurrent request created the same object, please retry");
	else
		code = err_set(e, ERR_DB, "database query failed");
	/* A 409 shows its detail to the client: the SQLSTATE only.  Server
	 * text may quote values (a row's cell in a constraint message), so it
	 * goes nowhere: the SQLSTATE and the constraint name suffice. */
	{
		const char *cons = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);

		err_detail(e, "SQLSTATE %s%s%s", state != NULL ? state : "?",
			   cons != NULL ? ", constraint " : "", cons != NULL ? cons : "");
	}
	return code;
}

enum err_code
db_command(struct db_conn *db, const char *sql, struct err *e)
{
	struct err local = { 0 };
	PGresult *res = exec_bounded(db, sql, 0, NULL, e != NULL ? e : &local);
	enum err_code rc;

	if (res == NULL)
		return ERR_DB;
	/* Never e itself when NULL: a failure must not read as success. */
	rc = db_check(db, res, PGRES_COMMAND_OK, e != NULL ? e : &local);
	PQclear(res);
	return rc;
}

PGresult *
db_exec(struct db_conn *db, const char *sql, int nparams, const char *const *values,
	ExecStatusType want, struct err *e)
{
	struct err local = { 0 };
	PGresult *res = exec_bounded(db, sql, nparams, values, e != NULL ? e : &local);

	if (res == NULL)
		return NULL;
	if (db_check(db, res, want, e != NULL ? e : &local) != ERR_OK) {
		PQclear(res);
		return NULL;
	}
	return res;
}

PGresult *
db_exec_binary(struct db_conn *db, const char *sql, int nparams, const char *const *values,
	       const int *lengths, const int *formats, ExecStatusType want, struct err *e)
{
	struct err local = { 0 };
	PGresult *res = exec_bounded_params(db, sql, nparams, values, lengths, formats,
					    e != NULL ? e : &local);

	if (res == NULL)
		return NULL;
	if (db_check(db, res, want, e != NULL ? e : &local) != ERR_OK) {
		PQclear(res);
		return NULL;
	}
	return res;
}

enum err_code
db_exec_command(struct db_conn *db, const char *sql, int nparams, const char *const *values,
		struct err *e)
{
	PGresult *res = db_exec(db, sql, nparams, values, PGRES_COMMAND_OK, e);

	if (res == NULL)
		return e != NULL ? err_failed(e) : ERR_DB;
	PQclear(res);
	return ERR_OK;
}

struct db_pool *
db_pool_new(const char *url, unsigned size, struct err *e)
{
	struct db_pool *p = calloc(1, sizeof(*p));

	if (p == NULL)
		goto out_nomem;
	p->url = strdup(url);
	p->idle = calloc(size, sizeof(*p->idle));
	if (p->url == NULL || p->idle == NULL)
		goto out_nomem;
	p->size = size;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->freed, NULL);
	return p;

out_nomem:
	if (p != NULL) {
		free(p->url);
		free(p->idle);
		free(p);
	}
	err_set(e, ERR_NOMEM, "cannot allocate the database pool");
	return NULL;
}

void
db_pool_free(struct db_pool *p)
{
	if (p == NULL)
		return;
	for (unsigned i = 0; i < p->idle_count; i++)
		db_close(p->idle[i]);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->freed);
	free(p->idle);
	free(p->url);
	free(p);
}

struct db_conn *
db_pool_acquire(struct db_pool *p, struct err *e)
{
	struct db_conn *db = NULL;
	struct timespec deadline;
	bool open_new = false;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (p->idle_count > 0) {
			db = p->idle[--p->idle_count];
			break;
		}
		if (p->open_count < p->size) {
			p->open_count++;
			open_new = true;
			break;
		}
		if (pthread_cond_timedwait(&p->freed, &p->lock, &deadline) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&p->lock);

	if (open_new) {
		db = db_connect(p->url, e);
		if (db == NULL) {
			pthread_mutex_lock(&p->lock);
			p->open_count--;
			pthread_cond_signal(&p->freed);
			pthread_mutex_unlock(&p->lock);
		}
		return db;
	}
	if (db == NULL) {
		err_set(e, ERR_DB, "no database connection available");
		err_detail(e, "All %u pooled connections stayed busy for 5 seconds.", p->size);
		return NULL;
	}
	if (db_validate(db, e) != ERR_OK) {
		db_pool_release(p, db); /* closed there: it is broken */
		return NULL;
	}
	return db;
}

void
db_pool_release(struct db_pool *p, struct db_conn *db)
{
	bool keep;

	if (db == NULL)
		return;
	db->wait_ms = 0;
	keep = PQstatus(db->pg) == CONNECTION_OK && PQtransactionStatus(db->pg) == PQTRANS_IDLE;
	if (!keep)
		db_close(db);
	pthread_mutex_lock(&p->lock);
	if (keep)
		p->idle[p->idle_count++] = db;
	else
		p->open_count--;
	pthread_cond_signal(&p->freed);
	pthread_mutex_unlock(&p->lock);
}

void
db_double_text(double v, char out[32])
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, 32, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}
