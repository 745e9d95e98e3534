/*
 * test_pld.c - the PLD accountant (algorithms/privacy/pld.c) against
 * closed forms computed here from published formulas: the analytic
 * Gaussian curve (Balle & Wang 2018; ag_epsilon_mu), the Laplace
 * mechanism's hockey-stick divergence 1 - e^((eps - eps0)/2) (derived in
 * README.md, "PLD accountant"), randomized response and its k-fold
 * composition (a binomial sum, Kairouz, Oh & Viswanath 2015), and the
 * composition of k Gaussians = one Gaussian with mu = sqrt(k)/z.
 * Properties: the interval [lower, upper] brackets every exact value,
 * upper - lower <= 2 K h (+ truncation) for K composed leaves, monotone
 * in noise and steps, unsupported events fail closed.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "privacy/analytic_gaussian.h"
#include "privacy/event.h"
#include "privacy/pld.h"

static struct dp_event_tree
leaf(enum dp_event_type type, double v)
{
	struct dp_event_tree t;

	switch (type) {
	case DP_EVENT_GAUSSIAN:
		dp_event_gaussian(&t, DP_REPLACE_ONE, v);
		break;
	case DP_EVENT_LAPLACE:
		dp_event_laplace(&t, DP_REPLACE_ONE, v);
		break;
	case DP_EVENT_BOUNDED_RANGE:
		dp_event_bounded_range(&t, DP_REPLACE_ONE, v);
		break;
	default:
		dp_event_pure(&t, DP_REPLACE_ONE, v);
		break;
	}
	return t;
}

static struct dp_event_tree
self_composed(struct dp_event_tree t, uint64_t k)
{
	struct dp_event p = { .type = DP_EVENT_SELF_COMPOSED, .count = k };

	ck_assert_int_eq(dp_event_wrap(&t, &p, NULL), ERR_OK);
	return t;
}

static double
ag_eps(double mu, double delta)
{
	double eps;

	ck_assert_int_eq(ag_epsilon_mu(mu, delta, &eps, NULL), ERR_OK);
	return eps;
}

START_TEST(test_fft)
{
	enum { N = 64 };
	double re[N], im[N], r2[N], i2[N];

	for (int k = 0; k < N; k++) {
		re[k] = sin(0.37 * k * k + 1.0);
		im[k] = cos(1.3 * k);
	}
	memcpy(r2, re, sizeof(re));
	memcpy(i2, im, sizeof(im));
	ck_assert_int_eq(pld_fft(r2, i2, N, 0, NULL), ERR_OK);
	for (int f = 0; f < N; f++) {
		long double sr = 0, si = 0;

		for (int k = 0; k < N; k++) {
			long double a = -2.0L * 3.14159265358979323846L * f * k / N;

			sr += re[k] * cosl(a) - im[k] * sinl(a);
			si += re[k] * sinl(a) + im[k] * cosl(a);
		}
		ck_assert_double_le(fabs((double)sr - r2[f]), 1e-12);
		ck_assert_double_le(fabs((double)si - i2[f]), 1e-12);
	}
	ck_assert_int_eq(pld_fft(r2, i2, N, 1, NULL), ERR_OK);
	ck_assert_int_eq(pld_fft(r2, i2, 48, 0, NULL), ERR_INVALID);
	for (int k = 0; k < N; k++) {
		ck_assert_double_le(fabs(r2[k] / N - re[k]), 1e-14);
		ck_assert_double_le(fabs(i2[k] / N - im[k]), 1e-14);
	}
}
END_TEST

/* One Gaussian against the analytic curve, at several z and delta. */
START_TEST(test_gaussian_analytic)
{
	const double zs[] = { 0.8, 1.0, 2.0, 3.7306 }, ds[] = { 1e-5, 0.1 };

	for (unsigned i = 0; i < 4; i++)
		for (unsigned j = 0; j < 2; j++) {
			struct dp_event_tree t = leaf(DP_EVENT_GAUSSIAN, zs[i]);
			struct pld_interval r;
			double x = ag_eps(1.0 / zs[i], ds[j]);

			ck_assert_int_eq(pld_epsilon(&t, ds[j], 0.0, &r, NULL), ERR_OK);
			printf("gaussian z=%g delta=%g: exact %.10f pld [%.10f, %.10f] rel %.2e\n",
			       zs[i], ds[j], x, r.lower, r.upper, (r.upper - x) / x);
			ck_assert_double_le(r.lower, x);
			ck_assert_double_ge(r.upper, x);
			/* connect-the-dots on one mechanism: stated bound 1e-6 relative */
			ck_assert_double_le(r.upper - x, 1e-6 * x);
			ck_assert_double_le(r.upper - r.lower, 2 * PLD_DEFAULT_STEP + 1e-9);
		}
}
END_TEST

/* Laplace: delta(eps) = 1 - e^((eps - eps0)/2) for 0 <= eps < eps0 = 1/b. */
START_TEST(test_laplace_closed_form)
{
	const double bs[] = { 0.5, 1.0, 4.0 };

	for (unsigned i = 0; i < 3; i++) {
		struct dp_event_tree t = leaf(DP_EVENT_LAPLACE, bs[i]);
		double e0 = 1.0 / bs[i];

		for (double f = 0.0; f < 1.0; f += 0.125) {
			struct pld_interval r;
			double eps = f * e0, x = -expm1((eps - e0) / 2);

			ck_assert_int_eq(pld_delta(&t, eps, 0.0, &r, NULL), ERR_OK);
			ck_assert_double_le(r.lower, x * (1 + 1e-12));
			ck_assert_double_ge(r.upper, x * (1 - 1e-12));
			ck_assert_double_le(r.upper - x, 1e-7);
		}
	}
}
END_TEST

/* k-fold generalised randomized response RR_t of eps-bounded range: the
 * loss is t (P-mass p_t = (e^eps - e^t)/(e^eps - 1)) or t - eps; an
 * actual eps-BR mechanism, so its delta is a lower bound on what any
 * sound accountant reports for k bounded_range(eps) events. */
static double
rrt_delta(double eps, double t, unsigned k, double e)
{
	double p = (exp(eps) - exp(t)) / expm1(eps), s = 0.0;

	for (unsigned i = 0; i <= k; i++) {
		double l = (double)k * t - (double)i * eps;

		if (l > e && p > 0.0 && p < 1.0)
			s += exp(lgamma(k + 1.0) - lgamma(i + 1.0) - lgamma(k - i + 1.0) +
				 (k - i) * log(p) + i * log1p(-p)) *
			     -expm1(e - l);
		else if (l > e && p == 1.0 && i == 0)
			s += -expm1(e - l);
	}
	return s;
}

/* k-fold randomized response(eps): delta(e) = sum over i of C(k, i)
 * p^(k-i) (1-p)^i (1 - e^(e - (k - 2i) eps))_+, p = e^eps / (1 + e^eps):
 * RR_t with range 2 eps and t = eps. */
static double
rr_delta(double eps, unsigned k, double e)
{
	return rrt_delta(2.0 * eps, eps, k, e);
}

START_TEST(test_randomized_response)
{
	const unsigned ks[] = { 1, 10, 25 };

	for (unsigned i = 0; i < 3; i++) {
		struct dp_event_tree t = leaf(DP_EVENT_PURE, 0.3);
		double K = ks[i];

		if (ks[i] > 1)
			t = self_composed(t, ks[i]);
		for (double e = 0.0; e < 0.3 * K; e += 0.1 * K) {
			struct pld_interval r;
			double x = rr_delta(0.3, ks[i], e);

			ck_assert_int_eq(pld_delta(&t, e, 0.0, &r, NULL), ERR_OK);
			ck_assert_double_le(r.lower, x * (1 + 1e-10));
			ck_assert_double_ge(r.upper, x * (1 - 1e-10));
			/* atoms on the grid: 0.3 = 3000 h up to round-off */
			ck_assert_double_le(r.upper - x, 1e-6);
		}
	}
}
END_TEST

/*
 * bounded_range(eps): one event's upper estimate is the exact curve
 * (e^(eps/2) - e^(e/2))^2 / (e^eps - 1) (pld.c, br_delta) to the grid's
 * error, and its lower estimate is below it; k events (k = 2, 8, 30) are
 * above the best RR_t composition (t on a 201-point grid; for k = 2 also
 * two different t's, the adaptive-looking heterogeneous case) and below
 * k-fold randomized response(eps), the pair used before.
 */
START_TEST(test_bounded_range)
{
	const double eps = 0.5;
	const unsigned ks[] = { 1, 2, 8, 30 };

	for (unsigned i = 0; i < 4; i++) {
		struct dp_event_tree t = leaf(DP_EVENT_BOUNDED_RANGE, eps);
		double K = ks[i], worst_gain = 0.0;

		if (ks[i] > 1)
			t = self_composed(t, ks[i]);
		for (double e = 0.0; e < 0.8 * eps * K; e += 0.1 * eps * K) {
			struct pld_interval r;
			double lb = 0.0, rr = rr_delta(eps, ks[i], e);

			for (int j = 0; j <= 200; j++)
				lb = fmax(lb, rrt_delta(eps, eps * j / 200.0, ks[i], e));
			if (ks[i] == 2)
				for (int j = 0; j <= 50; j++)
					for (int m = 0; m <= 50; m++) {
						double t1 = eps * j / 50.0, t2 = eps * m / 50.0;
						double p1 = (exp(eps) - exp(t1)) / expm1(eps);
						double p2 = (exp(eps) - exp(t2)) / expm1(eps);
						double l[4] = { t1 + t2, t1 + t2 - eps,
								t1 + t2 - eps, t1 + t2 - 2 * eps };
						double w[4] = { p1 * p2, p1 * (1 - p2),
								(1 - p1) * p2,
								(1 - p1) * (1 - p2) };
						double d = 0.0;

						for (int q = 0; q < 4; q++)
							if (l[q] > e)
								d += w[q] * -expm1(e - l[q]);
						lb = fmax(lb, d);
					}
			ck_assert_int_eq(pld_delta(&t, e, 0.0, &r, NULL), ERR_OK);
			ck_assert_double_ge(r.upper, lb * (1 - 1e-10));
			ck_assert_double_le(r.lower, r.upper);
			ck_assert_double_lt(r.upper, rr);
			if (ks[i] == 1) {
				double x = exp(e) * pow(expm1(0.5 * (eps - e)), 2) / expm1(eps);

				ck_assert_double_le(fabs(lb - x), 1e-6 * x + 1e-15);
				ck_assert_double_le(r.lower, x * (1 + 1e-10));
				ck_assert_double_le(r.upper - x, 1e-4 * x + 1e-12);
			}
			worst_gain = fmax(worst_gain, r.upper / rr);
			printf("bounded_range %g x %u, e = %.3f: best RR_t %.6g  pld [%.6g, %.6g]  "
			       "randomized response %.6g\n",
			       eps, ks[i], e, lb, r.lower, r.upper, rr);
		}
		ck_assert_double_lt(worst_gain, 0.75);
	}
}
END_TEST

/* k Gaussians of multiplier z = one Gaussian with z / sqrt(k); the
 * interval brackets it and is at most 2 K h wide (K = k leaves). */
START_TEST(test_self_composition)
{
	const unsigned ks[] = { 3, 16, 100 };
	const double zs[] = { 1.7320508075688772, 4.0, 10.0 };

	for (unsigned i = 0; i < 3; i++) {
		struct dp_event_tree t = self_composed(leaf(DP_EVENT_GAUSSIAN, zs[i]), ks[i]);
		struct pld_interval r;
		double mu = sqrt((double)ks[i]) / zs[i], x = ag_eps(mu, 1e-5);

		ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_OK);
		printf("%u gaussians z=%g: exact %.8f pld [%.8f, %.8f]\n", ks[i], zs[i], x, r.lower,
		       r.upper);
		ck_assert_double_le(r.lower, x);
		ck_assert_double_ge(r.upper, x);
		ck_assert_double_le(r.upper - r.lower, 2.0 * ks[i] * PLD_DEFAULT_STEP);
	}
	/* docs/privacy-model.md §3: three Gaussians z = sqrt(3), delta(1) = 0.1269367375 */
	{
		struct dp_event_tree t = self_composed(leaf(DP_EVENT_GAUSSIAN, sqrt(3.0)), 3);
		struct pld_interval r;

		ck_assert_int_eq(pld_delta(&t, 1.0, 0.0, &r, NULL), ERR_OK);
		ck_assert_double_le(r.lower, 0.1269367375);
		ck_assert_double_ge(r.upper, 0.1269367374);
		ck_assert_double_le(r.upper - 0.1269367375, 1e-4);
	}
}
END_TEST

/* composed of distinct children = self_composed where they agree; mixed
 * Gaussians against the analytic curve with mu = sqrt(sum 1/z^2). */
START_TEST(test_composed)
{
	struct dp_event_tree a = leaf(DP_EVENT_GAUSSIAN, 2.0), b = leaf(DP_EVENT_GAUSSIAN, 3.0),
			     c = leaf(DP_EVENT_LAPLACE, 2.0), t;
	const struct dp_event_tree *parts[] = { &a, &b, &c };
	struct pld_interval r, r2;
	double x = ag_eps(sqrt(0.25 + 1.0 / 9.0), 1e-5);

	ck_assert_int_eq(dp_event_join(&t, DP_EVENT_COMPOSED, parts, 2, NULL), ERR_OK);
	ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_OK);
	ck_assert_double_le(r.lower, x);
	ck_assert_double_ge(r.upper, x);
	ck_assert_double_le(r.upper - x, 4 * PLD_DEFAULT_STEP);
	/* a Laplace on top costs more */
	ck_assert_int_eq(dp_event_join(&t, DP_EVENT_COMPOSED, parts, 3, NULL), ERR_OK);
	ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r2, NULL), ERR_OK);
	ck_assert_double_gt(r2.lower, r.upper);
	/* parallel of equal children = the child */
	parts[1] = &a;
	ck_assert_int_eq(dp_event_join(&t, DP_EVENT_PARALLEL, parts, 2, NULL), ERR_OK);
	ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_OK);
	ck_assert_double_le(r.lower, ag_eps(0.5, 1e-5));
	ck_assert_double_ge(r.upper, ag_eps(0.5, 1e-5));
}
END_TEST

static struct dp_event_tree
wor(double z, uint64_t n, uint64_t batch, uint64_t k)
{
	struct dp_event_tree t = leaf(DP_EVENT_GAUSSIAN, z);
	struct dp_event w = { .type = DP_EVENT_SAMPLED_WOR, .n = n, .batch = batch };

	ck_assert_int_eq(dp_event_wrap(&t, &w, NULL), ERR_OK);
	return k > 1 ? self_composed(t, k) : t;
}

/* Brute force: delta of the k-fold (k = 1, 2) product of the pair
 * R1 = g N(1, z^2) + (1 - g) N(0, z^2), R2 = N(0, z^2) in the order
 * given, by the composite Simpson rule on [-12z, 1 + 12z]^k (4000 cells
 * per axis). */
static double
mix_density(double x, double z, double g, int first)
{
	double a = exp(-0.5 * x * x / (z * z)), b = exp(-0.5 * (x - 1) * (x - 1) / (z * z));
	double c = 1.0 / (z * 2.5066282746310002);

	return c * (first ? g * b + (1 - g) * a : a);
}

static double
brute_delta(double z, double g, int k, double eps, int order)
{
	enum { N = 4000 };
	double lo = -12 * z, hi = 1 + 12 * z, dx = (hi - lo) / N, s = 0.0, ee = exp(eps);
	static double w[N + 1], p1[N + 1], p2[N + 1];

	for (int i = 0; i <= N; i++) {
		double x = lo + i * dx;

		w[i] = (i == 0 || i == N) ? 1 : (i % 2 ? 4 : 2);
		p1[i] = mix_density(x, z, g, order == 0);
		p2[i] = mix_density(x, z, g, order != 0);
	}
	if (k == 1)
		for (int i = 0; i <= N; i++)
			s += w[i] * fmax(p1[i] - ee * p2[i], 0.0) * dx / 3;
	else
		for (int i = 0; i <= N; i++)
			for (int j = 0; j <= N; j++)
				s += w[i] * w[j] * fmax(p1[i] * p1[j] - ee * p2[i] * p2[j], 0.0) *
				     dx * dx / 9;
	return s;
}

/*
 * Sampling without replacement (replace-one): the PLD's delta against
 * (k = 1) the dominating curve gamma delta_G(log(1 + (e^eps - 1)/gamma))
 * of Zhu, Dong & Wang's theorem, and against the brute-force profile of
 * the pair (gamma P + (1 - gamma) Q, Q) in both orders (k = 1, 2): the
 * symmetrised dominating pair's curve is never below either.
 */
START_TEST(test_wor_brute_force)
{
	const double z = 1.0, g = 0.1;
	const double es[] = { 0.0, 0.1, 0.3, 0.7 };

	for (int k = 1; k <= 2; k++)
		for (unsigned i = 0; i < 4; i++) {
			struct dp_event_tree t = wor(z, 100, 10, (uint64_t)k);
			struct pld_interval r;
			double b0 = brute_delta(z, g, k, es[i], 0),
			       b1 = brute_delta(z, g, k, es[i], 1);
			double bmax = fmax(b0, b1);

			ck_assert_int_eq(pld_delta(&t, es[i], 0.0, &r, NULL), ERR_OK);
			printf("wor k=%d eps=%g: brute %.10f / %.10f pld [%.10f, %.10f]\n", k,
			       es[i], b0, b1, r.lower, r.upper);
			ck_assert_double_ge(r.upper,
					    bmax - 1e-6); /* Simpson error <= 1e-6 (kink) */
			if (k == 1) {
				double d, x;

				ck_assert_int_eq(ag_delta(z, log1p(expm1(es[i]) / g), &d, NULL),
						 ERR_OK);
				x = g * d;
				ck_assert_double_le(fabs(b0 - x), 1e-6);
				/* on the grid the upper estimate is the curve itself */
				ck_assert_double_le(fabs(r.upper - x), 1e-9);
			} else {
				/* the symmetrised pair costs more than either order
				 * of (gamma P + (1 - gamma) Q, Q): measured 11.6 %
				 * at eps = 0 (0.06525 vs 0.05844); a regression
				 * guard, not a tightness claim */
				ck_assert_double_le(r.upper, bmax * 1.15);
			}
		}
}
END_TEST

START_TEST(test_wor_monotone)
{
	double prev = 0.0;

	for (uint64_t k = 1; k <= 1000; k *= 10) {
		struct dp_event_tree t = wor(1.0, 10000, 100, k);
		struct pld_interval r;

		ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_OK);
		ck_assert_double_gt(r.upper, prev);
		prev = r.upper;
	}
	prev = INFINITY;
	for (double z = 0.8; z <= 2.0; z += 0.4) {
		struct dp_event_tree t = wor(z, 10000, 100, 100);
		struct pld_interval r;

		ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_OK);
		ck_assert_double_lt(r.upper, prev);
		prev = r.upper;
	}
	/* batch = n is the base event */
	{
		struct dp_event_tree t = wor(2.0, 50, 50, 1), b = leaf(DP_EVENT_GAUSSIAN, 2.0);
		struct pld_interval r, rb;

		ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_OK);
		ck_assert_int_eq(pld_epsilon(&b, 1e-5, 0.0, &rb, NULL), ERR_OK);
		ck_assert(r.upper == rb.upper);
	}
}
END_TEST

START_TEST(test_monotone)
{
	double prev = INFINITY;

	for (double z = 0.6; z < 5.0; z *= 1.3) {
		struct dp_event_tree t = leaf(DP_EVENT_GAUSSIAN, z);
		struct pld_interval r;

		ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_OK);
		ck_assert_double_lt(r.upper, prev);
		prev = r.upper;
	}
	prev = 0.0;
	for (uint64_t k = 1; k <= 64; k *= 2) {
		struct dp_event_tree t = self_composed(leaf(DP_EVENT_LAPLACE, 5.0), k);
		struct pld_interval r;

		ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_OK);
		ck_assert_double_gt(r.upper, prev);
		ck_assert_double_le(r.lower, r.upper);
		/* never above basic composition k / b */
		ck_assert_double_le(r.upper, (double)k / 5.0 + 1e-9);
		prev = r.upper;
	}
}
END_TEST

START_TEST(test_unsupported)
{
	struct dp_event_tree t, a = leaf(DP_EVENT_GAUSSIAN, 2.0), b = leaf(DP_EVENT_GAUSSIAN, 3.0);
	const struct dp_event_tree *parts[] = { &a, &b };
	struct pld_interval r = { -7.0, -7.0 };
	struct err e = { 0 };
	struct dp_event wor = { .type = DP_EVENT_SAMPLED_WOR, .n = 100, .batch = 10 };

	dp_event_zcdp(&t, DP_REPLACE_ONE, 0.1);
	ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, &e), ERR_INVALID);
	ck_assert_str_eq(e.msg, PLD_MSG_UNSUPPORTED);
	dp_event_approx(&t, DP_REPLACE_ONE, 1.0, 1e-6);
	ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_INVALID);
	t = self_composed(a, 2);
	ck_assert_int_eq(dp_event_wrap(&t, &wor, NULL), ERR_OK);
	ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_INVALID);
	/* parallel of different children: at the root the largest child's
	 * epsilon (a record is in one part), below it unsupported */
	ck_assert_int_eq(dp_event_join(&t, DP_EVENT_PARALLEL, parts, 2, NULL), ERR_OK);
	{
		struct pld_interval ra, rt;
		struct dp_event sc = { .type = DP_EVENT_SELF_COMPOSED, .count = 2 };

		ck_assert_int_eq(pld_epsilon(&t, 1e-5, 1e-3, &rt, NULL), ERR_OK);
		ck_assert_int_eq(pld_epsilon(&a, 1e-5, 1e-3, &ra, NULL), ERR_OK);
		ck_assert_double_eq(rt.upper, ra.upper); /* z = 2 costs more than z = 3 */
		ck_assert_int_eq(dp_event_wrap(&t, &sc, NULL), ERR_OK);
		ck_assert_int_eq(pld_epsilon(&t, 1e-5, 0.0, &r, NULL), ERR_INVALID);
	}
	ck_assert_int_eq(pld_epsilon(&a, 0.0, 0.0, &r, NULL), ERR_INVALID);
	ck_assert_int_eq(pld_epsilon(&a, 1e-5, -1.0, &r, NULL), ERR_INVALID);
	ck_assert_int_eq(pld_delta(&a, -1.0, 0.0, &r, NULL), ERR_INVALID);
	ck_assert(r.upper == -7.0 && r.lower == -7.0);
	/* a grid too fine for PLD_MAX_POINTS fails closed */
	ck_assert_int_eq(pld_epsilon(&a, 1e-5, 1e-7, &r, NULL), ERR_NUMERIC);
}
END_TEST

static Suite *
pld_suite(void)
{
	Suite *s = suite_create("pld");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_fft);
	tcase_add_test(tc, test_gaussian_analytic);
	tcase_add_test(tc, test_laplace_closed_form);
	tcase_add_test(tc, test_randomized_response);
	tcase_add_test(tc, test_bounded_range);
	tcase_add_test(tc, test_self_composition);
	tcase_add_test(tc, test_composed);
	tcase_add_test(tc, test_monotone);
	tcase_add_test(tc, test_wor_brute_force);
	tcase_add_test(tc, test_wor_monotone);
	tcase_add_test(tc, test_unsupported);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pld_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
