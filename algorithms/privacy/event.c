/*
 * event.c - privacy event trees: names, construction, validation.  The
 * names are part of the stored run record and of the result body: never
 * rename one.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "privacy/event.h"
#include "privacy/selection.h"

static const char *const type_names[DP_EVENT__COUNT] = {
	[DP_EVENT_GAUSSIAN] = "gaussian",
	[DP_EVENT_LAPLACE] = "laplace",
	[DP_EVENT_PURE] = "pure",
	[DP_EVENT_BOUNDED_RANGE] = "bounded_range",
	[DP_EVENT_ZCDP] = "zcdp",
	[DP_EVENT_APPROX] = "approx",
	[DP_EVENT_SAMPLED_WOR] = "sampled_without_replacement",
	[DP_EVENT_POISSON] = "poisson_sampled",
	[DP_EVENT_SELF_COMPOSED] = "self_composed",
	[DP_EVENT_COMPOSED] = "composed",
	[DP_EVENT_PARALLEL] = "parallel",
	[DP_EVENT_SELECTION_TNB] = "selection_tnb",
	[DP_EVENT_SELECTION_POISSON] = "selection_poisson",
	[DP_EVENT_MIXTURE] = "mixture",
};

static const char *const relation_names[DP_RELATION__COUNT] = {
	[DP_REPLACE_ONE] = "replace_one",
	[DP_ADD_REMOVE] = "add_remove",
};

const char *
dp_relation_name(enum dp_relation r)
{
	return (unsigned)r < DP_RELATION__COUNT ? relation_names[r] : NULL;
}

const char *
dp_event_type_name(enum dp_event_type t)
{
	return (unsigned)t < DP_EVENT__COUNT ? type_names[t] : NULL;
}

int
dp_event_type_from_name(const char *name)
{
	for (int i = 0; i < DP_EVENT__COUNT; i++)
		if (strcmp(type_names[i], name) == 0)
			return i;
	return -1;
}

int
dp_relation_from_name(const char *name)
{
	for (int i = 0; i < DP_RELATION__COUNT; i++)
		if (strcmp(relation_names[i], name) == 0)
			return i;
	return -1;
}

int
dp_event_arity(enum dp_event_type t)
{
	switch (t) {
	case DP_EVENT_GAUSSIAN:
	case DP_EVENT_LAPLACE:
	case DP_EVENT_PURE:
	case DP_EVENT_BOUNDED_RANGE:
	case DP_EVENT_ZCDP:
	case DP_EVENT_APPROX:
		return 0;
	case DP_EVENT_SAMPLED_WOR:
	case DP_EVENT_POISSON:
	case DP_EVENT_SELF_COMPOSED:
	case DP_EVENT_SELECTION_TNB:
	case DP_EVENT_SELECTION_POISSON:
		return 1;
	case DP_EVENT_COMPOSED:
	case DP_EVENT_PARALLEL:
	case DP_EVENT_MIXTURE:
	case DP_EVENT__COUNT:
		break;
	}
	return -1;
}

static void
leaf(struct dp_event_tree *t, enum dp_event_type type, enum dp_relation r)
{
	memset(t, 0, sizeof(*t));
	t->n_nodes = 1;
	t->node[0].type = type;
	t->node[0].relation = r;
}

void
dp_event_gaussian(struct dp_event_tree *t, enum dp_relation r, double z)
{
	leaf(t, DP_EVENT_GAUSSIAN, r);
	t->node[0].noise_multiplier = z;
}

void
dp_event_laplace(struct dp_event_tree *t, enum dp_relation r, double b)
{
	leaf(t, DP_EVENT_LAPLACE, r);
	t->node[0].noise_multiplier = b;
}

void
dp_event_pure(struct dp_event_tree *t, enum dp_relation r, double epsilon)
{
	leaf(t, DP_EVENT_PURE, r);
	t->node[0].epsilon = epsilon;
}

void
dp_event_bounded_range(struct dp_event_tree *t, enum dp_relation r, double epsilon)
{
	leaf(t, DP_EVENT_BOUNDED_RANGE, r);
	t->node[0].epsilon = epsilon;
}

void
dp_event_zcdp(struct dp_event_tree *t, enum dp_relation r, double rho)
{
	leaf(t, DP_EVENT_ZCDP, r);
	t->node[0].rho = rho;
}

void
dp_event_approx(struct dp_event_tree *t, enum dp_relation r, double epsilon, double delta)
{
	leaf(t, DP_EVENT_APPROX, r);
	t->node[0].epsilon = epsilon;
	t->node[0].delta = delta;
}

double
dp_selection_tnb_mean(double eta, double gamma)
{
	double lg;

	if (!(isfinite(eta) && eta > -1.0 && gamma > 0.0 && gamma < 1.0))
		return NAN;
	lg = log(gamma);
	if (eta == 0.0)
		return (1.0 / gamma - 1.0) / -lg;
	/* 1 - gamma^eta = -expm1(eta log gamma): same sign as eta. */
	return eta * (1.0 - gamma) / (gamma * -expm1(eta * lg));
}

/* Copy src's nodes into dst starting at index at, shifting child indices. */
static void
copy_shifted(struct dp_event_tree *dst, unsigned at, const struct dp_event_tree *src)
{
	for (unsigned i = 0; i < src->n_nodes; i++) {
		dst->node[at + i] = src->node[i];
		if (src->node[i].n_children > 0)
			dst->node[at + i].first_child = (uint16_t)(src->node[i].first_child + at);
	}
}

enum err_code
dp_event_wrap(struct dp_event_tree *t, const struct dp_event *parent, struct err *e)
{
	struct dp_event_tree old = *t;

	if (dp_event_arity(parent->type) == 0 || parent->type == DP_EVENT_COMPOSED ||
	    parent->type == DP_EVENT_MIXTURE)
		return err_set(e, ERR_INTERNAL, "a %s event cannot wrap one child",
			       dp_event_type_name(parent->type));
	if (old.n_nodes + 1u > DP_EVENT_MAX_NODES)
		return err_set(e, ERR_INVALID, "privacy event has more than %d nodes",
			       DP_EVENT_MAX_NODES);
	memset(t, 0, sizeof(*t));
	t->node[0] = *parent;
	t->node[0].relation = old.node[0].relation;
	t->node[0].first_child = 1;
	t->node[0].n_children = 1;
	copy_shifted(t, 1, &old);
	t->n_nodes = (uint16_t)(old.n_nodes + 1);
	return ERR_OK;
}

enum err_code
dp_event_join(struct dp_event_tree *ret, enum dp_event_type type,
	      const struct dp_event_tree *const *parts, unsigned k, struct err *e)
{
	struct dp_event_tree t;
	unsigned total = 1 + k, at;

	if ((type != DP_EVENT_COMPOSED && type != DP_EVENT_PARALLEL && type != DP_EVENT_MIXTURE) ||
	    k == 0)
		return err_set(e, ERR_INTERNAL,
			       "dp_event_join needs composed, parallel or mixture parts");
	for (unsigned i = 0; i < k; i++) {
		total += parts[i]->n_nodes - 1u; /* each root is one of the k slots */
		if (parts[i]->node[0].relation != parts[0]->node[0].relation)
			return err_set(e, ERR_INVALID,
				       "composed events must share one neighbouring relation");
	}
	if (total > DP_EVENT_MAX_NODES)
		return err_set(e, ERR_INVALID, "privacy event has more than %d nodes",
			       DP_EVENT_MAX_NODES);
	memset(&t, 0, sizeof(t));
	t.node[0].type = type;
	t.node[0].relation = parts[0]->node[0].relation;
	t.node[0].first_child = 1;
	t.node[0].n_children = (uint16_t)k;
	t.node[0].count = type == DP_EVENT_PARALLEL ? k : 0;
	/* The k roots sit at 1..k; each part's other nodes follow, in order. */
	at = 1 + k;
	for (unsigned i = 0; i < k; i++) {
		const struct dp_event_tree *p = parts[i];

		t.node[1 + i] = p->node[0];
		if (p->n_nodes > 1) {
			/* node j >= 1 of p goes to at + j - 1 */
			for (unsigned j = 1; j < p->n_nodes; j++) {
				t.node[at + j - 1] = p->node[j];
				if (p->node[j].n_children > 0)
					t.node[at + j - 1].first_child =
						(uint16_t)(p->node[j].first_child + at - 1);
			}
			if (p->node[0].n_children > 0)
				t.node[1 + i].first_child =
					(uint16_t)(p->node[0].first_child + at - 1);
			at += p->n_nodes - 1u;
		}
	}
	t.n_nodes = (uint16_t)total;
	*ret = t;
	return ERR_OK;
}

static bool
finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

static enum err_code
check_node(const struct dp_event_tree *t, unsigned i, unsigned depth, struct err *e)
{
	const struct dp_event *n = &t->node[i];
	const char *name = dp_event_type_name(n->type);
	int arity;

	if (name == NULL)
		return err_set(e, ERR_INVALID, "privacy event node %u has an unknown type", i);
	if (dp_relation_name(n->relation) == NULL)
		return err_set(e, ERR_INVALID, "%s event has an unknown relation", name);
	if (depth > DP_EVENT_MAX_NODES)
		return err_set(e, ERR_INVALID, "privacy event is cyclic");
	if (n->k_max != 0 &&
	    ((n->type != DP_EVENT_SELECTION_TNB && n->type != DP_EVENT_SELECTION_POISSON) ||
	     n->k_max > SELECTION_MAX_K))
		return err_set(e, ERR_INVALID, "k_max belongs to selection events only, at most %u",
			       SELECTION_MAX_K);
	switch (n->type) {
	case DP_EVENT_GAUSSIAN:
	case DP_EVENT_LAPLACE:
		if (!finite_pos(n->noise_multiplier))
			return err_set(e, ERR_INVALID, "%s event needs a positive noise_multiplier",
				       name);
		break;
	case DP_EVENT_PURE:
	case DP_EVENT_BOUNDED_RANGE:
		if (!finite_pos(n->epsilon))
			return err_set(e, ERR_INVALID, "%s event needs a positive epsilon", name);
		break;
	case DP_EVENT_ZCDP:
		if (!finite_pos(n->rho))
			return err_set(e, ERR_INVALID, "zcdp event needs a positive rho");
		break;
	case DP_EVENT_APPROX:
		if (!finite_pos(n->epsilon) && n->epsilon != 0.0)
			return err_set(e, ERR_INVALID, "approx event needs epsilon >= 0");
		if (!(n->delta >= 0.0 && n->delta < 1.0))
			return err_set(e, ERR_INVALID, "approx event needs delta in [0, 1)");
		break;
	case DP_EVENT_SAMPLED_WOR:
		if (n->batch == 0 || n->n == 0 || n->batch > n->n)
			return err_set(e, ERR_INVALID,
				       "sampled_without_replacement needs 0 < batch <= n");
		break;
	case DP_EVENT_POISSON:
		if (!(n->sampling_rate > 0.0 && n->sampling_rate <= 1.0))
			return err_set(e, ERR_INVALID, "poisson_sampled needs a rate in (0, 1]");
		break;
	case DP_EVENT_SELF_COMPOSED:
		if (n->count == 0)
			return err_set(e, ERR_INVALID, "self_composed needs count >= 1");
		break;
	case DP_EVENT_PARALLEL:
		if (n->count < n->n_children)
			return err_set(e, ERR_INVALID, "parallel needs parts >= its events");
		break;
	case DP_EVENT_SELECTION_TNB:
		if (!(isfinite(n->eta) && n->eta > -1.0 && n->eta <= 1e6))
			return err_set(e, ERR_INVALID, "selection_tnb needs eta in (-1, 1e6]");
		if (!(n->gamma > 0.0 && n->gamma < 1.0))
			return err_set(e, ERR_INVALID, "selection_tnb needs gamma in (0, 1)");
		if (!finite_pos(dp_selection_tnb_mean(n->eta, n->gamma)))
			return err_set(e, ERR_INVALID,
				       "selection_tnb has no finite mean number of repetitions");
		break;
	case DP_EVENT_SELECTION_POISSON:
		if (!finite_pos(n->mu) || n->mu > 1e9)
			return err_set(e, ERR_INVALID, "selection_poisson needs mu in (0, 1e9]");
		break;
	case DP_EVENT_COMPOSED:
	case DP_EVENT_MIXTURE:
	case DP_EVENT__COUNT:
		break;
	}
	arity = dp_event_arity(n->type);
	if ((arity >= 0 && n->n_children != arity) || (arity < 0 && n->n_children == 0))
		return err_set(e, ERR_INVALID, "%s event has %u children", name, n->n_children);
	if (n->n_children > 0 &&
	    (n->first_child <= i || n->first_child + n->n_children > t->n_nodes))
		return err_set(e, ERR_INVALID, "%s event has children out of range", name);
	for (unsigned c = 0; c < n->n_children; c++) {
		const struct dp_event *ch = &t->node[n->first_child + c];
		enum err_code rc;

		if (ch->relation != n->relation)
			return err_set(e, ERR_INVALID, "%s event mixes neighbouring relations",
				       name);
		rc = check_node(t, n->first_child + c, depth + 1, e);
		if (rc != ERR_OK)
			return rc;
	}
	return ERR_OK;
}

enum err_code
dp_event_check(const struct dp_event_tree *t, struct err *e)
{
	if (t->n_nodes == 0 || t->n_nodes > DP_EVENT_MAX_NODES)
		return err_set(e, ERR_INVALID, "privacy event has %u nodes", t->n_nodes);
	return check_node(t, 0, 0, e);
}

bool
dp_event_equal(const struct dp_event_tree *a, const struct dp_event_tree *b)
{
	if (a->n_nodes != b->n_nodes)
		return false;
	for (unsigned i = 0; i < a->n_nodes; i++) {
		const struct dp_event *x = &a->node[i], *y = &b->node[i];

		if (x->type != y->type || x->relation != y->relation || x->n != y->n ||
		    x->batch != y->batch || x->count != y->count ||
		    x->first_child != y->first_child || x->n_children != y->n_children ||
		    memcmp(&x->noise_multiplier, &y->noise_multiplier, sizeof(double)) != 0 ||
		    memcmp(&x->epsilon, &y->epsilon, sizeof(double)) != 0 ||
		    memcmp(&x->delta, &y->delta, sizeof(double)) != 0 ||
		    memcmp(&x->rho, &y->rho, sizeof(double)) != 0 ||
		    memcmp(&x->sampling_rate, &y->sampling_rate, sizeof(double)) != 0 ||
		    memcmp(&x->eta, &y->eta, sizeof(double)) != 0 ||
		    memcmp(&x->gamma, &y->gamma, sizeof(double)) != 0 ||
		    memcmp(&x->mu, &y->mu, sizeof(double)) != 0 || x->k_max != y->k_max)
			return false;
	}
	return true;
}
