/*
 * constraint.h - feasible sets and their exact Euclidean projections.
 *
 * A constraint is a small value type parsed from the request
 * ("constraints": {"x": {"kind": "l2_ball", "radius": 1}}).  Projections
 * never allocate.
 */
#ifndef ALGORITHMS_CONSTRAINT_H
#define ALGORITHMS_CONSTRAINT_H

#include <stddef.h>

enum constraint_kind {
	CONSTRAINT_L2_BALL, /* {x : ||x||_2 <= radius} */
	CONSTRAINT_L1_BALL, /* {x : ||x||_1 <= radius} */
	CONSTRAINT_SIMPLEX, /* {x >= 0 : sum x = scale} (scale in radius) */
	CONSTRAINT_BOX,     /* {x : lo <= x_j <= hi} */
	CONSTRAINT__COUNT
};

struct constraint {
	enum constraint_kind kind;
	double radius; /* l2_ball, l1_ball radius; simplex scale */
	double lo, hi; /* box */
};

/* API name of a kind ("l2_ball", ...), and back; -1 when unknown. */
const char *constraint_kind_name(enum constraint_kind k);
int constraint_kind_from_name(const char *name);

/* Largest l2 norm of a point of the set in dimension d. */
double constraint_l2_radius(const struct constraint *c, size_t d);

/* Largest l1 norm of a point of the set in dimension d. */
double constraint_l1_radius(const struct constraint *c, size_t d);

/* Replace x (d entries) by its Euclidean projection onto the set.  The
 * l1-ball and simplex projections need d doubles of scratch. */
void constraint_project(const struct constraint *c, double *x, size_t d, double *scratch);

#endif /* ALGORITHMS_CONSTRAINT_H */
