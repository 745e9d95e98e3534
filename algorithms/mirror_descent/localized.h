/*
 * mirror_descent/localized.h - the schedule of mirror_descent.localized
 * (localized.c), exposed for its tests.
 */
#ifndef ALGORITHMS_MIRROR_DESCENT_LOCALIZED_H
#define ALGORITHMS_MIRROR_DESCENT_LOCALIZED_H

#include <stddef.h>

#include "alg.h"

/* At most this many phases: the run's event, parallel over the phases of
 * at most 3 nodes each, must fit DP_EVENT_MAX_NODES (1 + 3 x 10 <= 32). */
#define LOC_MAX_PHASES 10

/* One phase i = 1..k of Algorithm 2 / 6, from public inputs. */
struct loc_phase {
	size_t n;            /* n_i = floor(n / 2^i) records, a disjoint chunk */
	size_t batch;        /* b_i = ceil(max(sqrt(n_i / ln d), sqrt(d) / eps_i)) */
	unsigned long steps; /* T_i = min(ceil(n_i^2 / b_i^2), params.max_phase_steps) */
	double epsilon;      /* eps_i = 2^(1-i) epsilon (params.equal_phase_budget: epsilon) */
	double eta;          /* eta_i = eta / 16^i */
	double lambda;       /* 1 / (c eta_i n_i (p - 1)): F_i = F^_i + lambda h_i */
	double radius;       /* R_i = kappa L eta_i n_i (p - 1) (lp: L eta_i n_i (p - 1)) */
	double z;            /* the noise multiplier (after the calibration) */
};

struct loc_schedule {
	unsigned k;      /* phases that run, >= 1 (all stages) */
	unsigned stages; /* 1, or the strongly convex reduction's stages */
	double p, c;     /* the map h_i = c ||x - x_{i-1}||_p^2 */
	double eta;      /* the base scale (of the first stage) */
	double lip;      /* L */
	double diam;     /* D */
	struct loc_phase phase[LOC_MAX_PHASES];
};

/* The schedule of spec before the calibration (every z 0): ERR_INVALID
 * naming "privacy.epsilon" when no phase can run (n too small for the
 * requested epsilon). */
enum err_code localized_schedule(const struct run_spec *spec, struct loc_schedule *ret,
				 struct err *e);

#endif /* ALGORITHMS_MIRROR_DESCENT_LOCALIZED_H */
