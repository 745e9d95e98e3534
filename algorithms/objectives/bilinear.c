/*
 * objectives/bilinear.c - "bilinear": the bilinear saddle objective of
 * docs/algorithms/saddle.md §3 with the public coupling M = gamma I:
 *
 *	f(x, y; z) = gamma <x, y> + <a(z), x> - <b(z), y>
 *
 * A record z is a pair of vectors (a, b) given by the first two blocks of
 * the schema (data.h, struct data_block): a = blocks[0] (dim_x = its
 * size), b = blocks[1] (dim_y = its size), on unlabeled datasets.
 * <x, y> runs over the first min(dim_x, dim_y) coordinates (M = gamma
 * times the rectangular identity).  gamma = 'objective.coupling' >= 0
 * (default 0: two decoupled linear problems, the DP-SCO lower-bound
 * geometry, with the saddle point on the boundary).
 *
 *	g(u; z) = (gamma y + a, -(gamma x - b)) = (gamma y + a, b - gamma x)
 *
 * Constants over X x Y, with r_a, r_b the declared l2 bounds of the blocks
 * (saddle_block_bounds), a_inf, b_inf their entry bounds and R_x, R_y the
 * sets' l2 radii:
 *
 *	||grad_x f||_2 <= gamma R_y + r_a,   ||grad_x f||_inf <= gamma R_y + a_inf
 *	||grad_y f||_2 <= gamma R_x + r_b,   ||grad_y f||_inf <= gamma R_x + b_inf
 *	own smoothness 0 (f is linear in each block), cross gamma,
 *	|f| <= gamma R_x R_y + r_a R_x + r_b R_y.
 *
 * (|y_j| <= ||y||_2 <= R_y bounds the l_inf part.)  For a general M these
 * are L = sqrt((||M|| R_y + r_a)^2 + (||M|| R_x + r_b)^2) and smoothness
 * ||M||: the same with ||M|| = gamma.
 */
#include <math.h>
#include <stdint.h>

#include "saddle.h"

static enum err_code
bilinear_init(struct objective *o, const struct data_schema *s, struct err *e)
{
	if (s->task != TASK_UNLABELED || s->n_blocks != 2)
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective 'bilinear' ('objective.name') needs an unlabeled "
				     "dataset with exactly two blocks (a, b)");
	for (size_t k = 0; k < 2; k++)
		if (s->blocks[k].size == 0 || s->blocks[k].offset > s->d ||
		    s->blocks[k].size > s->d - s->blocks[k].offset)
			return err_set_field(e, ERR_INVALID, "objective.name",
					     "the dataset's blocks do not fit its columns");
	o->block_x = 0;
	o->block_y = 1;
	o->offset_x = s->blocks[0].offset;
	o->offset_y = s->blocks[1].offset;
	o->dim_x = s->blocks[0].size;
	o->dim_y = s->blocks[1].size;
	o->dim = o->dim_x + o->dim_y;
	return ERR_OK;
}

static double
bilinear_eval(const struct objective *o, const struct dataset *ds, size_t i, const double *x,
	      const double *y, double scale, double *g)
{
	const size_t nx = o->dim_x, ny = o->dim_y, m = nx < ny ? nx : ny;
	const double gamma = o->p.coupling;
	const size_t oa = o->offset_x, ob = o->offset_y;
	double xy = 0.0;

	for (size_t j = 0; j < m; j++)
		xy += x[j] * y[j];
	if (g != NULL) {
		double *gx = g, *gy = g + nx;

		saddle_block_axpy(ds, i, oa, nx, scale, gx);
		saddle_block_axpy(ds, i, ob, ny, scale, gy);
		for (size_t j = 0; j < m; j++) {
			gx[j] += scale * gamma * y[j];
			gy[j] -= scale * gamma * x[j];
		}
	}
	return gamma * xy + saddle_block_dot(ds, i, oa, nx, x) - saddle_block_dot(ds, i, ob, ny, y);
}

static enum err_code
bilinear_constants(const struct objective *o, const struct data_schema *s,
		   const struct saddle_block *bx, const struct saddle_block *by,
		   struct saddle_constants *ret, struct err *e)
{
	const double gamma = o->p.coupling;
	double ra, ra_inf, rb, rb_inf, Rx, Ry;
	enum err_code rc;

	rc = saddle_block_bounds(s, o->block_x, &ra, &ra_inf, e);
	if (rc == ERR_OK)
		rc = saddle_block_bounds(s, o->block_y, &rb, &rb_inf, e);
	if (rc != ERR_OK)
		return rc;
	Rx = constraint_l2_radius(&bx->set, o->dim_x);
	Ry = constraint_l2_radius(&by->set, o->dim_y);
	ret->x.lipschitz_l2 = gamma * Ry + ra;
	ret->x.lipschitz_dual =
		bx->geometry == GEOMETRY_L1 ? gamma * Ry + ra_inf : ret->x.lipschitz_l2;
	ret->y.lipschitz_l2 = gamma * Rx + rb;
	ret->y.lipschitz_dual =
		by->geometry == GEOMETRY_L1 ? gamma * Rx + rb_inf : ret->y.lipschitz_l2;
	ret->x.smooth_own = ret->y.smooth_own = 0.0;
	ret->x.smooth_cross = ret->y.smooth_cross = gamma;
	ret->value_bound = gamma * Rx * Ry + ra * Rx + rb * Ry;
	return ERR_OK;
}

static const struct saddle_ops bilinear_ops = {
	.init = bilinear_init,
	.eval = bilinear_eval,
	.constants = bilinear_constants,
	.sets_x = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		  (1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX) |
		  (1u << CONSTRAINT_POLYTOPE),
	.sets_y = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		  (1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX) |
		  (1u << CONSTRAINT_POLYTOPE),
	.smoothness = SADDLE_QUADRATIC, /* f is bilinear plus linear: L_2 = 0 */
};

const struct objective_ops objective_bilinear = {
	.name = "bilinear",
	.doc = "Saddle (min over x, max over y): f(x, y; a, b) = gamma <x, y> + <a, x> - <b, y> "
	       "(docs/algorithms/saddle.md §3), records are pairs (a, b): the first "
	       "two blocks of the schema give a (dim of x) and b (dim of y).  Tasks: unlabeled.  "
	       "Params: coupling (gamma >= 0, default 0).  Operator (gamma y + a, b - gamma x).  "
	       "Constants from the blocks' declared bounds r_a, r_b and the sets' radii: "
	       "L_x = gamma R_y + r_a, L_y = gamma R_x + r_b, smoothness gamma (cross terms "
	       "only).  Gap in closed form over any set (the inner problems are linear).",
	.tasks = 1u << TASK_UNLABELED,
	.params = 1u << OBJ_P_COUPLING,
	.smooth = true,
	.kind = OBJECTIVE_SADDLE,
	.saddle = &bilinear_ops,
};
