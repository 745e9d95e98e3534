/*
 * objective.c - the registry of per-record losses and their gradient
 * bounds.
 *
 * Each loss is phi(z, y) at the margin z = <w, x>, so the per-record
 * gradient is phi'(z, y) x and its norm is |phi'(z, y)| ||x||_2.  The bound
 * G on that norm comes from the declared bounds (data.h) and the feasible
 * set only, never from rows:
 *
 *	logistic       phi = log(1 + exp(-y z)), y in {-1, +1};
 *	               |phi'| = sigmoid(-y z) < 1, so G = X;
 *	least_squares  phi = (z - y)^2 / 2;
 *	               |phi'| = |z - y| <= X R + Y, so G = X (X R + Y);
 *
 * with X the row l2 bound (bounds_row_l2), R the largest l2 norm in the
 * feasible set (constraint_l2_radius) and Y the label bound (bounds.label
 * for regression, 1 for binary labels).
 */
#include <math.h>
#include <string.h>

#include "objective.h"
#include "util.h"

/* log(1 + exp(t)) without overflow for large t or cancellation for small. */
static double
log1pexp(double t)
{
	if (t > 0.0)
		return t + log1p(exp(-t));
	return log1p(exp(t));
}

/* 1 / (1 + exp(-t)), without overflow on either side. */
static double
sigmoid(double t)
{
	double u;

	if (t >= 0.0)
		return 1.0 / (1.0 + exp(-t));
	u = exp(t);
	return u / (1.0 + u);
}

static double
logistic_value(double z, double y)
{
	return log1pexp(-y * z);
}

static double
logistic_deriv(double z, double y)
{
	return -y * sigmoid(-y * z);
}

static enum err_code
logistic_grad_bound(const struct bounds *b, enum task task, size_t d, const struct constraint *c,
		    double *ret_g, struct err *e)
{
	/* |phi'| < 1 for labels +-1 whatever w is: the set does not matter. */
	return bounds_row_l2(b, d, ret_g, e);
}

static double
least_squares_value(double z, double y)
{
	double r = z - y;

	return 0.5 * r * r;
}

static double
least_squares_deriv(double z, double y)
{
	return z - y;
}

static enum err_code
least_squares_grad_bound(const struct bounds *b, enum task task, size_t d,
			 const struct constraint *c, double *ret_g, struct err *e)
{
	double x, r, y, g;
	enum err_code rc;

	rc = bounds_row_l2(b, d, &x, e);
	if (rc != ERR_OK)
		return rc;
	r = constraint_l2_radius(c, d);
	if (!isfinite(r) || r < 0.0)
		return err_set_field(
			e, ERR_INVALID, "constraints.x",
			"least_squares needs a bounded feasible set in 'constraints.x'");
	if (task == TASK_BINARY) {
		y = 1.0;
	} else {
		y = b->label;
		if (isnan(y))
			return err_set_field(e, ERR_INVALID, "bounds.label",
					     "least_squares on real labels needs 'bounds.label'");
		if (!isfinite(y) || y < 0.0)
			return err_set_field(e, ERR_INVALID, "bounds.label",
					     "'bounds.label' must be a finite non-negative number");
	}
	g = x * (x * r + y);
	if (!isfinite(g))
		return err_set(e, ERR_NUMERIC, "the least_squares gradient bound is not finite");
	*ret_g = g;
	return ERR_OK;
}

static const struct objective_ops logistic = {
	.name = "logistic",
	.doc = "logistic loss log(1 + exp(-y <w, x>)) for labels in {-1, +1}",
	.tasks = 1u << TASK_BINARY,
	.value = logistic_value,
	.deriv = logistic_deriv,
	.grad_bound = logistic_grad_bound,
};

static const struct objective_ops least_squares = {
	.name = "least_squares",
	.doc = "squared error (<w, x> - y)^2 / 2",
	.tasks = (1u << TASK_BINARY) | (1u << TASK_REGRESSION),
	.value = least_squares_value,
	.deriv = least_squares_deriv,
	.grad_bound = least_squares_grad_bound,
};

static const struct objective_ops *const objectives[] = {
	&logistic,
	&least_squares,
};

size_t
objective_count(void)
{
	return ARRAY_SIZE(objectives);
}

const struct objective_ops *
objective_at(size_t i)
{
	return i < ARRAY_SIZE(objectives) ? objectives[i] : NULL;
}

const struct objective_ops *
objective_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(objectives); i++)
		if (strcmp(objectives[i]->name, name) == 0)
			return objectives[i];
	return NULL;
}

double
objective_mean_loss(const struct objective_ops *o, const struct dataset *ds, const double *w)
{
	double sum = 0.0;

	if (ds->n == 0)
		return NAN;
	for (size_t i = 0; i < ds->n; i++) {
		const double *row = ds->x + i * ds->d;
		double z = 0.0;

		for (size_t j = 0; j < ds->d; j++)
			z += w[j] * row[j];
		sum += o->value(z, ds->y[i]);
	}
	return sum / (double)ds->n;
}
