/*
 * kernels.h - the few loops every per-record computation is made of: dot
 * products, axpy and squared norms over one row of a struct dataset,
 * dense or CSR, and their multi-output forms for K-class models.
 *
 * All of them are static inline so that the hot loops (objective.c's
 * batch gradient) see through them and keep w and g in registers and
 * cache; none allocates.  Loops are written for the auto-vectoriser:
 * restrict pointers, unit strides, and reductions split over a fixed
 * number of partial sums.  The summation order is fixed by the code, not
 * by the compiler (no -ffast-math), so results are reproducible bit for
 * bit on one machine; a dense row and the same row stored as CSR give the
 * same bits only up to that order (tests compare them to 1e-12).
 *
 * Multi-output layout: a K-class weight matrix W is stored feature-major,
 * W[j * K + k] for feature j and class k, so that one feature's K weights
 * are contiguous: a CSR entry (j, v) touches one contiguous run of K
 * doubles, and the dense x^T W and the rank-1 update g += x r^T are unit
 * stride in k.
 */
#ifndef ALGORITHMS_KERNELS_H
#define ALGORITHMS_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

/* Partial sums of the dense reductions: 8 breaks the add-latency chain
 * and fills one 512-bit, two 256-bit or four 128-bit vectors. */
#define KERN_LANES 8

#if defined(__clang__)
/* clang contracts a * b + c into a fused multiply-add where the target has
 * one (-ffp-contract=on); gcc in ISO C mode does not.  The kernels round
 * each product, on every target, so that every build and every code path
 * (kernels_isa.c) gives the same bits. */
#pragma STDC FP_CONTRACT OFF
#endif

/*
 * The dense block kernels of the one-margin gradient pass
 * (objective.c), one copy per instruction set (kernels_isa.c), all with
 * the same bits: they follow kern_dot_sqnorm()'s and kern_axpy()'s order
 * of operations exactly and use no fused multiply-add.
 *
 *	dots	z[t] = <w, x_t> and, when nn is not NULL, nn[t] = ||x_t||^2,
 *		for the nb rows rows[0..nb) of d doubles: the bits of
 *		kern_dot_sqnorm(w, x_t, d, &nn[t]) (of kern_dot(x_t, w, d)
 *		without nn).
 *	axpys	g += c[0] x_0 + ... + c[nb-1] x_{nb-1}, added to each g[j]
 *		in that order: the bits of nb kern_axpy() calls.
 *
 * kern_ops_best() picks the widest copy the CPU runs (AVX-512F, AVX2,
 * else the x86-64 baseline); kern_ops_for() returns one copy, or NULL when
 * the CPU lacks its instructions (tests force each path with it).
 */
enum kern_isa {
	KERN_ISA_BASELINE, /* SSE2 on x86-64; the portable loops elsewhere */
	KERN_ISA_AVX2,
	KERN_ISA_AVX512,
	KERN_ISA__COUNT
};

struct kern_ops {
	const char *name;
	void (*dots)(const double *const *rows, size_t nb, const double *restrict w, size_t d,
		     double *restrict z, double *restrict nn);
	void (*axpys)(const double *const *rows, const double *restrict c, size_t nb,
		      double *restrict g, size_t d);
};

const struct kern_ops *kern_ops_for(enum kern_isa isa);
const struct kern_ops *kern_ops_best(void);

#if defined(__GNUC__)
/*
 * GCC and clang do not vectorise a floating-point reduction without
 * -ffast-math (it would reorder the sum), and did not pack the eight
 * scalar partial sums below on their own (gcc 12: scalar addsd, 44 % of
 * the read bandwidth on bench/kernels.c).  Their vector extension states
 * the same eight partial sums as four two-lane vectors: same order on
 * every build of one compiler, and packed (SSE2 baseline, no -march).
 */
typedef double kern_v2 __attribute__((vector_size(16)));

static inline kern_v2
kern_load2(const double *p)
{
	kern_v2 v;

	memcpy(&v, p, sizeof(v)); /* unaligned load */
	return v;
}

static inline double
kern_hsum(kern_v2 a, kern_v2 b, kern_v2 c, kern_v2 d)
{
	kern_v2 s = (a + b) + (c + d);

	return s[0] + s[1];
}

/* <a, b> over n doubles. */
static inline double
kern_dot(const double *restrict a, const double *restrict b, size_t n)
{
	kern_v2 s0 = { 0, 0 }, s1 = s0, s2 = s0, s3 = s0;
	double t = 0.0;
	size_t j = 0;

	for (; j + KERN_LANES <= n; j += KERN_LANES) {
		s0 += kern_load2(a + j) * kern_load2(b + j);
		s1 += kern_load2(a + j + 2) * kern_load2(b + j + 2);
		s2 += kern_load2(a + j + 4) * kern_load2(b + j + 4);
		s3 += kern_load2(a + j + 6) * kern_load2(b + j + 6);
	}
	for (; j < n; j++)
		t += a[j] * b[j];
	return kern_hsum(s0, s1, s2, s3) + t;
}

/* <a, b> and ||b||^2 in one pass over b. */
static inline double
kern_dot_sqnorm(const double *restrict a, const double *restrict b, size_t n, double *ret_nn)
{
	kern_v2 s0 = { 0, 0 }, s1 = s0, s2 = s0, s3 = s0, q0 = s0, q1 = s0, q2 = s0, q3 = s0;
	double t = 0.0, u = 0.0;
	size_t j = 0;

	for (; j + KERN_LANES <= n; j += KERN_LANES) {
		kern_v2 b0 = kern_load2(b + j), b1 = kern_load2(b + j + 2);
		kern_v2 b2 = kern_load2(b + j + 4), b3 = kern_load2(b + j + 6);

		s0 += kern_load2(a + j) * b0;
		s1 += kern_load2(a + j + 2) * b1;
		s2 += kern_load2(a + j + 4) * b2;
		s3 += kern_load2(a + j + 6) * b3;
		q0 += b0 * b0;
		q1 += b1 * b1;
		q2 += b2 * b2;
		q3 += b3 * b3;
	}
	for (; j < n; j++) {
		t += a[j] * b[j];
		u += b[j] * b[j];
	}
	*ret_nn = kern_hsum(q0, q1, q2, q3) + u;
	return kern_hsum(s0, s1, s2, s3) + t;
}
#else
/* <a, b> over n doubles. */
static inline double
kern_dot(const double *restrict a, const double *restrict b, size_t n)
{
	double acc[KERN_LANES] = { 0 }, t = 0.0;
	size_t j = 0;

	for (; j + KERN_LANES <= n; j += KERN_LANES)
		for (size_t l = 0; l < KERN_LANES; l++)
			acc[l] += a[j + l] * b[j + l];
	for (; j < n; j++)
		t += a[j] * b[j];
	return (((acc[0] + acc[2]) + (acc[4] + acc[6])) + ((acc[1] + acc[3]) + (acc[5] + acc[7]))) +
	       t;
}

/* <a, b> and ||b||^2 in one pass over b. */
static inline double
kern_dot_sqnorm(const double *restrict a, const double *restrict b, size_t n, double *ret_nn)
{
	double acc[KERN_LANES] = { 0 }, nn[KERN_LANES] = { 0 }, t = 0.0, u = 0.0;
	size_t j = 0;

	for (; j + KERN_LANES <= n; j += KERN_LANES)
		for (size_t l = 0; l < KERN_LANES; l++) {
			acc[l] += a[j + l] * b[j + l];
			nn[l] += b[j + l] * b[j + l];
		}
	for (; j < n; j++) {
		t += a[j] * b[j];
		u += b[j] * b[j];
	}
	*ret_nn = (((nn[0] + nn[2]) + (nn[4] + nn[6])) + ((nn[1] + nn[3]) + (nn[5] + nn[7]))) + u;
	return (((acc[0] + acc[2]) + (acc[4] + acc[6])) + ((acc[1] + acc[3]) + (acc[5] + acc[7]))) +
	       t;
}
#endif

/* y += a x over n doubles. */
static inline void
kern_axpy(double a, const double *restrict x, double *restrict y, size_t n)
{
	for (size_t j = 0; j < n; j++)
		y[j] += a * x[j];
}

/*
 * y += a[0] x0 + a[1] x1 + a[2] x2 + a[3] x3, added to each y[j] in that
 * order: the same bits as four kern_axpy() calls, one load and one store
 * of y instead of four.  The x may be the same row (they are only read).
 */
static inline void
kern_axpy4(const double *restrict a, const double *restrict x0, const double *restrict x1,
	   const double *restrict x2, const double *restrict x3, double *restrict y, size_t n)
{
	const double a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];

	for (size_t j = 0; j < n; j++)
		y[j] = (((y[j] + a0 * x0[j]) + a1 * x1[j]) + a2 * x2[j]) + a3 * x3[j];
}

/*
 * The sparse loops take the weights and the gradient at a stride: the
 * j-th weight is w[stride * j] (and the j-th gradient entry g[stride * j]).
 * stride is 1 for plain vectors and 2 for the interleaved scratch of the
 * CSR batch pass (kern_wg_new() below).  The order of operations does not
 * depend on the stride, so both give the same bits.
 */

/* Sparse <w, x> for x given by nnz (col, val) pairs. */
static inline double
kern_sdot_s(const uint32_t *restrict col, const double *restrict val, size_t nnz,
	    const double *restrict w, size_t stride)
{
	double s0 = 0.0, s1 = 0.0;
	size_t k = 0;

	for (; k + 2 <= nnz; k += 2) {
		s0 += val[k] * w[stride * col[k]];
		s1 += val[k + 1] * w[stride * col[k + 1]];
	}
	if (k < nnz)
		s0 += val[k] * w[stride * col[k]];
	return s0 + s1;
}

static inline double
kern_sdot(const uint32_t *restrict col, const double *restrict val, size_t nnz,
	  const double *restrict w)
{
	return kern_sdot_s(col, val, nnz, w, 1);
}

/* Sparse ||x||^2 and <w, x>. */
static inline double
kern_sdot_sqnorm_s(const uint32_t *restrict col, const double *restrict val, size_t nnz,
		   const double *restrict w, size_t stride, double *ret_nn)
{
	double s0 = 0.0, s1 = 0.0, n0 = 0.0, n1 = 0.0;
	size_t k = 0;

	for (; k + 2 <= nnz; k += 2) {
		s0 += val[k] * w[stride * col[k]];
		s1 += val[k + 1] * w[stride * col[k + 1]];
		n0 += val[k] * val[k];
		n1 += val[k + 1] * val[k + 1];
	}
	if (k < nnz) {
		s0 += val[k] * w[stride * col[k]];
		n0 += val[k] * val[k];
	}
	*ret_nn = n0 + n1;
	return s0 + s1;
}

static inline double
kern_sdot_sqnorm(const uint32_t *restrict col, const double *restrict val, size_t nnz,
		 const double *restrict w, double *ret_nn)
{
	return kern_sdot_sqnorm_s(col, val, nnz, w, 1, ret_nn);
}

/* Sparse g += a x.  Columns of a row are distinct (data.h), so the
 * scattered stores never alias each other. */
static inline void
kern_saxpy_s(double a, const uint32_t *restrict col, const double *restrict val, size_t nnz,
	     double *restrict g, size_t stride)
{
	for (size_t k = 0; k < nnz; k++)
		g[stride * col[k]] += a * val[k];
}

static inline void
kern_saxpy(double a, const uint32_t *restrict col, const double *restrict val, size_t nnz,
	   double *restrict g)
{
	kern_saxpy_s(a, col, val, nnz, g, 1);
}

/*
 * The interleaved scratch of a large CSR batch pass: wg[2 j] = w_j and
 * wg[2 j + 1] = g_j for j < d, so that an entry's weight (read by the
 * margin) and gradient (updated by the axpy) share one cache line.  A CSR
 * entry touches a scattered column; with w and g apart that is two cache
 * lines missing L1 per entry, interleaved it is one, and the axpy of a
 * block of rows finds the lines its margins just brought in (a block of 8
 * rows of 50 entries is 400 lines, 25 KB, inside L1).  bench/kernels.c
 * measures the gain (docs/algorithms/kernels.md).
 *
 * The pass adds to wg[2 j + 1] exactly the terms, in exactly the order,
 * it would add to g[j], starting from g[j]'s value, and kern_wg_done()
 * copies the sums back: the same bits as the plain loops.  Filling and
 * emptying the scratch reads and writes 2 d doubles, so the pass uses it
 * only when the batch has at least KERN_WG_MIN_PER_D * d entries
 * (kern_wg_worth()); NULL (out of memory) means the plain loops.
 */
#define KERN_WG_MIN_PER_D 4

static inline bool
kern_wg_worth(size_t entries, size_t d)
{
	return d > 0 && entries / KERN_WG_MIN_PER_D >= d;
}

static inline double *
kern_wg_new(const double *restrict w, const double *restrict g, size_t d)
{
	double *wg = malloc(2 * d * sizeof(*wg));

	if (wg != NULL)
		for (size_t j = 0; j < d; j++) {
			wg[2 * j] = w[j];
			wg[2 * j + 1] = g[j];
		}
	return wg;
}

/* g_j = wg[2 j + 1] for j < d, and frees wg (NULL: nothing to do). */
static inline void
kern_wg_done(double *wg, double *restrict g, size_t d)
{
	if (wg == NULL)
		return;
	for (size_t j = 0; j < d; j++)
		g[j] = wg[2 * j + 1];
	free(wg);
}

/*
 * A sequential CSR pass streams col and val: KERN_CSR_AHEAD entries
 * (8 KiB of values, 4 KiB of indices) ahead of the row being updated, it
 * asks for their lines into L2, a few at a time as the pass advances
 * (kern_csr_ahead_to(), called per row), so that memory keeps streaming
 * while the core works on the scattered updates.  The hardware prefetcher
 * alone stops when the loads stop, and a burst per block stalled the loads
 * (docs/algorithms/kernels.md).  A hint: no effect on results.
 */
#define KERN_CSR_AHEAD 1024

struct kern_csr_ahead {
	const uint32_t *col;
	const double *val;
	size_t vnext, cnext, end; /* values [.., vnext), indices [.., cnext) asked for */
};

static inline void
kern_csr_ahead_init(struct kern_csr_ahead *a, const uint32_t *col, const double *val, size_t begin,
		    size_t end)
{
	a->col = col;
	a->val = val;
	a->vnext = a->cnext = begin;
	a->end = end;
}

/* Asks for the entries up to p + KERN_CSR_AHEAD (not beyond the end). */
static inline void
kern_csr_ahead_to(struct kern_csr_ahead *a, size_t p)
{
#if defined(__GNUC__)
	size_t to = p + KERN_CSR_AHEAD < a->end ? p + KERN_CSR_AHEAD : a->end;

	/* addresses 64 bytes apart: one request per cache line */
	for (; a->vnext < to; a->vnext += 64 / sizeof(double))
		__builtin_prefetch(a->val + a->vnext, 0, 1);
	for (; a->cnext < to; a->cnext += 64 / sizeof(uint32_t))
		__builtin_prefetch(a->col + a->cnext, 0, 1);
#else
	(void)a;
	(void)p;
#endif
}

/* ---- one row of a dataset ---- */

/* <x_i, w> over the d features. */
static inline double
data_row_dot(const struct dataset *ds, size_t i, const double *restrict w)
{
	if (ds->layout == DATA_CSR) {
		size_t b = ds->row_ptr[i], e = ds->row_ptr[i + 1];

		return kern_sdot(ds->col + b, ds->val + b, e - b, w);
	}
	return kern_dot(ds->x + i * ds->d, w, ds->d);
}

/* <x_i, w>, and ||x_i||^2 in *ret_nn, in one pass. */
static inline double
data_row_dot_sqnorm(const struct dataset *ds, size_t i, const double *restrict w, double *ret_nn)
{
	if (ds->layout == DATA_CSR) {
		size_t b = ds->row_ptr[i], e = ds->row_ptr[i + 1];

		return kern_sdot_sqnorm(ds->col + b, ds->val + b, e - b, w, ret_nn);
	}
	return kern_dot_sqnorm(w, ds->x + i * ds->d, ds->d, ret_nn);
}

/* ||x_i||_2^2. */
static inline double
data_row_sqnorm(const struct dataset *ds, size_t i)
{
	if (ds->layout == DATA_CSR) {
		size_t b = ds->row_ptr[i], e = ds->row_ptr[i + 1];

		return kern_dot(ds->val + b, ds->val + b, e - b);
	}
	return kern_dot(ds->x + i * ds->d, ds->x + i * ds->d, ds->d);
}

/* g += a x_i. */
static inline void
data_row_axpy(const struct dataset *ds, size_t i, double a, double *restrict g)
{
	if (ds->layout == DATA_CSR) {
		size_t b = ds->row_ptr[i], e = ds->row_ptr[i + 1];

		kern_saxpy(a, ds->col + b, ds->val + b, e - b, g);
		return;
	}
	kern_axpy(a, ds->x + i * ds->d, g, ds->d);
}

/* g += c[t] x_{rows[t]} for t < nb, row after row: the same bits as nb
 * data_row_axpy() calls; dense rows go four at a time (kern_axpy4). */
static inline void
data_rows_axpy(const struct dataset *ds, const size_t *restrict rows, const double *restrict c,
	       size_t nb, double *restrict g)
{
	size_t t = 0;

	if (ds->layout == DATA_DENSE) {
		const double *x = ds->x;
		const size_t d = ds->d;

		for (; t + 4 <= nb; t += 4)
			kern_axpy4(c + t, x + rows[t] * d, x + rows[t + 1] * d, x + rows[t + 2] * d,
				   x + rows[t + 3] * d, g, d);
	}
	for (; t < nb; t++)
		data_row_axpy(ds, rows[t], c[t], g);
}

/* ---- multi-output (K classes, W feature-major: W[j * K + k]) ---- */

/* s[k] += sum_j x_ij W[j * K + k] for k < K. */
static inline void
data_row_matvec(const struct dataset *ds, size_t i, const double *restrict W, size_t K,
		double *restrict s)
{
	if (ds->layout == DATA_CSR) {
		for (size_t p = ds->row_ptr[i]; p < ds->row_ptr[i + 1]; p++) {
			const double v = ds->val[p], *restrict wj = W + (size_t)ds->col[p] * K;

			for (size_t k = 0; k < K; k++)
				s[k] += v * wj[k];
		}
		return;
	}
	for (size_t j = 0; j < ds->d; j++) {
		const double v = ds->x[i * ds->d + j], *restrict wj = W + j * K;

		for (size_t k = 0; k < K; k++)
			s[k] += v * wj[k];
	}
}

/* G[j * K + k] += x_ij r[k]: the rank-1 update x_i r^T. */
static inline void
data_row_rank1(const struct dataset *ds, size_t i, const double *restrict r, size_t K,
	       double *restrict G)
{
	if (ds->layout == DATA_CSR) {
		for (size_t p = ds->row_ptr[i]; p < ds->row_ptr[i + 1]; p++) {
			const double v = ds->val[p];
			double *restrict gj = G + (size_t)ds->col[p] * K;

			for (size_t k = 0; k < K; k++)
				gj[k] += v * r[k];
		}
		return;
	}
	for (size_t j = 0; j < ds->d; j++) {
		const double v = ds->x[i * ds->d + j];
		double *restrict gj = G + j * K;

		for (size_t k = 0; k < K; k++)
			gj[k] += v * r[k];
	}
}

/* Ask for the cache line holding p (a hint: no effect on results). */
static inline void
kern_prefetch(const void *p)
{
#if defined(__GNUC__)
	__builtin_prefetch(p, 0, 0);
#else
	(void)p;
#endif
}

/* Ask for the cache line holding p into L2 (prefetcht2 on x86: it takes
 * no L1 fill buffer, so a burst of them does not stall the loads). */
static inline void
kern_prefetch_l2(const void *p)
{
#if defined(__GNUC__)
	__builtin_prefetch(p, 0, 1);
#else
	(void)p;
#endif
}

/* Ask for row i's bytes ahead of use (a hint: no effect on results). */
static inline void
data_row_prefetch(const struct dataset *ds, size_t i)
{
#if defined(__GNUC__)
	if (ds->layout == DATA_CSR) {
		size_t b = ds->row_ptr[i], e = ds->row_ptr[i + 1];

		for (size_t p = b; p < e; p += 64 / sizeof(double))
			__builtin_prefetch(ds->val + p, 0, 0);
		for (size_t p = b; p < e; p += 64 / sizeof(uint32_t))
			__builtin_prefetch(ds->col + p, 0, 0);
		return;
	}
	for (size_t j = 0; j < ds->d; j += 64 / sizeof(double))
		__builtin_prefetch(ds->x + i * ds->d + j, 0, 0);
	__builtin_prefetch(ds->x + i * ds->d + ds->d - 1, 0, 0);
#else
	(void)ds;
	(void)i;
#endif
}

#endif /* ALGORITHMS_KERNELS_H */
