/*
 * filter.h - the Rényi privacy filter of a dataset's ledger
 * (docs/privacy-model.md §4.2, mode "renyi").
 *
 * A dataset with budget (eps_B, delta_B) keeps a fixed grid A of m <= 24
 * orders, a cap per order,
 *
 *	cap(a) = eps_B - log((a - 1)/a) + (log(delta_B / m) + log a) / (a - 1),
 *
 * rounded down, and the spent RDP vector spent(a), additions rounded up.
 * A run with RDP curve run(a) is admitted iff spent(a) + run(a) <= cap(a)
 * for some a in A; then run(a) is added at every a.  Each order is an RDP
 * filter that is (eps_B, delta_B/m)-DP by the conversion; the first order
 * never exceeded partitions the transcripts, so the whole is
 * (eps_B, delta_B)-DP under fully adaptive composition (the argument is
 * in docs/privacy-model.md §4.3).
 *
 * The grid.  Orders come from the ladder a_k = 1 + 2^(k/2), k = -6..26
 * (a - 1 from 1/8 to 8192, a factor sqrt 2 apart).  Let a* be the ladder
 * order at which one Gaussian mechanism exactly filling (eps_B, delta_B)
 * needs the least noise (with m = 9); the grid is the ladder orders with
 * a - 1 within a factor 4 of a* - 1 whose cap is positive (at most 9),
 * and the caps are computed for the m that remain.  A Gaussian
 * composition keeps a linear curve, so its best order stays near a*; a
 * narrow grid keeps log m small: one Gaussian run filling (1, 1e-6)
 * needs noise multiplier 4.22 under basic composition, 4.53 with m = 1,
 * 4.89 with this grid (m = 6), 5.06 with 16 orders.
 */
#ifndef ALGORITHMS_PRIVACY_FILTER_H
#define ALGORITHMS_PRIVACY_FILTER_H

#include <stdbool.h>

#include "err.h"

#define FILTER_MAX_ORDERS 24

struct filter {
	unsigned m;
	double order[FILTER_MAX_ORDERS];
	double cap[FILTER_MAX_ORDERS];   /* rounded down, all > 0 */
	double spent[FILTER_MAX_ORDERS]; /* rounded up, all >= 0 */
};

/* The grid and caps for budget (epsilon, delta), spent all zero.
 * ERR_INVALID naming "budget.delta" when delta is 0 (a Rényi filter cannot
 * promise delta = 0) and "budget.epsilon" when no order has a positive
 * cap. */
enum err_code filter_init(struct filter *f, double epsilon, double delta, struct err *e);

/* cap(a) for a budget and grid size, unrounded (for tests and reports). */
double filter_cap(double epsilon, double delta, unsigned m, double order);

/* The first order index where run fits (spent + run <= cap, sums rounded
 * up), or -1 when it fits nowhere.  run has f->m entries, all finite and
 * >= 0, else ERR_NUMERIC (fail closed). */
enum err_code filter_fits(const struct filter *f, const double *run, int *ret_index, struct err *e);

/* spent(a) += run(a) at every order, rounded up. */
void filter_add(struct filter *f, const double *run);

/* The sum of k RDP vectors (rows of m doubles), rounded up, into ret:
 * how a refund recomputes spent without subtracting. */
void filter_sum(unsigned m, const double *rows, unsigned k, double *ret);

/* Indicative spent epsilon: 0 when nothing is spent, else min over orders
 * with spent <= cap of spent(a) + log((a-1)/a) - (log(delta/m) + log a)/(a-1),
 * floored at 0; *ret_any is false when every order is exhausted. */
double filter_spent_epsilon(const struct filter *f, double delta, bool *ret_any);

#endif /* ALGORITHMS_PRIVACY_FILTER_H */
