/*
 * synthetic/kway.h - k-way marginal queries over the finite universe of a
 * dataset's categorical attributes (docs/algorithms/smd-queries.md).
 *
 * The universe Z is the product of the p categorical attributes' domains,
 * a record z = (z_0 .. z_{p-1}) has the row-major (mixed-radix) index
 *	u(z) = sum_l z_l U_l,  U_l = prod_{l' > l} size_{l'}
 * (attribute 0 most significant), |Z| = prod_l size_l.
 *
 * The queries: for every subset S = (l_1 < .. < l_k) of k attributes, in
 * lexicographic order, and every cell v of S's domains (row-major, l_1
 * most significant), the conjunction q(z) = prod_i 1{z_{l_i} = v_i}, with
 * the index off_S + c(v) (off_S the number of cells of the subsets
 * before S); M conjunctions in all.  Then their negations: query M + j is
 * -q_j.  |Q| = 2 M.  Every query takes values in an interval of width 1
 * ([0, 1] or [-1, 0]), so its mean over n records moves by at most 1 / n
 * when one record is replaced.  (1 - q_j would give the same algorithm:
 * for a distribution x, <1 - q_j, x> - (1 - q_j(S)) = -(<q_j, x> -
 * q_j(S)).)
 *
 * Qm x is computed by marginalising x: one pass over Z, never a dense
 * |Q| x |Z| matrix.
 */
#ifndef ALGORITHMS_SYNTHETIC_KWAY_H
#define ALGORITHMS_SYNTHETIC_KWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data.h"
#include "err.h"

/* The largest universe any build accepts (the service's own limit,
 * DPOPT_MAX_UNIVERSE, is at most this), and the largest query set. */
#define KWAY_MAX_UNIVERSE ((size_t)1 << 24)
#define KWAY_MAX_QUERIES  ((size_t)1 << 22)

/* |Z| of schema's categorical attributes, or 0 when it has none; SIZE_MAX
 * when the product exceeds KWAY_MAX_UNIVERSE. */
size_t kway_universe(const struct data_schema *schema);

/* Counts of the query set: subsets C(p, k) and conjunctions M (the
 * queries are 2 M).  ERR_INVALID naming "params.k" when k is not in
 * [1, p], "schema.categorical" when there is no categorical attribute;
 * ERR_NUMERIC naming "params.k" when the query set would exceed
 * KWAY_MAX_QUERIES. */
enum err_code kway_count(const struct data_schema *schema, size_t k, size_t *ret_subsets,
			 size_t *ret_conjunctions, struct err *e);

/*
 * An enumerated query set (owned arrays, kway_free()): attr[s k + i] the
 * i-th attribute of subset s, stride[s k + i] its cell stride in the
 * subset's table, off[s] the first conjunction of subset s (off[n_subsets]
 * = M).
 */
struct kway {
	size_t p, k, universe, n_subsets, n_conj;
	size_t size[DATA_MAX_CATEGORICAL];
	size_t *attr, *stride, *off;
};

/* Build the set for schema and k (errors as kway_count, ERR_NOMEM). */
enum err_code kway_init(struct kway *q, const struct data_schema *schema, size_t k, struct err *e);
void kway_free(struct kway *q);

/* conj[j] = sum_u x[u] q_j(u) for the M conjunctions (x over Z, any
 * nonnegative weights); digits is p size_t of scratch. */
void kway_marginals(const struct kway *q, const double *x, double *conj, size_t *digits);

/* counts[j] = number of rows of cat (n x p row-major indices) with q_j = 1,
 * for the M conjunctions. */
void kway_counts(const struct kway *q, const uint32_t *cat, size_t n, double *counts);

/* The query j < 2 M as (subset, cell digits v[0 .. k-1], sign +1 / -1). */
void kway_query(const struct kway *q, size_t j, size_t *ret_subset, size_t *v, double *ret_sign);

/* theta[u] += amount * q_j(u) for every u of Z (one pass; digits as above). */
void kway_add_query(const struct kway *q, size_t j, double amount, double *theta, size_t *digits);

/* Universe index of a record (p indices). */
size_t kway_index(const struct kway *q, const uint32_t *z);

#endif /* ALGORITHMS_SYNTHETIC_KWAY_H */
