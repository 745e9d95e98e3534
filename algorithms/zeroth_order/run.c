/*
 * zeroth_order/run.c - the O2NC loop of both zeroth-order methods (see
 * run.h and docs/algorithms/zeroth-order.md, which derives every formula
 * below and lists the paper's errata they correct).
 *
 * Privacy (replace-one).  A secret uniformly random order cuts the M
 * records into K rounds of 2T (o2nc_tree: a GRAD batch of B1 = T + 1 and
 * T - 1 single DIFF records; naive: T single records).  Every estimate is
 * clipped record by record, so it moves by at most s_G = 2 d L / B1
 * (GRAD) or s_D = 4 d L D / delta (DIFF, ||w_t - w_{t-1}|| <= 2D) when one
 * record changes, whatever f is; it is rounded to the lattice 2^-k Z^d
 * (raising each by 2^-k sqrt(d)).  o2nc_tree releases the running sums
 * g_t + TREE(t): a post-processing of the used tree nodes, each the
 * discrete Gaussian mechanism on its leaves' sum (CKS20: Delta^2 /
 * (2 sigma^2)-zCDP).  A record at leaf 1 is in Lambda = bitlength(T)
 * used nodes, at a later leaf in at most Lambda - 1 (docs/algorithms/zeroth-order.md, the
 * paper's count corrected), and rounds use disjoint records and fresh
 * noise, so the run is (alpha, alpha rho_eff^2 / 2)-RDP with
 * rho_eff = sqrt(max(Lambda s_G^2, (Lambda - 1) s_D^2)) / sigma: the
 * event gaussian with z = 1 / rho_eff.  naive releases each noisy
 * one-record estimate once: parallel Gaussians of z = sigma / s_G.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gauss_onepass.h"
#include "run.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

static const char *const t_rules[] = { "max", "min", NULL };
static const char *const step_rules[] = { "fixed", "adaptive", NULL };

const struct alg_param zo_run_params[ZO_P__COUNT + 1] = {
	[ZO_P_GOLD_DELTA] = { "gold_delta", ALG_PARAM_REAL, 1e-9, 1e6, 0.1,
			      "Goldstein radius delta: the result is (2 delta, eps)-stationary in "
			      "expectation (not DP's delta)",
			      NULL },
	[ZO_P_F_STAR] = { "f_star", ALG_PARAM_REAL, 0.0, 1e12, 0.0,
			  "public bound F* on F(x_1) - inf F (utility only: sets T); 0 = auto: the "
			  "objective's value bound, else 1",
			  NULL },
	[ZO_P_T_RULE] = { "t_rule", ALG_PARAM_INT, 0.0, 1.0, 0.0,
			  "round length T: max (the corrected theorem) or min (the paper's "
			  "literal text)",
			  t_rules },
	[ZO_P_STEP_RULE] = { "step_rule", ALG_PARAM_INT, 0.0, 1.0, 0.0,
			     "OSD step: fixed D / (G sqrt(T)) or adaptive (AdaGrad-norm)",
			     step_rules },
	[ZO_P_START] = { "start", ALG_PARAM_REAL, -1e6, 1e6, 0.0,
			 "public start point x_1 = start (1, ..., 1) / sqrt(d), of norm |start| "
			 "(0: the origin); must stay 0 with an objective that has its own public "
			 "start (relu_net: its initialisation from objective.init_seed)",
			 NULL },
	[ZO_P__COUNT] = { 0 },
};

static bool
pos(double v)
{
	return isfinite(v) && v > 0.0;
}

enum err_code
zo_setup_at(const struct run_spec *spec, bool naive, double z, struct zo_setup *ret, struct err *e)
{
	struct objective_constants oc;
	struct zo_setup s;
	double M = (double)spec->n, dd, V, N;
	enum err_code rc;

	memset(&s, 0, sizeof(s));
	s.naive = naive;
	s.dim = spec->dim;
	dd = (double)s.dim;
	s.gd = spec->params[ZO_P_GOLD_DELTA];
	s.adaptive = spec->params[ZO_P_STEP_RULE] != 0.0;
	s.radius = constraint_l2_radius(&spec->x, spec->dim);
	if (!pos(s.radius))
		return err_set_field(e, ERR_INVALID, "constraints.x",
				     "'constraints.x' must be an l2 ball of positive radius");
	if (spec->objective.ops->start != NULL && spec->params[ZO_P_START] != 0.0)
		return err_set_field(e, ERR_INVALID, "params.start",
				     "'params.start' must be 0 with objective '%s': it starts from "
				     "its own public initialisation ('objective.init_seed')",
				     spec->objective.ops->name);
	if (spec->n < 4)
		return err_set_field(e, ERR_INVALID, "dataset_id",
				     "zeroth-order methods need at least 4 records");
	rc = objective_constants(&spec->objective, &spec->schema, &spec->x, &oc, e);
	if (rc != ERR_OK)
		return rc;
	s.L = oc.lipschitz_l2;
	s.fstar = spec->params[ZO_P_F_STAR];
	if (s.fstar == 0.0)
		s.fstar = isfinite(oc.value_bound) && oc.value_bound > 0.0 ? oc.value_bound : 1.0;
	if (!pos(s.L) || !pos(z))
		return err_set(e, ERR_NUMERIC, "the Lipschitz constant is not finite and positive");
	s.z = z;
	s.rho = 1.0 / z;
	if (naive) {
		s.T = zo_rounds(dd, s.L, s.gd, s.fstar, s.rho, M, 2.0 / 3.0,
				spec->params[ZO_P_T_RULE] != 0.0, (unsigned long)spec->n);
		s.K = (unsigned long)(spec->n / s.T);
		s.B1 = 1;
		s.s_g = 2.0 * dd * s.L; /* B = 1: the documented corrected 2dL/B */
	} else {
		s.T = zo_rounds(dd, s.L, s.gd, s.fstar, s.rho, M, 0.5,
				spec->params[ZO_P_T_RULE] != 0.0, (unsigned long)(spec->n / 2));
		s.K = (unsigned long)(spec->n / (2 * s.T));
		s.B1 = s.T + 1;
		s.s_g = 2.0 * dd * s.L / (double)s.B1;
	}
	s.D = s.gd / (double)s.T;
	s.s_d = 4.0 * dd * s.L * s.D / s.gd;
	s.lambda = zo_bitlength(s.T);
	rc = onepass_lattice(naive ? s.s_g : fmin(s.s_g, s.s_d), s.dim, &s.lattice_k, &s.s_gl, e);
	if (rc == ERR_OK)
		rc = noise_lattice_sensitivity(NOISE_NORM_L2, s.s_g, s.dim, s.lattice_k, &s.s_gl,
					       e);
	if (rc == ERR_OK)
		rc = noise_lattice_sensitivity(NOISE_NORM_L2, s.s_d, s.dim, s.lattice_k, &s.s_dl,
					       e);
	if (rc != ERR_OK)
		return rc;
	s.sens_eff = naive ? s.s_gl : zo_sigma_exact(s.T, s.s_gl, s.s_dl, 1.0);
	s.sigma = z * s.sens_eff;
	s.rho_eff = s.sens_eff / s.sigma;
	/* docs/algorithms/zeroth-order.md §3, §4: G^2 bounds E||g~_t||^2. */
	if (naive) {
		s.G = sqrt(s.L * s.L + 4.0 * dd * s.L * s.L + dd * s.sigma * s.sigma);
	} else {
		V = 16.0 * dd * s.L * s.L / (double)s.B1 +
		    64.0 * dd * s.L * s.L * s.D * s.D * (double)(s.T - 1) / (s.gd * s.gd);
		N = (double)s.lambda * dd * s.sigma * s.sigma;
		s.G = sqrt(3.0 * (V + s.L * s.L + N));
	}
	s.eta = s.D / (s.G * sqrt((double)s.T));
	if (s.K < 1 || !pos(s.sigma) || !pos(s.eta) || !pos(s.rho_eff))
		return err_set(e, ERR_NUMERIC, "the schedule is not finite and positive");
	*ret = s;
	return ERR_OK;
}

static enum err_code
fill_plan(const struct run_spec *spec, const struct zo_setup *s, struct run_plan *ret,
	  struct err *e)
{
	enum err_code rc = ERR_OK;

	onepass_plan_start(ret, spec, s->K * s->T, s->B1);
	if (s->naive)
		rc = onepass_event(s->z, s->K * s->T, &ret->event, e);
	else
		dp_event_gaussian(&ret->event, DP_REPLACE_ONE, s->z); /* z = 1 / rho_eff */
	if (rc != ERR_OK)
		return rc;
	run_plan_use(ret, "rounds", (double)s->K);
	run_plan_use(ret, "round_length", (double)s->T);
	run_plan_use(ret, "lipschitz", s->L);
	run_plan_use(ret, "f_star", s->fstar);
	run_plan_use(ret, "step_radius", s->D);
	run_plan_use(ret, "rho_paper", s->rho);
	run_plan_use(ret, "rho_zcdp", s->rho * s->rho / 2.0);
	run_plan_use(ret, "rho_eff", s->rho_eff);
	if (!s->naive) {
		run_plan_use(ret, "tree_levels", (double)s->lambda);
		run_plan_use(ret, "sensitivity_diff", s->s_dl);
	}
	onepass_plan_use_noise(ret, s->s_g, s->s_gl, s->lattice_k, s->z, s->sigma, s->eta);
	run_plan_use(ret, "unused_records",
		     (double)(spec->n - (size_t)s->K * s->T * (s->naive ? 1 : 2)));
	return ERR_OK;
}

enum err_code
zo_plan(const struct run_spec *spec, bool naive, struct run_plan *ret_plan, struct err *e)
{
	struct zo_setup s;
	struct run_plan p;
	const char *accountant = NULL;
	double z = 1.0;
	enum err_code rc;

	/* Refuse what does not depend on the noise before calibrating. */
	rc = zo_setup_at(spec, naive, 1.0, &s, e);
	if (rc == ERR_OK)
		rc = onepass_calibrate(spec, &z, &accountant, e);
	if (rc == ERR_OK)
		rc = zo_setup_at(spec, naive, z, &s, e);
	if (rc == ERR_OK)
		rc = fill_plan(spec, &s, &p, e);
	if (rc == ERR_OK) {
		p.accountant = accountant;
		*ret_plan = p;
	}
	return rc;
}

/* Evaluations of f (each reads a row, dim + d) and direction normals:
 * o2nc_tree 4 d K T evaluations and 2 K T d^2 normals, about M d^2 (M d
 * for naive, one direction per record); d noise normals per step. */
double
zo_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double d = (double)spec->dim, f = (double)spec->schema.d;
	double K = run_plan_value(plan, "rounds"), T = run_plan_value(plan, "round_length");
	bool naive = isnan(run_plan_value(plan, "tree_levels"));
	double dirs = naive ? K * T : 2.0 * K * T * d;

	return dirs * (2.0 * (d + f) + d) + K * T * d;
}

enum err_code
zo_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	const struct dataset *ds, struct rng *rng, bool naive, struct err *e)
{
	struct zo_state *s = state;
	struct run_plan mine;
	bool derived;
	size_t d = spec->dim;
	enum err_code rc;

	derived = zo_setup_at(spec, naive, run_plan_value(plan, "noise_multiplier"), &s->su,
			      NULL) == ERR_OK &&
		  fill_plan(spec, &s->su, &mine, NULL) == ERR_OK;
	rc = onepass_check_init(spec, plan, derived ? &mine : NULL, ds, e);
	if (rc != ERR_OK)
		return rc;
	s->n = ds->n;
	s->ball = spec->x;
	s->order = calloc(ds->n, sizeof(*s->order));
	s->treevec = calloc(65 * d, sizeof(double));
	s->x = calloc(d, sizeof(double));
	s->w = calloc(d, sizeof(double));
	s->wprev = calloc(d, sizeof(double));
	s->delta = calloc(d, sizeof(double));
	s->g = calloc(d, sizeof(double));
	s->gt = calloc(d, sizeof(double));
	s->tmp = calloc(d, sizeof(double));
	s->xi = calloc(d, sizeof(double));
	s->wsum = calloc(d, sizeof(double));
	s->out = calloc(d, sizeof(double));
	s->u = calloc(d, sizeof(double));
	s->p = calloc(d, sizeof(double));
	s->scratch = calloc(d, sizeof(double));
	if (s->order == NULL || s->treevec == NULL || s->x == NULL || s->w == NULL ||
	    s->wprev == NULL || s->delta == NULL || s->g == NULL || s->gt == NULL ||
	    s->tmp == NULL || s->xi == NULL || s->wsum == NULL || s->out == NULL || s->u == NULL ||
	    s->p == NULL || s->scratch == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the zeroth-order state");
	s->ev = (struct zo_eval){ .o = &spec->objective,
				  .ds = ds,
				  .rng = rng,
				  .dim = d,
				  .L = s->su.L,
				  .delta = s->su.gd,
				  .u = s->u,
				  .p = s->p };
	s->tree.d = d;
	s->tree.vec = s->treevec;
	/* x_1 (public); the rounds read order[0 .. K T (2 or 1)). */
	if (!objective_start(&spec->objective, s->x))
		for (size_t j = 0; j < d; j++)
			s->x[j] = spec->params[ZO_P_START] / sqrt((double)d);
	onepass_order(rng, s->order, ds->n, (size_t)s->su.K * s->su.T * (naive ? 1 : 2));
	s->kstar = (unsigned long)rng_below(rng, s->su.K);
#ifdef DPOPT_TESTING
	/* The canary goes into slot 0: leaf 1 of round 1 (the GRAD batch, in
	 * all Lambda nodes (1, 2^j)) for o2nc_tree, the first step for naive.
	 * A DIFF leaf's charged s_D needs ||w_t - w_{t-1}|| = 2D, which no
	 * data can force (tests/audit/test_audit_zeroth_order.c). */
	s->hook = spec->testing_hook;
	rc = onepass_testing_sigma(s->hook, ds->n, &s->su.sigma, e);
	if (rc != ERR_OK)
		return rc;
	if (s->hook != NULL && s->hook->place_first) {
		const size_t slot = 0;

		for (size_t i = 0; i < ds->n; i++)
			if (s->order[i] == s->hook->first_record) {
				s->order[i] = s->order[slot];
				s->order[slot] = s->hook->first_record;
				break;
			}
	}
#endif
	return noise_dgauss_prepare_real(ldexp(s->su.sigma, s->su.lattice_k), &s->noise, e);
}

/* v <- v rounded to the lattice 2^-k Z^d. */
static void
round_lattice(double *v, size_t d, int k)
{
	for (size_t j = 0; j < d; j++)
		v[j] = ldexp(nearbyint(ldexp(v[j], k)), -k);
}

/* One inner step t of round k of O2NC (docs/algorithms/zeroth-order.md
 * §3); plan.steps = K T, so progress and cancellation are per step. */
enum err_code
zo_step(void *state, struct err *e)
{
	struct zo_state *s = state;
	const struct zo_setup *su = &s->su;
	const size_t d = su->dim;
	const unsigned long t = s->t + 1;
	double sv, nrm = 0.0;
	const double *tree;
	bool finite = true;

	if (s->k >= su->K)
		return err_set(e, ERR_INTERNAL, "step past the end of the plan");
	if (t == 1) {
		memset(s->delta, 0, d * sizeof(double));
		memset(s->wsum, 0, d * sizeof(double));
		s->sumsq = 0.0;
		zo_tree_reset(&s->tree);
	} else {
		double eta = su->eta;

		for (size_t j = 0; j < d; j++)
			s->sumsq += s->gt[j] * s->gt[j];
		if (su->adaptive)
			eta = s->sumsq > 0.0 ? sqrt(2.0) * su->D / sqrt(s->sumsq) : 0.0;
		for (size_t j = 0; j < d; j++) {
			s->delta[j] -= eta * s->gt[j];
			nrm = hypot(nrm, s->delta[j]);
		}
		if (nrm > su->D)
			for (size_t j = 0; j < d; j++)
				s->delta[j] *= su->D / nrm;
	}
	sv = rng_uniform(s->ev.rng);
	for (size_t j = 0; j < d; j++) {
		s->w[j] = s->x[j] + sv * s->delta[j];
		s->x[j] += s->delta[j];
		s->wsum[j] += s->w[j];
	}
	memset(s->tmp, 0, d * sizeof(double));
	if (su->naive) {
		zo_grad_record(&s->ev, s->order[s->ptr++], s->w, 1, s->tmp);
		round_lattice(s->tmp, d, su->lattice_k);
		memcpy(s->g, s->tmp, d * sizeof(double));
	} else if (t == 1) {
		for (size_t b = 0; b < su->B1; b++)
			zo_grad_record(&s->ev, s->order[s->ptr++], s->w, d, s->tmp);
		for (size_t j = 0; j < d; j++)
			s->tmp[j] /= (double)su->B1;
		round_lattice(s->tmp, d, su->lattice_k);
		memcpy(s->g, s->tmp, d * sizeof(double));
	} else {
		zo_diff_record(&s->ev, s->order[s->ptr++], s->w, s->wprev, 2.0 * su->D, s->tmp);
		round_lattice(s->tmp, d, su->lattice_k);
		for (size_t j = 0; j < d; j++)
			s->g[j] += s->tmp[j];
	}
	/* Fresh lattice noise: the node's (o2nc_tree) or the step's (naive). */
	memset(s->xi, 0, d * sizeof(double));
	if (noise_lattice_gaussian_prepared(s->ev.rng, &s->noise, su->lattice_k, s->xi, d, NULL) !=
	    ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	tree = su->naive ? s->xi : zo_tree_push(&s->tree, s->xi);
	for (size_t j = 0; j < d; j++)
		s->gt[j] = s->g[j] + tree[j];
#ifdef DPOPT_TESTING
	if (s->hook != NULL && s->hook->release != NULL)
		s->hook->release(s->hook->ctx, s->k * su->T + (t - 1), s->gt, d);
	if (s->hook != NULL && s->hook->point != NULL)
		s->hook->point(s->hook->ctx, s->k * su->T + (t - 1), s->w, d);
#endif
	memcpy(s->wprev, s->w, d * sizeof(double));
	s->t = t;
	if (t < su->T)
		return ERR_OK;
	/* End of round k: w^k = (1/T) sum_t w_t^k, kept for k = k*. */
	if (s->k == s->kstar) {
		for (size_t j = 0; j < d; j++) {
			s->out[j] = s->wsum[j] / (double)su->T;
			finite = finite && isfinite(s->out[j]);
		}
		/* Post-processing: the released point in constraints.x (never binds
		 * when its radius is at least ||x_1|| + K delta). */
		constraint_project(&s->ball, s->out, d, s->scratch);
	}
	s->k++;
	s->t = 0;
	if (!finite)
		return err_set(e, ERR_INTERNAL, "the run failed");
	return ERR_OK;
}

void
zo_result(const void *state, double *ret_x)
{
	const struct zo_state *s = state;

	memcpy(ret_x, s->out, s->su.dim * sizeof(*ret_x));
}

void
zo_fini(void *state)
{
	struct zo_state *s = state;

	free(s->order);
	free(s->treevec);
	free(s->x);
	free(s->w);
	free(s->wprev);
	free(s->delta);
	free(s->g);
	free(s->gt);
	free(s->tmp);
	free(s->xi);
	free(s->wsum);
	free(s->out);
	free(s->u);
	free(s->p);
	free(s->scratch);
	memset(s, 0, sizeof(*s));
}
