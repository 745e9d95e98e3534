/*
 * handlers.h - one function per route (router.c's table).
 */
#ifndef SERVICE_HANDLERS_H
#define SERVICE_HANDLERS_H

#include "http.h"

#define HANDLER(name)                                                                              \
	enum err_code name(struct server *srv, struct request *rq, struct reply *ret, struct err *e)

HANDLER(handle_healthz);
HANDLER(handle_readyz);
HANDLER(handle_metrics);
HANDLER(handle_algorithms);
HANDLER(handle_dataset_create);
HANDLER(handle_dataset_list);
HANDLER(handle_dataset_get);
HANDLER(handle_dataset_update);
HANDLER(handle_dataset_delete);
HANDLER(handle_run_create);
HANDLER(handle_run_list);
HANDLER(handle_run_get);
HANDLER(handle_run_cancel);
HANDLER(handle_run_estimate);
HANDLER(handle_dataset_budget);
HANDLER(handle_run_list_all);
HANDLER(handle_key_list);
HANDLER(handle_key_create);
HANDLER(handle_key_revoke);
HANDLER(handle_audit_list);
HANDLER(handle_run_model);
HANDLER(handle_run_synthetic_csv);
HANDLER(handle_run_predict);

/* GET /v1/algorithms body, also printed by `dpoptd solve --list` later. */
json_t *catalogue_json(void);

/* Reply with JSON text (consumed). */
void reply_json_text(struct reply *r, unsigned status, char *text);

/* limit (1..100, default 20) and cursor from the query string. */
enum err_code page_params(const struct request *rq, long long *ret_limit, const char **ret_cursor,
			  struct err *e);

#endif /* SERVICE_HANDLERS_H */
