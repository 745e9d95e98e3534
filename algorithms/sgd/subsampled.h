/*
 * sgd/subsampled.h - what dp_sgd.subsampled offers besides its alg_ops:
 * the default feasible set of a request that gives none.
 */
#ifndef ALGORITHMS_SGD_SUBSAMPLED_H
#define ALGORITHMS_SGD_SUBSAMPLED_H

#include "constraint.h"
#include "data.h"
#include "err.h"
#include "objective.h"

/*
 * The l2 ball dp_sgd.subsampled runs over when the request gives no
 * constraints.x, from public inputs only (algorithms/sgd/README.md):
 * radius R = max(10, 2 Y) / X, X the declared bound on ||x~||_2 (the row
 * with the intercept's 1), Y the declared label bound (regression; 0
 * otherwise): margins |<w, x~>| up to 10 (a logistic probability of
 * 1 - 4.5e-5) or twice the largest label, and no larger, since G and the
 * noise grow with R for the losses whose gradient does.  o is read for
 * its intercept only.
 * ERR_INVALID naming "constraints.x" when the bounds give no finite
 * positive radius.
 */
enum err_code subsampled_default_set(const struct objective *o, const struct data_schema *s,
				     struct constraint *ret, struct err *e);

/*
 * The plan dp_sgd.subsampled makes for spec at the noise multiplier z,
 * without calibrating: what its init() derives again from a plan's own z
 * (so init() accepts it).  For methods that run it as a part of theirs
 * (select.random_stopping) and account for it themselves: the plan's
 * charge is spec's target, not a statement about z.
 */
struct run_plan;
struct run_spec;
enum err_code subsampled_plan_at(const struct run_spec *spec, double z, struct run_plan *ret_plan,
				 struct err *e);

#endif /* ALGORITHMS_SGD_SUBSAMPLED_H */
