/*
 * zo_bench.c - the helpers zo_relu and zo_net share (zo_bench.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "objective.h"
#include "rng.h"
#include "rng_gauss.h"
#include "zo_bench.h"

void
zo_bench_rows(size_t n, size_t d, uint64_t seed,
	      double (*label)(const double *a, size_t d, const void *ctx), const void *ctx,
	      double *x, double *y)
{
	struct rng r;

	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < n; i++) {
		double rad = pow(rng_uniform(&r), 1.0 / (double)d), g[2];

		rng_sphere(&r, x + i * d, d);
		for (size_t j = 0; j < d; j++)
			x[i * d + j] *= rad;
		rng_normal_vector(&r, g, 2);
		y[i] = fmax(-1.0, fmin(1.0, label(x + i * d, d, ctx) + 0.1 * g[0]));
	}
}

void
zo_bench_spec(struct run_spec *s, const struct alg_ops *a, size_t n, size_t d, int adaptive)
{
	memset(s, 0, sizeof(*s));
	s->x = (struct constraint){ .kind = CONSTRAINT_L2_BALL, .radius = 10.0 };
	s->epsilon = 1.0;
	s->delta = 1e-6;
	s->mode = ACCOUNTING_BASIC;
	alg_default_params(a, s->params);
	s->params[alg_param_find(a, "step_rule") - a->params] = adaptive;
	s->n = n;
	s->schema.d = d;
	s->schema.task = TASK_REGRESSION;
	s->schema.bounds = (struct bounds){ NAN, 1.0, 1.0, NAN, NAN };
}

double
zo_bench_mean_loss(const struct alg_ops *a, const struct run_spec *s, const struct run_plan *p,
		   const struct dataset *ds, const struct dataset *eval, int seeds, double *w)
{
	double after = 0.0;

	for (int k = 0; k < seeds; k++) {
		struct rng r;
		struct err e = { 0 };

		rng_splitmix_init(&r, 100 + (uint64_t)k);
		if (alg_run(a, s, p, ds, &r, NULL, NULL, w, &e) != ERR_OK) {
			fprintf(stderr, "%s: %s\n", a->name, e.msg);
			return NAN;
		}
		after += objective_mean_loss(&s->objective, eval, w) / seeds;
	}
	return after;
}
