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
