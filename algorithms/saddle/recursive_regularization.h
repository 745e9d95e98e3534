/*
 * saddle/recursive_regularization.h - the public schedule of
 * saddle.recursive_regularization (saddle/recursive_regularization.c,
 * docs/algorithms/recursive-regularization.md): pure functions of public
 * inputs, shared by plan() and the tests that check its golden values.
 */
#ifndef ALGORITHMS_SADDLE_RECURSIVE_REGULARIZATION_H
#define ALGORITHMS_SADDLE_RECURSIVE_REGULARIZATION_H

#include <stddef.h>

/* The certified output perturbation's tolerance as a fraction of the
 * exact solution's sensitivity: tol_t = RR_CTOL * 2 L / (mu_t n'). */
#define RR_CTOL 0.05

/* n' = floor(n / log2 n), the chunk size of Algorithm 1; 0 when n < 2. */
size_t rr_chunk_size(size_t n);

/* lambda = (c / B) (L / sqrt(n') + L z sqrt(p) / n'): the paper's
 * Theorem 3 choice (48 / B)(L / sqrt(n') + L sqrt(d ln(2/delta)) / (n'
 * eps)) with the multiplier c in place of 48 and the calibrated noise
 * multiplier z in place of sqrt(ln(2/delta)) / eps. */
double rr_lambda(double c, double lipschitz, double diameter, size_t chunk, size_t p, double z);

/* T = ceil(log2(L / (B lambda))); 0 or less when lambda >= L / B (the
 * degenerate recursion, refused). */
long rr_rounds(double lipschitz, double diameter, double lambda);

/* mu_t = 4 lambda (2^t - 1), the modulus of round t's regularised
 * problem (t >= 1); its quadratic weight is Lambda_t = mu_t / 2. */
double rr_modulus(double lambda, long t);

/* OutPert_cert: tol_t = RR_CTOL * 2 L / (mu_t n'). */
double rr_tolerance(double lipschitz, double mu, size_t chunk);

/* OutPert_cert: the fixed extragradient count that brings ||u - u*|| from
 * at most B to at most tol / (3 (1 + 2 beta_F / mu)), where the residual
 * certificate C(u) <= 3 (1 + 2 beta_F / mu) ||u - u*|| is at most tol:
 *	k = ceil((4 beta_F / mu) * ln(B^2 / tol'^2)),  beta_F = beta + mu,
 * from the contraction (1 - mu / (4 beta_F)) of the squared distance per
 * iteration at step 1 / (4 beta_F); 0 when B <= tol'. */
double rr_eg_iterations(double beta, double mu, double diameter, double tol);

#endif /* ALGORITHMS_SADDLE_RECURSIVE_REGULARIZATION_H */
