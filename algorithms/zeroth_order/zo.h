/*
 * zeroth_order/zo.h - the parts the zeroth-order methods share
 * (docs/algorithms/zeroth-order.md): the paper's parameters with the
 * corrections of its spec (T by the max rule, the exact tree-mechanism
 * level count), the GRAD and DIFF estimators on one record with clipped
 * finite differences, and the binary tree mechanism's running noise.
 *
 * Directions come from the run's generator through rng_sphere()
 * (common/rng_gauss.h, the sanctioned non-noise source); privacy noise is
 * drawn by the callers through privacy/noise.h only.
 */
#ifndef ALGORITHMS_ZEROTH_ORDER_ZO_H
#define ALGORITHMS_ZEROTH_ORDER_ZO_H

#include <stddef.h>
#include <stdint.h>

#include "data.h"
#include "objective.h"
#include "rng.h"

/* Lambda(T) = floor(log2 T) + 1, the bit length of T (0 for T = 0). */
unsigned zo_bitlength(uint64_t t);

/*
 * The theorem's round length (docs/algorithms/zeroth-order.md, Theorem 4.9 with the max rule):
 * T1 = (sqrt(d) L delta M / A)^(2/3), T2 = (d^(3/2) L delta M / (A rho))^(p2),
 * A = F* + L delta, p2 = 1/2 for o2nc_tree and 2/3 for the naive baseline;
 * T = clamp(floor(max(T1, T2)), 2, tmax), or min(T1, T2) with use_min (the
 * paper's literal rule, kept only to reproduce it).  0 when tmax < 2.
 */
unsigned long zo_rounds(double d, double L, double gd, double fstar, double rho, double M,
			double p2, int use_min, unsigned long tmax);

/*
 * The tree mechanism's exact noise for rho (docs/algorithms/zeroth-order.md):
 * sqrt(max(Lambda s_g^2, (Lambda - 1) s_d^2)) / rho, Lambda =
 * bitlength(T), for T >= 2; s_g / rho for T = 1.  Never the paper's
 * sqrt(2 ln T) 4 d L / (B2 T rho), which is 0 at T = 1 and too small at
 * T in {2, 4} for some B1.
 */
double zo_sigma_exact(unsigned long T, double s_g, double s_d, double rho);

/* The dyadic nodes of [1, t], most significant first: a[i] .. b[i], i <
 * the returned count (popcount(t) <= 64).  Tests and docs only. */
unsigned zo_tree_nodes(uint64_t t, uint64_t *a, uint64_t *b);

/*
 * The tree mechanism's noise (docs/algorithms/zeroth-order.md): after zo_tree_reset(), the c-th
 * zo_tree_push(xi) stores xi as the noise of node (c - lowbit(c) + 1, c)
 * and returns TREE(c), the sum of the noises of the nodes of [1, c]
 * (d doubles, valid until the next call).  O(d log T) memory: a stack of
 * prefix sums, vec holds 65 d doubles.
 */
struct zo_tree {
	size_t d;
	uint64_t c;
	unsigned depth;
	uint64_t idx[65];
	double *vec; /* borrowed: 65 d doubles */
};
void zo_tree_reset(struct zo_tree *t);
const double *zo_tree_push(struct zo_tree *t, const double *xi);

/* One record's evaluations; u, p scratch of dim doubles each. */
struct zo_eval {
	const struct objective *o;
	const struct dataset *ds;
	struct rng *rng;
	size_t dim;
	double L;     /* declared Lipschitz constant: the clip */
	double delta; /* smoothing radius (gold_delta) */
	double *u, *p;
};

/*
 * acc += the GRAD estimate of record i at x with ndirs directions
 * (docs/algorithms/zeroth-order.md): (1/ndirs) sum_j (dim / (2 delta)) clip(f(x + delta u_j) - f(x
 * - delta u_j), 2 L delta) u_j.  Norm <= dim L whatever f does (non-finite differences count as 0).
 */
void zo_grad_record(struct zo_eval *z, size_t i, const double *x, size_t ndirs, double *acc);

/*
 * acc += the DIFF estimate of record i at x, y (docs/algorithms/zeroth-order.md): (1/dim) sum_j
 * (dim / delta) clip(f(x + delta u_j) - f(y + delta u_j), L r) u_j, r =
 * min(||x - y||, rmax), dim directions.  Norm <= dim L r / delta.
 */
void zo_diff_record(struct zo_eval *z, size_t i, const double *x, const double *y, double rmax,
		    double *acc);

/* sphere_distance's exact Goldstein r-subdifferential norm of | ||x|| - 1 |
 * (objectives/zeroth_order.c; docs/algorithms/zeroth-order.md). */
double sphere_distance_goldstein(const double *x, size_t d, double r);

#endif /* ALGORITHMS_ZEROTH_ORDER_ZO_H */
