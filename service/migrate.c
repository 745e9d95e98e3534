/*
 * migrate.c - apply the embedded migrations under an advisory lock.
 */
#include <stdio.h>
#include <stdlib.h>

#include "migrate.h"

/* Any fixed 64-bit number; it only has to differ from other lock users. */
#define MIGRATE_LOCK_KEY "7305129841123"

static int
latest_version(void)
{
	int v = 0;

	for (unsigned i = 0; i < migration_count; i++)
		if (migrations[i].version > v)
			v = migrations[i].version;
	return v;
}

static enum err_code
applied_version(struct db_conn *db, int *ret, struct err *e)
{
	PGresult *res = db_exec(db, "SELECT coalesce(max(version), 0) FROM schema_migrations", 0,
				NULL, PGRES_TUPLES_OK, e);

	if (res == NULL)
		return e != NULL ? err_failed(e) : ERR_DB;
	*ret = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return ERR_OK;
}

static enum err_code
apply_one(struct db_conn *db, const struct migration *m, struct err *e)
{
	char version[16];
	const char *values[2] = { version, m->name };
	PGresult *res;
	enum err_code rc;

	snprintf(version, sizeof(version), "%d", m->version);
	rc = db_command(db, "BEGIN", e);
	if (rc != ERR_OK)
		return rc;
	rc = db_command(db, m->sql, e);
	if (rc == ERR_OK) {
		res = db_exec(db, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
			      2, values, PGRES_COMMAND_OK, e);
		rc = res != NULL ? ERR_OK : err_failed(e);
		PQclear(res);
	}
	if (rc == ERR_OK)
		rc = db_command(db, "COMMIT", e);
	else
		(void)db_command(db, "ROLLBACK", NULL);
	if (rc != ERR_OK)
		err_detail(e, "migration %04d_%s failed", m->version, m->name);
	return rc;
}

enum err_code
migrate_apply(struct db_conn *db, unsigned *ret_applied, struct err *e)
{
	unsigned applied = 0;
	int current = 0;
	PGresult *res;
	enum err_code rc;

	res = db_exec(db, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", 0, NULL, PGRES_TUPLES_OK,
		      e);
	if (res == NULL)
		return e != NULL ? err_failed(e) : ERR_DB;
	PQclear(res);
	rc = db_command(db,
			"CREATE TABLE IF NOT EXISTS schema_migrations ("
			" version integer PRIMARY KEY, name text NOT NULL,"
			" applied_at timestamptz NOT NULL DEFAULT now())",
			e);
	if (rc == ERR_OK)
		rc = applied_version(db, &current, e);
	for (unsigned i = 0; rc == ERR_OK && i < migration_count; i++) {
		if (migrations[i].version <= current)
			continue;
		rc = apply_one(db, &migrations[i], e);
		if (rc == ERR_OK)
			applied++;
	}
	PQclear(PQexec(db->pg, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")"));
	if (rc == ERR_OK && ret_applied != NULL)
		*ret_applied = applied;
	return rc;
}

enum err_code
migrate_check(struct db_conn *db, struct err *e)
{
	int current = 0;
	enum err_code rc = applied_version(db, &current, e);

	if (rc != ERR_OK)
		return rc;
	if (current < latest_version())
		return err_set(e, ERR_DB, "database schema is at version %d, %d expected", current,
			       latest_version());
	return ERR_OK;
}
