/*
 * accountant.h - epsilon(delta) of one run's privacy event in the
 * dataset's accounting mode (docs/privacy-model.md §§3 to 5).
 *
 * basic: the smallest valid bound among
 *   - the exact analytic-Gaussian curve, when the tree is a composition of
 *     plain Gaussians (Balle & Wang 2018; Dong, Roth & Su 2022; inside one
 *     run only, never across runs),
 *   - the Renyi accountant's conversion (rdp.h), when the tree has a curve,
 *   - basic composition (sums of (eps, delta); Dwork et al. 2006), when
 *     every leaf is approx or pure-DP (pure, laplace, bounded_range).
 * renyi: the Renyi accountant's conversion only; approx events are refused
 *   (RDP_MSG_NO_CURVE).
 *
 * The ledger charges a renyi dataset the run's RDP curve (rdp_curve) and a
 * basic dataset the (epsilon, delta) reported here.
 *
 * Pure functions: trees and grids are borrowed for the call, nothing is
 * kept; thread-safe.
 */
#ifndef ALGORITHMS_PRIVACY_ACCOUNTANT_H
#define ALGORITHMS_PRIVACY_ACCOUNTANT_H

#include <stdbool.h>

#include "err.h"
#include "privacy/event.h"
#include "privacy/rdp.h"

enum accounting_mode {
	ACCOUNTING_BASIC, /* summed (eps, delta) per run (ledger mode "basic") */
	ACCOUNTING_RENYI, /* RDP curves (ledger mode "renyi") */
	ACCOUNTING__COUNT
};

/* Recorded with every charge next to the accountant's name (docs/privacy-model.md
 * §2); bump it whenever a reported epsilon or curve can change. */
#define ACCOUNTANT_VERSION "1"

struct accountant_report {
	double epsilon;         /* >= 0, finite; 0 only from a conversion that shows
				 * (0, delta)-DP (rdp_to_epsilon, ag_epsilon_mu) */
	double delta;           /* the delta epsilon holds for: the requested one, or the
				 * (smaller or equal) delta of basic composition */
	const char *accountant; /* "analytic_gaussian", "rdp" or "basic" (static) */
	double order;           /* "rdp": the optimal Renyi order; else 0 */
};

/* The citation of an accountant name of struct accountant_report
 * ("Balle & Wang 2018" for "analytic_gaussian", "improved conversion" for
 * "rdp", "Dwork et al. 2006" for "basic"); NULL for any other string,
 * NULL included. */
const char *accountant_source(const char *name);

/*
 * Basic composition of an event whose leaves are approx (eps, delta) or
 * pure-DP (pure eps, bounded_range eps, laplace 1/b; delta 0): composed
 * sums both, self_composed multiplies by count, parallel takes the max of
 * each, sampled_without_replacement of a replace_one child amplifies to
 * (log(1 + g (e^eps - 1)), g delta) with g = batch/n (Balle, Barthe &
 * Gaboardi, NeurIPS 2018, sampling without replacement under the
 * substitution relation).  ERR_INVALID for gaussian or zcdp leaves (no
 * single (eps, delta) without choosing a split of delta) and for
 * poisson_sampled; ERR_NUMERIC for non-finite sums.
 */
enum err_code accountant_basic(const struct dp_event_tree *t, double *ret_epsilon,
			       double *ret_delta, struct err *e);

/*
 * epsilon at delta (0 < delta < 1) of the event in the given mode, on the
 * given evaluation grid (NULL: rdp_grid_default).  With for_ledger set the
 * event must be replace_one throughout (the ledger and calibration; the
 * accountant command and the published-value tests pass false).  epsilon
 * is 0 when the RDP conversion or the exact Gaussian curve shows the
 * event (0, delta)-DP (a bound, which meets any positive target); a
 * negative or non-finite epsilon is ERR_NUMERIC, and so is a zero from
 * basic composition (zero-cost parts: pure 0, approx (0, delta)), never a
 * bound a method should declare (fail closed); an event no accountant of
 * the mode can bound is an error, never epsilon = 0.
 */
enum err_code accountant_epsilon(const struct dp_event_tree *t, enum accounting_mode mode,
				 double delta, const struct rdp_grid *grid, bool for_ledger,
				 struct accountant_report *ret_report, struct err *e);

#endif /* ALGORITHMS_PRIVACY_ACCOUNTANT_H */
