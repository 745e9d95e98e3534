/*
 * saddle/sgda_one_pass.c - "saddle.sgda_one_pass": the one-pass noisy
 * stochastic gradient descent-ascent baseline (docs/algorithms/saddle.md
 * §5; R. Bassily, C. Guzman, M. Menart, "Differentially private
 * algorithms for the stochastic saddle point problem with optimal rates
 * for the strong gap", COLT 2023, Appendix A.2 and Corollary 2), with
 * minibatches.
 *
 * The run.  A saddle objective (saddle.h) over X x Y, u = (x, y) of
 * dimension p = dim_x + dim_y, operator g(u; z) = (grad_x f, -grad_y f).
 * An order of the n records drawn independently of the data is cut into
 * T = floor(n / b) disjoint batches B_1..B_T of b consecutive positions
 * (the n - T b left over are not used, "unused_records"): the sequential
 * order of row_order.h over the rows the service shuffled at load, as in
 * dp_sgd.one_pass (docs/privacy-model.md §1, "Sequential one-pass
 * order"), so that each batch is read as a few runs of consecutive rows.  From u_0 = Pi(0), for t
 *= 1..T:
 *
 *	G_t     = (1/b) sum_{i in B_t} clip_L(g(u_{t-1}; z_i))
 *	u_t     = Pi(u_{t-1} - eta (G_t + N(0, sigma^2 I_p)))
 *	result  = (u_0 + ... + u_{T-1}) / T   (docs/algorithms/saddle.md §5)
 *
 * with Pi the blockwise Euclidean projection onto X x Y (a descent step in
 * x, an ascent step in y: the operator carries -grad_y), L the joint
 * Lipschitz bound of the operator from the declared bounds
 * (saddle_constants: sqrt(L_x^2 + L_y^2), docs/algorithms/saddle.md §2) and
 * clip_L the rounding guard as in dp_sgd.one_pass.
 *
 * Privacy (replace-one).  Fix the order (independent of the data).
 * Replacing one record changes one batch mean G_t, by at most Delta =
 * 2 L / b in l2, and no other: the other steps see the same records and,
 * given the same past outputs, the same iterate.  So the T Gaussian
 * releases on disjoint batches cost one Gaussian mechanism with noise
 * multiplier z = sigma / Delta (parallel composition), calibrated exactly
 * (gauss_onepass.h); the event is {parallel, parts T: gaussian z}; the
 * noise is the lattice discrete Gaussian of the noise module.  The
 * paper's one-record step (sensitivity 2L) is the b = 1 case.  The
 * paper's sigma = L sqrt(log(1/delta)) / epsilon drops the factor 2 of
 * replace-one and the constant of the Gaussian mechanism
 * (docs/algorithms/saddle.md §7); here sigma comes from the exact curve.
 *
 * Utility.  G_t + noise is unbiased for the operator of the population
 * (fresh records) with E||. - G||^2 <= tau^2 = L^2 + p sigma^2, and Lemma 9
 * of the paper gives E[F(u_bar_x, y) - F(x, u_bar_y)] <= D^2 / (2 eta T) +
 * eta (L^2 + tau^2) / 2 (the paper prints 2nT for 2 eta T;
 * docs/algorithms/saddle.md §7);
 * with D >= ||u_0 - u|| (D^2 = D_x^2 + D_y^2, each the set's l2 radius, or
 * twice it for a simplex or a box not around 0) the choice eta = D /
 * sqrt(T (L^2 + p sigma^2)) gives O(D sqrt(L^2 + p sigma^2) / sqrt(T)).
 *
 * VI mode (alg_ops.vi).  With an operator objective (vi.h) the variable
 * is one block u over one set U ("constraints.x"), g(u; z) = F(u; z), Pi
 * the projection onto U, L the operator's norm bound (vi_constants) and D
 * the set's l2 radius (twice it as above).  The step, the event and the
 * sensitivity 2 L / b are the same; the averaged iterate bounds the weak
 * VI gap the same way (docs/algorithms/saddle.md §9).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "privacy/noise.h"
#include "row_order.h"
#include "vi.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_BATCH_SIZE, P_STEP_SIZE, P__COUNT };

static const struct alg_param sgda_params[P__COUNT + 1] = {
	[P_BATCH_SIZE] = { "batch_size", ALG_PARAM_INT, 0.0, 1e7, 0.0,
			   "records per step b, at most n; 0 = auto: ceil(2 z sqrt(p)), p = "
			   "dim_x + dim_y, clamped to [1, n]",
			   NULL },
	[P_STEP_SIZE] = { "step_size", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			  "step size eta; 0 = auto: D / (sqrt(L^2 + p sigma^2) sqrt(T))", NULL },
	[P__COUNT] = { 0 },
};

static const char *const sgda_objectives[] = { "bilinear",
					       "worst_group_logistic",
					       "matrix_game",
					       "quadratic_game",
					       "fair_logistic_lagrangian",
					       "auc_minimax",
					       "bilinear_vi",
					       "affine_vi",
					       NULL };

#define ALL_SETS                                                                                   \
	((1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_LP_BALL) |    \
	 (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX))

/* Everything derived from the public spec: plan() calibrates z and
 * derives the rest (sgda_bounds, sgda_schedule); init() reads z back from
 * the plan and derives the rest again, without calibrating, to check that
 * the plan is this spec's. */
struct sgda_setup {
	struct saddle_block bx, by;
	double lipschitz;           /* L: joint operator bound, the clip level */
	double z;                   /* noise multiplier */
	double sensitivity;         /* Delta = 2 L / b */
	int lattice_k;              /* lattice step 2^-k */
	double sensitivity_lattice; /* Delta raised by the rounding */
	double sigma;               /* per coordinate */
	double distance;            /* D */
	double step_size;           /* eta */
	size_t batch;
	unsigned long steps;
};

struct sgda_state {
	const struct objective *obj; /* borrowed: the spec's */
	const struct dataset *ds;    /* borrowed */
	struct rng *rng;             /* borrowed */
	struct constraint_product set;
	size_t dim;
	size_t b;
	bool vi; /* operator objective: one set, the operator F (vi.h) */
	unsigned long steps, t;
	double clip, sigma, step_size;
	int lattice_k;
	struct dgauss_params noise;
	struct row_order order; /* owned: positions t b .. (t + 1) b - 1 are batch t + 1 */
	double *u;              /* owned: dim, current iterate */
	double *avg;            /* owned: dim, mean of u_0..u_{t-1} */
	double *g;              /* owned: dim, noisy batch operator */
	double *scratch;        /* owned: dim, per-record operator and projections */
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook; /* borrowed; may be NULL */
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

/* An operator objective (vi.h): one set, u = x. */
static bool
is_vi(const struct run_spec *spec)
{
	return spec->objective.ops != NULL && spec->objective.ops->kind == OBJECTIVE_OPERATOR;
}

/* D_b >= ||b_0 - b|| for b_0 = Pi(0): the radius around 0, else twice. */
static double
block_distance(const struct constraint *c, size_t d)
{
	double r = constraint_l2_radius(c, d);

	if (c->kind == CONSTRAINT_SIMPLEX ||
	    (c->kind == CONSTRAINT_BOX && !(c->lo <= 0.0 && c->hi >= 0.0)))
		r *= 2.0;
	return r;
}

/* What comes before the noise: the blocks, the batch size against n, L
 * and D.  The driver has checked the generic rest (alg_check_spec: the
 * objective, both sets and their geometries, epsilon, delta, the
 * parameters against the schema). */
static enum err_code
sgda_bounds(const struct run_spec *spec, struct sgda_setup *ret, struct err *e)
{
	const struct objective *obj = &spec->objective;
	struct saddle_constants sc;
	enum err_code rc;

	if (spec->params[P_BATCH_SIZE] > (double)spec->n)
		return err_set_field(
			e, ERR_INVALID, "params.batch_size",
			"'params.batch_size' (%.0f) exceeds the number of records (%zu)",
			spec->params[P_BATCH_SIZE], spec->n);
	memset(ret, 0, sizeof(*ret));
	ret->bx = (struct saddle_block){ spec->x, spec->geometry_x };
	ret->by = (struct saddle_block){ spec->y, spec->geometry_y };
	if (is_vi(spec)) {
		/* VI mode: one set U, the operator's norm bound (vi.h). */
		struct vi_constants vc;

		rc = vi_constants(obj, &spec->schema, &spec->x, &vc, e);
		if (rc != ERR_OK)
			return rc;
		ret->lipschitz = vc.lipschitz_l2;
		ret->distance = block_distance(&ret->bx.set, obj->dim);
	} else {
		rc = saddle_constants(obj, &spec->schema, &ret->bx, &ret->by, &sc, e);
		if (rc != ERR_OK)
			return rc;
		ret->lipschitz = sc.lipschitz_l2;
		ret->distance = hypot(block_distance(&ret->bx.set, obj->dim_x),
				      block_distance(&ret->by.set, obj->dim_y));
	}
	if (!is_finite_pos(ret->lipschitz))
		return err_set(e, ERR_NUMERIC,
			       "the operator bound is not a finite positive number");
	if (!is_finite_pos(ret->distance))
		return err_set(e, ERR_NUMERIC,
			       "the distance bound is not a finite positive number");
	return ERR_OK;
}

/* The schedule at noise multiplier z, on s from sgda_bounds(). */
static enum err_code
sgda_schedule(const struct run_spec *spec, double z, struct sgda_setup *s, struct err *e)
{
	enum err_code rc;

	if (!is_finite_pos(z))
		return err_set(e, ERR_INTERNAL, "the noise multiplier is not finite and positive");
	s->z = z;
	rc = onepass_batch(spec->params[P_BATCH_SIZE], z, spec->dim, spec->n, &s->batch, e);
	if (rc != ERR_OK)
		return rc;
	s->steps = (unsigned long)(spec->n / s->batch);
	s->sensitivity = 2.0 * s->lipschitz / (double)s->batch;
	rc = onepass_lattice(s->sensitivity, spec->dim, &s->lattice_k, &s->sensitivity_lattice, e);
	if (rc != ERR_OK)
		return rc;
	s->sigma = s->z * s->sensitivity_lattice;
	if (spec->params[P_STEP_SIZE] == 0.0)
		s->step_size = s->distance / (sqrt(s->lipschitz * s->lipschitz +
						   (double)spec->dim * s->sigma * s->sigma) *
					      sqrt((double)s->steps));
	else
		s->step_size = spec->params[P_STEP_SIZE];
	if (!is_finite_pos(s->sigma) || !is_finite_pos(s->step_size))
		return err_set(e, ERR_NUMERIC,
			       "the noise or step size is not a finite positive number");
	return ERR_OK;
}

/* The plan of setup s: the event, the charge and the values the run uses. */
static enum err_code
sgda_fill_plan(const struct run_spec *spec, const struct sgda_setup *s, struct run_plan *ret,
	       struct err *e)
{
	enum err_code rc;

	onepass_plan_start(ret, spec, s->steps, s->batch);
	rc = onepass_event(s->z, s->steps, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "operator_bound", s->lipschitz);
	onepass_plan_use_noise(ret, s->sensitivity, s->sensitivity_lattice, s->lattice_k, s->z,
			       s->sigma, s->step_size);
	run_plan_use(ret, "distance", s->distance);
	/* VI mode: u is the one block x. */
	run_plan_use(ret, "dim_x", (double)(is_vi(spec) ? spec->dim : spec->objective.dim_x));
	run_plan_use(ret, "dim_y", (double)(is_vi(spec) ? 0 : spec->objective.dim_y));
	run_plan_use(ret, "unused_records", (double)(spec->n - (size_t)s->steps * s->batch));
	return ERR_OK;
}

/* Bounds, the run's one calibration (onepass_calibrate), schedule, plan. */
static enum err_code
sgda_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct sgda_setup s;
	struct run_plan p;
	const char *accountant = NULL;
	double z;
	enum err_code rc;

	rc = sgda_bounds(spec, &s, e);
	if (rc == ERR_OK)
		rc = onepass_calibrate(spec, &z, &accountant, e);
	if (rc == ERR_OK)
		rc = sgda_schedule(spec, z, &s, e);
	if (rc == ERR_OK)
		rc = sgda_fill_plan(spec, &s, &p, e);
	if (rc == ERR_OK) {
		p.accountant = accountant;
		*ret_plan = p;
	}
	return rc;
}

static enum err_code
sgda_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	  const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct sgda_state *s = state;
	const struct objective *o = &spec->objective;
	struct sgda_setup su;
	struct run_plan mine;
	bool derived;
	enum err_code rc;

	/* Spend exactly what was charged: the plan must be this spec's.  The
	 * schedule is derived again from the plan's own noise multiplier (no
	 * second calibration) and must give the plan back bit for bit. */
	rc = sgda_bounds(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived = sgda_schedule(spec, run_plan_value(plan, "noise_multiplier"), &su, NULL) ==
			  ERR_OK &&
		  sgda_fill_plan(spec, &su, &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;

	s->obj = o;
	s->ds = ds;
	s->rng = rng;
	s->dim = spec->dim;
	s->b = su.batch;
	s->steps = su.steps;
	s->clip = su.lipschitz;
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

	s->u = calloc(s->dim, sizeof(*s->u));
	s->avg = calloc(s->dim, sizeof(*s->avg));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->scratch = calloc(s->dim, sizeof(*s->scratch));
	if (s->u == NULL || s->avg == NULL || s->g == NULL || s->scratch == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the saddle.sgda_one_pass state");
	constraint_product_project(&s->set, s->u, s->scratch); /* u_0 = Pi(0) */
	rc = row_order_draw(&s->order, rng, ds->n, row_order_block_len(ds->n, ds->d, ds->layout),
			    e);
	if (rc != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	/* The canary into the first batch, as onepass_testing_hook does. */
	s->hook = spec->testing_hook;
	rc = onepass_testing_sigma(s->hook, ds->n, &s->sigma, e);
	if (rc != ERR_OK)
		return rc;
	if (s->hook != NULL && s->hook->place_first)
		row_order_put_first(&s->order, s->hook->first_record);
#endif
	return noise_dgauss_prepare_real(ldexp(s->sigma, s->lattice_k), &s->noise, e);
}

static enum err_code
sgda_step(void *state, struct err *e)
{
	struct sgda_state *s = state;
	const size_t d = s->dim;
	bool finite = true;

	if (s->t >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");

	/* The query point u_t joins the average before the step (Lemma 9). */
	s->t++;
	for (size_t j = 0; j < d; j++) {
		s->avg[j] += (s->u[j] - s->avg[j]) / (double)s->t;
		finite = finite && isfinite(s->avg[j]);
	}
	memset(s->g, 0, d * sizeof(*s->g));
	/* The batch, range of consecutive rows after range. */
	for (size_t pos = (s->t - 1) * s->b, end = pos + s->b; pos < end;) {
		struct dataset v;
		size_t first, c = row_order_run(&s->order, pos, end - pos, &first);

		dataset_rows_view(s->ds, first, c, &v);
		if (s->vi)
			vi_batch_operator(s->obj, &v, NULL, c, s->u, s->clip, s->scratch, s->g);
		else
			saddle_batch_operator(s->obj, &v, NULL, c, s->u, s->clip, s->scratch, s->g);
		pos += c;
	}
	if (onepass_noisy_mean(s->rng, &s->noise, s->lattice_k, s->g, d, s->b, e) != ERR_OK)
		return err_failed(e);
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL)
		s->hook->release(s->hook->ctx, s->t - 1, s->g, d);
#endif
	for (size_t j = 0; j < d; j++)
		s->u[j] -= s->step_size * s->g[j];
	constraint_product_project(&s->set, s->u, s->scratch);
	/* Only rounding can get here; fail with the generic error. */
	if (!finite)
		return err_set(e, ERR_INTERNAL, "the run failed");
	return ERR_OK;
}

static void
sgda_result(const void *state, double *ret_u)
{
	const struct sgda_state *s = state;

	memcpy(ret_u, s->avg, s->dim * sizeof(*ret_u));
}

static void
sgda_fini(void *state)
{
	struct sgda_state *s = state;

	row_order_free(&s->order);
	free(s->u);
	free(s->avg);
	free(s->g);
	free(s->scratch);
	s->u = s->avg = s->g = s->scratch = NULL;
}

const struct alg_ops alg_saddle_sgda_one_pass = {
	.name = "saddle.sgda_one_pass",
	.version = 2, /* 2: the sequential order (row_order.h) */
	.doc = "Noisy stochastic gradient descent-ascent for min over x max over y of a saddle "
	       "objective, one pass: a random order drawn independently of the data (a rotation "
	       "and a permutation of large row blocks over the order the rows were shuffled into "
	       "at load) splits the records into "
	       "floor(n / batch_size) disjoint batches; each step adds exact discrete Gaussian "
	       "noise on a fine lattice to the clipped batch-mean operator (grad_x f, -grad_y f) "
	       "and projects x and y onto their sets; the result is the average of the query "
	       "points, returned as its blocks x and y.  Each record is used at most once, so "
	       "the run costs one Gaussian mechanism on the operator's replace-one sensitivity "
	       "2 L / b, calibrated on the exact curve ('basic') or the RDP conversion "
	       "('renyi').  With an operator objective (VI mode, 'constraints.x' only) the "
	       "same step on the operator F over one set, the averaged point returned as x.",
	.paper = "R. Bassily, C. Guzman, M. Menart, Differentially private algorithms for the "
		 "stochastic saddle point problem with optimal rates for the strong gap, COLT "
		 "2023 (arXiv 2302.12909), Appendix A.2, with minibatches; noise: C. Canonne, "
		 "G. Kamath, T. Steinke, NeurIPS 2020",
	.privacy_model = "(epsilon, delta)-DP, replace-one",
	.objectives = sgda_objectives,
	.constraints = ALL_SETS,
	.params = sgda_params,
	.state_size = sizeof(struct sgda_state),
	.plan = sgda_plan,
	.work = onepass_work,
	.init = sgda_init,
	.step = sgda_step,
	.result = sgda_result,
	.fini = sgda_fini,
	.saddle = true,
	.constraints_y = ALL_SETS,
	.vi = true,
};
