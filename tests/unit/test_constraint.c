/*
 * test_constraint.c - unit tests of the feasible sets (constraint.c) and
 * the row bound of the declared feature bounds (data.c).  The objectives
 * and their constants are tested in test_objective.c.
 *
 * Projections are checked on random small cases against independent slow
 * computations (bisection on the soft-threshold level for l1 ball and
 * simplex, nested bisections on the KKT system for the lp ball), by the
 * variational inequality <x - p, y - p> <= 0 for random and extreme
 * feasible y, for feasibility and for idempotence; in d = 2 against a fine
 * grid of the set, and the lp ball in d = 2..5 against a derivative-free
 * search over its boundary that knows nothing of the KKT conditions.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "data.h"
#include "privacy/noise.h"
#include "rng.h"
#include "vec_helpers.h"

#define MAX_D 24

static double
norm1(const double *a, size_t d)
{
	double s = 0.0;

	for (size_t j = 0; j < d; j++)
		s += fabs(a[j]);
	return s;
}

static double
sum(const double *a, size_t d)
{
	double s = 0.0;

	for (size_t j = 0; j < d; j++)
		s += a[j];
	return s;
}

/* A random constraint of kind k with high-entropy parameters. */
static struct constraint
random_set(struct rng *r, enum constraint_kind k)
{
	struct constraint c = { .kind = k };

	c.radius = 0.2385 + 3.0 * rng_uniform(r);
	c.lo = -2.0 * rng_uniform(r) - 0.01;
	c.hi = c.lo + 0.05 + 3.0 * rng_uniform(r);
	/* p in [1.01, 2], log-uniformly close to 1, and sometimes exactly 2 */
	c.p = rng_below(r, 8) == 0 ? 2.0 : 1.0 + pow(10.0, -2.0 * rng_uniform(r));
	return c;
}

/* A random point of the set; every fourth one an extreme point. */
static void
random_feasible(struct rng *r, const struct constraint *c, double *y, size_t d)
{
	bool vertex = rng_below(r, 4) == 0;
	size_t v = (size_t)rng_below(r, d);
	double s;

	switch (c->kind) {
	case CONSTRAINT_LP_BALL:
		for (size_t j = 0; j < d; j++)
			y[j] = vertex ? (j == v) : gauss(r);
		s = c->radius * (vertex ? 1.0 : pow(rng_uniform(r), 1.0 / (double)d)) /
		    normp(y, d, c->p);
		for (size_t j = 0; j < d; j++)
			y[j] *= s;
		break;
	case CONSTRAINT_L2_BALL:
		for (size_t j = 0; j < d; j++)
			y[j] = gauss(r);
		s = sqrt(dot(y, y, d));
		s = c->radius * (vertex ? 1.0 : pow(rng_uniform(r), 1.0 / (double)d)) / s;
		for (size_t j = 0; j < d; j++)
			y[j] *= s;
		break;
	case CONSTRAINT_L1_BALL:
	case CONSTRAINT_SIMPLEX:
		for (size_t j = 0; j < d; j++)
			y[j] = vertex ? (j == v) : -log(1.0 - rng_uniform(r));
		s = c->radius / sum(y, d);
		if (c->kind == CONSTRAINT_L1_BALL && !vertex)
			s *= rng_uniform(r);
		for (size_t j = 0; j < d; j++) {
			y[j] *= s;
			if (c->kind == CONSTRAINT_L1_BALL && rng_below(r, 2))
				y[j] = -y[j];
		}
		break;
	case CONSTRAINT_BOX:
		for (size_t j = 0; j < d; j++)
			y[j] = vertex ? (rng_below(r, 2) ? c->lo : c->hi)
				      : c->lo + (c->hi - c->lo) * rng_uniform(r);
		break;
	case CONSTRAINT_POLYTOPE: /* a vertex list: tests/unit/test_polytope.c */
	case CONSTRAINT__COUNT:   /* every kind is listed: -Wswitch names a new one */
		ck_abort_msg("unknown kind");
	}
}

static bool
feasible(const struct constraint *c, const double *p, size_t d, double tol)
{
	switch (c->kind) {
	case CONSTRAINT_LP_BALL:
		return normp(p, d, c->p) <= c->radius * (1.0 + tol);
	case CONSTRAINT_L2_BALL:
		return sqrt(dot(p, p, d)) <= c->radius * (1.0 + tol);
	case CONSTRAINT_L1_BALL:
		return norm1(p, d) <= c->radius * (1.0 + tol);
	case CONSTRAINT_SIMPLEX:
		for (size_t j = 0; j < d; j++)
			if (p[j] < 0.0)
				return false;
		return fabs(sum(p, d) - c->radius) <= tol * c->radius;
	case CONSTRAINT_BOX:
		for (size_t j = 0; j < d; j++)
			if (p[j] < c->lo || p[j] > c->hi)
				return false;
		return true;
	case CONSTRAINT_POLYTOPE: /* a vertex list: tests/unit/test_polytope.c */
	case CONSTRAINT__COUNT:   /* every kind is listed: -Wswitch names a new one */
		break;
	}
	return false;
}

/* Slow reference: theta with sum max(v_j - theta, 0) = s by bisection. */
static double
threshold_bisect(const double *v, size_t d, double s)
{
	double lo = INFINITY, hi = -INFINITY;

	for (size_t j = 0; j < d; j++) {
		lo = fmin(lo, v[j]);
		hi = fmax(hi, v[j]);
	}
	lo -= s; /* there every term is >= s / ... and the sum >= s */
	for (int it = 0; it < 300; it++) {
		double mid = 0.5 * (lo + hi), f = 0.0;

		for (size_t j = 0; j < d; j++)
			f += fmax(v[j] - mid, 0.0);
		if (f > s)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/* Slow reference: the root u in [0, a] of u + k u^{p-1} = a by bisection. */
static double
lp_scalar_bisect(double a, double k, double p)
{
	double lo = 0.0, hi = a;

	for (int it = 0; it < 64; it++) {
		double mid = 0.5 * (lo + hi);

		if (mid + k * pow(mid, p - 1.0) > a)
			hi = mid;
		else
			lo = mid;
	}
	return 0.5 * (lo + hi);
}

/* Slow reference for the lp ball, straight from the KKT conditions
 * u_j + lambda p u_j^{p-1} = |x_j|, sum u_j^p = r^p: bisection on log
 * lambda over a bracket found by doubling, bisection inside. */
static void
lp_reference(double r, double pp, const double *x, double *out, size_t d)
{
	double lo = -60.0, hi = 1.0, u[MAX_D];

	if (normp(x, d, pp) <= r) {
		memcpy(out, x, d * sizeof(*x));
		return;
	}
	for (;;) { /* grow hi until the constraint holds */
		double s = 0.0;

		for (size_t j = 0; j < d; j++)
			s += pow(lp_scalar_bisect(fabs(x[j]), exp(hi) * pp, pp), pp);
		if (s <= pow(r, pp))
			break;
		hi *= 2.0;
	}
	for (int it = 0; it < 64; it++) {
		double mid = 0.5 * (lo + hi), s = 0.0;

		for (size_t j = 0; j < d; j++) {
			u[j] = lp_scalar_bisect(fabs(x[j]), exp(mid) * pp, pp);
			s += pow(u[j], pp);
		}
		if (s > pow(r, pp))
			lo = mid;
		else
			hi = mid;
	}
	for (size_t j = 0; j < d; j++)
		out[j] = copysign(lp_scalar_bisect(fabs(x[j]), exp(hi) * pp, pp), x[j]);
}

/* The projection by the slow, independent route. */
static void
reference_projection(const struct constraint *c, const double *x, double *p, size_t d)
{
	double a[MAX_D], t, nrm;

	switch (c->kind) {
	case CONSTRAINT_LP_BALL:
		lp_reference(c->radius, c->p, x, p, d);
		return;
	case CONSTRAINT_L2_BALL:
		nrm = sqrt(dot(x, x, d));
		for (size_t j = 0; j < d; j++)
			p[j] = nrm <= c->radius ? x[j] : x[j] * c->radius / nrm;
		return;
	case CONSTRAINT_L1_BALL:
		if (norm1(x, d) <= c->radius) {
			memcpy(p, x, d * sizeof(*x));
			return;
		}
		for (size_t j = 0; j < d; j++)
			a[j] = fabs(x[j]);
		t = threshold_bisect(a, d, c->radius);
		for (size_t j = 0; j < d; j++)
			p[j] = copysign(fmax(a[j] - t, 0.0), x[j]);
		return;
	case CONSTRAINT_SIMPLEX:
		t = threshold_bisect(x, d, c->radius);
		for (size_t j = 0; j < d; j++)
			p[j] = fmax(x[j] - t, 0.0);
		return;
	case CONSTRAINT_BOX:
		for (size_t j = 0; j < d; j++)
			p[j] = fmin(fmax(x[j], c->lo), c->hi);
		return;
	case CONSTRAINT_POLYTOPE: /* a vertex list: tests/unit/test_polytope.c */
	case CONSTRAINT__COUNT:   /* every kind is listed: -Wswitch names a new one */
		ck_abort_msg("unknown kind");
	}
}

START_TEST(test_names)
{
	for (int k = 0; k < CONSTRAINT__COUNT; k++) {
		const char *name = constraint_kind_name((enum constraint_kind)k);

		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(constraint_kind_from_name(name), k);
	}
	ck_assert_str_eq(constraint_kind_name(CONSTRAINT_L2_BALL), "l2_ball");
	ck_assert_str_eq(constraint_kind_name(CONSTRAINT_L1_BALL), "l1_ball");
	ck_assert_str_eq(constraint_kind_name(CONSTRAINT_SIMPLEX), "simplex");
	ck_assert_str_eq(constraint_kind_name(CONSTRAINT_BOX), "box");
	ck_assert_str_eq(constraint_kind_name(CONSTRAINT_LP_BALL), "lp_ball");
	ck_assert_str_eq(constraint_kind_name(CONSTRAINT_POLYTOPE), "polytope");
	/* the existing kinds keep their numbers (stored specs, bitmasks) */
	ck_assert_int_eq(CONSTRAINT_L2_BALL, 0);
	ck_assert_int_eq(CONSTRAINT_L1_BALL, 1);
	ck_assert_int_eq(CONSTRAINT_SIMPLEX, 2);
	ck_assert_int_eq(CONSTRAINT_BOX, 3);
	ck_assert_int_eq(CONSTRAINT_LP_BALL, 4);
	ck_assert_int_eq(CONSTRAINT_POLYTOPE, 5);
	ck_assert_int_eq(CONSTRAINT__COUNT, 6);
	ck_assert_ptr_null(constraint_kind_name(CONSTRAINT__COUNT));
	ck_assert_int_eq(constraint_kind_from_name("L2_ball"), -1);
	ck_assert_int_eq(constraint_kind_from_name(""), -1);
	ck_assert_int_eq(constraint_kind_from_name(NULL), -1);
}
END_TEST

START_TEST(test_l2_radius)
{
	struct constraint c = { .kind = CONSTRAINT_L2_BALL, .radius = 2.5212 };

	ck_assert(constraint_l2_radius(&c, 7) == 2.5212);
	c.kind = CONSTRAINT_L1_BALL;
	ck_assert(constraint_l2_radius(&c, 7) == 2.5212);
	c.kind = CONSTRAINT_SIMPLEX;
	ck_assert(constraint_l2_radius(&c, 7) == 2.5212);
	c.kind = CONSTRAINT_BOX;
	c.lo = -0.5;
	c.hi = 3.0;
	ck_assert_double_eq_tol(constraint_l2_radius(&c, 4), 6.0, 1e-15);
	c.lo = -4.0;
	ck_assert_double_eq_tol(constraint_l2_radius(&c, 9), 12.0, 1e-15);
}
END_TEST

/* The lp ball (p <= 2) lies in the l2 ball of the same radius and touches
 * it at radius * e_j: its l2 radius is the radius in every dimension. */
START_TEST(test_l2_radius_lp_ball)
{
	struct constraint c = { .kind = CONSTRAINT_LP_BALL, .radius = 1.7, .p = 1.25 };
	struct rng r;
	double y[MAX_D];

	rng_splitmix_init(&r, 0x12ad);
	for (size_t d = 1; d <= MAX_D; d++) {
		double r2 = constraint_l2_radius(&c, d), worst = 0.0;

		ck_assert_double_eq_tol(r2, 1.7, 1e-15);
		for (int k = 0; k < 200; k++) {
			random_feasible(&r, &c, y, d);
			worst = fmax(worst, sqrt(dot(y, y, d)));
		}
		ck_assert_msg(worst <= r2 * (1.0 + 1e-12), "d=%zu: %.17g > %.17g", d, worst, r2);
		memset(y, 0, sizeof(y));
		y[d - 1] = -1.7;
		ck_assert(constraint_contains(&c, y, d, 1e-15, NULL));
		ck_assert_double_eq_tol(sqrt(dot(y, y, d)), r2, 1e-15);
	}
}
END_TEST

/* d = 2: the projection is at least as close as every point of a fine grid
 * of the set (the segment {(t, s - t)} for the simplex), and the closest
 * grid point is within the grid's resolution. */
START_TEST(test_projection_grid_d2)
{
	enum constraint_kind kind = (enum constraint_kind)_i;
	const int n = 500;
	struct rng r;
	double scratch[2];

	if (kind == CONSTRAINT_POLYTOPE)
		return; /* a vertex list, not random_set(): tests/unit/test_polytope.c */
	rng_splitmix_init(&r, 0x6e1d + (uint64_t)_i);
	for (int trial = 0; trial < 20; trial++) {
		struct constraint c = random_set(&r, kind);
		double v[2] = { 3.0 * gauss(&r), 3.0 * gauss(&r) }, x[2], best = INFINITY, dx, h,
		       ext;

		memcpy(x, v, sizeof(v));
		constraint_project(&c, x, 2, scratch);
		dx = hypot(x[0] - v[0], x[1] - v[1]);
		ext = kind == CONSTRAINT_BOX ? fmax(fabs(c.lo), fabs(c.hi)) : c.radius;
		h = 2.0 * ext / n;
		if (kind == CONSTRAINT_SIMPLEX) {
			h = c.radius / n;
			for (int i = 0; i <= n; i++) {
				double t = c.radius * i / n;

				best = fmin(best, hypot(t - v[0], c.radius - t - v[1]));
			}
		} else {
			for (int i = 0; i <= n; i++)
				for (int k = 0; k <= n; k++) {
					double y[2] = { -ext + h * i, -ext + h * k };

					if (feasible(&c, y, 2, 0.0))
						best = fmin(best, hypot(y[0] - v[0], y[1] - v[1]));
				}
		}
		ck_assert_msg(dx <= best + 1e-12, "%s: projection at %.17g, a grid point at %.17g",
			      constraint_kind_name(kind), dx, best);
		ck_assert_msg(dx >= best - 1.5 * h, "%s: projection at %.17g, grid best %.17g",
			      constraint_kind_name(kind), dx, best);
	}
}
END_TEST

/* f(y) = ||r y / ||y||_p - v||^2: distance from v of a boundary point of
 * the lp ball, parametrised by any non-zero direction y. */
static double
boundary_dist2(const double *y, const double *v, size_t d, double r, double p)
{
	double n = normp(y, d, p), s = 0.0;

	for (size_t j = 0; j < d; j++)
		s += (r * y[j] / n - v[j]) * (r * y[j] / n - v[j]);
	return s;
}

/* lp ball, d = 2..5, v outside: the projection lies on the boundary;
 * minimise the distance over the boundary by compass search (derivative-
 * free, step halving from several starts) and compare. */
START_TEST(test_lp_projection_brute_force)
{
	struct rng r;
	double scratch[8];

	rng_splitmix_init(&r, 0x1b5);
	for (size_t d = 2; d <= 5; d++)
		for (int trial = 0; trial < 15; trial++) {
			struct constraint c = random_set(&r, CONSTRAINT_LP_BALL);
			double v[5], x[5], best = INFINITY, best_all = INFINITY, bx[5], u[5], dx2;

			for (size_t j = 0; j < d; j++)
				v[j] = 2.0 * c.radius * gauss(&r);
			if (normp(v, d, c.p) <= c.radius)
				continue;
			memcpy(x, v, sizeof(v));
			constraint_project(&c, x, d, scratch);
			/* starts: v, a random direction, and x itself with a small
			 * first step (a local probe: it can only go downhill) */
			for (int start = 0; start < 3; start++) {
				double y[5], f, step = start == 2 ? 1e-4 : 0.5;
				int budget = 200000;

				for (size_t j = 0; j < d; j++)
					y[j] = start == 0 ? v[j] : start == 1 ? gauss(&r) : x[j];
				f = boundary_dist2(y, v, d, c.radius, c.p);
				while (step > 1e-11 && budget-- > 0) {
					bool moved = false;

					for (size_t j = 0; j < d; j++)
						for (int sg = -1; sg <= 1; sg += 2) {
							double keep = y[j], g;

							y[j] += sg * step * normp(y, d, c.p);
							g = boundary_dist2(y, v, d, c.radius, c.p);
							if (g < f) {
								f = g;
								moved = true;
							} else {
								y[j] = keep;
							}
						}
					if (!moved)
						step *= 0.5;
				}
				best_all = fmin(best_all, f);
				if (start < 2 && f < best) {
					best = f;
					for (size_t j = 0; j < d; j++)
						bx[j] = c.radius * y[j] / normp(y, d, c.p);
				}
			}
			ck_assert_msg(feasible(&c, x, d, 1e-14), "d=%zu p=%g: infeasible", d, c.p);
			ck_assert_msg(sqrt(dot(x, x, d) - 2.0 * dot(x, v, d) + dot(v, v, d)) <=
					      sqrt(best_all) + 1e-12,
				      "d=%zu p=%g: search found a closer point", d, c.p);
			/* ||y - v||^2 >= ||x - v||^2 + ||y - x||^2 for every feasible y
			 * (the projection's variational inequality): the search's point
			 * is as close to x as its excess distance allows. */
			dx2 = dot(x, x, d) - 2.0 * dot(x, v, d) + dot(v, v, d);
			for (size_t j = 0; j < d; j++)
				u[j] = x[j] - bx[j];
			ck_assert_msg(dot(u, u, d) <= best - dx2 + 1e-12 * (1.0 + best),
				      "d=%zu p=%g: search point %.3g from the projection", d, c.p,
				      sqrt(dot(u, u, d)));
		}
}
END_TEST

/* p close to 1 and extreme scales: finite, feasible, on the boundary. */
START_TEST(test_lp_projection_extremes)
{
	/* not static: log() is no constant expression (clang refuses it) */
	const double ps[] = { 1.0 + 1e-6, 1.001, 1.0 + 1.0 / log(1e6), 1.5, 2.0 };
	static const double scales[] = { 1e-200, 1e-8, 1.0, 1e8, 1e200 };
	struct rng r;

	rng_splitmix_init(&r, 0xe7);
	for (size_t pi = 0; pi < 5; pi++)
		for (size_t si = 0; si < 5; si++)
			for (size_t sj = 0; sj < 5; sj++) {
				struct constraint c = { .kind = CONSTRAINT_LP_BALL,
							.radius = scales[sj],
							.p = ps[pi] };
				double x[MAX_D], v[MAX_D];

				for (size_t j = 0; j < MAX_D; j++)
					v[j] = x[j] =
						scales[si] * gauss(&r) * (j % 3 == 0 ? 1e-3 : 1.0);
				constraint_project(&c, x, MAX_D, NULL);
				for (size_t j = 0; j < MAX_D; j++) {
					ck_assert(isfinite(x[j]));
					ck_assert(x[j] * v[j] >= 0.0 && fabs(x[j]) <= fabs(v[j]));
				}
				ck_assert_msg(constraint_contains(&c, x, MAX_D, 1e-14, NULL),
					      "p=%g v~%g r=%g: infeasible", c.p, scales[si],
					      c.radius);
				if (!constraint_contains(&c, v, MAX_D, 0.0, NULL))
					ck_assert_msg(
						constraint_contains(&c, x, MAX_D, 0.0, NULL) &&
							!constraint_contains(&c, x, MAX_D, -1e-12,
									     NULL),
						"p=%g v~%g r=%g: not on the boundary", c.p,
						scales[si], c.radius);
			}
}
END_TEST

/* Projections of random points of several scales, every kind. */
START_TEST(test_projection_random)
{
	static const size_t dims[] = { 1, 2, 3, 5, 8, 13, MAX_D };
	enum constraint_kind kind = (enum constraint_kind)_i;
	struct rng r;
	double x[MAX_D], p[MAX_D], q[MAX_D], ref[MAX_D], y[MAX_D], scratch[MAX_D];

	if (kind == CONSTRAINT_POLYTOPE)
		return; /* a vertex list, not random_set(): tests/unit/test_polytope.c */
	rng_splitmix_init(&r, 0xc0ffee + (uint64_t)_i);
	for (size_t di = 0; di < sizeof(dims) / sizeof(dims[0]); di++) {
		size_t d = dims[di];

		for (int trial = 0; trial < (kind == CONSTRAINT_LP_BALL ? 40 : 300); trial++) {
			struct constraint c = random_set(&r, kind);
			double scale = pow(10.0, 2.0 * rng_uniform(&r) - 1.0);

			for (size_t j = 0; j < d; j++)
				x[j] = scale * gauss(&r);
			if (trial % 7 == 0) /* ties: the sort must not care */
				for (size_t j = 1; j < d; j += 2)
					x[j] = x[j - 1];
			memcpy(p, x, sizeof(x));
			constraint_project(&c, p, d, scratch);

			ck_assert_msg(feasible(&c, p, d, 1e-12), "%s d=%zu: infeasible",
				      constraint_kind_name(kind), d);
			reference_projection(&c, x, ref, d);
			for (size_t j = 0; j < d; j++)
				ck_assert_msg(fabs(p[j] - ref[j]) <= 1e-10 * (1.0 + fabs(ref[j])),
					      "%s d=%zu j=%zu: %.17g vs reference %.17g",
					      constraint_kind_name(kind), d, j, p[j], ref[j]);

			/* Idempotent. */
			memcpy(q, p, sizeof(p));
			constraint_project(&c, q, d, scratch);
			for (size_t j = 0; j < d; j++)
				ck_assert_msg(fabs(q[j] - p[j]) <= 1e-12 * (1.0 + fabs(p[j])),
					      "%s: not idempotent", constraint_kind_name(kind));

			/* Optimal: <x - p, y - p> <= 0 for every feasible y. */
			for (int k = 0; k < 60; k++) {
				double xp[MAX_D], yp[MAX_D], v;

				random_feasible(&r, &c, y, d);
				for (size_t j = 0; j < d; j++) {
					xp[j] = x[j] - p[j];
					yp[j] = y[j] - p[j];
				}
				v = dot(xp, yp, d);
				ck_assert_msg(
					v <= 1e-12 * (1.0 + sqrt(dot(xp, xp, d) * dot(yp, yp, d))),
					"%s d=%zu: <x - p, y - p> = %g", constraint_kind_name(kind),
					d, v);
			}
		}
	}
}
END_TEST

START_TEST(test_projection_fixed_cases)
{
	double scratch[4];
	struct constraint l1 = { .kind = CONSTRAINT_L1_BALL, .radius = 1.0 };
	struct constraint sx = { .kind = CONSTRAINT_SIMPLEX, .radius = 1.0 };
	struct constraint l2 = { .kind = CONSTRAINT_L2_BALL, .radius = 1.0 };
	double a[4] = { 3.0, -1.0, 0.5, 0.0 };
	double b[4] = { 0.2, 0.2, 0.2, 0.2 };
	double c[4] = { 0.3, -0.4, 0.0, 0.0 };
	double f[1] = { -7.0 };

	/* l1: theta = 2, only the first survives. */
	constraint_project(&l1, a, 4, scratch);
	ck_assert(a[0] == 1.0 && a[1] == 0.0 && a[2] == 0.0 && a[3] == 0.0);
	/* simplex: a feasible-sum shift by -0.05. */
	constraint_project(&sx, b, 4, scratch);
	for (int j = 0; j < 4; j++)
		ck_assert_double_eq_tol(b[j], 0.25, 1e-15);
	/* inside the l1 and l2 balls: untouched. */
	constraint_project(&l1, c, 4, scratch);
	ck_assert(c[0] == 0.3 && c[1] == -0.4);
	constraint_project(&l2, c, 4, NULL);
	ck_assert(c[0] == 0.3 && c[1] == -0.4);
	/* d = 1 simplex is the point {scale}. */
	constraint_project(&sx, f, 1, scratch);
	ck_assert(f[0] == 1.0);
}
END_TEST

/* ---- bounds ---- */

START_TEST(test_row_bound)
{
	struct bounds b = { .feature_linf = NAN, .feature_l2 = 0.8, .label = NAN };
	struct err e = { 0 };
	double r = -1.0;

	ck_assert_int_eq(bounds_row_l2(&b, 9, &r, &e), ERR_OK);
	ck_assert(r == 0.8);
	b.feature_linf = 0.1; /* sqrt(9) * 0.1 = 0.3 < 0.8 */
	ck_assert_int_eq(bounds_row_l2(&b, 9, &r, &e), ERR_OK);
	ck_assert_double_eq_tol(r, 0.3, 1e-16);
	b.feature_l2 = NAN;
	ck_assert_int_eq(bounds_row_l2(&b, 16, &r, &e), ERR_OK);
	ck_assert_double_eq_tol(r, 0.4, 1e-16);

	b.feature_linf = NAN;
	r = -1.0;
	ck_assert_int_eq(bounds_row_l2(&b, 9, &r, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "bounds.feature_l2");
	ck_assert(r == -1.0);
	b.feature_linf = -1.0;
	ck_assert_int_eq(bounds_row_l2(&b, 9, &r, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "bounds.feature_linf");
	b.feature_linf = NAN;
	b.feature_l2 = INFINITY;
	ck_assert_int_eq(bounds_row_l2(&b, 9, &r, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "bounds.feature_l2");
	ck_assert(r == -1.0);
}
END_TEST

static Suite *
constraint_suite(void)
{
	Suite *s = suite_create("constraint");
	TCase *tp = tcase_create("projection");
	TCase *to = tcase_create("bounds");

	tcase_set_timeout(tp, 120); /* >= 10x the whole program's CPU (tests/README.md) */
	tcase_add_test(tp, test_names);
	tcase_add_test(tp, test_l2_radius);
	tcase_add_test(tp, test_l2_radius_lp_ball);
	tcase_add_loop_test(tp, test_projection_grid_d2, 0, CONSTRAINT__COUNT);
	tcase_add_test(tp, test_lp_projection_brute_force);
	tcase_add_test(tp, test_lp_projection_extremes);
	tcase_add_loop_test(tp, test_projection_random, 0, CONSTRAINT__COUNT);
	tcase_add_test(tp, test_projection_fixed_cases);
	suite_add_tcase(s, tp);

	tcase_set_timeout(to, 120);
	tcase_add_test(to, test_row_bound);
	suite_add_tcase(s, to);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(constraint_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
