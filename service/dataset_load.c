/*
 * dataset_load.c - stream dataset_chunks rows (binary, one row at a time
 * in libpq's single-row mode) into dense arrays, so memory holds the
 * arrays plus one chunk, never the whole result twice.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_load.h"
#include "util.h"

static double
get_le64(const unsigned char *p)
{
	uint64_t u = 0;
	double v;

	for (int i = 0; i < 8; i++)
		u |= (uint64_t)p[i] << (8 * i);
	memcpy(&v, &u, 8);
	return v;
}

void
loaded_dataset_clear(struct loaded_dataset *ds)
{
	free(ds->x);
	free(ds->y);
	*ds = (struct loaded_dataset){ 0 };
}

enum err_code
dataset_load(struct db_conn *db, const char *dataset_id, size_t n, size_t d,
	     struct loaded_dataset *ret, struct err *e)
{
	struct loaded_dataset ds = { 0 };
	const char *values[1] = { dataset_id };
	size_t cells, row_bytes = (d + 1) * 8, got = 0;
	enum err_code rc = ERR_OK;
	PGresult *res;

	if (n == 0 || !size_mul(n, d, &cells))
		return err_set(e, ERR_INTERNAL, "dataset size out of range");
	ds.x = malloc(cells * sizeof(double));
	ds.y = malloc(n * sizeof(double));
	if (ds.x == NULL || ds.y == NULL) {
		loaded_dataset_clear(&ds);
		return err_set(e, ERR_NOMEM, "cannot allocate %zu x %zu doubles", n, d);
	}
	if (!PQsendQueryParams(db->pg,
			       "SELECT data FROM dataset_chunks WHERE dataset_id = $1"
			       " ORDER BY chunk_no",
			       1, NULL, values, NULL, NULL, 1) ||
	    !PQsetSingleRowMode(db->pg)) {
		loaded_dataset_clear(&ds);
		err_set(e, ERR_DB, "cannot query the dataset rows");
		return err_detail(e, "%s", PQerrorMessage(db->pg));
	}
	while ((res = PQgetResult(db->pg)) != NULL) {
		ExecStatusType st = PQresultStatus(res);

		if (rc == ERR_OK && st == PGRES_SINGLE_TUPLE) {
			const unsigned char *p = (const unsigned char *)PQgetvalue(res, 0, 0);
			size_t len = (size_t)PQgetlength(res, 0, 0);
			size_t rows = len / row_bytes;

			if (len % row_bytes != 0 || rows > n - got) {
				rc = err_set(e, ERR_INTERNAL, "dataset chunk of unexpected size");
			} else {
				for (size_t i = 0; i < rows; i++, p += row_bytes) {
					double *xr = ds.x + (got + i) * d;

					for (size_t j = 0; j < d; j++)
						xr[j] = get_le64(p + 8 * j);
					ds.y[got + i] = get_le64(p + 8 * d);
				}
				got += rows;
			}
		} else if (rc == ERR_OK && st != PGRES_TUPLES_OK) {
			rc = db_check(db, res, PGRES_TUPLES_OK, e);
		}
		PQclear(res); /* drain every result so the connection stays usable */
	}
	if (rc == ERR_OK && got != n)
		rc = err_set(e, ERR_INTERNAL, "dataset has %zu stored rows, %zu expected", got, n);
	if (rc != ERR_OK) {
		loaded_dataset_clear(&ds);
		return rc;
	}
	ds.view = (struct dataset){ .n = n, .d = d, .x = ds.x, .y = ds.y };
	ds.bytes = (cells + n) * sizeof(double);
	*ret = ds;
	return ERR_OK;
}
