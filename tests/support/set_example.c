/*
 * set_example.c - a usable set of every kind in every dimension
 * (set_example.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "set_example.h"

static void
polytope_rows(size_t d, double *v)
{
	const size_t m = 2 * d + 2;

	memset(v, 0, m * d * sizeof(*v));
	for (size_t j = 0; j < d; j++) {
		v[j * d + j] = 1.3;
		for (size_t k = 0; k < d; k++)
			v[(d + j) * d + k] = -0.2 - (k == j ? 0.7 : 0.0);
	}
	memcpy(v + 2 * d * d, v + d, d * sizeof(*v)); /* vertex 1 again */
	for (size_t k = 0; k < d; k++)
		v[(2 * d + 1) * d + k] = 0.05; /* inside */
}

struct constraint
set_example(enum constraint_kind k, size_t d, double *storage)
{
	struct constraint c = constraint_ops_of(k)->example;

	if (k == CONSTRAINT_POLYTOPE) {
		polytope_rows(d, storage);
		if (constraint_polytope(&c, 2 * d + 2, d, storage, "constraints.x", NULL) != ERR_OK)
			abort();
	}
	return c;
}

struct constraint
set_example_nan(size_t d, double *storage)
{
	struct constraint c = set_example(CONSTRAINT_POLYTOPE, d, storage);

	storage[d] = NAN;
	return c;
}
