/*
 * mirror_descent/noisy.c - "mirror_descent.noisy": noisy mirror descent
 * in l1 (and lp) geometry, many passes, amplified by sampling
 * (H. Asi, V. Feldman, T. Koren, K. Talwar, "Private stochastic convex
 * optimization: optimal rates in l1 geometry", ICML 2021, Algorithm 1 and
 * its general-p form Algorithm 5; docs/algorithms/l1-mirror-descent.md).
 *
 * The map h(x) = c ||x - x_0||_p^2 (algorithms/mirror.h), centred at the
 * start x_0 (0 for the balls, the simplex's centre scale/d 1):
 *	l1 ball, simplex:  p = 1 + 1/max(ln d, 1), c = kappa_p^2 / (2 (p - 1)),
 *	                   1-strongly convex w.r.t. ||.||_1 (Algorithm 1);
 *	lp ball (p'):      p = p', c = 1 / (2 (p - 1)), 1-strongly convex
 *	                   w.r.t. ||.||_p (Algorithm 5); an l2 ball is the lp
 *	                   ball with p' = 2 (projected noisy SGD).
 * T steps; at step t a fresh batch B_t, a uniformly random b-subset of the
 * n records drawn without replacement and independently of every other
 * step (a partial Fisher-Yates over a persistent index array, with the
 * run's secret generator), and from x_1 = x_0:
 *
 *	g_t     = (1/b) sum_{i in B_t} clip_C(grad l_i(x_t)) + N(0, sigma^2 I)
 *	x_{t+1} = argmin_{x in X} <g_t + grad r(x_t), x> + (1/gamma) D_h(x, x_t)
 *	        = MS(grad h(x_t) - gamma (g_t + grad r(x_t)))  (mirror_pnorm_step)
 *	result  = (1/T) sum_{t=1..T} x_t
 *
 * with l_i the record's data term, r the public regularizer (exact, never
 * clipped or noised), clip_C the l2 clip.
 *
 * Privacy (replace-one, docs/privacy-model.md §1).  Replacing one record
 * changes a batch mean that contains it by at most Delta = 2C/b in l2;
 * each step is a Gaussian mechanism of noise multiplier z = sigma b / (2C)
 * on a uniform b-subset drawn without replacement, and the steps compose
 * adaptively: the event is
 *	self_composed(sampled_without_replacement(n, b, gaussian(z)), T)
 * (self_composed(gaussian(z), T) when b = n), calibrated by calibrate() on
 * the dataset's accounting mode, as dp_sgd.subsampled.  The mirror steps
 * and the average are post-processing.  The paper's sampling (i.i.d. with
 * replacement) and its constant 100 in sigma are not used
 * (algorithms/mirror_descent/README.md).
 *
 * Defaults from public inputs (README.md there): the clip
 * C = min(G, L_inf sqrt(dim)), T = clamp(ceil(rho n^2 / N_*), 3, 1000)
 * with N_* = E||zeta||_*^2 / sigma^2 the dual norm's noise factor,
 * b = n while (n + 64) T dim <= 1e9, and the step size of Theorem 3,
 * gamma = 4 (D / sqrt T) / sqrt(L^2 + N_* sigma^2), D^2 = sup_X h (4 times
 * Theorem 3's, measured).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "mirror.h"
#include "mirror_descent/md.h"
#include "privacy/noise.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_BATCH_SIZE, P_STEPS, P_STEP_SIZE, P_CLIP, P__COUNT };

#define NMD_MAX_STEPS        1e8
#define NMD_MIN_STEPS        3.0
#define NMD_MAX_AUTO_STEPS   1000.0
#define NMD_MAX_AUTO_SAMPLED 2000.0
#define NMD_WORK             1e9
#define NMD_STEP_OPS         64.0 /* a mirror step's cost, in records */
/* A mirror step's cost in work() (records of d coordinates): the nested
 * root finding of an lp or l2 ball's step measured 170 us at d = 50, as
 * much as about 250 records (the start-up benchmark, service/work_rate.c);
 * an overestimate for the l1 ball and the simplex. */
#define NMD_WORK_STEP_OPS 256.0
/* The automatic step size is Theorem 3's times this: its bound uses the
 * worst-case L and D (the measurements in
 * docs/algorithms/l1-mirror-descent.md: 4 cut the excess loss by 1.3x at
 * epsilon = 1 and 2.6x at epsilon = 1e4, n = 2000, and was neutral at
 * n = 250). */
#define NMD_STEP_SCALE 4.0

static const struct alg_param nmd_params[P__COUNT + 1] = {
	[P_BATCH_SIZE] = { "batch_size", ALG_PARAM_INT, 0.0, 1e7, 0.0,
			   "records per step b, at most n, drawn without replacement; 0 = auto: "
			   "n while (n + 64) T dim <= 1e9, else max(ceil(1e9 / (T dim)) - 64, "
			   "ceil(sqrt(n)))",
			   NULL },
	[P_STEPS] = { "steps", ALG_PARAM_INT, 0.0, NMD_MAX_STEPS, 0.0,
		      "number of steps T; 0 = auto: clamp(ceil(rho n^2 / N), 3, 1000), N = 2 "
		      "ln(2 dim) + 2 (l1 ball, simplex) or dim^(2/q) (E|N(0,1)|^q)^(2/q) (lp "
		      "ball), "
		      "rho the zCDP of (epsilon, delta); with batch_size given min(ceil(n^2 / "
		      "b^2), 2000) (Theorem 3's T, capped)",
		      NULL },
	[P_STEP_SIZE] = { "step_size", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			  "mirror step size gamma; 0 = auto: 4 (D / sqrt(T)) / sqrt(L^2 + N "
			  "sigma^2), D^2 = sup over the set of h(x) (Theorem 3's, times 4)",
			  NULL },
	[P_CLIP] = { "clip", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
		     "per-record l2 clip C (the sensitivity is 2C/b); 0 = auto: min(G, L_inf "
		     "sqrt(dim)) from the declared bounds, and never above it",
		     NULL },
	[P__COUNT] = { 0 },
};

static const char *const nmd_objectives[] = {
	"logistic", "least_squares",       "hinge",
	"huber",    "multiclass_logistic", "log_optimal_portfolio",
	NULL
};

struct nmd_setup {
	struct md_geom g;
	double map_c;   /* h = c ||x - x_0||_p^2 */
	double dist_sq; /* D^2 = sup over the set of h */
	size_t batch;   /* b */
	unsigned long steps;
	double z;
	double sensitivity;
	int lattice_k;
	double sensitivity_lattice;
	double sigma;
	double step_size;
};

struct nmd_state {
	const struct objective *obj;
	const struct dataset *ds; /* borrowed */
	struct rng *rng;          /* borrowed */
	struct constraint set;
	struct mirror_pnorm map;
	size_t dim, n, b;
	unsigned long steps, t;
	double clip, sigma, step_size;
	int lattice_k;
	struct dgauss_params noise;
	size_t *idx;   /* owned: n entries, a permutation of 0..n-1 */
	double *x0;    /* owned: the centre */
	double *x;     /* owned */
	double *avg;   /* owned */
	double *g;     /* owned */
	double *theta; /* owned: scratch of the mirror step */
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook; /* borrowed; may be NULL */
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

static double
target_rho(double eps, double delta)
{
	double l = log(1.0 / delta), r = sqrt(eps + l) - sqrt(l);

	return r * r;
}

static enum err_code
nmd_bounds(const struct run_spec *spec, struct nmd_setup *s, struct err *e)
{
	double r;
	enum err_code rc;

	memset(s, 0, sizeof(*s));
	if (spec->params[P_BATCH_SIZE] > (double)spec->n)
		return err_set_field(
			e, ERR_INVALID, "params.batch_size",
			"'params.batch_size' (%.0f) exceeds the number of records (%zu)",
			spec->params[P_BATCH_SIZE], spec->n);
	rc = md_geometry(spec, spec->params[P_CLIP], &s->g, e);
	if (rc != ERR_OK)
		return rc;
	s->map_c = s->g.lp ? 1.0 / (2.0 * (s->g.p - 1.0))
			   : s->g.kappa * s->g.kappa / (2.0 * (s->g.p - 1.0));
	r = md_radius_p(&spec->x, spec->dim, s->g.p);
	s->dist_sq = s->map_c * r * r;
	if (!is_finite_pos(s->dist_sq))
		return err_set(e, ERR_NUMERIC, "the set's radius is not usable");
	return ERR_OK;
}

/* The whole-data steps of the default rule: T = clamp(ceil(rho n^2 / N),
 * 3, 1000).  Full-batch steps at zCDP rho have noise sigma = z 2C/n with
 * z^2 = T / (2 rho), so the noise term of Theorem 3's bound, N sigma^2 / T
 * = 2 N C^2 / (rho n^2), does not depend on T, and this T makes the
 * clean term L^2 / T (L <= C) at most half of it. */
static double
nmd_auto_steps(const struct run_spec *spec, const struct nmd_setup *s)
{
	double n = (double)spec->n, t;

	t = ceil(target_rho(spec->epsilon, spec->delta) * n * n / s->g.noise_dual);
	t = fmin(fmax(t, NMD_MIN_STEPS), NMD_MAX_AUTO_STEPS);
	return isfinite(t) ? t : NMD_MIN_STEPS;
}

static enum err_code
nmd_schedule_bt(const struct run_spec *spec, struct nmd_setup *s, struct err *e)
{
	double n = (double)spec->n, p = (double)spec->dim, bf = spec->params[P_BATCH_SIZE];
	double tf = spec->params[P_STEPS], tfull = nmd_auto_steps(spec, s);

	if (bf == 0.0) {
		if (tf == 0.0)
			tf = tfull;
		bf = n;
		if ((n + NMD_STEP_OPS) * tf * p > NMD_WORK)
			bf = fmin(n, fmax(ceil(NMD_WORK / (tf * p)) - NMD_STEP_OPS, ceil(sqrt(n))));
		bf = fmax(1.0, bf);
	} else if (tf == 0.0) {
		tf = fmin(ceil(n * n / (bf * bf)), NMD_MAX_AUTO_SAMPLED);
	}
	if (!(bf >= 1.0 && bf <= n))
		return err_set(e, ERR_INTERNAL, "batch size out of range");
	if (!(tf >= 1.0 && tf <= NMD_MAX_STEPS))
		return err_set_field(e, ERR_INVALID, "params.steps",
				     "'params.steps': the run would take %.0f steps", tf);
	s->batch = (size_t)bf;
	s->steps = (unsigned long)tf;
	return ERR_OK;
}

/* The rest of the schedule at noise multiplier z. */
static enum err_code
nmd_schedule(const struct run_spec *spec, double z, struct nmd_setup *s, struct err *e)
{
	double L = s->g.lip;
	enum err_code rc;

	if (!is_finite_pos(z))
		return err_set(e, ERR_INTERNAL, "the noise multiplier is not finite and positive");
	s->z = z;
	s->sensitivity = 2.0 * s->g.clip / (double)s->batch;
	rc = onepass_lattice(s->sensitivity, spec->dim, &s->lattice_k, &s->sensitivity_lattice, e);
	if (rc != ERR_OK)
		return rc;
	s->sigma = z * s->sensitivity_lattice;
	if (spec->params[P_STEP_SIZE] == 0.0)
		s->step_size = NMD_STEP_SCALE * sqrt(s->dist_sq) / sqrt((double)s->steps) /
			       sqrt(L * L + s->g.noise_dual * s->sigma * s->sigma);
	else
		s->step_size = spec->params[P_STEP_SIZE];
	if (!is_finite_pos(s->sensitivity) || !is_finite_pos(s->sigma) ||
	    !is_finite_pos(s->step_size))
		return err_set(e, ERR_NUMERIC,
			       "the noise or step size is not a finite positive number");
	return ERR_OK;
}

static enum err_code
nmd_fill_plan(const struct run_spec *spec, const struct nmd_setup *s, struct run_plan *ret,
	      struct err *e)
{
	enum err_code rc;

	onepass_plan_start(ret, spec, s->steps, s->batch);
	rc = md_phase_event(spec->n, s->batch, s->steps, s->z, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "sampling_rate", (double)s->batch / (double)spec->n);
	run_plan_use(ret, "grad_bound", s->g.grad_bound);
	run_plan_use(ret, "clip", s->g.clip);
	run_plan_use(ret, "lipschitz", s->g.lip);
	run_plan_use(ret, "mirror_p", s->g.p);
	run_plan_use(ret, "mirror_c", s->map_c);
	run_plan_use(ret, "distance_sq", s->dist_sq);
	onepass_plan_use_noise(ret, s->sensitivity, s->sensitivity_lattice, s->lattice_k, s->z,
			       s->sigma, s->step_size);
	return ERR_OK;
}

static enum err_code
nmd_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct nmd_setup s;
	struct run_plan p;
	const char *accountant = NULL;
	double z = 0.0;
	enum err_code rc;

	rc = nmd_bounds(spec, &s, e);
	if (rc == ERR_OK)
		rc = nmd_schedule_bt(spec, &s, e);
	if (rc == ERR_OK)
		rc = md_calibrate(spec, spec->epsilon, spec->n, s.batch, s.steps, &z, &accountant,
				  e);
	if (rc == ERR_OK)
		rc = nmd_schedule(spec, z, &s, e);
	if (rc == ERR_OK)
		rc = nmd_fill_plan(spec, &s, &p, e);
	if (rc == ERR_OK) {
		p.accountant = accountant;
		*ret_plan = p;
	}
	return rc;
}

static double
nmd_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double b = run_plan_value(plan, "batch_size");

	if (!isfinite(b))
		b = 1.0;
	return (double)plan->steps * (b + NMD_WORK_STEP_OPS) * (double)spec->dim;
}

static enum err_code
nmd_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	 const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct nmd_state *s = state;
	struct nmd_setup su;
	struct run_plan mine;
	size_t n = ds->n;
	bool derived;
	enum err_code rc;

	/* Spend exactly what was charged: derive the schedule again from the
	 * plan's own noise multiplier (no second calibration). */
	rc = nmd_bounds(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived =
		nmd_schedule_bt(spec, &su, NULL) == ERR_OK &&
		nmd_schedule(spec, run_plan_value(plan, "noise_multiplier"), &su, NULL) == ERR_OK &&
		nmd_fill_plan(spec, &su, &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;

	s->obj = &spec->objective;
	s->ds = ds;
	s->rng = rng;
	s->set = md_outer(&spec->x);
	s->dim = spec->dim;
	s->n = n;
	s->b = su.batch;
	s->steps = su.steps;
	s->clip = su.g.clip;
	s->sigma = su.sigma;
	s->step_size = su.step_size;
	s->lattice_k = su.lattice_k;

	s->idx = calloc(n, sizeof(*s->idx));
	s->x0 = calloc(s->dim, sizeof(*s->x0));
	s->x = calloc(s->dim, sizeof(*s->x));
	s->avg = calloc(s->dim, sizeof(*s->avg));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->theta = calloc(s->dim, sizeof(*s->theta));
	if (s->idx == NULL || s->x0 == NULL || s->x == NULL || s->avg == NULL || s->g == NULL ||
	    s->theta == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the mirror_descent.noisy state");
	for (size_t i = 0; i < n; i++)
		s->idx[i] = i;
	md_centre(&s->set, s->dim, s->x0);
	memcpy(s->x, s->x0, s->dim * sizeof(*s->x));
	s->map = (struct mirror_pnorm){ .d = s->dim, .p = su.g.p, .c = su.map_c, .a = s->x0 };
#ifdef DPOPT_TESTING
	s->hook = spec->testing_hook;
	rc = onepass_testing_sigma(s->hook, n, &s->sigma, e);
	if (rc != ERR_OK)
		return rc;
#endif
	return noise_dgauss_prepare_real(ldexp(s->sigma, s->lattice_k), &s->noise, e);
}

#ifdef DPOPT_TESTING
/* Audits: at step 0 only, the canary is put into the batch (slot 0 when
 * the draw left it out), after the draw (same generator consumption). */
static void
testing_place(struct nmd_state *s, size_t *batch)
{
	if (s->hook == NULL || !s->hook->place_first || s->t != 0 || batch == NULL)
		return; /* NULL: every row is in the batch */
	for (size_t i = 0; i < s->n; i++) {
		if (s->idx[i] == s->hook->first_record) {
			if (i < s->b)
				return;
			s->idx[i] = batch[0];
			batch[0] = s->hook->first_record;
			return;
		}
	}
}
#endif

static enum err_code
nmd_step(void *state, struct err *e)
{
	struct nmd_state *s = state;
	const size_t d = s->dim;
	size_t *batch = NULL;
	double k;

	if (s->t >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	/* Whole-data steps sample nothing: the rows in order, no draws. */
	if (s->b < s->n) {
		onepass_order_partial(s->rng, s->idx, s->n, s->b);
		batch = s->idx;
	}
#ifdef DPOPT_TESTING
	testing_place(s, batch);
#endif
	/* The average of x_1 .. x_T: the points the gradients are taken at. */
	k = (double)(s->t + 1);
	for (size_t j = 0; j < d; j++)
		s->avg[j] += (s->x[j] - s->avg[j]) / k;
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
	if (md_step(&s->map, &s->set, INFINITY, 1.0, s->step_size, s->g, s->theta, s->x, e) !=
	    ERR_OK)
		return err_failed(e);
	s->t++;
	return ERR_OK;
}

static void
nmd_result(const void *state, double *ret_x)
{
	const struct nmd_state *s = state;

	memcpy(ret_x, s->avg, s->dim * sizeof(*ret_x));
}

static void
nmd_fini(void *state)
{
	struct nmd_state *s = state;

	free(s->idx);
	free(s->x0);
	free(s->x);
	free(s->avg);
	free(s->g);
	free(s->theta);
	s->idx = NULL;
	s->x0 = s->x = s->avg = s->g = s->theta = NULL;
}

const struct alg_ops alg_md_noisy = {
	.name = "mirror_descent.noisy",
	.version = 1,
	.doc = "Noisy mirror descent in l1 geometry (l1 ball, simplex) or lp geometry (lp "
	       "ball) with the p-norm mirror map centred at the start (p = 1 + 1/ln d, "
	       "1-strongly convex w.r.t. ||.||_1; the ball's own p for an lp ball) and the "
	       "exact constrained mirror step: each of T steps draws a fresh secret uniform "
	       "batch of b distinct records, clips each record's gradient in l2, adds exact "
	       "discrete Gaussian noise on a fine lattice to the batch mean, and releases the "
	       "uniform average of the iterates.  Charged self_composed(sampled_without_"
	       "replacement(n, b, gaussian(z)), T), replace-one (z = sigma b / (2C)); "
	       "whole-data steps (the default up to 1e9 coordinate operations) are "
	       "self_composed(gaussian(z), T).  Schedule and step size default to a rule on "
	       "public inputs (docs/algorithms/l1-mirror-descent.md).",
	.paper = "H. Asi, V. Feldman, T. Koren, K. Talwar, Private stochastic convex "
		 "optimization: optimal rates in l1 geometry, ICML 2021 (Algorithms 1 and 5); "
		 "accounting: Y.-X. Wang, B. Balle, S. Kasiviswanathan, Subsampled Renyi "
		 "differential privacy, AISTATS 2019",
	.privacy_model = "(epsilon, delta)-DP, replace-one",
	.objectives = nmd_objectives,
	.constraints = (1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_LP_BALL) |
		       (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_L2_BALL),
	.params = nmd_params,
	.state_size = sizeof(struct nmd_state),
	.plan = nmd_plan,
	.work = nmd_work,
	.init = nmd_init,
	.step = nmd_step,
	.result = nmd_result,
	.fini = nmd_fini,
};
