/*
 * rdp.c - the Renyi-DP accountant: RDP curves of privacy event trees and
 * the conversion to (epsilon, delta).  docs/privacy-model.md §§2, 3 and 8
 * are binding; README.md in this folder has the design notes.
 *
 * Sources, all written from the papers:
 *  - I. Mironov, "Renyi differential privacy", CSF 2017: gaussian
 *    alpha / (2 z^2); laplace (Proposition 6).
 *  - M. Bun, T. Steinke, "Concentrated differential privacy", TCC 2016:
 *    eps-DP => eps^2/2-zCDP; rho-zCDP => RDP rho alpha.
 *  - M. Cesar, R. Rogers, "Bounding, concentrating, and truncating: unifying
 *    privacy loss composition for data analytics", ALT 2021: eps-bounded
 *    range => eps^2/8-zCDP.
 *  - Y.-X. Wang, B. Balle, S. Kasiviswanathan, "Subsampled Renyi differential
 *    privacy and analytical moments accountant", AISTATS 2019 (WBK19,
 *    arXiv:1808.00087): Theorem 9 (general base, needs eps(inf)),
 *    Theorem 27 (Gaussian base, via Pearson-Vajda moments), Corollary 10
 *    (the cumulant (alpha - 1) eps(alpha) is convex: interpolate it
 *    linearly between integer orders).
 *  - I. Mironov, K. Talwar, L. Zhang, "Renyi differential privacy of the
 *    sampled Gaussian mechanism", arXiv:1908.10530, 2019 (MTZ19), Section 3:
 *    A_alpha for integer and fractional orders.
 *  - C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for
 *    differential privacy", NeurIPS 2020, Proposition 12 (the improved
 *    RDP -> (eps, delta) conversion; also Balle et al., AISTATS 2020).
 *  - B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by
 *    subsampling", NeurIPS 2018: pure eps-DP under sampling without
 *    replacement (replace-one) is log(1 + gamma (e^eps - 1))-DP.
 *  - N. Papernot, T. Steinke, "Hyperparameter tuning with Renyi
 *    differential privacy", ICLR 2022 (arXiv:2110.03620): Theorem 2
 *    (truncated negative binomial repetitions) and Theorem 6 (Poisson
 *    repetitions); see selection_tnb_curve and selection_poisson_curve.
 *
 * Everything is computed in log space.  Every node's curve is checked:
 * a NaN, an infinite, negative or zero value is ERR_NUMERIC.  No curve
 * value is clamped to 0; the one clamp is rdp_to_epsilon's, of a
 * conversion below 0 (the event is then (0, delta)-DP: see there).
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "privacy/analytic_gaussian.h"
#include "privacy/rdp.h"
#include "privacy/selection.h"

#define LOG2         0.69314718055994530942
#define LOG4         1.38629436111989061883
#define LOG_SQRT_2PI 0.91893853320467274178 /* log(sqrt(2 pi)) */
#define SQRT1_2      0.70710678118654752440
#define SQRT_2PI     2.50662827463100050242

/* Fractional-order series of MTZ19: at most this many terms. */
#define FRAC_MAX_TERMS 1000
/* Pearson-Vajda moment quadrature: half-width of each window in standard
 * deviations of the underlying normal, and the step bounds. */
#define MOM_WINDOW    14.0
#define MOM_MAX_STEP  0.1
#define MOM_MAX_NODES 2000000

/* log(e^a + e^b) */
static double
log_add(double a, double b)
{
	double hi = a > b ? a : b, lo = a > b ? b : a;

	if (lo == -INFINITY)
		return hi;
	return hi + log1p(exp(lo - hi));
}

/* log(1 + e^s) */
static double
log1p_exp(double s)
{
	return s < 0.0 ? log1p(exp(s)) : s + log1p(exp(-s));
}

/* log |e^x - 1|; -inf at x = 0. */
static double
log_abs_expm1(double x)
{
	if (x > 1.0)
		return x + log1p(-exp(-x));
	if (x < -LOG2)
		return log1p(-exp(x));
	return log(fabs(expm1(x)));
}

static bool
is_integer(double a)
{
	return a == floor(a);
}

/* ------------------------------------------------------------------ */
/* Grids                                                               */

/* round(64 * 2^(k/8)) for k = 1..32: geometric orders from 70 to 1024. */
static const unsigned short geometric_orders[32] = {
	70,  76,  83,  91,  99,  108, 117, 128, 140, 152, 166, 181, 197, 215, 235, 256,
	279, 304, 332, 362, 395, 431, 470, 512, 558, 609, 664, 724, 790, 861, 939, 1024,
};

void
rdp_grid_default(struct rdp_grid *g)
{
	unsigned n = 0;

	memset(g, 0, sizeof(*g));
	for (int k = 1; k <= 9; k++)
		g->order[n++] = 1.0 + k / 100.0;
	for (int k = 2; k <= 19; k++)
		g->order[n++] = 1.0 + k / 20.0;
	for (int k = 0; k < 56; k++)
		g->order[n++] = 2.0 + k / 4.0;
	for (int k = 0; k <= 96; k++)
		g->order[n++] = 16.0 + k / 2.0;
	for (unsigned k = 0; k < sizeof(geometric_orders) / sizeof(geometric_orders[0]); k++)
		g->order[n++] = geometric_orders[k];
	g->n = n;
}

void
rdp_grid_reference(struct rdp_grid *g)
{
	static const double low[] = { 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5 };
	unsigned n = 0;

	memset(g, 0, sizeof(*g));
	for (unsigned k = 0; k < sizeof(low) / sizeof(low[0]); k++)
		g->order[n++] = low[k];
	for (int a = 5; a <= 63; a++)
		g->order[n++] = a;
	g->order[n++] = 128;
	g->order[n++] = 256;
	g->order[n++] = 512;
	g->n = n;
}

enum err_code
rdp_grid_check(const struct rdp_grid *g, struct err *e)
{
	if (g->n == 0 || g->n > RDP_MAX_ORDERS)
		return err_set(e, ERR_INVALID, "an order grid needs 1 to %d orders, not %u",
			       RDP_MAX_ORDERS, g->n);
	for (unsigned k = 0; k < g->n; k++) {
		double a = g->order[k];

		if (!isfinite(a) || !(a > 1.0))
			return err_set(e, ERR_INVALID, "Rényi orders must be finite and above 1");
		if (k > 0 && !(a > g->order[k - 1]))
			return err_set(e, ERR_INVALID, "Rényi orders must be strictly increasing");
	}
	return ERR_OK;
}

/* ------------------------------------------------------------------ */
/* Leaves                                                              */

/*
 * Laplace mechanism with b = noise multiplier (scale / l1 sensitivity),
 * eps = 1/b (Mironov 2017, Proposition 6):
 *	RDP = 1/(a-1) log( a/(2a-1) e^{(a-1) eps} + (a-1)/(2a-1) e^{-a eps} )
 *	    = eps + log1p( (a-1)/(2a-1) expm1(-(2a-1) eps) ) / (a-1),
 * the second form factoring out e^{(a-1) eps} so nothing overflows.
 */
static double
laplace_rdp(double b, double a)
{
	double eps = 1.0 / b;

	return eps + log1p((a - 1.0) / (2.0 * a - 1.0) * expm1(-(2.0 * a - 1.0) * eps)) / (a - 1.0);
}

/*
 * The largest RDP at order a of any eps-DP mechanism: that of binary
 * randomized response with e^eps : 1 odds (Mironov 2017, Proposition 5,
 * for the mechanism itself):
 *	D_a = 1/(a-1) log( (e^{a eps} + e^{(1-a) eps}) / (1 + e^eps) ).
 * It bounds every eps-DP pair (P, Q) because such a pair is a
 * post-processing of the randomized-response pair (Kairouz, Oh &
 * Viswanath, ICML 2015, Theorem 2.4: the (eps, 0) privacy region is that
 * of randomized response, and a pair whose region lies inside it is
 * obtained from it by one Markov kernel), and Renyi divergence does not
 * grow under post-processing.  Rewritten so nothing cancels or overflows:
 *	D_a = eps + log1p( expm1(-2 (a-1) eps) / (1 + e^eps) ) / (a-1).
 * It is below both min(eps, a eps^2 / 2) bounds it replaces (tighter by
 * about 2 % at eps = 0.1, and by a factor that grows with eps; see
 * tests/unit/test_rdp.c).
 */
static double
pure_rdp(double eps, double a)
{
	double r = eps + log1p(expm1(-2.0 * (a - 1.0) * eps) / (1.0 + exp(eps))) / (a - 1.0);

	/* Mathematically below both classical bounds; the minimum keeps it
	 * so whatever the rounding (a minimum of valid bounds is valid). */
	return fmin(r, fmin(eps, 0.5 * a * eps * eps));
}

/* ------------------------------------------------------------------ */
/* Pure-DP bound eps(inf) of a subtree                                 */

/* *ret = a finite eps with the subtree eps-DP (its RDP at order infinity),
 * or false when none is known (gaussian, zcdp, approx, poisson). */
static bool
eps_inf(const struct dp_event_tree *t, unsigned i, double *ret)
{
	const struct dp_event *n = &t->node[i];
	double v, c;

	switch (n->type) {
	case DP_EVENT_PURE:
	case DP_EVENT_BOUNDED_RANGE: /* eps-bounded range implies eps-DP */
		v = n->epsilon;
		break;
	case DP_EVENT_LAPLACE:
		v = 1.0 / n->noise_multiplier;
		break;
	case DP_EVENT_SELF_COMPOSED:
		if (!eps_inf(t, n->first_child, &c))
			return false;
		v = (double)n->count * c;
		break;
	case DP_EVENT_COMPOSED:
	case DP_EVENT_PARALLEL:
	case DP_EVENT_MIXTURE: /* the worst child (event.h) */
		v = 0.0;
		for (unsigned k = 0; k < n->n_children; k++) {
			if (!eps_inf(t, n->first_child + k, &c))
				return false;
			v = n->type == DP_EVENT_COMPOSED ? v + c : fmax(v, c);
		}
		break;
	case DP_EVENT_SAMPLED_WOR:
		if (!eps_inf(t, n->first_child, &c))
			return false;
		/* BBG18: WOR with replace-one amplifies eps-DP to this. */
		v = n->batch == n->n ? c : log1p((double)n->batch / (double)n->n * expm1(c));
		break;
	default:
		return false;
	}
	if (!isfinite(v) || !(v > 0.0))
		return false;
	*ret = v;
	return true;
}

/* ------------------------------------------------------------------ */
/* Pearson-Vajda moments of the Gaussian mechanism (WBK19 Theorem 27)  */

/*
 * With p = N(1, z^2), q = N(0, z^2) and Y = p/q (x) for x ~ q, Y =
 * exp(u/z - c) with u ~ N(0, 1) and c = 1/(2 z^2), and the forward
 * difference WBK19 Theorem 27 needs is
 *	Delta^l(0) = sum_i (-1)^(l-i) C(l, i) e^{(i-1) eps(i)} = E[(Y - 1)^l].
 * The alternating sum cancels catastrophically for large z (dp_accounting
 * evaluates it by repeated differences in log space and loses the digits),
 * so for even l we integrate instead:
 *	E[(Y - 1)^l] = int phi(u) (expm1(u/z - c))^l du,
 * an entire, non-negative integrand.  Its log g(u) is concave with g'' <= -1
 * on each side of the zero u0 = z c (the log of |expm1| is concave on each
 * side, -u^2/2 adds -1), so each side has one peak and beyond W of it the
 * integrand is below e^{g(peak) - W^2/2}.  The trapezoid rule on windows of
 * +-W around the two peaks (merged when they overlap) is exponentially
 * accurate for such integrands; we add the Gaussian bound on everything
 * outside the windows and a relative allowance of 1e-12 for the quadrature,
 * so the result is an upper bound.  Checked against 3000-digit alternating
 * sums for z in [0.1, 1000], l up to 1024 (tests/unit/test_rdp.c keeps
 * a long-double cross-check where the sum is still accurate).
 */
struct pv {
	double z, c, l;
};

static double
pv_log(const struct pv *p, double u)
{
	return p->l * log_abs_expm1(u / p->z - p->c) - 0.5 * u * u;
}

/* g'(u); e^x / (e^x - 1) = -1 / expm1(-x). */
static double
pv_slope(const struct pv *p, double u)
{
	double x = u / p->z - p->c;

	return p->l / p->z / -expm1(-x) - u;
}

/* -g''(u) = 1 + (l / z^2) e^x / (e^x - 1)^2 */
static double
pv_curvature(const struct pv *p, double u)
{
	double x = u / p->z - p->c, r;

	if (x > 0.0) {
		double m = expm1(-x);

		r = exp(-x) / (m * m);
	} else {
		double m = expm1(x);

		r = exp(x) / (m * m);
	}
	return 1.0 + p->l / (p->z * p->z) * r;
}

/* The peak of g on one side (side = +1 above u0, -1 below): g' decreases
 * from +inf to -inf there (or from +inf at -inf to -inf at u0). */
static bool
pv_peak(const struct pv *p, int side, double *ret)
{
	double u0 = p->z * p->c, step = 1.0, lo, hi;

	for (;;) {
		double u = u0 + side * step;

		if (!isfinite(u) || step > 1e300)
			return false;
		if (side > 0 ? pv_slope(p, u) < 0.0 : pv_slope(p, u) > 0.0) {
			lo = side > 0 ? u0 : u;
			hi = side > 0 ? u : u0;
			break;
		}
		step *= 2.0;
	}
	/* Invariant: g'(lo) > 0 > g'(hi) (or lo/hi is u0 itself). */
	for (int it = 0; it < 2100; it++) {
		double mid = 0.5 * (lo + hi);

		if (!(mid > lo && mid < hi))
			break;
		if (pv_slope(p, mid) > 0.0)
			lo = mid;
		else
			hi = mid;
	}
	*ret = 0.5 * (lo + hi);
	return isfinite(*ret);
}

/* Trapezoid sum of exp(g(u) - ref) over [a, b] with step at most h. */
static bool
pv_window(const struct pv *p, double a, double b, double h, double ref, double *ret)
{
	double n = ceil((b - a) / h), step, sum = 0.0;

	if (!(n >= 1.0) || n > MOM_MAX_NODES)
		return false;
	step = (b - a) / n;
	for (long k = 0; k <= (long)n; k++) {
		double w = (k == 0 || k == (long)n) ? 0.5 : 1.0;

		sum += w * exp(pv_log(p, a + (double)k * step) - ref);
	}
	*ret = sum * step;
	return isfinite(*ret);
}

/* log E[(Y - 1)^l] for even l >= 4 (see above). */
static enum err_code
pv_log_moment(double z, unsigned l, double *ret, struct err *e)
{
	struct pv p = { .z = z, .c = 0.5 / (z * z), .l = (double)l };
	double up, un, gp, gn, ref, kappa, h, s1, s2 = 0.0, tail;
	const double w = MOM_WINDOW;

	if (!pv_peak(&p, +1, &up) || !pv_peak(&p, -1, &un))
		goto fail;
	gp = pv_log(&p, up);
	gn = pv_log(&p, un);
	ref = fmax(gp, gn);
	kappa = fmax(pv_curvature(&p, up), pv_curvature(&p, un));
	if (!isfinite(ref) || !isfinite(kappa))
		goto fail;
	h = fmin(MOM_MAX_STEP, 0.25 / sqrt(kappa));
	if (un + w >= up - w) {
		if (!pv_window(&p, un - w, up + w, h, ref, &s1))
			goto fail;
	} else {
		if (!pv_window(&p, un - w, un + w, h, ref, &s1) ||
		    !pv_window(&p, up - w, up + w, h, ref, &s2))
			goto fail;
	}
	/* Outside the windows: at most (e^gp + e^gn) sqrt(2 pi) erfc(W / sqrt 2). */
	tail = (exp(gp - ref) + exp(gn - ref)) * exp(LOG_SQRT_2PI) * erfc(w * SQRT1_2);
	*ret = ref + log(s1 + s2 + tail) - LOG_SQRT_2PI + log1p(1e-12);
	if (!isfinite(*ret))
		goto fail;
	return ERR_OK;
fail:
	err_set(e, ERR_NUMERIC, "the subsampled Gaussian bound cannot be evaluated");
	err_detail(e, "Pearson-Vajda moment of order %u at noise multiplier %.17g", l, z);
	return ERR_NUMERIC;
}

/* ------------------------------------------------------------------ */
/* Sampling without replacement (WBK19)                                */

struct wor {
	double log_gamma;
	bool gaussian;        /* Theorem 27 (else Theorem 9) */
	double lem1_inf;      /* log(e^{eps(inf)} - 1); +inf when none (gaussian) */
	const double *cum;    /* cum[j] = (j - 1) eps(j) of the base, j = 2..A */
	const double *log_pv; /* gaussian: log E[(Y-1)^l] at even l (index l) */
};

/*
 * The cumulant bound K(alpha) >= (alpha - 1) RDP(alpha) of the subsampled
 * mechanism at integer alpha >= 2 (WBK19 Theorem 9; Theorem 27 for a
 * gaussian base):
 *	K = log(1 + gamma^2 C(alpha, 2) min{4 (e^{eps(2)} - 1),
 *	                                   e^{eps(2)} min{2, (e^{eps(inf)} - 1)^2}}
 *	          + sum_{j=3}^{alpha} gamma^j C(alpha, j) B_j)
 * with B_j = e^{(j-1) eps(j)} min{2, (e^{eps(inf)} - 1)^j} (Theorem 9), or
 * B_j = min{4 sqrt(E[(Y-1)^{2 floor(j/2)}] E[(Y-1)^{2 ceil(j/2)}]),
 *           2 e^{(j-1) eps(j)}} (Theorem 27; eps(inf) = inf there).
 */
static double
wor_cumulant(const struct wor *w, unsigned alpha)
{
	double lc = 0.0, sum = -INFINITY;

	for (unsigned j = 1; j <= alpha; j++) {
		double t;

		lc += log((double)(alpha - j + 1)) - log((double)j); /* log C(alpha, j) */
		if (j < 2)
			continue;
		if (j == 2) {
			double e2 = w->cum[2];

			t = fmin(LOG4 + log_abs_expm1(e2), e2 + fmin(LOG2, 2.0 * w->lem1_inf));
		} else if (w->gaussian) {
			unsigned lo = 2 * (j / 2), hi = 2 * ((j + 1) / 2);

			t = fmin(LOG4 + 0.5 * (w->log_pv[lo] + w->log_pv[hi]), LOG2 + w->cum[j]);
		} else {
			t = w->cum[j] + fmin(LOG2, (double)j * w->lem1_inf);
		}
		sum = log_add(sum, lc + (double)j * w->log_gamma + t);
	}
	return log1p_exp(sum);
}

static enum err_code node_curve(const struct dp_event_tree *t, unsigned i, const double *a,
				unsigned n, double *out, struct err *e);

static enum err_code
wor_curve(const struct dp_event_tree *t, unsigned i, const double *a, unsigned n, double *out,
	  struct err *e)
{
	const struct dp_event *node = &t->node[i], *child = &t->node[node->first_child];
	double gamma, einf = INFINITY, amp_inf = INFINITY, *ints = NULL, *cum = NULL;
	double *log_pv = NULL, *kk = NULL;
	unsigned top = 2;
	struct wor w;
	enum err_code rc;

	if (node->relation != DP_REPLACE_ONE)
		return err_set(
			e, ERR_INVALID,
			"sampled_without_replacement is accounted for replace_one events only");
	/* The base curve itself: sampling never costs more than the base
	 * (couple the two samples; Renyi divergence is jointly quasi-convex). */
	rc = node_curve(t, node->first_child, a, n, out, e);
	if (rc != ERR_OK)
		return rc;
	if (node->batch == node->n)
		return ERR_OK; /* the whole dataset: no amplification */
	gamma = (double)node->batch / (double)node->n;

	memset(&w, 0, sizeof(w));
	w.log_gamma = log(gamma);
	w.gaussian = child->type == DP_EVENT_GAUSSIAN;
	if (w.gaussian) {
		w.lem1_inf = INFINITY;
	} else if (eps_inf(t, node->first_child, &einf)) {
		w.lem1_inf = log_abs_expm1(einf);
		amp_inf = log1p(gamma * expm1(einf)); /* BBG18, delta = 0 */
	} else {
		/* WBK19 Theorem 9 as stated needs eps(inf); docs/privacy-model.md §3 says a
		 * base without one fails closed.  Only a plain gaussian has the
		 * specialised Theorem 27 here. */
		err_set(e, ERR_INVALID,
			"sampled_without_replacement of a %s event cannot be bounded: the base "
			"needs a pure-DP bound or must be one gaussian",
			dp_event_type_name(child->type));
		err_detail(e, "WBK19 Theorem 9 needs eps(infinity) of the base mechanism");
		return ERR_INVALID;
	}

	for (unsigned k = 0; k < n; k++) {
		if (!(a[k] <= RDP_MAX_SAMPLED_ORDER))
			return err_set(e, ERR_INVALID,
				       "orders above %d are not supported under sampling",
				       RDP_MAX_SAMPLED_ORDER);
		if (ceil(a[k]) > top)
			top = (unsigned)ceil(a[k]);
	}

	/* cum[j] = (j - 1) eps(j) for j = 2..top (+1 for the moments). */
	ints = calloc(top + 2, sizeof(*ints));
	cum = calloc(top + 2, sizeof(*cum));
	kk = calloc(top + 1, sizeof(*kk));
	if (ints == NULL || cum == NULL || kk == NULL) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	for (unsigned j = 0; j <= top; j++)
		ints[j] = (double)j;
	if (w.gaussian) {
		double z = child->noise_multiplier;

		for (unsigned j = 2; j <= top; j++)
			cum[j] = (double)j * (double)(j - 1) / (2.0 * z * z);
		log_pv = calloc(top + 2, sizeof(*log_pv));
		if (log_pv == NULL) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			goto out;
		}
		/* E[(Y - 1)^2] = e^{eps(2)} - 1 exactly; integrate the others. */
		log_pv[2] = log_abs_expm1(1.0 / (z * z));
		for (unsigned l = 4; l <= top + 1; l += 2) {
			rc = pv_log_moment(z, l, &log_pv[l], e);
			if (rc != ERR_OK)
				goto out;
		}
	} else {
		rc = node_curve(t, node->first_child, ints + 2, top - 1, cum + 2, e);
		if (rc != ERR_OK)
			goto out;
		for (unsigned j = 2; j <= top; j++)
			cum[j] *= (double)(j - 1);
	}
	w.cum = cum;
	w.log_pv = log_pv;

	/* K at the integer orders the grid needs. */
	for (unsigned j = 0; j <= top; j++)
		kk[j] = NAN;
	for (unsigned k = 0; k < n; k++) {
		unsigned f = a[k] < 2.0 ? 2 : (unsigned)floor(a[k]);
		unsigned c = a[k] < 2.0 ? 2 : (unsigned)ceil(a[k]);

		if (isnan(kk[f]))
			kk[f] = wor_cumulant(&w, f);
		if (isnan(kk[c]))
			kk[c] = wor_cumulant(&w, c);
	}
	for (unsigned k = 0; k < n; k++) {
		double v;

		if (a[k] < 2.0) {
			/* alpha in (1, 2): RDP is non-decreasing in alpha (van Erven &
			 * Harremoes 2014, Thm 3), so RDP(alpha) <= RDP(2) = K(2).  The
			 * same follows from Corollary 10: K is convex with K(1) = 0,
			 * so K(alpha) <= (alpha - 1) K(2). */
			v = kk[2];
		} else if (is_integer(a[k])) {
			v = kk[(unsigned)a[k]] / (a[k] - 1.0);
		} else {
			/* Corollary 10: linear interpolation of the convex cumulant. */
			unsigned f = (unsigned)floor(a[k]);
			double s = a[k] - f;

			v = ((1.0 - s) * kk[f] + s * kk[f + 1]) / (a[k] - 1.0);
		}
		out[k] = fmin(fmin(out[k], v), amp_inf);
	}
	rc = ERR_OK;
out:
	free(ints);
	free(cum);
	free(log_pv);
	free(kk);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Poisson sampling of a Gaussian (MTZ19)                              */

/*
 * log A_alpha at integer alpha, where RDP = log A / (alpha - 1) and
 *	A = sum_{i=0}^{alpha} C(alpha, i) (1-q)^{alpha-i} q^i e^{(i^2 - i)/(2 s^2)}.
 * Since the binomial weights sum to 1, A - 1 = sum_{i>=2} C(alpha, i)
 * (1-q)^{alpha-i} q^i expm1((i^2 - i)/(2 s^2)), a sum of positive terms:
 * log A = log1p(that) is never negative, even after rounding.
 */
static double
poisson_log_a_int(double q, double s, unsigned alpha)
{
	double lc = 0.0, sum = -INFINITY, lq = log(q), l1q = log1p(-q);

	for (unsigned i = 1; i <= alpha; i++) {
		lc += log((double)(alpha - i + 1)) - log((double)i);
		if (i < 2)
			continue;
		sum = log_add(sum,
			      lc + (double)(alpha - i) * l1q + (double)i * lq +
				      log_abs_expm1((double)i * (double)(i - 1) / (2.0 * s * s)));
	}
	return log1p_exp(sum);
}

/*
 * log A_alpha at fractional alpha (MTZ19 Section 3.3): A = A0 + A1 with
 *	A0 = sum_i C(alpha,i) q^i (1-q)^{alpha-i} e^{(i^2-i)/(2s^2)}
 *	         (1/2) erfc((i - z0)/(sqrt 2 s)),
 *	A1 = sum_i C(alpha,i) q^{alpha-i} (1-q)^i e^{((alpha-i)^2-(alpha-i))/(2s^2)}
 *	         (1/2) erfc((z0 - (alpha-i))/(sqrt 2 s)),
 * z0 = s^2 log(1/q - 1) + 1/2.  For i > alpha the binomials alternate in
 * sign; summing their absolute values (as dp_accounting does) gives an
 * upper bound (on z = 2.5, q = 0.01, alpha = 1.5 it is 3 % above the
 * integral).
 *
 * Truncation, made rigorous here (dp_accounting stops on a heuristic).  For
 * x > 0, Phi(-x) <= min(1/2, 1/(x sqrt(2 pi))) e^{-x^2/2}.  With x =
 * (i - z0)/s (i > z0) the exponents of a term of A0 combine to
 *	term_i <= |C(alpha,i)| (1-q)^alpha e^{-z0^2/(2s^2)} m0,
 *	m0 = min(1/2, s / ((i - z0) sqrt(2 pi))),
 * and likewise for A1 with x = (i - alpha + z0)/s when i > alpha - z0.  For
 * i > alpha, |C(alpha,i+1)| = |C(alpha,i)| (i-alpha)/(i+1) <=
 * |C(alpha,i)| (i/(i+1))^{alpha+1} (Bernoulli), so sum_{i>N} |C(alpha,i)| <=
 * |C(alpha,N)| N / alpha.  Hence, once N >= max(z0, alpha - z0, alpha + 1),
 * everything after term N is at most
 *	(1-q)^alpha e^{-z0^2/(2s^2)} (m0 + m1) |C(alpha,N)| N / alpha
 * with m0, m1 taken at i = N + 1; it is added.  We stop when that bound is
 * e^-25 below A - 1 (the quantity the RDP is made of); false when that
 * does not happen within FRAC_MAX_TERMS terms (the caller then
 * interpolates integer orders, a looser but rigorous bound).
 *
 * Rounding.  log A is tiny when the RDP is (1e-8 for q = 1e-4, z = 1) while
 * the leading terms are O(1) in log space, so a rounding error of one term
 * is large relative to the result.  Each log-term is a sum of components
 * c_k computed to relative accuracy u, so to first order the log of the
 * sum moves by at most ~ u sum_i w_i sum_k |c_k|, w_i the term's share;
 * 16 times that plus 16 u |log A| is added, keeping the result above the
 * exact series (checked against 50-digit sums in tests/unit/test_rdp.c).
 */
static bool
poisson_log_a_frac(double q, double s, double alpha, double *ret)
{
	double a0 = -INFINITY, a1 = -INFINITY, lq = log(q), l1q = log1p(-q), lc = 0.0;
	double z0 = s * s * log(1.0 / q - 1.0) + 0.5;
	double start = fmax(fmax(z0, alpha - z0), alpha + 1.0);
	double lconst = alpha * l1q - z0 * z0 / (2.0 * s * s);

	double werr = -INFINITY; /* log sum_i e^{s_i} (sum of |components| of s_i) */

	for (int i = 0; i < FRAC_MAX_TERMS; i++) {
		double j = alpha - i, s0, s1, total, tail, m0, m1, e0, e1, p0, p1, c0, c1;

		if (i > 0)
			lc += log(fabs(alpha - i + 1)) - log((double)i); /* log |C(alpha, i)| */
		e0 = ((double)i * i - i) / (2.0 * s * s);
		e1 = (j * j - j) / (2.0 * s * s);
		p0 = ag_log_phi((z0 - i) / s);
		p1 = ag_log_phi((j - z0) / s);
		s0 = lc + i * lq + j * l1q + e0 + p0;
		s1 = lc + j * lq + i * l1q + e1 + p1;
		c0 = fabs(lc) + fabs(i * lq) + fabs(j * l1q) + fabs(e0) + fabs(p0);
		c1 = fabs(lc) + fabs(j * lq) + fabs(i * l1q) + fabs(e1) + fabs(p1);
		a0 = log_add(a0, s0);
		a1 = log_add(a1, s1);
		werr = log_add(werr, log_add(s0 + log(c0), s1 + log(c1)));
		total = log_add(a0, a1);
		if (isnan(total))
			return false;
		if (i < start || !(total > 0.0))
			continue;
		m0 = fmin(0.5, s / ((i + 1 - z0) * SQRT_2PI));
		m1 = fmin(0.5, s / ((i + 1 - alpha + z0) * SQRT_2PI));
		tail = lconst + log(m0 + m1) + lc + log(i / alpha);
		if (tail < log_abs_expm1(total) - 25.0) {
			*ret = log_add(total, tail) +
			       16.0 * DBL_EPSILON * (exp(werr - total) + fabs(total));
			return isfinite(*ret);
		}
	}
	return false;
}

static enum err_code
poisson_curve(const struct dp_event_tree *t, unsigned i, const double *a, unsigned n, double *out,
	      struct err *e)
{
	const struct dp_event *node = &t->node[i], *child = &t->node[node->first_child];
	double q = node->sampling_rate, s;

	if (node->relation != DP_ADD_REMOVE)
		return err_set(e, ERR_INVALID,
			       "poisson_sampled is accounted for add_remove events only");
	if (child->type != DP_EVENT_GAUSSIAN)
		return err_set(e, ERR_INVALID,
			       "poisson_sampled is accounted for one gaussian event only, not %s",
			       dp_event_type_name(child->type));
	s = child->noise_multiplier;
	for (unsigned k = 0; k < n; k++) {
		double base = a[k] / (2.0 * s * s), v, la;

		if (a[k] > RDP_MAX_SAMPLED_ORDER)
			return err_set(e, ERR_INVALID,
				       "orders above %d are not supported under sampling",
				       RDP_MAX_SAMPLED_ORDER);
		if (q == 1.0) {
			out[k] = base;
			continue;
		}
		if (is_integer(a[k])) {
			v = poisson_log_a_int(q, s, (unsigned)a[k]) / (a[k] - 1.0);
		} else if (poisson_log_a_frac(q, s, a[k], &la)) {
			v = la / (a[k] - 1.0);
		} else if (a[k] < 2.0) {
			v = poisson_log_a_int(q, s, 2); /* RDP(alpha) <= RDP(2) */
		} else {
			/* The cumulant log A is convex in alpha: interpolate. */
			double f = floor(a[k]), r = a[k] - f;

			v = ((1.0 - r) * poisson_log_a_int(q, s, (unsigned)f) +
			     r * poisson_log_a_int(q, s, (unsigned)f + 1)) /
			    (a[k] - 1.0);
		}
		/* Sampling never costs more than the base mechanism. */
		out[k] = fmin(v, base);
	}
	return ERR_OK;
}

/* ------------------------------------------------------------------ */
/* Private selection with a random number of repetitions               */

static enum err_code node_curve(const struct dp_event_tree *t, unsigned i, const double *a,
				unsigned n, double *out, struct err *e);

/*
 * The cap of a selection node with k_max >= 1 (privacy/selection.h;
 * docs/privacy-model.md §3, "capped selection"): the released law of the
 * capped run is within a factor 1 + r1 above, and 1/(1 + r2) below, the
 * uncapped one's, on both neighbours; so at order lambda
 *	D(capped) <= D(uncapped) + lambda/(lambda - 1) log(1 + r1) + log(1 + r2).
 * Conditioning K >= 1 (Poisson) only lowers the divergence.  Nothing to
 * add without a cap.
 */
static enum err_code
selection_cap_term(const struct dp_event *node, const double *a, unsigned n, double *out,
		   struct err *e)
{
	struct selection_dist d;
	double r1, r2;
	enum err_code rc;

	if (node->k_max == 0)
		return ERR_OK;
	if ((rc = selection_dist_from_event(node, &d, e)) != ERR_OK ||
	    (rc = selection_cap_ratios(&d, &r1, &r2, e)) != ERR_OK)
		return rc;
	for (unsigned k = 0; k < n; k++)
		out[k] += a[k] / (a[k] - 1.0) * log1p(r1) + log1p(r2);
	return ERR_OK;
}

/*
 * The orders lambda_hat ranges over in the selection curves: those of the
 * default grid up to the largest order evaluated (any lambda_hat > 1 gives
 * a valid bound).  On the default grid this is the whole grid; for a
 * calibration's grid cut at some order it spares the child's curve at the
 * high orders, which cost most (WBK19 sums over every integer order).
 * Falls back to the evaluation orders themselves when none is below.
 */
static void
selection_hat_grid(const double *a, unsigned n, struct rdp_grid *ret)
{
	double top = 0.0;
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		top = fmax(top, a[i]);
	rdp_grid_default(ret);
	for (unsigned i = 0; i < ret->n; i++)
		if (ret->order[i] <= top)
			ret->order[k++] = ret->order[i];
	ret->n = k;
	if (k == 0) {
		ret->n = n < RDP_MAX_ORDERS ? n : RDP_MAX_ORDERS;
		memcpy(ret->order, a, ret->n * sizeof(*a));
	}
}

/* The child's curve at the hat orders (hat_rdp) and at the evaluation
 * orders (out): computed once when the two grids are the same. */
static enum err_code
child_curves(const struct dp_event_tree *t, const struct dp_event *node, const struct rdp_grid *hat,
	     double *hat_rdp, const double *a, unsigned n, double *out, struct err *e)
{
	enum err_code rc = node_curve(t, node->first_child, a, n, out, e);

	if (rc != ERR_OK)
		return rc;
	if (hat->n == n && memcmp(hat->order, a, n * sizeof(*a)) == 0) {
		memcpy(hat_rdp, out, n * sizeof(*out));
		return ERR_OK;
	}
	return node_curve(t, node->first_child, hat->order, hat->n, hat_rdp, e);
}

/*
 * Papernot & Steinke 2022, Theorem 2.  Let Q be (lambda, eps)-RDP and
 * (lambda_hat, eps_hat)-RDP, with lambda in (1, inf), lambda_hat in
 * [1, inf), eta in (-1, inf), gamma in (0, 1).  Let A run Q independently
 * K ~ D_{eta,gamma} times, where P[K = k] is proportional to
 * C(k + eta - 1, k) (1 - gamma)^k for k = 1, 2, ..., and output the best
 * of the K outputs (any selection rule that is a function of the outputs).
 * Then A is (lambda, eps')-RDP with
 *
 *	eps' = eps + (1 + eta)(1 - 1/lambda_hat) eps_hat
 *	           + (1 + eta) log(1/gamma) / lambda_hat + log E[K] / (lambda - 1),
 *
 * E[K] as in dp_selection_tnb_mean.  lambda_hat is free: every choice is
 * a valid bound, so we take the minimum over selection_hat_grid's orders
 * (all > 1; lambda_hat = 1 would need the KL divergence, which the tree
 * does not give).  Conditions checked here (fail closed): eta > -1,
 * 0 < gamma < 1, E[K] finite and >= 1, every base value finite.
 */
static enum err_code
selection_tnb_curve(const struct dp_event_tree *t, unsigned i, const double *a, unsigned n,
		    double *out, struct err *e)
{
	const struct dp_event *node = &t->node[i];
	struct rdp_grid hat;
	double hat_rdp[RDP_MAX_ORDERS], best = INFINITY, eta = node->eta, gamma = node->gamma;
	double mean = dp_selection_tnb_mean(eta, gamma), log_mean;
	enum err_code rc;

	if (!(isfinite(eta) && eta > -1.0 && gamma > 0.0 && gamma < 1.0) || !isfinite(mean) ||
	    !(mean >= 1.0))
		return err_set(e, ERR_INVALID,
			       "selection_tnb needs eta > -1 and gamma in (0, 1) (Theorem 2)");
	log_mean = log(mean);
	selection_hat_grid(a, n, &hat);
	if ((rc = child_curves(t, node, &hat, hat_rdp, a, n, out, e)) != ERR_OK)
		return rc;
	for (unsigned k = 0; k < hat.n; k++) {
		double lh = hat.order[k], v;

		if (!(lh > 1.0) || !isfinite(hat_rdp[k]))
			return err_set(e, ERR_NUMERIC, "selection_tnb: base curve not usable");
		v = (1.0 + eta) * (1.0 - 1.0 / lh) * hat_rdp[k] + (1.0 + eta) * -log(gamma) / lh;
		if (v < best)
			best = v;
	}
	if (!isfinite(best))
		return err_set(e, ERR_NUMERIC, "selection_tnb: no usable lambda_hat");
	for (unsigned k = 0; k < n; k++)
		if (!(a[k] > 1.0))
			return err_set(e, ERR_INVALID, "selection_tnb needs orders above 1");
	for (unsigned k = 0; k < n; k++)
		out[k] += best + log_mean / (a[k] - 1.0);
	return selection_cap_term(node, a, n, out, e);
}

/*
 * Papernot & Steinke 2022, Theorem 6.  Let Q be (lambda, eps)-RDP and
 * (eps_hat, delta_hat)-DP with e^eps_hat <= 1 + 1/(lambda - 1), and
 * K ~ Poisson(mu) (K = 0 outputs nothing).  Then the best of the K outputs
 * is (lambda, eps')-RDP with
 *
 *	eps' = eps + mu delta_hat + log(mu) / (lambda - 1).
 *
 * At each order lambda we take eps_hat = log(1 + 1/(lambda - 1)) (the
 * largest allowed) and delta_hat from Q's own RDP curve at
 * selection_hat_grid's orders by the conversion of rdp_to_delta (Canonne, Kamath & Steinke 2020,
 * Prop. 12), minimised over its orders lambda_hat, capped at 1.
 */
static enum err_code
selection_poisson_curve(const struct dp_event_tree *t, unsigned i, const double *a, unsigned n,
			double *out, struct err *e)
{
	const struct dp_event *node = &t->node[i];
	struct rdp_grid hat;
	double hat_rdp[RDP_MAX_ORDERS], hat_c[RDP_MAX_ORDERS], mu = node->mu;
	enum err_code rc;

	if (!isfinite(mu) || !(mu > 0.0))
		return err_set(e, ERR_INVALID, "selection_poisson needs mu > 0 (Theorem 6)");
	selection_hat_grid(a, n, &hat);
	if ((rc = child_curves(t, node, &hat, hat_rdp, a, n, out, e)) != ERR_OK)
		return rc;
	/* The part of the conversion that does not depend on eps_hat. */
	for (unsigned h = 0; h < hat.n; h++) {
		double lh = hat.order[h];

		if (!(lh > 1.0))
			return err_set(e, ERR_NUMERIC, "selection_poisson: base curve not usable");
		hat_c[h] = (lh - 1.0) * hat_rdp[h] + (lh - 1.0) * log1p(-1.0 / lh) - log(lh);
	}
	for (unsigned k = 0; k < n; k++) {
		double eps_hat, log_delta = 0.0; /* delta_hat <= 1 always */

		if (!(a[k] > 1.0))
			return err_set(e, ERR_INVALID, "selection_poisson needs orders above 1");
		eps_hat = log1p(1.0 / (a[k] - 1.0));
		for (unsigned h = 0; h < hat.n; h++) {
			double v = hat_c[h] - (hat.order[h] - 1.0) * eps_hat;

			if (!isfinite(hat_rdp[h]) || isnan(v))
				return err_set(e, ERR_NUMERIC,
					       "selection_poisson: base curve not usable");
			if (v < log_delta)
				log_delta = v;
		}
		out[k] += mu * exp(log_delta) + log(mu) / (a[k] - 1.0);
	}
	return selection_cap_term(node, a, n, out, e);
}

/* ------------------------------------------------------------------ */
/* The tree                                                            */

static enum err_code
check_curve(const struct dp_event *node, const double *a, unsigned n, const double *out,
	    struct err *e)
{
	for (unsigned k = 0; k < n; k++)
		if (!isfinite(out[k]) || !(out[k] > 0.0)) {
			err_set(e, ERR_NUMERIC, "the Rényi curve of a %s event is not usable",
				dp_event_type_name(node->type));
			err_detail(e, "RDP at order %.17g is %.17g (fails closed)", a[k], out[k]);
			return ERR_NUMERIC;
		}
	return ERR_OK;
}

static enum err_code
node_curve(const struct dp_event_tree *t, unsigned i, const double *a, unsigned n, double *out,
	   struct err *e)
{
	const struct dp_event *node = &t->node[i];
	double *tmp = NULL;
	enum err_code rc = ERR_OK;

	switch (node->type) {
	case DP_EVENT_GAUSSIAN:
		for (unsigned k = 0; k < n; k++)
			out[k] = a[k] / (2.0 * node->noise_multiplier * node->noise_multiplier);
		break;
	case DP_EVENT_LAPLACE:
		for (unsigned k = 0; k < n; k++)
			out[k] = laplace_rdp(node->noise_multiplier, a[k]);
		break;
	case DP_EVENT_PURE:
		for (unsigned k = 0; k < n; k++)
			out[k] = pure_rdp(node->epsilon, a[k]);
		break;
	case DP_EVENT_BOUNDED_RANGE:
		for (unsigned k = 0; k < n; k++)
			/* eps-bounded range: eps^2/8-zCDP (Cesar & Rogers),
			 * and eps-DP, so the randomized-response bound too */
			out[k] = fmin(pure_rdp(node->epsilon, a[k]),
				      0.125 * a[k] * node->epsilon * node->epsilon);
		break;
	case DP_EVENT_ZCDP:
		for (unsigned k = 0; k < n; k++)
			out[k] = node->rho * a[k];
		break;
	case DP_EVENT_APPROX:
		return err_set(e, ERR_INVALID, RDP_MSG_NO_CURVE);
	case DP_EVENT_SAMPLED_WOR:
		rc = wor_curve(t, i, a, n, out, e);
		break;
	case DP_EVENT_POISSON:
		rc = poisson_curve(t, i, a, n, out, e);
		break;
	case DP_EVENT_SELF_COMPOSED:
		rc = node_curve(t, node->first_child, a, n, out, e);
		if (rc == ERR_OK)
			for (unsigned k = 0; k < n; k++)
				out[k] *= (double)node->count;
		break;
	case DP_EVENT_COMPOSED:
	case DP_EVENT_PARALLEL:
	case DP_EVENT_MIXTURE: /* the worst child at every order (event.h) */
		rc = node_curve(t, node->first_child, a, n, out, e);
		if (rc != ERR_OK || node->n_children == 1)
			break;
		tmp = calloc(n, sizeof(*tmp));
		if (tmp == NULL)
			return err_set(e, ERR_NOMEM, "out of memory");
		for (unsigned c = 1; c < node->n_children && rc == ERR_OK; c++) {
			rc = node_curve(t, node->first_child + c, a, n, tmp, e);
			if (rc != ERR_OK)
				break;
			for (unsigned k = 0; k < n; k++)
				out[k] = node->type == DP_EVENT_COMPOSED ? out[k] + tmp[k]
									 : fmax(out[k], tmp[k]);
		}
		free(tmp);
		break;
	case DP_EVENT_SELECTION_TNB:
		rc = selection_tnb_curve(t, i, a, n, out, e);
		break;
	case DP_EVENT_SELECTION_POISSON:
		rc = selection_poisson_curve(t, i, a, n, out, e);
		break;
	case DP_EVENT__COUNT:
		return err_set(e, ERR_INTERNAL, "unknown privacy event type");
	}
	if (rc != ERR_OK)
		return rc;
	return check_curve(node, a, n, out, e);
}

enum err_code
rdp_curve(const struct dp_event_tree *t, const struct rdp_grid *g, double *ret_rdp, struct err *e)
{
	double out[RDP_MAX_ORDERS];
	enum err_code rc;

	if ((rc = dp_event_check(t, e)) != ERR_OK || (rc = rdp_grid_check(g, e)) != ERR_OK)
		return rc;
	rc = node_curve(t, 0, g->order, g->n, out, e);
	if (rc != ERR_OK)
		return rc;
	memcpy(ret_rdp, out, g->n * sizeof(*out));
	return ERR_OK;
}

/* ------------------------------------------------------------------ */
/* Conversions                                                         */

static enum err_code
check_input(const struct rdp_grid *g, const double *rdp, struct err *e)
{
	enum err_code rc = rdp_grid_check(g, e);

	if (rc != ERR_OK)
		return rc;
	for (unsigned k = 0; k < g->n; k++)
		if (!isfinite(rdp[k]) || !(rdp[k] > 0.0)) {
			err_set(e, ERR_NUMERIC, "a Rényi curve value is not finite and positive");
			err_detail(e, "RDP at order %.17g is %.17g", g->order[k], rdp[k]);
			return ERR_NUMERIC;
		}
	return ERR_OK;
}

enum err_code
rdp_to_epsilon(const struct rdp_grid *g, const double *rdp, double delta, double *ret_epsilon,
	       double *ret_order, struct err *e)
{
	double best = INFINITY, best_order = 0.0, ld;
	enum err_code rc;

	if (!(delta > 0.0 && delta < 1.0))
		return err_set_field(e, ERR_INVALID, "privacy.delta",
				     "'privacy.delta' must be in (0, 1)");
	if ((rc = check_input(g, rdp, e)) != ERR_OK)
		return rc;
	ld = log(delta);
	for (unsigned k = 0; k < g->n; k++) {
		double a = g->order[k];
		double v = rdp[k] + log1p(-1.0 / a) - (ld + log(a)) / (a - 1.0);

		if (!isfinite(v))
			return err_set(e, ERR_NUMERIC, "the (epsilon, delta) conversion overflows");
		if (v < best) {
			best = v;
			best_order = a;
		}
	}
	/*
	 * A minimum below 0 (a small curve at a large delta: the term
	 * (log(1/delta) - log a) / (a - 1) is negative for a > 1/delta) is
	 * still a bound, reported as epsilon = 0.  At the minimising order a
	 * the conversion, read the other way (rdp_to_delta), gives the event
	 * (0, delta_a(0))-DP with delta_a(0) = exp((a - 1) rdp(a) + (a - 1)
	 * log(1 - 1/a) - log a); delta_a(eps) decreases in eps and equals
	 * delta at the value v < 0 found, so delta_a(0) < delta: the event is
	 * (0, delta)-DP, and (eps', delta)-DP for every eps' >= 0.  Only a
	 * curve that passed check_input gets here (finite and positive at
	 * every order: a zero curve, e.g. an underflowed Gaussian, is still
	 * refused above, never converted to 0).  The clamp keeps eps(delta)
	 * monotone in the curve, which calibration's bisection relies on.
	 */
	if (!(best >= 0.0))
		best = 0.0;
	*ret_epsilon = best;
	*ret_order = best_order;
	return ERR_OK;
}

enum err_code
rdp_to_delta(const struct rdp_grid *g, const double *rdp, double epsilon, double *ret_delta,
	     double *ret_order, struct err *e)
{
	double best = INFINITY, best_order = 0.0, delta;
	enum err_code rc;

	if (!isfinite(epsilon) || epsilon < 0.0)
		return err_set_field(e, ERR_INVALID, "privacy.epsilon",
				     "'privacy.epsilon' must be finite and non-negative");
	if ((rc = check_input(g, rdp, e)) != ERR_OK)
		return rc;
	for (unsigned k = 0; k < g->n; k++) {
		double a = g->order[k];
		double v = (a - 1.0) * (rdp[k] - epsilon) + (a - 1.0) * log1p(-1.0 / a) - log(a);

		if (!isfinite(v))
			return err_set(e, ERR_NUMERIC, "the (epsilon, delta) conversion overflows");
		if (v < best) {
			best = v;
			best_order = a;
		}
	}
	delta = best >= 0.0 ? 1.0 : exp(best);
	if (!(delta > 0.0)) {
		err_set(e, ERR_NUMERIC, "delta underflows");
		err_detail(e, "log delta %.17g at order %.17g (fails closed)", best, best_order);
		return ERR_NUMERIC;
	}
	*ret_delta = delta;
	*ret_order = best_order;
	return ERR_OK;
}
