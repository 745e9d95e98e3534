/*
 * gauss_onepass.h - the parts every one-pass Gaussian method shares
 * (dp_sgd.one_pass in sgd/one_pass.c, saddle.sgda_one_pass in
 * saddle/sgda_one_pass.c): the calibration of one Gaussian mechanism to
 * the run's (epsilon, delta) under the dataset's accounting mode, the
 * automatic batch size, the noise lattice, the event {parallel, parts T:
 * gaussian z}, the comparison of a plan with the one init() derives again,
 * the secret order of the records, and the audits' testing hook.  The
 * generic checks of a spec (parameters against the schema, epsilon,
 * delta, the sets) are the driver's (alg_check_spec), never repeated here.
 *
 * The pipeline (alg.h): plan() calls onepass_calibrate() once and stores
 * z in the plan as "noise_multiplier"; work() reads the plan; init() takes
 * z back with run_plan_value(), derives the schedule again from it and
 * refuses (ERR_INTERNAL) a plan that onepass_same_plan() finds different.
 *
 * The privacy argument they serve: a secret uniformly random order cuts
 * the n records into T disjoint batches of b; each step releases one
 * batch mean plus Gaussian noise, so replacing one record changes one
 * release only, and given the past outputs the run costs what one Gaussian
 * mechanism with noise multiplier z costs (parallel composition,
 * F. McSherry, SIGMOD 2009).
 */
#ifndef ALGORITHMS_GAUSS_ONEPASS_H
#define ALGORITHMS_GAUSS_ONEPASS_H

#include <stdbool.h>
#include <stddef.h>

#include "alg.h"
#include "privacy/noise.h"

/* z such that one Gaussian mechanism of noise multiplier z meets
 * (epsilon, delta) of spec (which passed alg_check_spec), one ulp below
 * both, on the exact curve (basic) or the RDP conversion (renyi), and the
 * name of that accountant for run_plan.accountant ("analytic_gaussian" or
 * "rdp").  The one calibration of a run: only plan() calls it.  Counted
 * through the testing hook's calibrations (testing builds). */
enum err_code onepass_calibrate(const struct run_spec *spec, double *ret_z,
				const char **ret_accountant, struct err *e);

/* b: b_param, or for 0 ceil(2 z sqrt(p)) clamped to [1, n]. */
enum err_code onepass_batch(double b_param, double z, size_t p, size_t n, size_t *ret_b,
			    struct err *e);

/* The lattice step 2^-k for an l2 sensitivity in dimension p and the
 * sensitivity raised by the rounding. */
enum err_code onepass_lattice(double sensitivity, size_t p, int *ret_k, double *ret_sens,
			      struct err *e);

/* {parallel, parts steps: gaussian z}, replace-one. */
enum err_code onepass_event(double z, unsigned long steps, struct dp_event_tree *ret,
			    struct err *e);

/* The start of every plan: ret zeroed, T steps, the charge (epsilon,
 * delta) of spec (met with room to spare: onepass_calibrate()), and the
 * used values batch_size and steps.  The event is the caller's. */
void onepass_plan_start(struct run_plan *ret, const struct run_spec *spec, unsigned long steps,
			size_t batch);

/* The noise values every plan records, in this order: sensitivity,
 * sensitivity_lattice, lattice_step_log2 (-k), noise_multiplier (z),
 * noise_sigma and step_size. */
void onepass_plan_use_noise(struct run_plan *ret, double sensitivity, double sensitivity_lattice,
			    int lattice_k, double z, double sigma, double step_size);

/* init()'s check that the run spends exactly what was charged: ERR_INTERNAL
 * unless mine, the plan derived again from plan's own noise_multiplier (no
 * second calibration; NULL when that derivation failed), is plan bit for
 * bit (onepass_same_plan) and ds has the spec's n and d; then the
 * objective's own checks of the dataset (objective_check_dataset). */
enum err_code onepass_check_init(const struct run_spec *spec, const struct run_plan *plan,
				 const struct run_plan *mine, const struct dataset *ds,
				 struct err *e);

/* g (d entries, the sum of a batch of b clipped terms) <- its mean plus
 * the prepared discrete Gaussian noise on the lattice 2^-k.  A refusal is
 * a bug and fails with the generic error, nothing about when or where. */
enum err_code onepass_noisy_mean(struct rng *rng, const struct dgauss_params *noise, int k,
				 double *g, size_t d, size_t b, struct err *e);

/*
 * The noise of a one-pass run drawn ahead, a chunk of steps at a time.
 * The noise vectors are independent of the data and of each other, so
 * drawing step t's before step t changes no law: step t still adds
 * N_Z(0, sigma^2 I) on the lattice, exactly as onepass_noisy_mean().  The
 * draws are made by noise_dgauss_fill_batched() (the same law as
 * noise_dgauss_fill_wide(), drawn in batches of candidates; other bits
 * for a given seed, hence dp_sgd.one_pass version 6) in chunks of whole steps
 * (at most ONEPASS_NOISE_CHUNK coordinates but at least one step, and a
 * quarter of the steps at most: public sizes only), with a
 * generator split from the run's (rng_split) that only the fills use: the
 * next chunk is drawn on the executor's background thread while the run
 * consumes the current one (alg_exec.background), or in place when there
 * is none.  Either way step t gets the same noise: the chunks are drawn
 * in order on the one generator, so results are the same bits on any
 * number of threads.  The work of a fill depends on the noise drawn only,
 * never on the data.  Consumed noise is wiped at once, the rest at
 * onepass_noise_free().
 */
#define ONEPASS_NOISE_CHUNK 16384

struct onepass_noise {
	const struct dgauss_params *params; /* borrowed: the run's prepared noise */
	const struct alg_exec *exec;        /* borrowed; NULL (or no background): in place */
	struct rng *rng;                    /* owned: split from the run's; only fills use it */
	struct noise_i128 *buf[2];          /* owned: chunk * dim entries each */
	size_t dim, chunk;                  /* coordinates per step, steps per chunk */
	int k;                              /* the lattice step 2^-k */
	unsigned long left;                 /* steps not yet handed to a fill */
	size_t have[2];                     /* steps drawn into each buffer */
	size_t cur, used;                   /* the buffer being consumed and its steps used */
	size_t fill_to;                     /* the buffer the pending fill writes */
	bool pending;                       /* a fill was started and not joined */
};

/* Set up nz for a run of steps steps of dim coordinates with noise p (the
 * run's, outliving nz) on the lattice 2^-k; splits a generator off rng.
 * Draws nothing yet. */
enum err_code onepass_noise_init(struct onepass_noise *nz, struct rng *rng,
				 const struct dgauss_params *p, int k, size_t dim,
				 unsigned long steps, const struct alg_exec *exec, struct err *e);

/* The next step: g (dim entries, the sum of b clipped terms) <- its mean
 * plus that step's noise on the lattice, as onepass_noisy_mean().  Fails
 * with the generic error (nothing about when or where) past the planned
 * steps or on a refusal of the lattice, and with the driver's "random
 * generator failed" when the fills' generator failed (then no noise of
 * its chunk is used). */
enum err_code onepass_noise_mean(struct onepass_noise *nz, double *g, size_t b, struct err *e);

/* Join a pending fill, wipe and free the buffers and the generator.
 * Idempotent; a zeroed nz is fine. */
void onepass_noise_free(struct onepass_noise *nz);

/* The work of a one-pass run (alg_ops.work): n p to read the records
 * and p a step. */
double onepass_work(const struct run_spec *spec, const struct run_plan *plan);

/* The same plan, bit for bit: steps, event, charge and every used value
 * (name and the double's bits), in order. */
bool onepass_same_plan(const struct run_plan *a, const struct run_plan *b);

/* order <- 0..n-1 with the first m entries a uniformly random ordered
 * m-subset (the first m rounds of Fisher-Yates). */
void onepass_order(struct rng *rng, size_t *order, size_t n, size_t m);

/* The first m rounds of Fisher-Yates on order as it is (a permutation of
 * 0..n-1, in any arrangement): afterwards its first m entries are a
 * uniformly random ordered m-subset, independent of the arrangement
 * before.  No allocation (dp_sgd.subsampled calls it every step). */
void onepass_order_partial(struct rng *rng, size_t *order, size_t n, size_t m);

#ifdef DPOPT_TESTING
#include "testing_hook.h"

/* Check h (may be NULL): the canary record exists among n; sigma scaled
 * by the mutation's noise_scale.  No placement (dp_sgd.subsampled places
 * the canary in its first batch itself). */
enum err_code onepass_testing_sigma(const struct alg_testing_hook *h, size_t n, double *sigma,
				    struct err *e);

/* Apply h (may be NULL) after the order was drawn: the canary into slot 0
 * (the first batch), sigma scaled by the mutation's noise_scale. */
enum err_code onepass_testing_hook(const struct alg_testing_hook *h, size_t *order, size_t n,
				   double *sigma, struct err *e);
#endif

#endif /* ALGORITHMS_GAUSS_ONEPASS_H */
