/*
 * synthetic_csv.h - the synthetic rows of a synthetic-data run
 * (alg_ops.synthetic) as CSV: GET /v1/runs/{id}/synthetic.csv.
 */
#ifndef SERVICE_SYNTHETIC_CSV_H
#define SERVICE_SYNTHETIC_CSV_H

#include <jansson.h>

#include "err.h"

/*
 * The CSV text of run (the JSON view of runs.c) on its dataset's stored
 * spec ({"schema": {"categorical": [{"name", "size" | "labels"}, ...]}}):
 * a header of the categorical attributes' names, then one line per
 * synthetic row, the cells the attributes' labels (their indices for an
 * attribute without labels), rows in increasing universe index.  Fields
 * with a comma, a quote, a line break or outer spaces are quoted (RFC 4180).
 * ERR_CONFLICT when the run has not succeeded, ERR_NOT_FOUND when its
 * result has no synthetic rows, ERR_INTERNAL for a stored result that does
 * not fit the schema.  *ret is malloc'd text.
 */
enum err_code synthetic_csv(const json_t *run, const json_t *spec, char **ret, struct err *e);

#endif /* SERVICE_SYNTHETIC_CSV_H */
