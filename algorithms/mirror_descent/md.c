/*
 * mirror_descent/md.c - the parts both mirror-descent methods share
 * (md.h).
 */
#include <math.h>
#include <string.h>

#include "mirror_descent/md.h"
#include "privacy/calibrate.h"
#include "privacy/rdp.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#endif

/* The calibration's Renyi orders are capped as in dp_sgd.subsampled: the
 * default grid without its orders above max(MD_CAL_MAX_ORDER,
 * 4 log(1/delta) / epsilon). */
#define MD_CAL_MAX_ORDER 64.0

static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

/* E|N(0,1)|^q = 2^(q/2) Gamma((q + 1)/2) / sqrt(pi). */
static double
gauss_abs_moment_log(double q)
{
	return 0.5 * q * log(2.0) + lgamma(0.5 * (q + 1.0)) - 0.5 * log(3.14159265358979323846);
}

enum err_code
md_geometry(const struct run_spec *spec, double clip_param, struct md_geom *ret, struct err *e)
{
	struct objective_constants oc;
	struct md_geom gm, *g = &gm;
	const struct constraint *c = &spec->x;
	double d = (double)spec->dim, cmax, linf;
	enum err_code rc;

	memset(g, 0, sizeof(*g));
	if (c->kind != CONSTRAINT_L1_BALL && c->kind != CONSTRAINT_SIMPLEX &&
	    c->kind != CONSTRAINT_LP_BALL && c->kind != CONSTRAINT_L2_BALL)
		return err_set_field(e, ERR_INVALID, "constraints.x",
				     "'constraints.x' must be an l1, l2 or lp ball or a simplex");
	rc = objective_constants(&spec->objective, &spec->schema, c, &oc, e);
	if (rc != ERR_OK)
		return rc;
	g->lp = c->kind == CONSTRAINT_LP_BALL || c->kind == CONSTRAINT_L2_BALL;
	g->p = c->kind == CONSTRAINT_L2_BALL ? 2.0 : g->lp ? c->p : mirror_pnorm_p(spec->dim);
	g->q = g->p / (g->p - 1.0);
	g->kappa = mirror_pnorm_kappa(g->p, spec->dim);
	g->grad_bound = oc.lipschitz_l2;
	linf = oc.lipschitz_linf;
	cmax = fmin(oc.lipschitz_l2, is_finite_pos(linf) ? linf * sqrt(d) : INFINITY);
	g->clip = clip_param > 0.0 ? fmin(clip_param, cmax) : cmax;
	if (!is_finite_pos(g->clip) ||
	    !(isfinite(oc.reg_lipschitz_l2) && oc.reg_lipschitz_l2 >= 0.0))
		return err_set(e, ERR_NUMERIC,
			       "the gradient bound is not a finite positive number");
	/* A clipped gradient has ||g||_2 <= C, so ||g||_inf <= min(C, L_inf)
	 * and ||g||_q <= C (q >= 2); the regularizer's gradient adds at most
	 * its l2 bound in either norm. */
	if (g->lp) {
		g->lip = g->clip + oc.reg_lipschitz_l2;
		g->diam = 2.0 * c->radius;
		/* E||zeta||_q^2 <= (E||zeta||_q^q)^(2/q) = d^(2/q) (E|N|^q)^(2/q). */
		g->noise_dual = exp((2.0 / g->q) * (log(d) + gauss_abs_moment_log(g->q)));
	} else {
		g->lip =
			(is_finite_pos(linf) ? fmin(g->clip, linf) : g->clip) + oc.reg_lipschitz_l2;
		g->diam = 2.0 * c->radius;
		/* E||zeta||_inf^2 <= 2 ln(2d) + 2 (a max of 2d Gaussians). */
		g->noise_dual = 2.0 * log(2.0 * d) + 2.0;
	}
	if (!is_finite_pos(g->lip) || !is_finite_pos(g->diam) || !is_finite_pos(g->noise_dual))
		return err_set(e, ERR_NUMERIC, "the set's geometry is not usable");
	*ret = gm;
	return ERR_OK;
}

struct constraint
md_outer(const struct constraint *c)
{
	struct constraint o = *c;

	if (c->kind == CONSTRAINT_L2_BALL) {
		o.kind = CONSTRAINT_LP_BALL;
		o.p = 2.0;
	}
	return o;
}

void
md_centre(const struct constraint *c, size_t d, double *ret_x0)
{
	double v = c->kind == CONSTRAINT_SIMPLEX ? c->radius / (double)d : 0.0;

	for (size_t j = 0; j < d; j++)
		ret_x0[j] = v;
}

double
md_radius_p(const struct constraint *c, size_t d, double p)
{
	double dd = (double)d;

	if (c->kind != CONSTRAINT_SIMPLEX)
		return c->radius; /* ||x||_p <= ||x||_1 (l1 ball), = the radius (lp ball) */
	/* A vertex s e_1 against the centre s/d 1 (the norm is convex, so a
	 * vertex is the farthest point). */
	return c->radius * pow(pow(1.0 - 1.0 / dd, p) + (dd - 1.0) * pow(1.0 / dd, p), 1.0 / p);
}

struct phase_ctx {
	uint64_t n, b, steps;
};

static enum err_code
phase_family(double z, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	const struct phase_ctx *c = ctx;

	return md_phase_event(c->n, c->b, c->steps, z, ret, e);
}

enum err_code
md_phase_event(uint64_t n, uint64_t b, uint64_t steps, double z, struct dp_event_tree *ret,
	       struct err *e)
{
	struct dp_event sample = { .type = DP_EVENT_SAMPLED_WOR, .n = n, .batch = b };
	struct dp_event self = { .type = DP_EVENT_SELF_COMPOSED, .count = steps };
	enum err_code rc;

	dp_event_gaussian(ret, DP_REPLACE_ONE, z);
	/* b = n samples nothing: the event says so (the basic accountant then
	 * has the exact curve), as dp_sgd.subsampled. */
	rc = b == n ? ERR_OK : dp_event_wrap(ret, &sample, e);
	if (rc == ERR_OK)
		rc = dp_event_wrap(ret, &self, e);
	return rc;
}

void
md_grid(double epsilon, double delta, struct rdp_grid *ret)
{
	double top = fmax(MD_CAL_MAX_ORDER, 4.0 * log(1.0 / delta) / epsilon);
	unsigned k = 0;

	/* A subset of the default grid can only raise the converted epsilon,
	 * so the ledger's accounting on the full grid meets the target too
	 * (see dp_sgd.subsampled's calibration). */
	rdp_grid_default(ret);
	for (unsigned i = 0; i < ret->n; i++)
		if (ret->order[i] <= top)
			ret->order[k++] = ret->order[i];
	ret->n = k;
}

enum err_code
md_calibrate(const struct run_spec *spec, double epsilon, uint64_t n, uint64_t b, uint64_t steps,
	     double *ret_z, const char **ret_accountant, struct err *e)
{
	double eps_cal = nextafter(epsilon, 0.0), delta_cal = nextafter(spec->delta, 0.0);
	struct phase_ctx c = { n, b, steps };
	struct rdp_grid grid;
	struct accountant_report report;
	enum err_code rc;

#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	md_grid(eps_cal, delta_cal, &grid);
	rc = calibrate(phase_family, &c, spec->mode, eps_cal, delta_cal, 1e-2, 1e7, &grid, ret_z,
		       &report, e);
	if (rc == ERR_OK)
		*ret_accountant = report.accountant;
	return rc;
}

enum err_code
md_step(const struct mirror_pnorm *m, const struct constraint *outer, double R, double coef,
	double gamma, const double *g, double *theta, double *x, struct err *e)
{
	mirror_pnorm_grad(m, x, theta);
	for (size_t j = 0; j < m->d; j++)
		theta[j] = coef * theta[j] - gamma * g[j];
	if (mirror_pnorm_step(m, outer, R, theta, x, NULL, NULL) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	return ERR_OK;
}
