/*
 * handlers_health.c - Kubernetes probes and Prometheus metrics.  No key
 * needed; nothing tenant- or data-specific is exposed.
 */
#include <stdlib.h>

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
		return e->code;
	rc = migrate_check(db, e);
	db_pool_release(srv->pool, db);
	if (rc != ERR_OK)
		return rc;
	if (atomic_load(&srv->stopping))
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
		return e->code;
	ret->status = 200;
	ret->text_type = "text/plain; version=0.0.4";
	return ERR_OK;
}
