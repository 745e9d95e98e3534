/*
 * vec_helpers.h - small vector helpers shared by the geometry tests
 * (test_constraint.c, test_lmo.c, test_mirror.c): a standard normal draw
 * from a seeded generator (rng_normal(), not privacy noise), dot products
 * and plain norms.  Plain sums: the test values are moderate, and the code
 * under test has its own careful versions, which these are independent of.
 */
#ifndef TESTS_UNIT_VEC_HELPERS_H
#define TESTS_UNIT_VEC_HELPERS_H

#include <math.h>
#include <stddef.h>

#include "rng.h"
#include "rng_gauss.h"

static inline double
gauss(struct rng *r)
{
	return rng_normal(r);
}

static inline double
dot(const double *a, const double *b, size_t d)
{
	double s = 0.0;

	for (size_t j = 0; j < d; j++)
		s += a[j] * b[j];
	return s;
}

static inline double
normp(const double *a, size_t d, double p)
{
	double s = 0.0;

	for (size_t j = 0; j < d; j++)
		s += pow(fabs(a[j]), p);
	return pow(s, 1.0 / p);
}

#endif /* TESTS_UNIT_VEC_HELPERS_H */
