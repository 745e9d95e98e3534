/*
 * euclid_saddle_bench.c - the experiment nispp_bench and nseg_bench share
 * (euclid_saddle_bench.h): a method's single pass against its multi-pass
 * variant at equal epsilon as n grows, on the bilinear game of
 * tests/algorithms/test_nseg.c and test_nispp.c (p = 4, coupling 0.5,
 * unit l2 balls, records with entries +-1/sqrt 2 of known means), at its
 * defaults and (epsilon, 1e-6) on a 'basic' ledger.  Figures, population
 * gaps computed exactly (f is affine in the record): single_pass the
 * strong gap, mean over seeds; multi_pass the weak gap (per algorithm
 * seed, the gap of the game averaged over J datasets drawn with that
 * seed), mean over seeds, and its strong gap (the mean over the J outputs
 * of each one's gap); and the CPU seconds per run.  The game, run spec,
 * gap and list helpers (esb_*) are rr_bench's too
 * (bench/experiments/recursive_regularization), at its own coupling.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg.h"
#include "objective.h"
#include "rng.h"
#include "saddle.h"
#include "saddle_gap.h"
#include "euclid_saddle_bench.h"

#define MAX_J    16
#define COUPLING 0.5

/* The method run (set on entry; one per process). */
static const char *bench_alg;

static const double NU_A[2] = { 0.3, -0.2 }, NU_B[2] = { 0.1, 0.25 };

int
esb_prob_make(struct esb_prob *p, size_t n, uint64_t seed, double coupling)
{
	struct objective_params op;
	struct err e = { 0 };
	struct rng r;
	const double c = 1.0 / sqrt(2.0);

	memset(p, 0, sizeof(*p));
	p->x = malloc((n ? n : 1) * 4 * sizeof(*p->x));
	if (p->x == NULL)
		return -1;
	p->s.d = 4;
	p->s.task = TASK_UNLABELED;
	p->s.n_blocks = 2;
	p->s.blocks[0] = (struct data_block){ "a", 0, 2, 1.0, NAN };
	p->s.blocks[1] = (struct data_block){ "b", 2, 2, 1.0, NAN };
	p->s.bounds = (struct bounds){ NAN, sqrt(2.0), NAN, NAN, NAN };
	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < 4; j++) {
			double nu = j < 2 ? NU_A[j] : NU_B[j - 2];

			p->x[i * 4 + j] = rng_uniform(&r) < (1.0 + nu) / 2.0 ? c : -c;
		}
	if (n == 0) /* the population: the mean record */
		for (size_t j = 0; j < 4; j++)
			p->x[j] = c * (j < 2 ? NU_A[j] : NU_B[j - 2]);
	p->ds.n = n ? n : 1;
	p->ds.d = 4;
	p->ds.x = p->x;
	objective_params_default(&op);
	op.coupling = coupling;
	if (objective_init(&p->o, objective_find("bilinear"), &op, &p->s, &e) != ERR_OK) {
		fprintf(stderr, "objective: %s\n", e.msg);
		return -1;
	}
	p->ball = (struct constraint){ .kind = CONSTRAINT_L2_BALL, .radius = 1.0 };
	return 0;
}

void
esb_spec_init(struct run_spec *spec, const struct esb_prob *p, const struct alg_ops *a, size_t n,
	      double eps)
{
	memset(spec, 0, sizeof(*spec));
	spec->objective = p->o;
	spec->dim = p->o.dim;
	spec->schema = p->s;
	spec->n = n;
	spec->x = p->ball;
	spec->has_y = true;
	spec->y = p->ball;
	spec->epsilon = eps;
	spec->delta = 1e-6;
	spec->mode = ACCOUNTING_BASIC;
	alg_default_params(a, spec->params);
}

double
esb_cpu_now(void)
{
	return (double)clock() / CLOCKS_PER_SEC;
}

/* One run at the defaults; u <- the result.  -1 on failure. */
static int
run_one(int variant, size_t n, double eps, uint64_t data_seed, uint64_t alg_seed, double *u)
{
	const struct alg_ops *a = alg_find(bench_alg);
	struct esb_prob p;
	struct run_spec spec;
	struct run_plan plan;
	struct err e = { 0 };
	struct rng r;
	int rc = 0;

	if (a == NULL || esb_prob_make(&p, n, data_seed, COUPLING) != 0)
		return -1;
	esb_spec_init(&spec, &p, a, n, eps);
	spec.params[0] = variant;
	rng_splitmix_init(&r, alg_seed);
	if (alg_plan(a, &spec, &plan, &e) != ERR_OK ||
	    alg_run(a, &spec, &plan, &p.ds, &r, NULL, NULL, u, &e) != ERR_OK) {
		fprintf(stderr, "run (variant %d, n %zu, eps %g): %s\n", variant, n, eps, e.msg);
		rc = -1;
	}
	free(p.x);
	return rc;
}

double
esb_pop_gap(const double *us, size_t R, bool weak, double coupling)
{
	static const struct saddle_gap_opts opts = { 1e-9, 20000 };
	struct esb_prob pop;
	struct saddle_block b;
	struct saddle_gap sg, wg;
	struct err e = { 0 };
	double g = NAN;

	if (esb_prob_make(&pop, 0, 1, coupling) != 0)
		return NAN;
	b = (struct saddle_block){ pop.ball, GEOMETRY_L2 };
	if (saddle_gap_eval(&pop.o, &pop.s, &pop.ds, &b, &b, us, R, &opts, &sg, &wg, &e) == ERR_OK)
		g = weak ? wg.gap.hi : sg.gap.hi;
	free(pop.x);
	return g;
}

/* The experiment's gaps: at its game's coupling. */
static double
pop_gap(const double *us, size_t R, bool weak)
{
	return esb_pop_gap(us, R, weak, COUPLING);
}

size_t
esb_parse_list(const char *s, double *out)
{
	size_t k = 0;
	char *end;

	while (*s != '\0' && k < MAX_LIST) {
		out[k++] = strtod(s, &end);
		s = *end == ',' ? end + 1 : end;
		if (end == s && *s != '\0')
			break;
	}
	return k;
}

int
euclid_saddle_bench(int argc, char **argv, const char *prog, const char *alg,
		    const double *default_ns, size_t n_default)
{
	double ns[MAX_LIST] = { 0 }, epss[MAX_LIST] = { 1, 4 };
	size_t nn = n_default < MAX_LIST ? n_default : MAX_LIST, ne = 2, seeds = 5, J = 2;
	double zero[4] = { 0 };
	int fails = 0;

	bench_alg = alg;
	memcpy(ns, default_ns, nn * sizeof(double));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0) {
			ns[0] = 40;
			nn = 1;
			epss[0] = 4;
			ne = 1;
			seeds = 1;
			J = 2;
		} else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
			seeds = (size_t)atol(argv[++i]);
		} else if (strcmp(argv[i], "--j") == 0 && i + 1 < argc) {
			J = (size_t)atol(argv[++i]);
		} else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
			nn = esb_parse_list(argv[++i], ns);
		} else if (strcmp(argv[i], "--eps") == 0 && i + 1 < argc) {
			ne = esb_parse_list(argv[++i], epss);
		} else {
			fprintf(stderr,
				"usage: %s [--smoke] [--seeds S] [--j J] [--n LIST] [--eps LIST]\n",
				prog);
			return 2;
		}
	}
	if (seeds == 0 || J == 0 || J > MAX_J) {
		fprintf(stderr, "%s: 1 <= J <= %d and seeds >= 1\n", prog, MAX_J);
		return 2;
	}
	printf("gap of the data-independent point 0: %.4f\n", pop_gap(zero, 1, false));
	printf("| eps | n | single_pass strong gap | s/run | multi_pass weak gap (J = %zu) | "
	       "multi_pass strong gap | s/run |\n",
	       J);
	printf("|---|---|---|---|---|---|---|\n");
	for (size_t ie = 0; ie < ne; ie++)
		for (size_t in = 0; in < nn; in++) {
			size_t n = (size_t)ns[in];
			double sp = 0.0, mp = 0.0, mps = 0.0, t_sp = 0.0, t_mp = 0.0;

			for (size_t s = 1; s <= seeds; s++) {
				double u[4], us[MAX_J * 4], t0 = esb_cpu_now(), g;

				if (run_one(0, n, epss[ie], 1000 * s, 7 * s + 1, u) != 0) {
					fails++;
					continue;
				}
				t_sp += esb_cpu_now() - t0;
				sp += pop_gap(u, 1, false);
				t0 = esb_cpu_now();
				for (size_t j = 0; j < J; j++)
					if (run_one(1, n, epss[ie], 1000 * s + 17 * (j + 1),
						    7 * s + 2, us + 4 * j) != 0)
						fails++;
				t_mp += esb_cpu_now() - t0;
				g = pop_gap(us, J, true);
				mp += g;
				mps += pop_gap(us, J, false);
				if (!isfinite(g))
					fails++;
			}
			printf("| %g | %zu | %.4f | %.3g | %.4f | %.4f | %.3g |\n", epss[ie], n,
			       sp / (double)seeds, t_sp / (double)seeds, mp / (double)seeds,
			       mps / (double)seeds, t_mp / (double)(seeds * J));
			fflush(stdout);
		}
	if (fails != 0)
		fprintf(stderr, "%s: %d failures\n", prog, fails);
	return fails == 0 ? 0 : 1;
}
