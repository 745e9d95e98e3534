/*
 * worker.h - the threads that run queued runs.
 *
 * One worker = one thread = one PGconn for the thread's whole life.  The
 * queue is the runs table: a worker claims the oldest queued run with
 * FOR UPDATE SKIP LOCKED (so every worker of every replica can poll the
 * same table), holds a lease it renews while the run progresses, and
 * settles the run at the end.  Idle workers sleep on LISTEN dpopt_runs.
 *
 * Lease rule (ACCOUNTING.md section 4): a run whose lease expired (its
 * process died) is re-queued under the same, already paid charge, up to
 * DPOPT_MAX_ATTEMPTS claims, then failed; an algorithm error is a final
 * failure; nothing is refunded after a claim.
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

/* Re-queue (or fail, past the attempt limit) runs whose lease expired.
 * Exposed for `dpoptd` start-up and the tests. */
/* The dataset cache's loader (dataset_cache.h): arg is the dataset's
 * struct dataset_meta. */
enum err_code worker_load_dataset(void *ctx, struct db_conn *db, const char *id, const void *arg,
				  struct loaded_dataset *ret, struct err *e);

enum err_code worker_requeue_expired(struct db_conn *db, unsigned max_attempts, unsigned *ret_count,
				     struct err *e);

#endif /* SERVICE_WORKER_H */
