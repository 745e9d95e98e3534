/*
 * test_mirror.c - mirror maps (mirror.c): the entropic step against its
 * closed form and against brute-force minimisation of <eta g, x> +
 * KL(x, x0) over the simplex; the l1 lifting; the p-norm map's identities
 * (grad h* o grad h = id, ||grad h||_q = 2c ||x - a||_p, strong convexity,
 * kappa_p); and the exact constrained step against random feasible points
 * of the set (the validation of docs/algorithms/geometry.md §4, made sharper by
 * sampling around the answer), with h, grad h and D_h recomputed here by
 * plain formulas.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "mirror.h"
#include "privacy/noise.h"
#include "rng.h"
#include "vec_helpers.h"

#define MAX_D 8

/* ---- entropic ---- */

/* theta_+ = theta - eta g: the point is x0 e^{-eta g} / Z, computed here
 * directly from x0 (moderate values, no log domain needed). */
START_TEST(test_entropic_closed_form)
{
	struct rng r;
	double th[MAX_D], g[MAX_D], x0[MAX_D], x[MAX_D], want[MAX_D];

	rng_splitmix_init(&r, 0xe1);
	for (size_t d = 1; d <= MAX_D; d++)
		for (int trial = 0; trial < 100; trial++) {
			double eta = 0.01 + rng_uniform(&r), scale = 0.5 + 2.0 * rng_uniform(&r),
			       z = 0.0;

			for (size_t j = 0; j < d; j++) {
				th[j] = gauss(&r);
				g[j] = gauss(&r);
			}
			mirror_entropic_point(th, d, scale, x0);
			mirror_entropic_step(th, g, eta, d);
			mirror_entropic_point(th, d, scale, x);
			for (size_t j = 0; j < d; j++)
				z += want[j] = x0[j] * exp(-eta * g[j]);
			for (size_t j = 0; j < d; j++) {
				want[j] *= scale / z;
				ck_assert_msg(fabs(x[j] - want[j]) <= 1e-14 * scale,
					      "d=%zu j=%zu: %.17g vs %.17g", d, j, x[j], want[j]);
			}
		}
}
END_TEST

/* The step minimises <eta g, x> + KL(x, x0) over {x >= 0, sum x = s}: no
 * point of a fine grid of the simplex (d = 2, 3) does better, and the
 * best grid point is close. */
START_TEST(test_entropic_brute_force)
{
	struct rng r;

	rng_splitmix_init(&r, 0xe2);
	for (size_t d = 2; d <= 3; d++)
		for (int trial = 0; trial < 20; trial++) {
			double th[3], g[3], x0[3], x[3], y[3], eta = 0.1 + 2.0 * rng_uniform(&r);
			double s = 0.5 + rng_uniform(&r), fx, best = INFINITY;
			const int n = d == 2 ? 20000 : 600;

			for (size_t j = 0; j < d; j++) {
				th[j] = gauss(&r);
				g[j] = gauss(&r);
			}
			mirror_entropic_point(th, d, s, x0);
			mirror_entropic_step(th, g, eta, d);
			mirror_entropic_point(th, d, s, x);
			fx = eta * dot(g, x, d) + mirror_kl(x, x0, d);
			for (int i = 0; i <= n; i++)
				for (int k = 0; k <= (d == 3 ? n - i : 0); k++) {
					y[0] = s * i / n;
					if (d == 2) {
						y[1] = s - y[0];
					} else {
						y[1] = s * k / n;
						y[2] = fmax(s - y[0] - y[1], 0.0);
					}
					best = fmin(best, eta * dot(g, y, d) + mirror_kl(y, x0, d));
				}
			ck_assert_msg(fx <= best + 1e-12, "d=%zu: grid %.17g beats the step %.17g",
				      d, best, fx);
			ck_assert_msg(fx >= best - 1e-3 * s, "d=%zu: step %.17g, grid %.17g", d, fx,
				      best);
		}
}
END_TEST

/* Huge steps: the losers' probabilities underflow in x but not in theta,
 * and the opposite step revives them exactly. */
START_TEST(test_entropic_log_domain)
{
	double th[4] = { 0 }, g[4] = { 1.0, -1.0, 0.5, 0.0 }, x[4];

	mirror_entropic_step(th, g, 2000.0, 4);
	mirror_entropic_point(th, 4, 1.0, x);
	ck_assert(x[1] == 1.0 && x[0] == 0.0 && x[2] == 0.0 && x[3] == 0.0);
	for (int j = 0; j < 4; j++)
		ck_assert(isfinite(th[j]));
	ck_assert(th[1] == 0.0); /* max-shifted */
	{
		/* a point from large unshifted log-weights: no overflow, sums to scale */
		double big[3] = { 1000.0, 1001.0, 999.0 }, xb[3];
		double z = 1.0 + exp(-1.0) + exp(-2.0);

		mirror_entropic_point(big, 3, 2.0, xb);
		ck_assert_double_eq_tol(xb[0], 2.0 * exp(-1.0) / z, 1e-15);
		ck_assert_double_eq_tol(xb[1], 2.0 / z, 1e-15);
		ck_assert_double_eq_tol(xb[2], 2.0 * exp(-2.0) / z, 1e-15);
	}
	ck_assert(th[0] < th[2] && th[2] < th[3] && th[3] < th[1]);
	for (int j = 0; j < 4; j++)
		g[j] = -g[j];
	mirror_entropic_step(th, g, 2000.0, 4);
	mirror_entropic_point(th, 4, 1.0, x);
	for (int j = 0; j < 4; j++)
		ck_assert_double_eq_tol(x[j], 0.25, 1e-15);
}
END_TEST

START_TEST(test_kl)
{
	double x[3] = { 0.2, 0.3, 0.5 }, y[3] = { 0.5, 0.25, 0.25 }, z[3] = { 0.0, 0.5, 0.5 };

	ck_assert(mirror_kl(x, x, 3) == 0.0);
	ck_assert_double_eq_tol(mirror_kl(x, y, 3),
				0.2 * log(0.4) + 0.3 * log(1.2) + 0.5 * log(2.0), 1e-15);
	ck_assert(mirror_kl(x, z, 3) == INFINITY);
	ck_assert_double_eq_tol(mirror_kl(z, x, 3), 0.5 * log(0.5 / 0.3) + 0.5 * log(1.0) + 0.0,
				1e-15);
	/* generalised: unequal masses */
	y[0] = 1.0;
	ck_assert_double_eq_tol(mirror_kl(x, y, 3),
				0.2 * log(0.2) + 0.3 * log(1.2) + 0.5 * log(2.0) + 0.5, 1e-15);
}
END_TEST

/* l1 ball through the 2d-simplex: theta = 0 is x = 0; a step is the
 * entropic step on u = (u_+, u_-) with the lifted gradient r (g, -g),
 * computed here on u directly; x stays in the ball. */
START_TEST(test_l1_lifting)
{
	struct rng r;
	double th[2 * MAX_D], g[MAX_D], x[MAX_D], u0[2 * MAX_D], want[MAX_D];

	rng_splitmix_init(&r, 0xe3);
	for (size_t d = 1; d <= MAX_D; d++) {
		double rad = 0.5 + 2.0 * rng_uniform(&r);

		memset(th, 0, sizeof(th));
		mirror_l1_point(th, d, rad, x);
		for (size_t j = 0; j < d; j++)
			ck_assert(x[j] == 0.0);
		for (int step = 0; step < 30; step++) {
			double eta = 0.05 + rng_uniform(&r), z = 0.0, l1 = 0.0;

			for (size_t j = 0; j < d; j++)
				g[j] = gauss(&r);
			mirror_entropic_point(th, 2 * d, 1.0, u0);
			mirror_l1_step(th, g, eta, rad, d);
			mirror_l1_point(th, d, rad, x);
			for (size_t j = 0; j < d; j++) {
				u0[j] *= exp(-eta * rad * g[j]);
				u0[d + j] *= exp(eta * rad * g[j]);
				z += u0[j] + u0[d + j];
			}
			for (size_t j = 0; j < d; j++) {
				want[j] = rad * (u0[j] - u0[d + j]) / z;
				ck_assert_msg(fabs(x[j] - want[j]) <= 1e-13 * rad,
					      "d=%zu j=%zu: %.17g vs %.17g", d, j, x[j], want[j]);
				l1 += fabs(x[j]);
			}
			ck_assert(l1 <= rad * (1.0 + 1e-15));
		}
	}
}
END_TEST

/* ---- p-norm map ---- */

START_TEST(test_pnorm_p_and_kappa)
{
	struct rng r;
	double u[MAX_D];

	ck_assert(mirror_pnorm_p(1) == 2.0);
	ck_assert(mirror_pnorm_p(2) == 2.0);
	ck_assert_double_eq_tol(mirror_pnorm_p(3), 1.0 + 1.0 / log(3.0), 1e-15);
	ck_assert_double_eq_tol(mirror_pnorm_p(1000), 1.0 + 1.0 / log(1000.0), 1e-15);
	ck_assert_double_eq_tol(mirror_pnorm_kappa(1.5, 8), 2.0, 1e-15);
	ck_assert(mirror_pnorm_kappa(2.0, 9) == 3.0);
	{
		/* the default normalisation, c = 1/(2(p - 1)) (geometry.md §2) */
		struct mirror_pnorm m;
		double a[1] = { 0.0 };

		mirror_pnorm_init(&m, 1000, a);
		ck_assert(m.d == 1000 && m.a == a && m.p == mirror_pnorm_p(1000));
		ck_assert_double_eq_tol(m.c, 0.5 * log(1000.0), 1e-13);
	}
	for (size_t d = 1; d <= 1000000; d = d * 3 + 1) {
		double p = mirror_pnorm_p(d), k = mirror_pnorm_kappa(p, d);

		ck_assert(p > 1.0 && p <= 2.0);
		ck_assert_msg(k < exp(1.0) && k >= 1.0, "d=%zu: kappa %.17g", d, k);
		ck_assert_double_eq_tol(k, pow((double)d, (p - 1.0) / p), 1e-12 * k);
	}
	/* ||u||_1 <= kappa ||u||_p, with equality on the all-ones vector */
	rng_splitmix_init(&r, 0xe4);
	for (size_t d = 1; d <= MAX_D; d++) {
		double p = 1.0 + rng_uniform(&r), k = mirror_pnorm_kappa(p, d);

		for (int t = 0; t < 100; t++) {
			for (size_t j = 0; j < d; j++)
				u[j] = gauss(&r);
			ck_assert(normp(u, d, 1.0) <= k * normp(u, d, p) * (1.0 + 1e-14));
		}
		for (size_t j = 0; j < d; j++)
			u[j] = 1.0;
		ck_assert_double_eq_tol(normp(u, d, 1.0), k * normp(u, d, p), 1e-12 * d);
	}
}
END_TEST

/* Plain-formula h and grad h (test side). */
static double
h_plain(double c, double p, const double *a, const double *x, size_t d)
{
	double y[MAX_D];

	for (size_t j = 0; j < d; j++)
		y[j] = x[j] - a[j];
	return c * pow(normp(y, d, p), 2.0);
}

static void
grad_plain(double c, double p, const double *a, const double *x, size_t d, double *th)
{
	double y[MAX_D], n;

	for (size_t j = 0; j < d; j++)
		y[j] = x[j] - a[j];
	n = normp(y, d, p);
	for (size_t j = 0; j < d; j++)
		th[j] = n == 0.0 ? 0.0
				 : 2.0 * c * pow(n, 2.0 - p) *
					   copysign(pow(fabs(y[j]), p - 1.0), y[j]);
}

START_TEST(test_pnorm_identities)
{
	struct rng r;
	double a[MAX_D], x[MAX_D], y[MAX_D], th[MAX_D], back[MAX_D], want[MAX_D], xy[MAX_D];

	rng_splitmix_init(&r, 0xe5);
	for (size_t d = 1; d <= MAX_D; d++)
		for (int trial = 0; trial < 100; trial++) {
			struct mirror_pnorm m;
			double q, nx, ng, dh;

			for (size_t j = 0; j < d; j++) {
				a[j] = gauss(&r);
				x[j] = a[j] + gauss(&r);
				y[j] = a[j] + gauss(&r);
			}
			mirror_pnorm_init(&m, d, a);
			if (trial % 2)
				m.p = 1.0 + pow(10.0, -2.0 * rng_uniform(&r));
			if (trial % 3 == 0)
				m.c = 1.0 / (m.p - 1.0);
			q = m.p / (m.p - 1.0);
			mirror_pnorm_grad(&m, x, th);
			grad_plain(m.c, m.p, a, x, d, want);
			for (size_t j = 0; j < d; j++)
				ck_assert_msg(fabs(th[j] - want[j]) <=
						      1e-12 * (1.0 + fabs(want[j])),
					      "grad: %.17g vs %.17g", th[j], want[j]);
			mirror_pnorm_grad_conj(&m, th, back);
			for (size_t j = 0; j < d; j++)
				ck_assert_msg(fabs(back[j] - x[j]) <= 1e-10 * (1.0 + fabs(x[j])),
					      "p=%g d=%zu: grad h*(grad h(x)) %.17g vs x %.17g",
					      m.p, d, back[j], x[j]);
			for (size_t j = 0; j < d; j++)
				xy[j] = x[j] - a[j];
			nx = normp(xy, d, m.p);
			ng = normp(th, d, q);
			ck_assert_msg(fabs(ng - 2.0 * m.c * nx) <= 1e-10 * (2.0 * m.c * nx),
				      "p=%g: ||grad h||_q %.17g vs 2c||x - a||_p %.17g", m.p, ng,
				      2.0 * m.c * nx);
			ck_assert_double_eq_tol(mirror_pnorm_value(&m, x), m.c * nx * nx,
						1e-12 * (1.0 + m.c * nx * nx));
			/* D_h by the plain formula, and strong convexity */
			grad_plain(m.c, m.p, a, y, d, want);
			for (size_t j = 0; j < d; j++)
				xy[j] = x[j] - y[j];
			dh = h_plain(m.c, m.p, a, x, d) - h_plain(m.c, m.p, a, y, d) -
			     dot(want, xy, d);
			ck_assert_double_eq_tol(mirror_pnorm_bregman(&m, x, y), dh,
						1e-10 * (1.0 + fabs(dh)));
			ck_assert(mirror_pnorm_bregman(&m, x, y) >=
				  m.c * (m.p - 1.0) * pow(normp(xy, d, m.p), 2.0) * (1.0 - 1e-9) -
					  1e-12);
			ck_assert(fabs(mirror_pnorm_bregman(&m, x, x)) <= 1e-12);
		}
}
END_TEST

/* No NaN or Inf from 1e-300 to 1e300, at d = 3 and d = 1000 (q = 7.9). */
START_TEST(test_pnorm_extremes)
{
	static double x[1000], th[1000], back[1000];
	static const size_t dims[] = { 3, 1000 };
	struct rng r;

	rng_splitmix_init(&r, 0xe6);
	for (size_t di = 0; di < 2; di++)
		for (double scale = 1e-300; scale < 1e301; scale *= 1e50) {
			struct mirror_pnorm m;
			size_t d = dims[di];

			mirror_pnorm_init(&m, d, NULL);
			for (size_t j = 0; j < d; j++)
				x[j] = scale * gauss(&r) * (j % 7 == 0 ? 1e-5 : 1.0);
			mirror_pnorm_grad(&m, x, th);
			mirror_pnorm_grad_conj(&m, th, back);
			for (size_t j = 0; j < d; j++) {
				ck_assert_msg(isfinite(th[j]) && isfinite(back[j]),
					      "d=%zu scale=%g: not finite", d, scale);
				ck_assert_msg(fabs(back[j] - x[j]) <= 1e-9 * scale,
					      "d=%zu scale=%g: round trip %.17g vs %.17g", d, scale,
					      back[j], x[j]);
			}
		}
}
END_TEST

/* Free step: R = inf gives grad h*(theta); a finite R scales the free
 * answer radially onto ||x - a||_p = R when it is outside. */
START_TEST(test_pnorm_step_free)
{
	struct rng r;
	double a[MAX_D], th[MAX_D], x[MAX_D], want[MAX_D], y[MAX_D];

	rng_splitmix_init(&r, 0xe7);
	for (size_t d = 1; d <= MAX_D; d++)
		for (int trial = 0; trial < 30; trial++) {
			struct mirror_pnorm m;
			struct mirror_step_info info;
			double n, R;

			for (size_t j = 0; j < d; j++) {
				a[j] = gauss(&r);
				th[j] = 3.0 * gauss(&r);
			}
			mirror_pnorm_init(&m, d, a);
			m.p = 1.05 + 0.95 * rng_uniform(&r);
			ck_assert_int_eq(mirror_pnorm_step(&m, NULL, INFINITY, th, x, &info, NULL),
					 ERR_OK);
			mirror_pnorm_grad_conj(&m, th, want);
			for (size_t j = 0; j < d; j++)
				ck_assert_msg(fabs(x[j] - want[j]) <= 1e-11 * (1.0 + fabs(want[j])),
					      "p=%g d=%zu: %.17g vs grad h* %.17g", m.p, d, x[j],
					      want[j]);
			ck_assert(!info.ball_active);
			for (size_t j = 0; j < d; j++)
				y[j] = want[j] - a[j];
			n = normp(y, d, m.p);
			R = n * (0.1 + 0.8 * rng_uniform(&r));
			ck_assert_int_eq(mirror_pnorm_step(&m, NULL, R, th, x, &info, NULL),
					 ERR_OK);
			ck_assert(info.ball_active);
			for (size_t j = 0; j < d; j++)
				ck_assert_msg(fabs(x[j] - (a[j] + y[j] * R / n)) <=
						      1e-10 * (1.0 + fabs(x[j])),
					      "p=%g d=%zu: not the radial scaling", m.p, d);
		}
}
END_TEST

/* p = 2, simplex, no local ball: MS is the Euclidean projection of
 * a + theta / (2c) onto the simplex (docs/algorithms/geometry.md §4). */
START_TEST(test_pnorm_step_p2_is_projection)
{
	struct rng r;
	double a[MAX_D], th[MAX_D], x[MAX_D], want[MAX_D], scratch[MAX_D];

	rng_splitmix_init(&r, 0xe8);
	for (size_t d = 1; d <= MAX_D; d++)
		for (int trial = 0; trial < 30; trial++) {
			struct constraint sx = { .kind = CONSTRAINT_SIMPLEX, .radius = 1.5 };
			struct constraint l1 = { .kind = CONSTRAINT_L1_BALL, .radius = 1.5 };
			struct constraint *set = trial % 2 ? &sx : &l1;
			struct mirror_pnorm m = { .d = d, .p = 2.0, .c = 0.7, .a = a };

			for (size_t j = 0; j < d; j++)
				a[j] = gauss(&r);
			constraint_project(set, a, d, scratch);
			for (size_t j = 0; j < d; j++) {
				th[j] = 2.0 * gauss(&r);
				want[j] = a[j] + th[j] / (2.0 * m.c);
			}
			constraint_project(set, want, d, scratch);
			ck_assert_int_eq(mirror_pnorm_step(&m, set, INFINITY, th, x, NULL, NULL),
					 ERR_OK);
			for (size_t j = 0; j < d; j++)
				ck_assert_msg(fabs(x[j] - want[j]) <= 1e-12,
					      "%s d=%zu j=%zu: %.17g vs projection %.17g",
					      constraint_kind_name(set->kind), d, j, x[j], want[j]);
		}
}
END_TEST

/* A random point of outer (l1 ball, simplex or lp ball). */
static void
random_outer(struct rng *r, const struct constraint *c, size_t d, double *y)
{
	double s = 0.0;

	if (c->kind == CONSTRAINT_LP_BALL) {
		for (size_t j = 0; j < d; j++)
			y[j] = gauss(r);
		s = c->radius *
		    (rng_uniform(r) < 0.2 ? 1.0 : pow(rng_uniform(r), 1.0 / (double)d)) /
		    normp(y, d, c->p);
		for (size_t j = 0; j < d; j++)
			y[j] *= s;
		return;
	}

	for (size_t j = 0; j < d; j++)
		s += y[j] = -log(1.0 - rng_uniform(r));
	for (size_t j = 0; j < d; j++) {
		y[j] *= c->radius / s;
		if (c->kind == CONSTRAINT_L1_BALL) {
			y[j] *= rng_uniform(r) < 0.2 ? 1.0 : rng_uniform(r);
			if (rng_below(r, 2))
				y[j] = -y[j];
		}
	}
}

/*
 * MS-L1, MS-SIMPLEX and MS-LP (outer exponent p' random in [1.1, 2]), d = 2..4, p in
 * {1.15, 1.3, 1.6, 2}, R from 0.05 to 5 (geometry.md §4): the step is feasible, and no
 * feasible point beats it on <gamma g, x> + D_h(x, x_k) (computed here by plain formulas, with
 * theta = grad h(x_k) - gamma g): neither 20000 random points of the set nor 20000 points sampled
 * around the answer at three radii (a local check of optimality that random points cannot give).
 */
START_TEST(test_pnorm_step_brute_force)
{
	static const double ps[] = { 1.15, 1.3, 1.6, 2.0 };
	static const double Rs[] = { 0.05, 0.3, 1.0, 5.0 };
	struct rng r;

	int outer_active = 0, ball_active = 0, cases = 0;

	rng_splitmix_init(&r, 0xe9 + (uint64_t)_i);
	for (size_t d = 2; d <= 4; d++)
		for (int trial = 0; trial < 16; trial++) {
			struct constraint outer = { .kind = _i == 0   ? CONSTRAINT_L1_BALL
							    : _i == 1 ? CONSTRAINT_SIMPLEX
								      : CONSTRAINT_LP_BALL,
						    .radius = 0.5 + 1.5 * rng_uniform(&r),
						    .p = 1.1 + 0.9 * rng_uniform(&r) };
			struct mirror_pnorm m;
			struct mirror_step_info info;
			double a[4], xk[4], g[4], th[4], gk[4], x[4], y[4], u[4];
			double gamma = 0.05 + rng_uniform(&r), R = Rs[trial % 4], fx, hx;
			int tried = 0;

			random_outer(&r, &outer, d, a);
			memcpy(xk, a, sizeof(a));
			if (trial % 2) /* x_k elsewhere in the set, within R of a */
				for (int k = 0; k < 100; k++) {
					random_outer(&r, &outer, d, y);
					for (size_t j = 0; j < d; j++)
						u[j] = y[j] - a[j];
					if (normp(u, d, ps[trial / 4]) < R) {
						memcpy(xk, y, sizeof(y));
						break;
					}
				}
			mirror_pnorm_init(&m, d, a);
			m.p = ps[trial / 4];
			m.c = trial % 3 ? 1.0 / (2.0 * (m.p - 1.0)) : 1.0 / (m.p - 1.0);
			for (size_t j = 0; j < d; j++)
				g[j] = 3.0 * gauss(&r);
			grad_plain(m.c, m.p, a, xk, d, gk);
			for (size_t j = 0; j < d; j++)
				th[j] = gk[j] - gamma * g[j];
			ck_assert_int_eq(mirror_pnorm_step(&m, &outer, R, th, x, &info, NULL),
					 ERR_OK);
			cases++;
			outer_active += info.outer_active;
			ball_active += info.ball_active;

			/* feasible */
			ck_assert_msg(constraint_contains(&outer, x, d, 1e-12, NULL), "%s: outside",
				      constraint_kind_name(outer.kind));
			if (info.outer_active) { /* put exactly on the outer set's boundary */
				double on = 0.0;

				for (size_t j = 0; j < d; j++)
					on += outer.kind == CONSTRAINT_SIMPLEX ? x[j] : 0.0;
				if (outer.kind != CONSTRAINT_SIMPLEX)
					on = normp(x, d,
						   outer.kind == CONSTRAINT_L1_BALL ? 1.0
										    : outer.p);

				ck_assert_msg(fabs(on - outer.radius) <=
						      16.0 * DBL_EPSILON * outer.radius,
					      "%s: %.17g, not on the boundary %.17g",
					      constraint_kind_name(outer.kind), on, outer.radius);
			}
			for (size_t j = 0; j < d; j++)
				u[j] = x[j] - a[j];
			ck_assert_msg(normp(u, d, m.p) <= R * (1.0 + 1e-9),
				      "outside the local ball: %.17g > %g", normp(u, d, m.p), R);

			/* optimal: f(y) = gamma <g, y> + D_h(y, x_k) */
			hx = h_plain(m.c, m.p, a, xk, d);
			fx = gamma * dot(g, x, d) + h_plain(m.c, m.p, a, x, d) - hx;
			for (size_t j = 0; j < d; j++)
				fx -= gk[j] * (x[j] - xk[j]);
			for (int k = 0; k < 80000; k++) {
				double fy, rad = k < 20000 ? 0.0 : pow(10.0, -2.0 * (k % 3) - 1.0);

				if (rad == 0.0)
					random_outer(&r, &outer, d, y);
				else
					for (size_t j = 0; j < d; j++)
						y[j] = x[j] + rad * R * gauss(&r);
				if (outer.kind == CONSTRAINT_SIMPLEX && rad > 0.0) {
					double s = 0.0;

					for (size_t j = 0; j < d; j++)
						s += y[j] = fmax(y[j], 0.0);
					for (size_t j = 0; j < d; j++)
						y[j] *= outer.radius / s;
				}
				if (!constraint_contains(&outer, y, d, 0.0, NULL))
					continue;
				for (size_t j = 0; j < d; j++)
					u[j] = y[j] - a[j];
				if (normp(u, d, m.p) > R)
					continue;
				tried++;
				fy = gamma * dot(g, y, d) + h_plain(m.c, m.p, a, y, d) - hx;
				for (size_t j = 0; j < d; j++)
					fy -= gk[j] * (y[j] - xk[j]);
				ck_assert_msg(fy >= fx - 1e-9 * (1.0 + fabs(fx)),
					      "%s d=%zu p=%g R=%g: a feasible point gives %.17g < "
					      "%.17g (nu %g, tau %g)",
					      constraint_kind_name(outer.kind), d, m.p, R, fy, fx,
					      info.nu, info.tau);
			}
			ck_assert(tried > 1000);
		}
	/* every regime was exercised: both constraints binding and not */
	ck_assert_msg(outer_active > 0 && (_i == 1 || outer_active < cases) && ball_active > 0 &&
			      ball_active < cases,
		      "outer active %d, ball active %d of %d", outer_active, ball_active, cases);
}
END_TEST

START_TEST(test_pnorm_step_invalid)
{
	double a[3] = { 0.5, 0.5, 0.5 }, th[3] = { 1.0, 0.0, 0.0 }, x[3];
	struct mirror_pnorm m = { .d = 3, .p = 1.5, .c = 1.0, .a = a };
	struct constraint l1 = { .kind = CONSTRAINT_L1_BALL, .radius = 1.0 };
	struct constraint lp = { .kind = CONSTRAINT_LP_BALL, .radius = 0.5, .p = 1.5 };
	struct constraint bx = { .kind = CONSTRAINT_BOX, .lo = -1.0, .hi = 1.0 };
	struct err e;

	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(mirror_pnorm_step(&m, &l1, 1.0, th, x, NULL, &e), ERR_INVALID);
	l1.radius = 2.0;
	ck_assert_int_eq(mirror_pnorm_step(&m, &l1, 1.0, th, x, NULL, &e), ERR_OK);
	ck_assert_int_eq(mirror_pnorm_step(&m, &l1, 0.0, th, x, NULL, &e), ERR_INVALID);
	ck_assert_int_eq(mirror_pnorm_step(&m, &lp, 1.0, th, x, NULL, &e), ERR_INVALID);
	lp.radius = 1.0; /* ||a||_1.5 = 0.5 * 3^{2/3} = 1.04 */
	ck_assert_int_eq(mirror_pnorm_step(&m, &lp, 1.0, th, x, NULL, &e), ERR_INVALID);
	lp.radius = 1.1;
	ck_assert_int_eq(mirror_pnorm_step(&m, &lp, 1.0, th, x, NULL, &e), ERR_OK);
	ck_assert_int_eq(mirror_pnorm_step(&m, &bx, 1.0, th, x, NULL, &e), ERR_INVALID);
	th[1] = NAN;
	ck_assert_int_eq(mirror_pnorm_step(&m, &l1, 1.0, th, x, NULL, &e), ERR_NUMERIC);
	th[1] = 0.0;
	m.p = 1.0;
	ck_assert_int_eq(mirror_pnorm_step(&m, &l1, 1.0, th, x, NULL, NULL), ERR_INVALID);
}
END_TEST

static Suite *
mirror_suite(void)
{
	Suite *s = suite_create("mirror");
	TCase *te = tcase_create("entropic");
	TCase *tp = tcase_create("pnorm");

	tcase_add_test(te, test_entropic_closed_form);
	tcase_add_test(te, test_entropic_brute_force);
	tcase_add_test(te, test_entropic_log_domain);
	tcase_add_test(te, test_kl);
	tcase_add_test(te, test_l1_lifting);
	suite_add_tcase(s, te);
	tcase_set_timeout(tp, 120);
	tcase_add_test(tp, test_pnorm_p_and_kappa);
	tcase_add_test(tp, test_pnorm_identities);
	tcase_add_test(tp, test_pnorm_extremes);
	tcase_add_test(tp, test_pnorm_step_free);
	tcase_add_test(tp, test_pnorm_step_p2_is_projection);
	tcase_add_loop_test(tp, test_pnorm_step_brute_force, 0, 3);
	tcase_add_test(tp, test_pnorm_step_invalid);
	suite_add_tcase(s, tp);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(mirror_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
