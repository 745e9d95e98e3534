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

#include "alg.h"
#include "data.h"
#include "err.h"
#include "objective.h"

/* {"dataset_id": id (omitted when NULL), "n_rows", "loss": F(w) = mean
 * weighted loss plus the regularizer, "accuracy" (binary and multiclass
 * only)}.  New reference; NULL when out of memory. */
json_t *evaluate_json(const struct objective *o, const struct dataset *ds, const double *w,
		      const char *dataset_id);

/*
 * The evaluation block of a run of spec whose released point is u
 * (spec->dim values) on ds, a public dataset of schema s (the run's
 * features; for a saddle run the same blocks and groups).  Minimisation:
 * evaluate_json().  Saddle (spec->has_y): {"dataset_id" (omitted when
 * NULL), "n_rows", "strong_gap": {"lower", "upper"}, "weak_gap": {"lower",
 * "upper"}}, the certified brackets of saddle_gap_eval() (equal for one
 * point), its inner problems capped at EVALUATE_GAP_WORK record-coordinate
 * operations each (fewer iterations only widen a bracket, never falsify
 * it).  Operator (VI) objectives (vi.h): the same shape with the VI
 * gaps of vi_gap_eval(), closed forms (lower = upper).  New reference;
 * NULL with *e set on failure.
 */
#define EVALUATE_GAP_WORK 5e7

/*
 * The evaluation block of a synthetic-data run (alg_ops.synthetic) of spec
 * whose released histogram over the universe is hist (spec->dim counts) on
 * ds, a public dataset with the run's categorical attributes:
 * {"dataset_id" (omitted when NULL), "n_rows", "k", "queries",
 * "max_query_error": max over the run's queries q of |q(ds) - q(synthetic
 * rows)|}.  New reference; NULL with *e set on failure.
 */
json_t *evaluate_synthetic_json(const struct run_spec *spec, const struct dataset *ds,
				const double *hist, const char *dataset_id, struct err *e);
json_t *evaluate_run_json(const struct run_spec *spec, const struct data_schema *s,
			  const struct dataset *ds, const double *u, const char *dataset_id,
			  struct err *e);

#endif /* SERVICE_EVALUATE_H */
