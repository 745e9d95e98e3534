/*
 * saddle/recursive_regularization.c - "saddle.recursive_regularization":
 * recursive regularization for the strong gap of a convex-concave
 * stochastic saddle point (R. Bassily, C. Guzman, M. Menart,
 * "Differentially private algorithms for the stochastic saddle point
 * problem with optimal rates for the strong gap", COLT 2023, Algorithm 1,
 * Corollary 1, Theorems 2 and 3; docs/algorithms/recursive-regularization.md).
 *
 * The run.  u = (x, y) of dimension p over W = X x Y, the operator of a
 * record g(u; z) = (grad_x f, -grad_y f), L its declared l2 bound (the
 * clip level), beta its Lipschitz constant, B the l2 diameter of W.  The
 * public schedule (saddle/recursive_regularization.h): n' = floor(n /
 * log2 n), lambda = (c / B)(L / sqrt(n') + L z sqrt(p) / n') with the
 * multiplier c ("regularization_multiplier": 1 "practical", 48 the
 * paper's "theory") and the calibrated noise multiplier z, T =
 * ceil(log2(L / (B lambda))) rounds.  A secret uniformly random order
 * cuts T disjoint chunks S_1..S_T of n' records (the n - T n' left over are
 * never read).  From ubar_0 = Pi(0), round t solves the regularised
 * problem on S_t
 *
 *	F_t(u) = (1/n') sum_{z in S_t} f(u; z) + Lambda_t (||x - c_x||^2 - ||y - c_y||^2),
 *	Lambda_t = 2 lambda (2^t - 1),   c_t = sum_{k<t} 2^k ubar_k / (2^t - 1),
 *
 * (the paper's sum of quadratics with weights 2^(k+1) lambda around every
 * earlier output, folded into one; its operator is g + mu_t (u - c_t),
 * mu_t = 2 Lambda_t) warm-started at ubar_{t-1}, and outputs ubar_t;
 * c_{t+1} = ((2^t - 1) c_t + 2^t ubar_t) / (2^(t+1) - 1).  The result is
 * ubar_T (the last round's point, not an average).
 *
 * variant = sgda (0, Corollary 1, any objective).  Round t runs K =
 * floor(n' / b) steps of noisy projected SGDA on disjoint batches of b
 * records of S_t:
 *	G = (1/b) sum_{i in batch} clip_L(g(u; z_i)) + N(0, sigma^2 I_p)
 *	u <- Pi(u - eta_t (G + mu_t (u - c_t)))
 * and ubar_t is the mean of its K query points.  The regulariser's
 * gradient depends on the iterate and on earlier releases only, so it is
 * added after the noise (post-processing).  eta_t = Dhat_t / sqrt(K (L_t^2
 * + p sigma^2)), Dhat_t = B / 2^t (Algorithm 1's distance hint), L_t = L +
 * mu_t B.  Every record lies in one batch of one chunk: the T K releases
 * cost one Gaussian mechanism on the replace-one sensitivity 2 L / b, the
 * event {parallel, parts T K: gaussian z} calibrated exactly
 * (gauss_onepass.h), the noise the lattice discrete Gaussian of
 * saddle.sgda_one_pass.  (The paper's round solver samples K batches with
 * replacement from S_t and charges the moments accountant with an unknown
 * constant; one pass over S_t keeps the exact, parallel charge.)
 *
 * variant = sgda_multi_pass (2, the paper's round solver, Corollary 1 and
 * Theorem 6).  Round t runs K = floor(min(n'/8, n'^2 eps^2 / (32 p
 * ln(1/delta)))) steps of the same update, each on a fresh uniform batch
 * of m = ceil(n' sqrt(eps / (4K))) records of S_t drawn without
 * replacement (a partial Fisher-Yates inside the chunk's slice of the
 * order; the paper samples with replacement, which no amplification
 * theorem here covers), sigma = z 2 L / m.  One round is K adaptively
 * composed sampled Gaussians on its chunk; the rounds are on disjoint
 * chunks: the event parallel(T: self_composed(sampled_without_replacement(
 * n', m, gaussian z), K)), calibrated by calibrate() (WBK19 RDP bound) on
 * the dataset's ledger mode.  K < 1 is refused (privacy_too_small_for_n).
 *
 * variant = outpert_cert (1, Theorem 3 with a certificate; objectives with
 * a finite operator Lipschitz constant beta).  Round t runs k_t
 * (rr_eg_iterations, from public inputs only) full-batch projected
 * extragradient iterations on F_t from ubar_{t-1} at step 1 / (4
 * beta_F), beta_F = beta + mu_t; the residual certificate
 *	C(u) = ||u - Pi(u - F_t'(u) / beta_F)|| (1 + 2 beta_F / mu_t) >= ||u - u*_t||
 * must then be at most tol_t = 0.05 * 2 L / (mu_t n') (it is by the
 * contraction; a failure is a floating-point accident and ends the run
 * with the generic internal error).  The exact saddle point of F_t moves
 * by at most 2 L / (mu_t n') when one record of S_t is replaced (its data
 * part is L-Lipschitz, strong monotonicity mu_t), so the certified point
 * by at most Delta_t = 2 L / (mu_t n') + 2 tol_t, deterministically; the
 * round releases it plus N(0, (z Delta_t)^2 I_p) (discrete Gaussian on
 * its own lattice) and projects.  The T releases are on disjoint chunks
 * and share z: the event {parallel, parts T: gaussian z}.  The paper's
 * Markov-event output perturbation (accuracy in expectation, privacy on
 * an event of probability 1 - delta/2) is not implemented.
 *
 * variant = auto (3, the default): plan() resolves it from public inputs
 * only to outpert_cert when beta is finite, batch_size is 0 and that
 * plan's work() is at most RR_AUTO_MAX_WORK, else to sgda_multi_pass when
 * its K >= 1, else to sgda; the plan records the choice (used value
 * "variant") and init() derives the schedule again for it.  The measured
 * reasons for the order are in the doc (§2.4).
 *
 * Refusals before admission: T < 1 (lambda >= L / B: the recursion would
 * return the data-independent start) is 422 privacy_too_small_for_n
 * naming privacy.epsilon; T n' > n (a small multiplier asks for more
 * rounds than the chunks allow) and batch_size > n' name their
 * parameters; outpert_cert on an objective without a finite beta names
 * params.variant.  Nothing data dependent is released: the plan holds
 * public values only (T, n', lambda, the step counts), the result is
 * ubar_T.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "privacy/calibrate.h"
#include "privacy/noise.h"
#include "saddle/recursive_regularization.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_VARIANT, P_MULTIPLIER, P_BATCH_SIZE, P__COUNT };
enum { RR_SGDA = 0, RR_OUTPERT = 1, RR_SGDA_MP = 2, RR_AUTO = 3 };

#define RR_MAX_ROUNDS    60
#define RR_CAL_MAX_ORDER 64.0
/* variant = auto takes outpert_cert only up to this work() (a few seconds
 * here; the service's default DPOPT_MAX_RUN_WORK is 5e10). */
#define RR_AUTO_MAX_WORK 1e9

static const char *const rr_variants[] = { "sgda", "outpert_cert", "sgda_multi_pass", "auto",
					   NULL };

static const struct alg_param rr_params[P__COUNT + 1] = {
	[P_VARIANT] = { "variant", ALG_PARAM_INT, 0.0, 3.0, 3.0,
			"round solver: \"auto\" (3, the default): outpert_cert when the "
			"objective's operator has a finite Lipschitz constant, batch_size is 0 "
			"and its work() is at most 1e9, else sgda_multi_pass when its K >= 1, "
			"else sgda (public inputs only; the plan's used value 'variant' records "
			"the choice); \"sgda\" (0): one pass of noisy SGDA over the round's "
			"chunk, any objective; \"outpert_cert\" (1): a fixed number of "
			"extragradient iterations certified to 0.05 of the sensitivity, then "
			"Gaussian output perturbation, objectives with a finite operator "
			"Lipschitz constant; \"sgda_multi_pass\" (2): the paper's round solver, K "
			"= min(n'/8, n'^2 eps^2 / (32 p ln(1/delta))) steps on uniform batches "
			"of m = ceil(n' sqrt(eps / (4K))) without replacement, RDP-accounted",
			rr_variants },
	[P_MULTIPLIER] = { "regularization_multiplier", ALG_PARAM_REAL, 1e-2, 1e3, 1.0,
			   "c in lambda = (c / B)(L / sqrt(n') + L z sqrt(p) / n'): 1 "
			   "'practical' (default), 48 the paper's 'theory' constant (no round "
			   "below about 35,000 records); privacy does not depend on it",
			   NULL },
	[P_BATCH_SIZE] = { "batch_size", ALG_PARAM_INT, 0.0, 1e7, 0.0,
			   "sgda: records per step b, at most n'; 0 = auto: ceil(2 z sqrt(p)) "
			   "clamped to [1, n']; sgda_multi_pass: m, 0 = auto; outpert_cert: "
			   "must be 0",
			   NULL },
	[P__COUNT] = { 0 },
};

static const char *const rr_objectives[] = { "bilinear",
					     "worst_group_logistic",
					     "matrix_game",
					     "quadratic_game",
					     "fair_logistic_lagrangian",
					     "auc_minimax",
					     NULL };

#define RR_SETS ((1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX))

size_t
rr_chunk_size(size_t n)
{
	if (n < 2)
		return 0;
	return (size_t)floor((double)n / log2((double)n));
}

double
rr_lambda(double c, double lipschitz, double diameter, size_t chunk, size_t p, double z)
{
	double np = (double)chunk;

	return c / diameter * (lipschitz / sqrt(np) + lipschitz * z * sqrt((double)p) / np);
}

long
rr_rounds(double lipschitz, double diameter, double lambda)
{
	double r = ceil(log2(lipschitz / (diameter * lambda)));

	if (!(r > 0.0))
		return 0;
	return r > RR_MAX_ROUNDS ? RR_MAX_ROUNDS + 1 : (long)r;
}

double
rr_modulus(double lambda, long t)
{
	return 4.0 * lambda * (ldexp(1.0, (int)t) - 1.0);
}

double
rr_tolerance(double lipschitz, double mu, size_t chunk)
{
	return RR_CTOL * 2.0 * lipschitz / (mu * (double)chunk);
}

double
rr_eg_iterations(double beta, double mu, double diameter, double tol)
{
	double beta_f = beta + mu;
	double target = tol / (3.0 * (1.0 + 2.0 * beta_f / mu));

	if (diameter <= target)
		return 0.0;
	return ceil(4.0 * beta_f / mu * 2.0 * log(diameter / target));
}

/* Everything derived from the public spec; plan() calibrates z, init()
 * derives the rest again from the plan's z and compares. */
struct rr_setup {
	int variant;
	struct saddle_block bx, by;
	double bound;    /* L */
	double smooth;   /* beta (outpert_cert) */
	double diameter; /* B */
	double multiplier;
	size_t chunk; /* n' */
	double z;
	double lambda;
	long rounds; /* T */
	/* sgda */
	size_t batch;
	unsigned long round_steps; /* K */
	double sensitivity, sensitivity_lattice, sigma;
	int lattice_k;
	/* outpert_cert: the total extragradient iterations over the rounds */
	double eg_total;
};

struct rr_state {
	const struct objective *obj; /* borrowed: the spec's */
	const struct dataset *ds;    /* borrowed */
	struct rng *rng;             /* borrowed */
	struct constraint_product set;
	struct rr_setup su;
	size_t dim;
	unsigned long steps, t; /* driver steps: T K (sgda) or T (outpert_cert) */
	long round;             /* the current round, 1..T */
	unsigned long round_t;  /* sgda: steps done in this round */
	double lambda_w;        /* Lambda_t */
	struct dgauss_params noise;
	size_t *order;   /* owned: n */
	double *u;       /* owned: dim, the iterate */
	double *avg;     /* owned: dim, sgda: the round's mean of query points */
	double *c;       /* owned: dim, the regularisation centre c_t */
	double *out;     /* owned: dim, ubar_t (ubar_0 before round 1) */
	double *g;       /* owned: dim, operator */
	double *w;       /* owned: dim, extragradient half step */
	double *scratch; /* owned: dim */
	double sigma_scale;
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook; /* borrowed; may be NULL */
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

/* The l2 diameter of a block's set (as saddle.nseg): exact for the box and
 * the simplex, 2 r for the ball. */
static double
block_diameter(const struct constraint *c, size_t d)
{
	if (c->kind == CONSTRAINT_BOX)
		return (c->hi - c->lo) * sqrt((double)d);
	if (c->kind == CONSTRAINT_SIMPLEX)
		return d >= 2 ? c->radius * sqrt(2.0) : 0.0;
	return 2.0 * constraint_l2_radius(c, d);
}

/* The blocks, L, beta, B, n' and the refusals that need no calibration. */
static enum err_code
rr_bounds(const struct run_spec *spec, int variant, struct rr_setup *ret, struct err *e)
{
	const struct objective *obj = &spec->objective;
	struct saddle_constants sc;
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	if (variant < RR_SGDA || variant > RR_SGDA_MP)
		return err_set_field(e, ERR_INVALID, "params.variant",
				     "'params.variant' does not name a round solver");
	ret->variant = variant;
	ret->multiplier = spec->params[P_MULTIPLIER];
	ret->bx = (struct saddle_block){ spec->x, spec->geometry_x };
	ret->by = (struct saddle_block){ spec->y, spec->geometry_y };
	rc = saddle_constants(obj, &spec->schema, &ret->bx, &ret->by, &sc, e);
	if (rc != ERR_OK)
		return rc;
	ret->bound = sc.lipschitz_l2;
	ret->smooth = sc.smooth_l2;
	ret->diameter =
		hypot(block_diameter(&spec->x, obj->dim_x), block_diameter(&spec->y, obj->dim_y));
	if (!is_finite_pos(ret->bound))
		return err_set(e, ERR_NUMERIC,
			       "the operator bound is not a finite positive number");
	if (!is_finite_pos(ret->diameter))
		return err_set(e, ERR_NUMERIC,
			       "the set's diameter is not a finite positive number");
	if (ret->variant == RR_OUTPERT) {
		if (!(isfinite(ret->smooth) && ret->smooth >= 0.0))
			return err_set_field(e, ERR_INVALID, "params.variant",
					     "'outpert_cert' needs an objective whose operator "
					     "has a finite Lipschitz constant");
		if (spec->params[P_BATCH_SIZE] != 0.0)
			return err_set_field(e, ERR_INVALID, "params.batch_size",
					     "'params.batch_size' is for variant 'sgda' only");
	}
	ret->chunk = rr_chunk_size(spec->n);
	if (ret->chunk == 0)
		return err_set_field(e, ERR_TOO_SMALL, "privacy.epsilon",
				     "privacy_too_small_for_n: n = %zu leaves no chunk", spec->n);
	if (spec->params[P_BATCH_SIZE] > (double)ret->chunk)
		return err_set_field(e, ERR_INVALID, "params.batch_size",
				     "'params.batch_size' (%.0f) exceeds the chunk size n' = "
				     "floor(n / log2 n) = %zu",
				     spec->params[P_BATCH_SIZE], ret->chunk);
	if (ret->variant == RR_SGDA_MP) {
		double np = (double)ret->chunk, eps = spec->epsilon;
		double k = floor(fmin(np / 8.0,
				      np * np * eps * eps /
					      (32.0 * (double)spec->dim * log(1.0 / spec->delta))));
		double m;

		if (!(k >= 1.0))
			return err_set_field(
				e, ERR_TOO_SMALL, "privacy.epsilon",
				"privacy_too_small_for_n: the round solver's K = "
				"min(n'/8, n'^2 eps^2 / (32 p ln(1/delta))) is below 1 "
				"at n' = %zu",
				ret->chunk);
		m = spec->params[P_BATCH_SIZE] != 0.0
			    ? spec->params[P_BATCH_SIZE]
			    : fmin(np, fmax(1.0, ceil(np * sqrt(eps / (4.0 * k)))));
		ret->round_steps = (unsigned long)k;
		ret->batch = (size_t)m;
	}
	return ERR_OK;
}

/* The rest of the schedule at multiplier z: lambda, T and the round
 * solver's counts; the refusals of a degenerate recursion. */
static enum err_code
rr_schedule(const struct run_spec *spec, double z, struct rr_setup *s, struct err *e)
{
	enum err_code rc;

	if (!is_finite_pos(z))
		return err_set(e, ERR_INTERNAL, "the noise multiplier is not finite and positive");
	s->z = z;
	s->lambda = rr_lambda(s->multiplier, s->bound, s->diameter, s->chunk, spec->dim, z);
	if (!is_finite_pos(s->lambda))
		return err_set(e, ERR_NUMERIC, "the regularisation is not finite and positive");
	s->rounds = rr_rounds(s->bound, s->diameter, s->lambda);
	if (s->rounds < 1)
		return err_set_field(e, ERR_TOO_SMALL, "privacy.epsilon",
				     "privacy_too_small_for_n: lambda = %.4g >= L / B = %.4g "
				     "leaves no round of recursive regularization at n = %zu "
				     "(regularization_multiplier %g); the result would be the "
				     "data-independent start",
				     s->lambda, s->bound / s->diameter, spec->n, s->multiplier);
	if (s->rounds > RR_MAX_ROUNDS || (double)s->rounds * (double)s->chunk > (double)spec->n)
		return err_set_field(e, ERR_INVALID, "params.regularization_multiplier",
				     "'params.regularization_multiplier' (%g) asks for %ld "
				     "rounds of n' = %zu records, more than n = %zu holds",
				     s->multiplier, s->rounds, s->chunk, spec->n);
	if (s->variant != RR_OUTPERT) {
		if (s->variant == RR_SGDA) {
			rc = onepass_batch(spec->params[P_BATCH_SIZE], z, spec->dim, s->chunk,
					   &s->batch, e);
			if (rc != ERR_OK)
				return rc;
			s->round_steps = (unsigned long)(s->chunk / s->batch);
		}
		s->sensitivity = 2.0 * s->bound / (double)s->batch;
		rc = onepass_lattice(s->sensitivity, spec->dim, &s->lattice_k,
				     &s->sensitivity_lattice, e);
		if (rc != ERR_OK)
			return rc;
		s->sigma = z * s->sensitivity_lattice;
		if (!is_finite_pos(s->sigma))
			return err_set(e, ERR_NUMERIC, "the noise is not a finite positive number");
	} else {
		double mu1 = rr_modulus(s->lambda, 1);

		s->batch = s->chunk;
		s->eg_total = 0.0;
		for (long t = 1; t <= s->rounds; t++) {
			double mu = rr_modulus(s->lambda, t);

			s->eg_total += rr_eg_iterations(s->smooth, mu, s->diameter,
							rr_tolerance(s->bound, mu, s->chunk));
		}
		/* round 1's values for the record: Delta_1 and sigma_1 */
		s->sensitivity = 2.0 * s->bound / (mu1 * (double)s->chunk) +
				 2.0 * rr_tolerance(s->bound, mu1, s->chunk);
		if (!isfinite(s->eg_total) || !is_finite_pos(s->sensitivity))
			return err_set(e, ERR_NUMERIC, "the extragradient schedule is not finite");
	}
	return ERR_OK;
}

static unsigned long
rr_driver_steps(const struct rr_setup *s)
{
	return s->variant != RR_OUTPERT ? (unsigned long)s->rounds * s->round_steps
					: (unsigned long)s->rounds;
}

/* sgda_multi_pass: parallel(T: self_composed(sampled_without_replacement(n',
 * m, gaussian z), K)) (a batch of the whole chunk samples nothing). */
struct rr_mp {
	uint64_t chunk, m, steps, rounds;
};

static enum err_code
rr_mp_family(double z, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	const struct rr_mp *c = ctx;
	struct dp_event sample = { .type = DP_EVENT_SAMPLED_WOR, .n = c->chunk, .batch = c->m };
	struct dp_event self = { .type = DP_EVENT_SELF_COMPOSED, .count = c->steps };
	struct dp_event parallel = { .type = DP_EVENT_PARALLEL, .count = c->rounds };
	enum err_code rc;

	dp_event_gaussian(ret, DP_REPLACE_ONE, z);
	rc = c->m == c->chunk ? ERR_OK : dp_event_wrap(ret, &sample, e);
	if (rc == ERR_OK)
		rc = dp_event_wrap(ret, &self, e);
	if (rc == ERR_OK)
		rc = dp_event_wrap(ret, &parallel, e);
	return rc;
}

/* The one calibration of a run (plan() only); as saddle.nseg's multi-pass:
 * the default grid without its orders above max(64, 4 ln(1/delta) / eps). */
static enum err_code
rr_calibrate(const struct run_spec *spec, const struct rr_setup *s, double *ret_z,
	     const char **ret_accountant, struct err *e)
{
	double eps_cal = nextafter(spec->epsilon, 0.0), delta_cal = nextafter(spec->delta, 0.0);
	struct rr_mp c = { s->chunk, s->batch, s->round_steps, 1 };
	struct rdp_grid grid;
	struct accountant_report report;
	double top = fmax(RR_CAL_MAX_ORDER, 4.0 * log(1.0 / delta_cal) / eps_cal);
	unsigned k = 0;
	enum err_code rc;

	if (s->variant != RR_SGDA_MP)
		return onepass_calibrate(spec, ret_z, ret_accountant, e);
#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	rdp_grid_default(&grid);
	for (unsigned i = 0; i < grid.n; i++)
		if (grid.order[i] <= top)
			grid.order[k++] = grid.order[i];
	grid.n = k;
	rc = calibrate(rr_mp_family, &c, spec->mode, eps_cal, delta_cal, 1e-2, 1e7, &grid, ret_z,
		       &report, e);
	if (rc == ERR_OK)
		*ret_accountant = report.accountant;
	return rc;
}

static enum err_code
rr_fill_plan(const struct run_spec *spec, const struct rr_setup *s, struct run_plan *ret,
	     struct err *e)
{
	unsigned long steps = rr_driver_steps(s);
	enum err_code rc;

	onepass_plan_start(ret, spec, steps, s->batch);
	run_plan_use(ret, "variant", (double)s->variant);
	if (s->variant == RR_SGDA_MP) {
		struct rr_mp c = { s->chunk, s->batch, s->round_steps, (uint64_t)s->rounds };

		rc = rr_mp_family(s->z, &c, &ret->event, e);
	} else {
		rc = onepass_event(s->z, steps, &ret->event, e);
	}
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "rounds", (double)s->rounds);
	run_plan_use(ret, "chunk_size", (double)s->chunk);
	run_plan_use(ret, "regularization_lambda", s->lambda);
	run_plan_use(ret, "regularization_multiplier", s->multiplier);
	run_plan_use(ret, "operator_bound", s->bound);
	run_plan_use(ret, "diameter", s->diameter);
	run_plan_use(ret, "noise_multiplier", s->z);
	run_plan_use(ret, "sensitivity", s->sensitivity);
	if (s->variant != RR_OUTPERT) {
		run_plan_use(ret, "round_steps", (double)s->round_steps);
		run_plan_use(ret, "sensitivity_lattice", s->sensitivity_lattice);
		run_plan_use(ret, "lattice_step_log2", (double)-s->lattice_k);
		run_plan_use(ret, "noise_sigma", s->sigma);
	} else {
		run_plan_use(ret, "operator_lipschitz", s->smooth);
		run_plan_use(ret, "extragradient_iterations", s->eg_total);
		run_plan_use(ret, "noise_sigma", s->z * s->sensitivity);
	}
	run_plan_use(ret, "dim_x", (double)spec->objective.dim_x);
	run_plan_use(ret, "dim_y", (double)spec->objective.dim_y);
	run_plan_use(ret, "unused_records",
		     (double)(spec->n - (size_t)s->rounds * s->chunk) +
			     (s->variant == RR_SGDA
				      ? (double)s->rounds *
						(double)(s->chunk - s->round_steps * s->batch)
				      : 0.0));
	return ERR_OK;
}

/* The plan of one concrete variant. */
static enum err_code
rr_plan_variant(const struct run_spec *spec, int variant, struct run_plan *ret_plan, struct err *e)
{
	struct rr_setup s;
	struct run_plan p;
	const char *accountant = NULL;
	double z = 0.0;
	enum err_code rc;

	rc = rr_bounds(spec, variant, &s, e);
	if (rc == ERR_OK)
		rc = rr_calibrate(spec, &s, &z, &accountant, e);
	if (rc == ERR_OK)
		rc = rr_schedule(spec, z, &s, e);
	if (rc == ERR_OK)
		rc = rr_fill_plan(spec, &s, &p, e);
	if (rc == ERR_OK) {
		p.accountant = accountant;
		*ret_plan = p;
	}
	return rc;
}

static double rr_work(const struct run_spec *spec, const struct run_plan *plan);

/* variant = auto, from public inputs only (docs/algorithms/
 * recursive-regularization.md §2.4): outpert_cert when the objective has a
 * finite operator Lipschitz constant, no batch_size is given and its work
 * is at most RR_AUTO_MAX_WORK; else sgda_multi_pass when its K >= 1; else
 * sgda (whose refusal, if any, is the answer). */
static enum err_code
rr_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	int v = (int)spec->params[P_VARIANT];
	struct run_plan p;

	if (v != RR_AUTO)
		return rr_plan_variant(spec, v, ret_plan, e);
	if (spec->params[P_BATCH_SIZE] == 0.0 &&
	    rr_plan_variant(spec, RR_OUTPERT, &p, NULL) == ERR_OK &&
	    rr_work(spec, &p) <= RR_AUTO_MAX_WORK) {
		*ret_plan = p;
		return ERR_OK;
	}
	if (rr_plan_variant(spec, RR_SGDA_MP, &p, NULL) == ERR_OK) {
		*ret_plan = p;
		return ERR_OK;
	}
	return rr_plan_variant(spec, RR_SGDA, ret_plan, e);
}

/* sgda: T K steps of b records and a noise vector, p each; outpert_cert:
 * 2 n' + 1 operator evaluations per extragradient iteration plus T noise
 * vectors; both read the order (n). */
static double
rr_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double p = (double)spec->dim;
	double eg = run_plan_value(plan, "extragradient_iterations");
	double b = run_plan_value(plan, "batch_size");

	if (!isfinite(b))
		b = 1.0;
	if (isfinite(eg))
		return (2.0 * eg + (double)plan->steps) * (b + 1.0) * p + (double)spec->n;
	return (double)plan->steps * (b + 1.0) * p + (double)spec->n;
}

static void
rr_start_round(struct rr_state *s)
{
	memcpy(s->u, s->out, s->dim * sizeof(*s->u));
	memset(s->avg, 0, s->dim * sizeof(*s->avg));
	s->round_t = 0;
	s->lambda_w = rr_modulus(s->su.lambda, s->round) / 2.0;
}

/* ubar_t is in s->out: fold it into the centre, move to round t + 1. */
static void
rr_end_round(struct rr_state *s)
{
	double a = ldexp(1.0, (int)s->round) - 1.0, b = ldexp(1.0, (int)s->round);

	for (size_t j = 0; j < s->dim; j++)
		s->c[j] = (a * s->c[j] + b * s->out[j]) / (a + b);
	s->round++;
	if (s->round <= s->su.rounds)
		rr_start_round(s);
}

/* The concrete variant a plan was made for: the spec's, or for auto the
 * plan's record (-1 when it names none; rr_bounds() refuses it). */
static int
rr_plan_variant_of(const struct run_spec *spec, const struct run_plan *plan)
{
	double v = spec->params[P_VARIANT];

	if (v == RR_AUTO)
		v = run_plan_value(plan, "variant");
	return v >= RR_SGDA && v <= RR_SGDA_MP ? (int)v : -1;
}

static enum err_code
rr_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct rr_state *s = state;
	const struct objective *o = &spec->objective;
	struct run_plan mine;
	bool derived;
	enum err_code rc;

	/* Spend exactly what was charged: derive again from the plan's z (and,
	 * for auto, its recorded variant; the comparison below covers it). */
	rc = rr_bounds(spec, rr_plan_variant_of(spec, plan), &s->su, e);
	if (rc != ERR_OK)
		return rc;
	derived = rr_schedule(spec, run_plan_value(plan, "noise_multiplier"), &s->su, NULL) ==
			  ERR_OK &&
		  rr_fill_plan(spec, &s->su, &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;

	s->obj = o;
	s->ds = ds;
	s->rng = rng;
	s->dim = spec->dim;
	s->steps = rr_driver_steps(&s->su);
	s->set.dim = spec->dim;
	s->set.nparts = 2;
	s->set.part[0] = (struct constraint_part){ s->su.bx.set, 0, o->dim_x, "constraints.x" };
	s->set.part[1] =
		(struct constraint_part){ s->su.by.set, o->dim_x, o->dim_y, "constraints.y" };
	rc = constraint_product_validate(&s->set, "constraints", e);
	if (rc != ERR_OK)
		return rc;

	s->order = calloc(ds->n, sizeof(*s->order));
	s->u = calloc(s->dim, sizeof(*s->u));
	s->avg = calloc(s->dim, sizeof(*s->avg));
	s->c = calloc(s->dim, sizeof(*s->c));
	s->out = calloc(s->dim, sizeof(*s->out));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->w = calloc(s->dim, sizeof(*s->w));
	s->scratch = calloc(s->dim, sizeof(*s->scratch));
	if (s->order == NULL || s->u == NULL || s->avg == NULL || s->c == NULL || s->out == NULL ||
	    s->g == NULL || s->w == NULL || s->scratch == NULL)
		return err_set(e, ERR_NOMEM,
			       "cannot allocate the saddle.recursive_regularization state");
	constraint_product_project(&s->set, s->out, s->scratch); /* ubar_0 = Pi(0) */
	memcpy(s->c, s->out, s->dim * sizeof(*s->c));            /* c_1 = ubar_0 */
	onepass_order(rng, s->order, ds->n, (size_t)s->su.rounds * s->su.chunk);
	s->sigma_scale = 1.0;
#ifdef DPOPT_TESTING
	s->hook = spec->testing_hook;
	rc = onepass_testing_hook(s->hook, s->order, ds->n, &s->sigma_scale, e);
	if (rc != ERR_OK)
		return rc;
#endif
	s->round = 1;
	rr_start_round(s);
	if (s->su.variant != RR_OUTPERT)
		return noise_dgauss_prepare_real(
			ldexp(s->su.sigma * s->sigma_scale, s->su.lattice_k), &s->noise, e);
	return ERR_OK;
}

/* sgda: one noisy step of round s->round on the next batch of its chunk. */
static enum err_code
rr_sgda_step(struct rr_state *s, struct err *e)
{
	const size_t d = s->dim, b = s->su.batch;
	const double mu = 2.0 * s->lambda_w;
	const double lt = s->su.bound + mu * s->su.diameter;
	const double eta =
		s->su.diameter / ldexp(1.0, (int)s->round) /
		sqrt((double)s->su.round_steps * (lt * lt + (double)d * s->su.sigma * s->su.sigma));
	size_t *chunk = s->order + (size_t)(s->round - 1) * s->su.chunk;
	const size_t *batch = chunk + s->round_t * b;

	/* sgda_multi_pass: a fresh uniform m-subset of the chunk without
	 * replacement (a partial Fisher-Yates within the chunk's slice). */
	if (s->su.variant == RR_SGDA_MP) {
		onepass_order_partial(s->rng, chunk, s->su.chunk, b);
		batch = chunk;
	}
	/* The query point joins the round's average before the step. */
	s->round_t++;
	for (size_t j = 0; j < d; j++)
		s->avg[j] += (s->u[j] - s->avg[j]) / (double)s->round_t;
	memset(s->g, 0, d * sizeof(*s->g));
	saddle_batch_operator(s->obj, s->ds, batch, b, s->u, s->su.bound, s->scratch, s->g);
	if (onepass_noisy_mean(s->rng, &s->noise, s->su.lattice_k, s->g, d, b, e) != ERR_OK)
		return err_failed(e);
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL)
		s->hook->release(s->hook->ctx, s->t, s->g, d);
#endif
	/* the regulariser's gradient: post-processing of earlier releases */
	for (size_t j = 0; j < d; j++)
		s->u[j] -= eta * (s->g[j] + mu * (s->u[j] - s->c[j]));
	constraint_product_project(&s->set, s->u, s->scratch);
	if (s->round_t == s->su.round_steps) {
		memcpy(s->out, s->avg, d * sizeof(*s->out));
		rr_end_round(s);
	}
	return ERR_OK;
}

/* F_t'(v) = (1/n') sum over the chunk of g(v; z) + mu (v - c) into g. */
static void
rr_full_operator(struct rr_state *s, const double *v, double mu)
{
	const size_t *chunk = s->order + (size_t)(s->round - 1) * s->su.chunk;

	memset(s->g, 0, s->dim * sizeof(*s->g));
	saddle_batch_operator(s->obj, s->ds, chunk, s->su.chunk, v, s->su.bound, s->scratch, s->g);
	for (size_t j = 0; j < s->dim; j++)
		s->g[j] = s->g[j] / (double)s->su.chunk + mu * (v[j] - s->c[j]);
}

/* outpert_cert: round s->round in one driver step. */
static enum err_code
rr_outpert_step(struct rr_state *s, struct err *e)
{
	const size_t d = s->dim;
	const double mu = 2.0 * s->lambda_w, beta_f = s->su.smooth + mu;
	const double eta = 1.0 / (4.0 * beta_f);
	const double tol = rr_tolerance(s->su.bound, mu, s->su.chunk);
	const double k = rr_eg_iterations(s->su.smooth, mu, s->su.diameter, tol);
	const double delta = 2.0 * s->su.bound / (mu * (double)s->su.chunk) + 2.0 * tol;
	double r2 = 0.0, cert, sens_l;
	int lk;
	struct dgauss_params noise;
	enum err_code rc;

	for (double i = 0.0; i < k; i += 1.0) {
		rr_full_operator(s, s->u, mu);
		for (size_t j = 0; j < d; j++)
			s->w[j] = s->u[j] - eta * s->g[j];
		constraint_product_project(&s->set, s->w, s->scratch);
		rr_full_operator(s, s->w, mu);
		for (size_t j = 0; j < d; j++)
			s->u[j] -= eta * s->g[j];
		constraint_product_project(&s->set, s->u, s->scratch);
	}
	/* The certificate: ||u - u*|| <= ||u - Pi(u - F'(u) / beta_F)|| (1 +
	 * 2 beta_F / mu).  Guaranteed by k's choice; checked, never released. */
	rr_full_operator(s, s->u, mu);
	for (size_t j = 0; j < d; j++)
		s->w[j] = s->u[j] - s->g[j] / beta_f;
	constraint_product_project(&s->set, s->w, s->scratch);
	for (size_t j = 0; j < d; j++)
		r2 += (s->u[j] - s->w[j]) * (s->u[j] - s->w[j]);
	cert = sqrt(r2) * (1.0 + 2.0 * beta_f / mu);
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->certificate != NULL)
		s->hook->certificate(s->hook->ctx, (unsigned long)s->round, cert, tol);
#endif
	if (!(cert <= tol))
		return err_set(e, ERR_INTERNAL, "the run failed");
	/* The release: the certified point plus N(0, (z Delta_t)^2 I). */
	rc = onepass_lattice(delta, d, &lk, &sens_l, e);
	if (rc == ERR_OK)
		rc = noise_dgauss_prepare_real(ldexp(s->su.z * sens_l * s->sigma_scale, lk), &noise,
					       e);
	if (rc != ERR_OK)
		return err_failed(e);
	memcpy(s->g, s->u, d * sizeof(*s->g));
	if (onepass_noisy_mean(s->rng, &noise, lk, s->g, d, 1, e) != ERR_OK)
		return err_failed(e);
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL)
		s->hook->release(s->hook->ctx, s->t, s->g, d);
#endif
	memcpy(s->out, s->g, d * sizeof(*s->out));
	constraint_product_project(&s->set, s->out, s->scratch);
	rr_end_round(s);
	return ERR_OK;
}

static enum err_code
rr_step(void *state, struct err *e)
{
	struct rr_state *s = state;
	enum err_code rc;
	bool finite = true;

	if (s->t >= s->steps || s->round > s->su.rounds)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	rc = s->su.variant != RR_OUTPERT ? rr_sgda_step(s, e) : rr_outpert_step(s, e);
	s->t++;
	if (rc != ERR_OK)
		return rc;
	for (size_t j = 0; j < s->dim; j++)
		finite = finite && isfinite(s->u[j]) && isfinite(s->out[j]);
	/* Only rounding can get here; fail with the generic error. */
	if (!finite)
		return err_set(e, ERR_INTERNAL, "the run failed");
	return ERR_OK;
}

static void
rr_result(const void *state, double *ret_u)
{
	const struct rr_state *s = state;

	memcpy(ret_u, s->out, s->dim * sizeof(*ret_u));
}

static void
rr_fini(void *state)
{
	struct rr_state *s = state;

	free(s->order);
	free(s->u);
	free(s->avg);
	free(s->c);
	free(s->out);
	free(s->g);
	free(s->w);
	free(s->scratch);
	s->order = NULL;
	s->u = s->avg = s->c = s->out = s->g = s->w = s->scratch = NULL;
}

const struct alg_ops alg_saddle_recursive_regularization = {
	.name = "saddle.recursive_regularization",
	.version = 2,
	.doc = "Recursive regularization for the strong gap of min over x max over y of a "
	       "saddle objective: a secret order cuts T = ceil(log2(L / (B lambda))) disjoint "
	       "chunks of n' = floor(n / log2 n) records; round t solves, on its chunk, the "
	       "objective plus the quadratic Lambda_t (||x - c_x||^2 - ||y - c_y||^2) centred at "
	       "the weighted mean of the earlier rounds' outputs (Lambda_t = 2 lambda (2^t - "
	       "1)), warm-started at the last one; the result is the last round's point.  "
	       "variant sgda: one pass of noisy SGDA over the chunk (one Gaussian mechanism on "
	       "2 L / b over all rounds by parallel composition).  variant outpert_cert: a fixed "
	       "number of full-batch extragradient iterations certified to 0.05 of the "
	       "sensitivity 2 L / (mu_t n'), then Gaussian noise on 2 L / (mu_t n') + 2 tol_t, "
	       "one event per round, parallel across rounds.  variant sgda_multi_pass: the "
	       "paper's round solver, K steps on uniform batches of m records without "
	       "replacement per round, RDP-accounted, parallel across rounds.  lambda = (c / B)(L "
	       "/ sqrt(n') + "
	       "L z sqrt(p) / n'), c = regularization_multiplier (1 practical, 48 the paper's); "
	       "the noise is calibrated by the dataset's accountant, never by the paper's "
	       "constants.",
	.paper = "R. Bassily, C. Guzman, M. Menart, Differentially private algorithms for the "
		 "stochastic saddle point problem with optimal rates for the strong gap, COLT "
		 "2023 (arXiv 2302.12909), Algorithm 1, Corollary 1, Theorems 2 and 3; noise: "
		 "C. Canonne, G. Kamath, T. Steinke, NeurIPS 2020",
	.privacy_model = "(epsilon, delta)-DP, replace-one",
	.objectives = rr_objectives,
	.constraints = RR_SETS,
	.params = rr_params,
	.state_size = sizeof(struct rr_state),
	.plan = rr_plan,
	.work = rr_work,
	.init = rr_init,
	.step = rr_step,
	.result = rr_result,
	.fini = rr_fini,
	.saddle = true,
	.constraints_y = RR_SETS,
};
