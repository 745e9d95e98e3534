/*
 * datasets.c - dataset metadata in PostgreSQL.
 *
 * JSON views are built by PostgreSQL itself (json_build_object), so that
 * numeric budgets keep their exact decimal text and timestamps their ISO
 * form; C only parses and forwards them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "datasets.h"
#include "jv.h"
#include "ledger.h"
#include "pgjson.h"
#include "schema.h"

/* The JSON view of a row of datasets d, LEFT JOINed (DATASET_LEDGER) with
 * the dataset b whose ledger it shares, if any: a shared or public dataset
 * keeps no budget of its own (db/migrations/0005_public_shared.sql). */
#define DATASET_LEDGER " LEFT JOIN datasets b ON b.id = d.ledger_of"
#define LEDGER_COL(c)  "coalesce(b." c ", d." c ")"
#define DATASET_JSON                                                                                                                                                                                                                          \
	"json_build_object('id', d.id, 'name', d.name, 'schema', d.spec->'schema',"                                                                                                                                                           \
	" 'bounds', d.spec->'bounds', 'public', d.public,"                                                                                                                                                                                    \
	" 'accounting_mode', " LEDGER_COL(                                                                                                                                                                                                    \
		"accounting_mode") ","                                                                                                                                                                                                        \
				   " 'budget_shared_with', d.ledger_of,"                                                                                                                                                                      \
				   " 'state', d.state, 'n_rows', d.n_rows,"                                                                                                                                                                   \
				   " 'acknowledge_large_delta', " LEDGER_COL(                                                                                                                                                                 \
					   "large_delta_ok") ","                                                                                                                                                                              \
							     " 'budget', CASE WHEN d.public THEN "                                                                                                                                            \
							     "NULL ELSE json_build_object("                                                                                                                                                   \
							     "   'epsilon', "                                                                                                                                                                 \
							     "json_build_object('total',"                                                                                                                                                     \
							     " " LEDGER_COL(                                                                                                                                                                  \
								     "budget_epsilon") ","                                                                                                                                                    \
										       "     "                                                                                                                                                \
										       "'spent',"                                                                                                                                             \
										       " " LEDGER_COL(                                                                                                                                        \
											       "s"                                                                                                                                            \
											       "p"                                                                                                                                            \
											       "e"                                                                                                                                            \
											       "n"                                                                                                                                            \
											       "t"                                                                                                                                            \
											       "_"                                                                                                                                            \
											       "e"                                                                                                                                            \
											       "p"                                                                                                                                            \
											       "s"                                                                                                                                            \
											       "i"                                                                                                                                            \
											       "l"                                                                                                                                            \
											       "o"                                                                                                                                            \
											       "n") ","                                                                                                                                       \
												    "     'remaining', " LEDGER_COL("budget_epsilon") " - " LEDGER_COL(                                                                       \
													    "spent_epsilon") "),"                                                                                                             \
															     "   'delta', json_build_object('total', " LEDGER_COL(                                                            \
																     "budget_delta") ","                                                                                      \
																		     "     'spent', " LEDGER_COL(                                                             \
																			     "spent_delta") ","                                                               \
																					    "     'remaining', " LEDGER_COL("budget_delta") " - " LEDGER_COL( \
																						    "spent_delta") ")) END,"                                  \
																								   " 'created_at', d.created_at, 'sealed_at', d.sealed_at)::text"

enum err_code
datasets_check_delta(const struct dataset_meta *m, double delta, long long n, const char *field,
		     struct err *e)
{
	/* delta >= 1/n allows mechanisms that publish a record outright. */
	if (m->large_delta_ok || n <= 0 || delta * (double)n < 1.0)
		return ERR_OK;
	return err_set_field(e, ERR_NUMERIC, field,
			     "'%s' = %g is not below 1/n = 1/%lld; create the dataset with "
			     "\"acknowledge_large_delta\": true to allow it",
			     field, delta, n);
}

bool
is_uuid(const char *s)
{
	static const char pat[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

	if (s == NULL || strlen(s) != sizeof(pat) - 1)
		return false;
	for (size_t i = 0; i < sizeof(pat) - 1; i++) {
		char c = s[i];

		if (pat[i] == '-' ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return true;
}

/* Validated POST /v1/datasets body, normalised. */
struct dataset_create {
	const char *name;
	struct data_schema schema; /* schema and bounds (schema.h) */
	struct schema_extra extra; /* owned: categorical labels, format */
	double epsilon, delta;
	const char *mode; /* NULL for public and shared-ledger datasets */
	bool large_delta_ok;
	bool is_public;    /* "public": true: no budget, evaluation only */
	const char *share; /* "share_budget_with": the dataset whose ledger it uses */
};

static enum err_code
parse_create(const json_t *doc, unsigned max_features, struct dataset_create *ret, struct err *e)
{
	static const char *const top[] = { "name",
					   "schema",
					   "bounds",
					   "budget",
					   "accounting_mode",
					   "acknowledge_large_delta",
					   "public",
					   "share_budget_with",
					   NULL };
	/* Keys that only a dataset with its own ledger may have. */
	static const char *const own_ledger_keys[] = { "budget", "accounting_mode",
						       "acknowledge_large_delta", NULL };
	static const char *const budget_keys[] = { "epsilon", "delta", NULL };
	struct dataset_create c = { 0 };
	json_t *budget, *ack, *pub;
	enum err_code rc;

	if ((rc = jv_only_keys(doc, "", top, e)) != ERR_OK ||
	    (rc = jv_string(doc, "", "name", true, 200, &c.name, e)) != ERR_OK ||
	    (rc = schema_parse_extra(json_object_get(doc, "schema"), json_object_get(doc, "bounds"),
				     &c.schema, &c.extra, e)) != ERR_OK)
		return rc;
	*ret = c; /* ret owns the labels from here on */
	if (c.schema.d > max_features)
		return err_set_field(e, ERR_INVALID, "schema.features",
				     "'schema.features' is above this service's limit of %u "
				     "(DPOPT_MAX_FEATURES)",
				     max_features);
	pub = json_object_get(doc, "public");
	if (pub != NULL && !json_is_boolean(pub))
		return err_set_field(e, ERR_INVALID, "public", "'public' must be a boolean");
	c.is_public = json_is_true(pub);
	if ((rc = jv_string(doc, "", "share_budget_with", false, 64, &c.share, e)) != ERR_OK)
		return rc;
	if (c.share != NULL && !is_uuid(c.share))
		return err_set_field(e, ERR_INVALID, "share_budget_with",
				     "'share_budget_with' must be the id of one of your datasets");
	if (c.is_public && c.share != NULL)
		return err_set_field(e, ERR_INVALID, "share_budget_with",
				     "a public dataset has no budget to share");
	if (c.is_public || c.share != NULL) {
		/* The budget is none (public) or another dataset's ledger. */
		for (const char *const *k = own_ledger_keys; *k != NULL; k++)
			if (json_object_get(doc, *k) != NULL)
				return err_set_field(
					e, ERR_INVALID, *k, "'%s' is not allowed with %s", *k,
					c.is_public ? "\"public\": true" : "'share_budget_with'");
		*ret = c;
		return ERR_OK;
	}
	if ((rc = jv_object(doc, "", "budget", true, &budget, e)) != ERR_OK ||
	    (rc = jv_only_keys(budget, "budget", budget_keys, e)) != ERR_OK ||
	    (rc = jv_number(budget, "budget", "epsilon", true, 0, true, 1e6, &c.epsilon, NULL,
			    e)) != ERR_OK ||
	    (rc = jv_number(budget, "budget", "delta", true, 0, false, 0.5, &c.delta, NULL, e)) !=
		    ERR_OK)
		return rc;
	/* delta = 0.5 allows publishing a record half the time: no privacy. */
	if (c.delta >= 0.5)
		return err_set_field(e, ERR_INVALID, "budget.delta",
				     "'budget.delta' must be within [0, 0.5)");
	if ((rc = jv_string(doc, "", "accounting_mode", false, 16, &c.mode, e)) != ERR_OK)
		return rc;
	ack = json_object_get(doc, "acknowledge_large_delta");
	if (ack != NULL && !json_is_boolean(ack))
		return err_set_field(e, ERR_INVALID, "acknowledge_large_delta",
				     "'acknowledge_large_delta' must be a boolean");
	c.large_delta_ok = json_is_true(ack);
	if (c.mode == NULL)
		c.mode = "renyi"; /* the default: RDP composition under a filter */
	if (strcmp(c.mode, "basic") != 0 && strcmp(c.mode, "renyi") != 0)
		return err_set_field(e, ERR_INVALID, "accounting_mode",
				     "'accounting_mode' must be 'renyi' (the default) or 'basic'");
	*ret = c;
	return ERR_OK;
}

enum err_code
datasets_create(struct db_conn *db, const char *tenant, unsigned max_features, const char *body,
		size_t len, char **ret_view, char ret_id[37], const struct audit_actor *who,
		struct err *e)
{
	char detail[AUDIT_DETAIL_LEN];
	bool in_tx = false;
	struct dataset_create c = { 0 };
	json_t *doc = NULL, *spec = NULL;
	char features[24], eps[32], delta[32], *spec_text = NULL;
	char orders[LEDGER_ARRAY_TEXT], caps[LEDGER_ARRAY_TEXT], spent[LEDGER_ARRAY_TEXT];
	const char *ov = NULL, *cv = NULL, *sv = NULL;
	struct filter f;
	PGresult *res;
	enum err_code rc;

	rc = jv_parse_object(body, len, &doc, e);
	if (rc == ERR_OK)
		rc = parse_create(doc, max_features, &c, e);
	/* A renyi ledger fixes its filter grid and caps now, from the budget
	 * (algorithms/privacy/filter.h says how). */
	if (rc == ERR_OK && c.mode != NULL && strcmp(c.mode, "renyi") == 0) {
		rc = filter_init(&f, c.epsilon, c.delta, e);
		if (rc == ERR_OK) {
			ledger_array_text(f.order, f.m, orders);
			ledger_array_text(f.cap, f.m, caps);
			ledger_array_text(f.spent, f.m, spent);
			ov = orders;
			cv = caps;
			sv = spent;
		}
	}
	if (rc != ERR_OK)
		goto out;
	spec = json_pack("{s:o*, s:o*}", "schema", schema_to_json_extra(&c.schema, &c.extra),
			 "bounds", schema_bounds_to_json(&c.schema));
	spec_text =
		spec != NULL && json_object_size(spec) == 2 ? json_dumps(spec, JSON_COMPACT) : NULL;
	if (spec_text == NULL) {
		rc = err_set(e, ERR_NOMEM, "cannot build the dataset spec");
		goto out;
	}
	snprintf(features, sizeof(features), "%zu", c.schema.d);
	if (c.mode != NULL) {
		db_double_text(c.epsilon, eps);
		db_double_text(c.delta, delta);
	}
	/* The insert and its audit row are one transaction. */
	rc = db_command(db, "BEGIN", e);
	if (rc != ERR_OK)
		goto out;
	in_tx = true;
	/* A shared ledger is resolved to its root in the INSERT itself (the
	 * root is never public and has its own budget: no chains).  The root's
	 * row is locked (FOR SHARE: step 1 of ledger.h's order) so that a
	 * delete of the root, which refuses while datasets share its ledger,
	 * cannot commit in between. */
	res = db_exec(db,
		      "WITH r AS (SELECT l.id AS root FROM datasets l WHERE l.id ="
		      " (SELECT coalesce(ledger_of, id) FROM datasets"
		      " WHERE id = $14::uuid AND tenant_id = $1 AND NOT public) FOR SHARE),"
		      " d AS (INSERT INTO datasets (tenant_id, name, spec, n_features, task,"
		      " accounting_mode, budget_epsilon, budget_delta, spent_epsilon, spent_delta,"
		      " large_delta_ok, filter_orders, filter_caps, spent_rdp, public, ledger_of)"
		      " SELECT $1, $2, $3::jsonb, $4, $5, $6, $7::numeric, $8::numeric,"
		      " CASE WHEN $6::text IS NULL THEN NULL ELSE 0 END,"
		      " CASE WHEN $6::text IS NULL THEN NULL ELSE 0 END,"
		      " $9, $10::float8[], $11::float8[], $12::float8[], $13, (SELECT root FROM r)"
		      " WHERE $14::uuid IS NULL OR EXISTS (SELECT 1 FROM r)"
		      " RETURNING *) SELECT " DATASET_JSON ", d.id FROM d" DATASET_LEDGER,
		      14,
		      (const char *const[]){
			      tenant, c.name, spec_text, features, schema_task_name(c.schema.task),
			      c.mode, c.mode != NULL ? eps : NULL, c.mode != NULL ? delta : NULL,
			      c.large_delta_ok ? "t" : "f", ov, cv, sv, c.is_public ? "t" : "f",
			      c.share },
		      PGRES_TUPLES_OK, e);
	if (res == NULL) {
		rc = err_failed(e);
		goto out;
	}
	if (PQntuples(res) == 0) {
		PQclear(res);
		rc = err_set_field(e, ERR_INVALID, "share_budget_with",
				   "no dataset '%s' of yours has a budget to share", c.share);
		goto out;
	}
	rc = pgjson_one(res, "dataset not created", ret_view, e);
	if (rc == ERR_OK)
		snprintf(ret_id, 37, "%s", PQgetvalue(res, 0, 1));
	PQclear(res);
	if (rc == ERR_OK)
		rc = audit_record(db, who, "dataset.create",
				  &(struct audit_target){ .dataset_id = ret_id },
				  audit_create_detail(detail, c.mode, eps, delta, c.share), e);
out:
	if (in_tx && rc == ERR_OK)
		rc = db_command(db, "COMMIT", e);
	else if (in_tx)
		(void)db_command(db, "ROLLBACK", NULL);
	if (rc != ERR_OK && *ret_view != NULL) {
		free(*ret_view);
		*ret_view = NULL;
	}
	free(spec_text);
	json_decref(spec);
	json_decref(doc);
	schema_extra_clear(&c.extra);
	return rc;
}

enum err_code
datasets_meta_from_row(const PGresult *res, int row, struct dataset_meta *ret, struct err *e)
{
	struct dataset_meta m = { 0 };
	json_t *spec;
	enum err_code rc;

	snprintf(m.id, sizeof(m.id), "%s", PQgetvalue(res, row, 0));
	snprintf(m.tenant, sizeof(m.tenant), "%s", PQgetvalue(res, row, 1));
	/* The stored spec went through schema_parse() at creation; parsing
	 * it again gives the same schema, or the store is inconsistent. */
	spec = json_loads(PQgetvalue(res, row, 4), 0, NULL);
	rc = schema_parse(json_object_get(spec, "schema"), json_object_get(spec, "bounds"),
			  &m.schema, e);
	json_decref(spec);
	if (rc != ERR_OK)
		return err_set(e, ERR_INTERNAL, "dataset '%s' has an unreadable stored schema",
			       m.id);
	m.d = m.schema.d;
	m.task = m.schema.task;
	m.bounds = m.schema.bounds;
	snprintf(m.state, sizeof(m.state), "%s", PQgetvalue(res, row, 5));
	m.n_rows = atoll(PQgetvalue(res, row, 6));
	snprintf(m.mode, sizeof(m.mode), "%s", PQgetvalue(res, row, 7));
	m.large_delta_ok = strcmp(PQgetvalue(res, row, 8), "t") == 0;
	m.budget_delta = strtod(PQgetvalue(res, row, 9), NULL);
	snprintf(m.ledger_id, sizeof(m.ledger_id), "%s", PQgetvalue(res, row, 10));
	m.is_public = strcmp(PQgetvalue(res, row, 11), "t") == 0;
	m.layout = strcmp(PQgetvalue(res, row, 12), "csr") == 0 ? DATA_CSR : DATA_DENSE;
	m.nnz = atoll(PQgetvalue(res, row, 13));
	*ret = m;
	return ERR_OK;
}

enum err_code
datasets_meta(struct db_conn *db, const char *tenant, const char *id, bool for_update,
	      struct dataset_meta *ret, struct err *e)
{
	const char *values[2] = { id, tenant };
	PGresult *res;
	enum err_code rc;

	if (!is_uuid(id))
		return err_set(e, ERR_NOT_FOUND, "no dataset '%s'", id);
	/* The ledger columns come from the dataset that owns the ledger (r):
	 * itself, or the one it shares.  With for_update, the lock order of
	 * ledger.h: the ledger's row first (ledger_lock), then the dataset's
	 * own (FOR NO KEY UPDATE OF d: not blocked by an upload, upload.c). */
	if (for_update) {
		rc = ledger_lock(db, tenant, id, NULL, e);
		if (rc != ERR_OK)
			return rc;
	}
#define META_SELECT                                                                                \
	"SELECT d.id, d.tenant_id, d.n_features, d.task, d.spec::text, d.state,"                   \
	" coalesce(d.n_rows, 0), r.accounting_mode, r.large_delta_ok, r.budget_delta, r.id,"       \
	" d.public, d.layout, coalesce(d.nnz, 0)"                                                  \
	" FROM datasets d JOIN datasets r ON r.id = coalesce(d.ledger_of, d.id)"                   \
	" WHERE d.id = $1 AND d.tenant_id = $2 AND d.state <> 'deleted'"
	res = db_exec(db, for_update ? META_SELECT " FOR NO KEY UPDATE OF d" : META_SELECT, 2,
		      values, PGRES_TUPLES_OK, e);
#undef META_SELECT
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOT_FOUND, "no dataset '%s'", id);
	}
	rc = datasets_meta_from_row(res, 0, ret, e);
	PQclear(res);
	return rc;
}

enum err_code
datasets_view(struct db_conn *db, const char *tenant, const char *id, char **ret, struct err *e)
{
	const char *values[2] = { id, tenant };
	PGresult *res;
	enum err_code rc;

	if (!is_uuid(id))
		return err_set(e, ERR_NOT_FOUND, "no dataset '%s'", id);
	res = db_exec(db,
		      "SELECT " DATASET_JSON " FROM datasets d" DATASET_LEDGER
		      " WHERE d.id = $1 AND d.tenant_id = $2 AND d.state <> 'deleted'",
		      2, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = pgjson_one(res, "no such dataset", ret, e);
	PQclear(res);
	return rc;
}

enum err_code
datasets_list(struct db_conn *db, const char *tenant, const char *cursor, long long limit,
	      char **ret, struct err *e)
{
	char lim[24];
	const char *values[3] = { tenant, cursor, lim };
	PGresult *res;
	enum err_code rc;

	if (cursor != NULL && !is_uuid(cursor))
		return err_set_field(e, ERR_INVALID, "cursor", "'cursor' is not a valid cursor");
	snprintf(lim, sizeof(lim), "%lld", limit + 1);
	res = db_exec(db,
		      "SELECT " DATASET_JSON ", d.id FROM datasets d" DATASET_LEDGER
		      " WHERE d.tenant_id = $1 AND d.state <> 'deleted' AND ($2::uuid IS NULL OR"
		      " (d.created_at, d.id) > (SELECT c.created_at, c.id FROM datasets c"
		      "  WHERE c.id = $2::uuid AND c.tenant_id = $1))"
		      " ORDER BY d.created_at, d.id LIMIT $3",
		      3, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = pgjson_page(res, limit, 1, ret, e);
	PQclear(res);
	return rc;
}

/* The caps of a renyi dataset's fixed grid for a new budget (text of a
 * float8[] in ret): every cap positive, and some order not yet exceeded
 * (a budget below what is spent is refused, as in basic mode). */
static enum err_code
renyi_caps_for(struct db_conn *db, const char *id, double epsilon, double delta,
	       char ret[LEDGER_ARRAY_TEXT], struct err *e)
{
	struct filter f;
	bool open = false;
	enum err_code rc;

	if (!(delta > 0.0))
		return err_set_field(e, ERR_INVALID, "budget.delta",
				     "a 'renyi' ledger needs 'budget.delta' > 0");
	rc = ledger_load_filter(db, id, &f, e);
	if (rc != ERR_OK)
		return rc;
	for (unsigned i = 0; i < f.m; i++) {
		double c = filter_cap(epsilon, delta, f.m, f.order[i]);

		if (!(isfinite(c) && c > 0.0))
			return err_set_field(e, ERR_INVALID, "budget.epsilon",
					     "'budget.epsilon' is too small for this dataset's "
					     "Rényi filter grid");
		f.cap[i] = nextafter(c, 0.0);
		open = open || f.spent[i] <= f.cap[i];
	}
	if (!open)
		return err_set_field(e, ERR_CONFLICT, "budget",
				     "the new budget is below what is already spent");
	ledger_array_text(f.cap, f.m, ret);
	return ERR_OK;
}

/* PATCH on a dataset that shares ledger_id's budget: ERR_CONFLICT saying
 * where the budget is changed, or that it is fixed since that dataset was
 * deleted (its ledger lives on for the datasets sharing it, read-only). */
static enum err_code
shared_budget_conflict(struct db_conn *db, const char *ledger_id, struct err *e)
{
	PGresult *res;
	bool deleted;

	res = db_exec(db, "SELECT state = 'deleted' FROM datasets WHERE id = $1", 1,
		      (const char *const[]){ ledger_id }, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	deleted = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (deleted)
		return err_set_field(e, ERR_CONFLICT, "budget",
				     "this dataset shares the budget of dataset '%s', which was "
				     "deleted: that budget can no longer change",
				     ledger_id);
	return err_set_field(e, ERR_CONFLICT, "budget",
			     "this dataset shares the budget of dataset '%s': change it there",
			     ledger_id);
}

enum err_code
datasets_update(struct db_conn *db, const char *tenant, const char *id, const char *body,
		size_t len, char **ret_view, const struct audit_actor *who, struct err *e)
{
	static const char *const top[] = { "budget", NULL };
	static const char *const budget_keys[] = { "epsilon", "delta", NULL };
	char eps[32], delta[32], caps[LEDGER_ARRAY_TEXT] = "", detail[AUDIT_DETAIL_LEN];
	PGresult *res = NULL;
	struct dataset_meta m;
	double epsilon, dlt;
	json_t *doc = NULL, *budget;
	enum err_code rc;

	if (!is_uuid(id))
		return err_set(e, ERR_NOT_FOUND, "no dataset '%s'", id);
	rc = jv_parse_object(body, len, &doc, e);
	if (rc == ERR_OK)
		rc = jv_only_keys(doc, "", top, e);
	if (rc == ERR_OK)
		rc = jv_object(doc, "", "budget", true, &budget, e);
	if (rc == ERR_OK)
		rc = jv_only_keys(budget, "budget", budget_keys, e);
	if (rc == ERR_OK)
		rc = jv_number(budget, "budget", "epsilon", true, 0, true, 1e6, &epsilon, NULL, e);
	if (rc == ERR_OK)
		rc = jv_number(budget, "budget", "delta", true, 0, false, 0.5, &dlt, NULL, e);
	if (rc == ERR_OK && dlt >= 0.5) /* as in parse_create() */
		rc = err_set_field(e, ERR_INVALID, "budget.delta",
				   "'budget.delta' must be within [0, 0.5)");
	json_decref(doc);
	if (rc != ERR_OK)
		return rc;

	db_double_text(epsilon, eps);
	db_double_text(dlt, delta);
	rc = db_command(db, "BEGIN", e);
	if (rc != ERR_OK)
		return rc;
	rc = datasets_meta(db, tenant, id, true, &m, e);
	if (rc == ERR_OK && m.is_public)
		rc = err_set_field(e, ERR_CONFLICT, "budget", "a public dataset has no budget");
	else if (rc == ERR_OK && strcmp(m.ledger_id, m.id) != 0)
		rc = shared_budget_conflict(db, m.ledger_id, e);
	/* A renyi ledger keeps its grid; the caps follow the new budget. */
	if (rc == ERR_OK && strcmp(m.mode, "renyi") == 0)
		rc = renyi_caps_for(db, id, epsilon, dlt, caps, e);
	if (rc == ERR_OK) {
		/* The row is locked: the spent checks and the write are atomic. */
		res = db_exec(db,
			      "WITH d AS (UPDATE datasets SET budget_epsilon = $3::numeric,"
			      " budget_delta = $4::numeric,"
			      " filter_caps = coalesce($5::float8[], filter_caps)"
			      " WHERE id = $1 AND tenant_id = $2"
			      " AND state <> 'deleted' AND spent_epsilon <= $3::numeric"
			      " AND spent_delta <= $4::numeric AND (large_delta_ok OR $4::numeric *"
			      " coalesce(greatest(n_rows, (SELECT max(c.n_rows) FROM datasets c"
			      " WHERE c.ledger_of = $1)), 0) < 1) RETURNING *)"
			      " SELECT " DATASET_JSON " FROM d" DATASET_LEDGER,
			      5,
			      (const char *const[]){ id, tenant, eps, delta,
						     caps[0] != '\0' ? caps : NULL },
			      PGRES_TUPLES_OK, e);
		rc = res != NULL ? ERR_OK : err_failed(e);
	}
	if (rc == ERR_OK && PQntuples(res) != 1) {
		PQclear(res);
		res = NULL;
		/* The sealed datasets on this ledger have known n: the new
		 * delta must pass the seal's sanity check for the largest (in
		 * the UPDATE's WHERE clause above). */
		res = db_exec(db,
			      "SELECT coalesce(max(n_rows), 0) FROM datasets"
			      " WHERE id = $1 OR ledger_of = $1",
			      1, (const char *const[]){ id }, PGRES_TUPLES_OK, e);
		rc = res != NULL ? ERR_OK : err_failed(e);
		if (rc == ERR_OK)
			rc = datasets_check_delta(&m, dlt, atoll(PQgetvalue(res, 0, 0)),
						  "budget.delta", e);
		PQclear(res);
		res = NULL;
		if (rc == ERR_OK)
			rc = err_set_field(e, ERR_CONFLICT, "budget",
					   "the new budget is below what is already spent");
	}
	/*
	 * A renyi ledger's spent epsilon is indicative: the spent vector
	 * converted at the budget's delta.  A new delta changes it, so it is
	 * recomputed here, under the lock the transaction holds (ledger.h), and
	 * the view is read again.
	 */
	if (rc == ERR_OK && strcmp(m.mode, "renyi") == 0) {
		PQclear(res);
		res = NULL;
		rc = ledger_recompute_renyi(db, id, e);
		if (rc == ERR_OK) {
			res = db_exec(db,
				      "WITH d AS (SELECT * FROM datasets WHERE id = $1)"
				      " SELECT " DATASET_JSON " FROM d" DATASET_LEDGER,
				      1, (const char *const[]){ id }, PGRES_TUPLES_OK, e);
			rc = res != NULL ? ERR_OK : err_failed(e);
		}
	}
	if (rc == ERR_OK)
		rc = pgjson_one(res, "no such dataset", ret_view, e);
	PQclear(res);
	if (rc == ERR_OK)
		rc = audit_record(db, who, "dataset.patch",
				  &(struct audit_target){ .dataset_id = id },
				  audit_budget_detail(detail, eps, delta), e);
	if (rc == ERR_OK)
		rc = db_command(db, "COMMIT", e);
	else
		(void)db_command(db, "ROLLBACK", NULL);
	if (rc != ERR_OK && *ret_view != NULL) {
		free(*ret_view);
		*ret_view = NULL;
	}
	return rc;
}

/* ERR_CONFLICT naming the datasets (not deleted) that share the ledger of
 * dataset id, if any: the first in the message, the first six (in creation
 * order) in the detail, so that every id is whole. */
static enum err_code
refuse_if_shared(struct db_conn *db, const char *id, struct err *e)
{
	PGresult *res;
	long long n;

	res = db_exec(db,
		      "SELECT count(*), coalesce((SELECT string_agg(s.id::text, ', ' ORDER BY"
		      " s.created_at, s.id) FROM (SELECT id, created_at FROM datasets"
		      " WHERE ledger_of = $1 AND state <> 'deleted' ORDER BY created_at, id"
		      " LIMIT 6) s), '')"
		      " FROM datasets WHERE ledger_of = $1 AND state <> 'deleted'",
		      1, (const char *const[]){ id }, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	n = atoll(PQgetvalue(res, 0, 0));
	if (n > 0) {
		err_set(e, ERR_CONFLICT,
			"%lld other dataset%s share%s this dataset's ledger, first '%.36s': "
			"delete %s first",
			n, n == 1 ? "" : "s", n == 1 ? "s" : "", PQgetvalue(res, 0, 1),
			n == 1 ? "it" : "them");
		err_detail(e, "datasets sharing the ledger: %s%s", PQgetvalue(res, 0, 1),
			   n > 6 ? ", ..." : "");
	}
	PQclear(res);
	return n > 0 ? ERR_CONFLICT : ERR_OK;
}

enum err_code
datasets_delete(struct db_conn *db, const char *tenant, const char *id,
		const struct audit_actor *who, struct err *e)
{
	struct dataset_meta m;
	const char *values[1] = { id };
	PGresult *res;
	enum err_code rc;

	rc = db_command(db, "BEGIN", e);
	if (rc != ERR_OK)
		return rc;
	rc = datasets_meta(db, tenant, id, true, &m, e);
	/* Its ledger must stay addressable while other datasets charge it
	 * (issue 8, item 10): refused while any dataset not deleted shares it.
	 * Under the ledger's lock, which a dataset created to share it takes
	 * too (datasets_create), so none can appear before the COMMIT. */
	if (rc == ERR_OK && strcmp(m.ledger_id, m.id) == 0)
		rc = refuse_if_shared(db, id, e);
	/* Queued runs that no worker ever claimed never touched the data:
	 * cancel and refund them.  Re-queued ones (claimed before) are cancelled
	 * but keep their charge; running ones are asked to stop and keep it. */
	if (rc == ERR_OK) {
		res = db_exec(
			db,
			"WITH c AS (UPDATE runs SET state = 'cancelled',"
			" refunded = (attempts = 0), finished_at = now()"
			" WHERE dataset_id = $1 AND state = 'queued' RETURNING id, charge_rdp,"
			" charge_epsilon, charge_delta, attempts, plan->'event' AS ev),"
			" l AS (INSERT INTO ledger_entries (dataset_id, run_id, kind, epsilon,"
			" delta, event, rdp) SELECT $2, id, 'refund', charge_epsilon,"
			" charge_delta, ev, charge_rdp FROM c WHERE attempts = 0"
			" RETURNING epsilon, delta)"
			" UPDATE datasets SET spent_epsilon = CASE accounting_mode WHEN 'basic'"
			" THEN spent_epsilon - (SELECT coalesce(sum(epsilon), 0) FROM l)"
			" ELSE spent_epsilon END,"
			" spent_delta = CASE accounting_mode WHEN 'basic'"
			" THEN spent_delta - (SELECT coalesce(sum(delta), 0) FROM l)"
			" ELSE spent_delta END WHERE id = $2",
			2, (const char *const[]){ id, m.ledger_id }, PGRES_COMMAND_OK, e);
		rc = res != NULL ? ERR_OK : err_failed(e);
		PQclear(res);
	}
	if (rc == ERR_OK)
		rc = db_exec_command(db,
				     "UPDATE datasets SET state = 'deleted', deleted_at = now()"
				     " WHERE id = $1",
				     1, values, e);
	if (rc == ERR_OK)
		rc = db_exec_command(db,
				     "UPDATE runs SET cancel_requested = true"
				     " WHERE dataset_id = $1 AND state = 'running'",
				     1, values, e);
	/* A renyi ledger recomputes its spent vector from what stands. */
	if (rc == ERR_OK && !m.is_public && strcmp(m.mode, "renyi") == 0)
		rc = ledger_recompute_renyi(db, m.ledger_id, e);
	if (rc == ERR_OK)
		rc = db_exec_command(db, "DELETE FROM dataset_chunks WHERE dataset_id = $1", 1,
				     values, e);
	if (rc == ERR_OK)
		rc = audit_record(db, who, "dataset.delete",
				  &(struct audit_target){ .dataset_id = id }, NULL, e);
	if (rc == ERR_OK)
		rc = db_command(db, "COMMIT", e);
	else
		(void)db_command(db, "ROLLBACK", NULL);
	return rc;
}
