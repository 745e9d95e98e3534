/*
 * rdp.h - the Renyi-DP accountant: the RDP curve of a privacy event tree on
 * a grid of orders, and its conversion to (epsilon, delta).
 *
 * Formulas and sources (docs/privacy-model.md §3; details in rdp.c and in
 * algorithms/privacy/README.md):
 *	gaussian z          alpha / (2 z^2)                        (Mironov 2017)
 *	laplace b           Mironov 2017, Proposition 6, eps = 1/b
 *	pure eps            min(eps, alpha eps^2 / 2)              (Bun & Steinke 2016)
 *	bounded_range eps   min(eps, alpha eps^2 / 8)              (Cesar & Rogers 2021)
 *	zcdp rho            rho alpha
 *	sampled_without_replacement (replace-one): Wang, Balle & Kasiviswanathan,
 *	    "Subsampled Renyi DP and analytical moments accountant", AISTATS 2019
 *	    (WBK19): Theorem 27 for a gaussian base, Theorem 9 for a base with
 *	    a pure-DP bound eps(inf), Corollary 10 between integer orders
 *	poisson_sampled (add/remove) of a gaussian: Mironov, Talwar & Zhang,
 *	    "Renyi DP of the sampled Gaussian mechanism", 2019 (MTZ19), Sec. 3
 *	composed: sum; self_composed: count x; parallel: pointwise max
 *	RDP -> (eps, delta): Canonne, Kamath & Steinke 2020, Prop. 12;
 *	    Balle et al. 2020 ("Hypothesis testing interpretations and Renyi DP")
 *
 * Everything fails closed: an event that cannot be bounded, a NaN, an
 * infinite, negative or zero cost is an error, never epsilon = 0.
 *
 * Pure functions: trees, grids and curves are borrowed for the call and
 * nothing is kept (scratch memory is freed before returning); thread-safe.
 */
#ifndef ALGORITHMS_PRIVACY_RDP_H
#define ALGORITHMS_PRIVACY_RDP_H

#include "err.h"
#include "privacy/event.h"

#define RDP_MAX_ORDERS 256
/* Orders above this are refused under sampling (the bounds sum over every
 * integer order up to alpha). */
#define RDP_MAX_SAMPLED_ORDER 4096

/* The message of the ERR_INVALID returned for an approx event (or any tree
 * holding one) by rdp_curve(); the service maps it to 409
 * accounting_mode_unsupported. */
#define RDP_MSG_NO_CURVE "approx events have no Rényi curve"

/* Orders alpha > 1, finite, strictly increasing. */
struct rdp_grid {
	unsigned n;
	double order[RDP_MAX_ORDERS];
};

/*
 * The accountant's evaluation grid (212 orders): 1.01..1.09 by 0.01 and
 * 1.10..1.95 by 0.05; 2..15.75 by 0.25; 16..64 by 0.5; then 32 integers
 * growing geometrically by 2^(1/8) from 70 to 1024.  Why: README.md.
 */
void rdp_grid_default(struct rdp_grid *g);

/* The reference grid of docs/privacy-model.md §3 (dp_accounting's default):
 * [1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5] u {5..63} u {128, 256, 512}. */
void rdp_grid_reference(struct rdp_grid *g);

/* ERR_INVALID unless 1 <= n <= RDP_MAX_ORDERS and the orders are finite,
 * above 1 and strictly increasing. */
enum err_code rdp_grid_check(const struct rdp_grid *g, struct err *e);

/*
 * ret_rdp[k] = an upper bound on the RDP of the event at order
 * g->order[k], for k < g->n.  The tree is validated (dp_event_check).
 * Errors: ERR_INVALID for an approx event (message RDP_MSG_NO_CURVE), a
 * sampler under the wrong relation (sampled_without_replacement needs
 * replace_one, poisson_sampled add_remove), a base event the sampling
 * bounds do not cover; ERR_NUMERIC for a non-finite, negative or zero
 * value; ERR_NOMEM.
 */
enum err_code rdp_curve(const struct dp_event_tree *t, const struct rdp_grid *g, double *ret_rdp,
			struct err *e);

/*
 * eps(delta) = max(0, min over the grid of
 *	rdp(a) + log((a - 1) / a) - (log delta + log a) / (a - 1))
 * and the minimising order.  0 < delta < 1.  A minimum below 0 is
 * reported as 0: the event is then (0, delta)-DP (the conversion at
 * eps = 0 gives a delta below the one asked; see rdp.c).  ERR_NUMERIC
 * when a curve value is not finite and positive (a zero curve is refused,
 * never converted to 0) or a conversion is not finite.
 */
enum err_code rdp_to_epsilon(const struct rdp_grid *g, const double *rdp, double delta,
			     double *ret_epsilon, double *ret_order, struct err *e);

/*
 * delta(eps) = min(1, min over the grid of
 *	exp((a - 1)(rdp(a) - eps) + (a - 1) log(1 - 1/a) - log a))
 * and the minimising order.  eps >= 0.  ERR_NUMERIC when a value is not
 * finite or delta underflows to 0.
 */
enum err_code rdp_to_delta(const struct rdp_grid *g, const double *rdp, double epsilon,
			   double *ret_delta, double *ret_order, struct err *e);

#endif /* ALGORITHMS_PRIVACY_RDP_H */
