/*
 * saddle/smd_maurey.c - "saddle.smd_maurey": private stochastic mirror
 * descent for saddle points with sequential Maurey sparsification
 * (T. Gonzalez, C. Guzman, C. Paquette, "Mirror descent algorithms with
 * nearly dimension-independent rates for differentially-private
 * stochastic saddle-point problems", 2024, Algorithm 1;
 * docs/algorithms/smd-maurey.md).
 *
 * The sets.  x and y each live in a polytope of m vertices c_i, scored
 * about a public centre c with R_c = max_i ||c_i - c||_1: the simplex of
 * scale s (m = d, c = 0, R_c = s) or the l1 ball of radius r (m = 2d, c =
 * 0, R_c = r; frank_wolfe/lmo.h's vertex order), and for x also a vertex
 * list of the request (constraints.x.kind "polytope": m listed vertices,
 * the centre constraint_polytope() picks from them).  A point is a
 * distribution lambda over the vertices, x = sum_i lambda_i c_i (the
 * paper's Appendix C reduction; on the simplex it is x itself).  The
 * scores <c_i, G> and <c_i - c, G> differ by <c, G>, common to every i,
 * which changes neither a softmax nor a draw; the proof below needs only
 * ||c_i - c||_1 <= R_c for every i, never equality (a polytope's vertices
 * lie at different distances from its centre).
 *
 * The run.  A secret uniform order of the n records is cut into T
 * batches of B = floor(n / T) (the rest unused).  The players' log-weights
 * are theta_x = -tau sum_{s<t} <c_i, G_x^s> and theta_y = -tau sum_{s<t}
 * <c_j, G_y^s> with G = (grad_x, -grad_y) the batch-mean operator (so x
 * descends and y ascends: the spec's erratum ER1).  At step t = 1..T:
 *
 *	I_1..I_K ~ softmax(theta_x), J_1..J_K ~ softmax(theta_y)   (i.i.d.)
 *	u^   = ((1/K) sum_k c_{I_k}, (1/K) sum_k c_{J_k})          (Maurey)
 *	I*, J* one more draw each: the output sample of step t
 *	G^t  = (1/B) sum_{z in B_t} clamp(g(u^; z))
 *	result = ((1/T) sum_t c_{I*_t}, (1/T) sum_t c_{J*_t})
 *
 * with clamp the coordinate-wise clamp of the x block to [-L_x, L_x] and
 * of the y block to [-L_y, L_y], L_x and L_y the declared l_inf bounds of
 * the record's gradients over X x Y (saddle_constants in l1 geometry).
 *
 * Privacy (replace-one).  A record is in one batch; replacing it moves
 * G^t by at most 2 L_b / B per coordinate of block b, so every later score
 * <c_i - c, .> of that block moves by at most tau ||c_i - c||_1 2 L_b / B
 * <= tau R_c,b 2 L_b / B.  Each draw
 * is then an exponential mechanism whose scores move by at most Delta =
 * 2 tau L_0 / B, L_0 = max(R_c,x L_x, R_c,y L_y): (2 Delta)-bounded-range,
 * eps_0 = 4 tau L_0 / B, and the k = 2 T (K + 1) draws compose adaptively
 * (the draws of step 1 are data-independent; counted anyway):
 *	self_composed(bounded_range(eps_0), 2 T (K + 1)).
 * tau_priv is calibrated on the dataset's mode (calibrate(), the noise
 * being 1 / tau); the run uses tau = min(tau_opt, tau_priv) and charges
 * the event at the tau it uses.  The paper's cap (Prop. 4.1) counts one
 * player's draws only (erratum ER2).
 *
 * Defaults from public inputs (Theorems 4.1 and 4.2, the smoothness class
 * of the objective): with l = max(ln m_x + ln m_y, 1), Ld = ln(1 / delta),
 *	quadratic class (bilinear, matrix_game, quadratic_game):
 *	    T = min(n, n eps / sqrt(l Ld)), K = 1;
 *	second-order class (worst_group_logistic):
 *	    T = min(n, (n eps / (l^(1/4) sqrt(Ld)))^(4/5)), K = ceil(sqrt(T / l));
 *	tau_opt = sqrt(2 l / (5 T)) / L_0 (the minimiser of 2 l / (tau T) +
 *	5 tau L_0^2, spec §4.4).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "frank_wolfe/lmo.h"
#include "gauss_onepass.h"
#include "privacy/calibrate.h"
#include "privacy/noise.h"
#include "saddle.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_STEPS, P_DRAWS, P_STEP_SIZE, P__COUNT };

#define SMD_MAX_STEPS 1e7
#define SMD_MAX_DRAWS 1e4

static const struct alg_param smd_params[P__COUNT + 1] = {
	[P_STEPS] = { "steps", ALG_PARAM_INT, 0.0, SMD_MAX_STEPS, 0.0,
		      "steps T, at most n (batches of floor(n / T) fresh records); 0 = auto: "
		      "min(n, n eps / sqrt(l ln(1/delta))) for a quadratic objective (bilinear, "
		      "matrix_game, quadratic_game), min(n, (n eps / (l^(1/4) "
		      "sqrt(ln(1/delta))))^(4/5)) "
		      "for worst_group_logistic, l = ln m_x + ln m_y",
		      NULL },
	[P_DRAWS] = { "draws", ALG_PARAM_INT, 0.0, SMD_MAX_DRAWS, 0.0,
		      "vertex draws K per player per step (Maurey sparsification of the query "
		      "point); 0 = auto: 1 for a quadratic objective, ceil(sqrt(T / l)) for "
		      "worst_group_logistic",
		      NULL },
	[P_STEP_SIZE] = { "step_size", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			  "entropic step size tau; 0 = auto: min(sqrt(2 l / (5 T)) / L_0, "
			  "tau_priv); "
			  "a given tau above tau_priv is refused",
			  NULL },
	[P__COUNT] = { 0 },
};

static const char *const smd_objectives[] = { "bilinear", "worst_group_logistic", "matrix_game",
					      "quadratic_game", NULL };

#define SMD_SETS ((1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_SIMPLEX))

/* Everything derived from the public spec (plan() and init() alike). */
struct smd_setup {
	struct saddle_block bx, by;
	double lip_x, lip_y; /* l_inf bounds of the blocks' gradients: the clamps */
	double l0;           /* max(R_c,x L_x, R_c,y L_y) */
	size_t m_x, m_y;     /* vertices */
	double ell;          /* max(ln m_x + ln m_y, 1) */
	unsigned long steps; /* T */
	unsigned long draws; /* K */
	size_t batch;        /* B */
	double tau_opt;
	double l1, l2;  /* smoothness and third partials in vertex coordinates */
	double trivial; /* the population F's range: no point's gap exceeds it */
};

struct smd_state {
	const struct objective *obj;
	const struct dataset *ds;
	struct rng *rng;
	struct constraint set_x, set_y;
	size_t dim, dim_x, dim_y, m_x, m_y, b;
	unsigned long steps, draws, t;
	double tau, lip_x, lip_y;
	size_t *order; /* owned: n */
	double *sum;   /* owned: dim, sum of the batch-mean operators so far */
	double *u;     /* owned: dim, the sparsified query point */
	double *g;     /* owned: dim, one record's operator */
	double *acc;   /* owned: dim, the batch sum */
	double *out;   /* owned: dim, sum of the output vertices */
	double *w;     /* owned: max(m_x, m_y) log-weights */
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook;
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

/* Theorem 4.1's settings (K = 1) for a quadratic f, Theorem 4.2's
 * otherwise (saddle.h: the objective's declared smoothness class). */
static bool
is_quadratic(const struct run_spec *spec)
{
	return spec->objective.ops->saddle->smoothness == SADDLE_QUADRATIC;
}

static enum err_code
smd_setup(const struct run_spec *spec, struct smd_setup *ret, struct err *e)
{
	const struct objective *o = &spec->objective;
	struct saddle_constants sc;
	double n = (double)spec->n, ld = log(1.0 / spec->delta), t, k;
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	/* Entropic geometry whatever the request says: the constants in
	 * l1 / l_inf (lipschitz_dual). */
	ret->bx = (struct saddle_block){ spec->x, GEOMETRY_L1 };
	ret->by = (struct saddle_block){ spec->y, GEOMETRY_L1 };
	rc = saddle_constants(o, &spec->schema, &ret->bx, &ret->by, &sc, e);
	if (rc != ERR_OK)
		return rc;
	ret->lip_x = sc.x.lipschitz_dual;
	ret->lip_y = sc.y.lipschitz_dual;
	ret->m_x = fw_vertex_count(&spec->x, o->dim_x);
	ret->m_y = fw_vertex_count(&spec->y, o->dim_y);
	ret->l0 =
		fmax(fw_vertex_norm(&spec->x) * ret->lip_x, fw_vertex_norm(&spec->y) * ret->lip_y);
	if (!is_finite_pos(ret->lip_x) || !is_finite_pos(ret->lip_y) || !is_finite_pos(ret->l0) ||
	    ret->m_x == 0 || ret->m_y == 0)
		return err_set(e, ERR_NUMERIC,
			       "the gradient bounds are not finite positive numbers");
	ret->ell = fmax(log((double)ret->m_x) + log((double)ret->m_y), 1.0);
	t = spec->params[P_STEPS];
	k = spec->params[P_DRAWS];
	if (t > n)
		return err_set_field(e, ERR_INVALID, "params.steps",
				     "'params.steps' (%.0f) exceeds the number of records (%zu)", t,
				     spec->n);
	if (t == 0.0) {
		if (is_quadratic(spec))
			t = n * spec->epsilon / sqrt(ret->ell * ld);
		else
			t = pow(n * spec->epsilon / (pow(ret->ell, 0.25) * sqrt(ld)), 0.8);
		t = fmin(fmax(floor(t), 1.0), n);
	}
	if (k == 0.0)
		k = is_quadratic(spec) ? 1.0 : fmin(ceil(sqrt(t / ret->ell)), SMD_MAX_DRAWS);
	ret->steps = (unsigned long)t;
	ret->draws = (unsigned long)fmax(k, 1.0);
	ret->batch = (size_t)(n / t);
	ret->tau_opt = sqrt(2.0 * ret->ell / (5.0 * t)) / ret->l0;
	{
		const double r = fmax(fw_vertex_norm(&spec->x), fw_vertex_norm(&spec->y));

		/* every entry of a Jacobian is at most its l2 norm; one factor
		 * ||c_i - c||_2 <= ||c_i - c||_1 <= R_c per vertex coordinate
		 * (on the simplex of lambda, f(V lambda) = f(c + (V - c 1')
		 * lambda), and the run is invariant to the shift) */
		ret->l1 = r * r * sc.smooth_l2;
		ret->l2 = r * r * r * sc.third;
		ret->trivial = sc.gap_range;
	}
	if (ret->batch < 1 || !is_finite_pos(ret->tau_opt))
		return err_set(e, ERR_NUMERIC, "the schedule is not usable");
	return ERR_OK;
}

struct smd_ctx {
	double l0;
	size_t batch;
	uint64_t count;
};

static struct smd_ctx
smd_ctx_of(const struct smd_setup *s)
{
	return (struct smd_ctx){ s->l0, s->batch, 2u * (uint64_t)s->steps * (s->draws + 1u) };
}

/*
 * The expected gap's bound from public inputs (docs/algorithms/smd-maurey.md
 * §3; the implementation spec's Bound1, reconstructed from Lemmas 4.1 and
 * 4.2 with the constants kept):
 *	2 l / (tau T) + 5 tau L_0^2 + 4 beta_K + 4 L_1 / T + 4 L_1 sqrt(l / T),
 * beta_K = 8 L_2 / K (0 for the quadratic class).  Loose (not tight in the
 * constants), reported beside the trivial bound (the range of the
 * population F, saddle_constants.gap_range) so that a user
 * sees when the guarantee says nothing (runs:estimate warns).
 */
static double
smd_gap_bound(const struct smd_setup *s, double tau)
{
	const double t = (double)s->steps, k = (double)s->draws;

	return 2.0 * s->ell / (tau * t) + 5.0 * tau * s->l0 * s->l0 + 32.0 * s->l2 / k +
	       4.0 * s->l1 / t + 4.0 * s->l1 * sqrt(s->ell / t);
}

static enum err_code
smd_fill_plan(const struct run_spec *spec, const struct smd_setup *s, double tau,
	      struct run_plan *ret, struct err *e)
{
	struct smd_ctx c = smd_ctx_of(s);
	enum err_code rc;

	if (!is_finite_pos(tau))
		return err_set(e, ERR_INTERNAL, "the step size is not finite and positive");
	onepass_plan_start(ret, spec, s->steps, s->batch);
	rc = draws_event(DP_EVENT_BOUNDED_RANGE, 4.0 * c.l0 / (double)c.batch, c.count, 1.0 / tau,
			 spec->mode, spec->delta, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "draws", (double)s->draws);
	run_plan_use(ret, "step_size", tau);
	run_plan_use(ret, "lipschitz_linf_x", s->lip_x);
	run_plan_use(ret, "lipschitz_linf_y", s->lip_y);
	run_plan_use(ret, "score_bound", s->l0);
	run_plan_use(ret, "vertices_x", (double)s->m_x);
	run_plan_use(ret, "vertices_y", (double)s->m_y);
	run_plan_use(ret, "draw_count", (double)c.count);
	run_plan_use(ret, "draw_epsilon", 4.0 * tau * s->l0 / (double)s->batch);
	run_plan_use(ret, "unused_records", (double)(spec->n - (size_t)s->steps * s->batch));
	run_plan_use(ret, "gap_bound", smd_gap_bound(s, tau));
	run_plan_use(ret, "trivial_gap_bound", s->trivial);
	return ERR_OK;
}

static enum err_code
smd_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct smd_setup s;
	struct smd_ctx c;
	struct accountant_report report;
	struct run_plan p;
	double tau = 0.0;
	enum err_code rc;

	rc = smd_setup(spec, &s, e);
	if (rc != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	c = smd_ctx_of(&s);
	rc = draws_step_size(DP_EVENT_BOUNDED_RANGE, 4.0 * c.l0 / (double)c.batch, c.count,
			     spec->mode, spec->epsilon, spec->delta, s.tau_opt,
			     spec->params[P_STEP_SIZE], &tau, &report, e);
	if (rc != ERR_OK)
		return rc;
	rc = smd_fill_plan(spec, &s, tau, &p, e);
	if (rc == ERR_OK) {
		p.accountant = report.accountant;
		*ret_plan = p;
	}
	return rc;
}

/* A polytope's per-step extra work (fw_polytope_work()): one log-weight
 * evaluation, K + 1 vertices added. */
static double
polytope_step_work(const struct constraint *c, size_t d, double k)
{
	double w = fw_polytope_work(c, d);

	return w > 0.0 ? w + (k + 1.0) * (double)d : 0.0;
}

static double
smd_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double k = run_plan_value(plan, "draws"),
	       m = run_plan_value(plan, "vertices_x") + run_plan_value(plan, "vertices_y");

	if (isnan(k) || isnan(m))
		return (double)spec->n * (double)spec->dim;
	/* Reading the records, and per step the 2 (K + 1) draws over m
	 * vertices and the sparsified point; a polytope's list besides costs
	 * m d per log-weight evaluation (one per step) and d per vertex
	 * added (K + 1 per step). */
	return (double)spec->n * (double)spec->dim +
	       (double)plan->steps * ((k + 1.0) * m + (double)spec->dim) +
	       (double)plan->steps * polytope_step_work(&spec->x, spec->objective.dim_x, k);
}

static enum err_code
smd_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	 const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct smd_state *s = state;
	struct smd_setup su;
	struct run_plan mine;
	bool derived;
	enum err_code rc;

	rc = smd_setup(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived =
		smd_fill_plan(spec, &su, run_plan_value(plan, "step_size"), &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;
	s->obj = &spec->objective;
	s->ds = ds;
	s->rng = rng;
	s->set_x = spec->x;
	s->set_y = spec->y;
	s->dim = spec->dim;
	s->dim_x = spec->objective.dim_x;
	s->dim_y = spec->objective.dim_y;
	s->m_x = su.m_x;
	s->m_y = su.m_y;
	s->b = su.batch;
	s->steps = su.steps;
	s->draws = su.draws;
	s->lip_x = su.lip_x;
	s->lip_y = su.lip_y;
	s->tau = run_plan_value(plan, "step_size");
	s->order = calloc(ds->n, sizeof(*s->order));
	s->sum = calloc(s->dim, sizeof(*s->sum));
	s->u = calloc(s->dim, sizeof(*s->u));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->acc = calloc(s->dim, sizeof(*s->acc));
	s->out = calloc(s->dim, sizeof(*s->out));
	s->w = calloc(s->m_x > s->m_y ? s->m_x : s->m_y, sizeof(*s->w));
	if (s->order == NULL || s->sum == NULL || s->u == NULL || s->g == NULL || s->acc == NULL ||
	    s->out == NULL || s->w == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the saddle.smd_maurey state");
	onepass_order(rng, s->order, ds->n, (size_t)su.steps * su.batch);
#ifdef DPOPT_TESTING
	s->hook = spec->testing_hook;
	if (s->hook != NULL) {
		/* Placement: the canary in the first batch (the draws of every
		 * later step see it); the temperature 1 / tau scaled. */
		double scale = 1.0;

		rc = onepass_testing_hook(s->hook, s->order, ds->n, &scale, e);
		if (rc != ERR_OK)
			return rc;
		s->tau /= scale;
	}
#endif
	return ERR_OK;
}

/* Block b's K draws into the query point and one output draw. */
static enum err_code
smd_player(struct smd_state *s, const struct constraint *c, size_t off, size_t d, size_t m,
	   unsigned long block, struct err *e)
{
	size_t i = 0;

	memset(s->u + off, 0, d * sizeof(*s->u));
	/* The player's log-weights -tau <c_i, sum>, once for its K + 1 draws. */
	fw_log_weights(c, s->sum + off, d, 1.0 / s->tau, s->w);
	for (unsigned long k = 0; k <= s->draws; k++) {
		if (noise_exp_mech(s->rng, s->w, m, &i, e) != ERR_OK)
			return err_failed(e);
#ifdef DPOPT_TESTING
		if (s->hook != NULL && s->hook->release != NULL) {
			double r = (double)i;

			s->hook->release(s->hook->ctx, ((s->t * 2u + block) * (s->draws + 1u)) + k,
					 &r, 1);
		}
#else
		(void)block;
#endif
		if (k < s->draws)
			fw_add_vertex(c, d, i, 1.0 / (double)s->draws, s->u + off);
		else
			fw_add_vertex(c, d, i, 1.0, s->out + off);
	}
	return ERR_OK;
}

static double
clamp(double v, double bound)
{
	return v > bound ? bound : v < -bound ? -bound : v;
}

static enum err_code
smd_step(void *state, struct err *e)
{
	struct smd_state *s = state;
	const size_t *batch;
	double inv_b;

	if (s->t >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	if (smd_player(s, &s->set_x, 0, s->dim_x, s->m_x, 0, e) != ERR_OK ||
	    smd_player(s, &s->set_y, s->dim_x, s->dim_y, s->m_y, 1, e) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	memset(s->acc, 0, s->dim * sizeof(*s->acc));
	batch = s->order + s->t * s->b;
	for (size_t r = 0; r < s->b; r++) {
		memset(s->g, 0, s->dim * sizeof(*s->g));
		(void)saddle_operator(s->obj, s->ds, batch[r], s->u, 1.0, s->g);
		for (size_t j = 0; j < s->dim_x; j++)
			s->acc[j] += clamp(s->g[j], s->lip_x);
		for (size_t j = s->dim_x; j < s->dim; j++)
			s->acc[j] += clamp(s->g[j], s->lip_y);
	}
	inv_b = 1.0 / (double)s->b;
	for (size_t j = 0; j < s->dim; j++)
		s->sum[j] += s->acc[j] * inv_b;
	s->t++;
	return ERR_OK;
}

static void
smd_result(const void *state, double *ret_u)
{
	const struct smd_state *s = state;
	double inv_t = s->t > 0 ? 1.0 / (double)s->t : 0.0;

	for (size_t j = 0; j < s->dim; j++)
		ret_u[j] = s->out[j] * inv_t;
}

static void
smd_fini(void *state)
{
	struct smd_state *s = state;

	free(s->order);
	free(s->sum);
	free(s->u);
	free(s->g);
	free(s->acc);
	free(s->out);
	free(s->w);
	s->order = NULL;
	s->sum = s->u = s->g = s->acc = s->out = s->w = NULL;
}

const struct alg_ops alg_saddle_smd_maurey = {
	.name = "saddle.smd_maurey",
	.version = 1,
	.doc = "Private stochastic mirror descent for min over x max over y of a saddle "
	       "objective on polytopes (the simplex, the l1 ball): entropic (multiplicative) "
	       "steps for both players on log-weights over the vertices, the gradient taken at a "
	       "Maurey-sparsified point (the average of K vertices drawn from each player's "
	       "distribution: the exponential mechanism), one pass over disjoint batches of a "
	       "secret order, and the result the average of one fresh vertex per player per "
	       "step.  Every draw is (4 tau L_0 / B)-bounded-range on the record's clamped "
	       "gradient; charged self_composed(bounded_range, 2 T (K + 1)), the step size "
	       "tau calibrated on the dataset's accountant (both ledger modes); the gap grows "
	       "with log d, not d.",
	.paper = "T. Gonzalez, C. Guzman, C. Paquette, Mirror descent algorithms with nearly "
		 "dimension-independent rates for differentially-private stochastic saddle-point "
		 "problems, 2024, Algorithm 1",
	.privacy_model = "epsilon-DP (bounded range), replace-one",
	.objectives = smd_objectives,
	.constraints = SMD_SETS | (1u << CONSTRAINT_POLYTOPE),
	.params = smd_params,
	.state_size = sizeof(struct smd_state),
	.plan = smd_plan,
	.work = smd_work,
	.init = smd_init,
	.step = smd_step,
	.result = smd_result,
	.fini = smd_fini,
	.saddle = true,
	.constraints_y = SMD_SETS | (1u << CONSTRAINT_POLYTOPE),
};
