/*
 * zo_relu.c - private zeroth-order training of a single ReLU neuron
 * (README.md here; docs/algorithms/zeroth-order.md).  Synthetic data: rows
 * a uniform in the unit ball of R^d, a planted w* of norm 2, labels
 * y = max(0, <w*, a>) + N(0, 0.1^2) clipped to [-1, 1]; the loss
 * relu_neuron | max(0, <w, a>) - y |.  For each method (o2nc_tree, naive)
 * and seed: the mean loss on a public evaluation set of 10^4 fresh rows at
 * the start point and at the returned point, at (eps, delta) = (1, 1e-6).
 *
 *	zo_relu [--smoke] [--n 100000] [--d 10] [--seeds 5] [--start 0.5]
 *	        [--adaptive] (step_rule adaptive instead of the fixed step)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "objective.h"
#include "rng.h"
#include "rng_gauss.h"
#include "zo_bench.h"

#define N_EVAL 10000

/* The planted neuron's output max(0, <w*, a>); ctx is w*. */
static double
relu_label(const double *a, size_t d, const void *ctx)
{
	const double *wstar = ctx;
	double m = 0.0;

	for (size_t j = 0; j < d; j++)
		m += wstar[j] * a[j];
	return fmax(0.0, m);
}

int
main(int argc, char **argv)
{
	size_t n = 100000, d = 10;
	int seeds = 5, adaptive = 0;
	double start = 0.5, wstar[64];
	static const char *const methods[] = { "zeroth_order.o2nc_tree", "zeroth_order.naive" };
	double *x, *y, *ex, *ey;
	struct dataset ds, eval;
	struct rng r;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0) {
			n = 20000;
			seeds = 2;
		} else if (strcmp(argv[i], "--adaptive") == 0) {
			adaptive = 1;
		} else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
			n = (size_t)atof(argv[++i]);
		} else if (strcmp(argv[i], "--d") == 0 && i + 1 < argc) {
			d = (size_t)atoi(argv[++i]);
		} else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
			seeds = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--start") == 0 && i + 1 < argc) {
			start = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: zo_relu [--smoke] [--n N] [--d D] [--seeds S] "
					"[--start R]\n");
			return 2;
		}
	}
	if (d < 1 || d > 64 || n < 100 || seeds < 1)
		return 2;
	rng_splitmix_init(&r, 7);
	rng_sphere(&r, wstar, d);
	for (size_t j = 0; j < d; j++)
		wstar[j] *= 2.0;
	x = malloc(n * d * sizeof(double));
	y = malloc(n * sizeof(double));
	ex = malloc(N_EVAL * d * sizeof(double));
	ey = malloc(N_EVAL * sizeof(double));
	if (x == NULL || y == NULL || ex == NULL || ey == NULL)
		return 1;
	zo_bench_rows(n, d, 11, relu_label, wstar, x, y);
	zo_bench_rows(N_EVAL, d, 12, relu_label, wstar, ex, ey);
	ds = (struct dataset){ .n = n, .d = d, .x = x, .y = y };
	eval = (struct dataset){ .n = N_EVAL, .d = d, .x = ex, .y = ey };
	for (size_t m = 0; m < 2; m++) {
		const struct alg_ops *a = alg_find(methods[m]);
		struct run_spec s;
		struct run_plan p;
		struct err e = { 0 };
		double before = 0.0, after = 0.0, x1[64], w[64];

		zo_bench_spec(&s, a, n, d, adaptive);
		s.params[alg_param_find(a, "start") - a->params] = start;
		if (run_spec_set_objective(&s, objective_find("relu_neuron"), NULL, &e) != ERR_OK ||
		    alg_plan(a, &s, &p, &e) != ERR_OK) {
			fprintf(stderr, "%s: %s\n", methods[m], e.msg);
			return 1;
		}
		for (size_t j = 0; j < d; j++)
			x1[j] = start / sqrt((double)d);
		before = objective_mean_loss(&s.objective, &eval, x1);
		if (m == 0)
			printf("relu_neuron, n = %zu, d = %zu, (eps, delta) = (1, 1e-6), start "
			       "norm "
			       "%.2f; eval loss at the planted w* %.4f\n",
			       n, d, start, objective_mean_loss(&s.objective, &eval, wstar));
		after = zo_bench_mean_loss(a, &s, &p, &ds, &eval, seeds, w);
		if (!isfinite(after))
			return 1;
		printf("%-24s T %6.0f K %4.0f  eval loss before %.4f  after %.4f (mean of %d "
		       "seeds)\n",
		       methods[m], run_plan_value(&p, "round_length"), run_plan_value(&p, "rounds"),
		       before, after, seeds);
	}
	free(x);
	free(y);
	free(ex);
	free(ey);
	return 0;
}
