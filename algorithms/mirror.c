/*
 * mirror.c - the entropic map (simplex, and the l1 ball by lifting) and the
 * p-norm map with its exact constrained mirror step.
 *
 * References: docs/algorithms/geometry.md: section 1 (entropic step on
 * log-weights), section 2 (p-norm map, p = 1 + 1/max(ln d, 1), kappa_p,
 * and the numerics for p near 1: max-normalised norms, powers through
 * logs, 0^{p-1} = 0) and section 3 (the constrained step MS).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "mirror.h"

/* ---- entropic ---- */

void
mirror_entropic_step(double *theta, const double *g, double eta, size_t d)
{
	double m = -INFINITY;

	for (size_t j = 0; j < d; j++) {
		theta[j] -= eta * g[j];
		m = fmax(m, theta[j]);
	}
	if (isfinite(m))
		for (size_t j = 0; j < d; j++)
			theta[j] -= m;
}

/*
 * x_j = scale e^{theta_j - m} / Z with m = max theta and Z = sum_j
 * e^{theta_j - m} in [1, d]: every exponent is <= 0, so nothing overflows,
 * the largest weight is exactly 1 and Z cannot underflow.  Z is summed
 * with Neumaier's compensation (the terms span many magnitudes).
 */
static void
softmax_into(const double *theta, size_t n, size_t stride, double m, double *ret_w, double *ret_z)
{
	double s = 0.0, comp = 0.0;

	for (size_t j = 0; j < n; j++) {
		double w = exp(theta[j * stride] - m), t = s + w;

		if (ret_w != NULL) /* the weights too (stride 1 callers) */
			ret_w[j] = w;

		comp += fabs(s) >= fabs(w) ? (s - t) + w : (w - t) + s;
		s = t;
	}
	*ret_z = s + comp;
}

void
mirror_entropic_point(const double *theta, size_t d, double scale, double *ret_x)
{
	double m = -INFINITY, z;

	for (size_t j = 0; j < d; j++)
		m = fmax(m, theta[j]);
	/* ret_x holds the weights e^{theta_j - m} first (written after theta_j
	 * is read: ret_x may alias theta), then the point */
	softmax_into(theta, d, 1, m, ret_x, &z);
	for (size_t j = 0; j < d; j++)
		ret_x[j] = scale * (ret_x[j] / z);
}

double
mirror_kl(const double *x, const double *y, size_t d)
{
	double s = 0.0;

	for (size_t j = 0; j < d; j++) {
		if (x[j] > 0.0) {
			if (!(y[j] > 0.0))
				return INFINITY;
			s += x[j] * log(x[j] / y[j]);
		}
		s += y[j] - x[j];
	}
	return s;
}

/* ---- l1 ball by lifting ---- */

void
mirror_l1_step(double *theta, const double *g, double eta, double radius, size_t d)
{
	double m = -INFINITY;

	for (size_t j = 0; j < d; j++) {
		theta[j] -= eta * radius * g[j];
		theta[d + j] += eta * radius * g[j];
		m = fmax(m, fmax(theta[j], theta[d + j]));
	}
	if (isfinite(m))
		for (size_t j = 0; j < 2 * d; j++)
			theta[j] -= m;
}

void
mirror_l1_point(const double *theta, size_t d, double radius, double *ret_x)
{
	double m = -INFINITY, z;

	for (size_t j = 0; j < 2 * d; j++)
		m = fmax(m, theta[j]);
	softmax_into(theta, 2 * d, 1, m, NULL, &z);
	for (size_t j = 0; j < d; j++)
		ret_x[j] = radius * ((exp(theta[j] - m) - exp(theta[d + j] - m)) / z);
}

/* ---- p-norm map ---- */

double
mirror_pnorm_p(size_t d)
{
	return 1.0 + 1.0 / fmax(log((double)d), 1.0);
}

double
mirror_pnorm_kappa(double p, size_t d)
{
	return pow((double)d, 1.0 - 1.0 / p);
}

void
mirror_pnorm_init(struct mirror_pnorm *m, size_t d, const double *a)
{
	m->d = d;
	m->p = mirror_pnorm_p(d);
	m->c = 1.0 / (2.0 * (m->p - 1.0));
	m->a = a;
}

static double
centre(const struct mirror_pnorm *m, size_t j)
{
	return m->a != NULL ? m->a[j] : 0.0;
}

/*
 * ||x - a||_p (a may be NULL) as M (sum (|y_j|/M)^p)^{1/p}, M = max |y_j|:
 * the q-th powers of the dual norm have q = 1 + ln d (about 15 at d = 10^6),
 * so unnormalised sums overflow from |y| ~ 1e20 on.  *ret_max gets M.
 */
static double
norm_shifted(const double *x, const double *a, size_t d, double p, double *ret_max)
{
	double mx = 0.0, s = 0.0;

	for (size_t j = 0; j < d; j++)
		mx = fmax(mx, fabs(x[j] - (a != NULL ? a[j] : 0.0)));
	*ret_max = mx;
	if (mx == 0.0 || !isfinite(mx))
		return mx;
	for (size_t j = 0; j < d; j++)
		s += pow(fabs(x[j] - (a != NULL ? a[j] : 0.0)) / mx, p);
	return mx * pow(s, 1.0 / p);
}

double
mirror_pnorm_value(const struct mirror_pnorm *m, const double *x)
{
	double mx, n = norm_shifted(x, m->a, m->d, m->p, &mx);

	return m->c * n * n;
}

/*
 * With y = x - a, M = max|y_j|, z_j = |y_j| / M and n = ||z||_p in
 * [1, d^{1/p}]: 2c ||y||^{2-p} |y_j|^{p-1} = 2c M n^{2-p} z_j^{p-1}, a
 * product of bounded factors and M.
 */
void
mirror_pnorm_grad(const struct mirror_pnorm *m, const double *x, double *ret_theta)
{
	double mx, n = norm_shifted(x, m->a, m->d, m->p, &mx), f;

	if (mx == 0.0) {
		memset(ret_theta, 0, m->d * sizeof(*ret_theta));
		return;
	}
	f = 2.0 * m->c * mx * pow(n / mx, 2.0 - m->p);
	for (size_t j = 0; j < m->d; j++) {
		double y = x[j] - centre(m, j);

		ret_theta[j] = copysign(f * pow(fabs(y) / mx, m->p - 1.0), y);
	}
}

/* The same with q for p and 1/(2c) for 2c: ||theta||_q^{2-q} |theta_j|^{q-1}
 * = M n^{2-q} z_j^{q-1}, n = ||theta / M||_q in [1, d^{1/q}]. */
void
mirror_pnorm_grad_conj(const struct mirror_pnorm *m, const double *theta, double *ret_x)
{
	double q = m->p / (m->p - 1.0), mx, n = norm_shifted(theta, NULL, m->d, q, &mx), f;

	if (mx == 0.0) {
		for (size_t j = 0; j < m->d; j++)
			ret_x[j] = centre(m, j);
		return;
	}
	f = mx * pow(n / mx, 2.0 - q) / (2.0 * m->c);
	for (size_t j = 0; j < m->d; j++)
		ret_x[j] = centre(m, j) + copysign(f * pow(fabs(theta[j]) / mx, q - 1.0), theta[j]);
}

double
mirror_pnorm_bregman(const struct mirror_pnorm *m, const double *x, const double *y)
{
	double my, ny = norm_shifted(y, m->a, m->d, m->p, &my), lin = 0.0, f;

	if (my > 0.0) {
		f = 2.0 * m->c * my * pow(ny / my, 2.0 - m->p);
		for (size_t j = 0; j < m->d; j++) {
			double u = y[j] - centre(m, j);

			lin += copysign(f * pow(fabs(u) / my, m->p - 1.0), u) * (x[j] - y[j]);
		}
	}
	return mirror_pnorm_value(m, x) - m->c * ny * ny - lin;
}

/* ---- the exact constrained mirror step (docs/algorithms/geometry.md §3) ---- */

enum ms_outer { MS_FREE, MS_L1, MS_SIMPLEX, MS_LP };

struct ms {
	const struct mirror_pnorm *m;
	enum ms_outer outer;
	const double *theta;
	double pm1, qm1;  /* p - 1 and q - 1 = 1 / (p - 1) */
	double log2c;     /* log(2c) */
	double log_r;     /* log R (+inf without the local ball) */
	double nu;        /* the outer multiplier of the current tau-solve */
	double theta_max; /* ||theta||_inf, the scale of nu */
	double op;        /* the outer lp ball's exponent p' (MS_LP) */
	int evals;
};

/* sign(t)|t|^e */
static double
spow(double t, double e)
{
	return copysign(pow(fabs(t), e), t);
}

/*
 * MS-LP, one coordinate: the root x of
 *
 *	tau psi_p(x - a) + tau' psi_p'(x) = theta
 *
 * (tau' = nu >= 0 absorbs the outer multiplier: stationarity of
 * c||x - a||_p^2 - <theta, x> + nu_R ||x - a||_p + nu' ||x||_p' has the
 * gradients psi of both balls).  Divided by tau + tau' it reads
 * alpha psi_p(x - a) + beta psi_p'(x) = w with alpha + beta = 1 and
 * w = theta / (tau + tau'); the left side increases strictly in x, and
 * splitting w = alpha w + beta w shows the root lies between the two
 * single-term roots a + psi_p^{-1}(w) and psi_p'^{-1}(w).  Regula falsi
 * (Illinois) with a bisection every fourth step on that bracket, to a few
 * ulps: the derivative is infinite at x = a and x = 0 for p < 2, which
 * rules out a plain Newton iteration.
 */
static double
ms_coord_lp(const struct ms *s, double th, double a, double lt)
{
	double tau = exp(lt), den = tau + s->nu, w = th / den;
	double alpha = isinf(tau) ? 1.0 : tau / den, beta = 1.0 - alpha;
	double p = s->pm1 + 1.0, x1 = a + spow(w, s->qm1), x2 = spow(w, 1.0 / (s->op - 1.0));
	double lo = fmin(x1, x2), hi = fmax(x1, x2), flo, fhi;
	int side = 0;

	flo = alpha * spow(lo - a, p - 1.0) + beta * spow(lo, s->op - 1.0) - w;
	fhi = alpha * spow(hi - a, p - 1.0) + beta * spow(hi, s->op - 1.0) - w;
	for (int it = 0; it < 200; it++) {
		double t, ft;

		if (flo >= 0.0)
			return lo;
		if (fhi <= 0.0 || hi - lo <= 4.0 * DBL_EPSILON * fmax(fabs(lo), fabs(hi)))
			return hi;
		t = lo - flo * (hi - lo) / (fhi - flo);
		if (!(t > lo && t < hi) || it % 4 == 3)
			t = 0.5 * (lo + hi);
		ft = alpha * spow(t - a, p - 1.0) + beta * spow(t, s->op - 1.0) - w;
		if (ft > 0.0) {
			hi = t;
			fhi = ft;
			if (side == -1)
				flo *= 0.5;
			side = -1;
		} else {
			lo = t;
			flo = ft;
			if (side == 1)
				fhi *= 0.5;
			side = 1;
		}
	}
	return 0.5 * (lo + hi);
}

/*
 * One coordinate of the KKT solution for (tau = e^lt, nu)
 * (docs/algorithms/geometry.md §3): with psi(t) = sign(t)|t|^{p-1}, psi^{-1}(w) = sign(w)|w|^{q-1}
 * and t0 = tau psi(-a_j) (the value of tau psi(y_j) at x_j = 0),
 *
 *	l1 ball:  y_j = psi^{-1}((theta_j - nu) / tau)  if theta_j - nu > t0  (x_j > 0)
 *	          y_j = psi^{-1}((theta_j + nu) / tau)  if theta_j + nu < t0  (x_j < 0)
 *	          y_j = -a_j                            otherwise            (x_j = 0)
 *	simplex:  y_j = max(-a_j, psi^{-1}((theta_j - nu) / tau))
 *	free:     y_j = psi^{-1}(theta_j / tau).
 *
 * tau itself is never formed: |psi^{-1}(w / tau)| = e^{(q-1)(log|w| - lt)}
 * and t0 = -sign(a_j) e^{lt + (p-1) log|a_j|}, so no intermediate overflows
 * (t0 may round to +-inf, which still compares correctly; the logs of |y_j|
 * stay finite).  Returns y_j; *ret_log is log|y_j| (-inf for 0) and
 * *ret_zero says x_j = 0 exactly.
 */
static double
ms_coord(const struct ms *s, size_t j, double lt, double *ret_log, bool *ret_zero)
{
	double th = s->theta[j], a = centre(s->m, j), w = 0.0, t0, l;

	t0 = a == 0.0 ? 0.0 : -copysign(exp(lt + s->pm1 * log(fabs(a))), a);
	*ret_zero = false;
	switch (s->outer) {
	case MS_FREE:
		w = th;
		break;
	case MS_L1:
		if (th - s->nu > t0)
			w = th - s->nu;
		else if (th + s->nu < t0)
			w = th + s->nu;
		else
			goto clamp;
		break;
	case MS_SIMPLEX:
		if (!(th - s->nu > t0))
			goto clamp;
		w = th - s->nu;
		break;
	case MS_LP:
		if (s->nu == 0.0) {
			w = th;
			break;
		}
		l = ms_coord_lp(s, th, a, lt) - a;
		*ret_log = l == 0.0 ? -INFINITY : log(fabs(l));
		return l;
	}
	if (w == 0.0) {
		*ret_log = -INFINITY;
		return 0.0;
	}
	l = s->qm1 * (log(fabs(w)) - lt);
	*ret_log = l;
	return copysign(exp(l), w);
clamp:
	*ret_zero = true;
	*ret_log = a == 0.0 ? -INFINITY : log(fabs(a));
	return -a;
}

/*
 * One O(d) pass at (lt, s->nu): returns log ||y||_p (a max-normalised
 * log-sum-exp of p log|y_j|; -inf for y = 0); *ret_outer gets ||x||_1
 * (l1) or sum x (simplex); x (if not NULL) gets a + y.
 */
static double
ms_pass(struct ms *s, double lt, double *ret_outer, double *x)
{
	double mlog = -INFINITY, sum = 0.0, outer = 0.0, p = s->pm1 + 1.0;
	double olog = -INFINITY, osum = 0.0; /* log-sum-exp of p' log|x_j| (MS_LP) */

	s->evals++;
	for (size_t j = 0; j < s->m->d; j++) {
		double lg, xj, v;
		bool zero;
		double y = ms_coord(s, j, lt, &lg, &zero);

		xj = zero ? 0.0 : centre(s->m, j) + y;
		if (x != NULL)
			x[j] = xj;
		outer += s->outer == MS_L1 ? fabs(xj) : xj;
		if (s->outer == MS_LP && xj != 0.0) {
			double ov = s->op * log(fabs(xj));

			if (ov > olog) {
				osum = osum * exp(olog - ov) + 1.0;
				olog = ov;
			} else {
				osum += exp(ov - olog);
			}
		}
		if (lg == -INFINITY)
			continue;
		v = p * lg;
		if (v > mlog) {
			sum = sum * exp(mlog - v) + 1.0;
			mlog = v;
		} else {
			sum += exp(v - mlog);
		}
	}
	if (s->outer == MS_LP) /* log ||x||_p' */
		outer = olog == -INFINITY ? -INFINITY : (olog + log(osum)) / s->op;
	if (ret_outer != NULL)
		*ret_outer = outer;
	return mlog == -INFINITY ? -INFINITY : (mlog + log(sum)) / p;
}

typedef double (*ms_fn)(struct ms *s, double t);

/*
 * A root of f in [lo, hi] given f(lo), f(hi) of opposite signs (either
 * monotonicity), by the Illinois variant of regula falsi (superlinear on
 * smooth monotone f) with a bisection every fourth step, so that the
 * bracket at least halves every four evaluations whatever f does.  Stops
 * when f = 0 or the bracket is within 4 ulps of its ends (or tol_abs).
 * Returns the end of the final bracket on the side where f has the sign of
 * f(hi) (the side the callers treat as feasible), so results err inward.
 */
static double
ms_root(struct ms *s, ms_fn f, double lo, double flo, double hi, double fhi, double tol_abs)
{
	int side = 0;

	for (int it = 0; it < 400; it++) {
		double t, ft, tol = fmax(tol_abs, 4.0 * DBL_EPSILON * fmax(fabs(lo), fabs(hi)));

		if (flo == 0.0)
			return lo;
		if (fhi == 0.0 || hi - lo <= tol)
			return hi;
		t = lo - flo * (hi - lo) / (fhi - flo);
		if (!(t > lo && t < hi) || it % 4 == 3)
			t = 0.5 * (lo + hi);
		ft = f(s, t);
		if ((ft > 0.0) == (fhi > 0.0) || ft == 0.0) {
			hi = t;
			fhi = ft;
			if (side == -1)
				flo *= 0.5;
			side = -1;
		} else {
			lo = t;
			flo = ft;
			if (side == 1)
				fhi *= 0.5;
			side = 1;
		}
	}
	return hi;
}

/* tau = 2c ||y(tau)||_p^{2-p} in logs: F(lt) = lt - log 2c - (2-p) log N,
 * increasing with slope >= 1 (log N does not increase in lt). */
static double
ms_f_unc(struct ms *s, double lt)
{
	double ln = ms_pass(s, lt, NULL, NULL), two_p = 1.0 - s->pm1;

	return lt - s->log2c - (two_p == 0.0 ? 0.0 : two_p * ln);
}

/* ||y(tau)||_p = R in logs: decreasing in lt. */
static double
ms_f_ball(struct ms *s, double lt)
{
	return ms_pass(s, lt, NULL, NULL) - s->log_r;
}

/*
 * tau*(nu) = max(tau_unc, tau_R) of docs/algorithms/geometry.md §3 step 1, as its
 * log.  Because F = ms_f_unc has slope >= 1 in lt, its root lies between
 * lt0 and lt0 - F(lt0): an exact bracket from one evaluation.  The start
 * lt0 is the unconstrained closed form tau_0 = 2c (||theta||_q / 2c)^{2-p}
 * (or 2c for theta = 0).  If y = 0 for every tau (x = a solves the KKT
 * system), any tau does; lt0 is returned.  When ||y(tau_unc)||_p > R the
 * local ball binds and tau_R > tau_unc solves N = R; it is bracketed by
 * doubling steps up from tau_unc (N decreases to the norm of the clamped
 * part; if even that exceeds R the last step is kept: such a nu is far
 * from the outer root and only its side matters).
 */
static double
ms_tau(struct ms *s, bool *ret_ball)
{
	double q = s->qm1 + 1.0, mx, nq = norm_shifted(s->theta, NULL, s->m->d, q, &mx);
	double lt0 = nq > 0.0 ? s->log2c + (1.0 - s->pm1) * (log(nq) - s->log2c) : s->log2c;
	double f0 = ms_f_unc(s, lt0), lt, hi, fhi;

	*ret_ball = false;
	if (f0 == INFINITY) /* y = 0 whatever tau: inside every local ball */
		return lt0;
	if (f0 == 0.0)
		lt = lt0;
	else if (f0 < 0.0)
		lt = ms_root(s, ms_f_unc, lt0, f0, lt0 - f0, ms_f_unc(s, lt0 - f0), 0.0);
	else
		lt = ms_root(s, ms_f_unc, lt0 - f0, ms_f_unc(s, lt0 - f0), lt0, f0, 0.0);
	if (!isfinite(s->log_r) || ms_f_ball(s, lt) <= 0.0)
		return lt;
	*ret_ball = true;
	hi = lt;
	fhi = 1.0;
	for (double step = 1.0; step <= 0x1p12 && fhi > 0.0; step *= 2.0)
		fhi = ms_f_ball(s, hi = lt + step);
	if (fhi > 0.0)
		return hi;
	return ms_root(s, ms_f_ball, lt, ms_f_ball(s, lt), hi, fhi, 0.0);
}

/* The outer equation at nu: ||x||_1 - rho (l1) or sum x - s (simplex),
 * both non-increasing in nu; target is the outer set's radius. */
struct ms_outer_ctx {
	struct ms s;
	double target;
};

static double
ms_f_outer(struct ms *s, double nu)
{
	double outer;
	bool ball;

	s->nu = nu;
	ms_pass(s, ms_tau(s, &ball), &outer, NULL);
	return outer - ((struct ms_outer_ctx *)s)->target;
}

static enum err_code
ms_check(const struct mirror_pnorm *m, const struct constraint *outer, double R,
	 const double *theta, struct err *e)
{
	double tot = 0.0;

	if (!(m->d >= 1 && m->p > 1.0 && m->p <= 2.0 && isfinite(m->c) && m->c > 0.0))
		return err_set(e, ERR_INVALID, "the p-norm map needs d >= 1, 1 < p <= 2, c > 0");
	if (!(R > 0.0))
		return err_set(e, ERR_INVALID, "the local ball radius must be above 0");
	for (size_t j = 0; j < m->d; j++)
		if (!isfinite(theta[j]) || !isfinite(centre(m, j)))
			return err_set(e, ERR_NUMERIC, "mirror step on a non-finite point");
	if (outer == NULL)
		return ERR_OK;
	if (constraint_validate(outer, m->d, "", e) != ERR_OK)
		return ERR_INVALID;
	switch (constraint_ops_of(outer->kind)->pnorm_outer) {
	case CONSTRAINT_PNORM_OUTER_L1:
		for (size_t j = 0; j < m->d; j++)
			tot += fabs(centre(m, j));
		if (tot > outer->radius * (1.0 + 1e-9))
			return err_set(e, ERR_INVALID, "the centre a is outside the l1 ball");
		return ERR_OK;
	case CONSTRAINT_PNORM_OUTER_SIMPLEX:
		for (size_t j = 0; j < m->d; j++) {
			if (centre(m, j) < -1e-9 * outer->radius)
				return err_set(e, ERR_INVALID,
					       "the centre a is outside the simplex");
			tot += centre(m, j);
		}
		if (fabs(tot - outer->radius) > 1e-9 * outer->radius)
			return err_set(e, ERR_INVALID, "the centre a is outside the simplex");
		return ERR_OK;
	case CONSTRAINT_PNORM_OUTER_LP:
		if (m->a != NULL &&
		    norm_shifted(m->a, NULL, m->d, outer->p, &tot) > outer->radius * (1.0 + 1e-9))
			return err_set(e, ERR_INVALID, "the centre a is outside the lp ball");
		return ERR_OK;
	case CONSTRAINT_PNORM_OUTER_NONE:
		break;
	}
	return err_set(e, ERR_INVALID,
		       "the p-norm mirror step supports l1_ball, simplex and lp_ball, not %s",
		       constraint_kind_name(outer->kind));
}

/* The step's shape for an outer set that passed ms_check(). */
static enum ms_outer
ms_outer_of(const struct constraint *outer)
{
	if (outer == NULL)
		return MS_FREE;
	switch (constraint_ops_of(outer->kind)->pnorm_outer) {
	case CONSTRAINT_PNORM_OUTER_L1:
		return MS_L1;
	case CONSTRAINT_PNORM_OUTER_SIMPLEX:
		return MS_SIMPLEX;
	case CONSTRAINT_PNORM_OUTER_LP:
		return MS_LP;
	case CONSTRAINT_PNORM_OUTER_NONE:
		break;
	}
	return MS_FREE; /* unreachable: ms_check() refused the set */
}

enum err_code
mirror_pnorm_step(const struct mirror_pnorm *m, const struct constraint *outer, double R,
		  const double *theta, double *ret_x, struct mirror_step_info *info, struct err *e)
{
	struct ms_outer_ctx oc = { 0 };
	struct ms *s = &oc.s;
	double nu = 0.0, lt, lo, hi, flo, fhi, tot;
	enum err_code rc;
	bool ball;

	if ((rc = ms_check(m, outer, R, theta, e)) != ERR_OK)
		return rc;
	s->m = m;
	s->outer = ms_outer_of(outer);
	s->op = outer != NULL ? outer->p : 2.0;
	s->theta = theta;
	s->pm1 = m->p - 1.0;
	s->qm1 = 1.0 / s->pm1;
	s->log2c = log(2.0 * m->c);
	s->log_r = log(R);
	for (size_t j = 0; j < m->d; j++)
		s->theta_max = fmax(s->theta_max, fabs(theta[j]));
	oc.target = outer == NULL ? 0.0 : s->outer == MS_LP ? log(outer->radius) : outer->radius;

	/*
	 * Step 2 of geometry.md §3: the outer multiplier.  l1 ball: nu = 0 when the
	 * l1 constraint is slack there; otherwise G(nu) = ||x(nu)||_1 - rho
	 * decreases to -rho (every x_j clamps to 0 for nu beyond |theta_j -
	 * t0_j|), bracketed by doubling from ||theta||_inf.  Simplex: nu is
	 * free; sum x(nu) - s is positive for nu -> -inf (all y_j > 0) and
	 * -s for nu -> +inf (all x_j = 0); bracketed by doubling both ways.
	 * lp ball (MS-LP): as the l1 ball, with nu = tau' and G(nu) =
	 * log ||x(nu)||_p' - log rho (x is pulled to 0 as tau' grows).
	 */
	if (s->outer == MS_L1 || s->outer == MS_LP) {
		s->nu = 0.0;
		flo = ms_f_outer(s, 0.0);
		if (flo > 0.0) {
			lo = 0.0;
			hi = fmax(s->theta_max, DBL_MIN);
			if (s->outer == MS_LP) /* tau' has the units of theta / |x|^{p'-1} */
				hi /= pow(outer->radius, s->op - 1.0);
			while ((fhi = ms_f_outer(s, hi)) > 0.0 && hi < DBL_MAX / 4.0)
				hi *= 2.0;
			nu = ms_root(s, ms_f_outer, lo, flo, hi, fhi,
				     4.0 * DBL_EPSILON * fmax(s->theta_max, DBL_MIN));
		}
	} else if (s->outer == MS_SIMPLEX) {
		double w = s->theta_max + 1.0;

		lo = -w;
		hi = w;
		while ((flo = ms_f_outer(s, lo)) < 0.0 && lo > -DBL_MAX / 4.0)
			lo *= 2.0;
		while ((fhi = ms_f_outer(s, hi)) > 0.0 && hi < DBL_MAX / 4.0)
			hi *= 2.0;
		nu = ms_root(s, ms_f_outer, lo, flo, hi, fhi,
			     4.0 * DBL_EPSILON * fmax(s->theta_max, DBL_MIN));
	}
	s->nu = nu;
	lt = ms_tau(s, &ball);
	ms_pass(s, lt, &tot, ret_x);

	/* Put x exactly on the outer set (the multipliers are exact to a few
	 * ulps; this removes the rounding of the sum). */
	if (s->outer == MS_L1 && (nu > 0.0 || tot > outer->radius) && tot > 0.0)
		for (size_t j = 0; j < m->d; j++)
			ret_x[j] = ret_x[j] / tot * outer->radius;
	if (s->outer == MS_LP && (nu > 0.0 || tot > log(outer->radius))) {
		double mx, n = norm_shifted(ret_x, NULL, m->d, s->op, &mx);

		for (size_t j = 0; n > 0.0 && j < m->d; j++)
			ret_x[j] = ret_x[j] / n * outer->radius;
	}
	if (s->outer == MS_SIMPLEX) {
		tot = 0.0;
		for (size_t j = 0; j < m->d; j++)
			tot += ret_x[j] = fmax(ret_x[j], 0.0);
		for (size_t j = 0; j < m->d; j++)
			ret_x[j] = ret_x[j] / tot * outer->radius;
	}
	if (info != NULL) {
		info->tau = exp(lt);
		info->nu = nu;
		info->outer_active = s->outer == MS_SIMPLEX || nu > 0.0;
		info->ball_active = ball;
		info->evals = s->evals;
	}
	return ERR_OK;
}
