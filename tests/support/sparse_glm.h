/*
 * sparse_glm.h - the l1-geometry test problem of issue 12: rows with
 * features in {-1, +1}^d, a k-sparse planted model w* with ||w*||_1 = 1,
 * and logistic labels, for the tests and the experiment that compare the
 * l1 methods with dp_sgd (tests/algorithms/test_l1_vs_l2.c,
 * bench/experiments/l1_vs_l2).
 *
 * From a seed: the support of w* is k coordinates drawn without
 * replacement, its entries have random signs and magnitudes |N(0, 1)|
 * normalised to ||w*||_1 = 1.  Each row is uniform on {-1, +1}^d; the
 * label is +1 with probability sigmoid(<w*, x>), else -1.  The model is
 * well specified, so w* minimises the population logistic loss over every
 * set that contains it (the l1 ball of radius 1, the l2 ball of radius
 * ||w*||_2).
 *
 * The population excess loss of a model w, F(w) - F(w*), is estimated on
 * m fresh rows with the labels integrated out exactly: for a row x with
 * margins s = <w, x>, s* = <w*, x>,
 *	E_y[l(w)] - E_y[l(w*)] = KL(Bernoulli(sigmoid(s*)) || Bernoulli(sigmoid(s)))
 * which is >= 0 row by row, so the estimate has no label noise.  Test-only
 * code (tests/meson.build).
 */
#ifndef TESTS_SUPPORT_SPARSE_GLM_H
#define TESTS_SUPPORT_SPARSE_GLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data.h"

struct sparse_glm {
	size_t d, k;
	double *w;         /* owned: d entries, w* */
	double *x;         /* owned: n * d, the rows of the last sparse_glm_rows() */
	double *y;         /* owned: n labels in {-1, +1} */
	struct dataset ds; /* dense view of x, y */
};

/* The model w* of dimension d with k non-zeros from seed; no rows yet.
 * Aborts when out of memory. */
void sparse_glm_init(struct sparse_glm *m, size_t d, size_t k, uint64_t seed);

/* Replace the rows with n fresh ones drawn from seed (m->ds views them). */
void sparse_glm_rows(struct sparse_glm *m, size_t n, uint64_t seed);

/* F(w) - F(w*) estimated on n_eval fresh rows from seed (see above); w has
 * d entries (no intercept). */
double sparse_glm_excess(const struct sparse_glm *m, const double *w, size_t n_eval, uint64_t seed);

/*
 * One private run of the method alg on m's rows, the way issue 12 compares
 * them: logistic loss, no intercept, features declared feature_linf = 1
 * (so the row bound is sqrt(d)), (epsilon, delta) on a 'basic' dataset.
 * Methods of l1 geometry (every name but "dp_sgd.*") run over the l1 ball
 * of radius 1; dp_sgd over the l2 ball of radius ||w*||_2 with clip
 * sqrt(d).  params: n_params (name, value) pairs set over the method's
 * defaults (a name the method does not have aborts the test).  The result
 * (d entries) goes to ret_w; returns false when plan or run failed (msg
 * then says why).
 */
struct sparse_glm_param {
	const char *name;
	double value;
};

bool sparse_glm_run(const struct sparse_glm *m, const char *alg, double epsilon, double delta,
		    const struct sparse_glm_param *params, size_t n_params, uint64_t seed,
		    double *ret_w, char *msg, size_t msg_len);

/*
 * The Euclidean baseline's tuning (issue 12: "its step and batch tuned on
 * a separate synthetic draw"): dp_sgd.subsampled on a draw of n rows of a
 * model of dimension d from seed (never a seed the comparison uses), over
 * step_size in {auto, 0.01, 0.03, 0.1, 0.3, 1} x batch in {auto (whole
 * data), 5 % of n with 300 steps}, scored by the excess loss on n_eval rows.
 * ret_params[0..2] = step_size, batch_size, steps of the best; returns its
 * excess.
 */
double sparse_glm_tune_sgd(size_t d, size_t n, double epsilon, double delta, size_t n_eval,
			   uint64_t seed, struct sparse_glm_param ret_params[3]);

/* ||w*||_2. */
double sparse_glm_w_l2(const struct sparse_glm *m);

void sparse_glm_free(struct sparse_glm *m);

#endif /* TESTS_SUPPORT_SPARSE_GLM_H */
