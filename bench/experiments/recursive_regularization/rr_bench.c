/*
 * rr_bench.c - saddle.recursive_regularization against the one-pass noisy
 * SGDA baseline saddle.sgda_one_pass on the bilinear game over unit l2
 * balls at large n (README.md here).  The game of
 * tests/algorithms/test_recursive_regularization.c (p = 4, coupling 0.5,
 * records with entries +-1/sqrt 2 of known means), (epsilon, 1e-6) on a
 * 'basic' ledger, every method at its defaults.  Figures: the population
 * strong gap of the released point (exact: f is affine in the record),
 * mean and standard error over seeds (fresh records each), and the CPU
 * seconds per run.  Columns: sgda_one_pass; recursive regularization,
 * variant sgda, sgda_multi_pass and outpert_cert, at the practical
 * multiplier 1; variant
 * outpert_cert at the paper's 48 ("refused" when T < 1).
 *
 *	rr_bench [--smoke] [--seeds S] [--n 50000,100000,200000] [--eps 1]
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "objective.h"
#include "rng.h"
#include "euclid_saddle_bench.h"

#define N_METHODS 6

static double coupling = 0.5; /* --coupling: the game's, and beta */

static const char *const METHOD_NAME[N_METHODS] = { "saddle.sgda_one_pass",
						    "saddle.recursive_regularization",
						    "saddle.recursive_regularization",
						    "saddle.recursive_regularization",
						    "saddle.recursive_regularization",
						    "saddle.recursive_regularization" };
/* -1: the method's defaults; variant 3 is "auto", the default rule */
static const int METHOD_VARIANT[N_METHODS] = { -1, 0, 2, 1, 1, 3 };
static const double METHOD_MULT[N_METHODS] = { 0, 1, 1, 1, 48, 1 };
static const char *const VARIANT_NAME[4] = { "sgda", "outpert_cert", "sgda_multi_pass", "auto" };
/* the variant the last auto run chose (its plan's used value) */
static int chosen = -1;
static double chosen_work;

/* One run of method m at its defaults; u <- the result.  1 when refused
 * as privacy_too_small_for_n (T < 1), -1 on failure. */
static int
run_one(int m, size_t n, double eps, uint64_t data_seed, uint64_t alg_seed, double *u)
{
	const struct alg_ops *a = alg_find(METHOD_NAME[m]);
	struct esb_prob p;
	struct run_spec spec;
	struct run_plan plan;
	struct err e = { 0 };
	struct rng r;
	enum err_code rc;
	int ret = 0;

	if (a == NULL || esb_prob_make(&p, n, data_seed, coupling) != 0)
		return -1;
	esb_spec_init(&spec, &p, a, n, eps);
	if (METHOD_VARIANT[m] >= 0) {
		spec.params[0] = METHOD_VARIANT[m];
		spec.params[1] = METHOD_MULT[m];
	}
	rng_splitmix_init(&r, alg_seed);
	rc = alg_plan(a, &spec, &plan, &e);
	if (rc == ERR_OK && METHOD_VARIANT[m] == 3) {
		chosen = (int)run_plan_value(&plan, "variant");
		chosen_work = a->work(&spec, &plan);
	}
	if (rc == ERR_TOO_SMALL) {
		ret = 1;
	} else if (rc != ERR_OK ||
		   alg_run(a, &spec, &plan, &p.ds, &r, NULL, NULL, u, &e) != ERR_OK) {
		fprintf(stderr, "run (%s %d, n %zu, eps %g): %s\n", METHOD_NAME[m],
			METHOD_VARIANT[m], n, eps, e.msg);
		ret = -1;
	}
	free(p.x);
	return ret;
}

int
main(int argc, char **argv)
{
	double ns[MAX_LIST] = { 50000, 100000, 200000 }, epss[MAX_LIST] = { 1 };
	size_t nn = 3, ne = 1, seeds = 5;
	double zero[4] = { 0 };
	int fails = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0) {
			ns[0] = 4096;
			nn = 1;
			epss[0] = 1;
			ne = 1;
			seeds = 1;
		} else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
			seeds = (size_t)atol(argv[++i]);
		} else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
			nn = esb_parse_list(argv[++i], ns);
		} else if (strcmp(argv[i], "--eps") == 0 && i + 1 < argc) {
			ne = esb_parse_list(argv[++i], epss);
		} else if (strcmp(argv[i], "--coupling") == 0 && i + 1 < argc) {
			coupling = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: rr_bench [--smoke] [--seeds S] [--n LIST] "
					"[--eps LIST] [--coupling C]\n");
			return 2;
		}
	}
	if (seeds < 1) {
		fprintf(stderr, "rr_bench: seeds >= 1\n");
		return 2;
	}
	printf("coupling %g; gap of the data-independent point 0: %.4f\n", coupling,
	       esb_pop_gap(zero, 1, false, coupling));
	printf("| eps | n | sgda_one_pass | s/run | rr sgda (c = 1) | s/run | rr sgda_multi_pass "
	       "(c "
	       "= 1) | s/run | rr outpert_cert (c = 1) | s/run | rr outpert_cert (c = 48) | s/run "
	       "| rr default (auto) | s/run | auto chose |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t ie = 0; ie < ne; ie++)
		for (size_t in = 0; in < nn; in++) {
			size_t n = (size_t)ns[in];

			printf("| %g | %zu |", epss[ie], n);
			for (int m = 0; m < N_METHODS; m++) {
				double sum = 0.0, sq = 0.0, t = 0.0;
				size_t k = 0;
				bool refused = false;

				for (size_t s = 1; s <= seeds; s++) {
					double u[4], t0 = esb_cpu_now(), g;
					int rc = run_one(m, n, epss[ie], 1000 * s, 7 * s + 1, u);

					if (rc == 1) {
						refused = true;
						break;
					}
					if (rc != 0) {
						fails++;
						continue;
					}
					t += esb_cpu_now() - t0;
					g = esb_pop_gap(u, 1, false, coupling);
					if (!isfinite(g)) {
						fails++;
						continue;
					}
					sum += g;
					sq += g * g;
					k++;
				}
				if (refused) {
					printf(" refused (T < 1) | — |");
				} else if (k > 0) {
					double mean = sum / (double)k;
					double se = k > 1 ? sqrt(fmax(0.0, sq / (double)k -
										   mean * mean) /
								 (double)(k - 1))
							  : 0.0;

					printf(" %.4f ± %.4f | %.3g |", mean, se, t / (double)k);
				} else {
					printf(" — | — |");
				}
				fflush(stdout);
			}
			printf(" %s (work %.3g) |\n",
			       chosen >= 0 && chosen < 4 ? VARIANT_NAME[chosen] : "—", chosen_work);
			chosen = -1;
		}
	if (fails != 0)
		fprintf(stderr, "rr_bench: %d failures\n", fails);
	return fails == 0 ? 0 : 1;
}
