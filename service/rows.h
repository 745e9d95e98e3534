/*
 * rows.h - one row of a dataset from parsed text to the stored record and
 * back into memory: validation and clipping to the declared schema, the
 * packed record format of dataset_chunks, and the in-memory builder.
 *
 * The upload path (upload.c) and the offline solver (solve.c) both go
 * text parser -> rows_check_tail -> rows_clip_* -> record, so a row means
 * the same thing through the API and on the command line.
 *
 * A row is its features (dense: d values; sparse: nnz (column, value)
 * pairs, columns strictly increasing, values non-zero) and its tail: the
 * categorical indices, then the group, then the label (data.h's column
 * order), as doubles.  Records are little-endian:
 *
 *	dense   d float64 features, tail float64s
 *	sparse  uint32 nnz, nnz uint32 columns, nnz float64 values, tail float64s
 *
 * Clipping order: every coordinate into the feature range (schema.h: a
 * range is declared alone, and a sparse row, whose absent cells are 0, is
 * refused when the range excludes 0), to bounds.feature_linf and its block's
 * linf, each block to its l2 bound, then the row to bounds.feature_l2.
 * Scaling down never breaks a bound already met, so every declared bound
 * holds afterwards (checked by the tests with one ulp of slack removed:
 * see clip_l2 in rows.c).
 */
#ifndef SERVICE_ROWS_H
#define SERVICE_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data.h"
#include "err.h"
#include "rng.h"

/* Values after the features: categorical indices, group, label. */
size_t rows_tail_len(const struct data_schema *s);

/* Check the tail in place: categorical cells and the group must be
 * integers in range, a binary label +-1, a class index in 0 .. K - 1; a
 * regression label is clipped into [label_lo, label_hi].  ERR_INVALID with
 * field "data" and a message naming line and (1-based) column, where the
 * tail's first value is column first_col. */
enum err_code rows_check_tail(const struct data_schema *s, double *tail, unsigned long line,
			      size_t first_col, struct err *e);

/* The one path of a parsed row (upload and offline solver alike): a CSV
 * row (d features then the tail, in place) is checked, clipped, and -0
 * becomes +0; a LIBSVM row's qid and label become the tail (group, label),
 * which is checked (positions as "entry": the label is entry 1, qid entry
 * 2), and its non-zeros are copied to col/val (room for r->nnz), clipped,
 * and those that underflow to 0 dropped (*ret_nnz left).  LIBSVM rows have
 * no categorical cells: a schema with some is refused. */
struct libsvm_row;
enum err_code rows_ingest_dense(const struct data_schema *s, double *row, unsigned long line,
				struct err *e);
enum err_code rows_ingest_libsvm(const struct data_schema *s, const struct libsvm_row *r,
				 uint32_t *col, double *val, size_t *ret_nnz, double *tail,
				 struct err *e);

/* Declared binary labels (schema.labels, schema.h) and the CSV label
 * columns.  rows_csv_labels() makes every column with declared string
 * labels a label column of p (csv.h): the categorical attributes' and a
 * binary label's ("no" / "yes"; the indices 0 / 1 spell them too, as for
 * categorical cells).  rows_map_label() then maps the label in place, before
 * rows_ingest_*(): a string label's index 0 / 1, or a numeric label equal to
 * the negative / positive value, becomes -1 / +1; any other number is
 * ERR_INVALID (field "data", naming line and "<unit> pos", never the value).
 * LIBSVM lines carry numbers only: string labels there are refused (from_csv
 * false).  Without declared labels both do nothing. */
struct csv_parser;
struct schema_extra;
struct schema_binary_labels;
enum err_code rows_csv_labels(struct csv_parser *p, const struct data_schema *s,
			      const struct schema_extra *x, struct err *e);
enum err_code rows_map_label(const struct schema_binary_labels *l, bool from_csv, double *label,
			     unsigned long line, const char *unit, size_t pos, struct err *e);

/* Clip a dense row (s->d values) / the non-zeros of a sparse one. */
void rows_clip_dense(const struct data_schema *s, double *x);
void rows_clip_sparse(const struct data_schema *s, const uint32_t *col, double *val, size_t nnz);

/* Record sizes and encoders (p must have the size). */
size_t rows_dense_bytes(const struct data_schema *s);
size_t rows_sparse_bytes(const struct data_schema *s, size_t nnz);
void rows_put_dense(const struct data_schema *s, unsigned char *p, const double *x,
		    const double *tail);
void rows_put_sparse(const struct data_schema *s, unsigned char *p, const uint32_t *col,
		     const double *val, size_t nnz, const double *tail);

/* The canonical form of the record at p (len bytes left), the one the
 * content hash takes (content_hash.h): its non-zero count, the (column,
 * value) pairs of its non-zeros, then its tail, into canon (1 + 2 d +
 * tail values); *ret_n gets the count written.  Returns the record's size,
 * or 0 for a record that does not fit len or claims more than d
 * non-zeros. */
size_t rows_canonical(const struct data_schema *s, bool sparse, const unsigned char *p, size_t len,
		      double *canon, size_t *ret_n);

/*
 * A dataset in memory, built row by row (owned arrays; view borrows them).
 * Growth is amortised; rows_builder_finish() trims and fills the view.
 */
struct rows_builder {
	struct data_schema schema;
	enum data_layout layout;
	size_t n, cap;       /* rows so far, rows allocated */
	size_t nnz, nnz_cap; /* CSR entries so far, allocated */
	double *x;           /* dense: cap * d */
	size_t *row_ptr;     /* CSR: cap + 1 */
	uint32_t *col;       /* CSR */
	double *val;         /* CSR */
	double *y;           /* labels, NULL when unlabeled */
	uint32_t *group;     /* NULL without a group column */
	uint32_t *cat;       /* cap * n_categorical, NULL without */
};

/* Start an empty dataset; n_hint and nnz_hint (0: unknown) size the first
 * allocation. */
enum err_code rows_builder_init(struct rows_builder *b, const struct data_schema *s,
				enum data_layout layout, size_t n_hint, size_t nnz_hint,
				struct err *e);

/* Append one checked, clipped row. */
enum err_code rows_builder_add_dense(struct rows_builder *b, const double *x, const double *tail,
				     struct err *e);
enum err_code rows_builder_add_sparse(struct rows_builder *b, const uint32_t *col,
				      const double *val, size_t nnz, const double *tail,
				      struct err *e);

/* Decode `rows` packed records (p, len bytes) and append them; ERR_INTERNAL
 * when the bytes are not exactly such records or break the schema (the
 * store is inconsistent: fail closed). */
enum err_code rows_builder_add_records(struct rows_builder *b, const unsigned char *p, size_t len,
				       size_t rows, struct err *e);

/* The view of what was built (n rows) and the bytes held. */
void rows_builder_view(const struct rows_builder *b, struct dataset *ret, size_t *ret_bytes);

/*
 * The seal-time order: put the n rows in a uniformly random order drawn
 * from rng (Fisher-Yates; the service passes its OpenSSL generator),
 * labels, groups and categorical cells with their rows.  Dense rows are
 * swapped in place (no extra memory); CSR rows are copied into new arrays
 * (the CSR arrays twice, for the time of the copy).  Done once when a
 * sealed dataset is loaded (dataset_load.h) and by `dpoptd solve`, so
 * that one-pass methods can read consecutive rows (algorithms/row_order.h;
 * docs/privacy-model.md §1, "Sequential one-pass order").
 */
enum err_code rows_builder_shuffle(struct rows_builder *b, struct rng *rng, struct err *e);

/* Free everything; accepts a zeroed or half-built builder. */
void rows_builder_clear(struct rows_builder *b);

#endif /* SERVICE_ROWS_H */
