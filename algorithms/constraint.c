/*
 * constraint.c - the feasible sets' names, radii, membership, exact
 * Euclidean projections and linear minimisation oracles, and products.
 *
 * l2 ball: scale by radius / ||x||_2 when outside.  Box: clamp each
 * coordinate.  Simplex {x >= 0 : sum x = s}: x_j <- max(x_j - theta, 0) with
 * theta the unique level that makes the sum s; the l1 ball of radius r is
 * the same on |x| (with the signs put back) when ||x||_1 > r, and the
 * identity otherwise.  theta comes from the sort-based method of J. Duchi,
 * S. Shalev-Shwartz, Y. Singer, T. Chandra, "Efficient projections onto the
 * l1-ball for learning in high dimensions", ICML 2008 (Fig. 1): with u the
 * values sorted in decreasing order and rho the largest j such that
 * u_j > (u_1 + ... + u_j - s) / j, theta = (u_1 + ... + u_rho - s) / rho.
 * O(d log d) with qsort on the caller's d-double scratch; no allocation.
 *
 * The lp ball (1 < p < 2) has no finite-step projection; see
 * project_lp_ball() for the KKT system and the two nested monotone
 * Newton iterations that solve it to a few ulps.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "util.h"

/* err_set_field() on "<field>.<sub>": the sub-field is set, then prefixed. */
static enum err_code
invalid(struct err *e, const char *field, const char *sub, const char *what)
{
	if (e == NULL)
		return ERR_INVALID;
	err_set_field(e, ERR_INVALID, sub, "'%s%s%s' %s", field != NULL ? field : "",
		      field != NULL && field[0] != '\0' ? "." : "", sub, what);
	err_prefix_field(e, field);
	return ERR_INVALID;
}

/*
 * ||x||_p with the largest magnitude factored out (M (sum (|x_j|/M)^p)^{1/p}),
 * so that no power overflows or underflows to a wrong answer however
 * large p or the entries; 0 for x = 0.
 */
static double
lp_norm(const double *x, size_t d, double p)
{
	double m = 0.0, s = 0.0;

	for (size_t j = 0; j < d; j++)
		m = fmax(m, fabs(x[j]));
	if (m == 0.0 || !isfinite(m))
		return m;
	for (size_t j = 0; j < d; j++)
		s += pow(fabs(x[j]) / m, p);
	return m * pow(s, 1.0 / p);
}

/* qsort comparator: decreasing order. */
static int
cmp_desc(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a < b) - (a > b);
}

/*
 * The threshold theta of the projection of the d values u (scratch,
 * reordered here) onto {v >= 0 : sum v = s}: the projection is
 * max(u_j - theta, 0).  s > 0.
 */
static double
simplex_threshold(double *u, size_t d, double s)
{
	double cum = 0.0, theta = 0.0;

	qsort(u, d, sizeof(*u), cmp_desc);
	for (size_t j = 0; j < d; j++) {
		double t;

		cum += u[j];
		t = (cum - s) / (double)(j + 1);
		/* u is decreasing, so the condition holds on a prefix of j. */
		if (u[j] > t)
			theta = t;
		else
			break;
	}
	return theta;
}

/* After a rescale onto the sphere of radius r, rounding can leave
 * ||x||_p an ulp or two above r; shave ulps until lp_norm() (what
 * constraint_contains() measures) says ||x||_p <= r. */
static void
shave_into(double r, double p, double *x, size_t d)
{
	double nrm;

	for (int k = 1; k <= 8 && (nrm = lp_norm(x, d, p)) > r; k *= 2)
		for (size_t j = 0; j < d; j++)
			x[j] = x[j] / nrm * r * (1.0 - k * DBL_EPSILON);
}

static void
project_l2_ball(double r, double *x, size_t d)
{
	/* max-normalised: sum x_j^2 would under/overflow for |x| ~ 1e+-200 */
	double norm = lp_norm(x, d, 2.0);

	if (norm > r) {
		/* (x_j / norm) r: the factor r / norm alone can underflow */
		for (size_t j = 0; j < d; j++)
			x[j] = x[j] / norm * r;
		shave_into(r, 2.0, x, d);
	}
}

static void
project_simplex(double s, double *x, size_t d, double *scratch)
{
	double theta;

	if (d == 0)
		return;
	if (!(s > 0.0)) { /* the set is {0} (or empty): 0 is the only sensible answer */
		memset(x, 0, d * sizeof(*x));
		return;
	}
	memcpy(scratch, x, d * sizeof(*x));
	theta = simplex_threshold(scratch, d, s);
	for (size_t j = 0; j < d; j++)
		x[j] = fmax(x[j] - theta, 0.0);
}

static void
project_l1_ball(double r, double *x, size_t d, double *scratch)
{
	double l1 = 0.0, theta;

	for (size_t j = 0; j < d; j++)
		l1 += fabs(x[j]);
	if (l1 <= r)
		return;
	if (!(r > 0.0)) {
		memset(x, 0, d * sizeof(*x));
		return;
	}
	for (size_t j = 0; j < d; j++)
		scratch[j] = fabs(x[j]);
	theta = simplex_threshold(scratch, d, r);
	for (size_t j = 0; j < d; j++) {
		double a = fmax(fabs(x[j]) - theta, 0.0);

		x[j] = copysign(a, x[j]);
	}
}

static void
project_box(double lo, double hi, double *x, size_t d)
{
	for (size_t j = 0; j < d; j++) {
		if (x[j] < lo)
			x[j] = lo;
		else if (x[j] > hi)
			x[j] = hi;
	}
}

/* log(e^a + e^b) without overflow; a or b may be -inf. */
static double
log_add_exp(double a, double b)
{
	double m = fmax(a, b);

	if (m == -INFINITY)
		return m;
	return m + log1p(exp(-fabs(a - b)));
}

/*
 * The lp-ball scalar equation.  For one coordinate a = |v_j| / r > 0 and
 * the multiplier lambda = e^t, the projected magnitude is u = a w with w in
 * (0, 1] the root of  w + k w^{p-1} = 1,  k = lambda p a^{p-2}  (that is
 * u + lambda p u^{p-1} = a divided by a).  With w = e^s the equation reads
 *
 *	G(s) = log(e^s + k e^{(p-1)s}) = 0,
 *
 * and G is a log-sum-exp of two affine functions of s: convex, increasing,
 * with slope between p - 1 and 1.  Newton's method on a convex increasing
 * function started right of the root decreases monotonically to it (the
 * tangent lies below the graph) and converges quadratically; the start
 * s0 = min(0, -log(k) / (p - 1)) is right of the root because both terms
 * are positive and one of them alone is already >= 1 there.  Working in s
 * keeps the tiny roots of large k (w ~ k^{-1/(p-1)}, which underflows for p
 * near 1) as finite logs.  Returns s = log w; *ret_dlog is the factor
 * (1 - w) / (w + (p - 1)(1 - w)) of the outer derivative below.
 */
static double
lp_coordinate(double log_a, double t, double p, double *ret_dlog)
{
	double logk = t + log(p) + (p - 2.0) * log_a;
	double s = fmin(0.0, -logk / (p - 1.0)), w, omw;

	for (int it = 0; it < 100; it++) {
		double b = logk + (p - 1.0) * s, g = log_add_exp(s, b);
		double sig = 1.0 / (1.0 + exp(b - s)); /* weight of the slope-1 term */
		double step = g / (sig + (1.0 - sig) * (p - 1.0));

		if (!(g > 0.0) || !(step > 0.0))
			break; /* at the root up to rounding */
		s -= step;
		if (step <= 4.0 * DBL_EPSILON * fmax(1.0, fabs(s)))
			break;
	}
	w = exp(s);
	omw = -expm1(s);
	*ret_dlog = omw / (w + (p - 1.0) * omw);
	return s;
}

/*
 * phi(t) = log sum_j u_j(e^t)^p, the log of ||u||_p^p for the multiplier
 * lambda = e^t, for the point b = x / r (log_a_j = log|x_j| - log r is
 * recomputed here rather than stored, so the projection needs no scratch);
 * a log-sum-exp, max-normalised.  *ret_dphi is its derivative in t:
 * differentiating u + lambda p u^{p-1} = a and using lambda p u^{p-1} =
 * a - u gives d(u^p)/dt = -p u^p (a - u) / (u + (p - 1)(a - u)), so
 * dphi/dt = -p sum_j pi_j (1 - w_j) / (w_j + (p - 1)(1 - w_j)) with the
 * weights pi_j = u_j^p / sum u^p.  Zero coordinates stay 0 and are skipped.
 */
static double
lp_phi(const double *x, size_t d, double log_r, double t, double p, double *ret_dphi)
{
	double m = -INFINITY, sum = 0.0, dsum = 0.0;

	/* Online log-sum-exp: sum and dsum are kept relative to e^m. */
	for (size_t j = 0; j < d; j++) {
		double log_a, s, f, lu;

		if (x[j] == 0.0)
			continue;
		log_a = log(fabs(x[j])) - log_r;
		s = lp_coordinate(log_a, t, p, &f);
		lu = p * (log_a + s);
		if (lu > m) {
			double r = exp(m - lu);

			sum = sum * r + 1.0;
			dsum = dsum * r + f;
			m = lu;
		} else {
			double e = exp(lu - m);

			sum += e;
			dsum += e * f;
		}
	}
	*ret_dphi = -p * dsum / sum;
	return m + log(sum);
}

/*
 * Euclidean projection onto {x : ||x||_p <= r}, 1 < p < 2 (p = 2 is the
 * l2 ball).  Scale to r = 1 (the projection is positively homogeneous:
 * P_{rB}(v) = r P_B(v / r)).  When ||b||_p > 1 for b = v / r the constraint
 * is active and the KKT conditions of min ||x - b||^2 / 2 s.t.
 * ||x||_p^p <= 1 are, with a multiplier lambda > 0 and x_j = sign(b_j) u_j,
 *
 *	u_j + lambda p u_j^{p-1} = |b_j|,   sum_j u_j^p = 1.
 *
 * For fixed lambda each u_j is the unique root of an increasing function
 * (lp_coordinate), and sum u_j^p decreases strictly in lambda, so the
 * outer equation phi(t) = 0 (t = log lambda, lp_phi) has one root.
 * Bracket: at lambda p = ||b||_q (q = p / (p - 1)) every u_j <=
 * (|b_j| / (lambda p))^{q-1} and so sum u_j^p <= sum (|b_j| / ||b||_q)^q = 1,
 * hence t_hi = log(||b||_q / p); t_lo steps down from there until phi > 0
 * (it is as lambda -> 0, where u -> |b|).  Inside the bracket: Newton on t
 * with the analytic derivative, falling back to bisection whenever a step
 * leaves the bracket, until the step is a few ulps of t.  Both levels
 * converge quadratically near the root, so the result is the projection
 * to a few ulps relative to r (tested against brute force and the KKT
 * conditions); a final rescale by r / ||x||_p puts it on the sphere
 * (||x||_p <= r as computed, within a few ulps of r).  No scratch: x is
 * only overwritten in the last pass.
 */
static void
project_lp_ball(double r, double p, double *x, size_t d)
{
	double log_r, t_lo, t_hi, t, phi, dphi, nrm;

	if (p >= 2.0) {
		project_l2_ball(r, x, d);
		return;
	}
	if (d == 0 || lp_norm(x, d, p) <= r)
		return;
	if (!(r > 0.0)) {
		memset(x, 0, d * sizeof(*x));
		return;
	}
	log_r = log(r);
	t_hi = log(lp_norm(x, d, p / (p - 1.0))) - log_r - log(p); /* no overflow of v / r */
	t_lo = t_hi;
	for (double step = 1.0; step < 0x1p20; step *= 2.0) {
		t_lo = t_hi - step;
		if (lp_phi(x, d, log_r, t_lo, p, &dphi) > 0.0)
			break;
	}
	t = t_hi;
	for (int it = 0; it < 400; it++) {
		double next, tol = 4.0 * DBL_EPSILON * fmax(1.0, fabs(t));

		phi = lp_phi(x, d, log_r, t, p, &dphi);
		if (phi == 0.0)
			break;
		if (phi > 0.0)
			t_lo = t;
		else
			t_hi = t;
		next = t - phi / dphi;
		if (!(next > t_lo && next < t_hi))
			next = 0.5 * (t_lo + t_hi);
		if (fabs(next - t) <= tol || t_hi - t_lo <= tol) {
			t = next;
			break;
		}
		t = next;
	}
	for (size_t j = 0; j < d; j++) {
		double log_a, f;

		if (x[j] == 0.0)
			continue;
		log_a = log(fabs(x[j])) - log_r;
		x[j] = copysign(r * exp(log_a + lp_coordinate(log_a, t, p, &f)), x[j]);
	}
	/* The constraint is active: put x on the sphere exactly.  Besides
	 * feasibility this repairs the one ill-conditioned direction: for p
	 * near 1 and v far outside, u_j ~ (|b_j| / (lambda p))^{q-1}, whose
	 * ratios do not depend on lambda but whose common scale moves by a
	 * factor (1 + delta)^{q-1} when lambda moves by one ulp delta (q - 1 =
	 * 1/(p - 1) can be 10^6); the rescale removes that common factor. */
	nrm = lp_norm(x, d, p);
	if (nrm > 0.0 && nrm != r)
		for (size_t j = 0; j < d; j++)
			x[j] = x[j] / nrm * r;
	shave_into(r, p, x, d);
}

/*
 * LMOs, argmin_{s in C} <g, s>.
 *
 * l2 ball: s = -r g / ||g||_2 (Cauchy-Schwarz), value -r ||g||_2.
 * lp ball: Hoelder with the dual exponent q = p / (p - 1): <g, s> >=
 * -||g||_q ||s||_p, with equality iff s_j = -r sign(g_j) |g_j|^{q-1} /
 * ||g||_q^{q-1} (then ||s||_p^p = r^p sum |g_j|^q / ||g||_q^q = r^p since
 * (q - 1) p = q).  With z_j = |g_j| / max|g| in [0, 1] this is
 * -r sign(g_j) z_j^{q-1} / ||z||_q^{q-1}, whose powers cannot overflow
 * however large q is (q = 1 + ln d for the mirror maps' p); z^{q-1}
 * underflowing to 0 is the right limit.  The minimiser is unique for g != 0
 * (the ball is strictly convex for 1 < p <= 2).
 * l1 ball: a linear function is minimised at a vertex +-r e_j; the best is
 * -r sign(g_j) e_j at the largest |g_j|, value -r ||g||_inf.
 * Simplex: s e_j at the smallest g_j, value s min g.
 * Box: coordinatewise lo where g_j >= 0, hi where g_j < 0.
 */
static double
lmo_lp_ball(double r, double p, const double *g, size_t d, double *s)
{
	double m = 0.0, nq, q = p / (p - 1.0), value = 0.0;

	for (size_t j = 0; j < d; j++)
		m = fmax(m, fabs(g[j]));
	if (m == 0.0) {
		memset(s, 0, d * sizeof(*s));
		return 0.0;
	}
	nq = lp_norm(g, d, q) / m; /* ||z||_q, in [1, d^{1/q}] */
	for (size_t j = 0; j < d; j++) {
		s[j] = -r * copysign(pow(fabs(g[j]) / m, q - 1.0) / pow(nq, q - 1.0), g[j]);
		value += g[j] * s[j];
	}
	return value;
}

/* ---- the kinds: one function per operation, one table row per kind ---- */

static size_t
no_scratch(const struct constraint *c, size_t d)
{
	return 0;
}

static size_t
d_scratch(const struct constraint *c, size_t d)
{
	return d; /* the sort of the simplex threshold */
}

/* The largest l_q norm, 1 <= q <= inf, of the lp' ball of radius r in R^d,
 * 1 <= p' <= 2 (Hoelder): r when q >= p' (radius * e_1 is the farthest
 * point), r d^{1/q - 1/p'} when q < p' (the point (1, .., 1) scaled onto
 * the sphere).  The exponents 0, 1/2 and 1 go through exact routes (the
 * l2 and l1 radii feed sensitivities; a pow() ulp must not move them). */
static double
ball_radius(double r, double p_ball, size_t d, double q)
{
	double e = fmax(0.0, 1.0 / q - 1.0 / p_ball);

	if (e == 0.0)
		return r;
	if (e == 0.5)
		return sqrt((double)d) * r;
	if (e == 1.0)
		return (double)d * r;
	return pow((double)d, e) * r;
}

static enum err_code
validate_radius(const struct constraint *c, size_t d, const char *field, struct err *e)
{
	if (!(isfinite(c->radius) && c->radius > 0.0))
		return invalid(e, field, "radius", "must be a finite number above 0");
	return ERR_OK;
}

/* l2 ball */

static double
l2_radius(const struct constraint *c, size_t d, double q)
{
	return ball_radius(c->radius, 2.0, d, q);
}

static bool
l2_contains(const struct constraint *c, const double *x, size_t d, double tol, double *scratch)
{
	return lp_norm(x, d, 2.0) <= c->radius * (1.0 + tol);
}

static void
l2_project(const struct constraint *c, double *x, size_t d, double *scratch)
{
	project_l2_ball(c->radius, x, d);
}

static double
l2_lmo(const struct constraint *c, const double *g, size_t d, double *ret_s)
{
	return lmo_lp_ball(c->radius, 2.0, g, d, ret_s);
}

/* l1 ball */

static double
l1_radius(const struct constraint *c, size_t d, double q)
{
	return ball_radius(c->radius, 1.0, d, q); /* r: the vertices +-r e_j */
}

static bool
l1_contains(const struct constraint *c, const double *x, size_t d, double tol, double *scratch)
{
	double s = 0.0;

	for (size_t j = 0; j < d; j++)
		s += fabs(x[j]);
	return s <= c->radius * (1.0 + tol);
}

static void
l1_project(const struct constraint *c, double *x, size_t d, double *scratch)
{
	project_l1_ball(c->radius, x, d, scratch);
}

static double
l1_lmo(const struct constraint *c, const double *g, size_t d, double *ret_s)
{
	double best;
	size_t jb = 0;

	memset(ret_s, 0, d * sizeof(*ret_s));
	if (d == 0)
		return 0.0;
	best = fabs(g[0]);
	for (size_t j = 1; j < d; j++)
		if (fabs(g[j]) > best) { /* strict: the lowest index wins ties */
			best = fabs(g[j]);
			jb = j;
		}
	ret_s[jb] = g[jb] > 0.0 ? -c->radius : c->radius;
	return g[jb] * ret_s[jb];
}

/* simplex of scale s (in radius) */

static enum err_code
simplex_validate(const struct constraint *c, size_t d, const char *field, struct err *e)
{
	if (!(isfinite(c->radius) && c->radius > 0.0))
		return invalid(e, field, "scale", "must be a finite number above 0");
	return ERR_OK;
}

static double
simplex_radius(const struct constraint *c, size_t d, double q)
{
	return c->radius; /* ||x||_q <= ||x||_1 = s, equal at the vertices s e_j */
}

static bool
simplex_contains(const struct constraint *c, const double *x, size_t d, double tol, double *scratch)
{
	double s = 0.0, slack = tol * c->radius;

	for (size_t j = 0; j < d; j++) {
		if (!(x[j] >= -slack))
			return false;
		s += x[j];
	}
	return fabs(s - c->radius) <= slack;
}

static void
simplex_project(const struct constraint *c, double *x, size_t d, double *scratch)
{
	project_simplex(c->radius, x, d, scratch);
}

static double
simplex_lmo(const struct constraint *c, const double *g, size_t d, double *ret_s)
{
	double best;
	size_t jb = 0;

	memset(ret_s, 0, d * sizeof(*ret_s));
	if (d == 0)
		return 0.0;
	best = g[0];
	for (size_t j = 1; j < d; j++)
		if (g[j] < best) {
			best = g[j];
			jb = j;
		}
	ret_s[jb] = c->radius;
	return g[jb] * c->radius;
}

/* box */

static enum err_code
box_validate(const struct constraint *c, size_t d, const char *field, struct err *e)
{
	if (!isfinite(c->lo))
		return invalid(e, field, "lo", "must be a finite number");
	if (!isfinite(c->hi))
		return invalid(e, field, "hi", "must be a finite number");
	if (!(c->lo <= c->hi)) /* lo = hi, a point, is usable */
		return invalid(e, field, "hi", "must be at least lo");
	return ERR_OK;
}

static double
box_radius(const struct constraint *c, size_t d, double q)
{
	/* the corner of largest magnitude in every coordinate */
	return ball_radius(fmax(fabs(c->lo), fabs(c->hi)), INFINITY, d, q);
}

static bool
box_contains(const struct constraint *c, const double *x, size_t d, double tol, double *scratch)
{
	double slack = tol * fmax(fabs(c->lo), fabs(c->hi));

	for (size_t j = 0; j < d; j++)
		if (!(x[j] >= c->lo - slack && x[j] <= c->hi + slack))
			return false;
	return true;
}

static void
box_project(const struct constraint *c, double *x, size_t d, double *scratch)
{
	project_box(c->lo, c->hi, x, d);
}

static double
box_lmo(const struct constraint *c, const double *g, size_t d, double *ret_s)
{
	double value = 0.0;

	for (size_t j = 0; j < d; j++) {
		ret_s[j] = g[j] < 0.0 ? c->hi : c->lo;
		value += g[j] * ret_s[j];
	}
	return value;
}

/* lp ball, 1 < p <= 2 */

static enum err_code
lp_validate(const struct constraint *c, size_t d, const char *field, struct err *e)
{
	/* p = 1 is the l1 ball (its own kind); the exponent map |t|^{p-1} of
	 * the projection is only continuous for p > 1, and p > 2 is outside
	 * what the mirror maps need. */
	if (!(isfinite(c->p) && c->p > 1.0 && c->p <= 2.0))
		return invalid(e, field, "p", "must be a number in (1, 2]");
	return validate_radius(c, d, field, e);
}

static double
lp_radius(const struct constraint *c, size_t d, double q)
{
	/* q = 2: for p <= 2, ||x||_2 <= ||x||_p, so the radius itself, for
	 * every d (d^{1/2 - 1/p} radius is the p >= 2 formula and would
	 * under-state every sensitivity built on it); q = 1: Hoelder,
	 * d^{1 - 1/p} radius. */
	return ball_radius(c->radius, c->p, d, q);
}

static bool
lp_contains(const struct constraint *c, const double *x, size_t d, double tol, double *scratch)
{
	return lp_norm(x, d, c->p) <= c->radius * (1.0 + tol);
}

static void
lp_project(const struct constraint *c, double *x, size_t d, double *scratch)
{
	project_lp_ball(c->radius, c->p, x, d);
}

static double
lp_lmo(const struct constraint *c, const double *g, size_t d, double *ret_s)
{
	return lmo_lp_ball(c->radius, c->p, g, d, ret_s);
}

/*
 * Polytope conv{v_1, .., v_m} given by its vertex list (the caller's,
 * borrowed; constraint_polytope() checks it and picks the score centre).
 *
 * Radius: a norm is convex, so its maximum over the polytope is attained
 * at a vertex: max_i ||v_i||_q, exact.  LMO: a linear function likewise;
 * the first vertex of least <g, v_i>.
 *
 * Projection: Wolfe's minimum-norm-point algorithm (P. Wolfe, "Finding
 * the nearest point in a polytope", Math. Programming 11, 1976) on the
 * points P_i = v_i - y.  It keeps a "corral" S of affinely independent
 * points and weights w > 0 on them, x = sum_S w_i P_i.  Major cycle: the
 * point j minimising <x, P_j>; when ||x||^2 - <x, P_j> (which is max_i
 * <y - p, v_i - p> for p = y + x, the optimality condition of the
 * projection p) is at rounding level, x is the minimum-norm point; else j
 * joins S.  Minor cycle: the minimum-norm point alpha of the affine hull
 * of S (the bordered system [G 1; 1' 0] [alpha; mu] = [0; 1], G the Gram
 * matrix of S, by Gaussian elimination with partial pivoting); when alpha
 * > 0 it becomes w, otherwise w moves towards alpha until a weight
 * vanishes and that point leaves S.  Finite in exact arithmetic; in
 * floating point the loop also stops when j is already in S or S is full
 * (d + 1 points), and after a bound on the major cycles.  Start: the
 * vertex nearest y.  The answer is p = sum_S w_i v_i / sum_S w_i, a convex
 * combination of the vertices up to rounding.  Cost per major cycle O(m d
 * + |S|^2 d + |S|^3), |S| <= d + 1; scratch polytope_scratch(d), no
 * allocation.
 */
static const double example_vertices[] = { 1.0, 0.0,  0.0, 1.0, -1.0, 0.5,
					   0.0, -0.5, 1.0, 0.0, 0.1,  0.1 };
static const double example_centre[] = { 0.0, 0.25 };

/* "vertices[i]" into out (32 bytes; no stdio in algorithms/). */
static const char *
row_name(char *out, size_t i)
{
	char digits[24];
	size_t n = 0, len = 0;

	do {
		digits[n++] = (char)('0' + i % 10);
		i /= 10;
	} while (i > 0 && n < sizeof(digits));
	memcpy(out, "vertices[", 9);
	len = 9;
	while (n > 0)
		out[len++] = digits[--n];
	out[len++] = ']';
	out[len] = '\0';
	return out;
}

/* max_i ||v_i - c||_1, c NULL for 0. */
static double
polytope_rc(const double *v, size_t m, size_t d, const double *c)
{
	double r = 0.0;

	for (size_t i = 0; i < m; i++) {
		double s = 0.0;

		for (size_t k = 0; k < d; k++)
			s += fabs(v[i * d + k] - (c != NULL ? c[k] : 0.0));
		r = fmax(r, s);
	}
	return r;
}

static int
cmp_asc(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

size_t
constraint_polytope_storage(size_t m, size_t d)
{
	if (m > CONSTRAINT_MAX_VERTICES || d == 0 || d > SIZE_MAX / 16 / (m + 2))
		return 0;
	return m * d + 2 * d + m;
}

enum err_code
constraint_polytope(struct constraint *ret, size_t m, size_t d, double *storage, const char *field,
		    struct err *e)
{
	double *centre = storage + m * d, *cand = centre + d, *col = cand + d, best;
	const double *v = storage;

	if (m < 2 || m > CONSTRAINT_MAX_VERTICES)
		return invalid(e, field, "vertices", "must list 2 to 1000000 vertices");
	if (d == 0)
		return invalid(e, field, "vertices", "must have at least one coordinate each");
	for (size_t i = 0; i < m; i++)
		for (size_t k = 0; k < d; k++)
			if (!isfinite(v[i * d + k])) {
				char sub[40];

				return invalid(e, field, row_name(sub, i),
					       "must hold finite numbers");
			}
	/* Candidate 0: the origin. */
	memset(centre, 0, d * sizeof(*centre));
	best = polytope_rc(v, m, d, NULL);
	for (int which = 1; which <= 4; which++) {
		double r;

		for (size_t k = 0; k < d; k++) {
			double lo = v[k], hi = v[k], sum = 0.0;

			switch (which) {
			case 1: /* the first vertex */
				cand[k] = v[k];
				break;
			case 2: /* the centroid */
				for (size_t i = 0; i < m; i++)
					sum += v[i * d + k];
				cand[k] = sum / (double)m;
				break;
			case 3: /* the coordinate-wise mid-range */
				for (size_t i = 1; i < m; i++) {
					lo = fmin(lo, v[i * d + k]);
					hi = fmax(hi, v[i * d + k]);
				}
				cand[k] = 0.5 * lo + 0.5 * hi;
				break;
			default: /* the coordinate-wise median */
				for (size_t i = 0; i < m; i++)
					col[i] = v[i * d + k];
				qsort(col, m, sizeof(*col), cmp_asc);
				cand[k] = m % 2 ? col[m / 2]
						: 0.5 * col[m / 2 - 1] + 0.5 * col[m / 2];
				break;
			}
		}
		r = polytope_rc(v, m, d, cand);
		if (r < best) { /* strict: the earlier candidate wins ties */
			best = r;
			memcpy(centre, cand, d * sizeof(*centre));
		}
	}
	if (!(best > 0.0))
		return invalid(e, field, "vertices",
			       "are all the same point (a polytope needs "
			       "two distinct vertices)");
	*ret = (struct constraint){ .kind = CONSTRAINT_POLYTOPE,
				    .vertices = v,
				    .centre = centre,
				    .n_vertices = m,
				    .vertex_dim = d,
				    .centre_radius = best };
	return ERR_OK;
}

static enum err_code
polytope_validate(const struct constraint *c, size_t d, const char *field, struct err *e)
{
	if (c->vertices == NULL || c->centre == NULL || c->n_vertices < 2 ||
	    c->n_vertices > CONSTRAINT_MAX_VERTICES || !(c->centre_radius > 0.0) ||
	    !isfinite(c->centre_radius))
		return invalid(e, field, "vertices", "must be a list of at least 2 vertices");
	if (c->vertex_dim != d) {
		if (e == NULL)
			return ERR_INVALID;
		err_set_field(
			e, ERR_INVALID, "vertices",
			"'%s%svertices' has vertices of %zu coordinates; the variable has %zu",
			field != NULL ? field : "", field != NULL && field[0] != '\0' ? "." : "",
			c->vertex_dim, d);
		err_prefix_field(e, field);
		return ERR_INVALID;
	}
	for (size_t i = 0; i < c->n_vertices * d; i++)
		if (!isfinite(c->vertices[i])) {
			char sub[40];

			return invalid(e, field, row_name(sub, i / d), "must hold finite numbers");
		}
	return ERR_OK;
}

static double
polytope_radius(const struct constraint *c, size_t d, double q)
{
	double r = 0.0;

	for (size_t i = 0; i < c->n_vertices; i++) {
		const double *v = c->vertices + i * d;
		double n = 0.0;

		if (isinf(q)) {
			for (size_t k = 0; k < d; k++)
				n = fmax(n, fabs(v[k]));
		} else if (q == 1.0) {
			for (size_t k = 0; k < d; k++)
				n += fabs(v[k]);
		} else {
			n = lp_norm(v, d, q);
		}
		r = fmax(r, n);
	}
	return r;
}

static double
polytope_lmo(const struct constraint *c, const double *g, size_t d, double *ret_s)
{
	double best = INFINITY;
	size_t ib = 0;

	for (size_t i = 0; i < c->n_vertices; i++) {
		double s = 0.0;

		for (size_t k = 0; k < d; k++)
			s += g[k] * c->vertices[i * d + k];
		if (s < best) { /* strict: the lowest index wins ties */
			best = s;
			ib = i;
		}
	}
	memcpy(ret_s, c->vertices + ib * d, d * sizeof(*ret_s));
	return best;
}

/* Wolfe's algorithm needs K = d + 1 corral slots: indices, weights and
 * the affine minimiser (3 K), the bordered system ((K + 1)^2 + K + 1),
 * and x (d); contains() a copy of its point besides (d). */
static size_t
polytope_scratch(const struct constraint *c, size_t d)
{
	return (d + 3) * (d + 3) + 6 * (d + 3);
}

/* <v_i - y, v_j - y>. */
static double
pdot(const double *vi, const double *vj, const double *y, size_t d)
{
	double s = 0.0;

	for (size_t k = 0; k < d; k++)
		s += (vi[k] - y[k]) * (vj[k] - y[k]);
	return s;
}

/*
 * alpha (n entries) <- the minimum-norm point of the affine hull of the n
 * corral points: the solution of [G s1; s1' 0] [alpha; mu / s] = [0; s]
 * with s = scale (the border scaled like G for the pivoting).  a: (n +
 * 1)^2 doubles, b: n + 1.  false when the system is singular to working
 * precision (the points are affinely dependent).
 */
static bool
affine_min_norm(const double *V, size_t d, const double *y, const double *S, size_t n, double scale,
		double *a, double *b, double *alpha)
{
	const size_t N = n + 1;

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j <= i; j++)
			a[i * N + j] = a[j * N + i] =
				pdot(V + (size_t)S[i] * d, V + (size_t)S[j] * d, y, d);
		a[i * N + n] = a[n * N + i] = scale;
		b[i] = 0.0;
	}
	a[n * N + n] = 0.0;
	b[n] = scale;
	for (size_t col = 0; col < N; col++) {
		size_t piv = col;

		for (size_t r = col + 1; r < N; r++)
			if (fabs(a[r * N + col]) > fabs(a[piv * N + col]))
				piv = r;
		if (!(fabs(a[piv * N + col]) > 1e-13 * scale))
			return false;
		if (piv != col) {
			double t;

			for (size_t k = 0; k < N; k++) {
				t = a[col * N + k];
				a[col * N + k] = a[piv * N + k];
				a[piv * N + k] = t;
			}
			t = b[col];
			b[col] = b[piv];
			b[piv] = t;
		}
		for (size_t r = col + 1; r < N; r++) {
			double f = a[r * N + col] / a[col * N + col];

			if (f == 0.0)
				continue;
			for (size_t k = col; k < N; k++)
				a[r * N + k] -= f * a[col * N + k];
			b[r] -= f * b[col];
		}
	}
	for (size_t r = N; r-- > 0;) {
		double s = b[r];

		for (size_t k = r + 1; k < N; k++)
			s -= a[r * N + k] * b[k];
		b[r] = s / a[r * N + r];
	}
	for (size_t i = 0; i < n; i++)
		alpha[i] = b[i];
	return true;
}

/* x (d) <- sum_S w_i (v_i - y) / sum_S w_i. */
static void
corral_point(const double *V, size_t d, const double *y, const double *S, const double *w, size_t n,
	     double *x)
{
	double tot = 0.0;

	for (size_t i = 0; i < n; i++)
		tot += w[i];
	memset(x, 0, d * sizeof(*x));
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < d; k++)
			x[k] += w[i] / tot * (V[(size_t)S[i] * d + k] - y[k]);
}

static void
polytope_project(const struct constraint *c, double *y, size_t d, double *scratch)
{
	const double *V = c->vertices;
	const size_t m = c->n_vertices, K = d + 1;
	size_t n = 0;
	/* The corral's vertex indices, stored as doubles (exact: m <= 10^6). */
	double *S = scratch, *w = scratch + K, *alpha = w + K, *a = alpha + K,
	       *b = a + (K + 1) * (K + 1);
	double *x = b + K + 1, scale = 0.0, near = INFINITY, tot = 0.0;
	unsigned long max_major = 10ul * (m + K);

	/* Start at the nearest vertex; scale = max_i ||v_i - y||^2. */
	for (size_t i = 0; i < m; i++) {
		double q = pdot(V + i * d, V + i * d, y, d);

		scale = fmax(scale, q);
		if (q < near) {
			near = q;
			S[0] = (double)i;
		}
	}
	n = 1;
	w[0] = 1.0;
	if (!(scale > 0.0)) /* y is every vertex: the polytope is {y} */
		return;
	for (unsigned long major = 0; major < max_major; major++) {
		double xx = 0.0, best = INFINITY;
		size_t j = 0;
		bool in_s = false;

		corral_point(V, d, y, S, w, n, x);
		for (size_t k = 0; k < d; k++)
			xx += x[k] * x[k];
		for (size_t i = 0; i < m; i++) {
			double s = 0.0;

			for (size_t k = 0; k < d; k++)
				s += x[k] * (V[i * d + k] - y[k]);
			if (s < best) {
				best = s;
				j = i;
			}
		}
		/* max_i <y - p, v_i - p> = ||x||^2 - min_i <x, P_i>: done at
		 * rounding level. */
		if (xx - best <= 64.0 * DBL_EPSILON * (double)K * scale)
			break;
		for (size_t i = 0; i < n; i++)
			in_s = in_s || (size_t)S[i] == j;
		if (in_s || n == K)
			break;
		S[n] = (double)j;
		w[n] = 0.0;
		n++;
		/* Minor cycles. */
		for (;;) {
			double theta = 1.0;
			size_t drop = 0, keep = 0;
			bool interior = true;

			if (!affine_min_norm(V, d, y, S, n, scale, a, b, alpha)) {
				n--; /* the new point is affinely dependent: stop */
				major = max_major;
				break;
			}
			for (size_t i = 0; i < n; i++)
				if (!(alpha[i] > 0.0)) {
					double t = w[i] / (w[i] - alpha[i]);

					interior = false;
					if (t < theta) {
						theta = t;
						drop = i;
					}
				}
			if (interior) {
				memcpy(w, alpha, n * sizeof(*w));
				break;
			}
			for (size_t i = 0; i < n; i++)
				w[i] = (1.0 - theta) * w[i] + theta * alpha[i];
			w[drop] = 0.0;
			for (size_t i = 0; i < n; i++)
				if (w[i] > 0.0) {
					S[keep] = S[i];
					w[keep++] = w[i];
				}
			n = keep;
			if (n == 0) { /* cannot happen in exact arithmetic */
				n = 1;
				w[0] = 1.0;
				break;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		tot += w[i];
	memset(x, 0, d * sizeof(*x));
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < d; k++)
			x[k] += w[i] / tot * V[(size_t)S[i] * d + k];
	memcpy(y, x, d * sizeof(*y));
}

static bool
polytope_contains(const struct constraint *c, const double *x, size_t d, double tol,
		  double *scratch)
{
	double *p = scratch + polytope_scratch(c, d) - d, dist2 = 0.0, r2;

	memcpy(p, x, d * sizeof(*p));
	polytope_project(c, p, d, scratch);
	for (size_t k = 0; k < d; k++)
		dist2 += (p[k] - x[k]) * (p[k] - x[k]);
	r2 = polytope_radius(c, d, 2.0);
	return sqrt(dist2) <= tol * r2;
}

/*
 * The table.  A kind added to enum constraint_kind without a row here
 * fails to compile when it is the last (the size assertion below) and
 * fails tests/algorithms/test_conformance.c otherwise (every member of
 * every row is checked, and exercised against the others).
 */
static const struct constraint_ops kind_ops[] = {
	[CONSTRAINT_L2_BALL] = {
		.name = "l2_ball",
		.validate = validate_radius,
		.radius = l2_radius,
		.contains = l2_contains,
		.project = l2_project,
		.scratch = no_scratch,
		.lmo = l2_lmo,
		.entropic = CONSTRAINT_ENTROPIC_NONE,
		.pnorm_outer = CONSTRAINT_PNORM_OUTER_NONE,
		.example = { .kind = CONSTRAINT_L2_BALL, .radius = 1.5 },
	},
	[CONSTRAINT_L1_BALL] = {
		.name = "l1_ball",
		.validate = validate_radius,
		.radius = l1_radius,
		.contains = l1_contains,
		.project = l1_project,
		.scratch = d_scratch,
		.lmo = l1_lmo,
		.entropic = CONSTRAINT_ENTROPIC_L1_LIFT,
		.pnorm_outer = CONSTRAINT_PNORM_OUTER_L1,
		.example = { .kind = CONSTRAINT_L1_BALL, .radius = 0.8 },
	},
	[CONSTRAINT_SIMPLEX] = {
		.name = "simplex",
		.validate = simplex_validate,
		.radius = simplex_radius,
		.contains = simplex_contains,
		.project = simplex_project,
		.scratch = d_scratch,
		.lmo = simplex_lmo,
		.entropic = CONSTRAINT_ENTROPIC_SIMPLEX,
		.pnorm_outer = CONSTRAINT_PNORM_OUTER_SIMPLEX,
		.example = { .kind = CONSTRAINT_SIMPLEX, .radius = 2.0 },
	},
	[CONSTRAINT_BOX] = {
		.name = "box",
		.validate = box_validate,
		.radius = box_radius,
		.contains = box_contains,
		.project = box_project,
		.scratch = no_scratch,
		.lmo = box_lmo,
		.entropic = CONSTRAINT_ENTROPIC_NONE,
		.pnorm_outer = CONSTRAINT_PNORM_OUTER_NONE,
		.example = { .kind = CONSTRAINT_BOX, .lo = -0.5, .hi = 1.25 },
	},
	[CONSTRAINT_LP_BALL] = {
		.name = "lp_ball",
		.validate = lp_validate,
		.radius = lp_radius,
		.contains = lp_contains,
		.project = lp_project,
		.scratch = no_scratch,
		.lmo = lp_lmo,
		.entropic = CONSTRAINT_ENTROPIC_NONE,
		.pnorm_outer = CONSTRAINT_PNORM_OUTER_LP,
		.example = { .kind = CONSTRAINT_LP_BALL, .radius = 1.2, .p = 1.5 },
	},
	[CONSTRAINT_POLYTOPE] = {
		.name = "polytope",
		.validate = polytope_validate,
		.radius = polytope_radius,
		.contains = polytope_contains,
		.project = polytope_project,
		.scratch = polytope_scratch,
		.lmo = polytope_lmo,
		.entropic = CONSTRAINT_ENTROPIC_NONE,
		.pnorm_outer = CONSTRAINT_PNORM_OUTER_NONE,
		/* A quadrilateral in R^2 with a repeated vertex and a point
		 * inside; its centre, the mid-range (0, 0.25) with R_c = 1.25
		 * (0 has 1.5), is what constraint_polytope() picks
		 * (tests/unit/test_polytope.c).  Usable in dimension 2 only:
		 * tests build other dimensions with constraint_polytope(). */
		.example = { .kind = CONSTRAINT_POLYTOPE,
			     .vertices = example_vertices,
			     .centre = example_centre,
			     .n_vertices = 6,
			     .vertex_dim = 2,
			     .centre_radius = 1.25 },
	},
};

_Static_assert(ARRAY_SIZE(kind_ops) == CONSTRAINT__COUNT,
	       "every constraint kind has a row of operations in kind_ops");

const struct constraint_ops *
constraint_ops_of(enum constraint_kind k)
{
	if ((unsigned)k >= ARRAY_SIZE(kind_ops))
		return NULL;
	return &kind_ops[k];
}

const char *
constraint_kind_name(enum constraint_kind k)
{
	const struct constraint_ops *ops = constraint_ops_of(k);

	return ops != NULL ? ops->name : NULL;
}

int
constraint_kind_from_name(const char *name)
{
	if (name == NULL)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(kind_ops); i++)
		if (kind_ops[i].name != NULL && strcmp(kind_ops[i].name, name) == 0)
			return (int)i;
	return -1;
}

enum err_code
constraint_validate(const struct constraint *c, size_t d, const char *field, struct err *e)
{
	const struct constraint_ops *ops = constraint_ops_of(c->kind);

	if (d == 0) {
		if (e == NULL)
			return ERR_INVALID;
		return err_set_field(e, ERR_INVALID, field != NULL ? field : "",
				     "the set '%s' needs dimension at least 1",
				     field != NULL ? field : "");
	}
	if (ops == NULL)
		return invalid(e, field, "kind", "is not a known set");
	return ops->validate(c, d, field, e);
}

double
constraint_radius(const struct constraint *c, size_t d, double q)
{
	const struct constraint_ops *ops = constraint_ops_of(c->kind);

	if (ops == NULL || !(q >= 1.0))
		return NAN;
	return ops->radius(c, d, q);
}

double
constraint_l2_radius(const struct constraint *c, size_t d)
{
	return constraint_radius(c, d, 2.0);
}

double
constraint_l1_radius(const struct constraint *c, size_t d)
{
	return constraint_radius(c, d, 1.0);
}

bool
constraint_contains(const struct constraint *c, const double *x, size_t d, double tol,
		    double *scratch)
{
	const struct constraint_ops *ops = constraint_ops_of(c->kind);

	return ops != NULL && ops->contains(c, x, d, tol, scratch);
}

size_t
constraint_project_scratch(const struct constraint *c, size_t d)
{
	const struct constraint_ops *ops = constraint_ops_of(c->kind);

	return ops != NULL ? ops->scratch(c, d) : 0;
}

void
constraint_project(const struct constraint *c, double *x, size_t d, double *scratch)
{
	const struct constraint_ops *ops = constraint_ops_of(c->kind);

	if (ops != NULL)
		ops->project(c, x, d, scratch);
}

double
constraint_lmo(const struct constraint *c, const double *g, size_t d, double *ret_s)
{
	const struct constraint_ops *ops = constraint_ops_of(c->kind);

	if (ops == NULL)
		return NAN;
	return ops->lmo(c, g, d, ret_s);
}

/* ---- products ---- */

enum err_code
constraint_product_validate(const struct constraint_product *cp, const char *field, struct err *e)
{
	size_t end = 0;

	if (cp->nparts < 1 || cp->nparts > CONSTRAINT_MAX_PARTS) {
		if (e == NULL)
			return ERR_INVALID;
		return err_set_field(e, ERR_INVALID, field != NULL ? field : "",
				     "a product of sets has 1 to %d parts, not %zu",
				     CONSTRAINT_MAX_PARTS, cp->nparts);
	}
	for (size_t i = 0; i < cp->nparts; i++) {
		const struct constraint_part *pt = &cp->part[i];
		const char *f = pt->field != NULL ? pt->field : field;
		enum err_code rc;

		if (pt->offset != end || pt->size == 0 || pt->size > cp->dim - end) {
			if (e == NULL)
				return ERR_INVALID;
			return err_set_field(e, ERR_INVALID, f != NULL ? f : "",
					     "part %zu covers [%zu, %zu + %zu) but must start at "
					     "%zu, be non-empty and end by %zu",
					     i, pt->offset, pt->offset, pt->size, end, cp->dim);
		}
		end += pt->size;
		if ((rc = constraint_validate(&pt->c, pt->size, f, e)) != ERR_OK)
			return rc;
	}
	if (end != cp->dim) {
		if (e == NULL)
			return ERR_INVALID;
		return err_set_field(e, ERR_INVALID, field != NULL ? field : "",
				     "the parts cover [0, %zu), not [0, %zu)", end, cp->dim);
	}
	return ERR_OK;
}

size_t
constraint_product_scratch(const struct constraint_product *cp)
{
	size_t n = 0;

	for (size_t i = 0; i < cp->nparts; i++) {
		size_t k = constraint_project_scratch(&cp->part[i].c, cp->part[i].size);

		n = k > n ? k : n;
	}
	return n;
}

void
constraint_product_project(const struct constraint_product *cp, double *x, double *scratch)
{
	for (size_t i = 0; i < cp->nparts; i++)
		constraint_project(&cp->part[i].c, x + cp->part[i].offset, cp->part[i].size,
				   scratch);
}

double
constraint_product_lmo(const struct constraint_product *cp, const double *g, double *ret_s)
{
	double value = 0.0;

	for (size_t i = 0; i < cp->nparts; i++) {
		const struct constraint_part *pt = &cp->part[i];

		value += constraint_lmo(&pt->c, g + pt->offset, pt->size, ret_s + pt->offset);
	}
	return value;
}

bool
constraint_product_contains(const struct constraint_product *cp, const double *x, double tol,
			    double *scratch)
{
	for (size_t i = 0; i < cp->nparts; i++) {
		const struct constraint_part *pt = &cp->part[i];

		if (!constraint_contains(&pt->c, x + pt->offset, pt->size, tol, scratch))
			return false;
	}
	return true;
}
