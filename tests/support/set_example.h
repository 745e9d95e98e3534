/*
 * set_example.h - a usable set of every kind in every dimension, for the
 * tests that loop over the kinds.
 *
 * Every kind but the polytope has a static example (constraint_ops.example)
 * valid in any dimension; a polytope is a vertex list of fixed dimension,
 * so set_example() builds one in dimension d in the caller's storage:
 * 1.3 e_j and -(0.7 e_j + 0.2 * 1) for every j (a skewed cross-polytope,
 * not centred at 0), a repeated vertex and a point inside.
 */
#ifndef TESTS_SUPPORT_SET_EXAMPLE_H
#define TESTS_SUPPORT_SET_EXAMPLE_H

#include <stddef.h>

#include "constraint.h"

/* Doubles of storage set_example() needs in dimension d <= 64. */
#define SET_EXAMPLE_STORAGE(d) ((2 * (d) + 2) * (d) + 2 * (d) + 2 * (d) + 2)

/* The example of kind k in dimension d (storage: SET_EXAMPLE_STORAGE(d)
 * doubles, kept alive with the result; unused but for a polytope). */
struct constraint set_example(enum constraint_kind k, size_t d, double *storage);

/* The same polytope with one entry of vertex 1 set to NAN (invalid). */
struct constraint set_example_nan(size_t d, double *storage);

#endif /* TESTS_SUPPORT_SET_EXAMPLE_H */
