/*
 * frank_wolfe/private_vr.c - "frank_wolfe.private_vr": private
 * variance-reduced Frank-Wolfe (H. Asi, V. Feldman, T. Koren, K. Talwar,
 * "Private stochastic convex optimization: optimal rates in l1 geometry",
 * ICML 2021, Algorithm 3), over the l1 ball or the simplex, one pass over
 * a secretly permuted dataset.
 *
 * The run.  T phases; phase t = 1 .. T owns a complete binary tree of
 * depth t.  Its root reads the next b records of the secret order, a right
 * child at depth j the next b / 2^j, a left child none; vertices are
 * visited in depth-first pre-order, and every leaf takes one Frank-Wolfe
 * step.  With x the current iterate (x_0 the centre of the set, lmo.h):
 *
 *	root      v_0 = (1/b) sum_S clamp_L(grad l_i(x)),  x_0 := x
 *	right, j  v_j = v_(j-1) + (1/|S|) sum_S clamp_Bj(grad l_i(x) - grad l_i(x_(j-1))),
 *	          x_j := x
 *	left      inherits its parent's (x, v)
 *	leaf      w = vertex i with probability ~ exp(-<c_i, v + grad r(x)> / temp_t),
 *	          x <- (1 - eta_k) x + eta_k w,   eta_k = 2 / (k + 1), k = 1 .. K
 *	result    x_K, K = 2^(T+1) - 2
 *
 * clamp_L is the coordinate-wise clamp to [-L, L] (L the objective's
 * declared l_inf gradient bound over the set, lipschitz_linf), and
 * B_j = min(2 L, beta D 2^(1-j)) (beta its l1 smoothness, smooth_l1; D the
 * set's l1 diameter): between a parent and its right child at depth j
 * there are 2^(t-j) steps of size at most 2^(1-t), so ||x_j - x_(j-1)||_1
 * <= D 2^(1-j) and the clamp never binds on a loss that meets its
 * declared constants; it makes the sensitivity hold when one does not.
 * The step counter is global (eta_k = 2/(k+1) across phases), not the
 * paper's per-phase index, whose ranges overlap.  Records used:
 * b (T + T (T + 1) / 4) <= n, each in exactly one vertex.
 *
 * One step() = one leaf: the vertices created on the way to it (the
 * phase's root, or one right child and its left descendants), then the
 * selection.  The secret order is drawn lazily (Fisher-Yates rounds over
 * the records still unread, when a vertex reads them); no allocation in
 * step(); the explicit stack is (x_j, v_j) for j = 0 .. T.
 *
 * Privacy (replace-one).  Condition on the vertex (t, j) that holds the
 * differing record (the sets are disjoint): it changes v at the 2^(t-j)
 * leaves under that vertex and nothing before them.  Its l_inf effect on v
 * is 2 B_j / |S| (B_0 = L), so every score <c_i, v> moves by at most
 * Delta_j = 2 B_j R_c 2^j / b (R_c the vertices' l1 bound about lmo.h's
 * centre: every ||c_i - c||_1 <= R_c; D / 2 on the l1 ball and the
 * simplex), and each of those leaves is
 * (2 Delta_j / temp_t)-bounded-range (lmo.h).
 *
 * params.variant = 0, "pure" (default): temp_t = 2^t s, one scale s.
 * Position (t, j) costs self_composed(bounded_range(4 B_j R_c / (b s)
 * 2^(j-t)), 2^(t-j)).  With u = t - j, eps_j = 4 B_j R_c / (b s) and
 * B_j non-increasing in j >= 1, every position is dominated at every Renyi
 * order and in basic composition by one of two: (t, j) = (1, 0),
 * self_composed(bounded_range(eps_0 / 2), 2), for the roots, and (1, 1),
 * bounded_range(eps_1), for the right children (k min(e/k, alpha e^2 /
 * (8 k^2)) <= min(e, alpha e^2 / 8)).  The event is
 *	parallel(parts = T (T + 3) / 2: those two),
 * s calibrated through calibrate() on the dataset's mode.  On the basic
 * ledger the charge is at most max(eps_0, eps_1) = 4 R_c max(L, B_1) /
 * (b s), the max over (t, j) of 2^(t-j) 2 Delta_j / temp_t.
 *
 * params.variant = 1, "approx": one temperature temp for every leaf, and
 * the (epsilon, delta) of the accountant fwvr_approx_epsilon() (advanced
 * composition within a subtree, amplification by shuffling across the
 * vertices of a depth, privacy/shuffle.h), as the event
 * approx(eps_run, delta_run), calibrated by bisection on temp.  Approx
 * events have no Renyi curve: 'basic' datasets only (a 'renyi' one is
 * refused, ERR_MODE naming "algorithm", 409 accounting_mode_unsupported).
 * The amplification needs the order of the records to be uniform and
 * secret, which the run's generator makes it.
 *
 * Defaults (params.phases and params.batch_size 0): fwvr_fixed_point(),
 * the largest T with T <= T(b(T)), b(T) the largest root batch T phases
 * can read, and the depth rule 2^T(b) <= b eps L / (128 max(L, B_1) ln m):
 * the last phase's selection spread temp_T ln m = 2^T 2 D max(L, B_1)
 * ln m / (b eps) at most L D / 64.  The theorem's depth (1/2 log2(b eps
 * beta D / (L ln m)), pure) balances the worst-case Frank-Wolfe error
 * beta D^2 / 2^T, which on data is far smaller, and chose trees about two
 * phases too deep (algorithms/frank_wolfe/README.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "frank_wolfe/lmo.h"
#include "frank_wolfe/private_vr.h"
#include "gauss_onepass.h"
#include "privacy/calibrate.h"
#include "privacy/shuffle.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_VARIANT, P_PHASES, P_BATCH_SIZE, P__COUNT };

/* At most this many vertex scores over the run (K m), and the smallest
 * spread of the first selection's log-weights a run may have. */
#define FWVR_LEAF_WORK  1e8
#define FWVR_MIN_SPREAD 1e-2
/* The default depth rule's constant: 2^T <= b eps L / (128 max(L, B_1) ln m). */
#define FWVR_SPREAD_RULE 128.0

static const char *const vr_variants[] = { "pure", "approx", NULL };

static const struct alg_param vr_params[P__COUNT + 1] = {
	[P_VARIANT] = { "variant", ALG_PARAM_INT, 0.0, 1.0, 0.0,
			"\"pure\" (0): epsilon-DP, exponential-mechanism leaves charged as "
			"bounded range (any ledger); \"approx\" (1): (epsilon, delta)-DP by "
			"advanced composition and amplification by shuffling, charged as an "
			"approx event ('basic' ledgers only)",
			vr_variants },
	[P_PHASES] = { "phases", ALG_PARAM_INT, 0.0, FWVR_MAX_PHASES, 0.0,
		       "phases T (phase t is a tree of depth t: 2^t Frank-Wolfe steps); 0 = auto: "
		       "the b / T fixed point (algorithms/frank_wolfe/README.md)",
		       NULL },
	[P_BATCH_SIZE] = { "batch_size", ALG_PARAM_INT, 0.0, 1e9, 0.0,
			   "root batch b, a multiple of 2^T with b (T + T (T + 1) / 4) <= n; 0 = "
			   "auto: the largest such b (the b / T fixed point)",
			   NULL },
	[P__COUNT] = { 0 },
};

/* The approx variant's event is an (epsilon, delta) statement only basic
 * composition can charge (docs/privacy-model.md §5). */
static const struct alg_mode_rule vr_mode_rules[] = {
	{ "variant", 1.0, 1u << ACCOUNTING_BASIC,
	  "use 'variant': 'pure' on a 'renyi' dataset (epsilon-DP, bounded-range leaves)" },
	{ 0 },
};

static const char *const vr_objectives[] = { "logistic", "least_squares", "huber",
					     "log_optimal_portfolio", NULL };

/* Everything derived from the public spec (plan() and init() alike). */
struct vr_setup {
	struct fwvr_consts c;
	unsigned phases;
	size_t batch;
	size_t records;
	unsigned long steps;
	double clamp[FWVR_MAX_PHASES + 1]; /* B_j */
};

struct vr_state {
	const struct objective *obj;
	const struct dataset *ds;
	struct rng *rng;
	struct constraint set;
	size_t dim, n, m, batch, ptr;
	unsigned phases, t;
	unsigned long steps, k, leaf;
	bool approx;
	double scale, lip;
	double clamp[FWVR_MAX_PHASES + 1];
	size_t *idx; /* owned: n, the secret order (its first ptr entries drawn) */
	double *xs;  /* owned: (T + 1) dim, the stack's points */
	double *vs;  /* owned: (T + 1) dim, the stack's estimates */
	double *x, *g, *h, *w;
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook;
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

double
fwvr_clamp(const struct fwvr_consts *c, unsigned j)
{
	if (j == 0)
		return c->lip;
	return fmin(2.0 * c->lip, c->beta * 4.0 * c->rc * ldexp(1.0, -(int)j));
}

size_t
fwvr_records(unsigned t, size_t b)
{
	return b * t + b / 4 * t * (t + 1) + (b % 4) * t * (t + 1) / 4;
}

/* The theorem's depth for root batch b, floored, at least 1, at most t_max. */
static unsigned
vr_depth(const struct fwvr_consts *c, double b, unsigned t_max)
{
	double lm = log(fmax((double)c->m, 2.0)), r, t;

	if (!c->theorem) {
		/* The default: the last phase's selection spread temp_T ln m at
		 * most L D / 64 (algorithms/frank_wolfe/README.md). */
		r = b * c->epsilon * c->lip /
		    (FWVR_SPREAD_RULE * fmax(fwvr_clamp(c, 0), fwvr_clamp(c, 1)) * lm);
		/* approx: one temperature, about min(2^T, sqrt(2^(T+1) ln(1 /
		 * delta0))) times the pure variant's phase-1 scale (advanced
		 * composition over a root's 2^T leaves), so the same spread
		 * allows 2^T up to r^2 / (2 ln(1 / delta0)) when that is more. */
		if (c->approx) {
			double l0 = log(6.0 * (double)c->n * (exp(c->epsilon) + 1.0) / c->delta);

			r = fmax(r, r * r / (2.0 * l0));
		}
		t = floor(log2(r));
		if (!(t >= 1.0))
			return 1;
		return t > (double)t_max ? t_max : (unsigned)t;
	}
	r = b * c->epsilon * c->beta * 2.0 * c->rc / (c->lip * lm);
	if (c->approx) {
		r /= log((double)c->n / c->delta);
		t = floor(2.0 / 3.0 * log2(r));
	} else {
		t = floor(0.5 * log2(r));
	}
	if (!(t >= 1.0))
		return 1;
	return t > (double)t_max ? t_max : (unsigned)t;
}

/* The largest admissible root batch for T phases: 2^T floor(n / (2^T (T +
 * T (T + 1) / 4))), 0 when none. */
static size_t
vr_batch_for(unsigned t, size_t n)
{
	size_t unit = (size_t)1 << t, per = fwvr_records(t, unit);

	return per == 0 ? 0 : unit * (n / per);
}

enum err_code
fwvr_fixed_point(const struct fwvr_consts *c, unsigned t_max, unsigned *ret_t, size_t *ret_b,
		 struct err *e)
{
	unsigned t = 0;

	/* The largest T the rule allows at its own batch: T <= T(b(T)).
	 * b(T) falls with T and T(b) grows with b, so the admissible T are
	 * 1 .. T*; iterating T <- T(b(T)) from a small b reaches T* too when
	 * it converges, but may cycle (e.g. 1, 4, 1 on n = 20000). */
	for (unsigned k = 1; k <= t_max; k++) {
		size_t b = vr_batch_for(k, c->n);

		if (b == 0)
			break;
		if (k == 1 || vr_depth(c, (double)b, t_max) >= k)
			t = k;
	}
	if (t == 0)
		return err_set_field(
			e, ERR_TOO_SMALL, "privacy.epsilon",
			"'privacy.epsilon' cannot be met: %zu records are too few for "
			"one phase of private variance-reduced Frank-Wolfe (at least 3)",
			c->n);
	*ret_t = t;
	*ret_b = vr_batch_for(t, c->n);
	return ERR_OK;
}

double
fwvr_pure_epsilon(const struct fwvr_consts *c, unsigned t_max, size_t b, double s)
{
	double best = 0.0;

	for (unsigned t = 1; t <= t_max; t++)
		for (unsigned j = 0; j <= t; j++) {
			double delta_j =
				2.0 * fwvr_clamp(c, j) * c->rc * ldexp(1.0, (int)j) / (double)b;
			double eps = ldexp(1.0, (int)(t - j)) * 2.0 * delta_j / ldexp(s, (int)t);

			best = fmax(best, eps);
		}
	return best;
}

void
fwvr_approx_epsilon(const struct fwvr_consts *c, unsigned t_max, size_t b, double temp,
		    double *ret_eps, double *ret_delta)
{
	double delta0 = c->delta / (6.0 * (double)c->n * (exp(c->epsilon) + 1.0));
	double delta_s = c->delta / 2.0, eps_run = 0.0, delta_run = 0.0;

	for (unsigned t = 1; t <= t_max; t++)
		for (unsigned j = 0; j <= t; j++) {
			double e1 = 2.0 * 2.0 * fwvr_clamp(c, j) * c->rc * ldexp(1.0, (int)j) /
				    ((double)b * temp);
			double kk = ldexp(1.0, (int)(t - j)),
			       p = j == 0 ? 1.0 : ldexp(1.0, (int)j - 1);
			double eps0, eps = NAN, delta = delta0;

			if (!(e1 > 0.0))
				continue;
			/* Advanced composition (Dwork, Rothblum, Vadhan 2010) over the
			 * kk leaves of the vertex, or basic composition if smaller. */
			eps0 = fmin(kk * e1,
				    sqrt(2.0 * kk * log(1.0 / delta0)) * e1 + kk * e1 * expm1(e1));
			if (shuffle_fmt_applies(eps0, p, delta_s)) {
				double ef = shuffle_fmt_epsilon(eps0, p, delta_s);
				double df = shuffle_fmt_delta(ef, eps0, p, delta_s, delta0);

				/* Amplification only where it helps and its delta fits. */
				if (ef < eps0 && df <= 0.99 * c->delta) {
					eps = ef;
					delta = df;
				}
			}
			if (isnan(eps))
				eps = eps0;
			eps_run = fmax(eps_run, eps);
			delta_run = fmax(delta_run, delta);
		}
	*ret_eps = eps_run;
	*ret_delta = delta_run;
}

/* params.phases and params.batch_size, given or from the fixed point. */
static enum err_code
vr_schedule(const struct run_spec *spec, struct vr_setup *s, struct err *e)
{
	double tp = spec->params[P_PHASES], bp = spec->params[P_BATCH_SIZE];
	unsigned t_max = 1, t;
	size_t b;

	while (t_max < FWVR_MAX_PHASES &&
	       ldexp(1.0, (int)t_max + 2) * (double)s->c.m <= FWVR_LEAF_WORK)
		t_max++;
	if (tp > (double)t_max)
		return err_set_field(e, ERR_INVALID, "params.phases",
				     "'params.phases' (%.0f) is above %u, the most the work limit "
				     "allows with %zu vertices",
				     tp, t_max, s->c.m);
	if (bp > (double)spec->n)
		return err_set_field(
			e, ERR_INVALID, "params.batch_size",
			"'params.batch_size' (%.0f) exceeds the number of records (%zu)", bp,
			spec->n);
	if (tp == 0.0 && bp == 0.0) {
		enum err_code rc = fwvr_fixed_point(&s->c, t_max, &t, &b, e);

		if (rc != ERR_OK)
			return rc;
	} else if (bp == 0.0) {
		t = (unsigned)tp;
		b = vr_batch_for(t, spec->n);
		if (b == 0)
			return err_set_field(e, ERR_INVALID, "params.phases",
					     "'params.phases' (%u) needs more than %zu records", t,
					     spec->n);
	} else {
		b = (size_t)bp;
		t = tp != 0.0 ? (unsigned)tp : vr_depth(&s->c, bp, t_max);
		if (tp == 0.0)
			while (t > 1 && (b % ((size_t)1 << t) != 0 || fwvr_records(t, b) > spec->n))
				t--;
		if (b % ((size_t)1 << t) != 0 || fwvr_records(t, b) > spec->n)
			return err_set_field(
				e, ERR_INVALID, "params.batch_size",
				"'params.batch_size' (%zu) must be a multiple of 2^T = "
				"%zu with b (T + T (T + 1) / 4) <= %zu records (T = %u)",
				b, (size_t)1 << t, spec->n, t);
	}
	s->phases = t;
	s->batch = b;
	s->records = fwvr_records(t, b);
	s->steps = (1ul << (t + 1)) - 2;
	for (unsigned j = 0; j <= t; j++)
		s->clamp[j] = fwvr_clamp(&s->c, j);
	return ERR_OK;
}

static enum err_code
vr_setup(const struct run_spec *spec, struct vr_setup *ret, struct err *e)
{
	struct objective_constants oc;
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	ret->c.approx = spec->params[P_VARIANT] == 1.0;
	/* approx on a renyi dataset: refused by alg_plan() before this
	 * (vr_mode_rules), and by the accountant's calibration in any case. */
	rc = objective_constants(&spec->objective, &spec->schema, &spec->x, &oc, e);
	if (rc != ERR_OK)
		return rc;
	ret->c.lip = oc.lipschitz_linf;
	ret->c.beta = oc.smooth_l1;
	ret->c.rc = fw_vertex_norm(&spec->x);
	ret->c.m = fw_vertex_count(&spec->x, spec->dim);
	ret->c.n = spec->n;
	ret->c.epsilon = spec->epsilon;
	ret->c.delta = spec->delta;
	if (!is_finite_pos(ret->c.lip) || !(isfinite(ret->c.beta) && ret->c.beta >= 0.0) ||
	    !is_finite_pos(ret->c.rc) || ret->c.m == 0)
		return err_set(e, ERR_NUMERIC,
			       "the gradient bound or smoothness is not a finite positive number");
	return vr_schedule(spec, ret, e);
}

static enum err_code
vr_pure_family(double s, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	const struct vr_setup *su = ctx;
	struct dp_event self = { .type = DP_EVENT_SELF_COMPOSED, .count = 2 };
	struct dp_event_tree roots, rights;
	const struct dp_event_tree *parts[2] = { &roots, &rights };
	double b = (double)su->batch, rc = su->c.rc;
	double e_roots = 2.0 * su->clamp[0] * rc / (b * s),
	       e_rights = 4.0 * su->clamp[1] * rc / (b * s);
	unsigned k = e_rights > 0.0 ? 2 : 1;
	enum err_code rc2;

	dp_event_bounded_range(&roots, DP_REPLACE_ONE, e_roots);
	rc2 = dp_event_wrap(&roots, &self, e);
	if (rc2 != ERR_OK)
		return rc2;
	dp_event_bounded_range(&rights, DP_REPLACE_ONE, e_rights);
	rc2 = dp_event_join(ret, DP_EVENT_PARALLEL, parts, k, e);
	if (rc2 == ERR_OK)
		ret->node[0].count = (uint64_t)su->phases * (su->phases + 3) / 2;
	return rc2;
}

static enum err_code
vr_approx_family(double temp, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	const struct vr_setup *su = ctx;
	double eps, delta;

	fwvr_approx_epsilon(&su->c, su->phases, su->batch, temp, &eps, &delta);
	if (!(is_finite_pos(eps) && is_finite_pos(delta)))
		return err_set(e, ERR_NUMERIC, "the shuffling accountant gave no finite bound");
	dp_event_approx(ret, DP_REPLACE_ONE, eps, delta);
	return ERR_OK;
}

static enum err_code
vr_fill_plan(const struct run_spec *spec, const struct vr_setup *s, double scale,
	     struct run_plan *ret, struct err *e)
{
	double temp1 = s->c.approx ? scale : 2.0 * scale;
	enum err_code rc;

	if (!is_finite_pos(scale))
		return err_set(e, ERR_INTERNAL, "the temperature is not finite and positive");
	if (2.0 * s->c.rc * s->c.lip / temp1 < FWVR_MIN_SPREAD)
		return err_set_field(e, ERR_TOO_SMALL, "privacy.epsilon",
				     "'privacy.epsilon' is too small for %zu records: the first "
				     "selection would be within 1%% of uniform (a vacuous run)",
				     spec->n);
	onepass_plan_start(ret, spec, s->steps, s->batch);
	rc = s->c.approx ? vr_approx_family(scale, (void *)s, &ret->event, e)
			 : vr_pure_family(scale, (void *)s, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "variant", s->c.approx ? 1.0 : 0.0);
	run_plan_use(ret, "phases", (double)s->phases);
	run_plan_use(ret, "records_used", (double)s->records);
	run_plan_use(ret, "lipschitz_linf", s->c.lip);
	run_plan_use(ret, "smooth_l1", s->c.beta);
	run_plan_use(ret, "diameter_l1", 2.0 * s->c.rc);
	run_plan_use(ret, "vertices", (double)s->c.m);
	run_plan_use(ret, "temperature_scale", scale);
	if (s->c.approx) {
		run_plan_use(ret, "epsilon_run", ret->event.node[0].epsilon);
		run_plan_use(ret, "delta_run", ret->event.node[0].delta);
	}
	return ERR_OK;
}

static enum err_code
vr_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct vr_setup s;
	struct rdp_grid grid;
	struct accountant_report report;
	struct run_plan p;
	double scale = 0.0, basic;
	enum err_code rc;

	rc = vr_setup(spec, &s, e);
	if (rc != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	/* The scale at which basic composition meets epsilon exactly (pure;
	 * the approx accountant is at most that at 2^T times it). */
	basic = 4.0 * s.c.rc * fmax(s.clamp[0], s.clamp[1]) / ((double)s.batch * spec->epsilon);
	rdp_grid_default(&grid);
	if (s.c.approx)
		rc = calibrate(vr_approx_family, &s, spec->mode, nextafter(spec->epsilon, 0.0),
			       nextafter(spec->delta, 0.0), basic * 1e-4,
			       ldexp(basic, (int)s.phases + 2), &grid, &scale, &report, e);
	else
		rc = calibrate(vr_pure_family, &s, spec->mode, nextafter(spec->epsilon, 0.0),
			       nextafter(spec->delta, 0.0), basic * 1e-4, basic * 64.0, &grid,
			       &scale, &report, e);
	if (rc == ERR_OK)
		rc = vr_fill_plan(spec, &s, scale, &p, e);
	if (rc == ERR_OK) {
		p.accountant = report.accountant;
		*ret_plan = p;
	}
	return rc;
}

static double
vr_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double records = run_plan_value(plan, "records_used"), m = run_plan_value(plan, "vertices");

	if (!isfinite(records))
		records = (double)spec->n;
	if (!isfinite(m))
		m = 2.0 * (double)spec->dim;
	/* a polytope's list: m d per step's scores */
	return 2.0 * records * (double)spec->dim + (double)plan->steps * (m + 2.0 * spec->dim) +
	       (double)plan->steps * fw_polytope_work(&spec->x, spec->dim);
}

static enum err_code
vr_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct vr_state *s = state;
	struct vr_setup su;
	struct run_plan mine;
	size_t stack;
	bool derived;
	enum err_code rc;

	rc = vr_setup(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived = vr_fill_plan(spec, &su, run_plan_value(plan, "temperature_scale"), &mine, NULL) ==
		  ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;
	s->obj = &spec->objective;
	s->ds = ds;
	s->rng = rng;
	s->set = spec->x;
	s->dim = spec->dim;
	s->n = ds->n;
	s->m = su.c.m;
	s->batch = su.batch;
	s->phases = su.phases;
	s->steps = su.steps;
	s->t = 1;
	s->approx = su.c.approx;
	s->scale = run_plan_value(plan, "temperature_scale");
	s->lip = su.c.lip;
	memcpy(s->clamp, su.clamp, sizeof(s->clamp));
	stack = (size_t)(su.phases + 1) * s->dim;
	s->idx = calloc(s->n, sizeof(*s->idx));
	s->xs = calloc(stack, sizeof(*s->xs));
	s->vs = calloc(stack, sizeof(*s->vs));
	s->x = calloc(s->dim, sizeof(*s->x));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->h = calloc(s->dim, sizeof(*s->h));
	s->w = calloc(s->m, sizeof(*s->w));
	if (s->idx == NULL || s->xs == NULL || s->vs == NULL || s->x == NULL || s->g == NULL ||
	    s->h == NULL || s->w == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the frank_wolfe.private_vr state");
	for (size_t i = 0; i < s->n; i++)
		s->idx[i] = i;
	fw_start(&s->set, s->x, s->dim);
#ifdef DPOPT_TESTING
	s->hook = spec->testing_hook;
	if (s->hook != NULL && s->hook->place_first && s->hook->first_record >= s->n)
		return err_set(e, ERR_INTERNAL, "the canary record does not exist");
	if (s->hook != NULL && s->hook->noise_scale != 0.0)
		s->scale *= s->hook->noise_scale;
#endif
	return ERR_OK;
}

/* The next k records of the secret order: Fisher-Yates rounds over the
 * unread ones. */
static const size_t *
vr_take(struct vr_state *s, size_t k)
{
	size_t *out = s->idx + s->ptr;

	onepass_order_partial(s->rng, out, s->n - s->ptr, k);
#ifdef DPOPT_TESTING
	/* Audits: the canary into phase 1's root batch, after the draw. */
	if (s->hook != NULL && s->hook->place_first && s->ptr == 0) {
		for (size_t i = 0; i < s->n; i++) {
			if (s->idx[i] != s->hook->first_record)
				continue;
			if (i >= k) {
				s->idx[i] = s->idx[0];
				s->idx[0] = s->hook->first_record;
			}
			break;
		}
	}
#endif
	s->ptr += k;
	return out;
}

/* The root of phase t at the current x: depth 0 of the stack. */
static void
vr_root(struct vr_state *s)
{
	const size_t d = s->dim;
	const size_t *S = vr_take(s, s->batch);
	double *x0 = s->xs, *v0 = s->vs;

	memcpy(x0, s->x, d * sizeof(*x0));
	memset(v0, 0, d * sizeof(*v0));
	memset(s->g, 0, d * sizeof(*s->g));
	for (size_t i = 0; i < s->batch; i++) {
		objective_grad(s->obj, s->ds, S[i], x0, 1.0, s->g);
		fw_add_clamped(s->ds, S[i], s->dim, s->lip, s->g, v0);
	}
	for (size_t j = 0; j < d; j++)
		v0[j] /= (double)s->batch;
}

/* The right child at depth j >= 1 at the current x. */
static void
vr_right(struct vr_state *s, unsigned j)
{
	const size_t d = s->dim, size = s->batch >> j;
	const size_t *S = vr_take(s, size);
	const double *xp = s->xs + (j - 1) * d, *vp = s->vs + (j - 1) * d;
	double *xj = s->xs + j * d, *vj = s->vs + j * d, bj = s->clamp[j];

	memcpy(xj, s->x, d * sizeof(*xj));
	memset(s->h, 0, d * sizeof(*s->h));
	memset(s->g, 0, d * sizeof(*s->g));
	for (size_t i = 0; i < size; i++) {
		objective_grad(s->obj, s->ds, S[i], xj, 1.0, s->g);
		objective_grad(s->obj, s->ds, S[i], xp, -1.0, s->g);
		fw_add_clamped(s->ds, S[i], s->dim, bj, s->g, s->h);
	}
	for (size_t c = 0; c < d; c++)
		vj[c] = vp[c] + s->h[c] / (double)size;
}

/* Depths j + 1 .. t are left children of depth j: they inherit. */
static void
vr_descend(struct vr_state *s, unsigned j)
{
	const size_t d = s->dim;

	for (unsigned i = j + 1; i <= s->t; i++) {
		memcpy(s->xs + i * d, s->xs + j * d, d * sizeof(*s->xs));
		memcpy(s->vs + i * d, s->vs + j * d, d * sizeof(*s->vs));
	}
}

static enum err_code
vr_step(void *state, struct err *e)
{
	struct vr_state *s = state;
	const size_t d = s->dim;
	unsigned j = 0;
	size_t vertex = 0;
	double temp;

	if (s->k >= s->steps || s->t > s->phases)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	if (s->leaf == 0) {
		vr_root(s);
	} else {
		unsigned long l = s->leaf;
		unsigned tz = 0;

		while ((l & 1ul) == 0) {
			l >>= 1;
			tz++;
		}
		j = s->t - tz;
		vr_right(s, j);
	}
	vr_descend(s, j);
	memcpy(s->g, s->vs + s->t * d, d * sizeof(*s->g));
	objective_reg_grad(s->obj, s->x, 1.0, s->g);
	temp = s->approx ? s->scale : ldexp(s->scale, (int)s->t);
	if (fw_noisy_vertex(s->rng, &s->set, s->g, d, temp, s->w, &vertex, NULL) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL) {
		double r = (double)vertex;

		s->hook->release(s->hook->ctx, s->k, &r, 1);
	}
#endif
	fw_move(&s->set, s->x, d, vertex, 2.0 / ((double)s->k + 2.0));
	s->k++;
	s->leaf++;
	if (s->leaf == 1ul << s->t) {
		s->t++;
		s->leaf = 0;
	}
	return ERR_OK;
}

static void
vr_result(const void *state, double *ret_x)
{
	const struct vr_state *s = state;

	memcpy(ret_x, s->x, s->dim * sizeof(*ret_x));
}

static void
vr_fini(void *state)
{
	struct vr_state *s = state;

	free(s->idx);
	free(s->xs);
	free(s->vs);
	free(s->x);
	free(s->g);
	free(s->h);
	free(s->w);
	s->idx = NULL;
	s->xs = s->vs = s->x = s->g = s->h = s->w = NULL;
}

const struct alg_ops alg_frank_wolfe_private_vr = {
	.name = "frank_wolfe.private_vr",
	.version = 1,
	.doc = "Private variance-reduced Frank-Wolfe over the l1 ball or the simplex, one pass "
	       "over a secretly permuted dataset: T phases, phase t a binary tree of depth t "
	       "whose root reads b records and each right child at depth j b / 2^j, with "
	       "gradient corrections clamped per coordinate to min(2L, beta D 2^(1-j)); every "
	       "leaf takes a Frank-Wolfe step (2 / (k + 1)) towards a vertex drawn by the "
	       "exponential mechanism; releases the last iterate.  variant 0 (pure, default): "
	       "charged parallel(self_composed(bounded_range)) over the record's position, "
	       "on 'basic' and 'renyi' ledgers; variant 1 (approx): amplification by "
	       "shuffling, charged approx(epsilon, delta) from an explicit accountant, "
	       "'basic' ledgers only.  Smooth losses only; T and b default to a fixed-point "
	       "rule on public inputs (algorithms/frank_wolfe/README.md).",
	.paper = "H. Asi, V. Feldman, T. Koren, K. Talwar, Private stochastic convex optimization: "
		 "optimal rates in l1 geometry, ICML 2021 (Algorithm 3); shuffling: V. Feldman, "
		 "A. McMillan, K. Talwar, Hiding among the clones, FOCS 2021",
	.privacy_model = "epsilon-DP (variant 0) or (epsilon, delta)-DP (variant 1), replace-one",
	.objectives = vr_objectives,
	.constraints = (1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_SIMPLEX) |
		       (1u << CONSTRAINT_POLYTOPE),
	.params = vr_params,
	.state_size = sizeof(struct vr_state),
	.plan = vr_plan,
	.work = vr_work,
	.init = vr_init,
	.step = vr_step,
	.result = vr_result,
	.fini = vr_fini,
	.mode_rules = vr_mode_rules,
};
