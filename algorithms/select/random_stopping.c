/*
 * select/random_stopping.c - "select.random_stopping": private
 * hyperparameter selection for dp_sgd.subsampled with a random number of
 * repetitions (N. Papernot, T. Steinke, "Hyperparameter tuning with Renyi
 * differential privacy", ICLR 2022), charged as one event.
 *
 * The run.  The rows are split once, by a secret uniform permutation, into
 * a training part (n_t rows) and a validation part (n_v = round(f n),
 * params.validation_fraction f).  One repetition Q is:
 *	pick a candidate j uniformly from the public grid of pairs (C, eta):
 *	    clip norms C0 f^(k / (G_c - 1)), k = 0 .. G_c - 1 (C0 the base's
 *	    default clip, f = params.clip_min_fraction), times step sizes
 *	    eta_1 < ... < eta_G (log-spaced over [step_size_min,
 *	    step_size_max]) or, with one step size and no range given, the
 *	    base's own default step at each clip,
 *	train dp_sgd.subsampled on the training part with (C_j, eta_j) and
 *	    the run's noise multiplier z (its batch size, epochs, momentum and
 *	    averaging from this run's params, or its own defaults),
 *	score the model on the validation part: s = the number of rows
 *	    classified right (classification; replace-one sensitivity 1) or
 *	    -sum_i min(loss_i, B) (regression; sensitivity B, the smaller of
 *	    the loss bound the objective declares on the feasible set and the
 *	    loss of a prediction 2Y off, phi(0, 2Y)), plus discrete Gaussian
 *	    noise of multiplier z_s on a lattice (noise.h).
 * K is drawn secretly: Poisson(mu) conditioned on K >= 1, or geometric
 * with mean m (the truncated negative binomial with eta = 1, gamma = 1/m).
 * The run performs k_max repetitions, always (fixed public work: K must
 * not show in the step count, the progress or the wall time), and releases
 * the model of the best-scoring repetition among the first min(K, k_max)
 * (ties broken uniformly).  Nothing else: not K, not the scores, not which
 * candidate won.
 *
 * Privacy (replace-one).  One record is in one part only (the split does
 * not depend on the data), so Q is parallel(training, score):
 *	Q = parallel(self_composed(sampled_without_replacement(n_t, b,
 *	             gaussian(z)), T), gaussian(z_s)),
 * its cost the worse of the two at every order (the training part without
 * the sampling node when b = n_t: whole-data steps).  The choice of j is
 * public randomness inside Q and every candidate has the same event
 * (neither C nor eta changes it: the noise is z times the candidate's
 * sensitivity 2C/b).  The run is
 *	selection_poisson{mu, k_max}(Q)   or   selection_tnb{1, 1/m, k_max}(Q),
 * bounded by Papernot & Steinke's Theorem 6 / Theorem 2 and the cap's term
 * (privacy/selection.h, docs/privacy-model.md §3).  z is calibrated on that
 * event to the run's target; z_s = z / (min(2 q, 1) sqrt(T)), q = b / n_t,
 * puts the score's Renyi cost near the training's (the subsampled Gaussian
 * costs about 2 q^2 T alpha / z^2 at small q, T alpha / (2 z^2) unsampled
 * at q = 1, the score alpha / (2 z_s^2)).
 * The distribution, when params.distribution is 0, is the one that
 * calibrates to the smaller z (public inputs only).
 *
 * Allocation.  init() allocates everything except the base method's own
 * state, which dp_sgd.subsampled's init() allocates at the first step of
 * each repetition and its fini() releases at the last: k_max times a run,
 * never inside a step's pass over records.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "gauss_onepass.h"
#include "privacy/calibrate.h"
#include "privacy/noise.h"
#include "privacy/selection.h"
#include "sgd/subsampled.h"

enum {
	P_MEAN,
	P_DISTRIBUTION,
	P_VALIDATION,
	P_STEP_MIN,
	P_STEP_MAX,
	P_GRID,
	P_BATCH_SIZE,
	P_EPOCHS,
	P_MOMENTUM,
	P_AVERAGE,
	P_CLIP_GRID,
	P_CLIP_MIN,
	P__COUNT
};

/* dp_sgd.subsampled's parameter order (sgd/subsampled.c). */
enum { B_BATCH_SIZE, B_EPOCHS, B_STEPS, B_STEP_SIZE, B_MOMENTUM, B_AVERAGE, B_SHUFFLE, B_CLIP };

#define RS_DEFAULT_MEAN   5.0
#define RS_DEFAULT_GRID   1.0
#define RS_MAX_CLIP_GRID  16
#define RS_DEFAULT_SPREAD 8.0  /* auto grid: [eta0 / 8, 8 eta0] */
#define RS_CAP_TARGET     1e-6 /* the cap's ratios r1, r2 */
#define RS_MAX_GRID       64
#define RS_CAL_MAX_ORDER  64.0

enum rs_dist { RS_AUTO, RS_POISSON, RS_GEOMETRIC };

static const struct alg_param rs_params[P__COUNT + 1] = {
	[P_MEAN] = { "mean_repetitions", ALG_PARAM_REAL, 0.0, 1000.0, 0.0,
		     "mean number of repetitions (Poisson mu, or the geometric mean 1/gamma); "
		     "0 = auto: 5",
		     NULL },
	[P_DISTRIBUTION] = { "distribution", ALG_PARAM_INT, 0.0, 2.0, 0.0,
			     "repetitions K: 1 = Poisson (conditioned on K >= 1), 2 = geometric "
			     "(truncated negative binomial, eta = 1); 0 = auto: the one that "
			     "needs less noise",
			     NULL },
	[P_VALIDATION] = { "validation_fraction", ALG_PARAM_REAL, 0.01, 0.5, 0.2,
			   "share of the rows held out (secretly, at random) to score "
			   "candidates",
			   NULL },
	[P_STEP_MIN] = { "step_size_min", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			 "smallest candidate step size; 0 = auto: with grid_size 1, "
			 "dp_sgd.subsampled's own default at each candidate's clip; else eta0 / "
			 "8, eta0 its default step size at this run's noise and default clip",
			 NULL },
	[P_STEP_MAX] = { "step_size_max", ALG_PARAM_REAL, 0.0, 1e6, 0.0,
			 "largest candidate step size; 0 = auto: 8 eta0 (grid_size > 1)", NULL },
	[P_GRID] = { "grid_size", ALG_PARAM_INT, 1.0, RS_MAX_GRID, RS_DEFAULT_GRID,
		     "number of candidate step sizes, log-spaced from step_size_min to "
		     "step_size_max",
		     NULL },
	[P_CLIP_GRID] = { "clip_grid_size", ALG_PARAM_INT, 1.0, RS_MAX_CLIP_GRID, 4.0,
			  "number of candidate clip norms, log-spaced from dp_sgd.subsampled's "
			  "default clip C0 down to clip_min_fraction C0; the candidates are "
			  "every (step size, clip) pair",
			  NULL },
	[P_CLIP_MIN] = { "clip_min_fraction", ALG_PARAM_REAL, 1e-3, 1.0, 0.125,
			 "smallest candidate clip as a fraction of the default clip C0", NULL },
	[P_BATCH_SIZE] = { "batch_size", ALG_PARAM_INT, 0.0, 1e7, 0.0,
			   "dp_sgd.subsampled's batch_size for every candidate; 0 = its "
			   "default on the training part",
			   NULL },
	[P_EPOCHS] = { "epochs", ALG_PARAM_REAL, 0.0, 1e4, 0.0,
		       "dp_sgd.subsampled's epochs for every candidate; 0 = its default rule "
		       "(whole-data steps on small data)",
		       NULL },
	[P_MOMENTUM] = { "momentum", ALG_PARAM_REAL, 0.0, 0.99, 0.0,
			 "dp_sgd.subsampled's momentum for every candidate", NULL },
	[P_AVERAGE] = { "average", ALG_PARAM_BOOL, 0.0, 1.0, 1.0,
			"dp_sgd.subsampled's average for every candidate", NULL },
	[P__COUNT] = { 0 },
};

static const char *const rs_objectives[] = { "logistic", "least_squares",       "hinge",
					     "huber",    "multiclass_logistic", NULL };

extern const struct alg_ops alg_sgd_subsampled;

/* Everything derived from the public spec at a given z and distribution. */
struct rs_setup {
	struct run_spec base; /* dp_sgd.subsampled's spec on the training part */
	size_t n_train, n_val;
	size_t batch;             /* b */
	unsigned long base_steps; /* T */
	enum rs_dist dist;
	double mean; /* mu, or 1/gamma */
	uint64_t k_max;
	double z, z_score;
	double score_sens; /* 1 (classification) or B */
	double score_sens_lattice;
	int score_k;
	bool classify;
	unsigned grid;      /* step sizes */
	unsigned clip_grid; /* clip norms */
	bool step_auto;     /* one step size: the base's own default at each clip */
	double step_min, step_max;
	double clip0, clip_min_fraction;
	/* params.grid: the candidates are its combinations instead. */
	bool use_grid;
	double base_params[ALG_MAX_PARAMS]; /* the base's params under every candidate */
	unsigned n_cand;
	unsigned long cand_steps[ALG_GRID_MAX_CANDIDATES]; /* T of each candidate */
	double cand_zfac[ALG_GRID_MAX_CANDIDATES];         /* its z is z cand_zfac */
	double cost_ref; /* the costliest candidate's rs_cost (the score's rule) */
	unsigned n_rep;  /* candidates with distinct events: rep[0 .. n_rep) */
	unsigned rep[ALG_GRID_MAX_CANDIDATES];
};

struct rs_state {
	struct rs_setup su;
	const struct dataset *ds; /* borrowed */
	struct rng *rng;          /* borrowed */
	struct dataset_copy train, val;
	struct run_plan *plans; /* owned: one per candidate */
	double *cdf;            /* owned: k_max */
	double *cur, *best;     /* owned: dim each */
	void *base_state;       /* owned: alg_sgd_subsampled.state_size */
	bool base_live;
	struct dgauss_params score_noise;
	uint64_t k, rep, ties;
	unsigned long t;         /* step within the repetition: 0 .. T (T scores) */
	unsigned long cur_steps; /* the drawn candidate's T (<= T, the longest) */
	double best_score;
	bool have_best;
	size_t dim;
};

/* Candidate j of params.grid as base's params: s's base params with j in
 * mixed radix over the grid's dimensions, the first fastest. */
static void
rs_grid_params(const struct rs_setup *s, unsigned j, struct run_spec *base)
{
	const struct alg_grid *g = &s->base.grid;

	memcpy(base->params, s->base_params, sizeof(base->params));
	for (unsigned k = 0; k < g->n_dims; k++) {
		base->params[g->dim[k].param] = g->dim[k].value[j % g->dim[k].n];
		j /= g->dim[k].n;
	}
}

/*
 * About the Renyi cost of T steps at sampling rate q, per unit alpha / z^2:
 * 2 q^2 T for a sampled Gaussian at small q, T / 2 for whole-data steps.
 * Only a rule for spreading noise (the score's multiplier, the grid's
 * per-candidate z): the event carries the exact bound whatever it gives.
 */
static double
rs_cost(double q, unsigned long t)
{
	return fmin(2.0 * q * q, 0.5) * (double)t;
}

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

/*
 * params.grid: every candidate's plan at z = 1 (a candidate the base
 * method refuses is refused naming params.grid), its T, the largest T and
 * its batch (the repetition's length and the score's noise rule), and one
 * representative per distinct event (events equal at one z are equal at
 * every z: z is only a leaf's parameter).
 */
static enum err_code
rs_grid_bounds(const struct run_spec *spec, struct rs_setup *s, struct err *e)
{
	struct dp_event_tree *ev = NULL;
	struct run_plan p;
	struct err be = { 0 };
	enum err_code rc = ERR_OK;
	size_t total = 1;
	double cost[ALG_GRID_MAX_CANDIDATES];

	if (spec->params[P_STEP_MIN] != 0.0 || s->grid != 1)
		return err_set_field(
			e, ERR_INVALID, "params.grid",
			"with 'params.grid', give step sizes in it (as step_size), not "
			"in 'params.step_size_min' or 'params.grid_size'");
	for (unsigned k = 0; k < spec->grid.n_dims; k++)
		total *= spec->grid.dim[k].n;
	if (total < 1 || total > ALG_GRID_MAX_CANDIDATES)
		return err_set_field(e, ERR_INVALID, "params.grid",
				     "'params.grid' has %zu candidates", total);
	s->use_grid = true;
	s->n_cand = (unsigned)total;
	s->n_rep = 0;
	s->base_steps = 0;
	memcpy(s->base_params, s->base.params, sizeof(s->base_params));
	ev = malloc(s->n_cand * sizeof(*ev));
	if (ev == NULL)
		return err_set(e, ERR_NOMEM, "out of memory");
	for (unsigned j = 0; j < s->n_cand && rc == ERR_OK; j++) {
		bool seen = false;

		rs_grid_params(s, j, &s->base);
		if (subsampled_plan_at(&s->base, 1.0, &p, &be) != ERR_OK) {
			rc = err_set_field(e, ERR_INVALID, "params.grid",
					   "candidate %u of 'params.grid' is refused: %s (%s)", j,
					   be.msg, be.field[0] != '\0' ? be.field : "-");
			break;
		}
		s->cand_steps[j] = p.steps;
		cost[j] = rs_cost(run_plan_value(&p, "batch_size") / (double)s->n_train, p.steps);
		if (p.steps > s->base_steps) {
			s->base_steps = p.steps;
			s->batch = (size_t)run_plan_value(&p, "batch_size");
		}
		for (unsigned r = 0; r < s->n_rep && !seen; r++)
			seen = dp_event_equal(&ev[r], &p.event);
		if (!seen) {
			ev[s->n_rep] = p.event;
			s->rep[s->n_rep++] = j;
		}
	}
	free(ev);
	memcpy(s->base.params, s->base_params, sizeof(s->base.params));
	/* Per-candidate noise: z_j = z sqrt(cost_j / cost_max), so that a
	 * shorter (or more sampled) candidate is not charged the longest one's
	 * noise; for whole-data candidates every curve is then the same. */
	if (rc != ERR_OK)
		return rc;
	s->cost_ref = 0.0;
	for (unsigned j = 0; j < s->n_cand; j++)
		s->cost_ref = fmax(s->cost_ref, cost[j]);
	for (unsigned j = 0; j < s->n_cand; j++)
		s->cand_zfac[j] = sqrt(cost[j] / s->cost_ref);
	return ERR_OK;
}

/* The split, the base spec, b and T: public, before any noise. */
static enum err_code
rs_bounds(const struct run_spec *spec, struct rs_setup *s, struct err *e)
{
	struct run_plan p;
	enum err_code rc;
	double nv = round(spec->params[P_VALIDATION] * (double)spec->n);

	memset(s, 0, sizeof(*s));
	s->n_val = (size_t)fmax(1.0, nv);
	if (spec->n < 4 || s->n_val + 2 > spec->n)
		return err_set_field(e, ERR_INVALID, "params.validation_fraction",
				     "the dataset's %zu rows leave no training part beside %zu "
				     "validation rows",
				     spec->n, s->n_val);
	s->n_train = spec->n - s->n_val;
	s->base = *spec;
	s->base.n = s->n_train;
	for (size_t i = 0; i < ALG_MAX_PARAMS; i++)
		s->base.params[i] = 0.0;
	s->base.params[B_BATCH_SIZE] = spec->params[P_BATCH_SIZE];
	s->base.params[B_EPOCHS] = spec->params[P_EPOCHS];
	s->base.params[B_MOMENTUM] = spec->params[P_MOMENTUM];
	s->base.params[B_AVERAGE] = spec->params[P_AVERAGE];
#ifdef DPOPT_TESTING
	s->base.testing_hook = NULL;
#endif
	if (spec->params[P_BATCH_SIZE] > (double)s->n_train)
		return err_set_field(
			e, ERR_INVALID, "params.batch_size",
			"'params.batch_size' (%.0f) exceeds the training part (%zu rows)",
			spec->params[P_BATCH_SIZE], s->n_train);
	/* b and T do not depend on z in sampling mode: read them off a plan. */
	if ((rc = subsampled_plan_at(&s->base, 1.0, &p, e)) != ERR_OK)
		return rc;
	s->batch = (size_t)run_plan_value(&p, "batch_size");
	s->base_steps = p.steps;
	s->cost_ref = rs_cost((double)s->batch / (double)s->n_train, s->base_steps);
	s->clip0 = run_plan_value(&p, "clip");
	if (!is_finite_pos(s->clip0))
		return err_set(e, ERR_NUMERIC, "the default clip is not finite and positive");
	s->classify = spec->schema.task != TASK_REGRESSION;
	if (s->classify) {
		s->score_sens = 1.0;
	} else {
		struct objective_constants oc;
		const struct objective *o = &spec->objective;

		if ((rc = objective_constants(o, &spec->schema, &spec->x, &oc, e)) != ERR_OK)
			return rc;
		/* Each row's loss is capped at the loss of a prediction 2Y off
		 * (phi(0, 2Y)): a candidate that bad on a row is bad enough, and
		 * the cap, not the loss bound over the whole set ((R X~ + Y)^2 / 2
		 * for least squares: 60 on the default ball with X = Y = 1, against
		 * 2), is the score's sensitivity. */
		s->score_sens = oc.value_bound;
		if (o->ops->phi != NULL && isfinite(spec->schema.bounds.label) &&
		    spec->schema.bounds.label > 0.0)
			s->score_sens =
				fmin(s->score_sens,
				     o->ops->phi(0.0, 2.0 * spec->schema.bounds.label, o->delta) *
					     oc.max_weight);
		if (!is_finite_pos(s->score_sens))
			return err_set_field(e, ERR_INVALID, "objective",
					     "the objective declares no finite loss bound on "
					     "'constraints.x' to score candidates with");
	}
	s->grid = (unsigned)spec->params[P_GRID];
	s->clip_grid = (unsigned)spec->params[P_CLIP_GRID];
	s->clip_min_fraction = spec->params[P_CLIP_MIN];
	if (s->clip_grid < 1)
		s->clip_grid = 1;
	s->step_auto = s->grid == 1 && spec->params[P_STEP_MIN] == 0.0;
	if ((spec->params[P_STEP_MIN] == 0.0) != (spec->params[P_STEP_MAX] == 0.0) ||
	    spec->params[P_STEP_MIN] > spec->params[P_STEP_MAX])
		return err_set_field(e, ERR_INVALID, "params.step_size_min",
				     "give both 'params.step_size_min' and 'params.step_size_max' "
				     "(min <= max), or neither");
	if (spec->grid.n_dims > 0)
		return rs_grid_bounds(spec, s, e);
	return ERR_OK;
}

static enum err_code
rs_dist_node(const struct rs_setup *s, enum rs_dist dist, struct dp_event *ret, struct err *e)
{
	struct selection_dist d;
	uint64_t k_max;
	enum err_code rc;

	memset(ret, 0, sizeof(*ret));
	if (dist == RS_POISSON) {
		ret->type = DP_EVENT_SELECTION_POISSON;
		ret->mu = s->mean;
	} else {
		if (!(s->mean > 1.0))
			return err_set_field(e, ERR_INVALID, "params.mean_repetitions",
					     "the geometric distribution needs a mean above 1");
		ret->type = DP_EVENT_SELECTION_TNB;
		ret->eta = 1.0;
		ret->gamma = 1.0 / s->mean;
	}
	if ((rc = selection_dist_from_event(ret, &d, e)) != ERR_OK ||
	    (rc = selection_cap_for(&d, RS_CAP_TARGET, "params.mean_repetitions", &k_max, e)) !=
		    ERR_OK)
		return rc;
	ret->k_max = k_max;
	return ERR_OK;
}

struct rs_family {
	const struct rs_setup *s;
	struct dp_event sel;
};

static double
score_multiplier(const struct rs_setup *s, double z)
{
	return z / sqrt(2.0 * s->cost_ref);
}

/* The training part of Q under params.grid at z: the representatives'
 * events (each the base method's own, from its plan at z), their mixture
 * when they differ (the candidate is drawn by public randomness:
 * docs/privacy-model.md §2). */
static enum err_code
rs_grid_training(const struct rs_setup *s, double z, struct dp_event_tree *ret, struct err *e)
{
	struct dp_event_tree *ev = malloc(s->n_rep * sizeof(*ev));
	const struct dp_event_tree **parts = malloc(s->n_rep * sizeof(*parts));
	struct run_spec *base = malloc(sizeof(*base));
	struct run_plan p;
	enum err_code rc = ERR_OK;

	if (ev == NULL || parts == NULL || base == NULL) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	*base = s->base;
	for (unsigned r = 0; r < s->n_rep && rc == ERR_OK; r++) {
		rs_grid_params(s, s->rep[r], base);
		rc = subsampled_plan_at(base, z * s->cand_zfac[s->rep[r]], &p, e);
		ev[r] = p.event;
		parts[r] = &ev[r];
	}
	if (rc == ERR_OK && s->n_rep == 1)
		*ret = ev[0];
	else if (rc == ERR_OK &&
		 dp_event_join(ret, DP_EVENT_MIXTURE, parts, s->n_rep, NULL) != ERR_OK)
		rc = err_set_field(
			e, ERR_INVALID, "params.grid",
			"the %u distinct privacy events of the grid's candidates do not fit "
			"one event (at most %d nodes); use fewer distinct batch sizes or "
			"step counts",
			s->n_rep, DP_EVENT_MAX_NODES);
out:
	free(ev);
	free(parts);
	free(base);
	return rc;
}

/* selection(parallel(training(z), gaussian(z_s(z)))). */
static enum err_code
rs_family(double z, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	const struct rs_family *f = ctx;
	struct dp_event sample = { .type = DP_EVENT_SAMPLED_WOR,
				   .n = f->s->n_train,
				   .batch = f->s->batch };
	struct dp_event self = { .type = DP_EVENT_SELF_COMPOSED, .count = f->s->base_steps };
	struct dp_event_tree train, score;
	const struct dp_event_tree *parts[2] = { &train, &score };
	enum err_code rc;

	dp_event_gaussian(&score, DP_REPLACE_ONE, score_multiplier(f->s, z));
	if (f->s->use_grid) {
		if ((rc = rs_grid_training(f->s, z, &train, e)) != ERR_OK ||
		    (rc = dp_event_join(ret, DP_EVENT_PARALLEL, parts, 2, e)) != ERR_OK)
			return rc;
		return dp_event_wrap(ret, &f->sel, e);
	}
	dp_event_gaussian(&train, DP_REPLACE_ONE, z);
	/* As dp_sgd.subsampled's event: whole-data steps sample nothing. */
	if ((f->s->batch != f->s->n_train && (rc = dp_event_wrap(&train, &sample, e)) != ERR_OK) ||
	    (rc = dp_event_wrap(&train, &self, e)) != ERR_OK ||
	    (rc = dp_event_join(ret, DP_EVENT_PARALLEL, parts, 2, e)) != ERR_OK)
		return rc;
	return dp_event_wrap(ret, &f->sel, e);
}

/* The one calibration of a run (plan() only), as dp_sgd.subsampled's:
 * one ulp below both targets, on its order-limited grid. */
static enum err_code
rs_calibrate(const struct run_spec *spec, const struct rs_family *f, double *ret_z,
	     const char **ret_accountant, struct err *e)
{
	enum err_code rc;
	double eps_cal = nextafter(spec->epsilon, 0.0), delta_cal = nextafter(spec->delta, 0.0);
	double top = fmax(RS_CAL_MAX_ORDER, 4.0 * log(1.0 / delta_cal) / eps_cal);
	struct rdp_grid grid;
	struct accountant_report report;
	unsigned k = 0;

#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	rdp_grid_default(&grid);
	for (unsigned i = 0; i < grid.n; i++)
		if (grid.order[i] <= top)
			grid.order[k++] = grid.order[i];
	grid.n = k;
	rc = calibrate(rs_family, (void *)f, spec->mode, eps_cal, delta_cal, 1e-2, 1e7, &grid,
		       ret_z, &report, e);
	if (rc == ERR_OK)
		*ret_accountant = report.accountant;
	return rc;
}

/* The schedule at z under dist: the score's noise and the grid. */
static enum err_code
rs_schedule(const struct run_spec *spec, double z, struct rs_setup *s, struct err *e)
{
	struct run_plan p;
	double eta0;
	enum err_code rc;

	if (!is_finite_pos(z))
		return err_set(e, ERR_INTERNAL, "the noise multiplier is not finite and positive");
	s->z = z;
	s->z_score = score_multiplier(s, z);
	if ((rc = onepass_lattice(s->score_sens, 1, &s->score_k, &s->score_sens_lattice, e)) !=
	    ERR_OK)
		return rc;
	if (spec->params[P_STEP_MIN] != 0.0) {
		s->step_min = spec->params[P_STEP_MIN];
		s->step_max = spec->params[P_STEP_MAX];
		return ERR_OK;
	}
	if ((rc = subsampled_plan_at(&s->base, z, &p, e)) != ERR_OK)
		return rc;
	eta0 = run_plan_value(&p, "step_size");
	if (!is_finite_pos(eta0))
		return err_set(e, ERR_NUMERIC, "the default step size is not finite and positive");
	s->step_min = eta0 / RS_DEFAULT_SPREAD;
	s->step_max = eta0 * RS_DEFAULT_SPREAD;
	return ERR_OK;
}

static unsigned
rs_candidates(const struct rs_setup *s)
{
	return s->use_grid ? s->n_cand : s->grid * s->clip_grid;
}

/* Candidate j's step size and clip into the base spec: j = (step index)
 * + grid (clip index); clip index 0 is the default clip C0. */
static void
rs_candidate(struct rs_setup *s, unsigned j)
{
	unsigned js = j % s->grid, jc = j / s->grid;
	double step = 0.0, clip = s->clip0;

	if (s->use_grid) {
		rs_grid_params(s, j, &s->base);
		return;
	}
	if (!s->step_auto)
		step = s->grid == 1 ? sqrt(s->step_min * s->step_max)
				    : s->step_min * pow(s->step_max / s->step_min,
							(double)js / (double)(s->grid - 1));
	if (s->clip_grid > 1)
		clip = s->clip0 *
		       pow(s->clip_min_fraction, (double)jc / (double)(s->clip_grid - 1));
	s->base.params[B_STEP_SIZE] = step;
	s->base.params[B_CLIP] = clip;
}

static enum err_code
rs_fill_plan(const struct run_spec *spec, const struct rs_setup *s, const struct rs_family *f,
	     struct run_plan *ret, struct err *e)
{
	unsigned long steps = (unsigned long)s->k_max * (s->base_steps + 1);
	enum err_code rc;

	onepass_plan_start(ret, spec, steps, s->batch);
	if ((rc = rs_family(s->z, (void *)f, &ret->event, e)) != ERR_OK)
		return rc;
	run_plan_use(ret, "distribution", (double)s->dist);
	run_plan_use(ret, "mean_repetitions", s->mean);
	run_plan_use(ret, "repetitions_performed", (double)s->k_max);
	run_plan_use(ret, "steps_per_repetition", (double)s->base_steps);
	run_plan_use(ret, "training_rows", (double)s->n_train);
	run_plan_use(ret, "validation_rows", (double)s->n_val);
	run_plan_use(ret, "noise_multiplier", s->z);
	run_plan_use(ret, "score_noise_multiplier", s->z_score);
	run_plan_use(ret, "score_sensitivity", s->score_sens_lattice);
	if (!s->step_auto) {
		run_plan_use(ret, "step_size_min", s->step_min);
		run_plan_use(ret, "step_size_max", s->step_max);
	}
	if (!s->use_grid) {
		run_plan_use(ret, "grid_size", (double)s->grid);
		run_plan_use(ret, "clip_grid_size", (double)s->clip_grid);
		run_plan_use(ret, "clip_max", s->clip0);
		run_plan_use(ret, "clip_min",
			     s->clip_grid > 1 ? s->clip0 * s->clip_min_fraction : s->clip0);
	}
	run_plan_use(ret, "candidates", (double)rs_candidates(s));
	run_plan_use(ret, "candidate_events", s->use_grid ? (double)s->n_rep : 1.0);
	return ERR_OK;
}

/* Everything at z under dist, no calibration: plan() after it, init()
 * to check the stored plan. */
static enum err_code
rs_derive(const struct run_spec *spec, enum rs_dist dist, double z, struct rs_setup *s,
	  struct run_plan *ret, struct err *e)
{
	struct rs_family f = { .s = s };
	enum err_code rc;

	if ((rc = rs_bounds(spec, s, e)) != ERR_OK)
		return rc;
	s->dist = dist;
	s->mean = spec->params[P_MEAN] != 0.0 ? spec->params[P_MEAN] : RS_DEFAULT_MEAN;
	if ((rc = rs_dist_node(s, dist, &f.sel, e)) != ERR_OK)
		return rc;
	s->k_max = f.sel.k_max;
	if ((rc = rs_schedule(spec, z, s, e)) != ERR_OK)
		return rc;
	return rs_fill_plan(spec, s, &f, ret, e);
}

static enum err_code
rs_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	struct rs_setup s;
	struct rs_family f = { .s = &s };
	struct run_plan p;
	enum rs_dist want = (enum rs_dist)spec->params[P_DISTRIBUTION], best = RS_AUTO;
	double best_z = INFINITY;
	const char *best_accountant = NULL;
	struct err first = { 0 };
	enum err_code rc, first_rc = ERR_OK;

	if ((rc = rs_bounds(spec, &s, e)) != ERR_OK)
		return rc;
	s.mean = spec->params[P_MEAN] != 0.0 ? spec->params[P_MEAN] : RS_DEFAULT_MEAN;
	if (!(s.mean >= 1.0))
		return err_set_field(e, ERR_INVALID, "params.mean_repetitions",
				     "'params.mean_repetitions' must be at least 1");
	for (enum rs_dist d = RS_POISSON; d <= RS_GEOMETRIC; d++) {
		struct err ed;
		double z = 0.0;
		const char *accountant = NULL;

		if (want != RS_AUTO && d != want)
			continue;
		rc = rs_dist_node(&s, d, &f.sel, &ed);
		if (rc == ERR_OK)
			rc = rs_calibrate(spec, &f, &z, &accountant, &ed);
		if (rc != ERR_OK) {
			if (first_rc == ERR_OK) {
				first_rc = rc;
				first = ed;
			}
			continue;
		}
		if (z < best_z) {
			best_z = z;
			best = d;
			best_accountant = accountant;
		}
	}
	if (best == RS_AUTO) {
		if (e != NULL)
			*e = first;
		return first_rc;
	}
	if ((rc = rs_derive(spec, best, best_z, &s, &p, e)) != ERR_OK)
		return rc;
	p.accountant = best_accountant;
	*ret_plan = p;
	return ERR_OK;
}

static double
rs_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double k = run_plan_value(plan, "repetitions_performed");
	double t = run_plan_value(plan, "steps_per_repetition");
	double b = run_plan_value(plan, "batch_size");
	double nv = run_plan_value(plan, "validation_rows");

	if (!(isfinite(k) && isfinite(t) && isfinite(b) && isfinite(nv)))
		return (double)plan->steps * (double)spec->n * (double)spec->dim;
	return k * (t * (b + 1.0) + nv + 1.0) * (double)spec->dim + (double)spec->n;
}

static enum err_code
rs_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	const struct dataset *ds, struct rng *rng, struct err *e)
{
	struct rs_state *s = state;
	struct run_plan mine;
	double dist = run_plan_value(plan, "distribution");
	bool derived;
	size_t *idx;
	struct selection_dist sd;
	enum err_code rc;

	/* The spec's own refusals first (by field, as plan() gives them); then
	 * spend exactly what was charged: derive the plan again from its own
	 * z and distribution (no second calibration). */
	if ((rc = rs_bounds(spec, &s->su, e)) != ERR_OK)
		return rc;
	derived = (dist == RS_POISSON || dist == RS_GEOMETRIC) &&
		  rs_derive(spec, (enum rs_dist)dist, run_plan_value(plan, "noise_multiplier"),
			    &s->su, &mine, NULL) == ERR_OK;
	if ((rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e)) != ERR_OK)
		return rc;
	s->ds = ds;
	s->rng = rng;
	s->dim = spec->dim;
	idx = malloc(ds->n * sizeof(*idx));
	if (idx == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the select.random_stopping state");
	/* The split: a secret uniform permutation, the first n_v rows to
	 * validation. */
	onepass_order(rng, idx, ds->n, ds->n);
	rc = dataset_subset(ds, idx, s->su.n_val, &s->val, e);
	if (rc == ERR_OK)
		rc = dataset_subset(ds, idx + s->su.n_val, s->su.n_train, &s->train, e);
	free(idx);
	if (rc != ERR_OK)
		return rc;
	s->plans = calloc(rs_candidates(&s->su), sizeof(*s->plans));
	s->cdf = calloc(s->su.k_max, sizeof(*s->cdf));
	s->cur = calloc(s->dim, sizeof(*s->cur));
	s->best = calloc(s->dim, sizeof(*s->best));
	s->base_state = calloc(1, alg_sgd_subsampled.state_size);
	if (s->plans == NULL || s->cdf == NULL || s->cur == NULL || s->best == NULL ||
	    s->base_state == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the select.random_stopping state");
	for (unsigned j = 0; j < rs_candidates(&s->su); j++) {
		double zj = s->su.use_grid ? s->su.z * s->su.cand_zfac[j] : s->su.z;

		rs_candidate(&s->su, j);
		if ((rc = subsampled_plan_at(&s->su.base, zj, &s->plans[j], e)) != ERR_OK)
			return rc;
	}
	if ((rc = selection_dist_from_event(&plan->event.node[0], &sd, e)) != ERR_OK ||
	    (rc = selection_cdf(&sd, s->cdf, e)) != ERR_OK)
		return rc;
	s->k = selection_draw(s->cdf, s->su.k_max, rng);
	return noise_dgauss_prepare_real(
		ldexp(s->su.z_score * s->su.score_sens_lattice, s->su.score_k), &s->score_noise, e);
}

/* The validation score of s->cur, noisy (a release of Q). */
static enum err_code
rs_score(struct rs_state *s, double *ret, struct err *e)
{
	const struct objective *o = &s->su.base.objective;
	const struct dataset *v = &s->val.ds;
	double score = 0.0;

	if (s->su.classify) {
		score = round(objective_accuracy(o, v, s->cur) * (double)v->n);
	} else {
		for (size_t i = 0; i < v->n; i++) {
			double l = objective_value(o, v, i, s->cur);

			score -= isfinite(l) ? fmin(fmax(l, 0.0), s->su.score_sens)
					     : s->su.score_sens;
		}
	}
	if (!isfinite(score))
		score = s->su.classify ? 0.0 : -(double)v->n * s->su.score_sens;
	if (noise_lattice_gaussian_prepared(s->rng, &s->score_noise, s->su.score_k, &score, 1,
					    NULL) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	*ret = score;
	return ERR_OK;
}

/*
 * Keep the repetition's model when it is the best of the first K so far
 * (ties broken uniformly, by reservoir).  The same work whether the
 * repetition counts (rep < K) or not -- the tie draw whenever the scores
 * tie, one copy of dim doubles (to best, or onto itself) -- so K does not
 * show in the time a repetition takes.  Draws made past K change nothing
 * released: best is final by then.
 */
static void
rs_keep(struct rs_state *s, double score)
{
	bool counts = s->rep < s->k, tie = s->have_best && score == s->best_score;
	bool take = !s->have_best || score > s->best_score;

	if (tie) {
		uint64_t draw = rng_below(s->rng, s->ties + 2);

		take = draw == 0;
		if (counts)
			s->ties++;
	} else if (take && counts) {
		s->ties = 0;
	}
	take = take && counts;
	memmove(take ? s->best : s->cur, s->cur, s->dim * sizeof(*s->cur));
	if (take) {
		s->best_score = score;
		s->have_best = true;
	}
}

static enum err_code
rs_step(void *state, struct err *e)
{
	struct rs_state *s = state;
	const struct alg_ops *b = &alg_sgd_subsampled;
	enum err_code rc;

	if (s->rep >= s->su.k_max)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	if (s->t == 0) {
		unsigned j = (unsigned)rng_below(s->rng, rs_candidates(&s->su));

		rs_candidate(&s->su, j);
		s->cur_steps = s->su.use_grid ? s->su.cand_steps[j] : s->su.base_steps;
		memset(s->base_state, 0, b->state_size);
		s->base_live = true;
		rc = b->init(s->base_state, &s->su.base, &s->plans[j], &s->train.ds, s->rng, e);
		if (rc != ERR_OK)
			return rc;
	}
	/* Every repetition takes T_max + 1 steps (the public step count); a
	 * candidate with fewer steps idles through the rest (its T, like
	 * its draw, is independent of the data). */
	if (s->t < s->su.base_steps) {
		if (s->t < s->cur_steps && (rc = b->step(s->base_state, e)) != ERR_OK)
			return rc;
		s->t++;
		return ERR_OK;
	}
	/* The repetition's last step: its model, scored; kept when it is the
	 * best of the first K so far (ties: uniformly, by reservoir). */
	{
		double score = -INFINITY;

		b->result(s->base_state, s->cur);
		b->fini(s->base_state);
		s->base_live = false;
		if ((rc = rs_score(s, &score, e)) != ERR_OK)
			return rc;
		rs_keep(s, score);
	}
	s->t = 0;
	s->rep++;
	return ERR_OK;
}

static void
rs_result(const void *state, double *ret_x)
{
	const struct rs_state *s = state;

	memcpy(ret_x, s->best, s->dim * sizeof(*ret_x));
}

static void
rs_fini(void *state)
{
	struct rs_state *s = state;

	if (s->base_live && s->base_state != NULL)
		alg_sgd_subsampled.fini(s->base_state);
	s->base_live = false;
	dataset_copy_free(&s->train);
	dataset_copy_free(&s->val);
	free(s->plans);
	free(s->cdf);
	free(s->cur);
	free(s->best);
	free(s->base_state);
	s->plans = NULL;
	s->cdf = s->cur = s->best = NULL;
	s->base_state = NULL;
}

const struct alg_ops alg_select_random_stopping = {
	.name = "select.random_stopping",
	.version = 2, /* 2: the clip grid, the regression score's cap, z_s at q = 1 */
	.doc = "Private clip and step-size selection for dp_sgd.subsampled: a secret random split "
	       "into training and validation rows; each repetition trains dp_sgd.subsampled with "
	       "a candidate drawn from a public grid (by default clip norms; params.grid: any of "
	       "its parameters, candidates with different events charged as their mixture) and "
	       "scores the model on the validation rows with Gaussian noise; the number of "
	       "repetitions K is secret "
	       "(Poisson or geometric), k_max repetitions are always performed, and only the "
	       "best model of the first min(K, k_max) is released.  Charged as one event, "
	       "selection(parallel(training, score)), bounded by Papernot & Steinke's Renyi "
	       "theorems plus the cap's term (docs/privacy-model.md §3).",
	.paper = "N. Papernot, T. Steinke, Hyperparameter tuning with Renyi differential privacy, "
		 "ICLR 2022 (Theorems 2 and 6); base method dp_sgd.subsampled",
	.privacy_model = "(epsilon, delta)-DP, replace-one",
	.objectives = rs_objectives,
	.constraints = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		       (1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_SIMPLEX) |
		       (1u << CONSTRAINT_BOX),
	.params = rs_params,
	.state_size = sizeof(struct rs_state),
	.plan = rs_plan,
	.work = rs_work,
	.init = rs_init,
	.step = rs_step,
	.result = rs_result,
	.fini = rs_fini,
	.defaults_from_bounds = true,
	.grid_base = &alg_sgd_subsampled,
};
