/*
 * datasets.h - dataset metadata: creation, lookup, listing, budgets,
 * deletion.  The rows themselves are written by upload.c and read by
 * dataset_load.c.
 *
 * Every lookup is scoped to the caller's tenant: another tenant's dataset
 * is ERR_NOT_FOUND, never ERR_FORBIDDEN, so ids cannot be probed.
 */
#ifndef SERVICE_DATASETS_H
#define SERVICE_DATASETS_H

#include <stdbool.h>

#include <jansson.h>

#include "audit.h"
#include "data.h"
#include "db.h"
#include "err.h"

/* Public metadata of one dataset, as the ledger and the runs need it. */
struct dataset_meta {
	char id[37];
	char tenant[65];
	size_t d;
	enum task task;
	struct bounds bounds; /* NAN where undeclared */
	char state[16];       /* created | sealed | deleted */
	long long n_rows;     /* 0 until sealed */
	char mode[16];        /* accounting mode: basic */
	bool large_delta_ok;  /* the owner acknowledged budget.delta >= 1/n */
	double budget_delta;  /* the budget's delta (public) */
	/* The ledger that pays for runs on this dataset: its own id, or the
	 * dataset whose budget it shares ("share_budget_with").  mode,
	 * large_delta_ok and budget_delta above are that ledger's. */
	char ledger_id[37];
	bool is_public;            /* no budget: evaluation only, never charged */
	struct data_schema schema; /* the full public schema (d, task, bounds repeat it) */
	enum data_layout layout;   /* of the stored rows: CSV dense, LIBSVM CSR */
	long long nnz;             /* stored non-zeros (CSR), 0 before the seal */
};

/* Parse and validate a POST /v1/datasets body and insert the dataset;
 * ret_view is its JSON view (owned text, see pgjson.h; *ret_view NULL on
 * entry), ret_id its id.  who: the audit trail's actor (audit.h), here and
 * below. */
enum err_code datasets_create(struct db_conn *db, const char *tenant, unsigned max_features,
			      const char *body, size_t len, char **ret_view, char ret_id[37],
			      const struct audit_actor *who, struct err *e);

/* Load the metadata of dataset id of tenant (not deleted).  With
 * for_update the row is locked until the caller's transaction ends. */
enum err_code datasets_meta(struct db_conn *db, const char *tenant, const char *id, bool for_update,
			    struct dataset_meta *ret, struct err *e);

/* JSON view (metadata, row count, budget; never data values); owned text. */
enum err_code datasets_view(struct db_conn *db, const char *tenant, const char *id, char **ret,
			    struct err *e);

/* One page of the tenant's datasets, oldest first, after cursor (an id or
 * NULL). */
enum err_code datasets_list(struct db_conn *db, const char *tenant, const char *cursor,
			    long long limit, char **ret, struct err *e);

/* PATCH: change the budget ({"budget": {"epsilon", "delta"}}); never below
 * what is already spent. */
enum err_code datasets_update(struct db_conn *db, const char *tenant, const char *id,
			      const char *body, size_t len, char **ret_view,
			      const struct audit_actor *who, struct err *e);

/* Remove the rows, cancel and refund queued runs, keep the ledger. */
enum err_code datasets_delete(struct db_conn *db, const char *tenant, const char *id,
			      const struct audit_actor *who, struct err *e);

/* Fill meta from a row of (id, tenant_id, n_features, task, spec, state,
 * n_rows, accounting_mode, large_delta_ok, budget_delta). */
enum err_code datasets_meta_from_row(const PGresult *res, int row, struct dataset_meta *ret,
				     struct err *e);

/* docs/privacy-model.md §4.4: unless acknowledged, a delta (the budget's at
 * seal time, a run's at submission) must stay below 1/n; ERR_NUMERIC (422)
 * naming field otherwise. */
enum err_code datasets_check_delta(const struct dataset_meta *m, double delta, long long n,
				   const char *field, struct err *e);

/* True when s is a canonical lower-case UUID. */
bool is_uuid(const char *s);

#endif /* SERVICE_DATASETS_H */
