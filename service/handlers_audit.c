/*
 * handlers_audit.c - GET /v1/audit: the tenant's audit trail, for owners.
 */
#include "audit.h"
#include "handlers.h"

HANDLER(handle_audit_list)
{
	struct audit_filter f = {
		.dataset_id = http_query(rq, "dataset_id"),
		.run_id = http_query(rq, "run_id"),
		.key_id = http_query(rq, "key_id"),
		.action = http_query(rq, "action"),
	};
	long long limit;
	const char *cursor;
	char *page = NULL;
	enum err_code rc = page_params(rq, &limit, &cursor, e);

	if (rc == ERR_OK)
		rc = audit_list(rq->db, rq->auth.tenant, &f, cursor, limit, &page, e);
	if (rc == ERR_OK)
		reply_json_text(ret, 200, page);
	return rc;
}
