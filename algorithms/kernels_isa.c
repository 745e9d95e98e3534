/*
 * kernels_isa.c - the dense block kernels of the one-margin gradient pass
 * (kernels.h, struct kern_ops), compiled three times: for the x86-64
 * baseline (SSE2), for AVX2 and for AVX-512F, chosen at run time by
 * kern_ops_best() from the CPU's features (function multiversioning by
 * hand: GCC's and clang's target attribute on each copy, the C library's
 * CPU model through __builtin_cpu_supports).  The container image is
 * built without -march and runs on any x86-64; a machine with AVX2 or
 * AVX-512 gets the wider code.  Other architectures get the one portable
 * copy.
 *
 * Same bits on every path.  The copies are one template (KERN_ISA_BODY)
 * over an eight-lane vector type: lane l of a reduction sums the products
 * at j = l mod 8 in increasing j; the lanes are combined as
 * ((s0 + s2) + (s4 + s6)) + ((s1 + s3) + (s5 + s7)) and the scalar tail
 * (j >= 8 floor(d / 8)) is added last, which is the order of kern_dot()
 * and kern_dot_sqnorm() in kernels.h.  No copy uses fused multiply-add:
 * a product is rounded before it is added, as in the baseline, where x86-64
 * has no FMA (clang would contract a * b + c on an FMA target: the pragma
 * below forbids it; gcc in ISO C mode, -std=c11, does not contract).  So
 * the SSE2, AVX2 and AVX-512 paths return identical doubles
 * (tests/unit/test_kernels.c forces each path and compares bit for bit),
 * and a run's result does not depend on the machine it ran on.  FMA was
 * left out because the pass is bound by memory, not by arithmetic:
 * bench/kernels.c measures the pass at the streaming-read rate without it.
 */
#include <stddef.h>
#include <string.h>

#include "kernels.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#if defined(__GNUC__)
typedef double kern_v8 __attribute__((vector_size(64)));

/* No helper takes or returns a kern_v8: its calling convention differs
 * between the targets (gcc and clang warn, -Wpsabi), so loads, stores and
 * the lane sum are macros inside each copy. */
#define KV8_LOAD(v, p)  memcpy(&(v), (p), sizeof(kern_v8)) /* unaligned */
#define KV8_STORE(p, v) memcpy((p), &(v), sizeof(kern_v8))
#define KV8_HSUM(s)                                                                                \
	(((s)[0] + (s)[2]) + ((s)[4] + (s)[6])) + (((s)[1] + (s)[3]) + ((s)[5] + (s)[7]))

/* The template: NAME##_dots and NAME##_axpys, with ATTR on each. */
#define KERN_ISA_BODY(NAME, ATTR)                                                                  \
	ATTR static void NAME##_dots(const double *const *rows, size_t nb,                         \
				     const double *restrict w, size_t d, double *restrict z,       \
				     double *restrict nn)                                          \
	{                                                                                          \
		const size_t d8 = d - d % KERN_LANES;                                              \
                                                                                                   \
		for (size_t t = 0; t < nb; t++) {                                                  \
			const double *restrict x = rows[t];                                        \
			kern_v8 s = { 0 }, q = { 0 }, xv, wv;                                      \
			double u = 0.0, v = 0.0;                                                   \
                                                                                                   \
			if (nn != NULL) {                                                          \
				for (size_t j = 0; j < d8; j += KERN_LANES) {                      \
					KV8_LOAD(xv, x + j);                                       \
					KV8_LOAD(wv, w + j);                                       \
					s += wv * xv;                                              \
					q += xv * xv;                                              \
				}                                                                  \
				for (size_t j = d8; j < d; j++) {                                  \
					u += w[j] * x[j];                                          \
					v += x[j] * x[j];                                          \
				}                                                                  \
				nn[t] = KV8_HSUM(q) + v;                                           \
			} else {                                                                   \
				for (size_t j = 0; j < d8; j += KERN_LANES) {                      \
					KV8_LOAD(xv, x + j);                                       \
					KV8_LOAD(wv, w + j);                                       \
					s += xv * wv;                                              \
				}                                                                  \
				for (size_t j = d8; j < d; j++)                                    \
					u += x[j] * w[j];                                          \
			}                                                                          \
			z[t] = KV8_HSUM(s) + u;                                                    \
		}                                                                                  \
	}                                                                                          \
                                                                                                   \
	ATTR static void NAME##_axpys(const double *const *rows, const double *restrict c,         \
				      size_t nb, double *restrict g, size_t d)                     \
	{                                                                                          \
		const size_t d8 = d - d % KERN_LANES;                                              \
                                                                                                   \
		for (size_t j = 0; j < d8; j += KERN_LANES) {                                      \
			kern_v8 gv, xv;                                                            \
                                                                                                   \
			KV8_LOAD(gv, g + j);                                                       \
			for (size_t t = 0; t < nb; t++) {                                          \
				KV8_LOAD(xv, rows[t] + j);                                         \
				gv += c[t] * xv;                                                   \
			}                                                                          \
			KV8_STORE(g + j, gv);                                                      \
		}                                                                                  \
		for (size_t j = d8; j < d; j++) {                                                  \
			double gj = g[j];                                                          \
                                                                                                   \
			for (size_t t = 0; t < nb; t++)                                            \
				gj += c[t] * rows[t][j];                                           \
			g[j] = gj;                                                                 \
		}                                                                                  \
	}

KERN_ISA_BODY(kern_base, )

#if defined(__x86_64__)
/* The wider copies: gcc and clang both accept these target names. */
KERN_ISA_BODY(kern_avx2, __attribute__((target("avx2"))))
KERN_ISA_BODY(kern_avx512, __attribute__((target("avx512f"))))
#endif

#else /* not GNU C: the portable loops, same order */

static double
kern_base_hsum(const double *s)
{
	return ((s[0] + s[2]) + (s[4] + s[6])) + ((s[1] + s[3]) + (s[5] + s[7]));
}

static void
kern_base_dots(const double *const *rows, size_t nb, const double *restrict w, size_t d,
	       double *restrict z, double *restrict nn)
{
	for (size_t t = 0; t < nb; t++) {
		double s[KERN_LANES] = { 0 }, q[KERN_LANES] = { 0 }, u = 0.0, v = 0.0;
		const double *restrict x = rows[t];
		size_t j = 0;

		for (; j + KERN_LANES <= d; j += KERN_LANES)
			for (size_t l = 0; l < KERN_LANES; l++) {
				s[l] += w[j + l] * x[j + l];
				q[l] += x[j + l] * x[j + l];
			}
		for (; j < d; j++) {
			u += w[j] * x[j];
			v += x[j] * x[j];
		}
		z[t] = kern_base_hsum(s) + u;
		if (nn != NULL)
			nn[t] = kern_base_hsum(q) + v;
	}
}

static void
kern_base_axpys(const double *const *rows, const double *restrict c, size_t nb, double *restrict g,
		size_t d)
{
	for (size_t j = 0; j < d; j++) {
		double gj = g[j];

		for (size_t t = 0; t < nb; t++)
			gj += c[t] * rows[t][j];
		g[j] = gj;
	}
}
#endif

static const struct kern_ops kern_table[KERN_ISA__COUNT] = {
	[KERN_ISA_BASELINE] = { "baseline", kern_base_dots, kern_base_axpys },
#if defined(__GNUC__) && defined(__x86_64__)
	[KERN_ISA_AVX2] = { "avx2", kern_avx2_dots, kern_avx2_axpys },
	[KERN_ISA_AVX512] = { "avx512f", kern_avx512_dots, kern_avx512_axpys },
#endif
};

const struct kern_ops *
kern_ops_for(enum kern_isa isa)
{
	if ((unsigned)isa >= KERN_ISA__COUNT || kern_table[isa].dots == NULL)
		return NULL;
#if defined(__GNUC__) && defined(__x86_64__)
	__builtin_cpu_init(); /* idempotent; needed before constructors have run */
	if (isa == KERN_ISA_AVX2 && !__builtin_cpu_supports("avx2"))
		return NULL;
	if (isa == KERN_ISA_AVX512 && !__builtin_cpu_supports("avx512f"))
		return NULL;
#endif
	return &kern_table[isa];
}

const struct kern_ops *
kern_ops_best(void)
{
	for (int isa = KERN_ISA__COUNT - 1; isa > KERN_ISA_BASELINE; isa--) {
		const struct kern_ops *k = kern_ops_for((enum kern_isa)isa);

		if (k != NULL)
			return k;
	}
	return &kern_table[KERN_ISA_BASELINE];
}
