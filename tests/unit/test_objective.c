/*
 * test_objective.c - unit tests of the objectives (objective.c,
 * objectives/), their constants and the kernels under them.
 *
 * Gradients: every objective x intercept x regularizer x weights, on a
 * dense and a CSR copy of the same rows, against central finite
 * differences of the function-value-only access; dense and CSR agree to
 * 1e-12; the batch gradient is the sum of the per-record ones, with or
 * without an index, and its clip caps each record.  Constants: random
 * points of random sets and random rows on the boundary of random
 * declared bounds never exceed the declared Lipschitz, smoothness and
 * value bounds (a bound a sample exceeds would break every sensitivity
 * built on it), and adversarial constructions (a row along w, the worse
 * label) come within a stated factor of them.  Validation: every invalid
 * parameter is refused naming its request field, the output untouched.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "data.h"
#include "kernels.h"
#include "objective.h"
#include "rng.h"
#include "rng_gauss.h"

#define N     12
#define D     5
#define K     3
#define G     2
#define MAXD  ((D + 1) * K)
#define NOBJ  5
#define SLACK (1.0 + 1e-9)

static double
gauss(struct rng *r)
{
	return rng_normal(r);
}

static double
norm2(const double *a, size_t n)
{
	double s = 0.0;

	for (size_t j = 0; j < n; j++)
		s += a[j] * a[j];
	return sqrt(s);
}

static double
norm1(const double *a, size_t n)
{
	double s = 0.0;

	for (size_t j = 0; j < n; j++)
		s += fabs(a[j]);
	return s;
}

static double
norminf(const double *a, size_t n)
{
	double s = 0.0;

	for (size_t j = 0; j < n; j++)
		s = fmax(s, fabs(a[j]));
	return s;
}

static enum task
task_of(const struct objective_ops *o)
{
	if (o->tasks & (1u << TASK_MULTICLASS))
		return TASK_MULTICLASS;
	return (o->tasks & (1u << TASK_REGRESSION)) ? TASK_REGRESSION : TASK_BINARY;
}

static struct data_schema
schema_for(enum task t, size_t d)
{
	struct data_schema s;

	memset(&s, 0, sizeof(s));
	s.d = d;
	s.task = t;
	s.n_classes = t == TASK_MULTICLASS ? K : 0;
	s.n_groups = G;
	s.bounds.feature_l2 = 1.0;
	s.bounds.feature_linf = NAN;
	s.bounds.label = t == TASK_REGRESSION ? 2.0 : NAN;
	s.bounds.label_lo = s.bounds.label_hi = NAN;
	return s;
}

/* A dense and a CSR copy of N rows (some entries zero), labels, groups. */
struct data {
	double x[N * D], y[N], val[N * D];
	uint32_t col[N * D], grp[N];
	size_t row_ptr[N + 1];
	struct dataset dense, csr;
};

static void
data_init(struct data *dt, enum task t, struct rng *r)
{
	size_t nnz = 0;

	for (size_t i = 0; i < N; i++) {
		double *row = dt->x + i * D;

		for (size_t j = 0; j < D; j++)
			row[j] = rng_uniform(r) < 0.3 ? 0.0 : gauss(r) / sqrt((double)D);
		dt->y[i] = t == TASK_BINARY       ? (rng_uniform(r) < 0.5 ? -1.0 : 1.0)
			   : t == TASK_MULTICLASS ? (double)(i % K)
						  : 4.0 * rng_uniform(r) - 2.0;
		dt->grp[i] = (uint32_t)(i % G);
		dt->row_ptr[i] = nnz;
		for (size_t j = 0; j < D; j++)
			if (row[j] != 0.0) {
				dt->col[nnz] = (uint32_t)j;
				dt->val[nnz++] = row[j];
			}
	}
	dt->row_ptr[N] = nnz;
	dt->dense = (struct dataset){ .n = N,
				      .d = D,
				      .layout = DATA_DENSE,
				      .x = dt->x,
				      .y = dt->y,
				      .group = dt->grp,
				      .n_groups = G,
				      .n_classes = t == TASK_MULTICLASS ? K : 0 };
	dt->csr = dt->dense;
	dt->csr.layout = DATA_CSR;
	dt->csr.x = NULL;
	dt->csr.row_ptr = dt->row_ptr;
	dt->csr.col = dt->col;
	dt->csr.val = dt->val;
}

static void
build(struct objective *o, const struct objective_ops *ops, const struct objective_params *p,
      const struct data_schema *s)
{
	struct err e = { 0 };

	ck_assert_msg(objective_init(o, ops, p, s, &e) == ERR_OK, "%s: %s", ops->name, e.msg);
}

/* Parameter variant v (0..11): intercept x {none, ridge, elastic net} x
 * {unweighted, class prior and group proportions}. */
static void
variant(struct objective_params *p, const struct objective_ops *ops, enum task t, int v)
{
	objective_params_default(p);
	p->intercept = v & 1;
	if ((v >> 1) % 3 >= 1)
		p->ridge = 0.3;
	if ((v >> 1) % 3 == 2)
		p->l1 = 0.07;
	if (v >= 6) {
		if (t != TASK_REGRESSION) {
			size_t n = t == TASK_MULTICLASS ? K : 2;

			p->n_class_prior = n;
			for (size_t k = 0; k < n; k++)
				p->class_prior[k] = (double)(k + 1) * 2.0 / (double)(n * (n + 1));
		}
		p->n_group_proportions = G;
		p->group_proportions[0] = 0.25;
		p->group_proportions[1] = 0.75;
	}
	if (ops->params & (1u << OBJ_P_HUBER_DELTA))
		p->huber_delta = 0.4;
}

/* ---- registry ---- */

START_TEST(test_registry)
{
	static const char *const names[NOBJ] = { "logistic", "least_squares", "hinge", "huber",
						 "multiclass_logistic" };

	/* The minimisation objectives come first (the ones here, then
	 * log_optimal_portfolio, tests/algorithms/test_portfolio.c); saddle
	 * ones follow (tests/algorithms/test_saddle.c). */
	ck_assert_uint_ge(objective_count(), NOBJ + 1);
	ck_assert_str_eq(objective_at(NOBJ)->name, "log_optimal_portfolio");
	for (size_t i = NOBJ + 1; i < objective_count(); i++) {
		const struct objective_ops *o = objective_at(i);

		/* The value-only losses (objectives/zeroth_order.c) follow the
		 * gradient ones; they have no derivative. */
		if (o->kind == OBJECTIVE_MINIMIZE && o->value_only) {
			ck_assert(o->dphi == NULL && o->multi == NULL);
			continue;
		}
		/* Each kind carries exactly its own table. */
		ck_assert(o->kind != OBJECTIVE_MINIMIZE);
		ck_assert((o->saddle != NULL) == (o->kind == OBJECTIVE_SADDLE));
		ck_assert((o->vi != NULL) == (o->kind == OBJECTIVE_OPERATOR));
	}
	ck_assert(objective_find("bilinear_vi")->kind == OBJECTIVE_OPERATOR);
	for (size_t i = 0; i < NOBJ; i++) {
		const struct objective_ops *o = objective_find(names[i]);

		ck_assert_ptr_nonnull(o);
		ck_assert_ptr_eq(objective_at(i), o);
		ck_assert(o->doc != NULL && strlen(o->doc) > 80);
		ck_assert(strstr(o->doc, "Tasks") != NULL && strstr(o->doc, "Params") != NULL);
		ck_assert(o->tasks != 0 && o->constants != NULL);
		ck_assert((o->multi != NULL) != (o->phi != NULL && o->dphi != NULL));
		ck_assert(o->params & (1u << OBJ_P_INTERCEPT));
		ck_assert(o->params & (1u << OBJ_P_RIDGE));
		ck_assert(o->params & (1u << OBJ_P_L1));
		ck_assert(o->kind == OBJECTIVE_MINIMIZE && o->saddle == NULL && o->vi == NULL);
	}
	ck_assert_ptr_null(objective_at(objective_count()));
	ck_assert_ptr_null(objective_find("nope"));
	ck_assert_ptr_null(objective_find(NULL));
	ck_assert(!objective_find("hinge")->smooth);
	ck_assert_str_eq(objective_param_name(OBJ_P_GROUP_PROPORTIONS), "group_proportions");
	ck_assert_ptr_null(objective_param_name(OBJ_P__COUNT));
}
END_TEST

/* ---- gradients ---- */

/* A w with no coordinate near 0 (the l1 kink) and no record near a
 * hinge or huber kink. */
static void
random_w(struct rng *r, double *w, size_t dim)
{
	for (size_t j = 0; j < dim; j++) {
		w[j] = 0.8 * gauss(r);
		if (fabs(w[j]) < 0.05)
			w[j] = w[j] < 0 ? -0.05 : 0.05;
	}
}

static bool
near_kink(const struct objective *o, const struct dataset *ds, size_t i, const double *w)
{
	double z;

	if (o->ops->multi != NULL)
		return false;
	z = data_row_dot(ds, i, w) + (o->p.intercept ? w[o->d] : 0.0);
	if (strcmp(o->ops->name, "hinge") == 0)
		return fabs(1.0 - ds->y[i] * z) < 1e-3;
	if (strcmp(o->ops->name, "huber") == 0)
		return fabs(fabs(z - ds->y[i]) - o->delta) < 1e-3;
	return false;
}

START_TEST(test_gradients_match_finite_differences)
{
	const struct objective_ops *ops = objective_at((size_t)_i);
	enum task t = task_of(ops);
	struct data_schema s = schema_for(t, D);
	struct data *dt = calloc(1, sizeof(*dt));
	struct rng r;
	int checked = 0;

	ck_assert_ptr_nonnull(dt);
	rng_splitmix_init(&r, 0xfd + (uint64_t)_i);
	data_init(dt, t, &r);
	for (int v = 0; v < 12; v++) {
		struct objective_params p;
		struct objective o;
		double w[MAXD], g[MAXD], gc[MAXD], gr[MAXD], wp[MAXD], lv, lc;

		variant(&p, ops, t, v);
		build(&o, ops, &p, &s);
		ck_assert_uint_eq(o.dim,
				  (D + (size_t)p.intercept) * (t == TASK_MULTICLASS ? K : 1));
		for (int rep = 0; rep < 4; rep++) {
			random_w(&r, w, o.dim);
			for (size_t i = 0; i < N; i++) {
				if (near_kink(&o, &dt->dense, i, w))
					continue;
				memset(g, 0, sizeof(g));
				memset(gc, 0, sizeof(gc));
				lv = objective_grad(&o, &dt->dense, i, w, 1.0, g);
				lc = objective_grad(&o, &dt->csr, i, w, 1.0, gc);
				ck_assert(fabs(lv - objective_value(&o, &dt->dense, i, w)) <=
					  1e-12);
				ck_assert(fabs(lv - lc) <= 1e-12 * (1.0 + fabs(lv)));
				ck_assert(fabs(objective_value(&o, &dt->csr, i, w) - lv) <=
					  1e-12 * (1.0 + fabs(lv)));
				for (size_t j = 0; j < o.dim; j++) {
					double h = 1e-6, fd;

					ck_assert_msg(fabs(g[j] - gc[j]) <= 1e-12,
						      "%s: dense and CSR differ", ops->name);
					memcpy(wp, w, sizeof(wp));
					wp[j] = w[j] + h;
					fd = objective_value(&o, &dt->csr, i, wp);
					wp[j] = w[j] - h;
					fd = (fd - objective_value(&o, &dt->csr, i, wp)) /
					     (2.0 * h);
					ck_assert_msg(
						fabs(fd - g[j]) <= 1e-6 * (1.0 + fabs(g[j])),
						"%s v%d row %zu coord %zu: grad %.12g, fd %.12g",
						ops->name, v, i, j, g[j], fd);
				}
				checked++;
			}
			/* The regularizer, on its own. */
			memset(gr, 0, sizeof(gr));
			objective_reg_grad(&o, w, 1.0, gr);
			for (size_t j = 0; j < o.dim; j++) {
				double h = 1e-6, fd;

				memcpy(wp, w, sizeof(wp));
				wp[j] = w[j] + h;
				fd = objective_reg_value(&o, wp);
				wp[j] = w[j] - h;
				fd = (fd - objective_reg_value(&o, wp)) / (2.0 * h);
				ck_assert_msg(fabs(fd - gr[j]) <= 1e-7, "%s v%d: reg grad %zu",
					      ops->name, v, j);
				if (p.intercept && j >= o.d * o.n_out)
					ck_assert(gr[j] ==
						  0.0); /* the intercept is not penalised */
			}
		}
	}
	ck_assert_int_gt(checked, 400);
	free(dt);
}
END_TEST

/* The batch gradient is the sum of the per-record ones, over an index or
 * rows 0..m-1, dense or CSR; a finite clip caps each record's norm. */
START_TEST(test_batch_grad)
{
	const struct objective_ops *ops = objective_at((size_t)_i);
	enum task t = task_of(ops);
	struct data_schema s = schema_for(t, D);
	struct data *dt = calloc(1, sizeof(*dt));
	struct rng r;
	const size_t idx[5] = { 7, 2, 11, 2, 0 };

	ck_assert_ptr_nonnull(dt);
	rng_splitmix_init(&r, 0xba7c + (uint64_t)_i);
	data_init(dt, t, &r);
	for (int v = 0; v < 12; v++) {
		struct objective_params p;
		struct objective o;
		double w[MAXD], want[MAXD] = { 0 }, got[MAXD] = { 0 }, gotc[MAXD] = { 0 };
		double one[MAXD], clipped[MAXD];

		variant(&p, ops, t, v);
		build(&o, ops, &p, &s);
		random_w(&r, w, o.dim);
		for (size_t k = 0; k < 5; k++)
			(void)objective_grad(&o, &dt->dense, idx[k], w, 1.0, want);
		objective_batch_grad(&o, &dt->dense, idx, 5, w, INFINITY, got);
		objective_batch_grad(&o, &dt->csr, idx, 5, w, INFINITY, gotc);
		for (size_t j = 0; j < o.dim; j++) {
			ck_assert_msg(fabs(got[j] - want[j]) <= 1e-12, "%s: batch != sum",
				      ops->name);
			ck_assert(fabs(gotc[j] - want[j]) <= 1e-12);
		}
		memset(want, 0, sizeof(want));
		memset(got, 0, sizeof(got));
		for (size_t i = 0; i < N; i++)
			(void)objective_grad(&o, &dt->csr, i, w, 1.0, want);
		objective_batch_grad(&o, &dt->csr, NULL, N, w, 1e300, got);
		for (size_t j = 0; j < o.dim; j++)
			ck_assert(fabs(got[j] - want[j]) <= 1e-12);
		/* The clip: one record at a time. */
		for (size_t i = 0; i < N; i++) {
			double n1, c = 0.05;

			memset(one, 0, sizeof(one));
			memset(clipped, 0, sizeof(clipped));
			objective_batch_grad(&o, &dt->dense, &i, 1, w, INFINITY, one);
			objective_batch_grad(&o, &dt->dense, &i, 1, w, c, clipped);
			n1 = norm2(one, o.dim);
			ck_assert(norm2(clipped, o.dim) <= c * (1.0 + 1e-12));
			for (size_t j = 0; j < o.dim; j++)
				ck_assert(fabs(clipped[j] - one[j] * fmin(1.0, c / n1)) <= 1e-14);
		}
	}
	free(dt);
}
END_TEST

/* ---- constants ---- */

static struct constraint
random_set(struct rng *r, enum constraint_kind k)
{
	struct constraint c = { .kind = k };

	c.radius = 0.2385 + 3.0 * rng_uniform(r);
	c.lo = -2.0 * rng_uniform(r) - 0.01;
	c.hi = c.lo + 0.05 + 3.0 * rng_uniform(r);
	return c;
}

/* A random point of the set; every third one a vertex-like extreme. */
static void
random_feasible(struct rng *r, const struct constraint *c, double *w, size_t dim, int k)
{
	double scratch[MAXD];

	for (size_t j = 0; j < dim; j++)
		w[j] = c->kind == CONSTRAINT_BOX ? c->lo + (c->hi - c->lo) * rng_uniform(r)
						 : 3.0 * c->radius * gauss(r);
	if (k % 3 == 0 && c->kind == CONSTRAINT_BOX)
		for (size_t j = 0; j < dim; j++)
			w[j] = rng_uniform(r) < 0.5 ? c->lo : c->hi;
	constraint_project(c, w, dim, scratch);
}

/* A row on the boundary of the declared bounds: ||x|| = X (clipped to
 * linf), or along u when u is not NULL. */
static void
boundary_row(struct rng *r, const struct bounds *b, const double *u, double *x, size_t d)
{
	double n2;

	for (size_t j = 0; j < d; j++)
		x[j] = u != NULL ? u[j] : gauss(r);
	n2 = norm2(x, d);
	if (n2 == 0.0)
		x[0] = n2 = 1.0;
	for (size_t j = 0; j < d; j++) {
		x[j] *= (isnan(b->feature_l2) ? 10.0 * b->feature_linf : b->feature_l2) / n2;
		if (!isnan(b->feature_linf))
			x[j] = fmax(-b->feature_linf, fmin(b->feature_linf, x[j]));
	}
	if (isnan(b->feature_l2)) /* linf only: every coordinate at the bound */
		for (size_t j = 0; j < d; j++)
			x[j] = x[j] < 0 ? -b->feature_linf : b->feature_linf;
}

/* The worse label for w on row x. */
static double
worse_label(const struct objective *o, const double *w, const double *x, double ybound)
{
	double s[K] = { 0 };
	struct dataset one = { .n = 1, .d = o->d, .x = x };
	size_t worst = 0;

	if (o->task == TASK_MULTICLASS) {
		for (size_t k = 0; k < K; k++)
			s[k] = o->p.intercept ? w[o->d * K + k] : 0.0;
		data_row_matvec(&one, 0, w, K, s);
		for (size_t k = 1; k < K; k++)
			if (s[k] < s[worst])
				worst = k;
		return (double)worst;
	}
	s[0] = data_row_dot(&one, 0, w) + (o->p.intercept ? w[o->d] : 0.0);
	return s[0] > 0 ? -ybound : ybound;
}

START_TEST(test_constants_never_exceeded)
{
	static const enum constraint_kind kinds[] = { CONSTRAINT_L2_BALL, CONSTRAINT_L1_BALL,
						      CONSTRAINT_SIMPLEX, CONSTRAINT_BOX };
	const struct objective_ops *ops = objective_at((size_t)_i);
	enum task t = task_of(ops);
	struct rng r;
	long samples = 0;

	rng_splitmix_init(&r, 0xc0 + (uint64_t)_i);
	for (size_t ki = 0; ki < 4; ki++)
		for (int trial = 0; trial < 24; trial++) {
			size_t d = 1 + (size_t)rng_below(&r, D);
			struct data_schema s = schema_for(t, d);
			struct constraint c = random_set(&r, kinds[ki]);
			struct objective_params p;
			struct objective o;
			struct objective_constants k;
			struct err e = { 0 };

			variant(&p, ops, t, trial % 12);
			s.bounds.feature_l2 = trial % 3 == 1 ? NAN : 0.2385 + rng_uniform(&r);
			s.bounds.feature_linf = trial % 3 == 0 ? NAN : 0.05 + 0.5 * rng_uniform(&r);
			if (t == TASK_REGRESSION)
				s.bounds.label = 0.5212 + 2.0 * rng_uniform(&r);
			build(&o, ops, &p, &s);
			ck_assert_msg(objective_constants(&o, &s, &c, &k, &e) == ERR_OK, "%s: %s",
				      ops->name, e.msg);
			ck_assert(k.lipschitz_l2 > 0 && k.lipschitz_linf > 0);
			ck_assert(k.lipschitz_linf <= k.lipschitz_l2 * SLACK);
			ck_assert(k.strong_convexity == (p.intercept ? 0.0 : p.ridge));
			ck_assert(ops->smooth == isfinite(k.smooth_l2));

			for (int n = 0; n < 300; n++) {
				double w[MAXD], w2[MAXD], x[D], g1[MAXD] = { 0 }, g2[MAXD] = { 0 };
				double gr[MAXD] = { 0 }, y, val, dw2, dw1;
				uint32_t grp = (uint32_t)rng_below(&r, G);
				struct dataset one = { .n = 1,
						       .d = d,
						       .x = x,
						       .y = &y,
						       .group = &grp,
						       .n_groups = G };

				random_feasible(&r, &c, w, o.dim, n);
				if (n % 4 == 1) /* nearby: the local smoothness */
					for (size_t j = 0; j < o.dim; j++)
						w2[j] = w[j] + 1e-3 * gauss(&r);
				else
					random_feasible(&r, &c, w2, o.dim, n + 1);
				if (n % 4 == 1) {
					double scratch[MAXD];

					constraint_project(&c, w2, o.dim, scratch);
				}
				boundary_row(&r, &s.bounds, n % 2 ? w : NULL, x, d);
				y = worse_label(&o, w, x,
						t == TASK_REGRESSION ? s.bounds.label : 1.0);
				val = objective_grad(&o, &one, 0, w, 1.0, g1);
				(void)objective_grad(&o, &one, 0, w2, 1.0, g2);
				ck_assert_msg(norm2(g1, o.dim) <= k.lipschitz_l2 * SLACK,
					      "%s: ||g||_2 %.17g > %.17g", ops->name,
					      norm2(g1, o.dim), k.lipschitz_l2);
				ck_assert_msg(norminf(g1, o.dim) <= k.lipschitz_linf * SLACK,
					      "%s: ||g||_inf %.17g > %.17g", ops->name,
					      norminf(g1, o.dim), k.lipschitz_linf);
				ck_assert_msg(val >= 0.0 && val <= k.value_bound * SLACK,
					      "%s: value %.17g > %.17g", ops->name, val,
					      k.value_bound);
				objective_reg_grad(&o, w, 1.0, gr);
				ck_assert(norm2(gr, o.dim) <= k.reg_lipschitz_l2 * SLACK + 1e-15);
				for (size_t j = 0; j < o.dim; j++)
					g1[j] -= g2[j];
				for (size_t j = 0; j < o.dim; j++)
					w2[j] -= w[j];
				dw2 = norm2(w2, o.dim);
				dw1 = norm1(w2, o.dim);
				if (ops->smooth && dw2 > 0.0) {
					ck_assert_msg(norm2(g1, o.dim) <=
							      k.smooth_l2 * dw2 * SLACK + 1e-14,
						      "%s: beta2 exceeded", ops->name);
					ck_assert_msg(norminf(g1, o.dim) <=
							      k.smooth_l1 * dw1 * SLACK + 1e-14,
						      "%s: beta1 exceeded", ops->name);
				}
				samples++;
			}
		}
	ck_assert_int_gt(samples, 20000);
}
END_TEST

/*
 * The bounds are attained, or nearly, by constructions: an l2 ball of
 * radius R = 30, ||x|| = 1 along e_1, w = -R e_1 (multiclass: the true
 * class's column -R/sqrt(2) e_1, another's +R/sqrt(2) e_1) and label +1
 * (+Y): the margin sits at -R.  Smoothness at w = 0 along x (logistic:
 * phi''(0) = 1/4, attained; multiclass at uniform p: 2/3 of the bound).
 */
START_TEST(test_constants_attained)
{
	const struct objective_ops *ops = objective_at((size_t)_i);
	enum task t = task_of(ops);
	struct data_schema s = schema_for(t, D);
	struct constraint c = { .kind = CONSTRAINT_L2_BALL, .radius = 30.0 };
	struct objective_params p;
	struct objective o;
	struct objective_constants k;
	double w[MAXD] = { 0 }, x[D] = { 1.0 }, y, g[MAXD] = { 0 }, g0[MAXD] = { 0 }, val;
	double h = 1e-4, wh[MAXD] = { 0 };
	struct dataset one = { .n = 1, .d = D, .x = x, .y = &y };

	variant(&p, ops, t, 0);
	build(&o, ops, &p, &s);
	ck_assert_int_eq(objective_constants(&o, &s, &c, &k, NULL), ERR_OK);
	if (t == TASK_MULTICLASS) {
		y = 0.0;
		w[0] = -30.0 / sqrt(2.0); /* W[0 K + 0] */
		w[1] = 30.0 / sqrt(2.0);  /* W[0 K + 1] */
	} else {
		y = t == TASK_REGRESSION ? 2.0 : 1.0;
		w[0] = -30.0;
	}
	val = objective_grad(&o, &one, 0, w, 1.0, g);
	printf("%-20s L2 %.4f of %.4f, Linf %.4f of %.4f, value %.4f of %.4f\n", ops->name,
	       norm2(g, o.dim), k.lipschitz_l2, norminf(g, o.dim), k.lipschitz_linf, val,
	       k.value_bound);
	ck_assert_msg(norm2(g, o.dim) >= 0.99 * k.lipschitz_l2, "%s: L2 loose", ops->name);
	ck_assert_msg(norminf(g, o.dim) >= 0.99 * k.lipschitz_linf, "%s: Linf loose", ops->name);
	ck_assert_msg(val >= 0.9 * k.value_bound, "%s: value bound loose", ops->name);
	if (!ops->smooth)
		return;
	memset(w, 0, sizeof(w));
	if (t == TASK_MULTICLASS) {
		wh[0] = h / sqrt(2.0); /* along x (r, -r, 0) */
		wh[1] = -h / sqrt(2.0);
	} else {
		wh[0] = h;
	}
	if (t == TASK_REGRESSION)
		y = 0.0;
	(void)objective_grad(&o, &one, 0, w, 1.0, g0);
	memset(g, 0, sizeof(g));
	(void)objective_grad(&o, &one, 0, wh, 1.0, g);
	for (size_t j = 0; j < o.dim; j++)
		g[j] -= g0[j];
	printf("%-20s beta2 %.4f of %.4f\n", ops->name, norm2(g, o.dim) / h, k.smooth_l2);
	ck_assert_msg(norm2(g, o.dim) / h >= (t == TASK_MULTICLASS ? 0.66 : 0.99) * k.smooth_l2,
		      "%s: beta2 loose", ops->name);
}
END_TEST

/* The weights enter the constants as 1/(K pi_min) * 1/(G pi_min), and a
 * record's loss as 1/(K pi_y) * 1/(G pi_g). */
START_TEST(test_weights)
{
	const struct objective_ops *ops = objective_find("logistic");
	struct data_schema s = schema_for(TASK_BINARY, D);
	struct constraint c = { .kind = CONSTRAINT_L2_BALL, .radius = 2.0 };
	struct objective_params p;
	struct objective plain, wt;
	struct objective_constants k0, k1;
	struct data dt;
	struct rng r;
	double w[MAXD];

	rng_splitmix_init(&r, 0x3e16);
	data_init(&dt, TASK_BINARY, &r);
	objective_params_default(&p);
	build(&plain, ops, &p, &s);
	p.n_class_prior = 2;
	p.class_prior[0] = 0.8; /* -1 */
	p.class_prior[1] = 0.2; /* +1 */
	p.n_group_proportions = 2;
	p.group_proportions[0] = 0.4;
	p.group_proportions[1] = 0.6;
	build(&wt, ops, &p, &s);
	ck_assert_int_eq(objective_constants(&plain, &s, &c, &k0, NULL), ERR_OK);
	ck_assert_int_eq(objective_constants(&wt, &s, &c, &k1, NULL), ERR_OK);
	ck_assert_double_eq_tol(k1.max_weight, 1.0 / (2 * 0.2) / (2 * 0.4), 1e-15);
	ck_assert_double_eq_tol(k1.lipschitz_l2, k0.lipschitz_l2 * k1.max_weight, 1e-14);
	ck_assert_double_eq_tol(k1.smooth_l2, k0.smooth_l2 * k1.max_weight, 1e-14);
	ck_assert_double_eq_tol(k1.value_bound, k0.value_bound * k1.max_weight, 1e-12);
	random_w(&r, w, D);
	for (size_t i = 0; i < N; i++) {
		double om = 1.0 / (2 * (dt.y[i] > 0 ? 0.2 : 0.8)) /
			    (2 * p.group_proportions[dt.grp[i]]);

		ck_assert_double_eq_tol(objective_value(&wt, &dt.dense, i, w),
					om * objective_value(&plain, &dt.dense, i, w), 1e-13);
	}
}
END_TEST

/* ---- validation ---- */

static void
expect_init_refused(const struct objective_ops *ops, const struct objective_params *p,
		    const struct data_schema *s, const char *field)
{
	struct objective o;
	struct err e = { 0 };

	memset(&o, 0x5a, sizeof(o));
	ck_assert_msg(objective_init(&o, ops, p, s, &e) == ERR_INVALID, "%s: %s accepted",
		      ops != NULL ? ops->name : "NULL", field);
	ck_assert_msg(strcmp(e.field, field) == 0, "field '%s', want '%s'", e.field, field);
	ck_assert_msg(strstr(e.msg, field) != NULL, "message '%s' does not name %s", e.msg, field);
	ck_assert(o.dim == 0x5a5a5a5a5a5a5a5aull); /* untouched */
}

START_TEST(test_params_refused)
{
	const struct objective_ops *lg = objective_find("logistic");
	const struct objective_ops *hb = objective_find("huber");
	const struct objective_ops *mc = objective_find("multiclass_logistic");
	struct data_schema bin = schema_for(TASK_BINARY, D), reg = schema_for(TASK_REGRESSION, D);
	struct data_schema mcs = schema_for(TASK_MULTICLASS, D);
	const double bad[] = { -1.0, NAN, INFINITY, -INFINITY };
	struct objective_params p;

	objective_params_default(&p);
	expect_init_refused(NULL, &p, &bin, "objective.name");
	expect_init_refused(lg, &p, &reg, "objective.name");
	mcs.n_classes = 0;
	expect_init_refused(mc, &p, &mcs, "objective.name");
	mcs.n_classes = K;
	for (size_t b = 0; b < 4; b++) {
		objective_params_default(&p);
		p.ridge = bad[b];
		expect_init_refused(lg, &p, &bin, "objective.ridge");
		objective_params_default(&p);
		p.l1 = bad[b];
		expect_init_refused(lg, &p, &bin, "objective.l1");
		objective_params_default(&p);
		p.huber_delta = b == 1 ? 0.0 : bad[b];
		expect_init_refused(hb, &p, &reg, "objective.huber_delta");
	}
	objective_params_default(&p);
	p.huber_delta = 1.0;
	expect_init_refused(lg, &p, &bin, "objective.huber_delta");

	objective_params_default(&p);
	p.n_class_prior = 3; /* binary needs 2 */
	p.class_prior[0] = p.class_prior[1] = p.class_prior[2] = 1.0 / 3.0;
	expect_init_refused(lg, &p, &bin, "objective.class_prior");
	expect_init_refused(hb, &p, &reg, "objective.class_prior");
	p.n_class_prior = 2;
	p.class_prior[0] = 0.5;
	p.class_prior[1] = 0.5 + 1e-8; /* sum off by more than 1e-9 */
	expect_init_refused(lg, &p, &bin, "objective.class_prior");
	p.class_prior[0] = 1.5;
	p.class_prior[1] = -0.5;
	expect_init_refused(lg, &p, &bin, "objective.class_prior");
	p.class_prior[0] = 0.5;
	p.class_prior[1] = 0.5;
	expect_init_refused(mc, &p, &mcs, "objective.class_prior"); /* K = 3 */

	objective_params_default(&p);
	p.n_group_proportions = 2;
	p.group_proportions[0] = 0.3;
	p.group_proportions[1] = 0.7;
	bin.n_groups = 0;
	expect_init_refused(lg, &p, &bin, "objective.group_proportions");
	bin.n_groups = 3;
	expect_init_refused(lg, &p, &bin, "objective.group_proportions");
	bin.n_groups = 2;
	p.group_proportions[1] = NAN;
	expect_init_refused(lg, &p, &bin, "objective.group_proportions");
}
END_TEST

START_TEST(test_constants_refused)
{
	const struct objective_ops *ls = objective_find("least_squares");
	const struct objective_ops *lg = objective_find("logistic");
	const struct objective_ops *hb = objective_find("huber");
	struct data_schema s = schema_for(TASK_REGRESSION, D);
	struct constraint ball = { .kind = CONSTRAINT_L2_BALL, .radius = 3.0 };
	struct constraint open = { .kind = CONSTRAINT_L2_BALL, .radius = INFINITY };
	struct objective_params p;
	struct objective o;
	struct objective_constants k;
	struct err e;

	objective_params_default(&p);
	build(&o, ls, &p, &s);
	memset(&k, 0x5a, sizeof(k));
	s.bounds.label = NAN;
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(objective_constants(&o, &s, &ball, &k, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "bounds.label");
	s.bounds.label_lo = -1.0; /* a label range does as well */
	s.bounds.label_hi = 3.0;
	ck_assert_int_eq(objective_constants(&o, &s, &ball, &k, &e), ERR_OK);
	ck_assert_double_eq_tol(k.lipschitz_l2, 1.0 * (3.0 + 3.0), 1e-15);
	s.bounds.label = 2.0;
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(objective_constants(&o, &s, &open, &k, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x");
	s.bounds.feature_l2 = NAN;
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(objective_constants(&o, &s, &ball, &k, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "bounds.feature_l2");
	s.bounds.feature_l2 = 1.0;
	s.bounds.label = -2.0;
	ck_assert_int_eq(objective_constants(&o, &s, &ball, &k, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "bounds.label");
	s.bounds.label = 2.0;

	/* huber and logistic need neither a bounded set nor (huber) a label */
	build(&o, hb, &p, &s);
	s.bounds.label = NAN;
	ck_assert_int_eq(objective_constants(&o, &s, &open, &k, &e), ERR_OK);
	ck_assert(k.lipschitz_l2 == 1.0 && isinf(k.value_bound));
	s = schema_for(TASK_BINARY, D);
	build(&o, lg, &p, &s);
	ck_assert_int_eq(objective_constants(&o, &s, &open, &k, &e), ERR_OK);
	ck_assert(k.lipschitz_l2 == 1.0 && isinf(k.value_bound) && k.smooth_l2 == 0.25);
	/* an intercept: sqrt(X^2 + 1), and no strong convexity from ridge */
	p.intercept = true;
	p.ridge = 0.5;
	build(&o, lg, &p, &s);
	ck_assert_int_eq(objective_constants(&o, &s, &ball, &k, &e), ERR_OK);
	ck_assert_double_eq_tol(k.lipschitz_l2, sqrt(2.0), 1e-15);
	ck_assert(k.strong_convexity == 0.0);
	ck_assert_double_eq_tol(k.reg_lipschitz_l2, 0.5 * 3.0, 1e-15);
	p.intercept = false;
	build(&o, lg, &p, &s);
	ck_assert_int_eq(objective_constants(&o, &s, &ball, &k, &e), ERR_OK);
	ck_assert(k.strong_convexity == 0.5);
}
END_TEST

/* ---- values ---- */

START_TEST(test_logistic_stable)
{
	const struct objective_ops *o = objective_find("logistic");

	ck_assert_double_eq_tol(o->phi(1000.0, -1.0, 1), 1000.0, 1e-12);
	ck_assert_double_eq_tol(o->phi(-1000.0, 1.0, 1), 1000.0, 1e-12);
	ck_assert(o->phi(1000.0, 1.0, 1) >= 0.0 && o->phi(1000.0, 1.0, 1) < 1e-300);
	ck_assert_double_eq_tol(o->phi(0.0, 1.0, 1), log(2.0), 1e-16);
	ck_assert_double_eq_tol(o->phi(1e-10, 1.0, 1), log(2.0) - 0.5e-10, 1e-20);
	ck_assert(o->dphi(-1000.0, 1.0, 1) == -1.0);
	ck_assert(o->dphi(1000.0, -1.0, 1) == 1.0);
	ck_assert_double_eq_tol(o->dphi(0.0, -1.0, 1), 0.5, 1e-16);
	ck_assert(isfinite(o->phi(-1e308, 1.0, 1)));
}
END_TEST

START_TEST(test_mean_loss_and_accuracy)
{
	const double x[6] = { 1.0, 0.0, 0.5, -0.5, -1.0, 2.0 };
	const double y[3] = { 1.0, -1.0, 1.0 };
	const double w[3] = { 0.3, -0.7, 0.1 };
	struct dataset ds = { .n = 3, .d = 2, .x = x, .y = y };
	struct data_schema s = schema_for(TASK_BINARY, 2);
	struct objective_params p;
	struct objective ls, hinge;
	double want = 0.0;
	int right = 0;

	objective_params_default(&p);
	p.intercept = true;
	p.ridge = 0.2;
	p.l1 = 0.1;
	build(&ls, objective_find("least_squares"), &p, &s);
	build(&hinge, objective_find("hinge"), &p, &s);
	for (int i = 0; i < 3; i++) {
		double z = w[0] * x[2 * i] + w[1] * x[2 * i + 1] + w[2];

		want += 0.5 * (z - y[i]) * (z - y[i]) / 3.0;
		right += (z > 0 ? 1.0 : -1.0) == y[i];
	}
	want += 0.1 * (0.09 + 0.49) + 0.1 * (0.3 + 0.7); /* the bias is not penalised */
	ck_assert_double_eq_tol(objective_mean_loss(&ls, &ds, w), want, 1e-15);
	ck_assert_double_eq_tol(objective_accuracy(&hinge, &ds, w), right / 3.0, 1e-15);
	ds.n = 0;
	ck_assert(isnan(objective_mean_loss(&ls, &ds, w)));
}
END_TEST

START_TEST(test_multiclass_accuracy_and_layout)
{
	/* d = 2, K = 3, W feature-major: class k's weights at w[k], w[3 + k]. */
	const double x[4] = { 1.0, 0.0, 0.0, 1.0 };
	const double y[2] = { 2.0, 1.0 };
	const double w[6] = { 0.0, 0.1, 0.9, 0.0, 0.8, 0.1 };
	struct dataset ds = { .n = 2, .d = 2, .x = x, .y = y, .n_classes = 3 };
	struct data_schema s = schema_for(TASK_MULTICLASS, 2);
	struct objective_params p;
	struct objective o;
	double want;

	objective_params_default(&p);
	build(&o, objective_find("multiclass_logistic"), &p, &s);
	ck_assert_uint_eq(o.dim, 6);
	ck_assert(objective_accuracy(&o, &ds, w) == 1.0);
	want = log(exp(0.0) + exp(0.1) + exp(0.9)) - 0.9;
	ck_assert_double_eq_tol(objective_value(&o, &ds, 0, w), want, 1e-15);
}
END_TEST

/* sign(0) = 0 in the l1 subgradient. */
START_TEST(test_l1_subgradient_at_zero)
{
	struct data_schema s = schema_for(TASK_BINARY, 3);
	struct objective_params p;
	struct objective o;
	const double w[3] = { 0.0, -2.0, 0.5 };
	double g[3] = { 0 };

	objective_params_default(&p);
	p.l1 = 0.25;
	p.ridge = 1.0;
	build(&o, objective_find("logistic"), &p, &s);
	objective_reg_grad(&o, w, 2.0, g);
	ck_assert(g[0] == 0.0);
	ck_assert_double_eq_tol(g[1], 2.0 * (-2.0 - 0.25), 1e-15);
	ck_assert_double_eq_tol(g[2], 2.0 * (0.5 + 0.25), 1e-15);
	ck_assert_double_eq_tol(objective_reg_value(&o, w), 0.5 * 4.25 + 0.25 * 2.5, 1e-15);
}
END_TEST

/* ---- the intercept's feature c (struct objective icpt_scale) ---- */

/*
 * Training with the intercept's feature c in the coordinates u (the
 * intercept entries divided by c) is the same model: equal values and
 * accuracy, equal feature gradients, intercept gradients times c, and a
 * batch clip on the norm with c^2 in place of 1.
 */
START_TEST(test_intercept_scale)
{
	const struct objective_ops *ops = objective_at((size_t)_i);
	enum task t = task_of(ops);
	struct data_schema s = schema_for(t, D);
	struct data *dt = calloc(1, sizeof(*dt));
	const double c = 0.3;
	struct rng r;

	ck_assert_ptr_nonnull(dt);
	rng_splitmix_init(&r, 0x1c97 + (uint64_t)_i);
	data_init(dt, t, &r);
	for (int v = 1; v < 12; v += 2) {
		struct objective_params p;
		struct objective o, oc;
		double w[MAXD], u[MAXD];
		size_t from;

		variant(&p, ops, t, v);
		build(&o, ops, &p, &s);
		oc = o;
		oc.icpt_scale = c;
		from = o.d * o.n_out;
		random_w(&r, w, o.dim);
		memcpy(u, w, sizeof(w));
		for (size_t j = from; j < o.dim; j++)
			u[j] = w[j] / c;
		for (size_t i = 0; i < N; i++) {
			double gx[MAXD] = { 0 }, gu[MAXD] = { 0 }, bu[MAXD] = { 0 },
			       cl[MAXD] = { 0 };
			double clip = 0.05, nu;

			ck_assert(fabs(objective_value(&o, &dt->dense, i, w) -
				       objective_value(&oc, &dt->dense, i, u)) <= 1e-12);
			(void)objective_grad(&o, &dt->dense, i, w, 1.0, gx);
			(void)objective_grad(&oc, &dt->dense, i, u, 1.0, gu);
			for (size_t j = 0; j < o.dim; j++)
				ck_assert_msg(fabs(gu[j] - (j < from ? 1.0 : c) * gx[j]) <= 1e-12,
					      "%s v%d: coordinate %zu", ops->name, v, j);
			objective_batch_grad(&oc, &dt->csr, &i, 1, u, INFINITY, bu);
			objective_batch_grad(&oc, &dt->csr, &i, 1, u, clip, cl);
			nu = norm2(gu, o.dim);
			for (size_t j = 0; j < o.dim; j++) {
				ck_assert(fabs(bu[j] - gu[j]) <= 1e-12);
				ck_assert(fabs(cl[j] - gu[j] * fmin(1.0, clip / nu)) <= 1e-13);
			}
		}
		if (t != TASK_REGRESSION)
			ck_assert_double_eq(objective_accuracy(&o, &dt->dense, w),
					    objective_accuracy(&oc, &dt->dense, u));
	}
	free(dt);
}
END_TEST

/*
 * objective_grad_origin_l2 bounds ||grad(omega loss)(0)|| for every row on
 * the declared bound and every label, and a row on the bound with the
 * extreme label attains it (unweighted): logistic X~/2, least squares X~ Y,
 * hinge X~, huber X~ min(Y, delta), multiclass X~ sqrt((K - 1)/K).
 */
START_TEST(test_grad_origin)
{
	const struct objective_ops *ops = objective_at((size_t)_i);
	enum task t = task_of(ops);
	struct data_schema s = schema_for(t, D);
	struct rng r;

	rng_splitmix_init(&r, 0x0917 + (uint64_t)_i);
	for (int v = 0; v < 12; v++) {
		for (int ci = 0; ci < 2; ci++) {
			struct objective_params p;
			struct objective o;
			struct objective_constants k;
			struct constraint ball = { .kind = CONSTRAINT_L2_BALL, .radius = 3.0 };
			struct err e = { 0 };
			double b, x[D], y, zero[MAXD] = { 0 }, most = 0.0;
			struct dataset one = { .n = 1,
					       .d = D,
					       .layout = DATA_DENSE,
					       .x = x,
					       .y = &y,
					       .n_groups = G,
					       .n_classes = t == TASK_MULTICLASS ? K : 0 };
			uint32_t grp = 0;

			variant(&p, ops, t, v);
			build(&o, ops, &p, &s);
			o.icpt_scale = ci == 0 ? 1.0 : 0.3;
			ck_assert_int_eq(objective_grad_origin_l2(&o, &s, &b, &e), ERR_OK);
			ck_assert_int_eq(objective_constants(&o, &s, &ball, &k, &e), ERR_OK);
			ck_assert(b <= k.lipschitz_l2 * SLACK);
			one.group = &grp;
			for (int trial = 0; trial < 200; trial++) {
				double g[MAXD] = { 0 };

				for (size_t j = 0; j < D; j++)
					x[j] = gauss(&r);
				{
					double nx = norm2(x, D);

					for (size_t j = 0; j < D; j++)
						x[j] /= nx; /* on the bound feature_l2 = 1 */
				}
				y = t == TASK_BINARY       ? (trial % 2 ? 1.0 : -1.0)
				    : t == TASK_MULTICLASS ? (double)(trial % K)
							   : (trial % 3 == 0   ? 2.0
							      : trial % 3 == 1 ? -2.0
									       : 1.3);
				grp = (uint32_t)(trial % G);
				(void)objective_grad(&o, &one, 0, zero, 1.0, g);
				ck_assert_msg(norm2(g, o.dim) <= b * SLACK, "%s v%d: %g > %g",
					      ops->name, v, norm2(g, o.dim), b);
				most = fmax(most, norm2(g, o.dim));
			}
			if (v < 6) /* unweighted: attained */
				ck_assert_msg(most >= b * (1.0 - 1e-12), "%s v%d: %g < %g",
					      ops->name, v, most, b);
		}
	}
}
END_TEST

static Suite *
objective_suite(void)
{
	Suite *s = suite_create("objective");
	TCase *tc = tcase_create("objective");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_registry);
	tcase_add_loop_test(tc, test_gradients_match_finite_differences, 0, NOBJ);
	tcase_add_loop_test(tc, test_batch_grad, 0, NOBJ);
	tcase_add_loop_test(tc, test_constants_never_exceeded, 0, NOBJ);
	tcase_add_loop_test(tc, test_constants_attained, 0, NOBJ);
	tcase_add_loop_test(tc, test_intercept_scale, 0, NOBJ);
	tcase_add_loop_test(tc, test_grad_origin, 0, NOBJ);
	tcase_add_test(tc, test_weights);
	tcase_add_test(tc, test_params_refused);
	tcase_add_test(tc, test_constants_refused);
	tcase_add_test(tc, test_logistic_stable);
	tcase_add_test(tc, test_mean_loss_and_accuracy);
	tcase_add_test(tc, test_multiclass_accuracy_and_layout);
	tcase_add_test(tc, test_l1_subgradient_at_zero);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(objective_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
