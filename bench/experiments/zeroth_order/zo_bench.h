/*
 * zo_bench.h - what zo_relu and zo_net share (README.md here; zo_bench.c):
 * the synthetic rows, the run spec and the seeds' mean evaluation loss.
 */
#ifndef BENCH_EXPERIMENTS_ZEROTH_ORDER_ZO_BENCH_H
#define BENCH_EXPERIMENTS_ZEROTH_ORDER_ZO_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "alg.h"

/* x (n d doubles), y (n) <- n rows a uniform in the unit ball of R^d,
 * drawn with seed, labelled y = label(a, d, ctx) + N(0, 0.1^2) clipped to
 * [-1, 1]. */
void zo_bench_rows(size_t n, size_t d, uint64_t seed,
		   double (*label)(const double *a, size_t d, const void *ctx), const void *ctx,
		   double *x, double *y);

/* *s <- method a on n regression rows of dimension d (|x| <= 1, |y| <= 1)
 * at (1, 1e-6) on a 'basic' ledger, the l2 ball of radius 10, a's default
 * parameters with step_rule adaptive (0 or 1); the objective is not set. */
void zo_bench_spec(struct run_spec *s, const struct alg_ops *a, size_t n, size_t d, int adaptive);

/* The mean over seeds of the loss on eval at the result of the runs of
 * plan p with seeds 100, 101, ...; w (the spec's dim doubles) <- the last
 * result.  NAN, with a message on stderr, when a run fails. */
double zo_bench_mean_loss(const struct alg_ops *a, const struct run_spec *s,
			  const struct run_plan *p, const struct dataset *ds,
			  const struct dataset *eval, int seeds, double *w);

#endif /* BENCH_EXPERIMENTS_ZEROTH_ORDER_ZO_BENCH_H */
