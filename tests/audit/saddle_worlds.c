/*
 * saddle_worlds.c - the worlds of the saddle methods' audits
 * (saddle_worlds.h).
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "objective.h"
#include "privacy/accountant.h"
#include "rng.h"
#include "saddle_worlds.h"

void
saddle_world_spec(struct run_spec *s, const struct alg_ops *a, size_t n, double epsilon,
		  double delta)
{
	struct objective_params p;

	memset(s, 0, sizeof(*s));
	s->x = (struct constraint){ .kind = CONSTRAINT_L2_BALL, .radius = 1.0 };
	s->y = s->x;
	s->has_y = true;
	s->epsilon = epsilon;
	s->delta = delta;
	alg_default_params(a, s->params);
	s->n = n;
	s->schema.d = 2;
	s->schema.task = TASK_UNLABELED;
	s->schema.n_blocks = 2;
	s->schema.blocks[0] = (struct data_block){ "a", 0, 1, 1.0, NAN };
	s->schema.blocks[1] = (struct data_block){ "b", 1, 1, 1.0, NAN };
	s->schema.bounds = (struct bounds){ NAN, sqrt(2.0), NAN, NAN, NAN };
	s->mode = ACCOUNTING_BASIC;
	objective_params_default(&p); /* coupling 0 */
	ck_assert_int_eq(run_spec_set_objective(s, objective_find("bilinear"), &p, NULL), ERR_OK);
}

void
saddle_world_rows(double *x, size_t n, size_t canary, int world)
{
	struct rng r;

	rng_splitmix_init(&r, 0x6a09e667f3bcc908u); /* the same rows in both worlds */
	for (size_t i = 0; i < n; i++) {
		double t = 0.7 * (2.0 * rng_uniform(&r) - 1.0);

		x[2 * i] = t;
		x[2 * i + 1] = -t;
	}
	x[2 * canary] = x[2 * canary + 1] = world == 0 ? 1.0 : -1.0;
}

void
saddle_world_data(struct saddle_world *w, size_t n)
{
	ck_assert_uint_le(n, SADDLE_WORLD_MAX_N);
	w->ds.n = n;
	w->ds.d = 2;
	w->ds.x = w->x;
}

void
saddle_world_run(const struct alg_ops *a, const struct saddle_world *w, struct rng *r, double *u)
{
	struct err e = { 0 };

	if (alg_run(a, &w->spec, &w->plan, &w->ds, r, NULL, NULL, u, &e) != ERR_OK)
		ck_abort_msg("run: %s", e.msg);
}

double
saddle_charge(const struct run_plan *p, double delta)
{
	struct accountant_report rep;
	struct err e = { 0 };

	ck_assert_msg(accountant_epsilon(&p->event, ACCOUNTING_BASIC, delta, NULL, true, &rep,
					 &e) == ERR_OK,
		      "accountant: %s", e.msg);
	return rep.epsilon;
}

const struct alg_ops *
saddle_rr(void)
{
	static const struct alg_ops *a;

	if (a == NULL) {
		a = alg_find("saddle.recursive_regularization");
		ck_assert_ptr_nonnull(a);
	}
	return a;
}

double
saddle_used(const struct run_plan *p, const char *name)
{
	double v = run_plan_value(p, name);

	if (isnan(v))
		ck_abort_msg("no used value '%s'", name);
	return v;
}
