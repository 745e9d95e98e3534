/*
 * gauss_onepass.c - shared steps of the one-pass Gaussian methods
 * (gauss_onepass.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gauss_onepass.h"
#include "privacy/analytic_gaussian.h"
#include "privacy/calibrate.h"
#include "privacy/noise.h"

static enum err_code
gaussian_family(double z, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	(void)ctx;
	(void)e;
	dp_event_gaussian(ret, DP_REPLACE_ONE, z);
	return ERR_OK;
}

enum err_code
onepass_calibrate(const struct run_spec *spec, double *ret_z, const char **ret_accountant,
		  struct err *e)
{
	/* One ulp below both targets: the service charges the shortest
	 * decimal reading back as the client's double (see sgd/one_pass.c).
	 * epsilon and delta passed alg_check_spec(). */
	double eps_cal = nextafter(spec->epsilon, 0.0);
	double delta_cal = nextafter(spec->delta, 0.0);
	struct rdp_grid grid;
	struct accountant_report report;
	enum err_code rc;

#ifdef DPOPT_TESTING
	if (spec->testing_hook != NULL && spec->testing_hook->calibrations != NULL)
		(*spec->testing_hook->calibrations)++;
#endif
	if (spec->mode == ACCOUNTING_BASIC) {
		rc = ag_calibrate(eps_cal, delta_cal, ret_z, e);
		if (rc == ERR_OK)
			*ret_accountant = "analytic_gaussian";
		return rc;
	}
	rdp_grid_default(&grid);
	rc = calibrate(gaussian_family, NULL, ACCOUNTING_RENYI, eps_cal, delta_cal, 1e-3, 1e7,
		       &grid, ret_z, &report, e);
	if (rc == ERR_OK)
		*ret_accountant = report.accountant;
	return rc;
}

enum err_code
onepass_batch(double b_param, double z, size_t p, size_t n, size_t *ret_b, struct err *e)
{
	double bf = b_param;

	if (b_param == 0.0) {
		bf = ceil(2.0 * z * sqrt((double)p));
		if (!isfinite(bf))
			return err_set(e, ERR_NUMERIC, "the automatic batch size is not finite");
		bf = fmax(1.0, fmin(bf, (double)n));
	}
	if (!(bf >= 1.0 && bf <= (double)n))
		return err_set(e, ERR_INTERNAL, "batch size out of range");
	*ret_b = (size_t)bf;
	return ERR_OK;
}

enum err_code
onepass_lattice(double sensitivity, size_t p, int *ret_k, double *ret_sens, struct err *e)
{
	enum err_code rc = noise_lattice_step(NOISE_NORM_L2, sensitivity, p, ret_k, e);

	if (rc != ERR_OK)
		return rc;
	return noise_lattice_sensitivity(NOISE_NORM_L2, sensitivity, p, *ret_k, ret_sens, e);
}

enum err_code
onepass_event(double z, unsigned long steps, struct dp_event_tree *ret, struct err *e)
{
	struct dp_event parallel = { .type = DP_EVENT_PARALLEL, .count = steps };

	dp_event_gaussian(ret, DP_REPLACE_ONE, z);
	return dp_event_wrap(ret, &parallel, e);
}

void
onepass_plan_start(struct run_plan *ret, const struct run_spec *spec, unsigned long steps,
		   size_t batch)
{
	memset(ret, 0, sizeof(*ret));
	ret->steps = steps;
	ret->charge_epsilon = spec->epsilon;
	ret->charge_delta = spec->delta;
	run_plan_use(ret, "batch_size", (double)batch);
	run_plan_use(ret, "steps", (double)steps);
}

void
onepass_plan_use_noise(struct run_plan *ret, double sensitivity, double sensitivity_lattice,
		       int lattice_k, double z, double sigma, double step_size)
{
	run_plan_use(ret, "sensitivity", sensitivity);
	run_plan_use(ret, "sensitivity_lattice", sensitivity_lattice);
	run_plan_use(ret, "lattice_step_log2", -(double)lattice_k);
	run_plan_use(ret, "noise_multiplier", z);
	run_plan_use(ret, "noise_sigma", sigma);
	run_plan_use(ret, "step_size", step_size);
}

enum err_code
onepass_check_init(const struct run_spec *spec, const struct run_plan *plan,
		   const struct run_plan *mine, const struct dataset *ds, struct err *e)
{
	if (mine == NULL || !onepass_same_plan(mine, plan))
		return err_set(e, ERR_INTERNAL, "the run plan does not match its spec");
	if (ds->n != spec->n || ds->d != spec->schema.d)
		return err_set(e, ERR_INTERNAL, "the dataset does not match the run spec");
	return objective_check_dataset(&spec->objective, ds, e);
}

enum err_code
onepass_noisy_mean(struct rng *rng, const struct dgauss_params *noise, int k, double *g, size_t d,
		   size_t b, struct err *e)
{
	for (size_t j = 0; j < d; j++)
		g[j] /= (double)b;
	if (noise_lattice_gaussian_prepared(rng, noise, k, g, d, NULL) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	return ERR_OK;
}

/* Volatile stores, so that the compiler cannot drop them as dead. */
static void
noise_wipe(struct noise_i128 *v, size_t n)
{
	volatile uint64_t *w = (volatile uint64_t *)(void *)v;

	for (size_t i = 0; i < 2 * n; i++)
		w[i] = 0;
}

static void
noise_fill(void *arg)
{
	struct onepass_noise *nz = arg;

	noise_dgauss_fill_batched(nz->rng, nz->params, nz->buf[nz->fill_to],
				  nz->have[nz->fill_to] * nz->dim);
}

/* Hand the next chunk of steps to a fill of buf[to]. */
static void
noise_start(struct onepass_noise *nz, size_t to)
{
	size_t n = nz->left < nz->chunk ? (size_t)nz->left : nz->chunk;

	nz->have[to] = n;
	nz->left -= n;
	nz->fill_to = to;
	nz->pending = true;
	if (nz->exec != NULL && nz->exec->background != NULL)
		nz->exec->background(nz->exec->ctx, noise_fill, nz);
	else
		noise_fill(nz);
}

static void
noise_join(struct onepass_noise *nz)
{
	if (!nz->pending)
		return;
	if (nz->exec != NULL && nz->exec->background != NULL)
		nz->exec->join(nz->exec->ctx);
	nz->pending = false;
}

enum err_code
onepass_noise_init(struct onepass_noise *nz, struct rng *rng, const struct dgauss_params *p, int k,
		   size_t dim, unsigned long steps, const struct alg_exec *exec, struct err *e)
{
	memset(nz, 0, sizeof(*nz));
	if (dim == 0 || steps == 0)
		return err_set(e, ERR_INTERNAL, "a noise stream needs steps and coordinates");
	nz->params = p;
	nz->exec = exec;
	nz->k = k;
	nz->dim = dim;
	nz->left = steps;
	/* whole steps, at most ONEPASS_NOISE_CHUNK coordinates (at least one
	 * step), and at least 4 chunks when the run has 4 steps or more, so
	 * that a short run is not drawn in one go before its first step */
	nz->chunk = dim < ONEPASS_NOISE_CHUNK ? ONEPASS_NOISE_CHUNK / dim : 1;
	if (nz->chunk > (steps + 3) / 4)
		nz->chunk = (size_t)((steps + 3) / 4);
	nz->rng = rng_split(rng, e);
	if (nz->rng == NULL)
		return ERR_NOMEM;
	nz->buf[0] = calloc(nz->chunk * dim, sizeof(*nz->buf[0]));
	nz->buf[1] = calloc(nz->chunk * dim, sizeof(*nz->buf[1]));
	if (nz->buf[0] == NULL || nz->buf[1] == NULL) {
		onepass_noise_free(nz);
		return err_set(e, ERR_NOMEM, "cannot allocate the noise buffers");
	}
	return ERR_OK;
}

enum err_code
onepass_noise_mean(struct onepass_noise *nz, double *g, size_t b, struct err *e)
{
	struct noise_i128 *row;

	if (nz->used == nz->have[nz->cur]) {
		if (!nz->pending) {
			if (nz->left == 0)
				return err_set(e, ERR_INTERNAL, "the run failed");
			noise_start(nz, nz->cur ^ 1); /* the first step: nothing drawn yet */
		}
		noise_join(nz);
		/* a failed generator drew zeros: none of them is ever added;
		 * reported as the driver reports the run's own generator */
		if (!rng_ok(nz->rng))
			return err_set(e, ERR_INTERNAL, "random generator failed");
		nz->cur ^= 1;
		nz->used = 0;
		if (nz->left > 0)
			noise_start(nz, nz->cur ^ 1);
	}
	row = nz->buf[nz->cur] + nz->used * nz->dim;
	for (size_t j = 0; j < nz->dim; j++)
		g[j] /= (double)b;
	if (noise_lattice_add(row, nz->k, g, nz->dim, NULL) != ERR_OK)
		return err_set(e, ERR_INTERNAL, "the run failed");
	noise_wipe(row, nz->dim);
	nz->used++;
	return ERR_OK;
}

void
onepass_noise_free(struct onepass_noise *nz)
{
	noise_join(nz);
	for (int i = 0; i < 2; i++) {
		if (nz->buf[i] != NULL) {
			noise_wipe(nz->buf[i], nz->chunk * nz->dim);
			free(nz->buf[i]);
			nz->buf[i] = NULL;
		}
	}
	rng_free(nz->rng);
	nz->rng = NULL;
}

double
onepass_work(const struct run_spec *spec, const struct run_plan *plan)
{
	double nd = (double)spec->n * (double)spec->dim;

	return nd + (double)plan->steps * (double)spec->dim;
}

bool
onepass_same_plan(const struct run_plan *a, const struct run_plan *b)
{
	if (a->steps != b->steps || !dp_event_equal(&a->event, &b->event) ||
	    a->charge_epsilon != b->charge_epsilon || a->charge_delta != b->charge_delta ||
	    a->n_used != b->n_used)
		return false;
	for (size_t i = 0; i < a->n_used && i < ALG_MAX_USED; i++)
		if (strcmp(a->used[i].name, b->used[i].name) != 0 ||
		    memcmp(&a->used[i].value, &b->used[i].value, sizeof(double)) != 0)
			return false;
	return true;
}

void
onepass_order(struct rng *rng, size_t *order, size_t n, size_t m)
{
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	onepass_order_partial(rng, order, n, m);
}

void
onepass_order_partial(struct rng *rng, size_t *order, size_t n, size_t m)
{
	for (size_t i = 0; i < m && i + 1 < n; i++) {
		size_t j = i + (size_t)rng_below(rng, n - i);
		size_t tmp = order[i];

		order[i] = order[j];
		order[j] = tmp;
	}
}

#ifdef DPOPT_TESTING
static bool
is_finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

enum err_code
onepass_testing_sigma(const struct alg_testing_hook *h, size_t n, double *sigma, struct err *e)
{
	if (h == NULL)
		return ERR_OK;
	if (h->place_first && h->first_record >= n)
		return err_set(e, ERR_INVALID, "testing hook: no record %zu", h->first_record);
	if (h->noise_scale != 0.0) {
		if (!is_finite_pos(h->noise_scale))
			return err_set(e, ERR_INVALID, "testing hook: bad noise scale");
		*sigma *= h->noise_scale;
	}
	return ERR_OK;
}

enum err_code
onepass_testing_hook(const struct alg_testing_hook *h, size_t *order, size_t n, double *sigma,
		     struct err *e)
{
	enum err_code rc = onepass_testing_sigma(h, n, sigma, e);

	if (rc != ERR_OK || h == NULL || !h->place_first)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (order[i] == h->first_record) {
			order[i] = order[0];
			order[0] = h->first_record;
			break;
		}
	}
	return ERR_OK;
}
#endif
