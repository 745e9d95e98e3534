/*
 * mirror_descent/localized.c - "mirror_descent.localized": localized noisy
 * mirror descent (H. Asi, V. Feldman, T. Koren, K. Talwar, ICML 2021,
 * Algorithm 2 in l1 geometry and Algorithm 6 for lp balls;
 * docs/algorithms/l1-mirror-descent.md).
 *
 * One secret uniformly random order of the records, drawn at init, is cut
 * into disjoint consecutive chunks S_1, S_2, ... of n_i = floor(n / 2^i)
 * records.  Phase i (i = 1..k) runs noisy mirror descent on its chunk
 * only, for the regularized objective
 *
 *	F_i(x) = (1/n_i) sum_{z in S_i} f(x; z) + lambda_i h_i(x),
 *	h_i(x) = c ||x - x_{i-1}||_p^2,  lambda_i = 1 / (c eta_i n_i (p - 1)),
 *
 * over X intersected with {||x - x_{i-1}||_p <= R_i} (mirror_pnorm_step
 * with a finite R), from x_{i-1} (x_0 the set's centre), with batches of
 * b_i distinct records of S_i drawn afresh each step, the strongly convex
 * steps gamma_t = 2 / (lambda_i (t + 1)) and the k-weighted average
 * x_i = (2 / (T_i (T_i + 1))) sum_t t x_t as the phase's output.  The
 * gradient of lambda_i h_i and of the objective's own regularizer is
 * exact, never clipped or noised.  Constants (l1 ball, simplex: p = 1 +
 * 1/max(ln d, 1), c = 1/(p - 1); lp ball p': p = p', c = 1/(2(p - 1)); an
 * l2 ball is the lp ball with p' = 2):
 *	eta   = (D / L) min(sqrt(ln d / n), eps' / sqrt(d ln d ln(1/delta)))
 *	        (lp: (D / L) min(1 / sqrt((p - 1) n),
 *	         eps' / sqrt(d ln(1/delta) (1 + ln d [p < 2])))),  eps' = 2 eps,
 *	eta_i = eta / 16^i,  eps_i = 2^(1-i) eps (equal_phase_budget: eps),
 *	b_i   = ceil(max(sqrt(n_i / ln d), sqrt(d) / eps_i)),
 *	T_i   = min(ceil(n_i^2 / b_i^2), params.max_phase_steps; 0 = auto: the
 *	        largest common cap >= 2 keeping work() within 5e9),
 *	R_i   = kappa_p L eta_i n_i (p - 1)  (lp: L eta_i n_i (p - 1)),
 * with ln d read as max(ln d, 1).  Phases stop at the first i with b_i >
 * n_i or n_i < 2, at ceil(log2 n) and at params.max_phases (at most
 * LOC_MAX_PHASES); none at all is ERR_TOO_SMALL (422
 * privacy_too_small_for_n) naming "privacy.epsilon".
 *
 * Privacy (replace-one).  Phase i is mirror_descent.noisy's mechanism on
 * its chunk: the event self_composed(sampled_without_replacement(n_i, b_i,
 * gaussian(z_i)), T_i), z_i = sigma_i b_i / (2C), calibrated by
 * calibrate() to (eps_i, delta).  A record lies in one chunk only (the
 * order is secret but independent of the data), and a phase sees the
 * earlier ones only through x_{i-1}, so the run's event is the parallel
 * composition of the phases; phase 1 is calibrated to the full epsilon.
 * The phases' curves are joined by their maximum at each Renyi order,
 * which can convert to slightly more than the largest phase's epsilon, so
 * one more calibrate() scales every z_i by a common s >= 1 until the
 * joined event meets (epsilon, delta) (s = 1.03 at n = 4000, d = 20,
 * epsilon = 1: test_mirror_descent.c).
 *
 * params.strong_convexity lambda > 0 (a declared strong convexity w.r.t.
 * ||.||_1, ||.||_p on an lp ball; rare: a ridge mu is only mu/d-strongly
 * convex w.r.t. ||.||_1) runs the reduction of the paper's Section 5, a
 * reconstruction (docs/algorithms/l1-mirror-descent.md §3): ceil(log2
 * log2 n) stages on the next floor(2^(j-2) n / log2 n) records each, each
 * the schedule above with D_{j-1} for D, from the previous stage's output,
 * D_j = min(D_{j-1}, sqrt(2 Err_j / lambda)), Err_j = C L D_{j-1} (the
 * convex rate), C = params.stage_error_scale; at most floor(max_phases /
 * stages) phases a stage.  Disjoint chunks throughout: the same parallel
 * event over every phase.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "mirror.h"
#include "mirror_descent/localized.h"
#include "mirror_descent/md.h"
#include "privacy/calibrate.h"
#include "privacy/noise.h"
#include "privacy/rdp.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

enum {
	P_EQUAL_BUDGET,
	P_MAX_PHASES,
	P_MAX_PHASE_STEPS,
	P_CLIP,
	P_STRONG_CONVEXITY,
	P_STAGE_ERROR,
	P__COUNT
};

#define LOC_WORK_OPS  256.0 /* a mirror step's cost in records (noisy.c's NMD_WORK_STEP_OPS) */
#define LOC_MAX_STEPS 1e7   /* the most steps a phase takes, given or auto */
/* The automatic max_phase_steps keeps loc_work() within this: ceil(n_i^2 /
 * b_i^2) grows as n, and at n = 1e6, d = 100 the uncapped schedule (2.9e6
 * steps, work 1.4e11, 458 s) was above the service's default work limit
 * (DPOPT_MAX_RUN_WORK 5e10), so a request with only the required fields
 * was refused.  5e9 is about 15 s of one core at the measured rate. */
#define LOC_AUTO_WORK 5e9
/* A phase of one step releases its start only (x_1 enters the average
 * before the step), so an automatic cap never goes below two. */
#define LOC_AUTO_MIN_STEPS 2.0

static const struct alg_param loc_params[P__COUNT + 1] = {
	[P_EQUAL_BUDGET] = { "equal_phase_budget", ALG_PARAM_BOOL, 0.0, 1.0, 0.0,
			     "1: every phase calibrated to epsilon (the phases are disjoint); "
			     "0: phase i to 2^(1-i) epsilon (the paper's halving)",
			     NULL },
	[P_MAX_PHASES] = { "max_phases", ALG_PARAM_INT, 1.0, LOC_MAX_PHASES, LOC_MAX_PHASES,
			   "at most this many phases (also stopped when b_i > n_i or n_i < 2)",
			   NULL },
	[P_MAX_PHASE_STEPS] = { "max_phase_steps", ALG_PARAM_INT, 0.0, LOC_MAX_STEPS, 0.0,
				"cap on each phase's steps T_i = ceil(n_i^2 / b_i^2); 0 = auto: "
				"the "
				"largest cap (at least 2, at most 1e7) that keeps the run's work, "
				"n + sum_i T_i (b_i + 256) dim, within 5e9",
				NULL },
	[P_CLIP] = { "clip", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
		     "per-record l2 clip C (the sensitivity is 2C/b_i); 0 = auto: min(G, L_inf "
		     "sqrt(dim)) from the declared bounds, and never above it",
		     NULL },
	[P_STRONG_CONVEXITY] = { "strong_convexity", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
				 "lambda > 0: the population loss is declared lambda-strongly "
				 "convex "
				 "w.r.t. ||.||_1 (||.||_p on an lp ball) and the run uses the "
				 "Section 5 reduction (ceil(log2 log2 n) stages of shrinking "
				 "radius); "
				 "a ridge mu is only mu/d-strongly convex w.r.t. ||.||_1; 0 = "
				 "off",
				 NULL },
	[P_STAGE_ERROR] = { "stage_error_scale", ALG_PARAM_REAL, 1e-3, 1e3, 1.0,
			    "with strong_convexity: the constant C of each stage's assumed error "
			    "C L D (rate), D_j = sqrt(2 Err / lambda)",
			    NULL },
	[P__COUNT] = { 0 },
};

static const char *const loc_objectives[] = {
	"logistic", "least_squares",       "hinge",
	"huber",    "multiclass_logistic", "log_optimal_portfolio",
	NULL
};

/* Everything derived from the public spec (plan() and init() alike). */
struct loc_setup {
	struct md_geom g;
	struct loc_schedule s;
	unsigned long steps; /* sum of T_i */
	size_t n_used;       /* sum of n_i */
	double joint;        /* the common scale s of the z_i */
	double sens[LOC_MAX_PHASES], sens_lat[LOC_MAX_PHASES], sigma[LOC_MAX_PHASES];
	int lattice_k[LOC_MAX_PHASES];
};

struct loc_state {
	const struct objective *obj;
	const struct dataset *ds; /* borrowed */
	struct rng *rng;          /* borrowed */
	struct constraint set;
	struct mirror_pnorm map; /* centred at a */
	struct loc_schedule sch;
	int lattice_k[LOC_MAX_PHASES];
	struct dgauss_params noise[LOC_MAX_PHASES];
	size_t off[LOC_MAX_PHASES]; /* chunk i: perm[off_i .. off_i + n_i) */
	size_t dim, n;
	unsigned long steps, done; /* all phases */
	unsigned phase;            /* current, 0-based */
	unsigned long t;           /* steps done in the phase */
	double clip;
	size_t *perm;  /* owned: n entries */
	double *a;     /* owned: the phase's centre x_{i-1} */
	double *x;     /* owned: x_t */
	double *avg;   /* owned: the phase's weighted average */
	double *g;     /* owned */
	double *theta; /* owned */
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook; /* borrowed; may be NULL */
#endif
};

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

/* The base scale eta of a run (or stage) on m records at distance D. */
static double
loc_eta(const struct run_spec *spec, const struct md_geom *g, double m, double D)
{
	double d = (double)spec->dim, lnd = fmax(log(d), 1.0), l1d = log(1.0 / spec->delta);
	double eps2 = 2.0 * spec->epsilon, pm1 = g->p - 1.0;

	if (g->lp)
		return (D / g->lip) * fmin(1.0 / sqrt(pm1 * m),
					   eps2 / sqrt(d * l1d * (1.0 + (g->p < 2.0 ? lnd : 0.0))));
	return (D / g->lip) * fmin(sqrt(lnd / m), eps2 / sqrt(d * lnd * l1d));
}

/* Err(m, D) of the strongly convex reduction: the convex rate of
 * Theorem 4 (Theorem 13 for an lp ball) times params.stage_error_scale. */
static double
loc_rate(const struct run_spec *spec, const struct md_geom *g, double m, double D)
{
	double d = (double)spec->dim, lnd = fmax(log(d), 1.0), l1d = log(1.0 / spec->delta);
	double eps2 = 2.0 * spec->epsilon, pm1 = g->p - 1.0, r;

	if (g->lp)
		r = 1.0 / sqrt(pm1 * m) +
		    sqrt(d * l1d * (1.0 + (g->p < 2.0 ? lnd : 0.0))) / (pm1 * m * eps2);
	else
		r = sqrt(lnd / m) + sqrt(d * lnd * lnd * lnd * l1d) / (m * eps2);
	return spec->params[P_STAGE_ERROR] * g->lip * D * r;
}

/* Appends the phases of one run of Algorithm 2 / 6 on m records with base
 * scale eta (at most kcap phases) to ret; ERR_NUMERIC for unusable
 * constants. */
static enum err_code
loc_stage(const struct run_spec *spec, const struct md_geom *g, double m, double eta, unsigned kcap,
	  struct loc_schedule *ret, struct err *e)
{
	double d = (double)spec->dim, lnd = fmax(log(d), 1.0), pm1 = g->p - 1.0;
	double kmax = fmin(ceil(log2(m)), (double)kcap);
	bool equal = spec->params[P_EQUAL_BUDGET] != 0.0;

	for (unsigned i = 1; i <= (unsigned)kmax && ret->k < LOC_MAX_PHASES; i++) {
		struct loc_phase *ph = &ret->phase[ret->k];
		double ni = floor(ldexp(m, -(int)i)), eps_i, bi, ti;

		eps_i = equal ? spec->epsilon : ldexp(spec->epsilon, 1 - (int)i);
		bi = ceil(fmax(sqrt(ni / lnd), sqrt(d) / eps_i));
		if (ni < 2.0 || !(bi <= ni))
			break; /* the truncation rule */
		ti = fmin(ceil(ni * ni / (bi * bi)), spec->params[P_MAX_PHASE_STEPS] > 0.0
							     ? spec->params[P_MAX_PHASE_STEPS]
							     : LOC_MAX_STEPS);
		ph->n = (size_t)ni;
		ph->batch = (size_t)bi;
		ph->steps = (unsigned long)ti;
		ph->epsilon = eps_i;
		ph->eta = ldexp(eta, -4 * (int)i);
		ph->lambda = 1.0 / (ret->c * ph->eta * ni * pm1);
		ph->radius = (g->lp ? 1.0 : g->kappa) * g->lip * ph->eta * ni * pm1;
		if (!is_finite_pos(ph->lambda) || !is_finite_pos(ph->radius))
			return err_set(e, ERR_NUMERIC, "phase %u's constants are not usable", i);
		ret->k++;
	}
	return ERR_OK;
}

/* loc_work() of a schedule whose phases are capped at `cap` steps. */
static double
loc_capped_work(const struct run_spec *spec, const struct loc_schedule *s, double cap)
{
	double w = (double)spec->n;

	for (unsigned i = 0; i < s->k; i++)
		w += fmin((double)s->phase[i].steps, cap) *
		     ((double)s->phase[i].batch + LOC_WORK_OPS) * (double)spec->dim;
	return w;
}

/* params.max_phase_steps = 0: the largest cap >= LOC_AUTO_MIN_STEPS with
 * loc_capped_work() <= LOC_AUTO_WORK (bisection on integers), applied to
 * every phase.  Public inputs only. */
static void
loc_auto_cap(const struct run_spec *spec, struct loc_schedule *s)
{
	double lo = LOC_AUTO_MIN_STEPS, hi = 0.0;

	for (unsigned i = 0; i < s->k; i++)
		hi = fmax(hi, (double)s->phase[i].steps);
	if (hi <= lo || loc_capped_work(spec, s, hi) <= LOC_AUTO_WORK)
		return;
	while (hi - lo > 1.0) {
		double mid = floor(0.5 * (lo + hi));

		if (loc_capped_work(spec, s, mid) <= LOC_AUTO_WORK)
			lo = mid;
		else
			hi = mid;
	}
	for (unsigned i = 0; i < s->k; i++)
		s->phase[i].steps = (unsigned long)fmin((double)s->phase[i].steps, lo);
}

static enum err_code
loc_schedule_from(const struct run_spec *spec, const struct md_geom *g, struct loc_schedule *ret,
		  struct err *e)
{
	double n = (double)spec->n, lambda = spec->params[P_STRONG_CONVEXITY];
	unsigned kcap = (unsigned)spec->params[P_MAX_PHASES];
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	ret->p = g->p;
	ret->c = g->lp ? 1.0 / (2.0 * (g->p - 1.0)) : 1.0 / (g->p - 1.0);
	ret->lip = g->lip;
	ret->diam = g->diam;
	ret->stages = 1;
	if (lambda == 0.0) {
		ret->eta = loc_eta(spec, g, n, g->diam);
		if (!is_finite_pos(ret->eta))
			return err_set(e, ERR_NUMERIC, "the localization scale is not usable");
		rc = loc_stage(spec, g, n, ret->eta, kcap, ret, e);
	} else {
		/* The reduction of Section 5 (a reconstruction: README there):
		 * stage j on 2^(j-2) n / log2 n records from the previous stage's
		 * output, at distance D_{j-1}, D_j = min(D_{j-1}, sqrt(2 Err / lambda)). */
		double lg = log2(n), D = g->diam;
		unsigned ks = (unsigned)fmax(1.0, ceil(log2(fmax(lg, 2.0))));

		ret->stages = ks;
		kcap = kcap / ks > 0 ? kcap / ks : 1;
		rc = ERR_OK;
		for (unsigned j = 1; j <= ks && rc == ERR_OK && ret->k < LOC_MAX_PHASES; j++) {
			double m = floor(ldexp(n, (int)j - 2) / lg), eta = loc_eta(spec, g, m, D);

			if (m < 2.0 || !is_finite_pos(eta))
				continue;
			if (j == 1)
				ret->eta = eta;
			rc = loc_stage(spec, g, m, eta, kcap, ret, e);
			D = fmin(D, sqrt(2.0 * loc_rate(spec, g, m, D) / lambda));
		}
	}
	if (rc != ERR_OK)
		return rc;
	if (spec->params[P_MAX_PHASE_STEPS] == 0.0)
		loc_auto_cap(spec, ret);
	if (ret->k == 0)
		return err_set_field(e, ERR_TOO_SMALL, "privacy.epsilon",
				     "'privacy.epsilon' %.6g is too small for n = %zu records in "
				     "dimension %zu: no phase of localized mirror descent can run",
				     spec->epsilon, spec->n, spec->dim);
	return ERR_OK;
}

static enum err_code
loc_bounds(const struct run_spec *spec, struct loc_setup *s, struct err *e)
{
	enum err_code rc;

	memset(s, 0, sizeof(*s));
	rc = md_geometry(spec, spec->params[P_CLIP], &s->g, e);
	if (rc == ERR_OK)
		rc = loc_schedule_from(spec, &s->g, &s->s, e);
	if (rc != ERR_OK)
		return rc;
	for (unsigned i = 0; i < s->s.k; i++) {
		s->steps += s->s.phase[i].steps;
		s->n_used += s->s.phase[i].n;
	}
	return ERR_OK;
}

enum err_code
localized_schedule(const struct run_spec *spec, struct loc_schedule *ret, struct err *e)
{
	struct loc_setup s;
	enum err_code rc = loc_bounds(spec, &s, e);

	if (rc == ERR_OK)
		*ret = s.s;
	return rc;
}

/* The run's event: parallel over the phases, z_i scaled by joint. */
static enum err_code
loc_event(const struct loc_schedule *sch, double joint, struct dp_event_tree *ret, struct err *e)
{
	struct dp_event_tree parts[LOC_MAX_PHASES];
	const struct dp_event_tree *pp[LOC_MAX_PHASES];
	enum err_code rc;

	for (unsigned i = 0; i < sch->k; i++) {
		const struct loc_phase *ph = &sch->phase[i];

		rc = md_phase_event(ph->n, ph->batch, ph->steps, ph->z * joint, &parts[i], e);
		if (rc != ERR_OK)
			return rc;
		pp[i] = &parts[i];
	}
	return dp_event_join(ret, DP_EVENT_PARALLEL, pp, sch->k, e);
}

static enum err_code
joint_family(double s, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	return loc_event(ctx, s, ret, e);
}

/* The calibration (plan() only): z_i per phase at (eps_i, delta), then
 * the common scale s >= 1 of the joined event at (epsilon, delta). */
static enum err_code
loc_calibrate(const struct run_spec *spec, struct loc_setup *s, const char **ret_accountant,
	      struct err *e)
{
	struct rdp_grid grid;
	struct accountant_report report;
	const char *acc = NULL;
	enum err_code rc;

	for (unsigned i = 0; i < s->s.k; i++) {
		struct loc_phase *ph = &s->s.phase[i];

		rc = md_calibrate(spec, ph->epsilon, ph->n, ph->batch, ph->steps, &ph->z, &acc, e);
		if (rc != ERR_OK)
			return rc;
	}
#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	md_grid(nextafter(spec->epsilon, 0.0), nextafter(spec->delta, 0.0), &grid);
	rc = calibrate(joint_family, &s->s, spec->mode, nextafter(spec->epsilon, 0.0),
		       nextafter(spec->delta, 0.0), 1.0, 1e3, &grid, &s->joint, &report, e);
	if (rc != ERR_OK)
		return rc;
	for (unsigned i = 0; i < s->s.k; i++)
		s->s.phase[i].z *= s->joint;
	*ret_accountant = report.accountant;
	return ERR_OK;
}

/* Noise of every phase at its (final) z_i. */
static enum err_code
loc_noise(const struct run_spec *spec, struct loc_setup *s, struct err *e)
{
	for (unsigned i = 0; i < s->s.k; i++) {
		const struct loc_phase *ph = &s->s.phase[i];
		enum err_code rc;

		if (!is_finite_pos(ph->z))
			return err_set(e, ERR_INTERNAL, "a noise multiplier is not usable");
		s->sens[i] = 2.0 * s->g.clip / (double)ph->batch;
		rc = onepass_lattice(s->sens[i], spec->dim, &s->lattice_k[i], &s->sens_lat[i], e);
		if (rc != ERR_OK)
			return rc;
		s->sigma[i] = ph->z * s->sens_lat[i];
		if (!is_finite_pos(s->sigma[i]))
			return err_set(e, ERR_NUMERIC, "the noise is not a finite positive number");
	}
	return ERR_OK;
}

static enum err_code
loc_fill_plan(const struct run_spec *spec, const struct loc_setup *s, struct run_plan *ret,
	      struct err *e)
{
	const struct loc_phase *p1 = &s->s.phase[0];
	enum err_code rc;

	onepass_plan_start(ret, spec, s->steps, p1->batch);
	rc = loc_event(&s->s, 1.0, &ret->event, e);
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "phases", (double)s->s.k);
	run_plan_use(ret, "stages", (double)s->s.stages);
	run_plan_use(ret, "records_used", (double)s->n_used);
	run_plan_use(ret, "sampling_rate", (double)p1->batch / (double)p1->n);
	run_plan_use(ret, "grad_bound", s->g.grad_bound);
	run_plan_use(ret, "clip", s->g.clip);
	run_plan_use(ret, "lipschitz", s->g.lip);
	run_plan_use(ret, "mirror_p", s->s.p);
	run_plan_use(ret, "mirror_c", s->s.c);
	run_plan_use(ret, "eta", s->s.eta);
	run_plan_use(ret, "radius", p1->radius);
	run_plan_use(ret, "joint_noise_scale", s->joint);
	onepass_plan_use_noise(ret, s->sens[0], s->sens_lat[0], s->lattice_k[0], p1->z, s->sigma[0],
			       1.0 / p1->lambda);
	return ERR_OK;
}

static enum err_code
loc_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct loc_setup s;
	struct run_plan p;
	const char *accountant = NULL;
	enum err_code rc;

	rc = loc_bounds(spec, &s, e);
	if (rc == ERR_OK)
		rc = loc_calibrate(spec, &s, &accountant, e);
	if (rc == ERR_OK)
		rc = loc_noise(spec, &s, e);
	if (rc == ERR_OK)
		rc = loc_fill_plan(spec, &s, &p, e);
	if (rc == ERR_OK) {
		p.accountant = accountant;
		*ret_plan = p;
	}
	return rc;
}

static double
loc_work(const struct run_spec *spec, const struct run_plan *plan)
{
	struct loc_setup s;
	double w = (double)spec->n;

	if (loc_bounds(spec, &s, NULL) != ERR_OK)
		return w + (double)plan->steps * (double)spec->dim;
	for (unsigned i = 0; i < s.s.k; i++)
		w += (double)s.s.phase[i].steps * ((double)s.s.phase[i].batch + LOC_WORK_OPS) *
		     (double)spec->dim;
	return w;
}

/* The z_i of a plan's event (parallel over the phases; each part's
 * Gaussian leaf under self_composed [and sampled]); false when the event
 * has another shape. */
static bool
loc_event_z(const struct run_plan *plan, struct loc_schedule *sch)
{
	const struct dp_event_tree *t = &plan->event;

	if (t->n_nodes == 0 || t->node[0].type != DP_EVENT_PARALLEL ||
	    t->node[0].n_children != sch->k)
		return false;
	for (unsigned i = 0; i < sch->k; i++) {
		unsigned j = t->node[0].first_child + i, hops = 0;

		while (j < t->n_nodes && t->node[j].type != DP_EVENT_GAUSSIAN && hops++ < 4)
			j = t->node[j].first_child;
		if (j >= t->n_nodes || t->node[j].type != DP_EVENT_GAUSSIAN)
			return false;
		sch->phase[i].z = t->node[j].noise_multiplier;
	}
	return true;
}

static enum err_code
loc_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	 const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct loc_state *s = state;
	struct loc_setup su;
	struct run_plan mine;
	size_t n = ds->n, off = 0;
	bool derived;
	enum err_code rc;

	/* Spend exactly what was charged: the schedule again, with the
	 * plan's own noise multipliers (no second calibration). */
	rc = loc_bounds(spec, &su, e);
	if (rc != ERR_OK)
		return rc;
	su.joint = run_plan_value(plan, "joint_noise_scale");
	derived = loc_event_z(plan, &su.s) && loc_noise(spec, &su, NULL) == ERR_OK &&
		  loc_fill_plan(spec, &su, &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;

	s->obj = &spec->objective;
	s->ds = ds;
	s->rng = rng;
	s->set = md_outer(&spec->x);
	s->sch = su.s;
	s->dim = spec->dim;
	s->n = n;
	s->steps = su.steps;
	s->clip = su.g.clip;
	for (unsigned i = 0; i < su.s.k; i++) {
		s->off[i] = off;
		off += su.s.phase[i].n;
		s->lattice_k[i] = su.lattice_k[i];
	}
	s->perm = calloc(n, sizeof(*s->perm));
	s->a = calloc(s->dim, sizeof(*s->a));
	s->x = calloc(s->dim, sizeof(*s->x));
	s->avg = calloc(s->dim, sizeof(*s->avg));
	s->g = calloc(s->dim, sizeof(*s->g));
	s->theta = calloc(s->dim, sizeof(*s->theta));
	if (s->perm == NULL || s->a == NULL || s->x == NULL || s->avg == NULL || s->g == NULL ||
	    s->theta == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the mirror_descent.localized state");
	/* The secret order: its first sum n_i entries are the chunks. */
	onepass_order(rng, s->perm, n, su.n_used);
	md_centre(&spec->x, s->dim, s->a);
	memcpy(s->x, s->a, s->dim * sizeof(*s->x));
	s->map = (struct mirror_pnorm){ .d = s->dim, .p = su.s.p, .c = su.s.c, .a = s->a };
#ifdef DPOPT_TESTING
	s->hook = spec->testing_hook;
#endif
	for (unsigned i = 0; i < su.s.k; i++) {
		double sigma = su.sigma[i];

#ifdef DPOPT_TESTING
		rc = onepass_testing_sigma(s->hook, n, &sigma, e);
		if (rc != ERR_OK)
			return rc;
#endif
		rc = noise_dgauss_prepare_real(ldexp(sigma, su.lattice_k[i]), &s->noise[i], e);
		if (rc != ERR_OK)
			return rc;
	}
	return ERR_OK;
}

#ifdef DPOPT_TESTING
/* Audits: at the run's first step only, the canary is put into phase 1's
 * first batch (slot 0 when the draw left it out), after the draw. */
static void
testing_place(struct loc_state *s, size_t *batch, size_t b)
{
	if (s->hook == NULL || !s->hook->place_first || s->done != 0)
		return;
	for (size_t i = 0; i < s->n; i++) {
		if (s->perm[i] == s->hook->first_record) {
			if (s->perm + i >= batch && s->perm + i < batch + b)
				return;
			s->perm[i] = batch[0];
			batch[0] = s->hook->first_record;
			return;
		}
	}
}
#endif

static enum err_code
loc_step(void *state, struct err *e)
{
	struct loc_state *s = state;
	const size_t d = s->dim;
	const struct loc_phase *ph;
	size_t *chunk;
	double t, w, gamma;

	if (s->done >= s->steps || s->phase >= s->sch.k)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	ph = &s->sch.phase[s->phase];
	chunk = s->perm + s->off[s->phase];
	if (ph->batch < ph->n)
		onepass_order_partial(s->rng, chunk, ph->n, ph->batch);
#ifdef DPOPT_TESTING
	testing_place(s, chunk, ph->batch);
#endif
	/* x_t enters the phase's k-weighted average (weights t / sum). */
	t = (double)(s->t + 1);
	w = 2.0 / (t + 1.0);
	for (size_t j = 0; j < d; j++)
		s->avg[j] += w * (s->x[j] - s->avg[j]);
	memset(s->g, 0, d * sizeof(*s->g));
	objective_batch_grad(s->obj, s->ds, chunk, ph->batch, s->x, s->clip, s->g);
	if (onepass_noisy_mean(s->rng, &s->noise[s->phase], s->lattice_k[s->phase], s->g, d,
			       ph->batch, e) != ERR_OK)
		return err_failed(e);
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL)
		s->hook->release(s->hook->ctx, s->done, s->g, d);
#endif
	/* Post-processing from here on: the exact regularizers' gradients
	 * (lambda_i grad h_i(x_t) enters as the coefficient 1 - gamma_t
	 * lambda_i = (t - 1) / (t + 1) of grad h_i(x_t) in theta). */
	objective_reg_grad(s->obj, s->x, 1.0, s->g);
	gamma = 2.0 / (ph->lambda * (t + 1.0));
	if (md_step(&s->map, &s->set, ph->radius, (t - 1.0) / (t + 1.0), gamma, s->g, s->theta,
		    s->x, e) != ERR_OK)
		return err_failed(e);
	s->t++;
	s->done++;
	if (s->t == ph->steps) {
		/* x_i: the phase's average, the next centre and start. */
		memcpy(s->a, s->avg, d * sizeof(*s->a));
		memcpy(s->x, s->avg, d * sizeof(*s->x));
		memset(s->avg, 0, d * sizeof(*s->avg));
		s->phase++;
		s->t = 0;
	}
	return ERR_OK;
}

static void
loc_result(const void *state, double *ret_x)
{
	const struct loc_state *s = state;

	/* After the last step: the last phase's output, now the centre. */
	memcpy(ret_x, s->a, s->dim * sizeof(*ret_x));
}

static void
loc_fini(void *state)
{
	struct loc_state *s = state;

	free(s->perm);
	free(s->a);
	free(s->x);
	free(s->avg);
	free(s->g);
	free(s->theta);
	s->perm = NULL;
	s->a = s->x = s->avg = s->g = s->theta = NULL;
}

const struct alg_ops alg_md_localized = {
	.name = "mirror_descent.localized",
	.version = 2, /* 2: max_phase_steps defaults to the work cap */
	.doc = "Localized noisy mirror descent for private stochastic convex optimization in l1 "
	       "geometry (l1 ball, simplex; lp and l2 balls with the ball's own p): a secret "
	       "order cut into disjoint chunks of n/2, n/4, ... records; phase i runs noisy "
	       "mirror descent with the p-norm map centred at the previous phase's output on "
	       "its chunk only, for the loss plus a data-independent p-norm regularizer, over "
	       "the set intersected with a shrinking p-norm ball, with strongly convex step "
	       "sizes and a k-weighted average, batches of b_i distinct records drawn afresh "
	       "each step.  Charged parallel over the phases of self_composed(sampled_without_"
	       "replacement(n_i, b_i, gaussian(z_i)), T_i), replace-one, phase i calibrated to "
	       "2^(1-i) epsilon (or epsilon each with equal_phase_budget).  Schedule from "
	       "public inputs (docs/algorithms/l1-mirror-descent.md).",
	.paper = "H. Asi, V. Feldman, T. Koren, K. Talwar, Private stochastic convex "
		 "optimization: optimal rates in l1 geometry, ICML 2021 (Algorithms 2 and 6); "
		 "accounting: Y.-X. Wang, B. Balle, S. Kasiviswanathan, Subsampled Renyi "
		 "differential privacy, AISTATS 2019",
	.privacy_model = "(epsilon, delta)-DP, replace-one",
	.objectives = loc_objectives,
	.constraints = (1u << CONSTRAINT_L1_BALL) | (1u << CONSTRAINT_LP_BALL) |
		       (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_L2_BALL),
	.params = loc_params,
	.state_size = sizeof(struct loc_state),
	.plan = loc_plan,
	.work = loc_work,
	.init = loc_init,
	.step = loc_step,
	.result = loc_result,
	.fini = loc_fini,
};
