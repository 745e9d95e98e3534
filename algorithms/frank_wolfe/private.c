/*
 * frank_wolfe/private.c - "frank_wolfe.private": the private Frank-Wolfe
 * method of K. Talwar, A. Thakurta, L. Zhang, "Nearly optimal private
 * LASSO", NeurIPS 2015 (Algorithm 1), over the l1 ball or the simplex.
 *
 * The run.  x_0 the centre of the set (lmo.h); T full-batch steps, at step
 * k = 0 .. T - 1
 *
 *	v_k     = (1/n) sum_i clamp_L(grad l_i(x_k)) + grad r(x_k)
 *	w_k     = vertex i with probability ~ exp(-<c_i, v_k> / temp)
 *	x_(k+1) = (1 - eta_k) x_k + eta_k w_k,   eta_k = 2 / (k + 2)
 *	result  = x_T
 *
 * with l_i the record's data term, r the public regularizer, L the
 * objective's declared l_inf gradient bound over the set (lipschitz_linf,
 * its Lipschitz constant w.r.t. ||.||_1) and clamp_L the coordinate-wise
 * clamp to [-L, L], which makes the bound hold whatever the rows are.
 *
 * Privacy (replace-one).  Replacing one record moves the mean of the
 * clamped gradients by at most 2L/n in l_inf, so every score <c_i, v_k> by
 * at most Delta = 2 L R_c / n (scored about lmo.h's centre c: ||c_i -
 * c||_1 <= R_c for every vertex, R_c = D / 2 on the l1 ball and the
 * simplex, D / 2 <= R_c <= D on a request's vertex list, D the l1
 * diameter, which 2 R_c then bounds in the schedule); the public
 * regularizer's term is the same in both worlds.  Each draw is then
 * eps0-bounded-range with eps0 = 2 Delta / temp, and the T draws compose
 * adaptively: the event is self_composed(bounded_range(eps0), T).  temp is
 * calibrated through calibrate() on the dataset's mode (the Renyi curve of
 * bounded range, min(eps0, alpha eps0^2 / 8), on both; basic composition,
 * T eps0, is the basic ledger's other candidate).
 *
 * Default T (params.steps = 0), from public inputs: the Frank-Wolfe error
 * beta D^2 / T against the selection's noise, about
 * L D sqrt(T) ln(m) / (n eps) (TTZ15, Theorem 3.1's balance):
 *	T = clamp(ceil((beta D n eps / (L ln m))^(2/3)), 1, T_max),
 *	T_max = min(1000, max(20, floor(1e9 / (n p)))),
 * with beta the declared l1 smoothness (smooth_l1) and p = dim; losses
 * without smoothness are not offered (algorithms/frank_wolfe/README.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "frank_wolfe/lmo.h"
#include "gauss_onepass.h"
#include "privacy/calibrate.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_STEPS, P__COUNT };

#define FWP_MAX_STEPS      1e5
#define FWP_MAX_AUTO_STEPS 1000.0
#define FWP_WORK           1e9
/* At least this many steps even past FWP_WORK: one or two Frank-Wolfe
 * steps put the model on a vertex (measured at n = 1e5, d = 1e4: one step,
 * excess 0.082 against the zero model's 0.018); the service's work limit
 * (DPOPT_MAX_RUN_WORK) still refuses a run too large for it, naming
 * params. */
#define FWP_MIN_AUTO_STEPS 20.0

static const struct alg_param fwp_params[P__COUNT + 1] = {
	[P_STEPS] = { "steps", ALG_PARAM_INT, 0.0, FWP_MAX_STEPS, 0.0,
		      "Frank-Wolfe steps T (each reads every record); 0 = auto: "
		      "clamp(ceil((beta D n eps / (L ln m))^(2/3)), 1, min(1000, max(20, 1e9 / (n "
		      "p))))",
		      NULL },
	[P__COUNT] = { 0 },
};

static const char *const fwp_objectives[] = { "logistic", "least_squares", "huber",
					      "log_optimal_portfolio", NULL };

/* Everything derived from the public spec (plan() and init() alike). */
struct fwp_setup {
	double lip;  /* L: l_inf bound of a record's gradient (the clamp) */
	double beta; /* l1 smoothness */
	double rc;   /* R_c >= D / 2 (lmo.h) */
	size_t m;    /* vertices */
	double sens; /* score sensitivity 2 L R_c / n */
	unsigned long steps;
};

struct fwp_state {
	const struct objective *obj;
	const struct dataset *ds;
	struct rng *rng;
	struct constraint set;
	size_t dim, n, m;
	unsigned long steps, k;
	double lip, temp;
	double *x, *v, *g, *w; /* owned: dim, dim, dim, m */
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook;
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

static enum err_code
fwp_setup(const struct run_spec *spec, struct fwp_setup *ret, struct err *e)
{
	struct objective_constants oc;
	double n = (double)spec->n, t, tmax;
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
	t = spec->params[P_STEPS];
	if (t == 0.0) {
		double m = fmax((double)ret->m, 2.0);

		tmax = fmin(FWP_MAX_AUTO_STEPS,
			    fmax(FWP_MIN_AUTO_STEPS, floor(FWP_WORK / (n * (double)spec->dim))));
		t = ceil(pow(ret->beta * 2.0 * ret->rc * n * spec->epsilon / (ret->lip * log(m)),
			     2.0 / 3.0));
		if (!isfinite(t))
			t = 1.0;
		t = fmin(fmax(t, 1.0), tmax);
	}
	ret->steps = (unsigned long)t;
	ret->sens = 2.0 * ret->lip * ret->rc / n;
	if (!is_finite_pos(ret->sens))
		return err_set(e, ERR_NUMERIC, "the score sensitivity is not finite and positive");
	return ERR_OK;
}

struct fwp_ctx {
	double sens;
	uint64_t steps;
};

static enum err_code
fwp_family(double temp, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	const struct fwp_ctx *c = ctx;
	struct dp_event self = { .type = DP_EVENT_SELF_COMPOSED, .count = c->steps };

	dp_event_bounded_range(ret, DP_REPLACE_ONE, 2.0 * c->sens / temp);
	return dp_event_wrap(ret, &self, e);
}

static enum err_code
fwp_fill_plan(const struct run_spec *spec, const struct fwp_setup *s, double temp,
	      struct run_plan *ret, struct err *e)
{
	struct fwp_ctx c = { s->sens, s->steps };
	enum err_code rc;

	if (!is_finite_pos(temp))
		return err_set(e, ERR_INTERNAL, "the temperature is not finite and positive");
	onepass_plan_start(ret, spec, s->steps, spec->n);
	rc = fwp_family(temp, &c, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "lipschitz_linf", s->lip);
	run_plan_use(ret, "smooth_l1", s->beta);
	run_plan_use(ret, "vertices", (double)s->m);
	run_plan_use(ret, "score_sensitivity", s->sens);
	run_plan_use(ret, "temperature", temp);
	run_plan_use(ret, "step_epsilon", 2.0 * s->sens / temp);
	return ERR_OK;
}

static enum err_code
fwp_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct fwp_setup s;
	struct fwp_ctx c;
	struct rdp_grid grid;
	struct accountant_report report;
	struct run_plan p;
	double temp = 0.0, basic;
	enum err_code rc;

	rc = fwp_setup(spec, &s, e);
	if (rc != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	c = (struct fwp_ctx){ s.sens, s.steps };
	/* The temperature at which basic composition meets epsilon exactly;
	 * the Renyi conversion needs at most a few times more for small
	 * epsilon (about sqrt(log(1/delta) / 2) at T = 1) and less for many
	 * steps. */
	basic = 2.0 * s.sens * (double)s.steps / spec->epsilon;
	rdp_grid_default(&grid);
	rc = calibrate(fwp_family, &c, spec->mode, nextafter(spec->epsilon, 0.0),
		       nextafter(spec->delta, 0.0), basic * 1e-4, basic * 64.0, &grid, &temp,
		       &report, e);
	if (rc == ERR_OK)
		rc = fwp_fill_plan(spec, &s, temp, &p, e);
	if (rc == ERR_OK) {
		p.accountant = report.accountant;
		*ret_plan = p;
	}
	return rc;
}

static double
fwp_work(const struct run_spec *spec, const struct run_plan *plan)
{
	/* a polytope's list: m d per step's scores */
	return (double)plan->steps * ((double)spec->n + 1.0) * (double)spec->dim +
	       (double)plan->steps * fw_polytope_work(&spec->x, spec->dim);
}

static enum err_code
fwp_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	 const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct fwp_state *s = state;
	struct fwp_setup su;
	struct run_plan mine;
	bool derived;
	enum err_code rc;

	rc = fwp_setup(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	derived = fwp_fill_plan(spec, &su, run_plan_value(plan, "temperature"), &mine, NULL) ==
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
	s->m = su.m;
	s->steps = su.steps;
	s->lip = su.lip;
	s->temp = run_plan_value(plan, "temperature");
	s->x = calloc(s->dim, sizeof(*s->x));
	s->v = calloc(s->dim, sizeof(*s->v));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->w = calloc(s->m, sizeof(*s->w));
	if (s->x == NULL || s->v == NULL || s->g == NULL || s->w == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the frank_wolfe.private state");
	fw_start(&s->set, s->x, s->dim);
#ifdef DPOPT_TESTING
	s->hook = spec->testing_hook;
	if (s->hook != NULL && s->hook->noise_scale != 0.0)
		s->temp *= s->hook->noise_scale;
#endif
	return ERR_OK;
}

static enum err_code
fwp_step(void *state, struct err *e)
{
	struct fwp_state *s = state;
	const size_t d = s->dim;
	size_t vertex = 0;

	if (s->k >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	memset(s->v, 0, d * sizeof(*s->v));
	memset(s->g, 0, d * sizeof(*s->g));
	for (size_t i = 0; i < s->n; i++) {
		objective_grad(s->obj, s->ds, i, s->x, 1.0, s->g);
		fw_add_clamped(s->ds, i, d, s->lip, s->g, s->v);
	}
	for (size_t j = 0; j < d; j++)
		s->v[j] /= (double)s->n;
	objective_reg_grad(s->obj, s->x, 1.0, s->v);
	if (fw_noisy_vertex(s->rng, &s->set, s->v, d, s->temp, s->w, &vertex, NULL) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL) {
		double r = (double)vertex;

		s->hook->release(s->hook->ctx, s->k, &r, 1);
	}
#endif
	fw_move(&s->set, s->x, d, vertex, 2.0 / ((double)s->k + 2.0));
	s->k++;
	return ERR_OK;
}

static void
fwp_result(const void *state, double *ret_x)
{
	const struct fwp_state *s = state;

	memcpy(ret_x, s->x, s->dim * sizeof(*ret_x));
}

static void
fwp_fini(void *state)
{
	struct fwp_state *s = state;

	free(s->x);
	free(s->v);
	free(s->g);
	free(s->w);
	s->x = s->v = s->g = s->w = NULL;
}

const struct alg_ops alg_frank_wolfe_private = {
	.name = "frank_wolfe.private",
	.version = 1,
	.doc = "Private Frank-Wolfe over the l1 ball or the simplex: T full-batch steps, each "
	       "clamps every record's gradient coordinate-wise to the declared l_inf bound L, "
	       "and moves towards a vertex drawn by the exponential mechanism on the scores "
	       "<c_i, v> (score sensitivity 2 L R_c / n, replace-one), step 2 / (k + 2); "
	       "releases the last iterate, a sparse convex combination of at most T vertices.  "
	       "Charged self_composed(bounded_range(eps0), T), calibrated on the dataset's "
	       "accountant (works on 'basic' and 'renyi' ledgers).  Smooth losses only; T "
	       "defaults to a rule on public inputs (algorithms/frank_wolfe/README.md).",
	.paper = "K. Talwar, A. Thakurta, L. Zhang, Nearly optimal private LASSO, NeurIPS 2015; "
		 "bounded range: D. Durfee, R. Rogers, NeurIPS 2019",
	.privacy_model = "epsilon-DP (bounded range), replace-one",
	.objectives = fwp_objectives,
	.constraints = (1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_SIMPLEX) |
		       (1u << CONSTRAINT_POLYTOPE),
	.params = fwp_params,
	.state_size = sizeof(struct fwp_state),
	.plan = fwp_plan,
	.work = fwp_work,
	.init = fwp_init,
	.step = fwp_step,
	.result = fwp_result,
	.fini = fwp_fini,
};
