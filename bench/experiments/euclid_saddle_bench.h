/*
 * euclid_saddle_bench.h - the single-pass against multi-pass experiment
 * of the Euclidean saddle methods (bench/experiments/nseg,
 * bench/experiments/nispp; euclid_saddle_bench.c), and the game, run spec,
 * gap and command-line helpers that bench/experiments/recursive_regularization
 * shares with it.
 */
#ifndef BENCH_EXPERIMENTS_EUCLID_SADDLE_BENCH_H
#define BENCH_EXPERIMENTS_EUCLID_SADDLE_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "objective.h"

#define MAX_LIST 8

/* The bilinear game (p = 4, unit l2 balls, records with entries
 * +-1/sqrt 2 of known means) at coupling coupling: n records drawn with
 * seed, or for n = 0 the population (the mean record).  x is owned (free
 * it).  -1 on failure. */
struct esb_prob {
	struct data_schema s;
	struct objective o;
	struct dataset ds;
	double *x;
	struct constraint ball;
};
int esb_prob_make(struct esb_prob *p, size_t n, uint64_t seed, double coupling);

/* spec <- the run of p (n records) at (eps, 1e-6) on a 'basic' ledger,
 * both players on the ball, with alg a's default parameters. */
void esb_spec_init(struct run_spec *spec, const struct esb_prob *p, const struct alg_ops *a,
		   size_t n, double eps);

/* Population gap of the game at coupling of R points, strong or weak. */
double esb_pop_gap(const double *us, size_t R, bool weak, double coupling);

/* The up to MAX_LIST comma-separated numbers of s into out; their count. */
size_t esb_parse_list(const char *s, double *out);

/* Process CPU seconds. */
double esb_cpu_now(void);

/* The experiment for method alg (a "variant" method with single_pass 0
 * and multi_pass 1): prog's command line (prog [--smoke] [--seeds S]
 * [--j J] [--n LIST] [--eps LIST]), the n_default sizes default_ns when
 * --n is not given.  Returns the process exit status: 0, 1 when a run
 * failed or a gap is not a number, 2 on a usage error. */
int euclid_saddle_bench(int argc, char **argv, const char *prog, const char *alg,
			const double *default_ns, size_t n_default);

#endif /* BENCH_EXPERIMENTS_EUCLID_SADDLE_BENCH_H */
