/*
 * metrics.h - Prometheus counters kept in process memory.
 *
 * Requests by route and status, and a latency histogram per route, as
 * relaxed atomics (lock-free from every HTTP thread).  Runs by state and
 * the queue depth are read from the database at scrape time, so every
 * replica reports the shared queue.  Aggregates only: no dataset, tenant
 * or run labels; algorithm failures and infrastructure failures are one
 * "failed" state.
 */
#ifndef SERVICE_METRICS_H
#define SERVICE_METRICS_H

#include <stddef.h>

#include "dataset_cache.h"
#include "db.h"
#include "err.h"

struct metrics;

/* Owned; NULL on allocation failure.  routes: the route count (index
 * routes is used for "no route"). */
struct metrics *metrics_new(size_t routes);
void metrics_free(struct metrics *m);

void metrics_observe_request(struct metrics *m, size_t route, unsigned status, double seconds);

/* Render the Prometheus text format; owned string or NULL with *e set.
 * db may be NULL (then the run gauges are left out). */
char *metrics_render(struct metrics *m, struct db_conn *db, struct dataset_cache *cache,
		     struct err *e);

#endif /* SERVICE_METRICS_H */
