/*
 * handlers_predict.c - a run's model and predictions with it:
 *
 *   GET  /v1/runs/{id}/model    the model document (model.h)
 *   POST /v1/runs/{id}/predict  rows in the body (text/csv or
 *                               application/json {"rows": [...]}) scored
 *
 * Any key of the run's tenant (analyst or owner); another tenant's run is
 * 404, a run that has not succeeded 409.  Predicting is post-processing of
 * a release the tenant already holds, on rows the client sends: nothing is
 * charged, stored or logged of the rows (the access log has the route and
 * status; a 4xx message is never logged, log.c).  The body is bounded by
 * DPOPT_MAX_BODY_BYTES (413) and MODEL_MAX_ROWS rows (400 naming "rows").
 */
#include <stdlib.h>

#include "handlers.h"
#include "jv.h"
#include "model.h"
#include "runs.h"

HANDLER(handle_run_model)
{
	(void)srv;
	ret->status = 200;
	return runs_model(rq->db, rq->auth.tenant, rq->path_id, &ret->body, e);
}

HANDLER(handle_run_predict)
{
	bool csv = http_content_type_is(rq, "text/csv");
	json_t *doc = NULL, *body = NULL;
	struct model m = { 0 };
	double *rows = NULL;
	size_t n = 0;
	enum err_code rc;

	(void)srv;
	if (!csv && !http_content_type_is(rq, "application/json"))
		return err_set_field(e, ERR_MEDIA_TYPE, "Content-Type",
				     "Content-Type must be text/csv or application/json");
	rc = runs_model(rq->db, rq->auth.tenant, rq->path_id, &doc, e);
	if (rc == ERR_OK)
		rc = model_load(doc, &m, e);
	if (rc == ERR_OK && csv)
		rc = model_rows_csv(&m, rq->body != NULL ? rq->body : "", rq->len, MODEL_MAX_ROWS,
				    &rows, &n, e);
	else if (rc == ERR_OK) {
		rc = jv_parse_object(rq->body != NULL ? rq->body : "", rq->len, &body, e);
		if (rc == ERR_OK)
			rc = model_rows_json(&m, body, MODEL_MAX_ROWS, &rows, &n, e);
	}
	if (rc == ERR_OK) {
		ret->body = model_predict_json(&m, rows, n);
		if (ret->body == NULL)
			rc = err_set(e, ERR_NOMEM, "out of memory for the predictions");
		else if (json_object_set(ret->body, "run_id", json_object_get(doc, "run_id")) != 0)
			rc = err_set(e, ERR_NOMEM, "out of memory for the predictions");
		ret->status = 200;
	}
	free(rows);
	json_decref(body);
	json_decref(doc);
	model_clear(&m);
	return rc;
}
