/*
 * work_rate.c - the start-up benchmark of the algorithms' kernels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg.h"
#include "objective.h"
#include "work_rate.h"

/* Synthetic records: n rows of d features in the unit l2 ball, labels
 * +-1, from a fixed seed (public, reproducible, data-independent). */
#define BENCH_N    20000
#define BENCH_D    50
#define BENCH_REPS 3
/* The steps of a short run of a method with a step count but no epochs. */
#define BENCH_STEPS 20.0

static double
seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Index of a parameter in alg's schema, or -1. */
static int
param_index(const struct alg_ops *alg, const char *name)
{
	for (int k = 0; alg->params[k].name != NULL; k++)
		if (strcmp(alg->params[k].name, name) == 0)
			return k;
	return -1;
}

/* One shape: n records of ds, batch_size b (0: the algorithm's default).
 * Returns work per CPU second, best of BENCH_REPS; 0 when the algorithm
 * cannot run this shape (not an error: it is skipped). */
static double
time_shape(const struct alg_ops *alg, const struct dataset *ds, double batch, double *x,
	   struct err *e)
{
	struct run_spec spec;
	struct run_plan plan;
	struct rng *rng = NULL;
	double best = INFINITY, work;
	int k;

	memset(&spec, 0, sizeof(spec));
	spec.x.kind = CONSTRAINT_L2_BALL;
	spec.x.radius = 5.0;
	spec.epsilon = 1.0;
	spec.delta = 1e-6;
	alg_default_params(alg, spec.params);
	k = param_index(alg, "batch_size");
	if (batch > 0.0 && k >= 0)
		spec.params[k] = batch;
	/* Short runs: a tenth of an epoch (or BENCH_STEPS steps), and for a
	 * selection method one candidate and the fewest repetitions
	 * (select.random_stopping would otherwise train 20 times here); the
	 * rate is work per CPU second, which the run's length does not
	 * change. */
	if ((k = param_index(alg, "epochs")) >= 0)
		spec.params[k] = 0.1;
	else if ((k = param_index(alg, "steps")) >= 0)
		spec.params[k] = BENCH_STEPS; /* no epochs (mirror_descent.noisy) */
	/* mirror_descent.localized: its first two phases, a few steps each
	 * (each phase is one more calibration in plan()). */
	if ((k = param_index(alg, "max_phase_steps")) >= 0)
		spec.params[k] = BENCH_STEPS;
	if ((k = param_index(alg, "max_phases")) >= 0)
		spec.params[k] = 2.0;
	if ((k = param_index(alg, "grid_size")) >= 0)
		spec.params[k] = 1.0;
	if ((k = param_index(alg, "clip_grid_size")) >= 0)
		spec.params[k] = 1.0;
	if ((k = param_index(alg, "mean_repetitions")) >= 0) {
		spec.params[k] = 1.0;
		if ((k = param_index(alg, "distribution")) >= 0)
			spec.params[k] = 1.0;
	}
	spec.n = ds->n;
	spec.schema.d = ds->d;
	spec.schema.task = TASK_BINARY;
	spec.schema.bounds.feature_l2 = 1.0;
	spec.schema.bounds.feature_linf = NAN;
	spec.schema.bounds.label = NAN;
	spec.schema.bounds.label_lo = NAN;
	spec.schema.bounds.label_hi = NAN;
	if (!alg_supports_objective(alg, "logistic") ||
	    !(alg->constraints & (1u << CONSTRAINT_L2_BALL)) ||
	    run_spec_set_objective(&spec, objective_find("logistic"), NULL, NULL) != ERR_OK ||
	    alg_plan(alg, &spec, &plan, NULL) != ERR_OK)
		return 0.0;
	work = alg->work(&spec, &plan);
	rng = rng_openssl_new(e); /* the production generator: noise costs what it costs */
	if (rng == NULL)
		return -1.0;
	for (int rep = 0; rep < BENCH_REPS; rep++) {
		double t0 = seconds(CLOCK_THREAD_CPUTIME_ID), t;

		if (alg_run(alg, &spec, &plan, ds, rng, NULL, NULL, x, e) != ERR_OK) {
			rng_free(rng);
			return -1.0;
		}
		t = seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
		best = fmin(best, t);
	}
	rng_free(rng);
	/* A timer tick of nothing would make the rate infinite: 1 us floor. */
	return work / fmax(best, 1e-6);
}

enum err_code
work_rate_measure(double *ret_rate, double *ret_seconds, struct err *e)
{
	double t0 = seconds(CLOCK_MONOTONIC), rate = INFINITY;
	double *xs = malloc((size_t)BENCH_N * BENCH_D * sizeof(double));
	double *ys = malloc((size_t)BENCH_N * sizeof(double));
	double *out = calloc(BENCH_D, sizeof(double));
	struct dataset ds = { 0 };
	struct rng gen;
	enum err_code rc = ERR_OK;

	if (xs == NULL || ys == NULL || out == NULL) {
		rc = err_set(e, ERR_NOMEM, "cannot allocate the speed benchmark");
		goto out;
	}
	rng_splitmix_init(&gen, 20261125);
	for (size_t i = 0; i < BENCH_N; i++) {
		double *row = xs + i * BENCH_D, nn = 0.0;

		for (size_t j = 0; j < BENCH_D; j++) {
			row[j] = 2.0 * rng_uniform(&gen) - 1.0;
			nn += row[j] * row[j];
		}
		for (size_t j = 0; j < BENCH_D; j++)
			row[j] /= sqrt(nn) > 1.0 ? sqrt(nn) : 1.0;
		ys[i] = rng_uniform(&gen) < 0.5 ? -1.0 : 1.0;
	}
	ds.n = BENCH_N;
	ds.d = BENCH_D;
	ds.x = xs;
	ds.y = ys;
	for (size_t a = 0; a < alg_count(); a++) {
		const struct alg_ops *alg = alg_at(a);
		/* Records-heavy: the default batch over all rows.  Noise-heavy:
		 * batches of 4, i.e. a noise draw per feature every 4 records. */
		const double batches[2] = { 0.0, 4.0 };

		for (int s = 0; s < 2; s++) {
			double r = time_shape(alg, &ds, batches[s], out, e);

			if (r < 0.0) {
				rc = err_failed(e);
				goto out;
			}
			if (r > 0.0)
				rate = fmin(rate, r);
		}
	}
	if (!isfinite(rate)) {
		rc = err_set(e, ERR_INTERNAL, "no algorithm could be timed");
		goto out;
	}
	*ret_rate = rate;
	*ret_seconds = seconds(CLOCK_MONOTONIC) - t0;
out:
	free(xs);
	free(ys);
	free(out);
	return rc;
}
