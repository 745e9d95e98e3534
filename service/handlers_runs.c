/*
 * handlers_runs.c - run routes.  Handlers never run algorithms: they
 * validate, charge, queue and answer 202; clients poll GET /v1/runs/{id}.
 */
#include <stdio.h>

#include "handlers.h"
#include "runs.h"

/* The admission limits: the work limit, and the estimated time at this
 * machine's measured speed (cfg.work_rate, set at start-up by main.c). */
static struct run_limits
limits(const struct server *srv)
{
	return (struct run_limits){
		.max_work = srv->cfg.max_run_work,
		.work_rate = srv->cfg.work_rate,
		.timeout_margin = srv->cfg.run_timeout_margin,
		.min_timeout = srv->cfg.min_run_timeout,
		.max_seconds = srv->cfg.max_run_seconds,
		.max_universe = srv->cfg.max_universe,
		.max_vertices = srv->cfg.max_vertices,
	};
}

HANDLER(handle_run_create)
{
	struct run_limits lim = limits(srv);
	char *view = NULL, id[37];
	bool existing = false;
	struct audit_actor who;
	enum err_code rc;

	audit_actor_from_request(rq, &who);
	rc = runs_create(rq->db, rq->auth.tenant, rq->path_id, rq->body, rq->len,
			 http_header(rq, "Idempotency-Key"), &lim, &view, id, &existing, &who, e);
	if (rc != ERR_OK)
		return rc;
	/* A replay answers as the first request did, and says it is one. */
	reply_json_text(ret, 202, view);
	ret->replayed = existing;
	snprintf(ret->location, sizeof(ret->location), "/v1/runs/%s", id);
	return ERR_OK;
}

HANDLER(handle_run_list)
{
	long long limit;
	const char *cursor;
	char *page = NULL;
	enum err_code rc = page_params(rq, &limit, &cursor, e);

	if (rc == ERR_OK)
		rc = runs_list(rq->db, rq->auth.tenant, rq->path_id, cursor, limit, &page, e);
	if (rc == ERR_OK)
		reply_json_text(ret, 200, page);
	return rc;
}

HANDLER(handle_run_get)
{
	char *view = NULL;
	enum err_code rc = runs_view_keyed(rq->db, &rq->key, rq->path_id, &rq->auth, &view, e);

	if (rc == ERR_OK)
		reply_json_text(ret, 200, view);
	return rc;
}

HANDLER(handle_run_cancel)
{
	char *view = NULL;
	bool pending = false;
	struct audit_actor who;
	enum err_code rc;

	audit_actor_from_request(rq, &who);
	rc = runs_cancel(rq->db, rq->auth.tenant, rq->path_id, &view, &pending, &who, e);

	/* 202 while a running run has yet to stop; 200 once cancelled. */
	if (rc == ERR_OK)
		reply_json_text(ret, pending ? 202 : 200, view);
	return rc;
}

HANDLER(handle_run_estimate)
{
	struct run_limits lim = limits(srv);

	ret->status = 200;
	return runs_estimate(rq->db, rq->auth.tenant, rq->path_id, rq->body, rq->len, &lim,
			     &ret->body, e);
}

HANDLER(handle_run_list_all)
{
	struct runs_filter f = {
		.state = http_query(rq, "state"),
		.dataset_id = http_query(rq, "dataset_id"),
		.order = http_query(rq, "order"),
	};
	long long limit;
	const char *cursor;
	char *page = NULL;
	enum err_code rc = page_params(rq, &limit, &cursor, e);

	if (rc == ERR_OK)
		rc = runs_list_all(rq->db, rq->auth.tenant, &f, cursor, limit, &page, e);
	if (rc == ERR_OK)
		reply_json_text(ret, 200, page);
	return rc;
}

/* GET /v1/runs/{id}/synthetic.csv: the synthetic rows of a succeeded
 * synthetic-data run (synthetic_csv.h), as GET /v1/runs/{id}: any key of
 * the run's tenant; another tenant's run, or one without synthetic rows,
 * 404; one that has not succeeded 409. */
static size_t
csv_read(void *cls, char *buf, size_t max)
{
	return synthetic_csv_read(cls, buf, max);
}

static void
csv_close(void *cls)
{
	synthetic_csv_close(cls);
}

HANDLER(handle_run_synthetic_csv)
{
	struct synthetic_csv *csv = NULL;
	enum err_code rc;

	(void)srv;
	/* Every check is done here; the rows are streamed after the headers
	 * (synthetic_csv.h), so a large run never sits in memory as text. */
	rc = runs_synthetic_csv(rq->db, rq->auth.tenant, rq->path_id, &csv, e);
	if (rc == ERR_OK) {
		ret->status = 200;
		ret->text_type = "text/csv";
		ret->stream = (struct reply_stream){ csv_read, csv_close, csv };
	}
	return rc;
}
