/*
 * mirror_descent/maurey_sco.c - "mirror_descent.maurey_sco": private
 * stochastic mirror descent with sequential Maurey sparsification for
 * stochastic convex optimization over the simplex or the l1 ball, by
 * anytime online-to-batch (T. Gonzalez, C. Guzman, C. Paquette, "Mirror
 * descent algorithms with nearly dimension-independent rates for
 * differentially-private stochastic saddle-point problems", 2024,
 * Algorithm 4; docs/algorithms/smd-maurey.md §5).
 *
 * The run.  Points are distributions over the m vertices c_i of the set
 * (frank_wolfe/lmo.h: the simplex of scale s, m = d; the l1 ball of radius
 * r, m = 2d; a request's vertex list, m listed), scored about a public
 * centre c with ||c_i - c||_1 <= R_c for every i (the scores <c_i, g> and
 * <c_i - c, g> differ by a shift common to all i, invisible to the softmax
 * and the draws; R_c bounds, no vertex need attain it).  Log-weights theta (x^t = softmax(theta))
 * start at 0; Omega_j = ln sum_{i<=t} x^i_j tracks the running average
 * w^t = exp(Omega) / t of the iterates (in the log domain).  A secret order
 * cuts the records into T batches of B = floor(n / T).  At step t:
 *
 *	Omega   <- logaddexp(Omega, theta - LSE(theta))    (theta - LSE at t = 1)
 *	if t <= q or q divides t: w^ <- (1/K) sum_k c_{J_k}, J_k ~ softmax(Omega)
 *	g       = (1/B) sum_{z in B_t} clamp_L(grad l(w^; z)) + grad r(w^)
 *	theta_i <- theta_i - tau <c_i, g>
 *	result  = (1/K) sum_k c_{J_k}, J_k ~ softmax(Omega) drawn at t = T
 *
 * with clamp_L the coordinate-wise clamp to the declared l_inf gradient
 * bound L (lipschitz_linf) and r the public regularizer.
 *
 * Privacy (replace-one).  A record is in one batch, at step s; replacing
 * it moves g^s by at most 2 L / B per coordinate, so theta^i_j of every
 * later iterate i > s by the same delta_j, |delta_j| <= 2 tau ||c_j - c||_1
 * L / B <= Delta = 2 tau R_c L
 * / B (and nothing else, given the same earlier draws).  A draw from
 * softmax(Omega) = P_{w^t} is a draw of a uniform i <= t, then of a vertex
 * from softmax(theta^i): a mixture of exponential mechanisms whose
 * normalisers move differently, so its log-likelihood ratio lies in
 * [-2 Delta, 2 Delta] (each component's does) -- (2 Delta)-DP but only
 * (4 Delta)-bounded-range, unlike Algorithm 1's single-iterate draws.  The
 * k = K (R + 1) draws (R refreshes, R = min(q, T) + max(0, floor(T / q) -
 * 1), and the final K) compose adaptively:
 *	self_composed(pure(4 tau R_c L / B), K (R + 1)).
 * The spec and the issue charge bounded_range(4 tau R_c L / B) here; that
 * is not a bound for a mixture, so this file charges pure DP (the same
 * Renyi curve as bounded_range(8 tau R_c L / B) up to the conversion).
 * tau_priv is calibrated on the dataset's mode (calibrate(), the noise
 * being 1 / tau).
 *
 * Defaults from public inputs (Theorem 5.1, first-order smooth, spec
 * §4.6): l = max(ln m, 1), Ld = ln(1/delta),
 *	T = min(n, (n eps)^(4/5) / (l Ld)^(2/5)),  q = sqrt(T) / l,  K = T / l,
 *	tau = min(sqrt(l / (V T)), 1 / (8 q L_0), tau_priv),
 *	V = L_0^2 + (L_0^2 + L_1^2) q sqrt(l / K) + L_1^2 q / (sqrt(l) K^(3/2)),
 * with L_0 = R_c L and L_1 = R_c^2 beta the constants of the lifted
 * problem (beta the declared l1 smoothness, smooth_l1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "frank_wolfe/lmo.h"
#include "gauss_onepass.h"
#include "privacy/calibrate.h"
#include "privacy/noise.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_STEPS, P_DRAWS, P_REFRESH, P_STEP_SIZE, P__COUNT };

#define MSC_MAX_STEPS 1e7
#define MSC_MAX_DRAWS 1e5

static const struct alg_param msc_params[P__COUNT + 1] = {
	[P_STEPS] = { "steps", ALG_PARAM_INT, 0.0, MSC_MAX_STEPS, 0.0,
		      "steps T, at most n (batches of floor(n / T) fresh records); 0 = auto: "
		      "min(n, (n eps)^(4/5) / (l ln(1/delta))^(2/5)), l = max(ln m, 1), m "
		      "vertices",
		      NULL },
	[P_DRAWS] = { "draws", ALG_PARAM_INT, 0.0, MSC_MAX_DRAWS, 0.0,
		      "vertex draws K of each sparsified average (the query point and the "
		      "result); 0 = auto: ceil(T / l)",
		      NULL },
	[P_REFRESH] = { "refresh", ALG_PARAM_INT, 0.0, MSC_MAX_STEPS, 0.0,
			"the query point is drawn afresh at steps 1..q and every q-th step "
			"after; 0 = auto: max(1, floor(sqrt(T) / l))",
			NULL },
	[P_STEP_SIZE] = { "step_size", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			  "entropic step size tau; 0 = auto: min(sqrt(l / (V T)), 1 / (8 q L_0), "
			  "tau_priv); a given tau above tau_priv is refused",
			  NULL },
	[P__COUNT] = { 0 },
};

static const char *const msc_objectives[] = { "logistic", "least_squares", "huber",
					      "log_optimal_portfolio", NULL };

struct msc_setup {
	double lip;  /* L: the clamp */
	double beta; /* l1 smoothness */
	double rc;   /* R_c */
	size_t m;    /* vertices */
	double ell;
	unsigned long steps, draws, refresh, refreshes;
	size_t batch;
	double tau_acc; /* min(sqrt(l / (V T)), 1 / (8 q L_0)) */
};

struct msc_state {
	const struct objective *obj;
	const struct dataset *ds;
	struct rng *rng;
	struct constraint set;
	size_t dim, m, b;
	unsigned long steps, draws, refresh, t;
	double tau, lip;
	size_t *order; /* owned: n */
	double *theta; /* owned: m */
	double *omega; /* owned: m, ln sum_{i<=t} x^i */
	double *w;     /* owned: m scratch */
	double *query; /* owned: dim, the sparsified average */
	double *g;     /* owned: dim, one record's gradient */
	double *acc;   /* owned: dim, the batch's clamped sum */
	double *out;   /* owned: dim, the result */
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook;
	unsigned long released;
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

/* R = min(q, T) + max(0, floor(T / q) - 1): the refresh steps. */
static unsigned long
refresh_count(unsigned long t, unsigned long q)
{
	unsigned long r = q < t ? q : t, tail = t / q;

	return r + (tail > 0 ? tail - 1 : 0);
}

static enum err_code
msc_setup(const struct run_spec *spec, struct msc_setup *ret, struct err *e)
{
	struct objective_constants oc;
	double n = (double)spec->n, ld = log(1.0 / spec->delta), t, k, q, l0, l1, v;
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	rc = objective_constants(&spec->objective, &spec->schema, &spec->x, &oc, e);
	if (rc != ERR_OK)
		return rc;
	ret->lip = oc.lipschitz_linf;
	ret->beta = oc.smooth_l1;
	ret->rc = fw_vertex_norm(&spec->x);
	ret->m = fw_vertex_count(&spec->x, spec->dim);
	if (!is_finite_pos(ret->lip) || !(isfinite(ret->beta) && ret->beta >= 0.0) ||
	    !is_finite_pos(ret->rc) || ret->m == 0)
		return err_set(e, ERR_NUMERIC,
			       "the gradient bound or smoothness is not a finite positive number");
	ret->ell = fmax(log((double)ret->m), 1.0);
	t = spec->params[P_STEPS];
	if (t > n)
		return err_set_field(e, ERR_INVALID, "params.steps",
				     "'params.steps' (%.0f) exceeds the number of records (%zu)", t,
				     spec->n);
	if (t == 0.0)
		t = fmin(fmax(floor(pow(n * spec->epsilon, 0.8) / pow(ret->ell * ld, 0.4)), 1.0),
			 n);
	k = spec->params[P_DRAWS];
	if (k == 0.0)
		k = fmin(fmax(ceil(t / ret->ell), 1.0), MSC_MAX_DRAWS);
	q = spec->params[P_REFRESH];
	if (q == 0.0)
		q = fmax(floor(sqrt(t) / ret->ell), 1.0);
	ret->steps = (unsigned long)t;
	ret->draws = (unsigned long)k;
	ret->refresh = (unsigned long)q;
	ret->refreshes = refresh_count(ret->steps, ret->refresh);
	ret->batch = (size_t)(n / t);
	l0 = ret->rc * ret->lip;
	l1 = ret->rc * ret->rc * ret->beta;
	v = l0 * l0 + (l0 * l0 + l1 * l1) * q * sqrt(ret->ell / k) +
	    l1 * l1 * q / (sqrt(ret->ell) * pow(k, 1.5));
	ret->tau_acc = fmin(sqrt(ret->ell / (v * t)), 1.0 / (8.0 * q * l0));
	if (ret->batch < 1 || !is_finite_pos(ret->tau_acc))
		return err_set(e, ERR_NUMERIC, "the schedule is not usable");
	return ERR_OK;
}

struct msc_ctx {
	double l0;
	size_t batch;
	uint64_t count;
};

static struct msc_ctx
msc_ctx_of(const struct msc_setup *s)
{
	return (struct msc_ctx){ s->rc * s->lip, s->batch,
				 (uint64_t)s->draws * ((uint64_t)s->refreshes + 1u) };
}

static enum err_code
msc_fill_plan(const struct run_spec *spec, const struct msc_setup *s, double tau,
	      struct run_plan *ret, struct err *e)
{
	struct msc_ctx c = msc_ctx_of(s);
	enum err_code rc;

	if (!is_finite_pos(tau))
		return err_set(e, ERR_INTERNAL, "the step size is not finite and positive");
	onepass_plan_start(ret, spec, s->steps, s->batch);
	rc = draws_event(DP_EVENT_PURE, 4.0 * c.l0 / (double)c.batch, c.count, 1.0 / tau,
			 spec->mode, spec->delta, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "draws", (double)s->draws);
	run_plan_use(ret, "refresh", (double)s->refresh);
	run_plan_use(ret, "refreshes", (double)s->refreshes);
	run_plan_use(ret, "step_size", tau);
	run_plan_use(ret, "lipschitz_linf", s->lip);
	run_plan_use(ret, "smooth_l1", s->beta);
	run_plan_use(ret, "vertices", (double)s->m);
	run_plan_use(ret, "draw_count", (double)c.count);
	run_plan_use(ret, "draw_epsilon", 4.0 * tau * c.l0 / (double)s->batch);
	run_plan_use(ret, "unused_records", (double)(spec->n - (size_t)s->steps * s->batch));
	return ERR_OK;
}

static enum err_code
msc_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct msc_setup s;
	struct msc_ctx c;
	struct accountant_report report;
	struct run_plan p;
	double tau = 0.0;
	enum err_code rc;

	rc = msc_setup(spec, &s, e);
	if (rc != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	c = msc_ctx_of(&s);
	rc = draws_step_size(DP_EVENT_PURE, 4.0 * c.l0 / (double)c.batch, c.count, spec->mode,
			     spec->epsilon, spec->delta, s.tau_acc, spec->params[P_STEP_SIZE], &tau,
			     &report, e);
	if (rc != ERR_OK)
		return rc;
	rc = msc_fill_plan(spec, &s, tau, &p, e);
	if (rc == ERR_OK) {
		p.accountant = report.accountant;
		*ret_plan = p;
	}
	return rc;
}

static double
msc_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double k = run_plan_value(plan, "draw_count"), m = run_plan_value(plan, "vertices");

	if (isnan(k) || isnan(m))
		return (double)spec->n * (double)spec->dim;
	/* The records once each; per step the weights' update and their
	 * logaddexp over m vertices; each draw m words. */
	/* A polytope's list: m d per step's log-weights, d per vertex added. */
	return (double)spec->n * (double)spec->dim + (double)plan->steps * 4.0 * m + k * m +
	       (fw_polytope_work(&spec->x, spec->dim) > 0.0
			? (double)plan->steps * fw_polytope_work(&spec->x, spec->dim) +
				  k * (double)spec->dim
			: 0.0);
}

static enum err_code
msc_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	 const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct msc_state *s = state;
	struct msc_setup su;
	struct run_plan mine;
	bool derived;
	enum err_code rc;

	rc = msc_setup(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived =
		msc_fill_plan(spec, &su, run_plan_value(plan, "step_size"), &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;
	s->obj = &spec->objective;
	s->ds = ds;
	s->rng = rng;
	s->set = spec->x;
	s->dim = spec->dim;
	s->m = su.m;
	s->b = su.batch;
	s->steps = su.steps;
	s->draws = su.draws;
	s->refresh = su.refresh;
	s->lip = su.lip;
	s->tau = run_plan_value(plan, "step_size");
	s->order = calloc(ds->n, sizeof(*s->order));
	s->theta = calloc(s->m, sizeof(*s->theta));
	s->omega = calloc(s->m, sizeof(*s->omega));
	s->w = calloc(s->m, sizeof(*s->w));
	s->query = calloc(s->dim, sizeof(*s->query));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->acc = calloc(s->dim, sizeof(*s->acc));
	s->out = calloc(s->dim, sizeof(*s->out));
	if (s->order == NULL || s->theta == NULL || s->omega == NULL || s->w == NULL ||
	    s->query == NULL || s->g == NULL || s->acc == NULL || s->out == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the mirror_descent.maurey_sco state");
	onepass_order(rng, s->order, ds->n, (size_t)su.steps * su.batch);
#ifdef DPOPT_TESTING
	s->hook = spec->testing_hook;
	if (s->hook != NULL) {
		double scale = 1.0;

		rc = onepass_testing_hook(s->hook, s->order, ds->n, &scale, e);
		if (rc != ERR_OK)
			return rc;
		s->tau /= scale;
	}
#endif
	return ERR_OK;
}

static double
log_add_exp(double a, double b)
{
	double hi = a > b ? a : b, lo = a > b ? b : a;

	return hi + log1p(exp(lo - hi));
}

/* dst <- (1/K) sum of K vertices drawn from softmax(omega). */
static enum err_code
msc_sparsify(struct msc_state *s, double *dst, struct err *e)
{
	size_t v = 0;

	memset(dst, 0, s->dim * sizeof(*dst));
	for (unsigned long k = 0; k < s->draws; k++) {
		if (noise_exp_mech(s->rng, s->omega, s->m, &v, e) != ERR_OK)
			return err_failed(e);
#ifdef DPOPT_TESTING
		if (s->hook != NULL && s->hook->release != NULL) {
			double idx = (double)v;

			s->hook->release(s->hook->ctx, s->released, &idx, 1);
		}
		s->released++;
#endif
		fw_add_vertex(&s->set, s->dim, v, 1.0 / (double)s->draws, dst);
	}
	return ERR_OK;
}

static enum err_code
msc_step(void *state, struct err *e)
{
	struct msc_state *s = state;
	const size_t *batch;
	double lse = -INFINITY, inv_b;
	unsigned long t;

	if (s->t >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	t = s->t + 1;
	for (size_t i = 0; i < s->m; i++)
		lse = log_add_exp(lse, s->theta[i]);
	for (size_t i = 0; i < s->m; i++) {
		double lx = s->theta[i] - lse;

		s->omega[i] = t == 1 ? lx : log_add_exp(s->omega[i], lx);
	}
	if ((t <= s->refresh || t % s->refresh == 0) && msc_sparsify(s, s->query, e) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	memset(s->acc, 0, s->dim * sizeof(*s->acc));
	batch = s->order + s->t * s->b;
	for (size_t r = 0; r < s->b; r++) {
		objective_grad(s->obj, s->ds, batch[r], s->query, 1.0, s->g);
		fw_add_clamped(s->ds, batch[r], s->dim, s->lip, s->g, s->acc);
	}
	inv_b = 1.0 / (double)s->b;
	for (size_t j = 0; j < s->dim; j++)
		s->acc[j] *= inv_b;
	objective_reg_grad(s->obj, s->query, 1.0, s->acc);
	/* theta_i -= tau <c_i, g>: fw_log_weights at temperature 1 / tau. */
	fw_log_weights(&s->set, s->acc, s->dim, 1.0 / s->tau, s->w);
	for (size_t i = 0; i < s->m; i++)
		s->theta[i] += s->w[i];
	if (t == s->steps && msc_sparsify(s, s->out, e) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	s->t = t;
	return ERR_OK;
}

static void
msc_result(const void *state, double *ret_x)
{
	const struct msc_state *s = state;

	memcpy(ret_x, s->out, s->dim * sizeof(*ret_x));
}

static void
msc_fini(void *state)
{
	struct msc_state *s = state;

	free(s->order);
	free(s->theta);
	free(s->omega);
	free(s->w);
	free(s->query);
	free(s->g);
	free(s->acc);
	free(s->out);
	s->order = NULL;
	s->theta = s->omega = s->w = s->query = s->g = s->acc = s->out = NULL;
}

const struct alg_ops alg_md_maurey_sco = {
	.name = "mirror_descent.maurey_sco",
	.version = 1,
	.doc = "Private stochastic mirror descent with sequential Maurey sparsification for "
	       "convex losses over the simplex or the l1 ball: entropic steps on log-weights over "
	       "the vertices, gradients taken at a K-vertex sample of the running average of the "
	       "iterates (anytime online-to-batch), refreshed at the first q steps and every q-th "
	       "after, one pass over disjoint batches of a secret order, per-record gradients "
	       "clamped to the declared l_inf bound; the result is a fresh K-vertex sample of the "
	       "final average (at most K non-zeros).  Every vertex draw (from the average: a "
	       "mixture of exponential mechanisms) is (4 tau R_c L / B)-DP; charged "
	       "self_composed(pure, K (R + 1)), tau calibrated on the dataset's accountant (both "
	       "ledger modes).  Smooth losses only.",
	.paper = "T. Gonzalez, C. Guzman, C. Paquette, Mirror descent algorithms with nearly "
		 "dimension-independent rates for differentially-private stochastic saddle-point "
		 "problems, 2024, Algorithm 4 (online-to-batch: A. Cutkosky, ICML 2019)",
	.privacy_model = "epsilon-DP, replace-one",
	.objectives = msc_objectives,
	.constraints = (1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_SIMPLEX) |
		       (1u << CONSTRAINT_POLYTOPE),
	.params = msc_params,
	.state_size = sizeof(struct msc_state),
	.plan = msc_plan,
	.work = msc_work,
	.init = msc_init,
	.step = msc_step,
	.result = msc_result,
	.fini = msc_fini,
};
