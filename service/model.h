/*
 * model.h - a run's model as one JSON document (GET /v1/runs/{id}/model,
 * `dpoptd solve --model`), and scoring rows with it (POST
 * /v1/runs/{id}/predict, `dpoptd solve --predict`) through the one pure
 * function algorithms/predict.h.
 *
 * The document (everything in it is already public: the schema, the
 * declared feature names, the released coefficients and the run's
 * privacy event):
 *
 *   {"run_id": str | null, "algorithm": str, "objective": {...normalised},
 *    "schema": {...}, "bounds": {...}, "feature_names": [d] (when declared),
 *    "coefficients": [d] (one margin) | [[d] x K] (multiclass, class-major),
 *    "intercept": null | number | [K],
 *    "privacy": {"event", "charged", ...}}
 *
 * Rows to score have the dataset's column layout minus the label: d
 * features, then its categorical and group cells (read, not used), as CSV
 * (an optional header) or JSON {"rows": [[...], ...]} (numbers).  They are
 * clipped to the declared bounds as uploads are (rows.h), so a row means
 * what it meant in training.  Each prediction is {"margin", "probability"
 * (logistic), "class" (the declared label; binary)} or, multiclass,
 * {"margins": [K], "probabilities": [K], "class": k}; for regression
 * {"margin", "prediction"} with prediction = margin.  A bad cell's error
 * names its line (CSV) or row and column; the message goes back to the
 * client that sent it and, being a 4xx, is never logged (log.c).
 */
#ifndef SERVICE_MODEL_H
#define SERVICE_MODEL_H

#include <stddef.h>

#include <jansson.h>

#include "data.h"
#include "err.h"
#include "predict.h"
#include "schema.h"

/* Rows per request (POST .../predict; its bytes are DPOPT_MAX_BODY_BYTES). */
#define MODEL_MAX_ROWS 10000

/* The document for a run: run is its view (runs.c's JSON: id, algorithm,
 * state, request, privacy, result), spec its dataset's stored
 * {"schema", "bounds"} (both borrowed).  *ret is a new reference.
 * ERR_CONFLICT when the run has not succeeded; ERR_INVALID naming
 * "objective.name" when its objective is not a predictor (saddle ones). */
enum err_code model_document(const json_t *run, const json_t *spec, json_t **ret, struct err *e);

/* A loaded model (owned: model_clear()). */
struct model {
	struct data_schema s;
	struct schema_extra x;
	double *w; /* owned: the objective's layout (objective.h) */
	struct predict_model p;
	size_t ncols; /* cells per row to score */
};

/* Load a document (borrowed); fields are named "model.<key>". */
enum err_code model_load(const json_t *doc, struct model *ret, struct err *e);
void model_clear(struct model *m); /* accepts a zeroed struct */

/* Rows to score from CSV text / a {"rows": ...} document: *ret_rows (owned,
 * n x d features, clipped), *ret_n.  More than max_rows rows is
 * ERR_INVALID naming "rows"; a bad cell names "rows" (its line and column
 * in the message) or "rows[i]". */
enum err_code model_rows_csv(const struct model *m, const char *text, size_t len, size_t max_rows,
			     double **ret_rows, size_t *ret_n, struct err *e);
enum err_code model_rows_json(const struct model *m, const json_t *doc, size_t max_rows,
			      double **ret_rows, size_t *ret_n, struct err *e);

/* {"predictions": [...]} for n rows (new reference; NULL when out of memory). */
json_t *model_predict_json(const struct model *m, const double *rows, size_t n);

#endif /* SERVICE_MODEL_H */
