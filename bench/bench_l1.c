/*
 * bench_l1.c - time per run of the l1-geometry methods (issue 12) and of
 * the Euclidean baseline, at their defaults, on dense and on sparse data.
 *
 *	bench_l1 [--n N] [--d D] [--nnz K] [--methods a,b,...] [--reps R]
 *
 * Dense (K = 0, the default; n = 1e6, d = 100): rows uniform on
 * {-1, +1}^d.  Sparse (--nnz K, e.g. --d 100000 --nnz 50): CSR rows with
 * K distinct columns (a stride walk from a random start) of value +-1.
 * Labels +-1: from a 10-sparse planted logistic model on dense rows,
 * uniformly random on sparse ones (the figure is time, not accuracy).  Each method plans at (eps,
 *delta) = (1, 1e-6) over the l1 ball of radius 1 (dp_sgd.subsampled: the l2 ball of radius 1),
 *logistic loss, and alg_run() is timed with a seeded generator (median of R runs): seconds per run,
 *steps, and the plan's work (alg_ops.work).  A benchmark, not a test: it prints and exits 0 unless
 * a run fails.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg.h"
#include "objective.h"
#include "rng.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *
must_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p == NULL) {
		fprintf(stderr, "bench_l1: out of memory\n");
		exit(1);
	}
	return p;
}

struct data {
	struct dataset ds;
	double *x, *val, *y;
	size_t *row_ptr;
	uint32_t *col;
};

static void
make_data(struct data *D, size_t n, size_t d, size_t nnz)
{
	struct rng r;
	double w[10];
	size_t wj[10];

	memset(D, 0, sizeof(*D));
	rng_splitmix_init(&r, 42);
	for (int k = 0; k < 10; k++) {
		wj[k] = (size_t)(rng_uniform(&r) * (double)d) % d;
		w[k] = (rng_uniform(&r) < 0.5 ? -1.0 : 1.0) / 10.0;
	}
	D->y = must_calloc(n, sizeof(*D->y));
	D->ds.n = n;
	D->ds.d = d;
	D->ds.y = D->y;
	if (nnz == 0) {
		D->x = must_calloc(n * d, sizeof(*D->x));
		D->ds.layout = DATA_DENSE;
		D->ds.x = D->x;
	} else {
		D->row_ptr = must_calloc(n + 1, sizeof(*D->row_ptr));
		D->col = must_calloc(n * nnz, sizeof(*D->col));
		D->val = must_calloc(n * nnz, sizeof(*D->val));
		D->ds.layout = DATA_CSR;
		D->ds.row_ptr = D->row_ptr;
		D->ds.col = D->col;
		D->ds.val = D->val;
	}
	for (size_t i = 0; i < n; i++) {
		double s = 0.0;

		if (nnz == 0) {
			double *row = D->x + i * d;

			for (size_t j = 0; j < d; j++)
				row[j] = (rng_u64(&r) & 1u) ? 1.0 : -1.0;
			for (int k = 0; k < 10; k++)
				s += w[k] * row[wj[k]];
		} else {
			/* K distinct sorted columns: a stride walk from a random start. */
			size_t step = d / nnz, start = (size_t)(rng_uniform(&r) * (double)step);

			D->row_ptr[i + 1] = D->row_ptr[i] + nnz;
			for (size_t k = 0; k < nnz; k++) {
				size_t at = i * nnz + k;

				D->col[at] = (uint32_t)(start + k * step);
				D->val[at] = (rng_u64(&r) & 1u) ? 1.0 : -1.0;
			}
		}
		D->y[i] = rng_uniform(&r) < 1.0 / (1.0 + exp(-s)) ? 1.0 : -1.0;
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
bench_one(const char *name, const struct data *D, size_t nnz, int reps)
{
	const struct alg_ops *a = alg_find(name);
	struct run_spec *spec = must_calloc(1, sizeof(*spec));
	struct run_plan *plan = must_calloc(1, sizeof(*plan));
	double *w = NULL, t[16];
	struct err e = { 0 };
	int rc = 1;

	if (a == NULL) {
		printf("%-26s (not in this build)\n", name);
		rc = 0;
		goto out;
	}
	spec->epsilon = 1.0;
	spec->delta = 1e-6;
	spec->n = D->ds.n;
	spec->mode = ACCOUNTING_BASIC;
	spec->schema.d = D->ds.d;
	spec->schema.task = TASK_BINARY;
	spec->schema.bounds.feature_linf = 1.0;
	spec->schema.bounds.feature_l2 = sqrt(nnz == 0 ? (double)D->ds.d : (double)nnz);
	spec->schema.bounds.label = NAN;
	spec->schema.bounds.label_lo = spec->schema.bounds.label_hi = NAN;
	spec->x.kind = strncmp(name, "dp_sgd.", 7) == 0 ? CONSTRAINT_L2_BALL : CONSTRAINT_L1_BALL;
	spec->x.radius = 1.0;
	alg_default_params(a, spec->params);
	if (run_spec_set_objective(spec, objective_find("logistic"), NULL, &e) != ERR_OK ||
	    alg_plan(a, spec, plan, &e) != ERR_OK) {
		printf("%-26s plan failed: %s\n", name, e.msg);
		goto out;
	}
	w = must_calloc(spec->dim, sizeof(*w));
	for (int k = 0; k < reps; k++) {
		struct rng r;
		double t0;

		rng_splitmix_init(&r, 7 + (uint64_t)k);
		t0 = now_s();
		if (alg_run(a, spec, plan, &D->ds, &r, NULL, NULL, w, &e) != ERR_OK) {
			printf("%-26s run failed: %s\n", name, e.msg);
			goto out;
		}
		t[k] = now_s() - t0;
	}
	qsort(t, (size_t)reps, sizeof(double), cmp_double);
	printf("%-26s %10.3f s/run %12lu steps %12.3g work\n", name, t[reps / 2], plan->steps,
	       a->work(spec, plan));
	rc = 0;
out:
	free(w);
	free(spec);
	free(plan);
	return rc;
}

int
main(int argc, char **argv)
{
	static char default_methods[] = "frank_wolfe.private_vr,frank_wolfe.private,"
					"mirror_descent.noisy,mirror_descent.localized,"
					"dp_sgd.subsampled";
	size_t n = 1000000, d = 100, nnz = 0;
	char *methods = default_methods;
	int reps = 3, rc = 0;
	struct data D;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--n") == 0)
			n = strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--d") == 0)
			d = strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--nnz") == 0)
			nnz = strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--methods") == 0)
			methods = argv[i + 1];
		else if (strcmp(argv[i], "--reps") == 0)
			reps = atoi(argv[i + 1]);
	}
	if (n < 2 || d < 2 || nnz > d || reps < 1 || reps > 16) {
		fprintf(stderr, "usage: bench_l1 [--n N] [--d D] [--nnz K] [--methods a,b] "
				"[--reps R (1..16)]\n");
		return 2;
	}
	make_data(&D, n, d, nnz);
	printf("# n = %zu, d = %zu, %s, (eps, delta) = (1, 1e-6), median of %d runs\n", n, d,
	       nnz == 0 ? "dense {-1,+1}" : "sparse", reps);
	for (char *tok = strtok(methods, ","); tok != NULL; tok = strtok(NULL, ","))
		rc |= bench_one(tok, &D, nnz, reps);
	free(D.x);
	free(D.val);
	free(D.y);
	free(D.row_ptr);
	free(D.col);
	return rc;
}
