/*
 * audit.h - the operators' audit trail (table audit_log, migration 0010).
 *
 * Every state change a tenant can cause - dataset create, seal, patch
 * (budget change) and delete, key creation and revocation, run submission
 * and cancellation - writes one row: who (key id, tenant, role), what
 * (action and target), when, from where (client address) and the request
 * id.  The row is written inside the transaction of the change, so a change
 * is never unaudited and a rolled-back change leaves no row.  detail holds
 * public parameters only (a budget, a role, a row count): never a data
 * value, never a key secret.
 */
#ifndef SERVICE_AUDIT_H
#define SERVICE_AUDIT_H

#include "db.h"
#include "err.h"
#include "http.h"

struct request;

/* Who acts.  Built per request (audit_actor_from_request) or for the
 * command line (audit_actor_cli); plain text, no pointers to free. */
struct audit_actor {
	char tenant[65];                /* the tenant whose state changes */
	char key_id[65];                /* the key used; "" for the command line */
	char role[16];                  /* "owner", "analyst" or "operator" (command line) */
	char request_id[129];           /* the request's id; "" for the command line */
	char address[HTTP_ADDRESS_LEN]; /* the client's; "" for the command line */
};

/* The actor of an authenticated request: its key, tenant and role, its id
 * and the peer address of its connection. */
void audit_actor_from_request(const struct request *rq, struct audit_actor *ret);

/* The command line (`dpoptd keys ...`) acting on tenant: role "operator",
 * no key, no address. */
void audit_actor_cli(const char *tenant, struct audit_actor *ret);

/* The actor's columns of an audit row, as audit_record() writes them:
 * tenant_id, actor_key_id, actor_role, via ("api" or "cli"), request_id,
 * client_address; NULL where absent.  For a row written by SQL of the
 * caller's own (an admission's, dpopt_admit2() of migration 0014). */
#define AUDIT_ACTOR_COLUMNS 6
void audit_actor_columns(const struct audit_actor *who, const char *ret[AUDIT_ACTOR_COLUMNS]);

/* What an audit row names.  Absent members are NULL. */
struct audit_target {
	const char *dataset_id; /* a UUID */
	const char *run_id;     /* a UUID */
	const char *key_id;     /* an api_keys id */
};

/* Append one row for action (one of the CHECK list in migration 0010) by
 * who on target; detail (borrowed, may be NULL) is the text of a JSON object
 * of public parameters (text, so that a budget keeps its shortest decimal).  Call it inside the
 * transaction of the change, at its success point.  ERR_DB when the insert fails: the caller rolls
 * back, so the change does not happen unaudited. */
enum err_code audit_record(struct db_conn *db, const struct audit_actor *who, const char *action,
			   const struct audit_target *target, const char *detail, struct err *e);

/* Room for the detail of a budget (audit_budget_detail). */
#define AUDIT_DETAIL_LEN 160

/* The detail {"budget": {"epsilon": eps, "delta": delta}} of a budget
 * change, from the shortest decimals of db_double_text(); returns out. */
const char *audit_budget_detail(char out[AUDIT_DETAIL_LEN], const char *eps, const char *delta);

/* The detail of a dataset creation: {"accounting_mode", "budget"} for a
 * dataset with its own ledger (mode not NULL; eps and delta as in
 * audit_budget_detail), else {"share_budget_with": share} (a UUID, or
 * null for a public dataset); returns out. */
const char *audit_create_detail(char out[AUDIT_DETAIL_LEN], const char *mode, const char *eps,
				const char *delta, const char *share);

/* The detail {"algorithm": name} of a run submission (name is a
 * registry name: no characters that need escaping); returns out. */
const char *audit_algorithm_detail(char out[AUDIT_DETAIL_LEN], const char *name);

/* Filters of GET /v1/audit (each NULL when absent). */
struct audit_filter {
	const char *dataset_id;
	const char *run_id;
	const char *key_id;
	const char *action;
};

/* One page of tenant's audit rows, newest first, strictly older than cursor
 * (a row id, or NULL); owned JSON text {"items", "next_cursor"}. */
enum err_code audit_list(struct db_conn *db, const char *tenant, const struct audit_filter *f,
			 const char *cursor, long long limit, char **ret, struct err *e);

#endif /* SERVICE_AUDIT_H */
