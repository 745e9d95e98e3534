/*
 * test_lmo.c - linear minimisation oracles, validation, membership and
 * products of sets (constraint.c).
 *
 * The LMO of a polytope is checked against enumeration of its vertices
 * (2d signed vertices of the l1 ball, d of the simplex, 2^d of the box),
 * including the documented tie-breaking; the LMO of the l2 and lp balls
 * against Hoelder's value -r ||g||_q computed here and against many
 * sampled boundary points (a fine grid of the boundary in d = 2).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "privacy/noise.h"
#include "rng.h"
#include "vec_helpers.h"

#define MAX_D 8

/* Vertex k of a polytope in a fixed order, false past the last one.
 * l1 ball: +r e_0, -r e_0, +r e_1, ...; simplex: s e_0, s e_1, ...;
 * box: binary counting, bit j clear = lo. */
static bool
vertex(const struct constraint *c, size_t d, size_t k, double *v)
{
	memset(v, 0, d * sizeof(*v));
	switch (c->kind) {
	case CONSTRAINT_L1_BALL:
		if (k >= 2 * d)
			return false;
		v[k / 2] = k % 2 ? -c->radius : c->radius;
		return true;
	case CONSTRAINT_SIMPLEX:
		if (k >= d)
			return false;
		v[k] = c->radius;
		return true;
	case CONSTRAINT_BOX:
		if (k >= ((size_t)1 << d))
			return false;
		for (size_t j = 0; j < d; j++)
			v[j] = (k >> j) & 1 ? c->hi : c->lo;
		return true;
	case CONSTRAINT_POLYTOPE: /* its own list: tests/unit/test_polytope.c */
	case CONSTRAINT_L2_BALL:
	case CONSTRAINT_LP_BALL:
	case CONSTRAINT__COUNT:
		ck_abort_msg("not a polytope of a fixed vertex order here");
	}
	return false;
}

/* Polytopes: the LMO value is the least vertex value, and the point is the
 * first vertex (in the order above) attaining it.  Integer g in -2..2
 * makes ties frequent and every product exact (radius 1.5, lo -0.75, hi
 * 1.25 are dyadic). */
START_TEST(test_lmo_polytope_vertices)
{
	static const enum constraint_kind kinds[] = { CONSTRAINT_L1_BALL, CONSTRAINT_SIMPLEX,
						      CONSTRAINT_BOX };
	struct constraint c = { .kind = kinds[_i], .radius = 1.5, .lo = -0.75, .hi = 1.25 };
	struct rng r;
	double g[MAX_D], s[MAX_D], v[MAX_D];

	rng_splitmix_init(&r, 0x1a0 + (uint64_t)_i);
	for (size_t d = 1; d <= MAX_D; d++)
		for (int trial = 0; trial < 200; trial++) {
			double best = INFINITY, val;
			size_t kb = 0;

			for (size_t j = 0; j < d; j++)
				g[j] = trial % 2 ? (double)rng_below(&r, 5) - 2.0 : gauss(&r);
			if (trial == 0)
				memset(g, 0, sizeof(g));
			for (size_t k = 0; vertex(&c, d, k, v); k++)
				if (dot(g, v, d) < best) {
					best = dot(g, v, d);
					kb = k;
				}
			val = constraint_lmo(&c, g, d, s);
			ck_assert_msg(val == dot(g, s, d), "%s: returned value is not <g, s>",
				      constraint_kind_name(c.kind));
			ck_assert_msg(val == best, "%s d=%zu: %.17g, best vertex %.17g",
				      constraint_kind_name(c.kind), d, val, best);
			vertex(&c, d, kb, v);
			for (size_t j = 0; j < d; j++)
				ck_assert_msg(s[j] == v[j], "%s d=%zu: not the first best vertex",
					      constraint_kind_name(c.kind), d);
		}
}
END_TEST

/* l2 and lp balls: value -r ||g||_q (Hoelder), the point on the boundary,
 * and no sampled boundary point does better. */
START_TEST(test_lmo_balls)
{
	struct rng r;
	double g[MAX_D], s[MAX_D], y[MAX_D];

	rng_splitmix_init(&r, 0x1b0);
	for (size_t d = 1; d <= MAX_D; d++)
		for (int trial = 0; trial < 60; trial++) {
			struct constraint c = { .kind = trial % 3 ? CONSTRAINT_LP_BALL
								  : CONSTRAINT_L2_BALL,
						.radius = 0.3 + 2.0 * rng_uniform(&r),
						.p = 1.0 + pow(10.0, -2.0 * rng_uniform(&r)) };
			double p = c.kind == CONSTRAINT_L2_BALL ? 2.0 : c.p, q = p / (p - 1.0);
			double val, want;

			for (size_t j = 0; j < d; j++)
				g[j] = gauss(&r);
			val = constraint_lmo(&c, g, d, s);
			want = -c.radius * normp(g, d, q);
			ck_assert_msg(fabs(val - want) <= 1e-12 * fabs(want),
				      "p=%g d=%zu: value %.17g, Hoelder %.17g", p, d, val, want);
			ck_assert_double_eq_tol(val, dot(g, s, d), 1e-13);
			ck_assert_msg(fabs(normp(s, d, p) - c.radius) <= 1e-12 * c.radius,
				      "p=%g d=%zu: ||s||_p = %.17g, not the radius", p, d,
				      normp(s, d, p));
			for (int k = 0; k < 2000; k++) {
				double n;

				for (size_t j = 0; j < d; j++)
					y[j] = gauss(&r);
				n = normp(y, d, p);
				for (size_t j = 0; j < d; j++)
					y[j] *= c.radius / n;
				ck_assert_msg(dot(g, y, d) >= val - 1e-12 * fabs(val),
					      "p=%g d=%zu: a boundary point beats the LMO", p, d);
			}
		}
}
END_TEST

/* d = 2: a fine grid of the boundary angle never beats the LMO, and the
 * best grid value is within the grid's resolution of it. */
START_TEST(test_lmo_ball_grid_d2)
{
	static const double ps[] = { 1.05, 1.3, 1.7, 2.0 };
	struct rng r;

	rng_splitmix_init(&r, 0x1c0);
	for (size_t pi = 0; pi < 4; pi++)
		for (int trial = 0; trial < 20; trial++) {
			struct constraint c = { .kind = CONSTRAINT_LP_BALL,
						.radius = 1.3,
						.p = ps[pi] };
			double g[2] = { gauss(&r), gauss(&r) }, s[2], best = INFINITY, val;

			val = constraint_lmo(&c, g, 2, s);
			for (int k = 0; k < 200000; k++) {
				double a = 6.283185307179586 * k / 200000,
				       y[2] = { cos(a), sin(a) };
				double n = normp(y, 2, c.p);

				best = fmin(best, c.radius * dot(g, y, 2) / n);
			}
			ck_assert_msg(val <= best + 1e-12, "p=%g: grid %.17g beats LMO %.17g", c.p,
				      best, val);
			ck_assert_msg(val >= best - 1e-6, "p=%g: LMO %.17g far below grid %.17g",
				      c.p, val, best);
		}
}
END_TEST

/* g = 0: the centre of a ball; p near 1 and extreme scales: finite, on
 * the boundary, with the right value. */
START_TEST(test_lmo_ball_edges)
{
	/* not static: log() is no constant expression (clang refuses it) */
	const double ps[] = { 1.0 + 1e-6, 1.0 + 1.0 / log(1e6), 1.5, 2.0 };
	static const double scales[] = { 1e-300, 1e-5, 1.0, 1e5, 1e300 };
	struct constraint c = { .kind = CONSTRAINT_LP_BALL, .radius = 2.0, .p = 1.5 };
	double g[MAX_D] = { 0 }, s[MAX_D];
	struct rng r;

	ck_assert(constraint_lmo(&c, g, MAX_D, s) == 0.0);
	for (size_t j = 0; j < MAX_D; j++)
		ck_assert(s[j] == 0.0);
	c.kind = CONSTRAINT_L2_BALL;
	ck_assert(constraint_lmo(&c, g, MAX_D, s) == 0.0);
	for (size_t j = 0; j < MAX_D; j++)
		ck_assert(s[j] == 0.0);

	rng_splitmix_init(&r, 0x1d0);
	c.kind = CONSTRAINT_LP_BALL;
	for (size_t pi = 0; pi < 4; pi++)
		for (size_t si = 0; si < 5; si++) {
			double val;
			size_t jmax = 0;

			c.p = ps[pi];
			for (size_t j = 0; j < MAX_D; j++) {
				g[j] = scales[si] * gauss(&r);
				if (fabs(g[j]) > fabs(g[jmax]))
					jmax = j;
			}
			val = constraint_lmo(&c, g, MAX_D, s);
			ck_assert(isfinite(val));
			for (size_t j = 0; j < MAX_D; j++)
				ck_assert(isfinite(s[j]) && s[j] * g[j] <= 0.0);
			ck_assert(constraint_contains(&c, s, MAX_D, 1e-13, NULL));
			ck_assert(!constraint_contains(&c, s, MAX_D, -1e-13, NULL));
			/* -r ||g||_inf >= value >= -r ||g||_1 (q between 1 and inf) */
			ck_assert(val <= -c.radius * fabs(g[jmax]) * (1.0 - 1e-13));
			if (c.p < 1.001) /* q huge: the l1-ball vertex, as p -> 1 */
				ck_assert_double_eq_tol(s[jmax], -copysign(c.radius, g[jmax]),
							1e-5);
		}
}
END_TEST

START_TEST(test_validate)
{
	struct constraint c = { .kind = CONSTRAINT_LP_BALL, .radius = 1.0, .p = 1.5 };
	struct err e;

	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", &e), ERR_OK);
	c.p = 1.0;
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.p");
	ck_assert(strstr(e.msg, "constraints.x.p") != NULL);
	c.p = 2.0;
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", &e), ERR_OK);
	c.p = 2.5;
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", &e), ERR_INVALID);
	c.p = NAN;
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", NULL), ERR_INVALID);
	c.p = 1.5;
	c.radius = 0.0;
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.radius");
	c.radius = INFINITY;
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", &e), ERR_INVALID);
	ck_assert_int_eq(constraint_validate(&c, 0, "constraints.x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x");

	c.kind = CONSTRAINT_L2_BALL; /* p is ignored */
	c.p = 0.0;
	c.radius = 1.0;
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", &e), ERR_OK);
	c.radius = -1.0;
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.radius");
	c.kind = CONSTRAINT_L1_BALL;
	c.radius = NAN;
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.y", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.y.radius");
	c.kind = CONSTRAINT_SIMPLEX;
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.y", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.y.scale");
	c.radius = 2.0;
	ck_assert_int_eq(constraint_validate(&c, 1, "constraints.y", &e), ERR_OK);

	c.kind = CONSTRAINT_BOX;
	c.lo = -1.0;
	c.hi = -1.0; /* a point: usable */
	ck_assert_int_eq(constraint_validate(&c, 2, "x", &e), ERR_OK);
	c.hi = -1.5;
	ck_assert_int_eq(constraint_validate(&c, 2, "x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "x.hi");
	c.hi = INFINITY;
	ck_assert_int_eq(constraint_validate(&c, 2, "x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "x.hi");
	c.hi = 1.0;
	c.lo = -INFINITY;
	ck_assert_int_eq(constraint_validate(&c, 2, "x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "x.lo");
	c.kind = CONSTRAINT__COUNT;
	ck_assert_int_eq(constraint_validate(&c, 2, "x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "x.kind");
}
END_TEST

START_TEST(test_contains)
{
	struct constraint lp = { .kind = CONSTRAINT_LP_BALL, .radius = 1.0, .p = 1.5 };
	struct constraint sx = { .kind = CONSTRAINT_SIMPLEX, .radius = 2.0 };
	struct constraint bx = { .kind = CONSTRAINT_BOX, .lo = -1.0, .hi = 2.0 };
	double a[2] = { 0.5, 0.5 }, b[2] = { 1.0, 0.0 }, s[3] = { 1.0, 1.0, 0.0 };
	double t[3] = { 2.0 + 1e-9, -1e-9, 0.0 };

	/* ||(0.5, 0.5)||_1.5 = 0.5 * 2^{2/3} = 0.794 */
	ck_assert(constraint_contains(&lp, a, 2, 0.0, NULL));
	ck_assert(constraint_contains(&lp, b, 2, 0.0, NULL));
	a[0] = a[1] = 0.63; /* 0.63 * 2^{2/3} = 1.0001 */
	ck_assert(!constraint_contains(&lp, a, 2, 0.0, NULL));
	ck_assert(constraint_contains(&lp, a, 2, 1e-3, NULL));
	ck_assert(constraint_contains(&sx, s, 3, 0.0, NULL));
	s[1] = 0.5; /* sum 1.5 < 2: inside the l1 ball of radius 2, not on the simplex */
	ck_assert(!constraint_contains(&sx, s, 3, 1e-3, NULL));
	s[1] = 1.0;
	ck_assert(!constraint_contains(&sx, t, 3, 0.0, NULL));
	ck_assert(!constraint_contains(&sx, t, 3, 1e-10, NULL));
	ck_assert(constraint_contains(&sx, t, 3, 1e-9, NULL));
	ck_assert(constraint_contains(&bx, t + 1, 2, 0.0, NULL));
	t[0] = 2.0 + 1e-9;
	ck_assert(!constraint_contains(&bx, t, 1, 0.0, NULL));
	ck_assert(constraint_contains(&bx, t, 1, 1e-9, NULL));
}
END_TEST

/* ---- products ---- */

static struct constraint_product
two_player(size_t dx, size_t dy)
{
	struct constraint_product cp = { .nparts = 2, .dim = dx + dy };

	cp.part[0] = (struct constraint_part){
		.c = { .kind = CONSTRAINT_L1_BALL, .radius = 1.5 },
		.offset = 0,
		.size = dx,
		.field = "constraints.x",
	};
	cp.part[1] = (struct constraint_part){
		.c = { .kind = CONSTRAINT_SIMPLEX, .radius = 1.0 },
		.offset = dx,
		.size = dy,
		.field = "constraints.y",
	};
	return cp;
}

START_TEST(test_product_validate)
{
	struct constraint_product cp = two_player(3, 4);
	struct err e;

	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_OK);
	cp.dim = 8; /* a gap at the end */
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints");
	cp.dim = 6; /* the last part runs past the end */
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.y");
	cp = two_player(3, 4);
	cp.part[1].offset = 2; /* overlap */
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_INVALID);
	cp.part[1].offset = 4; /* hole */
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_INVALID);
	cp = two_player(0, 4); /* empty part */
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x");
	cp = two_player(3, 4);
	cp.part[1].c.radius = -1.0;
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.y.scale");
	cp.part[1].field = NULL;
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.scale");
	cp = two_player(3, 4);
	cp.nparts = 0;
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_INVALID);
	cp.nparts = CONSTRAINT_MAX_PARTS + 1;
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", NULL), ERR_INVALID);
	cp = two_player(3, 4); /* offset + size overflowing size_t */
	cp.part[1].size = (size_t)-1;
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_INVALID);
}
END_TEST

/* Blockwise: the product's projection and LMO equal the parts' on their
 * blocks; the LMO value is the sum; membership is the conjunction. */
START_TEST(test_product_blockwise)
{
	struct constraint_product cp = two_player(3, 4);
	struct rng r;
	double x[7], px[7], g[7], s[7], scratch[7], want[7];

	cp.nparts = 3;
	cp.part[1].size = 2;
	cp.part[2] = (struct constraint_part){
		.c = { .kind = CONSTRAINT_LP_BALL, .radius = 0.7, .p = 1.3 },
		.offset = 5,
		.size = 2,
	};
	ck_assert_int_eq(constraint_product_validate(&cp, "constraints", NULL), ERR_OK);
	rng_splitmix_init(&r, 0x9a);
	for (int trial = 0; trial < 200; trial++) {
		double val, sum = 0.0;

		for (size_t j = 0; j < 7; j++) {
			x[j] = 3.0 * gauss(&r);
			g[j] = gauss(&r);
		}
		memcpy(px, x, sizeof(x));
		constraint_product_project(&cp, px, scratch);
		memcpy(want, x, sizeof(x));
		for (size_t i = 0; i < 3; i++) {
			const struct constraint_part *pt = &cp.part[i];

			constraint_project(&pt->c, want + pt->offset, pt->size, scratch);
			sum += constraint_lmo(&pt->c, g + pt->offset, pt->size, s + pt->offset);
			ck_assert(constraint_contains(&pt->c, px + pt->offset, pt->size, 1e-12,
						      NULL));
		}
		for (size_t j = 0; j < 7; j++)
			ck_assert(px[j] == want[j]);
		memcpy(want, s, sizeof(s));
		val = constraint_product_lmo(&cp, g, s);
		ck_assert(val == sum);
		for (size_t j = 0; j < 7; j++)
			ck_assert(s[j] == want[j]);
		ck_assert(constraint_product_contains(&cp, px, 1e-12, NULL));
		ck_assert(constraint_product_contains(&cp, s, 1e-12, NULL));
		ck_assert(!constraint_product_contains(&cp, x, 0.0, NULL)); /* x is far outside */
	}
}
END_TEST

static Suite *
lmo_suite(void)
{
	Suite *s = suite_create("lmo");
	TCase *tl = tcase_create("lmo");
	TCase *tv = tcase_create("validate");
	TCase *tp = tcase_create("product");

	tcase_set_timeout(tl, 60);
	tcase_add_loop_test(tl, test_lmo_polytope_vertices, 0, 3);
	tcase_add_test(tl, test_lmo_balls);
	tcase_add_test(tl, test_lmo_ball_grid_d2);
	tcase_add_test(tl, test_lmo_ball_edges);
	suite_add_tcase(s, tl);
	tcase_add_test(tv, test_validate);
	tcase_add_test(tv, test_contains);
	suite_add_tcase(s, tv);
	tcase_add_test(tp, test_product_validate);
	tcase_add_test(tp, test_product_blockwise);
	suite_add_tcase(s, tp);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(lmo_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
