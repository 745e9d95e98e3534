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
validate_radius(const struct constraint *c, const char *field, struct err *e)
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
l2_contains(const struct constraint *c, const double *x, size_t d, double tol)
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
l1_contains(const struct constraint *c, const double *x, size_t d, double tol)
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
simplex_validate(const struct constraint *c, const char *field, struct err *e)
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
simplex_contains(const struct constraint *c, const double *x, size_t d, double tol)
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
box_validate(const struct constraint *c, const char *field, struct err *e)
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
box_contains(const struct constraint *c, const double *x, size_t d, double tol)
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
lp_validate(const struct constraint *c, const char *field, struct err *e)
{
	/* p = 1 is the l1 ball (its own kind); the exponent map |t|^{p-1} of
	 * the projection is only continuous for p > 1, and p > 2 is outside
	 * what the mirror maps need. */
	if (!(isfinite(c->p) && c->p > 1.0 && c->p <= 2.0))
		return invalid(e, field, "p", "must be a number in (1, 2]");
	return validate_radius(c, field, e);
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
lp_contains(const struct constraint *c, const double *x, size_t d, double tol)
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
		.project_scratch = false,
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
		.project_scratch = true,
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
		.project_scratch = true,
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
		.project_scratch = false,
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
		.project_scratch = false,
		.lmo = lp_lmo,
		.entropic = CONSTRAINT_ENTROPIC_NONE,
		.pnorm_outer = CONSTRAINT_PNORM_OUTER_LP,
		.example = { .kind = CONSTRAINT_LP_BALL, .radius = 1.2, .p = 1.5 },
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
	return ops->validate(c, field, e);
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
constraint_contains(const struct constraint *c, const double *x, size_t d, double tol)
{
	const struct constraint_ops *ops = constraint_ops_of(c->kind);

	return ops != NULL && ops->contains(c, x, d, tol);
}

size_t
constraint_project_scratch(const struct constraint *c, size_t d)
{
	const struct constraint_ops *ops = constraint_ops_of(c->kind);

	return ops != NULL && ops->project_scratch ? d : 0;
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
constraint_product_contains(const struct constraint_product *cp, const double *x, double tol)
{
	for (size_t i = 0; i < cp->nparts; i++) {
		const struct constraint_part *pt = &cp->part[i];

		if (!constraint_contains(&pt->c, x + pt->offset, pt->size, tol))
			return false;
	}
	return true;
}
