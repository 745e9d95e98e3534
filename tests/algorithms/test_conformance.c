/*
 * test_conformance.c - what every registered algorithm must do, checked
 * over the whole registry (Check loop tests, _i is the registry index).
 *
 * Schema: well-formed names, docs, ranges and tables.  Runs: every
 * supported objective (on every task it accepts) times every supported
 * constraint times a dense and a CSR copy of the data (and, on the dense
 * one, the objective with an intercept and an elastic-net regularizer), on
 * small synthetic data with a seeded splitmix generator:
 * plan() succeeds and is deterministic; the run succeeds, calls progress
 * once per planned step, and returns a finite feasible point; the same
 * seed gives the same bits, another seed other bits.  Failure paths: every
 * out-of-range parameter is refused naming its key, with the outputs left
 * untouched; a progress callback returning false cancels; a generator that
 * fails mid-run fails the run closed.
 */
#include <check.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "objective.h"

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
	ck_assert(a->constraints != 0);
	ck_assert_uint_eq(a->constraints & ~((1u << CONSTRAINT__COUNT) - 1), 0);
	for (const char *const *o = a->objectives; *o != NULL; o++, no++) {
		ck_assert_msg(objective_find(*o) != NULL, "%s: unknown objective '%s'", a->name,
			      *o);
		ck_assert(alg_supports_objective(a, *o));
	}
	ck_assert_uint_gt(no, 0);
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
	size_t dim;
};

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
	f->spec.n = N_ROWS;
	f->spec.schema.d = D_COLS;
	f->spec.schema.task = task;
	f->spec.schema.n_classes = task == TASK_MULTICLASS ? K_CLASS : 0;
	f->spec.schema.bounds.feature_l2 = 1.0;
	f->spec.schema.bounds.feature_linf = NAN;
	f->spec.schema.bounds.label = task == TASK_REGRESSION ? 2.0 : NAN;
	f->spec.schema.bounds.label_lo = f->spec.schema.bounds.label_hi = NAN;
	objective_params_default(&p);
	if (v == V_EXTRA) {
		p.intercept = true;
		p.ridge = 0.05;
		p.l1 = 0.01;
	}
	ck_assert_msg(run_spec_set_objective(&f->spec, o, &p, &e) == ERR_OK, "%s: %s", o->name,
		      e.msg);
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

	for (const char *const *on = a->objectives; *on != NULL; on++) {
		const struct objective_ops *o = objective_find(*on);

		for (int t = 0; t < TASK__COUNT; t++) {
			if (!(o->tasks & (1u << t)))
				continue;
			for (int k = 0; k < CONSTRAINT__COUNT; k++) {
				if (!(a->constraints & (1u << k)))
					continue;
				for (int v = 0; v < V__COUNT; v++) {
					static const char *const vn[V__COUNT] = { "dense", "csr",
										  "extra" };
					static const char *const tn[TASK__COUNT] = {
						"binary", "regression", "multiclass", "unlabeled"
					};
					struct fixture *f;
					char what[160];

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
	for (size_t k = 0; k < ALG_MAX_USED; k++) {
		ck_assert(p->used[k].name == q->used[k].name);
		ck_assert(memcmp(&p->used[k].value, &q->used[k].value, sizeof(double)) == 0);
	}
}

static bool
is_feasible(const struct constraint *c, const double *x, size_t d)
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
	case CONSTRAINT__COUNT: /* every kind is listed: -Wswitch names a new one */
		break;
	}
	return false;
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
	ck_assert_msg(a->plan(&f->spec, &p1, &e) == ERR_OK, "%s: plan: %s", what, e.msg);
	ck_assert_msg(a->plan(&f->spec, &p2, &e) == ERR_OK, "%s: plan: %s", what, e.msg);
	assert_plans_equal(&p1, &p2, what);

	ck_assert_msg(p1.steps > 0, "%s: no steps", what);
	ck_assert_msg(dp_event_check(&p1.event, &e) == ERR_OK, "%s: event: %s", what, e.msg);
	ck_assert(p1.event.node[0].relation == DP_REPLACE_ONE);
	ck_assert(p1.charge_epsilon > 0.0 && p1.charge_epsilon <= f->spec.epsilon);
	ck_assert(p1.charge_delta > 0.0 && p1.charge_delta <= f->spec.delta);
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
	w = a->work(&f->spec);
	ck_assert(isfinite(w) && w > 0.0);

	log.total = p1.steps;
	rng_splitmix_init(&r, 77);
	ck_assert_msg(alg_run(a, &f->spec, &p1, &f->ds, &r, log_progress, &log, x1, &e) == ERR_OK,
		      "%s: run: %s", what, e.msg);
	ck_assert_msg(log.calls == p1.steps && log.monotone, "%s: progress %lu of %lu", what,
		      log.calls, p1.steps);
	for (size_t j = 0; j < dim; j++)
		ck_assert_msg(isfinite(x1[j]), "%s: output not finite", what);
	ck_assert_msg(is_feasible(&f->spec.x, x1, dim), "%s: output infeasible", what);

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
		ck_assert(a->plan(&f->spec, &p2, &e) == ERR_OK);
		rng_splitmix_init(&r, 79);
		ck_assert(alg_run(a, &f->spec, &p2, &f->ds, &r, NULL, NULL, x3, &e) == ERR_OK);
		ck_assert_msg(is_feasible(&f->spec.x, x3, dim), "%s: huge step left the set", what);
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
	ck_assert_msg(a->plan(&f->spec, &p, &e) == ERR_INVALID, "%s: plan accepted", what);
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

	ck_assert_msg(a->plan(&f->spec, &good, &e) == ERR_OK, "%s: %s", what, e.msg);
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

	for (size_t i = 0; i < objective_count(); i++)
		if (!alg_supports_objective(a, objective_at(i)->name))
			unsupported = objective_at(i);
	if (unsupported == NULL)
		return; /* supports them all */
	f = fixture_new(a, objective_find(a->objectives[0]), TASK_BINARY, CONSTRAINT_L2_BALL,
			V_DENSE);
	ck_assert_int_eq(a->plan(&f->spec, &p, &e), ERR_OK);
	f->spec.objective.ops = unsupported;
	fill(x, MAX_DIM);
	rng_splitmix_init(&r, 1);
	ck_assert_int_eq(alg_run(a, &f->spec, &p, &f->ds, &r, NULL, NULL, x, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "objective");
	ck_assert(untouched(x, MAX_DIM));
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

	ck_assert(a->plan(&f->spec, &p, &e) == ERR_OK);
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
 * on (0 = never). */
struct counting_rng {
	struct rng r; /* first: the algorithms see only this */
	bool (*inner)(struct rng *r);
	unsigned long refills;
	unsigned long fail_at;
};

static bool
counting_refill(struct rng *r)
{
	struct counting_rng *c = (struct counting_rng *)r;

	c->refills++;
	if (c->fail_at != 0 && c->refills >= c->fail_at)
		return false;
	return c->inner(r);
}

static void
counting_init(struct counting_rng *c, uint64_t seed, unsigned long fail_at)
{
	rng_splitmix_init(&c->r, seed);
	c->inner = c->r.refill;
	c->r.refill = counting_refill;
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
	/* Make the run draw many blocks: small batches, many steps. */
	for (size_t k = 0; k < alg_param_count(a); k++)
		if (strcmp(a->params[k].name, "batch_size") == 0)
			f->spec.params[k] = 4.0;
	ck_assert(a->plan(&f->spec, &p, &e) == ERR_OK);
	counting_init(c, 9, 0);
	ck_assert(alg_run(a, &f->spec, &p, &f->ds, &c->r, NULL, NULL, x, &e) == ERR_OK);
	total = c->refills;
	ck_assert_msg(total >= 4, "%s: only %lu refills", what, total);

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

static Suite *
conformance_suite(void)
{
	Suite *s = suite_create("conformance");
	TCase *tc = tcase_create("registry");
	int n = (int)alg_count();

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_schema_is_well_formed, 0, n);
	tcase_add_loop_test(tc, test_runs, 0, n);
	tcase_add_loop_test(tc, test_invalid_params, 0, n);
	tcase_add_loop_test(tc, test_unsupported_objective_refused, 0, n);
	tcase_add_loop_test(tc, test_cancel, 0, n);
	tcase_add_loop_test(tc, test_rng_failure, 0, n);
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
