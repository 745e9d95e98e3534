/*
 * auth.h - API keys: verification (creation, listing and revocation are
 * keys.h's).
 *
 * A key is "dpk_<16 hex id>_<64 hex secret>".  Only SHA-256 of the whole
 * key is stored; verification looks the row up by the public id and
 * compares hashes in constant time (CRYPTO_memcmp).
 */
#ifndef SERVICE_AUTH_H
#define SERVICE_AUTH_H

#include "db.h"
#include "err.h"
#include "http.h"

#define AUTH_KEY_LEN (4 + 16 + 1 + 64)

/* Verify "Bearer <key>" (header may be NULL) and fill *ret with the tenant,
 * role and key id.  Looked up on every call, never cached: a revoked key
 * stops working at once.  ERR_UNAUTHENTICATED for a missing, malformed, unknown or
 * revoked key (one message for all, so keys cannot be probed). */
enum err_code auth_check(struct db_conn *db, const char *header, struct auth *ret, struct err *e);

/*
 * The same check in two halves, so that a read can verify its key in its
 * own statement (one round trip per request; http.h, ROUTE_KEY_IN_READ).
 * auth_parse() reads the header without the database: the key's public id
 * and the hex SHA-256 of the whole key, or ERR_UNAUTHENTICATED.  A keyed
 * read then selects AUTH_KEY_COLUMNS (tenant, role, stored hash) as its
 * first three columns FROM api_keys k WHERE AUTH_KEY_VALID(the id's
 * parameter), one row or none, and computes its view only under
 * AUTH_KEY_MATCH(the hash's parameter), so a wrong secret costs no view;
 * auth_verify_row() decides from that row, comparing the hashes in
 * constant time as auth_check() does, and fills *ret.  The key's row is
 * read by the request's own statement: a revocation holds at once, as
 * before (struct auth_key is http.h's).  auth_check_key(): the lookup alone, for a request refused
 * before its read (a bad query parameter still answers 401 first).
 */
#define AUTH_KEY_COLUMNS "k.tenant_id, k.role, encode(k.key_hash, 'hex')"
#define AUTH_KEY_VALID(id_param)                                                                   \
	"k.id = " id_param " AND (k.revoked_at IS NULL OR k.revoked_at > now())"
#define AUTH_KEY_MATCH(hash_param) "k.key_hash = decode(" hash_param ", 'hex')"

enum err_code auth_parse(const char *header, struct auth_key *ret, struct err *e);
enum err_code auth_verify_row(const PGresult *res, const struct auth_key *key, struct auth *ret,
			      struct err *e);
enum err_code auth_check_key(struct db_conn *db, const struct auth_key *key, struct auth *ret,
			     struct err *e);

#endif /* SERVICE_AUTH_H */
