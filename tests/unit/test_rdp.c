/*
 * test_rdp.c - unit tests of the Renyi accountant (algorithms/privacy/rdp.c).
 *
 * Where the numbers come from:
 *  - the published values of docs/privacy-model.md §3 (dp_accounting's own
 *    tests), on the reference order grid given there, to the printed digits;
 *  - closed forms (gaussian alpha/(2 z^2), Mironov's Laplace formula in its
 *    original, unfactored form, pure and bounded-range bounds);
 *  - independent slow implementations written here in long double, linear
 *    space: WBK19 Theorem 9 (pure and Laplace bases), Theorem 27 with the
 *    moments as plain alternating sums (accurate for the small orders and
 *    moderate noise used), MTZ19's integer A_alpha;
 *  - properties: self_composed(e, k) equals the k-fold composed event for
 *    every event type; monotonicity in steps, sampling rate and noise;
 *    batch = n is the base event; delta(eps) and eps(delta) invert each
 *    other; every fail-closed case returns an error and leaves the outputs
 *    untouched.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "privacy/analytic_gaussian.h"
#include "privacy/event.h"
#include "privacy/rdp.h"
#include "event_builders.h"

#define SENTINEL (-12345.0)

/* ------------------------------------------------------------------ */
/* Tree builders                                                       */

/* k copies of t, composed */
static void
curve(const struct dp_event_tree *t, const struct rdp_grid *g, double *out)
{
	struct err e = { 0 };
	enum err_code rc = rdp_curve(t, g, out, &e);

	ck_assert_msg(rc == ERR_OK, "rdp_curve: %s (%s)", e.msg, e.detail);
}

static double
epsilon_of(const struct dp_event_tree *t, const struct rdp_grid *g, double delta, double *order)
{
	double rdp[RDP_MAX_ORDERS], eps = SENTINEL, o = SENTINEL;
	struct err e = { 0 };

	curve(t, g, rdp);
	ck_assert_msg(rdp_to_epsilon(g, rdp, delta, &eps, &o, &e) == ERR_OK, "rdp_to_epsilon: %s",
		      e.msg);
	if (order != NULL)
		*order = o;
	return eps;
}

static void
grid_of(struct rdp_grid *g, const double *orders, unsigned n)
{
	memset(g, 0, sizeof(*g));
	for (unsigned k = 0; k < n; k++)
		g->order[k] = orders[k];
	g->n = n;
}

static void
integer_grid(struct rdp_grid *g, unsigned from, unsigned to)
{
	memset(g, 0, sizeof(*g));
	for (unsigned a = from; a <= to; a++)
		g->order[g->n++] = a;
}

static bool
close_rel(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

/* ------------------------------------------------------------------ */
/* Published values (docs/privacy-model.md §3)                          */

START_TEST(test_published_values)
{
	struct rdp_grid ref, g32;
	struct dp_event_tree t;
	double eps, order, rdp[RDP_MAX_ORDERS];
	struct err e = { 0 };

	rdp_grid_reference(&ref);

	/* Poisson q = 150/60000, z = 1.3, 6000 steps, delta = 1e-5 (add/remove). */
	t = self_composed(poisson(gaussian(DP_ADD_REMOVE, 1.3), 150.0 / 60000.0), 6000);
	eps = epsilon_of(&t, &ref, 1e-5, &order);
	printf("published 1: eps = %.12f at order %g (want 0.7242234026 at 19)\n", eps, order);
	ck_assert_msg(fabs(eps - 0.7242234026) < 5e-11, "eps = %.12f", eps);
	ck_assert(order == 19.0);

	/* Poisson q = 100/100000, z = 1.0, 30000 steps, delta = 1e-7. */
	t = self_composed(poisson(gaussian(DP_ADD_REMOVE, 1.0), 100.0 / 100000.0), 30000);
	eps = epsilon_of(&t, &ref, 1e-7, &order);
	printf("published 2: eps = %.12f at order %g (want 1.4154988495 at 13)\n", eps, order);
	ck_assert_msg(fabs(eps - 1.4154988495) < 5e-11, "eps = %.12f", eps);
	ck_assert(order == 13.0);

	/* RDP = 1.1 on orders 2..32, delta = 1e-5. */
	integer_grid(&g32, 2, 32);
	for (unsigned k = 0; k < g32.n; k++)
		rdp[k] = 1.1;
	ck_assert_int_eq(rdp_to_epsilon(&g32, rdp, 1e-5, &eps, &order, &e), ERR_OK);
	printf("published 3: eps = %.14f at order %g (want 1.32783806176 at 32)\n", eps, order);
	ck_assert_msg(fabs(eps - 1.32783806176) < 5e-12, "eps = %.14f", eps);
	ck_assert(order == 32.0);
	fflush(stdout);
}
END_TEST

/* dp_accounting's own test of the Poisson-sampled Gaussian curve
 * (rdp_privacy_accountant_test.py, test_compute_rdp_poisson_sampled_gaussian:
 * z = 2.5, q = 0.01, 50 steps), to the 9 printed digits. */
START_TEST(test_published_poisson_curve)
{
	static const double want[] = { 6.70579741e-04, 1.08548710e-03, 2.18075656e-03,
				       2.38460375e-02, 1.67416308e02 };
	struct rdp_grid g;
	double rdp[RDP_MAX_ORDERS];
	struct dp_event_tree t = self_composed(poisson(gaussian(DP_ADD_REMOVE, 2.5), 0.01), 50);

	grid_of(&g, (double[]){ 1.5, 2.5, 5.0, 50.0, 100.0 }, 5);
	curve(&t, &g, rdp);
	for (unsigned k = 0; k < g.n; k++) {
		printf("poisson curve order %g: %.9e (want %.8e)\n", g.order[k], rdp[k], want[k]);
		ck_assert_msg(fabs(rdp[k] / want[k] - 1.0) < 5e-9, "order %g: %.12e vs %.8e",
			      g.order[k], rdp[k], want[k]);
	}
	fflush(stdout);
}
END_TEST

/* The finer default grid may only do better on the same events. */
START_TEST(test_default_grid_no_worse)
{
	struct rdp_grid ref, def;
	struct dp_event_tree t;

	rdp_grid_reference(&ref);
	rdp_grid_default(&def);
	t = self_composed(poisson(gaussian(DP_ADD_REMOVE, 1.3), 150.0 / 60000.0), 6000);
	ck_assert(epsilon_of(&t, &def, 1e-5, NULL) <= epsilon_of(&t, &ref, 1e-5, NULL) + 1e-12);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Grids                                                               */

START_TEST(test_grids)
{
	struct rdp_grid g;
	bool have_int[65] = { false };
	unsigned fractional_low = 0;
	struct err e = { 0 };

	rdp_grid_default(&g);
	ck_assert_int_eq(rdp_grid_check(&g, &e), ERR_OK);
	ck_assert_uint_eq(g.n, 212);
	for (unsigned k = 0; k < g.n; k++) {
		if (g.order[k] < 2.0)
			fractional_low++;
		if (g.order[k] <= 64 && g.order[k] == floor(g.order[k]))
			have_int[(int)g.order[k]] = true;
	}
	ck_assert_uint_ge(fractional_low, 20);
	for (int a = 2; a <= 64; a++)
		ck_assert_msg(have_int[a], "integer order %d missing", a);
	ck_assert(g.order[g.n - 1] >= 512.0);
	ck_assert(g.order[0] == 1.01);

	rdp_grid_reference(&g);
	ck_assert_int_eq(rdp_grid_check(&g, &e), ERR_OK);
	ck_assert_uint_eq(g.n, 72);
	ck_assert(g.order[0] == 1.25 && g.order[9] == 4.5 && g.order[10] == 5.0);
	ck_assert(g.order[68] == 63.0 && g.order[71] == 512.0);

	/* bad grids */
	grid_of(&g, (double[]){ 2.0, 1.5 }, 2);
	ck_assert_int_eq(rdp_grid_check(&g, &e), ERR_INVALID);
	grid_of(&g, (double[]){ 1.0, 2.0 }, 2);
	ck_assert_int_eq(rdp_grid_check(&g, &e), ERR_INVALID);
	grid_of(&g, (double[]){ 2.0, NAN }, 2);
	ck_assert_int_eq(rdp_grid_check(&g, &e), ERR_INVALID);
	grid_of(&g, (double[]){ 2.0, INFINITY }, 2);
	ck_assert_int_eq(rdp_grid_check(&g, &e), ERR_INVALID);
	g.n = 0;
	ck_assert_int_eq(rdp_grid_check(&g, &e), ERR_INVALID);
	g.n = RDP_MAX_ORDERS + 1;
	ck_assert_int_eq(rdp_grid_check(&g, &e), ERR_INVALID);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Closed forms                                                        */

START_TEST(test_gaussian_exact)
{
	static const double zs[] = { 0.3, 0.7, 1.0, 1.3, 2.0, 5.0, 37.0 };
	struct rdp_grid g;
	double rdp[RDP_MAX_ORDERS];

	rdp_grid_default(&g);
	for (unsigned i = 0; i < sizeof(zs) / sizeof(zs[0]); i++) {
		struct dp_event_tree t = gaussian(DP_REPLACE_ONE, zs[i]);

		curve(&t, &g, rdp);
		for (unsigned k = 0; k < g.n; k++)
			ck_assert_msg(rdp[k] == g.order[k] / (2.0 * zs[i] * zs[i]),
				      "z = %g, order %g: %.17g", zs[i], g.order[k], rdp[k]);
	}
}
END_TEST

/* Renyi divergence of binary randomized response with e^eps : 1 odds,
 * as printed (Mironov 2017, Proposition 5), in long double. */
static long double
rr_rdp_ref(long double a, long double eps)
{
	return logl((expl(a * eps) + expl((1 - a) * eps)) / (1 + expl(eps))) / (a - 1);
}

START_TEST(test_laplace_pure_closed_forms)
{
	static const double bs[] = { 0.5, 1.0, 2.0, 10.0 };
	struct rdp_grid g;
	double rdp[RDP_MAX_ORDERS];

	grid_of(&g, (double[]){ 1.01, 1.5, 2.0, 3.0, 7.5, 20.0, 64.0 }, 7);
	for (unsigned i = 0; i < sizeof(bs) / sizeof(bs[0]); i++) {
		struct dp_event_tree t = laplace(bs[i]);
		double eps = 1.0 / bs[i];

		curve(&t, &g, rdp);
		for (unsigned k = 0; k < g.n; k++) {
			long double a = g.order[k], b = bs[i];
			/* Mironov 2017, Proposition 6, as printed. */
			long double want = logl(a / (2 * a - 1) * expl((a - 1) / b) +
						(a - 1) / (2 * a - 1) * expl(-a / b)) /
					   (a - 1);

			ck_assert_msg(close_rel(rdp[k], (double)want, 1e-12),
				      "laplace b = %g order %g: %.17g vs %.17Lg", bs[i], g.order[k],
				      rdp[k], want);
			ck_assert(rdp[k] <= eps * (1 + 1e-15));
			ck_assert(rdp[k] <= 0.5 * g.order[k] * eps * eps * (1 + 1e-15));
		}
	}
	for (double eps = 0.1; eps < 5.0; eps *= 2.5) {
		struct dp_event_tree p = pure(eps), br = bounded_range(eps), zc = zcdp(eps);
		double rp[RDP_MAX_ORDERS], rb[RDP_MAX_ORDERS], rz[RDP_MAX_ORDERS];

		curve(&p, &g, rp);
		curve(&br, &g, rb);
		curve(&zc, &g, rz);
		for (unsigned k = 0; k < g.n; k++) {
			double a = g.order[k];
			long double rr = rr_rdp_ref(a, eps);

			/* pure: randomized response's divergence, below both
			 * classical bounds; bounded range: also eps^2/8-zCDP */
			ck_assert_msg(close_rel(rp[k], (double)rr, 1e-12),
				      "pure eps = %g order %g: %.17g vs %.17Lg", eps, a, rp[k], rr);
			ck_assert(rp[k] <= fmin(eps, a * eps * eps / 2));
			ck_assert(rb[k] == fmin(rp[k], a * eps * eps / 8));
			ck_assert(rz[k] == eps * a);
		}
	}
	/* The gain over min(eps, a eps^2 / 2) at eps = 0.1: 0.4 % at order 2
	 * (0.0099586), 12 % at 10 (0.043888), and at order 64 the curve is
	 * 10 % below eps itself (0.089772). */
	{
		struct dp_event_tree p = pure(0.1);
		double rp[RDP_MAX_ORDERS];
		struct rdp_grid h;

		grid_of(&h, (double[]){ 2.0, 10.0, 64.0 }, 3);
		curve(&p, &h, rp);
		ck_assert_msg(rp[0] < 0.997 * 0.01 && rp[1] < 0.9 * 0.05 && rp[2] < 0.91 * 0.1,
			      "%.17g %.17g %.17g", rp[0], rp[1], rp[2]);
	}
}
END_TEST

/*
 * Full-batch Gaussian, T steps (docs/conventions.md §3): rho = T / (2 z^2) and the
 * classical zCDP bound rho + 2 sqrt(rho log(1/delta)) is the minimum over
 * all orders of the basic conversion, which the improved conversion beats
 * at every order; the exact analytic-Gaussian epsilon (mu = sqrt(T) / z) is
 * a lower bound on any valid one.  So exact <= ours <= classical.
 */
START_TEST(test_full_batch_gaussian_sandwich)
{
	static const struct {
		double z;
		uint64_t steps;
		double delta;
	} c[] = { { 1.0, 1, 1e-5 },       { 3.7306, 1, 1e-5 }, { 4.2385, 100, 1e-6 },
		  { 25.5212, 400, 1e-7 }, { 0.6, 3, 1e-3 },    { 120.0, 7, 1e-9 } };
	struct rdp_grid g;

	rdp_grid_default(&g);
	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct dp_event_tree t =
			self_composed(gaussian(DP_REPLACE_ONE, c[i].z), c[i].steps);
		double rho = c[i].steps / (2.0 * c[i].z * c[i].z);
		double classical = rho + 2.0 * sqrt(rho * log(1.0 / c[i].delta));
		double mu = sqrt((double)c[i].steps) / c[i].z, exact, ours;
		struct err e = { 0 };

		ck_assert_int_eq(ag_epsilon_mu(mu, c[i].delta, &exact, &e), ERR_OK);
		ours = epsilon_of(&t, &g, c[i].delta, NULL);
		printf("gaussian z %g x %lu, delta %g: exact %.6f <= rdp %.6f <= classical %.6f\n",
		       c[i].z, (unsigned long)c[i].steps, c[i].delta, exact, ours, classical);
		ck_assert(exact <= ours && ours <= classical);
	}
	fflush(stdout);
}
END_TEST

/*
 * The default grid costs at most 1 % of epsilon against dp_accounting's
 * default orders (1.1 to 10.9 by 0.1, 11 to 63, 128, 256, 512, 1024: the
 * RdpAccountant's DEFAULT_RDP_ORDERS, typed from its documentation), the
 * same curves and conversion on both: compositions of pure, Gaussian and
 * sampled Gaussian events from epsilon 1e-2 to 1e4.  The worst measured
 * ratio is 1.0044.  (The pure-DP curve min(eps, a eps^2 / 2) this
 * accountant used before randomized response's was 2.5 % above
 * dp_accounting's randomized-response formula on its default orders, as
 * a Python replica of it evaluates, at 100 steps of eps 0.1, delta 1e-5:
 * 4.7289 vs 4.6154.)  Breaking the grid (orders 2 to 15 by 1 instead of 0.25) fails
 * it: 1.0102 at 100000 steps of eps 0.003, delta 1e-3.
 */
START_TEST(test_default_grid_vs_reference_orders)
{
	static const double e0s[] = { 0.003, 0.1, 0.5, 2.0 }, zs[] = { 0.1, 0.4, 1.5, 10.0 },
			    deltas[] = { 1e-3, 1e-6, 1e-12 };
	static const uint64_t ks[] = { 1, 10, 1000, 100000 };
	struct rdp_grid def, da;
	double worst = 0.0;
	unsigned n = 0;

	rdp_grid_default(&def);
	memset(&da, 0, sizeof(da));
	for (int x = 1; x < 100; x++)
		da.order[n++] = 1.0 + x / 10.0;
	for (int a = 11; a < 64; a++)
		da.order[n++] = a;
	for (int a = 128; a <= 1024; a *= 2)
		da.order[n++] = a;
	da.n = n;
	for (unsigned j = 0; j < 3 * 4; j++)
		for (unsigned k = 0; k < 4; k++)
			for (unsigned d = 0; d < 3; d++) {
				struct dp_event_tree leaf =
					j < 4   ? pure(e0s[j % 4])
					: j < 8 ? gaussian(DP_REPLACE_ONE, zs[j % 4])
						: wor(gaussian(DP_REPLACE_ONE, zs[j % 4]), 10000,
						      100);
				struct dp_event_tree t;
				double ours, ref;

				t = self_composed(leaf, ks[k]);
				ours = epsilon_of(&t, &def, deltas[d], NULL);
				ref = epsilon_of(&t, &da, deltas[d], NULL);
				if (ref > 0.0)
					worst = fmax(worst, ours / ref);
				ck_assert_msg(ours <= 1.01 * ref,
					      "leaf %u, %lu steps, delta %g: %.9g vs %.9g", j,
					      (unsigned long)ks[k], deltas[d], ours, ref);
			}
	printf("default grid against dp_accounting's orders: worst ratio %.5f\n", worst);
}
END_TEST

/* ------------------------------------------------------------------ */
/* self_composed(e, k) == composed of k copies, for every event type    */

static struct dp_event_tree
every_event(unsigned i, bool *more)
{
	struct dp_event_tree two[2];

	*more = true;
	switch (i) {
	case 0:
		return gaussian(DP_REPLACE_ONE, 1.1);
	case 1:
		return laplace(2.0);
	case 2:
		return pure(0.7);
	case 3:
		return bounded_range(1.3); /* exponential mechanism: docs/privacy-model.md §8 */
	case 4:
		return zcdp(0.05);
	case 5:
		return wor(gaussian(DP_REPLACE_ONE, 1.2), 1000, 30);
	case 6:
		return wor(laplace(1.5), 1000, 30);
	case 7:
		return wor(bounded_range(2.0), 500, 50);
	case 8:
		return poisson(gaussian(DP_ADD_REMOVE, 1.0), 0.02);
	case 9:
		two[0] = gaussian(DP_REPLACE_ONE, 2.0);
		two[1] = bounded_range(0.4);
		return join(DP_EVENT_COMPOSED, two, 2);
	case 10:
		two[0] = pure(0.3);
		two[1] = laplace(4.0);
		return join(DP_EVENT_PARALLEL, two, 2);
	case 11:
		return selection_tnb(gaussian(DP_REPLACE_ONE, 3.0), 1.0, 0.1);
	case 12:
		return selection_poisson(laplace(3.0), 5.0);
	case 13:
		two[0] = wor(gaussian(DP_REPLACE_ONE, 1.2), 1000, 30);
		two[1] = gaussian(DP_REPLACE_ONE, 2.5);
		return join(DP_EVENT_MIXTURE, two, 2);
	default:
		*more = false;
		return self_composed(bounded_range(0.9), 3);
	}
}

START_TEST(test_self_composed_every_type)
{
	struct rdp_grid g;
	bool more = true;

	rdp_grid_default(&g);
	for (unsigned i = 0; more; i++) {
		struct dp_event_tree base = every_event(i, &more);

		for (unsigned k = 2; k <= 5; k++) {
			struct dp_event_tree s = self_composed(base, k), c = repeat(base, k);
			double rs[RDP_MAX_ORDERS], rc[RDP_MAX_ORDERS], r1[RDP_MAX_ORDERS];

			curve(&s, &g, rs);
			curve(&c, &g, rc);
			curve(&base, &g, r1);
			for (unsigned j = 0; j < g.n; j++) {
				ck_assert_msg(close_rel(rs[j], rc[j], 1e-13),
					      "%s k=%u order %g: %.17g vs %.17g",
					      dp_event_type_name(base.node[0].type), k, g.order[j],
					      rs[j], rc[j]);
				ck_assert_msg(close_rel(rs[j], k * r1[j], 1e-13), "k x base");
			}
			ck_assert(close_rel(epsilon_of(&s, &g, 1e-6, NULL),
					    epsilon_of(&c, &g, 1e-6, NULL), 1e-13));
		}
	}
}
END_TEST

/* A mixture costs its worst child at every order: the pointwise maximum,
 * which is neither child's curve alone (50 sampled steps at q = 0.01,
 * z = 1 are cheaper than one Gaussian of z = 5 at orders near 3 and far
 * dearer above 9). */
START_TEST(test_mixture_is_worst_child)
{
	struct rdp_grid g;
	struct dp_event_tree two[2], m;
	double r0[RDP_MAX_ORDERS], r1[RDP_MAX_ORDERS], rm[RDP_MAX_ORDERS];
	bool first = false, second = false;

	rdp_grid_default(&g);
	two[0] = self_composed(wor(gaussian(DP_REPLACE_ONE, 1.0), 10000, 100), 50);
	two[1] = gaussian(DP_REPLACE_ONE, 5.0);
	m = join(DP_EVENT_MIXTURE, two, 2);
	curve(&two[0], &g, r0);
	curve(&two[1], &g, r1);
	curve(&m, &g, rm);
	for (unsigned j = 0; j < g.n; j++) {
		ck_assert_msg(rm[j] == fmax(r0[j], r1[j]), "order %g", g.order[j]);
		first = first || r0[j] > r1[j];
		second = second || r1[j] > r0[j];
	}
	ck_assert(first && second);
	ck_assert(epsilon_of(&m, &g, 1e-6, NULL) >=
		  fmax(epsilon_of(&two[0], &g, 1e-6, NULL), epsilon_of(&two[1], &g, 1e-6, NULL)));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Monotonicity                                                        */

static void
assert_curve_le(const struct dp_event_tree *a, const struct dp_event_tree *b,
		const struct rdp_grid *g, const char *what)
{
	double ra[RDP_MAX_ORDERS], rb[RDP_MAX_ORDERS];

	curve(a, g, ra);
	curve(b, g, rb);
	for (unsigned k = 0; k < g->n; k++)
		ck_assert_msg(ra[k] <= rb[k] * (1 + 1e-14), "%s: order %g: %.17g > %.17g", what,
			      g->order[k], ra[k], rb[k]);
}

START_TEST(test_monotone_steps)
{
	struct rdp_grid g;
	double last = 0.0;

	rdp_grid_default(&g);
	for (uint64_t k = 1; k <= 4096; k *= 4) {
		struct dp_event_tree t =
			self_composed(wor(gaussian(DP_REPLACE_ONE, 1.0), 10000, 100), k);
		double eps = epsilon_of(&t, &g, 1e-6, NULL);

		ck_assert_msg(eps > last, "steps %lu: %.17g <= %.17g", (unsigned long)k, eps, last);
		last = eps;
	}
}
END_TEST

START_TEST(test_monotone_sampling_rate)
{
	struct rdp_grid g;
	static const uint64_t batches[] = { 1, 10, 50, 200, 999, 1000 };
	static const double qs[] = { 1e-4, 1e-3, 0.01, 0.1, 0.5, 0.9, 1.0 };

	rdp_grid_default(&g);
	for (unsigned i = 0; i + 1 < sizeof(batches) / sizeof(batches[0]); i++) {
		struct dp_event_tree a, b;

		a = self_composed(wor(gaussian(DP_REPLACE_ONE, 0.9), 1000, batches[i]), 100);
		b = self_composed(wor(gaussian(DP_REPLACE_ONE, 0.9), 1000, batches[i + 1]), 100);
		assert_curve_le(&a, &b, &g, "wor gaussian batch");
		printf("wor batch %lu -> %lu: eps %.17g -> %.17g\n", (unsigned long)batches[i],
		       (unsigned long)batches[i + 1], epsilon_of(&a, &g, 1e-6, NULL),
		       epsilon_of(&b, &g, 1e-6, NULL));
		/* strictly, until the base curve caps it near batch = n */
		if (batches[i + 1] <= 200)
			ck_assert(epsilon_of(&a, &g, 1e-6, NULL) < epsilon_of(&b, &g, 1e-6, NULL));
		a = wor(laplace(0.8), 1000, batches[i]);
		b = wor(laplace(0.8), 1000, batches[i + 1]);
		assert_curve_le(&a, &b, &g, "wor laplace batch");
		a = wor(pure(3.0), 1000, batches[i]);
		b = wor(pure(3.0), 1000, batches[i + 1]);
		assert_curve_le(&a, &b, &g, "wor pure batch");
	}
	for (unsigned i = 0; i + 1 < sizeof(qs) / sizeof(qs[0]); i++) {
		struct dp_event_tree a, b;

		a = self_composed(poisson(gaussian(DP_ADD_REMOVE, 0.9), qs[i]), 100);
		b = self_composed(poisson(gaussian(DP_ADD_REMOVE, 0.9), qs[i + 1]), 100);
		assert_curve_le(&a, &b, &g, "poisson rate");
		/* strictly below the base curve, which caps the large rates */
		if (qs[i + 1] <= 0.1)
			ck_assert(epsilon_of(&a, &g, 1e-6, NULL) < epsilon_of(&b, &g, 1e-6, NULL));
		else
			ck_assert(epsilon_of(&a, &g, 1e-6, NULL) <= epsilon_of(&b, &g, 1e-6, NULL));
	}
}
END_TEST

START_TEST(test_monotone_noise)
{
	struct rdp_grid g;
	static const double zs[] = { 0.5, 0.7, 1.0, 1.5, 3.0, 10.0, 50.0 };

	rdp_grid_default(&g);
	for (unsigned i = 0; i + 1 < sizeof(zs) / sizeof(zs[0]); i++) {
		struct dp_event_tree a, b;

		/* larger noise (i + 1) must not cost more */
		a = gaussian(DP_REPLACE_ONE, zs[i + 1]);
		b = gaussian(DP_REPLACE_ONE, zs[i]);
		assert_curve_le(&a, &b, &g, "gaussian noise");
		a = self_composed(wor(gaussian(DP_REPLACE_ONE, zs[i + 1]), 5000, 50), 500);
		b = self_composed(wor(gaussian(DP_REPLACE_ONE, zs[i]), 5000, 50), 500);
		assert_curve_le(&a, &b, &g, "wor gaussian noise");
		ck_assert(epsilon_of(&a, &g, 1e-6, NULL) < epsilon_of(&b, &g, 1e-6, NULL));
		a = self_composed(poisson(gaussian(DP_ADD_REMOVE, zs[i + 1]), 0.01), 500);
		b = self_composed(poisson(gaussian(DP_ADD_REMOVE, zs[i]), 0.01), 500);
		assert_curve_le(&a, &b, &g, "poisson noise");
		a = laplace(zs[i + 1]);
		b = laplace(zs[i]);
		assert_curve_le(&a, &b, &g, "laplace noise");
		a = wor(laplace(zs[i + 1]), 100, 7);
		b = wor(laplace(zs[i]), 100, 7);
		assert_curve_le(&a, &b, &g, "wor laplace noise");
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Sampling without replacement                                        */

START_TEST(test_wor_full_batch_is_base)
{
	struct rdp_grid g;
	bool more = true;

	rdp_grid_default(&g);
	for (unsigned i = 0; more; i++) {
		struct dp_event_tree base = every_event(i, &more), w;
		double rb[RDP_MAX_ORDERS], rw[RDP_MAX_ORDERS];

		if (base.node[0].relation != DP_REPLACE_ONE)
			continue;
		w = wor(base, 777, 777);
		curve(&base, &g, rb);
		curve(&w, &g, rw);
		for (unsigned k = 0; k < g.n; k++)
			ck_assert_msg(rw[k] == rb[k], "batch = n changed order %g", g.order[k]);
	}
}
END_TEST

/* Sampling never costs more than the base, and amplifies a small rate. */
START_TEST(test_wor_amplifies)
{
	struct rdp_grid g;
	struct dp_event_tree b = gaussian(DP_REPLACE_ONE, 1.0), w = wor(b, 60000, 256);
	double rb[RDP_MAX_ORDERS], rw[RDP_MAX_ORDERS];

	rdp_grid_default(&g);
	curve(&b, &g, rb);
	curve(&w, &g, rw);
	for (unsigned k = 0; k < g.n; k++) {
		ck_assert(rw[k] <= rb[k]);
		if (g.order[k] <= 8.0)
			ck_assert_msg(rw[k] < 1e-3 * rb[k], "order %g: %.17g vs base %.17g",
				      g.order[k], rw[k], rb[k]);
	}
}
END_TEST

/* WBK19 Theorem 9, brute force in linear space (long double). */
static long double
binom(unsigned n, unsigned k)
{
	long double r = 1.0L;

	for (unsigned i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return r;
}

static double
slow_theorem9(double (*base)(double a, double p), double p, double einf, double gamma,
	      unsigned alpha)
{
	long double s = 1.0L, e2 = base(2.0, p), em1 = expm1l(einf);

	s += (long double)gamma * gamma * binom(alpha, 2) *
	     fminl(4.0L * expm1l(e2), expl(e2) * fminl(2.0L, em1 * em1));
	for (unsigned j = 3; j <= alpha; j++)
		s += powl(gamma, j) * binom(alpha, j) * expl((j - 1) * (long double)base(j, p)) *
		     fminl(2.0L, powl(em1, j));
	return (double)(logl(s) / (alpha - 1));
}

static double
pure_rdp(double a, double eps)
{
	return (double)rr_rdp_ref(a, eps);
}

static double
laplace_rdp_ref(double a, double b)
{
	long double la = a, lb = b;

	return (double)(logl(la / (2 * la - 1) * expl((la - 1) / lb) +
			     (la - 1) / (2 * la - 1) * expl(-la / lb)) /
			(la - 1));
}

START_TEST(test_wor_theorem9_bruteforce)
{
	struct {
		bool is_pure;
		double p;
		uint64_t n, batch;
	} cases[] = {
		{ true, 0.5, 1000, 10 }, { true, 3.0, 1000, 10 },  { true, 1.0, 100, 37 },
		{ false, 2.0, 1000, 5 }, { false, 0.3, 500, 100 }, { false, 1.0, 64, 1 },
	};
	struct rdp_grid g;
	double rdp[RDP_MAX_ORDERS];

	integer_grid(&g, 2, 12);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double (*base)(double, double) = cases[i].is_pure ? pure_rdp : laplace_rdp_ref;
		double einf = cases[i].is_pure ? cases[i].p : 1.0 / cases[i].p;
		double gamma = (double)cases[i].batch / (double)cases[i].n;
		double amp = log1p(gamma * expm1(einf));
		struct dp_event_tree t =
			wor(cases[i].is_pure ? pure(cases[i].p) : laplace(cases[i].p), cases[i].n,
			    cases[i].batch);

		curve(&t, &g, rdp);
		for (unsigned k = 0; k < g.n; k++) {
			unsigned a = (unsigned)g.order[k];
			double want = fmin(fmin(slow_theorem9(base, cases[i].p, einf, gamma, a),
						base(a, cases[i].p)),
					   amp);

			ck_assert_msg(close_rel(rdp[k], want, 1e-11),
				      "case %u order %u: %.17g vs %.17g", i, a, rdp[k], want);
		}
		/* Corollary 10 between integers, the value at 2 below it. */
		{
			struct rdp_grid f;
			double rf[RDP_MAX_ORDERS], k2, k3, k4, p = cases[i].p;

			grid_of(&f, (double[]){ 1.3, 1.9, 3.25 }, 3);
			curve(&t, &f, rf);
			k2 = slow_theorem9(base, p, einf, gamma, 2);
			k3 = 2 * slow_theorem9(base, p, einf, gamma, 3);
			k4 = 3 * slow_theorem9(base, p, einf, gamma, 4);
			ck_assert(close_rel(rf[0], fmin(fmin(k2, base(1.3, p)), amp), 1e-11));
			ck_assert(close_rel(rf[1], fmin(fmin(k2, base(1.9, p)), amp), 1e-11));
			ck_assert(close_rel(
				rf[2],
				fmin(fmin((0.75 * k3 + 0.25 * k4) / 2.25, base(3.25, p)), amp),
				1e-11));
		}
	}
}
END_TEST

/* WBK19 Theorem 27 with moments as alternating sums (long double). */
static double
slow_theorem27(double z, double gamma, unsigned alpha)
{
	long double m[40], s = 1.0L, c = 1.0L / (2.0L * z * z), e2 = 2 * c;

	for (unsigned l = 2; l <= alpha + 1; l += 2) {
		long double sum = 0.0L;

		for (unsigned i = 0; i <= l; i++)
			sum += ((l - i) % 2 ? -1.0L : 1.0L) * binom(l, i) *
			       expl(c * i * (i - 1.0L));
		m[l] = sum;
	}
	s += (long double)gamma * gamma * binom(alpha, 2) * fminl(4.0L * expm1l(e2), 2 * expl(e2));
	for (unsigned j = 3; j <= alpha; j++) {
		unsigned lo = 2 * (j / 2), hi = 2 * ((j + 1) / 2);

		s += powl(gamma, j) * binom(alpha, j) *
		     fminl(4.0L * sqrtl(m[lo] * m[hi]), 2.0L * expl(c * j * (j - 1.0L)));
	}
	return (double)(logl(s) / (alpha - 1));
}

START_TEST(test_wor_theorem27_slow)
{
	static const double zs[] = { 0.6, 0.8, 1.5, 3.0 };
	static const double gammas[] = { 0.001, 0.01, 0.2 };
	struct rdp_grid g;
	double rdp[RDP_MAX_ORDERS];

	integer_grid(&g, 2, 14);
	for (unsigned i = 0; i < sizeof(zs) / sizeof(zs[0]); i++)
		for (unsigned j = 0; j < sizeof(gammas) / sizeof(gammas[0]); j++) {
			uint64_t n = 100000, batch = (uint64_t)(gammas[j] * n);
			struct dp_event_tree t = wor(gaussian(DP_REPLACE_ONE, zs[i]), n, batch);

			curve(&t, &g, rdp);
			for (unsigned k = 0; k < g.n; k++) {
				unsigned a = (unsigned)g.order[k];
				double want = fmin(slow_theorem27(zs[i], gammas[j], a),
						   a / (2.0 * zs[i] * zs[i]));

				ck_assert_msg(close_rel(rdp[k], want, 1e-9),
					      "z %g gamma %g order %u: %.17g vs %.17g", zs[i],
					      gammas[j], a, rdp[k], want);
			}
		}
}
END_TEST

START_TEST(test_wor_speed)
{
	struct rdp_grid g;
	double rdp[RDP_MAX_ORDERS];
	struct dp_event_tree t =
		self_composed(wor(gaussian(DP_REPLACE_ONE, 1.1), 60000, 256), 2000);
	clock_t t0 = clock();

	rdp_grid_default(&g);
	curve(&t, &g, rdp);
	printf("wor gaussian on the default grid: %.3f s cpu, eps(1e-5) = %.6f\n",
	       (double)(clock() - t0) / CLOCKS_PER_SEC, epsilon_of(&t, &g, 1e-5, NULL));
	fflush(stdout);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Poisson                                                             */

START_TEST(test_poisson_slow)
{
	static const double zs[] = { 0.7, 1.0, 2.0 };
	static const double qs[] = { 0.001, 0.05, 0.3 };
	struct rdp_grid g;
	double rdp[RDP_MAX_ORDERS];

	integer_grid(&g, 2, 20);
	for (unsigned i = 0; i < 3; i++)
		for (unsigned j = 0; j < 3; j++) {
			struct dp_event_tree t = poisson(gaussian(DP_ADD_REMOVE, zs[i]), qs[j]);

			curve(&t, &g, rdp);
			for (unsigned k = 0; k < g.n; k++) {
				unsigned a = (unsigned)g.order[k];
				long double s = 0.0L, q = qs[j], z = zs[i];

				for (unsigned m = 0; m <= a; m++)
					s += binom(a, m) * powl(1 - q, a - m) * powl(q, m) *
					     expl((m * (m - 1.0L)) / (2 * z * z));
				ck_assert_msg(close_rel(rdp[k],
							fmin((double)(logl(s) / (a - 1)),
							     a / (2 * zs[i] * zs[i])),
							1e-10),
					      "z %g q %g order %u", zs[i], qs[j], a);
			}
		}
	/* Fractional orders: at most the interpolation of the convex cumulant. */
	{
		struct rdp_grid f;
		double rf[RDP_MAX_ORDERS], ri[RDP_MAX_ORDERS];
		struct dp_event_tree t = poisson(gaussian(DP_ADD_REMOVE, 1.0), 0.01);

		grid_of(&f, (double[]){ 2.0, 2.5, 3.0, 7.0, 7.25, 8.0 }, 6);
		curve(&t, &f, rf);
		grid_of(&g, (double[]){ 2.0, 3.0, 7.0, 8.0 }, 4);
		curve(&t, &g, ri);
		ck_assert(rf[1] * 1.5 <= (0.5 * ri[0] * 1 + 0.5 * ri[1] * 2) * (1 + 1e-12));
		ck_assert(rf[4] * 6.25 <= (0.75 * ri[2] * 6 + 0.25 * ri[3] * 7) * (1 + 1e-12));
		ck_assert(rf[1] > rf[0] && rf[1] < rf[2]);
	}
}
END_TEST

/*
 * Against numerical integration of A_alpha = int mu0 (1 - q + q mu1/mu0)^alpha
 * (mpmath quad, 60 digits, breakpoints at both modes z = 0 and z = alpha and
 * at z0; the parameter sets of dp_accounting's
 * test_compute_log_a_equals_mp plus two at large q): our value is an upper
 * bound and not far above.  RDP of one step.
 */
START_TEST(test_poisson_vs_quadrature)
{
	static const struct {
		double q, z, a, rdp;
	} c[] = {
		{ 1e-7, 0.1, 1.01, 4.003412322526395e-6 },
		{ 1e-6, 0.1, 256, 12786.130310969258 },
		{ 1e-5, 0.1, 256.1, 12793.441943506159 },
		{ 1e-6, 1, 27, 3.3728889634032684e-11 },
		{ 1e-4, 1, 1.5, 1.2885373907673299e-8 },
		{ 1e-3, 1, 2, 1.7182803522145154e-6 },
		{ 0.01, 10, 20, 1.0068263112022612e-5 },
		{ 0.1, 100, 20.5, 1.0252214593881178e-5 },
		{ 0.99, 0.1, 256, 12799.989910251063 },
		{ 0.999, 100, 256.1, 0.012779725746660574 },
		{ 0.5, 1, 1.5, 0.23515803448253102 },
		{ 0.3, 2, 3.7, 0.051984626899272513 },
		/* z = 2.5, q = 0.01: the curve above, one step */
		{ 0.01, 2.5, 1.5, 1.3001417943760795e-5 },
		{ 0.01, 2.5, 2.5, 2.1708361138362486e-5 },
	};

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct rdp_grid g;
		double rdp[RDP_MAX_ORDERS];
		struct dp_event_tree t = poisson(gaussian(DP_ADD_REMOVE, c[i].z), c[i].q);

		grid_of(&g, (double[]){ c[i].a }, 1);
		curve(&t, &g, rdp);
		printf("poisson q %g z %g order %g: %.17g / quadrature = %.9f\n", c[i].q, c[i].z,
		       c[i].a, rdp[0], rdp[0] / c[i].rdp);
		ck_assert_msg(rdp[0] >= c[i].rdp * (1 - 1e-10), "below the integral");
		/* Summing |binomials| costs up to a few percent at fractional orders
		 * (3 % at q = 0.01, z = 2.5, order 1.5, as in dp_accounting).  At
		 * q = 0.5, order 1.5 the series does not converge in 1000 terms (it
		 * falls like i^-3.5; dp_accounting returns inf there) and the
		 * fallback RDP(2) is 1.52 times the integral. */
		ck_assert_msg(rdp[0] <= c[i].rdp * (c[i].q == 0.5 ? 1.53 : 1.05),
			      "far above the integral");
	}
	fflush(stdout);
}
END_TEST

/*
 * The fractional-order series itself (MTZ19 with |binomials|), summed to
 * 6000 terms in 50-digit arithmetic (mpmath; the change from 3000 to 6000
 * terms is below 3e-13 relative except where noted): ours must not be below
 * it (truncation and rounding are covered) and not above by more than the
 * allowances.
 */
START_TEST(test_poisson_frac_series)
{
	static const struct {
		double q, z, a, rdp, above;
	} c[] = {
		{ 1e-7, 0.1, 1.01, 4.0034167294345396e-6, 1e-8 },
		{ 1e-4, 1, 1.5, 1.2890396055504374e-8, 1e-8 },
		{ 0.01, 2.5, 1.5, 1.3411594816060018e-5, 1e-9 },
		{ 0.01, 2.5, 2.5, 2.1709742088261504e-5, 1e-9 },
		{ 0.3, 2, 3.7, 0.052370824393822232, 1e-9 },
		{ 1e-3, 0.5, 4.5, 0.26417311837878792, 1e-9 },
		/* slow: 6e-9 still moving at 6000 terms; we fall back to RDP(2) */
		{ 0.05, 0.8, 1.25, 0.0064570020868087881, 1.0 },
	};

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct rdp_grid g;
		double rdp[RDP_MAX_ORDERS];
		struct dp_event_tree t = poisson(gaussian(DP_ADD_REMOVE, c[i].z), c[i].q);

		grid_of(&g, (double[]){ c[i].a }, 1);
		curve(&t, &g, rdp);
		printf("poisson series q %g z %g order %g: %.17g, relative excess %.3g\n", c[i].q,
		       c[i].z, c[i].a, rdp[0], rdp[0] / c[i].rdp - 1.0);
		ck_assert_msg(rdp[0] >= c[i].rdp * (1 - 1e-13), "below the series");
		ck_assert_msg(rdp[0] <= c[i].rdp * (1 + c[i].above), "above the series");
	}
	fflush(stdout);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Conversions                                                         */

START_TEST(test_round_trips)
{
	struct rdp_grid g;
	struct dp_event_tree ts[4];
	static const double deltas[] = { 1e-3, 1e-5, 1e-7, 1e-10 };

	rdp_grid_default(&g);
	ts[0] = gaussian(DP_REPLACE_ONE, 1.0);
	ts[1] = self_composed(wor(gaussian(DP_REPLACE_ONE, 1.0), 10000, 100), 1000);
	ts[2] = self_composed(poisson(gaussian(DP_ADD_REMOVE, 1.3), 0.0025), 6000);
	ts[3] = self_composed(bounded_range(0.2), 10);
	for (unsigned i = 0; i < 4; i++) {
		double rdp[RDP_MAX_ORDERS];

		curve(&ts[i], &g, rdp);
		for (unsigned j = 0; j < 4; j++) {
			double eps, o1, d, o2, eps2, o3;
			struct err e = { 0 };

			ck_assert_int_eq(rdp_to_epsilon(&g, rdp, deltas[j], &eps, &o1, &e), ERR_OK);
			ck_assert_int_eq(rdp_to_delta(&g, rdp, eps, &d, &o2, &e), ERR_OK);
			ck_assert_msg(close_rel(d, deltas[j], 1e-9), "delta %.17g vs %.17g", d,
				      deltas[j]);
			ck_assert(o1 == o2);
			ck_assert_int_eq(rdp_to_epsilon(&g, rdp, d, &eps2, &o3, &e), ERR_OK);
			ck_assert(close_rel(eps, eps2, 1e-9));
		}
	}
}
END_TEST

START_TEST(test_delta_cap)
{
	struct rdp_grid g;
	double rdp[RDP_MAX_ORDERS], d = SENTINEL, o = SENTINEL;
	struct dp_event_tree t = gaussian(DP_REPLACE_ONE, 0.1);

	rdp_grid_default(&g);
	curve(&t, &g, rdp);
	ck_assert_int_eq(rdp_to_delta(&g, rdp, 0.0, &d, &o, NULL), ERR_OK);
	ck_assert(d == 1.0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Fail closed                                                         */

static void
assert_curve_fails(const struct dp_event_tree *t, enum err_code want, const char *msg)
{
	struct rdp_grid g;
	double rdp[RDP_MAX_ORDERS];
	struct err e = { 0 };

	rdp_grid_default(&g);
	for (unsigned k = 0; k < g.n; k++)
		rdp[k] = SENTINEL;
	ck_assert_int_eq(rdp_curve(t, &g, rdp, &e), want);
	ck_assert_int_eq(e.code, want);
	if (msg != NULL)
		ck_assert_str_eq(e.msg, msg);
	for (unsigned k = 0; k < g.n; k++)
		ck_assert(rdp[k] == SENTINEL);
}

START_TEST(test_fail_closed)
{
	struct dp_event_tree a, two[2], t;

	dp_event_approx(&a, DP_REPLACE_ONE, 1.0, 1e-6);
	assert_curve_fails(&a, ERR_INVALID, RDP_MSG_NO_CURVE);
	two[0] = gaussian(DP_REPLACE_ONE, 1.0);
	two[1] = a;
	t = join(DP_EVENT_COMPOSED, two, 2);
	assert_curve_fails(&t, ERR_INVALID, RDP_MSG_NO_CURVE);
	t = self_composed(wor(a, 100, 10), 3);
	assert_curve_fails(&t, ERR_INVALID, RDP_MSG_NO_CURVE);

	/* Theorem 9 needs eps(inf): a base without one fails closed. */
	t = wor(zcdp(0.1), 1000, 10);
	assert_curve_fails(&t, ERR_INVALID, NULL);
	t = wor(self_composed(gaussian(DP_REPLACE_ONE, 1.0), 2), 1000, 10);
	assert_curve_fails(&t, ERR_INVALID, NULL);
	two[1] = pure(1.0);
	t = wor(join(DP_EVENT_COMPOSED, two, 2), 1000, 10);
	assert_curve_fails(&t, ERR_INVALID, NULL);
	t = wor(wor(gaussian(DP_REPLACE_ONE, 1.0), 100, 10), 1000, 100);
	assert_curve_fails(&t, ERR_INVALID, NULL);

	/* relations */
	t = wor(gaussian(DP_ADD_REMOVE, 1.0), 1000, 10);
	assert_curve_fails(&t, ERR_INVALID, NULL);
	t = poisson(gaussian(DP_REPLACE_ONE, 1.0), 0.01);
	assert_curve_fails(&t, ERR_INVALID, NULL);
	/* Poisson is accounted for one gaussian only */
	{
		struct dp_event_tree l;

		dp_event_laplace(&l, DP_ADD_REMOVE, 1.0);
		t = poisson(l, 0.01);
		assert_curve_fails(&t, ERR_INVALID, NULL);
	}

	/* NaN, infinite, negative, zero parameters */
	t = gaussian(DP_REPLACE_ONE, NAN);
	assert_curve_fails(&t, ERR_INVALID, NULL);
	t = gaussian(DP_REPLACE_ONE, -1.0);
	assert_curve_fails(&t, ERR_INVALID, NULL);
	t = laplace(INFINITY);
	assert_curve_fails(&t, ERR_INVALID, NULL);
	t = pure(0.0);
	assert_curve_fails(&t, ERR_INVALID, NULL);
	t = wor(gaussian(DP_REPLACE_ONE, 1.0), 10, 20);
	assert_curve_fails(&t, ERR_INVALID, NULL);
	t = poisson(gaussian(DP_ADD_REMOVE, 1.0), NAN);
	assert_curve_fails(&t, ERR_INVALID, NULL);

	/* orders beyond what the sampled bounds sum over */
	{
		struct rdp_grid big;
		double rdp[RDP_MAX_ORDERS];
		struct err e = { 0 };

		grid_of(&big, (double[]){ 2.0, 1e12 }, 2);
		t = wor(pure(1.0), 100, 10);
		ck_assert_int_eq(rdp_curve(&t, &big, rdp, &e), ERR_INVALID);
		t = poisson(gaussian(DP_ADD_REMOVE, 1.0), 0.01);
		ck_assert_int_eq(rdp_curve(&t, &big, rdp, &e), ERR_INVALID);
		t = gaussian(DP_REPLACE_ONE, 1.0);
		ck_assert_int_eq(rdp_curve(&t, &big, rdp, &e), ERR_OK);
	}

	/* a cost that underflows to 0 is refused, never charged as 0 */
	t = gaussian(DP_REPLACE_ONE, 1e200);
	assert_curve_fails(&t, ERR_NUMERIC, NULL);
	/* and one that overflows */
	t = self_composed(gaussian(DP_REPLACE_ONE, 1e-150), 1000000);
	assert_curve_fails(&t, ERR_NUMERIC, NULL);
}
END_TEST

START_TEST(test_conversion_fail_closed)
{
	struct rdp_grid g;
	double rdp[RDP_MAX_ORDERS], eps = SENTINEL, o = SENTINEL;
	struct err e = { 0 };
	static const double bad[] = { NAN, INFINITY, -0.1, 0.0 };

	integer_grid(&g, 2, 32);
	for (unsigned i = 0; i < 4; i++) {
		for (unsigned k = 0; k < g.n; k++)
			rdp[k] = 0.5;
		rdp[7] = bad[i];
		ck_assert_int_eq(rdp_to_epsilon(&g, rdp, 1e-6, &eps, &o, &e), ERR_NUMERIC);
		ck_assert_int_eq(rdp_to_delta(&g, rdp, 1.0, &eps, &o, &e), ERR_NUMERIC);
		ck_assert(eps == SENTINEL && o == SENTINEL);
	}
	for (unsigned k = 0; k < g.n; k++)
		rdp[k] = 1e-9;
	/* delta outside (0, 1) */
	ck_assert_int_eq(rdp_to_epsilon(&g, rdp, 0.0, &eps, &o, &e), ERR_INVALID);
	ck_assert_int_eq(rdp_to_epsilon(&g, rdp, 1.0, &eps, &o, &e), ERR_INVALID);
	ck_assert_int_eq(rdp_to_epsilon(&g, rdp, NAN, &eps, &o, &e), ERR_INVALID);
	ck_assert_int_eq(rdp_to_delta(&g, rdp, -1.0, &eps, &o, &e), ERR_INVALID);
	ck_assert_int_eq(rdp_to_delta(&g, rdp, NAN, &eps, &o, &e), ERR_INVALID);
	/* a conversion below 0 is the bound epsilon = 0: at the minimising
	 * order the conversion's delta at epsilon = 0 is within the delta
	 * asked (the event is (0, delta)-DP) */
	ck_assert_int_eq(rdp_to_epsilon(&g, rdp, 0.5, &eps, &o, &e), ERR_OK);
	ck_assert(eps == 0.0 && o >= 2.0 && o <= 32.0);
	{
		double d0 = exp((o - 1.0) * 1e-9 + (o - 1.0) * log1p(-1.0 / o) - log(o));

		ck_assert(d0 < 0.5);
	}
	eps = o = SENTINEL;
	/* delta underflowing to 0 is refused */
	for (unsigned k = 0; k < g.n; k++)
		rdp[k] = 1.0;
	ck_assert_int_eq(rdp_to_delta(&g, rdp, 100.0, &eps, &o, &e), ERR_NUMERIC);
	ck_assert(eps == SENTINEL && o == SENTINEL);
}
END_TEST

static Suite *
rdp_suite(void)
{
	Suite *s = suite_create("rdp");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_published_values);
	tcase_add_test(tc, test_default_grid_vs_reference_orders);
	tcase_add_test(tc, test_mixture_is_worst_child);
	tcase_add_test(tc, test_published_poisson_curve);
	tcase_add_test(tc, test_default_grid_no_worse);
	tcase_add_test(tc, test_grids);
	tcase_add_test(tc, test_gaussian_exact);
	tcase_add_test(tc, test_laplace_pure_closed_forms);
	tcase_add_test(tc, test_full_batch_gaussian_sandwich);
	tcase_add_test(tc, test_self_composed_every_type);
	tcase_add_test(tc, test_monotone_steps);
	tcase_add_test(tc, test_monotone_sampling_rate);
	tcase_add_test(tc, test_monotone_noise);
	tcase_add_test(tc, test_wor_full_batch_is_base);
	tcase_add_test(tc, test_wor_amplifies);
	tcase_add_test(tc, test_wor_theorem9_bruteforce);
	tcase_add_test(tc, test_wor_theorem27_slow);
	tcase_add_test(tc, test_wor_speed);
	tcase_add_test(tc, test_poisson_slow);
	tcase_add_test(tc, test_poisson_vs_quadrature);
	tcase_add_test(tc, test_poisson_frac_series);
	tcase_add_test(tc, test_round_trips);
	tcase_add_test(tc, test_delta_cap);
	tcase_add_test(tc, test_fail_closed);
	tcase_add_test(tc, test_conversion_fail_closed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(rdp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
