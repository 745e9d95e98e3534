/*
 * ledger.c - basic composition in exact decimals.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ledger.h"

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
ledger_charge(struct db_conn *db, const char *dataset_id, const char *eps, const char *delta,
	      struct err *e)
{
	const char *values[3] = { dataset_id, eps, delta };
	PGresult *res;

	/* The WHERE clause is the admission test; the row is already locked. */
	res = db_exec(db,
		      "UPDATE datasets SET spent_epsilon = spent_epsilon + $2::numeric,"
		      " spent_delta = spent_delta + $3::numeric WHERE id = $1"
		      " AND spent_epsilon + $2::numeric <= budget_epsilon"
		      " AND spent_delta + $3::numeric <= budget_delta",
		      3, values, PGRES_COMMAND_OK, e);
	if (res == NULL)
		return e->code;
	if (PQcmdTuples(res)[0] == '1') {
		PQclear(res);
		return ERR_OK;
	}
	PQclear(res);
	res = db_exec(db,
		      "SELECT (budget_epsilon - spent_epsilon)::text,"
		      " (budget_delta - spent_delta)::text FROM datasets WHERE id = $1",
		      1, values, PGRES_TUPLES_OK, e);
	if (res == NULL)
		return e->code;
	if (PQntuples(res) == 1) {
		err_set_field(e, ERR_BUDGET, "privacy",
			      "the run costs epsilon %s, delta %s; the dataset has epsilon %s, "
			      "delta %s remaining",
			      eps, delta, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1));
		err_detail(e, "remaining epsilon=%s delta=%s", PQgetvalue(res, 0, 0),
			   PQgetvalue(res, 0, 1));
	} else {
		err_set(e, ERR_NOT_FOUND, "no dataset '%s'", dataset_id);
	}
	PQclear(res);
	return e->code;
}

enum err_code
ledger_append(struct db_conn *db, const char *dataset_id, const char *run_id, const char *kind,
	      const char *eps, const char *delta, const char *event_json, struct err *e)
{
	const char *values[6] = { dataset_id, run_id, kind, eps, delta, event_json };
	PGresult *res;

	res = db_exec(db,
		      "INSERT INTO ledger_entries (dataset_id, run_id, kind, epsilon, delta, event)"
		      " VALUES ($1, $2, $3, $4::numeric, $5::numeric, $6::jsonb)",
		      6, values, PGRES_COMMAND_OK, e);
	if (res == NULL)
		return e->code;
	PQclear(res);
	return ERR_OK;
}

enum err_code
ledger_refund(struct db_conn *db, const char *run_id, struct err *e)
{
	const char *values[1] = { run_id };
	PGresult *res;

	/* Only a queued, unrefunded run that no worker ever claimed
	 * (attempts = 0): once claimed, a run keeps its charge even if it went
	 * back to the queue (ACCOUNTING.md section 4). */
	res = db_exec(
		db,
		"WITH r AS (UPDATE runs SET refunded = true WHERE id = $1"
		" AND state = 'queued' AND NOT refunded AND attempts = 0"
		" RETURNING id, dataset_id, charge_epsilon, charge_delta, plan->'event' AS ev),"
		" l AS (INSERT INTO ledger_entries (dataset_id, run_id, kind, epsilon, delta,"
		" event) SELECT dataset_id, id, 'refund', charge_epsilon, charge_delta, ev"
		" FROM r RETURNING dataset_id, epsilon, delta)"
		" UPDATE datasets d SET spent_epsilon = d.spent_epsilon - l.epsilon,"
		" spent_delta = d.spent_delta - l.delta FROM l WHERE d.id = l.dataset_id",
		1, values, PGRES_COMMAND_OK, e);
	if (res == NULL)
		return e->code;
	if (PQcmdTuples(res)[0] != '1') {
		PQclear(res);
		return err_set(e, ERR_CONFLICT, "run '%s' is not refundable", run_id);
	}
	PQclear(res);
	return ERR_OK;
}
