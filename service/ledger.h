/*
 * ledger.h - the privacy ledger (ACCOUNTING.md section 4), basic mode.
 *
 * Budgets and charges are exact decimals (PostgreSQL numeric): a charge
 * travels as the shortest decimal that reads back as the run's double, and
 * every algorithm calibrates its noise one ulp below that double, so the
 * decimal charged is never below what the run spends.  Every function here
 * runs inside the caller's transaction, which holds the dataset's row lock
 * (datasets_meta(..., for_update = true)): admission, charge and run
 * insertion are one atomic step.  The ledger_entries table is append-only.
 */
#ifndef SERVICE_LEDGER_H
#define SERVICE_LEDGER_H

#include "db.h"
#include "err.h"

/* Check a charge is chargeable: finite, epsilon > 0, delta >= 0 (fail
 * closed: never clamp); writes the decimal texts. */
enum err_code ledger_charge_text(double epsilon, double delta, char ret_eps[32], char ret_delta[32],
				 struct err *e);

/* Add the charge to the dataset's spent totals if it fits; ERR_BUDGET with
 * what remains in the message otherwise. */
enum err_code ledger_charge(struct db_conn *db, const char *dataset_id, const char *eps,
			    const char *delta, struct err *e);

/* Append the ledger entry of run_id (kind "charge" or "refund"). */
enum err_code ledger_append(struct db_conn *db, const char *dataset_id, const char *run_id,
			    const char *kind, const char *eps, const char *delta,
			    const char *event_json, struct err *e);

/* Refund the charge of a queued run no worker ever claimed (it never
 * touched data): marks it refunded, appends the refund entry and lowers
 * the spent totals.  ERR_CONFLICT for any other run. */
enum err_code ledger_refund(struct db_conn *db, const char *run_id, struct err *e);

#endif /* SERVICE_LEDGER_H */
