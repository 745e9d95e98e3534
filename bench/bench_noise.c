/*
 * bench_noise.c - samples per second of the noise samplers
 * (algorithms/privacy/noise.c), one core.
 *
 *	bench_noise [n]        (default n = 2000000 samples per figure)
 *
 * The exact discrete Gaussian at the lattice ratios in use (sigma / gamma
 * = 10^3, 10^4, ..., 10^10, every decade: the samplers switch between
 * 32- and 64-bit draws and between tilt paths inside that range; the
 * issue's target is >= 10^7 per second at each),
 * then, alternating at each ratio (and at sigma = 1.5), the noise drawn
 * ahead in chunks of 162 x 101 coordinates by the scalar
 * noise_dgauss_fill_wide() (dp_sgd.one_pass up to version 5) and by the
 * batched noise_dgauss_fill_batched() (version 6), with the speed-up;
 * also one sample per call and through the lattice front end (per call of
 * 101 coordinates as dp_sgd.one_pass drew it per step, and drawn ahead in
 * chunks as it draws it now, struct onepass_noise); the discrete
 * Laplace; the exponential mechanism over k = 1000 weights; and, apart,
 * the non-privacy samplers of common/rng_gauss.h (the ziggurat normal and
 * the uniform direction on the sphere).  Each figure is the best
 * of five runs in thread CPU time (so other load on the machine inflates
 * it less), with the seeded splitmix generator (the generator cost of
 * tests) and with the production OpenSSL generator (RAND_priv_bytes),
 * whose own cost per 64-bit word is printed first.  A benchmark, not a
 * test: it prints and exits 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "privacy/noise.h"
#include "rng.h"
#include "rng_gauss.h"

#define RUNS 5

static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct gens {
	struct rng splitmix;
	struct rng *openssl; /* NULL if unavailable */
};

static void
report(const char *what, const char *unit, size_t n, double best_s)
{
	printf("  %-44s %8.1f ns/%s  %10.3g %s/s\n", what, 1e9 * best_s / (double)n, unit,
	       (double)n / best_s, unit);
	fflush(stdout);
}

/* One figure per generator: f(r, arg, n) timed RUNS times, best kept.
 * Returns the splitmix figure in seconds. */
static double
bench(struct gens *g, const char *what, const char *unit, size_t n,
      void (*f)(struct rng *, void *, size_t), void *arg)
{
	struct rng *rs[2] = { &g->splitmix, g->openssl };
	static const char *names[2] = { "splitmix", "openssl" };
	char label[128];
	double first = 0.0;

	for (int k = 0; k < 2; k++) {
		double best = 1e30;

		if (rs[k] == NULL)
			continue;
		for (int run = 0; run < RUNS; run++) {
			double t0 = cpu_s(), t;

			f(rs[k], arg, n);
			t = cpu_s() - t0;
			if (t < best)
				best = t;
		}
		snprintf(label, sizeof(label), "%s [%s]", what, names[k]);
		report(label, unit, n, best);
		if (k == 0)
			first = best;
	}
	return first;
}

static int64_t *out_i;
static double *out_d;

static void
run_words(struct rng *r, void *arg, size_t n)
{
	uint64_t w[64];

	for (size_t i = 0; i < n; i += 64)
		rng_bytes(r, w, sizeof(w));
	out_i[0] = (int64_t)w[3];
}

static void
run_dgauss(struct rng *r, void *arg, size_t n)
{
	noise_dgauss_fill(r, arg, out_i, n);
}

/* Drawn ahead in chunks of 162 x 101 as struct onepass_noise draws:
 * the scalar wide fill (versions <= 5) and the batched fill (6). */
static struct noise_i128 *out_w;

static void
run_dgauss_wide(struct rng *r, void *arg, size_t n)
{
	size_t chunk = 162 * 101;

	for (size_t i = 0; i < n; i += chunk)
		noise_dgauss_fill_wide(r, arg, out_w, n - i < chunk ? n - i : chunk);
}

static void
run_dgauss_batched(struct rng *r, void *arg, size_t n)
{
	size_t chunk = 162 * 101;

	for (size_t i = 0; i < n; i += chunk)
		noise_dgauss_fill_batched(r, arg, out_w, n - i < chunk ? n - i : chunk);
}

static void
run_dgauss_single(struct rng *r, void *arg, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out_i[i] = noise_dgauss_sample(r, arg);
}

struct lattice_arg {
	struct dgauss_params p;
	int k;
};

static void
run_lattice(struct rng *r, void *arg, size_t n)
{
	struct lattice_arg *a = arg;

	for (size_t i = 0; i < n; i++)
		out_d[i] = 0.25;
	noise_lattice_gaussian_prepared(r, &a->p, a->k, out_d, n, NULL);
}

/* The one-pass method's use: a call per step of 101 coordinates. */
static void
run_lattice_step(struct rng *r, void *arg, size_t n)
{
	struct lattice_arg *a = arg;

	for (size_t i = 0; i < n; i++)
		out_d[i] = 0.25;
	for (size_t i = 0; i + 101 <= n; i += 101)
		noise_lattice_gaussian_prepared(r, &a->p, a->k, out_d + i, 101, NULL);
}

/* The same noise drawn ahead as dp_sgd.one_pass now draws it: chunks of
 * 162 steps of 101 coordinates (onepass_noise), added a step at a time. */

static void
run_lattice_chunks(struct rng *r, void *arg, size_t n)
{
	struct lattice_arg *a = arg;
	size_t chunk = 162 * 101;

	for (size_t i = 0; i < n; i++)
		out_d[i] = 0.25;
	for (size_t i = 0; i + chunk <= n; i += chunk) {
		noise_dgauss_fill_batched(r, &a->p, out_w, chunk);
		for (size_t j = 0; j < chunk; j += 101)
			noise_lattice_add(out_w + j, a->k, out_d + i + j, 101, NULL);
	}
}

static void
run_dlap(struct rng *r, void *arg, size_t n)
{
	noise_dlap_fill(r, arg, out_i, n);
}

static void
run_exp_mech(struct rng *r, void *arg, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; i < n; i++)
		noise_exp_mech(r, arg, 1000, &j, NULL);
	out_i[0] = (int64_t)j;
}

static void
run_ziggurat(struct rng *r, void *arg, size_t n)
{
	rng_normal_vector(r, out_d, n);
}

static void
run_sphere(struct rng *r, void *arg, size_t n)
{
	size_t d = *(const size_t *)arg;

	for (size_t i = 0; i + d <= n; i += d)
		rng_sphere(r, out_d + i, d);
}

int
main(int argc, char **argv)
{
	static const double sigmas[] = { 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10 };
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
	struct gens g;
	struct err e = { 0 };
	double *w = malloc(1000 * sizeof(*w));
	char what[96];

	out_i = malloc(n * sizeof(*out_i));
	out_d = malloc(n * sizeof(*out_d));
	out_w = malloc(162 * 101 * sizeof(*out_w));
	if (n < 64 || out_i == NULL || out_d == NULL || out_w == NULL || w == NULL) {
		fprintf(stderr, "usage: bench_noise [n >= 64]\n");
		return 2;
	}
	rng_splitmix_init(&g.splitmix, 42);
	g.openssl = rng_openssl_new(&e);
	if (g.openssl == NULL)
		printf("(OpenSSL generator unavailable: %s)\n", e.msg);
	printf("bench_noise: %zu samples per figure, best of %d, thread CPU time\n", n, RUNS);

	printf("generator:\n");
	bench(&g, "64-bit words, blocks of 64", "word", n, run_words, NULL);

	printf("exact discrete Gaussian (noise_dgauss_fill):\n");
	for (size_t i = 0; i < sizeof(sigmas) / sizeof(sigmas[0]); i++) {
		struct dgauss_params p;

		if (noise_dgauss_prepare_real(sigmas[i], &p, &e) != ERR_OK) {
			printf("  sigma %g: %s\n", sigmas[i], e.msg);
			continue;
		}
		snprintf(what, sizeof(what), "sigma/gamma = %g", sigmas[i]);
		bench(&g, what, "sample", n, run_dgauss, &p);
	}
	printf("drawn ahead in chunks of 162 x 101: scalar noise_dgauss_fill_wide (old) vs "
	       "noise_dgauss_fill_batched (new), alternating:\n");
	for (size_t i = 0; i < sizeof(sigmas) / sizeof(sigmas[0]) + 1; i++) {
		struct dgauss_params p;
		double sg = i == 0 ? 1.5 : sigmas[i - 1], t_old, t_new;

		if (noise_dgauss_prepare_real(sg, &p, &e) != ERR_OK)
			continue;
		snprintf(what, sizeof(what), "sigma/gamma = %g, fill_wide", sg);
		t_old = bench(&g, what, "sample", n, run_dgauss_wide, &p);
		snprintf(what, sizeof(what), "sigma/gamma = %g, batched", sg);
		t_new = bench(&g, what, "sample", n, run_dgauss_batched, &p);
		printf("  %-44s %8.2fx\n", "speed-up [splitmix]", t_old / t_new);
	}
	{
		struct dgauss_params p;
		struct lattice_arg la;

		noise_dgauss_prepare_real(1e6, &p, &e);
		bench(&g, "sigma/gamma = 1e6, one per call", "sample", n / 4, run_dgauss_single,
		      &p);
		la.k = 20;
		noise_dgauss_prepare_real(ldexp(1.0, la.k), &la.p,
					  &e); /* sigma = 1, gamma = 2^-20 */
		bench(&g, "lattice front end, sigma/gamma = 2^20", "coord", n, run_lattice, &la);
		/* dp_sgd.one_pass's default at n = 10^6, d = 100: z = 4.2, p = 101, so
		 * sigma / gamma ~ 6e7, and one call per step of p = 101 coordinates */
		la.k = 26;
		noise_dgauss_prepare_real(0.9 * ldexp(1.0, la.k), &la.p, &e);
		bench(&g, "one-pass step, d = 101 per call, sigma/gamma = 6e7", "coord", n,
		      run_lattice_step, &la);
		bench(&g, "one-pass drawn ahead, 162 x 101 per fill, 6e7", "coord", n,
		      run_lattice_chunks, &la);
		noise_dgauss_prepare_real(3.7, &p, &e);
		bench(&g, "sigma = 3.7 (small, for reference)", "sample", n, run_dgauss, &p);
	}

	printf("exact discrete Laplace (noise_dlap_fill):\n");
	{
		struct dlap_params l;

		noise_dlap_prepare_real(1e6, &l, &e);
		bench(&g, "b/gamma = 1e6", "sample", n, run_dlap, &l);
		noise_dlap_prepare_real(1e10, &l, &e);
		bench(&g, "b/gamma = 1e10", "sample", n, run_dlap, &l);
	}

	printf("exponential mechanism (Gumbel-argmax), k = 1000:\n");
	for (int i = 0; i < 1000; i++)
		w[i] = -0.01 * (double)(i % 97);
	bench(&g, "selections", "selection", n / 1000 > 100 ? n / 1000 : 100, run_exp_mech, w);

	printf("non-privacy randomness (common/rng_gauss.h; never privacy noise):\n");
	bench(&g, "N(0, 1) by the ziggurat (rng_normal_vector)", "sample", n, run_ziggurat, NULL);
	{
		size_t d = 100;

		bench(&g, "unit sphere, d = 100 (rng_sphere)", "coord", n, run_sphere, &d);
	}

	rng_free(g.openssl);
	free(out_i);
	free(out_d);
	free(out_w);
	free(w);
	return 0;
}
