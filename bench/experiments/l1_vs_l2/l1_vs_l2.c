/*
 * l1_vs_l2.c - the paper's point in numbers (issue 12): on a sparse
 * logistic model in high dimension, do the l1-geometry methods beat
 * Euclidean DP-SGD at equal privacy?  Run by hand; README.md beside this
 * file has the protocol and the figures.
 *
 *	l1_vs_l2 [--smoke] [--d D] [--n N[,N...]] [--seeds S] [--eval M]
 *	         [--epsilon E] [--methods a,b,...] [--params name=value,...]
 *
 * For each n and seed: a fresh model w* (10 non-zeros, ||w*||_1 = 1) and
 * n rows in {-1, +1}^d (tests/support/sparse_glm.h), one run of each
 * method at its defaults, the population excess loss F(x) - F(w*) on M
 * fresh rows (labels integrated out).  dp_sgd.subsampled gets clip sqrt(d)
 * and the l2 ball of radius ||w*||_2, and its step size and batch are
 * tuned on a separate draw (seed 0x7777) at each n over the grid below,
 * by the same excess loss; the l1 methods get no tuning.  Prints one line
 * per (n, method): mean +- standard error and median over the seeds, and
 * the mean wall time of a run (--params: values given to every method
 * but dp_sgd, for exploration; a method without such a parameter aborts); then the excess of the
 *zero model, what a method that learned nothing scores.  --smoke: d = 50, n = 500, 2 seeds (CI).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sparse_glm.h"

#define MAX_N       8
#define MAX_METHODS 8
#define MAX_SEEDS   64
#define TUNE_SEED   0x7777u

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static size_t
split_list(char *s, char **out, size_t max)
{
	size_t k = 0;

	for (char *tok = strtok(s, ","); tok != NULL && k < max; tok = strtok(NULL, ","))
		out[k++] = tok;
	return k;
}

struct opts {
	size_t d, n[MAX_N], n_n, seeds, eval;
	double epsilon, delta;
	char *methods[MAX_METHODS];
	size_t n_methods;
	struct sparse_glm_param params[MAX_METHODS];
	size_t n_params;
};

static int
run(const struct opts *o)
{
	double *w = calloc(o->d, sizeof(*w));
	char msg[256];
	int rc = 0;

	printf("# d = %zu, epsilon = %g, delta = %g, %zu seeds, %zu evaluation rows\n", o->d,
	       o->epsilon, o->delta, o->seeds, o->eval);
	printf("%-8s %-26s %12s %10s %12s %10s\n", "n", "method", "excess_mean", "s.e.", "median",
	       "run_s");
	for (size_t in = 0; in < o->n_n; in++) {
		size_t n = o->n[in];
		struct sparse_glm_param tuned[3] = { { "step_size", 0 },
						     { "batch_size", 0 },
						     { "steps", 0 } };
		double ex[MAX_METHODS][MAX_SEEDS], secs[MAX_METHODS] = { 0 }, zero = 0.0;

		for (size_t k = 0; k < o->n_methods; k++)
			if (strcmp(o->methods[k], "dp_sgd.subsampled") == 0) {
				double best = sparse_glm_tune_sgd(o->d, n, o->epsilon, o->delta,
								  o->eval, TUNE_SEED, tuned);

				printf("# n = %zu: dp_sgd.subsampled tuned step_size = %g, "
				       "batch_size = %g, steps = %g (tuning-draw excess %.5f)\n",
				       n, tuned[0].value, tuned[1].value, tuned[2].value, best);
			}
		for (size_t s = 0; s < o->seeds; s++) {
			struct sparse_glm m;

			sparse_glm_init(&m, o->d, 10, 1000 + s);
			sparse_glm_rows(&m, n, 2000 + s);
			memset(w, 0, o->d * sizeof(*w));
			zero += sparse_glm_excess(&m, w, o->eval, 4000 + s) / (double)o->seeds;
			for (size_t k = 0; k < o->n_methods; k++) {
				bool sgd = strcmp(o->methods[k], "dp_sgd.subsampled") == 0;
				double t0 = now();

				if (!sparse_glm_run(&m, o->methods[k], o->epsilon, o->delta,
						    sgd ? tuned : o->params, sgd ? 3 : o->n_params,
						    3000 + s, w, msg, sizeof(msg))) {
					fprintf(stderr, "%s\n", msg);
					rc = 1;
					ex[k][s] = NAN;
					continue;
				}
				secs[k] += now() - t0;
				ex[k][s] = sparse_glm_excess(&m, w, o->eval, 4000 + s);
			}
			sparse_glm_free(&m);
		}
		for (size_t k = 0; k < o->n_methods; k++) {
			double mean = 0.0, var = 0.0, sorted[MAX_SEEDS];

			for (size_t s = 0; s < o->seeds; s++)
				mean += ex[k][s] / (double)o->seeds;
			for (size_t s = 0; s < o->seeds; s++)
				var += (ex[k][s] - mean) * (ex[k][s] - mean);
			var /= o->seeds > 1 ? (double)(o->seeds - 1) : 1.0;
			memcpy(sorted, ex[k], o->seeds * sizeof(double));
			qsort(sorted, o->seeds, sizeof(double), cmp_double);
			printf("%-8zu %-26s %12.6f %10.6f %12.6f %10.3f\n", n, o->methods[k], mean,
			       sqrt(var / (double)o->seeds), sorted[o->seeds / 2],
			       secs[k] / (double)o->seeds);
			if (!isfinite(mean))
				rc = 1;
		}
		printf("%-8zu %-26s %12.6f %10s %12s %10s\n", n, "(the zero model)", zero, "-", "-",
		       "-");
		fflush(stdout);
	}
	free(w);
	return rc;
}

int
main(int argc, char **argv)
{
	static char default_methods[] =
		"frank_wolfe.private_vr,mirror_descent.localized,dp_sgd.subsampled";
	char *n_list = NULL, *methods = default_methods;
	struct opts o = { .d = 10000, .seeds = 10, .eval = 20000, .epsilon = 1.0, .delta = 1e-6 };

	o.n[0] = 10000;
	o.n[1] = 100000;
	o.n_n = 2;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0) {
			o.d = 50;
			o.n[0] = 500;
			o.n_n = 1;
			o.seeds = 2;
			o.eval = 2000;
		} else if (strcmp(argv[i], "--d") == 0 && i + 1 < argc) {
			o.d = strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
			n_list = argv[++i];
		} else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
			o.seeds = strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--eval") == 0 && i + 1 < argc) {
			o.eval = strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--epsilon") == 0 && i + 1 < argc) {
			o.epsilon = strtod(argv[++i], NULL);
		} else if (strcmp(argv[i], "--methods") == 0 && i + 1 < argc) {
			methods = argv[++i];
		} else if (strcmp(argv[i], "--params") == 0 && i + 1 < argc) {
			char *parts[MAX_METHODS];

			o.n_params = split_list(argv[++i], parts, MAX_METHODS);
			for (size_t k = 0; k < o.n_params; k++) {
				char *eq = strchr(parts[k], '=');

				if (eq == NULL) {
					fprintf(stderr, "l1_vs_l2: --params wants name=value\n");
					return 2;
				}
				*eq = '\0';
				o.params[k].name = parts[k];
				o.params[k].value = strtod(eq + 1, NULL);
			}
		} else {
			fprintf(stderr,
				"usage: l1_vs_l2 [--smoke] [--d D] [--n N,N] [--seeds S] "
				"[--eval M] [--epsilon E] [--methods a,b] [--params k=v,...]\n");
			return 2;
		}
	}
	if (n_list != NULL) {
		char *parts[MAX_N];

		o.n_n = split_list(n_list, parts, MAX_N);
		for (size_t k = 0; k < o.n_n; k++)
			o.n[k] = strtoul(parts[k], NULL, 10);
	}
	o.n_methods = split_list(methods, o.methods, MAX_METHODS);
	if (o.seeds < 1 || o.seeds > MAX_SEEDS || o.d < 2 || o.n_n < 1 || o.n_methods < 1) {
		fprintf(stderr, "l1_vs_l2: bad arguments\n");
		return 2;
	}
	return run(&o);
}
