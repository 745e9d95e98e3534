/*
 * rng_gauss.c - the ziggurat normal sampler (not privacy noise; see
 * rng_gauss.h).
 *
 * The density f(x) = exp(-x^2 / 2) on x >= 0 is covered by 256 strips of
 * equal area V (rng_gauss_table.h, generated to 60 digits by
 * gen_rng_gauss_table.py): strip i >= 1 is the rectangle [0, x_i] x
 * [f(x_i), f(x_{i+1})]; strip 0 is the base [0, R] x [0, f(R)] plus the
 * tail beyond R, drawn as the rectangle [0, x_0) with x_0 = V / f(R).  A
 * draw picks a strip i and a signed uniform u, sets z = u x_i and accepts
 * at once when |z| < x_{i+1} (under the curve whatever the height); else
 * strip 0 goes to the tail and the others test a uniform height in the
 * wedge against f(z).
 *
 * One 64-bit word gives both the strip (its low 8 bits) and u (its top 53
 * bits): disjoint bits, so the strip and the position are independent (the
 * original 32-bit version reused bits and had a measurable defect; J. A.
 * Doornik, "An Improved Ziggurat Method to Generate Normal Random
 * Samples", 2005).  Tail: G. Marsaglia, "Generating a variable from the
 * tail of the normal distribution", Technometrics 6, 1964: with a =
 * -log(U1) / R and b = -log(U2), accept R + a when 2b > a^2.
 */
#include <math.h>

#include "rng_gauss.h"
#include "rng_gauss_table.h"

_Static_assert(ZIG_LAYERS == 256, "the strip index is the low 8 bits of a word");

/* |z| beyond R, with the sign of neg; uniforms in (0, 1] so no log(0). */
static double
tail(struct rng *r, int neg)
{
	double a, b;

	do {
		a = -log(1.0 - rng_uniform(r)) / ZIG_R;
		b = -log(1.0 - rng_uniform(r));
		if (!rng_ok(r))
			return 0.0;
	} while (b + b <= a * a);
	return neg ? -(ZIG_R + a) : ZIG_R + a;
}

double
rng_normal(struct rng *r)
{
	for (;;) {
		uint64_t w = rng_u64(r);
		unsigned i = (unsigned)(w & 0xffu);
		double u = (double)(w >> 11) * 0x1.0p-52 - 1.0; /* [-1, 1), 53 bits */
		double z = u * zig_x[i];

		if (!rng_ok(r))
			return 0.0;
		if (fabs(z) < zig_x[i + 1])
			return z;
		if (i == 0)
			return tail(r, u < 0.0);
		if (zig_f[i] + rng_uniform(r) * (zig_f[i + 1] - zig_f[i]) < exp(-0.5 * z * z))
			return z;
	}
}

void
rng_normal_vector(struct rng *r, double *x, size_t d)
{
	for (size_t j = 0; j < d; j++)
		x[j] = rng_normal(r);
}

void
rng_sphere(struct rng *r, double *x, size_t d)
{
	double s;

	if (d == 0)
		return;
	do {
		s = 0.0;
		for (size_t j = 0; j < d; j++) {
			x[j] = rng_normal(r);
			s += x[j] * x[j];
		}
		if (!rng_ok(r)) {
			for (size_t j = 0; j < d; j++)
				x[j] = 0.0;
			return;
		}
	} while (!(s > 0.0)); /* all zeros: probability ~2^-53 per coordinate */
	s = sqrt(s);
	for (size_t j = 0; j < d; j++)
		x[j] /= s;
}
