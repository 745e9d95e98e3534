/*
 * testing_hook.h - white-box access to a run for the privacy audits
 * (tests/audit, docs/privacy-model.md §7, level 2).  Test builds only.
 *
 * A statistical audit at the accountant's unit of analysis needs three
 * things a production run must never offer: to put a chosen canary record
 * where the accountant's worst case assumes it, to see the privatized
 * quantities the privacy event accounts for (not just the final result),
 * and to weaken the noise on purpose so that the audit can prove it would
 * notice.  struct run_spec carries a pointer to this struct only when the
 * build defines DPOPT_TESTING (meson -Dtesting=true); without it the field,
 * this header and every line that reads the hook do not exist, so a
 * production binary cannot contain them.  Even in a test build no request
 * can set the field (run specs are zero-initialised and filled from the
 * request's named keys; tests/lint/layering.sh refuses any mention of the
 * hook in service/); the one exception is the fault of (vi), attached from
 * the test build's environment, never from a request.
 *
 * The hook is per run (borrowed through the spec, not a global), so
 * concurrent runs and threads stay independent.  An algorithm that does
 * not implement a hook ignores it.  Implemented by: dp_sgd.one_pass (and
 * the methods that say so in their files).  The Frank-Wolfe methods
 * (frank_wolfe.private_vr, frank_wolfe.private) release the index of each
 * step's chosen vertex (len = 1, index = the step), scale the exponential
 * mechanism's temperature by noise_scale, and (private_vr) place the canary
 * in phase 1's root batch.  The zeroth-order methods (zeroth_order/run.c)
 * place the canary in slot 0 (leaf 1 of round 1's tree), release every
 * noisy oracle output g~_t (index k T + t - 1), scale the tree's sigma and
 * report the evaluation points through point.
 *
 * A NULL hook, or a hook with every member zero, leaves the run exactly as
 * in a normal build: the same draws from the generator in the same order,
 * the same arithmetic, the same output.
 */
#ifndef ALGORITHMS_TESTING_HOOK_H
#define ALGORITHMS_TESTING_HOOK_H

#ifndef DPOPT_TESTING
#error "testing_hook.h exists only in test builds (meson -Dtesting=true)"
#endif

#include <stdbool.h>
#include <stddef.h>

struct alg_testing_hook {
	/*
	 * (i) Placement.  With place_first set, the record with index
	 * first_record (< n) is moved to the front of the run's secret order
	 * after that order was drawn: dp_sgd puts it in the first batch.  The
	 * order is still drawn as usual (same generator consumption); only
	 * the canary's slot is fixed, which is what the parallel-composition
	 * argument conditions on.
	 */
	bool place_first;
	size_t first_record;
	/*
	 * (iii) Mutation.  The noise standard deviation actually drawn is
	 * multiplied by noise_scale (0, the zero value, means 1).  The plan,
	 * the event and the charge are not touched: a scale below 1 makes the
	 * mechanism weaker than charged, which a powerful audit must detect.
	 */
	double noise_scale;
	/*
	 * (ii) Exposure.  Called once per privatized release the event
	 * accounts for, right after its noise is added: dp_sgd calls it at
	 * every step t = 0 .. T - 1 with the noisy batch-mean gradient (len =
	 * d doubles, valid during the call only).  May be NULL.
	 */
	void (*release)(void *ctx, unsigned long index, const double *value, size_t len);
	void *ctx;
	/*
	 * (v) Trajectory.  The zeroth-order methods call it at every inner
	 * step with the evaluation point w_t^k (index k T + t - 1, len = d),
	 * a post-processing of the releases above: what the trajectory
	 * certificate of docs/algorithms/zeroth-order.md needs.  May be NULL.
	 */
	void (*point)(void *ctx, unsigned long index, const double *value, size_t len);
	/*
	 * (iv) Counting.  When not NULL, incremented at every calibration of
	 * the noise (a bisection on the accountant or the analytic curve), so
	 * a test can see that plan() calibrates once and that work() and
	 * init() never do.  Changes nothing else.
	 */
	unsigned long *calibrations;
	/*
	 * (v) Certificates.  When not NULL, called by methods with a certified
	 * inner solver (saddle.recursive_regularization's outpert_cert: index
	 * = the round t, value = the residual certificate C(u_t) >= ||u_t -
	 * u*_t||, bound = the tolerance tol_t it must not exceed) before the
	 * check.  Never reaches a production run.
	 */
	void (*certificate)(void *ctx, unsigned long index, double value, double bound);
	/*
	 * (vi) Fault.  With fail_certificates set, a method whose certificate
	 * is an assertion that only rounding can fail (saddle.nispp: every
	 * prox step's gap <= nu_priv / 2) treats the first one as failed, so
	 * a test can see the failure path end to end.  Besides the audits,
	 * the one thing a service in a test build may attach: the worker
	 * does, through alg_testing_fail_certificates() (algorithms/alg.h),
	 * when DPOPT_TEST_FAIL_CERTIFICATES=1, an environment variable a
	 * production build refuses.  Never from a request.
	 */
	bool fail_certificates;
};

#endif /* ALGORITHMS_TESTING_HOOK_H */
