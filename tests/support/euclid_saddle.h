/*
 * euclid_saddle.h - the fixtures the tests of the Euclidean saddle
 * methods share (test_nseg.c, test_nispp.c, test_recursive_regularization.c):
 * a bilinear problem with known population means, the golden matrix-game
 * schema, a run_spec for a method whose first parameter is "variant", and
 * small plan/event helpers.  Test-only code (tests/meson.build); failures
 * are Check assertions.
 */
#ifndef TESTS_SUPPORT_EUCLID_SADDLE_H
#define TESTS_SUPPORT_EUCLID_SADDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "objective.h"
#include "privacy/accountant.h"
#include "saddle.h"

#define EUCLID_MAXN 16000

/* A problem: the objective, its schema, rows (x, n x 4 doubles at most
 * EUCLID_MAXN rows) and the two blocks' sets.  Owned by the caller (free()). */
struct prob {
	struct objective o;
	struct data_schema s;
	struct dataset ds;
	struct saddle_block bx, by;
	double x[EUCLID_MAXN * 4];
};

/* bilinear (or bilinear_vi), a, b in R^2, entries +-1/sqrt 2 with P(+) =
 * (1 + nu_j) / 2, nu = (0.3, -0.2 | 0.1, 0.25), coupling 0.5, over unit l2
 * balls (as test_saddle.c); n rows from seed. */
struct prob *make_bilinear(size_t n, uint64_t seed, bool vi);

/* The golden configuration (docs/algorithms/nseg.md §7): matrix_game rank
 * one, u, v in R^10 with ||u||, ||v|| <= 1, over two probability simplices:
 * M = sqrt 2, L = 1, D = 2, p = 20.  Schema only (plans need no rows). */
struct prob *make_golden(void);

/* One row holding the population means of make_bilinear's entries: the
 * population objective (its gap is the population gap). */
struct prob *population(void);

/* *spec <- p's problem for method a at n records, (1, 1e-6), default
 * parameters with params[0] = variant (asserted to be "variant"); a y
 * block unless p's objective is an operator (VI mode). */
void euclid_spec(const struct alg_ops *a, const struct prob *p, size_t n, int variant,
		 struct run_spec *spec);

/* The plan's value name, asserted present. */
double used(const struct run_plan *p, const char *name);

/* epsilon at delta of a plan's event on mode's accountant. */
double event_epsilon(const struct dp_event_tree *t, enum accounting_mode mode, double delta);

/* The event with every Gaussian leaf's multiplier scaled by f. */
void scale_leaf(struct dp_event_tree *t, double f);

#endif /* TESTS_SUPPORT_EUCLID_SADDLE_H */
