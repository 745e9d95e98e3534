/*
 * euclid_saddle.c - the Euclidean saddle methods' shared test fixtures
 * (euclid_saddle.h).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "euclid_saddle.h"
#include "rng.h"

static const double NU_A[2] = { 0.3, -0.2 }, NU_B[2] = { 0.1, 0.25 };

struct prob *
make_bilinear(size_t n, uint64_t seed, bool vi)
{
	struct prob *p = calloc(1, sizeof(*p));
	struct objective_params op;
	struct err e = { 0 };
	struct rng r;
	const double c = 1.0 / sqrt(2.0);

	ck_assert_ptr_nonnull(p);
	p->s.d = 4;
	p->s.task = TASK_UNLABELED;
	p->s.n_blocks = 2;
	p->s.blocks[0] = (struct data_block){ "a", 0, 2, 1.0, NAN };
	p->s.blocks[1] = (struct data_block){ "b", 2, 2, 1.0, NAN };
	p->s.bounds = (struct bounds){ NAN, sqrt(2.0), NAN, NAN, NAN };
	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < 4; j++) {
			double nu = j < 2 ? NU_A[j] : NU_B[j - 2];

			p->x[i * 4 + j] = rng_uniform(&r) < (1.0 + nu) / 2.0 ? c : -c;
		}
	p->ds.n = n;
	p->ds.d = 4;
	p->ds.x = p->x;
	objective_params_default(&op);
	op.coupling = 0.5;
	ck_assert_msg(objective_init(&p->o, objective_find(vi ? "bilinear_vi" : "bilinear"), &op,
				     &p->s, &e) == ERR_OK,
		      "%s", e.msg);
	p->bx = (struct saddle_block){ { .kind = CONSTRAINT_L2_BALL, .radius = 1.0 }, GEOMETRY_L2 };
	p->by = p->bx;
	return p;
}

struct prob *
make_golden(void)
{
	struct prob *p = calloc(1, sizeof(*p));
	struct objective_params op;
	struct err e = { 0 };

	ck_assert_ptr_nonnull(p);
	p->s.d = 20;
	p->s.task = TASK_UNLABELED;
	p->s.n_blocks = 2;
	p->s.blocks[0] = (struct data_block){ "u", 0, 10, 1.0, NAN };
	p->s.blocks[1] = (struct data_block){ "v", 10, 10, 1.0, NAN };
	p->s.bounds = (struct bounds){ NAN, sqrt(2.0), NAN, NAN, NAN };
	objective_params_default(&op);
	ck_assert_msg(objective_init(&p->o, objective_find("matrix_game"), &op, &p->s, &e) ==
			      ERR_OK,
		      "%s", e.msg);
	ck_assert_uint_eq(p->o.dim, 20);
	p->bx = (struct saddle_block){ { .kind = CONSTRAINT_SIMPLEX, .radius = 1.0 }, GEOMETRY_L2 };
	p->by = p->bx;
	return p;
}

void
euclid_spec(const struct alg_ops *a, const struct prob *p, size_t n, int variant,
	    struct run_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->objective = p->o;
	spec->dim = p->o.dim;
	spec->schema = p->s;
	spec->n = n;
	spec->x = p->bx.set;
	if (p->o.ops->kind != OBJECTIVE_OPERATOR) {
		spec->has_y = true;
		spec->y = p->by.set;
	}
	spec->epsilon = 1.0;
	spec->delta = 1e-6;
	alg_default_params(a, spec->params);
	spec->params[0] = variant; /* "variant" is the first parameter */
	ck_assert_str_eq(a->params[0].name, "variant");
}

double
used(const struct run_plan *p, const char *name)
{
	double v = run_plan_value(p, name);

	ck_assert_msg(!isnan(v), "the plan has no '%s'", name);
	return v;
}

double
event_epsilon(const struct dp_event_tree *t, enum accounting_mode mode, double delta)
{
	struct accountant_report rep;
	struct err e = { 0 };

	ck_assert_msg(accountant_epsilon(t, mode, delta, NULL, true, &rep, &e) == ERR_OK, "%s",
		      e.msg);
	return rep.epsilon;
}

void
scale_leaf(struct dp_event_tree *t, double f)
{
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (t->node[i].type == DP_EVENT_GAUSSIAN)
			t->node[i].noise_multiplier *= f;
}

struct prob *
population(void)
{
	struct prob *pop = make_bilinear(1, 1, false);
	const double c = 1.0 / sqrt(2.0);

	for (size_t j = 0; j < 4; j++)
		pop->x[j] = c * (j < 2 ? NU_A[j] : NU_B[j - 2]);
	return pop;
}
