/*
 * data.h - the read-only views of private data and the public facts about
 * it that algorithms see.
 *
 * A struct dataset is borrowed by a run: the worker loaded it, clipped to
 * the declared bounds at ingestion, and keeps it alive until the run ends.
 * struct bounds holds the owner's declared public bounds; a bound that was
 * not declared is NAN.  Constants (Lipschitz, smoothness) are derived from
 * these bounds only, never from the rows.
 */
#ifndef ALGORITHMS_DATA_H
#define ALGORITHMS_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum task {
	TASK_BINARY,     /* labels in {-1, +1} */
	TASK_REGRESSION, /* real labels in [bounds.label_lo, bounds.label_hi] */
	TASK_MULTICLASS, /* class indices 0 .. n_classes - 1 */
	TASK_UNLABELED,  /* no label column (saddle-point records, synthetic data) */
	TASK__COUNT
};

enum data_layout {
	DATA_DENSE, /* row-major n * d doubles */
	DATA_CSR,   /* compressed sparse rows */
};

/* Limits of the public schema, so schemas are plain values. */
#define DATA_MAX_BLOCKS      16
#define DATA_MAX_CATEGORICAL 64
#define DATA_MAX_NAME        64
#define DATA_MAX_CLASSES     1024
#define DATA_MAX_GROUPS      1024

/*
 * Declared public bounds; NAN = not declared.  Rows are clipped to them at
 * ingestion: every row has ||x||_inf <= feature_linf and ||x||_2 <=
 * feature_l2 (each block to its own bounds, data_block), and a regression
 * label lies in [label_lo, label_hi].  label = max(|label_lo|, |label_hi|)
 * is what constants use.
 */
struct bounds {
	double feature_linf; /* max |x_j| per coordinate */
	double feature_l2;   /* max ||x||_2 per row */
	double label;        /* max |y| (regression) */
	double label_lo;     /* regression label range, NAN if only label declared */
	double label_hi;
};

/* A named range of feature columns with its own bounds (multi-block
 * records, e.g. the pair (a, b) of a saddle-point payoff). */
struct data_block {
	char name[DATA_MAX_NAME];
	size_t offset; /* first feature column */
	size_t size;   /* columns */
	double l2;     /* max ||x_block||_2, NAN if undeclared */
	double linf;   /* max |x_j| in the block, NAN if undeclared */
};

/* A categorical attribute: cells are indices 0 .. size - 1 (uploads may
 * use the declared labels; the service maps them). */
struct data_categorical {
	char name[DATA_MAX_NAME];
	size_t size; /* domain size, >= 2 */
};

/* The public schema of a dataset, declared by its owner.  Column order of
 * a CSV row: d features, then the categorical attributes, then the group
 * (if n_groups > 0), then the label (unless TASK_UNLABELED). */
struct data_schema {
	size_t d; /* numeric feature columns (LIBSVM: the dimension) */
	enum task task;
	size_t n_classes; /* TASK_MULTICLASS: K >= 2; else 0 */
	size_t n_groups;  /* G >= 2 with a group column; 0 without */
	size_t n_blocks;  /* 0: one implicit block of all d features */
	struct data_block blocks[DATA_MAX_BLOCKS];
	size_t n_categorical;
	struct data_categorical categorical[DATA_MAX_CATEGORICAL];
	struct bounds bounds;
	/*
	 * The public range of every feature cell ("bounds.feature_range",
	 * service/schema.h): each cell is clipped into [feature_lo, feature_hi]
	 * at ingestion.  Declared only when both are finite and lo < hi
	 * (schema_feature_range()), so a zeroed schema declares none.  A range
	 * implies |x_j| <= max(|lo|, |hi|), which the schema also holds as
	 * bounds.feature_linf (service/schema.c sets it).  Kept out of struct
	 * bounds so that its positional initialisers stay valid.
	 */
	double feature_lo, feature_hi;
};

/* True when s declares a feature range; then *ret_lo < *ret_hi, both
 * finite (either pointer may be NULL). */
bool schema_feature_range(const struct data_schema *s, double *ret_lo, double *ret_hi);

/*
 * A read-only view of a sealed dataset, rows already clipped to the
 * declared bounds.  Dense: x holds n * d doubles, row i at x + i * d.  CSR:
 * row i has the entries row_ptr[i] .. row_ptr[i + 1] - 1 of col (strictly
 * increasing, < d) and val (non-zero).  Every pointer is borrowed.
 */
struct dataset {
	size_t n; /* rows (public once sealed) */
	size_t d; /* features per row */
	enum data_layout layout;
	const double *x;       /* DATA_DENSE: n * d */
	const size_t *row_ptr; /* DATA_CSR: n + 1 offsets */
	const uint32_t *col;   /* DATA_CSR: row_ptr[n] column indices */
	const double *val;     /* DATA_CSR: row_ptr[n] values */
	const double *y;       /* n labels (class index as a double); NULL if unlabeled */
	const uint32_t *group; /* n group ids < n_groups; NULL without a group column */
	const uint32_t *cat;   /* n * n_categorical indices, row-major; NULL without */
	size_t n_groups;
	size_t n_classes;
	size_t n_categorical;
};

/* The largest l2 norm a row can have under the declared bounds:
 * min(feature_l2, sqrt(d) * feature_linf) over what is declared.
 * ERR_INVALID naming "bounds.feature_l2" when neither is declared. */
enum err_code bounds_row_l2(const struct bounds *b, size_t d, double *ret, struct err *e);

/*
 * An owned copy of some rows of a dataset, in the order of idx: what a
 * method that splits its dataset (select.random_stopping's training and
 * validation parts) runs on.  ds is the view; every other pointer is owned
 * and released by dataset_copy_free (which accepts a zeroed or half-built
 * copy).
 */
struct dataset_copy {
	struct dataset ds;
	double *x, *val, *y;
	size_t *row_ptr;
	uint32_t *col, *group, *cat;
};

/* *ret <- the rows idx[0 .. m-1] of src (m >= 1, each index < src->n);
 * ERR_NOMEM leaves a half-built copy for dataset_copy_free. */
enum err_code dataset_subset(const struct dataset *src, const size_t *idx, size_t m,
			     struct dataset_copy *ret, struct err *e);
void dataset_copy_free(struct dataset_copy *c);

#endif /* ALGORITHMS_DATA_H */
