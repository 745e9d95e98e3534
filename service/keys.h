/*
 * keys.h - API key management: create, list, revoke, rotate (the owner's
 * /v1/keys routes and `dpoptd keys`).  Verification is auth.c's.
 *
 * A key is "dpk_<16 hex id>_<64 hex secret>" (auth.h); only its SHA-256
 * is stored, and the key itself is returned once, by the call that made
 * it.  A key is valid while revoked_at is NULL or in the future (the grace
 * period of a rotation); every request reads the key's row, with no cache,
 * so a revocation holds on every replica from its COMMIT on.
 *
 * Every change writes its audit row (audit.h) in its own transaction, and
 * takes the tenant's row lock first, so that two concurrent revocations
 * cannot both see "another owner key remains" and leave none.
 */
#ifndef SERVICE_KEYS_H
#define SERVICE_KEYS_H

#include <stdbool.h>

#include "audit.h"
#include "auth.h"
#include "db.h"
#include "err.h"

/* Longest rotation grace period (7 days). */
#define KEYS_MAX_GRACE_SECONDS 604800

/* A new key of role ("owner" or "analyst", else ERR_INVALID naming
 * "role") for who->tenant (created if missing: the command line's first
 * key makes the tenant).  ret_key gets the key; ret_view (owned JSON text,
 * may be NULL) its view with the key in it. */
enum err_code keys_create(struct db_conn *db, const struct audit_actor *who, const char *role,
			  char ret_key[AUTH_KEY_LEN + 1], char **ret_view, struct err *e);

/* One page of keys, oldest first, after cursor (a key id or NULL): of
 * tenant, or of every tenant when tenant is NULL (the command line).
 * Never the hash.  Owned JSON text {"items", "next_cursor"}. */
enum err_code keys_list(struct db_conn *db, const char *tenant, const char *cursor, long long limit,
			char **ret, struct err *e);

/* Revoke key id now.  tenant NULL (the command line) finds the key in any
 * tenant and fills who's tenant from it; otherwise another tenant's key is
 * ERR_NOT_FOUND.  Revoking the tenant's last valid owner key is
 * ERR_CONFLICT naming "confirm" unless confirm_last_owner (the API's
 * ?confirm=true; the command line passes true).  A revoked key is
 * ERR_CONFLICT.  ret_view (owned, may be NULL): the key's view. */
enum err_code keys_revoke(struct db_conn *db, struct audit_actor *who, const char *tenant,
			  const char *id, bool confirm_last_owner, char **ret_view, struct err *e);

/* Replace key id (any tenant: the command line) by a new key of the same
 * tenant and role; the old one stays valid for grace_seconds (0 to
 * KEYS_MAX_GRACE_SECONDS; 0 revokes it at once).  ret_key gets the new key. */
enum err_code keys_rotate(struct db_conn *db, struct audit_actor *who, const char *id,
			  long long grace_seconds, char ret_key[AUTH_KEY_LEN + 1], char **ret_view,
			  struct err *e);

/* True when s is a key id: 16 lower-case hexadecimal digits. */
bool keys_is_id(const char *s);

#endif /* SERVICE_KEYS_H */
