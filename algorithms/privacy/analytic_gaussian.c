/*
 * analytic_gaussian.c - the exact privacy curve of one Gaussian mechanism
 * and the calibration of its noise multiplier.
 *
 * B. Balle, Y.-X. Wang, "Improving the Gaussian mechanism for differential
 * privacy: analytical calibration and optimal denoising", ICML 2018,
 * Theorem 8: a Gaussian mechanism with l2 sensitivity Delta and noise
 * sigma = z Delta is (eps, delta)-DP iff
 *
 *	delta >= Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),  mu = 1/z.
 *
 * Numerics.  With a = -eps z + mu/2 and b = a - mu the two terms agree to
 * about 1 / (eps z^2) relative for large z, so the difference is formed in
 * log space: delta = Phi(a) (1 - exp(r)) with r = eps + log Phi(b) -
 * log Phi(a) < 0, and -expm1(r) keeps the small difference exact to the
 * accuracy of r.  log Phi uses erfc (accurate relative to its value down to
 * its underflow) and, below -30, the asymptotic series of Mills' ratio.
 * Anything non-finite or a difference of the wrong sign fails closed with
 * ERR_NUMERIC: a curve we cannot evaluate is a charge we cannot bound.
 *
 * Compositions.  J. Dong, A. Roth, W. Su, "Gaussian differential privacy",
 * JRSS-B 2022, Corollary 3.3: the adaptive composition of mu_i-GDP
 * mechanisms is sqrt(sum mu_i^2)-GDP, and mu-GDP is exactly the curve
 * above (their Corollary 2.13), so a composition of Gaussians inside one
 * run has the curve at mu = sqrt(sum 1/z_i^2).  ag_tree_mu() recognises
 * such trees; ag_epsilon_mu() inverts the curve by bisection.
 */
#include <math.h>
#include <stdbool.h>

#include "privacy/analytic_gaussian.h"

#define SQRT1_2         0.70710678118654752440 /* 1/sqrt(2); M_SQRT1_2 is XSI */
#define LOG_SQRT_2PI    0.91893853320467274178 /* log(sqrt(2 pi)) */
#define CAL_REL_TOL     1e-9                   /* relative width of the final bracket */
#define CAL_MAX_OCTAVES 256                    /* bracket search stays in [2^-256, 2^256] */
#define EPS_REL_TOL     1e-12                  /* ag_epsilon_mu: relative width of the bracket */

double
ag_log_phi(double x)
{
	double x2, term, sum;

	if (isnan(x))
		return NAN;
	if (x > 0.0)
		return log1p(-0.5 * erfc(x * SQRT1_2));
	if (x >= -30.0)
		return log(0.5 * erfc(-x * SQRT1_2));
	/*
	 * Phi(x) = phi(x) / |x| (1 - 1/x^2 + 3/x^4 - 15/x^6 + ...) for x -> -inf.
	 * For x < -30 the terms fall by at least 1/900 * (2k-1) per step
	 * until k ~ 450, so 12 terms are far below double precision.
	 */
	x2 = x * x;
	if (!isfinite(x2))
		return -INFINITY;
	term = 1.0;
	sum = 0.0;
	for (int k = 1; k <= 12; k++) {
		term *= -(double)(2 * k - 1) / x2;
		sum += term;
	}
	return -0.5 * x2 - log(-x) - LOG_SQRT_2PI + log1p(sum);
}

/* delta(eps) with z = 1/mu given both ways, so that ag_delta(z) computes
 * -eps z exactly as before and ag_delta_mu(mu) -eps / mu. */
static enum err_code
delta_core(double z, double mu, double epsilon, double *ret_delta, struct err *e)
{
	double a, b, la, lb, r, delta;

	a = -epsilon * z + 0.5 * mu;
	b = -epsilon * z - 0.5 * mu;
	la = ag_log_phi(a);
	lb = ag_log_phi(b);
	r = epsilon + lb - la; /* log(e^eps Phi(b) / Phi(a)); -inf when Phi(b) underflows */
	if (isnan(la) || isnan(lb) || isnan(r) || la == -INFINITY || r >= 0.0) {
		err_set(e, ERR_NUMERIC, "the Gaussian privacy curve cannot be evaluated");
		err_detail(e, "z = %.17g, epsilon = %.17g, log Phi(a) = %.17g, r = %.17g", z,
			   epsilon, la, r);
		return ERR_NUMERIC;
	}
	delta = exp(la) * -expm1(r);
	if (!isfinite(delta) || delta < 0.0 || delta > 1.0)
		return err_set(e, ERR_NUMERIC, "the Gaussian privacy curve cannot be evaluated");
	*ret_delta = delta;
	return ERR_OK;
}

enum err_code
ag_delta(double z, double epsilon, double *ret_delta, struct err *e)
{
	if (!isfinite(z) || z <= 0.0)
		return err_set(e, ERR_INVALID, "the noise multiplier must be finite and positive");
	if (!isfinite(epsilon) || epsilon < 0.0)
		return err_set_field(e, ERR_INVALID, "privacy.epsilon",
				     "'privacy.epsilon' must be finite and non-negative");
	return delta_core(z, 1.0 / z, epsilon, ret_delta, e);
}

enum err_code
ag_delta_mu(double mu, double epsilon, double *ret_delta, struct err *e)
{
	if (!isfinite(mu) || mu <= 0.0)
		return err_set(e, ERR_INVALID, "mu must be finite and positive");
	if (!isfinite(epsilon) || epsilon < 0.0)
		return err_set_field(e, ERR_INVALID, "privacy.epsilon",
				     "'privacy.epsilon' must be finite and non-negative");
	return delta_core(1.0 / mu, mu, epsilon, ret_delta, e);
}

enum err_code
ag_epsilon_mu(double mu, double delta, double *ret_epsilon, struct err *e)
{
	double lo = 0.0, hi = 1.0, d, check;
	enum err_code rc;
	int n;

	if (!isfinite(mu) || mu <= 0.0)
		return err_set(e, ERR_INVALID, "mu must be finite and positive");
	if (!(delta > 0.0 && delta < 1.0))
		return err_set_field(e, ERR_INVALID, "privacy.delta",
				     "'privacy.delta' must be in (0, 1)");
	/* delta(eps) decreases from delta(0) = 2 Phi(mu/2) - 1 to 0. */
	if ((rc = ag_delta_mu(mu, 0.0, &d, e)) != ERR_OK)
		return rc;
	/* The exact curve already meets delta at 0: the composition is
	 * (0, delta)-DP, and (eps, delta)-DP for every eps >= 0. */
	if (d <= delta) {
		*ret_epsilon = 0.0;
		return ERR_OK;
	}
	for (n = 0;; n++) {
		if (n == CAL_MAX_OCTAVES)
			return err_set(e, ERR_NUMERIC,
				       "no epsilon in range meets the delta target");
		if ((rc = ag_delta_mu(mu, hi, &d, e)) != ERR_OK)
			return rc;
		if (d <= delta)
			break;
		lo = hi;
		hi *= 2.0;
	}
	/* Invariant: delta(lo) > target >= delta(hi). */
	while (hi - lo > EPS_REL_TOL * hi) {
		double mid = 0.5 * (lo + hi);

		if (!(mid > lo && mid < hi))
			break;
		if ((rc = ag_delta_mu(mu, mid, &d, e)) != ERR_OK)
			return rc;
		if (d <= delta)
			hi = mid;
		else
			lo = mid;
	}
	if ((rc = ag_delta_mu(mu, hi, &check, e)) != ERR_OK)
		return rc;
	if (!(check <= delta))
		return err_set(e, ERR_NUMERIC, "the Gaussian epsilon misses the delta target");
	*ret_epsilon = hi;
	return ERR_OK;
}

/* *ret = sum of 1/z^2 over the subtree at i (max for parallel). */
static bool
tree_inv_sq(const struct dp_event_tree *t, unsigned i, double *ret)
{
	const struct dp_event *n = &t->node[i];
	double v = 0.0, c;

	switch (n->type) {
	case DP_EVENT_GAUSSIAN:
		v = 1.0 / (n->noise_multiplier * n->noise_multiplier);
		break;
	case DP_EVENT_SELF_COMPOSED:
		if (!tree_inv_sq(t, n->first_child, &c))
			return false;
		v = (double)n->count * c;
		break;
	case DP_EVENT_COMPOSED:
	case DP_EVENT_PARALLEL:
	case DP_EVENT_MIXTURE: /* the worst child dominates (event.h) */
		for (unsigned k = 0; k < n->n_children; k++) {
			if (!tree_inv_sq(t, n->first_child + k, &c))
				return false;
			v = n->type == DP_EVENT_COMPOSED ? v + c : fmax(v, c);
		}
		break;
	default:
		return false;
	}
	*ret = v;
	return true;
}

enum err_code
ag_tree_mu(const struct dp_event_tree *t, double *ret_mu, struct err *e)
{
	double s, mu;
	enum err_code rc;

	if ((rc = dp_event_check(t, e)) != ERR_OK)
		return rc;
	if (!tree_inv_sq(t, 0, &s))
		return err_set(e, ERR_INVALID,
			       "the event is not a composition of plain gaussian mechanisms");
	mu = sqrt(s);
	if (!isfinite(mu) || !(mu > 0.0))
		return err_set(e, ERR_NUMERIC, "mu of the gaussian composition is not finite");
	*ret_mu = mu;
	return ERR_OK;
}

/* *ret_ok = delta(z) <= target. */
static enum err_code
meets(double z, double epsilon, double target, bool *ret_ok, struct err *e)
{
	double d;
	enum err_code rc;

	rc = ag_delta(z, epsilon, &d, e);
	if (rc != ERR_OK)
		return rc;
	*ret_ok = d <= target;
	return ERR_OK;
}

enum err_code
ag_calibrate(double epsilon, double delta, double *ret_z, struct err *e)
{
	double lo, hi, check;
	bool ok;
	int n;
	enum err_code rc;

	if (!isfinite(epsilon) || epsilon <= 0.0)
		return err_set_field(e, ERR_INVALID, "privacy.epsilon",
				     "'privacy.epsilon' must be finite and positive");
	if (!(delta > 0.0 && delta < 1.0))
		return err_set_field(e, ERR_INVALID, "privacy.delta",
				     "'privacy.delta' must be in (0, 1)");

	/*
	 * Bracket: delta(z) decreases from 1 (z -> 0) to 0 (z -> inf), so walk
	 * from z = 1 by octaves until lo fails and hi meets the target.
	 */
	rc = meets(1.0, epsilon, delta, &ok, e);
	if (rc != ERR_OK)
		return rc;
	if (ok) {
		hi = 1.0;
		for (n = 0;; n++) {
			if (n == CAL_MAX_OCTAVES)
				return err_set(e, ERR_NUMERIC,
					       "no noise multiplier in range meets the target");
			lo = 0.5 * hi;
			rc = meets(lo, epsilon, delta, &ok, e);
			if (rc != ERR_OK)
				return rc;
			if (!ok)
				break;
			hi = lo;
		}
	} else {
		lo = 1.0;
		for (n = 0;; n++) {
			if (n == CAL_MAX_OCTAVES)
				return err_set(e, ERR_NUMERIC,
					       "no noise multiplier in range meets the target");
			hi = 2.0 * lo;
			rc = meets(hi, epsilon, delta, &ok, e);
			if (rc != ERR_OK)
				return rc;
			if (ok)
				break;
			lo = hi;
		}
	}

	/* Invariant: delta(lo) > target >= delta(hi).  Bisect in log z. */
	while (hi > lo * (1.0 + CAL_REL_TOL)) {
		double mid = sqrt(lo) * sqrt(hi);

		if (!(mid > lo && mid < hi))
			break; /* no representable point left between them */
		rc = meets(mid, epsilon, delta, &ok, e);
		if (rc != ERR_OK)
			return rc;
		if (ok)
			hi = mid;
		else
			lo = mid;
	}

	/* Return the safe end, re-checked (docs/privacy-model.md §5). */
	rc = ag_delta(hi, epsilon, &check, e);
	if (rc != ERR_OK)
		return rc;
	if (!(check <= delta))
		return err_set(e, ERR_NUMERIC, "the calibrated noise misses the delta target");
	*ret_z = hi;
	return ERR_OK;
}
