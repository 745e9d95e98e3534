/*
 * keys.c - API key management in PostgreSQL (keys.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "keys.h"
#include "pgjson.h"

/* The view of a row k of api_keys: never the hash. */
#define KEY_JSON                                                                                   \
	"json_build_object('id', k.id, 'tenant', k.tenant_id, 'role', k.role,"                     \
	" 'state', CASE WHEN k.revoked_at IS NULL THEN 'active'"                                   \
	"  WHEN k.revoked_at > now() THEN 'expiring' ELSE 'revoked' END,"                          \
	" 'created_at', k.created_at, 'revoked_at', k.revoked_at,"                                 \
	" 'rotated_from', k.rotated_from)"

/* Valid now: not revoked, or revoked at a future time (a grace period). */
#define KEY_VALID "(k.revoked_at IS NULL OR k.revoked_at > now())"

bool
keys_is_id(const char *s)
{
	if (s == NULL || strlen(s) != 16)
		return false;
	for (size_t i = 0; i < 16; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static void
hex(const unsigned char *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Insert a new key of tenant and role (rotated_from: NULL or the key it
 * replaces) inside the caller's transaction; ret_key gets the key, ret_id
 * its id. */
static enum err_code
insert_key(struct db_conn *db, const char *tenant, const char *role, const char *rotated_from,
	   char ret_key[AUTH_KEY_LEN + 1], char ret_id[17], struct err *e)
{
	unsigned char idb[8], secret[32], hash[32];
	char key[AUTH_KEY_LEN + 1], id[17], hash_hex[65];
	unsigned int len = 0;
	enum err_code rc;

	if (RAND_priv_bytes(idb, sizeof(idb)) != 1 || RAND_priv_bytes(secret, sizeof(secret)) != 1)
		return err_set(e, ERR_INTERNAL, "the random generator failed");
	hex(idb, sizeof(idb), id);
	memcpy(key, "dpk_", 4);
	memcpy(key + 4, id, 16);
	key[20] = '_';
	hex(secret, sizeof(secret), key + 21);
	OPENSSL_cleanse(secret, sizeof(secret));
	if (EVP_Digest(key, AUTH_KEY_LEN, hash, &len, EVP_sha256(), NULL) != 1 || len != 32) {
		OPENSSL_cleanse(key, sizeof(key));
		return err_set(e, ERR_INTERNAL, "SHA-256 failed");
	}
	hex(hash, sizeof(hash), hash_hex);
	rc = db_exec_command(db,
			     "INSERT INTO api_keys (tenant_id, id, role, key_hash, rotated_from)"
			     " VALUES ($1, $2, $3, decode($4, 'hex'), $5)",
			     5, (const char *const[]){ tenant, id, role, hash_hex, rotated_from },
			     e);
	if (rc == ERR_OK) {
		memcpy(ret_key, key, sizeof(key));
		memcpy(ret_id, id, sizeof(id));
	}
	OPENSSL_cleanse(key, sizeof(key));
	return rc;
}

/* The view of key id with "key" added when key is not NULL (the one time
 * a key is shown).  Owned text. */
static enum err_code
key_view(struct db_conn *db, const char *id, const char *key, char **ret, struct err *e)
{
	PGresult *res;
	enum err_code rc;

	res = db_exec(db,
		      "SELECT (CASE WHEN $2::text IS NULL THEN " KEY_JSON "::jsonb"
		      " ELSE " KEY_JSON "::jsonb || jsonb_build_object('key', $2::text) END)::text"
		      " FROM api_keys k WHERE k.id = $1",
		      2, (const char *const[]){ id, key }, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = pgjson_one(res, "no such key", ret, e);
	PQclear(res);
	return rc;
}

static enum err_code
finish(struct db_conn *db, enum err_code rc, char **ret_view, struct err *e)
{
	if (rc == ERR_OK)
		rc = db_command(db, "COMMIT", e);
	else
		(void)db_command(db, "ROLLBACK", NULL); /* the first error wins */
	if (rc != ERR_OK && ret_view != NULL && *ret_view != NULL) {
		free(*ret_view);
		*ret_view = NULL;
	}
	return rc;
}

/* Serialise key changes of tenant until COMMIT (the tenant row exists). */
static enum err_code
lock_tenant(struct db_conn *db, const char *tenant, struct err *e)
{
	PGresult *res = db_exec(db, "SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE", 1,
				(const char *const[]){ tenant }, PGRES_TUPLES_OK, e);

	if (res == NULL)
		return err_failed(e);
	PQclear(res);
	return ERR_OK;
}

enum err_code
keys_create(struct db_conn *db, const struct audit_actor *who, const char *role,
	    char ret_key[AUTH_KEY_LEN + 1], char **ret_view, struct err *e)
{
	char id[17];
	enum err_code rc;

	if (role == NULL || (strcmp(role, "owner") != 0 && strcmp(role, "analyst") != 0))
		return err_set_field(e, ERR_INVALID, "role", "'role' must be 'owner' or 'analyst'");
	if (ret_view != NULL)
		*ret_view = NULL;
	rc = db_command(db, "BEGIN", e);
	if (rc != ERR_OK)
		return rc;
	rc = db_exec_command(db, "INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING", 1,
			     (const char *const[]){ who->tenant }, e);
	if (rc == ERR_OK)
		rc = lock_tenant(db, who->tenant, e);
	if (rc == ERR_OK)
		rc = insert_key(db, who->tenant, role, NULL, ret_key, id, e);
	if (rc == ERR_OK)
		rc = audit_record(db, who, "key.create", &(struct audit_target){ .key_id = id },
				  strcmp(role, "owner") == 0 ? "{\"role\": \"owner\"}"
							     : "{\"role\": \"analyst\"}",
				  e);
	if (rc == ERR_OK && ret_view != NULL)
		rc = key_view(db, id, ret_key, ret_view, e);
	rc = finish(db, rc, ret_view, e);
	if (rc != ERR_OK)
		OPENSSL_cleanse(ret_key, AUTH_KEY_LEN + 1);
	return rc;
}

enum err_code
keys_list(struct db_conn *db, const char *tenant, const char *cursor, long long limit, char **ret,
	  struct err *e)
{
	char lim[24];
	PGresult *res;
	enum err_code rc;

	if (cursor != NULL && !keys_is_id(cursor))
		return err_set_field(e, ERR_INVALID, "cursor", "'cursor' is not a valid cursor");
	snprintf(lim, sizeof(lim), "%lld", limit + 1);
	res = db_exec(db,
		      "SELECT " KEY_JSON "::text, k.id FROM api_keys k"
		      " WHERE ($1::text IS NULL OR k.tenant_id = $1) AND ($2::text IS NULL OR"
		      " (k.created_at, k.id) > (SELECT c.created_at, c.id FROM api_keys c"
		      "  WHERE c.id = $2 AND ($1::text IS NULL OR c.tenant_id = $1)))"
		      " ORDER BY k.created_at, k.id LIMIT $3",
		      3, (const char *const[]){ tenant, cursor, lim }, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = pgjson_page(res, limit, 1, ret, e);
	PQclear(res);
	return rc;
}

/* Find key id (of tenant unless NULL), lock its tenant and then its row;
 * fill who->tenant when tenant is NULL, and ret_role, ret_valid. */
static enum err_code
lock_key(struct db_conn *db, struct audit_actor *who, const char *tenant, const char *id,
	 char ret_role[16], bool *ret_valid, struct err *e)
{
	char owner[65];
	PGresult *res;
	enum err_code rc;

	if (!keys_is_id(id))
		return err_set(e, ERR_NOT_FOUND, "no key '%s'", id);
	res = db_exec(db,
		      "SELECT tenant_id FROM api_keys WHERE id = $1"
		      " AND ($2::text IS NULL OR tenant_id = $2)",
		      2, (const char *const[]){ id, tenant }, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOT_FOUND, "no key '%s'", id);
	}
	snprintf(owner, sizeof(owner), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	if (tenant == NULL)
		snprintf(who->tenant, sizeof(who->tenant), "%s", owner);
	/* Lock order: the tenant row, then key rows. */
	rc = lock_tenant(db, owner, e);
	if (rc != ERR_OK)
		return rc;
	res = db_exec(db, "SELECT k.role, " KEY_VALID " FROM api_keys k WHERE k.id = $1 FOR UPDATE",
		      1, (const char *const[]){ id }, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	snprintf(ret_role, 16, "%s", PQgetvalue(res, 0, 0));
	*ret_valid = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
	PQclear(res);
	return ERR_OK;
}

enum err_code
keys_revoke(struct db_conn *db, struct audit_actor *who, const char *tenant, const char *id,
	    bool confirm_last_owner, char **ret_view, struct err *e)
{
	char role[16];
	bool valid = false;
	PGresult *res;
	enum err_code rc;

	if (ret_view != NULL)
		*ret_view = NULL;
	rc = db_command(db, "BEGIN", e);
	if (rc != ERR_OK)
		return rc;
	rc = lock_key(db, who, tenant, id, role, &valid, e);
	if (rc == ERR_OK && !valid)
		rc = err_set(e, ERR_CONFLICT, "key '%s' is already revoked", id);
	if (rc == ERR_OK && strcmp(role, "owner") == 0 && !confirm_last_owner) {
		res = db_exec(db,
			      "SELECT count(*) FROM api_keys k WHERE k.tenant_id = $1"
			      " AND k.role = 'owner' AND k.id <> $2 AND " KEY_VALID,
			      2, (const char *const[]){ who->tenant, id }, PGRES_TUPLES_OK, e);
		rc = res != NULL ? ERR_OK : err_failed(e);
		if (rc == ERR_OK && strcmp(PQgetvalue(res, 0, 0), "0") == 0)
			rc = err_set_field(e, ERR_CONFLICT, "confirm",
					   "key '%s' is the tenant's last owner key: without it "
					   "no request can change datasets or keys until an "
					   "operator runs `dpoptd keys create`; repeat with "
					   "?confirm=true to revoke it anyway",
					   id);
		PQclear(res);
	}
	if (rc == ERR_OK)
		rc = db_exec_command(db, "UPDATE api_keys SET revoked_at = now() WHERE id = $1", 1,
				     (const char *const[]){ id }, e);
	if (rc == ERR_OK)
		rc = audit_record(db, who, "key.revoke", &(struct audit_target){ .key_id = id },
				  strcmp(role, "owner") == 0 ? "{\"role\": \"owner\"}"
							     : "{\"role\": \"analyst\"}",
				  e);
	if (rc == ERR_OK && ret_view != NULL)
		rc = key_view(db, id, NULL, ret_view, e);
	return finish(db, rc, ret_view, e);
}

enum err_code
keys_rotate(struct db_conn *db, struct audit_actor *who, const char *id, long long grace_seconds,
	    char ret_key[AUTH_KEY_LEN + 1], char **ret_view, struct err *e)
{
	char role[16], new_id[17] = "", grace[24], detail[160];
	bool valid = false;
	enum err_code rc;

	if (grace_seconds < 0 || grace_seconds > KEYS_MAX_GRACE_SECONDS)
		return err_set_field(e, ERR_INVALID, "grace", "the grace period must be 0 to %d s",
				     KEYS_MAX_GRACE_SECONDS);
	snprintf(grace, sizeof(grace), "%lld", grace_seconds);
	if (ret_view != NULL)
		*ret_view = NULL;
	rc = db_command(db, "BEGIN", e);
	if (rc != ERR_OK)
		return rc;
	rc = lock_key(db, who, NULL, id, role, &valid, e);
	if (rc == ERR_OK && !valid)
		rc = err_set(e, ERR_CONFLICT, "key '%s' is revoked: create a new key instead", id);
	if (rc == ERR_OK)
		rc = insert_key(db, who->tenant, role, id, ret_key, new_id, e);
	/* An expiring key keeps its earlier end: a grace never extends it. */
	if (rc == ERR_OK)
		rc = db_exec_command(db,
				     "UPDATE api_keys SET revoked_at = least(coalesce(revoked_at,"
				     " 'infinity'), now() + make_interval(secs => $2::bigint))"
				     " WHERE id = $1",
				     2, (const char *const[]){ id, grace }, e);
	/* role and both ids are fixed-alphabet text: no escaping needed. */
	snprintf(detail, sizeof(detail), "{\"role\": \"%s\", \"rotated_from\": \"%s\"}", role, id);
	if (rc == ERR_OK)
		rc = audit_record(db, who, "key.create", &(struct audit_target){ .key_id = new_id },
				  detail, e);
	snprintf(detail, sizeof(detail),
		 "{\"role\": \"%s\", \"rotated_to\": \"%s\", \"grace_seconds\": %lld}", role,
		 new_id, grace_seconds);
	if (rc == ERR_OK)
		rc = audit_record(db, who, "key.revoke", &(struct audit_target){ .key_id = id },
				  detail, e);
	if (rc == ERR_OK && ret_view != NULL)
		rc = key_view(db, new_id, ret_key, ret_view, e);
	rc = finish(db, rc, ret_view, e);
	if (rc != ERR_OK)
		OPENSSL_cleanse(ret_key, AUTH_KEY_LEN + 1);
	return rc;
}
