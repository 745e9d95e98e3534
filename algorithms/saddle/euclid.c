/*
 * saddle/euclid.c - the parts saddle.nseg and saddle.nispp share
 * (saddle/euclid.h).
 */
#include <math.h>
#include <string.h>

#include "privacy/calibrate.h"
#include "saddle/euclid.h"
#include "vi.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

#define EUCLID_CAL_MAX_ORDER 64.0

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

bool
saddle_euclid_is_vi(const struct run_spec *spec)
{
	return spec->objective.ops != NULL && spec->objective.ops->kind == OBJECTIVE_OPERATOR;
}

double
saddle_euclid_block_diameter(const struct constraint *c, size_t d)
{
	if (c->kind == CONSTRAINT_BOX)
		return (c->hi - c->lo) * sqrt((double)d);
	if (c->kind == CONSTRAINT_SIMPLEX)
		return d >= 2 ? c->radius * sqrt(2.0) : 0.0;
	return 2.0 * constraint_l2_radius(c, d);
}

enum err_code
saddle_euclid_constants(const struct run_spec *spec, const char *method, struct saddle_euclid *ret,
			struct err *e)
{
	const struct objective *obj = &spec->objective;
	double lg = sqrt((double)spec->dim * log(1.0 / spec->delta));
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	ret->vi = saddle_euclid_is_vi(spec);
	ret->bx = (struct saddle_block){ spec->x, spec->geometry_x };
	ret->by = (struct saddle_block){ spec->y, spec->geometry_y };
	if (ret->vi) {
		struct vi_constants vc;

		rc = vi_constants(obj, &spec->schema, &spec->x, &vc, e);
		if (rc != ERR_OK)
			return rc;
		ret->bound = vc.lipschitz_l2;
		ret->smooth = vc.smooth_l2;
		ret->diameter = saddle_euclid_block_diameter(&spec->x, obj->dim);
	} else {
		struct saddle_constants sc;

		rc = saddle_constants(obj, &spec->schema, &ret->bx, &ret->by, &sc, e);
		if (rc != ERR_OK)
			return rc;
		ret->bound = sc.lipschitz_l2;
		ret->smooth = sc.smooth_l2;
		ret->diameter = hypot(saddle_euclid_block_diameter(&spec->x, obj->dim_x),
				      saddle_euclid_block_diameter(&spec->y, obj->dim_y));
	}
	if (!is_finite_pos(ret->bound))
		return err_set(e, ERR_NUMERIC,
			       "the operator bound is not a finite positive number");
	if (!(isfinite(ret->smooth) && ret->smooth >= 0.0))
		return err_set(e, ERR_NUMERIC, "the operator's Lipschitz constant is not finite");
	if (!is_finite_pos(ret->diameter))
		return err_set(e, ERR_NUMERIC,
			       "the set's diameter is not a finite positive number");
	/* The paper's Remark 1: below this n no rate beats the trivial M D. */
	if (!(lg / spec->epsilon < (double)spec->n))
		return err_set_field(e, ERR_TOO_SMALL, "privacy.epsilon",
				     "privacy_too_small_for_n: sqrt(p ln(1/delta)) / epsilon = "
				     "%.4g is not below n = %zu, where %s promises "
				     "nothing better than a data-independent point",
				     lg / spec->epsilon, spec->n, method);
	return ERR_OK;
}

enum err_code
saddle_euclid_set(const struct run_spec *spec, const struct saddle_euclid *c,
		  struct constraint_product *ret, struct err *e)
{
	const struct objective *o = &spec->objective;

	memset(ret, 0, sizeof(*ret));
	ret->dim = spec->dim;
	if (c->vi) {
		ret->nparts = 1;
		ret->part[0] = (struct constraint_part){ c->bx.set, 0, spec->dim, "constraints.x" };
	} else {
		ret->nparts = 2;
		ret->part[0] = (struct constraint_part){ c->bx.set, 0, o->dim_x, "constraints.x" };
		ret->part[1] =
			(struct constraint_part){ c->by.set, o->dim_x, o->dim_y, "constraints.y" };
	}
	return constraint_product_validate(ret, "constraints", e);
}

struct euclid_wor {
	uint64_t n, b, releases;
};

static enum err_code
euclid_wor_family(double z, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	const struct euclid_wor *c = ctx;
	struct dp_event sample = { .type = DP_EVENT_SAMPLED_WOR, .n = c->n, .batch = c->b };
	struct dp_event self = { .type = DP_EVENT_SELF_COMPOSED, .count = c->releases };
	enum err_code rc;

	dp_event_gaussian(ret, DP_REPLACE_ONE, z);
	rc = c->b == c->n ? ERR_OK : dp_event_wrap(ret, &sample, e);
	if (rc == ERR_OK)
		rc = dp_event_wrap(ret, &self, e);
	return rc;
}

enum err_code
saddle_euclid_wor_event(double z, uint64_t n, uint64_t b, uint64_t releases,
			struct dp_event_tree *ret, struct err *e)
{
	struct euclid_wor c = { n, b, releases };

	return euclid_wor_family(z, &c, ret, e);
}

enum err_code
saddle_euclid_wor_calibrate(const struct run_spec *spec, uint64_t b, uint64_t releases,
			    double *ret_z, const char **ret_accountant, struct err *e)
{
	double eps_cal = nextafter(spec->epsilon, 0.0), delta_cal = nextafter(spec->delta, 0.0);
	struct euclid_wor c = { spec->n, b, releases };
	struct rdp_grid grid;
	struct accountant_report report;
	double top = fmax(EUCLID_CAL_MAX_ORDER, 4.0 * log(1.0 / delta_cal) / eps_cal);
	unsigned k = 0;
	enum err_code rc;

#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	rdp_grid_default(&grid);
	for (unsigned i = 0; i < grid.n; i++)
		if (grid.order[i] <= top)
			grid.order[k++] = grid.order[i];
	grid.n = k;
	rc = calibrate(euclid_wor_family, &c, spec->mode, eps_cal, delta_cal, 1e-2, 1e7, &grid,
		       ret_z, &report, e);
	if (rc == ERR_OK)
		*ret_accountant = report.accountant;
	return rc;
}
