/*
 * accountant.c - epsilon(delta) of one run's event in the dataset's
 * accounting mode: analytic Gaussian, Renyi conversion, basic composition
 * (docs/privacy-model.md §§3 to 5; design notes in README.md here).
 *
 * Sources: B. Balle, Y.-X. Wang, ICML 2018 (analytic Gaussian); J. Dong,
 * A. Roth, W. Su, JRSS-B 2022 (Gaussian compositions); rdp.c for the Renyi
 * accountant; C. Dwork, K. Kenthapadi, F. McSherry, I. Mironov, M. Naor,
 * EUROCRYPT 2006 and Dwork & Roth 2014, Thm 3.16 (basic composition:
 * epsilons and deltas add, also adaptively); B. Balle, G. Barthe,
 * M. Gaboardi, "Privacy amplification by subsampling: tight analyses via
 * couplings and divergences", NeurIPS 2018 (sampling without replacement
 * under substitution: (log(1 + (m/n)(e^eps - 1)), (m/n) delta)).
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "privacy/accountant.h"
#include "privacy/analytic_gaussian.h"
#include "privacy/pld.h"

const char *
accountant_source(const char *name)
{
	static const struct {
		const char *name, *source;
	} known[] = {
		{ "analytic_gaussian", "Balle & Wang 2018" },
		{ "rdp", "improved conversion" },
		{ "pld", "Doroshenko et al. 2022" },
		{ "basic", "Dwork et al. 2006" },
	};

	for (size_t i = 0; name != NULL && i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(name, known[i].name) == 0)
			return known[i].source;
	return NULL;
}

static enum err_code
basic_node(const struct dp_event_tree *t, unsigned i, double *ret_eps, double *ret_delta,
	   struct err *e)
{
	const struct dp_event *n = &t->node[i];
	double eps = 0.0, delta = 0.0, ce, cd;
	enum err_code rc;

	switch (n->type) {
	case DP_EVENT_APPROX:
		eps = n->epsilon;
		delta = n->delta;
		break;
	case DP_EVENT_PURE:
	case DP_EVENT_BOUNDED_RANGE:
		eps = n->epsilon;
		break;
	case DP_EVENT_LAPLACE:
		eps = 1.0 / n->noise_multiplier;
		break;
	case DP_EVENT_GAUSSIAN:
	case DP_EVENT_ZCDP:
		return err_set(e, ERR_INVALID,
			       "basic composition takes approx or pure-DP events, not %s",
			       dp_event_type_name(n->type));
	case DP_EVENT_POISSON:
		return err_set(e, ERR_INVALID,
			       "poisson_sampled cannot be accounted by basic composition");
	case DP_EVENT_SAMPLED_WOR:
		if (n->relation != DP_REPLACE_ONE)
			return err_set(e, ERR_INVALID,
				       "sampled_without_replacement is accounted "
				       "for replace_one events only");
		if ((rc = basic_node(t, n->first_child, &ce, &cd, e)) != ERR_OK)
			return rc;
		if (n->batch == n->n) {
			eps = ce;
			delta = cd;
		} else {
			double g = (double)n->batch / (double)n->n;

			eps = log1p(g * expm1(ce));
			delta = g * cd;
		}
		break;
	case DP_EVENT_SELF_COMPOSED:
		if ((rc = basic_node(t, n->first_child, &ce, &cd, e)) != ERR_OK)
			return rc;
		eps = (double)n->count * ce;
		delta = (double)n->count * cd;
		break;
	case DP_EVENT_COMPOSED:
	case DP_EVENT_PARALLEL:
	case DP_EVENT_MIXTURE: /* the worst child (event.h) */
		for (unsigned k = 0; k < n->n_children; k++) {
			if ((rc = basic_node(t, n->first_child + k, &ce, &cd, e)) != ERR_OK)
				return rc;
			if (n->type == DP_EVENT_COMPOSED) {
				eps += ce;
				delta += cd;
			} else {
				eps = fmax(eps, ce);
				delta = fmax(delta, cd);
			}
		}
		break;
	case DP_EVENT_SELECTION_TNB:
	case DP_EVENT_SELECTION_POISSON:
		/* Papernot & Steinke's bounds are Renyi bounds: basic mode
		 * charges the (eps, delta) of the run's own RDP curve at the
		 * run's delta (the "rdp" candidate of accountant_epsilon). */
		return err_set(e, ERR_INVALID,
			       "%s cannot be accounted by basic composition of its parts",
			       dp_event_type_name(n->type));
	case DP_EVENT__COUNT:
		return err_set(e, ERR_INTERNAL, "unknown privacy event type");
	}
	if (!isfinite(eps) || !isfinite(delta) || eps < 0.0 || delta < 0.0) {
		err_set(e, ERR_NUMERIC, "basic composition of a %s event is not usable",
			dp_event_type_name(n->type));
		err_detail(e, "epsilon %.17g, delta %.17g (fails closed)", eps, delta);
		return ERR_NUMERIC;
	}
	*ret_eps = eps;
	*ret_delta = delta;
	return ERR_OK;
}

enum err_code
accountant_basic(const struct dp_event_tree *t, double *ret_epsilon, double *ret_delta,
		 struct err *e)
{
	/* basic_node sets both on ERR_OK; gcc -O3 cannot see that its
	 * "return err_set(...)" is never ERR_OK, so start from the
	 * fail-closed values (-Wmaybe-uninitialized). */
	double eps = INFINITY, delta = 1.0;
	enum err_code rc;

	if ((rc = dp_event_check(t, e)) != ERR_OK)
		return rc;
	if ((rc = basic_node(t, 0, &eps, &delta, e)) != ERR_OK)
		return rc;
	*ret_epsilon = eps;
	*ret_delta = delta;
	return ERR_OK;
}

static bool
has_type(const struct dp_event_tree *t, enum dp_event_type type)
{
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (t->node[i].type == type)
			return true;
	return false;
}

static bool
all_leaves_basic(const struct dp_event_tree *t)
{
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (t->node[i].type == DP_EVENT_GAUSSIAN || t->node[i].type == DP_EVENT_ZCDP ||
		    t->node[i].type == DP_EVENT_POISSON ||
		    t->node[i].type == DP_EVENT_SELECTION_TNB ||
		    t->node[i].type == DP_EVENT_SELECTION_POISSON)
			return false;
	return true;
}

/* A candidate bound: kept when it is valid and smaller than the best.
 * 0 is valid: a conversion that shows (0, delta)-DP (rdp_to_epsilon,
 * ag_epsilon_mu); basic composition's zero is refused before it gets
 * here. */
static void
consider(struct accountant_report *best, bool *have, double eps, double delta, const char *name,
	 double order)
{
	if (!isfinite(eps) || !(eps >= 0.0))
		return;
	if (!*have || eps < best->epsilon) {
		best->epsilon = eps;
		best->delta = delta;
		best->accountant = name;
		best->order = order;
		*have = true;
	}
}

static enum err_code
rdp_candidate(const struct dp_event_tree *t, const struct rdp_grid *g, double delta,
	      double *ret_eps, double *ret_order, struct err *e)
{
	double rdp[RDP_MAX_ORDERS];
	enum err_code rc;

	if ((rc = rdp_curve(t, g, rdp, e)) != ERR_OK)
		return rc;
	return rdp_to_epsilon(g, rdp, delta, ret_eps, ret_order, e);
}

struct accountant_options
accountant_defaults(void)
{
	return (struct accountant_options){ .pld_step = ACCOUNTANT_PLD_STEP,
					    .pld_max_work = ACCOUNTANT_PLD_MAX_WORK };
}

/* The PLD's upper estimate, or an error (unsupported, cost guard). */
static enum err_code
pld_candidate(const struct dp_event_tree *t, double delta, const struct accountant_options *o,
	      double *ret_eps, struct err *e)
{
	struct pld_options po = { .step = o->pld_step,
				  .max_work = o->pld_max_work,
				  .upper_only = true };
	struct pld_interval r;
	enum err_code rc;

	if ((rc = pld_epsilon_with(t, delta, &po, &r, NULL, e)) != ERR_OK)
		return rc;
	*ret_eps = r.upper;
	return ERR_OK;
}

enum err_code
accountant_pld_information(const struct dp_event_tree *t, double delta, double *ret_epsilon,
			   struct err *e)
{
	struct accountant_options o = accountant_defaults();

	if (!(delta > 0.0 && delta < 1.0))
		return err_set_field(e, ERR_INVALID, "privacy.delta",
				     "'privacy.delta' must be in (0, 1)");
	return pld_candidate(t, delta, &o, ret_epsilon, e);
}

enum err_code
accountant_epsilon(const struct dp_event_tree *t, enum accounting_mode mode, double delta,
		   const struct rdp_grid *grid, bool for_ledger,
		   struct accountant_report *ret_report, struct err *e)
{
	struct accountant_options o = accountant_defaults();

	return accountant_epsilon_with(t, mode, delta, grid, for_ledger, &o, ret_report, e);
}

enum err_code
accountant_epsilon_with(const struct dp_event_tree *t, enum accounting_mode mode, double delta,
			const struct rdp_grid *grid, bool for_ledger,
			const struct accountant_options *opt, struct accountant_report *ret_report,
			struct err *e)
{
	struct accountant_options o = opt != NULL ? *opt : accountant_defaults();
	struct rdp_grid def;
	struct accountant_report best = { 0 };
	bool have = false;
	double eps, d, order, mu;
	enum err_code rc;

	if (!(delta > 0.0 && delta < 1.0))
		return err_set_field(e, ERR_INVALID, "privacy.delta",
				     "'privacy.delta' must be in (0, 1)");
	if ((rc = dp_event_check(t, e)) != ERR_OK)
		return rc;
	if (for_ledger)
		for (unsigned i = 0; i < t->n_nodes; i++)
			if (t->node[i].relation != DP_REPLACE_ONE ||
			    t->node[i].type == DP_EVENT_POISSON)
				return err_set(e, ERR_INVALID,
					       "the ledger and calibration accept "
					       "replace_one events only");
	if (grid == NULL) {
		rdp_grid_default(&def);
		grid = &def;
	}

	if (mode == ACCOUNTING_RENYI) {
		if ((rc = rdp_candidate(t, grid, delta, &eps, &order, e)) != ERR_OK)
			return rc;
		consider(&best, &have, eps, delta, "rdp", order);
	} else if (mode == ACCOUNTING_BASIC) {
		struct err cand_err = { 0 };
		enum err_code cand_rc = ERR_OK;

		/*
		 * Each candidate is a valid upper bound on its own, so the smallest
		 * that succeeds is one.  The error reported when none does is the
		 * Renyi accountant's (the general one), or basic composition's for
		 * trees with approx leaves, which only it can take.
		 */
		bool exact = false;

		if (ag_tree_mu(t, &mu, NULL) == ERR_OK &&
		    ag_epsilon_mu(mu, delta, &eps, NULL) == ERR_OK) {
			consider(&best, &have, eps, delta, "analytic_gaussian", 0.0);
			exact = true;
		}
		/* The PLD's pessimistic estimate of the same tree: skipped where
		 * the exact curve applies, refused (no candidate) when it cannot
		 * bound the event or its cost guard trips (pld.h). */
		bool by_pld = false;

		if (!exact && o.pld_step > 0.0 && !has_type(t, DP_EVENT_APPROX) &&
		    pld_candidate(t, delta, &o, &eps, NULL) == ERR_OK) {
			consider(&best, &have, eps, delta, "pld", 0.0);
			by_pld = true;
		}
		if (!has_type(t, DP_EVENT_APPROX) && !(by_pld && o.pld_decides)) {
			rc = rdp_candidate(t, grid, delta, &eps, &order, &cand_err);
			if (rc == ERR_OK)
				consider(&best, &have, eps, delta, "rdp", order);
			else
				cand_rc = rc;
		}
		if (all_leaves_basic(t)) {
			struct err berr = { 0 };

			rc = accountant_basic(t, &eps, &d, &berr);
			if (rc == ERR_OK && !(d <= delta)) {
				err_set_field(
					&berr, ERR_INVALID, "privacy.delta",
					"the event needs delta %.6g, more than 'privacy.delta'", d);
				rc = ERR_INVALID;
			}
			if (rc == ERR_OK && !(eps > 0.0)) {
				err_set(&berr, ERR_NUMERIC,
					"the privacy cost is zero (fails closed)");
				rc = ERR_NUMERIC;
			}
			if (rc == ERR_OK)
				consider(&best, &have, eps, d, "basic", 0.0);
			else if (cand_rc == ERR_OK) {
				cand_rc = rc;
				cand_err = berr;
			}
		}
		if (!have) {
			if (cand_rc == ERR_OK)
				return err_set(e, ERR_INVALID,
					       "no accountant can bound this event in basic mode");
			if (e != NULL)
				*e = cand_err;
			return cand_rc;
		}
	} else {
		return err_set(e, ERR_INTERNAL, "unknown accounting mode");
	}
	if (!have || !isfinite(best.epsilon) || !(best.epsilon >= 0.0))
		return err_set(e, ERR_NUMERIC, "the privacy cost is not finite and non-negative");
	*ret_report = best;
	return ERR_OK;
}
