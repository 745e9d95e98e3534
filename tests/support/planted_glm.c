/*
 * planted_glm.c - synthetic rows of one planted linear model (see the
 * header).
 */
#include "planted_glm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* Box-Muller from two uniforms (the tests' fixed data stream). */
static double
std_normal(struct rng *r)
{
	double u = 1.0 - rng_uniform(r), v = rng_uniform(r);

	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

void
planted_glm(struct planted_split *tr, struct planted_split *te, size_t n_train, size_t n_test,
	    size_t d, bool regression, double w_norm, uint64_t seed)
{
	struct rng r;
	double *w = calloc(d, sizeof(*w)), nw = 0.0;

	if (w == NULL)
		abort();
	rng_splitmix_init(&r, seed);
	for (size_t j = 0; j < d; j++) {
		w[j] = std_normal(&r);
		nw += w[j] * w[j];
	}
	for (size_t j = 0; j < d; j++)
		w[j] *= w_norm / sqrt(nw);
	for (int s = 0; s < 2; s++) {
		struct planted_split *p = s == 0 ? tr : te;
		size_t n = s == 0 ? n_train : n_test;

		p->x = calloc(n * d, sizeof(double));
		p->y = calloc(n, sizeof(double));
		if (p->x == NULL || p->y == NULL) {
			fprintf(stderr, "planted_glm: out of memory\n");
			abort();
		}
		for (size_t i = 0; i < n; i++) {
			double *row = p->x + i * d, n2 = 0.0, z = 0.0;

			for (size_t j = 0; j < d; j++) {
				row[j] = std_normal(&r) / sqrt((double)d);
				n2 += row[j] * row[j];
			}
			n2 = sqrt(n2);
			for (size_t j = 0; j < d; j++) {
				if (n2 > 1.0)
					row[j] /= n2;
				z += w[j] * row[j];
			}
			p->y[i] = regression
					  ? fmax(-3.0, fmin(3.0, z + 0.5 * std_normal(&r)))
					  : (rng_uniform(&r) < 1.0 / (1.0 + exp(-z)) ? 1.0 : -1.0);
		}
		memset(&p->ds, 0, sizeof(p->ds));
		p->ds.n = n;
		p->ds.d = d;
		p->ds.x = p->x;
		p->ds.y = p->y;
	}
	free(w);
}

void
planted_split_clear(struct planted_split *p)
{
	free(p->x);
	free(p->y);
	p->x = p->y = NULL;
}
