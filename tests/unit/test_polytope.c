/*
 * test_polytope.c - the polytope kind of set (a vertex list,
 * algorithms/constraint.c) and its vertex helpers (frank_wolfe/lmo.c).
 *
 * The projection (Wolfe's minimum-norm-point algorithm) is checked against
 * a brute force that knows nothing of Wolfe: in d <= 3 with m <= 7, the
 * nearest of the minimum-norm points of the affine hulls of every subset of
 * at most d + 1 vertices whose affine weights are all >= 0 (one of them is
 * the projection: it lies in the relative interior of a face spanned by
 * affinely independent vertices); in larger d by the optimality condition
 * <y - p, v_i - p> <= 0 for every vertex, with p in the polytope and the
 * projection idempotent.  Degenerate lists: repeated vertices, collinear
 * vertices, points inside, a point already inside.  The l1 ball's and the
 * simplex's vertex lists behave as those kinds: same radii, centre 0 and
 * R_c, projections, LMO points and the same log-weights bit for bit.  The
 * centre rule is checked against the five candidates recomputed here.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "frank_wolfe/lmo.h"
#include "rng.h"
#include "vec_helpers.h"

#define MAX_D  8
#define MAX_M  24
#define SCR    ((MAX_D + 3) * (MAX_D + 3) + 6 * (MAX_D + 3))
#define STORE  (MAX_M * MAX_D + 2 * MAX_D + MAX_M)
#define MAX_SZ (MAX_D + 2)

/* A polytope from the first m rows of v (copied into st). */
static struct constraint
make(const double *v, size_t m, size_t d, double *st)
{
	struct constraint c;
	struct err e = { 0 };

	ck_assert_uint_le(constraint_polytope_storage(m, d), STORE);
	memcpy(st, v, m * d * sizeof(*v));
	ck_assert_msg(constraint_polytope(&c, m, d, st, "constraints.x", &e) == ERR_OK, "%s",
		      e.msg);
	ck_assert_int_eq(constraint_validate(&c, d, "constraints.x", &e), ERR_OK);
	ck_assert_uint_le(constraint_project_scratch(&c, d), SCR);
	return c;
}

/* Solve the n x n system a z = b in place (partial pivoting); false when
 * singular. */
static bool
solve(double *a, double *b, size_t n)
{
	for (size_t c = 0; c < n; c++) {
		size_t p = c;

		for (size_t r = c + 1; r < n; r++)
			if (fabs(a[r * n + c]) > fabs(a[p * n + c]))
				p = r;
		if (fabs(a[p * n + c]) < 1e-12)
			return false;
		for (size_t k = 0; k < n; k++) {
			double t = a[c * n + k];

			a[c * n + k] = a[p * n + k];
			a[p * n + k] = t;
		}
		{
			double t = b[c];

			b[c] = b[p];
			b[p] = t;
		}
		for (size_t r = 0; r < n; r++) {
			double f;

			if (r == c)
				continue;
			f = a[r * n + c] / a[c * n + c];
			for (size_t k = 0; k < n; k++)
				a[r * n + k] -= f * a[c * n + k];
			b[r] -= f * b[c];
		}
	}
	for (size_t r = 0; r < n; r++)
		b[r] /= a[r * n + r];
	return true;
}

/* The brute-force projection of y onto conv(v_1..v_m) (m <= 12). */
static void
brute_projection(const double *v, size_t m, size_t d, const double *y, double *ret)
{
	double best = INFINITY;

	for (unsigned mask = 1; mask < (1u << m); mask++) {
		size_t idx[MAX_SZ], n = 0;
		double a[(MAX_SZ + 1) * (MAX_SZ + 1)], b[MAX_SZ + 1], q[MAX_D] = { 0 }, dist = 0.0;
		bool ok = true;

		if ((size_t)__builtin_popcount(mask) > d + 1)
			continue;
		for (size_t i = 0; i < m; i++)
			if (mask & (1u << i))
				idx[n++] = i;
		/* min ||sum a_i (v_i - y)||^2, sum a_i = 1 */
		for (size_t i = 0; i < n; i++) {
			for (size_t j = 0; j < n; j++) {
				double s = 0.0;

				for (size_t k = 0; k < d; k++)
					s += (v[idx[i] * d + k] - y[k]) *
					     (v[idx[j] * d + k] - y[k]);
				a[i * (n + 1) + j] = s;
			}
			a[i * (n + 1) + n] = 1.0;
			a[n * (n + 1) + i] = 1.0;
			b[i] = 0.0;
		}
		a[n * (n + 1) + n] = 0.0;
		b[n] = 1.0;
		if (!solve(a, b, n + 1))
			continue;
		for (size_t i = 0; i < n; i++)
			ok = ok && b[i] >= -1e-12;
		if (!ok)
			continue;
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < d; k++)
				q[k] += b[i] * v[idx[i] * d + k];
		for (size_t k = 0; k < d; k++)
			dist += (q[k] - y[k]) * (q[k] - y[k]);
		if (dist < best) {
			best = dist;
			memcpy(ret, q, d * sizeof(*q));
		}
	}
	ck_assert(isfinite(best));
}

/* max_i <y - p, v_i - p>. */
static double
kkt(const struct constraint *c, const double *y, const double *p, size_t d)
{
	double worst = -INFINITY;

	for (size_t i = 0; i < c->n_vertices; i++) {
		double s = 0.0;

		for (size_t k = 0; k < d; k++)
			s += (y[k] - p[k]) * (c->vertices[i * d + k] - p[k]);
		worst = fmax(worst, s);
	}
	return worst;
}

/* Random vertices with the degenerate shapes: 0 plain, 1 a repeated
 * vertex, 2 all on a line, 3 a point inside (a mean of two others). */
static void
random_vertices(struct rng *r, int shape, size_t m, size_t d, double *v)
{
	double a[MAX_D], b[MAX_D];

	rng_normal_vector(r, a, d);
	rng_normal_vector(r, b, d);
	for (size_t i = 0; i < m; i++) {
		if (shape == 2) {
			double t = 2.0 * rng_uniform(r) - 1.0;

			for (size_t k = 0; k < d; k++)
				v[i * d + k] = a[k] + t * b[k];
		} else {
			rng_normal_vector(r, v + i * d, d);
		}
	}
	if (shape == 1)
		memcpy(v + (m - 1) * d, v, d * sizeof(*v));
	if (shape == 3)
		for (size_t k = 0; k < d; k++)
			v[(m - 1) * d + k] = 0.5 * (v[k] + v[d + k]);
}

/* Points near the polytope, at its scale, and far away (where every
 * Gram entry is about scale^2 and the differences that matter are
 * smaller). */
static const double SCALES[4] = { 0.1, 1.0, 10.0, 1000.0 };

START_TEST(test_projection_brute_force)
{
	struct rng r;
	double v[MAX_M * MAX_D], st[STORE], scratch[SCR], y[MAX_D], p[MAX_D], q[MAX_D], ref[MAX_D];
	double worst_err = 0.0;

	rng_splitmix_init(&r, 0xb0f0);
	for (size_t d = 1; d <= 3; d++)
		for (size_t m = 2; m <= 7; m++)
			for (int shape = 0; shape < 4; shape++)
				for (int t = 0; t < 12; t++) {
					double scale = SCALES[t % 4], err = 0.0;
					struct constraint c;

					if ((shape == 1 || shape == 3) && m < 3)
						continue;
					random_vertices(&r, shape, m, d, v);
					if (shape == 2 && m == 2 && d == 1 && v[0] == v[1])
						continue;
					c = make(v, m, d, st);
					rng_normal_vector(&r, y, d);
					for (size_t k = 0; k < d; k++)
						y[k] *= scale;
					memcpy(p, y, sizeof(y));
					constraint_project(&c, p, d, scratch);
					brute_projection(v, m, d, y, ref);
					for (size_t k = 0; k < d; k++)
						err = fmax(err, fabs(p[k] - ref[k]));
					worst_err = fmax(worst_err, err);
					ck_assert_msg(err <= 1e-9 * (1.0 + scale),
						      "d=%zu m=%zu shape %d: |p - brute| = %g", d,
						      m, shape, err);
					ck_assert_msg(kkt(&c, y, p, d) <=
							      1e-12 * (1.0 + scale) * (1.0 + scale),
						      "d=%zu m=%zu: KKT %g", d, m,
						      kkt(&c, y, p, d));
					ck_assert(constraint_contains(&c, p, d, 1e-12, scratch));
					memcpy(q, p, sizeof(p));
					constraint_project(&c, q, d, scratch);
					for (size_t k = 0; k < d; k++)
						ck_assert_msg(
							fabs(q[k] - p[k]) <= 1e-12 * (1.0 + scale),
							"not idempotent: %g", fabs(q[k] - p[k]));
				}
	printf("largest |p - brute force| %.3g\n", worst_err);
}
END_TEST

/* Larger d: the optimality condition, membership and idempotence. */
START_TEST(test_projection_kkt)
{
	struct rng r;
	double v[MAX_M * MAX_D], st[STORE], scratch[SCR], y[MAX_D], p[MAX_D], q[MAX_D];
	double worst = -INFINITY;

	rng_splitmix_init(&r, 0x4b4b);
	for (size_t d = 4; d <= MAX_D; d++)
		for (size_t m = 2; m <= MAX_M; m += 3)
			for (int shape = 0; shape < 4; shape++)
				for (int t = 0; t < 12; t++) {
					double scale = SCALES[t % 4], g;
					struct constraint c;

					if ((shape == 1 || shape == 3) && m < 3)
						continue;
					random_vertices(&r, shape, m, d, v);
					c = make(v, m, d, st);
					rng_normal_vector(&r, y, d);
					for (size_t k = 0; k < d; k++)
						y[k] *= scale;
					memcpy(p, y, sizeof(y));
					constraint_project(&c, p, d, scratch);
					g = kkt(&c, y, p, d) / ((1.0 + scale) * (1.0 + scale));
					worst = fmax(worst, g);
					ck_assert_msg(g <= 1e-12, "d=%zu m=%zu shape %d: KKT %g", d,
						      m, shape, g);
					ck_assert(constraint_contains(&c, p, d, 1e-12, scratch));
					memcpy(q, p, sizeof(p));
					constraint_project(&c, q, d, scratch);
					for (size_t k = 0; k < d; k++)
						ck_assert_msg(fabs(q[k] - p[k]) <=
								      1e-12 * (1.0 + scale),
							      "d=%zu m=%zu: not idempotent: %g", d,
							      m, fabs(q[k] - p[k]));
				}
	printf("largest relative KKT violation %.3g\n", worst);
}
END_TEST

/* Closed forms: a point inside stays; a segment (repeated and collinear
 * vertices) clamps; far points land on the right vertex. */
START_TEST(test_projection_degenerate)
{
	/* the segment [(-1, 2, 0), (3, 2, 0)] listed with repeats and inner points */
	static const double seg[] = { 0, 2, 0, -1, 2, 0, 3, 2, 0, 1, 2, 0, 3, 2, 0, -1, 2, 0 };
	/* the unit square with its centre listed twice */
	static const double sq[] = { 0.5, 0.5, 0, 0, 1, 0, 0, 1, 1, 1, 0.5, 0.5 };
	double st[STORE], scratch[SCR], y[3], p[3];
	struct constraint c = make(seg, 6, 3, st);
	struct rng r;

	rng_splitmix_init(&r, 0xde9e);
	for (int t = 0; t < 200; t++) {
		double want;

		rng_normal_vector(&r, y, 3);
		y[0] *= 4.0;
		memcpy(p, y, sizeof(y));
		constraint_project(&c, p, 3, scratch);
		want = fmin(fmax(y[0], -1.0), 3.0);
		ck_assert_msg(fabs(p[0] - want) <= 1e-12 && fabs(p[1] - 2.0) <= 1e-12 &&
				      fabs(p[2]) <= 1e-12,
			      "segment: (%g %g %g) for x = %g", p[0], p[1], p[2], y[0]);
	}
	c = make(sq, 6, 2, st);
	for (int t = 0; t < 200; t++) {
		y[0] = 3.0 * rng_uniform(&r) - 1.0;
		y[1] = 3.0 * rng_uniform(&r) - 1.0;
		memcpy(p, y, sizeof(y));
		constraint_project(&c, p, 2, scratch);
		ck_assert(fabs(p[0] - fmin(fmax(y[0], 0.0), 1.0)) <= 1e-12);
		ck_assert(fabs(p[1] - fmin(fmax(y[1], 0.0), 1.0)) <= 1e-12);
		if (y[0] >= 0 && y[0] <= 1 && y[1] >= 0 && y[1] <= 1) {
			ck_assert(constraint_contains(&c, y, 2, 0.0, scratch) ||
				  constraint_contains(&c, y, 2, 1e-15, scratch));
		} else {
			ck_assert(!constraint_contains(&c, y, 2, 1e-9, scratch));
		}
	}
}
END_TEST

START_TEST(test_refusals)
{
	double st[STORE];
	struct constraint c;
	struct err e = { 0 };

	st[0] = 1.0;
	st[1] = 2.0;
	ck_assert_int_eq(constraint_polytope(&c, 1, 2, st, "constraints.x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.vertices");
	for (int i = 0; i < 6; i++)
		st[i] = i % 2 ? 2.0 : 1.0;
	ck_assert_int_eq(constraint_polytope(&c, 3, 2, st, "constraints.x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.vertices");
	ck_assert_ptr_nonnull(strstr(e.msg, "same point"));
	st[3] = NAN;
	ck_assert_int_eq(constraint_polytope(&c, 3, 2, st, "constraints.x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.vertices[1]");
	st[3] = 5.0;
	ck_assert_int_eq(constraint_polytope(&c, 3, 2, st, "constraints.x", &e), ERR_OK);
	/* the variable's dimension must be the vertices' */
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.vertices");
	ck_assert_int_eq(constraint_validate(&c, 2, "constraints.x", &e), ERR_OK);
	/* a list changed after the set-up (the owner's bug) is caught too */
	st[4] = INFINITY;
	ck_assert_int_eq(constraint_validate(&c, 2, "constraints.x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.vertices[2]");
	ck_assert_uint_eq(constraint_polytope_storage(CONSTRAINT_MAX_VERTICES + 1, 2), 0);
	ck_assert_uint_eq(constraint_polytope_storage(3, 0), 0);
	ck_assert_uint_eq(constraint_polytope_storage(3, 2), 3 * 2 + 2 * 2 + 3);
}
END_TEST

/* The l1 ball's and the simplex's lists (lmo.h's vertex order) are those
 * sets: radii, centre, projections, LMO points, and the scores and
 * vertex sums bit for bit. */
START_TEST(test_lists_are_the_kinds)
{
	static const double qs[] = { 1.0, 1.5, 2.0, INFINITY };
	struct rng r;
	double v[2 * MAX_D * MAX_D], st[2 * MAX_D * MAX_D + 4 * MAX_D], scratch[SCR], ks[MAX_D];

	rng_splitmix_init(&r, 0x11b);
	for (int simplex = 0; simplex < 2; simplex++)
		for (size_t d = 1; d <= MAX_D; d++) {
			const double rad = simplex ? 1.7 : 0.8125;
			struct constraint k = { .kind = simplex ? CONSTRAINT_SIMPLEX
								: CONSTRAINT_L1_BALL,
						.radius = rad },
					  c;
			size_t m = fw_vertex_count(&k, d);
			double g[MAX_D], wk[2 * MAX_D], wc[2 * MAX_D], y[MAX_D], p[MAX_D],
				pk[MAX_D], s[MAX_D];
			struct err e = { 0 };

			if (m < 2)
				continue; /* the simplex in d = 1 is a point */
			memset(v, 0, sizeof(v));
			for (size_t i = 0; i < m; i++)
				fw_add_vertex(&k, d, i, 1.0, v + i * d);
			memcpy(st, v, m * d * sizeof(*v));
			ck_assert_int_eq(constraint_polytope(&c, m, d, st, "x", &e), ERR_OK);
			ck_assert_uint_eq(fw_vertex_count(&c, d), m);
			ck_assert(fw_vertex_norm(&c) == rad);
			for (size_t j = 0; j < d; j++)
				ck_assert(c.centre[j] == 0.0);
			for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
				ck_assert_msg(constraint_radius(&c, d, qs[i]) ==
						      constraint_radius(&k, d, qs[i]),
					      "d=%zu q=%g", d, qs[i]);
			fw_start(&c, y, d);
			fw_start(&k, p, d);
			ck_assert(memcmp(y, p, d * sizeof(*y)) == 0);
			for (int t = 0; t < 20; t++) {
				double vc, vk;

				rng_normal_vector(&r, g, d);
				fw_log_weights(&c, g, d, 0.37, wc);
				fw_log_weights(&k, g, d, 0.37, wk);
				ck_assert_msg(memcmp(wc, wk, m * sizeof(*wc)) == 0,
					      "d=%zu: scores differ", d);
				vc = constraint_lmo(&c, g, d, s);
				vk = constraint_lmo(&k, g, d, ks);
				ck_assert(vc == vk && memcmp(s, ks, d * sizeof(*s)) == 0);
				for (size_t j = 0; j < d; j++)
					y[j] = (t % 3 + 0.2) * g[j];
				memcpy(p, y, sizeof(y));
				memcpy(pk, y, sizeof(y));
				constraint_project(&c, p, d, scratch);
				constraint_project(&k, pk, d, scratch);
				for (size_t j = 0; j < d; j++)
					ck_assert_msg(fabs(p[j] - pk[j]) <= 1e-12 * rad,
						      "d=%zu: projection %g vs %g", d, p[j], pk[j]);
				/* vertex sums: fw_add_vertex and fw_move */
				memcpy(p, g, sizeof(g));
				memcpy(pk, g, sizeof(g));
				fw_move(&c, p, d, (size_t)t % m, 0.3);
				fw_move(&k, pk, d, (size_t)t % m, 0.3);
				ck_assert(memcmp(p, pk, d * sizeof(*p)) == 0);
			}
		}
}
END_TEST

/* R_c about the centre of the five candidates, recomputed here. */
static double
rc_about(const double *v, size_t m, size_t d, const double *c)
{
	double r = 0.0;

	for (size_t i = 0; i < m; i++) {
		double s = 0.0;

		for (size_t k = 0; k < d; k++)
			s += fabs(v[i * d + k] - c[k]);
		r = fmax(r, s);
	}
	return r;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

START_TEST(test_centre_rule)
{
	struct rng r;
	double v[MAX_M * MAX_D], st[STORE];
	struct err e = { 0 };

	rng_splitmix_init(&r, 0xce27);
	/* Random lists: the least of the candidates, never above the l1
	 * diameter, and the scores about c move by at most R_c ||dv||_inf. */
	for (int t = 0; t < 300; t++) {
		size_t d = 1 + (size_t)rng_below(&r, MAX_D),
		       m = 2 + (size_t)rng_below(&r, MAX_M - 1);
		double cand[5][MAX_D] = { { 0 } }, best = INFINITY, diam = 0.0, col[MAX_M];
		struct constraint c;

		for (size_t i = 0; i < m * d; i++)
			v[i] = 3.0 * gauss(&r) + (t % 2 ? 5.0 : 0.0);
		for (size_t k = 0; k < d; k++) {
			double lo = INFINITY, hi = -INFINITY, sum = 0.0;

			for (size_t i = 0; i < m; i++) {
				col[i] = v[i * d + k];
				lo = fmin(lo, col[i]);
				hi = fmax(hi, col[i]);
				sum += col[i];
			}
			qsort(col, m, sizeof(*col), cmp);
			cand[1][k] = v[k];
			cand[2][k] = sum / (double)m;
			cand[3][k] = 0.5 * lo + 0.5 * hi;
			cand[4][k] = m % 2 ? col[m / 2] : 0.5 * (col[m / 2 - 1] + col[m / 2]);
		}
		for (int i = 0; i < 5; i++)
			best = fmin(best, rc_about(v, m, d, cand[i]));
		for (size_t i = 0; i < m; i++)
			diam = fmax(diam, rc_about(v, m, d, v + i * d));
		memcpy(st, v, m * d * sizeof(*v));
		ck_assert_int_eq(constraint_polytope(&c, m, d, st, "x", &e), ERR_OK);
		ck_assert_msg(fabs(c.centre_radius - best) <= 1e-12 * best, "R_c %.17g, best %.17g",
			      c.centre_radius, best);
		ck_assert(c.centre_radius <= diam);
		ck_assert(rc_about(v, m, d, c.centre) == c.centre_radius);
	}
	/* Translated l1 ball and simplex: the translation-equivariant
	 * candidates (mid-range, median) recover R_c = r, s. */
	for (size_t d = 1; d <= MAX_D; d++) {
		struct constraint c;
		double shift[MAX_D];
		size_t m;

		rng_normal_vector(&r, shift, d);
		for (int simplex = 0; simplex < 2; simplex++) {
			m = simplex ? d : 2 * d;
			if (m < 2)
				continue;
			memset(v, 0, m * d * sizeof(*v));
			for (size_t i = 0; i < m; i++) {
				v[i * d + i % d] = i < d ? 1.5 : -1.5;
				for (size_t k = 0; k < d; k++)
					v[i * d + k] += 10.0 * shift[k];
			}
			memcpy(st, v, m * d * sizeof(*v));
			ck_assert_int_eq(constraint_polytope(&c, m, d, st, "x", &e), ERR_OK);
			ck_assert_msg(fabs(c.centre_radius - 1.5) <= 1e-13 * 10.0 * (double)d,
				      "%s d=%zu translated: R_c %.17g, want 1.5",
				      simplex ? "simplex" : "l1 ball", d, c.centre_radius);
		}
	}
	/* The table's example is what constraint_polytope() makes of it. */
	{
		const struct constraint *ex = &constraint_ops_of(CONSTRAINT_POLYTOPE)->example;
		struct constraint c;

		memcpy(st, ex->vertices, ex->n_vertices * ex->vertex_dim * sizeof(double));
		ck_assert_int_eq(
			constraint_polytope(&c, ex->n_vertices, ex->vertex_dim, st, "x", &e),
			ERR_OK);
		ck_assert(c.centre_radius == ex->centre_radius);
		ck_assert(memcmp(c.centre, ex->centre, ex->vertex_dim * sizeof(double)) == 0);
	}
}
END_TEST

/* Scores about the centre: a translated list's log-weights are the
 * original's up to one common shift (rounding aside), so the same
 * distribution; the LMO is the first of the best vertices. */
START_TEST(test_scores_and_lmo)
{
	static const double v[] = { 1, 0, 0, 1, -1, 0, 0, -1, 1, 0, 0.25, 0.25 };
	double st[STORE], st2[STORE], moved[12], g[2], w1[6], w2[6], s[2], val;
	struct constraint c = make(v, 6, 2, st), c2;
	struct rng r;

	rng_splitmix_init(&r, 0x5c0);
	for (int i = 0; i < 12; i++)
		moved[i] = v[i] + (i % 2 ? -7.5 : 3.25);
	c2 = make(moved, 6, 2, st2);
	ck_assert(fabs(c2.centre_radius - c.centre_radius) <= 1e-12);
	for (int t = 0; t < 50; t++) {
		double shift;

		rng_normal_vector(&r, g, 2);
		fw_log_weights(&c, g, 2, 0.5, w1);
		fw_log_weights(&c2, g, 2, 0.5, w2);
		shift = w2[0] - w1[0];
		for (int i = 1; i < 6; i++)
			ck_assert_msg(fabs(w2[i] - w1[i] - shift) <= 1e-12, "scores not shifted");
	}
	/* g = (-1, 0): vertices 0 and 4 tie at -1; the first wins */
	g[0] = -1.0;
	g[1] = 0.0;
	val = constraint_lmo(&c, g, 2, s);
	ck_assert(val == -1.0 && s[0] == 1.0 && s[1] == 0.0);
	g[0] = 1.0;
	g[1] = 1.0;
	val = constraint_lmo(&c, g, 2, s);
	ck_assert(val == -1.0 && s[0] == -1.0 && s[1] == 0.0); /* vertex 2 before 3 */
	ck_assert(constraint_radius(&c, 2, 1.0) == 1.0);
	ck_assert(constraint_radius(&c, 2, INFINITY) == 1.0);
}
END_TEST

static Suite *
polytope_suite(void)
{
	Suite *s = suite_create("polytope");
	TCase *tc = tcase_create("polytope");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_projection_brute_force);
	tcase_add_test(tc, test_projection_kkt);
	tcase_add_test(tc, test_projection_degenerate);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_lists_are_the_kinds);
	tcase_add_test(tc, test_centre_rule);
	tcase_add_test(tc, test_scores_and_lmo);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(polytope_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
