/*
 * handlers_keys.c - /v1/keys: an owner's keys of its own tenant (keys.h).
 * A key is shown once, in the reply that created it.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "handlers.h"
#include "jv.h"
#include "keys.h"

HANDLER(handle_key_list)
{
	long long limit;
	const char *cursor;
	char *page = NULL;
	enum err_code rc = page_params(rq, &limit, &cursor, e);

	if (rc == ERR_OK)
		rc = keys_list(rq->db, rq->auth.tenant, cursor, limit, &page, e);
	if (rc == ERR_OK)
		reply_json_text(ret, 200, page);
	return rc;
}

HANDLER(handle_key_create)
{
	static const char *const top[] = { "role", NULL };
	char key[AUTH_KEY_LEN + 1], *view = NULL;
	const char *role = NULL;
	struct audit_actor who;
	json_t *doc = NULL;
	enum err_code rc;

	rc = jv_parse_object(rq->body, rq->len, &doc, e);
	if (rc == ERR_OK)
		rc = jv_only_keys(doc, "", top, e);
	if (rc == ERR_OK)
		rc = jv_string(doc, "", "role", true, 16, &role, e);
	if (rc == ERR_OK) {
		audit_actor_from_request(rq, &who);
		rc = keys_create(rq->db, &who, role, key, &view, e);
	}
	json_decref(doc);
	if (rc != ERR_OK)
		return rc;
	OPENSSL_cleanse(key, sizeof(key)); /* the view holds it, once */
	reply_json_text(ret, 201, view);
	return ERR_OK;
}

HANDLER(handle_key_revoke)
{
	const char *confirm = http_query(rq, "confirm");
	struct audit_actor who;
	char *view = NULL;
	enum err_code rc;

	if (confirm != NULL && strcmp(confirm, "true") != 0 && strcmp(confirm, "false") != 0)
		return err_set_field(e, ERR_INVALID, "confirm", "'confirm' must be true or false");
	audit_actor_from_request(rq, &who);
	rc = keys_revoke(rq->db, &who, rq->auth.tenant, rq->path_id,
			 confirm != NULL && strcmp(confirm, "true") == 0, &view, e);
	if (rc == ERR_OK)
		reply_json_text(ret, 200, view);
	return rc;
}
