/*
 * objective.c - the registry of objectives, instances, per-record and
 * batch gradients, regularizers, and the constants of objective.h.
 *
 * The losses themselves live one family per file under objectives/
 * (glm.c: logistic, least_squares, hinge, huber; multiclass.c:
 * multiclass_logistic); each supplies its unweighted constants from a
 * struct objective_geometry.  This file adds what is common to all:
 *
 *	weights   a record's weight is omega_i = 1/(K pi_{y_i}) * 1/(G pi_{g_i})
 *	          (each factor 1 when its parameter is absent).  With a public
 *	          prior pi, E[omega loss] over a sample with class frequencies
 *	          pi is the class-balanced risk (1/K) sum_k E[loss | k].  Every
 *	          per-record constant (Lipschitz, smoothness, value bound) is
 *	          the unweighted one times max omega = 1/(K pi_min) *
 *	          1/(G pi_min): the weight is a positive scalar factor of the
 *	          record's loss, so it scales its gradient, Hessian and value.
 *	ridge     (mu/2) ||w'||^2 is mu-strongly convex in the penalised
 *	          coordinates; the intercept is not penalised, so F is only
 *	          mu-strongly convex overall without one (with an intercept
 *	          strong_convexity is 0).  Its gradient mu w' has norm <= mu R.
 *	l1        lambda ||w'||_1 has subgradients lambda sign(w') of l2 norm
 *	          <= lambda sqrt(d') with d' penalised coordinates.
 *	geometry  X = bounds_row_l2 (data.c), X_inf = feature_linf when declared
 *	          (else feature_l2, as |x_j| <= ||x||_2); with an intercept the
 *	          row is x~ = (x, 1): X~ = sqrt(X^2 + 1), X~_inf = max(X_inf, 1).
 *	          R = constraint_l2_radius, R_1 = constraint_l1_radius over dim
 *	          coordinates; the margin |<w, x~>| <= min(R X~, R_1 X~_inf)
 *	          (Cauchy-Schwarz; Hoelder).  Y = 1 for binary labels, the
 *	          declared label bound for real ones.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "objective.h"
#include "saddle.h"
#include "vi.h"
#include "util.h"

extern const struct objective_ops objective_logistic;
extern const struct objective_ops objective_least_squares;
extern const struct objective_ops objective_hinge;
extern const struct objective_ops objective_huber;
extern const struct objective_ops objective_multiclass_logistic;
extern const struct objective_ops objective_log_optimal_portfolio;
extern const struct objective_ops objective_bilinear;
extern const struct objective_ops objective_worst_group_logistic;
extern const struct objective_ops objective_matrix_game;
extern const struct objective_ops objective_quadratic_game;
extern const struct objective_ops objective_fair_logistic_lagrangian;
extern const struct objective_ops objective_auc_minimax;
extern const struct objective_ops objective_bilinear_vi;
extern const struct objective_ops objective_affine_vi;
extern const struct objective_ops objective_sphere_distance;
extern const struct objective_ops objective_capped_l1_regression;
extern const struct objective_ops objective_ramp_classification;
extern const struct objective_ops objective_robust_phase_retrieval;
extern const struct objective_ops objective_relu_neuron;
extern const struct objective_ops objective_relu_net;

/* Minimisation objectives first, then the saddle ones (saddle.h), then
 * the operator ones (vi.h). */
static const struct objective_ops *const objectives[] = {
	&objective_logistic,
	&objective_least_squares,
	&objective_hinge,
	&objective_huber,
	&objective_multiclass_logistic,
	&objective_log_optimal_portfolio,
	&objective_sphere_distance,
	&objective_capped_l1_regression,
	&objective_ramp_classification,
	&objective_robust_phase_retrieval,
	&objective_relu_neuron,
	&objective_relu_net,
	&objective_bilinear,
	&objective_worst_group_logistic,
	&objective_matrix_game,
	&objective_quadratic_game,
	&objective_fair_logistic_lagrangian,
	&objective_auc_minimax,
	&objective_bilinear_vi,
	&objective_affine_vi,
};

static const char *const kind_names[OBJECTIVE__KIND_COUNT] = {
	[OBJECTIVE_MINIMIZE] = "minimize",
	[OBJECTIVE_SADDLE] = "saddle",
	[OBJECTIVE_OPERATOR] = "operator",
};

static const char *const param_names[OBJ_P__COUNT] = {
	[OBJ_P_INTERCEPT] = "intercept",
	[OBJ_P_RIDGE] = "ridge",
	[OBJ_P_L1] = "l1",
	[OBJ_P_HUBER_DELTA] = "huber_delta",
	[OBJ_P_CLASS_PRIOR] = "class_prior",
	[OBJ_P_GROUP_PROPORTIONS] = "group_proportions",
	[OBJ_P_COUPLING] = "coupling",
	[OBJ_P_PARITY_TOLERANCE] = "parity_tolerance",
	[OBJ_P_MATRIX] = "matrix",
	[OBJ_P_WIDTH] = "width",
	[OBJ_P_INIT_SEED] = "init_seed",
};

/* Priors must sum to 1 within this. */
#define PRIOR_SUM_TOL 1e-9

const char *
objective_param_name(enum objective_param p)
{
	return (unsigned)p < OBJ_P__COUNT ? param_names[p] : NULL;
}

const char *
objective_kind_name(enum objective_kind k)
{
	return (unsigned)k < OBJECTIVE__KIND_COUNT ? kind_names[k] : NULL;
}

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

void
objective_params_default(struct objective_params *p)
{
	memset(p, 0, sizeof(*p));
	p->huber_delta = NAN;
	p->init_seed = OBJECTIVE_DEFAULT_INIT_SEED;
}

/* A public distribution over n outcomes: positive, summing to 1. */
static enum err_code
check_prior(const double *pi, size_t n, size_t want, const char *field, const char *what,
	    struct err *e)
{
	double sum = 0.0;

	if (n != want)
		return err_set_field(e, ERR_INVALID, field,
				     "'%s' must have %zu entries (%s), not %zu", field, want, what,
				     n);
	for (size_t k = 0; k < n; k++) {
		if (!isfinite(pi[k]) || pi[k] <= 0.0)
			return err_set_field(e, ERR_INVALID, field,
					     "'%s' entries must be positive numbers", field);
		sum += pi[k];
	}
	if (fabs(sum - 1.0) > PRIOR_SUM_TOL)
		return err_set_field(e, ERR_INVALID, field, "'%s' must sum to 1 (sums to %.17g)",
				     field, sum);
	return ERR_OK;
}

static bool
accepts(const struct objective_ops *ops, enum objective_param p)
{
	return (ops->params & (1u << p)) != 0;
}

static enum err_code
refuse_param(const struct objective_ops *ops, enum objective_param p, struct err *e)
{
	char field[64];

	strcpy(field, "objective.");
	strcat(field, param_names[p]);
	return err_set_field(e, ERR_INVALID, field, "objective '%s' does not take '%s'", ops->name,
			     field);
}

enum err_code
objective_init(struct objective *ret, const struct objective_ops *ops,
	       const struct objective_params *p, const struct data_schema *s, struct err *e)
{
	struct objective o;
	size_t cols;
	enum err_code rc;

	if (ops == NULL)
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "'objective.name' is not a known objective");
	if ((unsigned)s->task >= TASK__COUNT || !(ops->tasks & (1u << s->task)))
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective '%s' ('objective.name') does not fit the dataset's "
				     "task",
				     ops->name);
	if (s->d == 0)
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "'%s' needs numeric features: the dataset has none",
				     ops->name);
	if (ops->kind == OBJECTIVE_MINIMIZE && !ops->value_only &&
	    ((ops->multi == NULL) == (ops->phi == NULL || ops->dphi == NULL) || ops->value != NULL))
		return err_set(e, ERR_INTERNAL, "objective '%s' has no loss", ops->name);
	/* Function values only: phi or value, never a derivative. */
	if (ops->kind == OBJECTIVE_MINIMIZE && ops->value_only &&
	    (ops->dphi != NULL || ops->multi != NULL ||
	     (ops->phi != NULL) + (ops->value != NULL) + (ops->hidden != NULL) != 1))
		return err_set(e, ERR_INTERNAL, "objective '%s' has no loss", ops->name);
	if (ops->kind == OBJECTIVE_SADDLE &&
	    (ops->saddle == NULL || ops->saddle->init == NULL || ops->saddle->eval == NULL ||
	     ops->saddle->constants == NULL))
		return err_set(e, ERR_INTERNAL, "objective '%s' has no operator", ops->name);
	if (ops->kind == OBJECTIVE_OPERATOR &&
	    (ops->vi == NULL || ops->vi->init == NULL || ops->vi->eval == NULL ||
	     ops->vi->constants == NULL))
		return err_set(e, ERR_INTERNAL, "objective '%s' has no operator", ops->name);
	if (ops->kind != OBJECTIVE_MINIMIZE && ops->kind != OBJECTIVE_SADDLE &&
	    ops->kind != OBJECTIVE_OPERATOR)
		return err_set_field(
			e, ERR_INVALID, "objective.name",
			"objective '%s' ('objective.name') is of a kind no method runs", ops->name);
	if (ops->multi != NULL && (s->n_classes < 2 || s->n_classes > DATA_MAX_CLASSES))
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective '%s' ('objective.name') needs the number of "
				     "classes (2 .. %d) in the dataset's schema",
				     ops->name, DATA_MAX_CLASSES);

	if (p->intercept && !accepts(ops, OBJ_P_INTERCEPT))
		return refuse_param(ops, OBJ_P_INTERCEPT, e);
	if (p->ridge != 0.0 && !accepts(ops, OBJ_P_RIDGE))
		return refuse_param(ops, OBJ_P_RIDGE, e);
	if (!(isfinite(p->ridge) && p->ridge >= 0.0))
		return err_set_field(e, ERR_INVALID, "objective.ridge",
				     "'objective.ridge' must be a finite number >= 0");
	if (p->l1 != 0.0 && !accepts(ops, OBJ_P_L1))
		return refuse_param(ops, OBJ_P_L1, e);
	if (!(isfinite(p->l1) && p->l1 >= 0.0))
		return err_set_field(e, ERR_INVALID, "objective.l1",
				     "'objective.l1' must be a finite number >= 0");
	if (!isnan(p->huber_delta) && !accepts(ops, OBJ_P_HUBER_DELTA))
		return refuse_param(ops, OBJ_P_HUBER_DELTA, e);
	if (!isnan(p->huber_delta) && !(isfinite(p->huber_delta) && p->huber_delta > 0.0))
		return err_set_field(e, ERR_INVALID, "objective.huber_delta",
				     "'objective.huber_delta' must be a finite number > 0");
	if (p->coupling != 0.0 && !accepts(ops, OBJ_P_COUPLING))
		return refuse_param(ops, OBJ_P_COUPLING, e);
	if (!(isfinite(p->coupling) && p->coupling >= 0.0))
		return err_set_field(e, ERR_INVALID, "objective.coupling",
				     "'objective.coupling' must be a finite number >= 0");
	if (p->parity_tolerance != 0.0 && !accepts(ops, OBJ_P_PARITY_TOLERANCE))
		return refuse_param(ops, OBJ_P_PARITY_TOLERANCE, e);
	if (!(isfinite(p->parity_tolerance) && p->parity_tolerance >= 0.0))
		return err_set_field(e, ERR_INVALID, "objective.parity_tolerance",
				     "'objective.parity_tolerance' must be a finite number >= 0");
	if (p->matrix_dim != 0 && !accepts(ops, OBJ_P_MATRIX))
		return refuse_param(ops, OBJ_P_MATRIX, e);
	if (p->width != 0 && !accepts(ops, OBJ_P_WIDTH))
		return refuse_param(ops, OBJ_P_WIDTH, e);
	if (ops->hidden != NULL && (p->width < 1 || p->width > OBJECTIVE_MAX_WIDTH))
		return err_set_field(e, ERR_INVALID, "objective.width",
				     "'%s' needs 'objective.width', the hidden width: an integer "
				     "in 1 .. %d",
				     ops->name, OBJECTIVE_MAX_WIDTH);
	if (p->init_seed != OBJECTIVE_DEFAULT_INIT_SEED && !accepts(ops, OBJ_P_INIT_SEED))
		return refuse_param(ops, OBJ_P_INIT_SEED, e);
	if (p->matrix_dim > OBJECTIVE_MAX_MATRIX_DIM)
		return err_set_field(e, ERR_INVALID, "objective.matrix",
				     "'objective.matrix' may have at most %d rows",
				     OBJECTIVE_MAX_MATRIX_DIM);
	for (size_t j = 0; j < p->matrix_dim * p->matrix_dim; j++)
		if (!isfinite(p->matrix[j]))
			return err_set_field(e, ERR_INVALID, "objective.matrix",
					     "'objective.matrix' entries must be finite numbers");

	memset(&o, 0, sizeof(o));
	o.ops = ops;
	o.p = *p;
	o.task = s->task;
	o.d = s->d;
	o.n_classes = s->task == TASK_MULTICLASS ? s->n_classes : 0;
	o.n_groups = s->n_groups;
	o.n_out = ops->multi != NULL ? s->n_classes : ops->hidden != NULL ? p->width : 1;
	o.delta = isnan(p->huber_delta) ? 1.0 : p->huber_delta;
	cols = s->d + (p->intercept ? 1 : 0);
	if (cols > SIZE_MAX / sizeof(double) / o.n_out)
		return err_set(e, ERR_INVALID, "the model has too many coordinates");
	o.dim = cols * o.n_out;
	o.icpt_scale = 1.0;

	if (p->n_class_prior > 0) {
		size_t k;

		if (!accepts(ops, OBJ_P_CLASS_PRIOR))
			return refuse_param(ops, OBJ_P_CLASS_PRIOR, e);
		if (s->task == TASK_BINARY)
			rc = check_prior(p->class_prior, p->n_class_prior, 2,
					 "objective.class_prior", "for labels -1, +1", e);
		else if (s->task == TASK_MULTICLASS)
			rc = check_prior(p->class_prior, p->n_class_prior, s->n_classes,
					 "objective.class_prior", "one per class", e);
		else
			rc = err_set_field(e, ERR_INVALID, "objective.class_prior",
					   "'objective.class_prior' needs class labels");
		if (rc != ERR_OK)
			return rc;
		k = p->n_class_prior;
		o.class_weighted = true;
		for (size_t c = 0; c < k; c++)
			o.class_w[c] = 1.0 / ((double)k * p->class_prior[c]);
	}
	if (p->n_group_proportions > 0) {
		size_t g = s->n_groups;

		if (!accepts(ops, OBJ_P_GROUP_PROPORTIONS))
			return refuse_param(ops, OBJ_P_GROUP_PROPORTIONS, e);
		if (g < 2 || g > DATA_MAX_GROUPS)
			return err_set_field(e, ERR_INVALID, "objective.group_proportions",
					     "'objective.group_proportions' needs a dataset with a "
					     "group column");
		rc = check_prior(p->group_proportions, p->n_group_proportions, g,
				 "objective.group_proportions", "one per group", e);
		if (rc != ERR_OK)
			return rc;
		o.group_weighted = true;
		for (size_t c = 0; c < g; c++)
			o.group_w[c] = 1.0 / ((double)g * p->group_proportions[c]);
	}
	if (ops->kind == OBJECTIVE_SADDLE) {
		/* Blocks and dimensions (saddle.h); the weights above are the
		 * public inputs the objective reads. */
		rc = ops->saddle->init(&o, s, e);
		if (rc != ERR_OK)
			return rc;
	}
	if (ops->kind == OBJECTIVE_OPERATOR) {
		/* One block u of dim entries (vi.h); dim_x, dim_y are how the
		 * objective reads a record, not a product of sets. */
		rc = ops->vi->init(&o, s, e);
		if (rc != ERR_OK)
			return rc;
	}
	*ret = o;
	return ERR_OK;
}

enum err_code
objective_check_dataset(const struct objective *o, const struct dataset *ds, struct err *e)
{
	if (ds->d != o->d)
		return err_set(e, ERR_INTERNAL, "the dataset does not match the objective");
	if (ds->n > 0 && ds->y == NULL && o->task != TASK_UNLABELED)
		return err_set(e, ERR_INTERNAL, "the objective needs labels");
	if (ds->layout == DATA_CSR && (ds->row_ptr == NULL || ds->col == NULL || ds->val == NULL))
		return err_set(e, ERR_INTERNAL, "the CSR dataset is incomplete");
	if (ds->layout == DATA_DENSE && ds->n > 0 && ds->x == NULL)
		return err_set(e, ERR_INTERNAL, "the dense dataset is incomplete");
	if (o->group_weighted && (ds->group == NULL || ds->n_groups != o->n_groups))
		return err_set(e, ERR_INTERNAL, "the objective needs the group column");
	if (o->n_out > 1 && ds->n_classes != 0 && ds->n_classes != o->n_classes)
		return err_set(e, ERR_INTERNAL, "the dataset's classes do not match");
	return ERR_OK;
}

/* ---- constants ---- */

/* The row's l_inf bound: feature_linf if declared, capped by feature_l2. */
static double
row_linf(const struct bounds *b)
{
	double v = INFINITY;

	if (isfinite(b->feature_linf) && b->feature_linf > 0.0)
		v = b->feature_linf;
	if (isfinite(b->feature_l2) && b->feature_l2 > 0.0)
		v = fmin(v, b->feature_l2);
	return v;
}

static enum err_code
label_bound(const struct objective *o, const struct bounds *b, double *ret, struct err *e)
{
	double y = b->label;

	if (o->task == TASK_BINARY) {
		*ret = 1.0; /* labels are +-1 whatever bounds.label says */
		return ERR_OK;
	}
	if (o->task != TASK_REGRESSION) {
		*ret = 0.0;
		return ERR_OK;
	}
	if (isnan(y) && isfinite(b->label_lo) && isfinite(b->label_hi) && b->label_lo < b->label_hi)
		y = fmax(fabs(b->label_lo), fabs(b->label_hi));
	if (!isnan(y) && !(isfinite(y) && y >= 0.0))
		return err_set_field(e, ERR_INVALID, "bounds.label",
				     "'bounds.label' must be a finite non-negative number");
	*ret = y; /* NAN: undeclared; the loss decides whether it needs it */
	return ERR_OK;
}

/* The intercept's feature c (struct objective), 0 without an intercept. */
static inline double
icpt_c(const struct objective *o)
{
	if (!o->p.intercept)
		return 0.0;
	return o->icpt_scale > 0.0 ? o->icpt_scale : 1.0;
}

/* The unweighted bound on a record's gradient norm at w = 0 (struct
 * objective_constants): one-margin losses at the extreme labels (|phi'(0, y)|
 * is largest there for every loss in the registry: monotone in |y| for
 * least squares and huber, constant for the +-1 labels), multi-output
 * losses at class 0 (softmax(0) is uniform, so every class gives the same
 * norm). */
static double
grad_origin(const struct objective *o, const struct objective_geometry *g)
{
	double r[DATA_MAX_CLASSES], m = 0.0;

	if (o->ops->dphi != NULL) {
		double y = o->task == TASK_BINARY ? 1.0 : g->label;

		if (isnan(y))
			return INFINITY;
		m = fmax(fabs(o->ops->dphi(0.0, y, o->delta)),
			 fabs(o->ops->dphi(0.0, -y, o->delta)));
		return g->x_l2 * m;
	}
	if (o->ops->multi != NULL && o->n_out >= 1 && o->n_out <= DATA_MAX_CLASSES) {
		double s0[DATA_MAX_CLASSES] = { 0 };

		(void)o->ops->multi(s0, o->n_out, 0, r);
		for (size_t k = 0; k < o->n_out; k++)
			m += r[k] * r[k];
		return g->x_l2 * sqrt(m);
	}
	return INFINITY;
}

/* A radius of the set, INFINITY when unbounded or undefined. */
static double
radius_or_inf(double r)
{
	return r >= 0.0 ? r : INFINITY; /* NAN compares false */
}

/* The largest record weight 1/(K pi_min) * 1/(G pi_min) (1 unweighted). */
static double
max_weight(const struct objective *o)
{
	double w = 1.0, wmin;

	if (o->class_weighted) {
		wmin = INFINITY;
		for (size_t i = 0; i < o->p.n_class_prior; i++)
			wmin = fmin(wmin, o->p.class_prior[i]);
		w *= 1.0 / ((double)o->p.n_class_prior * wmin);
	}
	if (o->group_weighted) {
		wmin = INFINITY;
		for (size_t i = 0; i < o->p.n_group_proportions; i++)
			wmin = fmin(wmin, o->p.group_proportions[i]);
		w *= 1.0 / ((double)o->p.n_group_proportions * wmin);
	}
	return w;
}

/* The row part of the geometry: the label bound and ||x~||_2's bound with
 * the intercept's feature; *ret_x is the declared row bound itself. */
static enum err_code
row_geometry(const struct objective *o, const struct data_schema *s, struct objective_geometry *g,
	     double *ret_x, struct err *e)
{
	enum err_code rc = bounds_row_l2(&s->bounds, s->d, ret_x, e);

	if (rc == ERR_OK)
		rc = label_bound(o, &s->bounds, &g->label, e);
	if (rc == ERR_OK)
		g->x_l2 = o->p.intercept ? sqrt(*ret_x * *ret_x + icpt_c(o) * icpt_c(o)) : *ret_x;
	return rc;
}

enum err_code
objective_constants(const struct objective *o, const struct data_schema *s,
		    const struct constraint *c, struct objective_constants *ret, struct err *e)
{
	struct objective_geometry g;
	struct objective_constants k;
	double x, w;
	size_t n_pen = o->d * o->n_out;
	enum err_code rc;

	rc = row_geometry(o, s, &g, &x, e);
	if (rc != ERR_OK)
		return rc;
	g.x_linf = fmin(row_linf(&s->bounds), x);
	if (o->p.intercept)
		g.x_linf = fmax(g.x_linf, icpt_c(o));
	g.r_l2 = radius_or_inf(constraint_l2_radius(c, o->dim));
	g.r_l1 = radius_or_inf(constraint_l1_radius(c, o->dim));
	g.margin = fmin(g.r_l2 * g.x_l2, g.r_l1 * g.x_linf);
	g.n_classes = o->n_classes;
	g.x_lo = g.x_hi = NAN;
	(void)schema_feature_range(s, &g.x_lo, &g.x_hi);
	g.simplex_scale = c->kind == CONSTRAINT_SIMPLEX ? c->radius : NAN;
	if (o->ops->sets != 0 && ((unsigned)c->kind >= 32 || !(o->ops->sets & (1u << c->kind))))
		return err_set_field(e, ERR_INVALID, "constraints.x.kind",
				     "objective '%s' does not take a %s ('constraints.x.kind')",
				     o->ops->name, constraint_kind_name(c->kind));

	memset(&k, 0, sizeof(k));
	rc = o->ops->constants(o, &g, &k, e);
	if (rc != ERR_OK)
		return rc;

	w = max_weight(o);
	k.max_weight = w;
	k.lipschitz_l2 *= w;
	k.lipschitz_linf *= w;
	k.smooth_l2 *= w;
	k.smooth_l1 *= w;
	k.value_bound *= w;
	k.strong_convexity = o->p.intercept ? 0.0 : o->p.ridge;
	k.reg_lipschitz_l2 = o->p.l1 * sqrt((double)n_pen);
	if (o->p.ridge > 0.0)
		k.reg_lipschitz_l2 += o->p.ridge * g.r_l2;
	if (!isfinite(k.lipschitz_l2) || !isfinite(k.lipschitz_linf) || isnan(k.smooth_l2) ||
	    isnan(k.smooth_l1) || isnan(k.value_bound) || isnan(k.reg_lipschitz_l2))
		return err_set(e, ERR_NUMERIC, "the constants of objective '%s' are not finite",
			       o->ops->name);
	*ret = k;
	return ERR_OK;
}

enum err_code
objective_grad_origin_l2(const struct objective *o, const struct data_schema *s, double *ret,
			 struct err *e)
{
	struct objective_geometry g;
	double x;
	enum err_code rc;

	memset(&g, 0, sizeof(g));
	rc = row_geometry(o, s, &g, &x, e);
	if (rc != ERR_OK)
		return rc;
	*ret = o->ops->kind == OBJECTIVE_MINIMIZE ? grad_origin(o, &g) * max_weight(o) : INFINITY;
	return ERR_OK;
}

/* ---- per record ---- */

static inline double
record_weight(const struct objective *o, const struct dataset *ds, size_t i)
{
	double w = 1.0;

	if (o->class_weighted)
		w = o->class_w[o->task == TASK_BINARY ? (ds->y[i] > 0.0) : (size_t)ds->y[i]];
	if (o->group_weighted)
		w *= o->group_w[ds->group[i]];
	return w;
}

/* A one-margin record's label; 0 for an unlabeled dataset (a loss of the
 * margin alone, log_optimal_portfolio). */
static inline double
label_of(const struct dataset *ds, size_t i)
{
	return ds->y != NULL ? ds->y[i] : 0.0;
}

/* s = W^T x~_i (K margins); s has o->n_out entries. */
static inline void
margins(const struct objective *o, const struct dataset *ds, size_t i, const double *w,
	double *restrict s)
{
	const size_t K = o->n_out;

	for (size_t k = 0; k < K; k++)
		s[k] = o->p.intercept ? icpt_c(o) * w[o->d * K + k] : 0.0;
	data_row_matvec(ds, i, w, K, s);
}

bool
objective_start(const struct objective *o, double *ret_x)
{
	if (o->ops->start == NULL)
		return false;
	o->ops->start(o, ret_x);
	return true;
}

double
objective_value(const struct objective *o, const struct dataset *ds, size_t i, const double *w)
{
	double s[DATA_MAX_CLASSES], z;

	if (o->ops->multi != NULL) {
		margins(o, ds, i, w, s);
		return record_weight(o, ds, i) * o->ops->multi(s, o->n_out, (size_t)ds->y[i], NULL);
	}
	if (o->ops->hidden != NULL) {
		margins(o, ds, i, w, s);
		return record_weight(o, ds, i) * o->ops->hidden(o, s, label_of(ds, i));
	}
	z = data_row_dot(ds, i, w) + (o->p.intercept ? icpt_c(o) * w[o->d] : 0.0);
	if (o->ops->value != NULL)
		return record_weight(o, ds, i) *
		       o->ops->value(o, z, ds->y != NULL ? ds->y[i] : 0.0, w);
	return record_weight(o, ds, i) * o->ops->phi(z, label_of(ds, i), o->delta);
}

double
objective_grad(const struct objective *o, const struct dataset *ds, size_t i, const double *w,
	       double scale, double *g)
{
	double s[DATA_MAX_CLASSES], r[DATA_MAX_CLASSES], om = record_weight(o, ds, i), z, c;
	const size_t K = o->n_out;

	if (o->ops->value_only)
		return NAN; /* function values only: no gradient, g untouched */
	if (o->ops->multi != NULL) {
		double loss;

		s[0] = 0.0; /* margins() fills s[0..K); this quiets gcc -O3's maybe-uninitialized */
		margins(o, ds, i, w, s);
		loss = o->ops->multi(s, K, (size_t)ds->y[i], r);
		for (size_t k = 0; k < K; k++)
			r[k] *= scale * om;
		data_row_rank1(ds, i, r, K, g);
		if (o->p.intercept)
			for (size_t k = 0; k < K; k++)
				g[o->d * K + k] += icpt_c(o) * r[k];
		return om * loss;
	}
	z = data_row_dot(ds, i, w) + (o->p.intercept ? icpt_c(o) * w[o->d] : 0.0);
	c = scale * om * o->ops->dphi(z, label_of(ds, i), o->delta);
	data_row_axpy(ds, i, c, g);
	if (o->p.intercept)
		g[o->d] += icpt_c(o) * c;
	return om * o->ops->phi(z, label_of(ds, i), o->delta);
}

/*
 * Rows read in a given (e.g. secret random) order each start with a cache
 * and TLB miss; asking for the row PREFETCH_AHEAD places ahead hides part
 * of that latency.  The multi-output pass leaves sequential passes to the
 * hardware prefetcher.
 */
#define PREFETCH_AHEAD 4

/*
 * The one-margin pass works on blocks of rows (DENSE_BLOCK dense rows,
 * MARGIN_BLOCK CSR rows), in three steps: the block's margins (one dot
 * product per row, and the squared row norm for the clip in the same
 * loop: the only reads of the rows from memory), then its loss
 * derivatives, weights and clips (the exp() of logistic: independent
 * across the block's rows, so their latencies overlap instead of stalling
 * every row), then its updates g += c_t x_t (the rows are still in L1, so
 * each row crosses the memory bus once).  The clip needs ||c_t x_t|| =
 * |c_t| ||x_t|| before the update, and the norm comes with the margin, so
 * the fused pass reads a row once.  Row by row, the dot product, the exp()
 * and the axpy form one dependent chain longer than the out-of-order
 * window, and memory sat idle during it.
 *
 * Dense rows go through the block kernels of kernels.h (struct kern_ops,
 * the widest copy the CPU runs: AVX-512F, AVX2 or SSE2; the same bits on
 * each); CSR rows through the sparse loops of kernels.h.  A CSR batch of
 * at least KERN_WG_MIN_PER_D * d entries runs on w and g interleaved in
 * one scratch array (kern_wg_new(): one scattered cache line per entry
 * instead of two), and a sequential CSR pass asks for its col and val
 * bytes KERN_CSR_AHEAD entries ahead, row by row (kern_csr_ahead_to()).
 *
 * Summation order: g[j] receives c_t x_tj row after row, in the order of
 * idx (or 0..m-1), exactly as m objective_grad() calls would add them, and
 * each margin and derivative is computed as objective_grad() does; the
 * block only changes when each product is computed, so the result has the
 * same bits as the per-record sum.
 *
 * A sequential pass over dense rows asks, at each block, for the bytes
 * SEQ_AHEAD_BYTES beyond the block: the hardware prefetcher alone leaves
 * bandwidth unused while the core computes the block's exp()s (see
 * docs/algorithms/kernels.md for the distances and block sizes measured:
 * blocks of 4 dense rows beat 8 at 1 thread).
 */
#define MARGIN_BLOCK    8
#define DENSE_BLOCK     4
#define SEQ_AHEAD_BYTES 4096

static void
batch_grad_margin(const struct objective *o, const struct dataset *ds, const size_t *idx, size_t m,
		  const double *restrict w, double clip, double *restrict g)
{
	const size_t d = o->d;
	const bool icpt = o->p.intercept, clipped = isfinite(clip);
	const bool weighted = o->class_weighted || o->group_weighted;
	const bool dense = ds->layout == DATA_DENSE;
	const size_t blk = dense ? DENSE_BLOCK : MARGIN_BLOCK;
	const double ic = icpt_c(o), b = icpt ? ic * w[d] : 0.0, delta = o->delta;
	double (*const dphi)(double, double, double) = o->ops->dphi;
	const double *restrict y = ds->y;
	const struct kern_ops *kern = kern_ops_best();
	double *wg = NULL;    /* CSR: the interleaved scratch, wg[2 j] = w_j, wg[2 j + 1] = g_j */
	const double *ws = w; /* the weights and gradient the CSR loops use, at stride */
	double *gs = g;
	size_t stride = 1;
	struct kern_csr_ahead ahead = { 0 };

	if (!dense) {
		size_t entries = 0;

		if (idx == NULL)
			entries = ds->row_ptr[m] - ds->row_ptr[0];
		else
			for (size_t k = 0; k < m && !kern_wg_worth(entries, d); k++)
				entries += ds->row_ptr[idx[k] + 1] - ds->row_ptr[idx[k]];
		if (kern_wg_worth(entries, d) && (wg = kern_wg_new(w, g, d)) != NULL) {
			ws = wg;
			gs = wg + 1;
			stride = 2;
		}
		if (idx == NULL)
			kern_csr_ahead_init(&ahead, ds->col, ds->val, ds->row_ptr[0],
					    ds->row_ptr[m]);
	}
	for (size_t k = 0; idx != NULL && k < m && k < PREFETCH_AHEAD; k++) {
		data_row_prefetch(ds, idx[k]);
		if (y != NULL)
			kern_prefetch(y + idx[k]);
	}
	for (size_t k0 = 0; k0 < m; k0 += blk) {
		const size_t nb = m - k0 < blk ? m - k0 : blk;
		size_t row[MARGIN_BLOCK];
		const double *xr[MARGIN_BLOCK];
		double c[MARGIN_BLOCK], nn[MARGIN_BLOCK];

		for (size_t t = 0; t < nb; t++) {
			const size_t k = k0 + t;

			row[t] = idx != NULL ? idx[k] : k;
			if (idx != NULL && k + PREFETCH_AHEAD < m) {
				data_row_prefetch(ds, idx[k + PREFETCH_AHEAD]);
				if (y != NULL)
					kern_prefetch(y + idx[k + PREFETCH_AHEAD]);
			}
		}
		/* 1. margins z_t (in c[t]) and, for the clip, ||x_t||^2 */
		if (dense) {
			if (idx == NULL) {
				/* bytes [lo, hi) of x: this block's, SEQ_AHEAD_BYTES on */
				const size_t lo = (k0 + nb) * d * sizeof(double) + SEQ_AHEAD_BYTES;
				const size_t end = m * d * sizeof(double);
				const size_t hi = lo + nb * d * sizeof(double);

				for (size_t off = lo; off < hi && off < end; off += 64)
					kern_prefetch_l2((const char *)ds->x + off);
			}
			for (size_t t = 0; t < nb; t++)
				xr[t] = ds->x + row[t] * d;
			kern->dots(xr, nb, w, d, c, clipped ? nn : NULL);
			for (size_t t = 0; t < nb; t++)
				c[t] += b;
		} else {
			for (size_t t = 0; t < nb; t++) {
				const size_t p = ds->row_ptr[row[t]], q = ds->row_ptr[row[t] + 1];

				if (clipped)
					c[t] = kern_sdot_sqnorm_s(ds->col + p, ds->val + p, q - p,
								  ws, stride, &nn[t]) +
					       b;
				else
					c[t] = kern_sdot_s(ds->col + p, ds->val + p, q - p, ws,
							   stride) +
					       b;
			}
		}
		/* 2. c_t = omega_t phi'(z_t, y_t), clipped */
		for (size_t t = 0; t < nb; t++) {
			double v = dphi(c[t], y != NULL ? y[row[t]] : 0.0, delta);

			if (weighted)
				v *= record_weight(o, ds, row[t]);
			if (clipped) {
				/* ||c x~|| = |c| sqrt(||x||^2 + ic^2) */
				double mag = fabs(v) * sqrt(nn[t] + ic * ic);

				if (mag > clip)
					v *= clip / mag;
			}
			c[t] = v;
		}
		/* 3. g += c_t x~_t, row after row */
		if (dense)
			kern->axpys(xr, c, nb, g, d);
		else
			for (size_t t = 0; t < nb; t++) {
				const size_t p = ds->row_ptr[row[t]], q = ds->row_ptr[row[t] + 1];

				if (idx == NULL)
					kern_csr_ahead_to(&ahead, q);
				kern_saxpy_s(c[t], ds->col + p, ds->val + p, q - p, gs, stride);
			}
		if (icpt)
			for (size_t t = 0; t < nb; t++)
				g[d] += ic * c[t];
	}
	kern_wg_done(wg, g, d);
}

/* The multi-output pass: K margins, K residuals, a rank-1 update. */
static void
batch_grad_multi(const struct objective *o, const struct dataset *ds, const size_t *idx, size_t m,
		 const double *restrict w, double clip, double *restrict g)
{
	const size_t K = o->n_out, d = o->d;
	const bool icpt = o->p.intercept, clipped = isfinite(clip);
	const double ic = icpt_c(o);
	double s[DATA_MAX_CLASSES], r[DATA_MAX_CLASSES];

	for (size_t k = 0; k < m; k++) {
		size_t i = idx != NULL ? idx[k] : k;
		double om = record_weight(o, ds, i);

		if (idx != NULL && k + PREFETCH_AHEAD < m)
			data_row_prefetch(ds, idx[k + PREFETCH_AHEAD]);
		margins(o, ds, i, w, s);
		(void)o->ops->multi(s, K, (size_t)ds->y[i], r);
		if (clipped) {
			/* ||x~ r^T||_F = ||x~|| ||r|| */
			double rr = 0.0, mag;

			for (size_t c = 0; c < K; c++)
				rr += r[c] * r[c];
			mag = fabs(om) * sqrt((data_row_sqnorm(ds, i) + ic * ic) * rr);
			if (mag > clip)
				om *= clip / mag;
		}
		for (size_t c = 0; c < K; c++)
			r[c] *= om;
		data_row_rank1(ds, i, r, K, g);
		if (icpt)
			for (size_t c = 0; c < K; c++)
				g[d * K + c] += ic * r[c];
	}
}

void
objective_batch_grad(const struct objective *o, const struct dataset *ds, const size_t *idx,
		     size_t m, const double *w, double clip, double *g)
{
	if (o->ops->value_only)
		return; /* function values only: no gradient, g untouched */
	if (o->ops->multi != NULL)
		batch_grad_multi(o, ds, idx, m, w, clip, g);
	else
		batch_grad_margin(o, ds, idx, m, w, clip, g);
}

/* ---- regularizer and evaluation ---- */

double
objective_reg_value(const struct objective *o, const double *w)
{
	const size_t n_pen = o->d * o->n_out;
	double sq = 0.0, ab = 0.0;

	if (o->p.ridge == 0.0 && o->p.l1 == 0.0)
		return 0.0;
	for (size_t j = 0; j < n_pen; j++) {
		sq += w[j] * w[j];
		ab += fabs(w[j]);
	}
	return 0.5 * o->p.ridge * sq + o->p.l1 * ab;
}

void
objective_reg_grad(const struct objective *o, const double *w, double scale, double *g)
{
	const size_t n_pen = o->d * o->n_out;
	const double mu = scale * o->p.ridge, lam = scale * o->p.l1;

	if (o->p.ridge == 0.0 && o->p.l1 == 0.0)
		return;
	for (size_t j = 0; j < n_pen; j++) {
		double sg = (w[j] > 0.0) - (w[j] < 0.0);

		g[j] += mu * w[j] + lam * sg;
	}
}

double
objective_mean_loss(const struct objective *o, const struct dataset *ds, const double *w)
{
	double sum = 0.0;

	/* A saddle or operator objective has no phi: no loss to average (its
	 * evaluation is a gap, saddle_gap.h / vi.h).  NaN, never a call
	 * through a NULL pointer, whatever a caller skipped. */
	if (ds->n == 0 || o->ops->kind != OBJECTIVE_MINIMIZE)
		return NAN;
	for (size_t i = 0; i < ds->n; i++)
		sum += objective_value(o, ds, i, w);
	return sum / (double)ds->n + objective_reg_value(o, w);
}

double
objective_accuracy(const struct objective *o, const struct dataset *ds, const double *w)
{
	double s[DATA_MAX_CLASSES];
	size_t right = 0;

	if (ds->n == 0 || o->ops->kind != OBJECTIVE_MINIMIZE ||
	    (o->task != TASK_BINARY && o->task != TASK_MULTICLASS))
		return NAN;
	for (size_t i = 0; i < ds->n; i++) {
		if (o->n_out > 1) {
			size_t best = 0;

			margins(o, ds, i, w, s);
			for (size_t k = 1; k < o->n_out; k++)
				if (s[k] > s[best])
					best = k;
			right += best == (size_t)ds->y[i];
		} else {
			double z = data_row_dot(ds, i, w) +
				   (o->p.intercept ? icpt_c(o) * w[o->d] : 0.0);

			right += (z > 0.0 ? 1.0 : -1.0) == ds->y[i];
		}
	}
	return (double)right / (double)ds->n;
}
