/*
 * evaluate.c - the evaluation block of a result (evaluate.h).
 */
#include <math.h>

#include "evaluate.h"

json_t *
evaluate_json(const struct objective *o, const struct dataset *ds, const double *w,
	      const char *dataset_id)
{
	json_t *r = json_object();
	double loss = objective_mean_loss(o, ds, w);
	double acc = objective_accuracy(o, ds, w);

	if (r == NULL)
		return NULL;
	if ((dataset_id != NULL && json_object_set_new(r, "dataset_id", json_string(dataset_id))) ||
	    json_object_set_new(r, "n_rows", json_integer((json_int_t)ds->n)) ||
	    json_object_set_new(r, "loss", isfinite(loss) ? json_real(loss) : json_null()) ||
	    (!isnan(acc) && json_object_set_new(r, "accuracy", json_real(acc)))) {
		json_decref(r);
		return NULL;
	}
	return r;
}
