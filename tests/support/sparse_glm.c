/*
 * sparse_glm.c - the l1-geometry test problem (see the header).
 */
#include "sparse_glm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "rng.h"

static void *
must_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p == NULL) {
		fprintf(stderr, "sparse_glm: out of memory\n");
		abort();
	}
	return p;
}

/* Box-Muller from two uniforms (the test's fixed stream). */
static double
std_normal(struct rng *r)
{
	double u = 1.0 - rng_uniform(r), v = rng_uniform(r);

	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* log(1 + e^t), stable. */
static double
softplus(double t)
{
	return fmax(t, 0.0) + log1p(exp(-fabs(t)));
}

void
sparse_glm_init(struct sparse_glm *m, size_t d, size_t k, uint64_t seed)
{
	struct rng r;
	size_t *idx = must_calloc(d, sizeof(*idx));
	double l1 = 0.0;

	memset(m, 0, sizeof(*m));
	m->d = d;
	m->k = k < d ? k : d;
	m->w = must_calloc(d, sizeof(*m->w));
	rng_splitmix_init(&r, seed);
	for (size_t j = 0; j < d; j++)
		idx[j] = j;
	for (size_t j = 0; j < m->k; j++) {
		size_t t = j + (size_t)(rng_uniform(&r) * (double)(d - j)), s;

		if (t >= d)
			t = d - 1;
		s = idx[j];
		idx[j] = idx[t];
		idx[t] = s;
		m->w[idx[j]] = fabs(std_normal(&r)) + 1e-3;
		if (rng_uniform(&r) < 0.5)
			m->w[idx[j]] = -m->w[idx[j]];
		l1 += fabs(m->w[idx[j]]);
	}
	for (size_t j = 0; j < d; j++)
		m->w[j] /= l1;
	free(idx);
}

/* One row uniform on {-1, +1}^d, 64 coordinates per draw. */
static void
row_draw(struct rng *r, double *row, size_t d)
{
	uint64_t bits = 0;

	for (size_t j = 0; j < d; j++) {
		if (j % 64 == 0)
			bits = rng_u64(r);
		row[j] = (bits & 1u) ? 1.0 : -1.0;
		bits >>= 1;
	}
}

void
sparse_glm_rows(struct sparse_glm *m, size_t n, uint64_t seed)
{
	struct rng r;

	free(m->x);
	free(m->y);
	m->x = must_calloc(n * m->d, sizeof(*m->x));
	m->y = must_calloc(n, sizeof(*m->y));
	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < n; i++) {
		double *row = m->x + i * m->d, s = 0.0;

		row_draw(&r, row, m->d);
		for (size_t j = 0; j < m->d; j++)
			s += m->w[j] * row[j];
		m->y[i] = rng_uniform(&r) < 1.0 / (1.0 + exp(-s)) ? 1.0 : -1.0;
	}
	memset(&m->ds, 0, sizeof(m->ds));
	m->ds.n = n;
	m->ds.d = m->d;
	m->ds.layout = DATA_DENSE;
	m->ds.x = m->x;
	m->ds.y = m->y;
}

double
sparse_glm_excess(const struct sparse_glm *m, const double *w, size_t n_eval, uint64_t seed)
{
	struct rng r;
	double *row = must_calloc(m->d, sizeof(*row)), sum = 0.0;

	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < n_eval; i++) {
		double s = 0.0, st = 0.0, p;

		row_draw(&r, row, m->d);
		for (size_t j = 0; j < m->d; j++) {
			s += w[j] * row[j];
			st += m->w[j] * row[j];
		}
		/* E_y[l(s) - l(s*)] with P(y = +1) = p = sigmoid(s*):
		 * p (softplus(-s) - softplus(-s*)) + (1 - p) (softplus(s) - softplus(s*)). */
		p = 1.0 / (1.0 + exp(-st));
		sum += p * (softplus(-s) - softplus(-st)) +
		       (1.0 - p) * (softplus(s) - softplus(st));
	}
	free(row);
	return sum / (double)n_eval;
}

double
sparse_glm_w_l2(const struct sparse_glm *m)
{
	double s = 0.0;

	for (size_t j = 0; j < m->d; j++)
		s += m->w[j] * m->w[j];
	return sqrt(s);
}

bool
sparse_glm_run(const struct sparse_glm *m, const char *alg, double epsilon, double delta,
	       const struct sparse_glm_param *params, size_t n_params, uint64_t seed, double *ret_w,
	       char *msg, size_t msg_len)
{
	const struct alg_ops *a = alg_find(alg);
	struct run_spec *spec = must_calloc(1, sizeof(*spec));
	struct run_plan *plan = must_calloc(1, sizeof(*plan));
	struct err e = { 0 };
	struct rng r;
	bool l2 = strncmp(alg, "dp_sgd.", 7) == 0, ok = false;
	size_t np;

	if (a == NULL) {
		snprintf(msg, msg_len, "no method %s", alg);
		goto out;
	}
	np = alg_param_count(a);
	spec->epsilon = epsilon;
	spec->delta = delta;
	spec->n = m->ds.n;
	spec->mode = ACCOUNTING_BASIC;
	spec->schema.d = m->d;
	spec->schema.task = TASK_BINARY;
	spec->schema.bounds.feature_linf = 1.0;
	spec->schema.bounds.feature_l2 = sqrt((double)m->d);
	spec->schema.bounds.label = NAN;
	spec->schema.bounds.label_lo = spec->schema.bounds.label_hi = NAN;
	spec->x.kind = l2 ? CONSTRAINT_L2_BALL : CONSTRAINT_L1_BALL;
	spec->x.radius = l2 ? sparse_glm_w_l2(m) : 1.0;
	alg_default_params(a, spec->params);
	for (size_t k = 0; k < n_params; k++) {
		size_t j = 0;

		while (j < np && strcmp(a->params[j].name, params[k].name) != 0)
			j++;
		if (j == np) {
			fprintf(stderr, "sparse_glm_run: %s has no parameter %s\n", alg,
				params[k].name);
			abort();
		}
		spec->params[j] = params[k].value;
	}
	if (l2) {
		for (size_t j = 0; j < np; j++)
			if (strcmp(a->params[j].name, "clip") == 0 && spec->params[j] == 0.0)
				spec->params[j] = sqrt((double)m->d);
	}
	if (run_spec_set_objective(spec, objective_find("logistic"), NULL, &e) != ERR_OK ||
	    alg_plan(a, spec, plan, &e) != ERR_OK) {
		snprintf(msg, msg_len, "%s plan: %s (%s)", alg, e.msg, e.field);
		goto out;
	}
	rng_splitmix_init(&r, seed);
	if (alg_run(a, spec, plan, &m->ds, &r, NULL, NULL, ret_w, &e) != ERR_OK) {
		snprintf(msg, msg_len, "%s run: %s", alg, e.msg);
		goto out;
	}
	ok = true;
out:
	free(spec);
	free(plan);
	return ok;
}

static const double tune_steps[] = { 0.0, 0.01, 0.03, 0.1, 0.3, 1.0 };
static const double tune_batch_frac[] = { 0.0, 0.05 };

double
sparse_glm_tune_sgd(size_t d, size_t n, double epsilon, double delta, size_t n_eval, uint64_t seed,
		    struct sparse_glm_param ret_params[3])
{
	struct sparse_glm m;
	double *w = must_calloc(d, sizeof(*w)), best = INFINITY;
	char msg[256];

	sparse_glm_init(&m, d, 10, seed);
	sparse_glm_rows(&m, n, seed + 1);
	ret_params[0] = (struct sparse_glm_param){ "step_size", 0.0 };
	ret_params[1] = (struct sparse_glm_param){ "batch_size", 0.0 };
	ret_params[2] = (struct sparse_glm_param){ "steps", 0.0 };
	for (size_t i = 0; i < sizeof(tune_steps) / sizeof(tune_steps[0]); i++)
		for (size_t j = 0; j < sizeof(tune_batch_frac) / sizeof(tune_batch_frac[0]); j++) {
			struct sparse_glm_param p[3] = {
				{ "step_size", tune_steps[i] },
				{ "batch_size", ceil(tune_batch_frac[j] * (double)n) },
				{ "steps", tune_batch_frac[j] > 0.0 ? 300.0 : 0.0 },
			};
			double ex;

			if (!sparse_glm_run(&m, "dp_sgd.subsampled", epsilon, delta, p, 3, seed + 2,
					    w, msg, sizeof(msg)))
				continue;
			ex = sparse_glm_excess(&m, w, n_eval, seed + 3);
			if (ex < best) {
				best = ex;
				memcpy(ret_params, p, sizeof(p));
			}
		}
	free(w);
	sparse_glm_free(&m);
	return best;
}

void
sparse_glm_free(struct sparse_glm *m)
{
	free(m->w);
	free(m->x);
	free(m->y);
	memset(m, 0, sizeof(*m));
}
