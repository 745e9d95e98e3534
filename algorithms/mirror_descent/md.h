/*
 * mirror_descent/md.h - what mirror_descent.noisy and
 * mirror_descent.localized share (algorithms/mirror_descent/README.md):
 * the p-norm geometry of a set, the clip and the Lipschitz bounds from the
 * declared constants, the event of one noisy phase and its calibration,
 * and the mirror step.
 *
 * Pure functions; nothing allocates.
 */
#ifndef ALGORITHMS_MIRROR_DESCENT_MD_H
#define ALGORITHMS_MIRROR_DESCENT_MD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "mirror.h"

/* The geometry of the run's set: the exponent of the map, its norm's
 * bounds, and the bounds of a clipped gradient in the dual norm. */
struct md_geom {
	bool lp;           /* an lp or l2 ball (Alg. 5/6); false: l1 ball or simplex (Alg. 1/2) */
	double p, q;       /* the map's exponent and its dual q = p / (p - 1) */
	double kappa;      /* d^(1 - 1/p): ||u||_1 <= kappa ||u||_p */
	double grad_bound; /* G: the objective's declared l2 bound of a record's gradient */
	double clip;       /* C <= G: per-record l2 clip, the sensitivity's input */
	double lip;        /* L: dual-norm bound of a clipped gradient plus the regularizer's */
	double diam;       /* diameter of the set in the primal norm (l1; lp: the p-norm) */
	double noise_dual; /* E||zeta||_*^2 / sigma^2 for zeta ~ N(0, sigma^2 I) (bound) */
};

/* The geometry of spec's set and objective: clip_param 0 = auto (the
 * largest of the declared bounds, min(G, L_inf sqrt(dim))), else at most
 * that.  ERR_INVALID naming "constraints.x" for a set without the p-norm
 * step, ERR_NUMERIC for unusable constants; *ret written only on
 * success. */
enum err_code md_geometry(const struct run_spec *spec, double clip_param, struct md_geom *ret,
			  struct err *e);

/* The set as mirror_pnorm_step() takes it: an l2 ball is the lp ball
 * with p = 2 (Algorithm 5 with p = 2 is projected noisy SGD). */
struct constraint md_outer(const struct constraint *c);

/* The starting point / centre x_0 of the set (0 for the balls, the
 * simplex's centre scale/d 1). */
void md_centre(const struct constraint *c, size_t d, double *ret_x0);

/* sup over the set of ||x - x_0||_p (x_0 = md_centre). */
double md_radius_p(const struct constraint *c, size_t d, double p);

/* The event of T noisy steps on uniform b-subsets (without replacement)
 * of n records, noise multiplier z: self_composed(sampled_without_
 * replacement(n, b, gaussian(z)), T), without the sampling node when
 * b = n.  Replace-one. */
enum err_code md_phase_event(uint64_t n, uint64_t b, uint64_t steps, double z,
			     struct dp_event_tree *ret, struct err *e);

/* The Renyi orders of the calibrations: the default grid without its
 * orders above max(64, 4 log(1/delta) / epsilon). */
struct rdp_grid;
void md_grid(double epsilon, double delta, struct rdp_grid *ret);

/* z for md_phase_event(n, b, T, z) to meet (epsilon, delta) on the mode
 * (calibrate(), one ulp below both targets), with the accountant's name.
 * Counted through the testing hook of spec.  ERR_INVALID naming
 * "privacy.epsilon" when no noise up to 1e7 meets the target. */
enum err_code md_calibrate(const struct run_spec *spec, double epsilon, uint64_t n, uint64_t b,
			   uint64_t steps, double *ret_z, const char **ret_accountant,
			   struct err *e);

/* One mirror step of the map m from x: theta = coef grad h(x) - gamma g,
 * x <- argmin over outer and ||x - a||_p <= R of h(x) - <theta, x>.
 * theta: d doubles of scratch.  ERR_INTERNAL (generic) when the step
 * fails (a non-finite gradient). */
enum err_code md_step(const struct mirror_pnorm *m, const struct constraint *outer, double R,
		      double coef, double gamma, const double *g, double *theta, double *x,
		      struct err *e);

#endif /* ALGORITHMS_MIRROR_DESCENT_MD_H */
