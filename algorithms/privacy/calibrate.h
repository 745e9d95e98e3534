/*
 * calibrate.h - the noise of a private run from its target (epsilon,
 * delta), by a bracketing search (secant probes, bisection safeguard) on
 * the charging accountant (docs/privacy-model.md §5).
 *
 * Every private algorithm gets its noise this way unless its own analysis
 * is tighter and proven in its spec.  Only replace_one events are accepted
 * (the ledger's relation).  ctx is borrowed and passed to make_event,
 * which is called from the calling thread at most about
 * 2 log2(log(upper / lower) / CALIBRATE_REL_TOL) + 3 times (7 to 20 in
 * bench/bench_pld's calibrations).
 */
#ifndef ALGORITHMS_PRIVACY_CALIBRATE_H
#define ALGORITHMS_PRIVACY_CALIBRATE_H

#include <stdint.h>

#include "err.h"
#include "privacy/accountant.h"
#include "privacy/event.h"
#include "privacy/rdp.h"

/* Builds the run's event at the given noise (a noise multiplier, or
 * whatever single parameter the algorithm's noise scales with); larger
 * noise must never cost more privacy. */
typedef enum err_code (*calibrate_event_fn)(double noise, void *ctx, struct dp_event_tree *ret,
					    struct err *e);

/* Relative width of the final bracket: the returned noise is within this
 * factor of the smallest noise that meets the target. */
#define CALIBRATE_REL_TOL 1e-3

/* The PLD grid step of the search phase on a basic ledger (the charge
 * uses ACCOUNTANT_PLD_STEP): about 2.5x cheaper per evaluation, epsilon
 * about 1.6 % above the fine value at 10^4 subsampled steps. */
#define CALIBRATE_PLD_COARSE_STEP 1e-2

/*
 * The smallest noise in [lower, upper] (within CALIBRATE_REL_TOL relative,
 * the safe end) whose event has epsilon(delta) <= target_epsilon under
 * accountant_epsilon(mode, grid; for_ledger), found by bisection in
 * log(noise) and re-computed at the returned value; *ret_report is that
 * re-computation (the charge).
 *
 * On a basic ledger the bisection runs on the accountant with the PLD at
 * the coarse step CALIBRATE_PLD_COARSE_STEP (each answer still a valid
 * upper bound); when the charging accountant (fine step) reports "pld" at
 * the result, a few fine evaluations step down from it (2 %, doubling)
 * to a bracket and bisect it to CALIBRATE_REL_TOL on the charging
 * accountant itself, so the returned noise is the smallest within the
 * tolerance for the charge and the charge is the fine PLD's certified
 * upper estimate.  Where the PLD does not apply or its cost guard trips,
 * the search is the same as before (the coarse and fine accountants
 * agree).
 *
 * Errors: ERR_INVALID naming "privacy.epsilon" when the target cannot be
 * met within the bounds (or is not finite and positive), "privacy.delta"
 * for a delta outside (0, 1); ERR_NUMERIC when epsilon grows with the
 * noise at the ends or the re-check misses the target; any error of the
 * callback or the accountant.
 */
enum err_code calibrate(calibrate_event_fn make_event, void *ctx, enum accounting_mode mode,
			double target_epsilon, double delta, double lower, double upper,
			const struct rdp_grid *grid, double *ret_noise,
			struct accountant_report *ret_report, struct err *e);

/*
 * Draws at a temperature (the vertex draws of saddle.smd_maurey and
 * mirror_descent.maurey_sco): count adaptively composed mechanisms, each
 * a leaf of type DP_EVENT_BOUNDED_RANGE or DP_EVENT_PURE with epsilon
 * eps_0 = unit / temp (unit: the leaf's epsilon at temperature 1),
 *	self_composed(leaf(eps_0), count).
 * On a basic ledger, when Dwork-Rothblum-Vadhan's advanced composition of
 * count eps_0-DP mechanisms at the run's delta,
 *	eps_adv = sqrt(2 count ln(1 / delta)) eps_0 + count eps_0 (e^eps_0 - 1),
 * is below what the accountant gives for that tree (it can be, where the
 * RDP conversion would need an order above the grid's 1024: a total far
 * below 1), the event is approx(eps_adv, delta) instead; a renyi ledger
 * always gets the tree (an approx event has no RDP curve).
 * draws_event() builds it for mode and delta (one accountant call for the
 * comparison); calibrate_draws() finds the smallest temperature whose
 * event meets (target_epsilon, delta) on mode: the tree's by calibrate()
 * over [unit count / target_epsilon 1e-6, ... 64] (the basic composition
 * point times those factors), on a basic ledger the advanced-composition
 * form's by bisection on its closed form, the lower of the two, with its
 * report.
 */
enum err_code draws_event(enum dp_event_type leaf, double unit, uint64_t count, double temp,
			  enum accounting_mode mode, double delta, struct dp_event_tree *ret,
			  struct err *e);
enum err_code calibrate_draws(enum dp_event_type leaf, double unit, uint64_t count,
			      enum accounting_mode mode, double target_epsilon, double delta,
			      double *ret_temp, struct accountant_report *ret_report,
			      struct err *e);

/*
 * The step size tau of a method whose draws run at temperature 1 / tau:
 * the privacy cap tau_priv = 1 / temp from calibrate_draws(), then tau =
 * min(tau_auto, tau_priv) when given is 0, else given, refused above the
 * cap (ERR_INVALID naming "params.step_size", with the cap; the schedule
 * it holds for is the plan's, shown by runs:estimate).  The report is the
 * cap's: below the cap
 * the run costs less than the target, whose accountant certified the cap.
 */
enum err_code draws_step_size(enum dp_event_type leaf, double unit, uint64_t count,
			      enum accounting_mode mode, double target_epsilon, double delta,
			      double tau_auto, double given, double *ret_tau,
			      struct accountant_report *ret_report, struct err *e);

#endif /* ALGORITHMS_PRIVACY_CALIBRATE_H */
