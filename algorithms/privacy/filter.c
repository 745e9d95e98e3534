/*
 * filter.c - the Rényi filter's grid, caps, admission test and sums
 * (docs/privacy-model.md §4.2; §4.3 says why it is sound).  Rounding
 * always goes against the data subject's adversary: sums up, caps down.
 */
#include <math.h>
#include <string.h>

#include "privacy/filter.h"

#define LADDER_LO  (-6) /* a - 1 = 2^(k/2) for k in [LADDER_LO, LADDER_HI] */
#define LADDER_HI  26
#define WINDOW_MAX 9 /* ladder orders within a factor 4 either side of a* */

static double
ladder(int k)
{
	return 1.0 + exp2(k / 2.0);
}

double
filter_cap(double epsilon, double delta, unsigned m, double a)
{
	return epsilon - log((a - 1.0) / a) + (log(delta / (double)m) + log(a)) / (a - 1.0);
}

static double
up(double x)
{
	return nextafter(x, INFINITY);
}

enum err_code
filter_init(struct filter *f, double epsilon, double delta, struct err *e)
{
	struct filter g;
	double best_z2 = INFINITY, astar = 0.0;

	if (!(isfinite(epsilon) && epsilon > 0.0))
		return err_set_field(e, ERR_INVALID, "budget.epsilon",
				     "'budget.epsilon' must be positive");
	if (!(delta > 0.0 && delta < 1.0))
		return err_set_field(e, ERR_INVALID, "budget.delta",
				     "a 'renyi' ledger needs 'budget.delta' in (0, 1): a Rényi "
				     "filter cannot promise delta = 0; use 'basic' for pure DP");
	/* a*: one Gaussian (RDP a / (2 z^2)) fills cap(a) with z^2 = a / (2 cap). */
	for (int k = LADDER_LO; k <= LADDER_HI; k++) {
		double a = ladder(k), c = filter_cap(epsilon, delta, WINDOW_MAX, a);

		if (c > 0.0 && a / (2.0 * c) < best_z2) {
			best_z2 = a / (2.0 * c);
			astar = a;
		}
	}
	if (astar == 0.0)
		return err_set_field(e, ERR_INVALID, "budget.epsilon",
				     "'budget.epsilon' is too small for a 'renyi' ledger with this "
				     "delta: no order has a positive cap");
	memset(&g, 0, sizeof(g));
	for (int k = LADDER_LO; k <= LADDER_HI && g.m < FILTER_MAX_ORDERS; k++) {
		double a = ladder(k), r = (a - 1.0) / (astar - 1.0);

		/* 1e-9 of slack: the window's ends are ladder points themselves. */
		if (r >= 0.25 * (1.0 - 1e-9) && r <= 4.0 * (1.0 + 1e-9) &&
		    filter_cap(epsilon, delta, WINDOW_MAX, a) > 0.0)
			g.order[g.m++] = a;
	}
	/* m <= WINDOW_MAX, so every cap computed for m is at least the positive
	 * one computed for WINDOW_MAX. */
	for (unsigned i = 0; i < g.m; i++) {
		double c = filter_cap(epsilon, delta, g.m, g.order[i]);

		if (!(isfinite(c) && c > 0.0))
			return err_set(e, ERR_NUMERIC, "a filter cap is not finite");
		g.cap[i] = nextafter(c, 0.0); /* round down */
	}
	*f = g;
	return ERR_OK;
}

enum err_code
filter_fits(const struct filter *f, const double *run, int *ret_index, struct err *e)
{
	int found = -1;

	for (unsigned i = 0; i < f->m; i++) {
		if (!(isfinite(run[i]) && run[i] >= 0.0))
			return err_set(e, ERR_NUMERIC, "the run's Rényi curve is not finite");
		if (found < 0 && up(f->spent[i] + up(run[i])) <= f->cap[i])
			found = (int)i;
	}
	*ret_index = found;
	return ERR_OK;
}

void
filter_add(struct filter *f, const double *run)
{
	for (unsigned i = 0; i < f->m; i++)
		f->spent[i] = up(f->spent[i] + up(run[i]));
}

void
filter_sum(unsigned m, const double *rows, unsigned k, double *ret)
{
	for (unsigned i = 0; i < m; i++) {
		double s = 0.0;

		for (unsigned r = 0; r < k; r++)
			s = up(s + up(rows[(size_t)r * m + i]));
		ret[i] = s;
	}
}

double
filter_spent_epsilon(const struct filter *f, double delta, bool *ret_any)
{
	double best = INFINITY;
	bool spent_any = false;

	/* Nothing spent is 0, not the conversion's overhead at a zero curve. */
	for (unsigned i = 0; i < f->m; i++)
		spent_any = spent_any || f->spent[i] > 0.0;
	if (!spent_any) {
		*ret_any = true;
		return 0.0;
	}
	for (unsigned i = 0; i < f->m; i++) {
		double a = f->order[i], v;

		if (f->spent[i] > f->cap[i])
			continue;
		v = f->spent[i] + log((a - 1.0) / a) -
		    (log(delta / (double)f->m) + log(a)) / (a - 1.0);
		best = fmin(best, v);
	}
	*ret_any = isfinite(best);
	return isfinite(best) ? fmax(best, 0.0) : INFINITY;
}
