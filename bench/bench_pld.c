/*
 * bench_pld.c - the PLD accountant's speed and figures (issue 16):
 *   1. epsilon(1e-5) of 10^4 composed subsampled Gaussian steps
 *      (sampling without replacement, n = 10000, batch 100, z = 1) by the
 *      PLD accountant at grid steps 1e-4 and 1e-3, and by the RDP
 *      conversion;
 *   2. calibrating z to (1, 1e-5) for 1000 such steps: today's calibrate()
 *      on a basic ledger (RDP) and a bisection in log z over PLD
 *      evaluations (same 1e-3 relative tolerance);
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
};

static enum err_code
family(double z, void *ctx, struct dp_event_tree *t, struct err *e)
{
	const struct fam *f = ctx;
	struct dp_event w = { .type = DP_EVENT_SAMPLED_WOR, .n = 10000, .batch = 100 };
	struct dp_event sc = { .type = DP_EVENT_SELF_COMPOSED, .count = f->steps };
	enum err_code rc;

	dp_event_gaussian(t, DP_REPLACE_ONE, z);
	if ((rc = dp_event_wrap(t, &w, e)) != ERR_OK)
		return rc;
	return f->steps > 1 ? dp_event_wrap(t, &sc, e) : ERR_OK;
}

static double
pld_eps(double z, unsigned long steps, double h)
{
	struct fam f = { steps };
	struct dp_event_tree t;
	struct pld_interval r;

	if (family(z, &f, &t, NULL) != ERR_OK || pld_epsilon(&t, 1e-5, h, &r, NULL) != ERR_OK)
		return NAN;
	return r.upper;
}

static double
rdp_eps(double z, unsigned long steps)
{
	struct fam f = { steps };
	struct dp_event_tree t;
	struct accountant_report r;

	if (family(z, &f, &t, NULL) != ERR_OK ||
	    accountant_epsilon(&t, ACCOUNTING_BASIC, 1e-5, NULL, true, &r, NULL) != ERR_OK)
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
	for (int hh = 0; hh < 2; hh++) {
		double h = hh == 0 ? 1e-4 : 1e-3;

		best = INFINITY;
		for (int rep = 0; rep < 3; rep++) {
			t0 = now();
			v = pld_eps(1.0, 10000, h);
			best = fmin(best, now() - t0);
		}
		printf("   pld h=%g: eps %.5f  %.3f s\n", h, v, best);
	}
	best = INFINITY;
	for (int rep = 0; rep < 3; rep++) {
		t0 = now();
		v = rdp_eps(1.0, 10000);
		best = fmin(best, now() - t0);
	}
	printf("   rdp (basic mode today): eps %.5f  %.3f s\n", v, best);

	printf("2. calibrating z to (1, 1e-5), 1000 subsampled steps:\n");
	{
		struct fam f = { 1000 };
		struct accountant_report r;
		double z = NAN, lo, hi, el;
		int evals = 0;

		best = INFINITY;
		for (int rep = 0; rep < 3; rep++) {
			t0 = now();
			if (calibrate(family, &f, ACCOUNTING_BASIC, 1.0, 1e-5, 0.1, 100.0, NULL, &z,
				      &r, NULL) != ERR_OK)
				z = NAN;
			best = fmin(best, now() - t0);
		}
		printf("   calibrate() basic (rdp): z %.4f eps %.5f  %.3f s\n", z, r.epsilon, best);
		for (int hh = 0; hh < 2; hh++) {
			double h = hh == 0 ? 1e-4 : 1e-3;

			best = INFINITY;
			for (int rep = 0; rep < 3; rep++) {
				t0 = now();
				lo = 0.3;
				hi = 30.0;
				evals = 0;
				while (log(hi / lo) > 1e-3) {
					double m = sqrt(lo * hi);

					el = pld_eps(m, 1000, h);
					evals++;
					if (el <= 1.0)
						hi = m;
					else
						lo = m;
				}
				best = fmin(best, now() - t0);
			}
			printf("   bisection over pld h=%g: z %.4f (eps %.5f) %d evaluations  %.3f "
			       "s\n",
			       h, hi, pld_eps(hi, 1000, h), evals, best);
		}
	}

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
