/*
 * auth.c - bearer keys, stored as SHA-256 hashes.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

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

static void
hex(const unsigned char *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
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
		return e->code;
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

enum err_code
auth_create_key(struct db_conn *db, const char *tenant, const char *role,
		char ret_key[AUTH_KEY_LEN + 1], struct err *e)
{
	unsigned char idb[8], secret[32], hash[32];
	char key[AUTH_KEY_LEN + 1], id[17], hash_hex[65];
	const char *values[4] = { tenant, id, role, hash_hex };
	PGresult *res;
	enum err_code rc;

	if (strcmp(role, "owner") != 0 && strcmp(role, "analyst") != 0)
		return err_set_field(e, ERR_INVALID, "role", "role must be 'owner' or 'analyst'");
	if (RAND_priv_bytes(idb, sizeof(idb)) != 1 || RAND_priv_bytes(secret, sizeof(secret)) != 1)
		return err_set(e, ERR_INTERNAL, "the random generator failed");
	hex(idb, 8, id);
	memcpy(key, "dpk_", 4);
	memcpy(key + 4, id, 16);
	key[20] = '_';
	hex(secret, 32, key + 21);
	key[AUTH_KEY_LEN] = '\0';
	rc = sha256(key, AUTH_KEY_LEN, hash, e);
	if (rc != ERR_OK)
		return rc;
	hex(hash, 32, hash_hex);
	rc = db_command(db, "BEGIN", e);
	if (rc != ERR_OK)
		return rc;
	res = db_exec(db, "INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING", 1, values,
		      PGRES_COMMAND_OK, e);
	if (res != NULL) {
		PQclear(res);
		res = db_exec(db,
			      "INSERT INTO api_keys (tenant_id, id, role, key_hash)"
			      " VALUES ($1, $2, $3, decode($4, 'hex'))",
			      4, values, PGRES_COMMAND_OK, e);
	}
	if (res == NULL) {
		(void)db_command(db, "ROLLBACK", NULL);
		return e->code;
	}
	PQclear(res);
	rc = db_command(db, "COMMIT", e);
	if (rc != ERR_OK)
		return rc;
	memcpy(ret_key, key, sizeof(key));
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(secret, sizeof(secret));
	return ERR_OK;
}
