/*
 * objective.h - per-record losses and the constants derived from public
 * bounds.
 *
 * The losses here are generalised linear: loss(w; x, y) = phi(<w, x>, y),
 * so a per-record gradient is phi'(<w, x>, y) * x.  That keeps the kernels
 * streaming over rows.  Later objectives (saddle-point payoffs, multiclass)
 * add their own tables; the registry in objective.c is the only list.
 */
#ifndef ALGORITHMS_OBJECTIVE_H
#define ALGORITHMS_OBJECTIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "constraint.h"
#include "data.h"
#include "err.h"

struct objective_ops {
	const char *name; /* API id, e.g. "logistic" */
	const char *doc;  /* one line for the catalogue */
	unsigned tasks;   /* bit (1u << TASK_*) for each task it accepts */
	/* phi(z, y) and d phi / d z at margin z = <w, x>. */
	double (*value)(double z, double y);
	double (*deriv)(double z, double y);
	/* Upper bound G on ||grad loss(w; x, y)||_2 over every w in the set c
	 * and every (x, y) allowed by the bounds and the task (binary labels
	 * are +-1 whatever bounds.label says).  Names the missing bound
	 * ("bounds.label", ...) with ERR_INVALID when it needs one that was not
	 * declared, and the constraint ("constraints.x") when the set is
	 * unbounded for it. */
	enum err_code (*grad_bound)(const struct bounds *b, enum task task, size_t d,
				    const struct constraint *c, double *ret_g, struct err *e);
};

/* Registry of objectives. */
size_t objective_count(void);
const struct objective_ops *objective_at(size_t i);
const struct objective_ops *objective_find(const char *name);

/* Mean loss of w over the dataset (public evaluation and tests only: a loss
 * on private data is a release and is never returned by the service). */
double objective_mean_loss(const struct objective_ops *o, const struct dataset *ds,
			   const double *w);

#endif /* ALGORITHMS_OBJECTIVE_H */
