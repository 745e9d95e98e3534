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

#endif /* SERVICE_AUTH_H */
