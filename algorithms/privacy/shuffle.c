/*
 * shuffle.c - amplification by shuffling, FMT20's closed form (shuffle.h).
 */
#include <math.h>

#include "privacy/shuffle.h"

bool
shuffle_fmt_applies(double eps0, double p, double delta_s)
{
	if (!(p >= 2.0 && delta_s > 0.0 && delta_s < 1.0 && eps0 >= 0.0))
		return false;
	return eps0 <= log(p / (16.0 * log(4.0 / delta_s)));
}

double
shuffle_fmt_epsilon(double eps0, double p, double delta_s)
{
	double a, c, e1;

	if (!(eps0 > 0.0 && isfinite(eps0) && p >= 2.0 && delta_s > 0.0 && delta_s < 1.0))
		return NAN;
	a = 8.0 * sqrt(exp(eps0) * log(4.0 / delta_s) / p);
	c = 8.0 * exp(eps0) / p;
	e1 = log1p(a + c);
	return log1p(-expm1(-eps0) / (1.0 + exp(-eps0 - e1)) * (a + c));
}

double
shuffle_fmt_delta(double eps, double eps0, double p, double delta_s, double delta0)
{
	return delta_s + (exp(eps) + 1.0) * (1.0 + 0.5 * exp(-eps0)) * p * delta0;
}
