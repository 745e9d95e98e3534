/*
 * test_selection_rdp.c - unit tests of the private-selection events
 * selection_tnb and selection_poisson (algorithms/privacy/rdp.c;
 * Papernot & Steinke, ICLR 2022, Theorems 2 and 6).
 *
 * Where the numbers come from:
 *  - the theorems' formulas recomputed here, in long double, over the
 *    default order grid rebuilt from its definition (not rdp_grid_default),
 *    and three values from an independent Python computation (in the
 *    comment of test_theorem_values);
 *  - E[K] of the truncated negative binomial against the mean of its
 *    probability mass function summed term by term;
 *  - properties: the selection never costs less than one run of the base
 *    at orders where log E[K] >= 0, more repetitions (smaller gamma,
 *    larger mu) and less noise cost more;
 *  - fail-closed cases: parameters outside the theorems' conditions, a
 *    base without a Renyi curve.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>

#include "privacy/accountant.h"
#include "privacy/event.h"
#include "privacy/rdp.h"
#include "event_builders.h"

static void
curve(const struct dp_event_tree *t, const struct rdp_grid *g, double *out)
{
	struct err e = { 0 };
	enum err_code rc = rdp_curve(t, g, out, &e);

	ck_assert_msg(rc == ERR_OK, "rdp_curve: %s (%s)", e.msg, e.detail);
}

/* The default grid, rebuilt from the text of rdp.h. */
static unsigned
grid_orders(long double *o)
{
	static const int geo[] = { 70,  76,  83,  91,  99,  108, 117, 128, 140, 152, 166,
				   181, 197, 215, 235, 256, 279, 304, 332, 362, 395, 431,
				   470, 512, 558, 609, 664, 724, 790, 861, 939, 1024 };
	unsigned n = 0;

	for (int k = 1; k <= 9; k++)
		o[n++] = 1.0L + k / 100.0L;
	for (int k = 2; k <= 19; k++)
		o[n++] = 1.0L + k / 20.0L;
	for (int k = 0; k < 56; k++)
		o[n++] = 2.0L + k / 4.0L;
	for (int k = 0; k <= 96; k++)
		o[n++] = 16.0L + k / 2.0L;
	for (unsigned k = 0; k < 32; k++)
		o[n++] = geo[k];
	return n;
}

/* Theorem 2 for a gaussian base with multiplier z, lambda_hat over the grid. */
static long double
tnb_gaussian(long double z, long double eta, long double gamma, long double lambda)
{
	long double o[RDP_MAX_ORDERS], best = INFINITY, mean;
	unsigned n = grid_orders(o);

	for (unsigned k = 0; k < n; k++) {
		long double v = (1 + eta) * (1 - 1 / o[k]) * o[k] / (2 * z * z) +
				(1 + eta) * logl(1 / gamma) / o[k];

		best = fminl(best, v);
	}
	mean = eta == 0 ? (1 / gamma - 1) / logl(1 / gamma)
			: eta * (1 - gamma) / (gamma * (1 - powl(gamma, eta)));
	return lambda / (2 * z * z) + best + logl(mean) / (lambda - 1);
}

/* Theorem 6 for a gaussian base, eps_hat = log(1 + 1/(lambda - 1)). */
static long double
poisson_gaussian(long double z, long double mu, long double lambda)
{
	long double o[RDP_MAX_ORDERS], eh = log1pl(1 / (lambda - 1)), ld = 0;
	unsigned n = grid_orders(o);

	for (unsigned k = 0; k < n; k++) {
		long double h = o[k];

		ld = fminl(ld,
			   (h - 1) * (h / (2 * z * z) - eh) + (h - 1) * log1pl(-1 / h) - logl(h));
	}
	return lambda / (2 * z * z) + mu * expl(ld) + logl(mu) / (lambda - 1);
}

static bool
close_rel(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

START_TEST(test_theorem_values)
{
	/*
	 * Independent Python (float64) over the same grid:
	 *   g = [1+k/100 for k in 1..9] + [1+k/20 for k in 2..19]
	 *     + [2+k/4 for k < 56] + [16+k/2 for k <= 96]
	 *     + [round(64*2**(k/8)) for k in 1..32]
	 *   tnb(z=2, eta=1, gamma=0.1, lambda=8)   = 3.225010183097188
	 *   tnb(z=3, eta=0.5, gamma=0.05, lambda=3) = 2.5595006681900636
	 *     (E[K] = 12.236067977499788)
	 *   poisson(z=4, mu=10, lambda=16)          = 1.8357550678038481
	 *     (delta_hat = 0.11822493949375783)
	 */
	struct rdp_grid g = { .n = 3, .order = { 3.0, 8.0, 16.0 } };
	struct dp_event_tree a = selection_tnb(gaussian(DP_REPLACE_ONE, 2.0), 1.0, 0.1);
	struct dp_event_tree b = selection_tnb(gaussian(DP_REPLACE_ONE, 3.0), 0.5, 0.05);
	struct dp_event_tree c = selection_poisson(gaussian(DP_REPLACE_ONE, 4.0), 10.0);
	double ra[3], rb[3], rc[3];

	curve(&a, &g, ra);
	curve(&b, &g, rb);
	curve(&c, &g, rc);
	ck_assert_msg(close_rel(ra[1], 3.225010183097188, 1e-12), "%.17g", ra[1]);
	ck_assert_msg(close_rel(rb[0], 2.5595006681900636, 1e-12), "%.17g", rb[0]);
	ck_assert_msg(close_rel(rc[2], 1.8357550678038481, 1e-12), "%.17g", rc[2]);
	ck_assert(close_rel(dp_selection_tnb_mean(0.5, 0.05), 12.236067977499788, 1e-13));
	for (unsigned k = 0; k < g.n; k++) {
		long double l = g.order[k];

		ck_assert(close_rel(ra[k], (double)tnb_gaussian(2, 1, 0.1L, l), 1e-12));
		ck_assert(close_rel(rb[k], (double)tnb_gaussian(3, 0.5L, 0.05L, l), 1e-12));
		ck_assert(close_rel(rc[k], (double)poisson_gaussian(4, 10, l), 1e-12));
	}
}
END_TEST

/* Over the whole default grid, eta in {-0.5, 0, 1, 3} (eta = 0 is the
 * logarithmic distribution). */
START_TEST(test_theorem2_grid)
{
	static const double etas[] = { -0.5, 0.0, 1.0, 3.0 };
	struct rdp_grid g;
	double r[RDP_MAX_ORDERS];

	rdp_grid_default(&g);
	for (unsigned i = 0; i < 4; i++) {
		struct dp_event_tree t =
			selection_tnb(gaussian(DP_REPLACE_ONE, 5.0), etas[i], 0.02);

		curve(&t, &g, r);
		for (unsigned k = 0; k < g.n; k++)
			ck_assert_msg(close_rel(r[k],
						(double)tnb_gaussian(5, etas[i], 0.02L, g.order[k]),
						1e-12),
				      "eta %g order %g", etas[i], g.order[k]);
	}
}
END_TEST

/* E[K] against sum_k k p_k, p_k proportional to C(k+eta-1, k)(1-gamma)^k. */
START_TEST(test_tnb_mean)
{
	static const double etas[] = { -0.7, -0.2, 0.0, 0.5, 1.0, 2.0, 7.5 };
	static const double gammas[] = { 0.5, 0.1, 0.02 };

	for (unsigned i = 0; i < 7; i++)
		for (unsigned j = 0; j < 3; j++) {
			long double eta = etas[i], q = 1 - gammas[j], p, num = 0, den = 0;

			/* p_1 = eta q (or q for eta = 0); p_{k+1}/p_k = q (k+eta)/(k+1)
			 * (eta = 0: q k/(k+1), the logarithmic distribution). */
			p = eta == 0 ? q : eta * q;
			for (long k = 1; k < 200000; k++) {
				num += k * p;
				den += p;
				p *= q * (k + eta) / (k + 1);
			}
			ck_assert_msg(close_rel(dp_selection_tnb_mean(etas[i], gammas[j]),
						(double)(num / den), 1e-9),
				      "eta %g gamma %g: %.17g vs %.17Lg", etas[i], gammas[j],
				      dp_selection_tnb_mean(etas[i], gammas[j]), num / den);
		}
	ck_assert(close_rel(dp_selection_tnb_mean(1.0, 0.1), 10.0, 1e-14)); /* geometric */
	ck_assert(isnan(dp_selection_tnb_mean(-1.0, 0.1)));
	ck_assert(isnan(dp_selection_tnb_mean(1.0, 1.0)));
	ck_assert(isnan(dp_selection_tnb_mean(1.0, 0.0)));
}
END_TEST

START_TEST(test_monotone)
{
	struct rdp_grid g;
	double base[RDP_MAX_ORDERS], r1[RDP_MAX_ORDERS], r2[RDP_MAX_ORDERS];
	double p1[RDP_MAX_ORDERS], p2[RDP_MAX_ORDERS], n2[RDP_MAX_ORDERS];
	struct dp_event_tree b = gaussian(DP_REPLACE_ONE, 2.0);
	struct dp_event_tree t1 = selection_tnb(b, 1.0, 0.2), t2 = selection_tnb(b, 1.0, 0.05);
	struct dp_event_tree q1 = selection_poisson(b, 3.0), q2 = selection_poisson(b, 30.0);
	struct dp_event_tree less = selection_tnb(gaussian(DP_REPLACE_ONE, 1.0), 1.0, 0.05);

	rdp_grid_default(&g);
	curve(&b, &g, base);
	curve(&t1, &g, r1);
	curve(&t2, &g, r2);
	curve(&q1, &g, p1);
	curve(&q2, &g, p2);
	curve(&less, &g, n2);
	for (unsigned k = 0; k < g.n; k++) {
		ck_assert(r1[k] > base[k]); /* E[K] >= 1: every term >= 0 */
		ck_assert(r2[k] > r1[k]);   /* more repetitions */
		ck_assert(n2[k] > r2[k]);   /* less noise */
		ck_assert(p2[k] > p1[k]);
		if (p1[k] != base[k])
			ck_assert(p1[k] > base[k]); /* mu >= 1 */
	}
}
END_TEST

/* The bound composes like any event: accountant in both modes. */
START_TEST(test_accountant_modes)
{
	struct dp_event_tree t = selection_tnb(gaussian(DP_REPLACE_ONE, 4.0), 1.0, 0.1);
	struct accountant_report r = { 0 }, b = { 0 };
	struct err e = { 0 };

	ck_assert_msg(accountant_epsilon(&t, ACCOUNTING_RENYI, 1e-5, NULL, true, &r, &e) == ERR_OK,
		      "%s", e.msg);
	ck_assert_msg(accountant_epsilon(&t, ACCOUNTING_BASIC, 1e-5, NULL, true, &b, &e) == ERR_OK,
		      "%s", e.msg);
	ck_assert_str_eq(b.accountant, "rdp");
	ck_assert(r.epsilon > 0.0 && close_rel(r.epsilon, b.epsilon, 1e-15));
}
END_TEST

START_TEST(test_fail_closed)
{
	struct rdp_grid g;
	double r[RDP_MAX_ORDERS];
	struct err e = { 0 };
	struct dp_event_tree b = gaussian(DP_REPLACE_ONE, 2.0), t;
	static const double bad_tnb[][2] = { { -1.0, 0.1 }, { -2.0, 0.1 },    { NAN, 0.1 },
					     { 1.0, 0.0 },  { 1.0, 1.0 },     { 1.0, -0.5 },
					     { 1.0, NAN },  { INFINITY, 0.5 } };
	static const double bad_mu[] = { 0.0, -1.0, NAN, INFINITY };

	rdp_grid_default(&g);
	for (unsigned i = 0; i < sizeof(bad_tnb) / sizeof(bad_tnb[0]); i++) {
		struct dp_event p = { .type = DP_EVENT_SELECTION_TNB,
				      .eta = bad_tnb[i][0],
				      .gamma = bad_tnb[i][1] };

		t = b;
		ck_assert(dp_event_wrap(&t, &p, &e) == ERR_OK);
		r[0] = -7.0;
		ck_assert_msg(rdp_curve(&t, &g, r, &e) == ERR_INVALID, "case %u", i);
		ck_assert(r[0] == -7.0);
	}
	for (unsigned i = 0; i < 4; i++) {
		struct dp_event p = { .type = DP_EVENT_SELECTION_POISSON, .mu = bad_mu[i] };

		t = b;
		ck_assert(dp_event_wrap(&t, &p, &e) == ERR_OK);
		ck_assert(rdp_curve(&t, &g, r, &e) == ERR_INVALID);
	}
	/* A base without a Renyi curve. */
	t = selection_tnb(approx(1.0, 1e-6), 1.0, 0.1);
	ck_assert(rdp_curve(&t, &g, r, &e) == ERR_INVALID);
	ck_assert_str_eq(e.msg, RDP_MSG_NO_CURVE);
	t = selection_poisson(approx(1.0, 1e-6), 2.0);
	ck_assert(rdp_curve(&t, &g, r, &e) == ERR_INVALID);
	/* A base whose curve the sampling bounds refuse (add_remove under WOR). */
	t = selection_tnb(wor(gaussian(DP_ADD_REMOVE, 1.0), 100, 10), 1.0, 0.1);
	ck_assert(rdp_curve(&t, &g, r, &e) != ERR_OK);
}
END_TEST

static Suite *
selection_suite(void)
{
	Suite *s = suite_create("selection_rdp");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_theorem_values);
	tcase_add_test(tc, test_theorem2_grid);
	tcase_add_test(tc, test_tnb_mean);
	tcase_add_test(tc, test_monotone);
	tcase_add_test(tc, test_accountant_modes);
	tcase_add_test(tc, test_fail_closed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(selection_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
