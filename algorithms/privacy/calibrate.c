/*
 * calibrate.c - noise calibration by bisection on the charging accountant
 * (docs/privacy-model.md §5: bisection to the smallest noise within 1e-3
 * relative whose epsilon(delta) meets the target, then a re-check with the
 * charging accountant, refused if it misses; Opacus once overshot its
 * target, opacus#346, hence the re-check).
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "privacy/calibrate.h"

struct cal {
	calibrate_event_fn make_event;
	void *ctx;
	enum accounting_mode mode;
	double delta;
	const struct rdp_grid *grid;
};

static enum err_code
cost(const struct cal *c, double noise, struct accountant_report *ret, struct err *e)
{
	struct dp_event_tree t;
	enum err_code rc;

	if ((rc = c->make_event(noise, c->ctx, &t, e)) != ERR_OK)
		return rc;
	return accountant_epsilon(&t, c->mode, c->delta, c->grid, true, ret, e);
}

enum err_code
calibrate(calibrate_event_fn make_event, void *ctx, enum accounting_mode mode,
	  double target_epsilon, double delta, double lower, double upper,
	  const struct rdp_grid *grid, double *ret_noise, struct accountant_report *ret_report,
	  struct err *e)
{
	struct cal c = { make_event, ctx, mode, delta, grid };
	struct accountant_report r_lo, r_hi, check;
	double lo = lower, hi = upper;
	enum err_code rc;

	if (!isfinite(target_epsilon) || !(target_epsilon > 0.0))
		return err_set_field(e, ERR_INVALID, "privacy.epsilon",
				     "'privacy.epsilon' must be finite and positive");
	if (!(delta > 0.0 && delta < 1.0))
		return err_set_field(e, ERR_INVALID, "privacy.delta",
				     "'privacy.delta' must be in (0, 1)");
	if (make_event == NULL || !isfinite(lower) || !isfinite(upper) || !(lower > 0.0) ||
	    !(upper > lower))
		return err_set(e, ERR_INTERNAL, "calibration needs 0 < lower < upper");

	/* The most private end must meet the target... */
	if ((rc = cost(&c, hi, &r_hi, e)) != ERR_OK)
		return rc;
	if (!(r_hi.epsilon <= target_epsilon)) {
		err_set_field(e, ERR_INVALID, "privacy.epsilon",
			      "'privacy.epsilon' %.6g cannot be met at this delta with noise up to "
			      "%.6g",
			      target_epsilon, upper);
		err_detail(e, "epsilon at the largest noise is %.17g", r_hi.epsilon);
		return ERR_INVALID;
	}
	/* ... and epsilon must not grow with the noise (checked at the ends). */
	if ((rc = cost(&c, lo, &r_lo, e)) != ERR_OK)
		return rc;
	if (r_lo.epsilon < r_hi.epsilon) {
		err_set(e, ERR_NUMERIC, "the privacy cost grows with the noise");
		err_detail(e, "epsilon %.17g at noise %.17g, %.17g at %.17g", r_lo.epsilon, lo,
			   r_hi.epsilon, hi);
		return ERR_NUMERIC;
	}
	if (r_lo.epsilon <= target_epsilon) {
		hi = lo; /* the smallest noise allowed already meets the target */
	} else {
		/* Invariant: eps(lo) > target >= eps(hi).  Bisect in log(noise). */
		while (hi > lo * (1.0 + CALIBRATE_REL_TOL)) {
			struct accountant_report r;
			double mid = sqrt(lo) * sqrt(hi);

			if (!(mid > lo && mid < hi))
				break;
			if ((rc = cost(&c, mid, &r, e)) != ERR_OK)
				return rc;
			if (r.epsilon <= target_epsilon)
				hi = mid;
			else
				lo = mid;
		}
	}

	/* Re-compute the charge at the returned noise. */
	if ((rc = cost(&c, hi, &check, e)) != ERR_OK)
		return rc;
	if (!(check.epsilon <= target_epsilon)) {
		err_set(e, ERR_NUMERIC, "the calibrated noise misses the epsilon target");
		err_detail(e, "epsilon %.17g > target %.17g at noise %.17g", check.epsilon,
			   target_epsilon, hi);
		return ERR_NUMERIC;
	}
	*ret_noise = hi;
	*ret_report = check;
	return ERR_OK;
}

struct draws {
	enum dp_event_type leaf;
	double unit;
	uint64_t count;
	enum accounting_mode mode;
	double delta;
};

enum err_code
draws_event(enum dp_event_type leaf, double unit, uint64_t count, double temp,
	    enum accounting_mode mode, double delta, struct dp_event_tree *ret, struct err *e)
{
	struct dp_event self = { .type = DP_EVENT_SELF_COMPOSED, .count = count };
	const double e0 = unit / temp, k = (double)count;
	struct accountant_report r;
	double adv;
	enum err_code rc;

	if (leaf == DP_EVENT_BOUNDED_RANGE)
		dp_event_bounded_range(ret, DP_REPLACE_ONE, e0);
	else if (leaf == DP_EVENT_PURE)
		dp_event_pure(ret, DP_REPLACE_ONE, e0);
	else
		return err_set(e, ERR_INTERNAL, "draws: a leaf must be bounded_range or pure");
	rc = dp_event_wrap(ret, &self, e);
	if (rc != ERR_OK || mode != ACCOUNTING_BASIC)
		return rc;
	/* Both leaves are eps_0-DP (bounded range implies it). */
	adv = sqrt(2.0 * k * log(1.0 / delta)) * e0 + k * e0 * expm1(e0);
	if (!(isfinite(adv) && adv > 0.0 && delta > 0.0 && delta < 1.0))
		return ERR_OK;
	rc = accountant_epsilon(ret, ACCOUNTING_BASIC, delta, NULL, true, &r, e);
	if (rc != ERR_OK)
		return rc;
	if (adv < r.epsilon)
		dp_event_approx(ret, DP_REPLACE_ONE, adv, delta);
	return ERR_OK;
}

static enum err_code
draws_family(double temp, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	const struct draws *d = ctx;

	return draws_event(d->leaf, d->unit, d->count, temp, d->mode, d->delta, ret, e);
}

enum err_code
calibrate_draws(enum dp_event_type leaf, double unit, uint64_t count, enum accounting_mode mode,
		double target_epsilon, double delta, double *ret_temp,
		struct accountant_report *ret_report, struct err *e)
{
	struct draws d = { leaf, unit, count, mode, nextafter(delta, 0.0) };
	struct rdp_grid grid;
	double basic = unit * (double)count / target_epsilon;

	if (!isfinite(basic) || !(basic > 0.0))
		return err_set(e, ERR_NUMERIC,
			       "the draws' privacy unit is not finite and positive");
	rdp_grid_default(&grid);
	return calibrate(draws_family, &d, mode, nextafter(target_epsilon, 0.0),
			 nextafter(delta, 0.0), basic * 1e-6, basic * 64.0, &grid, ret_temp,
			 ret_report, e);
}

enum err_code
draws_step_size(enum dp_event_type leaf, double unit, uint64_t count, enum accounting_mode mode,
		double target_epsilon, double delta, double tau_auto, double given, double *ret_tau,
		struct accountant_report *ret_report, struct err *e)
{
	double temp = 0.0;
	enum err_code rc;

	rc = calibrate_draws(leaf, unit, count, mode, target_epsilon, delta, &temp, ret_report, e);
	if (rc != ERR_OK)
		return rc;
	if (given > 1.0 / temp)
		return err_set_field(e, ERR_INVALID, "params.step_size",
				     "'params.step_size' %.6g exceeds the privacy cap %.6g for "
				     "(epsilon, delta) at the run's schedule (runs:estimate shows "
				     "it)",
				     given, 1.0 / temp);
	*ret_tau = given != 0.0 ? given : fmin(tau_auto, 1.0 / temp);
	return ERR_OK;
}
