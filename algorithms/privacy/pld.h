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
 * self_composed, composed, and parallel / mixture whose children are all
 * the same event.  Anything else is ERR_INVALID with PLD_MSG_UNSUPPORTED:
 * the caller falls back to the Renyi accountant (fail closed).
 *
 * Pure computation: allocates working arrays (freed before return), no
 * globals; thread-safe.
 */
#ifndef ALGORITHMS_PRIVACY_PLD_H
#define ALGORITHMS_PRIVACY_PLD_H

#include <stddef.h>

#include "err.h"
#include "privacy/event.h"

#define PLD_MSG_UNSUPPORTED "the pld accountant cannot bound this event"

/* Default grid step of the privacy loss (nats). */
#define PLD_DEFAULT_STEP 1e-4
/* Largest number of grid points a distribution may hold (ERR_NUMERIC
 * beyond: the caller falls back). */
#define PLD_MAX_POINTS ((size_t)1 << 22)

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

/* In-place radix-2 complex FFT of length n (a power of two); inverse = 1
 * computes the unscaled inverse transform.  Exposed for the tests. */
enum err_code pld_fft(double *re, double *im, size_t n, int inverse, struct err *e);

#endif /* ALGORITHMS_PRIVACY_PLD_H */
