/*
 * bench_onepass.c - dp_sgd.one_pass algorithm time against one streaming
 * pass over the same rows, in the same process, interleaved, at 1 and 2
 * threads (issue 17, "Sequential access for one-pass methods" and "Both
 * cores per run").
 *
 *	bench_onepass [n [d [reps [batch]]]]  (defaults 1000000 100 3 0 = auto)
 *
 * Dense synthetic logistic rows (||x||_2 <= 1, labels +-1) in the order the
 * service stores a loaded dataset in (rows_builder_shuffle, a seeded
 * generator standing in for the CSPRNG; not timed).  Each repetition
 * times, in this order:
 *
 *	stream1  one pass summing every row's doubles and labels (8 partial
 *	         sums: bound by memory), on the caller's thread;
 *	run1     alg_run() of dp_sgd.one_pass at (1, 1e-6), the sequential
 *	         order (algorithms/row_order.h), no executor;
 *	stream2  the same pass split in two halves over a pool of 2
 *	         (service/run_pool.h);
 *	run2     the same run with the pool of 2 as its executor;
 *	gather1  the pre-issue-17 access pattern: objective_batch_grad over a
 *	         uniformly random permutation in batches of b, no noise (the
 *	         data part of the old run, a lower bound on its time);
 *	seq1     the data part of run1 alone: row_order_batch_grad over the
 *	         same batches of a sequential order, no noise, no step;
 *	noise1   the noise part of run1 alone: its steps' noise vectors
 *	         through the same stream (struct onepass_noise, drawn ahead in
 *	         chunks), no executor, on a zero gradient.
 *
 * It prints the median and range of each over the repetitions and the
 * ratio of each run to the streaming pass of its thread count (median of
 * the per-repetition ratios), in wall time, and for the one-thread phases
 * also in process CPU time (robust to other processes taking the core).  A benchmark, not a test:
 *prints, exits 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "objective.h"
#include "row_order.h"
#include "rows.h"
#include "run_pool.h"

#define MAX_REPS 50

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the process: on a shared, oversubscribed machine the
 * wall time of a one-thread phase counts the time other processes held
 * the core; its CPU time does not (memory stalls still count). */
static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

struct stream_job {
	const double *x, *y;
	size_t n, d, parts;
	double out[8];
};

static void
stream_part(void *arg, size_t k)
{
	struct stream_job *j = arg;
	size_t a = j->n * k / j->parts, b = j->n * (k + 1) / j->parts;

	j->out[k] = stream_sum(j->x + a * j->d, (b - a) * j->d) + stream_sum(j->y + a, b - a);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
summary(const char *name, const double *v, int k, const char *unit)
{
	double s[MAX_REPS];

	memcpy(s, v, (size_t)k * sizeof(double));
	qsort(s, (size_t)k, sizeof(double), cmp_double);
	printf("  %-8s median %8.4f %s  range %.4f .. %.4f\n", name,
	       k % 2 ? s[k / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]), unit, s[0], s[k - 1]);
}

static size_t
parse_size(const char *s, const char *what, double lo, double hi)
{
	char *end;
	double v = strtod(s, &end);

	if (*end != '\0' || !(v >= lo && v <= hi) || floor(v) != v) {
		fprintf(stderr, "bench_onepass: bad %s '%s'\n", what, s);
		exit(2);
	}
	return (size_t)v;
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? parse_size(argv[1], "n", 64, 1e10) : 1000000;
	size_t d = argc > 2 ? parse_size(argv[2], "d", 1, 1e5) : 100;
	int reps = argc > 3 ? (int)parse_size(argv[3], "reps", 1, MAX_REPS) : 3;
	size_t batch = argc > 4 ? parse_size(argv[4], "batch", 0, 1e7) : 0;
	const struct alg_ops *alg = alg_find("dp_sgd.one_pass");
	double t_shuffle, c_shuffle;
	double t[7][MAX_REPS], ratio[5][MAX_REPS], c[7][MAX_REPS], cr[4][MAX_REPS], c0, check = 0.0,
											*w, *g, gb;
	struct data_schema sc = { 0 };
	struct rows_builder b = { 0 };
	struct run_spec spec;
	struct run_plan plan;
	struct run_pool pool1, pool2;
	struct dataset ds;
	struct err e = { 0 };
	struct rng r;
	size_t bsz, *perm, used_rows;
	static const char *const names[7] = { "stream1", "run1", "stream2", "run2",
					      "gather1", "seq1", "noise1" };

	if (argc > 5 || alg == NULL) {
		fprintf(stderr, "usage: bench_onepass [n [d [reps [batch]]]]\n");
		return 2;
	}
	if (n > SIZE_MAX / (d + 1) / sizeof(double)) {
		fprintf(stderr, "bench_onepass: n * d too large\n");
		return 2;
	}
	sc.d = d;
	sc.task = TASK_BINARY;
	sc.bounds.feature_l2 = 1.0;
	sc.bounds.feature_linf = NAN;
	sc.bounds.label = sc.bounds.label_lo = sc.bounds.label_hi = NAN;
	b.schema = sc;
	b.layout = DATA_DENSE;
	b.n = b.cap = n;
	b.x = malloc(n * d * sizeof(double));
	b.y = malloc(n * sizeof(double));
	perm = malloc(n * sizeof(*perm));
	w = calloc(d + 1, sizeof(*w));
	g = calloc(d + 1, sizeof(*g));
	if (b.x == NULL || b.y == NULL || perm == NULL || w == NULL || g == NULL) {
		fprintf(stderr, "bench_onepass: out of memory for n = %zu, d = %zu\n", n, d);
		return 1;
	}
	rng_splitmix_init(&r, 2385);
	for (size_t i = 0; i < n; i++) {
		double *row = b.x + i * d, z = 0.0, scale = 1.0 / sqrt((double)d);

		for (size_t j = 0; j < d; j++) {
			row[j] = (2.0 * rng_uniform(&r) - 1.0) * scale * 1.7;
			z += (j % 3 == 0 ? 2.0 : -1.0) * row[j];
		}
		b.y[i] = rng_uniform(&r) < 1.0 / (1.0 + exp(-z)) ? 1.0 : -1.0;
	}
	t_shuffle = now_s();
	c_shuffle = cpu_s();
	if (rows_builder_shuffle(&b, &r, &e) != ERR_OK) {
		fprintf(stderr, "bench_onepass: shuffle: %s\n", e.msg);
		return 1;
	}
	t_shuffle = now_s() - t_shuffle;
	c_shuffle = cpu_s() - c_shuffle;
	rows_builder_view(&b, &ds, NULL);

	memset(&spec, 0, sizeof(spec));
	spec.x.kind = CONSTRAINT_L2_BALL;
	spec.x.radius = 5.0;
	spec.epsilon = 1.0;
	spec.delta = 1e-6;
	alg_default_params(alg, spec.params);
	spec.params[0] = (double)batch;
	spec.n = n;
	spec.schema = sc;
	if (run_spec_set_objective(&spec, objective_find("logistic"), NULL, &e) != ERR_OK ||
	    alg_plan(alg, &spec, &plan, &e) != ERR_OK) {
		fprintf(stderr, "bench_onepass: plan: %s\n", e.msg);
		return 1;
	}
	bsz = (size_t)plan.used[0].value;
	for (size_t k = 0; k < plan.n_used; k++)
		if (strcmp(plan.used[k].name, "batch_size") == 0)
			bsz = (size_t)plan.used[k].value;
	used_rows = (size_t)plan.steps * bsz;
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rng_below(&r, i + 1), tmp = perm[i];

		perm[i] = perm[j];
		perm[j] = tmp;
	}

	run_pool_init(&pool1, 1);
	run_pool_init(&pool2, 2);
	for (int k = 0; k < reps; k++) {
		struct stream_job sj = { .x = ds.x, .y = ds.y, .n = n, .d = d, .parts = 2 };
		double t0;

		c0 = cpu_s();
		t0 = now_s();
		check += stream_sum(ds.x, n * d) + stream_sum(ds.y, n);
		t[0][k] = now_s() - t0;
		c[0][k] = cpu_s() - c0;

		spec.exec = NULL;
		rng_splitmix_init(&r, 1 + (uint64_t)k);
		c0 = cpu_s();
		t0 = now_s();
		if (alg_run(alg, &spec, &plan, &ds, &r, NULL, NULL, w, &e) != ERR_OK) {
			fprintf(stderr, "bench_onepass: run: %s\n", e.msg);
			return 1;
		}
		t[1][k] = now_s() - t0;
		c[1][k] = cpu_s() - c0;

		t0 = now_s();
		pool2.exec.parallel_for(pool2.exec.ctx, 2, stream_part, &sj);
		t[2][k] = now_s() - t0;
		check += sj.out[0] + sj.out[1];

		spec.exec = &pool2.exec;
		rng_splitmix_init(&r, 1 + (uint64_t)k);
		t0 = now_s();
		if (alg_run(alg, &spec, &plan, &ds, &r, NULL, NULL, w, &e) != ERR_OK) {
			fprintf(stderr, "bench_onepass: run: %s\n", e.msg);
			return 1;
		}
		t[3][k] = now_s() - t0;

		c0 = cpu_s();
		t0 = now_s();
		for (size_t p0 = 0; p0 + bsz <= used_rows; p0 += bsz) {
			memset(g, 0, d * sizeof(*g));
			objective_batch_grad(&spec.objective, &ds, perm + p0, bsz, w, 1.0, g);
			check += g[0];
		}
		t[4][k] = now_s() - t0;
		c[4][k] = cpu_s() - c0;

		{
			struct row_order o;
			double *scr =
				calloc(row_order_parts(bsz, spec.dim) * spec.dim, sizeof(*scr));

			rng_splitmix_init(&r, 77 + (uint64_t)k);
			if (scr == NULL ||
			    row_order_draw(&o, &r, n, row_order_block_len(n, d, DATA_DENSE), &e) !=
				    ERR_OK) {
				fprintf(stderr, "bench_onepass: order: %s\n", e.msg);
				return 1;
			}
			c0 = cpu_s();
			t0 = now_s();
			for (size_t p0 = 0; p0 + bsz <= used_rows; p0 += bsz) {
				memset(g, 0, d * sizeof(*g));
				row_order_batch_grad(&o, &spec.objective, &ds, p0, bsz, w, 1.0, g,
						     spec.dim, scr, NULL);
				check += g[0];
			}
			t[5][k] = now_s() - t0;
			c[5][k] = cpu_s() - c0;
			row_order_free(&o);
			free(scr);
		}
		{
			struct dgauss_params np;
			struct onepass_noise nz;
			double sigma = run_plan_value(&plan, "noise_sigma");
			int lk = -(int)run_plan_value(&plan, "lattice_step_log2");

			rng_splitmix_init(&r, 99 + (uint64_t)k);
			if (noise_dgauss_prepare_real(ldexp(sigma, lk), &np, &e) != ERR_OK ||
			    onepass_noise_init(&nz, &r, &np, lk, spec.dim, plan.steps, NULL, &e) !=
				    ERR_OK) {
				fprintf(stderr, "bench_onepass: noise: %s\n", e.msg);
				return 1;
			}
			c0 = cpu_s();
			t0 = now_s();
			for (unsigned long st = 0; st < plan.steps; st++) {
				memset(g, 0, spec.dim * sizeof(*g));
				if (onepass_noise_mean(&nz, g, bsz, &e) != ERR_OK) {
					fprintf(stderr, "bench_onepass: noise: %s\n", e.msg);
					return 1;
				}
				check += g[0];
			}
			t[6][k] = now_s() - t0;
			c[6][k] = cpu_s() - c0;
			onepass_noise_free(&nz);
		}
		ratio[4][k] = t[6][k] / t[0][k];
		cr[3][k] = c[6][k] / c[0][k];
		ratio[3][k] = t[5][k] / t[0][k];
		cr[0][k] = c[1][k] / c[0][k];
		cr[1][k] = c[4][k] / c[0][k];
		cr[2][k] = c[5][k] / c[0][k];
		ratio[0][k] = t[1][k] / t[0][k];
		ratio[1][k] = t[3][k] / t[2][k];
		ratio[2][k] = t[4][k] / t[0][k];
	}
	run_pool_clear(&pool1);
	run_pool_clear(&pool2);

	gb = (double)n * (double)(d + 1) * sizeof(double) / 1e9;
	printf("dp_sgd.one_pass: n = %zu, d = %zu (%.2f GB of rows and labels), batch = %zu, "
	       "steps = %lu, parts per batch = %zu, %d repetitions (check %.6g)\n",
	       n, d, gb, bsz, plan.steps, row_order_parts(bsz, spec.dim), reps, check);
	printf("  seal-time shuffle (once per load, not in the runs): %.3f s wall, %.3f s CPU\n",
	       t_shuffle, c_shuffle);
	for (int i = 0; i < 7; i++)
		summary(names[i], t[i], reps, "s");
	summary("run1/stream1", ratio[0], reps, "x");
	summary("run2/stream2", ratio[1], reps, "x");
	summary("gather1/stream1", ratio[2], reps, "x");
	summary("seq1/stream1", ratio[3], reps, "x");
	summary("noise1/stream1", ratio[4], reps, "x");
	printf("  CPU time of the one-thread phases:\n");
	summary("stream1", c[0], reps, "s");
	summary("run1", c[1], reps, "s");
	summary("gather1", c[4], reps, "s");
	summary("seq1", c[5], reps, "s");
	summary("noise1", c[6], reps, "s");
	summary("run1/stream1", cr[0], reps, "x");
	summary("gather1/stream1", cr[1], reps, "x");
	summary("seq1/stream1", cr[2], reps, "x");
	summary("noise1/stream1", cr[3], reps, "x");
	rows_builder_clear(&b);
	free(perm);
	free(w);
	free(g);
	return 0;
}
