/*
 * saddle/euclid.h - what the Euclidean methods of D. Boob and C. Guzman
 * (saddle.nseg in saddle/nseg.c, saddle.nispp in saddle/nispp.c;
 * docs/algorithms/nseg.md, docs/algorithms/nispp.md) share: the public
 * constants of a spec (operator bound M, its Lipschitz constant L, the
 * l2 diameter D of the product set), the product set itself, the paper's
 * Remark 1 refusal, and the multi-pass event with its calibration
 * (releases of a Gaussian mechanism on independent uniform batches
 * without replacement, replace-one, composed in RDP).
 */
#ifndef ALGORITHMS_SADDLE_EUCLID_H
#define ALGORITHMS_SADDLE_EUCLID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alg.h"
#include "saddle.h"

struct saddle_euclid {
	bool vi; /* an operator objective over "constraints.x" alone */
	struct saddle_block bx, by;
	double bound;    /* M: ||g(u; z)||_2 <= M, the clip level */
	double smooth;   /* L: ||g(u; z) - g(v; z)|| <= L ||u - v|| */
	double diameter; /* D */
};

/* True for an operator (VI) objective. */
bool saddle_euclid_is_vi(const struct run_spec *spec);

/* The l2 diameter of a set in dimension d: exact for the box and the
 * simplex, 2 r (r the largest l2 norm) otherwise. */
double saddle_euclid_block_diameter(const struct constraint *c, size_t d);

/* M, L and D of spec (ERR_NUMERIC unless finite, M and D positive), then
 * the paper's Remark 1: 422 privacy_too_small_for_n naming
 * privacy.epsilon when sqrt(p ln(1/delta)) / epsilon >= n (method names
 * the method in the message). */
enum err_code saddle_euclid_constants(const struct run_spec *spec, const char *method,
				      struct saddle_euclid *ret, struct err *e);

/* The product set of the run (one part for a VI, x then y otherwise);
 * validated. */
enum err_code saddle_euclid_set(const struct run_spec *spec, const struct saddle_euclid *c,
				struct constraint_product *ret, struct err *e);

/* self_composed(sampled_without_replacement(n, b, gaussian(z)), releases),
 * replace-one; releases plain Gaussians when b = n (nothing sampled). */
enum err_code saddle_euclid_wor_event(double z, uint64_t n, uint64_t b, uint64_t releases,
				      struct dp_event_tree *ret, struct err *e);

/* The one calibration of that event on the dataset's mode, one ulp below
 * both targets, over the default grid without its orders above max(64,
 * 4 ln(1/delta) / epsilon) (a subset of the grid can only raise the
 * converted epsilon, so the ledger's charge on the full grid meets the
 * target too).  Counted through the testing hook. */
enum err_code saddle_euclid_wor_calibrate(const struct run_spec *spec, uint64_t b,
					  uint64_t releases, double *ret_z,
					  const char **ret_accountant, struct err *e);

#endif /* ALGORITHMS_SADDLE_EUCLID_H */
