/*
 * kernels.c - gradient-pass throughput of objective_batch_grad() as a
 * ratio against the machine's streaming-read bandwidth, both measured in
 * the same run, interleaved.
 *
 *	bench_kernels [scale [reps]]     (defaults: scale = 1, reps = 5; reps >= 3)
 *
 * Dense: n = 10^6 / scale rows, d = 100.  CSR: n = 10^6 / scale rows,
 * d = 10^5 / scale but at least 2000, 50 non-zeros per row (distinct
 * random columns, sorted).  Shrinking d with n keeps the smoke run's CSR
 * passes (50 n entries, 25 n per half) on the interleaved-scratch path
 * that full-size passes take (kern_wg_worth(): entries >= 4 d).  Data
 * are random (rows with ||x||_2 <= 1, labels +-1), generated here.  A
 * repetition times, one after the other:
 *
 *	stream 1t    a plain sum over the dense value array (eight partial
 *	             sums, one thread; with and without a software prefetch
 *	             STREAM_AHEAD bytes ahead, the faster counts): the
 *	             ceiling of any one-thread pass that reads every byte once;
 *	dense, dense clip, csr, csr clip   one logistic gradient pass over
 *	             every row, 1 thread (clip: the DP rounding guard);
 *	csr access floor   the CSR pass's scattered accesses alone (per
 *	             entry: read w at its column, update g there; indices and
 *	             values streamed; csr_floor()): a bound on the CSR pass;
 *	stream 2t    the same sum, two threads on the two halves;
 *	dense 2t, csr 2t (clip)   the pass with two threads on the two row
 *	             halves, each into its own gradient, added at the end.
 *
 * Each pass's bytes (values, column indices, row offsets, labels) over its
 * time, divided by the streaming rate of the same repetition (1 thread or
 * 2), is its ratio; the program prints per row the median ratio over the
 * repetitions and its range, the median GB/s, and the load average before
 * and after (the machine may be shared: interleaving keeps the ratio
 * meaningful when the absolute rates are not).  It also names the kernel
 * path (kern_ops_best()).  scale > 1 shrinks the sizes for the CI smoke
 * run, which also checks that the two-thread gradient (row halves) equals
 * the one-thread one up to rounding (exit 1 if not).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg.h"
#include "kernels.h"
#include "objective.h"

#define STREAM_AHEAD 1024
#define MAX_REPS     64

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double
stream_sum(const double *restrict a, size_t n, int prefetch)
{
	double s[8] = { 0 };
	size_t j = 0;

	if (prefetch) {
		for (; j + 8 <= n; j += 8) {
			__builtin_prefetch(a + j + STREAM_AHEAD / sizeof(double), 0, 0);
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

/*
 * The CSR pass's scattered accesses alone: per entry, the read of w at its
 * column and the update of g there, the indices and values streamed; no
 * per-row sums, no loss, four independent partial sums.  Every CSR pass
 * does at least this (one gradient entry per non-zero, at a column with no
 * locality), so its rate bounds the pass's.
 */
static double
csr_floor(const uint32_t *restrict col, const double *restrict val, size_t nnz,
	  const double *restrict w, double *restrict g)
{
	double s[4] = { 0 };
	size_t k = 0;

	for (; k + 4 <= nnz; k += 4)
		for (size_t l = 0; l < 4; l++) {
			const size_t c = col[k + l];

			s[l] += val[k + l] * w[c];
			g[c] += 0.5 * val[k + l];
		}
	for (; k < nnz; k++) {
		s[0] += val[k] * w[col[k]];
		g[col[k]] += 0.5 * val[k];
	}
	return (s[0] + s[1]) + (s[2] + s[3]);
}

/* One unit of work for a thread: a stream sum or a gradient pass over a
 * row range [lo, hi) of ds. */
struct job {
	int stream, prefetch, floor;
	const double *a;
	size_t n;
	const struct objective *o;
	const struct dataset *ds;
	size_t lo, hi;
	const double *w;
	double clip, *g, sink;
	double cpu; /* this thread's CPU seconds for the job */
};

static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The rows [lo, hi) of ds as a dataset of their own (a view, no copy). */
static struct dataset
rows_view(const struct dataset *ds, size_t lo, size_t hi)
{
	struct dataset v = *ds;

	v.n = hi - lo;
	v.y = ds->y + lo;
	if (ds->layout == DATA_DENSE)
		v.x = ds->x + lo * ds->d;
	else
		v.row_ptr = ds->row_ptr + lo; /* offsets stay global into col, val */
	return v;
}

static void *
run_job(void *arg)
{
	struct job *j = arg;
	double c0 = cpu_s();

	if (j->stream) {
		j->sink = stream_sum(j->a, j->n, j->prefetch);
	} else if (j->floor) {
		memset(j->g, 0, j->o->dim * sizeof(*j->g));
		j->sink = csr_floor(j->ds->col, j->ds->val, j->ds->row_ptr[j->ds->n], j->w, j->g);
	} else {
		struct dataset v = rows_view(j->ds, j->lo, j->hi);

		memset(j->g, 0, j->o->dim * sizeof(*j->g));
		objective_batch_grad(j->o, &v, NULL, v.n, j->w, j->clip, j->g);
	}
	j->cpu = cpu_s() - c0;
	return NULL;
}

/* Seconds for jobs[0..nt) run on nt threads (the first on this one). */
static double
run_jobs(struct job *jobs, int nt, double *ret_cpu)
{
	pthread_t th[2];
	double t0 = now_s();

	for (int k = 1; k < nt; k++)
		if (pthread_create(&th[k], NULL, run_job, &jobs[k]) != 0) {
			fprintf(stderr, "bench_kernels: pthread_create failed\n");
			exit(1);
		}
	run_job(&jobs[0]);
	for (int k = 1; k < nt; k++)
		pthread_join(th[k], NULL);
	if (nt == 2 && !jobs[0].stream) /* the reduction of the two halves */
		for (size_t i = 0; i < jobs[0].o->dim; i++)
			jobs[0].g[i] += jobs[1].g[i];
	*ret_cpu = jobs[0].cpu;
	for (int k = 1; k < nt; k++)
		*ret_cpu = fmax(*ret_cpu, jobs[k].cpu);
	return now_s() - t0;
}

/* GB/s of a stream sum of a[0..n) over nt threads: the faster of the plain
 * and the prefetching sum. */
static double
stream_rate(const double *a, size_t n, int nt, double *ret_cpu_rate)
{
	double best = INFINITY, best_cpu = INFINITY;

	for (int p = 0; p < 2; p++) {
		struct job jobs[2];

		for (int k = 0; k < nt; k++)
			jobs[k] = (struct job){ .stream = 1,
						.prefetch = p,
						.a = a + k * (n / nt),
						.n = k + 1 < nt ? n / nt : n - k * (n / nt) };
		double cpu;

		best = fmin(best, run_jobs(jobs, nt, &cpu));
		best_cpu = fmin(best_cpu, cpu);
		if (jobs[0].sink == 12345.678) /* keep the sum alive */
			printf("!");
	}
	*ret_cpu_rate = (double)n * sizeof(double) / best_cpu / 1e9;
	return (double)n * sizeof(double) / best / 1e9;
}

/* GB/s of one gradient pass over all rows of ds on nt threads. */
static double
pass_rate(const struct objective *o, const struct dataset *ds, const double *w, double clip,
	  double *g0, double *g1, double bytes, int nt, double *ret_cpu_rate)
{
	struct job jobs[2];
	double wall, cpu;

	for (int k = 0; k < nt; k++)
		jobs[k] = (struct job){ .o = o,
					.ds = ds,
					.lo = k * (ds->n / nt),
					.hi = k + 1 < nt ? (k + 1) * (ds->n / nt) : ds->n,
					.w = w,
					.clip = clip,
					.g = k == 0 ? g0 : g1 };
	wall = run_jobs(jobs, nt, &cpu);
	*ret_cpu_rate = bytes / cpu / 1e9;
	return bytes / wall / 1e9;
}

/* GB/s of csr_floor() over every entry of ds, one thread. */
static double
floor_rate(const struct objective *o, const struct dataset *ds, const double *w, double *g,
	   double bytes, double *ret_cpu_rate)
{
	struct job j = { .floor = 1, .o = o, .ds = ds, .w = w, .g = g };
	double wall, cpu;

	wall = run_jobs(&j, 1, &cpu);
	*ret_cpu_rate = bytes / cpu / 1e9;
	return bytes / wall / 1e9;
}

/*
 * The two-thread pass (row halves, each into its own gradient, added) is
 * the one-thread pass up to the order of the additions, and so is the
 * sum of one-row batches: 0 on success, else -1 after a message.  So the
 * smoke run in CI checks the row-range use of the kernels and the CSR
 * scratch path against the plain loops, not only that the program runs.
 */
static int
check_halves(const char *what, const struct objective *o, const struct dataset *ds, const double *w,
	     double *g0, double *g1)
{
	double *ref = malloc(o->dim * sizeof(*ref)), *rows = calloc(o->dim, sizeof(*rows));
	double scale = 0.0, diff = 0.0, diff_rows = 0.0, dummy;
	int rc = -1;

	if (ref == NULL || rows == NULL)
		goto out;
	(void)pass_rate(o, ds, w, 1.0, g0, g1, 1.0, 1, &dummy);
	memcpy(ref, g0, o->dim * sizeof(*ref));
	(void)pass_rate(o, ds, w, 1.0, g0, g1, 1.0, 2, &dummy);
	/* The same sum one row at a time: batches that small take the plain
	 * loops, never the CSR pass's interleaved scratch (kern_wg_worth()),
	 * so a fault in either path shows here. */
	for (size_t i = 0; i < ds->n; i++)
		objective_batch_grad(o, ds, &i, 1, w, 1.0, rows);
	for (size_t j = 0; j < o->dim; j++) {
		scale = fmax(scale, fabs(ref[j]));
		diff = fmax(diff, fabs(ref[j] - g0[j]));
		diff_rows = fmax(diff_rows, fabs(ref[j] - rows[j]));
	}
	printf("check %s: 1 and 2 threads agree to %.1e, whole pass and row by row to %.1e "
	       "(max |g_j| %.3g)\n",
	       what, diff, diff_rows, scale);
	if (!(diff <= 1e-12 * (double)ds->n * fmax(scale, 1.0)) ||
	    !(diff_rows <= 1e-12 * (double)ds->n * fmax(scale, 1.0))) {
		fprintf(stderr,
			"bench_kernels: %s: the gradients differ by %g (2 threads), %g (rows)\n",
			what, diff, diff_rows);
		goto out;
	}
	rc = 0;
out:
	free(ref);
	free(rows);
	return rc;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void
loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");

	snprintf(buf, len, "?");
	if (f != NULL) {
		if (fgets(buf, (int)len, f) != NULL)
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
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

enum {
	R_DENSE,
	R_DENSE_CLIP,
	R_CSR,
	R_CSR_CLIP,
	R_CSR_FLOOR,
	R_DENSE2,
	R_DENSE2_CLIP,
	R_CSR2,
	R_CSR2_CLIP,
	R__N
};

static const char *const row_name[R__N] = {
	"dense logistic, 1 thread", "dense logistic clip, 1t", "csr logistic, 1 thread",
	"csr logistic clip, 1t",    "csr access floor, 1t",    "dense logistic, 2 threads",
	"dense logistic clip, 2t",  "csr logistic, 2 threads", "csr logistic clip, 2t",
};

int
main(int argc, char **argv)
{
	size_t scale = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	const size_t dd = 100, nnz_row = 50;
	size_t n, ds_d;
	struct objective od, os;
	struct dataset dense = { 0 }, csr = { 0 };
	struct rng r;
	struct err e = { 0 };
	double *x = NULL, *y = NULL, *val = NULL, *w = NULL, *g0 = NULL, *g1 = NULL;
	double ratio[R__N][MAX_REPS], ratio_cpu[R__N][MAX_REPS], gbs[R__N][MAX_REPS], s1[MAX_REPS],
		s2[MAX_REPS];
	double bytes_dense, bytes_csr;
	uint32_t *col = NULL;
	size_t *row_ptr = NULL;
	char load0[128], load1[128];
	int rc = 1;

	if (scale == 0 || reps < 3 || reps > MAX_REPS) {
		fprintf(stderr, "usage: bench_kernels [scale [reps]]  (3 <= reps <= %d)\n",
			MAX_REPS);
		return 2;
	}
	n = 1000000 / scale;
	ds_d = 100000 / scale > 2000 ? 100000 / scale : 2000;
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
	g0 = malloc(ds_d * sizeof(*g0));
	g1 = malloc(ds_d * sizeof(*g1));
	if (!x || !y || !val || !col || !row_ptr || !w || !g0 || !g1) {
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
	bytes_dense = (double)n * (dd + 1) * sizeof(double);
	bytes_csr = (double)n * (nnz_row * (sizeof(double) + sizeof(uint32_t)) + sizeof(size_t) +
				 sizeof(double));

	loadavg(load0, sizeof(load0));
	printf("bench_kernels: n = %zu, dense d = %zu, csr d = %zu with %zu non-zeros/row, "
	       "%d reps, kernel path %s\nload before: %s\n",
	       n, dd, ds_d, nnz_row, reps, kern_ops_best()->name, load0);
	fflush(stdout);
	for (int k = 0; k < reps; k++) {
		double v[R__N], vc[R__N], c1, c2;

		s1[k] = stream_rate(x, n * dd, 1, &c1);
		v[R_DENSE] =
			pass_rate(&od, &dense, w, INFINITY, g0, g1, bytes_dense, 1, &vc[R_DENSE]);
		v[R_DENSE_CLIP] =
			pass_rate(&od, &dense, w, 1.0, g0, g1, bytes_dense, 1, &vc[R_DENSE_CLIP]);
		v[R_CSR] = pass_rate(&os, &csr, w, INFINITY, g0, g1, bytes_csr, 1, &vc[R_CSR]);
		v[R_CSR_CLIP] = pass_rate(&os, &csr, w, 1.0, g0, g1, bytes_csr, 1, &vc[R_CSR_CLIP]);
		v[R_CSR_FLOOR] = floor_rate(&os, &csr, w, g0, bytes_csr, &vc[R_CSR_FLOOR]);
		s2[k] = stream_rate(x, n * dd, 2, &c2);
		v[R_DENSE2] =
			pass_rate(&od, &dense, w, INFINITY, g0, g1, bytes_dense, 2, &vc[R_DENSE2]);
		v[R_DENSE2_CLIP] =
			pass_rate(&od, &dense, w, 1.0, g0, g1, bytes_dense, 2, &vc[R_DENSE2_CLIP]);
		v[R_CSR2] = pass_rate(&os, &csr, w, INFINITY, g0, g1, bytes_csr, 2, &vc[R_CSR2]);
		v[R_CSR2_CLIP] =
			pass_rate(&os, &csr, w, 1.0, g0, g1, bytes_csr, 2, &vc[R_CSR2_CLIP]);
		for (int q = 0; q < R__N; q++) {
			gbs[q][k] = v[q];
			ratio[q][k] = v[q] / (q < R_DENSE2 ? s1[k] : s2[k]);
			ratio_cpu[q][k] = vc[q] / (q < R_DENSE2 ? c1 : c2);
		}
	}
	loadavg(load1, sizeof(load1));
	printf("ratio: GB/s over the streaming read of the same repetition (wall clock); "
	       "cpu: the same with each thread's CPU time\n(on a loaded machine the wall "
	       "clock also counts time the thread waited for a core)\n");
	printf("%-28s %8s  %6s %6s %6s  %6s %6s %6s\n", "what", "GB/s", "ratio", "min", "max",
	       "cpu", "min", "max");
	printf("%-28s %8.2f\n", "streaming read, 1 thread", median(s1, reps));
	printf("%-28s %8.2f\n", "streaming read, 2 threads", median(s2, reps));
	for (int q = 0; q < R__N; q++) {
		double lo = INFINITY, hi = -INFINITY, clo = INFINITY, chi = -INFINITY;

		for (int k = 0; k < reps; k++) {
			lo = fmin(lo, ratio[q][k]);
			hi = fmax(hi, ratio[q][k]);
			clo = fmin(clo, ratio_cpu[q][k]);
			chi = fmax(chi, ratio_cpu[q][k]);
		}
		printf("%-28s %8.2f  %6.3f %6.3f %6.3f  %6.3f %6.3f %6.3f\n", row_name[q],
		       median(gbs[q], reps), median(ratio[q], reps), lo, hi,
		       median(ratio_cpu[q], reps), clo, chi);
	}
	printf("load after: %s\n", load1);
	if (check_halves("dense", &od, &dense, w, g0, g1) != 0 ||
	    check_halves("csr", &os, &csr, w, g0, g1) != 0)
		goto out;
	rc = 0;
out:
	free(x);
	free(y);
	free(val);
	free(col);
	free(row_ptr);
	free(w);
	free(g0);
	free(g1);
	return rc;
}
