/*
 * run_pipeline.h - the one path of a run request, shared by admission
 * (runs_create), runs:estimate, the worker and `dpoptd solve`:
 *
 *	run_pipeline_plan()  parse -> dataset checks -> eval dataset check ->
 *	                     delta < 1/n -> plan (generic checks, then the
 *	                     method's schedule; the one calibration) -> work
 *	run_pipeline_run()   the run on the rows -> the "result" JSON
 *
 * What differs between the callers is only what they pass: admission and
 * estimate bound the work (struct run_limits) and look up the evaluation
 * dataset (a check callback with their database); the worker passes
 * neither and then compares the fresh plan with the stored one
 * (run_pipeline_check_stored); solve passes neither.
 */
#ifndef SERVICE_RUN_PIPELINE_H
#define SERVICE_RUN_PIPELINE_H

#include <jansson.h>

#include "alg.h"
#include "datasets.h"
#include "err.h"
#include "run_request.h"

/* The service's limits on a run's work (config.h, work_rate.h). */
struct run_limits {
	double max_work;       /* a run's work() above this is refused (422, "params") */
	double work_rate;      /* work units per CPU second, measured (work_rate.h) */
	double timeout_margin; /* the run timeout is margin * work / rate ... */
	unsigned min_timeout;  /* ... and at least this many seconds */
	double max_seconds;    /* work / rate above this is refused (422, "params"): a run
				* admitted can finish within its timeout */
	size_t max_universe;   /* a synthetic-data run's universe above this is refused
				* (422, "schema.categorical"); 0: KWAY_MAX_UNIVERSE only */
	size_t max_vertices;   /* a polytope with more vertices is refused (422,
				* "constraints.x.vertices"); 0: CONSTRAINT_MAX_VERTICES only */
};

/* A request that passed every check, and its plan. */
struct planned_run {
	struct run_request req; /* owned members: planned_run_clear() */
	struct run_plan plan;   /* alg_plan() of req.spec */
	double work;            /* alg->work(spec, plan) */
	unsigned timeout;       /* seconds for the steps; 0 without limits */
	unsigned threads;       /* the run's pool (run_pool.h): run_pool_threads(); 0 or 1 serial */
};

/* A check of the parsed request that needs the caller's context (the
 * evaluation dataset of admission and estimate, looked up in its
 * database); runs after the parse, before the delta check. */
typedef enum err_code (*run_check_fn)(void *ctx, const struct run_request *req, struct err *e);

/*
 * doc (borrowed) on the dataset meta: refused when meta is public or not
 * sealed (ERR_CONFLICT), then run_request_parse(), check(ctx, ...) when
 * check is not NULL, datasets_check_delta() naming "privacy.delta",
 * alg_plan(), and the work: with lim, refused above lim->max_work or
 * lim->max_seconds of this machine (ERR_NUMERIC naming "params") and
 * ret->timeout set.  *ret is overwritten: the planned run on success, clear
 * (planned_run_clear()) otherwise.
 */
enum err_code run_pipeline_plan(const json_t *doc, const struct dataset_meta *meta,
				run_check_fn check, void *check_ctx, const struct run_limits *lim,
				struct planned_run *ret, struct err *e);

void planned_run_clear(struct planned_run *p);

/*
 * The worker's guard: the plan stored at admission (stored_plan, JSON
 * text of run_plan_json(); stored_steps, the runs row's steps_total) is
 * the plan made now, every member of it: steps, event, charge, accountant
 * and every value used (noise multiplier and sigma, lattice step, batch
 * size, step size, ...).  Numbers are compared as doubles (jsonb may
 * respell them).  ERR_INTERNAL "plan changed since admission" otherwise:
 * the code now plans differently from what was charged.
 */
enum err_code run_pipeline_check_stored(const struct planned_run *p, const char *stored_plan,
					unsigned long stored_steps, struct err *e);

/*
 * Run p on ds (the dataset the spec describes) with a fresh OpenSSL
 * generator and a pool of p->threads threads as the spec's executor (set
 * for the run, NULL again after it), progress as alg_run(); on success *ret_result is the run's
 * "result" member (run_result_json: wall_time_ms counts the steps) and
 * *ret_x (p->req.spec.dim values) the released point, both owned.
 * alg_run()'s errors.
 */
enum err_code run_pipeline_run(struct planned_run *p, const struct dataset *ds,
			       alg_progress_fn progress, void *progress_ctx, double **ret_x,
			       json_t **ret_result, struct err *e);

#endif /* SERVICE_RUN_PIPELINE_H */
