/*
 * polar_gaussian.h - the continuous floating-point Gaussian sampler
 * (Marsaglia's polar method) that dp_sgd used before the lattice
 * Gaussian.  Test-only: it left the service (it is not safe against
 * attacks on floating-point low-order bits; algorithms/privacy/noise.h),
 * and tests/lint/symbols.sh checks that no library or dpoptd build
 * contains it.  Kept for the level-1 audit of the continuous Gaussian
 * mechanism (tests/audit/test_audit_mechanisms.c) and the calibration
 * tests (tests/unit/test_calibration.c).  Tests that only need normal
 * test data use rng_normal() of common/rng_gauss.h.
 */
#ifndef TESTS_SUPPORT_POLAR_GAUSSIAN_H
#define TESTS_SUPPORT_POLAR_GAUSSIAN_H

#include <stddef.h>

#include "rng.h"

/* x[i] += N(0, sigma^2) independently for i < d.  A failed generator
 * stops the rejection loop (the pair is then 0). */
void polar_add_gaussian(struct rng *r, double sigma, double *x, size_t d);

#endif /* TESTS_SUPPORT_POLAR_GAUSSIAN_H */
