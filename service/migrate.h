/*
 * migrate.h - schema migrations compiled into the binary.
 *
 * db/migrations/NNNN_name.sql are embedded at build time
 * (scripts/embed_sql.py).  migrate_apply() runs the pending ones in order,
 * each in its own transaction, under a session advisory lock so that
 * several replicas starting at once apply each file exactly once.
 */
#ifndef SERVICE_MIGRATE_H
#define SERVICE_MIGRATE_H

#include "db.h"
#include "err.h"

struct migration {
	int version;
	const char *name;
	const char *sql;
};

extern const struct migration migrations[];
extern const unsigned migration_count;

/* Apply every pending migration; *ret_applied counts those applied now. */
enum err_code migrate_apply(struct db_conn *db, unsigned *ret_applied, struct err *e);

/* ERR_OK when every embedded migration is applied; ERR_DB otherwise. */
enum err_code migrate_check(struct db_conn *db, struct err *e);

#endif /* SERVICE_MIGRATE_H */
