/*
 * rng_gauss.h - the sanctioned randomness of algorithms that is NOT
 * privacy noise: standard normal draws by the ziggurat method, Gaussian
 * vectors and uniform directions on the sphere, from the injected
 * struct rng (rng.h).
 *
 * Never use anything here for privacy noise.  These are floating-point
 * samplers (the ziggurat's low-order bits are not those of an exact
 * normal), so an output that a privacy guarantee rests on would be open
 * to the floating-point attacks of Mironov (CCS 2012).  Every
 * privacy-protecting draw goes through algorithms/privacy/noise.h; the
 * layering lint (tests/lint/layering.sh) refuses this header in
 * algorithms/privacy/.  What these are for: random search directions,
 * random restarts and initial points, random stopping levels and
 * tie-breaks, test data.  The uniform double and the bounded integer
 * without modulo bias that such uses need are rng_uniform() and
 * rng_below() of rng.h.
 *
 * Like the generator, the draws are infallible: once rng_ok() is false
 * they return zeros (the rejection loops stop), and the driver fails the
 * run on rng_ok().  Not thread-safe (one struct rng per thread); the
 * tables are constant, so nothing needs initialising.
 */
#ifndef COMMON_RNG_GAUSS_H
#define COMMON_RNG_GAUSS_H

#include <stddef.h>

#include "rng.h"

/* One N(0, 1) draw: the 256-layer ziggurat of G. Marsaglia, W. W. Tsang,
 * J. Stat. Softw. 5(8), 2000, with Marsaglia's (1964) exact tail beyond
 * R = 3.654...; one 64-bit word per draw 98.8% of the time. */
double rng_normal(struct rng *r);

/* x[0..d) <- independent N(0, 1) draws. */
void rng_normal_vector(struct rng *r, double *x, size_t d);

/* x[0..d) <- a uniformly random point of the unit l2 sphere in R^d
 * (a normalised Gaussian vector), d >= 1; ||x||_2 = 1 up to rounding.
 * Zeros once the generator has failed. */
void rng_sphere(struct rng *r, double *x, size_t d);

#endif /* COMMON_RNG_GAUSS_H */
