/*
 * rows.c - row validation, clipping, the packed record format and the
 * in-memory builder (rows.h).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "libsvm.h"
#include "rows.h"
#include "schema.h"
#include "util.h"

static bool
labeled(const struct data_schema *s)
{
	return s->task != TASK_UNLABELED;
}

size_t
rows_tail_len(const struct data_schema *s)
{
	return s->n_categorical + (s->n_groups > 0 ? 1 : 0) + (labeled(s) ? 1 : 0);
}

/* A sparse row leaves its absent cells 0: only a range holding 0 fits. */
static bool
range_fits_sparse(const struct data_schema *s)
{
	double lo, hi;

	return !schema_feature_range(s, &lo, &hi) || (lo <= 0.0 && 0.0 <= hi);
}

/* v is an integer in [0, n). */
static bool
is_index(double v, size_t n)
{
	return v >= 0.0 && v < (double)n && v == floor(v);
}

/* Check the tail, naming value k's position as "<unit> pos(k)". */
static enum err_code
check_tail(const struct data_schema *s, double *tail, unsigned long line, const char *unit,
	   size_t first, const size_t *pos, struct err *e)
{
	size_t k = 0;
#define POS(k) (pos != NULL ? pos[k] : first + (k))

	for (size_t c = 0; c < s->n_categorical; c++, k++)
		if (!is_index(tail[k], s->categorical[c].size))
			return err_set_field(e, ERR_INVALID, "data",
					     "line %lu, %s %zu: '%s' must be an index 0..%zu "
					     "or one of its labels",
					     line, unit, POS(k), s->categorical[c].name,
					     s->categorical[c].size - 1);
	if (s->n_groups > 0) {
		if (!is_index(tail[k], s->n_groups))
			return err_set_field(e, ERR_INVALID, "data",
					     "line %lu, %s %zu: the group must be an integer "
					     "0..%zu",
					     line, unit, POS(k), s->n_groups - 1);
		k++;
	}
	if (!labeled(s))
		return ERR_OK;
	switch (s->task) {
	case TASK_BINARY:
		if (tail[k] != 1.0 && tail[k] != -1.0)
			return err_set_field(e, ERR_INVALID, "data",
					     "line %lu, %s %zu: the label must be -1 or 1", line,
					     unit, POS(k));
		break;
	case TASK_MULTICLASS:
		if (!is_index(tail[k], s->n_classes))
			return err_set_field(e, ERR_INVALID, "data",
					     "line %lu, %s %zu: the label must be a class index "
					     "0..%zu",
					     line, unit, POS(k), s->n_classes - 1);
		break;
	case TASK_REGRESSION: {
		const struct bounds *b = &s->bounds;
		double lo = isnan(b->label_lo) ? -b->label : b->label_lo;
		double hi = isnan(b->label_hi) ? b->label : b->label_hi;

		/* The declared range is enforced by clipping, as features are;
		 * an undeclared one cannot happen (schema.c requires it). */
		if (!isnan(lo) && !isnan(hi))
			tail[k] = fmax(lo, fmin(hi, tail[k]));
		break;
	}
	default:
		break;
	}
	return ERR_OK;
#undef POS
}

enum err_code
rows_csv_labels(struct csv_parser *p, const struct data_schema *s, const struct schema_extra *x,
		struct err *e)
{
	const struct schema_binary_labels *l = &x->binary;
	enum err_code rc = ERR_OK;

	for (size_t c = 0; rc == ERR_OK && c < s->n_categorical; c++)
		if (x->labels[c].count > 0)
			rc = csv_parser_set_labels(p, s->d + c,
						   (const char *const *)x->labels[c].label,
						   x->labels[c].count, e);
	if (rc == ERR_OK && s->task == TASK_BINARY && l->declared && !l->numeric)
		rc = csv_parser_set_labels(p, s->d + rows_tail_len(s) - 1,
					   (const char *const *)l->text, 2, e);
	return rc;
}

enum err_code
rows_map_label(const struct schema_binary_labels *l, bool from_csv, double *label,
	       unsigned long line, const char *unit, size_t pos, struct err *e)
{
	if (l == NULL || !l->declared)
		return ERR_OK;
	if (!l->numeric && !from_csv)
		return err_set_field(e, ERR_INVALID, "data",
				     "line %lu: the schema declares string labels "
				     "('schema.labels'): upload as CSV",
				     line);
	if (!l->numeric) {
		/* The label column gave the index (csv.h): only 0 or 1. */
		*label = *label == 1.0 ? 1.0 : -1.0;
		return ERR_OK;
	}
	if (*label == l->value[0] || *label == l->value[1]) {
		*label = *label == l->value[1] ? 1.0 : -1.0;
		return ERR_OK;
	}
	return err_set_field(e, ERR_INVALID, "data",
			     "line %lu, %s %zu: the label must be one of the two values of "
			     "'schema.labels'",
			     line, unit, pos);
}

enum err_code
rows_check_tail(const struct data_schema *s, double *tail, unsigned long line, size_t first_col,
		struct err *e)
{
	return check_tail(s, tail, line, "column", first_col, NULL, e);
}

enum err_code
rows_ingest_dense(const struct data_schema *s, double *row, unsigned long line, struct err *e)
{
	enum err_code rc = check_tail(s, row + s->d, line, "column", s->d + 1, NULL, e);

	if (rc != ERR_OK)
		return rc;
	rows_clip_dense(s, row);
	for (size_t j = 0; j < s->d; j++)
		if (row[j] == 0.0)
			row[j] = 0.0; /* -0 is stored as +0, as the sparse form would be */
	return ERR_OK;
}

enum err_code
rows_ingest_libsvm(const struct data_schema *s, const struct libsvm_row *r, uint32_t *col,
		   double *val, size_t *ret_nnz, double *tail, struct err *e)
{
	/* On the line the label is entry 1 and qid entry 2; in the tail the
	 * group comes first. */
	static const size_t pos_group_label[2] = { 2, 1 };
	size_t t = 0, nnz = 0;
	enum err_code rc;

	if (s->n_groups > 0 && !r->has_group)
		return err_set_field(e, ERR_INVALID, "data",
				     "line %lu: 'qid:<group>' is required: the schema has a group "
				     "column",
				     r->line);
	if (s->n_groups == 0 && r->has_group)
		return err_set_field(e, ERR_INVALID, "data",
				     "line %lu: 'qid' given but the schema has no group column",
				     r->line);
	if (s->n_categorical > 0)
		return err_set_field(e, ERR_INVALID, "data",
				     "LIBSVM lines have no categorical cells: upload as CSV");
	if (!range_fits_sparse(s))
		return err_set_field(e, ERR_INVALID, "data",
				     "LIBSVM lines leave absent cells 0, outside "
				     "'bounds.feature_range': upload as CSV");
	if (s->n_groups > 0)
		tail[t++] = (double)r->group;
	if (s->task != TASK_UNLABELED)
		tail[t++] = r->label;
	rc = check_tail(s, tail, r->line, "entry", 1, s->n_groups > 0 ? pos_group_label : NULL, e);
	if (rc != ERR_OK)
		return rc;
	memcpy(val, r->val, r->nnz * sizeof(double));
	memcpy(col, r->col, r->nnz * sizeof(uint32_t));
	rows_clip_sparse(s, col, val, r->nnz);
	/* Scaling may underflow a tiny value to zero: a stored value is never
	 * zero, so drop it, as the dense form does not list zeros either. */
	for (size_t j = 0; j < r->nnz; j++)
		if (val[j] != 0.0) {
			col[nnz] = col[j];
			val[nnz++] = val[j];
		}
	*ret_nnz = nnz;
	return ERR_OK;
}

/* Scale v (k values) down so that its l2 norm is at most bound. */
static void
clip_l2(double *v, size_t k, double bound)
{
	double norm2 = 0.0, m = 0.0;

	if (isnan(bound))
		return;
	for (size_t j = 0; j < k; j++)
		norm2 += v[j] * v[j];
	if (!isfinite(norm2)) {
		/* Overflow in the squares: rescale by the largest entry first. */
		for (size_t j = 0; j < k; j++)
			m = fmax(m, fabs(v[j]));
		norm2 = 0.0;
		for (size_t j = 0; j < k; j++)
			norm2 += (v[j] / m) * (v[j] / m);
		norm2 = m * m * norm2; /* may be inf: then the scale below is 0 */
	}
	if (norm2 <= bound * bound)
		return;
	{
		double sc = bound / sqrt(norm2);

		for (size_t j = 0; j < k; j++)
			v[j] *= sc;
	}
	/* Rounding may leave the norm a hair above the bound: shrink by one
	 * part in 2^50 until it holds (once in practice). */
	for (int round = 0; round < 8; round++) {
		norm2 = 0.0;
		for (size_t j = 0; j < k; j++)
			norm2 += v[j] * v[j];
		if (sqrt(norm2) <= bound)
			return;
		for (size_t j = 0; j < k; j++)
			v[j] *= 1.0 - 0x1p-50;
	}
}

static void
clip_linf(double *v, size_t k, double bound)
{
	if (isnan(bound))
		return;
	for (size_t j = 0; j < k; j++)
		v[j] = fmax(-bound, fmin(bound, v[j]));
}

/* Every cell into the declared feature range (schema.h: then no other
 * feature bound is declared but the feature_linf it implies, which the
 * range meets). */
static void
clip_range(const struct data_schema *s, double *v, size_t k)
{
	double lo, hi;

	if (!schema_feature_range(s, &lo, &hi))
		return;
	for (size_t j = 0; j < k; j++)
		v[j] = fmax(lo, fmin(hi, v[j]));
}

void
rows_clip_dense(const struct data_schema *s, double *x)
{
	clip_range(s, x, s->d);
	clip_linf(x, s->d, s->bounds.feature_linf);
	for (size_t b = 0; b < s->n_blocks; b++) {
		const struct data_block *bl = &s->blocks[b];

		clip_linf(x + bl->offset, bl->size, bl->linf);
		clip_l2(x + bl->offset, bl->size, bl->l2);
	}
	clip_l2(x, s->d, s->bounds.feature_l2);
}

void
rows_clip_sparse(const struct data_schema *s, const uint32_t *col, double *val, size_t nnz)
{
	size_t a = 0;

	clip_range(s, val, nnz);
	clip_linf(val, nnz, s->bounds.feature_linf);
	/* Columns increase, so a block's entries are one run of val. */
	for (size_t b = 0; b < s->n_blocks; b++) {
		const struct data_block *bl = &s->blocks[b];
		size_t z;

		while (a < nnz && col[a] < bl->offset)
			a++;
		for (z = a; z < nnz && col[z] < bl->offset + bl->size; z++)
			;
		clip_linf(val + a, z - a, bl->linf);
		clip_l2(val + a, z - a, bl->l2);
		a = z;
	}
	clip_l2(val, nnz, s->bounds.feature_l2);
}

static void
put_u32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
put_f64(unsigned char *p, double v)
{
	uint64_t u;

	memcpy(&u, &v, 8);
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(u >> (8 * i));
}

static uint32_t
get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double
get_f64(const unsigned char *p)
{
	uint64_t u = 0;
	double v;

	for (int i = 0; i < 8; i++)
		u |= (uint64_t)p[i] << (8 * i);
	memcpy(&v, &u, 8);
	return v;
}

size_t
rows_dense_bytes(const struct data_schema *s)
{
	return 8 * (s->d + rows_tail_len(s));
}

size_t
rows_sparse_bytes(const struct data_schema *s, size_t nnz)
{
	return 4 + 12 * nnz + 8 * rows_tail_len(s);
}

void
rows_put_dense(const struct data_schema *s, unsigned char *p, const double *x, const double *tail)
{
	size_t t = rows_tail_len(s);

	for (size_t j = 0; j < s->d; j++, p += 8)
		put_f64(p, x[j]);
	for (size_t j = 0; j < t; j++, p += 8)
		put_f64(p, tail[j]);
}

void
rows_put_sparse(const struct data_schema *s, unsigned char *p, const uint32_t *col,
		const double *val, size_t nnz, const double *tail)
{
	size_t t = rows_tail_len(s);

	put_u32(p, (uint32_t)nnz);
	p += 4;
	for (size_t j = 0; j < nnz; j++, p += 4)
		put_u32(p, col[j]);
	for (size_t j = 0; j < nnz; j++, p += 8)
		put_f64(p, val[j]);
	for (size_t j = 0; j < t; j++, p += 8)
		put_f64(p, tail[j]);
}

size_t
rows_canonical(const struct data_schema *s, bool sparse, const unsigned char *p, size_t len,
	       double *canon, size_t *ret_n)
{
	size_t t = rows_tail_len(s), k = 1, nnz = 0, size;
	const unsigned char *tail;

	if (sparse) {
		if (len < 4)
			return 0;
		nnz = get_u32(p);
		if (nnz > s->d)
			return 0;
		size = rows_sparse_bytes(s, nnz);
		if (size > len)
			return 0;
		for (size_t j = 0; j < nnz; j++) {
			canon[k++] = (double)get_u32(p + 4 + 4 * j);
			canon[k++] = get_f64(p + 4 + 4 * nnz + 8 * j);
		}
		tail = p + 4 + 12 * nnz;
	} else {
		size = rows_dense_bytes(s);
		if (size > len)
			return 0;
		for (size_t j = 0; j < s->d; j++) {
			double v = get_f64(p + 8 * j);

			if (v != 0.0) {
				canon[k++] = (double)j;
				canon[k++] = v;
				nnz++;
			}
		}
		tail = p + 8 * s->d;
	}
	canon[0] = (double)nnz;
	for (size_t j = 0; j < t; j++)
		canon[k++] = get_f64(tail + 8 * j);
	*ret_n = k;
	return size;
}

/* ---- builder ---- */

static enum err_code
grow(void **p, size_t *cap_bytes, size_t need_bytes, struct err *e)
{
	size_t cap = *cap_bytes;
	void *q;

	if (need_bytes <= cap)
		return ERR_OK;
	if (cap < 4096)
		cap = 4096;
	while (cap < need_bytes) {
		if (cap > SIZE_MAX / 2)
			return err_set(e, ERR_NOMEM, "dataset too large for memory");
		cap *= 2;
	}
	q = realloc(*p, cap);
	if (q == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate %zu bytes for the dataset", cap);
	*p = q;
	*cap_bytes = cap;
	return ERR_OK;
}

static enum err_code
reserve_rows(struct rows_builder *b, size_t rows, struct err *e)
{
	const struct data_schema *s = &b->schema;
	size_t need = rows, bytes;
	enum err_code rc = ERR_OK;

	if (need <= b->cap)
		return ERR_OK;
	if (need < 2 * b->cap)
		need = 2 * b->cap;
	if (need < 64)
		need = 64;
	if (b->layout == DATA_DENSE && s->d > 0) {
		if (!size_mul(need, s->d * sizeof(double), &bytes))
			return err_set(e, ERR_NOMEM, "dataset too large for memory");
		void *q = realloc(b->x, bytes);

		if (q == NULL)
			return err_set(e, ERR_NOMEM, "cannot allocate the dataset");
		b->x = q;
	}
	if (b->layout == DATA_CSR) {
		void *q = realloc(b->row_ptr, (need + 1) * sizeof(size_t));

		if (q == NULL)
			return err_set(e, ERR_NOMEM, "cannot allocate the dataset");
		b->row_ptr = q;
	}
	if (labeled(s)) {
		void *q = realloc(b->y, need * sizeof(double));

		if (q == NULL)
			return err_set(e, ERR_NOMEM, "cannot allocate the dataset");
		b->y = q;
	}
	if (s->n_groups > 0) {
		void *q = realloc(b->group, need * sizeof(uint32_t));

		if (q == NULL)
			return err_set(e, ERR_NOMEM, "cannot allocate the dataset");
		b->group = q;
	}
	if (s->n_categorical > 0) {
		void *q = realloc(b->cat, need * s->n_categorical * sizeof(uint32_t));

		if (q == NULL)
			return err_set(e, ERR_NOMEM, "cannot allocate the dataset");
		b->cat = q;
	}
	b->cap = need;
	return rc;
}

static enum err_code
reserve_nnz(struct rows_builder *b, size_t total, struct err *e)
{
	size_t want = total, cbytes, vbytes;
	enum err_code rc;

	if (total <= b->nnz_cap)
		return ERR_OK;
	if (want < 2 * b->nnz_cap)
		want = 2 * b->nnz_cap;
	cbytes = b->nnz_cap * sizeof(uint32_t);
	vbytes = b->nnz_cap * sizeof(double);
	if (want > SIZE_MAX / sizeof(double))
		return err_set(e, ERR_NOMEM, "dataset too large for memory");
	rc = grow((void **)&b->col, &cbytes, want * sizeof(uint32_t), e);
	if (rc == ERR_OK)
		rc = grow((void **)&b->val, &vbytes, want * sizeof(double), e);
	if (rc == ERR_OK)
		b->nnz_cap = want;
	return rc;
}

enum err_code
rows_builder_init(struct rows_builder *b, const struct data_schema *s, enum data_layout layout,
		  size_t n_hint, size_t nnz_hint, struct err *e)
{
	enum err_code rc;

	*b = (struct rows_builder){ .schema = *s, .layout = layout };
	rc = reserve_rows(b, n_hint, e);
	if (rc == ERR_OK && layout == DATA_CSR) {
		if (b->row_ptr == NULL)
			rc = reserve_rows(b, 1, e);
		if (rc == ERR_OK)
			b->row_ptr[0] = 0;
		if (rc == ERR_OK && nnz_hint > 0)
			rc = reserve_nnz(b, nnz_hint, e);
	}
	if (rc != ERR_OK)
		rows_builder_clear(b);
	return rc;
}

static void
add_tail(struct rows_builder *b, const double *tail)
{
	const struct data_schema *s = &b->schema;
	size_t k = 0;

	for (size_t c = 0; c < s->n_categorical; c++, k++)
		b->cat[b->n * s->n_categorical + c] = (uint32_t)tail[k];
	if (s->n_groups > 0)
		b->group[b->n] = (uint32_t)tail[k++];
	if (labeled(s))
		b->y[b->n] = tail[k];
}

enum err_code
rows_builder_add_dense(struct rows_builder *b, const double *x, const double *tail, struct err *e)
{
	enum err_code rc = reserve_rows(b, b->n + 1, e);

	if (rc != ERR_OK)
		return rc;
	if (b->schema.d > 0)
		memcpy(b->x + b->n * b->schema.d, x, b->schema.d * sizeof(double));
	add_tail(b, tail);
	b->n++;
	return ERR_OK;
}

enum err_code
rows_builder_add_sparse(struct rows_builder *b, const uint32_t *col, const double *val, size_t nnz,
			const double *tail, struct err *e)
{
	enum err_code rc = reserve_rows(b, b->n + 1, e);

	if (rc == ERR_OK)
		rc = reserve_nnz(b, b->nnz + nnz, e);
	if (rc != ERR_OK)
		return rc;
	memcpy(b->col + b->nnz, col, nnz * sizeof(uint32_t));
	memcpy(b->val + b->nnz, val, nnz * sizeof(double));
	b->nnz += nnz;
	add_tail(b, tail);
	b->n++;
	b->row_ptr[b->n] = b->nnz;
	return ERR_OK;
}

/* A stored tail that breaks the schema means the store is inconsistent. */
static bool
tail_ok(const struct data_schema *s, const double *tail)
{
	struct err e = { 0 };
	double t[DATA_MAX_CATEGORICAL + 2];
	size_t n = rows_tail_len(s);

	memcpy(t, tail, n * sizeof(double));
	if (rows_check_tail(s, t, 0, 0, &e) != ERR_OK)
		return false;
	/* A stored regression label is already clipped: unchanged. */
	return n == 0 || memcmp(t, tail, n * sizeof(double)) == 0;
}

static enum err_code add_records(struct rows_builder *b, const unsigned char *p, size_t len,
				 size_t rows, struct err *e);

enum err_code
rows_builder_add_records(struct rows_builder *b, const unsigned char *p, size_t len, size_t rows,
			 struct err *e)
{
	size_t n = b->n, nnz = b->nnz;
	enum err_code rc = add_records(b, p, len, rows, e);

	if (rc != ERR_OK) { /* all or nothing: the rows before the call stand */
		b->n = n;
		b->nnz = nnz;
	}
	return rc;
}

static enum err_code
add_records(struct rows_builder *b, const unsigned char *p, size_t len, size_t rows, struct err *e)
{
	const struct data_schema *s = &b->schema;
	size_t t = rows_tail_len(s), off = 0;
	double tail[DATA_MAX_CATEGORICAL + 2];
	enum err_code rc = ERR_OK;

	for (size_t r = 0; r < rows && rc == ERR_OK; r++) {
		if (b->layout == DATA_DENSE) {
			size_t need = rows_dense_bytes(s);

			if (len - off < need)
				return err_set(e, ERR_INTERNAL, "a stored record is truncated");
			rc = reserve_rows(b, b->n + 1, e);
			if (rc != ERR_OK)
				return rc;
			for (size_t j = 0; j < s->d; j++)
				b->x[b->n * s->d + j] = get_f64(p + off + 8 * j);
			for (size_t j = 0; j < t; j++)
				tail[j] = get_f64(p + off + 8 * (s->d + j));
			if (!tail_ok(s, tail))
				return err_set(e, ERR_INTERNAL,
					       "a stored record breaks the schema");
			add_tail(b, tail);
			b->n++;
			off += need;
		} else {
			size_t nnz, need, base;

			if (len - off < 4)
				return err_set(e, ERR_INTERNAL, "a stored record is truncated");
			nnz = get_u32(p + off);
			need = rows_sparse_bytes(s, nnz);
			if (nnz > s->d || len - off < need)
				return err_set(e, ERR_INTERNAL, "a stored record is truncated");
			base = off + 4;
			if (!range_fits_sparse(s))
				return err_set(e, ERR_INTERNAL,
					       "a stored sparse record breaks the feature range");
			for (size_t j = 0; j < t; j++)
				tail[j] = get_f64(p + base + 12 * nnz + 8 * j);
			if (!tail_ok(s, tail))
				return err_set(e, ERR_INTERNAL,
					       "a stored record breaks the schema");
			rc = reserve_rows(b, b->n + 1, e);
			if (rc == ERR_OK)
				rc = reserve_nnz(b, b->nnz + nnz, e);
			if (rc != ERR_OK)
				return rc;
			for (size_t j = 0; j < nnz; j++) {
				uint32_t c = get_u32(p + base + 4 * j);
				double v = get_f64(p + base + 4 * nnz + 8 * j);

				if (c >= s->d || (j > 0 && c <= b->col[b->nnz + j - 1]) ||
				    !isfinite(v) || v == 0.0)
					return err_set(e, ERR_INTERNAL,
						       "a stored record breaks the schema");
				b->col[b->nnz + j] = c;
				b->val[b->nnz + j] = v;
			}
			b->nnz += nnz;
			add_tail(b, tail);
			b->n++;
			b->row_ptr[b->n] = b->nnz;
			off += need;
		}
	}
	if (rc == ERR_OK && off != len)
		return err_set(e, ERR_INTERNAL, "a stored chunk has %zu bytes left over",
			       len - off);
	return rc;
}

void
rows_builder_view(const struct rows_builder *b, struct dataset *ret, size_t *ret_bytes)
{
	const struct data_schema *s = &b->schema;

	*ret = (struct dataset){
		.n = b->n,
		.d = s->d,
		.layout = b->layout,
		.x = b->x,
		.row_ptr = b->row_ptr,
		.col = b->col,
		.val = b->val,
		.y = b->y,
		.group = b->group,
		.cat = b->cat,
		.n_groups = s->n_groups,
		.n_classes = s->n_classes,
		.n_categorical = s->n_categorical,
	};
	if (ret_bytes != NULL)
		*ret_bytes = b->cap * (b->layout == DATA_DENSE ? s->d * sizeof(double)
							       : sizeof(size_t)) +
			     b->nnz_cap * (sizeof(uint32_t) + sizeof(double)) +
			     b->cap * ((labeled(s) ? sizeof(double) : 0) +
				       (s->n_groups > 0 ? sizeof(uint32_t) : 0) +
				       s->n_categorical * sizeof(uint32_t));
}

/* Swap n-element groups of size sz at rows i and j. */
static void
swap_cells(void *base, size_t sz, size_t i, size_t j, unsigned char *tmp)
{
	unsigned char *a = (unsigned char *)base + i * sz, *c = (unsigned char *)base + j * sz;

	memcpy(tmp, a, sz);
	memcpy(a, c, sz);
	memcpy(c, tmp, sz);
}

static enum err_code
shuffle_sparse(struct rows_builder *b, struct rng *rng, struct err *e)
{
	size_t n = b->n, ncat = b->schema.n_categorical;
	size_t *perm = malloc((n > 0 ? n : 1) * sizeof(*perm));
	size_t *rp = malloc((n + 1) * sizeof(*rp));
	uint32_t *col = malloc((b->nnz > 0 ? b->nnz : 1) * sizeof(*col));
	double *val = malloc((b->nnz > 0 ? b->nnz : 1) * sizeof(*val));
	double *y = b->y != NULL ? malloc((n > 0 ? n : 1) * sizeof(*y)) : NULL;
	uint32_t *group = b->group != NULL ? malloc((n > 0 ? n : 1) * sizeof(*group)) : NULL;
	uint32_t *cat =
		b->cat != NULL ? malloc((n * ncat > 0 ? n * ncat : 1) * sizeof(*cat)) : NULL;

	if (perm == NULL || rp == NULL || col == NULL || val == NULL ||
	    (b->y != NULL && y == NULL) || (b->group != NULL && group == NULL) ||
	    (b->cat != NULL && cat == NULL)) {
		free(perm);
		free(rp);
		free(col);
		free(val);
		free(y);
		free(group);
		free(cat);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	for (size_t i = 0; i + 1 < n; i++) {
		size_t j = i + (size_t)rng_below(rng, n - i), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	rp[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t src = perm[i], lo = b->row_ptr[src], len = b->row_ptr[src + 1] - lo;

		memcpy(col + rp[i], b->col + lo, len * sizeof(*col));
		memcpy(val + rp[i], b->val + lo, len * sizeof(*val));
		rp[i + 1] = rp[i] + len;
		if (y != NULL)
			y[i] = b->y[src];
		if (group != NULL)
			group[i] = b->group[src];
		if (cat != NULL)
			memcpy(cat + i * ncat, b->cat + src * ncat, ncat * sizeof(*cat));
	}
	free(perm);
	free(b->row_ptr);
	free(b->col);
	free(b->val);
	free(b->y);
	free(b->group);
	free(b->cat);
	b->row_ptr = rp;
	b->col = col;
	b->val = val;
	b->y = y;
	b->group = group;
	b->cat = cat;
	b->cap = n;
	b->nnz_cap = b->nnz;
	return ERR_OK;
}

enum err_code
rows_builder_shuffle(struct rows_builder *b, struct rng *rng, struct err *e)
{
	const size_t d = b->schema.d, ncat = b->schema.n_categorical;
	unsigned char *tmp;

	if (b->n < 2)
		return ERR_OK;
	if (b->layout == DATA_CSR)
		return shuffle_sparse(b, rng, e);
	tmp = malloc((d > ncat ? d : ncat) * sizeof(double) + sizeof(double));
	if (tmp == NULL)
		return err_set(e, ERR_NOMEM, "out of memory");
	for (size_t i = b->n - 1; i > 0; i--) {
		size_t j = (size_t)rng_below(rng, i + 1);

		if (j == i)
			continue;
		if (d > 0)
			swap_cells(b->x, d * sizeof(*b->x), i, j, tmp);
		if (b->y != NULL)
			swap_cells(b->y, sizeof(*b->y), i, j, tmp);
		if (b->group != NULL)
			swap_cells(b->group, sizeof(*b->group), i, j, tmp);
		if (b->cat != NULL && ncat > 0)
			swap_cells(b->cat, ncat * sizeof(*b->cat), i, j, tmp);
	}
	free(tmp);
	return ERR_OK;
}

void
rows_builder_clear(struct rows_builder *b)
{
	free(b->x);
	free(b->row_ptr);
	free(b->col);
	free(b->val);
	free(b->y);
	free(b->group);
	free(b->cat);
	*b = (struct rows_builder){ 0 };
}
