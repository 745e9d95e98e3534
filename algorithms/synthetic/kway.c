/*
 * synthetic/kway.c - k-way marginal queries (kway.h).
 */
#include <stdlib.h>
#include <string.h>

#include "synthetic/kway.h"

size_t
kway_universe(const struct data_schema *schema)
{
	size_t u = 1;

	if (schema->n_categorical == 0)
		return 0;
	for (size_t l = 0; l < schema->n_categorical; l++) {
		size_t s = schema->categorical[l].size;

		if (s == 0 || u > KWAY_MAX_UNIVERSE / s)
			return SIZE_MAX;
		u *= s;
	}
	return u;
}

/* The next k-subset of [0, p) after a (lexicographic); false after the
 * last. */
static bool
next_subset(size_t *a, size_t k, size_t p)
{
	size_t i = k;

	while (i > 0 && a[i - 1] == p - k + (i - 1))
		i--;
	if (i == 0)
		return false;
	a[i - 1]++;
	for (size_t j = i; j < k; j++)
		a[j] = a[j - 1] + 1;
	return true;
}

enum err_code
kway_count(const struct data_schema *schema, size_t k, size_t *ret_subsets,
	   size_t *ret_conjunctions, struct err *e)
{
	size_t p = schema->n_categorical, a[DATA_MAX_CATEGORICAL], subsets = 0, m = 0;

	if (p == 0)
		return err_set_field(e, ERR_INVALID, "schema.categorical",
				     "the dataset has no categorical attributes: synthetic data is "
				     "over the universe of its categorical attributes");
	if (k < 1 || k > p)
		return err_set_field(e, ERR_INVALID, "params.k",
				     "'params.k' (%zu) must be in [1, %zu], the number of "
				     "categorical attributes",
				     k, p);
	for (size_t i = 0; i < k; i++)
		a[i] = i;
	do {
		size_t cells = 1;

		for (size_t i = 0; i < k; i++)
			cells *= schema->categorical[a[i]].size; /* <= |Z| <= 2^24 */
		subsets++;
		m += cells;
		if (m > KWAY_MAX_QUERIES / 2)
			return err_set_field(e, ERR_NUMERIC, "params.k",
					     "the %zu-way marginals of these attributes are more "
					     "than %zu queries",
					     k, KWAY_MAX_QUERIES);
	} while (next_subset(a, k, p));
	*ret_subsets = subsets;
	*ret_conjunctions = m;
	return ERR_OK;
}

enum err_code
kway_init(struct kway *q, const struct data_schema *schema, size_t k, struct err *e)
{
	size_t a[DATA_MAX_CATEGORICAL], s = 0;
	enum err_code rc;

	memset(q, 0, sizeof(*q));
	rc = kway_count(schema, k, &q->n_subsets, &q->n_conj, e);
	if (rc != ERR_OK)
		return rc;
	q->universe = kway_universe(schema);
	if (q->universe == SIZE_MAX)
		return err_set_field(e, ERR_NUMERIC, "schema.categorical",
				     "the universe of the categorical attributes exceeds %zu",
				     KWAY_MAX_UNIVERSE);
	q->p = schema->n_categorical;
	q->k = k;
	for (size_t l = 0; l < q->p; l++)
		q->size[l] = schema->categorical[l].size;
	q->attr = calloc(q->n_subsets * k, sizeof(*q->attr));
	q->stride = calloc(q->n_subsets * k, sizeof(*q->stride));
	q->off = calloc(q->n_subsets + 1, sizeof(*q->off));
	if (q->attr == NULL || q->stride == NULL || q->off == NULL) {
		kway_free(q);
		return err_set(e, ERR_NOMEM, "cannot allocate the query set");
	}
	for (size_t i = 0; i < k; i++)
		a[i] = i;
	do {
		size_t cells = 1;

		for (size_t i = k; i-- > 0;) {
			q->attr[s * k + i] = a[i];
			q->stride[s * k + i] = cells;
			cells *= q->size[a[i]];
		}
		q->off[s + 1] = q->off[s] + cells;
		s++;
	} while (next_subset(a, k, q->p));
	return ERR_OK;
}

void
kway_free(struct kway *q)
{
	free(q->attr);
	free(q->stride);
	free(q->off);
	q->attr = q->stride = q->off = NULL;
}

/* The next universe index's digits (odometer, last attribute fastest). */
static void
advance(const struct kway *q, size_t *digits)
{
	for (size_t l = q->p; l-- > 0;) {
		if (++digits[l] < q->size[l])
			return;
		digits[l] = 0;
	}
}

static size_t
cell_of(const struct kway *q, size_t s, const size_t *digits)
{
	const size_t *at = q->attr + s * q->k, *st = q->stride + s * q->k;
	size_t c = 0;

	for (size_t i = 0; i < q->k; i++)
		c += digits[at[i]] * st[i];
	return q->off[s] + c;
}

void
kway_marginals(const struct kway *q, const double *x, double *conj, size_t *digits)
{
	memset(conj, 0, q->n_conj * sizeof(*conj));
	memset(digits, 0, q->p * sizeof(*digits));
	for (size_t u = 0; u < q->universe; u++) {
		double w = x[u];

		if (w != 0.0)
			for (size_t s = 0; s < q->n_subsets; s++)
				conj[cell_of(q, s, digits)] += w;
		advance(q, digits);
	}
}

void
kway_counts(const struct kway *q, const uint32_t *cat, size_t n, double *counts)
{
	size_t digits[DATA_MAX_CATEGORICAL];

	memset(counts, 0, q->n_conj * sizeof(*counts));
	for (size_t i = 0; i < n; i++) {
		for (size_t l = 0; l < q->p; l++)
			digits[l] = cat[i * q->p + l];
		for (size_t s = 0; s < q->n_subsets; s++)
			counts[cell_of(q, s, digits)] += 1.0;
	}
}

void
kway_query(const struct kway *q, size_t j, size_t *ret_subset, size_t *v, double *ret_sign)
{
	size_t lo = 0, hi = q->n_subsets, c;

	*ret_sign = j < q->n_conj ? 1.0 : -1.0;
	if (j >= q->n_conj)
		j -= q->n_conj;
	/* The subset s with off[s] <= j < off[s + 1]. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (q->off[mid] <= j)
			lo = mid;
		else
			hi = mid;
	}
	*ret_subset = lo;
	c = j - q->off[lo];
	for (size_t i = 0; i < q->k; i++) {
		size_t st = q->stride[lo * q->k + i];

		v[i] = c / st;
		c %= st;
	}
}

void
kway_add_query(const struct kway *q, size_t j, double amount, double *theta, size_t *digits)
{
	size_t s, v[DATA_MAX_CATEGORICAL];
	double sign;
	const size_t *at;

	kway_query(q, j, &s, v, &sign);
	at = q->attr + s * q->k;
	amount *= sign;
	memset(digits, 0, q->p * sizeof(*digits));
	for (size_t u = 0; u < q->universe; u++) {
		bool hit = true;

		for (size_t i = 0; hit && i < q->k; i++)
			hit = digits[at[i]] == v[i];
		if (hit)
			theta[u] += amount;
		advance(q, digits);
	}
}

size_t
kway_index(const struct kway *q, const uint32_t *z)
{
	size_t u = 0;

	for (size_t l = 0; l < q->p; l++)
		u = u * q->size[l] + z[l];
	return u;
}
