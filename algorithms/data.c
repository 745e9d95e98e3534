/*
 * data.c - constants derived from a dataset's declared public bounds.
 *
 * Only the declared bounds are read here, never the rows: a bound computed
 * from private data would itself be a release (docs/privacy-model.md §1).
 * A declared bound must be a finite positive number; NAN means "not
 * declared".
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

/* Declared and usable: finite and > 0.  *ret_declared tells whether the
 * bound is declared (not NAN). */
static enum err_code
check_bound(double v, const char *field, bool *ret_declared, struct err *e)
{
	if (isnan(v)) {
		*ret_declared = false;
		return ERR_OK;
	}
	if (!isfinite(v) || v <= 0.0)
		return err_set_field(e, ERR_INVALID, field, "'%s' must be a finite positive number",
				     field);
	*ret_declared = true;
	return ERR_OK;
}

bool
schema_feature_range(const struct data_schema *s, double *ret_lo, double *ret_hi)
{
	if (!(isfinite(s->feature_lo) && isfinite(s->feature_hi) && s->feature_lo < s->feature_hi))
		return false;
	if (ret_lo != NULL)
		*ret_lo = s->feature_lo;
	if (ret_hi != NULL)
		*ret_hi = s->feature_hi;
	return true;
}

enum err_code
bounds_row_l2(const struct bounds *b, size_t d, double *ret, struct err *e)
{
	bool have_l2 = false, have_linf = false;
	double r = INFINITY;
	enum err_code rc;

	rc = check_bound(b->feature_l2, "bounds.feature_l2", &have_l2, e);
	if (rc != ERR_OK)
		return rc;
	rc = check_bound(b->feature_linf, "bounds.feature_linf", &have_linf, e);
	if (rc != ERR_OK)
		return rc;
	if (!have_l2 && !have_linf)
		return err_set_field(
			e, ERR_INVALID, "bounds.feature_l2",
			"'bounds.feature_l2' (or 'bounds.feature_linf') must be declared");

	if (have_l2)
		r = b->feature_l2;
	if (have_linf)
		r = fmin(r, sqrt((double)d) * b->feature_linf);
	if (!isfinite(r) || r <= 0.0)
		return err_set_field(e, ERR_INVALID, "bounds.feature_l2",
				     "the feature bounds give no finite positive row norm");
	*ret = r;
	return ERR_OK;
}

enum err_code
dataset_subset(const struct dataset *src, const size_t *idx, size_t m, struct dataset_copy *ret,
	       struct err *e)
{
	struct dataset *d = &ret->ds;
	size_t nnz = 0, nc = src->n_categorical;

	memset(ret, 0, sizeof(*ret));
	*d = *src;
	d->n = m;
	if (src->layout == DATA_CSR) {
		for (size_t i = 0; i < m; i++)
			nnz += src->row_ptr[idx[i] + 1] - src->row_ptr[idx[i]];
		ret->row_ptr = malloc((m + 1) * sizeof(*ret->row_ptr));
		ret->col = malloc((nnz > 0 ? nnz : 1) * sizeof(*ret->col));
		ret->val = malloc((nnz > 0 ? nnz : 1) * sizeof(*ret->val));
		if (ret->row_ptr == NULL || ret->col == NULL || ret->val == NULL)
			return err_set(e, ERR_NOMEM, "cannot allocate a copy of the rows");
		ret->row_ptr[0] = 0;
		for (size_t i = 0; i < m; i++) {
			size_t a = src->row_ptr[idx[i]], k = src->row_ptr[idx[i] + 1] - a;

			memcpy(ret->col + ret->row_ptr[i], src->col + a, k * sizeof(*ret->col));
			memcpy(ret->val + ret->row_ptr[i], src->val + a, k * sizeof(*ret->val));
			ret->row_ptr[i + 1] = ret->row_ptr[i] + k;
		}
		d->row_ptr = ret->row_ptr;
		d->col = ret->col;
		d->val = ret->val;
	} else {
		ret->x = malloc(m * src->d * sizeof(*ret->x) + 1);
		if (ret->x == NULL)
			return err_set(e, ERR_NOMEM, "cannot allocate a copy of the rows");
		for (size_t i = 0; i < m; i++)
			memcpy(ret->x + i * src->d, src->x + idx[i] * src->d,
			       src->d * sizeof(*ret->x));
		d->x = ret->x;
	}
	if (src->y != NULL) {
		if ((ret->y = malloc(m * sizeof(*ret->y))) == NULL)
			return err_set(e, ERR_NOMEM, "cannot allocate a copy of the rows");
		for (size_t i = 0; i < m; i++)
			ret->y[i] = src->y[idx[i]];
		d->y = ret->y;
	}
	if (src->group != NULL) {
		if ((ret->group = malloc(m * sizeof(*ret->group))) == NULL)
			return err_set(e, ERR_NOMEM, "cannot allocate a copy of the rows");
		for (size_t i = 0; i < m; i++)
			ret->group[i] = src->group[idx[i]];
		d->group = ret->group;
	}
	if (src->cat != NULL && nc > 0) {
		if ((ret->cat = malloc(m * nc * sizeof(*ret->cat))) == NULL)
			return err_set(e, ERR_NOMEM, "cannot allocate a copy of the rows");
		for (size_t i = 0; i < m; i++)
			memcpy(ret->cat + i * nc, src->cat + idx[i] * nc, nc * sizeof(*ret->cat));
		d->cat = ret->cat;
	}
	return ERR_OK;
}

void
dataset_copy_free(struct dataset_copy *c)
{
	free(c->x);
	free(c->val);
	free(c->y);
	free(c->row_ptr);
	free(c->col);
	free(c->group);
	free(c->cat);
	memset(c, 0, sizeof(*c));
}
