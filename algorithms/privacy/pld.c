/*
 * pld.c - privacy loss distributions, discretised pessimistically and
 * composed by FFT (pld.h; README.md here, "PLD accountant").
 *
 * A mechanism is represented by a dominating pair (P, Q): the privacy
 * loss L = log(dP/dQ)(o) under o ~ P determines the hockey-stick
 * divergence delta(eps) = E_P[(1 - e^(eps - L))_+] + P[L = +inf], and
 * the loss of a composition is the sum of independent losses (Meiser &
 * Mohammadi, CCS 2018; Koskela, Jalko, Honkela, AISTATS 2020; Zhu, Dong &
 * Wang, AISTATS 2022, Thm 10 for composition of dominating pairs).
 *
 * Upper estimate: the connect-the-dots discretisation (Doroshenko, Ghazi,
 * Kamath, Kumar, Manurangsi, PETS 2022).  The P-mass of L in each grid
 * cell (a, b] = ((i-1)h, ih] is split between a and b so that both the
 * P-mass and the Q-mass (e^-l dP) are preserved:
 *	to b: A / (1 - e^-h),  A = int_(a,b] (1 - e^(a - l)) dP(l),
 *	to a: B / (e^h - 1),   B = int_(a,b] (e^(b - l) - 1) dP(l).
 * The discrete pair is then a valid pair whose delta(e^eps) agrees with
 * the true one at every grid point and, both being convex in alpha =
 * e^eps, lies on the chords above it in between: it dominates the true
 * pair at every alpha, so its compositions dominate the true ones.
 * Losses below the grid are rounded up to its first point and losses
 * above it are moved to +inf (counted in delta, never dropped): both
 * only raise the loss, which can only raise delta.
 * Lower estimate: every loss rounded down to the grid (mass above the
 * grid put on its last point, mass below it dropped): a pair dominated
 * by the true one, so its delta is a lower bound.
 *
 * Composition: linear convolution of the two mass vectors by a radix-2
 * complex FFT.  Round-off: for a length-N transform with accurately
 * computed twiddles, ||fl(FFT x) - FFT x||_2 <= c log2(N) u ||FFT x||_2
 * with c < 5 (Higham, Accuracy and Stability of Numerical Algorithms,
 * 2nd ed., Thm 24.2); through two forward transforms, the product and
 * the inverse, the l1 error of the convolution of a and b is below
 * (16 log2(N) + 2) u (||a||_2 + ||b||_2) sqrt(N) / sqrt(N) ... which we
 * bound by err = 32 log2(N) u (||a||_2 + ||b||_2) (a factor 2 margin)
 * and carry: the upper estimate adds the accumulated err to delta, the
 * lower one subtracts it.  Negative entries (round-off) are set to 0
 * (covered by err).  After each composition the tails holding at most
 * 1e-12 (low) and 1e-13 (high) mass are truncated as above (upper: low
 * tail rounded up to the cut, high tail to +inf; lower: low tail
 * dropped, high tail rounded down to the cut).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "privacy/analytic_gaussian.h"
#include "privacy/pld.h"

#define PI_           3.14159265358979323846
#define SQRT2_        1.41421356237309504880
#define PLD_TAIL_LO   1e-12 /* low-tail mass rounded up per composition */
#define PLD_TAIL_HI   1e-13 /* high-tail mass moved to +inf per composition */
#define GAUSS_TAIL_SD 12.0

struct pld {
	int64_t lo; /* p[j] is the mass at loss (lo + j) h */
	size_t n;
	double *p;
	double inf; /* mass at +inf */
	double err; /* accumulated round-off allowance on delta */
};

/* One evaluation: grid step, which estimate, the work allowance (the
 * cost guard, pld.h) and the twiddles of the largest transform so far
 * (a transform of length N uses every (Nmax / N)-th one). */
struct pld_ctx {
	double h;
	int upper;
	double max_work; /* 0: no bound */
	double work;     /* spent so far, in PLD work units */
	double *wr, *wi;
	size_t wn;
};

static void
pld_free(struct pld *d)
{
	free(d->p);
	d->p = NULL;
	d->n = 0;
}

/* ------------------------------------------------------------------ FFT */

/* Twiddles w[k] = e^(-2 pi i k / n), k < n/2, each computed directly
 * (accurate to an ulp, as the error bound assumes). */
static void
twiddles(double *wr, double *wi, size_t n)
{
	for (size_t k = 0; k < n / 2; k++) {
		double ang = -2.0 * PI_ * (double)k / (double)n;

		wr[k] = cos(ang);
		wi[k] = sin(ang);
	}
}

/* wr, wi: twiddles of a length tn * n transform (tn >= 1, read with
 * stride tn). */
static void
fft_core(double *re, double *im, size_t n, int inverse, const double *wr, const double *wi,
	 size_t tn)
{
	size_t i, j, len;
	double sgn = inverse ? -1.0 : 1.0;

	if (n < 2)
		return;
	for (i = 1, j = 0; i < n; i++) {
		size_t bit = n >> 1;

		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			double t = re[i];

			re[i] = re[j];
			re[j] = t;
			t = im[i];
			im[i] = im[j];
			im[j] = t;
		}
	}
	for (len = 2; len <= n; len <<= 1) {
		size_t half = len >> 1, stride = n / len * tn;

		for (i = 0; i < n; i += len)
			for (size_t k = 0; k < half; k++) {
				double cr = wr[k * stride], ci = sgn * wi[k * stride];
				size_t a = i + k, m = a + half;
				double xr = re[m] * cr - im[m] * ci;
				double xi = re[m] * ci + im[m] * cr;

				re[m] = re[a] - xr;
				im[m] = im[a] - xi;
				re[a] += xr;
				im[a] += xi;
			}
	}
}

enum err_code
pld_fft(double *re, double *im, size_t n, int inverse, struct err *e)
{
	double *w;

	if (n == 0 || (n & (n - 1)) != 0)
		return err_set(e, ERR_INVALID, "fft length must be a power of two");
	if (n < 2)
		return ERR_OK;
	w = malloc(n * sizeof(double));
	if (w == NULL)
		return err_set(e, ERR_NOMEM, "out of memory");
	twiddles(w, w + n / 2, n);
	fft_core(re, im, n, inverse, w, w + n / 2, 1);
	free(w);
	return ERR_OK;
}

/* Account cost units before doing the work; refuse past the bound. */
static enum err_code
spend(struct pld_ctx *c, double units, struct err *e)
{
	if (c->max_work > 0.0 && c->work + units > c->max_work)
		return err_set(e, ERR_NUMERIC, PLD_MSG_COST);
	c->work += units;
	return ERR_OK;
}

/* Work units of a linear convolution of lengths na, nb (the cost model
 * of pld_cost_estimate and of the run-time guard alike). */
static double
conv_units(size_t na, size_t nb)
{
	double n = (double)na + (double)nb - 1.0, N = 1.0;

	if ((double)na * (double)nb <= PLD_DIRECT_LIMIT)
		return (double)na * (double)nb / PLD_DIRECT_PER_UNIT;
	while (N < n)
		N *= 2.0;
	return N * log2(N);
}

/* The twiddles for a transform of length N (a power of two): computed
 * once for the largest N of the evaluation, each value directly (the
 * error bound's assumption); a smaller N reads them with a stride. */
static enum err_code
ctx_twiddles(struct pld_ctx *c, size_t N, struct err *e)
{
	double *w;

	if (c->wn >= N)
		return ERR_OK;
	w = malloc(N * sizeof(double));
	if (w == NULL)
		return err_set(e, ERR_NOMEM, "out of memory");
	free(c->wr);
	c->wr = w;
	c->wi = w + N / 2;
	c->wn = N;
	twiddles(c->wr, c->wi, N);
	return ERR_OK;
}

static double
l2(const double *p, size_t n)
{
	double s = 0.0;

	for (size_t i = 0; i < n; i++)
		s += p[i] * p[i];
	return sqrt(s);
}

/* Truncate the tails of d (mass <= PLD_TAIL_LO below, PLD_TAIL_HI
 * above) in place. */
static void
truncate_tails(struct pld *d, int upper)
{
	size_t a = 0, b = d->n;
	double low = 0.0, high = 0.0;

	while (a + 1 < b && low + d->p[a] <= PLD_TAIL_LO)
		low += d->p[a++];
	while (b - 1 > a && high + d->p[b - 1] <= PLD_TAIL_HI)
		high += d->p[--b];
	if (upper) {
		d->p[a] += low;
		d->inf += high;
	} else {
		d->p[b - 1] += high;
	}
	if (a > 0)
		memmove(d->p, d->p + a, (b - a) * sizeof(double));
	d->lo += (int64_t)a;
	d->n = b - a;
}

/* *ret = a (*) b; a and b are left alone. */
static enum err_code
convolve(struct pld_ctx *c, const struct pld *a, const struct pld *b, struct pld *ret,
	 struct err *e)
{
	size_t n = a->n + b->n - 1, N = 1;
	struct pld r = { 0 };
	enum err_code rc;

	if (n > PLD_MAX_POINTS)
		return err_set(e, ERR_NUMERIC,
			       "the privacy loss distribution needs more than %zu points",
			       PLD_MAX_POINTS);
	if ((rc = spend(c, conv_units(a->n, b->n), e)) != ERR_OK)
		return rc;
	r.p = calloc(n, sizeof(double));
	if (r.p == NULL)
		return err_set(e, ERR_NOMEM, "out of memory");
	r.n = n;
	r.lo = a->lo + b->lo;
	if ((double)a->n * (double)b->n <= PLD_DIRECT_LIMIT) {
		for (size_t i = 0; i < a->n; i++)
			for (size_t j = 0; j < b->n; j++)
				r.p[i + j] += a->p[i] * b->p[j];
		/* direct sums of non-negative terms: relative error <= n u */
		r.err = (double)(a->n + b->n) * 1.2e-16;
	} else {
		double *buf;

		while (N < n)
			N <<= 1;
		if ((rc = ctx_twiddles(c, N, e)) != ERR_OK) {
			free(r.p);
			return rc;
		}
		buf = calloc(2 * N, sizeof(double));
		if (buf == NULL) {
			free(r.p);
			return err_set(e, ERR_NOMEM, "out of memory");
		}
		double *zr = buf, *zi = buf + N;
		size_t tn = c->wn / N;

		/* both real inputs in one complex transform: z = a + i b,
		 * A_k = (Z_k + conj Z_(N-k)) / 2, B_k = (Z_k - conj Z_(N-k)) / 2i */
		memcpy(zr, a->p, a->n * sizeof(double));
		memcpy(zi, b->p, b->n * sizeof(double));
		fft_core(zr, zi, N, 0, c->wr, c->wi, tn);
		for (size_t k = 0; k <= N / 2; k++) {
			size_t m = (N - k) & (N - 1);
			double pr = zr[k], pi = zi[k], qr = zr[m], qi = -zi[m];
			double ar = 0.5 * (pr + qr), ai = 0.5 * (pi + qi);
			double br = 0.5 * (pi - qi), bi = -0.5 * (pr - qr);
			double cr = ar * br - ai * bi, ci = ar * bi + ai * br;

			zr[k] = cr;
			zi[k] = ci;
			zr[m] = cr; /* the product of real sequences is Hermitian */
			zi[m] = -ci;
		}
		fft_core(zr, zi, N, 1, c->wr, c->wi, tn);
		for (size_t k = 0; k < n; k++) {
			double v = zr[k] / (double)N;

			r.p[k] = v > 0.0 ? v : 0.0;
		}
		free(buf);
		r.err = 32.0 * log2((double)N) * 1.1102230246251565e-16 *
			(l2(a->p, a->n) + l2(b->p, b->n));
	}
	r.err += a->err + b->err;
	/* P[L_a + L_b = +inf] = 1 - (1 - inf_a)(1 - inf_b) */
	r.inf = a->inf + b->inf - a->inf * b->inf;
	truncate_tails(&r, c->upper);
	*ret = r;
	return ERR_OK;
}

static enum err_code
pld_copy(const struct pld *a, struct pld *ret, struct err *e)
{
	*ret = *a;
	ret->p = malloc(a->n * sizeof(double));
	if (ret->p == NULL)
		return err_set(e, ERR_NOMEM, "out of memory");
	memcpy(ret->p, a->p, a->n * sizeof(double));
	return ERR_OK;
}

/* *ret = a composed with itself k >= 1 times, by repeated squaring. */
static enum err_code
self_compose(struct pld_ctx *c, const struct pld *a, uint64_t k, struct pld *ret, struct err *e)
{
	struct pld base, acc = { 0 }, t;
	int have = 0;
	enum err_code rc;

	if ((rc = pld_copy(a, &base, e)) != ERR_OK)
		return rc;
	for (;;) {
		if (k & 1) {
			if (!have) {
				if ((rc = pld_copy(&base, &acc, e)) != ERR_OK)
					goto fail;
				have = 1;
			} else {
				if ((rc = convolve(c, &acc, &base, &t, e)) != ERR_OK)
					goto fail;
				pld_free(&acc);
				acc = t;
			}
		}
		k >>= 1;
		if (k == 0)
			break;
		if ((rc = convolve(c, &base, &base, &t, e)) != ERR_OK)
			goto fail;
		pld_free(&base);
		base = t;
	}
	pld_free(&base);
	*ret = acc;
	return ERR_OK;
fail:
	pld_free(&base);
	pld_free(&acc);
	return rc;
}

/* ------------------------------------------------------- discretisation */

/* A leaf's loss law under P: atoms, a continuous density on [cl, cr]
 * (NULL density: none), and the P-mass below lo_cut / above hi_cut that
 * the grid leaves out (the density is integrated on [lo_cut, hi_cut]). */
struct leaf_law {
	double atom_l[2], atom_w[2];
	int n_atoms;
	double (*density)(double l, const double *par);
	double par[3];
	double cl, cr;
	double lo_cut, hi_cut, tail_lo, tail_hi;
};

/* 8-point Gauss-Legendre on [-1, 1] */
static const double gl_x[4] = { 0.1834346424956498, 0.5255324099163290, 0.7966664774136267,
				0.9602898564975363 };
static const double gl_w[4] = { 0.3626837833783620, 0.3137066458778873, 0.2223810344533745,
				0.1012285362903763 };

/* int_[u,v] f(l) g(l) dl for g(l) = -expm1(a - l) (kind 0), expm1(b - l)
 * (kind 1) or 1 (kind 2). */
static double
cell_integral(const struct leaf_law *L, double u, double v, double a, double b, int kind)
{
	double c = 0.5 * (u + v), r = 0.5 * (v - u), s = 0.0;

	for (int q = 0; q < 4; q++)
		for (int sg = -1; sg <= 1; sg += 2) {
			double l = c + sg * r * gl_x[q];
			double g = kind == 0 ? -expm1(a - l) : kind == 1 ? expm1(b - l) : 1.0;

			s += gl_w[q] * L->density(l, L->par) * g;
		}
	return s * r;
}

/* The grid [ilo h, ihi h] a leaf's law needs. */
static enum err_code
leaf_grid(const struct leaf_law *L, double h, int64_t *ilo, int64_t *ihi, struct err *e)
{
	double lmin = L->lo_cut, lmax = L->hi_cut;

	for (int k = 0; k < L->n_atoms; k++) {
		lmin = fmin(lmin, L->atom_l[k]);
		lmax = fmax(lmax, L->atom_l[k]);
	}
	*ilo = (int64_t)floor(lmin / h);
	*ihi = (int64_t)ceil(lmax / h);
	if (*ihi < *ilo + 1)
		*ihi = *ilo + 1;
	if ((double)(*ihi - *ilo) + 1.0 > (double)PLD_MAX_POINTS)
		return err_set(e, ERR_NUMERIC,
			       "the privacy loss distribution needs more than %zu points",
			       PLD_MAX_POINTS);
	return ERR_OK;
}

static enum err_code
discretise(struct pld_ctx *c, const struct leaf_law *L, struct pld *ret, struct err *e)
{
	const double h = c->h;
	const int upper = c->upper;
	int64_t ilo, ihi;
	size_t n;
	struct pld d = { 0 };
	double cu = -expm1(-h), cd = expm1(h);

	enum err_code rc;

	if ((rc = leaf_grid(L, h, &ilo, &ihi, e)) != ERR_OK)
		return rc;
	n = (size_t)(ihi - ilo + 1);
	if ((rc = spend(c, (double)n * PLD_LEAF_UNITS, e)) != ERR_OK)
		return rc;
	d.p = calloc(n, sizeof(double));
	if (d.p == NULL)
		return err_set(e, ERR_NOMEM, "out of memory");
	d.n = n;
	d.lo = ilo;
	for (int k = 0; k < L->n_atoms; k++) {
		double l = L->atom_l[k], w = L->atom_w[k];
		int64_t i = (int64_t)ceil(l / h);
		double b = (double)i * h, a = b - h;

		if (i > ihi)
			i = ihi;          /* cannot happen: ihi covers every atom */
		if (l >= b || i == ilo) { /* on a grid point */
			d.p[i - ilo] += w;
			continue;
		}
		if (upper) {
			d.p[i - ilo] += w * -expm1(a - l) / cu;
			d.p[i - 1 - ilo] += w * expm1(b - l) / cd;
		} else {
			d.p[i - 1 - ilo] += w;
		}
	}
	if (L->density != NULL) {
		double u0 = fmax(L->cl, L->lo_cut), v0 = fmin(L->cr, L->hi_cut);

		for (int64_t i = ilo + 1; i <= ihi; i++) {
			double a = (double)(i - 1) * h, b = (double)i * h;
			double u = fmax(a, u0), v = fmin(b, v0);

			if (!(u < v))
				continue;
			if (upper) {
				d.p[i - ilo] += cell_integral(L, u, v, a, b, 0) / cu;
				d.p[i - 1 - ilo] += cell_integral(L, u, v, a, b, 1) / cd;
			} else {
				d.p[i - 1 - ilo] += cell_integral(L, u, v, a, b, 2);
			}
		}
	}
	if (upper) {
		d.p[0] += L->tail_lo;
		d.inf = L->tail_hi;
	} else {
		d.p[n - 1] += L->tail_hi;
	}
	/* quadrature and exp/expm1 round-off: relative ~1e-15 per cell */
	d.err = 1e-14;
	*ret = d;
	return ERR_OK;
}

static double
gauss_density(double l, const double *par)
{
	double x = (l - par[0]) / par[1];

	return exp(-0.5 * x * x) / (par[1] * 2.5066282746310002);
}

static double
laplace_density(double l, const double *par)
{
	return 0.25 * exp(0.5 * (l - par[0]));
}

/* The dominating pair of a leaf. */
static enum err_code
leaf_law(const struct dp_event *n, struct leaf_law *L, struct err *e)
{
	memset(L, 0, sizeof(*L));
	switch (n->type) {
	case DP_EVENT_GAUSSIAN: {
		/* P = N(1, z^2), Q = N(0, z^2): L ~ N(mu^2/2, mu^2) under P,
		 * mu = 1/z */
		double mu = 1.0 / n->noise_multiplier, m = 0.5 * mu * mu;

		if (!isfinite(mu) || !(mu > 0.0))
			return err_set(e, ERR_NUMERIC, "gaussian noise multiplier out of range");
		L->density = gauss_density;
		L->par[0] = m;
		L->par[1] = mu;
		L->cl = -INFINITY;
		L->cr = INFINITY;
		L->lo_cut = m - GAUSS_TAIL_SD * mu;
		L->hi_cut = m + GAUSS_TAIL_SD * mu;
		L->tail_lo = 0.5 * erfc(GAUSS_TAIL_SD / SQRT2_);
		L->tail_hi = L->tail_lo;
		return ERR_OK;
	}
	case DP_EVENT_LAPLACE: {
		/* P = Lap(0, b), Q = Lap(1, b), e0 = 1/b: L = e0 on x <= 0
		 * (mass 1/2), -e0 on x >= 1 (mass e^-e0 / 2), and between a
		 * density e^((l - e0)/2) / 4 on (-e0, e0). */
		double e0 = 1.0 / n->noise_multiplier;

		if (!isfinite(e0) || !(e0 > 0.0))
			return err_set(e, ERR_NUMERIC, "laplace noise multiplier out of range");
		L->n_atoms = 2;
		L->atom_l[0] = e0;
		L->atom_w[0] = 0.5;
		L->atom_l[1] = -e0;
		L->atom_w[1] = 0.5 * exp(-e0);
		L->density = laplace_density;
		L->par[0] = e0;
		L->cl = -e0;
		L->cr = e0;
		L->lo_cut = -e0;
		L->hi_cut = e0;
		return ERR_OK;
	}
	case DP_EVENT_PURE: {
		/* Randomized response: every eps-DP mechanism is dominated by
		 * P = (e^eps, 1)/(1 + e^eps), Q = (1, e^eps)/(1 + e^eps)
		 * (Kairouz, Oh & Viswanath 2015; Zhu, Dong & Wang 2022, Prop. 8).
		 * (bounded_range has its own, tighter curve: br_delta.) */
		double eps = n->epsilon;

		if (!isfinite(eps) || !(eps > 0.0))
			return err_set(e, ERR_NUMERIC, "epsilon out of range");
		L->n_atoms = 2;
		L->atom_l[0] = eps;
		L->atom_w[0] = 1.0 / (1.0 + exp(-eps));
		L->atom_l[1] = -eps;
		L->atom_w[1] = 1.0 / (1.0 + exp(eps));
		L->lo_cut = -eps;
		L->hi_cut = eps;
		return ERR_OK;
	}
	default:
		return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
	}
}

/*
 * The hockey-stick curve of epsilon-bounded range (Durfee & Rogers,
 * NeurIPS 2019; Dong, Durfee & Rogers, ICML 2020, "Optimal differential
 * privacy composition for exponential mechanisms").  A mechanism is
 * eps-BR when, for all neighbours, the privacy loss L = log(dP/dQ) takes
 * values in an interval of length eps; as E_P[e^-L] = 1 that interval
 * holds 0, so it is [t - eps, t] with t in [0, eps].  For a fixed t, the
 * hockey-stick E_P[(1 - e^(e - L))_+] is largest for the two-point law
 * on the ends (the hockey-stick is (1 - e^e Y)_+ in Y = e^-L, a convex
 * function, and Y's P-mean is fixed at 1, so the chord between the ends
 * bounds it): generalised randomized response RR_t, P(L = t) = p_t =
 * (e^eps - e^t)/(e^eps - 1), P(L = t - eps) = 1 - p_t.  For e in [0, eps]
 *	delta_t(e) = p_t (1 - e^(e - t))_+,
 * maximised over t at e^t = sqrt(e^(eps + e)), t = (eps + e)/2:
 *	delta(e) = sup_t delta_t(e) = (e^(eps/2) - e^(e/2))^2 / (e^eps - 1)
 *	         = e^e expm1((eps - e)/2)^2 / expm1(eps),
 * and 0 for e >= eps.  The family is closed under swapping P and Q
 * (t -> eps - t), so the curve below alpha = 1 is 1 - alpha +
 * alpha H(1/alpha), as for the subsampled pairs.  Every point of this
 * curve is attained by some RR_t (itself eps-BR: its loss takes two
 * values eps apart), so for one event it is exact; the pair read off its
 * convex curve dominates every eps-BR pair (Zhu, Dong & Wang, AISTATS
 * 2022: a convex curve is the curve of a pair) and compositions of it
 * dominate adaptive compositions (ibid., Thm 10).  Under composition this
 * is an upper bound, not claimed equal to the optimal k-fold figure of
 * Dong, Durfee & Rogers.  It is below randomized response(eps) at every
 * e < eps (at e = 0: tanh(eps/4) against tanh(eps/2)).
 */
static double
br_delta(double eps, double e)
{
	double x;

	if (!(e < eps))
		return 0.0;
	x = expm1(0.5 * (eps - e));
	return exp(e) * x * x / expm1(eps);
}

/* ------------------------------------ sampling without replacement */

/*
 * Fixed-size batches of m out of n records sampled without replacement,
 * replace-one relation, gamma = m/n.
 *
 * Theorem (Zhu, Dong & Wang, "Optimal accounting of differential privacy
 * via characteristic function", AISTATS 2022, the dominating pair for
 * subsampling without replacement; theorem number not re-checked here),
 * following Balle,
 * Barthe & Gaboardi, NeurIPS 2018, Thm 10 via advanced joint convexity):
 * if (P, Q) is a dominating pair of M under replace-one, then for every
 * alpha >= 1 and every ordered pair of neighbours D ~ D',
 *	H_alpha(M(S(D)) || M(S(D'))) <= H_alpha(gamma P + (1 - gamma) Q || Q)
 *	                              = gamma H_beta(P || Q),
 *	beta = 1 + (alpha - 1) / gamma,
 * where H_alpha(X || Y) = sup_E X(E) - alpha Y(E) (hockey-stick).
 * Since replace-one is symmetric this holds for both orders; for
 * alpha < 1, H_alpha(X || Y) = 1 - alpha + alpha H_(1/alpha)(Y || X).
 * So H(alpha) <= H*(alpha) := h(alpha) for alpha >= 1 and
 * 1 - alpha + alpha h(1/alpha) below, h(alpha) = gamma H_beta(P || Q),
 * and, hockey-stick curves being convex, H <= conv H*, the greatest
 * convex minorant: the curve of the symmetrised dominating pair.
 *
 * Discretisation (connect the dots on the curve): sample H* at alpha_i =
 * e^(ih), i in [-M, M], with the anchor (0, 1); the lower convex hull g
 * of those points is >= conv H* (conv H* is convex and below every
 * sample), piecewise linear in alpha with breakpoints on the grid, hence
 * the curve of a discrete pair with mass alpha_i (slope right - slope
 * left) at loss ih, and H*(alpha_M) at +inf (g flat beyond alpha_M, above
 * the decreasing H).  M is the first power of two (times 1/h) with
 * h(e^(Mh)) <= 1e-18 (that mass goes to +inf, counted).  Values are kept
 * as u = H* - (1 - alpha)_+ (small, accurate) and the slopes of
 * (1 - alpha)_+ are added exactly, so no digit is lost near H ~ 1.
 * Lower estimate: the same masses one grid step down.  For one mechanism
 * its delta(eps) is the upper curve at eps + h, a chord value below the
 * curve's value at the grid point under eps + h, which is >= eps: a
 * lower bound.  Under composition this lower estimate is indicative
 * only (README.md).
 *
 * Bases: gaussian (H_beta from the analytic Gaussian curve), laplace
 * (1 - e^((e - e0)/2)), pure (randomized response), bounded_range
 * (br_delta).
 */
static double
wor_base_delta(const struct dp_event *b, double eps)
{
	double d;

	switch (b->type) {
	case DP_EVENT_GAUSSIAN:
		if (ag_delta(b->noise_multiplier, eps, &d, NULL) != ERR_OK)
			return NAN;
		return d;
	case DP_EVENT_LAPLACE: {
		double e0 = 1.0 / b->noise_multiplier;

		return eps < e0 ? -expm1(0.5 * (eps - e0)) : 0.0;
	}
	case DP_EVENT_BOUNDED_RANGE:
		return br_delta(b->epsilon, eps);
	default: /* pure */
		return eps < b->epsilon ? -expm1(eps - b->epsilon) / (1.0 + exp(-b->epsilon)) : 0.0;
	}
}

/* u(eps) = H*(e^eps) - (1 - e^eps)_+ */
static double
wor_u(const struct dp_event *b, double gamma, double eps)
{
	double a = fabs(eps);
	double h = gamma * wor_base_delta(b, log1p(expm1(a) / gamma));

	return eps >= 0.0 ? h : exp(eps) * h;
}

static double
wor_slope(const double *al, const double *u, size_t p, size_t q)
{
	double da = al[q] - al[p];
	double fp = al[p] < 1.0 ? 1.0 - al[p] : 0.0, fq = al[q] < 1.0 ? 1.0 - al[q] : 0.0;
	double sf = al[q] <= 1.0 ? -1.0 : al[p] >= 1.0 ? 0.0 : (fq - fp) / da;

	return (u[q] - u[p]) / da + sf;
}

/* M: the grid [-M h, M h] of a subsampled leaf (the first power of two
 * emax with H*(e^emax) <= 1e-18, over h). */
static enum err_code
wor_grid(const struct dp_event *b, double gamma, double h, int64_t *ret_m, struct err *e)
{
	double emax = 1.0;

	if (b->type == DP_EVENT_BOUNDED_RANGE && gamma == 1.0) {
		/* the curve is exactly 0 from eps on */
		if (!isfinite(b->epsilon) || !(b->epsilon > 0.0) || b->epsilon > 4096.0)
			return err_set(e, ERR_NUMERIC, "epsilon out of range");
		emax = b->epsilon;
	}
	for (;;) {
		double v = wor_u(b, gamma, emax);

		if (!isfinite(v))
			return err_set(e, ERR_NUMERIC, "subsampled delta not finite");
		if (v <= 1e-18)
			break;
		emax *= 2.0;
		if (emax > 4096.0)
			return err_set(e, ERR_NUMERIC, "subsampled loss range too wide");
	}
	*ret_m = (int64_t)ceil(emax / h);
	if ((double)(2 * *ret_m + 2) > (double)PLD_MAX_POINTS)
		return err_set(e, ERR_NUMERIC,
			       "the privacy loss distribution needs more than %zu points",
			       PLD_MAX_POINTS);
	return ERR_OK;
}

/* The pair of the curve gamma H_b(1 + (alpha - 1)/gamma) (symmetrised):
 * a subsampled leaf (gamma < 1) or, at gamma = 1, the bounded_range leaf
 * itself (its curve is known, its pair is not written down). */
static enum err_code
curve_leaf(struct pld_ctx *c, const struct dp_event *b, double gamma, struct pld *ret,
	   struct err *e)
{
	const double h = c->h;
	const int upper = c->upper;
	int64_t M;
	size_t np, *hull = NULL, nh = 0;
	double *al = NULL, *u = NULL;
	struct pld d = { 0 };
	enum err_code rc = ERR_OK;

	if (b->type != DP_EVENT_GAUSSIAN && b->type != DP_EVENT_LAPLACE &&
	    b->type != DP_EVENT_PURE && b->type != DP_EVENT_BOUNDED_RANGE)
		return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
	if (!(gamma > 0.0) || gamma > 1.0 || (gamma == 1.0 && b->type != DP_EVENT_BOUNDED_RANGE))
		return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
	if ((rc = wor_grid(b, gamma, h, &M, e)) != ERR_OK)
		return rc;
	np = (size_t)(2 * M + 2); /* anchor + 2M + 1 grid points */
	if ((rc = spend(c, (double)np * PLD_WOR_UNITS, e)) != ERR_OK)
		return rc;
	al = malloc(np * sizeof(double));
	u = malloc(np * sizeof(double));
	hull = malloc(np * sizeof(size_t));
	d.n = (size_t)(2 * M + 1);
	d.lo = -M;
	d.p = calloc(d.n, sizeof(double));
	if (al == NULL || u == NULL || hull == NULL || d.p == NULL) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	al[0] = 0.0;
	u[0] = 0.0; /* H(0) = 1 = (1 - 0)_+ */
	for (int64_t i = -M; i <= M; i++) {
		size_t k = (size_t)(i + M + 1);

		al[k] = exp((double)i * h);
		u[k] = wor_u(b, gamma, (double)i * h);
		if (!isfinite(u[k]) || u[k] < 0.0) {
			rc = err_set(e, ERR_NUMERIC, "subsampled delta not finite");
			goto out;
		}
	}
	/* lower convex hull (monotone chain) */
	for (size_t k = 0; k < np; k++) {
		while (nh >= 2 && wor_slope(al, u, hull[nh - 2], hull[nh - 1]) >=
					  wor_slope(al, u, hull[nh - 1], k))
			nh--;
		hull[nh++] = k;
	}
	for (size_t v = 1; v < nh; v++) {
		double sl = wor_slope(al, u, hull[v - 1], hull[v]);
		double sr = v + 1 < nh ? wor_slope(al, u, hull[v], hull[v + 1]) : 0.0;
		double w = al[hull[v]] * (sr - sl);
		size_t j = hull[v] - 1; /* grid index from -M */

		if (w < 0.0)
			w = 0.0;
		if (upper)
			d.p[j] += w;
		else
			d.p[j > 0 ? j - 1 : 0] += w;
	}
	if (upper)
		d.inf = u[np - 1];
	else
		d.p[d.n - 1] += u[np - 1];
	d.err = 1e-14;
	truncate_tails(&d, upper);
	*ret = d;
	d.p = NULL;
out:
	free(al);
	free(u);
	free(hull);
	free(d.p);
	return rc;
}

/* ------------------------------------------------------------- the tree */

static bool
subtree_equal(const struct dp_event_tree *t, unsigned i, unsigned j)
{
	const struct dp_event *a = &t->node[i], *b = &t->node[j];

	if (a->type != b->type || a->relation != b->relation ||
	    memcmp(&a->noise_multiplier, &b->noise_multiplier, sizeof(double)) != 0 ||
	    memcmp(&a->epsilon, &b->epsilon, sizeof(double)) != 0 ||
	    memcmp(&a->delta, &b->delta, sizeof(double)) != 0 ||
	    memcmp(&a->rho, &b->rho, sizeof(double)) != 0 ||
	    memcmp(&a->sampling_rate, &b->sampling_rate, sizeof(double)) != 0 || a->n != b->n ||
	    a->batch != b->batch || a->count != b->count || a->n_children != b->n_children ||
	    a->k_max != b->k_max)
		return false;
	for (unsigned c = 0; c < a->n_children; c++)
		if (!subtree_equal(t, a->first_child + c, b->first_child + c))
			return false;
	return true;
}

static enum err_code
node_pld(struct pld_ctx *ctx, const struct dp_event_tree *t, unsigned i, struct pld *ret,
	 struct err *e)
{
	const struct dp_event *n = &t->node[i];
	struct leaf_law L;
	struct pld c, acc, tmp;
	enum err_code rc;

	switch (n->type) {
	case DP_EVENT_GAUSSIAN:
	case DP_EVENT_LAPLACE:
	case DP_EVENT_PURE:
		if ((rc = leaf_law(n, &L, e)) != ERR_OK)
			return rc;
		return discretise(ctx, &L, ret, e);
	case DP_EVENT_BOUNDED_RANGE:
		return curve_leaf(ctx, n, 1.0, ret, e);
	case DP_EVENT_SELF_COMPOSED:
		if ((rc = node_pld(ctx, t, n->first_child, &c, e)) != ERR_OK)
			return rc;
		rc = self_compose(ctx, &c, n->count, ret, e);
		pld_free(&c);
		return rc;
	case DP_EVENT_COMPOSED:
		if ((rc = node_pld(ctx, t, n->first_child, &acc, e)) != ERR_OK)
			return rc;
		for (unsigned k = 1; k < n->n_children; k++) {
			if ((rc = node_pld(ctx, t, n->first_child + k, &c, e)) != ERR_OK) {
				pld_free(&acc);
				return rc;
			}
			rc = convolve(ctx, &acc, &c, &tmp, e);
			pld_free(&c);
			pld_free(&acc);
			if (rc != ERR_OK)
				return rc;
			acc = tmp;
		}
		*ret = acc;
		return ERR_OK;
	case DP_EVENT_SAMPLED_WOR:
		if (n->relation != DP_REPLACE_ONE)
			return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
		if (n->batch == n->n) /* gamma = 1: the base event itself */
			return node_pld(ctx, t, n->first_child, ret, e);
		if (t->node[n->first_child].n_children != 0)
			return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
		return curve_leaf(ctx, &t->node[n->first_child], (double)n->batch / (double)n->n,
				  ret, e);
	case DP_EVENT_PARALLEL:
	case DP_EVENT_MIXTURE:
		/* One record is in one part (parallel) / the drawn child is
		 * chosen independently of the data (mixture): with all children
		 * the same event, the pair is that child's. */
		for (unsigned k = 1; k < n->n_children; k++)
			if (!subtree_equal(t, n->first_child, n->first_child + k))
				return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
		return node_pld(ctx, t, n->first_child, ret, e);
	default:
		return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
	}
}

/* delta(eps) of a discrete PLD, before the err allowance. */
static double
pld_delta_raw(const struct pld *d, double h, double eps)
{
	double s = 0.0;

	for (size_t j = d->n; j-- > 0;) {
		double l = (double)(d->lo + (int64_t)j) * h;

		if (!(l > eps))
			break;
		s += d->p[j] * -expm1(eps - l);
	}
	return d->inf + s;
}

/*
 * Smallest eps >= 0 with delta_d(eps) + adj <= delta.  delta_d is
 * decreasing and, between adjacent support points l_(j-1) < eps <= l_j,
 * equals inf + S1 - e^eps S2 with S1, S2 the sums of p and p e^-l over
 * l >= l_j: solve there.
 */
static double
pld_epsilon_raw(const struct pld *d, double h, double delta)
{
	long double s1 = d->inf, s2 = 0.0L;

	if (d->inf >= delta)
		return INFINITY;
	for (size_t j = d->n; j-- > 0;) {
		double l = (double)(d->lo + (int64_t)j) * h;
		double left = j > 0 ? fmax((double)(d->lo + (int64_t)j - 1) * h, 0.0) : 0.0;
		long double t1, t2, fl;
		double eps;

		if (!(l > 0.0))
			break; /* delta_d(0) <= delta was checked at the last step */
		t1 = s1 + d->p[j];
		t2 = s2 + (long double)d->p[j] * expl(-(long double)l);
		fl = t1 - expl((long double)left) * t2;
		if (fl > delta) {
			/* the root lies in [left, l] */
			eps = (double)logl((t1 - delta) / t2);
			eps = fmin(fmax(eps, left), l);
			return nextafter(eps, INFINITY);
		}
		s1 = t1;
		s2 = t2;
	}
	return 0.0;
}

/* -------------------------------------------------- the cost guard */

/*
 * The predicted points and work of a node, from the tree alone (pld.h,
 * pld_cost).  *ret_growth says how the width of k copies composed grows
 * with k beyond the first (in units of the node's width, times sqrt k):
 * a Gaussian leaf's sum is Gaussian with sqrt(k) times its standard
 * deviation (the 12-sd grid: factor 1); a sum of k losses in [-w/2, w/2]
 * leaves [mean - t, mean + t] with mass below 1e-12 on either side for t
 * = w sqrt(k ln(1e12) / 2) (Hoeffding): factor 3.72; a subsampled leaf's
 * grid is set by its far tail, its sum's mass by its small dispersion:
 * no growth predicted (measured: 4745 to 24296 points over 10^4 steps at
 * step 1e-3, so the run-time check bounds it).
 */
static enum err_code
node_cost(const struct dp_event_tree *t, unsigned i, double h, double *ret_points, double *ret_work,
	  double *ret_growth, struct err *e)
{
	const struct dp_event *n = &t->node[i];
	struct leaf_law L;
	int64_t ilo, ihi, M;
	double np, w, g, cp, cw, cg;
	enum err_code rc;

	switch (n->type) {
	case DP_EVENT_GAUSSIAN:
	case DP_EVENT_LAPLACE:
	case DP_EVENT_BOUNDED_RANGE:
		if ((rc = wor_grid(n, 1.0, h, &M, e)) != ERR_OK)
			return rc;
		*ret_points = (double)(2 * M + 1);
		*ret_work = (double)(2 * M + 2) * PLD_WOR_UNITS;
		*ret_growth = 3.72; /* losses in [-eps, eps]: Hoeffding, as below */
		return ERR_OK;
	case DP_EVENT_PURE:
		if ((rc = leaf_law(n, &L, e)) != ERR_OK ||
		    (rc = leaf_grid(&L, h, &ilo, &ihi, e)) != ERR_OK)
			return rc;
		*ret_points = (double)(ihi - ilo + 1);
		*ret_work = *ret_points * PLD_LEAF_UNITS;
		*ret_growth = n->type == DP_EVENT_GAUSSIAN ? 1.0 : 3.72;
		return ERR_OK;
	case DP_EVENT_SELF_COMPOSED: {
		double done = 1.0, k = (double)n->count, sq = 0.0;

		if ((rc = node_cost(t, n->first_child, h, &cp, &cw, &cg, e)) != ERR_OK)
			return rc;
		w = cw;
		np = cp;
		/* the binary method: squarings of widths at 1, 2, 4, ...
		 * copies, and products into the accumulator (at most the
		 * current width each) */
		for (uint64_t b = n->count; b > 1; b >>= 1) {
			w += conv_units((size_t)np, (size_t)np);
			if (b & 1)
				sq += 1.0;
			done *= 2.0;
			np = fmin(fmin(done * (cp - 1.0) + 1.0, cp + cg * sqrt(done) * (cp - 1.0)),
				  (double)PLD_MAX_POINTS);
		}
		w += sq * conv_units((size_t)np, (size_t)np);
		np = fmin(fmin(k * (cp - 1.0) + 1.0, cp + cg * sqrt(k) * (cp - 1.0)),
			  (double)PLD_MAX_POINTS);
		*ret_points = np;
		*ret_work = w;
		*ret_growth = cg;
		return ERR_OK;
	}
	case DP_EVENT_COMPOSED:
		if ((rc = node_cost(t, n->first_child, h, &np, &w, &g, e)) != ERR_OK)
			return rc;
		for (unsigned k = 1; k < n->n_children; k++) {
			if ((rc = node_cost(t, n->first_child + k, h, &cp, &cw, &cg, e)) != ERR_OK)
				return rc;
			w += cw + conv_units((size_t)np, (size_t)cp);
			np = fmin(np + cp - 1.0, (double)PLD_MAX_POINTS);
			g = fmax(g, cg);
		}
		*ret_points = np;
		*ret_work = w;
		*ret_growth = g;
		return ERR_OK;
	case DP_EVENT_SAMPLED_WOR: {
		const struct dp_event *b = &t->node[n->first_child];

		if (n->relation != DP_REPLACE_ONE)
			return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
		if (n->batch == n->n)
			return node_cost(t, n->first_child, h, ret_points, ret_work, ret_growth, e);
		if (b->n_children != 0 ||
		    (b->type != DP_EVENT_GAUSSIAN && b->type != DP_EVENT_LAPLACE &&
		     b->type != DP_EVENT_PURE && b->type != DP_EVENT_BOUNDED_RANGE))
			return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
		if ((rc = wor_grid(b, (double)n->batch / (double)n->n, h, &M, e)) != ERR_OK)
			return rc;
		*ret_points = (double)(2 * M + 1);
		*ret_work = (double)(2 * M + 2) * PLD_WOR_UNITS;
		*ret_growth = 0.0;
		return ERR_OK;
	}
	case DP_EVENT_PARALLEL:
	case DP_EVENT_MIXTURE:
		for (unsigned k = 1; k < n->n_children; k++)
			if (!subtree_equal(t, n->first_child, n->first_child + k))
				return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
		return node_cost(t, n->first_child, h, ret_points, ret_work, ret_growth, e);
	default:
		return err_set(e, ERR_INVALID, PLD_MSG_UNSUPPORTED);
	}
}

/*
 * A root parallel (or mixture) whose children differ: a record is in one
 * part (parallel), or the part run is drawn independently of the data
 * (mixture), so the root's hockey-stick curve is at most the largest of
 * the children's (equal to it for parallel; joint convexity for the
 * mixture), and epsilon(delta) at most the largest child's: each child is
 * evaluated on its own (pld_epsilon_with).  Below the root, unequal
 * children stay unsupported (their maximum is not one PLD to compose).
 */
static bool
split_root(const struct dp_event_tree *t)
{
	const struct dp_event *r = &t->node[0];

	if (r->type != DP_EVENT_PARALLEL && r->type != DP_EVENT_MIXTURE)
		return false;
	for (unsigned k = 1; k < r->n_children; k++)
		if (!subtree_equal(t, r->first_child, r->first_child + k))
			return true;
	return false;
}

enum err_code
pld_cost(const struct dp_event_tree *t, double step, double *ret_work, struct err *e)
{
	double points, work, growth;
	enum err_code rc;

	if (step == 0.0)
		step = PLD_DEFAULT_STEP;
	if (!(step > 0.0) || !isfinite(step))
		return err_set(e, ERR_INVALID, "pld step must be finite and positive");
	if ((rc = dp_event_check(t, e)) != ERR_OK)
		return rc;
	if (split_root(t)) {
		double sum = 0.0;

		for (unsigned k = 0; k < t->node[0].n_children; k++) {
			if ((rc = node_cost(t, t->node[0].first_child + k, step, &points, &work,
					    &growth, e)) != ERR_OK)
				return rc;
			sum += work;
		}
		*ret_work = sum;
		return ERR_OK;
	}
	if ((rc = node_cost(t, 0, step, &points, &work, &growth, e)) != ERR_OK)
		return rc;
	*ret_work = work;
	return ERR_OK;
}

/* One estimate of the tree under o (upper or lower). */
static enum err_code
evaluate(const struct dp_event_tree *t, unsigned r, const struct pld_options *o, int upper,
	 double *work, struct pld *ret, struct err *e)
{
	struct pld_ctx c = { .h = o->step, .upper = upper, .max_work = o->max_work, .work = *work };
	enum err_code rc = node_pld(&c, t, r, ret, e);

	free(c.wr);
	*work = c.work;
	return rc;
}

static enum err_code
prepare(const struct dp_event_tree *t, const struct pld_options *in, struct pld_options *o,
	struct err *e)
{
	enum err_code rc;
	double predicted;

	*o = in != NULL ? *in : (struct pld_options){ 0 };
	if (o->step == 0.0)
		o->step = PLD_DEFAULT_STEP;
	if (!(o->step > 0.0) || !isfinite(o->step))
		return err_set(e, ERR_INVALID, "pld step must be finite and positive");
	if (!(o->max_work >= 0.0))
		return err_set(e, ERR_INVALID, "pld work bound must be >= 0");
	if ((rc = pld_cost(t, o->step, &predicted, e)) != ERR_OK)
		return rc;
	/* both estimates cost about the same */
	if (o->max_work > 0.0 && predicted * (o->upper_only ? 1.0 : 2.0) > o->max_work) {
		err_set(e, ERR_NUMERIC, PLD_MSG_COST);
		err_detail(e, "predicted %.4g work units, bound %.4g", predicted, o->max_work);
		return ERR_NUMERIC;
	}
	return ERR_OK;
}

enum err_code
pld_delta_with(const struct dp_event_tree *t, double epsilon, const struct pld_options *opt,
	       struct pld_interval *ret, double *ret_work, struct err *e)
{
	struct pld_options o;
	struct pld up, lo = { 0 };
	enum err_code rc;
	double du, dl = 0.0, work = 0.0;

	if (!(epsilon >= 0.0) || !isfinite(epsilon))
		return err_set_field(e, ERR_INVALID, "privacy.epsilon",
				     "'privacy.epsilon' must be finite and >= 0");
	if ((rc = prepare(t, opt, &o, e)) != ERR_OK)
		return rc;
	if ((rc = evaluate(t, 0, &o, 1, &work, &up, e)) != ERR_OK)
		return rc;
	du = fmin(1.0, pld_delta_raw(&up, o.step, epsilon) + up.err);
	pld_free(&up);
	if (!o.upper_only) {
		if ((rc = evaluate(t, 0, &o, 0, &work, &lo, e)) != ERR_OK)
			return rc;
		dl = fmax(0.0, pld_delta_raw(&lo, o.step, epsilon) - lo.err);
		pld_free(&lo);
	}
	if (!isfinite(du) || !isfinite(dl))
		return err_set(e, ERR_NUMERIC, "the pld delta is not finite");
	ret->upper = du;
	ret->lower = dl;
	if (ret_work != NULL)
		*ret_work = work;
	return ERR_OK;
}

enum err_code
pld_epsilon_with(const struct dp_event_tree *t, double delta, const struct pld_options *opt,
		 struct pld_interval *ret, double *ret_work, struct err *e)
{
	struct pld_options o;
	struct pld up, lo = { 0 };
	enum err_code rc;
	double eu, el = 0.0, work = 0.0;

	if (!(delta > 0.0 && delta < 1.0))
		return err_set_field(e, ERR_INVALID, "privacy.delta",
				     "'privacy.delta' must be in (0, 1)");
	if ((rc = prepare(t, opt, &o, e)) != ERR_OK)
		return rc;
	if (split_root(t)) {
		eu = 0.0;
		for (unsigned k = 0; k < t->node[0].n_children; k++) {
			unsigned r = t->node[0].first_child + k;
			double cu, cl = 0.0;

			if ((rc = evaluate(t, r, &o, 1, &work, &up, e)) != ERR_OK)
				return rc;
			cu = delta - up.err > 0.0 ? pld_epsilon_raw(&up, o.step, delta - up.err)
						  : INFINITY;
			pld_free(&up);
			if (!o.upper_only) {
				if ((rc = evaluate(t, r, &o, 0, &work, &lo, e)) != ERR_OK)
					return rc;
				cl = pld_epsilon_raw(&lo, o.step, delta + lo.err);
				pld_free(&lo);
			}
			eu = fmax(eu, cu);
			el = fmax(el, cl);
		}
	} else {
		if ((rc = evaluate(t, 0, &o, 1, &work, &up, e)) != ERR_OK)
			return rc;
		eu = delta - up.err > 0.0 ? pld_epsilon_raw(&up, o.step, delta - up.err) : INFINITY;
		pld_free(&up);
		if (!o.upper_only) {
			if ((rc = evaluate(t, 0, &o, 0, &work, &lo, e)) != ERR_OK)
				return rc;
			el = pld_epsilon_raw(&lo, o.step, delta + lo.err);
			pld_free(&lo);
		}
	}
	if (!isfinite(eu) || !isfinite(el) || !(eu >= 0.0))
		return err_set(e, ERR_NUMERIC, "the pld epsilon is not finite");
	ret->upper = eu;
	ret->lower = fmin(el, eu);
	if (ret_work != NULL)
		*ret_work = work;
	return ERR_OK;
}

enum err_code
pld_delta(const struct dp_event_tree *t, double epsilon, double step, struct pld_interval *ret,
	  struct err *e)
{
	struct pld_options o = { .step = step };

	return pld_delta_with(t, epsilon, &o, ret, NULL, e);
}

enum err_code
pld_epsilon(const struct dp_event_tree *t, double delta, double step, struct pld_interval *ret,
	    struct err *e)
{
	struct pld_options o = { .step = step };

	return pld_epsilon_with(t, delta, &o, ret, NULL, e);
}
