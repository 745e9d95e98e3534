/*
 * dataset_load.c - stream dataset_chunks rows (binary, one row at a time
 * in libpq's single-row mode) into the builder of rows.h, so memory holds
 * the arrays plus one chunk, never the whole result twice.
 *
 * A large dataset streams for longer than a statement may take (1.55 GB
 * took 27.6 s), so the load runs in its own transaction with no
 * statement_timeout; what bounds it instead is the client-side wait
 * (db_wait_readable), which restarts whenever bytes arrive: a server that
 * stops sending fails the load, a slow but live one does not.
 */
#include <stdlib.h>
#include <string.h>

#include "dataset_load.h"

void
loaded_dataset_clear(struct loaded_dataset *ds)
{
	rows_builder_clear(&ds->rows);
	*ds = (struct loaded_dataset){ 0 };
}

enum err_code
dataset_load(struct db_conn *db, const char *id, const struct data_schema *schema,
	     enum data_layout layout, size_t n, size_t nnz, struct loaded_dataset *ret,
	     struct err *e)
{
	struct loaded_dataset ds = { 0 };
	const char *values[1] = { id };
	enum err_code rc;
	PGresult *res;

	if (n == 0)
		return err_set(e, ERR_INTERNAL, "dataset '%s' has no rows", id);
	rc = rows_builder_init(&ds.rows, schema, layout, n, nnz, e);
	if (rc != ERR_OK)
		return rc;
	rc = db_command(db, "BEGIN", e);
	if (rc == ERR_OK)
		rc = db_command(db, "SET LOCAL statement_timeout = 0", e);
	if (rc != ERR_OK) {
		loaded_dataset_clear(&ds);
		if (db->pg != NULL && PQtransactionStatus(db->pg) != PQTRANS_IDLE)
			(void)db_command(db, "ROLLBACK", NULL);
		return rc;
	}
	if (!PQsendQueryParams(db->pg,
			       "SELECT n_rows, data FROM dataset_chunks WHERE dataset_id = $1"
			       " ORDER BY chunk_no",
			       1, NULL, values, NULL, NULL, 1) ||
	    !PQsetSingleRowMode(db->pg)) {
		loaded_dataset_clear(&ds);
		err_set(e, ERR_DB, "cannot query the dataset rows");
		err_detail(e, "%s", PQerrorMessage(db->pg));
		(void)db_command(db, "ROLLBACK", NULL);
		return ERR_DB;
	}
	for (;;) {
		ExecStatusType st;

		if (db_wait_readable(db, e) != ERR_OK) {
			rc = ERR_DB; /* the connection was closed: nothing to drain */
			break;
		}
		res = PQgetResult(db->pg);
		if (res == NULL)
			break;
		st = PQresultStatus(res);
		if (rc == ERR_OK && st == PGRES_SINGLE_TUPLE) {
			/* binary int4 n_rows, big-endian */
			const unsigned char *k = (const unsigned char *)PQgetvalue(res, 0, 0);
			size_t rows = (size_t)k[0] << 24 | (size_t)k[1] << 16 | (size_t)k[2] << 8 |
				      (size_t)k[3];

			if (PQgetlength(res, 0, 0) != 4 || rows > n - ds.rows.n)
				rc = err_set(e, ERR_INTERNAL, "dataset chunk of unexpected size");
			else
				rc = rows_builder_add_records(
					&ds.rows, (const unsigned char *)PQgetvalue(res, 0, 1),
					(size_t)PQgetlength(res, 0, 1), rows, e);
		} else if (rc == ERR_OK && st != PGRES_TUPLES_OK) {
			rc = db_check(db, res, PGRES_TUPLES_OK, e);
		}
		PQclear(res); /* drain every result so the connection stays usable */
	}
	if (db->pg != NULL && PQtransactionStatus(db->pg) != PQTRANS_IDLE) {
		enum err_code end = db_command(db, rc == ERR_OK ? "COMMIT" : "ROLLBACK",
					       rc == ERR_OK ? e : NULL);

		if (rc == ERR_OK)
			rc = end;
	}
	if (rc == ERR_OK && ds.rows.n != n)
		rc = err_set(e, ERR_INTERNAL, "dataset has %zu stored rows, %zu expected",
			     ds.rows.n, n);
	if (rc == ERR_OK && layout == DATA_CSR && ds.rows.nnz != nnz)
		rc = err_set(e, ERR_INTERNAL, "dataset has %zu stored non-zeros, %zu expected",
			     ds.rows.nnz, nnz);
	if (rc == ERR_OK) {
		/* The seal-time order (rows.h): a uniformly random arrangement
		 * of the cached rows, drawn with the service's CSPRNG. */
		struct rng *rng = rng_openssl_new(e);

		rc = rng == NULL ? err_failed(e) : rows_builder_shuffle(&ds.rows, rng, e);
		if (rc == ERR_OK && !rng_ok(rng))
			rc = err_set(e, ERR_INTERNAL, "the random generator failed");
		rng_free(rng);
	}
	if (rc != ERR_OK) {
		loaded_dataset_clear(&ds);
		return rc;
	}
	rows_builder_view(&ds.rows, &ds.view, &ds.bytes);
	*ret = ds;
	return ERR_OK;
}
