/*
 * zo_net.c - private zeroth-order training of the one-hidden-layer ReLU
 * network relu_net (README.md here; docs/algorithms/zeroth-order.md).
 * Synthetic data: rows a uniform in the unit ball of R^d, a planted
 * teacher of the same shape (width m, the same public output weights
 * v_k = (-1)^k, first-layer weights N(0, 4 / (d + 1)) per entry, biases
 * 0.2), labels y = h*(a) + N(0, 0.1^2) clipped to [-1, 1]; the loss
 * min(|h(a) - y|, 1).  For each method (o2nc_tree, naive) and seed: the
 * mean loss on a public evaluation set of 10^4 fresh rows at the public
 * start x_1 (objective.init_seed = 1) and at the returned point, at
 * (eps, delta) = (1, 1e-6), l2 ball of radius 10 around the origin.
 *
 *	zo_net [--smoke] [--n 100000] [--d 5] [--width 4] [--seeds 3]
 *	       [--gold-delta 0.1] [--adaptive]
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
#define MAXDIM 4096

/* The network's output m^-1/2 sum_k v_k max(0, <W_k, a> + b_k). */
static double
net_out(const double *w, const double *a, size_t d, size_t m)
{
	double h = 0.0;

	for (size_t k = 0; k < m; k++) {
		double sk = w[d * m + k];

		for (size_t j = 0; j < d; j++)
			sk += a[j] * w[j * m + k];
		h += (k % 2 == 0 ? 1.0 : -1.0) * fmax(0.0, sk);
	}
	return h / sqrt((double)m);
}

/* The teacher's weights and width. */
struct teacher {
	const double *w;
	size_t m;
};

/* The teacher's output; ctx is a struct teacher. */
static double
teacher_label(const double *a, size_t d, const void *ctx)
{
	const struct teacher *t = ctx;

	return net_out(t->w, a, d, t->m);
}

int
main(int argc, char **argv)
{
	static const char *const methods[] = { "zeroth_order.o2nc_tree", "zeroth_order.naive" };
	size_t n = 100000, d = 5, m = 4;
	int seeds = 3, adaptive = 0;
	double gd = 0.1, *x, *y, *ex, *ey, *wstar, *x1, *w;
	struct dataset ds, eval;
	struct rng r;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0) {
			n = 10000;
			seeds = 1;
		} else if (strcmp(argv[i], "--adaptive") == 0) {
			adaptive = 1;
		} else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
			n = (size_t)atof(argv[++i]);
		} else if (strcmp(argv[i], "--d") == 0 && i + 1 < argc) {
			d = (size_t)atoi(argv[++i]);
		} else if (strcmp(argv[i], "--width") == 0 && i + 1 < argc) {
			m = (size_t)atoi(argv[++i]);
		} else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
			seeds = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--gold-delta") == 0 && i + 1 < argc) {
			gd = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: zo_net [--smoke] [--n N] [--d D] [--width M] "
					"[--seeds S] [--gold-delta R] [--adaptive]\n");
			return 2;
		}
	}
	if (d < 1 || d > 64 || m < 1 || m > OBJECTIVE_MAX_WIDTH || (d + 1) * m > MAXDIM ||
	    n < 100 || seeds < 1 || !(gd > 0.0))
		return 2;
	x = malloc(n * d * sizeof(double));
	y = malloc(n * sizeof(double));
	ex = malloc(N_EVAL * d * sizeof(double));
	ey = malloc(N_EVAL * sizeof(double));
	wstar = calloc(MAXDIM, sizeof(double));
	x1 = calloc(MAXDIM, sizeof(double));
	w = calloc(MAXDIM, sizeof(double));
	if (x == NULL || y == NULL || ex == NULL || ey == NULL || wstar == NULL || x1 == NULL ||
	    w == NULL)
		return 1;
	for (size_t a = 0; a < 2; a++) {
		const struct alg_ops *alg = alg_find(methods[a]);
		struct objective_params op;
		struct run_spec s;
		struct run_plan p;
		struct err e = { 0 };
		double before, after = 0.0, teacher;

		zo_bench_spec(&s, alg, n, d, adaptive);
		s.params[alg_param_find(alg, "gold_delta") - alg->params] = gd;
		objective_params_default(&op);
		op.intercept = true;
		op.width = m;
		op.init_seed = 1;
		if (run_spec_set_objective(&s, objective_find("relu_net"), &op, &e) != ERR_OK ||
		    alg_plan(alg, &s, &p, &e) != ERR_OK) {
			fprintf(stderr, "%s: %s\n", methods[a], e.msg);
			return 1;
		}
		if (a == 0) {
			struct teacher t = { wstar, m };

			/* the planted teacher, then the data from it */
			rng_splitmix_init(&r, 7);
			rng_normal_vector(&r, wstar, d * m);
			for (size_t i = 0; i < d * m; i++)
				wstar[i] *= 2.0 / sqrt((double)(d + 1));
			for (size_t k = 0; k < m; k++)
				wstar[d * m + k] = 0.2;
			zo_bench_rows(n, d, 11, teacher_label, &t, x, y);
			zo_bench_rows(N_EVAL, d, 12, teacher_label, &t, ex, ey);
			ds = (struct dataset){ .n = n, .d = d, .x = x, .y = y };
			eval = (struct dataset){ .n = N_EVAL, .d = d, .x = ex, .y = ey };
		}
		if (!objective_start(&s.objective, x1))
			return 1;
		before = objective_mean_loss(&s.objective, &eval, x1);
		teacher = objective_mean_loss(&s.objective, &eval, wstar);
		if (a == 0)
			printf("relu_net, n = %zu, d = %zu, width %zu (dim %zu), (eps, delta) = "
			       "(1, "
			       "1e-6), gold_delta %.3g, %s step; eval loss at the teacher %.4f, at "
			       "0 %.4f\n",
			       n, d, m, s.dim, gd, adaptive ? "adaptive" : "fixed", teacher,
			       objective_mean_loss(&s.objective, &eval, w));
		after = zo_bench_mean_loss(alg, &s, &p, &ds, &eval, seeds, w);
		if (!isfinite(after) || !isfinite(before))
			return 1;
		printf("%-24s T %6.0f K %4.0f sigma %.4g  eval loss before %.4f  after %.4f (mean "
		       "of %d seeds)\n",
		       methods[a], run_plan_value(&p, "round_length"), run_plan_value(&p, "rounds"),
		       run_plan_value(&p, "noise_sigma"), before, after, seeds);
		memset(w, 0, MAXDIM * sizeof(double));
	}
	free(x);
	free(y);
	free(ex);
	free(ey);
	free(wstar);
	free(x1);
	free(w);
	return 0;
}
