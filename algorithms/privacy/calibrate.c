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
#include <string.h>

#include "privacy/calibrate.h"

struct cal {
	calibrate_event_fn make_event;
	void *ctx;
	enum accounting_mode mode;
	double delta;
	const struct rdp_grid *grid;
	bool pld_steered; /* a search answer came from the PLD alone */
};

static enum err_code
cost(struct cal *c, double noise, const struct accountant_options *o, struct accountant_report *ret,
     struct err *e)
{
	struct dp_event_tree t;
	enum err_code rc;

	if ((rc = c->make_event(noise, c->ctx, &t, e)) != ERR_OK)
		return rc;
	rc = accountant_epsilon_with(&t, c->mode, c->delta, c->grid, true, o, ret, e);
	if (rc == ERR_OK && o->pld_decides && strcmp(ret->accountant, "pld") == 0)
		c->pld_steered = true;
	return rc;
}

/*
 * Shrink [*lo, *hi], eps(lo) > target >= eps(hi) (the invariant), under o
 * until hi <= lo (1 + CALIBRATE_REL_TOL): the same answer bisection gives
 * (the smallest noise to that tolerance, hi always meeting the target)
 * with fewer accountant calls.  In x = log(noise), f = log(eps / target)
 * is decreasing and, between the accountant's kinks, close to linear, so
 * each probe is the secant point of the two latest probes (at first the
 * ends; eps_lo, eps_hi are their figures if known, else NAN: they only
 * place probes), kept a quarter of the tolerance inside the bracket so
 * that a probe next to the root closes it from that side.  A secant
 * point outside the bracket, or a probe (from the third on) that did not
 * halve it, gives a plain bisection next: at most about twice
 * bisection's count, and far fewer on
 * smooth stretches (bench/bench_pld prints the accountant calls;
 * tests/unit/test_accountant.c, test_calibrate_calls, bounds them).
 */
static enum err_code
bisect(struct cal *c, const struct accountant_options *o, double target, double eps_lo,
       double eps_hi, double *lo, double *hi, struct err *e)
{
	const double tol = log1p(CALIBRATE_REL_TOL);
	double xl = log(*lo), xh = log(*hi);
	/* the two latest probes: (x1, f1) older, (x2, f2) newer */
	double x1 = xl, f1 = log(eps_lo / target), x2 = xh, f2 = log(eps_hi / target);
	double w_before = INFINITY; /* the width before the last probe (from the third on) */
	int n = 0;

	while (*hi > *lo * (1.0 + CALIBRATE_REL_TOL)) {
		struct accountant_report r;
		double w = xh - xl, x = NAN, mid, fx;
		enum err_code rc;

		if (isfinite(f1) && isfinite(f2) && f1 != f2 && !(n >= 2 && w > 0.5 * w_before))
			x = x2 - f2 * (x2 - x1) / (f2 - f1);
		if (isfinite(x) && x > xl && x < xh)
			x = fmin(fmax(x, xl + 0.25 * tol), xh - 0.25 * tol);
		else
			x = 0.5 * (xl + xh);
		if (n >= 2)
			w_before = w;
		mid = exp(x);
		if (!(mid > *lo && mid < *hi))
			mid = sqrt(*lo) * sqrt(*hi);
		if (!(mid > *lo && mid < *hi))
			break;
		x = log(mid);
		if ((rc = cost(c, mid, o, &r, e)) != ERR_OK)
			return rc;
		n++;
		fx = log(r.epsilon / target); /* -inf at eps 0: bisect next */
		if (r.epsilon <= target) {
			*hi = mid;
			xh = x;
		} else {
			*lo = mid;
			xl = x;
		}
		x1 = x2;
		f1 = f2;
		x2 = x;
		f2 = fx;
	}
	return ERR_OK;
}

/*
 * The fine phase of a basic ledger whose charging accountant is the PLD
 * (calibrate.h): from hi, the coarse phase's answer, step down (2 %, then
 * doubling) until the charging accountant misses the target, then bisect
 * on it.  hi itself may miss (the coarse grid is not nested in the fine
 * one in every composition): then step up by 2 % (doubling) until it
 * meets, at most to upper.
 */
static enum err_code
refine(struct cal *c, const struct accountant_options *fine, double target, double lower,
       double upper, double *io_hi, struct err *e)
{
	struct accountant_report r;
	double hi = *io_hi, lo = hi, f = 0.02, eps_lo = NAN, eps_hi;
	bool missed = false;
	enum err_code rc;

	if ((rc = cost(c, hi, fine, &r, e)) != ERR_OK)
		return rc;
	while (!(r.epsilon <= target)) {
		missed = true;
		lo = hi;
		eps_lo = r.epsilon;
		hi = fmin(upper, hi * (1.0 + f));
		f *= 2.0;
		if ((rc = cost(c, hi, fine, &r, e)) != ERR_OK)
			return rc;
		if (!(r.epsilon <= target) && hi >= upper)
			return ERR_OK; /* the caller's re-check refuses */
	}
	eps_hi = r.epsilon;
	for (f = 0.02; !missed;) {
		lo = fmax(lower, hi * (1.0 - f));
		if (!(lo < hi))
			break;
		if ((rc = cost(c, lo, fine, &r, e)) != ERR_OK)
			return rc;
		if (!(r.epsilon <= target)) {
			eps_lo = r.epsilon;
			break;
		}
		hi = lo; /* meets: keep stepping down */
		eps_hi = r.epsilon;
		if (lo <= lower)
			break;
		f = fmin(2.0 * f, 0.5);
	}
	if (lo < hi && (rc = bisect(c, fine, target, eps_lo, eps_hi, &lo, &hi, e)) != ERR_OK)
		return rc;
	*io_hi = hi;
	return ERR_OK;
}

enum err_code
calibrate(calibrate_event_fn make_event, void *ctx, enum accounting_mode mode,
	  double target_epsilon, double delta, double lower, double upper,
	  const struct rdp_grid *grid, double *ret_noise, struct accountant_report *ret_report,
	  struct err *e)
{
	struct cal c = { make_event, ctx, mode, delta, grid, false };
	struct accountant_report r_lo, r_hi, check;
	const struct accountant_options fine = accountant_defaults();
	struct accountant_options search = fine, fine_pld = fine;
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
	/* The search runs on the coarse PLD grid, without the RDP conversion
	 * where the PLD answers (refine() finishes on the fine grid the same
	 * way; the charge takes every candidate, and the search is done again
	 * with all of them if another one wins there). */
	search.pld_step = CALIBRATE_PLD_COARSE_STEP;
	search.pld_decides = true;
	fine_pld.pld_decides = true;
again:
	lo = lower;
	hi = upper;

	/* The most private end must meet the target... */
	if ((rc = cost(&c, hi, &search, &r_hi, e)) != ERR_OK)
		return rc;
	if (!(r_hi.epsilon <= target_epsilon)) {
		/* the coarse grid's looseness must not refuse a feasible run */
		if ((rc = cost(&c, hi, &fine, &r_hi, e)) != ERR_OK)
			return rc;
	}
	if (!(r_hi.epsilon <= target_epsilon)) {
		err_set_field(e, ERR_INVALID, "privacy.epsilon",
			      "'privacy.epsilon' %.6g cannot be met at this delta with noise up to "
			      "%.6g",
			      target_epsilon, upper);
		err_detail(e, "epsilon at the largest noise is %.17g", r_hi.epsilon);
		return ERR_INVALID;
	}
	/* ... and epsilon must not grow with the noise (checked at the ends). */
	if ((rc = cost(&c, lo, &search, &r_lo, e)) != ERR_OK)
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
		if ((rc = bisect(&c, &search, target_epsilon, r_lo.epsilon, r_hi.epsilon, &lo, &hi,
				 e)) != ERR_OK)
			return rc;
	}

	/* Where the PLD steered the search, finish on the charging grid: the
	 * fine grid may allow less noise (the PLD's upper estimate is a
	 * certified bound at every step, so every answer below is one).
	 * Then re-compute the charge at the returned noise with every
	 * candidate of the charging accountant; if one other than the PLD
	 * wins there, search again on the charging accountant itself. */
	if (c.pld_steered && search.pld_decides) {
		if ((rc = cost(&c, hi, &fine_pld, &check, e)) != ERR_OK)
			return rc;
		if (hi > lower && strcmp(check.accountant, "pld") == 0 &&
		    (rc = refine(&c, &fine_pld, target_epsilon, lower, upper, &hi, e)) != ERR_OK)
			return rc;
	}
	if ((rc = cost(&c, hi, &fine, &check, e)) != ERR_OK)
		return rc;
	if (search.pld_decides && c.pld_steered && strcmp(check.accountant, "pld") != 0) {
		search = fine;
		c.pld_steered = false;
		goto again;
	}
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

/* Dwork-Rothblum-Vadhan: k eps_0-DP mechanisms compose to (this, delta). */
static double
advanced_epsilon(double e0, double k, double delta)
{
	return sqrt(2.0 * k * log(1.0 / delta)) * e0 + k * e0 * expm1(e0);
}

/* self_composed(leaf(unit / temp), count) */
static enum err_code
draws_tree(enum dp_event_type leaf, double unit, uint64_t count, double temp,
	   struct dp_event_tree *ret, struct err *e)
{
	struct dp_event self = { .type = DP_EVENT_SELF_COMPOSED, .count = count };

	if (leaf == DP_EVENT_BOUNDED_RANGE)
		dp_event_bounded_range(ret, DP_REPLACE_ONE, unit / temp);
	else if (leaf == DP_EVENT_PURE)
		dp_event_pure(ret, DP_REPLACE_ONE, unit / temp);
	else
		return err_set(e, ERR_INTERNAL, "draws: a leaf must be bounded_range or pure");
	return dp_event_wrap(ret, &self, e);
}

enum err_code
draws_event(enum dp_event_type leaf, double unit, uint64_t count, double temp,
	    enum accounting_mode mode, double delta, struct dp_event_tree *ret, struct err *e)
{
	struct accountant_report r;
	struct accountant_options o;
	double adv;
	enum err_code rc;

	rc = draws_tree(leaf, unit, count, temp, ret, e);
	if (rc != ERR_OK || mode != ACCOUNTING_BASIC)
		return rc;
	/* Both leaves are eps_0-DP (bounded range implies it). */
	adv = advanced_epsilon(unit / temp, (double)count, delta);
	if (!(isfinite(adv) && adv > 0.0 && delta > 0.0 && delta < 1.0))
		return ERR_OK;
	/*
	 * The decision is adv against the basic accountant's figure for the
	 * tree.  Its candidates without the PLD come first: the PLD can only
	 * lower the figure, so when adv is not below them the tree wins
	 * whatever the PLD says, and the (costly) PLD is evaluated only when
	 * it could change the answer -- the same decision as the full
	 * accountant's, at closed-form cost on every run's init.
	 */
	o = accountant_defaults();
	o.pld_step = 0.0;
	if (accountant_epsilon_with(ret, ACCOUNTING_BASIC, delta, NULL, true, &o, &r, NULL) ==
		    ERR_OK &&
	    !(adv < r.epsilon))
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

	return draws_tree(d->leaf, d->unit, d->count, temp, ret, e);
}

/*
 * The tree's temperature comes from calibrate(); on a basic ledger the
 * advanced-composition form may allow a lower one, found on its closed
 * form (it grows with eps_0) by bisection, without the accountant; the
 * lower wins, and its event is the one draws_event() builds there.
 */
enum err_code
calibrate_draws(enum dp_event_type leaf, double unit, uint64_t count, enum accounting_mode mode,
		double target_epsilon, double delta, double *ret_temp,
		struct accountant_report *ret_report, struct err *e)
{
	const double target = nextafter(target_epsilon, 0.0), dl = nextafter(delta, 0.0),
		     k = (double)count;
	struct draws d = { leaf, unit, count, mode, dl };
	struct dp_event_tree t;
	struct rdp_grid grid;
	double basic = unit * k / target_epsilon, temp = 0.0, lo, hi, adv_temp;
	enum err_code rc;

	if (!isfinite(basic) || !(basic > 0.0))
		return err_set(e, ERR_NUMERIC,
			       "the draws' privacy unit is not finite and positive");
	rdp_grid_default(&grid);
	rc = calibrate(draws_family, &d, mode, target, dl, basic * 1e-6, basic * 64.0, &grid, &temp,
		       ret_report, e);
	if (rc != ERR_OK)
		return rc;
	*ret_temp = temp;
	lo = unit / temp;
	if (mode != ACCOUNTING_BASIC || !(advanced_epsilon(lo, k, dl) <= target))
		return ERR_OK;
	/* adv(hi) >= sqrt(2 k ln(1/delta)) hi = target (ln(1/delta) > 0) */
	hi = target / sqrt(2.0 * k * log(1.0 / dl));
	if (!(hi > lo))
		return ERR_OK;
	for (int i = 0; i < 200 && nextafter(lo, INFINITY) < hi; i++) {
		double mid = 0.5 * (lo + hi);

		if (advanced_epsilon(mid, k, dl) <= target)
			lo = mid;
		else
			hi = mid;
	}
	/* the temperature whose eps_0 = unit / temp is at most lo (rounding) */
	adv_temp = unit / lo;
	for (int i = 0; i < 8 && !(advanced_epsilon(unit / adv_temp, k, dl) <= target); i++)
		adv_temp = nextafter(adv_temp, INFINITY);
	if (!(adv_temp < temp))
		return ERR_OK;
	rc = draws_event(leaf, unit, count, adv_temp, mode, dl, &t, e);
	if (rc == ERR_OK)
		rc = accountant_epsilon(&t, ACCOUNTING_BASIC, dl, &grid, true, ret_report, e);
	if (rc == ERR_OK && !(ret_report->epsilon <= target))
		rc = err_set(e, ERR_NUMERIC, "the draws' calibration missed its target");
	if (rc == ERR_OK)
		*ret_temp = adv_temp;
	return rc;
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
