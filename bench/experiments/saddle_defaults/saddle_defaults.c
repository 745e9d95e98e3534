/*
 * saddle_defaults.c - are the saddle methods' defaults close to a tuned
 * run?  (README.md here.)  For each (d, n, eps) a stochastic matrix game
 * (objective matrix_game, dense form, x and y in the d-simplex) is run by
 * a method at its defaults and over a grid of (steps, step_size) around
 * them; the figure is the mean population gap over seeds, computed exactly
 * (f is affine in the record, so the population game is the mean matrix).
 *
 *	saddle_defaults [--smoke] [--seeds S] [--d 5,20] [--n 2000,16000]
 *	                [--eps 0.5,2] [--game random|cyclic]
 *	                [--methods saddle.smd_maurey,...]
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
#include "saddle.h"
#include "saddle_gap.h"

#define MAX_LIST 8

struct game {
	size_t d, n;
	struct data_schema s;
	struct objective o;
	struct dataset ds;
	double *x;    /* n rows of d * d + 2 d */
	double *mean; /* the population record */
	struct dataset pop;
};

static bool cyclic; /* --game cyclic */

/* The population matrix abar_ij = uniform [-1, 1] from the game seed
 * ("random": equilibria near a few pure strategies), or the cyclic
 * tournament of d players ("cyclic", d odd: abar_ij = -1 when (j - i) mod d
 * is in 1 .. (d - 1) / 2, +1 for the others off the diagonal; rock-paper-
 * scissors for d = 3; skew-symmetric, equilibrium uniform, value 0);
 * records A = abar + xi, xi = +-0.5 fair, b = c = 0. */
static int
game_make(struct game *g, size_t d, size_t n, uint64_t seed)
{
	const size_t cols = d * d + 2 * d;
	struct objective_params op;
	struct err e = { 0 };
	struct rng r;

	memset(g, 0, sizeof(*g));
	g->d = d;
	g->n = n;
	g->x = malloc(n * cols * sizeof(*g->x));
	g->mean = calloc(cols, sizeof(*g->mean));
	if (g->x == NULL || g->mean == NULL)
		return -1;
	rng_splitmix_init(&r, 0x9a3e + d);
	for (size_t j = 0; j < d * d; j++) {
		size_t k = (j % d + d - j / d) % d;

		g->mean[j] = !cyclic            ? 2.0 * rng_uniform(&r) - 1.0
			     : k == 0           ? 0.0
			     : k <= (d - 1) / 2 ? -1.0
						: 1.0;
	}
	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < n; i++) {
		double *row = g->x + i * cols;

		for (size_t j = 0; j < cols; j++)
			row[j] =
				j < d * d ? g->mean[j] + (rng_uniform(&r) < 0.5 ? 0.5 : -0.5) : 0.0;
	}
	g->s.d = cols;
	g->s.task = TASK_UNLABELED;
	g->s.n_blocks = 3;
	g->s.blocks[0] = (struct data_block){ "A", 0, d * d, NAN, 1.5 };
	g->s.blocks[1] = (struct data_block){ "b", d * d, d, NAN, 1e-9 };
	g->s.blocks[2] = (struct data_block){ "c", d * d + d, d, NAN, 1e-9 };
	g->s.bounds = (struct bounds){ 1.5, NAN, NAN, NAN, NAN };
	objective_params_default(&op);
	if (objective_init(&g->o, objective_find("matrix_game"), &op, &g->s, &e) != ERR_OK) {
		fprintf(stderr, "objective: %s\n", e.msg);
		return -1;
	}
	g->ds = (struct dataset){ .n = n, .d = cols, .x = g->x };
	g->pop = (struct dataset){ .n = 1, .d = cols, .x = g->mean };
	return 0;
}

static void
game_free(struct game *g)
{
	free(g->x);
	free(g->mean);
}

static void
param_set(const struct alg_ops *a, double *p, const char *name, double v)
{
	const struct alg_param *q = alg_param_find(a, name);

	if (q != NULL)
		p[q - a->params] = v;
}

/* One run: its population gap, or NAN when the plan is refused. */
static double
run_gap(const struct alg_ops *a, const struct game *g, double eps, double steps, double tau,
	uint64_t seed, struct run_plan *ret_plan)
{
	struct run_spec spec;
	struct run_plan plan;
	struct err e = { 0 };
	struct rng r;
	struct saddle_gap gap;
	struct saddle_block b = { { .kind = CONSTRAINT_SIMPLEX, .radius = 1.0 }, GEOMETRY_L1 };
	static const struct saddle_gap_opts opts = { 1e-9, 1000 };
	double *u = malloc(2 * g->d * sizeof(*u)), res;

	memset(&spec, 0, sizeof(spec));
	spec.objective = g->o;
	spec.dim = g->o.dim;
	spec.schema = g->s;
	spec.n = g->n;
	spec.x = spec.y = b.set;
	spec.has_y = true;
	spec.geometry_x = spec.geometry_y = GEOMETRY_L1;
	spec.epsilon = eps;
	spec.delta = 1e-6;
	spec.mode = ACCOUNTING_BASIC;
	alg_default_params(a, spec.params);
	param_set(a, spec.params, "steps", steps);
	param_set(a, spec.params, "step_size", tau);
	if (u == NULL || alg_plan(a, &spec, &plan, &e) != ERR_OK) {
		free(u);
		return NAN;
	}
	rng_splitmix_init(&r, seed);
	if (alg_run(a, &spec, &plan, &g->ds, &r, NULL, NULL, u, &e) != ERR_OK ||
	    saddle_gap_eval(&g->o, &g->s, &g->pop, &b, &b, u, 1, &opts, &gap, NULL, &e) != ERR_OK) {
		fprintf(stderr, "%s: %s\n", a->name, e.msg);
		free(u);
		return -1.0;
	}
	if (ret_plan != NULL)
		*ret_plan = plan;
	res = gap.gap.hi;
	free(u);
	return res;
}

static size_t
parse_list(const char *s, double *v)
{
	size_t k = 0;

	while (s != NULL && *s != '\0' && k < MAX_LIST) {
		char *end;

		v[k++] = strtod(s, &end);
		s = *end == ',' ? end + 1 : NULL;
	}
	return k;
}

int
main(int argc, char **argv)
{
	double ds[MAX_LIST] = { 5, 20 }, ns[MAX_LIST] = { 2000, 16000 }, es[MAX_LIST] = { 0.5, 2 };
	size_t nd = 2, nn = 2, ne = 2;
	int seeds = 5, failed = 0;
	const char *methods = "saddle.smd_maurey";
	char buf[512];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0) {
			ds[0] = 3, ns[0] = 400, es[0] = 1, nd = nn = ne = 1, seeds = 1;
		} else if (i + 1 < argc && strcmp(argv[i], "--seeds") == 0) {
			seeds = atoi(argv[++i]);
		} else if (i + 1 < argc && strcmp(argv[i], "--d") == 0) {
			nd = parse_list(argv[++i], ds);
		} else if (i + 1 < argc && strcmp(argv[i], "--n") == 0) {
			nn = parse_list(argv[++i], ns);
		} else if (i + 1 < argc && strcmp(argv[i], "--eps") == 0) {
			ne = parse_list(argv[++i], es);
		} else if (i + 1 < argc && strcmp(argv[i], "--game") == 0) {
			cyclic = strcmp(argv[++i], "cyclic") == 0;
		} else if (i + 1 < argc && strcmp(argv[i], "--methods") == 0) {
			methods = argv[++i];
		} else {
			fprintf(stderr,
				"usage: %s [--smoke] [--seeds S] [--d L] [--n L] [--eps L] "
				"[--methods M,...]\n",
				argv[0]);
			return 2;
		}
	}
	printf("| method | d | n | eps | default T | default tau | default gap | best T | best "
	       "tau | best gap | default / best | best over T, auto tau | best over tau, default "
	       "T |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	snprintf(buf, sizeof(buf), "%s", methods);
	for (char *m = strtok(buf, ","); m != NULL; m = strtok(NULL, ",")) {
		const struct alg_ops *a = alg_find(m);

		if (a == NULL) {
			fprintf(stderr, "no method %s\n", m);
			return 2;
		}
		for (size_t id = 0; id < nd; id++)
			for (size_t in = 0; in < nn; in++)
				for (size_t ie = 0; ie < ne; ie++) {
					struct game *g = malloc(sizeof(*g) * (size_t)seeds);
					struct run_plan plan;
					double def = 0.0, t0, tau0, best = INFINITY, bt = 0,
					       btau = 0;
					double best_t = INFINITY,
					       best_q = INFINITY; /* auto tau; default T */

					for (int s = 0; s < seeds; s++)
						if (g == NULL ||
						    game_make(&g[s], (size_t)ds[id], (size_t)ns[in],
							      1000u + (uint64_t)s) != 0)
							return 1;
					for (int s = 0; s < seeds; s++) {
						double v = run_gap(a, &g[s], es[ie], 0, 0, 77u + s,
								   &plan);

						failed += !(v >= 0.0);
						def += v / seeds;
					}
					t0 = (double)plan.steps;
					tau0 = run_plan_value(&plan, "step_size");
					/* T over default x 2^k, tau over auto and
					 * auto x {1/4, 1/2, 2, 4} (refused above the cap) */
					for (int k = -6; k <= 2; k++) {
						double t = floor(t0 * ldexp(1.0, k));

						if (t < 1.0 || t > ns[in])
							continue;
						for (int q = -2; q <= 2; q++) {
							double sum = 0.0, tau = 0.0;
							struct run_plan p0;

							if (run_gap(a, &g[0], es[ie], t, 0, 1,
								    &p0) < 0.0)
								continue;
							if (q != 0)
								tau = run_plan_value(&p0,
										     "step_size") *
								      ldexp(1.0, q);
							for (int s = 0; s < seeds && isfinite(sum);
							     s++) {
								double v =
									run_gap(a, &g[s], es[ie], t,
										tau, 77u + s, NULL);

								sum = isnan(v) ? NAN
									       : sum + v / seeds;
							}
							if (isfinite(sum) && q == 0)
								best_t = fmin(best_t, sum);
							if (isfinite(sum) && k == 0)
								best_q = fmin(best_q, sum);
							if (isfinite(sum) && sum < best) {
								best = sum;
								bt = t;
								btau = q == 0 ? run_plan_value(
											&p0,
											"step_size")
									      : tau;
							}
						}
					}
					printf("| %s | %.0f | %.0f | %g | %.0f | %.4g | %.4f | "
					       "%.0f | %.4g "
					       "| %.4f | %.2f | %.4f | %.4f |\n",
					       a->name, ds[id], ns[in], es[ie], t0, tau0, def, bt,
					       btau, best, def / best, best_t, best_q);
					fflush(stdout);
					failed += !isfinite(best) || !isfinite(def);
					for (int s = 0; s < seeds; s++)
						game_free(&g[s]);
					free(g);
				}
	}
	return failed == 0 ? 0 : 1;
}
