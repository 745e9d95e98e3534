/*
 * saddle_gap.c - strong and weak gaps with certified brackets
 * (saddle_gap.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "saddle_gap.h"

/* One inner problem: min over block `blk` (0: x, 1: y) of psi(v) = the
 * mean over the R points and the records of f (blk 0) or -f (blk 1) with
 * the other block fixed at each point's.  grad psi is the operator's part
 * for the block in both cases (g = (grad_x f, -grad_y f)). */
struct inner {
	const struct objective *o;
	const struct dataset *ds;
	const double *us; /* R points */
	size_t R;
	int blk;
	size_t off, len; /* the block in u */
	double *u, *g;   /* scratch: dim each */
};

static double
psi(const struct inner *in, const double *v, double *grad)
{
	const size_t dim = in->o->dim;
	const double w = 1.0 / ((double)in->R * (double)in->ds->n);
	double sum = 0.0;

	if (grad != NULL)
		memset(in->g, 0, dim * sizeof(*in->g));
	for (size_t r = 0; r < in->R; r++) {
		memcpy(in->u, in->us + r * dim, dim * sizeof(*in->u));
		memcpy(in->u + in->off, v, in->len * sizeof(*v));
		for (size_t i = 0; i < in->ds->n; i++) {
			if (grad != NULL)
				sum += saddle_operator(in->o, in->ds, i, in->u, w, in->g);
			else
				sum += saddle_value(in->o, in->ds, i, in->u);
		}
	}
	if (grad != NULL) {
		memcpy(grad, in->g + in->off, in->len * sizeof(*grad));
		sum *= w;
	} else {
		sum /= (double)in->R * (double)in->ds->n;
	}
	return in->blk == 0 ? sum : -sum;
}

/* Bracket min_C psi; v, grad, vtx: len doubles each, scratch
 * constraint_project_scratch(c, len). */
static struct saddle_bracket
solve(const struct inner *in, const struct constraint *c, double beta,
      const struct saddle_gap_opts *opts, double *v, double *grad, double *vtx, double *scratch,
      unsigned long *iters)
{
	const size_t len = in->len;
	struct saddle_bracket b = { -INFINITY, INFINITY };

	memset(v, 0, len * sizeof(*v));
	constraint_project(c, v, len, scratch);
	for (unsigned long k = 0;; k++) {
		double val = psi(in, v, grad), lin, gv = 0.0;

		b.hi = fmin(b.hi, val);
		lin = constraint_lmo(c, grad, len, vtx);
		for (size_t j = 0; j < len; j++)
			gv += grad[j] * v[j];
		b.lo = fmax(b.lo, val + lin - gv);
		if (k == 0 || beta == 0.0)
			b.hi = fmin(b.hi, psi(in, vtx, NULL));
		if (b.hi - b.lo <= opts->tol || k + 1 >= opts->iters || !(beta > 0.0))
			break;
		for (size_t j = 0; j < len; j++)
			v[j] -= grad[j] / beta;
		constraint_project(c, v, len, scratch);
		(*iters)++;
	}
	/* A linear problem closes the bracket up to rounding. */
	if (b.lo > b.hi)
		b.lo = b.hi;
	return b;
}

/* The gap of the R points as one (averaged) problem. */
static void
gap_of(const struct objective *o, const struct dataset *ds, const struct saddle_block *bx,
       const struct saddle_block *by, const struct saddle_constants *sc, const double *us, size_t R,
       const struct saddle_gap_opts *opts, double *buf, struct saddle_gap *ret)
{
	const size_t dim = o->dim;
	struct inner in = { .o = o, .ds = ds, .us = us, .R = R, .u = buf, .g = buf + dim };
	double *v = buf + 2 * dim, *grad = buf + 3 * dim, *vtx = buf + 4 * dim;
	double *scratch = buf + 5 * dim;
	struct saddle_bracket bx_b, by_b;

	in.blk = 0;
	in.off = 0;
	in.len = o->dim_x;
	bx_b = solve(&in, &bx->set, sc->x.smooth_own, opts, v, grad, vtx, scratch, &ret->iters);
	in.blk = 1;
	in.off = o->dim_x;
	in.len = o->dim_y;
	by_b = solve(&in, &by->set, sc->y.smooth_own, opts, v, grad, vtx, scratch, &ret->iters);
	ret->min_x = bx_b;
	ret->max_y.lo = -by_b.hi;
	ret->max_y.hi = -by_b.lo;
	ret->gap.lo = ret->max_y.lo - ret->min_x.hi;
	ret->gap.hi = ret->max_y.hi - ret->min_x.lo;
}

enum err_code
saddle_gap_eval(const struct objective *o, const struct data_schema *s, const struct dataset *ds,
		const struct saddle_block *bx, const struct saddle_block *by, const double *us,
		size_t R, const struct saddle_gap_opts *opts, struct saddle_gap *ret_strong,
		struct saddle_gap *ret_weak, struct err *e)
{
	struct saddle_constants sc;
	struct saddle_gap strong, weak;
	double *buf;
	enum err_code rc;

	if (R == 0 || ds->n == 0)
		return err_set(e, ERR_INVALID, "no points or no evaluation records");
	if (!(opts->tol >= 0.0) || opts->iters == 0)
		return err_set(e, ERR_INVALID, "bad gap options");
	rc = saddle_constants(o, s, bx, by, &sc, e);
	if (rc == ERR_OK)
		rc = objective_check_dataset(o, ds, e);
	if (rc != ERR_OK)
		return rc;
	/* u, g, v, grad, vtx (dim each), then the larger block's projection
	 * scratch (d for a ball or simplex, O(d^2) for a polytope). */
	{
		size_t sx = constraint_project_scratch(&bx->set, o->dim_x),
		       sy = constraint_project_scratch(&by->set, o->dim_y);

		buf = calloc(5 * o->dim + (sx > sy ? sx : sy) + 1, sizeof(*buf));
	}
	if (buf == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the gap evaluation");
	memset(&strong, 0, sizeof(strong));
	memset(&weak, 0, sizeof(weak));
	if (ret_strong != NULL) {
		for (size_t r = 0; r < R; r++) {
			struct saddle_gap one;

			memset(&one, 0, sizeof(one));
			gap_of(o, ds, bx, by, &sc, us + r * o->dim, 1, opts, buf, &one);
			strong.max_y.lo += one.max_y.lo / (double)R;
			strong.max_y.hi += one.max_y.hi / (double)R;
			strong.min_x.lo += one.min_x.lo / (double)R;
			strong.min_x.hi += one.min_x.hi / (double)R;
			strong.gap.lo += one.gap.lo / (double)R;
			strong.gap.hi += one.gap.hi / (double)R;
			strong.iters += one.iters;
		}
		*ret_strong = strong;
	}
	if (ret_weak != NULL) {
		gap_of(o, ds, bx, by, &sc, us, R, opts, buf, &weak);
		*ret_weak = weak;
	}
	free(buf);
	return ERR_OK;
}
