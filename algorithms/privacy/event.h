/*
 * event.h - what a private run releases, as a typed privacy event
 * (after dp_accounting's DpEvent; docs/privacy-model.md §2).
 *
 * An algorithm computes its event from public parameters alone before the
 * run starts; the ledger charges it and the result reports it.  Every
 * event names its neighbouring relation; the ledger and calibration accept
 * replace_one only (poisson_sampled, add/remove, exists for the accountant
 * command and the published-value tests).
 *
 * An event is a small tree stored by value in a fixed array, children by
 * index, so plans that hold one can be copied with "=" and stored on the
 * stack: node[0] is the root; a node's children are the n_children nodes
 * starting at first_child.
 *
 *	type                         parameters             children
 *	gaussian                     noise_multiplier z      -
 *	laplace                      noise_multiplier b/D1   -
 *	pure                         epsilon                 -
 *	bounded_range                epsilon                 -
 *	zcdp                         rho                     -
 *	approx                       epsilon, delta          -
 *	sampled_without_replacement  n, batch                1 (the mechanism on the batch)
 *	poisson_sampled              sampling_rate q         1
 *	self_composed                count                   1
 *	composed                     -                       1..k, in sequence
 *	parallel                     parts                   1..k, on disjoint records
 *	selection_tnb                eta, gamma [, k_max]    1 (the base mechanism Q)
 *	selection_poisson            mu [, k_max]            1 (the base mechanism Q)
 *	mixture                      -                       1..k, one of them chosen
 *	                                                     by public randomness
 *
 * selection_tnb / selection_poisson: private selection with a random
 * number of repetitions (Papernot & Steinke, "Hyperparameter tuning with
 * Renyi differential privacy", ICLR 2022): K ~ truncated negative binomial
 * D_{eta,gamma} on {1, 2, ...} (eta > -1, gamma in (0, 1); eta = 1 is the
 * geometric P[K = k] = gamma (1 - gamma)^(k - 1), mean 1/gamma), or
 * K ~ Poisson(mu), independent runs of the child Q, and only the best
 * output (by Q's own released score) is released -- never K itself.
 * With k_max >= 1 the run is capped: K is drawn conditioned on K >= 1,
 * k_max repetitions are always performed and the best of the first
 * min(K, k_max) is released (privacy/selection.h; the curve adds the
 * cap's term).  Curves in rdp.c.
 *
 * parallel with one child and parts = T means T disjoint parts that each
 * run that child; its cost is the child's (the worst part's in general).
 *
 * mixture: the run draws one of its children with randomness independent
 * of the data (e.g. a candidate of a public grid, in a selection's base
 * mechanism) and runs that one.  Its cost is bounded by the worst child's
 * at every Renyi order (the Renyi divergence of two mixtures with the same
 * public weights is at most the largest of the pairs', by joint convexity
 * of exp((alpha - 1) D_alpha)), and likewise for (epsilon, delta) and for
 * a dominating Gaussian pair (the hockey-stick divergence is jointly
 * convex): the accountants treat it as parallel's maximum.
 */
#ifndef ALGORITHMS_PRIVACY_EVENT_H
#define ALGORITHMS_PRIVACY_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

enum dp_relation {
	DP_REPLACE_ONE, /* neighbours differ by replacing one record */
	DP_ADD_REMOVE,  /* neighbours differ by adding or removing one record */
	DP_RELATION__COUNT
};

enum dp_event_type {
	DP_EVENT_GAUSSIAN,
	DP_EVENT_LAPLACE,
	DP_EVENT_PURE,
	DP_EVENT_BOUNDED_RANGE,
	DP_EVENT_ZCDP,
	DP_EVENT_APPROX,
	DP_EVENT_SAMPLED_WOR,
	DP_EVENT_POISSON,
	DP_EVENT_SELF_COMPOSED,
	DP_EVENT_COMPOSED,
	DP_EVENT_PARALLEL,
	DP_EVENT_SELECTION_TNB,
	DP_EVENT_SELECTION_POISSON,
	DP_EVENT_MIXTURE,
	DP_EVENT__COUNT
};

struct dp_event {
	enum dp_event_type type;
	enum dp_relation relation;
	double noise_multiplier; /* gaussian: sigma / Delta_2; laplace: b / Delta_1 */
	double epsilon;          /* pure, bounded_range, approx */
	double delta;            /* approx */
	double rho;              /* zcdp */
	double sampling_rate;    /* poisson_sampled: q in (0, 1] */
	uint64_t n;              /* sampled_without_replacement: population */
	uint64_t batch;          /* sampled_without_replacement: sample size */
	uint64_t count;          /* self_composed: repetitions; parallel: parts */
	uint16_t first_child;
	uint16_t n_children;
	double eta;   /* selection_tnb: shape, > -1 (1: geometric) */
	double gamma; /* selection_tnb: in (0, 1) */
	double mu;    /* selection_poisson: mean number of repetitions, > 0 */
	/* selection_*: 0, or the cap of a run that performs k_max repetitions
	 * and releases the best of the first min(K, k_max), K drawn
	 * conditioned on K >= 1 (privacy/selection.h); at most 100000. */
	uint64_t k_max;
};

#define DP_EVENT_MAX_NODES 32

struct dp_event_tree {
	uint16_t n_nodes;
	struct dp_event node[DP_EVENT_MAX_NODES]; /* node[0] is the root */
};

/* API names ("gaussian", "replace_one"); NULL for a value out of range. */
const char *dp_relation_name(enum dp_relation r);
const char *dp_event_type_name(enum dp_event_type t);
/* The type or relation with that name; -1 when unknown. */
int dp_event_type_from_name(const char *name);
int dp_relation_from_name(const char *name);

/* Number of children a type takes: 0 (leaf), 1, or -1 for "1 or more". */
int dp_event_arity(enum dp_event_type t);

/* Leaf constructors: a one-node tree. */
void dp_event_gaussian(struct dp_event_tree *t, enum dp_relation r, double z);
void dp_event_laplace(struct dp_event_tree *t, enum dp_relation r, double b);
void dp_event_pure(struct dp_event_tree *t, enum dp_relation r, double epsilon);
void dp_event_bounded_range(struct dp_event_tree *t, enum dp_relation r, double epsilon);
void dp_event_zcdp(struct dp_event_tree *t, enum dp_relation r, double rho);
void dp_event_approx(struct dp_event_tree *t, enum dp_relation r, double epsilon, double delta);

/* The expected number of repetitions E[K] of selection_tnb (Papernot &
 * Steinke 2022, Sec. 2): eta (1 - gamma) / (gamma (1 - gamma^eta)) for
 * eta != 0, (1/gamma - 1) / log(1/gamma) for eta = 0 (the logarithmic
 * distribution).  NaN outside eta > -1, 0 < gamma < 1. */
double dp_selection_tnb_mean(double eta, double gamma);

/* Put the whole tree t under a new root of one child: parent's type must
 * take one child (sampled_without_replacement, poisson_sampled,
 * self_composed, parallel, selection_tnb, selection_poisson).  The parent's relation is the
 * child's. ERR_INVALID when the tree would exceed DP_EVENT_MAX_NODES. */
enum err_code dp_event_wrap(struct dp_event_tree *t, const struct dp_event *parent, struct err *e);

/* *ret = composed (or parallel, with parts = k) of the k trees in parts;
 * every part must have the same relation. */
enum err_code dp_event_join(struct dp_event_tree *ret, enum dp_event_type type,
			    const struct dp_event_tree *const *parts, unsigned k, struct err *e);

/* Structural and numeric validity: finite positive parameters, arities,
 * child indices inside the tree and after their parent (no cycles), one
 * relation per subtree.  Errors name the node ("event.events[1].epsilon"
 * style paths are the JSON layer's job; here the message says which
 * parameter of which type). */
enum err_code dp_event_check(const struct dp_event_tree *t, struct err *e);

/* True when the two trees are the same event (bitwise parameters). */
bool dp_event_equal(const struct dp_event_tree *a, const struct dp_event_tree *b);

#endif /* ALGORITHMS_PRIVACY_EVENT_H */
