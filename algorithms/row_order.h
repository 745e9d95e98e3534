/*
 * row_order.h - the visiting order of a one-pass run that reads memory in
 * long sequential runs, and the batch gradient over a range of that order
 * split across the injected executor (alg.h, struct alg_exec).
 *
 * The rows a run sees are already in an order drawn uniformly at random
 * when the service loaded the sealed dataset (service/rows.h,
 * rows_builder_shuffle: the seal-time order).  On top of it every run
 * draws, with its own generator, a cheap randomisation that keeps long
 * runs of consecutive rows:
 *
 *	1. a rotation r uniform in [0, n): row q of the rotated sequence is
 *	   stored row (q + r) mod n;
 *	2. the rotated sequence cut into blocks of L consecutive rows (the
 *	   last one shorter when L does not divide n), visited in a uniformly
 *	   random order of the blocks;
 *	3. inside each block a rotation of its own, uniform in [0, length):
 *	   the block is read from that offset to its end, then from its start.
 *
 * Position p of the visiting order (0 <= p < n) is one stored row; the
 * positions visit every row exactly once, so consecutive slices of the
 * order are disjoint batches, and each slice is a few contiguous ranges of
 * stored rows (at most one break per block boundary, inner wrap and wrap
 * at n).  The order depends on n, L and the generator only, never on the
 * data: docs/privacy-model.md §1 ("Sequential one-pass order") gives the
 * privacy argument and why the optimisation quality equals that of a
 * uniformly random order.
 */
#ifndef ALGORITHMS_ROW_ORDER_H
#define ALGORITHMS_ROW_ORDER_H

#include <stddef.h>

#include "alg.h"
#include "err.h"
#include "objective.h"
#include "rng.h"

struct row_order {
	size_t n;      /* rows */
	size_t len;    /* L: rows per block (the last block may be shorter) */
	size_t blocks; /* ceil(n / L) */
	size_t rot;    /* r */
	size_t *perm;  /* owned, blocks: perm[i] = the block visited i-th */
	size_t *inner; /* owned, blocks: inner[k] = block k's own rotation */
	size_t *start; /* owned, blocks + 1: position where the i-th visited block starts */
};

/* The block length for n rows of a dataset like ds: about 1 MiB of row
 * data (dense: 8 d bytes a row; CSR: a fixed 4096 rows), at most
 * ceil(n / 64) so that a run has at least 64 blocks to permute when n
 * allows, at least 1.  Public: from n, d and the layout only. */
size_t row_order_block_len(size_t n, size_t d, enum data_layout layout);

/* Draw the order of n >= 1 rows with blocks of len >= 1: rotation, block
 * permutation (Fisher-Yates), inner rotations, in that order from rng.
 * ERR_NOMEM leaves o for row_order_free. */
enum err_code row_order_draw(struct row_order *o, struct rng *rng, size_t n, size_t len,
			     struct err *e);

/* The longest run of consecutive stored rows *ret_first, *ret_first + 1,
 * ... visited at positions pos, pos + 1, ...: its length, between 1 and
 * max (pos < n, max >= 1). */
size_t row_order_run(const struct row_order *o, size_t pos, size_t max, size_t *ret_first);

/* The stored row visited at position pos (tests, the testing hook). */
size_t row_order_row(const struct row_order *o, size_t pos);

/* Move stored row `row` to position 0 (the first batch): its block is
 * visited first and its inner rotation starts at it.  The audits' hook
 * (testing_hook.h); the rest of the order keeps its distribution given
 * the canary's place. */
void row_order_put_first(struct row_order *o, size_t row);

void row_order_free(struct row_order *o);

/* A view of the rows first .. first + count - 1 of ds (borrowed pointers
 * moved to the first row; CSR keeps its absolute offsets). */
void dataset_rows_view(const struct dataset *ds, size_t first, size_t count, struct dataset *ret);

/*
 * The batch gradient over the positions p0 .. p0 + m - 1 of the order:
 * g += the sum of objective_batch_grad over the stored ranges they cover.
 * The m positions are cut into parts = row_order_parts(m, dim) slices by
 * a rule of m and dim only (public, never the data nor the thread
 * count); each slice is summed into its own zeroed row of scratch (parts
 * * dim doubles, may be NULL when parts is 1) and the slices are added to
 * g in slice order, so the result is the same bits whatever executor runs
 * the slices, serial (exec NULL) or on any number of threads.
 */
size_t row_order_parts(size_t m, size_t dim);
void row_order_batch_grad(const struct row_order *o, const struct objective *obj,
			  const struct dataset *ds, size_t p0, size_t m, const double *w,
			  double clip, double *g, size_t dim, double *scratch,
			  const struct alg_exec *exec);

#endif /* ALGORITHMS_ROW_ORDER_H */
