/*
 * audit.c - the audit trail: rows written inside the changes' transactions,
 * and the owner's paged view of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "datasets.h"
#include "http.h"
#include "keys.h"
#include "pgjson.h"

static const char *const actions[] = { "dataset.create", "dataset.seal", "dataset.patch",
				       "dataset.delete", "key.create",   "key.revoke",
				       "run.submit",     "run.cancel",   NULL };

void
audit_actor_from_request(const struct request *rq, struct audit_actor *ret)
{
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->tenant, sizeof(ret->tenant), "%s", rq->auth.tenant);
	snprintf(ret->key_id, sizeof(ret->key_id), "%s", rq->auth.key_id);
	snprintf(ret->role, sizeof(ret->role), "%s",
		 rq->auth.role == ROLE_OWNER ? "owner" : "analyst");
	snprintf(ret->request_id, sizeof(ret->request_id), "%s", rq->id);
	http_client_address(rq, ret->address);
	if (strcmp(ret->address, "?") == 0)
		ret->address[0] = '\0'; /* unknown: NULL in the row */
}

void
audit_actor_cli(const char *tenant, struct audit_actor *ret)
{
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->tenant, sizeof(ret->tenant), "%s", tenant);
	snprintf(ret->role, sizeof(ret->role), "operator");
}

static const char *
or_null(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : NULL;
}

void
audit_actor_columns(const struct audit_actor *who, const char *ret[AUDIT_ACTOR_COLUMNS])
{
	bool cli = who->key_id[0] == '\0';

	ret[0] = who->tenant;
	ret[1] = or_null(who->key_id);
	ret[2] = who->role;
	ret[3] = cli ? "cli" : "api";
	ret[4] = or_null(who->request_id);
	ret[5] = or_null(who->address);
}

enum err_code
audit_record(struct db_conn *db, const struct audit_actor *who, const char *action,
	     const struct audit_target *target, const char *detail, struct err *e)
{
	static const struct audit_target none = { 0 };
	const struct audit_target *t = target != NULL ? target : &none;
	const char *a[AUDIT_ACTOR_COLUMNS];

	audit_actor_columns(who, a);
	return db_exec_command(db,
			       "INSERT INTO audit_log (tenant_id, actor_key_id, actor_role,"
			       " via, action, dataset_id, run_id, key_id, request_id,"
			       " client_address, detail) VALUES ($1, $2, $3, $4, $5,"
			       " $6::uuid, $7::uuid, $8, $9, $10,"
			       " coalesce($11::jsonb, '{}'::jsonb))",
			       11,
			       (const char *const[]){ a[0], a[1], a[2], a[3], action,
						      or_null(t->dataset_id), or_null(t->run_id),
						      or_null(t->key_id), a[4], a[5], detail },
			       e);
}

const char *
audit_budget_detail(char out[AUDIT_DETAIL_LEN], const char *eps, const char *delta)
{
	snprintf(out, AUDIT_DETAIL_LEN, "{\"budget\": {\"epsilon\": %s, \"delta\": %s}}", eps,
		 delta);
	return out;
}

const char *
audit_create_detail(char out[AUDIT_DETAIL_LEN], const char *mode, const char *eps,
		    const char *delta, const char *share)
{
	if (mode != NULL)
		snprintf(out, AUDIT_DETAIL_LEN,
			 "{\"accounting_mode\": \"%.8s\", \"budget\": {\"epsilon\": %s,"
			 " \"delta\": %s}}",
			 mode, eps, delta);
	else if (share != NULL)
		snprintf(out, AUDIT_DETAIL_LEN, "{\"share_budget_with\": \"%.36s\"}", share);
	else
		snprintf(out, AUDIT_DETAIL_LEN, "{\"share_budget_with\": null}");
	return out;
}

const char *
audit_algorithm_detail(char out[AUDIT_DETAIL_LEN], const char *name)
{
	snprintf(out, AUDIT_DETAIL_LEN, "{\"algorithm\": \"%.100s\"}", name);
	return out;
}

/* A cursor is a row id: 1 to 18 decimal digits. */
static bool
is_row_id(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 18)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

enum err_code
audit_list(struct db_conn *db, const char *tenant, const struct audit_filter *f, const char *cursor,
	   long long limit, char **ret, struct err *e)
{
	char lim[24];
	const char *values[7] = { tenant,    cursor,    lim,      f->dataset_id,
				  f->run_id, f->key_id, f->action };
	bool known = f->action == NULL;
	PGresult *res;
	enum err_code rc;

	if (cursor != NULL && !is_row_id(cursor))
		return err_set_field(e, ERR_INVALID, "cursor", "'cursor' is not a valid cursor");
	if (f->dataset_id != NULL && !is_uuid(f->dataset_id))
		return err_set_field(e, ERR_INVALID, "dataset_id",
				     "'dataset_id' must be a dataset id (a UUID)");
	if (f->run_id != NULL && !is_uuid(f->run_id))
		return err_set_field(e, ERR_INVALID, "run_id",
				     "'run_id' must be a run id (a UUID)");
	if (f->key_id != NULL && !keys_is_id(f->key_id))
		return err_set_field(e, ERR_INVALID, "key_id",
				     "'key_id' must be a key id (16 hexadecimal digits)");
	for (const char *const *a = actions; !known && *a != NULL; a++)
		known = strcmp(*a, f->action) == 0;
	if (!known)
		return err_set_field(e, ERR_INVALID, "action",
				     "'action' must be one of dataset.create, dataset.seal,"
				     " dataset.patch, dataset.delete, key.create, key.revoke,"
				     " run.submit, run.cancel");
	snprintf(lim, sizeof(lim), "%lld", limit + 1);
	res = db_exec(db,
		      "SELECT json_build_object('id', a.id::text, 'at', a.at,"
		      " 'action', a.action, 'actor', json_build_object('key_id', a.actor_key_id,"
		      " 'role', a.actor_role, 'tenant', a.tenant_id, 'via', a.via),"
		      " 'dataset_id', a.dataset_id, 'run_id', a.run_id, 'key_id', a.key_id,"
		      " 'request_id', a.request_id, 'client_address', a.client_address,"
		      " 'detail', a.detail)::text, a.id::text FROM audit_log a"
		      " WHERE a.tenant_id = $1 AND ($2::bigint IS NULL OR a.id < $2::bigint)"
		      " AND ($4::uuid IS NULL OR a.dataset_id = $4::uuid)"
		      " AND ($5::uuid IS NULL OR a.run_id = $5::uuid)"
		      " AND ($6::text IS NULL OR a.key_id = $6)"
		      " AND ($7::text IS NULL OR a.action = $7)"
		      " ORDER BY a.id DESC LIMIT $3",
		      7, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = pgjson_page(res, limit, 1, ret, e);
	PQclear(res);
	return rc;
}
