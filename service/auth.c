/*
 * auth.c - bearer keys, stored as SHA-256 hashes.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "auth.h"

static bool
is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static enum err_code
sha256(const char *s, size_t n, unsigned char out[32], struct err *e)
{
	unsigned int len = 0;

	if (EVP_Digest(s, n, out, &len, EVP_sha256(), NULL) != 1 || len != 32)
		return err_set(e, ERR_INTERNAL, "SHA-256 failed");
	return ERR_OK;
}

enum err_code
auth_check(struct db_conn *db, const char *header, struct auth *ret, struct err *e)
{
	char id[17];
	unsigned char hash[32], stored[32];
	const char *key, *values[1] = { id };
	const char *stored_hex;
	PGresult *res;
	enum err_code rc;

	if (header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
		return err_set_field(e, ERR_UNAUTHENTICATED, "Authorization",
				     "a valid 'Authorization: Bearer <key>' header is required");
	key = header + 7;
	while (*key == ' ')
		key++;
	if (strlen(key) != AUTH_KEY_LEN || strncmp(key, "dpk_", 4) != 0 || key[20] != '_' ||
	    !is_hex(key + 4, 16) || !is_hex(key + 21, 64))
		return err_set_field(e, ERR_UNAUTHENTICATED, "Authorization",
				     "a valid 'Authorization: Bearer <key>' header is required");
	memcpy(id, key + 4, 16);
	id[16] = '\0';
	rc = sha256(key, AUTH_KEY_LEN, hash, e);
	if (rc != ERR_OK)
		return rc;
	res = db_exec(db,
		      "SELECT tenant_id, role, encode(key_hash, 'hex') FROM api_keys"
		      " WHERE id = $1 AND (revoked_at IS NULL OR revoked_at > now())",
		      1, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set_field(e, ERR_UNAUTHENTICATED, "Authorization",
				     "a valid 'Authorization: Bearer <key>' header is required");
	}
	stored_hex = PQgetvalue(res, 0, 2);
	for (int i = 0; i < 32 && strlen(stored_hex) == 64; i++)
		sscanf(stored_hex + 2 * i, "%2hhx", &stored[i]);
	if (strlen(stored_hex) != 64 || CRYPTO_memcmp(hash, stored, 32) != 0) {
		PQclear(res);
		return err_set_field(e, ERR_UNAUTHENTICATED, "Authorization",
				     "a valid 'Authorization: Bearer <key>' header is required");
	}
	snprintf(ret->tenant, sizeof(ret->tenant), "%s", PQgetvalue(res, 0, 0));
	snprintf(ret->key_id, sizeof(ret->key_id), "%s", id);
	ret->role = strcmp(PQgetvalue(res, 0, 1), "owner") == 0 ? ROLE_OWNER : ROLE_ANALYST;
	PQclear(res);
	return ERR_OK;
}
