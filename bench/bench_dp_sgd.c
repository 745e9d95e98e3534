/*
 * bench_dp_sgd.c - throughput of one dp_sgd.one_pass run and of one
 * dp_sgd.subsampled run at its defaults, against the machine's
 * streaming-read bandwidth on the same array.
 *
 *	bench_dp_sgd [n [d]]        (defaults: n = 1000000, d = 100)
 *
 * Builds dense synthetic logistic data (rows with ||x||_2 <= 1, labels
 * +-1), plans a run at (eps, delta) = (1, 1e-6) with automatic batch and
 * step, and times alg_run() with a seeded splitmix generator: records/s
 * and GB/s of row data read.  Then it times a plain sum over the same
 * array (eight partial sums, best of three) as the bandwidth ceiling: one
 * pass of SGD reads every used row once, in permuted order, so it cannot
 * beat that figure.  A benchmark, not a test: it prints and exits 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg.h"
#include "objective.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct timing {
	double start;
	double first_step; /* time of the first progress report */
	double end;
};

static bool
on_progress(void *ctx, unsigned long done, unsigned long total)
{
	struct timing *t = ctx;

	if (done == 1)
		t->first_step = now_s();
	return true;
}

/* Sum of all n entries with eight partial sums, so the loop is bound by
 * memory, not by the floating-point add latency. */
static double
stream_sum(const double *a, size_t n)
{
	double s[8] = { 0 };
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		for (int k = 0; k < 8; k++)
			s[k] += a[i + k];
	for (; i < n; i++)
		s[0] += a[i];
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static double
used(const struct run_plan *p, const char *name)
{
	for (size_t k = 0; k < p->n_used; k++)
		if (strcmp(p->used[k].name, name) == 0)
			return p->used[k].value;
	return NAN;
}

static size_t
parse_size(const char *s, const char *what)
{
	char *end;
	double v = strtod(s, &end);

	if (*end != '\0' || !(v >= 1.0 && v <= 1e12) || floor(v) != v) {
		fprintf(stderr, "bench_dp_sgd: bad %s '%s'\n", what, s);
		exit(2);
	}
	return (size_t)v;
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? parse_size(argv[1], "n") : 1000000;
	size_t d = argc > 2 ? parse_size(argv[2], "d") : 100;
	const struct alg_ops *alg = alg_find("dp_sgd.one_pass");
	struct run_spec spec;
	struct run_plan plan;
	struct timing tm = { 0 };
	struct err e = { 0 };
	struct rng r;
	struct dataset ds;
	double *x, *y, *w, t_run = INFINITY, t_sum = INFINITY, check = 0.0, bytes, used_rows;
	size_t nd;

	if (argc > 3 || alg == NULL) {
		fprintf(stderr, "usage: bench_dp_sgd [n [d]]\n");
		return 2;
	}
	if (n > SIZE_MAX / d / sizeof(double)) {
		fprintf(stderr, "bench_dp_sgd: n * d too large\n");
		return 2;
	}
	nd = n * d;
	x = malloc(nd * sizeof(*x));
	y = malloc(n * sizeof(*y));
	w = calloc(d, sizeof(*w));
	if (x == NULL || y == NULL || w == NULL) {
		fprintf(stderr, "bench_dp_sgd: out of memory for n = %zu, d = %zu\n", n, d);
		return 1;
	}

	/* Data: uniform entries scaled to ||x||_2 <= 1, labels from a planted
	 * model; generation is not timed. */
	rng_splitmix_init(&r, 2385);
	for (size_t i = 0; i < n; i++) {
		double *row = x + i * d, z = 0.0, scale = 1.0 / sqrt((double)d);

		for (size_t j = 0; j < d; j++) {
			row[j] = (2.0 * rng_uniform(&r) - 1.0) * scale * 1.7;
			z += (j % 3 == 0 ? 2.0 : -1.0) * row[j];
		}
		y[i] = rng_uniform(&r) < 1.0 / (1.0 + exp(-z)) ? 1.0 : -1.0;
	}
	ds.n = n;
	ds.d = d;
	ds.x = x;
	ds.y = y;

	memset(&spec, 0, sizeof(spec));
	spec.x.kind = CONSTRAINT_L2_BALL;
	spec.x.radius = 5.0;
	spec.epsilon = 1.0;
	spec.delta = 1e-6;
	alg_default_params(alg, spec.params);
	spec.n = n;
	spec.schema.d = d;
	spec.schema.task = TASK_BINARY;
	spec.schema.bounds.feature_l2 = 1.0;
	spec.schema.bounds.feature_linf = NAN;
	spec.schema.bounds.label = NAN;
	if (run_spec_set_objective(&spec, objective_find("logistic"), NULL, &e) != ERR_OK) {
		fprintf(stderr, "bench_dp_sgd: objective: %s\n", e.msg);
		return 1;
	}
	if (alg_plan(alg, &spec, &plan, &e) != ERR_OK) {
		fprintf(stderr, "bench_dp_sgd: plan: %s\n", e.msg);
		return 1;
	}

	/* Best of three runs (same seed, same work). */
	for (int rep = 0; rep < 3; rep++) {
		struct timing t = { 0 };

		rng_splitmix_init(&r, 1);
		t.start = now_s();
		if (alg_run(alg, &spec, &plan, &ds, &r, on_progress, &t, w, &e) != ERR_OK) {
			fprintf(stderr, "bench_dp_sgd: run: %s\n", e.msg);
			return 1;
		}
		t.end = now_s();
		if (rep == 0 || t.end - t.start < t_run) {
			t_run = t.end - t.start;
			tm = t;
		}
	}

	for (int rep = 0; rep < 3; rep++) {
		double t0 = now_s();

		check += stream_sum(x, nd);
		t_sum = fmin(t_sum, now_s() - t0);
	}

	used_rows = (double)n - used(&plan, "unused_records");
	bytes = used_rows * (double)d * sizeof(double);
	printf("dp_sgd.one_pass: n = %zu, d = %zu, batch = %.0f, steps = %lu, sigma = %.4g\n", n, d,
	       used(&plan, "batch_size"), plan.steps, used(&plan, "noise_sigma"));
	printf("  run:    %.3f s (setup and permutation %.3f s), %.3g records/s, %.2f GB/s of "
	       "rows\n",
	       t_run, tm.first_step - tm.start, used_rows / t_run, bytes / t_run / 1e9);
	printf("  stream: %.3f s per pass over %.2f GB, %.2f GB/s (sum %.6g)\n", t_sum,
	       (double)nd * sizeof(double) / 1e9, (double)nd * sizeof(double) / t_sum / 1e9, check);
	printf("  run / stream bandwidth: %.2f\n", (bytes / t_run) / ((double)nd * 8.0 / t_sum));

	/* dp_sgd.subsampled at its defaults on the same data: records/s counts
	 * the T b gradient evaluations (rows read, in random order, several
	 * epochs). */
	alg = alg_find("dp_sgd.subsampled");
	if (alg == NULL)
		return 1;
	alg_default_params(alg, spec.params);
	if (alg_plan(alg, &spec, &plan, &e) != ERR_OK) {
		fprintf(stderr, "bench_dp_sgd: plan (subsampled): %s\n", e.msg);
		return 1;
	}
	t_run = INFINITY;
	for (int rep = 0; rep < 3; rep++) {
		double t0;

		rng_splitmix_init(&r, 1);
		t0 = now_s();
		if (alg_run(alg, &spec, &plan, &ds, &r, NULL, NULL, w, &e) != ERR_OK) {
			fprintf(stderr, "bench_dp_sgd: run (subsampled): %s\n", e.msg);
			return 1;
		}
		t_run = fmin(t_run, now_s() - t0);
	}
	used_rows = (double)plan.steps * used(&plan, "batch_size");
	bytes = used_rows * (double)d * sizeof(double);
	printf("dp_sgd.subsampled: n = %zu, d = %zu, batch = %.0f, epochs = %.3g, steps = %lu, "
	       "sigma = %.4g\n",
	       n, d, used(&plan, "batch_size"), used(&plan, "epochs"), plan.steps,
	       used(&plan, "noise_sigma"));
	printf("  run:    %.3f s, %.3g records/s, %.2f GB/s of rows; run / stream bandwidth: "
	       "%.2f\n",
	       t_run, used_rows / t_run, bytes / t_run / 1e9,
	       (bytes / t_run) / ((double)nd * 8.0 / t_sum));
	free(x);
	free(y);
	free(w);
	return 0;
}
