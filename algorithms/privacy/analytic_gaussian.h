/*
 * analytic_gaussian.h - the exact (epsilon, delta) curve of the Gaussian
 * mechanism (Balle & Wang, ICML 2018, Theorem 8) and the calibration of
 * its noise multiplier.
 *
 * With mu = 1/z (z = sigma / Delta_2):
 *	delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
 * Used within one run only (docs/privacy-model.md §3); never to compose
 * runs in the ledger.
 *
 * A composition of Gaussian mechanisms with noise multipliers z_i (adaptive
 * or not) has exactly the curve of one Gaussian with
 * mu = sqrt(sum 1/z_i^2) (Dong, Roth & Su, "Gaussian differential
 * privacy", JRSS-B 2022, Corollary 3.3: mu-GDP composes to
 * sqrt(sum mu_i^2)-GDP, and mu-GDP is exactly the curve above); parallel
 * parts cost the worst part's mu.  The mu-based functions serve such
 * compositions inside one run.
 */
#ifndef ALGORITHMS_PRIVACY_ANALYTIC_GAUSSIAN_H
#define ALGORITHMS_PRIVACY_ANALYTIC_GAUSSIAN_H

#include "err.h"
#include "privacy/event.h"

/* delta(eps) of a Gaussian mechanism with noise multiplier z > 0.
 * Computed in log space where the two terms nearly cancel.  ERR_NUMERIC
 * when an intermediate is not finite (fail closed). */
enum err_code ag_delta(double z, double epsilon, double *ret_delta, struct err *e);

/* Smallest noise multiplier z (relative tolerance 1e-9, rounded up) with
 * delta(epsilon) <= delta, re-checked after the search.  epsilon > 0 and
 * 0 < delta < 1, else ERR_INVALID naming "privacy.epsilon" or
 * "privacy.delta". */
enum err_code ag_calibrate(double epsilon, double delta, double *ret_z, struct err *e);

/* delta(eps) at mu > 0 (mu = 1/z for one Gaussian; ag_delta(z) is the
 * same curve).  ERR_NUMERIC as ag_delta. */
enum err_code ag_delta_mu(double mu, double epsilon, double *ret_delta, struct err *e);

/*
 * The smallest eps (relative tolerance 1e-12, the safe end) with
 * delta(eps) <= delta, 0 < delta < 1, re-checked after the search; 0 when
 * delta(0) <= delta already (the exact curve: the composition is then
 * (0, delta)-DP).  ERR_NUMERIC when the curve cannot be evaluated.
 */
enum err_code ag_epsilon_mu(double mu, double delta, double *ret_epsilon, struct err *e);

/*
 * mu of a tree that is a composition of plain Gaussians: a gaussian leaf
 * (1/z), composed (sqrt of the sum of squares), self_composed (sqrt(count)
 * times), parallel (the largest part).  ERR_INVALID when the tree holds
 * anything else (a sampled Gaussian has no such curve: use the Renyi
 * accountant); ERR_NUMERIC when mu is not finite.
 */
enum err_code ag_tree_mu(const struct dp_event_tree *t, double *ret_mu, struct err *e);

/* log Phi(x), the log of the standard normal cdf, accurate in both tails
 * (shared with the Renyi accountant's fractional-order series). */
double ag_log_phi(double x);

#endif /* ALGORITHMS_PRIVACY_ANALYTIC_GAUSSIAN_H */
