/*
 * db.c - libpq wrappers: connect, check results, a bounded pool.
 */
#include <errno.h>
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

struct db_conn *
db_connect(const char *url, struct err *e)
{
	struct db_conn *db = calloc(1, sizeof(*db));

	if (db == NULL) {
		err_set(e, ERR_NOMEM, "cannot allocate a database connection");
		return NULL;
	}
	db->pg = PQconnectdb(url);
	if (db->pg == NULL || PQstatus(db->pg) != CONNECTION_OK) {
		err_set(e, ERR_DB, "cannot connect to the database");
		err_detail(e, "%s", db->pg != NULL ? PQerrorMessage(db->pg) : "out of memory");
		db_close(db);
		return NULL;
	}
	PQsetNoticeProcessor(db->pg, ignore_notice, NULL);
	return db;
}

void
db_close(struct db_conn *db)
{
	if (db == NULL)
		return;
	PQfinish(db->pg);
	free(db);
}

enum err_code
db_ensure(struct db_conn *db, struct err *e)
{
	if (PQstatus(db->pg) == CONNECTION_OK)
		return ERR_OK;
	PQreset(db->pg);
	if (PQstatus(db->pg) == CONNECTION_OK)
		return ERR_OK;
	err_set(e, ERR_DB, "the database connection is broken");
	err_detail(e, "%s", PQerrorMessage(db->pg));
	return ERR_DB;
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
	PGresult *res = PQexec(db->pg, sql);
	enum err_code rc = db_check(db, res, PGRES_COMMAND_OK, e);

	PQclear(res);
	return rc;
}

PGresult *
db_exec(struct db_conn *db, const char *sql, int nparams, const char *const *values,
	ExecStatusType want, struct err *e)
{
	PGresult *res = PQexecParams(db->pg, sql, nparams, NULL, values, NULL, NULL, 0);

	if (db_check(db, res, want, e) != ERR_OK) {
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
		return e != NULL ? e->code : ERR_DB;
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
	if (db_ensure(db, e) != ERR_OK) {
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
