/*
 * objectives/bilinear_vi.c - "bilinear_vi": the variational inequality
 * form of the bilinear game (objectives/bilinear.c) on one set U, the
 * operator objective of docs/algorithms/saddle.md §9.  The variable u =
 * (x, y) is one block of dimension dim_x + dim_y over one set U (e.g. an
 * l2 ball; no product structure), and
 *
 *	F(u; a, b) = (gamma y + a, b - gamma x) = c(z) + J u,
 *
 * c(z) = (a, b) from the first two blocks of the schema (as bilinear: a =
 * blocks[0], b = blocks[1], unlabeled datasets) and J = gamma times the
 * skew matrix [[0, I], [-I, 0]] on the first min(dim_x, dim_y) coordinates
 * of each half (gamma = 'objective.coupling' >= 0).  This is bilinear's
 * operator, read as a VI over a set that need not be a product.
 *
 * Why this one: it reuses bilinear's records, schemas and kernels (a
 * dataset for one is a dataset for the other), J^T = -J makes it monotone
 * with <F(u) - F(v), u - v> = 0 for every record (monotone, not strongly),
 * and an affine skew operator has both gaps in closed form over any set
 * with an LMO (vi.h), so the gap tests need no inner solver.
 *
 * Constants over U, R = the set's l2 radius, r_a, r_b the blocks' declared
 * l2 bounds (saddle_block_bounds):
 *
 *	||F(u; z)||_2 <= ||J u||_2 + ||(a, b)||_2 <= gamma R + sqrt(r_a^2 + r_b^2)
 *	||F(u; z) - F(v; z)||_2 = ||J (u - v)||_2 <= gamma ||u - v||_2  (beta = gamma)
 *
 * (||J w||^2 = gamma^2 sum over the coupled coordinates of w_j^2 <= gamma^2
 * ||w||^2.)
 */
#include <math.h>
#include <stdint.h>

#include "saddle.h"
#include "vi.h"

extern const struct objective_ops objective_bilinear;

static enum err_code
bilinear_vi_init(struct objective *o, const struct data_schema *s, struct err *e)
{
	if (s->task != TASK_UNLABELED || s->n_blocks != 2)
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective 'bilinear_vi' ('objective.name') needs an "
				     "unlabeled dataset with exactly two blocks (a, b)");
	/* The same blocks as bilinear: its init checks and fills them. */
	return objective_bilinear.saddle->init(o, s, e);
}

static void
bilinear_vi_eval(const struct objective *o, const struct dataset *ds, size_t i, const double *u,
		 double scale, double *g)
{
	/* bilinear's operator (gamma y + a, b - gamma x) at u = (x, y). */
	(void)objective_bilinear.saddle->eval(o, ds, i, u, u + o->dim_x, scale, g);
}

static enum err_code
bilinear_vi_constants(const struct objective *o, const struct data_schema *s,
		      const struct constraint *u, struct vi_constants *ret, struct err *e)
{
	const double gamma = o->p.coupling;
	double ra, ra_inf, rb, rb_inf;
	enum err_code rc;

	rc = saddle_block_bounds(s, o->block_x, &ra, &ra_inf, e);
	if (rc == ERR_OK)
		rc = saddle_block_bounds(s, o->block_y, &rb, &rb_inf, e);
	if (rc != ERR_OK)
		return rc;
	ret->lipschitz_l2 = gamma * constraint_l2_radius(u, o->dim) + hypot(ra, rb);
	ret->smooth_l2 = gamma;
	return ERR_OK;
}

static const struct vi_ops bilinear_vi_ops = {
	.init = bilinear_vi_init,
	.eval = bilinear_vi_eval,
	.constants = bilinear_vi_constants,
	.sets = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		(1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX),
	.skew_affine = true,
};

const struct objective_ops objective_bilinear_vi = {
	.name = "bilinear_vi",
	.doc = "Operator (variational inequality on one set U, 'constraints.x' only): "
	       "F(u; a, b) = (gamma y + a, b - gamma x) for u = (x, y) stacked as one block "
	       "(docs/algorithms/saddle.md §9), records are pairs (a, b): the first two "
	       "blocks of the schema give a (dim of x) and b (dim of y).  Tasks: unlabeled.  "
	       "Params: coupling (gamma >= 0, default 0).  Monotone: F = c(z) + J u with J "
	       "skew, so <F(u) - F(v), u - v> = 0.  Constants from the blocks' declared "
	       "bounds r_a, r_b and the set's l2 radius R: ||F|| <= gamma R + sqrt(r_a^2 + "
	       "r_b^2), Lipschitz gamma.  Weak and strong gap in closed form (LMO of U).",
	.tasks = 1u << TASK_UNLABELED,
	.params = 1u << OBJ_P_COUPLING,
	.smooth = true,
	.kind = OBJECTIVE_OPERATOR,
	.vi = &bilinear_vi_ops,
};
