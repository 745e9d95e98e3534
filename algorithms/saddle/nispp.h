/*
 * saddle/nispp.h - the public schedule of saddle.nispp (saddle/nispp.c,
 * docs/algorithms/nispp.md): pure functions of public inputs, shared by
 * plan(), step() and the tests that check their golden values
 * (docs/algorithms/nispp.md §7).
 */
#ifndef ALGORITHMS_SADDLE_NISPP_H
#define ALGORITHMS_SADDLE_NISPP_H

#include <stdbool.h>
#include <stddef.h>

#include "constraint.h"

enum { NISPP_SOLVER_AUTO = 0, NISPP_SOLVER_FIXED_POINT = 1, NISPP_SOLVER_OE = 2 };

/* Automatic batch: single pass max(1, round(n^(1/3))) (Corollary 2),
 * multi-pass max(1, round(sqrt(n))) (Theorem 7); ties up; at most n. */
size_t nispp_batch(size_t n, bool multi);

/* Automatic prox weight lambda_0 = max(M / D, L) max(n^(1/3) (single
 * pass) or sqrt(n) (multi-pass), sqrt(p ln(1/delta)) / epsilon). */
double nispp_prox_weight(double bound, double diameter, double smooth, size_t n, size_t p,
			 double epsilon, double delta, bool multi);

/* The accuracy privacy needs (Prop. 9): nu_priv = 2 M^2 / (lambda B^2). */
double nispp_priv_accuracy(double bound, double lambda, size_t batch);

/* The distance accuracy of the last iterate that makes it nu-accurate
 * whatever the centre (docs/algorithms/nispp.md §3): solver
 * NISPP_SOLVER_FIXED_POINT zeta = nu / ((1 + L / lambda) L D), otherwise
 * (OE) zeta = nu / ((1 + r)(3 + r)(L + lambda) D), r = kappa^(-1/2),
 * kappa = (L + 2 lambda) / (L + lambda). */
double nispp_zeta(double nu, double smooth, double diameter, double lambda, int solver);

/* Inner iteration counts that make the last iterate nu-accurate from a
 * start in W (within D of the solution), for any centre: fixed point 1 +
 * ceil(ln(D / zeta) / ln(lambda / L)) (1 when L = 0; 0 when lambda <= L:
 * no contraction), OE 1 + ceil(2 ln(D / zeta) / ln kappa); at least 1.  A
 * double, so that the caller can refuse a huge count. */
double nispp_fixed_point_iterations(double diameter, double nu, double lambda, double smooth);
double nispp_oe_iterations(double diameter, double nu, double lambda, double smooth);

/* The prox subproblem of a step: find u in W with sup_{w in W} <G(u), u
 * - w> <= nu, G(u) = F(u) + lambda (u - c), F monotone and L-Lipschitz
 * (op(ctx, v, g): g <- F(v), p entries).  Runs exactly count iterations
 * of solver (NISPP_SOLVER_FIXED_POINT: z <- Pi_W(c - F(z) / lambda);
 * NISPP_SOLVER_OE: Operator Extrapolation, step 1 / (2 (L + lambda)),
 * extrapolation 1 / kappa), both from Pi_W(c); then z <- the last iterate,
 * g <- G(z), and returns the certificate sup_w <G(z), z - w> (one LMO).
 * work: 4 p doubles (besides the set's projection scratch, the last p). */
struct nispp_inner {
	const struct constraint_product *set;
	void (*op)(void *ctx, const double *v, double *g);
	void *ctx;
	const double *c; /* the centre, p entries, possibly outside W */
	double lambda, smooth;
	int solver;
};
double nispp_inner_solve(const struct nispp_inner *in, double count, double *z, double *g,
			 double *work);

#endif /* ALGORITHMS_SADDLE_NISPP_H */
