/*
 * polar_gaussian.c - Marsaglia's polar method, test-only (see
 * polar_gaussian.h).  Moved unchanged from algorithms/privacy/noise.c,
 * where it was noise_add_gaussian().
 *
 * G. Marsaglia, T. A. Bray, "A convenient method for generating normal
 * variables", SIAM Review 6, 1964.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "polar_gaussian.h"

/* ---------------------------------------------------------------------------
 * Continuous Gaussian (the sampler dp_sgd used before the lattice
 * Gaussian).  Marsaglia's polar method: for (u, v) uniform on the unit disc,
 * with s = u^2 + v^2,
 *
 *	u sqrt(-2 log(s) / s),  v sqrt(-2 log(s) / s)
 *
 * are two independent N(0, 1); both are used.  u and v come from 53-bit
 * uniforms of the injected generator; a pair is accepted with probability
 * pi/4.  No allocation, no trigonometry.  Not safe against attacks on the
 * low-order bits (Mironov 2012; Jin et al. 2022): the service uses
 * noise_lattice_gaussian() instead.
 */

/* Uniforms are drawn in blocks: one rng_bytes() call for up to 64 draws
 * instead of one per draw (the per-call cost dominated the sampler).  A
 * block is sized to what the remaining pairs should need, so small calls
 * do not waste the generator. */
#define BLOCK 64

struct uniforms {
	uint64_t w[BLOCK];
	size_t pos;        /* next unused word */
	size_t len;        /* words filled */
	size_t pairs_left; /* pairs still to draw in this call, for sizing */
};

/* Uniform on [-1, 1) with 53 random bits. */
static double
next_signed(struct rng *r, struct uniforms *u)
{
	if (u->pos == u->len) {
		/* 2 words per attempt, 4/pi attempts per pair: 2.55 per pair */
		size_t want = 2 * u->pairs_left + u->pairs_left / 2 + 2;

		u->len = want < BLOCK ? want : BLOCK;
		rng_bytes(r, u->w, u->len * sizeof(u->w[0]));
		u->pos = 0;
	}
	return (double)(u->w[u->pos++] >> 11) * 0x1.0p-52 - 1.0;
}

/* Two independent standard normals.  A failed generator returns zeros
 * for ever, which the rejection loop would never accept: stop then (the
 * driver fails the run on rng_ok() after this step). */
static void
polar_pair(struct rng *r, struct uniforms *blk, double *ret_a, double *ret_b)
{
	double u, v, s;

	do {
		u = next_signed(r, blk);
		v = next_signed(r, blk);
		s = u * u + v * v;
		if (!rng_ok(r)) {
			*ret_a = *ret_b = 0.0;
			return;
		}
	} while (s >= 1.0 || s == 0.0);
	s = sqrt(-2.0 * log(s) / s);
	*ret_a = u * s;
	*ret_b = v * s;
}

void
polar_add_gaussian(struct rng *r, double sigma, double *x, size_t d)
{
	struct uniforms blk;
	size_t i;
	double a, b;

	blk.pos = blk.len = 0;
	blk.pairs_left = (d + 1) / 2;
	for (i = 0; i + 1 < d; i += 2) {
		polar_pair(r, &blk, &a, &b);
		blk.pairs_left--;
		x[i] += sigma * a;
		x[i + 1] += sigma * b;
	}
	if (i < d) {
		polar_pair(r, &blk, &a, &b);
		x[i] += sigma * a; /* b is dropped: one coordinate left */
	}
}
