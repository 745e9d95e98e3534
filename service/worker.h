/*
 * worker.h - the threads that run queued runs.
 *
 * One worker = one thread = one PGconn for the thread's whole life.  The
 * queue is the runs table: a worker claims the oldest queued run with
 * FOR UPDATE SKIP LOCKED (so every worker of every replica can poll the
 * same table) under its own lease owner id ("<instance>/w<index>"), and
 * settles the run at the end.  Idle workers sleep on LISTEN dpopt_runs
 * (issued again after every reconnection).
 *
 * One more thread per process, the lease keeper, has its own connection:
 * on a timer (a quarter lease, at most 1 s) it renews the lease of every
 * run a worker holds, through every phase (dataset load, steps,
 * evaluation, result write), and publishes progress; every
 * DPOPT_REAPER_SECONDS it re-queues runs whose lease expired.  A renewal
 * that fails (database unavailable) is retried on the next tick; only a
 * renewal that finds the run no longer ours stops the worker, which then
 * writes nothing.
 *
 * Lease rule (docs/privacy-model.md §4.4): a run whose lease expired (its
 * process died) is re-queued under the same, already paid charge, up to
 * DPOPT_MAX_ATTEMPTS claims, then failed; so is a run that exceeded its
 * timeout (a busy machine), restarted from the beginning with the same
 * plan; a run stopped at shutdown is always re-queued (attempts counts
 * claims);
 * an algorithm error is a final failure; nothing is refunded after a
 * claim.  The timeout counts the steps only, never the dataset load.
 */
#ifndef SERVICE_WORKER_H
#define SERVICE_WORKER_H

#include "dataset_load.h"
#include "err.h"
#include "server.h"

struct workers;

/* Start srv->cfg.workers threads; owned handle or NULL with *e set. */
struct workers *workers_start(struct server *srv, struct err *e);

/* Wait for every worker to finish its current step and leave (the caller
 * has set srv->stopping), then free. */
void workers_join(struct workers *w);

/* The dataset cache's loader (dataset_cache.h): ctx is the struct
 * server, arg is the dataset's struct dataset_meta. */
enum err_code worker_load_dataset(void *ctx, struct db_conn *db, const char *id, const void *arg,
				  struct loaded_dataset *ret, struct err *e);

/* Re-queue (or fail, past the attempt limit) runs whose lease expired. */
enum err_code worker_requeue_expired(struct db_conn *db, unsigned max_attempts, unsigned *ret_count,
				     struct err *e);

#endif /* SERVICE_WORKER_H */
