/*
 * zeroth_order/zo.c - see zo.h.
 */
#include <math.h>
#include <string.h>

#include "rng_gauss.h"
#include "zo.h"

unsigned
zo_bitlength(uint64_t t)
{
	unsigned n = 0;

	while (t != 0) {
		n++;
		t >>= 1;
	}
	return n;
}

double
zo_sigma_exact(unsigned long T, double s_g, double s_d, double rho)
{
	double lam = (double)zo_bitlength(T);

	if (T <= 1)
		return s_g / rho;
	return sqrt(fmax(lam * s_g * s_g, (lam - 1.0) * s_d * s_d)) / rho;
}

unsigned long
zo_rounds(double d, double L, double gd, double fstar, double rho, double M, double p2, int use_min,
	  unsigned long tmax)
{
	double A = fstar + L * gd;
	double t1 = pow(sqrt(d) * L * gd * M / A, 2.0 / 3.0);
	double t2 = pow(d * sqrt(d) * L * gd * M / (A * rho), p2);
	double t = use_min ? fmin(t1, t2) : fmax(t1, t2);

	if (tmax < 2)
		return 0;
	if (!(t >= 2.0))
		return 2;
	if (t >= (double)tmax)
		return tmax;
	return (unsigned long)floor(t);
}

unsigned
zo_tree_nodes(uint64_t t, uint64_t *a, uint64_t *b)
{
	unsigned n = 0;
	uint64_t k = 0;

	for (int bit = 63; bit >= 0; bit--)
		if (t & ((uint64_t)1 << bit)) {
			a[n] = k + 1;
			k += (uint64_t)1 << bit;
			b[n] = k;
			n++;
		}
	return n;
}

void
zo_tree_reset(struct zo_tree *t)
{
	t->c = 0;
	t->depth = 1;
	t->idx[0] = 0;
	memset(t->vec, 0, t->d * sizeof(*t->vec));
}

/* NODE(c) = NODE(c & (c - 1)) + {(c - lowbit(c) + 1, c)}, and c & (c - 1)
 * is on the stack of prefixes of c - 1 (docs/algorithms/zeroth-order.md). */
const double *
zo_tree_push(struct zo_tree *t, const double *xi)
{
	uint64_t c = ++t->c, p = c & (c - 1);
	const double *top;
	double *v;

	while (t->depth > 1 && t->idx[t->depth - 1] != p)
		t->depth--;
	top = t->vec + (size_t)(t->depth - 1) * t->d;
	v = t->vec + (size_t)t->depth * t->d;
	for (size_t j = 0; j < t->d; j++)
		v[j] = top[j] + xi[j];
	t->idx[t->depth++] = c;
	return v;
}

/* f(x + s u) for record i, p scratch. */
static double
eval_at(struct zo_eval *z, size_t i, const double *x, double s)
{
	for (size_t j = 0; j < z->dim; j++)
		z->p[j] = x[j] + s * z->u[j];
	return objective_value(z->o, z->ds, i, z->p);
}

/* clip(v, c); non-finite differences are the constant 0 (docs/algorithms/zeroth-order.md). */
static double
clip(double v, double c)
{
	if (!isfinite(v))
		return 0.0;
	return fmax(-c, fmin(c, v));
}

void
zo_grad_record(struct zo_eval *z, size_t i, const double *x, size_t ndirs, double *acc)
{
	const double scale = (double)z->dim / (2.0 * z->delta) / (double)ndirs;

	for (size_t k = 0; k < ndirs; k++) {
		double df;

		rng_sphere(z->rng, z->u, z->dim);
		df = eval_at(z, i, x, z->delta) - eval_at(z, i, x, -z->delta);
		df = clip(df, 2.0 * z->L * z->delta);
		for (size_t j = 0; j < z->dim; j++)
			acc[j] += scale * df * z->u[j];
	}
}

void
zo_diff_record(struct zo_eval *z, size_t i, const double *x, const double *y, double rmax,
	       double *acc)
{
	const double scale = 1.0 / z->delta;
	double r = 0.0;

	for (size_t j = 0; j < z->dim; j++)
		r = hypot(r, x[j] - y[j]);
	r = fmin(r, rmax);
	for (size_t k = 0; k < z->dim; k++) {
		double df;

		rng_sphere(z->rng, z->u, z->dim);
		df = eval_at(z, i, x, z->delta);
		df -= eval_at(z, i, y, z->delta);
		df = clip(df, z->L * r);
		for (size_t j = 0; j < z->dim; j++)
			acc[j] += scale * df * z->u[j];
	}
}
