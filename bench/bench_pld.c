/*
 * bench_pld.c - the PLD accountant's speed and figures (issue 16):
 *   1. epsilon(1e-5) of 10^4 composed subsampled Gaussian steps
 *      (sampling without replacement, n = 10000, batch 100, z = 1) by the
 *      PLD accountant (upper estimate only) at grid steps 1e-4, 1e-3, the
 *      charging step and the calibration's coarse step, with its work
 *      units, and by accountant_epsilon in both modes;
 *   2. calibrate() to (1, 1e-5) for 100, 1000 and 10^4 such steps on a
 *      basic ledger (best of PLD, RDP) and a renyi one (RDP);
 *   3. the table of epsilon(1e-5), q = 0.01, z in {0.8, 1, 2}, steps in
 *      {1, 10, 100, 1000}: RDP, PLD [lower, upper], and at one step the
 *      dominating curve gamma delta_G(log(1 + (e^eps - 1)/gamma)) solved
 *      by bisection (the reference).
 * CPU times (CLOCK_PROCESS_CPUTIME_ID), best of 3.
 */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "privacy/accountant.h"
#include "privacy/analytic_gaussian.h"
#include "privacy/calibrate.h"
#include "privacy/pld.h"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct fam {
	unsigned long steps;
	unsigned long calls; /* events built: one per accountant call */
};

static enum err_code
family(double z, void *ctx, struct dp_event_tree *t, struct err *e)
{
	struct fam *f = ctx;
	struct dp_event w = { .type = DP_EVENT_SAMPLED_WOR, .n = 10000, .batch = 100 };
	struct dp_event sc = { .type = DP_EVENT_SELF_COMPOSED, .count = f->steps };
	enum err_code rc;

	f->calls++;
	dp_event_gaussian(t, DP_REPLACE_ONE, z);
	if ((rc = dp_event_wrap(t, &w, e)) != ERR_OK)
		return rc;
	return f->steps > 1 ? dp_event_wrap(t, &sc, e) : ERR_OK;
}

static double
pld_eps(double z, unsigned long steps, double h)
{
	struct fam f = { steps, 0 };
	struct dp_event_tree t;
	struct pld_interval r;

	if (family(z, &f, &t, NULL) != ERR_OK || pld_epsilon(&t, 1e-5, h, &r, NULL) != ERR_OK)
		return NAN;
	return r.upper;
}

static double
rdp_eps(double z, unsigned long steps)
{
	struct fam f = { steps, 0 };
	struct dp_event_tree t;
	struct accountant_report r;

	if (family(z, &f, &t, NULL) != ERR_OK ||
	    accountant_epsilon(&t, ACCOUNTING_RENYI, 1e-5, NULL, true, &r, NULL) != ERR_OK)
		return NAN;
	return r.epsilon;
}

/* smallest eps with gamma delta_G(z, log(1 + (e^eps - 1)/gamma)) <= 1e-5 */
static double
reference_one_step(double z)
{
	double lo = 0.0, hi = 50.0, g = 0.01;

	for (int i = 0; i < 200; i++) {
		double m = 0.5 * (lo + hi), d;

		if (ag_delta(z, log1p(expm1(m) / g), &d, NULL) != ERR_OK)
			return NAN;
		if (g * d <= 1e-5)
			hi = m;
		else
			lo = m;
	}
	return hi;
}

int
main(void)
{
	const double zs[] = { 0.8, 1.0, 2.0 };
	const unsigned long ks[] = { 1, 10, 100, 1000 };
	double best, t0, v = 0.0;

	printf("1. 10^4 subsampled steps (WOR n=10000 B=100, z=1), eps(1e-5):\n");
	for (int hh = 0; hh < 4; hh++) {
		const double hs[] = { 1e-4, 1e-3, ACCOUNTANT_PLD_STEP, CALIBRATE_PLD_COARSE_STEP };
		struct pld_options o = { .step = hs[hh], .upper_only = true };
		struct fam f = { 10000, 0 };
		struct dp_event_tree t;
		struct pld_interval r;
		double work = 0.0;

		if (family(1.0, &f, &t, NULL) != ERR_OK)
			return 1;
		best = INFINITY;
		for (int rep = 0; rep < 3; rep++) {
			t0 = now();
			if (pld_epsilon_with(&t, 1e-5, &o, &r, &work, NULL) != ERR_OK)
				r.upper = NAN;
			best = fmin(best, now() - t0);
		}
		printf("   pld h=%g (upper only): eps %.5f  %.4f s, %.3g work units (%.2f ns "
		       "each)\n",
		       hs[hh], r.upper, best, work, 1e9 * best / work);
	}
	for (int m = 0; m < 2; m++) {
		struct fam f = { 10000, 0 };
		struct dp_event_tree t;
		struct accountant_report r = { 0 };

		if (family(1.0, &f, &t, NULL) != ERR_OK)
			return 1;
		best = INFINITY;
		for (int rep = 0; rep < 3; rep++) {
			t0 = now();
			if (accountant_epsilon(&t, m == 0 ? ACCOUNTING_BASIC : ACCOUNTING_RENYI,
					       1e-5, NULL, true, &r, NULL) != ERR_OK)
				r.epsilon = NAN;
			best = fmin(best, now() - t0);
		}
		printf("   accountant_epsilon %s: eps %.5f (%s)  %.4f s\n",
		       m == 0 ? "basic" : "renyi", r.epsilon, r.accountant, best);
	}

	printf("2. calibrating z to (1, 1e-5), subsampled steps (q = 0.01):\n");
	for (int k = 0; k < 3; k++) {
		const unsigned long steps[] = { 100, 1000, 10000 };
		struct fam f = { steps[k], 0 };

		for (int m = 0; m < 2; m++) {
			struct accountant_report r = { 0 };
			double z = NAN;

			best = INFINITY;
			for (int rep = 0; rep < 3; rep++) {
				f.calls = 0;
				t0 = now();
				if (calibrate(family, &f,
					      m == 0 ? ACCOUNTING_BASIC : ACCOUNTING_RENYI, 1.0,
					      1e-5, 0.1, 100.0, NULL, &z, &r, NULL) != ERR_OK)
					z = NAN;
				best = fmin(best, now() - t0);
			}
			printf("   %5lu steps, calibrate() %s: z %.4f eps %.5f (%s)  %.4f s, %lu "
			       "accountant calls\n",
			       steps[k], m == 0 ? "basic" : "renyi", z, r.epsilon, r.accountant,
			       best, f.calls);
		}
	}
	(void)v;

	printf("3. eps(1e-5), q = 0.01 (WOR n=10000 B=100):\n");
	printf("   z    steps  rdp       pld upper  reference\n");
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 4; j++) {
			double ref = ks[j] == 1 ? reference_one_step(zs[i]) : NAN;

			printf("   %.1f  %5lu  %.5f  %.5f    ", zs[i], ks[j], rdp_eps(zs[i], ks[j]),
			       pld_eps(zs[i], ks[j], 1e-4));
			if (ks[j] == 1)
				printf("%.5f\n", ref);
			else
				printf("-\n");
		}
	return 0;
}
