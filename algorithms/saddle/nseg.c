/*
 * saddle/nseg.c - "saddle.nseg": Noisy Stochastic Extragradient for
 * convex-concave saddle points and monotone variational inequalities in
 * Euclidean geometry (D. Boob, C. Guzman, "Optimal algorithms for
 * differentially private stochastic monotone variational inequalities and
 * saddle-point problems", Math. Programming 2023, Algorithm 1, Corollary 1
 * and Theorem 4; docs/algorithms/nseg.md).
 *
 * The run.  u = (x, y) of dimension p = dim_x + dim_y over W = X x Y (VI
 * mode: one block u over U = "constraints.x"), the operator of a record
 * g(u; z) = (grad_x f, -grad_y f) (VI: F(u; z)), M its declared l2 bound
 * and L its declared Lipschitz constant (saddle_constants / vi_constants),
 * D the l2 diameter of W (blockwise: 2 r for the balls, (hi - lo) sqrt(d)
 * for a box, s sqrt(2) for a simplex of scale s).  From u_0 = Pi_W(0), for
 * t = 1..T:
 *
 *	g1_t  = (1/B) sum_{i in B1_t} clip_M(g(u_{t-1}; z_i)) + N(0, sigma^2 I_p)
 *	w_t   = Pi_W(u_{t-1} - gamma g1_t)                 (extrapolation)
 *	g2_t  = (1/B) sum_{i in B2_t} clip_M(g(w_t; z_i)) + N(0, sigma^2 I_p)
 *	u_t   = Pi_W(u_{t-1} - gamma g2_t)                 (update, from u_{t-1})
 *	result = (sum_t gamma w_t) / (sum_t gamma) = mean of w_1..w_T
 *
 * (the step is constant, so the gamma-weighted average of the paper is the
 * plain mean of the extrapolated points; it is in W by convexity).  The
 * noise is fresh for each of the two evaluations (the paper's Algorithm 1
 * prints xi^1 for both) and is the exact discrete Gaussian
 * on a fine lattice (privacy/noise.h) as in saddle.sgda_one_pass; clip_M
 * is the rounding guard of every Gaussian method here (||g|| <= M holds
 * by the declared bounds, so it changes nothing in exact arithmetic).
 *
 * variant = single_pass (0, Corollary 1).  A secret uniformly random order
 * of the n records (data independent) is cut into 2T disjoint batches of
 * B; iteration t uses batches 2t - 1 (B1_t) and 2t (B2_t).  Replacing one
 * record changes one batch mean, at a point fixed by the past releases, by
 * at most 2M/B in l2 and no other release, so the 2T Gaussian releases
 * cost one Gaussian mechanism of noise multiplier z = sigma / (2M/B)
 * (parallel composition): the event {parallel, parts 2T: gaussian z},
 * calibrated exactly by onepass_calibrate() on the dataset's ledger mode.
 * Defaults: B = round(sqrt(p ln(1/delta)) / eps) in [1, floor(n/2)], T =
 * floor(n / (2B)), gamma = D / sqrt(7 T (M^2 + p sigma^2)) <= 1/(sqrt(3) L)
 * (saddle/nseg.h).  The guarantee is on the strong gap.
 *
 * variant = multi_pass (1, Theorem 4).  Every evaluation draws its own
 * batch: a uniformly random B-subset of the n records without replacement,
 * independent of every other draw (a partial Fisher-Yates over a
 * persistent index array, as dp_sgd.subsampled); B = 1 by default (the
 * paper's one index per evaluation, eq. (4.16)).  Each of the 2T releases
 * is a Gaussian mechanism of multiplier z = sigma / (2M/B) on a sampled
 * B-subset (replace-one), adaptively composed: the event
 *	self_composed(sampled_without_replacement(n, B, gaussian(z)), 2T),
 * bounded by the WBK19 subsampled-RDP bound (privacy/rdp.c) and calibrated
 * by calibrate() on the dataset's ledger mode.  The paper's sigma^2 = 8 M^2
 * ln(1/delta) / eps^2 (Prop. 7, from Theorem 1 with an unknown constant
 * and n^2 releases counted instead of 2 n^2) is not used: under this
 * accountant it buys epsilon 2.6 at a target of 1
 * (docs/algorithms/nseg.md §4).  Defaults: T = n^2, gamma =
 * min(D / M, 1 / L) / (n max(sqrt(n), sqrt(p ln(1/delta)) / eps)).  The
 * guarantee is on the weak gap; the work is Theta(n^2 B p) and the
 * service's work limit bounds it (work()).
 *
 * Refusals before admission: sqrt(p ln(1/delta)) / (eps n) >= 1, the
 * regime where the paper's rate is at least the trivial bound M D (its
 * Remark 1): 422 privacy_too_small_for_n naming privacy.epsilon; n < 2
 * for the single pass likewise.  Nothing data dependent is released: the
 * result is the averaged point, the plan holds public values only.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "privacy/calibrate.h"
#include "privacy/noise.h"
#include "saddle/euclid.h"
#include "saddle/nseg.h"
#include "vi.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_VARIANT, P_BATCH_SIZE, P_ITERATIONS, P_STEP_SIZE, P__COUNT };
enum { NSEG_SINGLE_PASS = 0, NSEG_MULTI_PASS = 1 };

#define NSEG_MAX_ITERATIONS 1e10

static const char *const nseg_variants[] = { "single_pass", "multi_pass", NULL };

static const struct alg_param nseg_params[P__COUNT + 1] = {
	[P_VARIANT] = { "variant", ALG_PARAM_INT, 0.0, 1.0, 0.0,
			"\"single_pass\" (0): disjoint batches of a secret order, one Gaussian "
			"mechanism by parallel composition, strong-gap guarantee; \"multi_pass\" "
			"(1): an independent uniform batch without replacement per evaluation, "
			"RDP-accounted, weak-gap guarantee, Theta(n^2) work",
			nseg_variants },
	[P_BATCH_SIZE] = { "batch_size", ALG_PARAM_INT, 0.0, 1e7, 0.0,
			   "records per operator evaluation B; 0 = auto: single_pass "
			   "round(sqrt(p ln(1/delta)) / epsilon) in [1, floor(n/2)] (2 B "
			   "iterations <= n), multi_pass 1",
			   NULL },
	[P_ITERATIONS] = { "iterations", ALG_PARAM_INT, 0.0, NSEG_MAX_ITERATIONS, 0.0,
			   "extragradient iterations T (two operator evaluations each); 0 = "
			   "auto: single_pass floor(n / (2 B)) (the most one pass allows), "
			   "multi_pass n^2",
			   NULL },
	[P_STEP_SIZE] = { "step_size", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			  "step size gamma; 0 = auto: single_pass min(D / sqrt(7 T (M^2 + p "
			  "sigma^2)), 1 / (sqrt(3) L)), multi_pass min(D / M, 1 / L) / (n "
			  "max(sqrt(n), sqrt(p ln(1/delta)) / epsilon))",
			  NULL },
	[P__COUNT] = { 0 },
};

static const char *const nseg_objectives[] = { "bilinear",
					       "worst_group_logistic",
					       "matrix_game",
					       "quadratic_game",
					       "fair_logistic_lagrangian",
					       "auc_minimax",
					       "bilinear_vi",
					       "affine_vi",
					       NULL };

#define NSEG_SETS                                                                                  \
	((1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_LP_BALL) |    \
	 (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX))

/* Everything derived from the public spec; plan() calibrates z, init()
 * derives the rest again from the plan's z and compares. */
struct nseg_setup {
	int variant;
	struct saddle_block bx, by;
	double bound;    /* M: ||g(u; z)||_2 <= M, the clip level */
	double smooth;   /* L: ||g(u; z) - g(v; z)|| <= L ||u - v|| */
	double diameter; /* D */
	size_t batch;    /* B */
	unsigned long iterations;
	double z;
	double sensitivity; /* 2 M / B */
	int lattice_k;
	double sensitivity_lattice;
	double sigma;
	double step_size;
};

struct nseg_state {
	const struct objective *obj; /* borrowed: the spec's */
	const struct dataset *ds;    /* borrowed */
	struct rng *rng;             /* borrowed */
	struct constraint_product set;
	size_t dim, n, b;
	bool vi, multi;
	unsigned long steps, t;
	double clip, sigma, step_size;
	int lattice_k;
	struct dgauss_params noise;
	size_t *order;   /* owned: n; single pass the secret order, multi-pass the sampling array */
	double *u;       /* owned: dim, u_{t-1} */
	double *w;       /* owned: dim, w_t */
	double *avg;     /* owned: dim, mean of w_1..w_t */
	double *g;       /* owned: dim, noisy batch operator */
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

static bool
is_vi(const struct run_spec *spec)
{
	return saddle_euclid_is_vi(spec);
}

size_t
nseg_sp_batch(size_t n, size_t p, double epsilon, double delta)
{
	double b = round(sqrt((double)p * log(1.0 / delta)) / epsilon);
	size_t half = n / 2;

	if (half == 0)
		return 0;
	if (!(b >= 1.0))
		return 1;
	return b >= (double)half ? half : (size_t)b;
}

double
nseg_sp_step_size(double diameter, double bound, double smooth, unsigned long steps, size_t p,
		  double sigma)
{
	double g =
		diameter / sqrt(7.0 * (double)steps * (bound * bound + (double)p * sigma * sigma));

	if (smooth > 0.0)
		g = fmin(g, 1.0 / (sqrt(3.0) * smooth));
	return g;
}

double
nseg_mp_step_size(double diameter, double bound, double smooth, size_t n, size_t p, double epsilon,
		  double delta)
{
	double num = diameter / bound, nn = (double)n;

	if (smooth > 0.0)
		num = fmin(num, 1.0 / smooth);
	return num / (nn * fmax(sqrt(nn), sqrt((double)p * log(1.0 / delta)) / epsilon));
}

/* The blocks, M, L and D; the variant's batch and iteration counts (no
 * noise yet); the refusals that need no calibration. */
static enum err_code
nseg_bounds(const struct run_spec *spec, struct nseg_setup *ret, struct err *e)
{
	double b_param = spec->params[P_BATCH_SIZE], t_param = spec->params[P_ITERATIONS];
	struct saddle_euclid c;
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	ret->variant = (int)spec->params[P_VARIANT];
	rc = saddle_euclid_constants(spec, "saddle.nseg", &c, e);
	if (rc != ERR_OK)
		return rc;
	ret->bx = c.bx;
	ret->by = c.by;
	ret->bound = c.bound;
	ret->smooth = c.smooth;
	ret->diameter = c.diameter;

	if (ret->variant == NSEG_SINGLE_PASS) {
		unsigned long most;

		if (b_param == 0.0) {
			ret->batch = nseg_sp_batch(spec->n, spec->dim, spec->epsilon, spec->delta);
			if (ret->batch == 0)
				return err_set_field(e, ERR_TOO_SMALL, "privacy.epsilon",
						     "privacy_too_small_for_n: a single pass "
						     "needs two batches, n = %zu",
						     spec->n);
		} else {
			if (2.0 * b_param > (double)spec->n)
				return err_set_field(
					e, ERR_INVALID, "params.batch_size",
					"'params.batch_size' (%.0f) leaves no room for two "
					"disjoint batches in n = %zu records",
					b_param, spec->n);
			ret->batch = (size_t)b_param;
		}
		most = (unsigned long)(spec->n / (2 * ret->batch));
		if (t_param > (double)most)
			return err_set_field(e, ERR_INVALID, "params.iterations",
					     "'params.iterations' (%.0f) exceeds floor(n / (2 "
					     "batch_size)) = %lu, what one pass allows",
					     t_param, most);
		ret->iterations = t_param == 0.0 ? most : (unsigned long)t_param;
	} else {
		if (b_param > (double)spec->n)
			return err_set_field(
				e, ERR_INVALID, "params.batch_size",
				"'params.batch_size' (%.0f) exceeds the number of records (%zu)",
				b_param, spec->n);
		ret->batch = b_param == 0.0 ? 1 : (size_t)b_param;
		if (t_param == 0.0) {
			double nn = (double)spec->n * (double)spec->n;

			if (nn > NSEG_MAX_ITERATIONS)
				return err_set_field(
					e, ERR_INVALID, "params.iterations",
					"the default n^2 = %.3g iterations exceed %.0g; give "
					"'params.iterations'",
					nn, NSEG_MAX_ITERATIONS);
			ret->iterations = (unsigned long)nn;
		} else {
			ret->iterations = (unsigned long)t_param;
		}
	}
	if (ret->iterations == 0)
		return err_set(e, ERR_INTERNAL, "no iteration planned");
	return ERR_OK;
}

static enum err_code
nseg_event(const struct run_spec *spec, const struct nseg_setup *s, double z,
	   struct dp_event_tree *ret, struct err *e)
{
	if (s->variant == NSEG_SINGLE_PASS)
		return onepass_event(z, 2 * s->iterations, ret, e);
	return saddle_euclid_wor_event(z, spec->n, s->batch, 2 * (uint64_t)s->iterations, ret, e);
}

/* The one calibration of a run (plan() only).  Single pass: one Gaussian
 * mechanism (onepass_calibrate).  Multi-pass: the sampled event on the
 * dataset's mode, one ulp below both targets, over the default grid
 * without its orders above max(64, 4 ln(1/delta) / epsilon) (the WBK19
 * sum is over every order up to alpha; a subset of the grid can only raise
 * the converted epsilon, so the ledger's charge on the full grid meets the
 * target too; as dp_sgd.subsampled). */
static enum err_code
nseg_calibrate(const struct run_spec *spec, const struct nseg_setup *s, double *ret_z,
	       const char **ret_accountant, struct err *e)
{
	if (s->variant == NSEG_SINGLE_PASS)
		return onepass_calibrate(spec, ret_z, ret_accountant, e);
	return saddle_euclid_wor_calibrate(spec, s->batch, 2 * (uint64_t)s->iterations, ret_z,
					   ret_accountant, e);
}

/* The rest of the schedule at multiplier z. */
static enum err_code
nseg_schedule(const struct run_spec *spec, double z, struct nseg_setup *s, struct err *e)
{
	enum err_code rc;

	if (!is_finite_pos(z))
		return err_set(e, ERR_INTERNAL, "the noise multiplier is not finite and positive");
	s->z = z;
	s->sensitivity = 2.0 * s->bound / (double)s->batch;
	rc = onepass_lattice(s->sensitivity, spec->dim, &s->lattice_k, &s->sensitivity_lattice, e);
	if (rc != ERR_OK)
		return rc;
	s->sigma = z * s->sensitivity_lattice;
	if (spec->params[P_STEP_SIZE] != 0.0)
		s->step_size = spec->params[P_STEP_SIZE];
	else if (s->variant == NSEG_SINGLE_PASS)
		s->step_size = nseg_sp_step_size(s->diameter, s->bound, s->smooth, s->iterations,
						 spec->dim, s->sigma);
	else
		s->step_size = nseg_mp_step_size(s->diameter, s->bound, s->smooth, spec->n,
						 spec->dim, spec->epsilon, spec->delta);
	if (!is_finite_pos(s->sigma) || !is_finite_pos(s->step_size))
		return err_set(e, ERR_NUMERIC,
			       "the noise or step size is not a finite positive number");
	return ERR_OK;
}

/* The paper's own noise for the record (not used): Prop. 5's sigma^2 = 8
 * M^2 ln(1/delta) / (B^2 eps^2), Prop. 7's 8 M^2 ln(1/delta) / eps^2 as
 * printed (B = 1). */
static double
paper_sigma(const struct run_spec *spec, const struct nseg_setup *s)
{
	return sqrt(8.0 * log(1.0 / spec->delta)) * s->bound / (spec->epsilon * (double)s->batch);
}

static enum err_code
nseg_fill_plan(const struct run_spec *spec, const struct nseg_setup *s, struct run_plan *ret,
	       struct err *e)
{
	enum err_code rc;

	onepass_plan_start(ret, spec, s->iterations, s->batch);
	rc = nseg_event(spec, s, s->z, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "evaluations", 2.0 * (double)s->iterations);
	run_plan_use(ret, "operator_bound", s->bound);
	run_plan_use(ret, "operator_lipschitz", s->smooth);
	run_plan_use(ret, "diameter", s->diameter);
	onepass_plan_use_noise(ret, s->sensitivity, s->sensitivity_lattice, s->lattice_k, s->z,
			       s->sigma, s->step_size);
	run_plan_use(ret, "paper_noise_sigma", paper_sigma(spec, s));
	run_plan_use(ret, "dim_x", (double)(is_vi(spec) ? spec->dim : spec->objective.dim_x));
	run_plan_use(ret, "dim_y", (double)(is_vi(spec) ? 0 : spec->objective.dim_y));
	if (s->variant == NSEG_SINGLE_PASS)
		run_plan_use(ret, "unused_records",
			     (double)(spec->n - 2 * (size_t)s->iterations * s->batch));
	else
		run_plan_use(ret, "sampling_rate", (double)s->batch / (double)spec->n);
	return ERR_OK;
}

static enum err_code
nseg_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct nseg_setup s;
	struct run_plan p;
	const char *accountant = NULL;
	double z = 0.0;
	enum err_code rc;

	rc = nseg_bounds(spec, &s, e);
	if (rc == ERR_OK)
		rc = nseg_calibrate(spec, &s, &z, &accountant, e);
	if (rc == ERR_OK)
		rc = nseg_schedule(spec, z, &s, e);
	if (rc == ERR_OK)
		rc = nseg_fill_plan(spec, &s, &p, e);
	if (rc == ERR_OK) {
		p.accountant = accountant;
		*ret_plan = p;
	}
	return rc;
}

/* Per iteration, in passes over p numbers: 2 evaluations of B records and
 * 2 noise vectors, 2 projections, 2 updates and the running mean (2B + 7);
 * multi-pass also draws 2B indices; and the n entries of the order.  The
 * per-iteration passes matter when B is small (multi-pass B = 1: 9 passes
 * where the records are 2; counting only records and noise, the estimate
 * was 2.25x short, docs/algorithms/nseg.md §5). */
static double
nseg_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double b = run_plan_value(plan, "batch_size"), t = (double)plan->steps;
	double draws = run_plan_value(plan, "sampling_rate");

	if (!isfinite(b))
		b = 1.0;
	return t * (2.0 * b + 7.0) * (double)spec->dim + (isfinite(draws) ? 2.0 * t * b : 0.0) +
	       (double)spec->n;
}

static enum err_code
nseg_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	  const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct nseg_state *s = state;
	const struct objective *o = &spec->objective;
	struct nseg_setup su;
	struct run_plan mine;
	bool derived;
	enum err_code rc;

	/* Spend exactly what was charged: derive again from the plan's z. */
	rc = nseg_bounds(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived = nseg_schedule(spec, run_plan_value(plan, "noise_multiplier"), &su, NULL) ==
			  ERR_OK &&
		  nseg_fill_plan(spec, &su, &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;

	s->obj = o;
	s->ds = ds;
	s->rng = rng;
	s->dim = spec->dim;
	s->n = ds->n;
	s->b = su.batch;
	s->multi = su.variant == NSEG_MULTI_PASS;
	s->steps = su.iterations;
	s->clip = su.bound;
	s->sigma = su.sigma;
	s->step_size = su.step_size;
	s->lattice_k = su.lattice_k;
	s->vi = is_vi(spec);
	s->set.dim = spec->dim;
	if (s->vi) {
		s->set.nparts = 1;
		s->set.part[0] =
			(struct constraint_part){ su.bx.set, 0, spec->dim, "constraints.x" };
	} else {
		s->set.nparts = 2;
		s->set.part[0] =
			(struct constraint_part){ su.bx.set, 0, o->dim_x, "constraints.x" };
		s->set.part[1] =
			(struct constraint_part){ su.by.set, o->dim_x, o->dim_y, "constraints.y" };
	}
	rc = constraint_product_validate(&s->set, "constraints", e);
	if (rc != ERR_OK)
		return rc;

	s->order = calloc(s->n, sizeof(*s->order));
	s->u = calloc(s->dim, sizeof(*s->u));
	s->w = calloc(s->dim, sizeof(*s->w));
	s->avg = calloc(s->dim, sizeof(*s->avg));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->scratch = calloc(s->dim, sizeof(*s->scratch));
	if (s->order == NULL || s->u == NULL || s->w == NULL || s->avg == NULL || s->g == NULL ||
	    s->scratch == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the saddle.nseg state");
	constraint_product_project(&s->set, s->u, s->scratch); /* u_0 = Pi(0) */
	if (s->multi) {
		for (size_t i = 0; i < s->n; i++)
			s->order[i] = i;
	} else {
		onepass_order(rng, s->order, s->n, 2 * (size_t)su.iterations * su.batch);
	}
#ifdef DPOPT_TESTING
	s->hook = spec->testing_hook;
	rc = s->multi ? onepass_testing_sigma(s->hook, s->n, &s->sigma, e)
		      : onepass_testing_hook(s->hook, s->order, s->n, &s->sigma, e);
	if (rc != ERR_OK)
		return rc;
#endif
	return noise_dgauss_prepare_real(ldexp(s->sigma, s->lattice_k), &s->noise, e);
}

/* The records of evaluation k (0-based; two per iteration): the next
 * slice of the secret order (single pass), or a fresh uniform B-subset
 * without replacement (multi-pass; all n rows in order, no draws, when B =
 * n). */
static const size_t *
nseg_batch(struct nseg_state *s, unsigned long k)
{
	if (!s->multi)
		return s->order + (size_t)k * s->b;
	if (s->b == s->n)
		return NULL;
	onepass_order_partial(s->rng, s->order, s->n, s->b);
#ifdef DPOPT_TESTING
	/* Audits: the canary into the first evaluation's batch (slot 0 when
	 * the draw left it out), after the draw (same generator use). */
	if (k == 0 && s->hook != NULL && s->hook->place_first) {
		for (size_t i = 0; i < s->n; i++) {
			if (s->order[i] == s->hook->first_record) {
				if (i >= s->b) {
					s->order[i] = s->order[0];
					s->order[0] = s->hook->first_record;
				}
				break;
			}
		}
	}
#endif
	return s->order;
}

/* g <- the noisy batch operator of evaluation k at point v. */
static enum err_code
nseg_evaluate(struct nseg_state *s, unsigned long k, const double *v, struct err *e)
{
	const size_t *batch = nseg_batch(s, k);

	memset(s->g, 0, s->dim * sizeof(*s->g));
	if (s->vi)
		vi_batch_operator(s->obj, s->ds, batch, s->b, v, s->clip, s->scratch, s->g);
	else
		saddle_batch_operator(s->obj, s->ds, batch, s->b, v, s->clip, s->scratch, s->g);
	if (onepass_noisy_mean(s->rng, &s->noise, s->lattice_k, s->g, s->dim, s->b, e) != ERR_OK)
		return err_failed(e);
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL)
		s->hook->release(s->hook->ctx, k, s->g, s->dim);
#endif
	return ERR_OK;
}

static enum err_code
nseg_step(void *state, struct err *e)
{
	struct nseg_state *s = state;
	const size_t d = s->dim;
	bool finite = true;
	enum err_code rc;

	if (s->t >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	/* Extrapolation: w = Pi(u - gamma (F_B1(u) + xi1)). */
	rc = nseg_evaluate(s, 2 * s->t, s->u, e);
	if (rc != ERR_OK)
		return rc;
	for (size_t j = 0; j < d; j++)
		s->w[j] = s->u[j] - s->step_size * s->g[j];
	constraint_product_project(&s->set, s->w, s->scratch);
	/* Update from the old u: u = Pi(u - gamma (F_B2(w) + xi2)). */
	rc = nseg_evaluate(s, 2 * s->t + 1, s->w, e);
	if (rc != ERR_OK)
		return rc;
	for (size_t j = 0; j < d; j++)
		s->u[j] -= s->step_size * s->g[j];
	constraint_product_project(&s->set, s->u, s->scratch);
	/* The output averages the extrapolated points (constant gamma). */
	s->t++;
	for (size_t j = 0; j < d; j++) {
		s->avg[j] += (s->w[j] - s->avg[j]) / (double)s->t;
		finite = finite && isfinite(s->avg[j]) && isfinite(s->u[j]);
	}
	/* Only rounding can get here; fail with the generic error. */
	if (!finite)
		return err_set(e, ERR_INTERNAL, "the run failed");
	return ERR_OK;
}

static void
nseg_result(const void *state, double *ret_u)
{
	const struct nseg_state *s = state;

	memcpy(ret_u, s->avg, s->dim * sizeof(*ret_u));
}

static void
nseg_fini(void *state)
{
	struct nseg_state *s = state;

	free(s->order);
	free(s->u);
	free(s->w);
	free(s->avg);
	free(s->g);
	free(s->scratch);
	s->order = NULL;
	s->u = s->w = s->avg = s->g = s->scratch = NULL;
}

const struct alg_ops alg_saddle_nseg = {
	.name = "saddle.nseg",
	.version = 1,
	.doc = "Noisy stochastic extragradient for min over x max over y of a saddle objective "
	       "(or a monotone variational inequality: an operator objective over "
	       "'constraints.x' alone), Euclidean geometry: each iteration evaluates the "
	       "batch-mean operator (grad_x f, -grad_y f) at u, adds exact discrete Gaussian "
	       "noise, steps and projects to w, evaluates it again at w on another batch with "
	       "fresh noise and steps u from u; the result is the average of the points w.  "
	       "variant single_pass: 2T disjoint batches of a secret order, one Gaussian "
	       "mechanism on the sensitivity 2 M / B by parallel composition (strong-gap "
	       "guarantee).  variant multi_pass: every evaluation on its own uniform batch "
	       "without replacement (B = 1 and T = n^2 by default, Theta(n^2) work), 2T "
	       "sampled Gaussians composed in RDP (weak-gap guarantee).  The noise is "
	       "calibrated by the accountant of the dataset's ledger, never by the paper's "
	       "constants (its multi-pass noise is about 2.4x too small under a rigorous "
	       "accountant).",
	.paper = "D. Boob, C. Guzman, Optimal algorithms for differentially private stochastic "
		 "monotone variational inequalities and saddle-point problems, Mathematical "
		 "Programming Ser. A 2023, Algorithm 1, Corollary 1, Theorem 4; "
		 "accountant: Y.-X. Wang, B. Balle, S. Kasiviswanathan, AISTATS 2019; noise: "
		 "C. Canonne, G. Kamath, T. Steinke, NeurIPS 2020",
	.privacy_model = "(epsilon, delta)-DP, replace-one",
	.objectives = nseg_objectives,
	.constraints = NSEG_SETS,
	.params = nseg_params,
	.state_size = sizeof(struct nseg_state),
	.plan = nseg_plan,
	.work = nseg_work,
	.init = nseg_init,
	.step = nseg_step,
	.result = nseg_result,
	.fini = nseg_fini,
	.saddle = true,
	.constraints_y = NSEG_SETS,
	.vi = true,
};
