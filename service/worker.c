/*
 * worker.c - claim, run, settle.
 *
 * Nothing a worker writes depends on private data except the result of a
 * run that succeeded, which is what the run paid for.  Failures are
 * recorded as the generic "internal_error", whatever caused them, and
 * progress is a step count fixed in advance.
 */
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dataset_cache.h"
#include "dataset_load.h"
#include "evaluate.h"
#include "datasets.h"
#include "log.h"
#include "run_request.h"
#include "runs.h"
#include "worker.h"

struct worker {
	struct server *srv; /* borrowed: outlives the thread */
	unsigned index;
	pthread_t thread;
	bool started;
	struct db_conn *db; /* owned by the thread */
};

struct workers {
	unsigned count;
	struct worker w[];
};

/* What the progress callback needs while a run executes. */
struct run_ctx {
	struct worker *w;
	const char *run_id;
	struct timespec last_renew;
	double timeout; /* seconds the run may take, from its public work */
	struct timespec started;
	bool timed_out;        /* the timeout passed: the run fails, charged */
	bool cancel_requested; /* the client asked to cancel */
	bool lease_lost;       /* another process owns the run now */
	bool stopping;         /* this process is shutting down */
};

static double
seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) * 1e-9;
}

enum err_code
worker_requeue_expired(struct db_conn *db, unsigned max_attempts, unsigned *ret_count,
		       struct err *e)
{
	char max[16];
	const char *values[1] = { max };
	PGresult *res;

	snprintf(max, sizeof(max), "%u", max_attempts);
	/* A lost lease is infrastructure: re-queue under the paid charge, unless
	 * the client asked to cancel or the attempts are used up. */
	res = db_exec(db,
		      "UPDATE runs SET state = CASE WHEN cancel_requested THEN 'cancelled'"
		      " WHEN attempts >= $1::int THEN 'failed' ELSE 'queued' END,"
		      " error_code = CASE WHEN NOT cancel_requested AND attempts >= $1::int"
		      " THEN 'internal_error' END,"
		      " finished_at = CASE WHEN cancel_requested OR attempts >= $1::int"
		      " THEN now() END,"
		      " lease_owner = NULL, lease_expires_at = NULL, steps_done = 0"
		      " WHERE state = 'running' AND lease_expires_at < now()",
		      1, values, PGRES_COMMAND_OK, e);
	if (res == NULL)
		return e->code;
	if (ret_count != NULL)
		*ret_count = (unsigned)atoi(PQcmdTuples(res));
	PQclear(res);
	if (ret_count != NULL && *ret_count > 0)
		(void)db_command(db, "NOTIFY " RUNS_CHANNEL, NULL);
	return ERR_OK;
}

/* Claim the oldest queued run; ERR_NOT_FOUND when there is none. */
static enum err_code
claim_next(struct worker *w, PGresult **ret, struct err *e)
{
	char lease[16];
	const char *values[2] = { w->srv->cfg.instance_id, lease };
	PGresult *res;

	snprintf(lease, sizeof(lease), "%u", w->srv->cfg.lease_seconds);
	res = db_exec(w->db,
		      "UPDATE runs SET state = 'running', lease_owner = $1,"
		      " lease_expires_at = now() + make_interval(secs => $2::int),"
		      " attempts = attempts + 1, started_at = coalesce(started_at, now()),"
		      " steps_done = 0"
		      " WHERE id = (SELECT id FROM runs WHERE state = 'queued'"
		      " ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT 1)"
		      " RETURNING id, dataset_id, tenant_id, request::text, steps_total,"
		      " timeout_seconds",
		      2, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return e->code;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return ERR_NOT_FOUND;
	}
	*ret = res;
	return ERR_OK;
}

/* Renew the lease and publish progress; learn about cancellation. */
static void
renew(struct run_ctx *c, unsigned long done)
{
	char steps[24], lease[16];
	const char *values[4] = { c->run_id, c->w->srv->cfg.instance_id, steps, lease };
	PGresult *res;

	snprintf(steps, sizeof(steps), "%lu", done);
	snprintf(lease, sizeof(lease), "%u", c->w->srv->cfg.lease_seconds);
	res = db_exec(c->w->db,
		      "UPDATE runs SET steps_done = $3::bigint,"
		      " lease_expires_at = now() + make_interval(secs => $4::int)"
		      " WHERE id = $1 AND lease_owner = $2 AND state = 'running'"
		      " RETURNING cancel_requested",
		      4, values, PGRES_TUPLES_OK, NULL);
	if (res == NULL)
		return; /* database trouble: keep going, the lease decides */
	if (PQntuples(res) == 0)
		c->lease_lost = true;
	else if (strcmp(PQgetvalue(res, 0, 0), "t") == 0)
		c->cancel_requested = true;
	PQclear(res);
}

static bool
on_progress(void *ctx, unsigned long done, unsigned long total)
{
	struct run_ctx *c = ctx;
	struct timespec now;
	double every = c->w->srv->cfg.lease_seconds / 4.0;

#ifdef DPOPT_TESTING
	if (c->w->srv->cfg.test_step_delay_ms > 0) {
		unsigned ms = c->w->srv->cfg.test_step_delay_ms;

		nanosleep(&(struct timespec){ .tv_sec = ms / 1000,
					      .tv_nsec = (long)(ms % 1000) * 1000000L },
			  NULL);
	}
#endif
	if (atomic_load(&c->w->srv->stopping)) {
		c->stopping = true;
		return false;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds_between(&c->started, &now) > c->timeout) {
		c->timed_out = true;
		return false;
	}
	if (seconds_between(&c->last_renew, &now) >= (every < 1.0 ? every : 1.0) || done == total) {
		renew(c, done);
		c->last_renew = now;
	}
	return !c->cancel_requested && !c->lease_lost;
}

enum err_code
worker_load_dataset(void *ctx, struct db_conn *db, const char *id, const void *arg,
		    struct loaded_dataset *ret, struct err *e)
{
	const struct dataset_meta *meta = arg;

	return dataset_load(db, id, &meta->schema, meta->layout, (size_t)meta->n_rows,
			    (size_t)meta->nnz, ret, e);
}

/* The released result's metrics on the run's public evaluation dataset
 * (checked at admission, checked again here: it may have been deleted).
 * A failure here does not fail the run, whose result is already paid for:
 * the block says the evaluation is unavailable. */
static json_t *
evaluation(struct worker *w, const char *tenant, const struct run_request *req, const double *x)
{
	const struct loaded_dataset *ds = NULL;
	struct dataset_meta em;
	struct err e = { 0 };
	json_t *r = NULL;

	if (datasets_meta(w->db, tenant, req->eval_dataset_id, false, &em, &e) == ERR_OK &&
	    run_request_check_eval(req, &em, &e) == ERR_OK &&
	    dataset_cache_get(w->srv->datasets, w->db, em.id, &em, &ds, &e) == ERR_OK) {
		r = evaluate_json(&req->spec.objective, &ds->view, x, em.id);
		dataset_cache_put(w->srv->datasets, ds);
	}
	if (r == NULL) {
		log_err(req->eval_dataset_id, &e);
		r = json_pack("{s:s, s:s}", "dataset_id", req->eval_dataset_id, "error",
			      "the evaluation dataset is not available");
	}
	return r;
}

/* Final state of a run this worker holds. */
static void
settle(struct worker *w, const char *run_id, const char *state, const char *error_code,
       const char *result_text)
{
	const char *values[5] = { run_id, w->srv->cfg.instance_id, state, error_code, result_text };
	PGresult *res;
	struct err e = { 0 };

	res = db_exec(w->db,
		      "UPDATE runs SET state = $3, error_code = $4, result = $5::jsonb,"
		      " steps_done = CASE WHEN $3 = 'succeeded' THEN steps_total"
		      " WHEN $3 = 'queued' THEN 0 ELSE steps_done END,"
		      " finished_at = CASE WHEN $3 = 'queued' THEN NULL ELSE now() END,"
		      " lease_owner = NULL, lease_expires_at = NULL"
		      " WHERE id = $1 AND lease_owner = $2 AND state = 'running'",
		      5, values, PGRES_COMMAND_OK, &e);
	if (res == NULL)
		log_err(run_id, &e); /* the lease rule settles it later */
	PQclear(res);
	if (strcmp(state, "queued") == 0)
		(void)db_command(w->db, "NOTIFY " RUNS_CHANNEL, NULL);
}

static void
execute(struct worker *w, PGresult *claim)
{
	char run_id[37], dataset_id[37], tenant[65];
	struct dataset_meta meta;
	struct run_request req = { 0 };
	struct run_plan plan;
	const struct loaded_dataset *ds = NULL;
	struct run_ctx ctx = { .w = w, .run_id = run_id };
	struct rng *rng = NULL;
	struct timespec t0, t1;
	struct err e = { 0 };
	unsigned long steps_total;
	json_t *doc = NULL, *result = NULL;
	char *result_text = NULL;
	double *x = NULL;
	enum err_code rc;

	snprintf(run_id, sizeof(run_id), "%s", PQgetvalue(claim, 0, 0));
	snprintf(dataset_id, sizeof(dataset_id), "%s", PQgetvalue(claim, 0, 1));
	snprintf(tenant, sizeof(tenant), "%s", PQgetvalue(claim, 0, 2));
	doc = json_loads(PQgetvalue(claim, 0, 3), 0, NULL);
	steps_total = strtoul(PQgetvalue(claim, 0, 4), NULL, 10);
	ctx.timeout = strtod(PQgetvalue(claim, 0, 5), NULL);
	log_msg(LOG_INFO, run_id, "run claimed by worker %u", w->index);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ctx.last_renew = t0;
	ctx.started = t0;
	rc = doc != NULL ? ERR_OK : err_set(&e, ERR_INTERNAL, "stored request is not JSON");
	if (rc == ERR_OK)
		rc = datasets_meta(w->db, tenant, dataset_id, false, &meta, &e);
	if (rc == ERR_OK)
		rc = run_request_parse(doc, &meta, &req, &e);
	if (rc == ERR_OK)
		rc = req.alg->plan(&req.spec, &plan, &e);
	/* The plan is a pure function of the stored request: a different step
	 * count means the code changed under a charged run.  Fail closed. */
	if (rc == ERR_OK && plan.steps != steps_total)
		rc = err_set(&e, ERR_INTERNAL, "plan changed since admission");
	if (rc == ERR_OK)
		rc = dataset_cache_get(w->srv->datasets, w->db, dataset_id, &meta, &ds, &e);
	if (rc == ERR_OK) {
		renew(&ctx, 0); /* loading a large dataset may take a while of the lease */
		clock_gettime(CLOCK_MONOTONIC, &ctx.last_renew);
		if (ctx.lease_lost || ctx.cancel_requested)
			rc = err_set(&e, ERR_CANCELLED, "stopped before the first step");
	}
	if (rc == ERR_OK) {
		x = calloc(req.spec.dim, sizeof(double));
		rng = rng_openssl_new(&e);
		if (x == NULL)
			rc = err_set(&e, ERR_NOMEM, "cannot allocate the output");
		else if (rng == NULL)
			rc = e.code;
	}
	if (rc == ERR_OK)
		rc = alg_run(req.alg, &req.spec, &plan, &ds->view, rng, on_progress, &ctx, x, &e);
	clock_gettime(CLOCK_MONOTONIC, &t1);

	if (rc == ERR_OK) {
		result = run_result_json(&req, &plan, x, seconds_between(&t0, &t1) * 1e3);
		if (result != NULL && req.eval_dataset_id[0] != '\0')
			json_object_set_new(result, "evaluation", evaluation(w, tenant, &req, x));
		result_text = result != NULL ? json_dumps(result, JSON_COMPACT) : NULL;
		if (result_text == NULL) {
			rc = err_set(&e, ERR_NOMEM, "cannot serialise the result");
		} else {
			settle(w, run_id, "succeeded", NULL, result_text);
			log_msg(LOG_INFO, run_id, "run succeeded in %.0f ms",
				seconds_between(&t0, &t1) * 1e3);
		}
	}
	if (rc == ERR_CANCELLED && ctx.stopping) {
		/* Shutdown: the output was never released, so the run goes back to
		 * the queue under the charge it already paid. */
		settle(w, run_id, "queued", NULL, NULL);
		log_msg(LOG_INFO, run_id, "run re-queued at shutdown");
	} else if (rc == ERR_CANCELLED && ctx.cancel_requested) {
		settle(w, run_id, "cancelled", NULL, NULL);
		log_msg(LOG_INFO, run_id, "run cancelled; its charge stands");
	} else if (rc == ERR_CANCELLED && ctx.timed_out) {
		/* Generic like every failure; the charge stands (README). */
		log_msg(LOG_WARN, run_id, "run exceeded its timeout of %.0f s", ctx.timeout);
		settle(w, run_id, "failed", "internal_error", NULL);
	} else if (rc == ERR_CANCELLED && ctx.lease_lost) {
		log_msg(LOG_WARN, run_id, "lease lost, ignoring");
	} else if (rc != ERR_OK) {
		log_err(run_id, &e); /* 4xx codes log their field only (log.c) */
		settle(w, run_id, "failed", "internal_error", NULL);
	}
	free(result_text);
	json_decref(result);
	free(x);
	rng_free(rng);
	dataset_cache_put(w->srv->datasets, ds);
	run_request_clear(&req);
	json_decref(doc);
}

/* Sleep until a NOTIFY arrives or timeout_ms passes. */
static void
wait_for_work(struct db_conn *db, int timeout_ms)
{
	struct pollfd pfd = { .fd = PQsocket(db->pg), .events = POLLIN };
	PGnotify *n;

	if (pfd.fd >= 0 && poll(&pfd, 1, timeout_ms) > 0)
		(void)PQconsumeInput(db->pg);
	while ((n = PQnotifies(db->pg)) != NULL)
		PQfreemem(n);
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	bool listening = false;

	while (!atomic_load(&w->srv->stopping)) {
		struct err e = { 0 };
		PGresult *claim = NULL;
		enum err_code rc;

		if (db_ensure(w->db, &e) != ERR_OK) {
			log_err(NULL, &e);
			listening = false;
			nanosleep(&(struct timespec){ .tv_sec = 1 }, NULL); /* back off */
			continue;
		}
		if (!listening)
			listening = db_command(w->db, "LISTEN " RUNS_CHANNEL, NULL) == ERR_OK;
		rc = worker_requeue_expired(w->db, w->srv->cfg.max_attempts, NULL, &e);
		if (rc == ERR_OK)
			rc = claim_next(w, &claim, &e);
		if (rc == ERR_NOT_FOUND) {
			wait_for_work(w->db, 500);
			continue;
		}
		if (rc != ERR_OK) {
			log_err(NULL, &e);
			nanosleep(&(struct timespec){ .tv_sec = 1 }, NULL);
			continue;
		}
		execute(w, claim);
		PQclear(claim);
	}
	return NULL;
}

struct workers *
workers_start(struct server *srv, struct err *e)
{
	unsigned n = srv->cfg.workers;
	struct workers *ws = calloc(1, sizeof(*ws) + n * sizeof(struct worker));

	if (ws == NULL) {
		err_set(e, ERR_NOMEM, "cannot allocate workers");
		return NULL;
	}
	ws->count = n;
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &ws->w[i];

		w->srv = srv;
		w->index = i;
		w->db = db_connect(srv->cfg.database_url, e);
		if (w->db == NULL)
			goto out_fail;
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
			err_set(e, ERR_INTERNAL, "cannot start worker thread %u", i);
			goto out_fail;
		}
		w->started = true;
	}
	return ws;

out_fail:
	atomic_store(&srv->stopping, true);
	workers_join(ws);
	return NULL;
}

void
workers_join(struct workers *ws)
{
	if (ws == NULL)
		return;
	for (unsigned i = 0; i < ws->count; i++) {
		if (ws->w[i].started)
			pthread_join(ws->w[i].thread, NULL);
		db_close(ws->w[i].db);
	}
	free(ws);
}
