/*
 * test_selection_cap.c - the capped number of repetitions of private
 * selection (algorithms/privacy/selection.c; docs/privacy-model.md §3,
 * "capped selection").
 *
 * Where the numbers come from:
 *  - the lemma checked on exact laws: a base mechanism with a few output
 *    values (its output is its score) on two neighbours; the law of the
 *    best of K under the sampler's real distribution q (from the table
 *    selection_cdf builds, P[draw = k] computed exactly from it) and
 *    under the uncapped p (summed to k = 4000), compared value by value
 *    with the ratios 1 + r1 and 1 + r2;
 *  - the capped event's Renyi curve against the exact Renyi divergence of
 *    the capped mechanism on randomized response (the curve must be
 *    above it at every order);
 *  - r1, r2 recomputed here from partial sums to k = 4000 (not the closed
 *    mean), and draws of selection_draw against the table (chi-square);
 *  - fail-closed cases.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "privacy/event.h"
#include "privacy/rdp.h"
#include "privacy/selection.h"
#include "rng.h"

#define K_FAR 4000

static struct selection_dist
dist(enum dp_event_type type, double a)
{
	struct selection_dist d = { .type = type };
	struct err e = { 0 };

	if (type == DP_EVENT_SELECTION_POISSON) {
		d.mu = a;
	} else {
		d.eta = 1.0;
		d.gamma = 1.0 / a;
	}
	ck_assert_int_eq(selection_cap_for(&d, 1e-6, "x", &d.k_max, &e), ERR_OK);
	return d;
}

/* q_k = P[draw = k], exactly, from the table (selection.c's reading). */
static long double *
real_q(const struct selection_dist *d)
{
	double *cdf = malloc(d->k_max * sizeof(*cdf));
	long double *q = calloc(d->k_max + 1, sizeof(*q)), prev = 0.0L;
	struct err e = { 0 };

	ck_assert(cdf != NULL && q != NULL);
	ck_assert_int_eq(selection_cdf(d, cdf, &e), ERR_OK);
	for (uint64_t k = 1; k <= d->k_max; k++) {
		long double c = ceill(ldexpl((long double)cdf[k - 1], 53));

		q[k] = ldexpl(c - prev, -53);
		prev = c;
	}
	free(cdf);
	return q;
}

/* P[best of K = v] for the score law f (m values, increasing), weights w
 * on k = 1 .. kn. */
static void
best_law(const double *f, unsigned m, const long double *w, uint64_t kn, long double *out)
{
	long double below = 0.0L;

	for (unsigned v = 0; v < m; v++) {
		long double upto = below + f[v];

		out[v] = 0.0L;
		for (uint64_t k = 1; k <= kn; k++)
			out[v] += w[k] * (powl(upto, (long double)k) - powl(below, (long double)k));
		below = upto;
	}
}

static void
check_lemma(const struct selection_dist *d, const double *f, unsigned m)
{
	long double *q = real_q(d), *p = calloc(K_FAR + 1, sizeof(*p));
	long double aq[8], ap[8];
	double r1, r2;
	struct err e = { 0 };

	ck_assert(p != NULL && m <= 8);
	for (uint64_t k = 1; k <= K_FAR; k++)
		p[k] = expl((long double)selection_log_pmf(d, k));
	ck_assert_int_eq(selection_cap_ratios(d, &r1, &r2, &e), ERR_OK);
	best_law(f, m, q, d->k_max, aq);
	best_law(f, m, p, K_FAR, ap);
	for (unsigned v = 0; v < m; v++) {
		ck_assert_msg(aq[v] <= (1.0L + r1) * ap[v] * (1.0L + 1e-15L),
			      "value %u: capped %Lg > (1 + r1) uncapped %Lg", v, aq[v], ap[v]);
		ck_assert_msg(ap[v] <= (1.0L + r2) * aq[v] * (1.0L + 1e-15L),
			      "value %u: uncapped %Lg > (1 + r2) capped %Lg", v, ap[v], aq[v]);
	}
	free(q);
	free(p);
}

START_TEST(test_lemma_on_exact_laws)
{
	/* Scores with heavy top mass (the cap matters most when the best is
	 * rare) and a flat law. */
	static const double f1[4] = { 0.97, 0.02, 0.009, 0.001 };
	static const double f2[3] = { 0.4, 0.35, 0.25 };
	const double means[3] = { 2.0, 5.0, 12.0 };

	for (unsigned i = 0; i < 3; i++) {
		struct selection_dist dp = dist(DP_EVENT_SELECTION_POISSON, means[i]);
		struct selection_dist dg = dist(DP_EVENT_SELECTION_TNB, means[i]);

		check_lemma(&dp, f1, 4);
		check_lemma(&dp, f2, 3);
		check_lemma(&dg, f1, 4);
		check_lemma(&dg, f2, 3);
	}
}
END_TEST

/* A cap far too small: the ratios are large, and the lemma still holds
 * with them (it is exact, not asymptotic). */
START_TEST(test_lemma_small_cap)
{
	static const double f[4] = { 0.97, 0.02, 0.009, 0.001 };
	struct selection_dist d = { .type = DP_EVENT_SELECTION_POISSON, .mu = 8.0, .k_max = 3 };
	double r1, r2;
	struct err e = { 0 };

	ck_assert_int_eq(selection_cap_ratios(&d, &r1, &r2, &e), ERR_OK);
	ck_assert_msg(r1 > 1.0 && r2 > 1.0, "r1 %g r2 %g", r1, r2);
	check_lemma(&d, f, 4);
}
END_TEST

/* r1, r2 from partial sums of p to K_FAR (no closed-form mean). */
START_TEST(test_ratios_recomputed)
{
	for (unsigned i = 0; i < 2; i++) {
		struct selection_dist d =
			dist(i == 0 ? DP_EVENT_SELECTION_POISSON : DP_EVENT_SELECTION_TNB, 6.0);
		long double *q = real_q(&d), sp = 0.0L, sq = 0.0L, m1 = 0.0L, m2 = 0.0L;
		double r1, r2;
		struct err e = { 0 };

		for (uint64_t k = 1; k <= K_FAR; k++) {
			sp += (long double)k * expl((long double)selection_log_pmf(&d, k));
			if (k <= d.k_max)
				sq += (long double)k * q[k];
			m1 = fmaxl(m1, sq / sp - 1.0L);
			m2 = fmaxl(m2, sp / sq - 1.0L);
		}
		ck_assert_int_eq(selection_cap_ratios(&d, &r1, &r2, &e), ERR_OK);
		ck_assert_msg(fabsl((long double)r1 - m1) < 1e-11L && (long double)r1 >= m1,
			      "r1 %.6g, recomputed %.6Lg", r1, m1);
		ck_assert_msg(fabsl((long double)r2 - m2) < 1e-11L && (long double)r2 >= m2,
			      "r2 %.6g, recomputed %.6Lg", r2, m2);
		ck_assert(r1 <= 1e-6 && r2 <= 1e-6);
		free(q);
	}
}
END_TEST

/* Exact D_lambda of the capped best-of-K on randomized response (eps0)
 * against the event's curve selection_poisson{mu, k_max}(pure(eps0)). */
START_TEST(test_curve_above_exact_divergence)
{
	const double eps0 = 0.7, keep = exp(eps0) / (1.0 + exp(eps0));
	struct selection_dist d = dist(DP_EVENT_SELECTION_POISSON, 4.0);
	struct dp_event sel = { .type = DP_EVENT_SELECTION_POISSON, .mu = 4.0, .k_max = d.k_max };
	struct dp_event_tree t;
	struct rdp_grid g;
	double out[RDP_MAX_ORDERS];
	long double *q = real_q(&d), a[2] = { 0 }, b[2] = { 0 };
	struct err e = { 0 };

	/* World A: the score is 1 with probability keep; world B: 1 - keep.
	 * Best of k is 0 only when all k are 0. */
	for (uint64_t k = 1; k <= d.k_max; k++) {
		a[0] += q[k] * powl(1.0L - keep, (long double)k);
		b[0] += q[k] * powl((long double)keep, (long double)k);
	}
	a[1] = 1.0L - a[0];
	b[1] = 1.0L - b[0];
	dp_event_pure(&t, DP_REPLACE_ONE, eps0);
	ck_assert_int_eq(dp_event_wrap(&t, &sel, &e), ERR_OK);
	rdp_grid_default(&g);
	ck_assert_int_eq(rdp_curve(&t, &g, out, &e), ERR_OK);
	for (unsigned k = 0; k < g.n; k++) {
		long double l = g.order[k], s1 = 0.0L, s2 = 0.0L;

		for (unsigned v = 0; v < 2; v++) {
			s1 += powl(a[v], l) * powl(b[v], 1.0L - l);
			s2 += powl(b[v], l) * powl(a[v], 1.0L - l);
		}
		ck_assert_msg(logl(fmaxl(s1, s2)) / (l - 1.0L) <= (long double)out[k],
			      "order %g: exact %Lg above the curve %g", g.order[k],
			      logl(fmaxl(s1, s2)) / (l - 1.0L), out[k]);
	}
	free(q);
}
END_TEST

/* The cap's term is in the curve: capped minus uncapped is
 * lambda/(lambda-1) log1p(r1) + log1p(r2) at every order. */
START_TEST(test_curve_adds_cap_term)
{
	struct selection_dist d = { .type = DP_EVENT_SELECTION_POISSON, .mu = 8.0, .k_max = 10 };
	struct dp_event sel = { .type = DP_EVENT_SELECTION_POISSON, .mu = 8.0 };
	struct dp_event_tree t0, t1;
	struct rdp_grid g;
	double o0[RDP_MAX_ORDERS], o1[RDP_MAX_ORDERS], r1, r2;
	struct err e = { 0 };

	ck_assert_int_eq(selection_cap_ratios(&d, &r1, &r2, &e), ERR_OK);
	dp_event_gaussian(&t0, DP_REPLACE_ONE, 3.0);
	t1 = t0;
	ck_assert_int_eq(dp_event_wrap(&t0, &sel, &e), ERR_OK);
	sel.k_max = 10;
	ck_assert_int_eq(dp_event_wrap(&t1, &sel, &e), ERR_OK);
	rdp_grid_default(&g);
	ck_assert_int_eq(rdp_curve(&t0, &g, o0, &e), ERR_OK);
	ck_assert_int_eq(rdp_curve(&t1, &g, o1, &e), ERR_OK);
	for (unsigned k = 0; k < g.n; k++) {
		double l = g.order[k], want = l / (l - 1.0) * log1p(r1) + log1p(r2);

		ck_assert_msg(fabs(o1[k] - o0[k] - want) <= 1e-9 * (1.0 + want),
			      "order %g: %g vs %g", l, o1[k] - o0[k], want);
	}
}
END_TEST

/* Draws against the table: chi-square over the cells with expectation
 * >= 5 (the rest pooled), false-failure probability about 1e-6. */
START_TEST(test_draw_frequencies)
{
	struct selection_dist d = dist(DP_EVENT_SELECTION_POISSON, 5.0);
	long double *q = real_q(&d);
	double *cdf = malloc(d.k_max * sizeof(*cdf)), chi = 0.0, pooled_e = 0.0, pooled_o = 0.0;
	unsigned long *count = calloc(d.k_max + 1, sizeof(*count)), n = 400000, cells = 0;
	static struct rng rs;
	struct rng *r = &rs;
	struct err e = { 0 };

	rng_splitmix_init(r, 0x1234abcdu);
	ck_assert(cdf != NULL && count != NULL);
	ck_assert_int_eq(selection_cdf(&d, cdf, &e), ERR_OK);
	for (unsigned long i = 0; i < n; i++) {
		uint64_t k = selection_draw(cdf, d.k_max, r);

		ck_assert(k >= 1 && k <= d.k_max);
		count[k]++;
	}
	for (uint64_t k = 1; k <= d.k_max; k++) {
		double ex = (double)q[k] * (double)n;

		if (ex >= 5.0) {
			chi += ((double)count[k] - ex) * ((double)count[k] - ex) / ex;
			cells++;
		} else {
			pooled_e += ex;
			pooled_o += (double)count[k];
		}
	}
	if (pooled_e > 0.0) {
		chi += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e;
		cells++;
	}
	/* chi-square with at most 25 degrees of freedom: P[> 75] < 1e-6. */
	ck_assert_msg(cells <= 26 && chi < 75.0, "chi-square %g over %lu cells", chi, cells);
	free(cdf);
	free(count);
	free(q);
}
END_TEST

START_TEST(test_fail_closed)
{
	struct selection_dist d = { .type = DP_EVENT_SELECTION_POISSON, .mu = 5.0, .k_max = 0 };
	struct dp_event_tree t;
	struct dp_event sel = { .type = DP_EVENT_SELECTION_POISSON,
				.mu = 5.0,
				.k_max = SELECTION_MAX_K + 1 };
	double r1, r2;
	uint64_t k;
	struct err e = { 0 };

	ck_assert_int_eq(selection_cap_ratios(&d, &r1, &r2, &e), ERR_INVALID);
	d.k_max = SELECTION_MAX_K + 1;
	ck_assert_int_eq(selection_cap_ratios(&d, &r1, &r2, &e), ERR_INVALID);
	/* A geometric law with mean 1e6: no cap up to SELECTION_MAX_K. */
	d = (struct selection_dist){ .type = DP_EVENT_SELECTION_TNB, .eta = 1.0, .gamma = 1e-6 };
	ck_assert_int_eq(selection_cap_for(&d, 1e-6, "params.x", &k, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.x");
	/* k_max past the limit, or on another event type. */
	dp_event_gaussian(&t, DP_REPLACE_ONE, 1.0);
	ck_assert_int_eq(dp_event_wrap(&t, &sel, &e), ERR_OK);
	ck_assert_int_eq(dp_event_check(&t, &e), ERR_INVALID);
	dp_event_gaussian(&t, DP_REPLACE_ONE, 1.0);
	t.node[0].k_max = 5;
	ck_assert_int_eq(dp_event_check(&t, &e), ERR_INVALID);
}
END_TEST

static Suite *
selection_cap_suite(void)
{
	Suite *s = suite_create("selection_cap");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_lemma_on_exact_laws);
	tcase_add_test(tc, test_lemma_small_cap);
	tcase_add_test(tc, test_ratios_recomputed);
	tcase_add_test(tc, test_curve_above_exact_divergence);
	tcase_add_test(tc, test_curve_adds_cap_term);
	tcase_add_test(tc, test_draw_frequencies);
	tcase_add_test(tc, test_fail_closed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(selection_cap_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
