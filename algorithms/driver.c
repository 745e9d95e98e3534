/*
 * driver.c - alg_run(), the only loop over step(), and the small helpers
 * every method's plan() shares.
 *
 * The driver runs exactly plan->steps steps: the count was fixed from
 * public parameters before the run, so neither its length nor its progress
 * reports depend on the data.  It fails closed when the generator fails
 * (zeros are not noise) and stops between steps when the caller's progress
 * callback asks it to.  The released output is copied out only when every
 * step succeeded.
 */
#include <stdlib.h>

#include "alg.h"

enum err_code
alg_run(const struct alg_ops *alg, const struct run_spec *spec, const struct run_plan *plan,
	const struct dataset *ds, struct rng *rng, alg_progress_fn progress, void *progress_ctx,
	double *ret_x, struct err *e)
{
	void *state;
	unsigned long done = 0;
	const struct objective_ops *ops = spec->objective.ops;
	enum err_code rc;

	if (ops == NULL || !alg_supports_objective(alg, ops->name))
		return err_set_field(e, ERR_INVALID, "objective",
				     "%s does not support objective '%s'", alg->name,
				     ops != NULL ? ops->name : "(none)");
	if (ds->n != spec->n || ds->d != spec->schema.d || spec->dim != spec->objective.dim)
		return err_set(e, ERR_INTERNAL, "the dataset does not match the run spec");
	rc = objective_check_dataset(&spec->objective, ds, e);
	if (rc != ERR_OK)
		return rc;

	/* calloc(1, 0) may return NULL: ask for at least one byte. */
	state = calloc(1, alg->state_size > 0 ? alg->state_size : 1);
	if (state == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate state for %s", alg->name);

	rc = alg->init(state, spec, plan, ds, rng, e);
	/* init() may draw (a secret permutation): a failed source is caught
	 * here even when the plan has no steps. */
	if (rc == ERR_OK && !rng_ok(rng))
		rc = err_set(e, ERR_INTERNAL, "random generator failed");
	while (rc == ERR_OK && done < plan->steps) {
		rc = alg->step(state, e);
		if (rc != ERR_OK)
			break;
		done++;
		if (!rng_ok(rng)) {
			rc = err_set(e, ERR_INTERNAL, "random generator failed");
			break;
		}
		if (progress != NULL && !progress(progress_ctx, done, plan->steps))
			rc = err_set(e, ERR_CANCELLED, "cancelled after %lu of %lu steps", done,
				     plan->steps);
	}
	if (rc == ERR_OK)
		alg->result(state, ret_x);

	alg->fini(state); /* also after a failed init() */
	free(state);
	return rc;
}

enum err_code
run_spec_set_objective(struct run_spec *spec, const struct objective_ops *ops,
		       const struct objective_params *p, struct err *e)
{
	struct objective_params def;
	enum err_code rc;

	if (p == NULL) {
		objective_params_default(&def);
		p = &def;
	}
	rc = objective_init(&spec->objective, ops, p, &spec->schema, e);
	if (rc == ERR_OK)
		spec->dim = spec->objective.dim;
	return rc;
}

void
alg_default_params(const struct alg_ops *alg, double *v)
{
	size_t n = alg_param_count(alg);

	for (size_t i = 0; i < n; i++)
		v[i] = alg->params[i].def;
}

void
run_plan_use(struct run_plan *p, const char *name, double value)
{
	for (size_t i = 0; i < ALG_MAX_USED; i++) {
		if (p->used[i].name == NULL) {
			p->used[i].name = name;
			p->used[i].value = value;
			p->n_used = i + 1;
			return;
		}
	}
}
