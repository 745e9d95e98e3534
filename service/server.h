/*
 * server.h - process-wide state: written before threads start, read-only
 * afterwards, except the atomics.
 */
#ifndef SERVICE_SERVER_H
#define SERVICE_SERVER_H

#include <stdatomic.h>

#include "config.h"
#include "db.h"
#include "metrics.h"

struct server {
	struct config cfg;
	struct db_pool *pool;           /* owned: connections for HTTP threads */
	struct metrics *metrics;        /* owned */
	struct dataset_cache *datasets; /* owned: loaded datasets shared by the workers */
	atomic_bool stopping;           /* set on SIGTERM; workers finish their step and leave */
	void *mhd;                      /* owned: http.c's state, the daemon and its limits */
	atomic_bool
		draining; /* set on SIGTERM: /readyz 503, the rest still served until stopping */
};

#endif /* SERVICE_SERVER_H */
