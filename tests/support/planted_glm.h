/*
 * planted_glm.h - synthetic train/test rows of one planted linear model,
 * for the algorithm tests that measure utility (test_dp_sgd_subsampled.c,
 * test_select_random_stopping.c).
 *
 * From a seed: w* ~ N(0, I_d) scaled to ||w*||_2 = w_norm; each row
 * x ~ N(0, I_d / d), rescaled to ||x||_2 <= 1; the label is +-1 with
 * P(+1) = sigmoid(<w*, x>) (binary) or <w*, x> + N(0, 0.25) clipped to
 * [-3, 3] (regression).  The training rows come first from the stream,
 * then the test rows.  Test-only code (tests/meson.build).
 */
#ifndef TESTS_SUPPORT_PLANTED_GLM_H
#define TESTS_SUPPORT_PLANTED_GLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data.h"

struct planted_split {
	struct dataset ds; /* dense, ds.x and ds.y the arrays below */
	double *x;         /* owned: n * d */
	double *y;         /* owned: n */
};

/* Fills tr (n_train rows) and te (n_test rows); aborts the test when out
 * of memory. */
void planted_glm(struct planted_split *tr, struct planted_split *te, size_t n_train, size_t n_test,
		 size_t d, bool regression, double w_norm, uint64_t seed);

void planted_split_clear(struct planted_split *p);

#endif /* TESTS_SUPPORT_PLANTED_GLM_H */
