/*
 * runs.c - run admission and the read side of runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "audit.h"
#include "auth.h"
#include "datasets.h"
#include "jv.h"
#include "ledger.h"
#include "model.h"
#include "privacy/accountant.h"
#include "privacy/rdp.h"
#include "pgjson.h"
#include "run_request.h"
#include "runs.h"
#include "synthetic_csv.h"

/* A run's JSON view: the text 0015_run_view.sql's trigger stores in the
 * row at every write (RUN_VIEW_JSON in runs.h, the expression it uses). */
#define RUN_JSON "r.view"

enum err_code
runs_view(struct db_conn *db, const char *tenant, const char *id, char **ret, struct err *e)
{
	const char *values[2] = { id, tenant };
	PGresult *res;
	enum err_code rc;

	if (!is_uuid(id))
		return err_set(e, ERR_NOT_FOUND, "no run '%s'", id);
	res = db_exec(db, "SELECT " RUN_JSON " FROM runs r WHERE r.id = $1 AND r.tenant_id = $2", 2,
		      values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = pgjson_one(res, "no such run", ret, e);
	PQclear(res);
	return rc;
}

enum err_code
runs_view_keyed(struct db_conn *db, const struct auth_key *key, const char *id,
		struct auth *ret_auth, char **ret, struct err *e)
{
	/* An id that is no UUID still has its key checked (401 before 404). */
	const char *values[3] = { key->id, key->hash_hex,
				  is_uuid(id) ? id : "00000000-0000-0000-0000-000000000000" };
	PGresult *res;
	enum err_code rc;

	res = db_exec(db,
		      "SELECT " AUTH_KEY_COLUMNS ", (SELECT " RUN_JSON " FROM runs r"
		      " WHERE r.id = $3::uuid AND r.tenant_id = k.tenant_id"
		      " AND " AUTH_KEY_MATCH("$2") ")"
						   " FROM api_keys k WHERE " AUTH_KEY_VALID("$1"),
		      3, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = auth_verify_row(res, key, ret_auth, e);
	if (rc == ERR_OK && (!is_uuid(id) || PQgetisnull(res, 0, 3)))
		rc = err_set(e, ERR_NOT_FOUND, "no run '%s'", id);
	if (rc == ERR_OK && (*ret = strdup(PQgetvalue(res, 0, 3))) == NULL)
		rc = err_set(e, ERR_NOMEM, "cannot copy a view");
	PQclear(res);
	return rc;
}

/* SHA-256 over the dataset id and the canonical form of the body. */
static enum err_code
request_hash(const char *dataset_id, const json_t *doc, char ret_hex[65], struct err *e)
{
	unsigned char md[32];
	unsigned int mdlen = 0;
	char *canon = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok;

	ok = canon != NULL && ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
	     EVP_DigestUpdate(ctx, dataset_id, strlen(dataset_id) + 1) == 1 &&
	     EVP_DigestUpdate(ctx, canon, strlen(canon)) == 1 &&
	     EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32;
	EVP_MD_CTX_free(ctx);
	free(canon);
	if (!ok)
		return err_set(e, ERR_INTERNAL, "cannot hash the request");
	for (int i = 0; i < 32; i++)
		snprintf(ret_hex + 2 * i, 3, "%02x", md[i]);
	return ERR_OK;
}

/* An earlier run of this Idempotency-Key, id with its stored request hash:
 * a replay when the hashes agree (*ret_found), else ERR_CONFLICT. */
static enum err_code
replay(const char *id, const char *stored_hash, const char *hash, char ret_id[37], bool *ret_found,
       struct err *e)
{
	snprintf(ret_id, 37, "%s", id);
	if (strcmp(stored_hash, hash) != 0)
		return err_set_field(e, ERR_CONFLICT, "Idempotency-Key",
				     "this Idempotency-Key was used with another request");
	*ret_found = true;
	return ERR_OK;
}

/* An earlier run with this key, if any (read without a lock: a key first
 * used concurrently is found again under the lock by dpopt_admit_lock()). */
static enum err_code
find_idempotent(struct db_conn *db, const char *tenant, const char *key, const char *hash,
		char ret_id[37], bool *ret_found, struct err *e)
{
	const char *values[2] = { tenant, key };
	PGresult *res;
	enum err_code rc = ERR_OK;

	*ret_found = false;
	res = db_exec(db,
		      "SELECT id, encode(request_hash, 'hex') FROM runs"
		      " WHERE tenant_id = $1 AND idempotency_key = $2",
		      2, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) == 1)
		rc = replay(PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), hash, ret_id, ret_found,
			    e);
	PQclear(res);
	return rc;
}

/* Where check_eval() looks the evaluation dataset up. */
struct eval_ctx {
	struct db_conn *db;
	const char *tenant;
};

/* The run's evaluation dataset, if it names one: a public, sealed
 * dataset of the tenant with the same features (run_request.h).  A
 * run_check_fn of the pipeline; ctx is a struct eval_ctx. */
static enum err_code
check_eval(void *ctx, const struct run_request *req, struct err *e)
{
	const struct eval_ctx *c = ctx;
	struct dataset_meta em;
	enum err_code rc;

	if (req->eval_dataset_id[0] == '\0')
		return ERR_OK;
	rc = datasets_meta(c->db, c->tenant, req->eval_dataset_id, false, &em, e);
	if (rc == ERR_NOT_FOUND)
		return err_set_field(e, ERR_INVALID, "eval_dataset_id",
				     "no dataset '%s' of yours to evaluate on",
				     req->eval_dataset_id);
	if (rc != ERR_OK)
		return rc;
	return run_request_check_eval(req, &em, e);
}

/* A version-4 UUID from the CSPRNG, in is_uuid()'s form: the id of a run,
 * drawn before its admission (dpopt_admit2() inserts it as given). */
static enum err_code
new_run_id(char ret[37], struct err *e)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[16];
	size_t o = 0;

	if (RAND_bytes(b, (int)sizeof(b)) != 1)
		return err_set(e, ERR_INTERNAL, "cannot draw a run id");
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			ret[o++] = '-';
		ret[o++] = hex[b[i] >> 4];
		ret[o++] = hex[b[i] & 15];
	}
	ret[o] = '\0';
	return ERR_OK;
}

/* What an admission writes, as text. */
struct admission {
	char id[37];
	char eps[32], delta[32], steps[24], work[32], timeout[16], detail[AUDIT_DETAIL_LEN];
	char *request, *plan, *event; /* owned */
	/* renyi: the filter's orders the curve was computed on, and the run's
	 * curve on them (rounded up once: ledger_rdp_on_filter()) */
	char orders[LEDGER_ARRAY_TEXT], rdp[LEDGER_ARRAY_TEXT];
};

/* 'renyi', before the lock: the run's curve on the ledger's filter orders,
 * which are fixed when the ledger is created (dpopt_admit2() refuses
 * unless they are still the stored ones).  *ret_f: the filter as read
 * without the lock (only its orders are used). */
static enum err_code
renyi_curve(struct db_conn *db, const struct dataset_meta *meta, const struct run_plan *plan,
	    struct filter *ret_f, double *ret_rdp, struct admission *a, struct err *e)
{
	enum err_code rc = ledger_load_filter(db, meta->ledger_id, ret_f, e);

	if (rc == ERR_OK)
		rc = ledger_rdp_on_filter(ret_f, &plan->event, ret_rdp, e);
	if (rc == ERR_OK) {
		ledger_array_text(ret_f->order, ret_f->m, a->orders);
		ledger_array_text(ret_rdp, ret_f->m, a->rdp);
	}
	return rc;
}

/* A 'renyi' refusal from dpopt_admit2(): the filter it checked (caps and
 * spent under the lock), checked again here with filter.c's own code,
 * which gives the refusal its usual error (ledger_renyi_fit(): the
 * per-order headroom).  Should C find that the run fits where SQL did not,
 * the two checks disagree: an internal error, nothing written. */
static enum err_code
renyi_refusal(const struct filter *f0, const char *caps, const char *spent, double budget_delta,
	      const double *rdp, const char *ledger_id, struct err *e)
{
	char orders[LEDGER_ARRAY_TEXT], new_spent[LEDGER_ARRAY_TEXT], eps[32];
	struct filter f;
	enum err_code rc;

	ledger_array_text(f0->order, f0->m, orders);
	rc = ledger_filter_from_text(orders, caps, spent, ledger_id, &f, e);
	if (rc == ERR_OK)
		rc = ledger_renyi_fit(&f, budget_delta, rdp, new_spent, eps, e);
	if (rc == ERR_OK)
		rc = err_set(e, ERR_INTERNAL, "the filter checks of '%s' disagree", ledger_id);
	return rc;
}

/*
 * Admit the planned run: charge the ledger, insert the run, its ledger
 * entry and its audit row and announce it to the workers, then read its
 * view.  One statement in its own transaction, dpopt_admit2() (migration
 * 0014; the lock order of ledger.h), for both modes: the ledger's row lock
 * is held for one round trip.  'renyi': the run's curve on the filter's
 * orders is computed before (renyi_curve()), the fit is checked under the
 * lock in the statement with filter.c's arithmetic.  The view is read
 * after the COMMIT.  *ret_found for a replay of the key found under the
 * lock (ret_id: its run; no view).  A refused charge gets the same
 * ERR_BUDGET as ever; any failure rolls back.
 */
static enum err_code
admit_run(struct db_conn *db, const char *tenant, const struct dataset_meta *meta,
	  const struct planned_run *run, const char *idem_key, const char *hash,
	  const struct audit_actor *who, char ret_id[37], bool *ret_found, char **ret_view,
	  struct err *e)
{
	const struct run_request *req = &run->req;
	const struct run_plan *plan = &run->plan;
	bool renyi = strcmp(meta->mode, "renyi") == 0;
	struct admission a;
	struct filter f;
	double rdp[FILTER_MAX_ORDERS];
	const char *actor[AUDIT_ACTOR_COLUMNS];
	json_t *plan_json = run_plan_json(plan, req->spec.mode);
	PGresult *res = NULL;
	enum err_code rc;

	memset(&a, 0, sizeof(a));
	rc = ledger_charge_text(plan->charge_epsilon, plan->charge_delta, a.eps, a.delta, e);
	if (rc == ERR_OK)
		rc = new_run_id(a.id, e);
	if (rc != ERR_OK)
		goto out;
	a.request = json_dumps(req->normalised, JSON_COMPACT);
	a.plan = plan_json != NULL ? json_dumps(plan_json, JSON_COMPACT) : NULL;
	a.event = plan_json != NULL ? json_dumps(json_object_get(plan_json, "event"), JSON_COMPACT)
				    : NULL;
	if (a.request == NULL || a.plan == NULL || a.event == NULL) {
		rc = err_set(e, ERR_NOMEM, "cannot serialise the run");
		goto out;
	}
	snprintf(a.steps, sizeof(a.steps), "%lu", plan->steps);
	snprintf(a.work, sizeof(a.work), "%.17g", run->work);
	snprintf(a.timeout, sizeof(a.timeout), "%u", run->timeout);
	audit_algorithm_detail(a.detail, req->alg->name);
	audit_actor_columns(who, actor);
	/* basic: the run's (epsilon, delta) is added to the sums; renyi: its
	 * RDP curve on the dataset's filter orders is admitted by the filter. */
	if (renyi) {
		rc = renyi_curve(db, meta, plan, &f, rdp, &a, e);
		if (rc != ERR_OK)
			goto out;
	}
	{
		const char *args[] = { a.id,
				       meta->id,
				       tenant,
				       meta->mode,
				       idem_key,
				       hash,
				       req->alg->name,
				       a.request,
				       a.plan,
				       a.event,
				       a.eps,
				       a.delta,
				       a.steps,
				       a.work,
				       a.timeout,
				       renyi ? a.orders : NULL,
				       renyi ? a.rdp : NULL,
				       RUNS_CHANNEL,
				       actor[0],
				       actor[1],
				       actor[2],
				       actor[3],
				       actor[4],
				       actor[5],
				       a.detail };
		int nargs = (int)(sizeof(args) / sizeof(args[0]));

		/* One statement, its own transaction (locks, fit check, charge,
		 * rows, NOTIFY, commit): one round trip, prepared. */
		res = db_exec(db,
			      "SELECT * FROM dpopt_admit2($1, $2, $3, $4, $5, $6, $7,"
			      " $8::jsonb, $9::jsonb, $10::jsonb, $11, $12, $13, $14, $15,"
			      " $16::float8[], $17::float8[], $18, $19, $20, $21, $22, $23, $24,"
			      " $25::jsonb)",
			      nargs, args, PGRES_TUPLES_OK, e);
		rc = res != NULL ? ERR_OK : err_failed(e);
	}
	if (rc != ERR_OK)
		goto out;
	if (PQntuples(res) != 1 || PQnfields(res) != 4) {
		rc = err_set(e, ERR_INTERNAL, "dpopt_admit2() answered no row");
	} else if (strcmp(PQgetvalue(res, 0, 0), "admitted") == 0) {
		/* The view, read after the COMMIT, without the lock. */
		rc = runs_view(db, tenant, a.id, ret_view, e);
		if (rc == ERR_OK)
			memcpy(ret_id, a.id, 37);
	} else if (strcmp(PQgetvalue(res, 0, 0), "budget") == 0) {
		rc = renyi ? renyi_refusal(&f, PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 3),
					   meta->budget_delta, rdp, meta->ledger_id, e)
			   : ledger_budget_refusal(a.eps, a.delta, PQgetvalue(res, 0, 2),
						   PQgetvalue(res, 0, 3), e);
	} else if (strcmp(PQgetvalue(res, 0, 0), "exists") == 0) {
		rc = replay(PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2), hash, ret_id, ret_found,
			    e);
	} else if (strcmp(PQgetvalue(res, 0, 0), "not_found") == 0) {
		rc = err_set(e, ERR_NOT_FOUND, "no dataset '%s'", meta->id);
	} else {
		rc = err_set(e, ERR_INTERNAL, "dpopt_admit2() answered '%s'",
			     PQgetvalue(res, 0, 0));
	}
out:
	/* The statement is its own transaction: a refusal, a replay or an
	 * error wrote nothing. */
	PQclear(res);
	free(a.request);
	free(a.plan);
	free(a.event);
	json_decref(plan_json);
	return rc;
}

enum err_code
runs_create(struct db_conn *db, const char *tenant, const char *dataset_id, const char *body,
	    size_t len, const char *idem_key, const struct run_limits *lim, char **ret_view,
	    char ret_id[37], bool *ret_existing, const struct audit_actor *who, struct err *e)
{
	struct dataset_meta meta;
	struct planned_run run = { 0 };
	struct eval_ctx ec = { .db = db, .tenant = tenant };
	json_t *doc = NULL;
	char hash[65] = "", run_id[37], *view = NULL;
	bool found = false;
	enum err_code rc;

	if (idem_key != NULL && (strlen(idem_key) == 0 || strlen(idem_key) > 200))
		return err_set_field(e, ERR_INVALID, "Idempotency-Key",
				     "'Idempotency-Key' must be 1 to 200 bytes");
	rc = jv_parse_object(body, len, &doc, e);
	if (rc == ERR_OK)
		rc = request_hash(dataset_id, doc, hash, e);
	/* Planning reads the dataset without a lock: what it uses (schema,
	 * bounds, rows, mode, public) never changes once the dataset is
	 * sealed.  What can change (deletion, the spent totals, the filter, the
	 * budget) the admission reads again under the ledger's lock, and a key
	 * used concurrently is looked up again there. */
	if (rc == ERR_OK)
		rc = datasets_meta(db, tenant, dataset_id, false, &meta, e);
	if (rc == ERR_OK && idem_key != NULL)
		rc = find_idempotent(db, tenant, idem_key, hash, run_id, &found, e);
	if (rc == ERR_OK && !found)
		rc = run_pipeline_plan(doc, &meta, check_eval, &ec, lim, &run, e);
	if (rc == ERR_OK && !found)
		rc = admit_run(db, tenant, &meta, &run, idem_key, hash, who, run_id, &found, &view,
			       e);
	if (rc == ERR_OK && view == NULL) /* a replay */
		rc = runs_view(db, tenant, run_id, &view, e);
	if (rc == ERR_OK) {
		*ret_view = view;
		view = NULL;
		*ret_existing = found;
		memcpy(ret_id, run_id, 37);
	}
	free(view);
	planned_run_clear(&run);
	json_decref(doc);
	return rc;
}

enum err_code
runs_list(struct db_conn *db, const char *tenant, const char *dataset_id, const char *cursor,
	  long long limit, char **ret, struct err *e)
{
	char lim[24];
	const char *values[4] = { dataset_id, tenant, cursor, lim };
	PGresult *res;
	enum err_code rc;

	/* Deleted datasets too: their runs are the ledger's history. */
	if (!is_uuid(dataset_id))
		return err_set(e, ERR_NOT_FOUND, "no dataset '%s'", dataset_id);
	res = db_exec(db, "SELECT 1 FROM datasets WHERE id = $1 AND tenant_id = $2", 2, values,
		      PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = PQntuples(res) == 1 ? ERR_OK
				 : err_set(e, ERR_NOT_FOUND, "no dataset '%s'", dataset_id);
	PQclear(res);
	if (rc != ERR_OK)
		return rc;
	if (cursor != NULL && !is_uuid(cursor))
		return err_set_field(e, ERR_INVALID, "cursor", "'cursor' is not a valid cursor");
	snprintf(lim, sizeof(lim), "%lld", limit + 1);
	res = db_exec(db,
		      "SELECT " RUN_JSON ", r.id FROM runs r"
		      " WHERE r.dataset_id = $1 AND r.tenant_id = $2 AND ($3::uuid IS NULL OR"
		      " (r.created_at, r.id) > (SELECT c.created_at, c.id FROM runs c"
		      "  WHERE c.id = $3::uuid AND c.tenant_id = $2))"
		      " ORDER BY r.created_at, r.id LIMIT $4",
		      4, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = pgjson_page(res, limit, 1, ret, e);
	PQclear(res);
	return rc;
}

enum err_code
runs_cancel(struct db_conn *db, const char *tenant, const char *id, char **ret, bool *ret_pending,
	    const struct audit_actor *who, struct err *e)
{
	const char *values[2] = { id, tenant };
	char dataset_id[37], state[16];
	bool claimed = false, pending = false;
	PGresult *res;
	enum err_code rc;

	if (!is_uuid(id))
		return err_set(e, ERR_NOT_FOUND, "no run '%s'", id);
	res = db_exec(db, "SELECT dataset_id FROM runs WHERE id = $1 AND tenant_id = $2", 2, values,
		      PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOT_FOUND, "no run '%s'", id);
	}
	snprintf(dataset_id, sizeof(dataset_id), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);

	rc = db_command(db, "BEGIN", e);
	if (rc != ERR_OK)
		return rc;
	/* The lock order of ledger.h: the ledger's row (the root of a shared
	 * ledger, which admissions on every dataset sharing it lock), the
	 * dataset's own row, then the run's.  The refund and the Rényi
	 * recomputation below read the ledger under this lock. */
	rc = ledger_lock(db, NULL, dataset_id, NULL, e);
	if (rc == ERR_OK) {
		res = db_exec(db, "SELECT 1 FROM datasets WHERE id = $1 FOR NO KEY UPDATE", 1,
			      (const char *const[]){ dataset_id }, PGRES_TUPLES_OK, e);
		rc = res != NULL ? ERR_OK : err_failed(e);
		PQclear(res);
	}
	if (rc == ERR_OK) {
		res = db_exec(
			db,
			"SELECT state, attempts > 0 FROM runs WHERE id = $1 AND tenant_id = $2"
			" FOR UPDATE",
			2, values, PGRES_TUPLES_OK, e);
		rc = res != NULL ? ERR_OK : err_failed(e);
		if (res != NULL) {
			snprintf(state, sizeof(state), "%s", PQgetvalue(res, 0, 0));
			claimed = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
		}
		PQclear(res);
	}
	if (rc == ERR_OK && strcmp(state, "queued") == 0) {
		/* Refunded only if no worker ever claimed it (a run re-queued after
		 * a lost lease or a shutdown keeps its charge). */
		if (!claimed)
			rc = ledger_refund(db, id, e);
		if (rc == ERR_OK) {
			res = db_exec(db,
				      "UPDATE runs SET state = 'cancelled', finished_at = now()"
				      " WHERE id = $1",
				      1, values, PGRES_COMMAND_OK, e);
			rc = res != NULL ? ERR_OK : err_failed(e);
			PQclear(res);
		}
	} else if (rc == ERR_OK && strcmp(state, "running") == 0) {
		res = db_exec(db, "UPDATE runs SET cancel_requested = true WHERE id = $1", 1,
			      values, PGRES_COMMAND_OK, e);
		rc = res != NULL ? ERR_OK : err_failed(e);
		PQclear(res);
		pending = true; /* the worker stops at its next step */
	} else if (rc == ERR_OK) {
		rc = err_set(e, ERR_CONFLICT, "run '%s' has already ended (%s)", id, state);
	}
	if (rc == ERR_OK)
		rc = audit_record(db, who, "run.cancel",
				  &(struct audit_target){ .dataset_id = dataset_id, .run_id = id },
				  pending   ? "{\"stopping\": true}"
				  : claimed ? "{\"refunded\": false}"
					    : "{\"refunded\": true}",
				  e);
	if (rc == ERR_OK)
		rc = db_command(db, "COMMIT", e);
	else
		(void)db_command(db, "ROLLBACK", NULL);
	if (rc == ERR_OK)
		rc = runs_view(db, tenant, id, ret, e);
	if (rc == ERR_OK)
		*ret_pending = pending;
	return rc;
}

enum err_code
runs_estimate(struct db_conn *db, const char *tenant, const char *dataset_id, const char *body,
	      size_t len, const struct run_limits *lim, json_t **ret, struct err *e)
{
	struct dataset_meta meta;
	struct planned_run run = { 0 };
	const struct run_request *req = &run.req;
	const struct run_plan *plan = &run.plan;
	struct eval_ctx ec = { .db = db, .tenant = tenant };
	struct accountant_report report;
	struct rdp_grid grid;
	json_t *doc = NULL, *out = NULL, *mode_part = NULL;
	bool fits = false;
	enum err_code rc;

	rc = jv_parse_object(body, len, &doc, e);
	if (rc == ERR_OK)
		rc = datasets_meta(db, tenant, dataset_id, false, &meta, e);
	if (rc == ERR_OK)
		rc = run_pipeline_plan(doc, &meta, check_eval, &ec, lim, &run, e);
	if (rc == ERR_OK && req->spec.mode == ACCOUNTING_RENYI) {
		struct filter f;
		double rdp[FILTER_MAX_ORDERS];
		int idx = -1;

		rc = ledger_load_filter(db, meta.ledger_id, &f, e);
		if (rc == ERR_OK)
			rc = ledger_rdp_on_filter(&f, &plan->event, rdp, e);
		if (rc == ERR_OK)
			rc = filter_fits(&f, rdp, &idx, e);
		if (rc == ERR_OK) {
			fits = idx >= 0;
			mode_part = ledger_filter_json(&f, 0.0, meta.budget_delta);
			json_object_set_new(mode_part, "run_rdp", json_pack("[]"));
			for (unsigned i = 0; i < f.m; i++)
				json_array_append_new(json_object_get(mode_part, "run_rdp"),
						      json_real(rdp[i]));
			/* indicative remaining is relative to the budget's epsilon */
			json_object_del(mode_part, "indicative");
		}
	} else if (rc == ERR_OK) {
		char eps[32], delta[32];
		const char *values[3] = { meta.ledger_id, eps, delta };
		PGresult *res;

		rc = ledger_charge_text(plan->charge_epsilon, plan->charge_delta, eps, delta, e);
		res = rc == ERR_OK
			      ? db_exec(db,
					"SELECT (spent_epsilon + $2::numeric <= budget_epsilon"
					" AND spent_delta + $3::numeric <= budget_delta)::text,"
					" (budget_epsilon - spent_epsilon)::float8,"
					" (budget_delta - spent_delta)::float8"
					" FROM datasets WHERE id = $1",
					3, values, PGRES_TUPLES_OK, e)
			      : NULL;
		if (res == NULL && rc == ERR_OK)
			rc = err_failed(e);
		if (res != NULL) {
			fits = strcmp(PQgetvalue(res, 0, 0), "true") == 0;
			mode_part =
				json_pack("{s:f, s:f}", "remaining_epsilon",
					  strtod(PQgetvalue(res, 0, 1), NULL), "remaining_delta",
					  strtod(PQgetvalue(res, 0, 2), NULL));
			PQclear(res);
		}
	}
	/* The run's own (epsilon, delta) under the dataset's accountant; after
	 * the filter, which answers an event it cannot charge as submission
	 * does (409 accounting_mode_unsupported). */
	if (rc == ERR_OK) {
		rdp_grid_default(&grid);
		rc = accountant_epsilon(&plan->event, req->spec.mode, req->spec.delta, &grid, true,
					&report, e);
	}
	if (rc == ERR_OK) {
		out = json_pack(
			"{s:s, s:b, s:o, s:{s:f, s:f, s:s, s:f}, s:o, s:f, s:I}", "accounting_mode",
			meta.mode, "fits", fits, "plan", run_plan_json(plan, req->spec.mode),
			"standalone", "epsilon", report.epsilon, "delta", report.delta,
			"accountant", report.accountant, "order", report.order, "ledger",
			mode_part != NULL ? mode_part : json_object(), "work", run.work,
			"time_estimate_seconds", (json_int_t)(run.work / lim->work_rate + 1));
		mode_part = NULL;
		if (out == NULL)
			rc = err_set(e, ERR_NOMEM, "cannot build the estimate");
	}
	/* A renyi dataset charges the RDP curve (its filter's proof needs
	 * RDP); the PLD's figure for the same event is shown beside it, for
	 * information only, or null when the PLD cannot bound the event or
	 * its cost guard refuses it. */
	if (rc == ERR_OK && req->spec.mode == ACCOUNTING_RENYI) {
		double pe;
		json_t *info =
			accountant_pld_information(&plan->event, req->spec.delta, &pe, NULL) ==
					ERR_OK
				? json_pack("{s:f, s:f, s:s, s:b}", "epsilon", pe, "delta",
					    req->spec.delta, "accountant", "pld", "charged", 0)
				: json_null();

		if (info == NULL || json_object_set_new(json_object_get(out, "standalone"),
							"pld_information", info) != 0) {
			json_decref(out);
			out = NULL;
			rc = err_set(e, ERR_NOMEM, "cannot build the estimate");
		}
	}
	if (rc == ERR_OK) {
		json_t *w = json_array();

		if (w == NULL || !run_plan_warnings(plan, w) ||
		    (json_array_size(w) > 0 && json_object_set(out, "warnings", w) != 0))
			rc = err_set(e, ERR_NOMEM, "cannot build the estimate");
		json_decref(w);
		if (rc != ERR_OK) {
			json_decref(out);
			out = NULL;
		}
	}
	if (rc == ERR_OK)
		*ret = out;
	json_decref(mode_part);
	planned_run_clear(&run);
	json_decref(doc);
	return rc;
}

enum err_code
runs_list_all(struct db_conn *db, const char *tenant, const struct runs_filter *f,
	      const char *cursor, long long limit, char **ret, struct err *e)
{
	static const char *const states[] = { "queued", "running",   "succeeded",
					      "failed", "cancelled", NULL };
	char lim[24];
	const char *values[5] = { tenant, cursor, lim, f->state, f->dataset_id };
	bool known = f->state == NULL, newest = true;
	PGresult *res;
	enum err_code rc;

	for (const char *const *s = states; !known && *s != NULL; s++)
		known = strcmp(*s, f->state) == 0;
	if (!known)
		return err_set_field(e, ERR_INVALID, "state",
				     "'state' must be one of queued, running, succeeded, failed,"
				     " cancelled");
	if (f->dataset_id != NULL && !is_uuid(f->dataset_id))
		return err_set_field(e, ERR_INVALID, "dataset_id",
				     "'dataset_id' must be a dataset id (a UUID)");
	if (f->order != NULL && strcmp(f->order, "asc") != 0 && strcmp(f->order, "desc") != 0)
		return err_set_field(e, ERR_INVALID, "order",
				     "'order' must be 'desc' (newest first, the default) or 'asc'");
	newest = f->order == NULL || strcmp(f->order, "desc") == 0;
	if (cursor != NULL && !is_uuid(cursor))
		return err_set_field(e, ERR_INVALID, "cursor", "'cursor' is not a valid cursor");
	snprintf(lim, sizeof(lim), "%lld", limit + 1);
	/* Keyset pages on (created_at, id), in either direction; another
	 * tenant's run as a cursor matches no row, so the page is empty. */
#define RUNS_ALL(cmp, dir)                                                                         \
	"SELECT " RUN_JSON ", r.id FROM runs r WHERE r.tenant_id = $1"                             \
	" AND ($4::text IS NULL OR r.state = $4) AND ($5::uuid IS NULL OR r.dataset_id = $5)"      \
	" AND ($2::uuid IS NULL OR (r.created_at, r.id) " cmp " (SELECT c.created_at, c.id"        \
	"  FROM runs c WHERE c.id = $2::uuid AND c.tenant_id = $1))"                               \
	" ORDER BY r.created_at " dir ", r.id " dir " LIMIT $3"
	res = db_exec(db, newest ? RUNS_ALL("<", "DESC") : RUNS_ALL(">", "ASC"), 5, values,
		      PGRES_TUPLES_OK, e);
#undef RUNS_ALL
	if (res == NULL)
		return err_failed(e);
	rc = pgjson_page(res, limit, 1, ret, e);
	PQclear(res);
	return rc;
}

enum err_code
runs_model(struct db_conn *db, const char *tenant, const char *id, json_t **ret, struct err *e)
{
	const char *values[2] = { id, tenant };
	json_t *run = NULL, *spec = NULL;
	PGresult *res;
	enum err_code rc;

	if (!is_uuid(id))
		return err_set(e, ERR_NOT_FOUND, "no run '%s'", id);
	res = db_exec(db,
		      "SELECT " RUN_JSON ", d.spec::text FROM runs r"
		      " JOIN datasets d ON d.id = r.dataset_id"
		      " WHERE r.id = $1 AND r.tenant_id = $2",
		      2, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOT_FOUND, "no such run");
	}
	run = json_loads(PQgetvalue(res, 0, 0), 0, NULL);
	spec = json_loads(PQgetvalue(res, 0, 1), 0, NULL);
	PQclear(res);
	if (run == NULL || spec == NULL)
		rc = err_set(e, ERR_INTERNAL, "run '%s': unreadable stored run", id);
	else
		rc = model_document(run, spec, ret, e);
	json_decref(run);
	json_decref(spec);
	return rc;
}

enum err_code
runs_synthetic_csv(struct db_conn *db, const char *tenant, const char *id,
		   struct synthetic_csv **ret, struct err *e)
{
	const char *values[2] = { id, tenant };
	json_t *run = NULL, *spec = NULL;
	PGresult *res;
	enum err_code rc;

	if (!is_uuid(id))
		return err_set(e, ERR_NOT_FOUND, "no run '%s'", id);
	res = db_exec(db,
		      "SELECT " RUN_JSON ", d.spec::text FROM runs r"
		      " JOIN datasets d ON d.id = r.dataset_id"
		      " WHERE r.id = $1 AND r.tenant_id = $2",
		      2, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOT_FOUND, "no such run");
	}
	run = json_loads(PQgetvalue(res, 0, 0), 0, NULL);
	spec = json_loads(PQgetvalue(res, 0, 1), 0, NULL);
	PQclear(res);
	if (run == NULL || spec == NULL)
		rc = err_set(e, ERR_INTERNAL, "run '%s': unreadable stored run", id);
	else
		rc = synthetic_csv_open(run, spec, ret, e);
	json_decref(run);
	json_decref(spec);
	return rc;
}
