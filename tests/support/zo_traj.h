/*
 * zo_traj.h - the trajectory certificate of the zeroth-order methods
 * (docs/algorithms/zeroth-order.md, M2) read through the testing hook's
 * point callback, on F(w) = | ||w|| - 1 | + <zbar, w>: shared by
 * tests/algorithms/test_zeroth_order.c and
 * bench/experiments/zeroth_order/zo_compare.c.
 */
#ifndef TESTS_SUPPORT_ZO_TRAJ_H
#define TESTS_SUPPORT_ZO_TRAJ_H

#include <stddef.h>

#define ZO_TRAJ_MAX_DIM 16

/* Set T (the round length) and zbar (borrowed, the dimension's doubles);
 * the rest starts at zero. */
struct zo_traj {
	unsigned long T;
	const double *zbar;
	double sum[ZO_TRAJ_MAX_DIM]; /* sum over the round of grad F(w_t) */
	double cert_sum;             /* sum over rounds of c_k */
	unsigned long rounds;
};

/* The point callback (ctx a struct zo_traj, len <= ZO_TRAJ_MAX_DIM): adds
 * grad F(w) = sign(||w|| - 1) w / ||w|| + zbar to the round's sum and, at
 * the end of each round, its mean's norm c_k to cert_sum. */
void zo_traj_point(void *ctx, unsigned long index, const double *w, size_t len);

#endif /* TESTS_SUPPORT_ZO_TRAJ_H */
