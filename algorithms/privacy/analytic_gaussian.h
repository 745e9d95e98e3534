/*
 * analytic_gaussian.h - the exact (epsilon, delta) curve of the Gaussian
 * mechanism (Balle & Wang, ICML 2018, Theorem 8) and the calibration of
 * its noise multiplier.
 *
 * With mu = 1/z (z = sigma / Delta_2):
 *	delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
 * Used within one run only (ACCOUNTING.md section 3); never to compose
 * runs in the ledger.
 */
#ifndef ALGORITHMS_PRIVACY_ANALYTIC_GAUSSIAN_H
#define ALGORITHMS_PRIVACY_ANALYTIC_GAUSSIAN_H

#include "err.h"

/* delta(eps) of a Gaussian mechanism with noise multiplier z > 0.
 * Computed in log space where the two terms nearly cancel.  ERR_NUMERIC
 * when an intermediate is not finite (fail closed). */
enum err_code ag_delta(double z, double epsilon, double *ret_delta, struct err *e);

/* Smallest noise multiplier z (relative tolerance 1e-9, rounded up) with
 * delta(epsilon) <= delta, re-checked after the search.  epsilon > 0 and
 * 0 < delta < 1, else ERR_INVALID naming "privacy.epsilon" or
 * "privacy.delta". */
enum err_code ag_calibrate(double epsilon, double delta, double *ret_z, struct err *e);

#endif /* ALGORITHMS_PRIVACY_ANALYTIC_GAUSSIAN_H */
