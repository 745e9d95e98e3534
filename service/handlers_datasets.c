/*
 * handlers_datasets.c - /v1/datasets routes.  Thin: parse the request
 * parts that are HTTP's (path, query, headers) and call datasets.c.
 * Views are PostgreSQL's JSON text, passed through (pgjson.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "auth.h"
#include "datasets.h"
#include "handlers.h"
#include "ledger.h"

enum err_code
page_params(const struct request *rq, long long *ret_limit, const char **ret_cursor, struct err *e)
{
	const char *limit = http_query(rq, "limit");
	long long v = 20;
	char *end;

	if (limit != NULL) {
		v = strtoll(limit, &end, 10);
		if (limit[0] == '\0' || *end != '\0' || v < 1 || v > 100)
			return err_set_field(e, ERR_INVALID, "limit",
					     "'limit' must be an integer within [1, 100]");
	}
	*ret_limit = v;
	*ret_cursor = http_query(rq, "cursor");
	return ERR_OK;
}

void
reply_json_text(struct reply *r, unsigned status, char *text)
{
	r->status = status;
	r->text = text;
	r->text_type = "application/json";
}

HANDLER(handle_dataset_create)
{
	char *view = NULL, id[37];
	struct audit_actor who;
	enum err_code rc;

	audit_actor_from_request(rq, &who);
	rc = datasets_create(rq->db, rq->auth.tenant, srv->cfg.max_features, rq->body, rq->len,
			     &view, id, &who, e);

	if (rc != ERR_OK)
		return rc;
	reply_json_text(ret, 201, view);
	snprintf(ret->location, sizeof(ret->location), "/v1/datasets/%s", id);
	return ERR_OK;
}

HANDLER(handle_dataset_list)
{
	long long limit;
	const char *cursor;
	char *page = NULL;
	enum err_code rc = page_params(rq, &limit, &cursor, e);

	if (rc == ERR_OK)
		rc = datasets_list(rq->db, rq->auth.tenant, cursor, limit, &page, e);
	if (rc == ERR_OK)
		reply_json_text(ret, 200, page);
	return rc;
}

HANDLER(handle_dataset_get)
{
	char *view = NULL;
	enum err_code rc = datasets_view(rq->db, rq->auth.tenant, rq->path_id, &view, e);

	if (rc == ERR_OK)
		reply_json_text(ret, 200, view);
	return rc;
}

HANDLER(handle_dataset_update)
{
	char *view = NULL;
	struct audit_actor who;
	enum err_code rc;

	audit_actor_from_request(rq, &who);
	rc = datasets_update(rq->db, rq->auth.tenant, rq->path_id, rq->body, rq->len, &view, &who,
			     e);

	if (rc == ERR_OK)
		reply_json_text(ret, 200, view);
	return rc;
}

HANDLER(handle_dataset_delete)
{
	struct audit_actor who;

	audit_actor_from_request(rq, &who);
	ret->status = 204;
	return datasets_delete(rq->db, rq->auth.tenant, rq->path_id, &who, e);
}

HANDLER(handle_dataset_budget)
{
	const char *limit = http_query(rq, "limit");
	long long v = LEDGER_PAGE_DEFAULT;
	char *view = NULL, *end;
	enum err_code rc;

	/* ROUTE_KEY_IN_READ: the key is checked in ledger_view()'s statement,
	 * or here first when the request is refused before it. */
	if (limit != NULL) {
		v = strtoll(limit, &end, 10);
		if (limit[0] == '\0' || *end != '\0' || v < 1 || v > LEDGER_PAGE_MAX) {
			rc = auth_check_key(rq->db, &rq->key, &rq->auth, e);
			if (rc != ERR_OK)
				return rc;
			return err_set_field(e, ERR_INVALID, "limit",
					     "'limit' must be an integer within [1, %d]",
					     LEDGER_PAGE_MAX);
		}
	}
	rc = ledger_view(rq->db, &rq->key, rq->path_id, http_query(rq, "cursor"), (unsigned)v,
			 &rq->auth, &view, e);
	if (rc == ERR_OK)
		reply_json_text(ret, 200, view);
	return rc;
}
