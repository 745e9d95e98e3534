/*
 * auth.c - bearer keys, stored as SHA-256 hashes.
 */
#include <pthread.h>
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

/* SHA-256 fetched from the provider once: EVP_sha256() in EVP_Digest()
 * looks the algorithm up again on every call (1.15 us against 0.53 us per
 * key hash, measured; every keyed request hashes its key). */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void
sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static enum err_code
sha256(const char *s, size_t n, unsigned char out[32], struct err *e)
{
	unsigned int len = 0;

	(void)pthread_once(&sha256_once, sha256_fetch);
	if (EVP_Digest(s, n, out, &len, sha256_md != NULL ? sha256_md : EVP_sha256(), NULL) != 1 ||
	    len != 32)
		return err_set(e, ERR_INTERNAL, "SHA-256 failed");
	return ERR_OK;
}

static enum err_code
unauthenticated(struct err *e)
{
	return err_set_field(e, ERR_UNAUTHENTICATED, "Authorization",
			     "a valid 'Authorization: Bearer <key>' header is required");
}

enum err_code
auth_parse(const char *header, struct auth_key *ret, struct err *e)
{
	unsigned char hash[32];
	const char *key;
	enum err_code rc;

	if (header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
		return unauthenticated(e);
	key = header + 7;
	while (*key == ' ')
		key++;
	if (strlen(key) != AUTH_KEY_LEN || strncmp(key, "dpk_", 4) != 0 || key[20] != '_' ||
	    !is_hex(key + 4, 16) || !is_hex(key + 21, 64))
		return unauthenticated(e);
	memcpy(ret->id, key + 4, 16);
	ret->id[16] = '\0';
	rc = sha256(key, AUTH_KEY_LEN, hash, e);
	if (rc != ERR_OK)
		return rc;
	/* Hex by table: snprintf per byte cost 3.3 us per key. */
	for (int i = 0; i < 32; i++) {
		ret->hash_hex[2 * i] = "0123456789abcdef"[hash[i] >> 4];
		ret->hash_hex[2 * i + 1] = "0123456789abcdef"[hash[i] & 15];
	}
	ret->hash_hex[64] = '\0';
	return ERR_OK;
}

/* 64 lower-case hex digits to 32 bytes; false on anything else. */
static bool
hex32(const char *hex, unsigned char out[32])
{
	for (int i = 0; i < 64; i++) {
		char c = hex[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (v < 0)
			return false;
		out[i / 2] = (unsigned char)(i % 2 == 0 ? v << 4 : out[i / 2] | v);
	}
	return hex[64] == '\0';
}

enum err_code
auth_verify_row(const PGresult *res, const struct auth_key *key, struct auth *ret, struct err *e)
{
	unsigned char want[32], stored[32];
	const char *stored_hex;

	if (PQntuples(res) != 1 || PQnfields(res) < 3)
		return unauthenticated(e);
	stored_hex = PQgetvalue(res, 0, 2);
	if (!hex32(stored_hex, stored) || !hex32(key->hash_hex, want) ||
	    CRYPTO_memcmp(want, stored, 32) != 0)
		return unauthenticated(e);
	snprintf(ret->tenant, sizeof(ret->tenant), "%s", PQgetvalue(res, 0, 0));
	snprintf(ret->key_id, sizeof(ret->key_id), "%s", key->id);
	ret->role = strcmp(PQgetvalue(res, 0, 1), "owner") == 0 ? ROLE_OWNER : ROLE_ANALYST;
	return ERR_OK;
}

enum err_code
auth_check_key(struct db_conn *db, const struct auth_key *key, struct auth *ret, struct err *e)
{
	const char *values[1] = { key->id };
	PGresult *res;
	enum err_code rc;

	res = db_exec(db, "SELECT " AUTH_KEY_COLUMNS " FROM api_keys k WHERE " AUTH_KEY_VALID("$1"),
		      1, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = auth_verify_row(res, key, ret, e);
	PQclear(res);
	return rc;
}

enum err_code
auth_check(struct db_conn *db, const char *header, struct auth *ret, struct err *e)
{
	struct auth_key key;
	enum err_code rc = auth_parse(header, &key, e);

	if (rc != ERR_OK)
		return rc;
	return auth_check_key(db, &key, ret, e);
}
