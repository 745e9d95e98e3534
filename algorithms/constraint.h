/*
 * constraint.h - feasible sets, their exact Euclidean projections and
 * linear minimisation oracles, and products of sets for two-player
 * problems.
 *
 * A constraint is a small value type parsed from the request
 * ("constraints": {"x": {"kind": "l2_ball", "radius": 1}}).  Nothing here
 * allocates; functions that need room take the caller's scratch and say
 * how many doubles.  Methods and accuracy: algorithms/README.md, "Geometry".
 */
#ifndef ALGORITHMS_CONSTRAINT_H
#define ALGORITHMS_CONSTRAINT_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

enum constraint_kind {
	CONSTRAINT_L2_BALL,  /* {x : ||x||_2 <= radius} */
	CONSTRAINT_L1_BALL,  /* {x : ||x||_1 <= radius} */
	CONSTRAINT_SIMPLEX,  /* {x >= 0 : sum x = scale} (scale in radius) */
	CONSTRAINT_BOX,      /* {x : lo <= x_j <= hi} */
	CONSTRAINT_LP_BALL,  /* {x : ||x||_p <= radius}, 1 < p <= 2 */
	CONSTRAINT_POLYTOPE, /* conv{v_1, .., v_m}, a vertex list given by the caller */
	CONSTRAINT__COUNT
};

struct constraint {
	enum constraint_kind kind;
	double radius; /* l2_ball, l1_ball, lp_ball radius; simplex scale */
	double lo, hi; /* box */
	double p;      /* lp_ball exponent, 1 < p <= 2; ignored by the other kinds */
	/*
	 * polytope: m = n_vertices rows of vertex_dim doubles, row-major,
	 * and the score centre c (vertex_dim doubles) with R_c = max_i
	 * ||v_i - c||_1 (centre_radius), both filled by constraint_polytope()
	 * and BORROWED: a struct constraint is copied freely (run_spec, the
	 * methods' states), so the storage's owner (the parsed request,
	 * service/run_request.c) must outlive every copy.  Unused (NULL, 0)
	 * by the other kinds.
	 *
	 * Design (issue 13's notes, and where this differs): the list is
	 * borrowed, not copied, so that a struct constraint stays a small
	 * value type; membership takes scratch (constraint_contains()),
	 * because deciding x in conv(V) needs the projection's workspace and
	 * nothing here allocates; the centre's candidates add the
	 * coordinate-wise median to 0, v_1, the centroid and the mid-range,
	 * which makes R_c translation-invariant on a translated simplex
	 * (where the centroid gives 2s(1 - 1/d) instead of s); one vertex (a
	 * point: every run trivial) and all-equal lists are refused.
	 */
	const double *vertices;
	const double *centre;
	size_t n_vertices, vertex_dim;
	double centre_radius;
};

/* The most vertices any polytope may have (the service's
 * DPOPT_MAX_VERTICES is at most this). */
#define CONSTRAINT_MAX_VERTICES 1000000

/* Doubles of storage constraint_polytope() needs for m vertices in
 * dimension d: the vertices (m d), the centre (d) and room to choose it
 * (d + m); 0 when that overflows. */
size_t constraint_polytope_storage(size_t m, size_t d);

/*
 * *ret <- the polytope conv{v_1, .., v_m} in R^d from the m x d row-major
 * vertices already written at the start of storage
 * (constraint_polytope_storage() doubles, which the caller keeps alive as
 * long as any copy of *ret).  Chooses the score centre c among public
 * candidates derived from the vertices alone, in this order: 0, v_1, the
 * centroid, the coordinate-wise mid-range (min + max) / 2 and the
 * coordinate-wise median, keeping the first of smallest R_c = max_i
 * ||v_i - c||_1 (so R_c <= the l1 diameter, through v_1; the median makes
 * it translation-invariant on the simplex and the l1 ball).  Errors as
 * constraint_validate(): 2 <= m <= CONSTRAINT_MAX_VERTICES, d >= 1, every
 * entry finite (field.vertices[i]) and not all vertices equal
 * (field.vertices).
 */
enum err_code constraint_polytope(struct constraint *ret, size_t m, size_t d, double *storage,
				  const char *field, struct err *e);

/*
 * The operations of one kind of set (constraint.c holds one row per kind;
 * tests/algorithms/test_conformance.c checks that every kind fills every
 * member and that the operations agree with each other).  The public
 * functions below dispatch through this table; nothing switches over
 * kinds.  The service's JSON keys of each kind are a parallel table
 * (service/constraint_json.c) indexed by the same enum.
 */

/* Which entropic mirror map the kind supports (mirror.h). */
enum constraint_entropic {
	CONSTRAINT_ENTROPIC_NONE,
	CONSTRAINT_ENTROPIC_SIMPLEX, /* mirror_entropic_*: x = scale softmax(theta) */
	CONSTRAINT_ENTROPIC_L1_LIFT, /* mirror_l1_*: through the 2d-simplex */
};

/* As which outer set the exact p-norm mirror step (mirror_pnorm_step())
 * takes the kind. */
enum constraint_pnorm_outer {
	CONSTRAINT_PNORM_OUTER_NONE, /* not supported: the step refuses it */
	CONSTRAINT_PNORM_OUTER_L1,   /* MS-L1 */
	CONSTRAINT_PNORM_OUTER_SIMPLEX,
	CONSTRAINT_PNORM_OUTER_LP, /* MS-LP, exponent c->p */
};

struct constraint_ops {
	const char *name; /* API name ("l2_ball", ...) */
	/* The kind's own parameters in dimension d (the caller checked d >=
	 * 1); errors as constraint_validate(). */
	enum err_code (*validate)(const struct constraint *c, size_t d, const char *field,
				  struct err *e);
	/* max ||x||_q over the set in dimension d, 1 <= q <= INFINITY, exact
	 * (attained by a point of the set). */
	double (*radius)(const struct constraint *c, size_t d, double q);
	bool (*contains)(const struct constraint *c, const double *x, size_t d, double tol,
			 double *scratch);
	void (*project)(const struct constraint *c, double *x, size_t d, double *scratch);
	/* Doubles of scratch project and contains need in dimension d. */
	size_t (*scratch)(const struct constraint *c, size_t d);
	double (*lmo)(const struct constraint *c, const double *g, size_t d, double *ret_s);
	enum constraint_entropic entropic;
	enum constraint_pnorm_outer pnorm_outer;
	struct constraint example; /* a usable instance of the kind (tests, docs) */
};

/* The row of kind k; NULL when k is not a kind. */
const struct constraint_ops *constraint_ops_of(enum constraint_kind k);

/* API name of a kind ("l2_ball", ...), and back; -1 when unknown. */
const char *constraint_kind_name(enum constraint_kind k);
int constraint_kind_from_name(const char *name);

/*
 * ERR_OK when c is a usable set in dimension d; otherwise ERR_INVALID with
 * e->field = field + ".radius" (".scale" for the simplex, the API's name),
 * ".p", ".lo", ".hi", ".vertices" (a polytope whose vertices are not d
 * long, fewer than 2 or not set up by constraint_polytope()) or ".kind",
 * or field itself for d = 0.  Usable: finite parameters, radius > 0, 1 <
 * p <= 2, lo <= hi.  field is borrowed (the JSON path of the constraint,
 * e.g. "constraints.x").
 */
enum err_code constraint_validate(const struct constraint *c, size_t d, const char *field,
				  struct err *e);

/* Largest l_q norm of a point of the set in dimension d, 1 <= q <=
 * INFINITY; NAN for a bad kind or q. */
double constraint_radius(const struct constraint *c, size_t d, double q);

/* Largest l2 norm of a point of the set in dimension d. */
double constraint_l2_radius(const struct constraint *c, size_t d);

/* Largest l1 norm of a point of the set in dimension d. */
double constraint_l1_radius(const struct constraint *c, size_t d);

/*
 * x is in the set up to a slack relative to the set's scale s (the radius,
 * max(|lo|, |hi|) for a box, max_i ||v_i||_2 for a polytope): a norm may
 * exceed the radius by tol * s, simplex entries may be -tol * s and the sum
 * off by tol * s, box entries outside [lo, hi] by tol * s, a polytope's
 * Euclidean distance to x (by its projection) be tol * s.  tol = 0 is
 * exact membership (for a polytope: the projection returned x itself, up
 * to its rounding).  scratch: constraint_project_scratch() doubles (NULL
 * when 0).
 */
bool constraint_contains(const struct constraint *c, const double *x, size_t d, double tol,
			 double *scratch);

/* Doubles of scratch constraint_project() and constraint_contains() need
 * in dimension d (d for the l1 ball and the simplex, polytope_scratch(d)
 * = (d + 3)^2 + 6 (d + 3) for a polytope, 0 for the others). */
size_t constraint_project_scratch(const struct constraint *c, size_t d);

/* Replace x (d entries) by its Euclidean projection onto the set, with
 * constraint_project_scratch() doubles of scratch (NULL when 0). */
void constraint_project(const struct constraint *c, double *x, size_t d, double *scratch);

/*
 * Linear minimisation oracle: ret_s (d entries) <- a point of
 * argmin_{s in C} <g, s>; returns the minimum <g, ret_s>.  Ties are broken
 * deterministically: on the polytopes (l1 ball, simplex, box) the answer
 * is always a vertex, the one of lowest coordinate index among the
 * minimisers (l1 ball: of lowest j, and +radius e_j when g_j = 0; box:
 * lo where g_j = 0; polytope: the vertex of lowest index); on the l2 and lp balls the minimiser is
 * unique when g != 0, and for g = 0 the answer is the centre 0.  No scratch.  NAN for a bad kind.
 */
double constraint_lmo(const struct constraint *c, const double *g, size_t d, double *ret_s);

/* ---- products of sets (two-player problems, blockwise) ---- */

#define CONSTRAINT_MAX_PARTS 4

/* One block x[offset .. offset + size) constrained to c. */
struct constraint_part {
	struct constraint c;
	size_t offset, size;
	const char *field; /* borrowed JSON path for errors ("constraints.y"); NULL: none */
};

/* C_1 x ... x C_n over a vector of dimension dim: the parts tile [0, dim)
 * in order (part i starts where part i - 1 ends). */
struct constraint_product {
	size_t nparts; /* 1..CONSTRAINT_MAX_PARTS */
	size_t dim;
	struct constraint_part part[CONSTRAINT_MAX_PARTS];
};

/*
 * ERR_OK when 1 <= nparts <= CONSTRAINT_MAX_PARTS, the parts tile
 * [0, dim) exactly (first offset 0, each next offset the previous end, no
 * empty part, last end dim) and every part validates (errors name the
 * part's field, or field when the part has none).
 */
enum err_code constraint_product_validate(const struct constraint_product *cp, const char *field,
					  struct err *e);

/* Blockwise: the projection onto a product is the product of the
 * projections, the LMO of a product the product of the LMOs (the
 * objective is separable).  project and contains need as much scratch as
 * the largest part (constraint_product_scratch()); lmo returns the sum of
 * the blocks' minima. */
size_t constraint_product_scratch(const struct constraint_product *cp);
void constraint_product_project(const struct constraint_product *cp, double *x, double *scratch);
double constraint_product_lmo(const struct constraint_product *cp, const double *g, double *ret_s);
bool constraint_product_contains(const struct constraint_product *cp, const double *x, double tol,
				 double *scratch);

#endif /* ALGORITHMS_CONSTRAINT_H */
