/*
 * handlers_runs.c - run routes.  Handlers never run algorithms: they
 * validate, charge, queue and answer 202; clients poll GET /v1/runs/{id}.
 */
#include <stdio.h>

#include "handlers.h"
#include "runs.h"

HANDLER(handle_run_create)
{
	bool existing = false;
	enum err_code rc;

	rc = runs_create(rq->db, rq->auth.tenant, rq->path_id, rq->body, rq->len,
			 http_header(rq, "Idempotency-Key"), &ret->body, &existing, e);
	if (rc != ERR_OK)
		return rc;
	ret->status = 202;
	snprintf(ret->location, sizeof(ret->location), "/v1/runs/%s",
		 json_string_value(json_object_get(ret->body, "id")));
	return ERR_OK;
}

HANDLER(handle_run_list)
{
	long long limit;
	const char *cursor;
	enum err_code rc = page_params(rq, &limit, &cursor, e);

	if (rc == ERR_OK)
		rc = runs_list(rq->db, rq->auth.tenant, rq->path_id, cursor, limit, &ret->body, e);
	ret->status = 200;
	return rc;
}

HANDLER(handle_run_get)
{
	ret->status = 200;
	return runs_view(rq->db, rq->auth.tenant, rq->path_id, &ret->body, e);
}

HANDLER(handle_run_cancel)
{
	ret->status = 200;
	return runs_cancel(rq->db, rq->auth.tenant, rq->path_id, &ret->body, e);
}
