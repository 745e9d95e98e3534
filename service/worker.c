/*
 * worker.c - claim, run, settle.
 *
 * Nothing a worker writes depends on private data except the result of a
 * run that succeeded, which is what the run paid for.  Failures are
 * recorded as the generic "internal_error", whatever caused them, and
 * progress is a step count fixed in advance.
 */
#include <inttypes.h>
#include <math.h>
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
#include "run_pipeline.h"
#include "run_pool.h"
#include "runs.h"
#include "worker.h"

/*
 * The lease a worker holds, kept alive by the lease keeper (below), not
 * by the worker: the keeper renews it on a timer through its own
 * connection during every phase of a run (dataset load, steps,
 * evaluation, result write), however long one step or one load takes.
 * run_id and held change under workers.lock; the flags are atomics the
 * worker polls between steps.
 */
struct lease_slot {
	bool held;          /* under lock */
	char run_id[37];    /* under lock */
	atomic_ulong steps; /* progress to publish: steps done (public) */
	atomic_bool lost;   /* a renewal found the run no longer ours */
	atomic_bool cancel; /* the client asked to cancel */
};

struct worker {
	struct server *srv;  /* borrowed: outlives the thread */
	struct workers *all; /* borrowed: the set this worker belongs to */
	unsigned index;
	pthread_t thread;
	bool started;
	struct db_conn *db; /* owned by the thread */
	/* This worker's own lease owner id, "<instance>/w<index>": a sibling
	 * worker of the same process is another owner (a shared id let a
	 * sibling renew, settle or re-claim a run it did not run). */
	char owner[128];
	struct lease_slot slot;
	struct timespec last_reap; /* this worker's last worker_requeue_expired() */
};

struct workers {
	unsigned count;
	struct server *srv;   /* borrowed */
	pthread_mutex_t lock; /* the slots' run_id and held */
	pthread_t keeper;     /* the lease keeper and reaper */
	bool keeper_started;
	atomic_bool keeper_stop; /* set after the workers left */
	struct db_conn *kdb;     /* owned by the keeper thread */
	struct worker w[];
};

/* What the progress callback needs while a run executes. */
struct run_ctx {
	struct worker *w;
	const char *run_id;
	unsigned attempt; /* this claim's number, 1 for the first */
	double timeout;   /* seconds the steps may take, from the run's public work */
	struct timespec started;
	bool timed_out;        /* the timeout passed: re-queued, or failed past the attempts */
	bool cancel_requested; /* the client asked to cancel */
	bool lease_lost;       /* another process owns the run now */
	bool stopping;         /* this process is shutting down */
};

/* A worker's own re-queue of expired leases, at most this often (s). */
#define REAP_EVERY_S 1.0

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
		return err_failed(e);
	if (ret_count != NULL)
		*ret_count = (unsigned)atoi(PQcmdTuples(res));
	PQclear(res);
	if (ret_count != NULL && *ret_count > 0)
		(void)db_command(db, "NOTIFY " RUNS_CHANNEL, NULL);
	return ERR_OK;
}

static void
sleep_ms(unsigned ms)
{
	nanosleep(
		&(struct timespec){ .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L },
		NULL);
}

/* Claim the oldest queued run; ERR_NOT_FOUND when there is none. */
static enum err_code
claim_next(struct worker *w, PGresult **ret, struct err *e)
{
	char lease[16];
	const char *values[2] = { w->owner, lease };
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
		      " timeout_seconds, attempts, work, plan::text",
		      2, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) == 0) {
		PQclear(res);
		return ERR_NOT_FOUND;
	}
	*ret = res;
	return ERR_OK;
}

static void
slot_hold(struct worker *w, const char *run_id)
{
	pthread_mutex_lock(&w->all->lock);
	snprintf(w->slot.run_id, sizeof(w->slot.run_id), "%s", run_id);
	atomic_store(&w->slot.steps, 0);
	atomic_store(&w->slot.lost, false);
	atomic_store(&w->slot.cancel, false);
	w->slot.held = true;
	pthread_mutex_unlock(&w->all->lock);
}

static void
slot_release(struct worker *w)
{
	pthread_mutex_lock(&w->all->lock);
	w->slot.held = false;
	pthread_mutex_unlock(&w->all->lock);
}

/* The keeper's renewal of one lease, with the progress to publish.
 * ERR_OK and *ret_lost when the run is no longer this owner's (re-queued
 * by a reaper, settled); ERR_DB when the database did not answer, which
 * says nothing about the lease: the keeper tries again on its next tick,
 * well within the lease (a 1.3 s PostgreSQL restart must not restart the
 * run from step 0). */
static enum err_code
renew_one(struct workers *ws, const char *run_id, const char *owner, unsigned long steps,
	  bool *ret_lost, bool *ret_cancel, struct err *e)
{
	char steps_text[24], lease[16];
	const char *values[4] = { run_id, owner, steps_text, lease };
	PGresult *res;

	snprintf(steps_text, sizeof(steps_text), "%lu", steps);
	snprintf(lease, sizeof(lease), "%u", ws->srv->cfg.lease_seconds);
	res = db_exec(ws->kdb,
		      "UPDATE runs SET steps_done = greatest(steps_done, $3::bigint),"
		      " lease_expires_at = now() + make_interval(secs => $4::int)"
		      " WHERE id = $1 AND lease_owner = $2 AND state = 'running'"
		      " RETURNING cancel_requested",
		      4, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return ERR_DB;
	*ret_lost = PQntuples(res) == 0;
	*ret_cancel = !*ret_lost && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return ERR_OK;
}

/* One round of renewals: every lease a worker of this process holds. */
static void
keeper_renew_all(struct workers *ws)
{
	for (unsigned i = 0; i < ws->count; i++) {
		struct worker *w = &ws->w[i];
		char run_id[37];
		bool held, lost = false, cancel = false;
		struct err e = { 0 };

		pthread_mutex_lock(&ws->lock);
		held = w->slot.held;
		memcpy(run_id, w->slot.run_id, sizeof(run_id));
		pthread_mutex_unlock(&ws->lock);
		if (!held)
			continue;
		if (renew_one(ws, run_id, w->owner, atomic_load(&w->slot.steps), &lost, &cancel,
			      &e) != ERR_OK) {
			log_err(run_id, &e); /* retried on the next tick */
			return;
		}
		pthread_mutex_lock(&ws->lock);
		/* The worker may have settled and released meanwhile: a run
		 * settled is "not ours" too, and must not mark the next one. */
		if (w->slot.held && strcmp(w->slot.run_id, run_id) == 0) {
			if (lost)
				atomic_store(&w->slot.lost, true);
			if (cancel)
				atomic_store(&w->slot.cancel, true);
		}
		pthread_mutex_unlock(&ws->lock);
	}
}

/*
 * The lease keeper: one thread per process with its own connection (libpq:
 * never two threads on one PGconn).  Every quarter lease (at most every
 * second) it renews the leases of this process's workers and publishes
 * their progress; every DPOPT_REAPER_SECONDS it re-queues the runs whose
 * lease expired (a dead replica's), so a replica whose workers are all
 * busy still takes over within about one lease plus one reaper period.
 */
static void *
keeper_main(void *arg)
{
	struct workers *ws = arg;
	const struct config *cfg = &ws->srv->cfg;
	double every = cfg->lease_seconds / 4.0;
	unsigned tick_ms = (unsigned)((every < 1.0 ? every : 1.0) * 1000.0);
	struct timespec last_reap = { 0 }, last_tick = { 0 }, now;

	while (!atomic_load(&ws->keeper_stop)) {
		struct err e = { 0 };

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (seconds_between(&last_tick, &now) * 1000.0 < tick_ms) {
			sleep_ms(50);
			continue;
		}
		last_tick = now;
		if (db_ensure(ws->kdb, &e) != ERR_OK) {
			log_err(NULL, &e);
			continue;
		}
		keeper_renew_all(ws);
		if (seconds_between(&last_reap, &now) >= cfg->reaper_seconds &&
		    !atomic_load(&ws->srv->stopping)) {
			unsigned n = 0;

			if (worker_requeue_expired(ws->kdb, cfg->max_attempts, &n, &e) != ERR_OK)
				log_err(NULL, &e);
			else if (n > 0)
				log_msg(LOG_INFO, NULL,
					"reaper re-queued %u run(s) with expired leases", n);
			last_reap = now;
		}
	}
	return NULL;
}

static bool
on_progress(void *ctx, unsigned long done, unsigned long total)
{
	struct run_ctx *c = ctx;
	struct timespec now;

#ifdef DPOPT_TESTING
	if (c->w->srv->cfg.test_step_delay_ms > 0 &&
	    (c->w->srv->cfg.test_delay_attempts == 0 ||
	     c->attempt <= c->w->srv->cfg.test_delay_attempts))
		sleep_ms(c->w->srv->cfg.test_step_delay_ms);
#endif
	(void)total;
	atomic_store(&c->w->slot.steps, done);
	if (atomic_load(&c->w->srv->stopping)) {
		c->stopping = true;
		return false;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds_between(&c->started, &now) > c->timeout) {
		c->timed_out = true;
		return false;
	}
	c->lease_lost = atomic_load(&c->w->slot.lost);
	c->cancel_requested = atomic_load(&c->w->slot.cancel);
	return !c->cancel_requested && !c->lease_lost;
}

enum err_code
worker_load_dataset(void *ctx, struct db_conn *db, const char *id, const void *arg,
		    struct loaded_dataset *ret, struct err *e)
{
	const struct dataset_meta *meta = arg;

#ifdef DPOPT_TESTING
	/* A load that outlasts the lease, without a dataset of gigabytes. */
	if (ctx != NULL && ((const struct server *)ctx)->cfg.test_load_delay_ms > 0)
		sleep_ms(((const struct server *)ctx)->cfg.test_load_delay_ms);
#else
	(void)ctx;
#endif
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
		r = req->alg->synthetic
			    ? evaluate_synthetic_json(&req->spec, &ds->view, x, em.id, &e)
			    : evaluate_run_json(&req->spec, &em.schema, &ds->view, x, em.id, &e);
		dataset_cache_put(w->srv->datasets, ds);
	}
	if (r == NULL) {
		log_err(req->eval_dataset_id, &e);
		r = json_pack("{s:s, s:s}", "dataset_id", req->eval_dataset_id, "error",
			      "the evaluation dataset is not available");
	}
	return r;
}

/*
 * Final state of a run this worker holds, fenced by the lease (nothing is
 * written once another owner has the run).  A database error is retried
 * on a fresh connection for up to two leases while the keeper keeps the
 * lease alive, so a short PostgreSQL restart does not lose a finished
 * run.
 */
static void
settle(struct worker *w, const char *run_id, const char *state, const char *error_code,
       const char *result_text)
{
	const char *values[5] = { run_id, w->owner, state, error_code, result_text };
	double limit = 2.0 * w->srv->cfg.lease_seconds;
	struct timespec t0, now;
	PGresult *res = NULL;
	struct err e = { 0 };

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (db_ensure(w->db, &e) == ERR_OK)
			res = db_exec(
				w->db,
				"UPDATE runs SET state = $3, error_code = $4,"
				" result = $5::jsonb,"
				" steps_done = CASE WHEN $3 = 'succeeded' THEN steps_total"
				" WHEN $3 = 'queued' THEN 0 ELSE steps_done END,"
				" finished_at = CASE WHEN $3 = 'queued' THEN NULL ELSE now() END,"
				" lease_owner = NULL, lease_expires_at = NULL"
				" WHERE id = $1 AND lease_owner = $2 AND state = 'running'",
				5, values, PGRES_COMMAND_OK, &e);
		if (res != NULL)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (atomic_load(&w->slot.lost) || seconds_between(&t0, &now) > limit) {
			log_err(run_id, &e); /* the lease rule settles it later */
			return;
		}
		sleep_ms(500);
	}
	if (strcmp(PQcmdTuples(res), "0") == 0)
		log_msg(LOG_WARN, run_id, "lease lost before the run was settled; nothing written");
	PQclear(res);
	if (strcmp(state, "queued") == 0)
		(void)db_command(w->db, "NOTIFY " RUNS_CHANNEL, NULL);
}

static void
execute(struct worker *w, PGresult *claim)
{
	char run_id[37], dataset_id[37], tenant[65];
	struct dataset_meta meta;
	struct planned_run run = { 0 };
	const struct run_request *req = &run.req;
	const struct loaded_dataset *ds = NULL;
	struct run_ctx ctx = { .w = w, .run_id = run_id };
	struct timespec t1;
	struct err e = { 0 };
	unsigned long steps_total;
	json_t *doc = NULL, *result = NULL;
	char *result_text = NULL;
	double *x = NULL, work, local;
	enum err_code rc;

	snprintf(run_id, sizeof(run_id), "%s", PQgetvalue(claim, 0, 0));
	snprintf(dataset_id, sizeof(dataset_id), "%s", PQgetvalue(claim, 0, 1));
	snprintf(tenant, sizeof(tenant), "%s", PQgetvalue(claim, 0, 2));
	doc = json_loads(PQgetvalue(claim, 0, 3), 0, NULL);
	steps_total = strtoul(PQgetvalue(claim, 0, 4), NULL, 10);
	ctx.timeout = strtod(PQgetvalue(claim, 0, 5), NULL);
	ctx.attempt = (unsigned)strtoul(PQgetvalue(claim, 0, 6), NULL, 10);
	work = strtod(PQgetvalue(claim, 0, 7), NULL);
	/* The timeout stored at admission came from the admitting replica's
	 * speed; this machine's own measurement may allow more, never less. */
	local = ceil(w->srv->cfg.run_timeout_margin * work / w->srv->cfg.work_rate);
	if (isfinite(local) && local > ctx.timeout)
		ctx.timeout = local;
	slot_hold(w, run_id); /* from here on the keeper renews the lease */
	log_msg(LOG_INFO, run_id, "run claimed by %s (attempt %u)", w->owner, ctx.attempt);

	rc = doc != NULL ? ERR_OK : err_set(&e, ERR_INTERNAL, "stored request is not JSON");
	if (rc == ERR_OK)
		rc = datasets_meta(w->db, tenant, dataset_id, false, &meta, &e);
	/* Admission's own path, without its limits (the run is paid for) or
	 * its evaluation check (evaluation() checks again, and a missing
	 * evaluation dataset does not fail a paid run). */
	if (rc == ERR_OK)
		rc = run_pipeline_plan(doc, &meta, NULL, NULL, NULL, &run, &e);
	/*
	 * The plan is a pure function of the stored request, and a restarted
	 * run (shutdown, timeout, lost lease) runs the very plan it was charged
	 * for: the same steps, noise multiplier and sigma, lattice step, batch
	 * size, step size and privacy event (the method's init() takes all of
	 * them from this plan).  A difference means the code changed under a
	 * charged run.  Fail closed: the generic error, the charge kept.
	 *
	 * A restart draws fresh noise (a new generator below).  That is not a
	 * second release under the charge: an attempt that did not finish
	 * released nothing (no result, no iterate; progress is a public step
	 * count), so exactly one attempt's output ever leaves the service
	 * (docs/privacy-model.md §4.4: "a restart releases nothing").
	 */
	if (rc == ERR_OK)
		rc = run_pipeline_check_stored(&run, PQgetvalue(claim, 0, 8), steps_total, &e);
	/* The load (27.6 s for 1.55 GB) counts neither against the lease,
	 * which the keeper renews meanwhile, nor against the run's timeout,
	 * which starts after it. */
	if (rc == ERR_OK)
		rc = dataset_cache_get(w->srv->datasets, w->db, dataset_id, &meta, &ds, &e);
	if (rc == ERR_OK) {
		ctx.lease_lost = atomic_load(&w->slot.lost);
		ctx.cancel_requested = atomic_load(&w->slot.cancel);
		ctx.stopping = atomic_load(&w->srv->stopping);
		if (ctx.lease_lost || ctx.cancel_requested || ctx.stopping)
			rc = err_set(&e, ERR_CANCELLED, "stopped before the first step");
	}
#ifdef DPOPT_TESTING
	/* A certificate that fails as rounding would (config.h): after the
	 * stored plan was checked, so the run is the charged one. */
	if (rc == ERR_OK && w->srv->cfg.test_fail_certificates)
		alg_testing_fail_certificates(&run.req.spec);
#endif
	clock_gettime(CLOCK_MONOTONIC, &ctx.started);
	if (rc == ERR_OK) {
		/* Never more threads than CPUs with every worker busy. */
		run.threads = run_pool_threads(w->srv->cfg.workers);
		rc = run_pipeline_run(&run, &ds->view, on_progress, &ctx, &x, &result, &e);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc == ERR_OK && atomic_load(&w->slot.lost)) {
		/* Another owner has the run: release nothing. */
		ctx.lease_lost = true;
		rc = err_set(&e, ERR_CANCELLED, "lease lost");
	}

	if (rc == ERR_OK) {
		/* wall_time_ms (run_pipeline_run): the steps only, not the load. */
		if (req->eval_dataset_id[0] != '\0')
			json_object_set_new(result, "evaluation", evaluation(w, tenant, req, x));
		result_text = json_dumps(result, JSON_COMPACT);
		if (result_text == NULL) {
			rc = err_set(&e, ERR_NOMEM, "cannot serialise the result");
		} else {
			settle(w, run_id, "succeeded", NULL, result_text);
			log_msg(LOG_INFO, run_id, "run succeeded in %.0f ms",
				seconds_between(&ctx.started, &t1) * 1e3);
		}
	}
	if (rc == ERR_CANCELLED && ctx.lease_lost) {
		log_msg(LOG_WARN, run_id, "lease lost: stopped, nothing written");
	} else if (rc == ERR_CANCELLED && ctx.stopping) {
		/* Shutdown: the output was never released, so the run goes back to
		 * the queue under the charge it already paid.  Whatever its attempt
		 * count: a process stopping never fails a run. */
		settle(w, run_id, "queued", NULL, NULL);
		log_msg(LOG_INFO, run_id, "run re-queued at shutdown");
	} else if (rc == ERR_CANCELLED && ctx.cancel_requested) {
		settle(w, run_id, "cancelled", NULL, NULL);
		log_msg(LOG_INFO, run_id, "run cancelled; its charge stands");
	} else if (rc == ERR_CANCELLED && ctx.timed_out && ctx.attempt < w->srv->cfg.max_attempts) {
		/* A busy machine, not the run: restart it from the beginning under
		 * the same plan and the same charge (nothing was released, so the
		 * restart costs nothing extra). */
		log_msg(LOG_WARN, run_id,
			"run exceeded its timeout of %.0f s on attempt %u; re-queued", ctx.timeout,
			ctx.attempt);
		settle(w, run_id, "queued", NULL, NULL);
	} else if (rc == ERR_CANCELLED && ctx.timed_out) {
		/* Generic like every failure; the charge stands (README). */
		log_msg(LOG_WARN, run_id, "run exceeded its timeout of %.0f s on its last attempt",
			ctx.timeout);
		settle(w, run_id, "failed", "internal_error", NULL);
	} else if (rc != ERR_OK) {
		log_err(run_id, &e); /* 4xx codes log their field only (log.c) */
		settle(w, run_id, "failed", "internal_error", NULL);
	}
	slot_release(w);
	free(result_text);
	json_decref(result);
	free(x);
	dataset_cache_put(w->srv->datasets, ds);
	planned_run_clear(&run);
	json_decref(doc);
}

/* Sleep until a NOTIFY arrives or timeout_ms passes.  A connection that
 * fails here is left CONNECTION_BAD for db_ensure() to reopen. */
static void
wait_for_work(struct db_conn *db, int timeout_ms)
{
	struct pollfd pfd = { .fd = db->pg != NULL ? PQsocket(db->pg) : -1, .events = POLLIN };
	PGnotify *n;

	if (pfd.fd < 0) {
		sleep_ms((unsigned)timeout_ms);
		return;
	}
	if (poll(&pfd, 1, timeout_ms) > 0)
		(void)PQconsumeInput(db->pg);
	while ((n = PQnotifies(db->pg)) != NULL)
		PQfreemem(n);
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	/* The connection generation LISTEN was issued on: a reconnection
	 * (db_ensure after a PostgreSQL restart) drops it, and without it
	 * pickup falls back to the 500 ms poll. */
	unsigned listening_on = 0;

	while (!atomic_load(&w->srv->stopping)) {
		struct err e = { 0 };
		PGresult *claim = NULL;
		struct timespec now;
		enum err_code rc;

		if (db_ensure(w->db, &e) != ERR_OK) {
			log_err(NULL, &e);
			sleep_ms(1000); /* back off */
			continue;
		}
		if (listening_on != w->db->generation &&
		    db_command(w->db, "LISTEN " RUNS_CHANNEL, &e) == ERR_OK)
			listening_on = w->db->generation;
		/* Expired leases (a dead replica's runs) are re-queued by the
		 * keeper every reaper period and here at most once a second: not
		 * before every claim, which cost one more UPDATE per run and per
		 * wake-up under load (issue 17: 2 workers, each woken by every
		 * admission's NOTIFY). */
		clock_gettime(CLOCK_MONOTONIC, &now);
		rc = ERR_OK;
		if (seconds_between(&w->last_reap, &now) >= REAP_EVERY_S) {
			rc = worker_requeue_expired(w->db, w->srv->cfg.max_attempts, NULL, &e);
			w->last_reap = now;
		}
		if (rc == ERR_OK)
			rc = claim_next(w, &claim, &e);
		if (rc == ERR_NOT_FOUND) {
			wait_for_work(w->db, 500);
			continue;
		}
		if (rc != ERR_OK) {
			log_err(NULL, &e);
			sleep_ms(1000);
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
	ws->srv = srv;
	pthread_mutex_init(&ws->lock, NULL);
	atomic_init(&ws->keeper_stop, false);
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &ws->w[i];

		w->srv = srv;
		w->all = ws;
		w->index = i;
		snprintf(w->owner, sizeof(w->owner), "%s/w%u", srv->cfg.instance_id, i);
		atomic_init(&w->slot.steps, 0);
		atomic_init(&w->slot.lost, false);
		atomic_init(&w->slot.cancel, false);
	}
	ws->kdb = db_connect(srv->cfg.database_url, e);
	if (ws->kdb == NULL)
		goto out_fail;
	if (pthread_create(&ws->keeper, NULL, keeper_main, ws) != 0) {
		err_set(e, ERR_INTERNAL, "cannot start the lease keeper");
		goto out_fail;
	}
	ws->keeper_started = true;
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &ws->w[i];

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
	/* Workers first: while they finish their step and settle, the keeper
	 * still renews their leases. */
	for (unsigned i = 0; i < ws->count; i++) {
		if (ws->w[i].started)
			pthread_join(ws->w[i].thread, NULL);
		db_close(ws->w[i].db);
	}
	atomic_store(&ws->keeper_stop, true);
	if (ws->keeper_started)
		pthread_join(ws->keeper, NULL);
	db_close(ws->kdb);
	pthread_mutex_destroy(&ws->lock);
	free(ws);
}
