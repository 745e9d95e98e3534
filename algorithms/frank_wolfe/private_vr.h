/*
 * frank_wolfe/private_vr.h - what frank_wolfe.private_vr offers besides its
 * alg_ops: the schedule rule and the two accountants, for the tests.
 */
#ifndef ALGORITHMS_FRANK_WOLFE_PRIVATE_VR_H
#define ALGORITHMS_FRANK_WOLFE_PRIVATE_VR_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define FWVR_MAX_PHASES 24

/* The public constants of a run: L (l_inf gradient bound), beta (l1
 * smoothness), R_c = D / 2, m vertices, n records, the target. */
struct fwvr_consts {
	double lip, beta, rc;
	size_t m, n;
	double epsilon, delta;
	bool approx;
	/* The depth rule: false (the default) the service's, 2^T <= r = b eps L
	 * / (128 max(L, B_1) ln m) (approx: 2^T <= max(r, r^2 / (2 ln(1 /
	 * delta0))), delta0 = delta / (6 n (e^eps + 1))); true the theorem's, T = floor(1/2 log2(b
	 * eps beta D / (L ln m))) (pure) or floor(2/3 log2(b eps beta D / (L ln(n / delta) ln m)))
	 * (approx). */
	bool theorem;
};

/* The right child's clamp at depth j >= 1, min(2 L, beta D 2^(1 - j)), and
 * L for the root (j = 0, whose records are clamped to [-L, L]). */
double fwvr_clamp(const struct fwvr_consts *c, unsigned j);

/* Records a run of T phases with root batch b reads: b (T + T (T + 1) / 4). */
size_t fwvr_records(unsigned t, size_t b);

/*
 * The b / T rule (algorithms/frank_wolfe/README.md): the largest T in
 * [1, t_max] with T <= T(b(T)), T(b) the depth rule of c floored,
 * b(T) = 2^T floor(n / (2^T (T + T (T + 1) / 4))) the largest root batch
 * T phases can read (all n records when the division is exact).  This is
 * where the iteration T <- T(b(T)) settles when it settles (it can cycle).
 * ERR_INVALID naming "privacy.epsilon" when not even T = 1 fits (n < 3).
 */
enum err_code fwvr_fixed_point(const struct fwvr_consts *c, unsigned t_max, unsigned *ret_t,
			       size_t *ret_b, struct err *e);

/* The pure variant's basic charge at common scale s (temperature 2^t s in
 * phase t): max over phases t and depths j of 2^(t-j) 2 Delta_j / (2^t s),
 * Delta_j = 2 B_j R_c 2^j / b. */
double fwvr_pure_epsilon(const struct fwvr_consts *c, unsigned t, size_t b, double s);

/*
 * The approx variant's accountant at temperature temp (every leaf): for
 * every phase t and depth j, advanced composition over the 2^(t-j) leaves
 * of a depth-j vertex (delta0 = delta / (6 n (e^epsilon + 1))), then
 * amplification by shuffling over the p_j sample-holding vertices of that
 * depth (privacy/shuffle.h, delta_s = delta / 2) when it applies and helps;
 * *ret_eps, *ret_delta the worst over (t, j).
 */
void fwvr_approx_epsilon(const struct fwvr_consts *c, unsigned t, size_t b, double temp,
			 double *ret_eps, double *ret_delta);

#endif /* ALGORITHMS_FRANK_WOLFE_PRIVATE_VR_H */
