/*
 * pgjson.h - JSON views built by PostgreSQL, sent as PostgreSQL wrote
 * them.
 *
 * Budgets and charges are numeric: json_build_object writes their exact
 * decimal text (1e-5 as 0.00001).  Parsing that into a double and
 * printing it again would not round-trip to the same text, so views are
 * passed through as text, never re-parsed.
 */
#ifndef SERVICE_PGJSON_H
#define SERVICE_PGJSON_H

#include "db.h"
#include "err.h"

/* The text of column 0 of the single row of res (owned copy), or
 * ERR_NOT_FOUND with not_found as the message when res has no row. */
enum err_code pgjson_one(const PGresult *res, const char *not_found, char **ret, struct err *e);

/* {"items": [column 0 of the first limit rows], "next_cursor": column
 * id_col of row limit - 1 when res has more than limit rows, else null}.
 * Owned result. */
enum err_code pgjson_page(const PGresult *res, long long limit, int id_col, char **ret,
			  struct err *e);

#endif /* SERVICE_PGJSON_H */
