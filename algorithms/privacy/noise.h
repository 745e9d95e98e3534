/*
 * noise.h - the only place DP noise is drawn.
 *
 * Every privacy-protecting draw goes through these functions with the
 * run's injected generator.  The Gaussian here is the continuous sampler
 * of the foundation issue (Box-Muller on 53-bit uniforms from the CSPRNG);
 * the privacy-core issue replaces it with the exact discrete Gaussian on
 * a lattice (ACCOUNTING.md section 6), because floating-point samplers
 * leak through their low-order bits (Mironov 2012; Jin et al. 2022).
 */
#ifndef ALGORITHMS_PRIVACY_NOISE_H
#define ALGORITHMS_PRIVACY_NOISE_H

#include <stddef.h>

#include "rng.h"

/* x[i] += N(0, sigma^2) independently for i < d. */
void noise_add_gaussian(struct rng *r, double sigma, double *x, size_t d);

#endif /* ALGORITHMS_PRIVACY_NOISE_H */
