/*
 * euclid_saddle_bench.h - the single-pass against multi-pass experiment
 * of the Euclidean saddle methods (bench/experiments/nseg,
 * bench/experiments/nispp; euclid_saddle_bench.c).
 */
#ifndef BENCH_EXPERIMENTS_EUCLID_SADDLE_BENCH_H
#define BENCH_EXPERIMENTS_EUCLID_SADDLE_BENCH_H

#include <stddef.h>

#define MAX_LIST 8

/* The experiment for method alg (a "variant" method with single_pass 0
 * and multi_pass 1): prog's command line (prog [--smoke] [--seeds S]
 * [--j J] [--n LIST] [--eps LIST]), the n_default sizes default_ns when
 * --n is not given.  Returns the process exit status: 0, 1 when a run
 * failed or a gap is not a number, 2 on a usage error. */
int euclid_saddle_bench(int argc, char **argv, const char *prog, const char *alg,
			const double *default_ns, size_t n_default);

#endif /* BENCH_EXPERIMENTS_EUCLID_SADDLE_BENCH_H */
