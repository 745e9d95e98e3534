/*
 * driver.c - alg_run(), the only loop over step(); alg_plan() and the
 * generic checks of a spec (alg_check_spec), which no method repeats; and
 * the small helpers every method's plan() shares.
 *
 * The driver runs exactly plan->steps steps: the count was fixed from
 * public parameters before the run, so neither its length nor its progress
 * reports depend on the data.  It fails closed when the generator fails
 * (zeros are not noise) and stops between steps when the caller's progress
 * callback asks it to.  The released output is copied out only when every
 * step succeeded.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

/* One block's feasible set: a kind in supported (alg->constraints for x,
 * alg->constraints_y for y), a known geometry, valid for dim coordinates.
 * field is the block's path, "constraints.x". */
static enum err_code
check_block(const struct alg_ops *alg, unsigned supported, const struct constraint *c,
	    enum geometry g, size_t dim, const char *field, struct err *e)
{
	if ((unsigned)c->kind >= CONSTRAINT__COUNT || !(supported & (1u << c->kind))) {
		err_set_field(e, ERR_INVALID, "kind", "%s does not support '%s.kind' = '%s'",
			      alg->name, field,
			      (unsigned)c->kind < CONSTRAINT__COUNT ? constraint_kind_name(c->kind)
								    : "(none)");
		err_prefix_field(e, field);
		return ERR_INVALID;
	}
	if ((unsigned)g >= GEOMETRY__COUNT)
		return err_set_field(e, ERR_INVALID, field, "'%s' has an unknown geometry", field);
	return constraint_validate(c, dim, field, e);
}

enum err_code
run_spec_blocks(const struct alg_ops *alg, const struct run_spec *spec, struct saddle_block *ret_x,
		struct saddle_block *ret_y, struct err *e)
{
	const struct objective *o = &spec->objective;
	bool saddle_obj = o->ops != NULL && o->ops->kind == OBJECTIVE_SADDLE;
	enum err_code rc;

	/* An operator objective (vi.h): one set u over the whole variable, a
	 * method that declares VI support, no "constraints.y". */
	if (o->ops != NULL && o->ops->kind == OBJECTIVE_OPERATOR) {
		if (!alg->vi)
			return err_set_field(e, ERR_INVALID, "objective",
					     "%s does not solve operator (VI) objectives",
					     alg->name);
		if (spec->has_y)
			return err_set_field(e, ERR_INVALID, "constraints.y",
					     "an operator objective has one set: 'constraints.y' "
					     "is not used");
		rc = check_block(alg, alg->constraints, &spec->x, spec->geometry_x, spec->dim,
				 "constraints.x", e);
		if (rc != ERR_OK)
			return rc;
		ret_x->set = spec->x;
		ret_x->geometry = spec->geometry_x;
		return ERR_OK;
	}
	if (!alg->saddle) {
		if (spec->has_y)
			return err_set_field(e, ERR_INVALID, "constraints.y",
					     "'constraints.y' is for saddle methods; %s minimises",
					     alg->name);
		if (saddle_obj)
			return err_set_field(e, ERR_INVALID, "objective",
					     "%s does not solve saddle objectives", alg->name);
		rc = check_block(alg, alg->constraints, &spec->x, spec->geometry_x, spec->dim,
				 "constraints.x", e);
		if (rc != ERR_OK)
			return rc;
		ret_x->set = spec->x;
		ret_x->geometry = spec->geometry_x;
		return ERR_OK;
	}
	if (!saddle_obj)
		return err_set_field(e, ERR_INVALID, "objective",
				     "%s needs a saddle objective ('objective')", alg->name);
	if (!spec->has_y)
		return err_set_field(e, ERR_INVALID, "constraints.y",
				     "%s needs the dual set 'constraints.y'", alg->name);
	if (o->dim_x == 0 || o->dim_y == 0 || o->dim_x + o->dim_y != o->dim || spec->dim != o->dim)
		return err_set(e, ERR_INVALID, "the objective's blocks do not fit the run");
	rc = check_block(alg, alg->constraints, &spec->x, spec->geometry_x, o->dim_x,
			 "constraints.x", e);
	if (rc == ERR_OK)
		rc = check_block(alg, alg->constraints_y, &spec->y, spec->geometry_y, o->dim_y,
				 "constraints.y", e);
	if (rc != ERR_OK)
		return rc;
	ret_x->set = spec->x;
	ret_x->geometry = spec->geometry_x;
	ret_y->set = spec->y;
	ret_y->geometry = spec->geometry_y;
	return ERR_OK;
}

/* params[k] against the schema's entry k; the error names
 * "params.<name>". */
static enum err_code
check_param(const struct alg_param *p, double v, struct err *e)
{
	bool ok = isfinite(v) && v >= p->min && v <= p->max;

	if (p->type == ALG_PARAM_INT)
		ok = ok && floor(v) == v;
	else if (p->type == ALG_PARAM_BOOL)
		ok = ok && (v == 0.0 || v == 1.0);
	if (ok)
		return ERR_OK;
	if (p->type == ALG_PARAM_BOOL)
		err_set_field(e, ERR_INVALID, p->name, "'params.%s' must be a boolean", p->name);
	else
		err_set_field(e, ERR_INVALID, p->name, "'params.%s' must be %s in [%g, %g]",
			      p->name, p->type == ALG_PARAM_INT ? "an integer" : "a number", p->min,
			      p->max);
	err_prefix_field(e, "params");
	return ERR_INVALID;
}

/* The generic checks of a synthetic-data method (alg_ops.synthetic): no
 * objective, no sets, the privacy target, rows and a universe, the
 * parameters. */
static enum err_code
check_synthetic(const struct alg_ops *alg, const struct run_spec *spec, struct err *e)
{
	enum err_code rc;

	if (spec->objective.ops != NULL)
		return err_set_field(e, ERR_INVALID, "objective",
				     "%s takes no objective: it releases synthetic rows of the "
				     "dataset's categorical attributes",
				     alg->name);
	if (spec->has_y)
		return err_set_field(e, ERR_INVALID, "constraints.y", "%s takes no constraints",
				     alg->name);
	if (!(isfinite(spec->epsilon) && spec->epsilon > 0.0))
		return err_set_field(e, ERR_INVALID, "privacy.epsilon",
				     "'privacy.epsilon' must be finite and positive");
	if (!(spec->delta > 0.0 && spec->delta < 1.0))
		return err_set_field(e, ERR_INVALID, "privacy.delta",
				     "'privacy.delta' must be in (0, 1)");
	if (spec->n == 0)
		return err_set(e, ERR_INVALID, "the dataset has no rows");
	if (spec->schema.n_categorical == 0 || spec->dim == 0)
		return err_set_field(e, ERR_INVALID, "schema.categorical",
				     "%s needs a dataset with categorical attributes", alg->name);
	for (size_t k = 0; alg->params[k].name != NULL; k++) {
		rc = check_param(&alg->params[k], spec->params[k], e);
		if (rc != ERR_OK)
			return rc;
	}
	return ERR_OK;
}

enum err_code
alg_check_spec(const struct alg_ops *alg, const struct run_spec *spec, struct err *e)
{
	const struct objective *obj = &spec->objective;
	struct saddle_block bx, by;
	enum err_code rc;

	if (alg->synthetic)
		return check_synthetic(alg, spec, e);
	if (obj->ops == NULL || !alg_supports_objective(alg, obj->ops->name))
		return err_set_field(e, ERR_INVALID, "objective",
				     "%s does not support objective '%s'", alg->name,
				     obj->ops != NULL ? obj->ops->name : "(none)");
	if ((unsigned)spec->schema.task >= TASK__COUNT || obj->task != spec->schema.task ||
	    !(obj->ops->tasks & (1u << spec->schema.task)))
		return err_set_field(e, ERR_INVALID, "objective",
				     "objective '%s' does not accept this dataset's labels",
				     obj->ops->name);
	/* The blocks: x alone for a minimisation method (which refuses
	 * "constraints.y"), x and y for a saddle one. */
	rc = run_spec_blocks(alg, spec, &bx, &by, e);
	if (rc != ERR_OK)
		return rc;
	if (!(isfinite(spec->epsilon) && spec->epsilon > 0.0))
		return err_set_field(e, ERR_INVALID, "privacy.epsilon",
				     "'privacy.epsilon' must be finite and positive");
	if (!(spec->delta > 0.0 && spec->delta < 1.0))
		return err_set_field(e, ERR_INVALID, "privacy.delta",
				     "'privacy.delta' must be in (0, 1)");
	if (spec->n == 0 || spec->schema.d == 0 || obj->d != spec->schema.d ||
	    spec->dim != obj->dim || spec->dim == 0)
		return err_set(e, ERR_INVALID, "the dataset has no rows or no features");
	for (size_t k = 0; alg->params[k].name != NULL; k++) {
		rc = check_param(&alg->params[k], spec->params[k], e);
		if (rc != ERR_OK)
			return rc;
	}
	return ERR_OK;
}

unsigned
alg_spec_modes(const struct alg_ops *alg, const struct run_spec *spec,
	       const struct alg_mode_rule **ret_rule)
{
	const unsigned all = (1u << ACCOUNTING__COUNT) - 1u;

	if (ret_rule != NULL)
		*ret_rule = NULL;
	for (const struct alg_mode_rule *r = alg->mode_rules; r != NULL && r->param != NULL; r++) {
		const struct alg_param *p = alg_param_find(alg, r->param);

		if (p == NULL || spec->params[p - alg->params] != r->value)
			continue;
		if (ret_rule != NULL)
			*ret_rule = r;
		return r->modes & all;
	}
	return alg->modes != 0 ? alg->modes & all : all;
}

const char *
alg_param_choice_name(const struct alg_param *p, double v)
{
	double k = v - p->min;

	if (p->choices == NULL || !(k >= 0.0))
		return NULL;
	for (size_t i = 0; p->choices[i] != NULL; i++)
		if ((double)i == k)
			return p->choices[i];
	return NULL;
}

bool
alg_param_choice_value(const struct alg_param *p, const char *name, double *ret)
{
	for (size_t i = 0; p->choices != NULL && p->choices[i] != NULL; i++)
		if (strcmp(p->choices[i], name) == 0) {
			*ret = p->min + (double)i;
			return true;
		}
	return false;
}

const struct alg_param *
alg_param_find(const struct alg_ops *alg, const char *name)
{
	for (const struct alg_param *p = alg->params; p->name != NULL; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

/* ERR_MODE when spec's dataset mode cannot charge this run (alg_mode_rule),
 * naming the parameter that decided and the rule's hint. */
static enum err_code
check_mode(const struct alg_ops *alg, const struct run_spec *spec, struct err *e)
{
	const struct alg_param *p;
	const struct alg_mode_rule *rule;
	const char *mode = spec->mode == ACCOUNTING_RENYI ? "renyi" : "basic", *name;
	char field[64] = "params.";
	size_t at = strlen(field);

	if (alg_spec_modes(alg, spec, &rule) & (1u << spec->mode))
		return ERR_OK;
	if (rule == NULL)
		return err_set_field(e, ERR_MODE, "algorithm",
				     "%s cannot be charged on a '%s' dataset", alg->name, mode);
	for (const char *c = rule->param; *c != '\0' && at + 1 < sizeof(field); c++)
		field[at++] = *c;
	field[at] = '\0';
	p = alg_param_find(alg, rule->param);
	name = p != NULL ? alg_param_choice_name(p, rule->value) : NULL;
	if (name != NULL)
		err_set_field(e, ERR_MODE, field,
			      "'%s' = '%s' cannot be charged on a '%s' dataset; %s", field, name,
			      mode, rule->hint != NULL ? rule->hint : "");
	else
		err_set_field(e, ERR_MODE, field,
			      "'%s' = %g cannot be charged on a '%s' dataset; %s", field,
			      rule->value, mode, rule->hint != NULL ? rule->hint : "");
	return ERR_MODE;
}

enum err_code
alg_plan(const struct alg_ops *alg, const struct run_spec *spec, struct run_plan *ret_plan,
	 struct err *e)
{
	struct run_plan p;
	enum err_code rc = alg_check_spec(alg, spec, e);

	if (rc != ERR_OK)
		return rc;
	if ((rc = check_mode(alg, spec, e)) != ERR_OK)
		return rc;
	if ((rc = alg->plan(spec, &p, e)) != ERR_OK)
		return rc;
	/* The label says which accountant bounded the charge (run_plan_json):
	 * a method that does not say is a bug, refused before any charge. */
	if (accountant_source(p.accountant) == NULL ||
	    (spec->mode == ACCOUNTING_RENYI && strcmp(p.accountant, "rdp") != 0))
		return err_set(e, ERR_INTERNAL, "%s: the plan names no accountant of its mode",
			       alg->name);
	*ret_plan = p;
	return ERR_OK;
}

#ifdef DPOPT_TESTING
void
alg_testing_fail_certificates(struct run_spec *spec)
{
	static const struct alg_testing_hook fault = { .fail_certificates = true };

	spec->testing_hook = &fault;
}
#endif

enum err_code
alg_run(const struct alg_ops *alg, const struct run_spec *spec, const struct run_plan *plan,
	const struct dataset *ds, struct rng *rng, alg_progress_fn progress, void *progress_ctx,
	double *ret_x, struct err *e)
{
	return alg_run_report(alg, spec, plan, ds, rng, progress, progress_ctx, ret_x, NULL, e);
}

enum err_code
alg_run_report(const struct alg_ops *alg, const struct run_spec *spec, const struct run_plan *plan,
	       const struct dataset *ds, struct rng *rng, alg_progress_fn progress,
	       void *progress_ctx, double *ret_x, struct run_plan *ret_after, struct err *e)
{
	void *state;
	unsigned long done = 0;
	enum err_code rc;

	rc = alg_check_spec(alg, spec, e);
	if (rc != ERR_OK)
		return rc;
	if (alg->synthetic) {
		if (ds->n != spec->n || ds->cat == NULL ||
		    ds->n_categorical != spec->schema.n_categorical)
			return err_set(e, ERR_INTERNAL, "the dataset does not match the run spec");
	} else {
		if (ds->n != spec->n || ds->d != spec->schema.d || spec->dim != spec->objective.dim)
			return err_set(e, ERR_INTERNAL, "the dataset does not match the run spec");
		rc = objective_check_dataset(&spec->objective, ds, e);
		if (rc != ERR_OK)
			return rc;
	}

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
	if (rc == ERR_OK) {
		alg->result(state, ret_x);
		if (ret_after != NULL) {
			*ret_after = *plan;
			if (alg->report != NULL)
				alg->report(state, ret_after);
		}
	}

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

double
run_plan_value(const struct run_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n_used && i < ALG_MAX_USED; i++)
		if (p->used[i].name != NULL && strcmp(p->used[i].name, name) == 0)
			return p->used[i].value;
	return NAN;
}
