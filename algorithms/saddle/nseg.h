/*
 * saddle/nseg.h - the public schedule of saddle.nseg (saddle/nseg.c,
 * docs/algorithms/nseg.md): pure functions of public inputs, shared by
 * plan() and the tests that check its golden values
 * (docs/algorithms/nseg.md §7).
 */
#ifndef ALGORITHMS_SADDLE_NSEG_H
#define ALGORITHMS_SADDLE_NSEG_H

#include <stddef.h>

/* Single pass, automatic batch (Corollary 1, made an integer): round(sqrt(p ln(1/delta)) /
 * epsilon), ties up, clamped to [1, floor(n / 2)]; 0 when n < 2 (no iteration fits). */
size_t nseg_sp_batch(size_t n, size_t p, double epsilon, double delta);

/* Single pass, automatic step: the minimiser over a constant gamma of
 * Theorem 2's bound (D^2 + 7 T gamma^2 (M^2 / 2 + p sigma^2)) / (T gamma)
 * with Corollary 1's M^2 in place of M^2 / 2,
 *	gamma = D / sqrt(7 T (M^2 + p sigma^2)),
 * (Corollary 1's formula at sigma^2 = 8 M^2 ln(1/delta) / (B^2 eps^2)),
 * then at most 1 / (sqrt(3) L) when L > 0 (Theorem 2's condition, which
 * Corollary 1 omits). */
double nseg_sp_step_size(double diameter, double bound, double smooth, unsigned long steps,
			 size_t p, double sigma);

/* Multi-pass, automatic step (Theorem 4):
 *	gamma = min(D / M, 1 / L) / (n max(sqrt(n), sqrt(p ln(1/delta)) / eps)),
 * 1 / L = +inf when L = 0. */
double nseg_mp_step_size(double diameter, double bound, double smooth, size_t n, size_t p,
			 double epsilon, double delta);

#endif /* ALGORITHMS_SADDLE_NSEG_H */
