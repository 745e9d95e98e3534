/*
 * run_pipeline.c - parse, check, plan and run a request (run_pipeline.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rng.h"
#include "run_pipeline.h"
#include "run_pool.h"

/* A run needs sealed rows and a budget to pay with: a public dataset has
 * none (it serves as eval_dataset_id only). */
static enum err_code
check_dataset(const struct dataset_meta *meta, struct err *e)
{
	if (meta->is_public)
		return err_set(e, ERR_CONFLICT,
			       "dataset '%s' is public: it has no budget and serves only as "
			       "'eval_dataset_id' of runs on private datasets",
			       meta->id);
	if (strcmp(meta->state, "sealed") != 0)
		return err_set(e, ERR_CONFLICT, "dataset '%s' has no data yet", meta->id);
	return ERR_OK;
}

/* The run's work against the limits, and its timeout. */
static enum err_code
check_work(double work, const struct run_limits *lim, unsigned *ret_timeout, struct err *e)
{
	double t;

	if (!isfinite(work) || work < 0.0)
		return err_set_field(e, ERR_NUMERIC, "params", "the run's work is not computable");
	if (lim == NULL) {
		*ret_timeout = 0;
		return ERR_OK;
	}
	if (work > lim->max_work)
		return err_set_field(e, ERR_NUMERIC, "params",
				     "the run's work %.3g exceeds this service's limit %.3g "
				     "(DPOPT_MAX_RUN_WORK); use fewer rows, features or steps",
				     work, lim->max_work);
	/* Fail at admission, before the charge, a run that could not finish
	 * within its timeout on this machine (work_rate.h). */
	if (work / lim->work_rate > lim->max_seconds)
		return err_set_field(e, ERR_NUMERIC, "params",
				     "the run's estimated time %.3g s on this machine exceeds this "
				     "service's limit %.3g s (DPOPT_MAX_RUN_SECONDS); use fewer "
				     "rows, features or steps",
				     work / lim->work_rate, lim->max_seconds);
	t = ceil(lim->timeout_margin * work / lim->work_rate);
	*ret_timeout = t < lim->min_timeout ? lim->min_timeout : (unsigned)t;
	return ERR_OK;
}

/* A polytope's vertex list within the service's DPOPT_MAX_VERTICES. */
static enum err_code
check_vertices(const struct constraint *c, const char *field, size_t max, struct err *e)
{
	if (c->kind != CONSTRAINT_POLYTOPE || c->n_vertices <= max)
		return ERR_OK;
	return err_set_field(e, ERR_NUMERIC, field,
			     "'%s' lists %zu vertices; this service's limit is %zu "
			     "(DPOPT_MAX_VERTICES)",
			     field, c->n_vertices, max);
}

enum err_code
run_pipeline_plan(const json_t *doc, const struct dataset_meta *meta, run_check_fn check,
		  void *check_ctx, const struct run_limits *lim, struct planned_run *ret,
		  struct err *e)
{
	/* Built in place: a planned run is 52 kB (the request's fixed arrays),
	 * and a copy through a local cost a memset and a memcpy of it per plan,
	 * twice per run (admission and execution; issue 17's profile). */
	struct planned_run *p = ret;
	enum err_code rc;

	*p = (struct planned_run){ 0 };

	rc = check_dataset(meta, e);
	if (rc == ERR_OK)
		rc = run_request_parse(doc, meta, &p->req, e);
	if (rc == ERR_OK && p->req.alg->synthetic && lim != NULL && lim->max_universe > 0 &&
	    p->req.spec.dim > lim->max_universe)
		rc = err_set_field(e, ERR_NUMERIC, "schema.categorical",
				   "the universe of the categorical attributes (the product of "
				   "their sizes) exceeds this service's limit %zu "
				   "(DPOPT_MAX_UNIVERSE)",
				   lim->max_universe);
	if (rc == ERR_OK && lim != NULL && lim->max_vertices > 0)
		rc = check_vertices(&p->req.spec.x, "constraints.x.vertices", lim->max_vertices, e);
	if (rc == ERR_OK && lim != NULL && lim->max_vertices > 0 && p->req.spec.has_y)
		rc = check_vertices(&p->req.spec.y, "constraints.y.vertices", lim->max_vertices, e);
	if (rc == ERR_OK && check != NULL)
		rc = check(check_ctx, &p->req, e);
	if (rc == ERR_OK)
		rc = datasets_check_delta(meta, p->req.spec.delta, meta->n_rows, "privacy.delta",
					  e);
	if (rc == ERR_OK)
		rc = alg_plan(p->req.alg, &p->req.spec, &p->plan, e);
	if (rc == ERR_OK) {
		p->work = p->req.alg->work(&p->req.spec, &p->plan);
		rc = check_work(p->work, lim, &p->timeout, e);
	}
	if (rc != ERR_OK)
		planned_run_clear(p);
	return rc;
}

void
planned_run_clear(struct planned_run *p)
{
	run_request_clear(&p->req);
	*p = (struct planned_run){ 0 };
}

/* The same JSON values, numbers compared as doubles (the stored plan went
 * through jsonb, which may spell 1e-06 as 0.000001). */
static bool
same_json(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (a == NULL || b == NULL || json_typeof(a) != json_typeof(b))
		return false;
	if (json_is_object(a)) {
		const char *k;
		json_t *v;

		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach ((json_t *)a, k, v)
			if (!same_json(v, json_object_get(b, k)))
				return false;
		return true;
	}
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!same_json(json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	}
	return json_equal((json_t *)a, (json_t *)b);
}

enum err_code
run_pipeline_check_stored(const struct planned_run *p, const char *stored_plan,
			  unsigned long stored_steps, struct err *e)
{
	json_t *stored = json_loads(stored_plan, JSON_DECODE_INT_AS_REAL, NULL);
	json_t *fresh = run_plan_json(&p->plan, p->req.spec.mode);
	bool same = stored != NULL && fresh != NULL && p->plan.steps == stored_steps &&
		    same_json(fresh, stored);

	json_decref(stored);
	json_decref(fresh);
	if (!same)
		return err_set(e, ERR_INTERNAL, "plan changed since admission");
	return ERR_OK;
}

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

enum err_code
run_pipeline_run(struct planned_run *p, const struct dataset *ds, alg_progress_fn progress,
		 void *progress_ctx, double **ret_x, json_t **ret_result, struct err *e)
{
	struct run_pool pool;
	double *x = calloc(p->req.spec.dim > 0 ? p->req.spec.dim : 1, sizeof(double));
	struct rng *rng = NULL;
	json_t *result = NULL;
	struct run_plan after;
	double t0;
	enum err_code rc;

	if (x == NULL) {
		rc = err_set(e, ERR_NOMEM, "cannot allocate the output");
		goto out;
	}
	rng = rng_openssl_new(e);
	if (rng == NULL) {
		rc = err_failed(e);
		goto out;
	}
	t0 = now_ms();
	run_pool_init(&pool, p->threads);
	p->req.spec.exec = &pool.exec;
	rc = alg_run_report(p->req.alg, &p->req.spec, &p->plan, ds, rng, progress, progress_ctx, x,
			    &after, e);
	p->req.spec.exec = NULL;
	run_pool_clear(&pool);
	if (rc != ERR_OK)
		goto out;
	result = run_result_json(&p->req, &after, x, now_ms() - t0);
	if (result == NULL) {
		rc = err_set(e, ERR_NOMEM, "cannot build the result");
		goto out;
	}
	*ret_result = result;
	*ret_x = x;
	x = NULL;
out:
	rng_free(rng);
	free(x);
	return rc;
}
