/*
 * sgd/one_pass.c - "dp_sgd.one_pass": differentially private projected
 * minibatch SGD over a convex set, one pass over the data.
 *
 * The run.  An order pi of the n records drawn independently of the data
 * is cut into T = floor(n / b) disjoint batches B_1..B_T of b consecutive
 * positions; the n - T b records left over are not used at all (reported
 * as "unused_records").  pi is the run's sequential order (row_order.h): a
 * rotation, a random permutation of blocks of about 1 MiB of rows and a
 * rotation inside each block, on top of the uniformly random order the
 * service stored the rows in when it loaded the sealed dataset, so that a
 * batch is read as a few contiguous runs of rows (docs/privacy-model.md
 * §1, "Sequential one-pass order").  From x_0 = Pi(0), for t = 1..T:
 *
 *	g_t     = (1/b) sum_{i in B_t} clip_G(grad l_i(x_{t-1}))
 *	x_t     = Pi(x_{t-1} - eta (g_t + N(0, sigma^2 I_p) + grad r(x_{t-1})))
 *	result  = (x_1 + ... + x_T) / T
 *
 * with l_i the record's weighted data term and r the public regularizer
 * of the objective instance (objective.h; p = its dim, d features plus an
 * intercept, times K for multiclass_logistic), Pi the exact Euclidean
 * projection onto the feasible set X of constraints.x (any kind of
 * constraint.h: l2, l1 or lp ball, simplex, box; R its largest l2 norm),
 * G the objective's lipschitz_l2 on X (the largest
 * class or group weight included) and clip_G(v) = v min(1, G / ||v||_2).
 * Every gradient already has norm <= G, so the clip is a guard that only
 * rounding can trigger: it makes the sensitivity below hold for the
 * floating-point values actually summed (up to the rounding of the clip).
 * Any objective with a finite lipschitz_l2 on the ball is accepted
 * (logistic, least_squares, hinge, huber, multiclass_logistic, and
 * log_optimal_portfolio on the simplex, where x_0 = Pi(0) is its centre
 * and every iterate keeps <r, x> >= s a); hinge is not smooth, which the
 * analysis below never needs.
 *
 * Privacy (replace-one, docs/privacy-model.md §1).  Fix the permutation (it
 * is independent of the data).  Replacing record i changes one batch mean
 * g_t, by at most Delta = 2G/b in l2, and no other: every other step sees
 * the same records and, given the same past outputs, the same iterate.
 * grad r(x_{t-1}) depends on the past output and public parameters only:
 * adding it after the noise is post-processing.  The class and group
 * weights are public request inputs, never computed from the rows.  So
 * the adaptive sequence of T Gaussian mechanisms on disjoint batches costs
 * what one Gaussian mechanism with noise multiplier z = sigma / Delta costs
 * (parallel composition; F. McSherry, "Privacy integrated queries",
 * SIGMOD 2009), and a mixture over permutations keeps the guarantee.  z is
 * calibrated on the exact curve (B. Balle, Y.-X. Wang, ICML 2018; see
 * privacy/analytic_gaussian.h); the event is {parallel, parts T: gaussian z}.
 * This is the one-pass scheme of S. Song, K. Chaudhuri, A. D. Sarwate,
 * "Stochastic gradient descent with differentially private updates",
 * GlobalSIP 2013, with replace-one sensitivity and exact calibration.
 *
 * Utility.  The noisy gradient is unbiased for the batch mean with
 * E||g_t + noise + grad r||^2 <= M^2 = (G + G_r)^2 + p sigma^2 (G_r the
 * regularizer's gradient bound on the ball), and ||x_0 - x*|| <= R, so
 * projected SGD with eta = R / (M sqrt(T)) has expected excess (population)
 * risk at most R M / sqrt(T) for the average of the query points
 * (A. Nemirovski, A. Juditsky, G. Lan, A. Shapiro, "Robust stochastic
 * approximation approach to stochastic programming", SIAM J. Optim. 19,
 * 2009); averaging x_1..x_T instead moves it by O(G R / T).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "privacy/noise.h"
#include "row_order.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_BATCH_SIZE, P_STEP_SIZE, P__COUNT };

static const struct alg_param sgd_params[P__COUNT + 1] = {
	[P_BATCH_SIZE] = { "batch_size", ALG_PARAM_INT, 0.0, 1e7, 0.0,
			   "records per step b, at most n; 0 = auto: ceil(2 z sqrt(p)), p the "
			   "model's dimension, "
			   "clamped to [1, n]",
			   NULL },
	[P_STEP_SIZE] = { "step_size", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			  "step size eta; 0 = auto: R / (sqrt((G + G_r)^2 + p sigma^2) sqrt(T))",
			  NULL },
	[P__COUNT] = { 0 },
};

static const char *const sgd_objectives[] = {
	"logistic", "least_squares",       "hinge",
	"huber",    "multiclass_logistic", "log_optimal_portfolio",
	NULL
};

/* Everything derived from the public spec: plan() calibrates z and
 * derives the rest (sgd_bounds, sgd_schedule); init() reads z back from the
 * plan and derives the rest again, without calibrating, to check that the
 * plan is this spec's. */
struct sgd_setup {
	double grad_bound;          /* G: per-record gradient norm bound on the ball */
	double reg_bound;           /* G_r: the regularizer's gradient norm bound on it */
	double z;                   /* noise multiplier sigma / Delta */
	double sensitivity;         /* Delta = 2 G / b, replace-one, of a batch mean */
	int lattice_k;              /* the noise lattice's step is 2^-k */
	double sensitivity_lattice; /* Delta + the rounding's 2^-k sqrt(d), rounded up */
	double sigma;               /* noise scale per coordinate: z Delta_lattice */
	double step_size;           /* eta */
	double radius;              /* R of the l2 ball */
	size_t batch;               /* b */
	unsigned long steps;        /* T = floor(n / b) */
};

struct sgd_state {
	const struct objective *obj; /* borrowed: the spec's instance, outlives the run */
	const struct dataset *ds;    /* borrowed: outlives the run */
	struct rng *rng;             /* borrowed: the run's generator */
	const struct alg_exec *exec; /* borrowed from the spec; NULL: serial */
	struct constraint ball;      /* the feasible set X */
	size_t dim;                  /* p: coordinates of the model */
	size_t b;
	unsigned long steps; /* T */
	unsigned long t;     /* steps done */
	double grad_bound;   /* G: the clip level */
	double sigma;
	double step_size;
	int lattice_k;              /* noise lattice step 2^-k */
	struct dgauss_params noise; /* N_Z(0, (sigma 2^k)^2), prepared once per run */
	struct onepass_noise nz;    /* owned: that noise drawn ahead (gauss_onepass.h) */
	struct row_order order;     /* owned: positions t b .. (t + 1) b - 1 are batch t + 1 */
	double *parts;              /* owned: row_order_parts(b, dim) * dim, the slices' sums */
	double *x;                  /* owned: current iterate, dim */
	double *avg;                /* owned: mean of x_1..x_t, dim */
	double *g;                  /* owned: noisy batch gradient, dim */
	double *scratch;            /* owned: dim, for the l1 ball and simplex projections */
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook; /* borrowed from the spec; may be NULL */
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

/* What comes before the noise: the batch size against n, R, G and G_r.
 * The driver has checked the generic rest (alg_check_spec). */
static enum err_code
sgd_bounds(const struct run_spec *spec, struct sgd_setup *ret, struct err *e)
{
	struct objective_constants oc;
	double b_param = spec->params[P_BATCH_SIZE];
	enum err_code rc;

	if (b_param > (double)spec->n)
		return err_set_field(
			e, ERR_INVALID, "params.batch_size",
			"'params.batch_size' (%.0f) exceeds the number of records (%zu)", b_param,
			spec->n);
	memset(ret, 0, sizeof(*ret));
	/* The step size needs D >= ||x_0 - x*||: R around a set centred at 0
	 * (the balls, a box around 0), else the diameter bound 2R. */
	ret->radius = constraint_l2_radius(&spec->x, spec->dim);
	if (!is_finite_pos(ret->radius))
		return err_set_field(
			e, ERR_INVALID, "constraints.x",
			"'constraints.x' must be a bounded set with a point other than 0");
	if (spec->x.kind == CONSTRAINT_SIMPLEX ||
	    (spec->x.kind == CONSTRAINT_BOX && !(spec->x.lo <= 0.0 && spec->x.hi >= 0.0)))
		ret->radius *= 2.0;
	rc = objective_constants(&spec->objective, &spec->schema, &spec->x, &oc, e);
	if (rc != ERR_OK)
		return rc;
	ret->grad_bound = oc.lipschitz_l2;
	ret->reg_bound = oc.reg_lipschitz_l2;
	if (!is_finite_pos(ret->grad_bound) || !(isfinite(ret->reg_bound) && ret->reg_bound >= 0.0))
		return err_set(e, ERR_NUMERIC,
			       "the gradient bound is not a finite positive number");
	return ERR_OK;
}

/* The schedule at noise multiplier z, on s from sgd_bounds(). */
static enum err_code
sgd_schedule(const struct run_spec *spec, double z, struct sgd_setup *s, struct err *e)
{
	double b_param = spec->params[P_BATCH_SIZE], eta_param = spec->params[P_STEP_SIZE];
	double p = (double)spec->dim;
	enum err_code rc;

	if (!is_finite_pos(z))
		return err_set(e, ERR_INTERNAL, "the noise multiplier is not finite and positive");
	s->z = z;
	/*
	 * Auto batch.  With T = n/b and sigma = 2 z G / b the bound R M / sqrt(T)
	 * above is (without a regularizer)
	 *	R sqrt(G^2 + 4 p z^2 G^2 / b^2) sqrt(b / n)
	 *	    = R G sqrt(b/n + 4 p z^2 / (n b)),
	 * the SGD term b/n growing and the noise term 4 p z^2 / (n b) falling
	 * in b.  The derivative 1/n - 4 p z^2 / (n b^2) vanishes at
	 * b = 2 z sqrt(p), where the two terms are equal and the bound is
	 * 2 R G (p z^2)^(1/4) / sqrt(n).  Rounded up, then clamped to [1, n].
	 */
	rc = onepass_batch(b_param, s->z, spec->dim, spec->n, &s->batch, e);
	if (rc != ERR_OK)
		return rc;
	s->steps = (unsigned long)(spec->n / s->batch);

	s->sensitivity = 2.0 * s->grad_bound / (double)s->batch;
	/* Exact discrete Gaussian noise on the lattice 2^-k Z^d (docs/privacy-model.md
	 * §6): rounding to the lattice adds at most 2^-k sqrt(p) <= 1e-6
	 * Delta to the l2 sensitivity, and the noise is calibrated to the
	 * inflated one. */
	rc = onepass_lattice(s->sensitivity, spec->dim, &s->lattice_k, &s->sensitivity_lattice, e);
	if (rc != ERR_OK)
		return rc;
	s->sigma = s->z * s->sensitivity_lattice;
	if (eta_param == 0.0)
		s->step_size =
			s->radius /
			(sqrt((s->grad_bound + s->reg_bound) * (s->grad_bound + s->reg_bound) +
			      p * s->sigma * s->sigma) *
			 sqrt((double)s->steps));
	else
		s->step_size = eta_param;
	if (!is_finite_pos(s->sensitivity) || !is_finite_pos(s->sigma) ||
	    !is_finite_pos(s->step_size))
		return err_set(e, ERR_NUMERIC,
			       "the noise or step size is not a finite positive number");
	return ERR_OK;
}

/* The plan of setup s: {parallel, parts T: gaussian z}, T batch means on
 * disjoint records, and the values the run uses. */
static enum err_code
sgd_fill_plan(const struct run_spec *spec, const struct sgd_setup *s, struct run_plan *ret,
	      struct err *e)
{
	enum err_code rc;

	/* The charge is met with room to spare: see sgd_plan(). */
	onepass_plan_start(ret, spec, s->steps, s->batch);
	rc = onepass_event(s->z, s->steps, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "grad_bound", s->grad_bound);
	onepass_plan_use_noise(ret, s->sensitivity, s->sensitivity_lattice, s->lattice_k, s->z,
			       s->sigma, s->step_size);
	run_plan_use(ret, "unused_records", (double)(spec->n - (size_t)s->steps * s->batch));
	return ERR_OK;
}

/*
 * Bounds, calibration, schedule, plan.  The noise multiplier z for the
 * spec's (epsilon, delta) under its accountant is the one calibration of a
 * run, made here only.  The service charges the shortest decimal that
 * reads back as the client's double, which may lie a little below that
 * double; onepass_calibrate() calibrates one ulp below both targets, so
 * the event meets (eps', delta') with eps' < eps and delta' < delta, hence
 * any decimal at least as large as those: on the exact analytic curve of
 * one Gaussian (Balle & Wang) on 'basic' datasets, on the RDP conversion
 * on 'renyi' ones.
 */
static enum err_code
sgd_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct sgd_setup s;
	struct run_plan p;
	const char *accountant = NULL;
	double z;
	enum err_code rc;

	rc = sgd_bounds(spec, &s, e);
	if (rc == ERR_OK)
		rc = onepass_calibrate(spec, &z, &accountant, e);
	if (rc == ERR_OK)
		rc = sgd_schedule(spec, z, &s, e);
	if (rc == ERR_OK)
		rc = sgd_fill_plan(spec, &s, &p, e);
	if (rc == ERR_OK) {
		p.accountant = accountant;
		*ret_plan = p;
	}
	return rc;
}

#ifdef DPOPT_TESTING
/*
 * The audits' hook (testing_hook.h), applied after the permutation was
 * drawn so that the generator is consumed exactly as in a normal run.  The
 * canary is swapped into slot 0, i.e. into the first batch B_1: the
 * privacy argument above conditions on the permutation, and the audit
 * measures the one Gaussian mechanism that sees the canary.  The scale
 * multiplies the sigma drawn, never the plan's.
 */
static enum err_code
testing_init(struct sgd_state *s, const struct alg_testing_hook *h, size_t n, struct err *e)
{
	enum err_code rc = onepass_testing_sigma(h, n, &s->sigma, e);

	s->hook = h;
	if (rc == ERR_OK && h != NULL && h->place_first)
		row_order_put_first(&s->order, h->first_record);
	return rc;
}
#endif

static enum err_code
sgd_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	 const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct sgd_state *s = state;
	struct sgd_setup su;
	struct run_plan mine;
	size_t n = ds->n, parts;
	bool derived;
	enum err_code rc;

	/* Spend exactly what was charged: the plan must be this spec's.  The
	 * schedule is derived again from the plan's own noise multiplier (no
	 * second calibration) and must give the plan back bit for bit. */
	rc = sgd_bounds(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived =
		sgd_schedule(spec, run_plan_value(plan, "noise_multiplier"), &su, NULL) == ERR_OK &&
		sgd_fill_plan(spec, &su, &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;

	s->obj = &spec->objective;
	s->ds = ds;
	s->rng = rng;
	s->exec = spec->exec;
	s->ball = spec->x;
	s->dim = spec->dim;
	s->b = su.batch;
	s->steps = su.steps;
	s->grad_bound = su.grad_bound;
	s->sigma = su.sigma;
	s->step_size = su.step_size;
	s->lattice_k = su.lattice_k;

	parts = row_order_parts(s->b, s->dim);
	s->parts = parts > 1 ? calloc(parts * s->dim, sizeof(*s->parts)) : NULL;
	s->x = calloc(s->dim, sizeof(*s->x));
	s->avg = calloc(s->dim, sizeof(*s->avg));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->scratch = calloc(s->dim, sizeof(*s->scratch));
	if ((parts > 1 && s->parts == NULL) || s->x == NULL || s->avg == NULL || s->g == NULL ||
	    s->scratch == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the dp_sgd.one_pass state");
	/* x_0 = Pi(0): 0 itself for the balls and a box around 0. */
	constraint_project(&s->ball, s->x, s->dim, s->scratch);

	/* The run's sequential order over the stored (seal-time shuffled)
	 * rows: public block length from n and d, randomness from rng. */
	rc = row_order_draw(&s->order, rng, n, row_order_block_len(n, ds->d, ds->layout), e);
	if (rc != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	rc = testing_init(s, spec->testing_hook, n, e);
	if (rc != ERR_OK)
		return rc;
#endif
	/* After the testing hook, which may scale sigma (mutation twins). */
	rc = noise_dgauss_prepare_real(ldexp(s->sigma, s->lattice_k), &s->noise, e);
	if (rc != ERR_OK)
		return rc;
	/* Every step's noise from a generator split off rng, drawn ahead on
	 * the executor's background thread when it has one. */
	return onepass_noise_init(&s->nz, rng, &s->noise, s->lattice_k, s->dim, s->steps, s->exec,
				  e);
}

static enum err_code
sgd_step(void *state, struct err *e)
{
	struct sgd_state *s = state;
	const size_t d = s->dim;
	bool finite = true;

	if (s->t >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");

	/* The sum of the batch's gradients, each clipped to G (the guard). */
	memset(s->g, 0, d * sizeof(*s->g));
	row_order_batch_grad(&s->order, s->obj, s->ds, s->t * s->b, s->b, s->x, s->grad_bound, s->g,
			     d, s->parts, s->exec);
	/* The mean is of gradients clipped to G: far inside the lattice's
	 * range, so a refusal here is a bug, reported like any failure. */
	if (onepass_noise_mean(&s->nz, s->g, s->b, e) != ERR_OK)
		return err_failed(e);
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL)
		s->hook->release(s->hook->ctx, s->t, s->g, d);
#endif
	/* The public regularizer at the current iterate, after the noise:
	 * post-processing of past outputs. */
	objective_reg_grad(s->obj, s->x, 1.0, s->g);

	for (size_t j = 0; j < d; j++)
		s->x[j] -= s->step_size * s->g[j];
	constraint_project(&s->ball, s->x, d, s->scratch);

	s->t++;
	for (size_t j = 0; j < d; j++) {
		s->avg[j] += (s->x[j] - s->avg[j]) / (double)s->t;
		finite = finite && isfinite(s->avg[j]);
	}
	/*
	 * Only rounding can get here (bounded rows, finite noise, a bounded
	 * ball), and failing is itself a release: fail with the generic error,
	 * nothing about when or where (docs/privacy-model.md §1).
	 */
	if (!finite)
		return err_set(e, ERR_INTERNAL, "the run failed");
	return ERR_OK;
}

static void
sgd_result(const void *state, double *ret_x)
{
	const struct sgd_state *s = state;

	memcpy(ret_x, s->avg, s->dim * sizeof(*ret_x));
}

static void
sgd_fini(void *state)
{
	struct sgd_state *s = state;

	onepass_noise_free(&s->nz);
	row_order_free(&s->order);
	free(s->parts);
	s->parts = NULL;
	free(s->x);
	free(s->avg);
	free(s->g);
	free(s->scratch);
	s->x = s->avg = s->g = NULL;
}

const struct alg_ops alg_sgd_one_pass = {
	.name = "dp_sgd.one_pass",
	/* 2: exact discrete Gaussian noise on a lattice; 3: objective instances
	 * (intercept, regularizers, weights; hinge, huber, multiclass), the
	 * batch gradient through objective_batch_grad; 4: the sequential
	 * order (row_order.h) and the batch split over the executor; 5: the
	 * noise drawn ahead with a split generator (onepass_noise); 6: that
	 * noise drawn by the batched sampler noise_dgauss_fill_batched() (the
	 * same law N_Z(0, sigma^2), other bits for a given seed) */
	.version = 6,
	.doc = "Projected noisy minibatch SGD over an l2 ball, one pass: a random order drawn "
	       "independently of the data (a rotation and a permutation of large row blocks over "
	       "the order the rows were shuffled into at load) splits the records into floor(n / "
	       "batch_size) disjoint batches "
	       "(the remaining n mod batch_size records are not used); each step adds exact "
	       "discrete Gaussian noise on a fine lattice to the clipped batch-mean gradient and "
	       "projects (a public regularizer's gradient is added after the noise); the result "
	       "is the average iterate.  Each record is used at most once, "
	       "so the run costs one Gaussian mechanism: its noise is calibrated to (epsilon, "
	       "delta) on the exact analytic curve on 'basic' datasets and on the RDP conversion "
	       "on 'renyi' ones.",
	.paper = "S. Song, K. Chaudhuri, A. D. Sarwate, Stochastic gradient descent with "
		 "differentially private updates, GlobalSIP 2013; noise: C. Canonne, G. Kamath, "
		 "T. Steinke, The discrete Gaussian for differential privacy, NeurIPS 2020; "
		 "calibration: B. Balle, Y.-X. Wang, ICML 2018",
	.privacy_model = "(epsilon, delta)-DP, replace-one",
	.objectives = sgd_objectives,
	.constraints = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		       (1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_SIMPLEX) |
		       (1u << CONSTRAINT_BOX),
	.params = sgd_params,
	.state_size = sizeof(struct sgd_state),
	.plan = sgd_plan,
	.work = onepass_work,
	.init = sgd_init,
	.step = sgd_step,
	.result = sgd_result,
	.fini = sgd_fini,
};
