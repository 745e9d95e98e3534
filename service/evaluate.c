/*
 * evaluate.c - the evaluation block of a result (evaluate.h).
 */
#include <math.h>
#include <stdlib.h>

#include "evaluate.h"
#include "saddle_gap.h"
#include "synthetic/kway.h"
#include "synthetic/smd_queries.h"
#include "vi.h"

json_t *
evaluate_json(const struct objective *o, const struct dataset *ds, const double *w,
	      const char *dataset_id)
{
	json_t *r = json_object();
	double loss = objective_mean_loss(o, ds, w);
	double acc = objective_accuracy(o, ds, w);

	if (r == NULL)
		return NULL;
	if ((dataset_id != NULL && json_object_set_new(r, "dataset_id", json_string(dataset_id))) ||
	    json_object_set_new(r, "n_rows", json_integer((json_int_t)ds->n)) ||
	    json_object_set_new(r, "loss", isfinite(loss) ? json_real(loss) : json_null()) ||
	    (!isnan(acc) && json_object_set_new(r, "accuracy", json_real(acc)))) {
		json_decref(r);
		return NULL;
	}
	return r;
}

static json_t *
bracket_json(const struct saddle_bracket *b)
{
	return json_pack("{s:f, s:f}", "lower", b->lo, "upper", b->hi);
}

/* The gap brackets of one saddle point u on ds. */
static json_t *
gap_json(const struct run_spec *spec, const struct data_schema *s, const struct dataset *ds,
	 const double *u, const char *dataset_id, struct err *e)
{
	const struct saddle_block bx = { spec->x, spec->geometry_x };
	const struct saddle_block by = { spec->y, spec->geometry_y };
	const double per_iter = (double)(ds->n > 0 ? ds->n : 1) * (double)spec->dim;
	double iters = floor(EVALUATE_GAP_WORK / per_iter);
	struct saddle_gap_opts opts = { .tol = 1e-9 };
	struct saddle_gap strong, weak;
	json_t *r;

	/* At least a few projected steps, at most 2000 (a linear inner problem
	 * closes at the first). */
	opts.iters = iters < 4.0 ? 4 : iters > 2000.0 ? 2000 : (unsigned long)iters;
	if (saddle_gap_eval(&spec->objective, s, ds, &bx, &by, u, 1, &opts, &strong, &weak, e) !=
	    ERR_OK)
		return NULL;
	if (!isfinite(strong.gap.lo) || !isfinite(strong.gap.hi) || !isfinite(weak.gap.lo) ||
	    !isfinite(weak.gap.hi)) {
		err_set(e, ERR_NUMERIC, "the gap is not finite");
		return NULL;
	}
	r = json_pack("{s:I, s:o, s:o}", "n_rows", (json_int_t)ds->n, "strong_gap",
		      bracket_json(&strong.gap), "weak_gap", bracket_json(&weak.gap));
	if (r != NULL && dataset_id != NULL &&
	    json_object_set_new(r, "dataset_id", json_string(dataset_id)) != 0) {
		json_decref(r);
		r = NULL;
	}
	if (r == NULL)
		err_set(e, ERR_NOMEM, "cannot build the evaluation");
	return r;
}

/* The VI gaps of one point u on ds (vi_gap_bracket: closed forms, lower =
 * upper; for an affine non-skew operator the weak gap's certified
 * bracket). */
static json_t *
vi_gap_json(const struct run_spec *spec, const struct dataset *ds, const double *u,
	    const char *dataset_id, struct err *e)
{
	double strong, weak_lo, weak;
	json_t *r;

	if (vi_gap_bracket(&spec->objective, ds, &spec->x, u, &strong, &weak_lo, &weak, e) !=
	    ERR_OK)
		return NULL;
	if (!isfinite(strong) || !isfinite(weak) || !isfinite(weak_lo)) {
		err_set(e, ERR_NUMERIC, "the gap is not finite");
		return NULL;
	}
	r = json_pack("{s:I, s:{s:f, s:f}, s:{s:f, s:f}}", "n_rows", (json_int_t)ds->n,
		      "strong_gap", "lower", strong, "upper", strong, "weak_gap", "lower", weak_lo,
		      "upper", weak);
	if (r != NULL && dataset_id != NULL &&
	    json_object_set_new(r, "dataset_id", json_string(dataset_id)) != 0) {
		json_decref(r);
		r = NULL;
	}
	if (r == NULL)
		err_set(e, ERR_NOMEM, "cannot build the evaluation");
	return r;
}

json_t *
evaluate_run_json(const struct run_spec *spec, const struct data_schema *s,
		  const struct dataset *ds, const double *u, const char *dataset_id, struct err *e)
{
	json_t *r;

	if (spec->objective.ops != NULL && spec->objective.ops->kind == OBJECTIVE_OPERATOR)
		return vi_gap_json(spec, ds, u, dataset_id, e);
	if (spec->has_y)
		return gap_json(spec, s, ds, u, dataset_id, e);
	r = evaluate_json(&spec->objective, ds, u, dataset_id);
	if (r == NULL)
		err_set(e, ERR_NOMEM, "cannot build the evaluation");
	return r;
}

json_t *
evaluate_synthetic_json(const struct run_spec *spec, const struct dataset *ds, const double *hist,
			const char *dataset_id, struct err *e)
{
	struct smdq_setup su;
	struct kway q;
	double *a = NULL, *b = NULL, *h = NULL, rows = 0.0, worst = 0.0;
	size_t digits[DATA_MAX_CATEGORICAL];
	json_t *r = NULL;

	if (smdq_setup(spec, &su, e) != ERR_OK)
		return NULL;
	if (ds->n == 0 || ds->cat == NULL || ds->n_categorical != spec->schema.n_categorical) {
		err_set(e, ERR_INVALID, "the evaluation dataset has other categorical attributes");
		return NULL;
	}
	if (kway_init(&q, &spec->schema, su.k, e) != ERR_OK)
		return NULL;
	a = calloc(q.n_conj, sizeof(*a));
	b = calloc(q.n_conj, sizeof(*b));
	h = calloc(q.universe, sizeof(*h));
	if (a == NULL || b == NULL || h == NULL) {
		err_set(e, ERR_NOMEM, "cannot build the evaluation");
		goto out;
	}
	for (size_t u = 0; u < q.universe; u++)
		rows += hist[u];
	for (size_t u = 0; u < q.universe; u++)
		h[u] = rows > 0.0 ? hist[u] / rows : 0.0;
	kway_counts(&q, ds->cat, ds->n, a);
	kway_marginals(&q, h, b, digits);
	/* A negation's error is its conjunction's. */
	for (size_t j = 0; j < q.n_conj; j++)
		worst = fmax(worst, fabs(a[j] / (double)ds->n - b[j]));
	r = json_pack("{s:I, s:I, s:I, s:f}", "n_rows", (json_int_t)ds->n, "k", (json_int_t)q.k,
		      "queries", (json_int_t)(2 * q.n_conj), "max_query_error", worst);
	if (r != NULL && dataset_id != NULL &&
	    json_object_set_new(r, "dataset_id", json_string(dataset_id)) != 0) {
		json_decref(r);
		r = NULL;
	}
	if (r == NULL)
		err_set(e, ERR_NOMEM, "cannot build the evaluation");
out:
	free(a);
	free(b);
	free(h);
	kway_free(&q);
	return r;
}
