/*
 * run_request.h - the body of POST /v1/datasets/{id}/runs, validated
 * against the algorithm's schema and the dataset's public metadata.
 *
 *	{"algorithm": "dp_sgd.one_pass",
 *	 "objective": {"name": "logistic", "params": {}},
 *	 "constraints": {"x": {"kind": "l2_ball", "radius": 5}},
 *	                 (saddle methods also "y": {...}, required)
 *	 "privacy": {"epsilon": 0.5, "delta": 1e-6},
 *	 "params": {"batch_size": 0}}
 *
 * The same parser runs at admission (to charge) and in the worker (to
 * run), on the normalised document stored with the run, so both see the
 * same struct run_spec and the same plan.
 */
#ifndef SERVICE_RUN_REQUEST_H
#define SERVICE_RUN_REQUEST_H

#include <jansson.h>

#include "alg.h"
#include "datasets.h"
#include "err.h"

struct run_request {
	const struct alg_ops *alg; /* points into the static registry */
	struct run_spec spec;
	json_t *normalised; /* owned: the request with every default filled in */
	/* Owned: the storage of a polytope's vertices that spec.x / spec.y
	 * borrow (constraint_json_parse()); NULL for the other kinds.  Freed
	 * by run_request_clear(), so every copy of the spec (the worker's
	 * run, the methods' states, the offline solver's) must be done with
	 * before that. */
	double *owned_x, *owned_y;
	char eval_dataset_id[37]; /* a public dataset to evaluate the result on; "" if none */
};

/* Validate doc (borrowed) for dataset meta (sealed).  Errors name the
 * field ("params.batch_size", "constraints.x.radius", "bounds.label"). */
enum err_code run_request_parse(const json_t *doc, const struct dataset_meta *meta,
				struct run_request *ret, struct err *e);

void run_request_clear(struct run_request *r);

/* The evaluation dataset (its metadata, already loaded for the tenant)
 * must be public, sealed, and have the run's features, task and classes
 * (and groups when the objective weights by group).  ERR_INVALID naming
 * "eval_dataset_id". */
enum err_code run_request_check_eval(const struct run_request *r, const struct dataset_meta *eval,
				     struct err *e);

/* The "result" member of a finished run: x (spec.dim values; for a
 * saddle run, spec.has_y, the block x = u[0 .. objective.dim_x) and "y"
 * the rest), privacy
 * (event, charged, accountant), params_used, steps, wall_time_ms.  The
 * worker and the offline solver print the same.  Owned; NULL when out of
 * memory. */
json_t *run_result_json(const struct run_request *req, const struct run_plan *plan, const double *x,
			double wall_ms);

/* The plan as JSON: steps, event, the accountant label, charge,
 * parameters used.  The label is "<accountant> (<source>); <ledger>": the
 * accountant that bounded the plan's event (run_plan.accountant, with
 * accountant_source()) and the ledger of mode ("basic composition ledger"
 * or "Rényi filter ledger").  Owned; NULL when out of memory or when the
 * plan names no known accountant. */
json_t *run_plan_json(const struct run_plan *plan, enum accounting_mode mode);

/* Warnings about a plan from its public figures, as JSON strings appended
 * to arr (borrowed): a method that reports "gap_bound" not below its
 * "trivial_gap_bound" gets one (its guarantee says nothing at these n, eps
 * and constants).  false when out of memory. */
bool run_plan_warnings(const struct run_plan *plan, json_t *arr);

#endif /* SERVICE_RUN_REQUEST_H */
