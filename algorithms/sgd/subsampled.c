/*
 * sgd/subsampled.c - "dp_sgd.subsampled": differentially private projected
 * minibatch SGD over a convex set, many passes, amplified by sampling.
 *
 * The run (sampling "without replacement", the default).  T steps; at step
 * t a fresh batch B_t, a uniformly random b-subset of the n records drawn
 * without replacement and independently of every other step (a partial
 * Fisher-Yates over a persistent index array, with the run's secret
 * generator), and from x_0 = Pi(0):
 *
 *	g_t     = (1/b) sum_{i in B_t} clip_G(grad l_i(x_{t-1}))
 *	v_t     = beta v_{t-1} + g_t + N(0, sigma^2 I_p) + grad r(x_{t-1})
 *	x_t     = Pi(x_{t-1} - eta v_t)
 *	result  = x_T, or the mean of x_{floor(T/2)+1} .. x_T (params.average)
 *
 * with the notation of sgd/one_pass.c (l_i the record's data term, r the
 * public regularizer, Pi the projection onto constraints.x, G the
 * objective's declared lipschitz_l2 on that set, clip_G the guard that
 * makes the sensitivity hold for the floating-point values), beta the
 * momentum (0: plain SGD).  T is params.steps, or ceil(E n / b) for
 * params.epochs E.
 *
 * Privacy (replace-one, docs/privacy-model.md §1).  Replacing one record
 * changes a batch mean that contains it by at most Delta = 2G/b in l2
 * (replace-one; the add/remove sensitivity would be G/b).  Each step is a
 * Gaussian mechanism of noise multiplier z = sigma / Delta = sigma b / (2G)
 * on a uniform b-subset drawn without replacement, and the steps compose
 * adaptively: the event is
 *	self_composed(sampled_without_replacement(n, b, gaussian(z)), T),
 * bounded by the Renyi accountant (Y.-X. Wang, B. Balle,
 * S. Kasiviswanathan, "Subsampled Renyi differential privacy and analytical
 * moments accountant", AISTATS 2019, Theorem 27 for a Gaussian base; see
 * privacy/rdp.c) in both accounting modes: the basic accountant has no
 * exact curve for a sampled event and uses the same RDP conversion
 * (privacy/accountant.h); an event it cannot bound fails closed at
 * calibration.  Momentum, the regularizer's gradient, the projection and
 * the averaging are post-processing of the noisy releases.
 *
 * The variant params.shuffle = 1 ("shuffled epochs"): E (an integer)
 * epochs, each a fresh secret permutation cut into K = floor(n / b)
 * disjoint batches (the n - K b left over unused in that epoch), T = E K.
 * Within an epoch a record is in one batch only (parallel composition, as
 * in one_pass.c); the epochs compose: the event is
 * self_composed(gaussian(z), E), with no amplification claimed.
 *
 * Defaults (params at 0) are derived from public inputs only: n, p, the
 * declared bounds, epsilon and delta (see algorithms/sgd/README.md for the
 * rule, its reasoning and its measurements):
 *	rho    = (sqrt(eps + log(1/delta)) - sqrt(log(1/delta)))^2,
 *	C      = the bound on a record's gradient at 0 (the clip),
 *	c      = X max(1 / sqrt(d), 0.1) (the intercept's feature),
 *	T      = clamp(ceil(rho n^2 / (8 p)), 3, 300),
 *	b      = n while n T p <= 1e9, else max(ceil(1e9 / (T p)), ceil(sqrt n)),
 *	         (epochs given: max(ceil(sqrt(n)), ceil(n rho / E)); shuffle:
 *	         ceil(2 z sqrt(p)) as one_pass),
 *	eta    = (1 - beta) min(R / (M sqrt(T)), 1 / L), M^2 = (C + G_r)^2 + p sigma^2.
 *
 * The clip and the intercept's feature.  Each record's gradient is clipped
 * to C <= G (the sensitivity is 2C/b; G is reported as grad_bound).  With
 * an intercept the run trains in coordinates u where the intercept's
 * entries are b / c on a constant feature c (struct objective icpt_scale):
 * the gradient is taken, clipped and noised there; each step maps u to the
 * model's coordinates, projects onto the set, averages, and maps back, all
 * post-processing.  The released x is in the model's coordinates.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "privacy/calibrate.h"
#include "privacy/noise.h"
#include "sgd/subsampled.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum {
	P_BATCH_SIZE,
	P_EPOCHS,
	P_STEPS,
	P_STEP_SIZE,
	P_MOMENTUM,
	P_AVERAGE,
	P_SHUFFLE,
	P_CLIP,
	P_ICPT_SCALE,
	P__COUNT
};

#define SUB_DEFAULT_EPOCHS 5.0
#define SUB_MAX_STEPS      1e8
#define SUB_CAL_MAX_ORDER  64.0

static const struct alg_param sub_params[P__COUNT + 1] = {
	[P_BATCH_SIZE] = { "batch_size", ALG_PARAM_INT, 0.0, 1e7, 0.0,
			   "records per step b, at most n; 0 = auto: n while n T p <= 1e9, else "
			   "max(ceil(1e9 / (T p)), ceil(sqrt(n))); with epochs given "
			   "max(ceil(sqrt(n)), ceil(n rho / epochs)) (shuffle: ceil(2 z "
			   "sqrt(p)))",
			   NULL },
	[P_EPOCHS] = { "epochs", ALG_PARAM_REAL, 0.0, 1e4, 0.0,
		       "passes E: steps = ceil(E n / b) (shuffle: an integer number of "
		       "permutations); 0 = auto: from steps (5 when only batch_size is given)",
		       NULL },
	[P_STEPS] = { "steps", ALG_PARAM_INT, 0.0, SUB_MAX_STEPS, 0.0,
		      "number of steps T (not with shuffle or epochs); 0 = auto: clamp(ceil(rho "
		      "n^2 / (8 p)), 3, 300), or from epochs",
		      NULL },
	[P_STEP_SIZE] = { "step_size", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			  "step size eta; 0 = auto: (1 - momentum) min(R / (sqrt((C + G_r)^2 + p "
			  "sigma^2) sqrt(T)), 1 / L)",
			  NULL },
	[P_MOMENTUM] = { "momentum", ALG_PARAM_REAL, 0.0, 0.99, 0.0,
			 "heavy-ball momentum beta in [0, 0.99]; 0 = plain SGD", NULL },
	[P_AVERAGE] = { "average", ALG_PARAM_BOOL, 0.0, 1.0, 1.0,
			"1: release the mean of the last half of the iterates; 0: the last "
			"iterate",
			NULL },
	[P_SHUFFLE] = { "shuffle", ALG_PARAM_BOOL, 0.0, 1.0, 0.0,
			"1: shuffled epochs (disjoint batches of a fresh secret permutation per "
			"epoch, no amplification claimed); 0: independent uniform batches "
			"without replacement",
			NULL },
	[P_CLIP] = { "clip", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
		     "per-record gradient clip norm C (at most the objective's bound G; the "
		     "sensitivity is 2C/b); 0 = auto: the bound on a record's gradient at w = 0 "
		     "when the set contains 0, else G",
		     NULL },
	[P_ICPT_SCALE] = { "intercept_scale", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			   "with an intercept: train it as c w_b on a constant feature c "
			   "(the sensitivity uses sqrt(X^2 + c^2)); 0 = auto: X max(1 / sqrt(d), "
			   "0.1), X the declared row bound",
			   NULL },
	[P__COUNT] = { 0 },
};

static const char *const sub_objectives[] = { "logistic", "least_squares",       "hinge",
					      "huber",    "multiclass_logistic", NULL };

/* Everything derived from the public spec (plan() and init() alike). */
struct sub_setup {
	bool shuffle;
	double grad_bound;       /* G */
	double clip;             /* C <= G_c: the clip norm, the sensitivity's input */
	double icpt_scale;       /* c: the intercept's feature while training (1: none) */
	double reg_bound;        /* G_r */
	double smooth;           /* L (objective plus ridge), +inf when not smooth */
	double radius;           /* R */
	size_t batch;            /* b */
	double epochs;           /* E as used (shuffle: an integer) */
	unsigned long per_epoch; /* shuffle: K = floor(n / b) */
	unsigned long steps;     /* T */
	double z;
	double sensitivity;
	int lattice_k;
	double sensitivity_lattice;
	double sigma;
	double step_size;
};

struct sub_state {
	struct objective work;       /* the spec's instance with icpt_scale c */
	const struct objective *obj; /* &work */
	const struct dataset *ds;    /* borrowed */
	struct rng *rng;             /* borrowed: the run's secret generator */
	struct constraint set;
	size_t dim, n, b;
	bool shuffle, average;
	unsigned long steps, per_epoch, t, avg_from;
	double clip, sigma, step_size, momentum, icpt_scale;
	size_t icpt_from; /* the intercept's coordinates: [icpt_from, dim) */
	int lattice_k;
	struct dgauss_params noise;
	size_t *idx;     /* owned: n entries, a permutation of 0..n-1 */
	double *x;       /* owned: dim */
	double *v;       /* owned: dim, the momentum buffer */
	double *avg;     /* owned: dim */
	double *g;       /* owned: dim */
	double *scratch; /* owned: dim */
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook; /* borrowed; may be NULL */
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

/* The zCDP parameter rho that (epsilon, delta) allows for a Gaussian:
 * epsilon = rho + 2 sqrt(rho log(1/delta)) solved for rho (public). */
static double
target_rho(double eps, double delta)
{
	double l = log(1.0 / delta), r = sqrt(eps + l) - sqrt(l);

	return r * r;
}

/* Whether 0 is in the feasible set (every kind is centred at 0 but the
 * simplex and an off-centre box), i.e. whether x_0 = Pi(0) = 0. */
static bool
sub_contains_origin(const struct constraint *c)
{
	if (c->kind == CONSTRAINT_SIMPLEX)
		return false;
	return c->kind != CONSTRAINT_BOX || (c->lo <= 0.0 && c->hi >= 0.0);
}

/*
 * The intercept's training feature c (params.intercept_scale): with
 * x~ = (x, 1) the bias moves as fast as a row at norm 1 would, and on
 * rows well inside their declared bound X it takes over the early steps
 * and most of the noise's effect on the margins (algorithms/sgd/README.md).
 * Training u_b = b / c on the feature c instead is a change of
 * coordinates: the same model class, a sensitivity from sqrt(X^2 + c^2).
 */
static double
sub_icpt_scale(const struct run_spec *spec, double x)
{
	double c = spec->params[P_ICPT_SCALE];

	if (!spec->objective.p.intercept)
		return 1.0;
	if (c == 0.0)
		c = x * fmax(1.0 / sqrt((double)spec->schema.d), 0.1);
	return is_finite_pos(c) ? c : 1.0;
}

static enum err_code
sub_bounds(const struct run_spec *spec, struct sub_setup *ret, struct err *e)
{
	struct objective_constants oc, ow;
	struct objective work = spec->objective;
	double b_param = spec->params[P_BATCH_SIZE], x = NAN, g_c, g0 = INFINITY;
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	ret->shuffle = spec->params[P_SHUFFLE] != 0.0;
	if (b_param > (double)spec->n)
		return err_set_field(
			e, ERR_INVALID, "params.batch_size",
			"'params.batch_size' (%.0f) exceeds the number of records (%zu)", b_param,
			spec->n);
	if (spec->params[P_STEPS] != 0.0 && (spec->params[P_EPOCHS] != 0.0 || ret->shuffle))
		return err_set_field(e, ERR_INVALID, "params.steps",
				     "'params.steps' cannot be combined with 'params.epochs' or "
				     "'params.shuffle'");
	if (ret->shuffle && spec->params[P_EPOCHS] != floor(spec->params[P_EPOCHS]))
		return err_set_field(e, ERR_INVALID, "params.epochs",
				     "with 'params.shuffle', 'params.epochs' must be an integer");
	ret->radius = constraint_l2_radius(&spec->x, spec->dim);
	if (!is_finite_pos(ret->radius))
		return err_set_field(
			e, ERR_INVALID, "constraints.x",
			"'constraints.x' must be a bounded set with a point other than 0");
	if (!sub_contains_origin(&spec->x))
		ret->radius *= 2.0;
	rc = bounds_row_l2(&spec->schema.bounds, spec->schema.d, &x, e);
	if (rc == ERR_OK)
		rc = objective_constants(&spec->objective, &spec->schema, &spec->x, &oc, e);
	if (rc != ERR_OK)
		return rc;
	ret->icpt_scale = sub_icpt_scale(spec, x);
	work.icpt_scale = ret->icpt_scale;
	rc = objective_constants(&work, &spec->schema, &spec->x, &ow, e);
	if (rc == ERR_OK && spec->params[P_CLIP] == 0.0 && sub_contains_origin(&spec->x))
		rc = objective_grad_origin_l2(&work, &spec->schema, &g0, e);
	if (rc != ERR_OK)
		return rc;
	ret->grad_bound = oc.lipschitz_l2;
	ret->reg_bound = ow.reg_lipschitz_l2;
	ret->smooth = (spec->objective.ops->smooth && isfinite(ow.smooth_l2) && ow.smooth_l2 > 0.0)
			      ? ow.smooth_l2 + spec->objective.p.ridge
			      : INFINITY;
	if (!is_finite_pos(ret->grad_bound) || !(isfinite(ret->reg_bound) && ret->reg_bound >= 0.0))
		return err_set(e, ERR_NUMERIC,
			       "the gradient bound is not a finite positive number");
	/* G_c, the bound G in the training coordinates: every loss here has
	 * ||grad|| = |phi'| ||x~|| (|r| ||x~|| multiclass) with the same
	 * margins in both coordinates, so the ratio of the row bounds. */
	g_c = ret->grad_bound;
	if (spec->objective.p.intercept)
		g_c *= sqrt((x * x + ret->icpt_scale * ret->icpt_scale) / (x * x + 1.0));
	ret->clip = fmin(spec->params[P_CLIP] != 0.0 ? spec->params[P_CLIP] : g0, g_c);
	if (!is_finite_pos(ret->clip))
		return err_set(e, ERR_NUMERIC, "the clip norm is not a finite positive number");
	ret->epochs = spec->params[P_EPOCHS] != 0.0 ? spec->params[P_EPOCHS] : SUB_DEFAULT_EPOCHS;
	return ERR_OK;
}

/*
 * The default schedule (params.batch_size, epochs and steps all 0, or only
 * steps given), from public inputs (algorithms/sgd/README.md):
 *	T = clamp(ceil(rho n^2 / (8 p)), SUB_MIN_STEPS, SUB_MAX_AUTO_STEPS),
 *	b = n when n T p <= SUB_WORK, else max(ceil(SUB_WORK / (T p)), ceil(sqrt n)).
 * Full-batch steps T at zCDP rho have a noise of norm
 * sqrt(T / (2 rho)) (2C / n) sqrt(p) each; the T of the rule makes it C/2,
 * so the steps stay about as informative as a clean gradient's scale C at
 * the start.  Whole batches because, at equal T and rho, the sampled
 * event's bound costs about twice the noise of the full batch's
 * (sampling only pays for the cheaper steps), so the sampling starts
 * where n T p would exceed the work bound.
 */
#define SUB_MIN_STEPS      3.0
#define SUB_MAX_AUTO_STEPS 300.0
#define SUB_WORK           1e9

static void
sub_default_schedule(const struct run_spec *spec, double steps, double *ret_b, double *ret_t)
{
	double n = (double)spec->n, p = (double)spec->dim, rho, t = steps, b;

	if (t == 0.0) {
		rho = target_rho(spec->epsilon, spec->delta);
		t = ceil(rho * n * n / (8.0 * p));
		t = fmin(fmax(t, SUB_MIN_STEPS), SUB_MAX_AUTO_STEPS);
		if (!isfinite(t))
			t = SUB_MIN_STEPS;
	}
	b = n;
	if (n * t * p > SUB_WORK)
		b = fmin(n, fmax(ceil(SUB_WORK / (t * p)), ceil(sqrt(n))));
	*ret_b = fmax(1.0, b);
	*ret_t = t;
}

/* Sampling mode: b and T from public inputs, before the calibration. */
static enum err_code
sub_sampled_schedule(const struct run_spec *spec, struct sub_setup *s, struct err *e)
{
	double b_param = spec->params[P_BATCH_SIZE], n = (double)spec->n, bf = b_param, tf;

	if (b_param == 0.0 && spec->params[P_EPOCHS] == 0.0) {
		sub_default_schedule(spec, spec->params[P_STEPS], &bf, &tf);
	} else {
		if (b_param == 0.0) {
			bf = fmax(ceil(sqrt(n)),
				  ceil(n * target_rho(spec->epsilon, spec->delta) / s->epochs));
			bf = fmax(1.0, fmin(bf, n));
		}
		if (spec->params[P_STEPS] != 0.0)
			tf = spec->params[P_STEPS];
		else
			tf = ceil(s->epochs * n / bf);
	}
	if (!(bf >= 1.0 && bf <= n))
		return err_set(e, ERR_INTERNAL, "batch size out of range");
	s->batch = (size_t)bf;
	if (!(tf >= 1.0 && tf <= SUB_MAX_STEPS))
		return err_set_field(e, ERR_INVALID, "params.epochs",
				     "the run would take %.0f steps; at most %.0f are allowed", tf,
				     SUB_MAX_STEPS);
	s->steps = (unsigned long)tf;
	s->epochs = tf * bf / n;
	return ERR_OK;
}

struct wor_ctx {
	uint64_t n, b, steps;
};

static enum err_code
wor_family(double z, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	const struct wor_ctx *c = ctx;
	struct dp_event sample = { .type = DP_EVENT_SAMPLED_WOR, .n = c->n, .batch = c->b };
	struct dp_event self = { .type = DP_EVENT_SELF_COMPOSED, .count = c->steps };
	enum err_code rc;

	dp_event_gaussian(ret, DP_REPLACE_ONE, z);
	/* b = n samples nothing: every step is a Gaussian on the whole data,
	 * and the event says so (the basic accountant then has the exact
	 * curve of the composition instead of the sampled bound). */
	rc = c->b == c->n ? ERR_OK : dp_event_wrap(ret, &sample, e);
	if (rc == ERR_OK)
		rc = dp_event_wrap(ret, &self, e);
	return rc;
}

static enum err_code
shuffle_family(double z, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	struct dp_event self = { .type = DP_EVENT_SELF_COMPOSED, .count = *(uint64_t *)ctx };

	dp_event_gaussian(ret, DP_REPLACE_ONE, z);
	return dp_event_wrap(ret, &self, e);
}

static enum err_code
sub_event(const struct run_spec *spec, const struct sub_setup *s, double z,
	  struct dp_event_tree *ret, struct err *e)
{
	struct wor_ctx c = { spec->n, s->batch, s->steps };
	uint64_t ep = (uint64_t)s->epochs;

	if (s->shuffle)
		return shuffle_family(z, &ep, ret, e);
	return wor_family(z, &c, ret, e);
}

/* The one calibration of a run (plan() only): z for the run's event, one
 * ulp below both targets (see sgd/one_pass.c), on the dataset's mode, and
 * the name of the accountant that bounded it (run_plan.accountant).  On
 * 'basic' datasets the accountant bounds the sampled event by the RDP
 * conversion ("rdp") and shuffled epochs on the exact curve
 * ("analytic_gaussian"); anything it cannot bound is an error (fail
 * closed). */
static enum err_code
sub_calibrate(const struct run_spec *spec, const struct sub_setup *s, double *ret_z,
	      const char **ret_accountant, struct err *e)
{
	double eps_cal = nextafter(spec->epsilon, 0.0), delta_cal = nextafter(spec->delta, 0.0);
	struct rdp_grid grid;
	struct accountant_report report;
	struct wor_ctx c = { spec->n, s->batch, s->steps };
	uint64_t ep = (uint64_t)s->epochs;
	enum err_code rc;

#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	rdp_grid_default(&grid);
	if (!s->shuffle) {
		/* The default grid without its orders above
		 * max(SUB_CAL_MAX_ORDER, 4 log(1/delta) / epsilon): the WBK19
		 * bound sums over every integer order up to alpha, so the high
		 * orders cost most of a bisection, and they give the minimum only
		 * when the conversion's log(1/delta) / (alpha - 1) term must be
		 * small against epsilon, which the second bound keeps.  A subset
		 * of the grid can only raise the converted epsilon, so the
		 * ledger's own accounting on the full grid meets the target too
		 * (conservative). */
		double top = fmax(SUB_CAL_MAX_ORDER, 4.0 * log(1.0 / delta_cal) / eps_cal);
		unsigned k = 0;

		for (unsigned i = 0; i < grid.n; i++)
			if (grid.order[i] <= top)
				grid.order[k++] = grid.order[i];
		grid.n = k;
	}
	if (s->shuffle)
		rc = calibrate(shuffle_family, &ep, spec->mode, eps_cal, delta_cal, 1e-3, 1e7,
			       &grid, ret_z, &report, e);
	else
		rc = calibrate(wor_family, &c, spec->mode, eps_cal, delta_cal, 1e-2, 1e7, &grid,
			       ret_z, &report, e);
	if (rc == ERR_OK)
		*ret_accountant = report.accountant;
	return rc;
}

/* The rest of the schedule at noise multiplier z. */
static enum err_code
sub_schedule(const struct run_spec *spec, double z, struct sub_setup *s, struct err *e)
{
	double eta_param = spec->params[P_STEP_SIZE], beta = spec->params[P_MOMENTUM];
	double p = (double)spec->dim, gg;
	enum err_code rc;

	if (!is_finite_pos(z))
		return err_set(e, ERR_INTERNAL, "the noise multiplier is not finite and positive");
	s->z = z;
	if (s->shuffle) {
		rc = onepass_batch(spec->params[P_BATCH_SIZE], z, spec->dim, spec->n, &s->batch, e);
		if (rc != ERR_OK)
			return rc;
		s->per_epoch = (unsigned long)(spec->n / s->batch);
		if (!(s->epochs >= 1.0 && s->epochs * (double)s->per_epoch <= SUB_MAX_STEPS))
			return err_set_field(e, ERR_INVALID, "params.epochs",
					     "'params.epochs' gives too many steps");
		s->steps = (unsigned long)s->epochs * s->per_epoch;
	}
	s->sensitivity = 2.0 * s->clip / (double)s->batch;
	rc = onepass_lattice(s->sensitivity, spec->dim, &s->lattice_k, &s->sensitivity_lattice, e);
	if (rc != ERR_OK)
		return rc;
	s->sigma = s->z * s->sensitivity_lattice;
	if (eta_param == 0.0) {
		gg = s->clip + s->reg_bound;
		s->step_size = s->radius /
			       (sqrt(gg * gg + p * s->sigma * s->sigma) * sqrt((double)s->steps));
		if (isfinite(s->smooth))
			s->step_size = fmin(s->step_size, 1.0 / s->smooth);
		s->step_size *= 1.0 - beta;
	} else {
		s->step_size = eta_param;
	}
	if (!is_finite_pos(s->sensitivity) || !is_finite_pos(s->sigma) ||
	    !is_finite_pos(s->step_size))
		return err_set(e, ERR_NUMERIC,
			       "the noise or step size is not a finite positive number");
	return ERR_OK;
}

static enum err_code
sub_fill_plan(const struct run_spec *spec, const struct sub_setup *s, struct run_plan *ret,
	      struct err *e)
{
	enum err_code rc;

	onepass_plan_start(ret, spec, s->steps, s->batch);
	rc = sub_event(spec, s, s->z, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "epochs", s->epochs);
	run_plan_use(ret, "sampling_rate", (double)s->batch / (double)spec->n);
	run_plan_use(ret, "grad_bound", s->grad_bound);
	run_plan_use(ret, "clip", s->clip);
	if (spec->objective.p.intercept)
		run_plan_use(ret, "intercept_scale", s->icpt_scale);
	onepass_plan_use_noise(ret, s->sensitivity, s->sensitivity_lattice, s->lattice_k, s->z,
			       s->sigma, s->step_size);
	run_plan_use(ret, "momentum", spec->params[P_MOMENTUM]);
	return ERR_OK;
}

static enum err_code
sub_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct sub_setup s;
	struct run_plan p;
	const char *accountant = NULL;
	double z = 0.0;
	enum err_code rc;

	rc = sub_bounds(spec, &s, e);
	if (rc == ERR_OK && !s.shuffle)
		rc = sub_sampled_schedule(spec, &s, e);
	if (rc == ERR_OK)
		rc = sub_calibrate(spec, &s, &z, &accountant, e);
	if (rc == ERR_OK)
		rc = sub_schedule(spec, z, &s, e);
	if (rc == ERR_OK)
		rc = sub_fill_plan(spec, &s, &p, e);
	if (rc == ERR_OK) {
		p.accountant = accountant;
		*ret_plan = p;
	}
	return rc;
}

enum err_code
subsampled_plan_at(const struct run_spec *spec, double z, struct run_plan *ret_plan, struct err *e)
{
	struct sub_setup s;
	struct run_plan p;
	enum err_code rc;

	rc = sub_bounds(spec, &s, e);
	if (rc == ERR_OK && !s.shuffle)
		rc = sub_sampled_schedule(spec, &s, e);
	if (rc == ERR_OK)
		rc = sub_schedule(spec, z, &s, e);
	if (rc == ERR_OK)
		rc = sub_fill_plan(spec, &s, &p, e);
	if (rc == ERR_OK)
		*ret_plan = p;
	return rc;
}

static double
sub_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double b = run_plan_value(plan, "batch_size");

	if (!isfinite(b))
		b = 1.0;
	return (double)plan->steps * (b + 1.0) * (double)spec->dim;
}

/* x (the model's coordinates, where the set is) <-> u (training: the
 * intercept's entries divided by c). */
static void
sub_to_model(struct sub_state *s)
{
	for (size_t j = s->icpt_from; j < s->dim; j++)
		s->x[j] *= s->icpt_scale;
}

static void
sub_to_training(struct sub_state *s)
{
	for (size_t j = s->icpt_from; j < s->dim; j++)
		s->x[j] /= s->icpt_scale;
}

static enum err_code
sub_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	 const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct sub_state *s = state;
	struct sub_setup su;
	struct run_plan mine;
	size_t n = ds->n;
	bool derived;
	enum err_code rc;

	/* Spend exactly what was charged: derive the schedule again from the
	 * plan's own noise multiplier (no second calibration). */
	rc = sub_bounds(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived =
		(su.shuffle || sub_sampled_schedule(spec, &su, NULL) == ERR_OK) &&
		sub_schedule(spec, run_plan_value(plan, "noise_multiplier"), &su, NULL) == ERR_OK &&
		sub_fill_plan(spec, &su, &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;

	s->work = spec->objective;
	s->work.icpt_scale = su.icpt_scale;
	s->obj = &s->work;
	s->icpt_scale = su.icpt_scale;
	s->icpt_from =
		spec->objective.p.intercept ? spec->objective.d * spec->objective.n_out : s->dim;
	s->ds = ds;
	s->rng = rng;
	s->set = spec->x;
	s->dim = spec->dim;
	s->n = n;
	s->b = su.batch;
	s->shuffle = su.shuffle;
	s->average = spec->params[P_AVERAGE] != 0.0;
	s->steps = su.steps;
	s->per_epoch = su.per_epoch;
	s->avg_from = s->average ? su.steps / 2 : su.steps - 1;
	s->clip = su.clip;
	s->sigma = su.sigma;
	s->step_size = su.step_size;
	s->momentum = spec->params[P_MOMENTUM];
	s->lattice_k = su.lattice_k;

	s->idx = calloc(n, sizeof(*s->idx));
	s->x = calloc(s->dim, sizeof(*s->x));
	s->v = calloc(s->dim, sizeof(*s->v));
	s->avg = calloc(s->dim, sizeof(*s->avg));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->scratch = calloc(s->dim, sizeof(*s->scratch));
	if (s->idx == NULL || s->x == NULL || s->v == NULL || s->avg == NULL || s->g == NULL ||
	    s->scratch == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the dp_sgd.subsampled state");
	for (size_t i = 0; i < n; i++)
		s->idx[i] = i;
	constraint_project(&s->set, s->x, s->dim, s->scratch);
	sub_to_training(s);
#ifdef DPOPT_TESTING
	s->hook = spec->testing_hook;
	rc = onepass_testing_sigma(s->hook, n, &s->sigma, e);
	if (rc != ERR_OK)
		return rc;
#endif
	return noise_dgauss_prepare_real(ldexp(s->sigma, s->lattice_k), &s->noise, e);
}

/* The batch of step t: the first b entries of idx after a partial
 * Fisher-Yates (sampling: a uniform b-subset, independent of every other
 * step, since idx is a permutation whatever its current order), NULL for
 * all n rows in order when b = n, or the next slice of this epoch's
 * permutation (shuffle). */
static const size_t *
sub_batch(struct sub_state *s)
{
	unsigned long k;

	if (!s->shuffle) {
		/* Whole-data steps sample nothing: the rows in order (a
		 * sequential pass), no draws. */
		if (s->b == s->n)
			return NULL;
		onepass_order_partial(s->rng, s->idx, s->n, s->b);
		return s->idx;
	}
	k = s->t % s->per_epoch;
	if (k == 0)
		onepass_order(s->rng, s->idx, s->n, s->per_epoch * s->b);
	return s->idx + k * s->b;
}

#ifdef DPOPT_TESTING
/* Audits: at step 0 only, the canary is put into the batch (slot 0 when
 * the draw left it out), after the draw (same generator consumption). */
static void
testing_place(struct sub_state *s, size_t *batch)
{
	if (s->hook == NULL || !s->hook->place_first || s->t != 0 || batch == NULL)
		return; /* NULL: every row is in the batch */
	for (size_t i = 0; i < s->n; i++) {
		if (s->idx[i] == s->hook->first_record) {
			size_t pos = (size_t)(batch - s->idx);

			if (i >= pos && i < pos + s->b)
				return;
			s->idx[i] = batch[0];
			batch[0] = s->hook->first_record;
			return;
		}
	}
}
#endif

static enum err_code
sub_step(void *state, struct err *e)
{
	struct sub_state *s = state;
	const size_t d = s->dim;
	const size_t *batch;
	bool finite = true;

	if (s->t >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	batch = sub_batch(s);
#ifdef DPOPT_TESTING
	testing_place(s, (size_t *)batch);
#endif
	memset(s->g, 0, d * sizeof(*s->g));
	objective_batch_grad(s->obj, s->ds, batch, s->b, s->x, s->clip, s->g);
	if (onepass_noisy_mean(s->rng, &s->noise, s->lattice_k, s->g, d, s->b, e) != ERR_OK)
		return err_failed(e);
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL)
		s->hook->release(s->hook->ctx, s->t, s->g, d);
#endif
	/* Post-processing of past releases from here on. */
	objective_reg_grad(s->obj, s->x, 1.0, s->g);
	for (size_t j = 0; j < d; j++) {
		s->v[j] = s->momentum * s->v[j] + s->g[j];
		s->x[j] -= s->step_size * s->v[j];
	}
	sub_to_model(s);
	constraint_project(&s->set, s->x, d, s->scratch);

	s->t++;
	if (s->t > s->avg_from) {
		double k = (double)(s->t - s->avg_from);

		for (size_t j = 0; j < d; j++)
			s->avg[j] += (s->x[j] - s->avg[j]) / k;
	}
	sub_to_training(s);
	for (size_t j = 0; j < d; j++)
		finite = finite && isfinite(s->x[j]) && isfinite(s->avg[j]);
	if (!finite)
		return err_set(e, ERR_INTERNAL, "the run failed");
	return ERR_OK;
}

static void
sub_result(const void *state, double *ret_x)
{
	const struct sub_state *s = state;

	memcpy(ret_x, s->avg, s->dim * sizeof(*ret_x));
}

static void
sub_fini(void *state)
{
	struct sub_state *s = state;

	free(s->idx);
	free(s->x);
	free(s->v);
	free(s->avg);
	free(s->g);
	free(s->scratch);
	s->idx = NULL;
	s->x = s->v = s->avg = s->g = s->scratch = NULL;
}

enum err_code
subsampled_default_set(const struct objective *o, const struct data_schema *s,
		       struct constraint *ret, struct err *e)
{
	double x = NAN, y = 0.0, r;
	enum err_code rc = bounds_row_l2(&s->bounds, s->d, &x, e);

	if (rc != ERR_OK)
		return rc;
	if (o->p.intercept)
		x = sqrt(x * x + 1.0);
	if (s->task == TASK_REGRESSION)
		y = s->bounds.label;
	r = fmax(10.0, 2.0 * y) / x;
	if (!is_finite_pos(r))
		return err_set_field(e, ERR_INVALID, "constraints.x",
				     "'constraints.x' is required: the declared bounds give no "
				     "default radius");
	memset(ret, 0, sizeof(*ret));
	ret->kind = CONSTRAINT_L2_BALL;
	ret->radius = r;
	return ERR_OK;
}

const struct alg_ops alg_sgd_subsampled = {
	.name = "dp_sgd.subsampled",
	.version = 2, /* 2: the clip C, the intercept's feature c, whole-data default steps */
	.doc = "Projected noisy minibatch SGD over a convex set, many passes: each of T steps "
	       "draws a fresh secret uniform batch without replacement (or, with shuffle, the "
	       "next disjoint batch of a fresh secret permutation per epoch), clips each "
	       "record's gradient (by default to the declared bound at the starting point 0), adds "
	       "exact discrete "
	       "Gaussian noise on a fine lattice to the batch mean, optionally uses momentum, "
	       "and releases the mean of the last half of the iterates (or the last one).  "
	       "Charged self_composed(sampled_without_replacement(n, b, gaussian(z)), T) on the "
	       "Renyi accountant (amplification by sampling), or self_composed(gaussian(z), E) "
	       "with shuffle; whole-data steps (the default up to 1e9 coordinate operations) are "
	       "self_composed(gaussian(z), T).  Batch size, steps, clip, the intercept's feature "
	       "and step size default to a rule on public inputs (algorithms/sgd/README.md).",
	.paper = "R. Bassily, A. Smith, A. Thakurta, Private empirical risk minimization: "
		 "efficient algorithms and tight error bounds, FOCS 2014; M. Abadi et al., Deep "
		 "learning with differential privacy, CCS 2016; accounting: Y.-X. Wang, B. Balle, "
		 "S. Kasiviswanathan, Subsampled Renyi differential privacy, AISTATS 2019",
	.privacy_model = "(epsilon, delta)-DP, replace-one",
	.objectives = sub_objectives,
	.constraints = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		       (1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_SIMPLEX) |
		       (1u << CONSTRAINT_BOX),
	.params = sub_params,
	.state_size = sizeof(struct sub_state),
	.plan = sub_plan,
	.work = sub_work,
	.init = sub_init,
	.step = sub_step,
	.result = sub_result,
	.fini = sub_fini,
	.defaults_from_bounds = true,
};
