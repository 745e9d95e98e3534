/*
 * saddle.c - what every saddle objective shares (saddle.h): geometries,
 * block bounds, the joint constants, the per-record operator and its
 * clipped batch sum.
 *
 * Joint constants.  With per-block bounds ||grad_x f|| <= L_x and
 * ||grad_y f|| <= L_y the operator g = (grad_x f, -grad_y f) has
 * ||g||_2 <= sqrt(L_x^2 + L_y^2) (the sign flip is an isometry;
 * docs/algorithms/saddle.md §2 and §7: max(L_x, L_y) would under-state it
 * by up to sqrt 2).  Its Jacobian is [[A, B], [-C, -D]] with A, D the own
 * blocks and B, C the cross blocks; it is the block diagonal diag(A, -D)
 * plus the anti-diagonal [[0, B], [-C, 0]], whose l2 norms are max(||A||,
 * ||D||) and max(||B||, ||C||): their sum bounds the operator's
 * smoothness.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "saddle.h"
#include "util.h"

static const char *const geometry_names[GEOMETRY__COUNT] = {
	[GEOMETRY_L2] = "l2",
	[GEOMETRY_L1] = "l1",
};

const char *
geometry_name(enum geometry g)
{
	return (unsigned)g < GEOMETRY__COUNT ? geometry_names[g] : NULL;
}

int
geometry_from_name(const char *name)
{
	if (name == NULL)
		return -1;
	for (int g = 0; g < GEOMETRY__COUNT; g++)
		if (strcmp(geometry_names[g], name) == 0)
			return g;
	return -1;
}

double
geometry_dual_norm(enum geometry g, const double *v, size_t d)
{
	double s = 0.0;

	if (g == GEOMETRY_L1) {
		for (size_t j = 0; j < d; j++)
			s = fmax(s, fabs(v[j]));
		return s;
	}
	for (size_t j = 0; j < d; j++)
		s += v[j] * v[j];
	return sqrt(s);
}

/* Declared and usable: finite and > 0. */
static bool
declared(double v)
{
	return isfinite(v) && v > 0.0;
}

/* <v, z_i[off .. off + len)>; v has len entries. */
double
saddle_block_dot(const struct dataset *ds, size_t i, size_t off, size_t len, const double *v)
{
	double s = 0.0;

	if (ds->layout == DATA_CSR) {
		for (size_t p = ds->row_ptr[i]; p < ds->row_ptr[i + 1]; p++)
			if (ds->col[p] >= off && ds->col[p] < off + len)
				s += ds->val[p] * v[ds->col[p] - off];
		return s;
	}
	for (size_t j = 0; j < len; j++)
		s += ds->x[i * ds->d + off + j] * v[j];
	return s;
}

/* g += c z_i[off .. off + len). */
void
saddle_block_axpy(const struct dataset *ds, size_t i, size_t off, size_t len, double c, double *g)
{
	if (ds->layout == DATA_CSR) {
		for (size_t p = ds->row_ptr[i]; p < ds->row_ptr[i + 1]; p++)
			if (ds->col[p] >= off && ds->col[p] < off + len)
				g[ds->col[p] - off] += c * ds->val[p];
		return;
	}
	for (size_t j = 0; j < len; j++)
		g[j] += c * ds->x[i * ds->d + off + j];
}

enum err_code
saddle_block_bounds(const struct data_schema *s, size_t k, double *ret_l2, double *ret_linf,
		    struct err *e)
{
	double l2 = INFINITY, linf = INFINITY, row;
	size_t size = s->d;
	enum err_code rc;

	rc = bounds_row_l2(&s->bounds, s->d, &row, e);
	if (rc != ERR_OK)
		return rc;
	l2 = row;
	if (declared(s->bounds.feature_linf))
		linf = s->bounds.feature_linf;
	if (k != SIZE_MAX) {
		const struct data_block *b;

		if (k >= s->n_blocks || k >= DATA_MAX_BLOCKS)
			return err_set(e, ERR_INTERNAL, "no schema block %zu", k);
		b = &s->blocks[k];
		size = b->size;
		if (declared(b->l2))
			l2 = fmin(l2, b->l2);
		if (declared(b->linf)) {
			linf = fmin(linf, b->linf);
			l2 = fmin(l2, sqrt((double)size) * b->linf);
		}
		if (declared(s->bounds.feature_linf))
			l2 = fmin(l2, sqrt((double)size) * s->bounds.feature_linf);
	}
	linf = fmin(linf, l2);
	if (!declared(l2))
		return err_set_field(e, ERR_INVALID, "bounds.feature_l2",
				     "the declared bounds give no finite positive block norm");
	*ret_l2 = l2;
	*ret_linf = linf;
	return ERR_OK;
}

static enum err_code
check_block(const struct saddle_block *b, size_t dim, unsigned sets, const char *field,
	    struct err *e)
{
	enum err_code rc;

	if ((unsigned)b->geometry >= GEOMETRY__COUNT)
		return err_set_field(e, ERR_INVALID, field, "'%s' has an unknown geometry", field);
	rc = constraint_validate(&b->set, dim, field, e);
	if (rc != ERR_OK)
		return rc;
	if (!(sets & (1u << b->set.kind)))
		return err_set_field(e, ERR_INVALID, field,
				     "'%s': this objective does not take a %s here", field,
				     constraint_kind_name(b->set.kind));
	if (!isfinite(constraint_l2_radius(&b->set, dim)))
		return err_set_field(e, ERR_INVALID, field, "'%s' must be a bounded set", field);
	return ERR_OK;
}

enum err_code
saddle_constants(const struct objective *o, const struct data_schema *s,
		 const struct saddle_block *bx, const struct saddle_block *by,
		 struct saddle_constants *ret, struct err *e)
{
	const struct saddle_ops *so;
	struct saddle_constants k;
	enum err_code rc;

	if (o->ops == NULL || o->ops->kind != OBJECTIVE_SADDLE || o->ops->saddle == NULL)
		return err_set_field(e, ERR_INVALID, "objective", "not a saddle objective");
	so = o->ops->saddle;
	rc = check_block(bx, o->dim_x, so->sets_x, "constraints.x", e);
	if (rc == ERR_OK)
		rc = check_block(by, o->dim_y, so->sets_y, "constraints.y", e);
	if (rc != ERR_OK)
		return rc;
	memset(&k, 0, sizeof(k));
	k.third = so->smoothness == SADDLE_QUADRATIC ? 0.0 : INFINITY;
	rc = so->constants(o, s, bx, by, &k, e);
	if (rc != ERR_OK)
		return rc;
	if (!(k.gap_range > 0.0))
		k.gap_range = 2.0 * k.value_bound;
	k.lipschitz_l2 = hypot(k.x.lipschitz_l2, k.y.lipschitz_l2);
	k.smooth_l2 =
		fmax(k.x.smooth_own, k.y.smooth_own) + fmax(k.x.smooth_cross, k.y.smooth_cross);
	if (!isfinite(k.lipschitz_l2) || !isfinite(k.x.lipschitz_dual) ||
	    !isfinite(k.y.lipschitz_dual) || isnan(k.smooth_l2) || isnan(k.value_bound))
		return err_set(e, ERR_NUMERIC, "the constants of objective '%s' are not finite",
			       o->ops->name);
	*ret = k;
	return ERR_OK;
}

double
saddle_value(const struct objective *o, const struct dataset *ds, size_t i, const double *u)
{
	return o->ops->saddle->eval(o, ds, i, u, u + o->dim_x, 0.0, NULL);
}

double
saddle_operator(const struct objective *o, const struct dataset *ds, size_t i, const double *u,
		double scale, double *g)
{
	return o->ops->saddle->eval(o, ds, i, u, u + o->dim_x, scale, g);
}

void
operator_batch_clipped(const struct objective *o, const struct dataset *ds, const size_t *idx,
		       size_t m, const double *u, double clip, record_operator_fn op,
		       double *scratch, double *g)
{
	const size_t dim = o->dim;
	const bool clipped = isfinite(clip);

	for (size_t t = 0; t < m; t++) {
		size_t i = idx != NULL ? idx[t] : t;
		double nn = 0.0, c = 1.0;

		if (!clipped) {
			op(o, ds, i, u, 1.0, g);
			continue;
		}
		memset(scratch, 0, dim * sizeof(*scratch));
		op(o, ds, i, u, 1.0, scratch);
		for (size_t j = 0; j < dim; j++)
			nn += scratch[j] * scratch[j];
		nn = sqrt(nn);
		if (nn > clip)
			c = clip / nn;
		for (size_t j = 0; j < dim; j++)
			g[j] += c * scratch[j];
	}
}

static void
saddle_record_operator(const struct objective *o, const struct dataset *ds, size_t i,
		       const double *u, double scale, double *g)
{
	(void)saddle_operator(o, ds, i, u, scale, g);
}

void
saddle_batch_operator(const struct objective *o, const struct dataset *ds, const size_t *idx,
		      size_t m, const double *u, double clip, double *scratch, double *g)
{
	operator_batch_clipped(o, ds, idx, m, u, clip, saddle_record_operator, scratch, g);
}

double
saddle_mean_value(const struct objective *o, const struct dataset *ds, const double *u)
{
	double s = 0.0;

	if (ds->n == 0)
		return NAN;
	for (size_t i = 0; i < ds->n; i++)
		s += saddle_value(o, ds, i, u);
	return s / (double)ds->n;
}
