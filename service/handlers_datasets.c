/*
 * handlers_datasets.c - /v1/datasets routes.  Thin: parse the request
 * parts that are HTTP's (path, query, headers) and call datasets.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "datasets.h"
#include "handlers.h"

enum err_code
page_params(const struct request *rq, long long *ret_limit, const char **ret_cursor,
	    struct err *e)
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

HANDLER(handle_dataset_create)
{
	enum err_code rc = datasets_create(rq->db, rq->auth.tenant, srv->cfg.max_features, rq->body,
					   rq->len, &ret->body, e);

	if (rc != ERR_OK)
		return rc;
	ret->status = 201;
	snprintf(ret->location, sizeof(ret->location), "/v1/datasets/%s",
		 json_string_value(json_object_get(ret->body, "id")));
	return ERR_OK;
}

HANDLER(handle_dataset_list)
{
	long long limit;
	const char *cursor;
	enum err_code rc = page_params(rq, &limit, &cursor, e);

	if (rc == ERR_OK)
		rc = datasets_list(rq->db, rq->auth.tenant, cursor, limit, &ret->body, e);
	ret->status = 200;
	return rc;
}

HANDLER(handle_dataset_get)
{
	ret->status = 200;
	return datasets_view(rq->db, rq->auth.tenant, rq->path_id, &ret->body, e);
}

HANDLER(handle_dataset_update)
{
	ret->status = 200;
	return datasets_update(rq->db, rq->auth.tenant, rq->path_id, rq->body, rq->len, &ret->body,
			       e);
}

HANDLER(handle_dataset_delete)
{
	ret->status = 204;
	return datasets_delete(rq->db, rq->auth.tenant, rq->path_id, e);
}
