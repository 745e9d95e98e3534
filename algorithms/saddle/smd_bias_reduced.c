/*
 * saddle/smd_bias_reduced.c - "saddle.smd_bias_reduced": private stochastic
 * mirror descent for saddle points with bias-reduced gradients (T.
 * Gonzalez, C. Guzman, C. Paquette, "Mirror descent algorithms with nearly
 * dimension-independent rates for differentially-private stochastic
 * saddle-point problems", 2024, Algorithms 2 and 3;
 * docs/algorithms/smd-bias-reduced.md).
 *
 * The sets and the log-weights are saddle.smd_maurey's: x and y each a
 * distribution over the m vertices c_i of a simplex or an l1 ball (x also
 * of a request's vertex list), scored about a public centre c with
 * ||c_i - c||_1 <= R_c for every i (an upper bound, not an equality: see
 * smd_maurey.c), theta_x = -tau <c_i, S_x>, theta_y = -tau <c_j, S_y>
 * (up to a shift common to all i), S the
 * running sum of the operator estimates g = (grad_x, -grad_y) (x descends,
 * y ascends: erratum ER1).
 *
 * The run (Algorithm 3).  Levels N_1, N_2, .. ~ TG(1/2, M) are drawn in
 * init() from the run's generator (public randomness: never from the
 * request, never from the data) until the stopping rule
 *	iteration t runs iff sum_{i<t} 2^(N_i) <= U - 2^M
 * fails; T_run = the iterations admitted (so sum_{t<=T_run} 2^(N_t) <= U).
 * A secret uniform order of the records is cut into consecutive batches
 * of b_t = max(1, ceil(2^(N_t) / alpha)).  Iteration t draws one fresh
 * output vertex per player (spec pitfall P8), then the bias-reduced
 * gradient (Algorithm 2, bias_reduced.h) at level N_t on batch t, and
 * adds it to S.  The result is ((1/T_run) sum_t c_{I*_t}, (1/T_run) sum_t
 * c_{J*_t}) (erratum ER6: the T_run iterates whose gradients were taken).
 *
 * The step count.  The driver runs plan.steps = floor(U - 2^M) + 1 steps,
 * the most iterations any level sequence admits; step() past T_run does
 * nothing (O(1)).  T_run depends on the levels only, never on the data.
 *
 * Privacy (replace-one).  A record is in one batch; each of the three
 * batch means of clamped operators moves by at most 2 L_b / b per
 * coordinate of block b, so g = w_N (G+ - G-) + G0 moves by at most
 * (2 L_b / b_N)(2 w_N + 1), and every later score <c_i - c, S> by
 * ||c_i - c||_1 <= R_c times that: each vertex draw is an exponential mechanism of
 * (2 tau max_N (2 L_0 / b_N)(2 w_N + 1))-bounded range, L_0 = max(R_c,x
 * L_x, R_c,y L_y).  Iteration t makes 2 (2^(N_t + 1) + 1) draws, so a run
 * makes sum_t (4 2^(N_t) + 2) <= 4 U + 2 T_run <= 6 U draws (T_run <=
 * sum_t 2^(N_t) <= U) whatever the levels: charged
 *	self_composed(bounded_range(eps_s), floor(6 U)),
 * a data-independent worst case (fewer draws cost less).  tau_priv is
 * calibrated on the dataset's mode (calibrate_draws); tau = min(Theorem
 * 4.3's tau, tau_priv).
 *
 * Defaults (Theorem 4.3, kappa = 20: erratum ER3; bias_reduced.h):
 * Lambda^2 = L_0^2 + L_2^2 + l L_1^2 with l = max(ln m_x + ln m_y, 1),
 * L_1 = R_max^2 smooth_l2 (an l1-to-l_inf bound: every entry of a Jacobian
 * is at most its l2 norm) and L_2 = R_max^3 times the objective's third-
 * partial bound (saddle_constants.third: 0 for the quadratic class,
 * worst_group_logistic's from the sigmoid's derivatives; a first-order
 * objective is refused); U = min(n eps Lambda /
 * (20 L_0 sqrt(192 l ln(1/delta))), n / 2), M = floor(log2(U) / 2), alpha
 * = 2 U / n (Theorem 4.3's alpha when U < n / 2: n alpha / 2 = U), tau_acc
 * = sqrt(l / (Lambda^2 U)).  U < 4 or a run that could need more than n
 * records is refused before admission.
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
#include "saddle/bias_reduced.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

/* ---- TG(1/2, M), Theorem 4.3, batches (bias_reduced.h) ---- */

double
tg_norm(unsigned m)
{
	return 2.0 - ldexp(1.0, -(int)m);
}

double
tg_prob(unsigned k, unsigned m)
{
	return k > m ? 0.0 : ldexp(1.0, -(int)k) / tg_norm(m);
}

double
tg_weight(unsigned k, unsigned m)
{
	return tg_norm(m) * ldexp(1.0, (int)k);
}

double
tg_mean_pow2(unsigned m)
{
	return ((double)m + 1.0) / tg_norm(m);
}

unsigned
tg_sample(struct rng *r, unsigned m)
{
	/* P[N <= k] = (2 - 2^-k) / Z_M; u in [0, 1). */
	double u = rng_uniform(r) * tg_norm(m);

	for (unsigned k = 0; k < m; k++)
		if (u < 2.0 - ldexp(1.0, -(int)k))
			return k;
	return m;
}

unsigned
brg_levels(double stop)
{
	double m = floor(log2(stop) / 2.0);

	if (!(m > 0.0))
		return 0;
	return m > (double)BRG_MAX_LEVELS ? BRG_MAX_LEVELS : (unsigned)m;
}

void
brg_theorem(double n, double eps, double delta, double ell, double l0, double l1, double l2,
	    double kappa, struct brg_theorem *ret)
{
	double ld = log(1.0 / delta);

	ret->lambda = sqrt(l0 * l0 + l2 * l2 + ell * l1 * l1);
	ret->stop = fmin(n * eps * ret->lambda / (kappa * l0 * sqrt(192.0 * ell * ld)), n / 2.0);
	ret->levels = brg_levels(ret->stop);
	ret->tau = sqrt(ell / (ret->lambda * ret->lambda * ret->stop));
	ret->alpha = cbrt(2.0 * eps * eps /
			  (48.0 * kappa * kappa * ld * (ret->tau * l0) * (ret->tau * l0) * n));
	ret->mean_pow2 = tg_mean_pow2(ret->levels);
}

unsigned long
brg_max_steps(double stop, unsigned m)
{
	double t = floor(stop - ldexp(1.0, (int)m)) + 1.0;

	return t < 1.0 ? 0ul : (unsigned long)t;
}

size_t
brg_batch(unsigned k, double alpha)
{
	double b = ceil(ldexp(1.0, (int)k) / alpha);

	return b < 1.0 ? 1u : (size_t)b;
}

double
brg_unit(double l0, unsigned m, double alpha)
{
	double worst = 0.0;

	for (unsigned k = 0; k <= m; k++)
		worst = fmax(worst, (2.0 * l0 / (double)brg_batch(k, alpha)) *
					    (2.0 * tg_weight(k, m) + 1.0));
	return 2.0 * worst;
}

double
brg_max_records(double stop, unsigned m, double alpha)
{
	double r = 0.0;

	for (unsigned k = 0; k <= m; k++)
		r = fmax(r, (double)brg_batch(k, alpha) / ldexp(1.0, (int)k));
	return floor(r * stop);
}

/* ---- Algorithm 2 ---- */

enum err_code
brg_alloc(struct brg *b, struct err *e)
{
	b->wx = calloc(b->m_x, sizeof(*b->wx));
	b->wy = calloc(b->m_y, sizeof(*b->wy));
	b->up = calloc(b->dim, sizeof(*b->up));
	b->um = calloc(b->dim, sizeof(*b->um));
	b->u0 = calloc(b->dim, sizeof(*b->u0));
	b->gp = calloc(b->dim, sizeof(*b->gp));
	b->gm = calloc(b->dim, sizeof(*b->gm));
	b->g0 = calloc(b->dim, sizeof(*b->g0));
	b->g = calloc(b->dim, sizeof(*b->g));
	if (b->wx == NULL || b->wy == NULL || b->up == NULL || b->um == NULL || b->u0 == NULL ||
	    b->gp == NULL || b->gm == NULL || b->g0 == NULL || b->g == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the bias-reduced gradient");
	return ERR_OK;
}

void
brg_free(struct brg *b)
{
	free(b->wx);
	free(b->wy);
	free(b->up);
	free(b->um);
	free(b->u0);
	free(b->gp);
	free(b->gm);
	free(b->g0);
	free(b->g);
	b->wx = b->wy = b->up = b->um = b->u0 = b->gp = b->gm = b->g0 = b->g = NULL;
}

enum err_code
brg_draw(struct brg *b, unsigned block, unsigned level, unsigned long pos, size_t *ret_vertex,
	 struct err *e)
{
	if (noise_exp_mech(b->rng, block == 0 ? b->wx : b->wy, block == 0 ? b->m_x : b->m_y,
			   ret_vertex, e) != ERR_OK)
		return err_failed(e);
#ifdef DPOPT_TESTING
	if (b->hook != NULL && b->hook->release != NULL) {
		double r[4] = { (double)*ret_vertex, (double)block, (double)level, (double)pos };

		b->hook->release(b->hook->ctx, (unsigned long)b->draws, r, 4);
	}
#else
	(void)level;
	(void)pos;
#endif
	b->draws++;
	return ERR_OK;
}

/* Block's 2^(N+1) draws into x+ (all), x- (the first 2^N), x0 (the first). */
static enum err_code
brg_points(struct brg *b, unsigned block, unsigned level, struct err *e)
{
	const struct constraint *c = block == 0 ? &b->set_x : &b->set_y;
	const size_t off = block == 0 ? 0 : b->dim_x, d = block == 0 ? b->dim_x : b->dim_y;
	const unsigned long half = 1ul << level, m = 2ul * half;
	size_t v = 0;

	for (unsigned long r = 0; r < m; r++) {
		if (brg_draw(b, block, level, r, &v, e) != ERR_OK)
			return err_failed(e);
		fw_add_vertex(c, d, v, 1.0 / (double)m, b->up + off);
		if (r < half)
			fw_add_vertex(c, d, v, 1.0 / (double)half, b->um + off);
		if (r == 0)
			fw_add_vertex(c, d, v, 1.0, b->u0 + off);
	}
	return ERR_OK;
}

static double
clamp(double v, double bound)
{
	return v > bound ? bound : v < -bound ? -bound : v;
}

/* dst += clamp(operator(u; z_i)). */
static void
brg_add_record(struct brg *b, size_t i, const double *u, double *dst)
{
	memset(b->g, 0, b->dim * sizeof(*b->g));
	(void)saddle_operator(b->obj, b->ds, i, u, 1.0, b->g);
	for (size_t j = 0; j < b->dim_x; j++)
		dst[j] += clamp(b->g[j], b->lip_x);
	for (size_t j = b->dim_x; j < b->dim; j++)
		dst[j] += clamp(b->g[j], b->lip_y);
}

enum err_code
brg_estimate(struct brg *b, unsigned level, const size_t *batch, size_t nb, double *ret_g,
	     struct err *e)
{
	const size_t bytes = b->dim * sizeof(double);
	double w, inv_b;

	if (level > b->levels || nb == 0)
		return err_set(e, ERR_INTERNAL, "the bias-reduced gradient got a bad level");
	memset(b->up, 0, bytes);
	memset(b->um, 0, bytes);
	memset(b->u0, 0, bytes);
	if (brg_points(b, 0, level, e) != ERR_OK || brg_points(b, 1, level, e) != ERR_OK)
		return err_failed(e);
	memset(b->gp, 0, bytes);
	memset(b->gm, 0, bytes);
	memset(b->g0, 0, bytes);
	for (size_t r = 0; r < nb; r++) {
		brg_add_record(b, batch[r], b->up, b->gp);
		brg_add_record(b, batch[r], b->um, b->gm);
		brg_add_record(b, batch[r], b->u0, b->g0);
	}
	w = tg_weight(level, b->levels);
	inv_b = 1.0 / (double)nb;
	for (size_t j = 0; j < b->dim; j++)
		ret_g[j] = (w * (b->gp[j] - b->gm[j]) + b->g0[j]) * inv_b;
	return ERR_OK;
}

/* ---- the method ---- */

enum { P_STOP, P_RATIO, P_STEP_SIZE, P__COUNT };

#define SBR_MAX_STOP 1e9

static const struct alg_param sbr_params[P__COUNT + 1] = {
	[P_STOP] = { "stop_budget", ALG_PARAM_REAL, 0.0, SBR_MAX_STOP, 0.0,
		     "U, the stopping budget: iterate while the sum of 2^N over the iterations "
		     "so far is at most U - 2^M, M = floor(log2(U) / 2); at least 4; 0 = auto: "
		     "min(n eps Lambda / (20 L_0 sqrt(192 l ln(1/delta))), n / 2)",
		     NULL },
	[P_RATIO] = { "batch_ratio", ALG_PARAM_REAL, 0.0, 1e9, 0.0,
		      "alpha: a level-N iteration reads max(1, ceil(2^N / alpha)) fresh records; "
		      "0 = auto: 2 U / n (all n records: U <= n alpha / 2)",
		      NULL },
	[P_STEP_SIZE] = { "step_size", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			  "entropic step size tau; 0 = auto: min(sqrt(l / (Lambda^2 U)), "
			  "tau_priv); a given tau above tau_priv is refused",
			  NULL },
	[P__COUNT] = { 0 },
};

static const char *const sbr_objectives[] = { "bilinear", "worst_group_logistic", "matrix_game",
					      "quadratic_game", NULL };

#define SBR_SETS ((1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_SIMPLEX))

/* Everything derived from the public spec (plan() and init() alike). */
struct sbr_setup {
	struct saddle_block bx, by;
	double lip_x, lip_y; /* l_inf bounds of the blocks' gradients: the clamps */
	double l0, l1, l2;   /* Lipschitz, smoothness, second-order (vertex coordinates, l1) */
	size_t m_x, m_y;
	double ell;
	double stop; /* U */
	unsigned levels;
	double alpha;
	unsigned long steps; /* floor(U - 2^M) + 1 */
	uint64_t count;      /* floor(6 U) draws */
	double unit;         /* per-draw epsilon at tau = 1 */
	double records;      /* most records a run reads */
	double tau_acc;
};

struct sbr_state {
	struct brg b;
	size_t *order;        /* owned: n */
	unsigned char *level; /* owned: steps, the levels N_t */
	double *sum;          /* owned: dim, S */
	double *gvec;         /* owned: dim, this iteration's estimate */
	double *out;          /* owned: dim, the output vertices' sum */
	unsigned long steps, t, t_run;
	size_t next; /* records used so far */
	size_t records;
	double tau, alpha;
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

static enum err_code
sbr_setup(const struct run_spec *spec, struct sbr_setup *ret, struct err *e)
{
	const struct objective *o = &spec->objective;
	const bool auto_stop = spec->params[P_STOP] == 0.0,
		   auto_ratio = spec->params[P_RATIO] == 0.0;
	struct saddle_constants sc;
	struct brg_theorem th;
	double n = (double)spec->n, r_max, lambda2;
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	if (o->ops->saddle == NULL || o->ops->saddle->smoothness == SADDLE_FIRST_ORDER)
		return err_set_field(e, ERR_INVALID, "objective",
				     "objective '%s' declares no second-order smoothness bound "
				     "(saddle.smd_bias_reduced needs L_2: its bias bound, Lemma "
				     "4.3); use saddle.smd_maurey",
				     o->ops->name);
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
	r_max = fmax(fw_vertex_norm(&spec->x), fw_vertex_norm(&spec->y));
	ret->l1 = r_max * r_max * sc.smooth_l2;
	/* a third partial in vertex coordinates: one factor <= R_c per index */
	ret->l2 = r_max * r_max * r_max * sc.third;
	if (!is_finite_pos(ret->lip_x) || !is_finite_pos(ret->lip_y) || !is_finite_pos(ret->l0) ||
	    !isfinite(ret->l1) || !isfinite(ret->l2) || ret->m_x == 0 || ret->m_y == 0)
		return err_set(e, ERR_NUMERIC,
			       "the gradient bounds are not finite positive numbers");
	ret->ell = fmax(log((double)ret->m_x) + log((double)ret->m_y), 1.0);
	brg_theorem(n, spec->epsilon, spec->delta, ret->ell, ret->l0, ret->l1, ret->l2, BRG_KAPPA,
		    &th);
	ret->stop = auto_stop ? th.stop : spec->params[P_STOP];
	if (!(ret->stop >= 4.0)) {
		if (auto_stop)
			return err_set_field(e, ERR_TOO_SMALL, "privacy.epsilon",
					     "'privacy.epsilon' %.6g is too small for n = %zu: the "
					     "stopping budget U = %.4g is below 4 (Theorem 4.3)",
					     spec->epsilon, spec->n, ret->stop);
		return err_set_field(e, ERR_INVALID, "params.stop_budget",
				     "'params.stop_budget' must be at least 4");
	}
	ret->levels = brg_levels(ret->stop);
	ret->alpha = auto_ratio ? 2.0 * ret->stop / n : spec->params[P_RATIO];
	ret->records = brg_max_records(ret->stop, ret->levels, ret->alpha);
	if (!(ret->records <= n)) {
		if (auto_stop && auto_ratio)
			return err_set_field(e, ERR_TOO_SMALL, "privacy.epsilon",
					     "a run may need %.0f records, more than n = %zu",
					     ret->records, spec->n);
		return err_set_field(e, ERR_INVALID,
				     auto_ratio ? "params.stop_budget" : "params.batch_ratio",
				     "a run may need %.0f records, more than n = %zu (needs U <= "
				     "min(n / 2, n alpha / 2))",
				     ret->records, spec->n);
	}
	ret->steps = brg_max_steps(ret->stop, ret->levels);
	ret->count = (uint64_t)floor(6.0 * ret->stop);
	ret->unit = brg_unit(ret->l0, ret->levels, ret->alpha);
	lambda2 = ret->l0 * ret->l0 + ret->l2 * ret->l2 + ret->ell * ret->l1 * ret->l1;
	ret->tau_acc = sqrt(ret->ell / (lambda2 * ret->stop));
	if (ret->steps < 1 || !is_finite_pos(ret->unit) || !is_finite_pos(ret->tau_acc))
		return err_set(e, ERR_NUMERIC, "the schedule is not usable");
	return ERR_OK;
}

static enum err_code
sbr_fill_plan(const struct run_spec *spec, const struct sbr_setup *s, double tau,
	      struct run_plan *ret, struct err *e)
{
	enum err_code rc;

	if (!is_finite_pos(tau))
		return err_set(e, ERR_INTERNAL, "the step size is not finite and positive");
	memset(ret, 0, sizeof(*ret));
	ret->steps = s->steps;
	ret->charge_epsilon = spec->epsilon;
	ret->charge_delta = spec->delta;
	rc = draws_event(DP_EVENT_BOUNDED_RANGE, s->unit, s->count, 1.0 / tau, spec->mode,
			 spec->delta, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "steps", (double)s->steps);
	run_plan_use(ret, "stop_budget", s->stop);
	run_plan_use(ret, "levels", (double)s->levels);
	run_plan_use(ret, "batch_ratio", s->alpha);
	run_plan_use(ret, "batch_size_min", (double)brg_batch(0, s->alpha));
	run_plan_use(ret, "batch_size_max", (double)brg_batch(s->levels, s->alpha));
	run_plan_use(ret, "max_records", s->records);
	run_plan_use(ret, "mean_level_size", tg_mean_pow2(s->levels));
	run_plan_use(ret, "step_size", tau);
	run_plan_use(ret, "step_size_accuracy", s->tau_acc);
	run_plan_use(ret, "kappa", BRG_KAPPA);
	run_plan_use(ret, "lipschitz_linf_x", s->lip_x);
	run_plan_use(ret, "lipschitz_linf_y", s->lip_y);
	run_plan_use(ret, "score_bound", s->l0);
	run_plan_use(ret, "smoothness_l1", s->l1);
	run_plan_use(ret, "smoothness2_l1", s->l2);
	run_plan_use(ret, "vertices_x", (double)s->m_x);
	run_plan_use(ret, "vertices_y", (double)s->m_y);
	run_plan_use(ret, "draw_count", (double)s->count);
	run_plan_use(ret, "draw_epsilon", s->unit * tau);
	return ERR_OK;
}

static enum err_code
sbr_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct sbr_setup s;
	struct accountant_report report;
	struct run_plan p;
	double tau = 0.0;
	enum err_code rc;

	rc = sbr_setup(spec, &s, e);
	if (rc != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	rc = draws_step_size(DP_EVENT_BOUNDED_RANGE, s.unit, s.count, spec->mode, spec->epsilon,
			     spec->delta, s.tau_acc, spec->params[P_STEP_SIZE], &tau, &report, e);
	if (rc != ERR_OK)
		return rc;
	rc = sbr_fill_plan(spec, &s, tau, &p, e);
	if (rc == ERR_OK) {
		p.accountant = report.accountant;
		*ret_plan = p;
	}
	return rc;
}

/* A polytope's extra work (fw_polytope_work()): m d per step's
 * log-weights, d per vertex added (three per draw, at most). */
static double
polytope_work(const struct constraint *c, size_t d, double steps, double draws)
{
	double w = fw_polytope_work(c, d);

	return w > 0.0 ? steps * w + 3.0 * draws * (double)d : 0.0;
}

static double
sbr_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double rec = run_plan_value(plan, "max_records"), k = run_plan_value(plan, "draw_count"),
	       mx = run_plan_value(plan, "vertices_x"), my = run_plan_value(plan, "vertices_y"),
	       dim = (double)spec->dim;

	if (isnan(rec) || isnan(k) || isnan(mx) || isnan(my))
		return (double)spec->n * dim;
	/* The order (n); per record read (at most max_records) three dense
	 * operator evaluations, each a clear, the evaluation and a clamped
	 * add over dim; each of the at most floor(6 U) draws over at most
	 * max(m_x, m_y) vertices plus its point updates; per step the
	 * log-weights and the points and sums (dense: O(dim)). */
	return (double)spec->n + 9.0 * rec * dim + k * (fmax(mx, my) + 3.0) +
	       (double)plan->steps * (mx + my + 12.0 * dim) +
	       polytope_work(&spec->x, spec->objective.dim_x, (double)plan->steps, k);
}

static enum err_code
sbr_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	 const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct sbr_state *s = state;
	struct sbr_setup su;
	struct run_plan mine;
	double used = 0.0, limit;
	bool derived;
	enum err_code rc;

	rc = sbr_setup(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived =
		sbr_fill_plan(spec, &su, run_plan_value(plan, "step_size"), &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;
	s->b = (struct brg){
		.obj = &spec->objective,
		.ds = ds,
		.rng = rng,
		.set_x = spec->x,
		.set_y = spec->y,
		.dim_x = spec->objective.dim_x,
		.dim_y = spec->objective.dim_y,
		.dim = spec->dim,
		.m_x = su.m_x,
		.m_y = su.m_y,
		.lip_x = su.lip_x,
		.lip_y = su.lip_y,
		.levels = su.levels,
	};
	s->steps = su.steps;
	s->alpha = su.alpha;
	s->tau = run_plan_value(plan, "step_size");
	rc = brg_alloc(&s->b, e);
	if (rc != ERR_OK)
		return rc;
	s->order = calloc(ds->n, sizeof(*s->order));
	s->level = calloc(su.steps, sizeof(*s->level));
	s->sum = calloc(spec->dim, sizeof(*s->sum));
	s->gvec = calloc(spec->dim, sizeof(*s->gvec));
	s->out = calloc(spec->dim, sizeof(*s->out));
	if (s->order == NULL || s->level == NULL || s->sum == NULL || s->gvec == NULL ||
	    s->out == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the saddle.smd_bias_reduced state");
	/* The levels (public randomness) and the stopping rule, before any
	 * record is touched. */
	limit = su.stop - ldexp(1.0, (int)su.levels);
	while (used <= limit) {
		unsigned k = tg_sample(rng, su.levels);

		if (s->t_run >= su.steps)
			return err_set(e, ERR_INTERNAL, "the stopping rule overran the plan");
		s->level[s->t_run++] = (unsigned char)k;
		used += ldexp(1.0, (int)k);
		s->records += brg_batch(k, su.alpha);
	}
	if (s->records > ds->n)
		return err_set(e, ERR_INTERNAL, "the run needs more records than the plan allows");
	onepass_order(rng, s->order, ds->n, s->records);
#ifdef DPOPT_TESTING
	s->b.hook = spec->testing_hook;
	if (s->b.hook != NULL) {
		/* Placement: the canary in the first batch (every later draw
		 * sees it); the temperature 1 / tau scaled. */
		double scale = 1.0;

		rc = onepass_testing_hook(s->b.hook, s->order, ds->n, &scale, e);
		if (rc != ERR_OK)
			return rc;
		s->tau /= scale;
	}
#endif
	return ERR_OK;
}

static enum err_code
sbr_step(void *state, struct err *e)
{
	struct sbr_state *s = state;
	struct brg *b = &s->b;
	size_t v = 0, nb;
	unsigned k;

	if (s->t >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	if (s->t >= s->t_run) {
		s->t++; /* the stopping rule fired: nothing to do */
		return ERR_OK;
	}
	k = s->level[s->t];
	nb = brg_batch(k, s->alpha);
	fw_log_weights(&b->set_x, s->sum, b->dim_x, 1.0 / s->tau, b->wx);
	fw_log_weights(&b->set_y, s->sum + b->dim_x, b->dim_y, 1.0 / s->tau, b->wy);
	/* The output draws of iteration t: fresh, one per player. */
	if (brg_draw(b, 0, k, 2ul << k, &v, e) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	fw_add_vertex(&b->set_x, b->dim_x, v, 1.0, s->out);
	if (brg_draw(b, 1, k, 2ul << k, &v, e) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	fw_add_vertex(&b->set_y, b->dim_y, v, 1.0, s->out + b->dim_x);
	if (brg_estimate(b, k, s->order + s->next, nb, s->gvec, e) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	for (size_t j = 0; j < b->dim; j++)
		s->sum[j] += s->gvec[j];
	s->next += nb;
	s->t++;
	return ERR_OK;
}

/* The iterations the stopping rule admitted and the records they read:
 * functions of the levels alone (public randomness, drawn in init()). */
static void
sbr_report(const void *state, struct run_plan *ret)
{
	const struct sbr_state *s = state;

	run_plan_use(ret, "iterations", (double)s->t_run);
	run_plan_use(ret, "records_used", (double)s->next);
}

static void
sbr_result(const void *state, double *ret_u)
{
	const struct sbr_state *s = state;
	double inv_t = s->t_run > 0 ? 1.0 / (double)s->t_run : 0.0;

	for (size_t j = 0; j < s->b.dim; j++)
		ret_u[j] = s->out[j] * inv_t;
}

static void
sbr_fini(void *state)
{
	struct sbr_state *s = state;

	brg_free(&s->b);
	free(s->order);
	free(s->level);
	free(s->sum);
	free(s->gvec);
	free(s->out);
	s->order = NULL;
	s->level = NULL;
	s->sum = s->gvec = s->out = NULL;
}

const struct alg_ops alg_saddle_smd_bias_reduced = {
	.name = "saddle.smd_bias_reduced",
	.version = 1,
	.doc = "Private stochastic mirror descent for min over x max over y of a second-order "
	       "smooth saddle objective on polytopes (the simplex, the l1 ball) with "
	       "bias-reduced gradients: entropic steps for both players on log-weights over the "
	       "vertices; at iteration t a level N_t ~ TG(1/2, M) (truncated geometric, drawn "
	       "from the run's generator), 2^(N_t + 1) vertices drawn per player (the exponential "
	       "mechanism), the gradient w_N (G(x+) - G(x-)) + G(x0) at the averages of all, "
	       "the first half and the first draw, on max(1, ceil(2^N / alpha)) fresh records "
	       "(Blanchet-Glynn: unbiased for the 2^(M+1)-draw average), until the levels' "
	       "2^N sum reaches U - 2^M; the result the average of one fresh vertex per player "
	       "per iteration.  Every draw is (2 tau max_N (2 L_0 / b_N)(2 w_N + 1))-bounded-"
	       "range on the record's clamped gradients; at most 6 U draws: charged "
	       "self_composed(bounded_range, floor(6 U)), tau calibrated on the dataset's "
	       "accountant (both ledger modes).",
	.paper = "T. Gonzalez, C. Guzman, C. Paquette, Mirror descent algorithms with nearly "
		 "dimension-independent rates for differentially-private stochastic saddle-point "
		 "problems, 2024, Algorithms 2 and 3",
	.privacy_model = "epsilon-DP (bounded range), replace-one",
	.objectives = sbr_objectives,
	.constraints = SBR_SETS | (1u << CONSTRAINT_POLYTOPE),
	.params = sbr_params,
	.state_size = sizeof(struct sbr_state),
	.plan = sbr_plan,
	.work = sbr_work,
	.init = sbr_init,
	.step = sbr_step,
	.result = sbr_result,
	.fini = sbr_fini,
	.report = sbr_report,
	.saddle = true,
	.constraints_y = SBR_SETS | (1u << CONSTRAINT_POLYTOPE),
};
