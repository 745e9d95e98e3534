/*
 * objectives/games.c - "matrix_game" and "quadratic_game": stochastic
 * games whose payoff comes from the records (docs/algorithms/games.md;
 * Gonzalez, Guzman & Paquette 2024, Table 1 "bilinear" and "quadratic").
 *
 * matrix_game, on an unlabeled dataset with blocks in one of two forms:
 *
 *	three blocks (A, b, c), dense payoff: A(z) is the first block read
 *	row-major as a dim_x x dim_y matrix, dim_x = |b|, dim_y = |c|,
 *	|A| = dim_x dim_y;
 *		f(x, y; z) = x^T A(z) y + <b(z), x> + <c(z), y>
 *	two blocks (u, v), rank-one payoff A(z) = u v^T (O(d) per record):
 *		f(x, y; z) = <u, x> <v, y>
 *
 * quadratic_game, blocks (A, p, r): dim_x = |p|, dim_y = |r|,
 *		f(x, y; z) = x^T A(z) y + (1/2) <p, x>^2 - (1/2) <r, y>^2
 * convex in x and concave in y for every record (the quadratic terms are
 * the PSD rank-one forms p p^T and r r^T).
 *
 * Operators (g = (grad_x f, -grad_y f), saddle.h):
 *	dense:    (A y + b, -(A^T x + c))
 *	rank one: (<v, y> u, -<u, x> v)
 *	quadratic (A y + <p, x> p, -(A^T x - <r, y> r))
 *
 * Constants over X x Y from the blocks' declared bounds (saddle_block_
 * bounds: l2 bound r_k and entry bound k_inf of block k) and the sets'
 * l2 radii R and l1 radii R1.  ||A||_2 <= ||A||_F <= r_A and |(A y)_i| <=
 * A_inf ||y||_1:
 *	dense:    L_x = r_A R_y + r_b (dual: A_inf R1_y + b_inf), L_y alike,
 *	          own 0, cross r_A, |f| <= r_A R_x R_y + r_b R_x + r_c R_y;
 *	rank one: with U = min(r_u R_x, u_inf R1_x) >= |<u, x>| and V alike,
 *	          L_x = r_u V (dual u_inf V), L_y = r_v U (dual v_inf U),
 *	          own 0, cross r_u r_v, |f| <= U V;
 *	quadratic with P = min(r_p R_x, p_inf R1_x) >= |<p, x>|, Q alike:
 *	          L_x = r_A R_y + r_p P (dual A_inf R1_y + p_inf P), L_y alike,
 *	          own_x r_p^2, own_y r_r^2, cross r_A,
 *	          |f| <= r_A R_x R_y + P^2 / 2 + Q^2 / 2.
 * Every one is a polynomial of degree 2: the smoothness class is
 * quadratic (saddle.h), third derivatives 0.
 */
#include <math.h>
#include <stdint.h>

#include "saddle.h"

/* Layout from the schema: the (x, y) vectors' blocks and the payoff's
 * first column; ERR_INVALID naming objective.name when it does not fit. */
static enum err_code
game_shape(struct objective *o, const struct data_schema *s, bool rank_one_ok, struct err *e)
{
	const char *name = o->ops->name;
	size_t k;

	if (s->task != TASK_UNLABELED || s->n_blocks < 2 || s->n_blocks > 3 ||
	    (s->n_blocks == 2 && !rank_one_ok))
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective '%s' ('objective.name') needs an unlabeled dataset "
				     "with blocks %s",
				     name, rank_one_ok ? "(A, b, c) or (u, v)" : "(A, p, r)");
	for (k = 0; k < s->n_blocks; k++)
		if (s->blocks[k].size == 0 || s->blocks[k].offset > s->d ||
		    s->blocks[k].size > s->d - s->blocks[k].offset)
			return err_set_field(e, ERR_INVALID, "objective.name",
					     "the dataset's blocks do not fit its columns");
	k = s->n_blocks == 2 ? 0 : 1; /* the x vector's block */
	o->block_x = k;
	o->block_y = k + 1;
	o->offset_x = s->blocks[k].offset;
	o->offset_y = s->blocks[k + 1].offset;
	o->dim_x = s->blocks[k].size;
	o->dim_y = s->blocks[k + 1].size;
	o->dim = o->dim_x + o->dim_y;
	o->offset_a = s->blocks[0].offset;
	if (k == 1 && s->blocks[0].size / o->dim_y != o->dim_x)
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective '%s': the payoff block '%s' has %zu columns, not "
				     "%zu x %zu (the sizes of blocks '%s' and '%s')",
				     name, s->blocks[0].name, s->blocks[0].size, o->dim_x, o->dim_y,
				     s->blocks[1].name, s->blocks[2].name);
	if (k == 1 && s->blocks[0].size % o->dim_y != 0)
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective '%s': the payoff block's size is not a multiple of "
				     "dim_y",
				     name);
	return ERR_OK;
}

static enum err_code
matrix_init(struct objective *o, const struct data_schema *s, struct err *e)
{
	return game_shape(o, s, true, e);
}

static enum err_code
quadratic_init(struct objective *o, const struct data_schema *s, struct err *e)
{
	return game_shape(o, s, false, e);
}

/*
 * x^T A y for the dense payoff A of record i; when gx is not NULL also
 * gx += cx A y and gy += cy A^T x.
 */
static double
payoff(const struct objective *o, const struct dataset *ds, size_t i, const double *x,
       const double *y, double cx, double *gx, double cy, double *gy)
{
	const size_t nx = o->dim_x, ny = o->dim_y, off = o->offset_a;
	double val = 0.0;

	if (ds->layout == DATA_CSR) {
		for (size_t p = ds->row_ptr[i]; p < ds->row_ptr[i + 1]; p++) {
			size_t k = ds->col[p], r, j;

			if (k < off || k - off >= nx * ny)
				continue;
			r = (k - off) / ny;
			j = (k - off) % ny;
			val += x[r] * ds->val[p] * y[j];
			if (gx != NULL) {
				gx[r] += cx * ds->val[p] * y[j];
				gy[j] += cy * ds->val[p] * x[r];
			}
		}
		return val;
	}
	for (size_t r = 0; r < nx; r++) {
		const double *a = ds->x + i * ds->d + off + r * ny;
		double s = 0.0;

		for (size_t j = 0; j < ny; j++)
			s += a[j] * y[j];
		val += x[r] * s;
		if (gx != NULL) {
			gx[r] += cx * s;
			for (size_t j = 0; j < ny; j++)
				gy[j] += cy * x[r] * a[j];
		}
	}
	return val;
}

static double
matrix_eval(const struct objective *o, const struct dataset *ds, size_t i, const double *x,
	    const double *y, double scale, double *g)
{
	const size_t nx = o->dim_x, ny = o->dim_y;
	const double bx = saddle_block_dot(ds, i, o->offset_x, nx, x),
		     cy = saddle_block_dot(ds, i, o->offset_y, ny, y);
	double *gx = g, *gy = g == NULL ? NULL : g + nx;

	if (o->block_x == 0) { /* rank one: <u, x> <v, y> */
		if (g != NULL) {
			saddle_block_axpy(ds, i, o->offset_x, nx, scale * cy, gx);
			saddle_block_axpy(ds, i, o->offset_y, ny, -scale * bx, gy);
		}
		return bx * cy;
	}
	if (g != NULL) {
		saddle_block_axpy(ds, i, o->offset_x, nx, scale, gx);
		saddle_block_axpy(ds, i, o->offset_y, ny, -scale, gy);
	}
	return payoff(o, ds, i, x, y, scale, gx, -scale, gy) + bx + cy;
}

static double
quadratic_eval(const struct objective *o, const struct dataset *ds, size_t i, const double *x,
	       const double *y, double scale, double *g)
{
	const size_t nx = o->dim_x, ny = o->dim_y;
	const double px = saddle_block_dot(ds, i, o->offset_x, nx, x),
		     ry = saddle_block_dot(ds, i, o->offset_y, ny, y);
	double *gx = g, *gy = g == NULL ? NULL : g + nx;

	if (g != NULL) {
		/* grad_x = A y + <p, x> p; -grad_y = -(A^T x) + <r, y> r */
		saddle_block_axpy(ds, i, o->offset_x, nx, scale * px, gx);
		saddle_block_axpy(ds, i, o->offset_y, ny, scale * ry, gy);
	}
	return payoff(o, ds, i, x, y, scale, gx, -scale, gy) + 0.5 * px * px - 0.5 * ry * ry;
}

/* Bounds of block k: l2 and entry. */
struct bnd {
	double l2, inf;
};

static enum err_code
bounds_of(const struct data_schema *s, size_t k, struct bnd *ret, struct err *e)
{
	return saddle_block_bounds(s, k, &ret->l2, &ret->inf, e);
}

/* Radii of a block's set: l2 and l1. */
struct radii {
	double l2, l1;
};

static struct radii
radii_of(const struct saddle_block *b, size_t dim)
{
	return (struct radii){ constraint_l2_radius(&b->set, dim),
			       constraint_l1_radius(&b->set, dim) };
}

/* |<w, z_k>| over the set: min(r R, inf R1). */
static double
dot_bound(struct bnd w, struct radii r)
{
	return fmin(w.l2 * r.l2, w.inf * r.l1);
}

static enum err_code
game_constants(const struct objective *o, const struct data_schema *s,
	       const struct saddle_block *bx, const struct saddle_block *by, bool quadratic,
	       struct saddle_constants *ret, struct err *e)
{
	const struct radii rx = radii_of(bx, o->dim_x), ry = radii_of(by, o->dim_y);
	struct bnd a = { 0.0, 0.0 }, kx, ky;
	enum err_code rc;

	rc = bounds_of(s, o->block_x, &kx, e);
	if (rc == ERR_OK)
		rc = bounds_of(s, o->block_y, &ky, e);
	if (rc == ERR_OK && o->block_x == 1)
		rc = bounds_of(s, 0, &a, e);
	if (rc != ERR_OK)
		return rc;
	if (o->block_x == 0) { /* rank one u v^T */
		const double U = dot_bound(kx, rx), V = dot_bound(ky, ry);

		ret->x.lipschitz_l2 = kx.l2 * V;
		ret->x.lipschitz_dual = kx.inf * V;
		ret->y.lipschitz_l2 = ky.l2 * U;
		ret->y.lipschitz_dual = ky.inf * U;
		ret->x.smooth_own = ret->y.smooth_own = 0.0;
		ret->x.smooth_cross = ret->y.smooth_cross = kx.l2 * ky.l2;
		ret->value_bound = U * V;
	} else if (!quadratic) { /* A, b, c */
		ret->x.lipschitz_l2 = a.l2 * ry.l2 + kx.l2;
		ret->x.lipschitz_dual = a.inf * ry.l1 + kx.inf;
		ret->y.lipschitz_l2 = a.l2 * rx.l2 + ky.l2;
		ret->y.lipschitz_dual = a.inf * rx.l1 + ky.inf;
		ret->x.smooth_own = ret->y.smooth_own = 0.0;
		ret->x.smooth_cross = ret->y.smooth_cross = a.l2;
		ret->value_bound = a.l2 * rx.l2 * ry.l2 + kx.l2 * rx.l2 + ky.l2 * ry.l2;
	} else { /* A, p, r */
		const double P = dot_bound(kx, rx), Q = dot_bound(ky, ry);

		ret->x.lipschitz_l2 = a.l2 * ry.l2 + kx.l2 * P;
		ret->x.lipschitz_dual = a.inf * ry.l1 + kx.inf * P;
		ret->y.lipschitz_l2 = a.l2 * rx.l2 + ky.l2 * Q;
		ret->y.lipschitz_dual = a.inf * rx.l1 + ky.inf * Q;
		ret->x.smooth_own = kx.l2 * kx.l2;
		ret->y.smooth_own = ky.l2 * ky.l2;
		ret->x.smooth_cross = ret->y.smooth_cross = a.l2;
		ret->value_bound = a.l2 * rx.l2 * ry.l2 + 0.5 * P * P + 0.5 * Q * Q;
	}
	if (bx->geometry != GEOMETRY_L1)
		ret->x.lipschitz_dual = ret->x.lipschitz_l2;
	if (by->geometry != GEOMETRY_L1)
		ret->y.lipschitz_dual = ret->y.lipschitz_l2;
	return ERR_OK;
}

static enum err_code
matrix_constants(const struct objective *o, const struct data_schema *s,
		 const struct saddle_block *bx, const struct saddle_block *by,
		 struct saddle_constants *ret, struct err *e)
{
	return game_constants(o, s, bx, by, false, ret, e);
}

static enum err_code
quadratic_constants(const struct objective *o, const struct data_schema *s,
		    const struct saddle_block *bx, const struct saddle_block *by,
		    struct saddle_constants *ret, struct err *e)
{
	return game_constants(o, s, bx, by, true, ret, e);
}

#define GAME_SETS                                                                                  \
	((1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_LP_BALL) |    \
	 (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX))

static const struct saddle_ops matrix_ops = {
	.init = matrix_init,
	.eval = matrix_eval,
	.constants = matrix_constants,
	.sets_x = GAME_SETS | (1u << CONSTRAINT_POLYTOPE),
	.sets_y = GAME_SETS | (1u << CONSTRAINT_POLYTOPE),
	.smoothness = SADDLE_QUADRATIC,
};

static const struct saddle_ops quadratic_ops = {
	.init = quadratic_init,
	.eval = quadratic_eval,
	.constants = quadratic_constants,
	.sets_x = GAME_SETS | (1u << CONSTRAINT_POLYTOPE),
	.sets_y = GAME_SETS | (1u << CONSTRAINT_POLYTOPE),
	.smoothness = SADDLE_QUADRATIC,
};

const struct objective_ops objective_matrix_game = {
	.name = "matrix_game",
	.doc = "Saddle (min over x, max over y): a stochastic matrix game whose payoff comes "
	       "from the records (docs/algorithms/games.md).  Unlabeled datasets with three "
	       "blocks (A, b, c): f = x^T A y + <b, x> + <c, y>, A the first block read "
	       "row-major as |b| x |c|; or two blocks (u, v): the rank-one payoff f = <u, x> "
	       "<v, y>.  Constants from the blocks' declared bounds: L_x = r_A R_y + r_b (l1 "
	       "geometry: A_inf R1_y + b_inf), L_y alike, smoothness r_A (cross only); "
	       "quadratic class (K = 1 for saddle.smd_maurey).  Gap in closed form.",
	.tasks = 1u << TASK_UNLABELED,
	.smooth = true,
	.kind = OBJECTIVE_SADDLE,
	.saddle = &matrix_ops,
};

const struct objective_ops objective_quadratic_game = {
	.name = "quadratic_game",
	.doc = "Saddle (min over x, max over y): f = x^T A y + <p, x>^2 / 2 - <r, y>^2 / 2 "
	       "(docs/algorithms/games.md), convex in x and concave in y per record.  Unlabeled "
	       "datasets with three blocks (A, p, r), A the first block read row-major as |p| x "
	       "|r|.  Constants from the blocks' declared bounds: L_x = r_A R_y + r_p P with P "
	       ">= |<p, x>|, L_y alike, own smoothness r_p^2 and r_r^2, cross r_A; quadratic "
	       "class.  Gap by the certified Frank-Wolfe bracket.",
	.tasks = 1u << TASK_UNLABELED,
	.smooth = true,
	.kind = OBJECTIVE_SADDLE,
	.saddle = &quadratic_ops,
};
