/*
 * noise.h - the only place DP noise is drawn.
 *
 * Every privacy-protecting draw goes through these functions with the
 * run's injected generator (struct rng); nothing here keeps state between
 * calls.  Three kinds of sampler (docs/privacy-model.md §6):
 *
 * - Exact samplers on the integers after C. Canonne, G. Kamath,
 *   T. Steinke, "The Discrete Gaussian for Differential Privacy",
 *   NeurIPS 2020 (arXiv:2004.00010; "CKS20" below): Bernoulli(p),
 *   Bernoulli(exp(-g)), the discrete Laplace and the discrete Gaussian.
 *   Integer arithmetic only: no floating point decides any accept/reject
 *   step, so the output distribution is exactly the stated pmf (up to
 *   one event of probability exp(-2^64), see noise.c).
 * - The lattice front end: round a real vector to the lattice gamma Z^d,
 *   gamma = 2^-k, add integer noise in lattice units, scale back.  The
 *   rounding raises the sensitivity by gamma sqrt(d) (l2), gamma d (l1) or
 *   gamma (per score); noise_lattice_sensitivity() returns the raised value
 *   that calibration must use.
 * - The exponential mechanism by Gumbel-argmax on log weights: floating
 *   point, with the residual risk documented at noise_exp_mech().
 *
 * The continuous floating-point Gaussian (Marsaglia's polar method) that
 * dp_sgd once used is gone from the service: it is not safe against
 * attacks on floating-point low-order bits (Mironov 2012; Jin et al.
 * 2022).  The tests keep it (tests/support/polar_gaussian.h) for the
 * level-1 audit and the calibration tests; tests/lint/symbols.sh checks
 * that no build of the library or of dpoptd contains it.  Randomness that
 * is not privacy noise (directions, tie-breaks) is common/rng_gauss.h.
 *
 * Per-draw paths never allocate.  Draws are infallible like the generator
 * itself: if it fails (rng_ok() false) the samplers stop early and return
 * zeros, and the driver fails the run on rng_ok().
 */
#ifndef ALGORITHMS_PRIVACY_NOISE_H
#define ALGORITHMS_PRIVACY_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "rng.h"

/* Supported ranges (refused with ERR_INVALID outside). */
#define NOISE_DGAUSS_SIGMA_MIN 0x1p-4 /* sigma in lattice units, real-valued prepare */
#define NOISE_DGAUSS_SIGMA_MAX 0x1p50 /* ~1.1e15 lattice units */
#define NOISE_DLAP_SCALE_MIN   0x1p-10
#define NOISE_DLAP_SCALE_MAX   0x1p52
#define NOISE_LATTICE_MAX      0x1p62 /* largest |x / gamma| the front end accepts */
#define NOISE_LATTICE_K_MIN    (-512) /* gamma = 2^-k */
#define NOISE_LATTICE_K_MAX    512
#define NOISE_LATTICE_SLACK    1e-6 /* rounding may add at most this much of the sensitivity */

/* --- Exact primitives ------------------------------------------------ */

/* *ret_b = Bernoulli(num / den): den >= 1, num <= den.  One exact uniform
 * integer below den (Lemire's multiply-and-reject; for den > 2^24 drawn
 * lazily, leading bits first) compared with num. */
enum err_code noise_bernoulli(struct rng *r, uint64_t num, uint64_t den, bool *ret_b,
			      struct err *e);

/* *ret_b = Bernoulli(exp(-num / den)): den >= 1, any num (CKS20
 * Algorithm 1, with floor(num / den) factors Bernoulli(exp(-1)) first). */
enum err_code noise_bernoulli_exp(struct rng *r, uint64_t num, uint64_t den, bool *ret_b,
				  struct err *e);

/* --- Discrete Laplace ------------------------------------------------- */

/* Constants of the Laplace tilt test Bernoulli(exp(-u / t)), from t. */
struct noise_tilt {
	uint64_t d, thr;   /* 2 t^2 and 2^64 mod 2 t^2 if t <= 2^31, else 0 */
	int s;             /* else bitlen(2 t^2 - 1) - 24 (-1: t > 2^62) */
	uint32_t dh, dthr; /* (2 t^2 - 1) >> s and 2^32 mod (dh + 1) */
};

/* Lap_Z(b), P(y) = (1 - q) / (1 + q) q^|y|, q = exp(-1 / b), b = t / s.
 * Fill with a noise_dlap_prepare*() function; read-only afterwards. */
struct dlap_params {
	uint64_t t, s; /* scale b = t / s in lowest terms */
	double scale;  /* t / s rounded to double, for reports */
	/* derived by the prepare function for the sampler */
	unsigned shift; /* log2(s) if s is a power of two, else 64 */
	uint64_t t_thr; /* Lemire threshold for a uniform below t */
	struct noise_tilt tilt;
};

/* Scale exactly t / s: t, s >= 1 and NOISE_DLAP_SCALE_MIN <= t / s <=
 * NOISE_DLAP_SCALE_MAX. */
enum err_code noise_dlap_prepare(uint64_t t, uint64_t s, struct dlap_params *ret_p, struct err *e);

/* Scale exactly the double b (a dyadic rational, represented without
 * rounding), in [NOISE_DLAP_SCALE_MIN, NOISE_DLAP_SCALE_MAX]. */
enum err_code noise_dlap_prepare_real(double b, struct dlap_params *ret_p, struct err *e);

/* One sample (CKS20 Algorithm 2).  |values| >= 2^63, probability below
 * exp(-2^11) in the supported range, are returned as +-INT64_MAX; the
 * lattice front end works on 128 bits and never clips. */
int64_t noise_dlap_sample(struct rng *r, const struct dlap_params *p);

/* out[i] = one sample each, i < n; cheaper per sample than the above. */
void noise_dlap_fill(struct rng *r, const struct dlap_params *p, int64_t *out, size_t n);

/* --- Discrete Gaussian ------------------------------------------------ */

/* N_Z(0, sigma^2): P(y) proportional to exp(-y^2 / (2 sigma^2)) on the
 * integers; sigma^2 is the scale parameter, the variance is slightly below
 * it (docs/privacy-model.md §6).  sigma^2 = t m / e exactly.  Fill with a
 * noise_dgauss_prepare*() function; read-only afterwards. */
struct dgauss_params {
	uint64_t t;    /* scale of the Laplace proposal, floor(sigma) + 1 */
	uint64_t m, e; /* mu = sigma^2 / t = m / e, m < 2^63 */
	double sigma2; /* t m / e rounded to double, for reports */
	/* derived by the prepare functions for the sampler */
	uint64_t den[2]; /* 2 m e t, low word first; below 2^127 */
	uint64_t y_fast; /* proposals |y| <= y_fast use 128 bits */
	uint64_t t_thr;  /* Lemire threshold for a uniform below t */
	struct noise_tilt tilt;
	int den_s;                   /* bitlen(den - 1) - 24, or 0 if den <= 2^24 */
	uint32_t den_bh, den_bh_thr; /* (den - 1) >> den_s, 2^32 mod (den_bh + 1) */
};

/* sigma^2 = num / den exactly, num, den >= 1.  ERR_INVALID if the reduced
 * form does not fit the ranges above (possible only for sigma^2 with
 * very large denominators). */
enum err_code noise_dgauss_prepare(uint64_t num, uint64_t den, struct dgauss_params *ret_p,
				   struct err *e);

/* Real sigma (lattice units) in [NOISE_DGAUSS_SIGMA_MIN,
 * NOISE_DGAUSS_SIGMA_MAX]: sigma^2 is rounded UP to the next t m / e with
 * e a power of two and m about 2^51 (more noise is always safe); the
 * relative increase of sigma^2 is below 2^-49.  ret_p->sigma2 reports the
 * value used; charging the requested sigma instead is conservative. */
enum err_code noise_dgauss_prepare_real(double sigma, struct dgauss_params *ret_p, struct err *e);

/* One sample (CKS20 Algorithm 3 with Algorithm 2 inlined).  |values| >=
 * 2^63 (probability below exp(-2^25)) are returned as +-INT64_MAX. */
int64_t noise_dgauss_sample(struct rng *r, const struct dgauss_params *p);

/* out[i] = one sample each, i < n; cheaper per sample than the above. */
void noise_dgauss_fill(struct rng *r, const struct dgauss_params *p, int64_t *out, size_t n);

/* One exact sample kept whole: the two's complement 128-bit integer
 * hi 2^64 + lo (no saturation: noise_dgauss_fill() clips at 2^63, which
 * the lattice front end must not). */
struct noise_i128 {
	uint64_t lo;
	int64_t hi;
};

/* out[i] = one N_Z(0, sigma^2) sample each, i < n, unclipped: the same
 * draws as noise_lattice_gaussian_prepared() makes for n coordinates.
 * For noise drawn ahead (on another thread, with its own generator) and
 * added later by noise_lattice_add(). */
void noise_dgauss_fill_wide(struct rng *r, const struct dgauss_params *p, struct noise_i128 *out,
			    size_t n);

/* The same law as noise_dgauss_fill_wide() (N_Z(0, sigma^2), exact,
 * unclipped), drawn in batches of candidates stage by stage (noise.c,
 * "Discrete Gaussian in batches"): faster per sample for large n (about
 * 1.1-1.5x at sigma 10^3..10^9 depending on load, bench/bench_noise), with a different use
 * of the generator's bits, so a given seed gives other samples than
 * noise_dgauss_fill_wide().  For noise drawn ahead in bulk (struct
 * onepass_noise); the other functions keep their bits.  For t > 2^30
 * (sigma >= 2^30 - 1) it draws sample by sample as
 * noise_dgauss_fill_wide().  A failed generator gives all zeros. */
void noise_dgauss_fill_batched(struct rng *r, const struct dgauss_params *p, struct noise_i128 *out,
			       size_t n);

#ifdef DPOPT_TESTING
/* Tests only: the batched fill with leading parts of lead bits (2..24)
 * instead of 24, so that the ties its lazy comparisons finish with the
 * scalar code (probability ~2^-22 each at 24 bits) become common; the law
 * is the same for every lead. */
void noise_dgauss_fill_batched_lead(struct rng *r, const struct dgauss_params *p, int lead,
				    struct noise_i128 *out, size_t n);
#endif

/* --- Lattice front end -------------------------------------------------- */

/* The norm whose sensitivity the rounding raises: l2 (Gaussian), l1
 * (Laplace) or per coordinate / per score (l-infinity). */
enum noise_norm {
	NOISE_NORM_L2,
	NOISE_NORM_L1,
	NOISE_NORM_LINF,
};

/* The largest lattice step gamma = 2^-k whose rounding adds at most
 * NOISE_LATTICE_SLACK (1e-6) of sensitivity: gamma sqrt(d) (l2), gamma d
 * (l1) or gamma (linf) <= 1e-6 sensitivity.  sensitivity > 0 finite,
 * d >= 1 (d <= 2^53).  *ret_k in [NOISE_LATTICE_K_MIN, NOISE_LATTICE_K_MAX]. */
enum err_code noise_lattice_step(enum noise_norm norm, double sensitivity, size_t d, int *ret_k,
				 struct err *e);

/* *ret = sensitivity + the rounding's increase at step 2^-k, rounded up:
 * the sensitivity calibration and the privacy charge must use.  Neighbours'
 * rounded vectors differ by at most this (rounding moves each coordinate by
 * at most gamma / 2). */
enum err_code noise_lattice_sensitivity(enum noise_norm norm, double sensitivity, size_t d, int k,
					double *ret, struct err *e);

/* x[i] = gamma (round(x[i] / gamma) + N_Z(0, (sigma / gamma)^2)), gamma =
 * 2^-k, i < d.  sigma (real units) is rounded up as in
 * noise_dgauss_prepare_real() on sigma / gamma.  ERR_INVALID for a sigma /
 * gamma outside the supported range, ERR_NUMERIC (x untouched) if some
 * x[i] is not finite or |x[i] / gamma| > NOISE_LATTICE_MAX.  Privacy:
 * Delta^2 / (2 sigma^2)-zCDP with Delta from noise_lattice_sensitivity(). */
enum err_code noise_lattice_gaussian(struct rng *r, double sigma, int k, double *x, size_t d,
				     struct err *e);

/* As noise_lattice_gaussian(), with the noise prepared once per run
 * (p from noise_dgauss_prepare_real(ldexp(sigma, k))). */
enum err_code noise_lattice_gaussian_prepared(struct rng *r, const struct dgauss_params *p, int k,
					      double *x, size_t d, struct err *e);

/* x[i] = gamma (round(x[i] / gamma) + noise[i]), gamma = 2^-k, i < d:
 * noise_lattice_gaussian_prepared() with its samples drawn beforehand by
 * noise_dgauss_fill_wide() (independent of x, so drawing them earlier
 * changes no law).  Errors and privacy as noise_lattice_gaussian(). */
enum err_code noise_lattice_add(const struct noise_i128 *noise, int k, double *x, size_t d,
				struct err *e);

/* x[i] = gamma (round(x[i] / gamma) + Lap_Z(b / gamma)), b in real units;
 * b / gamma must be in the discrete Laplace range and is used exactly.
 * Errors as noise_lattice_gaussian().  Privacy: (Delta_1 / b)-DP with
 * Delta_1 from noise_lattice_sensitivity(NOISE_NORM_L1, ...). */
enum err_code noise_lattice_laplace(struct rng *r, double b, int k, double *x, size_t d,
				    struct err *e);

/* --- Exponential mechanism ------------------------------------------------ */

/* *ret_index = j with probability exp(log_weights[j]) / sum_i
 * exp(log_weights[i]), j < k, by Gumbel-argmax with one 64-bit uniform per
 * index.  -inf weights are never chosen.  ERR_INVALID for k = 0;
 * ERR_NUMERIC for a NaN or +inf weight or all weights -inf.  Not exact:
 * see the floating-point caveat in noise.c (Ilvento 2020). */
enum err_code noise_exp_mech(struct rng *r, const double *log_weights, size_t k, size_t *ret_index,
			     struct err *e);

#endif /* ALGORITHMS_PRIVACY_NOISE_H */
