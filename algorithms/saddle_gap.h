/*
 * saddle_gap.h - the gap of a saddle point on a dataset view (public
 * evaluation data only: the values are releases of the data they are
 * computed on).
 *
 * For F(x, y) = (1/n) sum_i f(x, y; z_i) over X x Y and a point (x_r,
 * y_r), the gap is max_{y in Y} F(x_r, y) - min_{x in X} F(x, y_r) >= 0.
 * Given R points (e.g. the outputs of R runs):
 *
 *	strong gap  = (1/R) sum_r [max_y F(x_r, y) - min_x F(x, y_r)]
 *	weak gap    = max_y (1/R) sum_r F(x_r, y) - min_x (1/R) sum_r F(x, y_r)
 *
 * (docs/algorithms/saddle.md §6; the paper's eq. (2) and (3): the max/min
 * inside or outside the average; weak <= strong, equal for R = 1).  Each inner problem is
 * concave in y / convex in x; it is solved by projected gradient steps
 * 1 / beta (beta the block's own smoothness from the declared bounds) and
 * bracketed by the Frank-Wolfe certificate: for convex psi and any v in C,
 *
 *	psi(v) + min_{s in C} <grad psi(v), s - v>  <=  min_C psi  <=  psi(v),
 *
 * and psi(s) at the LMO's vertex is one more upper bound.  When the inner
 * problem is linear (beta = 0: bilinear in both blocks, worst_group in y)
 * the first LMO closes the bracket: the closed form, over any set of
 * constraint.h (balls: R ||c||, simplex: s max_j c_j, ...).
 */
#ifndef ALGORITHMS_SADDLE_GAP_H
#define ALGORITHMS_SADDLE_GAP_H

#include <stddef.h>

#include "data.h"
#include "err.h"
#include "objective.h"
#include "saddle.h"

struct saddle_gap_opts {
	double tol;          /* stop an inner problem when its bracket is this narrow */
	unsigned long iters; /* at most this many gradient steps per inner problem */
};

/* An interval that contains the true value. */
struct saddle_bracket {
	double lo, hi;
};

struct saddle_gap {
	struct saddle_bracket max_y; /* max_y of the (averaged) F(x, .) */
	struct saddle_bracket min_x; /* min_x of the (averaged) F(., y) */
	struct saddle_bracket gap;   /* [max_y.lo - min_x.hi, max_y.hi - min_x.lo] */
	unsigned long iters;         /* gradient steps spent, both inner problems, all points */
};

/*
 * Strong and weak gap of the R points us (R * o->dim doubles, each u =
 * (x, y)) over bx x by on ds (the public evaluation view; the shape
 * o was built for).  Either of ret_strong, ret_weak may be NULL.
 * Allocates O(dim) scratch.  ERR_INVALID for unusable blocks or R = 0 or
 * an empty ds; ERR_NOMEM.
 */
enum err_code saddle_gap_eval(const struct objective *o, const struct data_schema *s,
			      const struct dataset *ds, const struct saddle_block *bx,
			      const struct saddle_block *by, const double *us, size_t R,
			      const struct saddle_gap_opts *opts, struct saddle_gap *ret_strong,
			      struct saddle_gap *ret_weak, struct err *e);

#endif /* ALGORITHMS_SADDLE_GAP_H */
