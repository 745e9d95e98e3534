/*
 * router.c - the route table: every route of the API, and nothing else.
 * api/openapi.yaml lists the same routes; a test compares the two.
 */
#include <string.h>

#include "handlers.h"
#include "http.h"
#include "upload.h"
#include "util.h"

#define AUTH    ROUTE_AUTH
#define JSON    ROUTE_JSON_BODY
#define OWNER   ROUTE_OWNER
#define KEYREAD ROUTE_KEY_IN_READ

static const struct route routes[] = {
	{ "GET", "/healthz", handle_healthz, NULL, 0, NULL },
	{ "GET", "/readyz", handle_readyz, NULL, 0, NULL },
	{ "GET", "/metrics", handle_metrics, NULL, 0, NULL },
	{ "GET", "/v1/algorithms", handle_algorithms, NULL, AUTH, NULL },
	{ "POST", "/v1/datasets", handle_dataset_create, NULL, AUTH | JSON | OWNER, NULL },
	{ "GET", "/v1/datasets", handle_dataset_list, NULL, AUTH, NULL },
	{ "GET", "/v1/datasets/{id}", handle_dataset_get, NULL, AUTH, NULL },
	{ "PATCH", "/v1/datasets/{id}", handle_dataset_update, NULL, AUTH | JSON | OWNER, NULL },
	{ "DELETE", "/v1/datasets/{id}", handle_dataset_delete, NULL, AUTH | OWNER, NULL },
	{ "PUT", "/v1/datasets/{id}/data", NULL, &upload_ops, AUTH | OWNER,
	  "text/csv, text/x-libsvm" },
	{ "POST", "/v1/datasets/{id}/runs", handle_run_create, NULL, AUTH | JSON, NULL },
	{ "GET", "/v1/datasets/{id}/runs", handle_run_list, NULL, AUTH, NULL },
	{ "POST", "/v1/datasets/{id}/runs:estimate", handle_run_estimate, NULL, AUTH | JSON, NULL },
	{ "GET", "/v1/datasets/{id}/budget", handle_dataset_budget, NULL, AUTH | KEYREAD, NULL },
	{ "GET", "/v1/runs/{id}", handle_run_get, NULL, AUTH | KEYREAD, NULL },
	{ "DELETE", "/v1/runs/{id}", handle_run_cancel, NULL, AUTH, NULL },
	{ "GET", "/v1/runs", handle_run_list_all, NULL, AUTH, NULL },
	{ "GET", "/v1/keys", handle_key_list, NULL, AUTH | OWNER, NULL },
	{ "POST", "/v1/keys", handle_key_create, NULL, AUTH | JSON | OWNER, NULL },
	{ "DELETE", "/v1/keys/{id}", handle_key_revoke, NULL, AUTH | OWNER, NULL },
	{ "GET", "/v1/audit", handle_audit_list, NULL, AUTH | OWNER, NULL },
	{ "GET", "/v1/runs/{id}/model", handle_run_model, NULL, AUTH, NULL },
	{ "GET", "/v1/runs/{id}/synthetic.csv", handle_run_synthetic_csv, NULL, AUTH, NULL },
	{ "POST", "/v1/runs/{id}/predict", handle_run_predict, NULL, AUTH, NULL },
};

size_t
router_count(void)
{
	return ARRAY_SIZE(routes);
}

const struct route *
router_at(size_t i)
{
	return i < ARRAY_SIZE(routes) ? &routes[i] : NULL;
}

/* Match path against pattern; the {id} segment (at most one) goes to id. */
static bool
path_matches(const char *pattern, const char *path, char id[37])
{
	while (*pattern != '\0' && *path != '\0') {
		if (strncmp(pattern, "{id}", 4) == 0) {
			size_t n = strcspn(path, "/");

			if (n == 0 || n > 36)
				return false;
			memcpy(id, path, n);
			id[n] = '\0';
			pattern += 4;
			path += n;
			continue;
		}
		if (*pattern != *path)
			return false;
		pattern++;
		path++;
	}
	return *pattern == '\0' && *path == '\0';
}

const struct route *
router_match(const char *method, const char *path, char path_id[37], char ret_allow[64])
{
	char id[37] = "";
	size_t used = 0;

	ret_allow[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(routes); i++) {
		if (!path_matches(routes[i].pattern, path, id))
			continue;
		if (strcmp(routes[i].method, method) == 0) {
			memcpy(path_id, id, sizeof(id));
			return &routes[i];
		}
		used += (size_t)snprintf(ret_allow + used, used < 64 ? 64 - used : 0, "%s%s",
					 used > 0 ? ", " : "", routes[i].method);
	}
	return NULL;
}
