/*
 * saddle.h - saddle-point objectives (objective kind OBJECTIVE_SADDLE):
 *
 *	min_{x in X} max_{y in Y} F(x, y),  F(x, y) = (1/n) sum_i f(x, y; z_i),
 *
 * f convex in x and concave in y for every record z.  The variable is the
 * concatenation u = (x, y) of two blocks, x = u[0 .. dim_x) and y =
 * u[dim_x .. dim_x + dim_y), each with its own set (struct constraint) and
 * its own geometry (the norm its methods measure it in).  The operator of
 * a record is
 *
 *	g(u; z) = (grad_x f(x, y; z), -grad_y f(x, y; z)),
 *
 * monotone on X x Y; a saddle objective gives f and g of one record in one
 * pass, and its constants per block from the declared public bounds only
 * (never from the rows).  The instances and their catalogue text are
 * struct objective_ops tables with kind = OBJECTIVE_SADDLE in the one
 * objective registry (objective.c); objective_init() builds them through
 * saddle_ops.init.  Objectives: bilinear (objectives/bilinear.c),
 * worst_group_logistic (objectives/worst_group.c), matrix_game and
 * quadratic_game (objectives/games.c).
 */
#ifndef ALGORITHMS_SADDLE_H
#define ALGORITHMS_SADDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "constraint.h"
#include "data.h"
#include "err.h"
#include "objective.h"

/*
 * The geometry of a block: the norm ||.|| its method measures steps in;
 * Lipschitz constants are also given in the dual norm ||.||_* (l2: l2;
 * l1: l_inf).  l1 is the natural geometry of the simplex and the l1 ball
 * (entropic mirror maps, mirror.h); the Euclidean methods use l2.
 */
enum geometry { GEOMETRY_L2 = 0, GEOMETRY_L1, GEOMETRY__COUNT };

/* "l2", "l1"; NULL if unknown.  And back: -1 if unknown. */
const char *geometry_name(enum geometry g);
int geometry_from_name(const char *name);

/* ||v||_* in the dual of geometry g: ||v||_2 for l2, ||v||_inf for l1. */
double geometry_dual_norm(enum geometry g, const double *v, size_t d);

/* One block of a saddle problem. */
struct saddle_block {
	struct constraint set;
	enum geometry geometry;
};

/*
 * Constants of one block b (x or y) of one record's f, over X x Y; every
 * one an upper bound from declared bounds, INFINITY when none exists.
 * "other" is the other block.
 */
struct saddle_block_constants {
	double lipschitz_l2;   /* ||grad_b f||_2 */
	double lipschitz_dual; /* ||grad_b f||_*, the dual norm of b's geometry */
	double smooth_own;     /* ||grad_b f(b, o) - grad_b f(b', o)||_2 / ||b - b'||_2 */
	double smooth_cross;   /* ||grad_b f(b, o) - grad_b f(b, o')||_2 / ||o - o'||_2 */
};

struct saddle_constants {
	struct saddle_block_constants x, y;
	/* Joint, in l2 on u = (x, y): ||g(u; z)||_2 <= lipschitz_l2 =
	 * sqrt(Lx^2 + Ly^2) (the DP sensitivity input: replacing a record
	 * moves g by at most 2 lipschitz_l2), and ||g(u) - g(u')||_2 <=
	 * smooth_l2 ||u - u'||_2 with smooth_l2 = max(own_x, own_y) +
	 * max(cross_x, cross_y) (the Jacobian is its block diagonal plus its
	 * block anti-diagonal; the norm of each is the largest of its
	 * blocks). */
	double lipschitz_l2;
	double smooth_l2;
	double value_bound; /* |f| <= this on X x Y */
	/* The largest third partial derivative |d_i d_j d_k f| over X x Y in
	 * the original coordinates (the spec's second-order constant L_2, in
	 * l1 / l_inf terms): 0 for the quadratic class, INFINITY when the
	 * objective derives none (saddle_constants() presets it). */
	double third;
	/* max - min of the population objective F = E f over X x Y, so a
	 * bound on any point's gap: 2 value_bound unless the objective knows
	 * better (worst_group_logistic: F is a mix of conditional risks). */
	double gap_range;
};

/*
 * The smoothness class of f (docs/algorithms/smd-maurey.md §3): it picks
 * the theorem whose parameter settings a method's defaults follow.
 * Quadratic: f is a polynomial of degree <= 2 in (x, y), so the gradient at
 * the average of vertex draws is the average of the gradients (L_2 = 0);
 * second-order: third derivatives bounded (L_2 finite); first-order: only
 * the gradient is Lipschitz.  0 = first-order, the weakest claim.  The
 * bias-reduced method (docs/algorithms/smd-bias-reduced.md, Lemma 4.3)
 * needs L_2: it takes the quadratic class (L_2 = 0) only, as no
 * objective declares a numeric L_2 yet.
 */
enum saddle_smoothness {
	SADDLE_FIRST_ORDER = 0,
	SADDLE_SECOND_ORDER,
	SADDLE_QUADRATIC,
};

struct saddle_ops {
	/*
	 * Fill o->dim_x, dim_y, dim, block_x, block_y (and anything else the
	 * objective reads) from the schema; o->p was checked against
	 * objective_ops.params already.  ERR_INVALID naming the field
	 * ("objective.name" for a schema that does not fit, "objective.<key>").
	 */
	enum err_code (*init)(struct objective *o, const struct data_schema *s, struct err *e);
	/*
	 * f(x, y; z_i); when g is not NULL also g[0 .. dim_x) += scale grad_x f
	 * and g[dim_x .. dim) += scale (-grad_y f).  x and y are u's blocks.
	 */
	double (*eval)(const struct objective *o, const struct dataset *ds, size_t i,
		       const double *x, const double *y, double scale, double *g);
	/* Per-block constants (the joint ones are added by
	 * saddle_constants()).  Called with sets of sets_x / sets_y only. */
	enum err_code (*constants)(const struct objective *o, const struct data_schema *s,
				   const struct saddle_block *bx, const struct saddle_block *by,
				   struct saddle_constants *ret, struct err *e);
	unsigned sets_x, sets_y; /* bit (1u << CONSTRAINT_*) per set kind its constants cover */
	enum saddle_smoothness smoothness; /* declared class; FIRST_ORDER unless set */
};

/*
 * Constants of o over bx x by (sets of dimension o->dim_x and o->dim_y)
 * from the declared bounds of s.  ERR_INVALID naming "constraints.x" or
 * "constraints.y" for a set the objective does not cover or that does not
 * validate; *ret written only on success.
 */
enum err_code saddle_constants(const struct objective *o, const struct data_schema *s,
			       const struct saddle_block *bx, const struct saddle_block *by,
			       struct saddle_constants *ret, struct err *e);

/* f(u; z_i), u = (x, y). */
double saddle_value(const struct objective *o, const struct dataset *ds, size_t i, const double *u);

/* g += scale * operator(u; z_i) (o->dim entries); returns f(u; z_i). */
double saddle_operator(const struct objective *o, const struct dataset *ds, size_t i,
		       const double *u, double scale, double *g);

/*
 * g += sum over the m records idx[0..m-1] (rows 0..m-1 when idx is NULL)
 * of clip_C(operator(u; z_i)), clip_C(v) = v min(1, C / ||v||_2); clip =
 * INFINITY is the plain sum.  scratch: o->dim doubles.  g must not alias
 * u, scratch or the data.
 */
void saddle_batch_operator(const struct objective *o, const struct dataset *ds, const size_t *idx,
			   size_t m, const double *u, double clip, double *scratch, double *g);

/* One record's operator: g += scale * operator(u; z_i). */
typedef void (*record_operator_fn)(const struct objective *o, const struct dataset *ds, size_t i,
				   const double *u, double scale, double *g);

/* The clipped batch sum above for any record operator op: the one place
 * the per-record clip that the sensitivity rests on is written (saddle and
 * VI methods both use it). */
void operator_batch_clipped(const struct objective *o, const struct dataset *ds, const size_t *idx,
			    size_t m, const double *u, double clip, record_operator_fn op,
			    double *scratch, double *g);

/* F(u) = (1/n) sum_i f(u; z_i) (public evaluation and tests only); NAN
 * when ds is empty. */
double saddle_mean_value(const struct objective *o, const struct dataset *ds, const double *u);

/* The largest l2 norm of the block k of a record (k = SIZE_MAX: the whole
 * row) under the declared bounds: min over block.l2, sqrt(size)
 * block.linf and the row's bounds_row_l2; and the largest |entry|.
 * ERR_INVALID naming "bounds.feature_l2" when nothing bounds it. */
enum err_code saddle_block_bounds(const struct data_schema *s, size_t k, double *ret_l2,
				  double *ret_linf, struct err *e);

/* <v, z_i[off .. off + len)> over a row's columns off .. off + len (dense
 * or CSR); v has len entries. */
double saddle_block_dot(const struct dataset *ds, size_t i, size_t off, size_t len,
			const double *v);

/* g += c z_i[off .. off + len) (g has len entries). */
void saddle_block_axpy(const struct dataset *ds, size_t i, size_t off, size_t len, double c,
		       double *g);

#endif /* ALGORITHMS_SADDLE_H */
