/*
 * kernels.c - gradient-pass throughput of objective_batch_grad() against
 * the machine's streaming-read bandwidth, measured by this program.
 *
 *	bench_kernels [scale [reps]]     (defaults: scale = 1, reps = 5)
 *
 * Dense: n = 10^6 / scale rows, d = 100.  CSR: n = 10^6 / scale rows,
 * d = 10^5, 50 non-zeros per row (distinct random columns, sorted).  Data
 * are random (rows with ||x||_2 <= 1, labels +-1), generated here.  For
 * each layout it times one logistic gradient pass over every row (w
 * random and small, so the exp() of every row is exercised), plain and
 * with the DP rounding guard (clip), best of reps, and reports rows/s,
 * GB/s of data read (values, column indices, row offsets and labels) and
 * the fraction of the bandwidth: a plain sum over the dense value array
 * (eight partial sums, single thread), with and without a software
 * prefetch STREAM_AHEAD bytes ahead, the best of both over reps: the
 * ceiling of any one-thread pass that reads every byte once.  (The
 * prefetch makes the sum read faster on some machines, Zen 3 among them:
 * by up to ~15 % there, so the plain sum alone would understate the
 * ceiling.)  scale > 1 shrinks the
 * sizes for CI smoke runs.  A benchmark, not a test: prints, exits 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg.h"
#include "kernels.h"
#include "objective.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Bytes ahead of the sum that the prefetching variant asks for (the best
 * of 512 .. 2048 on Zen 3). */
#define STREAM_AHEAD 1024

/* Sum with eight partial sums: the streaming-read ceiling; with prefetch,
 * one cache line STREAM_AHEAD bytes ahead per 64 bytes summed. */
static double
stream_sum(const double *restrict a, size_t n, int prefetch)
{
	double s[8] = { 0 };
	size_t j = 0;

	if (prefetch) {
		for (; j + 8 <= n; j += 8) {
#if defined(__GNUC__)
			__builtin_prefetch(a + j + STREAM_AHEAD / sizeof(double), 0, 0);
#endif
			for (int l = 0; l < 8; l++)
				s[l] += a[j + l];
		}
	} else {
		for (; j + 8 <= n; j += 8)
			for (int l = 0; l < 8; l++)
				s[l] += a[j + l];
	}
	for (; j < n; j++)
		s[0] += a[j];
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* GB/s of the faster of the two sums, best of reps each (interleaved, so
 * that both see the same machine). */
static double
bandwidth(const double *a, size_t n, int reps, double *ret_plain)
{
	double best[2] = { INFINITY, INFINITY }, sink = 0.0;

	for (int r = 0; r < reps; r++)
		for (int p = 0; p < 2; p++) {
			double t0 = now_s();

			sink += stream_sum(a, n, p);
			best[p] = fmin(best[p], now_s() - t0);
		}
	if (sink == 12345.678) /* keep the sum alive */
		printf("!");
	*ret_plain = (double)n * sizeof(double) / best[0] / 1e9;
	return (double)n * sizeof(double) / fmin(best[0], best[1]) / 1e9;
}

/* Best time of reps gradient passes over all rows. */
static double
time_pass(const struct objective *o, const struct dataset *ds, const double *w, double clip,
	  double *g, int reps)
{
	double best = INFINITY;

	for (int r = 0; r < reps; r++) {
		double t0;

		memset(g, 0, o->dim * sizeof(*g));
		t0 = now_s();
		objective_batch_grad(o, ds, NULL, ds->n, w, clip, g);
		best = fmin(best, now_s() - t0);
	}
	return best;
}

static void
report(const char *what, size_t n, double bytes, double secs, double bw)
{
	double gbs = bytes / secs / 1e9;

	printf("%-28s %9.3f ms  %8.2f Mrows/s  %6.2f GB/s  %5.1f %% of bandwidth\n", what,
	       secs * 1e3, (double)n / secs / 1e6, gbs, 100.0 * gbs / bw);
}

static int
build(struct objective *o, size_t d, struct err *e)
{
	struct data_schema s;
	struct objective_params p;

	memset(&s, 0, sizeof(s));
	s.d = d;
	s.task = TASK_BINARY;
	s.bounds.feature_l2 = 1.0;
	s.bounds.feature_linf = NAN;
	s.bounds.label = s.bounds.label_lo = s.bounds.label_hi = NAN;
	objective_params_default(&p);
	return objective_init(o, objective_find("logistic"), &p, &s, e) == ERR_OK ? 0 : -1;
}

int
main(int argc, char **argv)
{
	size_t scale = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	const size_t dd = 100, ds_d = 100000, nnz_row = 50;
	size_t n;
	struct objective od, os;
	struct dataset dense = { 0 }, csr = { 0 };
	struct rng r;
	struct err e = { 0 };
	double *x = NULL, *y = NULL, *val = NULL, *w = NULL, *g = NULL, bw, plain, t;
	uint32_t *col = NULL;
	size_t *row_ptr = NULL;
	int rc = 1;

	if (scale == 0 || reps <= 0) {
		fprintf(stderr, "usage: bench_kernels [scale [reps]]\n");
		return 2;
	}
	n = 1000000 / scale;
	if (build(&od, dd, &e) != 0 || build(&os, ds_d, &e) != 0) {
		fprintf(stderr, "bench_kernels: %s\n", e.msg);
		return 1;
	}
	x = malloc(n * dd * sizeof(*x));
	y = malloc(n * sizeof(*y));
	val = malloc(n * nnz_row * sizeof(*val));
	col = malloc(n * nnz_row * sizeof(*col));
	row_ptr = malloc((n + 1) * sizeof(*row_ptr));
	w = malloc(ds_d * sizeof(*w));
	g = malloc(ds_d * sizeof(*g));
	if (!x || !y || !val || !col || !row_ptr || !w || !g) {
		fprintf(stderr, "bench_kernels: out of memory\n");
		goto out;
	}

	rng_splitmix_init(&r, 42);
	for (size_t i = 0; i < n; i++) {
		double *row = x + i * dd;

		for (size_t j = 0; j < dd; j++)
			row[j] = (2.0 * rng_uniform(&r) - 1.0) * 0.1; /* ||x||_2 <= 1 */
		y[i] = rng_uniform(&r) < 0.5 ? -1.0 : 1.0;
		row_ptr[i] = i * nnz_row;
		/* 50 distinct sorted columns: one per stripe of d / 50 */
		for (size_t k = 0; k < nnz_row; k++) {
			col[i * nnz_row + k] =
				(uint32_t)(k * (ds_d / nnz_row) + rng_below(&r, ds_d / nnz_row));
			val[i * nnz_row + k] =
				(2.0 * rng_uniform(&r) - 1.0) / sqrt((double)nnz_row);
		}
	}
	row_ptr[n] = n * nnz_row;
	for (size_t j = 0; j < ds_d; j++)
		w[j] = 0.3 * (2.0 * rng_uniform(&r) - 1.0);
	dense = (struct dataset){ .n = n, .d = dd, .layout = DATA_DENSE, .x = x, .y = y };
	csr = (struct dataset){ .n = n,
				.d = ds_d,
				.layout = DATA_CSR,
				.row_ptr = row_ptr,
				.col = col,
				.val = val,
				.y = y };

	bw = bandwidth(x, n * dd, reps, &plain);
	printf("streaming read (sum of %zu doubles, 1 thread): %.2f GB/s (%.2f without prefetch)\n",
	       n * dd, bw, plain);

	t = time_pass(&od, &dense, w, INFINITY, g, reps);
	report("dense logistic pass", n, (double)n * (dd + 1) * sizeof(double), t, bw);
	t = time_pass(&od, &dense, w, 1.0, g, reps);
	report("dense logistic pass, clip", n, (double)n * (dd + 1) * sizeof(double), t, bw);
	t = time_pass(&os, &csr, w, INFINITY, g, reps);
	report("csr logistic pass", n,
	       (double)n * (nnz_row * (sizeof(double) + sizeof(uint32_t)) + sizeof(size_t) +
			    sizeof(double)),
	       t, bw);
	t = time_pass(&os, &csr, w, 1.0, g, reps);
	report("csr logistic pass, clip", n,
	       (double)n * (nnz_row * (sizeof(double) + sizeof(uint32_t)) + sizeof(size_t) +
			    sizeof(double)),
	       t, bw);
	rc = 0;
out:
	free(x);
	free(y);
	free(val);
	free(col);
	free(row_ptr);
	free(w);
	free(g);
	return rc;
}
