/*
 * runs.h - runs: admission (validate, charge, queue in one transaction),
 * views, listing and cancellation.  Execution is worker.c's.
 */
#ifndef SERVICE_RUNS_H
#define SERVICE_RUNS_H

#include <stdbool.h>

#include <jansson.h>

#include "audit.h"
#include "db.h"
#include "err.h"
#include "run_pipeline.h"
#include "run_view.h"
#include "synthetic_csv.h"

/* Channel that admission NOTIFYs and idle workers LISTEN on. */
#define RUNS_CHANNEL "dpopt_runs"

/*
 * Admit a run on dataset_id of tenant: validate and plan body (the shared
 * path, run_pipeline_plan() with the work limits), charge the
 * ledger and insert the queued run, all in one transaction under the
 * dataset's row lock.  idem_key (may be NULL) makes retries safe: the same
 * key and body return the same run (*ret_existing true), charged once; the
 * same key with another body is ERR_CONFLICT naming "Idempotency-Key".
 */
enum err_code runs_create(struct db_conn *db, const char *tenant, const char *dataset_id,
			  const char *body, size_t len, const char *idem_key,
			  const struct run_limits *lim, char **ret_view, char ret_id[37],
			  bool *ret_existing, const struct audit_actor *who, struct err *e);

/* JSON view of run id of tenant (owned text, see pgjson.h). */
enum err_code runs_view(struct db_conn *db, const char *tenant, const char *id, char **ret,
			struct err *e);

/* runs_view() under the request's key: one statement that also verifies
 * key (auth.h) and fills *ret_auth; a bad key is ERR_UNAUTHENTICATED,
 * checked before the id's form.  GET /v1/runs/{id}. */
struct auth_key;
struct auth;
enum err_code runs_view_keyed(struct db_conn *db, const struct auth_key *key, const char *id,
			      struct auth *ret_auth, char **ret, struct err *e);

/* One page of a dataset's runs, oldest first, after cursor (an id). */
enum err_code runs_list(struct db_conn *db, const char *tenant, const char *dataset_id,
			const char *cursor, long long limit, char **ret, struct err *e);

/* Cancel: a queued run is cancelled (and refunded if no worker ever claimed
 * it); a running one is asked to stop (*ret_pending true) and keeps its
 * charge; a finished one is ERR_CONFLICT. */
enum err_code runs_cancel(struct db_conn *db, const char *tenant, const char *id, char **ret,
			  bool *ret_pending, const struct audit_actor *who, struct err *e);

/* Filters of GET /v1/runs (each NULL when absent). */
struct runs_filter {
	const char *state;      /* queued | running | succeeded | failed | cancelled */
	const char *dataset_id; /* a UUID */
	const char *order;      /* "desc" (newest first, the default) or "asc" */
};

/* One page of tenant's runs across its datasets, after cursor (a run id
 * or NULL) in the page's order.  ERR_INVALID naming the bad filter. */
enum err_code runs_list_all(struct db_conn *db, const char *tenant, const struct runs_filter *f,
			    const char *cursor, long long limit, char **ret, struct err *e);

/* The model document of run id of tenant (model.h; *ret a new reference):
 * ERR_NOT_FOUND when it is not the tenant's, ERR_CONFLICT when it has not
 * succeeded, ERR_INVALID ("objective.name") when its objective does not
 * predict. */
enum err_code runs_model(struct db_conn *db, const char *tenant, const char *id, json_t **ret,
			 struct err *e);

/* A reader of the synthetic rows of run id of tenant as CSV
 * (synthetic_csv.h; *ret the caller's, synthetic_csv_close()):
 * ERR_NOT_FOUND when it is not the tenant's or has no synthetic rows,
 * ERR_CONFLICT when it has not succeeded. */
enum err_code runs_synthetic_csv(struct db_conn *db, const char *tenant, const char *id,
				 struct synthetic_csv **ret, struct err *e);

#endif /* SERVICE_RUNS_H */

/* POST /v1/datasets/{id}/runs:estimate: validate and plan like
 * runs_create() but charge nothing: the calibrated noise, the run's
 * standalone (epsilon, delta) under the dataset's accountant, whether it
 * fits now, the headroom, and the run's work and time.  Owned JSON. */
enum err_code runs_estimate(struct db_conn *db, const char *tenant, const char *dataset_id,
			    const char *body, size_t len, const struct run_limits *lim,
			    json_t **ret, struct err *e);
