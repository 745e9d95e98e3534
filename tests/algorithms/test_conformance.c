/*
 * test_conformance.c - what every registered algorithm must do, checked
 * over the whole registry (Check loop tests, _i is the registry index).
 *
 * Schema: well-formed names, docs, ranges and tables.  Runs: every
 * supported objective (on every task it accepts) times every supported
 * constraint times a dense and a CSR copy of the data (and, on the dense
 * one, the objective with an intercept and an elastic-net regularizer), on
 * small synthetic data (saddle methods: the objective's schema, blocks or
 * groups, and a y set of the same kind, or the simplex where the objective
 * needs it; no "extra" variant; log_optimal_portfolio: positive returns in
 * a declared feature range, its sets only (objective_ops.sets), no
 * "extra" variant as it takes no parameter), on
 * small synthetic data with a seeded splitmix generator:
 * plan() succeeds and is deterministic; the run succeeds, calls progress
 * once per planned step, and returns a finite feasible point; the same
 * seed gives the same bits, another seed other bits.  Failure paths: every
 * out-of-range parameter is refused naming its key, with the outputs left
 * untouched; a progress callback returning false cancels; a generator that
 * fails mid-run fails the run closed.
 *
 * Sets (tcase "sets", loop index = constraint kind): every kind has every
 * operation of its table row, and the operations agree (see the comment
 * above test_set_kind_has_every_operation).
 */
#include <check.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "constraint.h"
#include "mirror.h"
#include "objective.h"
#include "rng_gauss.h"
#include "set_example.h"

#define N_ROWS   2000
#define D_COLS   6
#define K_CLASS  3
#define MAX_DIM  ((D_COLS + 1) * K_CLASS)
#define SENTINEL 1234.5678

static const struct alg_ops *
alg_of(int i)
{
	const struct alg_ops *a = alg_at((size_t)i);

	ck_assert_ptr_nonnull(a);
	return a;
}

static bool
matches(const char *re, const char *s)
{
	regex_t r;
	bool ok;

	ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
	ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

START_TEST(test_schema_is_well_formed)
{
	const struct alg_ops *a = alg_of(_i);
	size_t np = alg_param_count(a), no = 0;

	ck_assert_msg(matches("^[a-z0-9_]+\\.[a-z0-9_]+$", a->name), "bad name '%s'", a->name);
	ck_assert_ptr_eq(alg_find(a->name), a);
	ck_assert_uint_ge(a->version, 1);
	ck_assert(a->doc != NULL && strlen(a->doc) > 20);
	ck_assert(a->paper != NULL && a->paper[0] != '\0');
	ck_assert(a->privacy_model != NULL && a->privacy_model[0] != '\0');
	ck_assert(a->state_size > 0);
	ck_assert(a->plan && a->work && a->init && a->step && a->result && a->fini);
	/* A synthetic-data method takes no objective and no sets. */
	ck_assert(a->synthetic ? a->constraints == 0 && !a->saddle && !a->vi : a->constraints != 0);
	ck_assert_uint_eq(a->constraints & ~((1u << CONSTRAINT__COUNT) - 1), 0);
	for (const char *const *o = a->objectives; *o != NULL; o++, no++) {
		ck_assert_msg(objective_find(*o) != NULL, "%s: unknown objective '%s'", a->name,
			      *o);
		ck_assert(alg_supports_objective(a, *o));
	}
	ck_assert(a->synthetic ? no == 0 : no > 0);
	ck_assert(!alg_supports_objective(a, "no_such_objective"));

	ck_assert_uint_le(np, ALG_MAX_PARAMS);
	for (size_t k = 0; k < np; k++) {
		const struct alg_param *p = &a->params[k];

		ck_assert_msg(matches("^[a-z][a-z0-9_]*$", p->name), "bad param name '%s'",
			      p->name);
		ck_assert_msg(p->doc != NULL && strlen(p->doc) > 5, "%s: no doc", p->name);
		ck_assert_msg(p->min <= p->def && p->def <= p->max, "%s: min <= def <= max",
			      p->name);
		ck_assert(isfinite(p->min) && isfinite(p->max));
		if (p->type == ALG_PARAM_INT)
			ck_assert(floor(p->min) == p->min && floor(p->max) == p->max &&
				  floor(p->def) == p->def);
		if (p->type == ALG_PARAM_BOOL)
			ck_assert(p->min == 0.0 && p->max == 1.0);
		for (size_t q = 0; q < k; q++)
			ck_assert_msg(strcmp(a->params[q].name, p->name) != 0, "duplicate param %s",
				      p->name);
	}
	/* Names are unique across the registry. */
	for (size_t j = 0; j < alg_count(); j++)
		if ((int)j != _i)
			ck_assert_str_ne(alg_at(j)->name, a->name);
}
END_TEST

/* ---- fixtures ---- */

/* Variants of one objective x task x set. */
enum variant {
	V_DENSE, /* dense rows, default parameters */
	V_CSR,   /* the same rows as CSR */
	V_EXTRA, /* dense, intercept + ridge + l1 */
	V__COUNT
};

struct fixture {
	struct run_spec spec;
	struct dataset ds;
	double x[N_ROWS * D_COLS];
	double y[N_ROWS];
	size_t row_ptr[N_ROWS + 1];
	uint32_t col[N_ROWS * D_COLS];
	double val[N_ROWS * D_COLS];
	uint32_t group[N_ROWS];
	uint32_t cat[N_ROWS * 3];
	size_t dim;
	double poly[SET_EXAMPLE_STORAGE(MAX_DIM)]; /* a polytope's vertices (set_example.h) */
};

/* A synthetic-data method's universe: three categorical attributes. */
static const size_t cat_sizes[3] = { 2, 2, 5 };

static struct constraint canonical_set(enum constraint_kind k);

/* Saddle and operator objectives read the schema's blocks (or groups). */
static bool
is_saddle(const struct objective_ops *o)
{
	return o->kind == OBJECTIVE_SADDLE || o->kind == OBJECTIVE_OPERATOR;
}

/* A saddle objective's schema: bilinear and matrix_game (rank one) read
 * blocks a = columns 0..2 and b = 3..5 (rows have ||x|| <= 1, so each block
 * too); quadratic_game A = 0..1 (2 x 1), p = 2..3, r = 4; worst_group a
 * group column of 3 groups with public proportions; fair_logistic_lagrangian
 * one of 2 and y the box [0, 2]; auc_minimax the class prior; affine_vi a
 * public monotone 6 x 6 matrix. */
static void
saddle_schema(struct fixture *f, const struct objective_ops *o, enum constraint_kind k,
	      struct objective_params *p)
{
	static const double prop[3] = { 0.3, 0.3, 0.4 };

	/* An operator objective (bilinear_vi) has one set: no y. */
	f->spec.has_y = o->kind == OBJECTIVE_SADDLE;
	if (strcmp(o->name, "bilinear") == 0 || strcmp(o->name, "bilinear_vi") == 0 ||
	    strcmp(o->name, "matrix_game") == 0) {
		f->spec.schema.n_blocks = 2;
		f->spec.schema.blocks[0] = (struct data_block){ "a", 0, 3, 1.0, NAN };
		f->spec.schema.blocks[1] = (struct data_block){ "b", 3, 3, 1.0, NAN };
		f->ds.y = NULL;
		if (strcmp(o->name, "matrix_game") != 0)
			p->coupling = 0.5;
		if (f->spec.has_y)
			f->spec.y =
				canonical_set(k == CONSTRAINT_POLYTOPE ? CONSTRAINT_SIMPLEX : k);
		return;
	}
	if (strcmp(o->name, "affine_vi") == 0) {
		/* A = 0.5 I + 0.3 (a skew rotation of pairs): monotone, not skew. */
		f->ds.y = NULL;
		p->matrix_dim = D_COLS;
		for (size_t j = 0; j < D_COLS; j++) {
			p->matrix[j * D_COLS + j] = 0.5;
			if (j % 2 == 0) {
				p->matrix[j * D_COLS + j + 1] = 0.3;
				p->matrix[(j + 1) * D_COLS + j] = -0.3;
			}
		}
		return;
	}
	if (strcmp(o->name, "auc_minimax") == 0) {
		/* binary rows; alpha over the method's set kind in one coordinate */
		p->n_class_prior = 2;
		p->class_prior[0] = 0.45;
		p->class_prior[1] = 0.55;
		f->spec.y = canonical_set(k == CONSTRAINT_SIMPLEX ? CONSTRAINT_BOX : k);
		return;
	}
	if (strcmp(o->name, "fair_logistic_lagrangian") == 0) {
		/* the sensitive attribute: a group column of 2; the multipliers'
		 * box [0, 2] */
		for (size_t i = 0; i < N_ROWS; i++)
			f->group[i] = (uint32_t)(i % 3 == 0);
		f->ds.group = f->group;
		f->ds.n_groups = f->spec.schema.n_groups = 2;
		p->n_group_proportions = 2;
		p->group_proportions[0] = 0.65;
		p->group_proportions[1] = 0.35;
		p->parity_tolerance = 0.05;
		f->spec.y = (struct constraint){ .kind = CONSTRAINT_BOX, .lo = 0.0, .hi = 2.0 };
		return;
	}
	if (strcmp(o->name, "quadratic_game") == 0) {
		f->spec.schema.n_blocks = 3;
		f->spec.schema.blocks[0] = (struct data_block){ "A", 0, 2, 1.0, NAN };
		f->spec.schema.blocks[1] = (struct data_block){ "p", 2, 2, 1.0, NAN };
		f->spec.schema.blocks[2] = (struct data_block){ "r", 4, 1, 1.0, NAN };
		f->ds.y = NULL;
		f->spec.y = canonical_set(k == CONSTRAINT_POLYTOPE ? CONSTRAINT_SIMPLEX : k);
		return;
	}
	for (size_t i = 0; i < N_ROWS; i++)
		f->group[i] = (uint32_t)(i % 3);
	f->ds.group = f->group;
	f->ds.n_groups = f->spec.schema.n_groups = 3;
	p->n_group_proportions = 3;
	memcpy(p->group_proportions, prop, sizeof(prop));
	f->spec.y = canonical_set(CONSTRAINT_SIMPLEX);
}

/* An objective of the returns' range (log_optimal_portfolio): rows with
 * every cell in [RANGE_LO, RANGE_HI] (no zeros: the CSR copy stores every
 * cell), declared as bounds.feature_range, and no labels. */
#define RANGE_LO 0.6
#define RANGE_HI 1.5

static bool
needs_range(const struct objective_ops *o)
{
	return strcmp(o->name, "log_optimal_portfolio") == 0;
}

static void
make_range_data(struct fixture *f, uint64_t seed)
{
	struct rng r;
	size_t nnz = 0;

	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < N_ROWS; i++) {
		f->row_ptr[i] = nnz;
		for (size_t j = 0; j < D_COLS; j++) {
			double v = RANGE_LO + (RANGE_HI - RANGE_LO) * rng_uniform(&r);

			/* asset j drifts by (j - 2.5) / 50 */
			v = fmin(RANGE_HI, v + ((double)j - 2.5) / 50.0);
			f->x[i * D_COLS + j] = v;
			f->col[nnz] = (uint32_t)j;
			f->val[nnz++] = v;
		}
	}
	f->row_ptr[N_ROWS] = nnz;
	f->ds.y = NULL;
	f->spec.schema.feature_lo = RANGE_LO;
	f->spec.schema.feature_hi = RANGE_HI;
	f->spec.schema.bounds.feature_l2 = NAN;
	f->spec.schema.bounds.feature_linf = RANGE_HI;
}

/* Rows with ||x||_2 <= 1, about a third of the entries zero, and labels
 * of the task from a planted model. */
static void
make_data(struct fixture *f, enum task task, uint64_t seed)
{
	struct rng r;
	const double w[D_COLS] = { 0.9, -1.3, 0.4, 2.1, -0.2, 0.7 };
	size_t nnz = 0;

	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < N_ROWS; i++) {
		double *row = f->x + i * D_COLS, n2 = 0.0, z = 0.0;

		for (size_t j = 0; j < D_COLS; j++) {
			row[j] = rng_uniform(&r) < 0.33 ? 0.0 : 2.0 * rng_uniform(&r) - 1.0;
			n2 += row[j] * row[j];
		}
		n2 = sqrt(n2);
		for (size_t j = 0; j < D_COLS; j++) {
			if (n2 > 1.0)
				row[j] /= n2;
			z += w[j] * row[j];
		}
		if (task == TASK_BINARY)
			f->y[i] = rng_uniform(&r) < 1.0 / (1.0 + exp(-z)) ? 1.0 : -1.0;
		else if (task == TASK_MULTICLASS)
			f->y[i] = z < -0.5 ? 0.0 : z < 0.5 ? 1.0 : 2.0;
		else
			f->y[i] = fmax(-2.0, fmin(2.0, z + 0.3 * (2.0 * rng_uniform(&r) - 1.0)));
		f->row_ptr[i] = nnz;
		for (size_t j = 0; j < D_COLS; j++) {
			if (row[j] == 0.0)
				continue;
			f->col[nnz] = (uint32_t)j;
			f->val[nnz++] = row[j];
		}
	}
	f->row_ptr[N_ROWS] = nnz;
	f->ds.n = N_ROWS;
	f->ds.d = D_COLS;
	f->ds.x = f->x;
	f->ds.y = f->y;
	f->ds.n_classes = task == TASK_MULTICLASS ? K_CLASS : 0;
}

/* Small sets: the planted model (norm 2.8) lies outside, so the
 * constraint binds and an unprojected iterate would show. */
static struct constraint
canonical_set(enum constraint_kind k)
{
	struct constraint c = { .kind = k, .radius = 0.3, .lo = -0.1, .hi = 0.1, .p = 1.5 };

	if (k == CONSTRAINT_SIMPLEX)
		c.radius = 1.0;
	return c;
}

/*
 * The interface, not the defaults' length, is under test here: a method
 * whose default schedule is long on these rows (dp_sgd.subsampled's 300
 * whole-data steps; select.random_stopping's 20 trainings of them) runs 20
 * steps (mirror_descent.localized: 2 phases of at most 20 steps) and, for
 * a selection, the fewest repetitions (Poisson(1)), and
 * saddle.smd_bias_reduced a stopping budget U = 16 (its default U is below
 * the 4 Theorem 4.3 needs at n = 2000, refused as too small), which
 * keeps the 75 combinations of each method within the CPU budget
 * (tests/README.md).  frank_wolfe.private_vr runs 3 phases (14 selections):
 * its default on these rows is one phase, two confident selections, which
 * two seeds can make alike ("the seed does not matter" would fail by luck).
 * The default rules have their own tests
 * (test_dp_sgd_subsampled.c, test_select_random_stopping.c).
 */
static void
cheap_params(const struct alg_ops *a, double *params)
{
	for (size_t k = 0; a->params != NULL && a->params[k].name != NULL; k++) {
		if (strcmp(a->params[k].name, "steps") == 0)
			params[k] = 20.0;
		else if (strcmp(a->params[k].name, "mean_repetitions") == 0)
			params[k] = 1.0;
		else if (strcmp(a->params[k].name, "distribution") == 0)
			params[k] = 1.0;
		else if (strcmp(a->params[k].name, "phases") == 0)
			params[k] = 3.0;
		else if (strcmp(a->params[k].name, "max_phase_steps") == 0)
			params[k] = 20.0;
		else if (strcmp(a->params[k].name, "max_phases") == 0)
			params[k] = 2.0;
		else if (strcmp(a->params[k].name, "stop_budget") == 0)
			params[k] = 16.0;
	}
}

static struct fixture *
fixture_new(const struct alg_ops *a, const struct objective_ops *o, enum task task,
	    enum constraint_kind k, enum variant v)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct objective_params p;
	struct err e = { 0 };

	ck_assert_ptr_nonnull(f);
	make_data(f, task, 0x2385 + (uint64_t)task);
	if (v == V_CSR) {
		f->ds.layout = DATA_CSR;
		f->ds.x = NULL;
		f->ds.row_ptr = f->row_ptr;
		f->ds.col = f->col;
		f->ds.val = f->val;
	}
	f->spec.x = canonical_set(k);
	f->spec.epsilon = 1.0;
	f->spec.delta = 1e-6;
	alg_default_params(a, f->spec.params);
	cheap_params(a, f->spec.params);
	f->spec.n = N_ROWS;
	f->spec.schema.d = D_COLS;
	f->spec.schema.task = task;
	f->spec.schema.n_classes = task == TASK_MULTICLASS ? K_CLASS : 0;
	f->spec.schema.bounds.feature_l2 = 1.0;
	f->spec.schema.bounds.feature_linf = NAN;
	f->spec.schema.bounds.label = task == TASK_REGRESSION ? 2.0 : NAN;
	f->spec.schema.bounds.label_lo = f->spec.schema.bounds.label_hi = NAN;
	objective_params_default(&p);
	if (needs_range(o))
		make_range_data(f, 0x9e7 + (uint64_t)task);
	if (is_saddle(o))
		saddle_schema(f, o, k, &p);
	if (o->params & (1u << OBJ_P_WIDTH))
		p.width = 2; /* relu_net: its required hidden width, small */
	if (v == V_EXTRA) {
		/* What the objective accepts (value-only objectives take no
		 * regularizer; sphere_distance takes nothing). */
		p.intercept = (o->params & (1u << OBJ_P_INTERCEPT)) != 0;
		p.ridge = (o->params & (1u << OBJ_P_RIDGE)) ? 0.05 : 0.0;
		p.l1 = (o->params & (1u << OBJ_P_L1)) ? 0.01 : 0.0;
	}
	ck_assert_msg(run_spec_set_objective(&f->spec, o, &p, &e) == ERR_OK, "%s: %s", o->name,
		      e.msg);
	f->dim = f->spec.dim;
	ck_assert_uint_le(f->dim, MAX_DIM);
	if (k == CONSTRAINT_POLYTOPE) {
		/* set_example.h's skewed cross-polytope of x's dimension, scaled
		 * to the small sets' size (so it binds, like them); y keeps a
		 * simplex (the methods take a polytope for x only) */
		size_t dx = is_saddle(o) && f->spec.has_y ? f->spec.objective.dim_x : f->dim;

		set_example(k, dx, f->poly);
		for (size_t j = 0; j < (2 * dx + 2) * dx; j++)
			f->poly[j] *= 0.25;
		ck_assert_int_eq(constraint_polytope(&f->spec.x, 2 * dx + 2, dx, f->poly,
						     "constraints.x", &e),
				 ERR_OK);
	}
	return f;
}

/* A synthetic-data method's fixture (alg_ops.synthetic): no objective,
 * no sets, N_ROWS rows of three categorical attributes (universe 20),
 * skewed towards low indices. */
static struct fixture *
synthetic_fixture_new(const struct alg_ops *a)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rng r;

	ck_assert_ptr_nonnull(f);
	rng_splitmix_init(&r, 0x5e7);
	for (size_t i = 0; i < N_ROWS; i++)
		for (size_t l = 0; l < 3; l++)
			f->cat[i * 3 + l] = (uint32_t)(rng_below(&r, cat_sizes[l]) *
						       (rng_uniform(&r) < 0.5 ? 0 : 1));
	f->ds.n = N_ROWS;
	f->ds.cat = f->cat;
	f->ds.n_categorical = 3;
	f->spec.epsilon = 1.0;
	f->spec.delta = 1e-6;
	alg_default_params(a, f->spec.params);
	cheap_params(a, f->spec.params);
	f->spec.n = N_ROWS;
	f->spec.schema.task = TASK_UNLABELED;
	f->spec.schema.n_categorical = 3;
	f->spec.dim = 1;
	for (size_t l = 0; l < 3; l++) {
		snprintf(f->spec.schema.categorical[l].name, DATA_MAX_NAME, "c%zu", l);
		f->spec.schema.categorical[l].size = cat_sizes[l];
		f->spec.dim *= cat_sizes[l];
	}
	f->spec.schema.bounds = (struct bounds){ NAN, NAN, NAN, NAN, NAN };
	f->dim = f->spec.dim;
	ck_assert_uint_le(f->dim, MAX_DIM);
	return f;
}

/* Calls fn on a fixture for every supported objective x task x set. */
typedef void (*combo_fn)(const struct alg_ops *a, struct fixture *f, const char *what);

static void
for_each_combo(const struct alg_ops *a, combo_fn fn)
{
	int done = 0;

	if (a->synthetic) {
		struct fixture *f = synthetic_fixture_new(a);
		char what[160];

		snprintf(what, sizeof(what), "%s/categorical", a->name);
		fn(a, f, what);
		free(f);
		return;
	}

	for (const char *const *on = a->objectives; *on != NULL; on++) {
		const struct objective_ops *o = objective_find(*on);

		for (int t = 0; t < TASK__COUNT; t++) {
			if (!(o->tasks & (1u << t)))
				continue;
			for (int k = 0; k < CONSTRAINT__COUNT; k++) {
				/* the method's sets that the objective takes */
				if (!(a->constraints & (1u << k)) ||
				    (o->sets != 0 && !(o->sets & (1u << k))))
					continue;
				/* "extra": only with an intercept and regularizers */
				for (int v = 0;
				     v < (is_saddle(o)                            ? V_EXTRA
					  : (o->params & (1u << OBJ_P_INTERCEPT)) ? V__COUNT
										  : V_EXTRA);
				     v++) {
					static const char *const vn[V__COUNT] = { "dense", "csr",
										  "extra" };
					static const char *const tn[TASK__COUNT] = {
						"binary", "regression", "multiclass", "unlabeled"
					};
					struct fixture *f;
					char what[160];

					/* A polytope on dense rows only: what is the
					 * set's own (the vertex helpers, frank_wolfe/lmo.c)
					 * does not depend on the rows' layout or the
					 * objective's extras, which the other kinds cover;
					 * all three variants cost 18.7 s of CPU (124.2 s
					 * against 105.5 s without, under load 5). */
					if (k == CONSTRAINT_POLYTOPE && v != V_DENSE)
						continue;
					snprintf(what, sizeof(what), "%s/%s/%s/%s/%s", a->name,
						 o->name, tn[t],
						 constraint_kind_name((enum constraint_kind)k),
						 vn[v]);
					f = fixture_new(a, o, (enum task)t, (enum constraint_kind)k,
							(enum variant)v);
					fn(a, f, what);
					free(f);
					done++;
				}
			}
		}
	}
	ck_assert_int_gt(done, 0);
}

static void
assert_plans_equal(const struct run_plan *p, const struct run_plan *q, const char *what)
{
	ck_assert_msg(p->steps == q->steps, "%s: steps differ", what);
	ck_assert_msg(dp_event_equal(&p->event, &q->event), "%s: events differ", what);
	ck_assert(memcmp(&p->charge_epsilon, &q->charge_epsilon, sizeof(double)) == 0);
	ck_assert(memcmp(&p->charge_delta, &q->charge_delta, sizeof(double)) == 0);
	ck_assert(p->n_used == q->n_used);
	ck_assert_msg(p->accountant == q->accountant, "%s: accountants differ", what);
	for (size_t k = 0; k < ALG_MAX_USED; k++) {
		ck_assert(p->used[k].name == q->used[k].name);
		ck_assert(memcmp(&p->used[k].value, &q->used[k].value, sizeof(double)) == 0);
	}
}

static bool
is_feasible_set(const struct constraint *c, const double *x, size_t d)
{
	double s = 0.0;

	switch (c->kind) {
	case CONSTRAINT_L2_BALL:
		for (size_t j = 0; j < d; j++)
			s += x[j] * x[j];
		return sqrt(s) <= c->radius * (1.0 + 1e-12);
	case CONSTRAINT_L1_BALL:
		for (size_t j = 0; j < d; j++)
			s += fabs(x[j]);
		return s <= c->radius * (1.0 + 1e-12);
	case CONSTRAINT_SIMPLEX:
		for (size_t j = 0; j < d; j++) {
			if (x[j] < 0.0)
				return false;
			s += x[j];
		}
		return fabs(s - c->radius) <= 1e-12 * c->radius;
	case CONSTRAINT_BOX:
		for (size_t j = 0; j < d; j++)
			if (x[j] < c->lo || x[j] > c->hi)
				return false;
		return true;
	case CONSTRAINT_LP_BALL:
		for (size_t j = 0; j < d; j++)
			s += pow(fabs(x[j]), c->p);
		return pow(s, 1.0 / c->p) <= c->radius * (1.0 + 1e-12);
	case CONSTRAINT_POLYTOPE: {
		double scratch[(MAX_DIM + 3) * (MAX_DIM + 3) + 6 * (MAX_DIM + 3)];

		ck_assert_uint_le(constraint_project_scratch(c, d),
				  sizeof(scratch) / sizeof(double));
		return constraint_contains(c, x, d, 1e-12, scratch);
	}
	case CONSTRAINT__COUNT: /* every kind is listed: -Wswitch names a new one */
		break;
	}
	return false;
}

/* x, or for a saddle run both blocks of u = (x, y); a synthetic-data run's
 * histogram: whole counts summing to n (its default rows). */
static bool
is_feasible(const struct fixture *f, const double *u, size_t dim)
{
	const struct objective *o = &f->spec.objective;

	if (f->spec.objective.ops == NULL) {
		double total = 0.0;

		for (size_t j = 0; j < dim; j++) {
			if (!(u[j] >= 0.0) || floor(u[j]) != u[j])
				return false;
			total += u[j];
		}
		return total == (double)f->spec.n;
	}

	if (!f->spec.has_y)
		return is_feasible_set(&f->spec.x, u, dim);
	return is_feasible_set(&f->spec.x, u, o->dim_x) &&
	       is_feasible_set(&f->spec.y, u + o->dim_x, o->dim_y);
}

struct progress_log {
	unsigned long calls;
	unsigned long last_done;
	unsigned long total;
	unsigned long stop_at; /* return false when done reaches it; 0 = never */
	bool monotone;
};

static bool
log_progress(void *ctx, unsigned long done, unsigned long total)
{
	struct progress_log *p = ctx;

	p->calls++;
	p->monotone = p->monotone && done == p->last_done + 1 && total == p->total;
	p->last_done = done;
	return p->stop_at == 0 || done < p->stop_at;
}

static void
fill(double *x, size_t d)
{
	for (size_t j = 0; j < d; j++)
		x[j] = SENTINEL;
}

static bool
untouched(const double *x, size_t d)
{
	for (size_t j = 0; j < d; j++)
		if (x[j] != SENTINEL)
			return false;
	return true;
}

/* ---- runs ---- */

static void
check_run(const struct alg_ops *a, struct fixture *f, const char *what)
{
	struct run_plan p1, p2;
	struct err e = { 0 };
	struct rng r;
	struct progress_log log = { .monotone = true };
	double x1[MAX_DIM], x2[MAX_DIM], x3[MAX_DIM], w;
	size_t nused = 0, dim = f->dim;

	memset(&p1, 0, sizeof(p1));
	memset(&p2, 0xa5, sizeof(p2));
	ck_assert_msg(alg_plan(a, &f->spec, &p1, &e) == ERR_OK, "%s: plan: %s", what, e.msg);
	ck_assert_msg(alg_plan(a, &f->spec, &p2, &e) == ERR_OK, "%s: plan: %s", what, e.msg);
	assert_plans_equal(&p1, &p2, what);

	ck_assert_msg(p1.steps > 0, "%s: no steps", what);
	ck_assert_msg(dp_event_check(&p1.event, &e) == ERR_OK, "%s: event: %s", what, e.msg);
	ck_assert(p1.event.node[0].relation == DP_REPLACE_ONE);
	ck_assert(p1.charge_epsilon > 0.0 && p1.charge_epsilon <= f->spec.epsilon);
	ck_assert(p1.charge_delta > 0.0 && p1.charge_delta <= f->spec.delta);
	/* The label of the plan: an accountant the service can name. */
	ck_assert_msg(accountant_source(p1.accountant) != NULL, "%s: no accountant", what);
	while (nused < ALG_MAX_USED && p1.used[nused].name != NULL) {
		ck_assert(isfinite(p1.used[nused].value));
		ck_assert(matches("^[a-z][a-z0-9_]*$", p1.used[nused].name));
		for (size_t q = 0; q < nused; q++)
			ck_assert_str_ne(p1.used[q].name, p1.used[nused].name);
		nused++;
	}
	/* Strictly below the cap, or run_plan_use() may have dropped one. */
	ck_assert_msg(nused > 0 && nused < ALG_MAX_USED, "%s: %zu used values", what, nused);
	ck_assert_uint_eq(p1.n_used, nused);
	w = a->work(&f->spec, &p1);
	ck_assert(isfinite(w) && w > 0.0);

	log.total = p1.steps;
	rng_splitmix_init(&r, 77);
	ck_assert_msg(alg_run(a, &f->spec, &p1, &f->ds, &r, log_progress, &log, x1, &e) == ERR_OK,
		      "%s: run: %s", what, e.msg);
	ck_assert_msg(log.calls == p1.steps && log.monotone, "%s: progress %lu of %lu", what,
		      log.calls, p1.steps);
	for (size_t j = 0; j < dim; j++)
		ck_assert_msg(isfinite(x1[j]), "%s: output not finite", what);
	ck_assert_msg(is_feasible(f, x1, dim), "%s: output infeasible", what);

	rng_splitmix_init(&r, 77);
	ck_assert(alg_run(a, &f->spec, &p1, &f->ds, &r, NULL, NULL, x2, &e) == ERR_OK);
	ck_assert_msg(memcmp(x1, x2, dim * sizeof(double)) == 0, "%s: same seed, different output",
		      what);
	rng_splitmix_init(&r, 78);
	ck_assert(alg_run(a, &f->spec, &p1, &f->ds, &r, NULL, NULL, x3, &e) == ERR_OK);
	ck_assert_msg(memcmp(x1, x3, dim * sizeof(double)) != 0, "%s: the seed does not matter",
		      what);

	/* A huge step must still end inside the set (the projection binds). */
	for (size_t k = 0; k < alg_param_count(a); k++) {
		const struct alg_param *q = &a->params[k];

		if (strcmp(q->name, "step_size") != 0 || q->max < 50.0)
			continue;
		f->spec.params[k] = 50.0;
		if (alg_plan(a, &f->spec, &p2, &e) != ERR_OK) {
			/* saddle.smd_maurey: its step size is the exponential
			 * mechanism's inverse temperature, capped by privacy;
			 * a step above the cap is refused, naming the field. */
			ck_assert_msg(strcmp(e.field, "params.step_size") == 0,
				      "%s: huge step refused without naming params.step_size",
				      what);
			f->spec.params[k] = q->def;
			continue;
		}
		rng_splitmix_init(&r, 79);
		ck_assert(alg_run(a, &f->spec, &p2, &f->ds, &r, NULL, NULL, x3, &e) == ERR_OK);
		ck_assert_msg(is_feasible(f, x3, dim), "%s: huge step left the set", what);
		f->spec.params[k] = q->def;
	}
}

START_TEST(test_runs)
{
	for_each_combo(alg_of(_i), check_run);
}
END_TEST

/* ---- invalid parameters ---- */

static void
expect_refused(const struct alg_ops *a, struct fixture *f, const struct run_plan *good,
	       const char *field, const char *what)
{
	struct run_plan p, before;
	struct err e;
	struct rng r;
	double x[MAX_DIM];

	memset(&p, 0x5a, sizeof(p));
	memcpy(&before, &p, sizeof(p));
	memset(&e, 0, sizeof(e));
	ck_assert_msg(alg_plan(a, &f->spec, &p, &e) == ERR_INVALID, "%s: plan accepted", what);
	ck_assert_msg(strcmp(e.field, field) == 0, "%s: field '%s', want '%s'", what, e.field,
		      field);
	ck_assert_msg(strstr(e.msg, field) != NULL, "%s: message '%s' does not name %s", what,
		      e.msg, field);
	ck_assert_msg(memcmp(&p, &before, sizeof(p)) == 0, "%s: plan written on failure", what);

	/* A worker that got this far anyway: init() refuses too, fini() copes. */
	fill(x, MAX_DIM);
	memset(&e, 0, sizeof(e));
	rng_splitmix_init(&r, 5);
	ck_assert_int_eq(alg_run(a, &f->spec, good, &f->ds, &r, NULL, NULL, x, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, field);
	ck_assert_msg(untouched(x, MAX_DIM), "%s: ret_x written on failure", what);
}

static void
check_invalid_params(const struct alg_ops *a, struct fixture *f, const char *what)
{
	size_t np = alg_param_count(a);
	struct run_plan good;
	struct err e = { 0 };

	ck_assert_msg(alg_plan(a, &f->spec, &good, &e) == ERR_OK, "%s: %s", what, e.msg);
	for (size_t k = 0; k < np; k++) {
		const struct alg_param *p = &a->params[k];
		double keep = f->spec.params[k];
		double bad[4] = { p->min - 1.0, p->max + 1.0 + fabs(p->max), NAN, INFINITY };
		char field[80], w2[256];

		snprintf(field, sizeof(field), "params.%s", p->name);
		for (int b = 0; b < 4; b++) {
			f->spec.params[k] = bad[b];
			snprintf(w2, sizeof(w2), "%s: %s = %g", what, p->name, bad[b]);
			expect_refused(a, f, &good, field, w2);
		}
		if (p->type == ALG_PARAM_INT && p->max > p->min + 1.0) {
			f->spec.params[k] = p->min + 0.5;
			snprintf(w2, sizeof(w2), "%s: %s not an integer", what, p->name);
			expect_refused(a, f, &good, field, w2);
		}
		/* In range for the schema, out of range for this dataset. */
		if (strcmp(p->name, "batch_size") == 0) {
			f->spec.params[k] = (double)(f->spec.n + 1);
			snprintf(w2, sizeof(w2), "%s: batch_size > n", what);
			expect_refused(a, f, &good, field, w2);
		}
		f->spec.params[k] = keep;
	}
}

START_TEST(test_invalid_params)
{
	for_each_combo(alg_of(_i), check_invalid_params);
}
END_TEST

START_TEST(test_unsupported_objective_refused)
{
	const struct alg_ops *a = alg_of(_i);
	struct fixture *f = NULL;
	struct run_plan p;
	struct err e = { 0 };
	struct rng r;
	double x[MAX_DIM];
	const struct objective_ops *unsupported = NULL;

	if (a->synthetic) {
		/* Any objective is refused by name. */
		f = synthetic_fixture_new(a);
		ck_assert_int_eq(alg_plan(a, &f->spec, &p, &e), ERR_OK);
		f->spec.objective.ops = objective_at(0);
		ck_assert_int_eq(alg_plan(a, &f->spec, &p, &e), ERR_INVALID);
		ck_assert_str_eq(e.field, "objective");
		f->spec.objective.ops = NULL;
		ck_assert_int_eq(alg_plan(a, &f->spec, &p, &e), ERR_OK);
		f->spec.objective.ops = objective_at(0);
		fill(x, MAX_DIM);
		rng_splitmix_init(&r, 1);
		ck_assert_int_eq(alg_run(a, &f->spec, &p, &f->ds, &r, NULL, NULL, x, &e),
				 ERR_INVALID);
		ck_assert_str_eq(e.field, "objective");
		ck_assert(untouched(x, MAX_DIM));
		free(f);
		return;
	}
	for (size_t i = 0; i < objective_count(); i++)
		if (!alg_supports_objective(a, objective_at(i)->name))
			unsupported = objective_at(i);
	if (unsupported == NULL)
		return; /* supports them all */
	f = fixture_new(a, objective_find(a->objectives[0]),
			(enum task)__builtin_ctz(objective_find(a->objectives[0])->tasks),
			(enum constraint_kind)__builtin_ctz(a->constraints), V_DENSE);
	ck_assert_int_eq(alg_plan(a, &f->spec, &p, &e), ERR_OK);
	f->spec.objective.ops = unsupported;
	fill(x, MAX_DIM);
	rng_splitmix_init(&r, 1);
	ck_assert_int_eq(alg_run(a, &f->spec, &p, &f->ds, &r, NULL, NULL, x, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "objective");
	ck_assert(untouched(x, MAX_DIM));
	free(f);
}
END_TEST

/* "constraints.y" is refused by name by minimisation methods and
 * required by saddle ones (run_spec_blocks, the generic check). */
START_TEST(test_blocks_refused_by_name)
{
	const struct alg_ops *a = alg_of(_i);
	const struct objective_ops *o;
	struct fixture *f;
	struct saddle_block bx, by;
	struct err e = { 0 };

	if (a->synthetic) {
		/* No sets at all: a y set is refused by name. */
		struct run_plan p;

		f = synthetic_fixture_new(a);
		ck_assert_uint_eq(a->constraints_y, 0);
		f->spec.has_y = true;
		f->spec.y = canonical_set(CONSTRAINT_L2_BALL);
		ck_assert_int_eq(alg_plan(a, &f->spec, &p, &e), ERR_INVALID);
		ck_assert_str_eq(e.field, "constraints.y");
		free(f);
		return;
	}
	o = objective_find(a->objectives[0]);
	f = fixture_new(a, o, (enum task)__builtin_ctz(o->tasks),
			(enum constraint_kind)__builtin_ctz(a->constraints), V_DENSE);

	ck_assert_msg(run_spec_blocks(a, &f->spec, &bx, &by, &e) == ERR_OK, "%s", e.msg);
	ck_assert(memcmp(&bx.set, &f->spec.x, sizeof(bx.set)) == 0);
	f->spec.has_y = !a->saddle;
	f->spec.y = canonical_set(CONSTRAINT_L2_BALL);
	ck_assert_int_eq(run_spec_blocks(a, &f->spec, &bx, &by, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.y");
	ck_assert(strstr(e.msg, "constraints.y") != NULL);
	if (a->saddle)
		ck_assert(a->constraints_y != 0);
	else
		ck_assert_uint_eq(a->constraints_y, 0);
	free(f);
}
END_TEST

/* The VI pairing: a method that lists an operator objective declares VI
 * support (and the reverse), its operator runs refuse "constraints.y",
 * and a method without VI support refuses an operator objective naming
 * "objective". */
START_TEST(test_operator_objectives_paired)
{
	const struct alg_ops *a = alg_of(_i);
	const struct objective_ops *vo = objective_find("bilinear_vi");
	bool lists = false;
	struct fixture *f;
	struct saddle_block bx, by;
	struct err e = { 0 };

	ck_assert(vo != NULL && vo->kind == OBJECTIVE_OPERATOR);
	for (size_t i = 0; a->objectives[i] != NULL; i++)
		lists = lists || objective_find(a->objectives[i])->kind == OBJECTIVE_OPERATOR;
	ck_assert_msg(lists == a->vi, "%s: lists an operator objective iff it declares vi",
		      a->name);
	if (a->synthetic)
		return; /* no objective at all (test_unsupported_objective_refused) */
	f = fixture_new(a, vo, TASK_UNLABELED, CONSTRAINT_L2_BALL, V_DENSE);
	ck_assert(!f->spec.has_y);
	if (a->vi) {
		ck_assert_msg(run_spec_blocks(a, &f->spec, &bx, &by, &e) == ERR_OK, "%s", e.msg);
		f->spec.has_y = true;
		f->spec.y = canonical_set(CONSTRAINT_L2_BALL);
		ck_assert_int_eq(run_spec_blocks(a, &f->spec, &bx, &by, &e), ERR_INVALID);
		ck_assert_str_eq(e.field, "constraints.y");
	} else {
		ck_assert_int_eq(run_spec_blocks(a, &f->spec, &bx, &by, &e), ERR_INVALID);
		ck_assert_str_eq(e.field, "objective");
	}
	free(f);
}
END_TEST

/* ---- cancellation and generator failure ---- */

static void
check_cancel(const struct alg_ops *a, struct fixture *f, const char *what)
{
	struct run_plan p;
	struct err e = { 0 };
	struct rng r;
	struct progress_log log = { .monotone = true };
	double x[MAX_DIM];

	ck_assert(alg_plan(a, &f->spec, &p, &e) == ERR_OK);
	log.total = p.steps;
	log.stop_at = p.steps > 2 ? 2 : 1;
	fill(x, MAX_DIM);
	rng_splitmix_init(&r, 3);
	ck_assert_msg(alg_run(a, &f->spec, &p, &f->ds, &r, log_progress, &log, x, &e) ==
			      ERR_CANCELLED,
		      "%s: not cancelled", what);
	ck_assert_msg(log.calls == log.stop_at, "%s: ran on after the stop", what);
	ck_assert_msg(untouched(x, MAX_DIM), "%s: ret_x written on cancel", what);
}

START_TEST(test_cancel)
{
	for_each_combo(alg_of(_i), check_cancel);
}
END_TEST

/* A splitmix generator whose refill counts, and fails from call fail_at
 * on (0 = never).  Generators split off it (rng_split: dp_sgd.one_pass
 * draws its noise with one) count into and fail with the root's count,
 * so a failure injected there is one of the run's generators failing.
 * The runs here have no executor: the splits draw on this thread. */
struct counting_rng {
	struct rng r; /* first: the algorithms see only this */
	bool (*inner)(struct rng *r);
	struct counting_rng *root; /* the one counting: itself, or the split's parent's root */
	unsigned long refills;
	unsigned long fail_at;
};

static bool
counting_refill(struct rng *r)
{
	struct counting_rng *c = ((struct counting_rng *)r)->root;

	c->refills++;
	if (c->fail_at != 0 && c->refills >= c->fail_at)
		return false;
	return ((struct counting_rng *)r)->inner(r);
}

static void
counting_free(struct rng *r)
{
	free(r);
}

static struct rng *
counting_split(struct rng *r, struct err *e)
{
	struct counting_rng *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		err_set(e, ERR_NOMEM, "cannot allocate a random generator");
		return NULL;
	}
	rng_splitmix_init(&c->r, rng_u64(r));
	c->inner = c->r.refill;
	c->r.refill = counting_refill;
	c->r.split = counting_split;
	c->r.destroy = counting_free;
	c->root = ((struct counting_rng *)r)->root;
	return &c->r;
}

static void
counting_init(struct counting_rng *c, uint64_t seed, unsigned long fail_at)
{
	rng_splitmix_init(&c->r, seed);
	c->inner = c->r.refill;
	c->r.refill = counting_refill;
	c->r.split = counting_split;
	c->root = c;
	c->refills = 0;
	c->fail_at = fail_at;
}

static void
check_rng_failure(const struct alg_ops *a, struct fixture *f, const char *what)
{
	struct run_plan p;
	struct err e = { 0 };
	struct counting_rng *c = calloc(1, sizeof(*c));
	struct progress_log log = { .monotone = true };
	double x[MAX_DIM];
	unsigned long total;

	ck_assert_ptr_nonnull(c);
	/* Make the run draw many blocks: small batches, many steps (the
	 * epochs rule, not cheap_params' 20 steps). */
	for (size_t k = 0; k < alg_param_count(a); k++) {
		if (strcmp(a->params[k].name, "batch_size") == 0)
			f->spec.params[k] = 4.0;
		if (strcmp(a->params[k].name, "steps") == 0 ||
		    strcmp(a->params[k].name, "phases") == 0)
			f->spec.params[k] = 0.0;
		if (strcmp(a->params[k].name, "max_phase_steps") == 0)
			f->spec.params[k] = 200.0;
	}
	ck_assert(alg_plan(a, &f->spec, &p, &e) == ERR_OK);
	counting_init(c, 9, 0);
	ck_assert(alg_run(a, &f->spec, &p, &f->ds, &c->r, NULL, NULL, x, &e) == ERR_OK);
	total = c->refills;
	/* A method with a batch size that still drew little (dp_sgd.one_pass's
	 * batched noise fill uses fewer words a sample than the scalar one:
	 * 3 refills at batches of 4): batches of 1, four times the steps. */
	for (size_t k = 0; total < 4 && k < alg_param_count(a); k++) {
		if (strcmp(a->params[k].name, "batch_size") != 0)
			continue;
		f->spec.params[k] = 1.0;
		if (alg_plan(a, &f->spec, &p, &e) != ERR_OK) { /* not at batches of 1 */
			f->spec.params[k] = 4.0;
			ck_assert(alg_plan(a, &f->spec, &p, &e) == ERR_OK);
			break;
		}
		counting_init(c, 9, 0);
		ck_assert(alg_run(a, &f->spec, &p, &f->ds, &c->r, NULL, NULL, x, &e) == ERR_OK);
		total = c->refills;
	}
	if (total < 4) {
		/* A method that draws little (frank_wolfe.*, saddle.smd_maurey,
		 * saddle.smd_bias_reduced, mirror_descent.maurey_sco,
		 * synthetic.smd_queries: one word per vertex or query score, no
		 * noise vectors; saddle.recursive_regularization: its T chunks
		 * of n / log2 n records leave most of the 2000 rows unread, so
		 * few noise vectors), or a noise method on quadratic_game's
		 * fixture (dim 3: short noise vectors), may not reach a second
		 * 64 KiB refill:
		 * the failure is then injected at the first refill, and the run
		 * must still fail closed, reported, with nothing written. */
		counting_init(c, 9, 1);
		fill(x, MAX_DIM);
		memset(&e, 0, sizeof(e));
		ck_assert_msg(alg_run(a, &f->spec, &p, &f->ds, &c->r, NULL, NULL, x, &e) ==
				      ERR_INTERNAL,
			      "%s: generator failure not reported", what);
		ck_assert_msg(strstr(e.msg, "random") != NULL, "%s: '%s'", what, e.msg);
		ck_assert_msg(untouched(x, MAX_DIM), "%s: ret_x written after generator failure",
			      what);
		ck_assert_msg(strncmp(a->name, "frank_wolfe.", 12) == 0 ||
				      strcmp(a->name, "saddle.smd_maurey") == 0 ||
				      strcmp(a->name, "saddle.smd_bias_reduced") == 0 ||
				      strcmp(a->name, "mirror_descent.maurey_sco") == 0 ||
				      strcmp(a->name, "synthetic.smd_queries") == 0 ||
				      strcmp(a->name, "saddle.recursive_regularization") == 0 ||
				      f->spec.dim <= 3,
			      "%s: only %lu refills", what, total);
		free(c);
		return;
	}

	counting_init(c, 9, total / 2 + 1);
	log.total = p.steps;
	fill(x, MAX_DIM);
	memset(&e, 0, sizeof(e));
	ck_assert_msg(alg_run(a, &f->spec, &p, &f->ds, &c->r, log_progress, &log, x, &e) ==
			      ERR_INTERNAL,
		      "%s: generator failure not reported", what);
	ck_assert_msg(strstr(e.msg, "random") != NULL, "%s: '%s'", what, e.msg);
	ck_assert_msg(log.calls > 0 && log.calls < p.steps, "%s: failed at step %lu of %lu", what,
		      log.calls, p.steps);
	ck_assert_msg(untouched(x, MAX_DIM), "%s: ret_x written after generator failure", what);
	free(c);
}

START_TEST(test_rng_failure)
{
	for_each_combo(alg_of(_i), check_rng_failure);
}
END_TEST

/* ---- sets: every constraint kind has every operation, and they agree ----
 *
 * Loop index _i is the constraint kind.  On the table's example of each
 * kind (algorithms/constraint.c) in dimensions 1, 2, 3 and 6, with points
 * from rng_normal() at three scales: the projection lands in the set, is
 * idempotent and satisfies the obtuse-angle condition against members;
 * the LMO returns a member, reports <g, s>, and is no worse than any
 * member tried; contains() takes every member and refuses a point beyond
 * the l_inf radius or past the LMO's supporting hyperplane; the radii in l1, l1.5, l2 and l_inf
 * bound every member and are attained (by an LMO answer for +-e_j or a sign vector: the extreme
 * points of the kinds); the declared mirror maps return members and an undeclared p-norm step is
 * refused; validation refuses non-finite parameters by field. */

#define SET_D_MAX 6
#define SET_TOL   1e-12
/* Scratch of a projection or membership test in dimension <= SET_D_MAX
 * (a polytope's is the largest: constraint.h). */
#define SET_SCRATCH ((SET_D_MAX + 3) * (SET_D_MAX + 3) + 6 * (SET_D_MAX + 3))

static double
set_norm(const double *x, size_t d, double q)
{
	double s = 0.0, m = 0.0;

	for (size_t j = 0; j < d; j++)
		m = fmax(m, fabs(x[j]));
	if (isinf(q) || m == 0.0)
		return m;
	for (size_t j = 0; j < d; j++)
		s += pow(fabs(x[j]) / m, q);
	return m * pow(s, 1.0 / q);
}

static double
set_dot(const double *a, const double *b, size_t d)
{
	double s = 0.0;

	for (size_t j = 0; j < d; j++)
		s += a[j] * b[j];
	return s;
}

/* Members of c in dimension d: LMO answers for +-e_j and every sign
 * vector, and projections of 3 x 20 random points; *ret_n of them. */
static void
set_members(const struct constraint *c, size_t d, struct rng *r, double (*y)[SET_D_MAX],
	    size_t *ret_n)
{
	double g[SET_D_MAX], scratch[SET_SCRATCH];
	size_t n = 0;

	for (size_t j = 0; j < 2 * d; j++) {
		memset(g, 0, sizeof(g));
		g[j / 2] = j % 2 ? -1.0 : 1.0;
		constraint_lmo(c, g, d, y[n++]);
	}
	for (size_t mask = 0; mask < ((size_t)1 << d); mask++) {
		for (size_t j = 0; j < d; j++)
			g[j] = (mask >> j) & 1 ? -1.0 : 1.0;
		constraint_lmo(c, g, d, y[n++]);
	}
	for (int scale = 0; scale < 3; scale++)
		for (int k = 0; k < 20; k++) {
			rng_normal_vector(r, y[n], d);
			for (size_t j = 0; j < d; j++)
				y[n][j] *= scale == 0 ? 0.1 : scale == 1 ? 1.0 : 10.0;
			constraint_project(c, y[n], d, scratch);
			n++;
		}
	*ret_n = n;
}

#define SET_MAX_MEMBERS (2 * SET_D_MAX + (1 << SET_D_MAX) + 60)

START_TEST(test_set_kind_has_every_operation)
{
	const struct constraint_ops *ops = constraint_ops_of((enum constraint_kind)_i);
	struct constraint c;
	struct err e = { 0 };
	double st[SET_EXAMPLE_STORAGE(SET_D_MAX)];

	ck_assert_msg(ops != NULL, "kind %d has no row in algorithms/constraint.c", _i);
	ck_assert_msg(ops->name != NULL && matches("^[a-z0-9_]+$", ops->name), "kind %d: name", _i);
	ck_assert_msg(ops->validate && ops->radius && ops->contains && ops->project && ops->lmo &&
			      ops->scratch,
		      "%s: an operation is missing", ops->name);
	ck_assert_int_eq(ops->example.kind, _i);
	ck_assert_int_eq(constraint_kind_from_name(ops->name), _i);
	ck_assert_str_eq(constraint_kind_name((enum constraint_kind)_i), ops->name);
	ck_assert(ops->entropic == CONSTRAINT_ENTROPIC_NONE ||
		  ops->entropic == CONSTRAINT_ENTROPIC_SIMPLEX ||
		  ops->entropic == CONSTRAINT_ENTROPIC_L1_LIFT);
	ck_assert(ops->pnorm_outer == CONSTRAINT_PNORM_OUTER_NONE ||
		  ops->pnorm_outer == CONSTRAINT_PNORM_OUTER_L1 ||
		  ops->pnorm_outer == CONSTRAINT_PNORM_OUTER_SIMPLEX ||
		  ops->pnorm_outer == CONSTRAINT_PNORM_OUTER_LP);
	for (size_t d = 1; d <= SET_D_MAX; d++) {
		c = set_example((enum constraint_kind)_i, d, st);
		ck_assert_msg(constraint_validate(&c, d, "constraints.x", &e) == ERR_OK,
			      "%s: example refused: %s", ops->name, e.msg);
		ck_assert_uint_eq(constraint_project_scratch(&c, d), ops->scratch(&c, d));
	}
	ck_assert_msg(constraint_validate(&ops->example,
					  ops->example.vertex_dim > 0 ? ops->example.vertex_dim : 1,
					  "constraints.x", &e) == ERR_OK,
		      "%s: the table's example refused: %s", ops->name, e.msg);
	ck_assert_int_eq(constraint_validate(&ops->example, 0, "constraints.x", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x");
	/* Non-finite parameters are refused, naming a parameter of the set. */
	c = ops->example;
	c.radius = c.lo = c.hi = c.p = NAN;
	if (_i == CONSTRAINT_POLYTOPE)
		c = set_example_nan(3, st);
	ck_assert_int_eq(constraint_validate(&c, 3, "constraints.x", &e), ERR_INVALID);
	ck_assert_msg(strncmp(e.field, "constraints.x.", 14) == 0 && e.field[14] != '\0',
		      "%s: field '%s'", ops->name, e.field);
}
END_TEST

START_TEST(test_set_operations_agree)
{
	static const double qs[] = { 1.0, 1.5, 2.0, INFINITY };
	const struct constraint_ops *ops = constraint_ops_of((enum constraint_kind)_i);
	struct rng r;
	double(*y)[SET_D_MAX] = calloc(SET_MAX_MEMBERS, sizeof(*y));
	double st[SET_EXAMPLE_STORAGE(SET_D_MAX)];

	ck_assert_ptr_nonnull(y);
	rng_splitmix_init(&r, 0x5e75 + (uint64_t)_i);
	for (size_t d = 1; d <= SET_D_MAX; d += d < 3 ? 1 : 3) {
		const struct constraint cd = set_example((enum constraint_kind)_i, d, st), *c = &cd;
		double x[SET_D_MAX], p[SET_D_MAX], pp[SET_D_MAX], g[SET_D_MAX], s[SET_D_MAX];
		double scratch[SET_SCRATCH], rinf = constraint_radius(c, d, INFINITY);
		size_t n;

		set_members(c, d, &r, y, &n);
		/* Members are in, and within every radius; the radii are attained. */
		for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
			double rad = constraint_radius(c, d, qs[k]), best = 0.0;

			ck_assert_msg(isfinite(rad) && rad > 0.0, "%s: radius", ops->name);
			for (size_t i = 0; i < n; i++) {
				double nq = set_norm(y[i], d, qs[k]);

				ck_assert_msg(
					nq <= rad * (1.0 + SET_TOL),
					"%s d=%zu: member %zu has l_%g norm %.17g > radius %.17g",
					ops->name, d, i, qs[k], nq, rad);
				best = fmax(best, nq);
			}
			ck_assert_msg(best >= rad * (1.0 - 1e-9),
				      "%s d=%zu: l_%g radius %.17g, largest member %.17g",
				      ops->name, d, qs[k], rad, best);
		}
		for (size_t i = 0; i < n; i++)
			ck_assert_msg(constraint_contains(c, y[i], d, SET_TOL, scratch),
				      "%s d=%zu: member %zu not contained", ops->name, d, i);
		/* Beyond the l_inf radius is outside. */
		memcpy(x, y[0], d * sizeof(*x));
		x[0] = 2.0 * rinf + 1.0;
		ck_assert_msg(!constraint_contains(c, x, d, SET_TOL, scratch),
			      "%s: far point inside", ops->name);
		for (int t = 0; t < 30; t++) {
			double scale = t % 3 == 0 ? 0.1 : t % 3 == 1 ? 1.0 : 10.0, v, mx;

			/* Projection: in the set, idempotent, obtuse angle to members. */
			rng_normal_vector(&r, x, d);
			for (size_t j = 0; j < d; j++)
				p[j] = x[j] *= scale;
			constraint_project(c, p, d, scratch);
			ck_assert_msg(constraint_contains(c, p, d, SET_TOL, scratch),
				      "%s: projection outside", ops->name);
			memcpy(pp, p, d * sizeof(*p));
			constraint_project(c, pp, d, scratch);
			for (size_t j = 0; j < d; j++)
				ck_assert_msg(fabs(pp[j] - p[j]) <= 1e-12 * fmax(1.0, rinf),
					      "%s: projection not idempotent", ops->name);
			for (size_t i = 0; i < n; i++) {
				double a = 0.0;

				for (size_t j = 0; j < d; j++)
					a += (x[j] - p[j]) * (y[i][j] - p[j]);
				ck_assert_msg(a <= 1e-9 * (1.0 + scale * rinf) * (1.0 + rinf),
					      "%s d=%zu: <x - P(x), y - P(x)> = %g > 0", ops->name,
					      d, a);
			}
			/* LMO: a member, its value, no member better. */
			rng_normal_vector(&r, g, d);
			v = constraint_lmo(c, g, d, s);
			ck_assert_msg(constraint_contains(c, s, d, SET_TOL, scratch),
				      "%s: LMO outside", ops->name);
			mx = set_norm(g, d, INFINITY) * constraint_radius(c, d, 1.0);
			ck_assert_msg(fabs(v - set_dot(g, s, d)) <= 1e-12 * (1.0 + mx),
				      "%s: LMO value %g, <g, s> %g", ops->name, v,
				      set_dot(g, s, d));
			for (size_t i = 0; i < n; i++)
				ck_assert_msg(v <= set_dot(g, y[i], d) + 1e-12 * (1.0 + mx),
					      "%s d=%zu: member %zu beats the LMO", ops->name, d,
					      i);
			/* Past the LMO's supporting hyperplane {<g, .> = v} is outside:
			 * x = s - delta g / ||g||^2 has <g, x> = v - delta. */
			for (size_t j = 0; j < d; j++)
				x[j] = s[j] - 1e-6 * (1.0 + mx) * g[j] / set_dot(g, g, d);
			ck_assert_msg(!constraint_contains(c, x, d, SET_TOL, scratch),
				      "%s d=%zu: a point beyond the LMO's hyperplane is inside",
				      ops->name, d);
		}
	}
	free(y);
}
END_TEST

/* Declared mirror maps land in the set; an undeclared p-norm step is
 * refused. */
START_TEST(test_set_mirror_support)
{
	const struct constraint_ops *ops = constraint_ops_of((enum constraint_kind)_i);
	double st[SET_EXAMPLE_STORAGE(SET_D_MAX)];
	struct rng r;

	rng_splitmix_init(&r, 0x3177 + (uint64_t)_i);
	for (size_t d = 1; d <= SET_D_MAX; d++) {
		const struct constraint cd = set_example((enum constraint_kind)_i, d, st), *c = &cd;
		double theta[2 * SET_D_MAX], x[SET_D_MAX], a[SET_D_MAX], scratch[SET_SCRATCH];
		struct mirror_pnorm m;
		struct err e = { 0 };
		enum err_code rc;

		/* The entropic point of theta is in the set; with all weight on
		 * one coordinate it is an extreme point of largest l1 norm. */
		for (int peak = 0; peak < 2; peak++) {
			rng_normal_vector(&r, theta, 2 * d);
			theta[0] += peak ? 60.0 : 0.0;
			switch (ops->entropic) {
			case CONSTRAINT_ENTROPIC_SIMPLEX:
				mirror_entropic_point(theta, d, c->radius, x);
				break;
			case CONSTRAINT_ENTROPIC_L1_LIFT:
				mirror_l1_point(theta, d, c->radius, x);
				break;
			case CONSTRAINT_ENTROPIC_NONE:
				continue;
			}
			ck_assert_msg(constraint_contains(c, x, d, 1e-12, scratch),
				      "%s: entropic point", ops->name);
			ck_assert_msg(!peak || set_norm(x, d, 1.0) >=
						       constraint_radius(c, d, 1.0) * (1.0 - 1e-9),
				      "%s d=%zu: peaked entropic point has l1 norm %g, radius %g",
				      ops->name, d, set_norm(x, d, 1.0),
				      constraint_radius(c, d, 1.0));
		}
		rng_normal_vector(&r, a, d);
		constraint_project(c, a, d, scratch);
		mirror_pnorm_init(&m, d, a);
		rc = mirror_pnorm_step(&m, c, INFINITY, theta, x, NULL, &e);
		if (ops->pnorm_outer == CONSTRAINT_PNORM_OUTER_NONE) {
			ck_assert_msg(rc == ERR_INVALID, "%s: p-norm step not refused", ops->name);
		} else {
			ck_assert_msg(rc == ERR_OK, "%s d=%zu: p-norm step: %s", ops->name, d,
				      e.msg);
			ck_assert_msg(constraint_contains(c, x, d, 1e-9, scratch),
				      "%s: p-norm step outside", ops->name);
		}
	}
}
END_TEST

/* A product of any two kinds: blockwise projection and LMO land in the
 * product, and the LMO's value is the sum of the blocks'. */
START_TEST(test_set_products)
{
	const struct constraint_ops *first = constraint_ops_of((enum constraint_kind)_i);
	struct rng r;

	rng_splitmix_init(&r, 0x9a17 + (uint64_t)_i);
	for (int k = 0; k < CONSTRAINT__COUNT; k++) {
		struct constraint_product cp = { .nparts = 2, .dim = 5 };
		double x[5], g[5], s[5], scratch[SET_SCRATCH], v;
		double st0[SET_EXAMPLE_STORAGE(2)], st1[SET_EXAMPLE_STORAGE(3)];
		struct err e = { 0 };

		cp.part[0] = (struct constraint_part){ set_example(first->example.kind, 2, st0), 0,
						       2, "constraints.x" };
		cp.part[1] = (struct constraint_part){ set_example((enum constraint_kind)k, 3, st1),
						       2, 3, "constraints.y" };
		ck_assert_uint_le(constraint_product_scratch(&cp), SET_SCRATCH);
		ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_OK);
		rng_normal_vector(&r, x, 5);
		constraint_product_project(&cp, x, scratch);
		ck_assert(constraint_product_contains(&cp, x, SET_TOL, scratch));
		rng_normal_vector(&r, g, 5);
		v = constraint_product_lmo(&cp, g, s);
		ck_assert(constraint_product_contains(&cp, s, SET_TOL, scratch));
		ck_assert(fabs(v - set_dot(g, s, 5)) <= 1e-12 * (1.0 + fabs(v)));
		cp.part[1].c.radius = cp.part[1].c.lo = cp.part[1].c.hi = cp.part[1].c.p = NAN;
		if (k == CONSTRAINT_POLYTOPE)
			cp.part[1].c = set_example_nan(3, st1);
		ck_assert_int_eq(constraint_product_validate(&cp, "constraints", &e), ERR_INVALID);
		ck_assert_msg(strncmp(e.field, "constraints.y.", 14) == 0, "field '%s'", e.field);
	}
}
END_TEST

static Suite *
conformance_suite(void)
{
	Suite *s = suite_create("conformance");
	TCase *tc = tcase_create("registry");
	int n = (int)alg_count();

	/* Per loop iteration: the largest, select.random_stopping's test_runs,
	 * measured 58 s CPU on 2026-11-29 (110 s for the whole program):
	 * Check's timeout is wall-clock, so at least 10x that. */
	tcase_set_timeout(tc, 900);
	tcase_add_loop_test(tc, test_schema_is_well_formed, 0, n);
	tcase_add_loop_test(tc, test_runs, 0, n);
	tcase_add_loop_test(tc, test_invalid_params, 0, n);
	tcase_add_loop_test(tc, test_unsupported_objective_refused, 0, n);
	tcase_add_loop_test(tc, test_blocks_refused_by_name, 0, n);
	tcase_add_loop_test(tc, test_operator_objectives_paired, 0, n);
	tcase_add_loop_test(tc, test_cancel, 0, n);
	tcase_add_loop_test(tc, test_rng_failure, 0, n);
	suite_add_tcase(s, tc);
	tc = tcase_create("sets");
	tcase_add_loop_test(tc, test_set_kind_has_every_operation, 0, CONSTRAINT__COUNT);
	tcase_add_loop_test(tc, test_set_operations_agree, 0, CONSTRAINT__COUNT);
	tcase_add_loop_test(tc, test_set_mirror_support, 0, CONSTRAINT__COUNT);
	tcase_add_loop_test(tc, test_set_products, 0, CONSTRAINT__COUNT);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(conformance_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
