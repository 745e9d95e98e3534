/*
 * pgjson.c - pass PostgreSQL's JSON text through untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgjson.h"

enum err_code
pgjson_one(const PGresult *res, const char *not_found, char **ret, struct err *e)
{
	char *s;

	if (PQntuples(res) != 1)
		return err_set(e, ERR_NOT_FOUND, "%s", not_found);
	s = strdup(PQgetvalue(res, 0, 0));
	if (s == NULL)
		return err_set(e, ERR_NOMEM, "cannot copy a view");
	*ret = s;
	return ERR_OK;
}

enum err_code
pgjson_page(const PGresult *res, long long limit, int id_col, char **ret, struct err *e)
{
	int n = PQntuples(res), shown = n < limit ? n : (int)limit;
	/* The fixed text with its NUL and a 36-byte cursor (66 bytes); each
	 * row adds its length and a comma. */
	size_t len = sizeof("{\"items\":[],\"next_cursor\":\"\"}") + 36;
	char *s, *p;

	for (int i = 0; i < shown; i++)
		len += (size_t)PQgetlength(res, i, 0) + 1;
	s = malloc(len);
	if (s == NULL)
		return err_set(e, ERR_NOMEM, "cannot build a page");
	p = s;
	p += sprintf(p, "{\"items\":[");
	for (int i = 0; i < shown; i++) {
		size_t l = (size_t)PQgetlength(res, i, 0);

		if (i > 0)
			*p++ = ',';
		memcpy(p, PQgetvalue(res, i, 0), l);
		p += l;
	}
	/* The cursor is a UUID: no characters that need escaping. */
	if (n > limit)
		sprintf(p, "],\"next_cursor\":\"%.36s\"}", PQgetvalue(res, shown - 1, id_col));
	else
		sprintf(p, "],\"next_cursor\":null}");
	*ret = s;
	return ERR_OK;
}
