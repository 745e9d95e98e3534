/*
 * evaluate.h - metrics of a released result on a public dataset (a run's
 * eval_dataset_id, or the offline solver's --eval file).
 *
 * Only public data is ever evaluated: a loss or an accuracy computed on
 * private rows would be a release nobody paid for (docs/privacy-model.md
 * §1).  The caller guarantees ds is public.
 */
#ifndef SERVICE_EVALUATE_H
#define SERVICE_EVALUATE_H

#include <jansson.h>

#include "data.h"
#include "objective.h"

/* {"dataset_id": id (omitted when NULL), "n_rows", "loss": F(w) = mean
 * weighted loss plus the regularizer, "accuracy" (binary and multiclass
 * only)}.  New reference; NULL when out of memory. */
json_t *evaluate_json(const struct objective *o, const struct dataset *ds, const double *w,
		      const char *dataset_id);

#endif /* SERVICE_EVALUATE_H */
