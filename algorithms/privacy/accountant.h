/*
 * accountant.h - epsilon(delta) of one run's privacy event in the
 * dataset's accounting mode (docs/privacy-model.md §§3 to 5).
 *
 * basic: the smallest valid bound among
 *   - the exact analytic-Gaussian curve, when the tree is a composition of
 *     plain Gaussians (Balle & Wang 2018; Dong, Roth & Su 2022; inside one
 *     run only, never across runs),
 *   - the PLD accountant's pessimistic upper estimate (pld.h) at grid step
 *     ACCOUNTANT_PLD_STEP, when it supports the tree and its cost guard
 *     (ACCOUNTANT_PLD_MAX_WORK) admits it; not tried when the exact
 *     Gaussian curve applies (it cannot be beaten),
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
#define ACCOUNTANT_VERSION "2"

/* The PLD candidate of basic mode: grid step (nats) and cost bound (work
 * units of pld.h, about 4.5 ns each: 4e6 is ~18 ms of CPU for one
 * evaluation).  At step 5e-3, epsilon(1e-5) of 10^4 subsampled Gaussian
 * steps (q = 0.01, z = 1) is 0.5 % above the step-1e-3 value and takes
 * 0.93e6 units (bench/bench_pld.c). */
#define ACCOUNTANT_PLD_STEP     5e-3
#define ACCOUNTANT_PLD_MAX_WORK 4e6

struct accountant_options {
	double pld_step;     /* 0: no PLD candidate */
	double pld_max_work; /* the PLD's cost bound (pld.h); 0: none */
	bool pld_decides;    /* skip the RDP conversion when the PLD gave a
			      * value (calibration's search: the RDP curve of
			      * a long subsampled composition costs more than
			      * the PLD; the charge always takes every
			      * candidate) */
};

struct accountant_report {
	double epsilon;         /* >= 0, finite; 0 only from a conversion that shows
				 * (0, delta)-DP (rdp_to_epsilon, ag_epsilon_mu) */
	double delta;           /* the delta epsilon holds for: the requested one, or the
				 * (smaller or equal) delta of basic composition */
	const char *accountant; /* "analytic_gaussian", "pld", "rdp" or "basic" (static) */
	double order;           /* "rdp": the optimal Renyi order; else 0 */
};

/* The citation of an accountant name of struct accountant_report
 * ("Balle & Wang 2018" for "analytic_gaussian", "improved conversion" for
 * "rdp", "Doroshenko et al. 2022" for "pld", "Dwork et al. 2006" for
 * "basic"); NULL for any other string,
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

/* The defaults of accountant_epsilon: ACCOUNTANT_PLD_STEP and
 * ACCOUNTANT_PLD_MAX_WORK. */
struct accountant_options accountant_defaults(void);

/* accountant_epsilon under options (NULL: the defaults); calibration's
 * coarse phase passes a coarser PLD step, the tests a small cost bound. */
enum err_code accountant_epsilon_with(const struct dp_event_tree *t, enum accounting_mode mode,
				      double delta, const struct rdp_grid *grid, bool for_ledger,
				      const struct accountant_options *o,
				      struct accountant_report *ret_report, struct err *e);

/*
 * The PLD figure of a renyi dataset's run, for information only (the
 * renyi ledger charges the RDP curve: its filter's proof needs RDP): the
 * PLD upper estimate at delta under the defaults.  ERR_INVALID /
 * ERR_NUMERIC when the PLD accountant cannot bound the event or its cost
 * guard refuses it (the caller reports no figure).
 */
enum err_code accountant_pld_information(const struct dp_event_tree *t, double delta,
					 double *ret_epsilon, struct err *e);

#endif /* ALGORITHMS_PRIVACY_ACCOUNTANT_H */
