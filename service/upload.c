/*
 * upload.c - the streamed CSV upload.
 *
 * The body is parsed as it arrives (common/csv.c), each row clipped to the
 * dataset's declared bounds, packed into chunks of about 4 MiB and written
 * to dataset_chunks inside one transaction that holds the dataset's row
 * lock.  Any malformed row aborts the transaction: the dataset stays
 * unsealed and nothing is kept.  At the end the dataset is sealed with its
 * row count, which becomes public.  The body is never held in memory:
 * at most one line and one chunk are.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "content_hash.h"
#include "datasets.h"
#include "upload.h"

#define CHUNK_BYTES       (4u << 20)
#define UPLOAD_LOCK_CLASS "1970566514" /* first key of the upload's advisory locks */

struct upload {
	struct dataset_meta meta;
	struct csv_parser csv;
	bool in_tx;           /* BEGIN sent, not yet ended */
	unsigned char *chunk; /* owned: packed rows, little-endian float64 */
	size_t chunk_rows;    /* rows in chunk */
	size_t rows_per_chunk;
	size_t row_bytes;
	long chunk_no;
	long long rows;
	double *row;        /* owned: d + 1 scratch for clipping */
	struct db_conn *db; /* borrowed from the request */
	uint64_t bytes;     /* body bytes so far */
	uint64_t max_bytes;
	struct content_hash hash; /* of the clipped rows as a multiset */
};

enum err_code
upload_clip_row(const struct bounds *b, enum task task, double *x, size_t d, double *y,
		struct err *e)
{
	double norm2 = 0.0;

	if (!isnan(b->feature_linf))
		for (size_t j = 0; j < d; j++)
			x[j] = fmax(-b->feature_linf, fmin(b->feature_linf, x[j]));
	if (!isnan(b->feature_l2)) {
		for (size_t j = 0; j < d; j++)
			norm2 += x[j] * x[j];
		if (!isfinite(norm2)) {
			/* Overflow in the square: rescale by the largest entry first. */
			double m = 0.0;

			for (size_t j = 0; j < d; j++)
				m = fmax(m, fabs(x[j]));
			norm2 = 0.0;
			for (size_t j = 0; j < d; j++)
				norm2 += (x[j] / m) * (x[j] / m);
			norm2 = m * m * norm2; /* may be inf: then the scale below is 0 */
		}
		if (norm2 > b->feature_l2 * b->feature_l2) {
			double s = b->feature_l2 / sqrt(norm2);

			for (size_t j = 0; j < d; j++)
				x[j] *= s;
			/* Rounding may leave the norm a hair above the bound: shrink
			 * once more by one part in 2^50 so the bound holds exactly. */
			norm2 = 0.0;
			for (size_t j = 0; j < d; j++)
				norm2 += x[j] * x[j];
			if (sqrt(norm2) > b->feature_l2)
				for (size_t j = 0; j < d; j++)
					x[j] *= 1.0 - 0x1p-50;
		}
	}
	if (task == TASK_BINARY) {
		if (*y != 1.0 && *y != -1.0)
			return err_set(e, ERR_INVALID, "the label must be -1 or 1");
	} else if (!isnan(b->label)) {
		*y = fmax(-b->label, fmin(b->label, *y));
	}
	return ERR_OK;
}

static void
put_le64(unsigned char *p, double v)
{
	uint64_t u;

	memcpy(&u, &v, 8);
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(u >> (8 * i));
}

static enum err_code
flush_chunk(struct upload *u, struct err *e)
{
	char id_text[37], no[24], rows[24];
	const char *values[4] = { id_text, no, rows, (const char *)u->chunk };
	int lengths[4] = { 0, 0, 0, 0 };
	int formats[4] = { 0, 0, 0, 1 };
	PGresult *res;
	enum err_code rc;

	if (u->chunk_rows == 0)
		return ERR_OK;
	snprintf(id_text, sizeof(id_text), "%s", u->meta.id);
	snprintf(no, sizeof(no), "%ld", u->chunk_no);
	snprintf(rows, sizeof(rows), "%zu", u->chunk_rows);
	lengths[3] = (int)(u->chunk_rows * u->row_bytes);
	res = PQexecParams(u->db->pg,
			   "INSERT INTO dataset_chunks (dataset_id, chunk_no, n_rows, data)"
			   " VALUES ($1, $2, $3, $4)",
			   4, NULL, values, lengths, formats, 0);
	rc = db_check(u->db, res, PGRES_COMMAND_OK, e);
	PQclear(res);
	if (rc == ERR_OK) {
		u->chunk_no++;
		u->chunk_rows = 0;
	}
	return rc;
}

static enum err_code
on_row(void *ctx, const double *cells, size_t ncols, unsigned long line, struct err *e)
{
	struct upload *u = ctx;
	size_t d = u->meta.d;
	unsigned char *p;
	enum err_code rc;

	memcpy(u->row, cells, ncols * sizeof(double));
	rc = upload_clip_row(&u->meta.bounds, u->meta.task, u->row, d, &u->row[d], e);
	if (rc != ERR_OK)
		return err_set_field(e, ERR_INVALID, "data",
				     "line %lu, column %zu: the label must be -1 or 1", line,
				     d + 1);
	rc = content_hash_add(&u->hash, u->row, d + 1, e);
	if (rc != ERR_OK)
		return rc;
	p = u->chunk + u->chunk_rows * u->row_bytes;
	for (size_t j = 0; j <= d; j++)
		put_le64(p + 8 * j, u->row[j]);
	u->chunk_rows++;
	u->rows++;
	if (u->chunk_rows == u->rows_per_chunk)
		return flush_chunk(u, e);
	return ERR_OK;
}

/* One upload per dataset at a time: a transaction-scoped advisory lock,
 * tried, never waited for.  The key space (class, hash) is the upload's
 * own; a hash collision only makes an upload retry. */
static enum err_code
upload_try_lock(struct db_conn *db, const char *id, struct err *e)
{
	const char *values[1] = { id };
	PGresult *res;
	bool locked;

	res = db_exec(db, "SELECT pg_try_advisory_xact_lock(" UPLOAD_LOCK_CLASS ", hashtext($1))",
		      1, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return e->code;
	locked = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (!locked)
		return err_set(e, ERR_CONFLICT, "an upload to dataset '%s' is in progress", id);
	return ERR_OK;
}

static void
upload_free(struct upload *u)
{
	if (u == NULL)
		return;
	if (u->in_tx)
		(void)db_command(u->db, "ROLLBACK", NULL);
	csv_parser_clear(&u->csv);
	free(u->chunk);
	free(u->row);
	free(u);
}

static enum err_code
upload_begin(struct server *srv, struct request *rq, struct err *e)
{
	struct upload *u = calloc(1, sizeof(*u));
	enum err_code rc;

	if (u == NULL)
		return err_set(e, ERR_NOMEM, "cannot start the upload");
	rq->upload = u;
	u->db = rq->db;
	content_hash_init(&u->hash);
	u->max_bytes = srv->cfg.max_upload_bytes;
	rc = db_command(u->db, "BEGIN", e);
	if (rc != ERR_OK)
		return rc;
	u->in_tx = true;
	/* The transaction spans many callbacks of one HTTP thread, so it must
	 * hold nothing another request waits for: that request, served by the
	 * same thread, would wait for itself, forever.  So no row lock (the
	 * chunks' foreign key takes KEY SHARE, which FOR NO KEY UPDATE does not
	 * wait for); a try-lock keeps out other uploads, and the seal checks
	 * the dataset is still unsealed.  The state is read again once locked:
	 * an upload that held the lock before may have sealed it. */
	rc = datasets_meta(u->db, rq->auth.tenant, rq->path_id, false, &u->meta, e);
	if (rc == ERR_OK)
		rc = upload_try_lock(u->db, u->meta.id, e);
	if (rc == ERR_OK)
		rc = datasets_meta(u->db, rq->auth.tenant, rq->path_id, false, &u->meta, e);
	if (rc != ERR_OK)
		return rc;
	if (strcmp(u->meta.state, "created") != 0)
		return err_set(e, ERR_CONFLICT,
			       "dataset '%s' is sealed: its data cannot be replaced", u->meta.id);
	u->row_bytes = (u->meta.d + 1) * sizeof(double);
	u->rows_per_chunk = CHUNK_BYTES / u->row_bytes;
	if (u->rows_per_chunk == 0)
		u->rows_per_chunk = 1;
	u->chunk = malloc(u->rows_per_chunk * u->row_bytes);
	u->row = calloc(u->meta.d + 1, sizeof(double));
	if (u->chunk == NULL || u->row == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate upload buffers");
	/* A line holds d + 1 numbers; 64 bytes each is far more than any
	 * decimal double needs, plus slack for blanks and quotes. */
	return csv_parser_init(&u->csv, u->meta.d + 1, (u->meta.d + 1) * 64 + 256, on_row, u, e);
}

static enum err_code
upload_chunk(struct server *srv, struct request *rq, const char *data, size_t len, struct err *e)
{
	struct upload *u = rq->upload;

	u->bytes += len;
	if (u->bytes > u->max_bytes)
		return err_set(e, ERR_TOO_LARGE, "upload larger than %llu bytes",
			       (unsigned long long)u->max_bytes);
	return csv_parser_feed(&u->csv, data, len, e);
}

/*
 * Budget laundering (ACCOUNTING.md section 8): the same rows sealed again
 * by the same tenant would get a fresh budget.  Refused, naming the
 * dataset that holds them (the tenant's own).  Other tenants' data is
 * never compared: a match there would reveal their data.  The advisory
 * lock on (tenant, hash) makes two concurrent identical seals meet; it is
 * taken and released inside this one callback, so it never waits on a
 * request parked on this thread.
 */
/*
 * Budget laundering (ACCOUNTING.md section 8): the same rows under a second
 * budget would give the same people a second privacy budget.  Among this
 * tenant's datasets (deleted ones included: their ledgers live on), a
 * match is refused when
 *   - this dataset is private and the match is private with another
 *     ledger: the owner may create the dataset with "share_budget_with"
 *     naming the match, so that both pay from one ledger;
 *   - this dataset is public and the match is private: publishing rows
 *     that are some ledger's private data is refused.
 * A private upload of a public dataset's rows is allowed (they were
 * declared public), and so are public duplicates.  Other tenants' data is
 * never compared: a match there would reveal their data.
 */
static enum err_code
refuse_duplicate(struct upload *u, const char *tenant, const char *hash, struct err *e)
{
	const char *values[3] = { tenant, hash, u->meta.id };
	PGresult *res;
	enum err_code rc = ERR_OK;

	/* Serialises seals of equal rows in the tenant until COMMIT. */
	res = db_exec(u->db, "SELECT pg_advisory_xact_lock(hashtext($1 || '/' || $2))", 2, values,
		      PGRES_TUPLES_OK, e);
	if (res == NULL)
		return e->code;
	PQclear(res);
	res = db_exec(u->db,
		      "SELECT o.id, coalesce(o.ledger_of, o.id), me.public,"
		      " coalesce(me.ledger_of, me.id)"
		      " FROM datasets o, datasets me WHERE me.id = $3 AND o.tenant_id = $1"
		      " AND o.content_hash = decode($2, 'hex') AND o.id <> $3 AND NOT o.public"
		      " AND (me.public OR coalesce(o.ledger_of, o.id) <>"
		      " coalesce(me.ledger_of, me.id))"
		      " ORDER BY o.created_at LIMIT 1",
		      3, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return e->code;
	if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 2), "t") == 0)
		rc = err_set_field(e, ERR_CONFLICT, "data",
				   "these rows are the private dataset '%s' of this tenant: "
				   "publishing them as a public dataset is refused",
				   PQgetvalue(res, 0, 0));
	else if (PQntuples(res) == 1)
		rc = err_set_field(e, ERR_CONFLICT, "data",
				   "these rows are already dataset '%s' (budget laundering); "
				   "create the dataset with \"share_budget_with\": \"%s\" to "
				   "share its ledger",
				   PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1));
	PQclear(res);
	return rc;
}

static enum err_code
upload_finish(struct server *srv, struct request *rq, struct reply *ret, struct err *e)
{
	struct upload *u = rq->upload;
	char rows[24], hash[65];
	const char *values[3] = { u->meta.id, rows, hash };
	PGresult *res;
	bool sealed;
	enum err_code rc;

	rc = csv_parser_finish(&u->csv, e);
	if (rc == ERR_OK)
		rc = flush_chunk(u, e);
	if (rc != ERR_OK)
		return rc;
	content_hash_hex(&u->hash, hash);
	snprintf(rows, sizeof(rows), "%lld", u->rows);
	/* n becomes public at the seal: the delta of the budget that pays
	 * (this dataset's or the shared one's) must be below 1/n unless
	 * acknowledged (ACCOUNTING.md section 4), checked in the same statement
	 * so that a concurrent PATCH cannot slip in between (FOR SHARE holds a
	 * shared ledger's row until COMMIT; PATCH locks it before it reads the
	 * largest n on the ledger).  A public dataset has no budget. */
	res = db_exec(u->db,
		      "UPDATE datasets d SET state = 'sealed', n_rows = $2, sealed_at = now(),"
		      " content_hash = decode($3, 'hex') WHERE d.id = $1 AND d.state = 'created'"
		      " AND (d.public OR EXISTS (SELECT 1 FROM datasets r"
		      " WHERE r.id = coalesce(d.ledger_of, d.id)"
		      " AND (r.large_delta_ok OR r.budget_delta * $2::numeric < 1) FOR SHARE))",
		      3, values, PGRES_COMMAND_OK, e);
	if (res == NULL)
		return e->code;
	sealed = PQcmdTuples(res)[0] == '1';
	PQclear(res);
	if (!sealed) {
		/* Deleted while the body streamed, or the delta check failed:
		 * either way nothing is kept (the caller rolls back). */
		struct dataset_meta m;

		rc = datasets_meta(u->db, rq->auth.tenant, u->meta.id, false, &m, e);
		if (rc == ERR_OK && strcmp(m.state, "created") == 0)
			rc = datasets_check_delta(&m, m.budget_delta, u->rows, "budget.delta", e);
		if (rc == ERR_OK) /* not reachable unless the check and the SQL disagree */
			rc = err_set(e, ERR_INTERNAL, "the seal failed");
		return rc;
	}
	/* After the seal's own checks (a deleted dataset is a 404 first). */
	rc = refuse_duplicate(u, rq->auth.tenant, hash, e);
	if (rc != ERR_OK)
		return rc;
	rc = db_command(u->db, "COMMIT", e);
	u->in_tx = false;
	if (rc != ERR_OK)
		return rc;
	ret->status = 200;
	ret->body = json_pack("{s:s, s:s, s:I}", "id", u->meta.id, "state", "sealed", "n_rows",
			      (json_int_t)u->rows);
	upload_free(u);
	rq->upload = NULL;
	return ret->body != NULL ? ERR_OK : err_set(e, ERR_NOMEM, "cannot build the reply");
}

static void
upload_abort(struct server *srv, struct request *rq)
{
	upload_free(rq->upload); /* rolls back: nothing of the body is kept */
	rq->upload = NULL;
}

const struct stream_ops upload_csv_ops = {
	.begin = upload_begin,
	.chunk = upload_chunk,
	.finish = upload_finish,
	.abort = upload_abort,
};
