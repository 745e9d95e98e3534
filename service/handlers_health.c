/*
 * handlers_health.c - Kubernetes probes and Prometheus metrics.  No key
 * needed; nothing tenant- or data-specific is exposed.
 *
 * /healthz is liveness: it never touches the database, so a hung
 * PostgreSQL does not get the process restarted.  /readyz waits for the
 * database at most DPOPT_READYZ_TIMEOUT_MS (its pooled connection's wait
 * bound) and answers 503 past it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "metrics.h"
#include "migrate.h"

HANDLER(handle_healthz)
{
	ret->status = 200;
	ret->body = json_pack("{s:s}", "status", "ok");
	return ret->body != NULL ? ERR_OK : err_set(e, ERR_NOMEM, "out of memory");
}

HANDLER(handle_readyz)
{
	struct db_conn *db = db_pool_acquire(srv->pool, e);
	enum err_code rc;

	if (db == NULL)
		return err_failed(e);
	db_set_wait(db, srv->cfg.readyz_timeout_ms);
	rc = migrate_check(db, e);
	db_pool_release(srv->pool, db);
	if (rc != ERR_OK)
		return rc;
	if (atomic_load(&srv->stopping) || atomic_load(&srv->draining))
		return err_set(e, ERR_DB, "shutting down");
	ret->status = 200;
	ret->body = json_pack("{s:s}", "status", "ready");
	return ret->body != NULL ? ERR_OK : err_set(e, ERR_NOMEM, "out of memory");
}

HANDLER(handle_metrics)
{
	struct db_conn *db = db_pool_acquire(srv->pool, NULL);

	ret->text = metrics_render(srv->metrics, db, srv->datasets,
				   e); /* db may be NULL: gauges left out */
	db_pool_release(srv->pool, db);
	if (ret->text == NULL)
		return err_failed(e);
	/* The work model's measured speed (work_rate.h): a machine fact, not
	 * a data value. */
	{
		char gauge[256];
		size_t len = strlen(ret->text);
		int n = snprintf(gauge, sizeof(gauge),
				 "# HELP dpopt_work_rate Work units per CPU second measured at "
				 "start-up (or DPOPT_WORK_RATE).\n"
				 "# TYPE dpopt_work_rate gauge\ndpopt_work_rate %.6g\n",
				 srv->cfg.work_rate);
		char *text = realloc(ret->text, len + (size_t)n + 1);

		if (text == NULL)
			return err_set(e, ERR_NOMEM, "out of memory");
		memcpy(text + len, gauge, (size_t)n + 1);
		ret->text = text;
	}
	ret->status = 200;
	ret->text_type = "text/plain; version=0.0.4";
	return ERR_OK;
}
