/*
 * ledger.c - basic composition in exact decimals.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "auth.h"
#include "datasets.h"
#include "ledger.h"
#include "pgjson.h"
#include "privacy/rdp.h"

enum err_code
ledger_lock(struct db_conn *db, const char *tenant, const char *dataset_id, char ret_ledger_id[37],
	    struct err *e)
{
	const char *values[2] = { dataset_id, tenant };
	PGresult *res;

	if (!is_uuid(dataset_id))
		return err_set(e, ERR_NOT_FOUND, "no dataset '%s'", dataset_id);
	/* ledger_of never changes after creation: resolving the root without
	 * a lock, then locking it, cannot pick a stale root. */
	res = db_exec(db,
		      "SELECT l.id FROM datasets l WHERE l.id = (SELECT coalesce(d.ledger_of, d.id)"
		      " FROM datasets d WHERE d.id = $1 AND ($2::text IS NULL OR d.tenant_id = $2))"
		      " FOR NO KEY UPDATE",
		      2, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOT_FOUND, "no dataset '%s'", dataset_id);
	}
	if (ret_ledger_id != NULL)
		snprintf(ret_ledger_id, 37, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return ERR_OK;
}

enum err_code
ledger_charge_text(double epsilon, double delta, char ret_eps[32], char ret_delta[32],
		   struct err *e)
{
	if (!isfinite(epsilon) || !(epsilon > 0.0))
		return err_set_field(e, ERR_INVALID, "privacy.epsilon",
				     "the run's epsilon cost %g is not chargeable", epsilon);
	if (!isfinite(delta) || delta < 0.0 || delta >= 1.0)
		return err_set_field(e, ERR_INVALID, "privacy.delta",
				     "the run's delta cost %g is not chargeable", delta);
	db_double_text(epsilon, ret_eps);
	db_double_text(delta, ret_delta);
	return ERR_OK;
}

enum err_code
ledger_budget_refusal(const char *eps, const char *delta, const char *rem_eps,
		      const char *rem_delta, struct err *e)
{
	err_set_field(e, ERR_BUDGET, "privacy",
		      "the run costs epsilon %s, delta %s; the dataset has epsilon %s, "
		      "delta %s remaining",
		      eps, delta, rem_eps, rem_delta);
	err_detail(e, "remaining epsilon=%s delta=%s", rem_eps, rem_delta);
	return ERR_BUDGET;
}

/* Recompute a 'renyi' ledger's spent vector as the upward-rounded sum of
 * the charges of runs not refunded (never by subtraction), and its
 * indicative spent epsilon.  The lock comes first: without it the sum is
 * taken from a snapshot that misses an admission still in its transaction,
 * whose charge the absolute write below would then erase (issue 8). */
enum err_code
ledger_recompute_renyi(struct db_conn *db, const char *dataset_id, struct err *e)
{
	char ledger_id[37];
	const char *values[3] = { ledger_id, NULL, NULL };
	char spent[LEDGER_ARRAY_TEXT], eps[32];
	struct filter f;
	double *rows = NULL, budget_delta;
	unsigned k = 0;
	bool any;
	PGresult *res;
	enum err_code rc;

	rc = ledger_lock(db, NULL, dataset_id, ledger_id, e);
	if (rc == ERR_OK)
		rc = ledger_load_filter(db, ledger_id, &f, e);
	if (rc != ERR_OK)
		return rc;
	res = db_exec(db,
		      "SELECT l.rdp::text FROM ledger_entries l JOIN runs r ON r.id = l.run_id"
		      " WHERE l.dataset_id = $1 AND l.kind = 'charge' AND NOT r.refunded",
		      1, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) > 0)
		rows = calloc((size_t)PQntuples(res) * f.m, sizeof(double));
	if (PQntuples(res) > 0 && rows == NULL)
		rc = err_set(e, ERR_NOMEM, "cannot recompute the filter");
	for (int r = 0; rc == ERR_OK && r < PQntuples(res); r++) {
		unsigned m = 0;

		rc = ledger_array_parse(PQgetvalue(res, r, 0), rows + (size_t)r * f.m, f.m, &m, e);
		if (rc == ERR_OK && m != f.m)
			rc = err_set(e, ERR_INTERNAL, "a charge's RDP vector has the wrong length");
		k++;
	}
	PQclear(res);
	if (rc == ERR_OK) {
		filter_sum(f.m, rows, k, f.spent);
		budget_delta = 0.0;
		res = db_exec(db, "SELECT budget_delta FROM datasets WHERE id = $1", 1, values,
			      PGRES_TUPLES_OK, e);
		if (res == NULL) {
			rc = err_failed(e);
		} else {
			budget_delta = strtod(PQgetvalue(res, 0, 0), NULL);
			PQclear(res);
		}
	}
	if (rc == ERR_OK) {
		double spent_eps = filter_spent_epsilon(&f, budget_delta, &any);

		ledger_array_text(f.spent, f.m, spent);
		db_double_text(k > 0 && any ? spent_eps : 0.0, eps);
		values[1] = spent;
		values[2] = eps;
		res = db_exec(db,
			      "UPDATE datasets SET spent_rdp = $2::float8[],"
			      " spent_epsilon = least($3::numeric, budget_epsilon) WHERE id = $1",
			      3, values, PGRES_COMMAND_OK, e);
		rc = res != NULL ? ERR_OK : err_failed(e);
		PQclear(res);
	}
	free(rows);
	return rc;
}

enum err_code
ledger_refund(struct db_conn *db, const char *run_id, struct err *e)
{
	const char *values[1] = { run_id };
	char dataset_id[37], mode[16];
	PGresult *res;
	enum err_code rc;

	/* The ledger's lock first (ledger.h); the run's dataset never changes. */
	res = db_exec(db, "SELECT dataset_id FROM runs WHERE id = $1", 1, values, PGRES_TUPLES_OK,
		      e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_CONFLICT, "run '%s' is not refundable", run_id);
	}
	snprintf(dataset_id, sizeof(dataset_id), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	rc = ledger_lock(db, NULL, dataset_id, NULL, e);
	if (rc != ERR_OK)
		return rc;
	/* The refund goes to the ledger that was charged: the run's dataset's
	 * own, or the one it shares (datasets.ledger_of).
	 * Only a queued, unrefunded run that no worker ever claimed
	 * (attempts = 0): once claimed, a run keeps its charge even if it went
	 * back to the queue (docs/privacy-model.md §4.4). */
	res = db_exec(
		db,
		"WITH r AS (UPDATE runs SET refunded = true WHERE id = $1"
		" AND state = 'queued' AND NOT refunded AND attempts = 0"
		" RETURNING id, dataset_id, charge_epsilon, charge_delta, charge_rdp,"
		" plan->'event' AS ev),"
		" l AS (INSERT INTO ledger_entries (dataset_id, run_id, kind, epsilon, delta,"
		" event, rdp) SELECT coalesce(x.ledger_of, x.id), r.id, 'refund', charge_epsilon,"
		" charge_delta, ev, charge_rdp FROM r JOIN datasets x ON x.id = r.dataset_id"
		" RETURNING dataset_id, epsilon, delta),"
		" b AS (UPDATE datasets d SET spent_epsilon = d.spent_epsilon - l.epsilon,"
		" spent_delta = d.spent_delta - l.delta FROM l WHERE d.id = l.dataset_id"
		" AND d.accounting_mode = 'basic')"
		" SELECT d.id, d.accounting_mode FROM l JOIN datasets d ON d.id = l.dataset_id",
		1, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_CONFLICT, "run '%s' is not refundable", run_id);
	}
	snprintf(dataset_id, sizeof(dataset_id), "%s", PQgetvalue(res, 0, 0));
	snprintf(mode, sizeof(mode), "%s", PQgetvalue(res, 0, 1));
	PQclear(res);
	/* The refund row is visible to later statements of this transaction,
	 * and runs.refunded is already true: the recomputation skips it. */
	if (strcmp(mode, "renyi") == 0)
		return ledger_recompute_renyi(db, dataset_id, e);
	return ERR_OK;
}

void
ledger_array_text(const double *v, unsigned m, char out[LEDGER_ARRAY_TEXT])
{
	size_t used = 0;

	out[used++] = '{';
	for (unsigned i = 0; i < m && i < FILTER_MAX_ORDERS; i++)
		used += (size_t)snprintf(out + used, LEDGER_ARRAY_TEXT - used, "%s%.17g",
					 i > 0 ? "," : "", v[i]);
	snprintf(out + used, LEDGER_ARRAY_TEXT - used, "}");
}

enum err_code
ledger_array_parse(const char *text, double *out, unsigned max, unsigned *ret_m, struct err *e)
{
	const char *p = text;
	unsigned m = 0;
	char *end;

	if (p == NULL || *p++ != '{')
		return err_set(e, ERR_INTERNAL, "a stored RDP vector is malformed");
	while (*p != '}') {
		double v = strtod(p, &end);

		if (end == p || m >= max || !isfinite(v))
			return err_set(e, ERR_INTERNAL, "a stored RDP vector is malformed");
		out[m++] = v;
		p = end;
		if (*p == ',')
			p++;
	}
	*ret_m = m;
	return ERR_OK;
}

enum err_code
ledger_filter_from_text(const char *orders, const char *caps, const char *spent,
			const char *dataset_id, struct filter *ret, struct err *e)
{
	struct filter f;
	unsigned m1 = 0, m2 = 0, m3 = 0;
	enum err_code rc;

	memset(&f, 0, sizeof(f));
	rc = ledger_array_parse(orders, f.order, FILTER_MAX_ORDERS, &m1, e);
	if (rc == ERR_OK)
		rc = ledger_array_parse(caps, f.cap, FILTER_MAX_ORDERS, &m2, e);
	if (rc == ERR_OK)
		rc = ledger_array_parse(spent, f.spent, FILTER_MAX_ORDERS, &m3, e);
	if (rc == ERR_OK && (m1 == 0 || m1 != m2 || m1 != m3))
		rc = err_set(e, ERR_INTERNAL, "dataset '%s' has an inconsistent filter",
			     dataset_id);
	if (rc != ERR_OK)
		return rc;
	f.m = m1;
	*ret = f;
	return ERR_OK;
}

enum err_code
ledger_load_filter(struct db_conn *db, const char *dataset_id, struct filter *ret, struct err *e)
{
	const char *values[1] = { dataset_id };
	PGresult *res;
	enum err_code rc;

	res = db_exec(db,
		      "SELECT filter_orders::text, filter_caps::text, spent_rdp::text FROM datasets"
		      " WHERE id = $1 AND accounting_mode = 'renyi'",
		      1, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_INTERNAL, "dataset '%s' has no Rényi filter", dataset_id);
	}
	rc = ledger_filter_from_text(PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1),
				     PQgetvalue(res, 0, 2), dataset_id, ret, e);
	PQclear(res);
	return rc;
}

enum err_code
ledger_rdp_on_filter(const struct filter *f, const struct dp_event_tree *ev, double *ret_rdp,
		     struct err *e)
{
	struct rdp_grid g;
	double rdp[FILTER_MAX_ORDERS];
	enum err_code rc;

	memset(&g, 0, sizeof(g));
	g.n = f->m;
	memcpy(g.order, f->order, f->m * sizeof(double));
	rc = rdp_curve(ev, &g, rdp, e);
	if (rc != ERR_OK) {
		if (e != NULL && strcmp(e->msg, RDP_MSG_NO_CURVE) == 0)
			return err_set_field(e, ERR_MODE, "algorithm",
					     "this run's privacy event has no Rényi curve (an "
					     "'approx' event): a 'renyi' dataset cannot charge it; "
					     "use a 'basic' dataset");
		return rc;
	}
	for (unsigned i = 0; i < f->m; i++) {
		if (!(isfinite(rdp[i]) && rdp[i] >= 0.0))
			return err_set(e, ERR_NUMERIC, "the run's Rényi curve is not finite");
		ret_rdp[i] = nextafter(rdp[i], INFINITY); /* charges round up */
	}
	return ERR_OK;
}

enum err_code
ledger_renyi_fit(const struct filter *loaded, double budget_delta, const double *rdp,
		 char ret_spent[LEDGER_ARRAY_TEXT], char ret_eps[32], struct err *e)
{
	struct filter f = *loaded;
	double spent_eps;
	bool any;
	int idx;
	enum err_code rc;

	rc = filter_fits(&f, rdp, &idx, e);
	if (rc != ERR_OK)
		return rc;
	if (idx < 0) {
		char head[LEDGER_ARRAY_TEXT];
		double room[FILTER_MAX_ORDERS];

		for (unsigned i = 0; i < f.m; i++)
			room[i] = f.cap[i] - f.spent[i];
		ledger_array_text(room, f.m, head);
		err_set_field(e, ERR_BUDGET, "privacy",
			      "the run does not fit the dataset's Rényi filter at any order "
			      "(GET /v1/datasets/{id}/budget shows the headroom)");
		err_detail(e, "per-order headroom %s", head);
		return ERR_BUDGET;
	}
	filter_add(&f, rdp);
	ledger_array_text(f.spent, f.m, ret_spent);
	spent_eps = filter_spent_epsilon(&f, budget_delta, &any);
	db_double_text(any ? spent_eps : 0.0, ret_eps);
	return ERR_OK;
}

static json_t *
array_json(const double *v, unsigned m)
{
	json_t *a = json_array();

	for (unsigned i = 0; a != NULL && i < m; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

json_t *
ledger_filter_json(const struct filter *f, double budget_epsilon, double budget_delta)
{
	double room[FILTER_MAX_ORDERS], spent_eps;
	bool any;

	for (unsigned i = 0; i < f->m; i++)
		room[i] = f->cap[i] - f->spent[i];
	spent_eps = filter_spent_epsilon(f, budget_delta, &any);
	return json_pack("{s:o, s:o, s:o, s:o, s:{s:o, s:o}}", "orders", array_json(f->order, f->m),
			 "caps", array_json(f->cap, f->m), "spent", array_json(f->spent, f->m),
			 "headroom", array_json(room, f->m), "indicative", "spent_epsilon",
			 any ? json_real(fmin(spent_eps, budget_epsilon)) : json_null(),
			 "remaining_epsilon",
			 json_real(any ? fmax(budget_epsilon - spent_eps, 0.0) : 0.0));
}

bool
ledger_cursor_valid(const char *cursor)
{
	size_t n = strlen(cursor);

	if (n == 0 || n > 18)
		return false;
	for (size_t i = 0; i < n; i++)
		if (cursor[i] < '0' || cursor[i] > '9')
			return false;
	return true;
}

/* Index of a keyed read's columns after the key's three (AUTH_KEY_COLUMNS). */
enum {
	LV_HEAD = 3, /* the view's members before "entries", as a JSON object's text */
	LV_ENTRIES,  /* the page's entries' texts, ", "-separated; NULL when none */
	LV_NEXT,     /* the next page's cursor, NULL on the last */
	LV_RENYI,    /* t for a renyi ledger */
	LV_BUDGET_EPS,
	LV_BUDGET_DELTA,
	LV_LEDGER, /* the ledger's dataset id */
	LV_PUBLIC, /* t for a public dataset (no budget) */
	LV_ORDERS, /* a renyi filter's three arrays */
	LV_CAPS,
	LV_SPENT,
};

/* The read's text from its row: the head object with "entries" and
 * "next_cursor" spliced in before its closing brace, then a renyi
 * ledger's filter; the same members, in the same order, as one
 * json_build_object made before the entries were stored as text. */
static enum err_code
ledger_view_text(const PGresult *res, const char *dataset_id, char **ret, struct err *e)
{
	const char *head = PQgetvalue(res, 0, LV_HEAD), *entries = PQgetvalue(res, 0, LV_ENTRIES);
	const char *next = PQgetvalue(res, 0, LV_NEXT);
	bool has_next = !PQgetisnull(res, 0, LV_NEXT);
	size_t n = strlen(head);
	char *extra = NULL, *out;
	json_t *fj = NULL;
	enum err_code rc = ERR_OK;

	if (strcmp(PQgetvalue(res, 0, LV_RENYI), "t") == 0) {
		struct filter f;

		rc = ledger_filter_from_text(
			PQgetvalue(res, 0, LV_ORDERS), PQgetvalue(res, 0, LV_CAPS),
			PQgetvalue(res, 0, LV_SPENT), PQgetvalue(res, 0, LV_LEDGER), &f, e);
		if (rc != ERR_OK)
			return rc;
		fj = ledger_filter_json(&f, strtod(PQgetvalue(res, 0, LV_BUDGET_EPS), NULL),
					strtod(PQgetvalue(res, 0, LV_BUDGET_DELTA), NULL));
		extra = fj != NULL ? json_dumps(fj, JSON_COMPACT) : NULL;
		json_decref(fj);
		if (extra == NULL)
			return err_set(e, ERR_NOMEM, "cannot build the budget view");
	}
	while (n > 0 && head[n - 1] != '}')
		n--;
	if (n == 0) {
		free(extra);
		return err_set(e, ERR_INTERNAL, "the budget view of dataset '%s' is malformed",
			       dataset_id);
	}
	out = malloc(n + strlen(entries) + strlen(next) + (extra != NULL ? strlen(extra) : 0) + 64);
	if (out == NULL) {
		free(extra);
		return err_set(e, ERR_NOMEM, "cannot build the budget view");
	}
	{
		int used = sprintf(out, "%.*s, \"entries\" : [%s], \"next_cursor\" : %s%s%s",
				   (int)(n - 1), head, entries, has_next ? "\"" : "",
				   has_next ? next : "null", has_next ? "\"" : "");

		sprintf(out + used, "%s%s}", extra != NULL ? ", \"renyi\" : " : "",
			extra != NULL ? extra : "");
	}
	free(extra);
	*ret = out;
	return rc;
}

enum err_code
ledger_view(struct db_conn *db, const struct auth_key *key, const char *dataset_id,
	    const char *cursor, unsigned limit, struct auth *ret_auth, char **ret, struct err *e)
{
	char lim[16];
	/* An id that is no UUID still has its key checked (401 before 404),
	 * in the same statement, against a dataset that cannot exist. */
	const char *values[5] = { key->id, key->hash_hex,
				  is_uuid(dataset_id) ? dataset_id
						      : "00000000-0000-0000-0000-000000000000",
				  cursor != NULL ? cursor : "0", lim };
	PGresult *res;
	enum err_code rc;

	if (cursor != NULL && !ledger_cursor_valid(cursor)) {
		rc = auth_check_key(db, key, ret_auth, e);
		if (rc != ERR_OK)
			return rc;
		return err_set_field(e, ERR_INVALID, "cursor",
				     "'cursor' must be the next_cursor of a previous page");
	}
	snprintf(lim, sizeof(lim), "%u", limit);
	/* One statement, one round trip: the key's row (auth.h), then under
	 * its tenant and only when its hash matches, the totals as a JSON
	 * object, one page of entries (limit of them after the cursor, oldest
	 * first, by the index on (dataset_id, id)) as their stored texts
	 * (0013_ledger_view.sql; LEDGER_ENTRY_JSON for older rows), the
	 * cursor of the next page when one follows, and a renyi ledger's
	 * filter.  Exact decimals and the entries come from PostgreSQL as
	 * text.  A deleted dataset's ledger stays readable: its history, and
	 * the budget that datasets sharing it still charge (issue 8, item 10). */
	res = db_exec(
		db,
		"SELECT " AUTH_KEY_COLUMNS ", b.* FROM api_keys k LEFT JOIN LATERAL ("
		"SELECT json_build_object('dataset_id', x.id, 'ledger_dataset_id', d.id,"
		" 'accounting_mode',"
		" d.accounting_mode, 'budget', json_build_object('epsilon', d.budget_epsilon,"
		" 'delta', d.budget_delta),"
		" 'spent', json_build_object('epsilon', d.spent_epsilon, 'delta',"
		" d.spent_delta, 'indicative', d.accounting_mode = 'renyi'),"
		" 'remaining', json_build_object('epsilon', d.budget_epsilon - d.spent_epsilon,"
		" 'delta', d.budget_delta - d.spent_delta))::text,"
		" p.entries, CASE WHEN EXISTS (SELECT 1 FROM ledger_entries n"
		" WHERE n.dataset_id = d.id AND n.id > p.last) THEN p.last::text END,"
		" d.accounting_mode = 'renyi', d.budget_epsilon, d.budget_delta, d.id, x.public,"
		" d.filter_orders::text, d.filter_caps::text, d.spent_rdp::text"
		" FROM datasets x JOIN datasets d ON d.id = coalesce(x.ledger_of, x.id)"
		" LEFT JOIN LATERAL (SELECT string_agg(coalesce(l.view, " LEDGER_ENTRY_JSON(
			"l") "), ', ' ORDER BY l.id) AS entries, max(l.id) AS last"
			     " FROM (SELECT * FROM ledger_entries l WHERE l.dataset_id = d.id"
			     " AND l.id > $4::bigint ORDER BY l.id LIMIT $5::int) l) p ON true"
			     " WHERE x.id = $3::uuid AND x.tenant_id = k.tenant_id "
			     "AND " AUTH_KEY_MATCH("$2") ") b ON true WHERE " AUTH_KEY_VALID("$1"),
		5, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return err_failed(e);
	rc = auth_verify_row(res, key, ret_auth, e);
	if (rc == ERR_OK && (!is_uuid(dataset_id) || PQgetisnull(res, 0, LV_HEAD)))
		rc = err_set(e, ERR_NOT_FOUND, "no dataset '%s'", dataset_id);
	else if (rc == ERR_OK && strcmp(PQgetvalue(res, 0, LV_PUBLIC), "t") == 0)
		rc = err_set_field(e, ERR_CONFLICT, "dataset",
				   "dataset '%s' is public: it has no budget", dataset_id);
	else if (rc == ERR_OK)
		rc = ledger_view_text(res, dataset_id, ret, e);
	PQclear(res);
	return rc;
}
