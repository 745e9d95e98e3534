/*
 * synthetic/smd_queries.c - "synthetic.smd_queries": private synthetic
 * data for the k-way marginals of a dataset's categorical attributes by
 * stochastic mirror descent with Maurey sparsification (T. Gonzalez,
 * C. Guzman, C. Paquette, "Mirror descent algorithms with nearly
 * dimension-independent rates for differentially-private stochastic
 * saddle-point problems", 2024, Algorithm 5, Appendix G;
 * docs/algorithms/smd-queries.md).
 *
 * The game.  Over the universe Z of the categorical attributes and the
 * negation-closed query set Q of synthetic/kway.h (conjunctions q_j and
 * -q_j), min over x in the simplex of Z, max over y in the simplex of Q of
 * sum_j y_j (a_j - <q_j, x>), a_j = q_j(S) the dataset's answers: the only
 * access to the data.  With log-weights theta_x over Z and theta_y over Q
 * (both 0 at t = 1), at step t = 1..T:
 *
 *	x^t = softmax(theta_x);  xsum += x^t
 *	J_t ~ softmax(theta_y)                      (exponential mechanism)
 *	theta_x += tau_x q_{J_t}                    (x descends on -Qm^T e_J)
 *	theta_y += tau_y (a - Qm x^t)               (y ascends)
 *
 * and at the last step m rows are drawn i.i.d. from xbar = xsum / T; the
 * result is their histogram over Z (result() writes |Z| counts, row-major
 * universe index).  Qm x^t comes from one marginalising pass over Z.
 *
 * Privacy (replace-one, n public).  x^t depends on the data only through
 * J_1 .. J_{t-1}; given them, theta_y at the draw of J_t is tau_y (t - 1) a
 * minus a function of the past draws, and a moves by at most 1 / n per
 * coordinate (every query has range width 1; the spec's [-1, 1] queries
 * would give 2 / n).  The draw of J_t is an exponential mechanism whose
 * scores move by at most Delta_t = tau_y (t - 1) / n: (2 Delta_t)-bounded
 * range, so (2 Delta_t)^2 / 8-zCDP.  Over the T draws (J_1 free):
 *	rho = sum_t tau_y^2 (t - 1)^2 / (2 n^2) = tau_y^2 (T - 1) T (2T - 1) / (12 n^2),
 * one zcdp leaf (both ledger modes).  tau_y^priv is calibrated on the
 * dataset's mode (calibrate(), the noise being 1 / tau_y); the run uses
 * tau_y = min(the balanced choice, tau_y^priv) and charges the event at
 * the tau_y it uses.  xbar and the rows are post-processing.
 *
 * Defaults (the spec's balanced parameters, erratum ER7 of Theorem G.1):
 * with lz = max(ln|Z|, 1), lq = max(ln|Q|, 1), Ld = ln(1 / delta),
 *	T   = floor(3 / (4 sqrt 2) n eps sqrt(lz) / (lq sqrt(Ld)))
 *	tau_x = sqrt(lz / (9 T)),  tau_y = min(sqrt(lq / (2 T)), tau_y^priv).
 * T < 2 (no draw would see the data) is refused: privacy_too_small_for_n.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "mirror.h"
#include "privacy/calibrate.h"
#include "privacy/noise.h"
#include "synthetic/kway.h"
#include "synthetic/smd_queries.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum { P_K, P_STEPS, P_STEP_X, P_STEP_Y, P_ROWS, P__COUNT };

#define SMDQ_MAX_STEPS 1e6
#define SMDQ_MAX_ROWS  1e7

static const struct alg_param smdq_params[P__COUNT + 1] = {
	[P_K] = { "k", ALG_PARAM_INT, 0.0, DATA_MAX_CATEGORICAL, 0.0,
		  "the queries are the k-way marginals (conjunctions of k attribute values, "
		  "and their negations) of the categorical attributes; 0 = auto: min(2, p), p "
		  "attributes",
		  NULL },
	[P_STEPS] = { "steps", ALG_PARAM_INT, 0.0, SMDQ_MAX_STEPS, 0.0,
		      "steps T (>= 2); 0 = auto: floor(3 / (4 sqrt 2) n eps sqrt(ln|Z|) / "
		      "(ln|Q| sqrt(ln(1/delta))))",
		      NULL },
	[P_STEP_X] = { "step_size_x", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
		       "entropic step size tau_x of the synthetic distribution; 0 = auto: "
		       "sqrt(ln|Z| / (9 T))",
		       NULL },
	[P_STEP_Y] = { "step_size_y", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
		       "entropic step size tau_y of the query player; 0 = auto: min(sqrt(ln|Q| / "
		       "(2 T)), tau_priv); a given tau_y above tau_priv is refused",
		       NULL },
	[P_ROWS] = { "rows", ALG_PARAM_INT, 0.0, SMDQ_MAX_ROWS, 0.0,
		     "rows m of the synthetic dataset, drawn from the average distribution; 0 = "
		     "auto: n",
		     NULL },
	[P__COUNT] = { 0 },
};

static const char *const smdq_objectives[] = { NULL };

struct smdq_state {
	struct kway q;
	struct rng *rng;
	unsigned long steps, t;
	size_t m, nq;
	double tau_x, tau_y;
	double *theta_x; /* owned: |Z| */
	double *x;       /* owned: |Z|, x^t, then the prefix sums of xsum */
	double *xsum;    /* owned: |Z| */
	double *hist;    /* owned: |Z|, the synthetic rows' counts */
	double *theta_y; /* owned: |Q| */
	double *a;       /* owned: M, the dataset's conjunction answers */
	double *marg;    /* owned: M, Qm x^t on the conjunctions */
	size_t digits[DATA_MAX_CATEGORICAL];
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
smdq_balanced_steps(double n, double epsilon, double delta, double lz, double lq)
{
	return 3.0 / (4.0 * sqrt(2.0)) * n * epsilon * sqrt(lz) / (lq * sqrt(log(1.0 / delta)));
}

enum err_code
smdq_setup(const struct run_spec *spec, struct smdq_setup *ret, struct err *e)
{
	double n = (double)spec->n, t, kk;
	size_t p = spec->schema.n_categorical, u = kway_universe(&spec->schema);
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	if (p == 0)
		return err_set_field(e, ERR_INVALID, "schema.categorical",
				     "the dataset has no categorical attributes: synthetic data is "
				     "over the universe of its categorical attributes");
	if (u == SIZE_MAX || u != spec->dim)
		return err_set_field(e, ERR_NUMERIC, "schema.categorical",
				     "the universe of the categorical attributes (the product of "
				     "their sizes) exceeds %zu",
				     KWAY_MAX_UNIVERSE);
	kk = spec->params[P_K];
	ret->k = kk == 0.0 ? (p < 2 ? p : 2) : (size_t)kk;
	rc = kway_count(&spec->schema, ret->k, &ret->subsets, &ret->conj, e);
	if (rc != ERR_OK)
		return rc;
	ret->universe = u;
	ret->queries = 2 * ret->conj;
	ret->lz = log((double)u);
	ret->lq = log((double)ret->queries);
	t = spec->params[P_STEPS];
	if (t == 1.0)
		return err_set_field(e, ERR_INVALID, "params.steps",
				     "'params.steps' must be at least 2: the draw of step 1 does "
				     "not see the data");
	if (t == 0.0) {
		t = floor(smdq_balanced_steps(n, spec->epsilon, spec->delta, fmax(ret->lz, 1.0),
					      fmax(ret->lq, 1.0)));
		if (!(t >= 2.0))
			return err_set_field(
				e, ERR_TOO_SMALL, "privacy.epsilon",
				"privacy_too_small_for_n: (epsilon %g, delta %g) with n = %zu and "
				"%zu "
				"queries give fewer than 2 steps (none would see the data)",
				spec->epsilon, spec->delta, spec->n, ret->queries);
		t = fmin(t, SMDQ_MAX_STEPS);
	}
	ret->steps = (unsigned long)t;
	ret->rows = spec->params[P_ROWS] == 0.0 ? spec->n : (size_t)spec->params[P_ROWS];
	ret->tau_x = spec->params[P_STEP_X] != 0.0 ? spec->params[P_STEP_X]
						   : sqrt(fmax(ret->lz, 1.0) / (9.0 * t));
	ret->tau_y_balanced = sqrt(fmax(ret->lq, 1.0) / (2.0 * t));
	ret->rho_unit = (t - 1.0) * t * (2.0 * t - 1.0) / (12.0 * n * n);
	if (!is_finite_pos(ret->tau_x) || !is_finite_pos(ret->rho_unit))
		return err_set(e, ERR_NUMERIC, "the schedule is not usable");
	return ERR_OK;
}

enum err_code
smdq_event(double rho_unit, double tau_y, struct dp_event_tree *ret, struct err *e)
{
	double rho = rho_unit * tau_y * tau_y;

	if (!is_finite_pos(rho))
		return err_set(e, ERR_NUMERIC, "the privacy cost is not finite and positive");
	dp_event_zcdp(ret, DP_REPLACE_ONE, rho);
	return ERR_OK;
}

static enum err_code
event_at_noise(double noise, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	return smdq_event(*(const double *)ctx, 1.0 / noise, ret, e);
}

enum err_code
smdq_cap(const struct smdq_setup *s, enum accounting_mode mode, double epsilon, double delta,
	 double *ret_tau, struct accountant_report *ret_report, struct err *e)
{
	struct rdp_grid grid;
	double rho_unit = s->rho_unit, noise = 0.0,
	       /* rho + 2 sqrt(rho Ld) <= eps at rho = eps^2 / (4 Ld + 4 eps)
		* roughly: the bracket is 10^4 either way of it. */
		guess = sqrt(rho_unit * 4.0 * (log(1.0 / delta) + epsilon)) / epsilon;
	enum err_code rc;

	if (!is_finite_pos(guess))
		return err_set(e, ERR_NUMERIC, "the privacy unit is not finite and positive");
	rdp_grid_default(&grid);
	rc = calibrate(event_at_noise, &rho_unit, mode, nextafter(epsilon, 0.0),
		       nextafter(delta, 0.0), guess * 1e-4, guess * 1e4, &grid, &noise, ret_report,
		       e);
	if (rc == ERR_OK)
		*ret_tau = 1.0 / noise;
	return rc;
}

double
smdq_error_bound(const struct smdq_setup *s, double n, double tau_x, double tau_y)
{
	double t = (double)s->steps, m = (double)s->rows;

	/* The spec's bound on E max_q |q(D) - q(S~)| (Theorem G.1's gap
	 * bound at the parameters used, plus the final m-row sampling). */
	return 2.0 * s->lz / (tau_x * t) + s->lq / (tau_y * t) + 18.0 * tau_x + 2.0 * tau_y +
	       10.0 * sqrt(s->lq / n) + 6.0 * sqrt(s->lq / m) + 4.0 / m;
}

static enum err_code
smdq_fill_plan(const struct run_spec *spec, const struct smdq_setup *s, double tau_y, double cap,
	       struct run_plan *ret, struct err *e)
{
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	if (!is_finite_pos(tau_y) || !is_finite_pos(cap))
		return err_set(e, ERR_INTERNAL, "the step size is not finite and positive");
	ret->steps = s->steps;
	ret->charge_epsilon = spec->epsilon;
	ret->charge_delta = spec->delta;
	rc = smdq_event(s->rho_unit, tau_y, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "steps", (double)s->steps);
	run_plan_use(ret, "k", (double)s->k);
	run_plan_use(ret, "universe", (double)s->universe);
	run_plan_use(ret, "queries", (double)s->queries);
	run_plan_use(ret, "subsets", (double)s->subsets);
	run_plan_use(ret, "rows", (double)s->rows);
	run_plan_use(ret, "step_size_x", s->tau_x);
	run_plan_use(ret, "step_size_y", tau_y);
	run_plan_use(ret, "step_size_y_balanced", s->tau_y_balanced);
	run_plan_use(ret, "step_size_y_cap", cap);
	run_plan_use(ret, "sensitivity", 1.0 / (double)spec->n);
	run_plan_use(ret, "rho", s->rho_unit * tau_y * tau_y);
	run_plan_use(ret, "error_bound", smdq_error_bound(s, (double)spec->n, s->tau_x, tau_y));
	return ERR_OK;
}

static enum err_code
smdq_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct smdq_setup s;
	struct accountant_report report;
	struct run_plan p;
	double cap = 0.0, tau;
	enum err_code rc;

	rc = smdq_setup(spec, &s, e);
	if (rc != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	rc = smdq_cap(&s, spec->mode, spec->epsilon, spec->delta, &cap, &report, e);
	if (rc != ERR_OK)
		return rc;
	tau = spec->params[P_STEP_Y];
	if (tau == 0.0)
		tau = fmin(s.tau_y_balanced, cap);
	else if (tau > cap)
		return err_set_field(e, ERR_INVALID, "params.step_size_y",
				     "'params.step_size_y' %.6g exceeds the privacy cap %.6g for "
				     "(epsilon, delta) with T = %lu",
				     tau, cap, s.steps);
	rc = smdq_fill_plan(spec, &s, tau, cap, &p, e);
	if (rc == ERR_OK) {
		/* Below the cap the run costs less than the target: the
		 * accountant of the target certified the cap. */
		p.accountant = report.accountant;
		*ret_plan = p;
	}
	return rc;
}

static double
smdq_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double t = (double)plan->steps, z = run_plan_value(plan, "universe"),
	       q = run_plan_value(plan, "queries"), s = run_plan_value(plan, "subsets"),
	       k = run_plan_value(plan, "k"), m = run_plan_value(plan, "rows");

	if (isnan(z) || isnan(q) || isnan(s) || isnan(k) || isnan(m))
		return INFINITY;
	/* The dataset's answers; per step the marginalising pass over Z (s
	 * subsets of k attributes each), the softmax and the x update over Z,
	 * the draw and the y update over Q; the m rows. */
	return (double)spec->n * s * k + t * (z * (s * k + k + 4.0) + 2.0 * q) +
	       m * (log2(z) + 1.0);
}

static enum err_code
smdq_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	  const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct smdq_state *s = state;
	struct smdq_setup su;
	struct run_plan mine;
	size_t z, m;
	enum err_code rc;

	rc = smdq_setup(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	if (smdq_fill_plan(spec, &su, run_plan_value(plan, "step_size_y"),
			   run_plan_value(plan, "step_size_y_cap"), &mine, NULL) != ERR_OK ||
	    mine.steps != plan->steps || !dp_event_equal(&mine.event, &plan->event) ||
	    mine.n_used != plan->n_used)
		return err_set(e, ERR_INTERNAL, "the run plan does not match its spec");
	for (size_t i = 0; i < mine.n_used; i++)
		if (strcmp(mine.used[i].name, plan->used[i].name) != 0 ||
		    memcmp(&mine.used[i].value, &plan->used[i].value, sizeof(double)) != 0)
			return err_set(e, ERR_INTERNAL, "the run plan does not match its spec");
	if (ds->n != spec->n || ds->cat == NULL || ds->n_categorical != spec->schema.n_categorical)
		return err_set(e, ERR_INTERNAL, "the dataset does not match the run spec");
	rc = kway_init(&s->q, &spec->schema, su.k, e);
	if (rc != ERR_OK)
		return rc;
	s->rng = rng;
	s->steps = su.steps;
	s->m = su.rows;
	s->nq = su.queries;
	s->tau_x = su.tau_x;
	s->tau_y = run_plan_value(plan, "step_size_y");
	z = su.universe;
	m = su.conj;
	s->theta_x = calloc(z, sizeof(double));
	s->x = calloc(z, sizeof(double));
	s->xsum = calloc(z, sizeof(double));
	s->hist = calloc(z, sizeof(double));
	s->theta_y = calloc(2 * m, sizeof(double));
	s->a = calloc(m, sizeof(double));
	s->marg = calloc(m, sizeof(double));
	if (s->theta_x == NULL || s->x == NULL || s->xsum == NULL || s->hist == NULL ||
	    s->theta_y == NULL || s->a == NULL || s->marg == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the synthetic.smd_queries state");
	/* The only access to the data: the conjunctions' answers. */
	kway_counts(&s->q, ds->cat, ds->n, s->a);
	for (size_t j = 0; j < m; j++)
		s->a[j] /= (double)ds->n;
#ifdef DPOPT_TESTING
	s->hook = spec->testing_hook;
	if (s->hook != NULL && s->hook->noise_scale != 0.0)
		s->tau_y /= s->hook->noise_scale; /* the temperature 1 / tau_y scaled */
#endif
	return ERR_OK;
}

/* m rows i.i.d. from xsum / T into hist (inverse CDF on the prefix sums). */
static void
smdq_sample_rows(struct smdq_state *s)
{
	size_t z = s->q.universe;
	double total = 0.0;

	for (size_t u = 0; u < z; u++) {
		total += s->xsum[u];
		s->x[u] = total;
	}
	for (size_t r = 0; r < s->m; r++) {
		double v = rng_uniform(s->rng) * total;
		size_t lo = 0, hi = z - 1;

		/* The first u with prefix[u] > v. */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (s->x[mid] > v)
				hi = mid;
			else
				lo = mid + 1;
		}
		/* A zero-mass tail cannot be chosen: step back over it. */
		while (lo > 0 && s->xsum[lo] == 0.0)
			lo--;
		s->hist[lo] += 1.0;
	}
}

static enum err_code
smdq_step(void *state, struct err *e)
{
	struct smdq_state *s = state;
	size_t z = s->q.universe, m = s->q.n_conj, j = 0;

	if (s->t >= s->steps)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	/* x^t = softmax(theta_x), added to the average. */
	mirror_entropic_point(s->theta_x, z, 1.0, s->x);
	for (size_t u = 0; u < z; u++)
		s->xsum[u] += s->x[u];
	/* J_t ~ softmax(theta_y): the exponential mechanism. */
	if (noise_exp_mech(s->rng, s->theta_y, s->nq, &j, e) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL) {
		double r = (double)j;

		s->hook->release(s->hook->ctx, s->t, &r, 1);
	}
#endif
	s->t++;
	if (s->t == s->steps) {
		/* x^{T+1} is not part of the average: the rows instead. */
		smdq_sample_rows(s);
		return ERR_OK;
	}
	/* theta_y += tau_y (a - Qm x^t) (conjunctions, then negations). */
	kway_marginals(&s->q, s->x, s->marg, s->digits);
	for (size_t i = 0; i < m; i++) {
		double g = s->tau_y * (s->a[i] - s->marg[i]);

		s->theta_y[i] += g;
		s->theta_y[m + i] -= g;
	}
	/* theta_x += tau_x q_{J_t}. */
	kway_add_query(&s->q, j, s->tau_x, s->theta_x, s->digits);
	return ERR_OK;
}

static void
smdq_result(const void *state, double *ret_hist)
{
	const struct smdq_state *s = state;

	memcpy(ret_hist, s->hist, s->q.universe * sizeof(*ret_hist));
}

static void
smdq_fini(void *state)
{
	struct smdq_state *s = state;

	kway_free(&s->q);
	free(s->theta_x);
	free(s->x);
	free(s->xsum);
	free(s->hist);
	free(s->theta_y);
	free(s->a);
	free(s->marg);
	s->theta_x = s->x = s->xsum = s->hist = s->theta_y = s->a = s->marg = NULL;
}

const struct alg_ops alg_synthetic_smd_queries = {
	.name = "synthetic.smd_queries",
	.version = 1,
	.doc = "Private synthetic data for the k-way marginals of the dataset's categorical "
	       "attributes (conjunctions of k attribute values and their negations): a zero-sum "
	       "game between a distribution x over the universe of attribute combinations "
	       "(entropic steps) and a distribution y over the queries, whose query draws are "
	       "exponential mechanisms on the accumulated errors a - Qm x; the result is m rows "
	       "drawn from the average of x (GET /v1/runs/{id}/synthetic.csv).  Takes no "
	       "objective and no constraints.  Replace-one: the draw of step t is "
	       "(2 tau_y (t - 1) / n)-bounded-range, charged zcdp(tau_y^2 (T - 1) T (2T - 1) / "
	       "(12 n^2)), tau_y calibrated on the dataset's accountant (both ledger modes).",
	.paper = "T. Gonzalez, C. Guzman, C. Paquette, Mirror descent algorithms with nearly "
		 "dimension-independent rates for differentially-private stochastic saddle-point "
		 "problems, 2024, Algorithm 5 (Appendix G)",
	.privacy_model = "rho-zCDP (bounded-range draws), replace-one",
	.objectives = smdq_objectives,
	.constraints = 0,
	.params = smdq_params,
	.state_size = sizeof(struct smdq_state),
	.plan = smdq_plan,
	.work = smdq_work,
	.init = smdq_init,
	.step = smdq_step,
	.result = smdq_result,
	.fini = smdq_fini,
	.synthetic = true,
};
