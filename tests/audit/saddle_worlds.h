/*
 * saddle_worlds.h - the neighbouring worlds the audits of the Euclidean
 * saddle methods share (test_audit_nseg.c, test_audit_nispp.c,
 * test_audit_saddle_e2e.c, test_audit_recursive_regularization.c and
 * test_audit_recursive_regularization_e2e.c): bilinear with
 * coupling 0 over two one-column blocks (|a|, |b| <= 1) in l2 balls of
 * radius 1, so a record's operator is (a, b) at every point, M = sqrt 2,
 * L = 0; the canary (1, 1) in world A and (-1, -1) in world B, the other
 * records (t, -t), orthogonal to (1, 1).  Test-only code; failures are
 * Check assertions.
 */
#ifndef TESTS_AUDIT_SADDLE_WORLDS_H
#define TESTS_AUDIT_SADDLE_WORLDS_H

#include <stddef.h>

#include "alg.h"
#include "rng.h"

/* The most records a world holds. */
#define SADDLE_WORLD_MAX_N 256

/* One world of an audit: the run's spec and plan, its dataset over x. */
struct saddle_world {
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds;
	double x[SADDLE_WORLD_MAX_N * 2];
};

/* *s <- method a on the worlds' schema with n records at (epsilon,
 * delta), a 'basic' ledger, a's default parameters. */
void saddle_world_spec(struct run_spec *s, const struct alg_ops *a, size_t n, double epsilon,
		       double delta);

/* x (2 n doubles) <- the rows of world 0 (A) or 1 (B): the same rows in
 * both, (t, -t) with t = 0.7 u, u uniform in [-1, 1] from a fixed seed,
 * and the canary's row (+-1, +-1). */
void saddle_world_rows(double *x, size_t n, size_t canary, int world);

/* w's dataset <- its first n rows of x (n <= SADDLE_WORLD_MAX_N). */
void saddle_world_data(struct saddle_world *w, size_t n);

/* u (the spec's dim doubles) <- one plain run of a in world w; a Check
 * abort when the run fails. */
void saddle_world_run(const struct alg_ops *a, const struct saddle_world *w, struct rng *r,
		      double *u);

/* The accountant's epsilon at delta for the plan's event, 'basic' mode:
 * the run's own charge. */
double saddle_charge(const struct run_plan *p, double delta);

/* saddle.recursive_regularization, looked up once (a Check assertion
 * per run is a pipe write). */
const struct alg_ops *saddle_rr(void);

/* The plan's value name, which must be present. */
double saddle_used(const struct run_plan *p, const char *name);

#endif /* TESTS_AUDIT_SADDLE_WORLDS_H */
