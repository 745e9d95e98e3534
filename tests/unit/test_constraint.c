/*
 * test_constraint.c - unit tests of the feasible sets (constraint.c) and
 * the row bound of the declared feature bounds (data.c).  The objectives
 * and their constants are tested in test_objective.c.
 *
 * Projections are checked on random small cases against independent slow
 * computations (bisection on the soft-threshold level for l1 ball and
 * simplex), by the variational inequality <x - p, y - p> <= 0 for random
 * and extreme feasible y, for feasibility and for idempotence.
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

#define MAX_D 24

static double
gauss(struct rng *r)
{
	double v = 0.0;

	noise_add_gaussian(r, 1.0, &v, 1);
	return v;
}

static double
dot(const double *a, const double *b, size_t d)
{
	double s = 0.0;

	for (size_t j = 0; j < d; j++)
		s += a[j] * b[j];
	return s;
}

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
	default:
		ck_abort_msg("unknown kind");
	}
}

static bool
feasible(const struct constraint *c, const double *p, size_t d, double tol)
{
	switch (c->kind) {
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
	default:
		return false;
	}
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

/* The projection by the slow, independent route. */
static void
reference_projection(const struct constraint *c, const double *x, double *p, size_t d)
{
	double a[MAX_D], t, nrm;

	switch (c->kind) {
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
	default:
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

/* Projections of random points of several scales, every kind. */
START_TEST(test_projection_random)
{
	static const size_t dims[] = { 1, 2, 3, 5, 8, 13, MAX_D };
	enum constraint_kind kind = (enum constraint_kind)_i;
	struct rng r;
	double x[MAX_D], p[MAX_D], q[MAX_D], ref[MAX_D], y[MAX_D], scratch[MAX_D];

	rng_splitmix_init(&r, 0xc0ffee + (uint64_t)_i);
	for (size_t di = 0; di < sizeof(dims) / sizeof(dims[0]); di++) {
		size_t d = dims[di];

		for (int trial = 0; trial < 300; trial++) {
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

	tcase_set_timeout(tp, 60);
	tcase_add_test(tp, test_names);
	tcase_add_test(tp, test_l2_radius);
	tcase_add_loop_test(tp, test_projection_random, 0, CONSTRAINT__COUNT);
	tcase_add_test(tp, test_projection_fixed_cases);
	suite_add_tcase(s, tp);

	tcase_set_timeout(to, 60);
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
