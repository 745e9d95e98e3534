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

#include <stddef.h>

#include "err.h"

enum task {
	TASK_BINARY,     /* labels in {-1, +1} */
	TASK_REGRESSION, /* real labels, |y| <= bounds.label */
	TASK__COUNT
};

struct bounds {
	double feature_linf; /* max |x_j| per coordinate, NAN if undeclared */
	double feature_l2;   /* max ||x||_2 per row, NAN if undeclared */
	double label;        /* max |y|, NAN if undeclared */
};

/* Dense, row-major, rows already clipped to the declared bounds. */
struct dataset {
	size_t n;        /* rows (public once sealed) */
	size_t d;        /* features per row */
	const double *x; /* borrowed: n * d, row i at x + i * d */
	const double *y; /* borrowed: n labels */
};

/* The largest l2 norm a row can have under the declared bounds:
 * min(feature_l2, sqrt(d) * feature_linf) over what is declared.
 * ERR_INVALID naming "bounds.feature_l2" when neither is declared. */
enum err_code bounds_row_l2(const struct bounds *b, size_t d, double *ret, struct err *e);

#endif /* ALGORITHMS_DATA_H */
