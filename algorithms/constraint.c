/*
 * constraint.c - the feasible sets' names, radii and exact Euclidean
 * projections.
 *
 * l2 ball: scale by radius / ||x||_2 when outside.  Box: clamp each
 * coordinate.  Simplex {x >= 0 : sum x = s}: x_j <- max(x_j - theta, 0) with
 * theta the unique level that makes the sum s; the l1 ball of radius r is
 * the same on |x| (with the signs put back) when ||x||_1 > r, and the
 * identity otherwise.  theta comes from the sort-based method of J. Duchi,
 * S. Shalev-Shwartz, Y. Singer, T. Chandra, "Efficient projections onto the
 * l1-ball for learning in high dimensions", ICML 2008 (Fig. 1): with u the
 * values sorted in decreasing order and rho the largest j such that
 * u_j > (u_1 + ... + u_j - s) / j, theta = (u_1 + ... + u_rho - s) / rho.
 * O(d log d) with qsort on the caller's d-double scratch; no allocation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "util.h"

static const char *const kind_names[CONSTRAINT__COUNT] = {
	[CONSTRAINT_L2_BALL] = "l2_ball",
	[CONSTRAINT_L1_BALL] = "l1_ball",
	[CONSTRAINT_SIMPLEX] = "simplex",
	[CONSTRAINT_BOX] = "box",
};

const char *
constraint_kind_name(enum constraint_kind k)
{
	if ((unsigned)k >= ARRAY_SIZE(kind_names))
		return NULL;
	return kind_names[k];
}

int
constraint_kind_from_name(const char *name)
{
	if (name == NULL)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(kind_names); i++)
		if (strcmp(kind_names[i], name) == 0)
			return (int)i;
	return -1;
}

double
constraint_l2_radius(const struct constraint *c, size_t d)
{
	switch (c->kind) {
	case CONSTRAINT_L2_BALL:
	case CONSTRAINT_L1_BALL: /* the vertices radius * (+-e_j) are the farthest points */
	case CONSTRAINT_SIMPLEX: /* so are the vertices scale * e_j */
		return c->radius;
	case CONSTRAINT_BOX:
		return sqrt((double)d) * fmax(fabs(c->lo), fabs(c->hi));
	case CONSTRAINT__COUNT:
		break;
	}
	return NAN;
}

double
constraint_l1_radius(const struct constraint *c, size_t d)
{
	switch (c->kind) {
	case CONSTRAINT_L2_BALL: /* ||x||_1 <= sqrt(d) ||x||_2, equal on (1, .., 1) */
		return sqrt((double)d) * c->radius;
	case CONSTRAINT_L1_BALL:
	case CONSTRAINT_SIMPLEX:
		return c->radius;
	case CONSTRAINT_BOX:
		return (double)d * fmax(fabs(c->lo), fabs(c->hi));
	case CONSTRAINT__COUNT:
		break;
	}
	return NAN;
}

/* qsort comparator: decreasing order. */
static int
cmp_desc(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a < b) - (a > b);
}

/*
 * The threshold theta of the projection of the d values u (scratch,
 * reordered here) onto {v >= 0 : sum v = s}: the projection is
 * max(u_j - theta, 0).  s > 0.
 */
static double
simplex_threshold(double *u, size_t d, double s)
{
	double cum = 0.0, theta = 0.0;

	qsort(u, d, sizeof(*u), cmp_desc);
	for (size_t j = 0; j < d; j++) {
		double t;

		cum += u[j];
		t = (cum - s) / (double)(j + 1);
		/* u is decreasing, so the condition holds on a prefix of j. */
		if (u[j] > t)
			theta = t;
		else
			break;
	}
	return theta;
}

static void
project_l2_ball(double r, double *x, size_t d)
{
	double ss = 0.0, norm;

	for (size_t j = 0; j < d; j++)
		ss += x[j] * x[j];
	norm = sqrt(ss);
	if (norm > r) {
		double f = r / norm;

		for (size_t j = 0; j < d; j++)
			x[j] *= f;
	}
}

static void
project_simplex(double s, double *x, size_t d, double *scratch)
{
	double theta;

	if (d == 0)
		return;
	if (!(s > 0.0)) { /* the set is {0} (or empty): 0 is the only sensible answer */
		memset(x, 0, d * sizeof(*x));
		return;
	}
	memcpy(scratch, x, d * sizeof(*x));
	theta = simplex_threshold(scratch, d, s);
	for (size_t j = 0; j < d; j++)
		x[j] = fmax(x[j] - theta, 0.0);
}

static void
project_l1_ball(double r, double *x, size_t d, double *scratch)
{
	double l1 = 0.0, theta;

	for (size_t j = 0; j < d; j++)
		l1 += fabs(x[j]);
	if (l1 <= r)
		return;
	if (!(r > 0.0)) {
		memset(x, 0, d * sizeof(*x));
		return;
	}
	for (size_t j = 0; j < d; j++)
		scratch[j] = fabs(x[j]);
	theta = simplex_threshold(scratch, d, r);
	for (size_t j = 0; j < d; j++) {
		double a = fmax(fabs(x[j]) - theta, 0.0);

		x[j] = copysign(a, x[j]);
	}
}

static void
project_box(double lo, double hi, double *x, size_t d)
{
	for (size_t j = 0; j < d; j++) {
		if (x[j] < lo)
			x[j] = lo;
		else if (x[j] > hi)
			x[j] = hi;
	}
}

void
constraint_project(const struct constraint *c, double *x, size_t d, double *scratch)
{
	switch (c->kind) {
	case CONSTRAINT_L2_BALL:
		project_l2_ball(c->radius, x, d);
		return;
	case CONSTRAINT_L1_BALL:
		project_l1_ball(c->radius, x, d, scratch);
		return;
	case CONSTRAINT_SIMPLEX:
		project_simplex(c->radius, x, d, scratch);
		return;
	case CONSTRAINT_BOX:
		project_box(c->lo, c->hi, x, d);
		return;
	case CONSTRAINT__COUNT:
		break;
	}
}
