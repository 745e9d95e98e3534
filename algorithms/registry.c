/*
 * registry.c - the list of every algorithm the service can run.
 *
 * A const array fixed at compile time: no registration calls, no locking,
 * nothing to initialise.  Adding a method means adding one line here; the
 * conformance tests iterate over this table, so it is tested the same day.
 */
#include <string.h>

#include "alg.h"
#include "util.h"

extern const struct alg_ops alg_sgd_one_pass;
extern const struct alg_ops alg_sgd_subsampled;
extern const struct alg_ops alg_saddle_sgda_one_pass;
extern const struct alg_ops alg_saddle_nseg;
extern const struct alg_ops alg_saddle_nispp;
extern const struct alg_ops alg_saddle_recursive_regularization;
extern const struct alg_ops alg_saddle_smd_maurey;
extern const struct alg_ops alg_saddle_smd_bias_reduced;
extern const struct alg_ops alg_select_random_stopping;
extern const struct alg_ops alg_md_noisy;
extern const struct alg_ops alg_md_localized;
extern const struct alg_ops alg_md_maurey_sco;
extern const struct alg_ops alg_frank_wolfe_private;
extern const struct alg_ops alg_frank_wolfe_private_vr;
extern const struct alg_ops alg_synthetic_smd_queries;
extern const struct alg_ops alg_zo_o2nc_tree;
extern const struct alg_ops alg_zo_naive;

static const struct alg_ops *const registry[] = {
	&alg_sgd_one_pass,                    /* sgd/one_pass.c */
	&alg_sgd_subsampled,                  /* sgd/subsampled.c */
	&alg_saddle_sgda_one_pass,            /* saddle/sgda_one_pass.c */
	&alg_saddle_nseg,                     /* saddle/nseg.c */
	&alg_saddle_nispp,                    /* saddle/nispp.c */
	&alg_saddle_recursive_regularization, /* saddle/recursive_regularization.c */
	&alg_saddle_smd_maurey,               /* saddle/smd_maurey.c */
	&alg_saddle_smd_bias_reduced,         /* saddle/smd_bias_reduced.c */
	&alg_select_random_stopping,          /* select/random_stopping.c */
	&alg_md_noisy,                        /* mirror_descent/noisy.c */
	&alg_md_localized,                    /* mirror_descent/localized.c */
	&alg_md_maurey_sco,                   /* mirror_descent/maurey_sco.c */
	&alg_frank_wolfe_private,             /* frank_wolfe/private.c */
	&alg_frank_wolfe_private_vr,          /* frank_wolfe/private_vr.c */
	&alg_synthetic_smd_queries,           /* synthetic/smd_queries.c */
	&alg_zo_o2nc_tree,                    /* zeroth_order/o2nc_tree.c */
	&alg_zo_naive,                        /* zeroth_order/naive.c */
};

size_t
alg_count(void)
{
	return ARRAY_SIZE(registry);
}

const struct alg_ops *
alg_at(size_t i)
{
	return i < ARRAY_SIZE(registry) ? registry[i] : NULL;
}

const struct alg_ops *
alg_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(registry); i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

size_t
alg_param_count(const struct alg_ops *alg)
{
	size_t n = 0;

	while (alg->params[n].name != NULL)
		n++;
	return n;
}

bool
alg_supports_objective(const struct alg_ops *alg, const char *objective)
{
	if (objective == NULL)
		return false;
	for (const char *const *o = alg->objectives; *o != NULL; o++)
		if (strcmp(*o, objective) == 0)
			return true;
	return false;
}
