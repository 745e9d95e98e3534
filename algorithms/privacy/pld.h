/*
 * pld.h - a privacy-loss-distribution (PLD) accountant: epsilon(delta) of
 * one run's event from discretised privacy loss distributions composed by
 * FFT (docs/privacy-model.md §3; design and error bounds in README.md
 * here, "PLD accountant").
 *
 * Every answer is an interval [lower, upper]: upper is a rigorous upper
 * bound on the event's epsilon(delta) (pessimistic connect-the-dots
 * discretisation, tails rounded up, truncated mass counted as delta,
 * the FFT's round-off added to delta), lower a lower bound on the
 * epsilon(delta) of the same dominating pairs (optimistic rounding, the
 * FFT's round-off subtracted).  The gap is the discretisation error
 * actually incurred.
 *
 * Supported: gaussian, laplace, pure (randomized response), bounded_range
 * (as the epsilon-DP randomized-response pair: valid, not exact),
 * sampled_without_replacement (replace_one) of one of those leaves,
 * self_composed, composed, and parallel / mixture whose children are all
 * the same event, and at the root parallel / mixture of different children
 * (the largest child epsilon: its curve bounds theirs).  Anything else is
 * ERR_INVALID with PLD_MSG_UNSUPPORTED:
 * the caller falls back to the Renyi accountant (fail closed).
 *
 * Pure computation: allocates working arrays (freed before return), no
 * globals; thread-safe.
 */
#ifndef ALGORITHMS_PRIVACY_PLD_H
#define ALGORITHMS_PRIVACY_PLD_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "privacy/event.h"

#define PLD_MSG_UNSUPPORTED "the pld accountant cannot bound this event"

/* Default grid step of the privacy loss (nats). */
#define PLD_DEFAULT_STEP 1e-4
/* Largest number of grid points a distribution may hold (ERR_NUMERIC
 * beyond: the caller falls back). */
#define PLD_MAX_POINTS ((size_t)1 << 22)

/*
 * The cost guard.  Work is counted in units of about one complex FFT
 * butterfly: a convolution by FFT of padded length N costs N log2 N, a
 * direct one (na nb <= PLD_DIRECT_LIMIT) na nb / PLD_DIRECT_PER_UNIT, a
 * leaf's grid point PLD_LEAF_UNITS (quadrature) or PLD_WOR_UNITS (one
 * subsampled hockey-stick value and the hull).  With a bound max_work > 0
 * an evaluation is refused with ERR_NUMERIC and PLD_MSG_COST
 *   - before it starts, when pld_cost's prediction from the tree (each
 *     leaf's grid size, times the convolutions of the binary method or of
 *     the composition, at the leaf's grid size) exceeds the bound, and
 *   - before any step (a leaf's discretisation or one convolution) that
 *     would take the work spent past the bound: the run-time check is
 *     the hard bound, the prediction only spares starting work that
 *     cannot finish (a composition widens its distribution, so the real
 *     work is above the prediction: about 1.5x at 10^4 subsampled steps).
 * The caller then uses the Renyi accountant (fail closed: never an
 * optimistic answer).
 */
#define PLD_MSG_COST        "the pld evaluation exceeds its cost bound"
#define PLD_DIRECT_LIMIT    1e5
#define PLD_DIRECT_PER_UNIT 2.0
#define PLD_LEAF_UNITS      16.0
#define PLD_WOR_UNITS       48.0

struct pld_options {
	double step;     /* grid step (nats); 0: PLD_DEFAULT_STEP */
	double max_work; /* the cost guard's bound in work units; 0: none */
	bool upper_only; /* skip the lower estimate (ret->lower is then 0) */
};

struct pld_interval {
	double upper; /* rigorous upper bound (the one to charge) */
	double lower; /* lower bound for the same dominating pairs */
};

/* epsilon at delta (0 < delta < 1) with grid step step > 0 (0: the
 * default).  epsilon is 0 only when delta(0) <= delta is proven. */
enum err_code pld_epsilon(const struct dp_event_tree *t, double delta, double step,
			  struct pld_interval *ret, struct err *e);

/* delta at epsilon >= 0, same conventions. */
enum err_code pld_delta(const struct dp_event_tree *t, double epsilon, double step,
			struct pld_interval *ret, struct err *e);

/* The same under options (NULL: the defaults); *ret_work (may be NULL)
 * gets the work spent. */
enum err_code pld_epsilon_with(const struct dp_event_tree *t, double delta,
			       const struct pld_options *o, struct pld_interval *ret,
			       double *ret_work, struct err *e);
enum err_code pld_delta_with(const struct dp_event_tree *t, double epsilon,
			     const struct pld_options *o, struct pld_interval *ret,
			     double *ret_work, struct err *e);

/* The predicted work of one estimate (upper or lower) of t at grid step
 * step (0: the default), from the tree alone; ERR_INVALID with
 * PLD_MSG_UNSUPPORTED for an event the accountant cannot bound. */
enum err_code pld_cost(const struct dp_event_tree *t, double step, double *ret_work, struct err *e);

/* In-place radix-2 complex FFT of length n (a power of two); inverse = 1
 * computes the unscaled inverse transform.  Exposed for the tests. */
enum err_code pld_fft(double *re, double *im, size_t n, int inverse, struct err *e);

#endif /* ALGORITHMS_PRIVACY_PLD_H */
