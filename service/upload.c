/*
 * upload.c - the streamed upload of a dataset's rows: CSV (text/csv, dense)
 * or LIBSVM (text/x-libsvm, sparse).
 *
 * The body is parsed as it arrives (common/csv.c, common/libsvm.c), each
 * row checked and clipped to the dataset's declared schema (service/rows.h),
 * packed into chunks of about 4 MiB and written to dataset_chunks inside
 * one transaction.  Any malformed row aborts the transaction: the dataset
 * stays unsealed and nothing is kept.  At the end the dataset is sealed
 * with its row count (and layout and non-zero count), which become public.
 * The body is never held in memory: at most one line and two chunks are.
 *
 * Parsing and storing overlap: a full chunk is handed to the upload's
 * writer thread, which INSERTs it while the HTTP thread parses the next
 * one into the other buffer (double buffering; one chunk in flight).  The
 * connection belongs to the writer from the first handoff until the
 * writer is joined (at the finish, or on abort before the ROLLBACK), so it
 * is never used by two threads at once (libpq's rule).  While the writer
 * waits for the INSERT, the upload's hasher thread takes the content hash
 * of the same chunk's records (rows_canonical: the same canonical form as
 * before), so the hash and PostgreSQL's work overlap: with the hash on the
 * writer before its INSERT, writer + PostgreSQL (0.93 CPU s for the 154 MB
 * LIBSVM body of bench/ingest.sh) set the pace, above the parse (0.57 s).
 * A failed INSERT or hash is reported at the next handoff or at the
 * finish, and aborts the upload like a malformed row.
 *
 * The content hash (budget laundering, content_hash.h) is taken over each
 * clipped row in one canonical form whatever the encoding: its non-zeros
 * as (column, value) pairs, then its tail.  So the same rows sent as CSV
 * and as LIBSVM, in any order, hash alike.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "audit.h"
#include "content_hash.h"
#include "csv.h"
#include "datasets.h"
#include "feature_names.h"
#include "ledger.h"
#include "libsvm.h"
#include "rows.h"
#include "schema.h"
#include "upload.h"

#define CHUNK_BYTES       (4u << 20)
#define UPLOAD_LOCK_CLASS "1970566514" /* first key of the upload's advisory locks */

/* The writer thread of one upload and its one-slot handoff. */
struct writer {
	pthread_t thread;
	bool started;         /* thread running: join it before using the connection */
	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t cond;  /* a chunk handed over, taken, written, or stop */
	unsigned char *data;  /* owned: the chunk being written, or the spare buffer */
	size_t len;
	size_t rows;
	long chunk_no;
	bool pending;     /* data holds a chunk to write */
	bool stop;        /* no more chunks: exit once idle */
	enum err_code rc; /* of the first failed INSERT or hash; sticky */
	struct err err;
	/* The hasher: hashes the chunk in data while the writer INSERTs it. */
	pthread_t hasher;
	bool hasher_started;
	bool hash_pending;     /* data's chunk is being hashed */
	bool hash_stop;        /* the writer has exited: so does the hasher */
	enum err_code hash_rc; /* of the chunk just hashed */
	struct err hash_err;
};

struct upload {
	struct dataset_meta meta;
	struct data_schema *s;     /* borrowed: &meta.schema */
	struct schema_extra extra; /* owned: categorical labels */
	bool sparse;               /* LIBSVM body */
	struct csv_parser csv;
	struct libsvm_parser svm;
	bool in_tx;           /* BEGIN sent, not yet ended */
	unsigned char *chunk; /* owned: packed records (rows.h) */
	size_t chunk_len;     /* bytes used */
	size_t chunk_cap;     /* bytes allocated: CHUNK_BYTES or one largest record */
	size_t chunk_rows;    /* records in chunk */
	long chunk_no;
	long long rows;
	long long nnz;      /* non-zeros stored (sparse) */
	double *row;        /* owned: d + tail scratch */
	uint32_t *col;      /* owned: d scratch (sparse) */
	double *canon;      /* owned, the writer's: 1 + 2 d + tail, a row's canonical form */
	struct db_conn *db; /* borrowed from the request */
	uint64_t bytes;     /* body bytes so far */
	uint64_t max_bytes;
	struct content_hash hash;   /* the writer's: of the clipped rows as a multiset */
	struct feature_names names; /* owned: a CSV header's, stored at the seal */
	struct writer w;
};

enum err_code
upload_clip_row(const struct bounds *b, enum task task, double *x, size_t d, double *y,
		struct err *e)
{
	struct data_schema s = { .d = d, .task = task, .bounds = *b };

	rows_clip_dense(&s, x);
	return rows_check_tail(&s, y, 0, d + 1, e);
}

/* INSERT one chunk (on the writer thread). */
static enum err_code
insert_chunk(struct db_conn *db, const char *id, long chunk_no, size_t n_rows,
	     const unsigned char *data, size_t len, struct err *e)
{
	char id_text[37], no[24], rows[24];
	const char *values[4] = { id_text, no, rows, (const char *)data };
	int lengths[4] = { 0, 0, 0, (int)len };
	int formats[4] = { 0, 0, 0, 1 };
	PGresult *res;
	enum err_code rc;

	snprintf(id_text, sizeof(id_text), "%s", id);
	snprintf(no, sizeof(no), "%ld", chunk_no);
	snprintf(rows, sizeof(rows), "%zu", n_rows);
	/* Bounded like every query (db.h): a hung database answers 503. */
	res = db_exec_binary(db,
			     "INSERT INTO dataset_chunks (dataset_id, chunk_no, n_rows, data)"
			     " VALUES ($1, $2, $3, $4)",
			     4, values, lengths, formats, PGRES_COMMAND_OK, e);
	rc = res != NULL ? ERR_OK : err_failed(e);
	PQclear(res);
	return rc;
}

/* Add the n_rows records of a chunk to the content hash (on the writer
 * thread), each in its canonical form: nnz, the (column, value) pairs of
 * its non-zeros, then the tail. */
static enum err_code
hash_chunk(struct upload *u, const unsigned char *p, size_t len, size_t n_rows, struct err *e)
{
	for (size_t r = 0; r < n_rows; r++) {
		size_t k = 0, size = rows_canonical(u->s, u->sparse, p, len, u->canon, &k);
		enum err_code rc;

		if (size == 0)
			return err_set(e, ERR_INTERNAL, "a packed chunk is malformed");
		rc = content_hash_add(&u->hash, u->canon, k, e);
		if (rc != ERR_OK)
			return rc;
		p += size;
		len -= size;
	}
	return ERR_OK;
}

static void *
writer_main(void *arg)
{
	struct upload *u = arg;
	struct writer *w = &u->w;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->pending && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->pending)
			break;
		if (w->rc == ERR_OK) {
			struct err e = { 0 };
			enum err_code rc;

			/* The buffer is the writer's until pending is cleared; the
			 * hasher reads it meanwhile (both only read it). */
			w->hash_pending = true;
			pthread_cond_broadcast(&w->cond);
			pthread_mutex_unlock(&w->lock);
			rc = insert_chunk(u->db, u->meta.id, w->chunk_no, w->rows, w->data, w->len,
					  &e);
			pthread_mutex_lock(&w->lock);
			while (w->hash_pending)
				pthread_cond_wait(&w->cond, &w->lock);
			if (rc == ERR_OK && w->hash_rc != ERR_OK) {
				rc = w->hash_rc;
				e = w->hash_err;
			}
			if (rc != ERR_OK) {
				w->rc = rc;
				w->err = e;
			}
		}
		w->pending = false;
		pthread_cond_broadcast(&w->cond);
	}
	w->hash_stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* The hasher: the content hash of each chunk the writer holds, taken
 * while the writer INSERTs it, so that the hash and PostgreSQL's work
 * overlap instead of adding up (the writer waits for the INSERT). */
static void *
hasher_main(void *arg)
{
	struct upload *u = arg;
	struct writer *w = &u->w;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct err e = { 0 };
		enum err_code rc;

		/* Not w->stop: the writer may still hand over the last chunk. */
		while (!w->hash_pending && !w->hash_stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->hash_pending)
			break;
		pthread_mutex_unlock(&w->lock);
		rc = hash_chunk(u, w->data, w->len, w->rows, &e);
		pthread_mutex_lock(&w->lock);
		w->hash_rc = rc;
		if (rc != ERR_OK)
			w->hash_err = e;
		w->hash_pending = false;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Wait until the writer holds no chunk; its error, if any. */
static enum err_code
writer_idle(struct upload *u, struct err *e)
{
	struct writer *w = &u->w;
	enum err_code rc;

	pthread_mutex_lock(&w->lock);
	while (w->pending)
		pthread_cond_wait(&w->cond, &w->lock);
	rc = w->rc;
	if (rc != ERR_OK && e != NULL)
		*e = w->err;
	pthread_mutex_unlock(&w->lock);
	return rc;
}

/* Stop and join the writer (if started): the connection is the caller's
 * again.  Its error, if any. */
static enum err_code
writer_join(struct upload *u, struct err *e)
{
	struct writer *w = &u->w;

	if (!w->started)
		return w->rc;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	if (w->hasher_started)
		pthread_join(w->hasher, NULL);
	w->hasher_started = false;
	w->started = false;
	if (w->rc != ERR_OK && e != NULL)
		*e = w->err;
	return w->rc;
}

/* Hand the full chunk to the writer and take its spare buffer to fill
 * next.  Waits only while the writer is still busy with the previous
 * chunk. */
static enum err_code
flush_chunk(struct upload *u, struct err *e)
{
	struct writer *w = &u->w;
	unsigned char *spare;
	enum err_code rc;

	if (u->chunk_rows == 0)
		return ERR_OK;
	if (!w->started) {
		if (pthread_create(&w->thread, NULL, writer_main, u) != 0)
			return err_set(e, ERR_INTERNAL, "cannot start the upload's writer");
		w->started = true;
		if (pthread_create(&w->hasher, NULL, hasher_main, u) != 0)
			return err_set(e, ERR_INTERNAL, "cannot start the upload's hasher");
		w->hasher_started = true;
	}
	rc = writer_idle(u, e);
	if (rc != ERR_OK)
		return rc;
	pthread_mutex_lock(&w->lock);
	spare = w->data;
	w->data = u->chunk;
	w->len = u->chunk_len;
	w->rows = u->chunk_rows;
	w->chunk_no = u->chunk_no;
	w->pending = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	u->chunk = spare;
	u->chunk_no++;
	u->chunk_rows = 0;
	u->chunk_len = 0;
	return ERR_OK;
}

/* Room for a record of len bytes, flushing the chunk first if needed. */
static enum err_code
reserve(struct upload *u, size_t len, struct err *e)
{
	if (u->chunk_len + len <= u->chunk_cap)
		return ERR_OK;
	return flush_chunk(u, e);
}

static enum err_code
stored(struct upload *u)
{
	u->chunk_rows++;
	u->rows++;
	return ERR_OK;
}

static enum err_code
on_csv_row(void *ctx, const double *cells, size_t ncols, unsigned long line, struct err *e)
{
	struct upload *u = ctx;
	size_t len = rows_dense_bytes(u->s);
	enum err_code rc;

	memcpy(u->row, cells, ncols * sizeof(double));
	rc = rows_map_label(&u->extra.binary, true, &u->row[ncols - 1], line, "column", ncols, e);
	if (rc == ERR_OK)
		rc = rows_ingest_dense(u->s, u->row, line, e);
	if (rc == ERR_OK)
		rc = reserve(u, len, e);
	if (rc != ERR_OK)
		return rc;
	rows_put_dense(u->s, u->chunk + u->chunk_len, u->row, u->row + u->s->d);
	u->chunk_len += len;
	return stored(u);
}

static enum err_code
on_svm_row(void *ctx, const struct libsvm_row *r, struct err *e)
{
	struct upload *u = ctx;
	struct libsvm_row m = *r; /* the label mapped */
	double tail[2];
	size_t nnz = 0, len = 0;
	enum err_code rc;

	rc = rows_map_label(&u->extra.binary, false, &m.label, r->line, "entry", 1, e);
	if (rc == ERR_OK)
		rc = rows_ingest_libsvm(u->s, &m, u->col, u->row, &nnz, tail, e);
	if (rc == ERR_OK) {
		len = rows_sparse_bytes(u->s, nnz);
		rc = reserve(u, len, e);
	}
	if (rc != ERR_OK)
		return rc;
	rows_put_sparse(u->s, u->chunk + u->chunk_len, u->col, u->row, nnz, tail);
	u->chunk_len += len;
	u->nnz += (long long)nnz;
	return stored(u);
}

/* One upload per dataset at a time: a transaction-scoped advisory lock,
 * tried, never waited for.  The key space (class, hash) is the upload's
 * own; a hash collision only makes an upload retry. */
/*
 * The two chunk buffers are mapped, not malloc'd: glibc raises its mmap
 * threshold when a large mapped block is freed, after which 4 MiB blocks
 * come from the allocating thread's arena and stay there once freed;
 * with the HTTP threads' arenas each keeping two, dpoptd's resident size
 * grew by 8 MB per HTTP thread that served an upload (32 -> 49 MB over
 * three uploads, measured with bench/ingest.sh).  Mapped, they go back to
 * the system when the upload ends.
 */
static unsigned char *
chunk_map(size_t cap)
{
	void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void
chunk_unmap(unsigned char *p, size_t cap)
{
	if (p != NULL)
		munmap(p, cap);
}

static enum err_code
upload_try_lock(struct db_conn *db, const char *id, struct err *e)
{
	const char *values[1] = { id };
	PGresult *res;
	bool locked;

	res = db_exec(db, "SELECT pg_try_advisory_xact_lock(" UPLOAD_LOCK_CLASS ", hashtext($1))",
		      1, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
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
	(void)writer_join(u, NULL); /* the connection is ours again */
	if (u->in_tx)
		(void)db_command(u->db, "ROLLBACK", NULL);
	csv_parser_clear(&u->csv);
	libsvm_parser_clear(&u->svm);
	feature_names_clear(&u->names);
	schema_extra_clear(&u->extra);
	content_hash_clear(&u->hash);
	chunk_unmap(u->chunk, u->chunk_cap);
	chunk_unmap(u->w.data, u->chunk_cap);
	pthread_mutex_destroy(&u->w.lock);
	pthread_cond_destroy(&u->w.cond);
	free(u->row);
	free(u->col);
	free(u->canon);
	free(u);
}

/* The categorical labels of the stored schema (not in dataset_meta). */
static enum err_code
load_labels(struct upload *u, struct err *e)
{
	const char *values[1] = { u->meta.id };
	struct data_schema s;
	PGresult *res;
	json_t *spec;
	enum err_code rc;

	res = db_exec(u->db, "SELECT spec::text FROM datasets WHERE id = $1", 1, values,
		      PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	spec = PQntuples(res) == 1 ? json_loads(PQgetvalue(res, 0, 0), 0, NULL) : NULL;
	PQclear(res);
	rc = schema_parse_extra(json_object_get(spec, "schema"), json_object_get(spec, "bounds"),
				&s, &u->extra, e);
	json_decref(spec);
	if (rc != ERR_OK)
		return err_set(e, ERR_INTERNAL, "dataset '%s' has an unreadable stored schema",
			       u->meta.id);
	return ERR_OK;
}

static enum err_code
upload_begin(struct server *srv, struct request *rq, struct err *e)
{
	struct upload *u = calloc(1, sizeof(*u));
	size_t d, t, cells, max_record;
	double lo, hi;
	enum err_code rc;

	if (u == NULL)
		return err_set(e, ERR_NOMEM, "cannot start the upload");
	rq->upload = u;
	pthread_mutex_init(&u->w.lock, NULL);
	pthread_cond_init(&u->w.cond, NULL);
	u->db = rq->db;
	u->sparse = http_content_type_is(rq, "text/x-libsvm");
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
	if (rc == ERR_OK)
		rc = load_labels(u, e);
	if (rc != ERR_OK)
		return rc;
	if (strcmp(u->meta.state, "created") != 0)
		return err_set(e, ERR_CONFLICT,
			       "dataset '%s' is sealed: its data cannot be replaced", u->meta.id);
	u->s = &u->meta.schema;
	d = u->s->d;
	t = rows_tail_len(u->s);
	if (u->sparse && u->s->n_categorical > 0)
		return err_set_field(e, ERR_MEDIA_TYPE, "Content-Type",
				     "a dataset with categorical attributes is uploaded as "
				     "text/csv: LIBSVM lines have no categorical cells");
	if (u->sparse && schema_feature_range(u->s, &lo, &hi) && !(lo <= 0.0 && 0.0 <= hi))
		return err_set_field(
			e, ERR_MEDIA_TYPE, "Content-Type",
			"a dataset whose 'bounds.feature_range' excludes 0 is uploaded "
			"as text/csv: LIBSVM lines leave absent cells 0");
	if (u->sparse && u->extra.binary.declared && !u->extra.binary.numeric)
		return err_set_field(e, ERR_MEDIA_TYPE, "Content-Type",
				     "a dataset with string labels ('schema.labels') is uploaded "
				     "as text/csv: LIBSVM labels are numbers");
	cells = d + t;
	max_record = u->sparse ? rows_sparse_bytes(u->s, d) : rows_dense_bytes(u->s);
	u->chunk_cap = max_record > CHUNK_BYTES ? max_record : CHUNK_BYTES;
	u->chunk = chunk_map(u->chunk_cap);
	u->w.data = chunk_map(u->chunk_cap);
	u->row = calloc(cells + 1, sizeof(double));
	u->col = calloc(d + 1, sizeof(uint32_t));
	u->canon = calloc(1 + 2 * d + t, sizeof(double));
	if (u->chunk == NULL || u->w.data == NULL || u->row == NULL || u->col == NULL ||
	    u->canon == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate upload buffers");
	/* A cell or an index:value pair needs far less than 64 bytes in any
	 * decimal spelling; plus slack for blanks, quotes and a comment. */
	if (u->sparse)
		return libsvm_parser_init(&u->svm, d, u->s->task != TASK_UNLABELED,
					  (d + 2) * 64 + 1024, on_svm_row, u, e);
	rc = csv_parser_init(&u->csv, cells, cells * 64 + 256, on_csv_row, u, e);
	feature_names_init(&u->names, d);
	u->csv.on_header = feature_names_on_header;
	u->csv.header_ctx = &u->names;
	if (rc == ERR_OK)
		rc = rows_csv_labels(&u->csv, u->s, &u->extra, e);
	return rc;
}

static enum err_code
upload_chunk(struct server *srv, struct request *rq, const char *data, size_t len, struct err *e)
{
	struct upload *u = rq->upload;

	u->bytes += len;
	if (u->bytes > u->max_bytes)
		return err_set(e, ERR_TOO_LARGE, "upload larger than %llu bytes",
			       (unsigned long long)u->max_bytes);
	if (u->sparse)
		return libsvm_parser_feed(&u->svm, data, len, e);
	return csv_parser_feed(&u->csv, data, len, e);
}

/*
 * Budget laundering (docs/privacy-model.md §4.4): the same rows under a second
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
		return err_failed(e);
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
		return err_failed(e);
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

/* The seal's audit row: the public row count and layout. */
static enum err_code
audit_seal(const struct upload *u, const struct request *rq, struct err *e)
{
	struct audit_actor who;
	char detail[96];

	audit_actor_from_request(rq, &who);
	snprintf(detail, sizeof(detail), "{\"n_rows\": %lld, \"layout\": \"%s\"}", u->rows,
		 u->sparse ? "csr" : "dense");
	return audit_record(u->db, &who, "dataset.seal",
			    &(struct audit_target){ .dataset_id = u->meta.id }, detail, e);
}

static enum err_code
upload_finish(struct server *srv, struct request *rq, struct reply *ret, struct err *e)
{
	struct upload *u = rq->upload;
	char rows[24], hash[65], nnz[24];
	const char *values[5] = { u->meta.id, rows, hash, u->sparse ? "csr" : "dense", nnz };
	PGresult *res;
	bool sealed;
	enum err_code rc;

	rc = u->sparse ? libsvm_parser_finish(&u->svm, e) : csv_parser_finish(&u->csv, e);
	if (rc == ERR_OK)
		rc = flush_chunk(u, e);
	if (rc == ERR_OK)
		rc = writer_join(u, e); /* every chunk written; the connection ours */
	if (rc != ERR_OK)
		return rc;
	content_hash_hex(&u->hash, hash);
	snprintf(rows, sizeof(rows), "%lld", u->rows);
	snprintf(nnz, sizeof(nnz), "%lld", u->nnz);
	/* n becomes public at the seal: the delta of the budget that pays
	 * (this dataset's or the shared one's) must be below 1/n unless
	 * acknowledged (docs/privacy-model.md §4.4), checked in the same statement
	 * so that a concurrent PATCH cannot slip in between (FOR SHARE holds a
	 * shared ledger's row until COMMIT; PATCH locks it before it reads the
	 * largest n on the ledger).  A public dataset has no budget.  The
	 * ledger's row is locked first, as everywhere (ledger.h). */
	rc = ledger_lock(u->db, NULL, u->meta.id, NULL, e);
	if (rc != ERR_OK)
		return rc;
	res = db_exec(u->db,
		      "UPDATE datasets d SET state = 'sealed', n_rows = $2, sealed_at = now(),"
		      " content_hash = decode($3, 'hex'), layout = $4,"
		      " nnz = CASE $4 WHEN 'csr' THEN $5::bigint END"
		      " WHERE d.id = $1 AND d.state = 'created'"
		      " AND (d.public OR EXISTS (SELECT 1 FROM datasets r"
		      " WHERE r.id = coalesce(d.ledger_of, d.id)"
		      " AND (r.large_delta_ok OR r.budget_delta * $2::numeric < 1) FOR SHARE))",
		      5, values, PGRES_COMMAND_OK, e);
	if (res == NULL)
		return err_failed(e);
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
	if (rc == ERR_OK)
		rc = feature_names_store(u->db, u->meta.id, &u->names, e);
	if (rc == ERR_OK)
		rc = audit_seal(u, rq, e);
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

const struct stream_ops upload_ops = {
	.begin = upload_begin,
	.chunk = upload_chunk,
	.finish = upload_finish,
	.abort = upload_abort,
};
