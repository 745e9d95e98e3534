/*
 * saddle/nispp.c - "saddle.nispp": Noisy Inexact Stochastic Proximal
 * Point for convex-concave saddle points and monotone variational
 * inequalities in Euclidean geometry (D. Boob, C. Guzman, "Optimal
 * algorithms for differentially private stochastic monotone variational
 * inequalities and saddle-point problems", Math. Programming 2023,
 * Algorithm 2, Corollary 2, Theorem 7, Appendix B;
 * docs/algorithms/nispp.md).
 *
 * The run.  u = (x, y) of dimension p over W = X x Y (VI mode: one block
 * over "constraints.x"), F_B the clipped batch-mean operator of a batch B,
 * M, L, D as in saddle.nseg (saddle/euclid.h).  From w_0 = Pi_W(0), for
 * k = 0..N - 1:
 *
 *	u_{k+1} = a point of W with sup_{w in W} <G_k(u), u - w> <= nu,
 *	          G_k(u) = F_{B_{k+1}}(u) + lambda (u - w_k)   (the prox step)
 *	w_{k+1} = u_{k+1} + N(0, sigma^2 I_p)                  (not projected)
 *	result  = Pi_W(mean of w_1..w_N)                       (only the mean)
 *
 * The inner solver runs a number of iterations fixed once per run from
 * public values (D, L, lambda, nu_in), the same at every step: S = 1 +
 * ceil(ln(D / zeta) / ln(lambda / L)) of the resolvent fixed point u <-
 * Pi_W(w_k - F_B(u) / lambda) (a contraction of modulus q = L / lambda),
 * zeta = nu_in / ((1 + q) L D), or T = 1 + ceil(2 ln(D / zeta) / ln kappa)
 * of Operator Extrapolation (Kotsalis, Lan, Li; the paper's Algorithm 3
 * with its iteration count corrected, started at Pi_W(w_k)), zeta = nu_in
 * / ((1 + r)(3 + r)(L + lambda) D), r = kappa^(-1/2), nu_in =
 * min(nu_target, nu_priv / 2).  Both bound the gap of the last iterate by
 * its last move, through the projection's optimality, which cancels the
 * centre: gap <= L D |z_S - z_(S-1)| (fixed point), gap <= (L + lambda) D
 * (3 |z_(T+1) - z_T| + |z_T - z_(T-1)| / kappa) (OE); so the noisy centre's
 * distance from W (unbounded) does not enter the count (docs/algorithms/
 * nispp.md §3).  Then the
 * certificate sup_w <G_k(u), u - w> <= nu_priv / 2 (one LMO) is checked as
 * an assertion: it holds in exact arithmetic, so a failure is rounding and
 * ends the run with the generic internal error (the charge is kept).  The
 * utility target nu_target (single pass nu_priv, multi-pass M^2 /
 * (lambda n^2), below double precision at n ~ 1e5) only sets the count;
 * it is never checked.  Neither the counts nor the certificate's value
 * leave the run.
 *
 * Privacy (Prop. 9): two nu-accurate answers on batches that differ in one
 * record are within 2 M / (lambda B) + sqrt(2 nu / lambda) <= 4 M /
 * (lambda B) when nu <= nu_priv = 2 M^2 / (lambda B^2), so every release
 * w_{k+1} is a Gaussian mechanism of sensitivity 4 M / (lambda B) at a
 * centre fixed by the past releases; the noise is the exact discrete
 * Gaussian on a fine lattice (privacy/noise.h), multiplier z.
 *
 * variant = single_pass (0, Corollary 2).  A secret uniformly random order
 * cut into N disjoint batches of B: one Gaussian mechanism by parallel
 * composition, {parallel, parts N: gaussian z}, calibrated by
 * onepass_calibrate().  Defaults B = round(n^(1/3)), N = floor(n / B),
 * lambda = max(M / D, L) max(n^(1/3), sqrt(p ln(1/delta)) / eps).  Strong
 * gap guarantee.
 *
 * variant = multi_pass (1, Theorem 7).  Every prox step on its own uniform
 * B-subset without replacement, independent of the others:
 * self_composed(sampled_without_replacement(n, B, gaussian(z)), N),
 * calibrated by calibrate() on the dataset's mode (saddle/euclid.h).  The
 * paper's sigma = 8 M sqrt(ln(1/delta)) / (B lambda eps) is not used (about
 * 1.3x over the target epsilon under this accountant).  Defaults B =
 * round(sqrt(n)), N = n, lambda = max(M / D, L) max(sqrt(n), sqrt(p
 * ln(1/delta)) / eps).  Weak gap guarantee.
 *
 * Refusals before admission: the paper's Remark 1 regime (422
 * privacy_too_small_for_n naming privacy.epsilon), the fixed point asked
 * for with lambda <= L, an inner count above 1e6.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "privacy/noise.h"
#include "saddle/euclid.h"
#include "saddle/nispp.h"
#include "vi.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_VARIANT, P_BATCH_SIZE, P_ITERATIONS, P_PROX_WEIGHT, P_INNER_SOLVER, P__COUNT };
enum { NISPP_SINGLE_PASS = 0, NISPP_MULTI_PASS = 1 };

#define NISPP_MAX_ITERATIONS 1e9
#define NISPP_MAX_INNER      1e6

static const char *const nispp_variants[] = { "single_pass", "multi_pass", NULL };
static const char *const nispp_solvers[] = { "auto", "fixed_point", "operator_extrapolation",
					     NULL };

static const struct alg_param nispp_params[P__COUNT + 1] = {
	[P_VARIANT] = { "variant", ALG_PARAM_INT, 0.0, 1.0, 0.0,
			"\"single_pass\" (0): disjoint batches of a secret order, one Gaussian "
			"mechanism by parallel composition, strong-gap guarantee; \"multi_pass\" "
			"(1): an independent uniform batch without replacement per prox step, "
			"RDP-accounted, weak-gap guarantee",
			nispp_variants },
	[P_BATCH_SIZE] = { "batch_size", ALG_PARAM_INT, 0.0, 1e7, 0.0,
			   "records per prox step B; 0 = auto: single_pass round(n^(1/3)), "
			   "multi_pass round(sqrt(n))",
			   NULL },
	[P_ITERATIONS] = { "iterations", ALG_PARAM_INT, 0.0, NISPP_MAX_ITERATIONS, 0.0,
			   "prox steps N; 0 = auto: single_pass floor(n / B) (the most one "
			   "pass allows), multi_pass n",
			   NULL },
	[P_PROX_WEIGHT] = { "prox_weight", ALG_PARAM_REAL, 0.0, 1e12, 0.0,
			    "lambda of the prox step; 0 = auto: max(M / D, L) max(n^(1/3) "
			    "(single_pass) or sqrt(n) (multi_pass), sqrt(p ln(1/delta)) / "
			    "epsilon)",
			    NULL },
	[P_INNER_SOLVER] = { "inner_solver", ALG_PARAM_INT, 0.0, 2.0, 0.0,
			     "solver of the prox subproblem: \"auto\" (0): fixed_point when "
			     "lambda >= 2 L, else operator_extrapolation; \"fixed_point\" (1): "
			     "the resolvent iteration (needs lambda > L); "
			     "\"operator_extrapolation\" (2)",
			     nispp_solvers },
	[P__COUNT] = { 0 },
};

static const char *const nispp_objectives[] = { "bilinear",
						"worst_group_logistic",
						"matrix_game",
						"quadratic_game",
						"fair_logistic_lagrangian",
						"auc_minimax",
						"bilinear_vi",
						"affine_vi",
						NULL };

#define NISPP_SETS                                                                                 \
	((1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_LP_BALL) |    \
	 (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX))

struct nispp_setup {
	int variant;
	struct saddle_euclid c;
	size_t batch;
	unsigned long iterations;
	double lambda;
	int solver;      /* NISPP_SOLVER_FIXED_POINT or NISPP_SOLVER_OE */
	double nu_priv;  /* 2 M^2 / (lambda B^2) */
	double nu_inner; /* min(nu_target, nu_priv / 2): sets the counts */
	double z;
	double sensitivity; /* 4 M / (lambda B) */
	int lattice_k;
	double sensitivity_lattice;
	double sigma;
};

struct nispp_state {
	const struct objective *obj;
	const struct dataset *ds;
	struct rng *rng;
	struct constraint_product set;
	size_t dim, n, b;
	bool vi, multi;
	unsigned long steps, t;
	int solver, lattice_k;
	double clip, smooth, diameter, lambda, nu_cert, sigma;
	double count; /* inner iterations per prox step, from public values */
	struct dgauss_params noise;
	size_t *order;   /* owned: n */
	double *w;       /* owned: dim, the noisy centre w_k */
	double *z;       /* owned: dim, the inner iterate */
	double *g;       /* owned: dim, G at the prox point */
	double *avg;     /* owned: dim, mean of w_1..w_k */
	double *work;    /* owned: 4 dim, the inner solver's */
	double *scratch; /* owned: dim */
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook;
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

size_t
nispp_batch(size_t n, bool multi)
{
	double b = round(multi ? sqrt((double)n) : cbrt((double)n));

	if (!(b >= 1.0))
		return 1;
	return b >= (double)n ? n : (size_t)b;
}

double
nispp_prox_weight(double bound, double diameter, double smooth, size_t n, size_t p, double epsilon,
		  double delta, bool multi)
{
	double nn = (double)n;

	return fmax(bound / diameter, smooth) *
	       fmax(multi ? sqrt(nn) : cbrt(nn), sqrt((double)p * log(1.0 / delta)) / epsilon);
}

double
nispp_priv_accuracy(double bound, double lambda, size_t batch)
{
	return 2.0 * bound * bound / (lambda * (double)batch * (double)batch);
}

double
nispp_zeta(double nu, double smooth, double diameter, double lambda, int solver)
{
	double kappa = (smooth + 2.0 * lambda) / (smooth + lambda), r = 1.0 / sqrt(kappa);

	if (solver == NISPP_SOLVER_FIXED_POINT)
		return nu / ((1.0 + smooth / lambda) * smooth * diameter);
	return nu / ((1.0 + r) * (3.0 + r) * (smooth + lambda) * diameter);
}

double
nispp_fixed_point_iterations(double diameter, double nu, double lambda, double smooth)
{
	if (smooth == 0.0)
		return 1.0;
	if (!(lambda > smooth))
		return 0.0;
	return fmax(1.0, 1.0 + ceil(log(diameter / nispp_zeta(nu, smooth, diameter, lambda,
							      NISPP_SOLVER_FIXED_POINT)) /
				    log(lambda / smooth)));
}

double
nispp_oe_iterations(double diameter, double nu, double lambda, double smooth)
{
	double kappa = (smooth + 2.0 * lambda) / (smooth + lambda);

	return fmax(1.0, 1.0 + ceil(2.0 *
				    log(diameter /
					nispp_zeta(nu, smooth, diameter, lambda, NISPP_SOLVER_OE)) /
				    log(kappa)));
}

/* The count of every prox step: public values only. */
static double
inner_count(const struct nispp_setup *s)
{
	if (s->solver == NISPP_SOLVER_FIXED_POINT)
		return nispp_fixed_point_iterations(s->c.diameter, s->nu_inner, s->lambda,
						    s->c.smooth);
	return nispp_oe_iterations(s->c.diameter, s->nu_inner, s->lambda, s->c.smooth);
}

/* Everything but the noise. */
static enum err_code
nispp_bounds(const struct run_spec *spec, struct nispp_setup *ret, struct err *e)
{
	double b_param = spec->params[P_BATCH_SIZE], t_param = spec->params[P_ITERATIONS];
	double l_param = spec->params[P_PROX_WEIGHT];
	int solver = (int)spec->params[P_INNER_SOLVER];
	bool multi;
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	ret->variant = (int)spec->params[P_VARIANT];
	multi = ret->variant == NISPP_MULTI_PASS;
	rc = saddle_euclid_constants(spec, "saddle.nispp", &ret->c, e);
	if (rc != ERR_OK)
		return rc;
	if (b_param > (double)spec->n)
		return err_set_field(
			e, ERR_INVALID, "params.batch_size",
			"'params.batch_size' (%.0f) exceeds the number of records (%zu)", b_param,
			spec->n);
	ret->batch = b_param == 0.0 ? nispp_batch(spec->n, multi) : (size_t)b_param;
	if (!multi) {
		unsigned long most = (unsigned long)(spec->n / ret->batch);

		if (t_param > (double)most)
			return err_set_field(e, ERR_INVALID, "params.iterations",
					     "'params.iterations' (%.0f) exceeds floor(n / "
					     "batch_size) = %lu, what one pass allows",
					     t_param, most);
		ret->iterations = t_param == 0.0 ? most : (unsigned long)t_param;
	} else {
		ret->iterations = t_param == 0.0 ? (unsigned long)spec->n : (unsigned long)t_param;
	}
	if (ret->iterations == 0)
		return err_set(e, ERR_INTERNAL, "no iteration planned");
	ret->lambda = l_param != 0.0 ? l_param
				     : nispp_prox_weight(ret->c.bound, ret->c.diameter,
							 ret->c.smooth, spec->n, spec->dim,
							 spec->epsilon, spec->delta, multi);
	if (!is_finite_pos(ret->lambda))
		return err_set(e, ERR_NUMERIC, "the prox weight is not a finite positive number");
	if (solver == NISPP_SOLVER_AUTO)
		solver = ret->lambda >= 2.0 * ret->c.smooth ? NISPP_SOLVER_FIXED_POINT
							    : NISPP_SOLVER_OE;
	if (solver == NISPP_SOLVER_FIXED_POINT && ret->c.smooth > 0.0 &&
	    !(ret->lambda > ret->c.smooth))
		return err_set_field(e, ERR_INVALID, "params.inner_solver",
				     "the fixed point needs the prox weight (%.4g) above the "
				     "operator's Lipschitz constant (%.4g); use "
				     "operator_extrapolation",
				     ret->lambda, ret->c.smooth);
	ret->solver = solver;
	ret->nu_priv = nispp_priv_accuracy(ret->c.bound, ret->lambda, ret->batch);
	ret->nu_inner = ret->nu_priv / 2.0;
	if (multi)
		ret->nu_inner = fmin(ret->nu_inner,
				     ret->c.bound * ret->c.bound /
					     (ret->lambda * (double)spec->n * (double)spec->n));
	if (!is_finite_pos(ret->nu_inner))
		return err_set(e, ERR_NUMERIC, "the prox accuracy is not a finite positive number");
	if (!(inner_count(ret) <= NISPP_MAX_INNER))
		return err_set_field(e, ERR_INVALID, "params.prox_weight",
				     "the prox subproblem would need more than %.0g inner "
				     "iterations; raise 'params.prox_weight'",
				     NISPP_MAX_INNER);
	return ERR_OK;
}

static enum err_code
nispp_event(const struct run_spec *spec, const struct nispp_setup *s, double z,
	    struct dp_event_tree *ret, struct err *e)
{
	if (s->variant == NISPP_SINGLE_PASS)
		return onepass_event(z, s->iterations, ret, e);
	return saddle_euclid_wor_event(z, spec->n, s->batch, s->iterations, ret, e);
}

static enum err_code
nispp_calibrate(const struct run_spec *spec, const struct nispp_setup *s, double *ret_z,
		const char **ret_accountant, struct err *e)
{
	if (s->variant == NISPP_SINGLE_PASS)
		return onepass_calibrate(spec, ret_z, ret_accountant, e);
	return saddle_euclid_wor_calibrate(spec, s->batch, s->iterations, ret_z, ret_accountant, e);
}

static enum err_code
nispp_schedule(const struct run_spec *spec, double z, struct nispp_setup *s, struct err *e)
{
	enum err_code rc;

	if (!is_finite_pos(z))
		return err_set(e, ERR_INTERNAL, "the noise multiplier is not finite and positive");
	s->z = z;
	s->sensitivity = 4.0 * s->c.bound / (s->lambda * (double)s->batch);
	rc = onepass_lattice(s->sensitivity, spec->dim, &s->lattice_k, &s->sensitivity_lattice, e);
	if (rc != ERR_OK)
		return rc;
	s->sigma = z * s->sensitivity_lattice;
	if (!is_finite_pos(s->sigma))
		return err_set(e, ERR_NUMERIC, "the noise is not a finite positive number");
	return ERR_OK;
}

/* The paper's own noise for the record (not used): Prop. 10's sigma^2 =
 * 32 M^2 ln(1/delta) / (lambda^2 B^2 eps^2) (single pass), Theorem 7's
 * sigma = 8 M sqrt(ln(1/delta)) / (B lambda eps) (multi-pass). */
static double
paper_sigma(const struct run_spec *spec, const struct nispp_setup *s)
{
	double c = s->variant == NISPP_SINGLE_PASS ? sqrt(32.0 * log(1.0 / spec->delta))
						   : 8.0 * sqrt(log(1.0 / spec->delta));

	return c * s->c.bound / (s->lambda * (double)s->batch * spec->epsilon);
}

static enum err_code
nispp_fill_plan(const struct run_spec *spec, const struct nispp_setup *s, struct run_plan *ret,
		struct err *e)
{
	enum err_code rc;

	onepass_plan_start(ret, spec, s->iterations, s->batch);
	rc = nispp_event(spec, s, s->z, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "prox_weight", s->lambda);
	run_plan_use(ret, "inner_solver", (double)s->solver);
	run_plan_use(ret, "privacy_accuracy", s->nu_priv);
	run_plan_use(ret, "inner_accuracy", s->nu_inner);
	run_plan_use(ret, "operator_bound", s->c.bound);
	run_plan_use(ret, "operator_lipschitz", s->c.smooth);
	run_plan_use(ret, "diameter", s->c.diameter);
	onepass_plan_use_noise(ret, s->sensitivity, s->sensitivity_lattice, s->lattice_k, s->z,
			       s->sigma, 1.0 / s->lambda);
	run_plan_use(ret, "paper_noise_sigma", paper_sigma(spec, s));
	run_plan_use(ret, "dim_x", (double)(s->c.vi ? spec->dim : spec->objective.dim_x));
	run_plan_use(ret, "dim_y", (double)(s->c.vi ? 0 : spec->objective.dim_y));
	if (s->variant == NISPP_SINGLE_PASS)
		run_plan_use(ret, "unused_records",
			     (double)(spec->n - (size_t)s->iterations * s->batch));
	else
		run_plan_use(ret, "sampling_rate", (double)s->batch / (double)spec->n);
	return ERR_OK;
}

static enum err_code
nispp_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct nispp_setup s;
	struct run_plan p;
	const char *accountant = NULL;
	double z = 0.0;
	enum err_code rc;

	rc = nispp_bounds(spec, &s, e);
	if (rc == ERR_OK)
		rc = nispp_calibrate(spec, &s, &z, &accountant, e);
	if (rc == ERR_OK)
		rc = nispp_schedule(spec, z, &s, e);
	if (rc == ERR_OK)
		rc = nispp_fill_plan(spec, &s, &p, e);
	if (rc == ERR_OK) {
		p.accountant = accountant;
		*ret_plan = p;
	}
	return rc;
}

/* N prox steps, each (S + 2) batch evaluations of B records in p
 * dimensions (S the public inner count, the same at every step), and the
 * order. */
static double
nispp_work(const struct run_spec *spec, const struct run_plan *plan)
{
	struct nispp_setup s;
	double inner = 50.0;

	if (nispp_bounds(spec, &s, NULL) == ERR_OK)
		inner = inner_count(&s);
	return (double)plan->steps * (inner + 2.0) * ((double)s.batch + 1.0) * (double)spec->dim +
	       (double)spec->n;
}

static enum err_code
nispp_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	   const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct nispp_state *s = state;
	struct nispp_setup su;
	struct run_plan mine;
	bool derived;
	enum err_code rc;

	rc = nispp_bounds(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived = nispp_schedule(spec, run_plan_value(plan, "noise_multiplier"), &su, NULL) ==
			  ERR_OK &&
		  nispp_fill_plan(spec, &su, &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;
	rc = saddle_euclid_set(spec, &su.c, &s->set, e);
	if (rc != ERR_OK)
		return rc;
	s->obj = &spec->objective;
	s->ds = ds;
	s->rng = rng;
	s->dim = spec->dim;
	s->n = ds->n;
	s->b = su.batch;
	s->vi = su.c.vi;
	s->multi = su.variant == NISPP_MULTI_PASS;
	s->steps = su.iterations;
	s->solver = su.solver;
	s->lattice_k = su.lattice_k;
	s->clip = su.c.bound;
	s->smooth = su.c.smooth;
	s->diameter = su.c.diameter;
	s->lambda = su.lambda;
	s->nu_cert = su.nu_priv / 2.0;
	s->count = inner_count(&su);
	s->sigma = su.sigma;

	s->order = calloc(s->n, sizeof(*s->order));
	s->w = calloc(s->dim, sizeof(double));
	s->z = calloc(s->dim, sizeof(double));
	s->g = calloc(s->dim, sizeof(double));
	s->avg = calloc(s->dim, sizeof(double));
	s->work = calloc(4 * s->dim, sizeof(double));
	s->scratch = calloc(s->dim, sizeof(double));
	if (s->order == NULL || s->w == NULL || s->z == NULL || s->g == NULL || s->avg == NULL ||
	    s->work == NULL || s->scratch == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the saddle.nispp state");
	constraint_product_project(&s->set, s->w, s->scratch); /* w_0 = Pi(0) */
	if (s->multi) {
		for (size_t i = 0; i < s->n; i++)
			s->order[i] = i;
	} else {
		onepass_order(rng, s->order, s->n, (size_t)su.iterations * su.batch);
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

/* The records of prox step k: the next slice of the secret order (single
 * pass) or a fresh uniform B-subset without replacement (multi-pass; the
 * n rows in order, no draws, when B = n). */
static const size_t *
nispp_batch_of(struct nispp_state *s, unsigned long k)
{
	if (!s->multi)
		return s->order + (size_t)k * s->b;
	if (s->b == s->n)
		return s->order;
	onepass_order_partial(s->rng, s->order, s->n, s->b);
#ifdef DPOPT_TESTING
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

/* g <- F_B(v), the clipped batch mean (no noise: the prox point is
 * noised, not the operator). */
static void
batch_operator(struct nispp_state *s, const size_t *batch, const double *v, double *g)
{
	memset(g, 0, s->dim * sizeof(*g));
	if (s->vi)
		vi_batch_operator(s->obj, s->ds, batch, s->b, v, s->clip, s->scratch, g);
	else
		saddle_batch_operator(s->obj, s->ds, batch, s->b, v, s->clip, s->scratch, g);
	for (size_t j = 0; j < s->dim; j++)
		g[j] /= (double)s->b;
}

/* g <- G(v) = F(v) + lambda (v - c). */
static void
prox_operator(const struct nispp_inner *in, size_t d, const double *v, double *g)
{
	in->op(in->ctx, v, g);
	for (size_t j = 0; j < d; j++)
		g[j] += in->lambda * (v[j] - in->c[j]);
}

double
nispp_inner_solve(const struct nispp_inner *in, double count, double *z, double *g, double *work)
{
	const size_t d = in->set->dim;
	double *zn = work, *gp = work + d, *lmo = work + 2 * d, *scratch = work + 3 * d;
	double dot = 0.0;

	memcpy(z, in->c, d * sizeof(double));
	constraint_product_project(in->set, z, scratch); /* Pi_W(c) */
	if (in->solver == NISPP_SOLVER_FIXED_POINT) {
		for (double it = 0.0; it < count; it += 1.0) {
			in->op(in->ctx, z, g);
			for (size_t j = 0; j < d; j++)
				z[j] = in->c[j] - g[j] / in->lambda;
			constraint_product_project(in->set, z, scratch);
		}
	} else {
		/* z_0 = z_1 = Pi_W(c); z_{t+1} = Pi_W(z_t - step (G(z_t) +
		 * (G(z_t) - G(z_{t-1})) / kappa)). */
		double step = 1.0 / (2.0 * (in->smooth + in->lambda));
		double kinv = (in->smooth + in->lambda) / (in->smooth + 2.0 * in->lambda);

		prox_operator(in, d, z, gp);
		for (double it = 0.0; it < count; it += 1.0) {
			prox_operator(in, d, z, g);
			for (size_t j = 0; j < d; j++)
				zn[j] = z[j] - step * (g[j] + kinv * (g[j] - gp[j]));
			constraint_product_project(in->set, zn, scratch);
			memcpy(z, zn, d * sizeof(double));
			memcpy(gp, g, d * sizeof(double));
		}
	}
	prox_operator(in, d, z, g);
	for (size_t j = 0; j < d; j++)
		dot += g[j] * z[j];
	return dot - constraint_product_lmo(in->set, g, lmo);
}

struct batch_ctx {
	struct nispp_state *s;
	const size_t *batch;
};

static void
batch_op(void *ctx, const double *v, double *g)
{
	struct batch_ctx *c = ctx;

	batch_operator(c->s, c->batch, v, g);
}

static enum err_code
nispp_step(void *state, struct err *e)
{
	struct nispp_state *s = state;
	const size_t d = s->dim;
	const size_t *batch;
	struct batch_ctx bc;
	struct nispp_inner in;
	double cert;
	bool finite = true;

	if (s->t >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	batch = nispp_batch_of(s, s->t);
	bc = (struct batch_ctx){ s, batch };
	in = (struct nispp_inner){ &s->set, batch_op, &bc, s->w, s->lambda, s->smooth, s->solver };
	cert = nispp_inner_solve(&in, s->count, s->z, s->g, s->work);
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->certificate != NULL)
		s->hook->certificate(s->hook->ctx, s->t, cert, s->nu_cert);
	if (s->hook != NULL && s->hook->fail_certificates)
		cert = INFINITY; /* a rounding failure, on demand */
#endif
	/* The certificate, an assertion: only rounding can fail it. */
	if (!(cert <= s->nu_cert))
		return err_set(e, ERR_INTERNAL, "the run failed");
	/* w_{k+1} = u_{k+1} + xi (not projected). */
	memcpy(s->w, s->z, d * sizeof(double));
	if (noise_lattice_gaussian_prepared(s->rng, &s->noise, s->lattice_k, s->w, d, NULL) !=
	    ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL)
		s->hook->release(s->hook->ctx, s->t, s->w, d);
#endif
	s->t++;
	for (size_t j = 0; j < d; j++) {
		s->avg[j] += (s->w[j] - s->avg[j]) / (double)s->t;
		finite = finite && isfinite(s->avg[j]);
	}
	if (!finite)
		return err_set(e, ERR_INTERNAL, "the run failed");
	return ERR_OK;
}

/* Pi_W of the mean of the noisy points. */
static void
nispp_result(const void *state, double *ret_u)
{
	const struct nispp_state *s = state;

	memcpy(ret_u, s->avg, s->dim * sizeof(*ret_u));
	constraint_product_project(&s->set, ret_u, s->scratch);
}

static void
nispp_fini(void *state)
{
	struct nispp_state *s = state;

	free(s->order);
	free(s->w);
	free(s->z);
	free(s->g);
	free(s->avg);
	free(s->work);
	free(s->scratch);
	s->order = NULL;
	s->w = s->z = s->g = s->avg = s->work = s->scratch = NULL;
}

const struct alg_ops alg_saddle_nispp = {
	.name = "saddle.nispp",
	.version = 1,
	.doc = "Noisy inexact stochastic proximal point for min over x max over y of a saddle "
	       "objective (or a monotone variational inequality over 'constraints.x'), "
	       "Euclidean geometry: each step solves the prox subproblem F_B(u) + lambda (u - "
	       "w) on a batch to a certified accuracy with a fixed number of fixed-point or "
	       "operator-extrapolation iterations, adds exact discrete Gaussian noise to the "
	       "prox point (sensitivity 4 M / (lambda B)) and takes it as the next centre; the "
	       "result is the projection of the mean of the noisy points.  variant "
	       "single_pass: disjoint batches of a secret order, one Gaussian mechanism by "
	       "parallel composition (strong-gap guarantee).  variant multi_pass: every step on "
	       "its own uniform batch without replacement (B = sqrt(n), n steps), composed in "
	       "RDP (weak-gap guarantee).  The noise is calibrated by the accountant of the "
	       "dataset's ledger, never by the paper's constants.",
	.paper = "D. Boob, C. Guzman, Optimal algorithms for differentially private stochastic "
		 "monotone variational inequalities and saddle-point problems, Mathematical "
		 "Programming Ser. A 2023, Algorithm 2, Corollary 2, Theorem 7; inner solver: "
		 "G. Kotsalis, G. Lan, T. Li, SIAM J. Optim. 2022; accountant: Y.-X. Wang, B. "
		 "Balle, S. Kasiviswanathan, AISTATS 2019; noise: C. Canonne, G. Kamath, T. "
		 "Steinke, NeurIPS 2020",
	.privacy_model = "(epsilon, delta)-DP, replace-one",
	.objectives = nispp_objectives,
	.constraints = NISPP_SETS,
	.params = nispp_params,
	.state_size = sizeof(struct nispp_state),
	.plan = nispp_plan,
	.work = nispp_work,
	.init = nispp_init,
	.step = nispp_step,
	.result = nispp_result,
	.fini = nispp_fini,
	.saddle = true,
	.constraints_y = NISPP_SETS,
	.vi = true,
};
