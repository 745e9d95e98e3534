/*
 * test_zeroth_order.c - zeroth_order.o2nc_tree and zeroth_order.naive
 * (docs/algorithms/zeroth-order.md) and their value-only objectives.
 *
 * - tree: NODE(t) against the documented table (t = 1..8, 12, 13, 100, 1000),
 *   popcount(t) <= Lambda(T); zo_tree_push's running noise against the sum
 *   over NODE(t) for every t <= 600 (exact: integer noises); the exact
 *   sigma against the documented table, including T = 1 (where the paper's
 *   formula gives 0) and T = 4 with B1 = T B2 / 2 (where it is too small).
 * - the schedule: T, K and sigma of the documented worked examples (M = 1e6 and
 *   1e5, rho_paper = 1 and 0.1; the naive baseline at M = 1e6), and the
 *   charged RDP at alpha = 2 equal to rho_eff^2 from the plan's values.
 * - oracle: a white-box copy of capped_l1_regression with a derivative
 *   that counts: both methods run and never call it; objective_grad on a
 *   value-only objective returns NAN and leaves g alone.
 * - estimators: GRAD and DIFF on |<a, x> - b| (the capped loss where the
 *   cap cannot bind) against the closed-form smoothed gradient
 *   (docs/algorithms/zeroth-order.md, d = 3: I_x(2, 2) = 3x^2 - 2x^3); each mean within 6 standard
 *   errors per coordinate (false failure < 1e-8), the measured variance
 *   below the documented bounds 16 d L^2 / b and 16 d L^2 ||x - y||^2 / delta^2.
 * - exact Goldstein norms of sphere_distance (docs/algorithms/zeroth-order.md).
 * - relu_net: see test_relu_net (constants held and attained on random
 *   instances, the public start point, the width) and test_relu_net_runs.
 * - utility: see test_beats_naive.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alg.h"
#include "objective.h"
#include "privacy/rdp.h"
#include "rng_gauss.h"
#include "zeroth_order/run.h"
#include "zeroth_order/zo.h"
#ifdef DPOPT_TESTING
#include "testing_hook.h"
#include "zo_traj.h"
#endif

static const struct alg_ops *
method(const char *name)
{
	const struct alg_ops *a = alg_find(name);

	ck_assert_ptr_nonnull(a);
	return a;
}

/* ---- tree ---- */

START_TEST(test_tree_nodes)
{
	static const struct {
		uint64_t t;
		unsigned n;
		uint64_t a[6], b[6];
	} tab[] = {
		{ 1, 1, { 1 }, { 1 } },
		{ 2, 1, { 1 }, { 2 } },
		{ 3, 2, { 1, 3 }, { 2, 3 } },
		{ 4, 1, { 1 }, { 4 } },
		{ 5, 2, { 1, 5 }, { 4, 5 } },
		{ 6, 2, { 1, 5 }, { 4, 6 } },
		{ 7, 3, { 1, 5, 7 }, { 4, 6, 7 } },
		{ 8, 1, { 1 }, { 8 } },
		{ 12, 2, { 1, 9 }, { 8, 12 } },
		{ 13, 3, { 1, 9, 13 }, { 8, 12, 13 } },
		{ 100, 3, { 1, 65, 97 }, { 64, 96, 100 } },
		{ 1000, 6, { 1, 513, 769, 897, 961, 993 }, { 512, 768, 896, 960, 992, 1000 } },
	};
	static const unsigned lam[][2] = { { 1, 1 },   { 2, 2 },     { 3, 2 },
					   { 4, 3 },   { 7, 3 },     { 8, 4 },
					   { 100, 7 }, { 1000, 10 }, { 1024, 11 } };
	uint64_t a[64], b[64];

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		unsigned n = zo_tree_nodes(tab[i].t, a, b);

		ck_assert_uint_eq(n, tab[i].n);
		for (unsigned k = 0; k < n; k++) {
			ck_assert_uint_eq(a[k], tab[i].a[k]);
			ck_assert_uint_eq(b[k], tab[i].b[k]);
			ck_assert_uint_eq(a[k], b[k] - (b[k] & -b[k]) + 1);
		}
	}
	for (size_t i = 0; i < sizeof(lam) / sizeof(lam[0]); i++)
		ck_assert_uint_eq(zo_bitlength(lam[i][0]), lam[i][1]);
}
END_TEST

/* The stack of prefix sums returns TREE(t) = sum over NODE(t) of xi_b for
 * every t, xi_b drawn once at b (here xi_b = (b, b^2): exact sums). */
START_TEST(test_tree_running_noise)
{
	double vec[65 * 2];
	struct zo_tree t = { .d = 2, .vec = vec };
	uint64_t a[64], b[64];

	zo_tree_reset(&t);
	for (uint64_t c = 1; c <= 600; c++) {
		double xi[2] = { (double)c, (double)(c * c) }, want[2] = { 0, 0 };
		const double *got = zo_tree_push(&t, xi);
		unsigned n = zo_tree_nodes(c, a, b);

		for (unsigned k = 0; k < n; k++) {
			want[0] += (double)b[k];
			want[1] += (double)(b[k] * b[k]);
		}
		ck_assert_double_eq(got[0], want[0]);
		ck_assert_double_eq(got[1], want[1]);
		ck_assert_uint_le(n, zo_bitlength(600));
	}
}
END_TEST

/* The documented sigma table: exact sigma per row, the paper's value
 * beside it where it is wrong. */
START_TEST(test_sigma_table)
{
	static const struct {
		double d, L;
		unsigned long T;
		double B1, B2, delta, rho, sigma;
	} tab[] = {
		{ 10, 1, 100, 101, 1, 0.1, 1, 0.979796 },
		{ 5, 2, 7, 8, 1, 0.2, 0.5, 16.1624 },
		{ 3, 1, 1, 2, 1, 0.1, 1, 3.0 },     /* paper: 0 */
		{ 1, 1, 4, 2, 1, 0.1, 1, 1.73205 }, /* paper: 1.66511 */
		{ 10, 1, 4355, 4356, 1, 0.1, 1, 0.0318172 },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		double D = tab[i].delta / (double)tab[i].T;
		double sg = 2.0 * tab[i].d * tab[i].L / tab[i].B1;
		double sd = 4.0 * tab[i].d * tab[i].L * D / (tab[i].B2 * tab[i].delta);
		double s = zo_sigma_exact(tab[i].T, sg, sd, tab[i].rho);
		double paper = sqrt(2.0 * log((double)tab[i].T)) * 4.0 * tab[i].d * tab[i].L /
			       (tab[i].B2 * (double)tab[i].T * tab[i].rho);

		ck_assert_msg(fabs(s - tab[i].sigma) <= 1e-5 * tab[i].sigma, "row %zu: %.8g", i, s);
		if (i == 2 || i == 3)
			ck_assert(paper < s);
		else
			ck_assert(paper >= s);
	}
}
END_TEST

/* ---- schedule ---- */

static void
spec_init(struct run_spec *s, const char *alg, const char *objective, enum task task, size_t n,
	  size_t d, double row_l2)
{
	memset(s, 0, sizeof(*s));
	s->x.kind = CONSTRAINT_L2_BALL;
	s->x.radius = 1e3;
	s->epsilon = 1.0;
	s->delta = 1e-5;
	s->mode = ACCOUNTING_BASIC;
	alg_default_params(method(alg), s->params);
	s->n = n;
	s->schema.d = d;
	s->schema.task = task;
	s->schema.bounds.feature_l2 = row_l2;
	s->schema.bounds.feature_linf = NAN;
	s->schema.bounds.label = task == TASK_REGRESSION ? 3.0 : NAN;
	s->schema.bounds.label_lo = s->schema.bounds.label_hi = NAN;
	ck_assert_int_eq(run_spec_set_objective(s, objective_find(objective), NULL, NULL), ERR_OK);
}

/* The worked examples (docs/algorithms/zeroth-order.md) with L = 1 (sphere_distance with rows of
 * norm <= 1e-12, so L = 1 + 1e-12), F* = 1, delta = 0.1; the lattice raises sigma by at most 1e-6
 * relative. */
START_TEST(test_worked_examples)
{
	static const struct {
		bool naive;
		size_t M, d;
		double rho;
		unsigned long T, K;
		double sigma;
	} tab[] = {
		{ false, 1000000, 10, 1.0, 4355, 114, 0.03182 },
		{ false, 1000000, 10, 0.1, 5361, 93, 0.2585 },
		{ false, 100000, 2, 1.0, 548, 91, 0.0438 },
		{ true, 1000000, 10, 1.0, 20218, 49, 20.0 },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct run_spec s;
		struct zo_setup su;
		struct err e = { 0 };

		spec_init(&s, tab[i].naive ? "zeroth_order.naive" : "zeroth_order.o2nc_tree",
			  "sphere_distance", TASK_UNLABELED, tab[i].M, tab[i].d, 1e-12);
		s.params[ZO_P_F_STAR] = 1.0;
		ck_assert_msg(zo_setup_at(&s, tab[i].naive, 1.0 / tab[i].rho, &su, &e) == ERR_OK,
			      "%s", e.msg);
		ck_assert_uint_eq(su.T, tab[i].T);
		ck_assert_uint_eq(su.K, tab[i].K);
		ck_assert_msg(fabs(su.sigma - tab[i].sigma) <= 5e-4 * tab[i].sigma, "row %zu: %.6g",
			      i, su.sigma);
		ck_assert_double_eq_tol(su.rho_eff, tab[i].rho, 1e-12 * tab[i].rho);
	}
}
END_TEST

/* Small T: n = 4 rows gives T = 2 (clamped) and K = 1; sigma counts
 * Lambda = 2 nodes for leaf 1 and 1 for leaf 2. */
START_TEST(test_small_t)
{
	struct run_spec s;
	struct zo_setup su;
	struct err e = { 0 };

	spec_init(&s, "zeroth_order.o2nc_tree", "sphere_distance", TASK_UNLABELED, 4, 3, 0.5);
	ck_assert_int_eq(zo_setup_at(&s, false, 2.0, &su, &e), ERR_OK);
	ck_assert_uint_eq(su.T, 2);
	ck_assert_uint_eq(su.K, 1);
	ck_assert_uint_eq(su.lambda, 2);
	ck_assert_double_eq_tol(su.sigma,
				2.0 * sqrt(fmax(2.0 * su.s_gl * su.s_gl, su.s_dl * su.s_dl)),
				1e-12 * su.sigma);
	/* 3 rows: refused, naming the dataset. */
	spec_init(&s, "zeroth_order.o2nc_tree", "sphere_distance", TASK_UNLABELED, 3, 3, 0.5);
	ck_assert_int_eq(zo_setup_at(&s, false, 2.0, &su, &e), ERR_INVALID);
}
END_TEST

/* The charge: the event's RDP at alpha = 2 is rho_eff^2 (a Gaussian of z =
 * 1 / rho_eff: alpha / (2 z^2)), with rho_eff recomputed from the plan's
 * sensitivities and sigma; rho_zcdp = rho_paper^2 / 2. */
START_TEST(test_charge_is_rho_eff)
{
	static const enum accounting_mode modes[] = { ACCOUNTING_BASIC, ACCOUNTING_RENYI };

	for (size_t m = 0; m < 2; m++) {
		struct run_spec s;
		struct run_plan p;
		struct rdp_grid g = { .n = 1, .order = { 2.0 } };
		struct err e = { 0 };
		double rdp, lam, sg, sd, sigma, rho_eff, rho;

		spec_init(&s, "zeroth_order.o2nc_tree", "sphere_distance", TASK_UNLABELED, 20000, 4,
			  0.5);
		s.mode = modes[m];
		ck_assert_msg(alg_plan(method("zeroth_order.o2nc_tree"), &s, &p, &e) == ERR_OK,
			      "%s", e.msg);
		ck_assert_int_eq(rdp_curve(&p.event, &g, &rdp, &e), ERR_OK);
		lam = run_plan_value(&p, "tree_levels");
		sg = run_plan_value(&p, "sensitivity_lattice");
		sd = run_plan_value(&p, "sensitivity_diff");
		sigma = run_plan_value(&p, "noise_sigma");
		rho_eff = sqrt(fmax(lam * sg * sg, (lam - 1.0) * sd * sd)) / sigma;
		rho = run_plan_value(&p, "rho_paper");
		ck_assert_double_eq_tol(rdp, rho_eff * rho_eff, 1e-9 * rdp);
		ck_assert_double_eq_tol(run_plan_value(&p, "rho_eff"), rho_eff, 1e-12);
		ck_assert_double_eq_tol(run_plan_value(&p, "rho_zcdp"), rho * rho / 2.0, 1e-15);
		ck_assert_double_eq_tol(rho_eff, rho, 1e-9);
		ck_assert_double_eq(
			lam, (double)zo_bitlength((uint64_t)run_plan_value(&p, "round_length")));
		/* work grows like M d^2 */
		ck_assert(zo_work(&s, &p) >= 2.0 * 20000.0 * 16.0 * 0.9);
	}
}
END_TEST

/* ---- oracle ---- */

static unsigned long n_phi, n_dphi;

static double
counting_phi(double z, double y, double delta)
{
	n_phi++;
	return objective_find("capped_l1_regression")->phi(z, y, delta);
}

static double
counting_dphi(double z, double y, double delta)
{
	n_dphi++;
	return z > y ? 1.0 : -1.0;
}

/* Fill a dataset of n rows of dimension d, ||x|| <= 1, labels |y| <= 1. */
static void
rows(struct dataset *ds, double *x, double *y, size_t n, size_t d, uint64_t seed)
{
	struct rng r;

	rng_splitmix_init(&r, seed);
	for (size_t i = 0; i < n; i++) {
		rng_sphere(&r, x + i * d, d);
		for (size_t j = 0; j < d; j++)
			x[i * d + j] *= rng_uniform(&r);
		if (y != NULL)
			y[i] = 2.0 * rng_uniform(&r) - 1.0;
	}
	memset(ds, 0, sizeof(*ds));
	ds->n = n;
	ds->d = d;
	ds->x = x;
	ds->y = y;
}

START_TEST(test_never_a_gradient)
{
	static const char *const algs[] = { "zeroth_order.o2nc_tree", "zeroth_order.naive" };
	enum { N = 3000, D = 3 };
	static double x[N * D], y[N];
	struct objective_ops spy = *objective_find("capped_l1_regression");
	struct dataset ds;
	double g[D] = { 7.0, 7.0, 7.0 }, w[D] = { 0.1, 0.2, 0.3 }, out[D];

	rows(&ds, x, y, N, D, 5);
	/* the flags: value-only objectives only in zeroth-order methods */
	for (size_t i = 0; i < alg_count(); i++)
		for (const char *const *o = alg_at(i)->objectives; *o != NULL; o++)
			if (objective_find(*o)->value_only)
				ck_assert_msg(alg_at(i)->zeroth_order, "%s lists %s",
					      alg_at(i)->name, *o);
	spy.phi = counting_phi;
	spy.dphi = counting_dphi;
	spy.value_only = false; /* a gradient exists: the methods must not use it */
	for (size_t a = 0; a < 2; a++) {
		struct run_spec s;
		struct run_plan p;
		struct rng r;
		struct err e = { 0 };

		spec_init(&s, algs[a], "capped_l1_regression", TASK_REGRESSION, N, D, 1.0);
		s.objective.ops = &spy;
		n_phi = n_dphi = 0;
		ck_assert_msg(alg_plan(method(algs[a]), &s, &p, &e) == ERR_OK, "%s", e.msg);
		rng_splitmix_init(&r, 9);
		ck_assert_msg(alg_run(method(algs[a]), &s, &p, &ds, &r, NULL, NULL, out, &e) ==
				      ERR_OK,
			      "%s", e.msg);
		ck_assert_uint_gt(n_phi, 1000);
		ck_assert_uint_eq(n_dphi, 0);
	}
	{
		struct run_spec s;

		spec_init(&s, algs[0], "capped_l1_regression", TASK_REGRESSION, N, D, 1.0);
		ck_assert(isnan(objective_grad(&s.objective, &ds, 0, w, 1.0, g)));
		ck_assert(g[0] == 7.0 && g[1] == 7.0 && g[2] == 7.0);
	}
}
END_TEST

/* ---- estimators ---- */

/* Closed form (docs/algorithms/zeroth-order.md) of grad F^_delta for |<a, x> - b| in d = 3. */
static void
smoothed_abs_grad(const double *a, double b, const double *x, double delta, double *ret)
{
	double na = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
	double r = a[0] * x[0] + a[1] * x[1] + a[2] * x[2] - b;
	double q = fmax(-1.0, fmin(1.0, r / (delta * na)));
	double u = (1.0 - q) / 2.0, c = 1.0 - 2.0 * (3.0 * u * u - 2.0 * u * u * u);

	for (int j = 0; j < 3; j++)
		ret[j] = a[j] * c;
}

/* GRAD (one record, d directions) and DIFF against the closed form;
 * returns the measured E||est - mean||^2. */
static double
check_estimator(bool diff, int reps)
{
	static const double a[3] = { 0.5, 0.5, -0.25 }, b = 0.1, delta = 0.4;
	static const double x[3] = { 0.1, 0.05, 0.2 }, yv[3] = { 0.15, 0.02, 0.25 };
	double row[3] = { 0.5, 0.5, -0.25 }, lab = b, want[3], wy[3], u[3], p[3];
	double sum[3] = { 0 }, sq[3] = { 0 }, var = 0.0;
	struct run_spec s;
	struct dataset ds = { .n = 1, .d = 3, .x = row, .y = &lab };
	struct rng r;
	struct zo_eval ev;

	spec_init(&s, "zeroth_order.o2nc_tree", "capped_l1_regression", TASK_REGRESSION, 10, 3,
		  1.0);
	rng_splitmix_init(&r, diff ? 11 : 12);
	ev = (struct zo_eval){ .o = &s.objective,
			       .ds = &ds,
			       .rng = &r,
			       .dim = 3,
			       .L = 0.75,
			       .delta = delta,
			       .u = u,
			       .p = p };
	smoothed_abs_grad(a, b, x, delta, want);
	if (diff) {
		smoothed_abs_grad(a, b, yv, delta, wy);
		for (int j = 0; j < 3; j++)
			want[j] -= wy[j];
	}
	for (int k = 0; k < reps; k++) {
		double g[3] = { 0 };

		if (diff)
			zo_diff_record(&ev, 0, x, yv, INFINITY, g);
		else
			zo_grad_record(&ev, 0, x, 3, g);
		for (int j = 0; j < 3; j++) {
			sum[j] += g[j];
			sq[j] += g[j] * g[j];
		}
	}
	for (int j = 0; j < 3; j++) {
		double m = sum[j] / reps, v = sq[j] / reps - m * m, se = sqrt(v / reps);

		ck_assert_msg(fabs(m - want[j]) <= 6.0 * se + 1e-12,
			      "%s coord %d: %g vs %g (se %g)", diff ? "DIFF" : "GRAD", j, m,
			      want[j], se);
		var += v;
	}
	return var;
}

START_TEST(test_estimators)
{
	const double L = 0.75, delta = 0.4, d = 3.0;
	double dxy2 = 0.05 * 0.05 + 0.03 * 0.03 + 0.05 * 0.05;
	double vg = check_estimator(false, 200000), vd = check_estimator(true, 200000);

	printf("GRAD variance %.4g (bound 16 d L^2 = %.4g); DIFF variance %.4g (bound 16 d L^2 "
	       "||x-y||^2 / delta^2 = %.4g)\n",
	       vg, 16.0 * d * L * L, vd, 16.0 * d * L * L * dxy2 / (delta * delta));
	ck_assert(vg <= 16.0 * d * L * L);
	ck_assert(vd <= 16.0 * d * L * L * dxy2 / (delta * delta));
}
END_TEST

START_TEST(test_goldstein_table)
{
	static const struct {
		double x[3], r, want;
	} tab[] = {
		{ { 2, 0, 0 }, 0.5, 0.9682 }, { { 0.5, 0.2, 0 }, 0.3, 0.8305 },
		{ { 1.2, 0, 0 }, 0.3, 0.0 },  { { 0.1, 0, 0 }, 0.2, 0.0 },
		{ { 3, 1, 0 }, 1.0, 0.9487 },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		ck_assert_double_eq_tol(sphere_distance_goldstein(tab[i].x, 3, tab[i].r),
					tab[i].want, 1e-4);
}
END_TEST

/* Every value-only loss at a point against its formula, and its L from
 * the declared row bound (0.8 here). */
START_TEST(test_objective_values)
{
	static const struct {
		const char *name;
		enum task task;
		double y, want;
	} tab[] = {
		/* margin m = <w, x> = 0.5 * 0.6 - 1.0 * 0.5 = -0.2 */
		{ "capped_l1_regression", TASK_REGRESSION, 1.5, 1.0 },   /* min(1.7, 1) */
		{ "capped_l1_regression", TASK_REGRESSION, 0.1, 0.3 },   /* |-0.2 - 0.1| */
		{ "ramp_classification", TASK_BINARY, 1.0, 1.0 },        /* min(1, 1.2) */
		{ "ramp_classification", TASK_BINARY, -1.0, 0.8 },       /* 1 - 0.2 */
		{ "robust_phase_retrieval", TASK_REGRESSION, 0.5, 0.3 }, /* ||-0.2| - 0.5| */
		{ "relu_neuron", TASK_REGRESSION, 0.5, 0.5 },            /* |0 - 0.5| */
		{ "relu_neuron", TASK_REGRESSION, -0.5, 0.5 },           /* |0 + 0.5| */
		{ "sphere_distance", TASK_UNLABELED, 0.0, 0.0 },         /* see below */
	};
	double row[2] = { 0.6, 0.5 }, w[2] = { 0.5, -1.0 };

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct run_spec s;
		struct objective_constants oc;
		struct dataset ds = { .n = 1, .d = 2, .x = row };
		double y = tab[i].y, want = tab[i].want;

		ds.y = tab[i].task == TASK_UNLABELED ? NULL : &y;
		spec_init(&s, "zeroth_order.o2nc_tree", tab[i].name, tab[i].task, 10, 2, 0.8);
		ck_assert(objective_find(tab[i].name)->value_only);
		if (tab[i].task == TASK_UNLABELED)
			want = fabs(sqrt(1.25) - 1.0) - 0.2;
		ck_assert_double_eq_tol(objective_value(&s.objective, &ds, 0, w), want, 1e-15);
		ck_assert_int_eq(objective_constants(&s.objective, &s.schema, &s.x, &oc, NULL),
				 ERR_OK);
		ck_assert_double_eq_tol(oc.lipschitz_l2, tab[i].task == TASK_UNLABELED ? 1.8 : 0.8,
					1e-15);
	}
}
END_TEST

/* ---- relu_net ---- */

/* A relu_net spec: width m, intercept, rows of norm <= X (no l_inf bound:
 * X_inf = X), labels |y| <= 1. */
static void
net_spec(struct run_spec *s, const char *alg, size_t n, size_t d, size_t m, double X,
	 unsigned long long seed)
{
	struct objective_params p;
	struct err e = { 0 };

	spec_init(s, alg, "relu_neuron", TASK_REGRESSION, n, d, X);
	s->schema.bounds.label = 1.0;
	objective_params_default(&p);
	p.intercept = true;
	p.width = m;
	p.init_seed = seed;
	ck_assert_msg(run_spec_set_objective(s, objective_find("relu_net"), &p, &e) == ERR_OK, "%s",
		      e.msg);
}

/* Central-difference gradient of record 0 at w (dim entries). */
static void
fd_grad(const struct objective *o, const struct dataset *ds, const double *w, double *g)
{
	double wp[64], wm[64], h = 1e-7;

	for (size_t j = 0; j < o->dim; j++) {
		memcpy(wp, w, o->dim * sizeof(double));
		memcpy(wm, w, o->dim * sizeof(double));
		wp[j] += h;
		wm[j] -= h;
		g[j] = (objective_value(o, ds, 0, wp) - objective_value(o, ds, 0, wm)) / (2.0 * h);
	}
}

/*
 * relu_net (docs/algorithms/zeroth-order.md): the value against the formula;
 * its documented constants L2 = X~ and L_inf = X~_inf / sqrt(m) and value
 * <= 1 hold on 2000 random instances (random rows of norm <= X, weights,
 * labels; finite-difference gradients, away from kinks with probability
 * 1) and L2 is attained (to 1e-6) on 200 random instances made to have
 * every unit active, |h - y| < 1 and ||x~|| = X~; the public start point
 * is a function of init_seed (same seed, same point; biases 0; entries
 * within sqrt(3 / c), sample variance 1 / c within 10%); the width is
 * required and refused elsewhere, naming 'objective.width'.
 */
START_TEST(test_relu_net)
{
	enum { D = 4, M = 6, DIM = (D + 1) * M };
	const double X = 0.8, Xt = sqrt(X * X + 1.0);
	struct run_spec s, s2;
	struct objective_constants oc;
	struct objective_params p;
	struct err e = { 0 };
	struct rng r;
	double row[D], y, w[DIM], g[DIM], x1[DIM], x2[DIM], var = 0.0, worst = 0.0, worst_inf = 0.0;
	struct dataset ds = { .n = 1, .d = D, .x = row, .y = &y };

	net_spec(&s, "zeroth_order.o2nc_tree", 100, D, M, X, 1);
	ck_assert_uint_eq(s.dim, DIM);
	ck_assert_int_eq(objective_constants(&s.objective, &s.schema, &s.x, &oc, NULL), ERR_OK);
	ck_assert_double_eq_tol(oc.lipschitz_l2, Xt, 1e-15);
	/* X~_inf = max(X_inf, 1) with the intercept's feature; X_inf = X here */
	ck_assert_double_eq_tol(oc.lipschitz_linf, fmax(X, 1.0) / sqrt((double)M), 1e-15);
	ck_assert(oc.value_bound == 1.0);

	/* the formula at one point: W[j M + k] = 0.1 (k + 1), biases -0.05 */
	for (size_t j = 0; j < D; j++)
		row[j] = 0.2 * (double)(j + 1) / 4.0;
	for (size_t i = 0; i < DIM; i++)
		w[i] = i < D * M ? 0.1 * (double)(i % M + 1) : -0.05;
	y = 0.1;
	{
		double h = 0.0, sx = 0.0;

		for (size_t j = 0; j < D; j++)
			sx += row[j];
		for (size_t k = 0; k < M; k++)
			h += (k % 2 == 0 ? 1.0 : -1.0) *
			     fmax(0.0, 0.1 * (double)(k + 1) * sx - 0.05);
		ck_assert_double_eq_tol(objective_value(&s.objective, &ds, 0, w),
					fmin(fabs(h / sqrt((double)M) - y), 1.0), 1e-15);
	}

	rng_splitmix_init(&r, 31);
	for (int it = 0; it < 2200; it++) {
		double n2 = 0.0, ninf = 0.0, v;
		bool attain = it >= 2000;

		rng_sphere(&r, row, D);
		for (size_t j = 0; j < D; j++)
			row[j] *= attain ? X : X * rng_uniform(&r);
		rng_normal_vector(&r, w, DIM);
		y = 2.0 * rng_uniform(&r) - 1.0;
		if (attain) {
			/* every unit active (flip a unit whose pre-activation is
			 * <= 0), then the label at the output: |h - y| = 0 */
			double h = 0.0;

			for (size_t k = 0; k < M; k++) {
				double sk = w[D * M + k];

				for (size_t j = 0; j < D; j++)
					sk += row[j] * w[j * M + k];
				if (sk <= 0.0) {
					for (size_t j = 0; j < D; j++)
						w[j * M + k] = -w[j * M + k];
					w[D * M + k] = -w[D * M + k];
					sk = -sk;
				}
				h += (k % 2 == 0 ? 1.0 : -1.0) * sk;
			}
			y = h / sqrt((double)M) + 0.5 * (2.0 * rng_uniform(&r) - 1.0);
		}
		v = objective_value(&s.objective, &ds, 0, w);
		ck_assert(v >= 0.0 && v <= 1.0);
		fd_grad(&s.objective, &ds, w, g);
		for (size_t j = 0; j < DIM; j++) {
			n2 += g[j] * g[j];
			ninf = fmax(ninf, fabs(g[j]));
		}
		ck_assert_msg(sqrt(n2) <= Xt * (1.0 + 1e-6), "||grad|| %.9f > L2 %.9f", sqrt(n2),
			      Xt);
		ck_assert(ninf <= oc.lipschitz_linf * (1.0 + 1e-6));
		if (attain)
			ck_assert_msg(fabs(sqrt(n2) - Xt) <= 1e-6 * Xt,
				      "L2 not attained: %.9f against %.9f", sqrt(n2), Xt);
		worst = fmax(worst, sqrt(n2) / Xt);
		worst_inf = fmax(worst_inf, ninf / oc.lipschitz_linf);
	}
	printf("relu_net: max ||grad||_2 / L2 = %.9f, max ||grad||_inf / L_inf = %.4f\n", worst,
	       worst_inf);

	/* the public start point */
	ck_assert(objective_start(&s.objective, x1));
	net_spec(&s2, "zeroth_order.naive", 100, D, M, X, 1);
	ck_assert(objective_start(&s2.objective, x2));
	ck_assert_mem_eq(x1, x2, sizeof(x1));
	for (size_t i = 0; i < DIM; i++) {
		if (i >= D * M) {
			ck_assert(x1[i] == 0.0);
			continue;
		}
		ck_assert(fabs(x1[i]) <= sqrt(3.0 / (D + 1)));
		var += x1[i] * x1[i] / (D * M);
	}
	net_spec(&s2, "zeroth_order.naive", 100, D, M, X, 2);
	ck_assert(objective_start(&s2.objective, x2));
	ck_assert(memcmp(x1, x2, sizeof(x1)) != 0);
	{
		/* the sample variance over many entries: width 256 */
		double big[(D + 1) * 256], v2 = 0.0;

		net_spec(&s2, "zeroth_order.naive", 100, D, 256, X, 7);
		ck_assert(objective_start(&s2.objective, big));
		for (size_t i = 0; i < D * 256; i++)
			v2 += big[i] * big[i] / (D * 256);
		ck_assert_msg(fabs(v2 * (D + 1) - 1.0) < 0.1, "start variance %.4f", v2);
	}
	ck_assert(var > 0.0);
	spec_init(&s2, "zeroth_order.naive", "relu_neuron", TASK_REGRESSION, 100, D, X);
	ck_assert(!objective_start(&s2.objective, x2)); /* no start of its own */

	/* the width: required, bounded, refused by other objectives */
	objective_params_default(&p);
	ck_assert_int_eq(run_spec_set_objective(&s2, objective_find("relu_net"), &p, &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "objective.width");
	p.width = OBJECTIVE_MAX_WIDTH + 1;
	ck_assert_int_eq(run_spec_set_objective(&s2, objective_find("relu_net"), &p, &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "objective.width");
	p.width = 3;
	ck_assert_int_eq(run_spec_set_objective(&s2, objective_find("relu_neuron"), &p, &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "objective.width");
	p.width = 0;
	p.init_seed = 9;
	ck_assert_int_eq(run_spec_set_objective(&s2, objective_find("relu_neuron"), &p, &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "objective.init_seed");
}
END_TEST

/* Both methods run on relu_net from its start point; a non-zero
 * params.start is refused naming it. */
START_TEST(test_relu_net_runs)
{
	enum { N = 4000, D = 3, M = 4, DIM = (D + 1) * M };
	static const char *const algs[] = { "zeroth_order.o2nc_tree", "zeroth_order.naive" };
	static double x[N * D], y[N];
	struct dataset ds;

	rows(&ds, x, y, N, D, 17);
	for (size_t a = 0; a < 2; a++) {
		struct run_spec s;
		struct run_plan p;
		struct rng r;
		struct err e = { 0 };
		double out[DIM], x1[DIM], moved = 0.0;

		net_spec(&s, algs[a], N, D, M, 1.0, 1);
		ck_assert_msg(alg_plan(method(algs[a]), &s, &p, &e) == ERR_OK, "%s", e.msg);
		rng_splitmix_init(&r, 3);
		ck_assert_msg(alg_run(method(algs[a]), &s, &p, &ds, &r, NULL, NULL, out, &e) ==
				      ERR_OK,
			      "%s", e.msg);
		ck_assert(objective_start(&s.objective, x1));
		for (size_t j = 0; j < DIM; j++) {
			ck_assert(isfinite(out[j]));
			moved = fmax(moved, fabs(out[j] - x1[j]));
		}
		/* the result is near x_1 (steps <= gold_delta / T, K rounds),
		 * not near the origin */
		ck_assert(moved > 0.0 && moved <= run_plan_value(&p, "rounds") * 0.1 + 1e-12);
		s.params[ZO_P_START] = 0.5;
		ck_assert_int_eq(alg_plan(method(algs[a]), &s, &p, &e), ERR_INVALID);
		ck_assert_str_eq(e.field, "params.start");
	}
}
END_TEST

#ifdef DPOPT_TESTING
/* ---- utility against the baseline ---- */

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Mean trajectory certificate mean_k c_k of one run (docs/algorithms/zeroth-order.md, M2). */
static double
certificate(const char *alg, const struct run_spec *spec, const struct dataset *ds,
	    const double *zbar, uint64_t seed)
{
	struct run_spec s = *spec;
	struct run_plan p;
	struct zo_traj t = { .zbar = zbar };
	struct alg_testing_hook h = { .point = zo_traj_point, .ctx = &t };
	struct rng r;
	struct err e = { 0 };
	double out[16];

	ck_assert_msg(alg_plan(method(alg), &s, &p, &e) == ERR_OK, "%s", e.msg);
	t.T = (unsigned long)run_plan_value(&p, "round_length");
	s.testing_hook = &h;
	rng_splitmix_init(&r, seed);
	ck_assert_msg(alg_run(method(alg), &s, &p, ds, &r, NULL, NULL, out, &e) == ERR_OK, "%s",
		      e.msg);
	ck_assert_uint_eq(t.rounds, run_plan_value(&p, "rounds"));
	return t.cert_sum / (double)t.rounds;
}

/*
 * The configuration scaled down: d = 10, delta = 0.1, F* = 1,
 * rho_paper ~ 0.1 (eps = 0.3407 at delta_DP = 1e-5 on the exact curve,
 * docs/algorithms/zeroth-order.md), f = | ||x|| - 1 | + <z, x> with z uniform in the ball of
 * radius 0.1 (L = 1.1), M = 2e4 instead of 2e5 (a tenth: 20 seeds of
 * both methods in about 5 s), from x_1 of norm 1.1 (params.start: one
 * gold_delta outside the sphere; F* = 1 stays a valid bound).  Measured:
 * o2nc_tree 0.85 (sd 0.11), naive 1.00 (sd 0.00), t = 6.1; the rates'
 * ratio is 0.20.  Not from the origin: 0 is itself Goldstein-stationary
 * (the cone's tip, 0 in the hull of every direction), so a method that
 * does not move would look good there.  One-sided Welch test that o2nc_tree's
 * mean certificate is below naive's, t above the Student-t quantile
 * t_{19, 1 - 1e-3} = 3.579 (df taken as 19, the conservative Welch df).
 */
START_TEST(test_beats_naive)
{
	enum { M = 20000, D = 10, SEEDS = 20 };
	static double x[M * D];
	double zbar[D] = { 0 }, c1[SEEDS], c2[SEEDS], m1 = 0, m2 = 0, v1 = 0, v2 = 0, tstat;
	double A, rate1, rate2, rho = 0.1, L = 1.1, gd = 0.1, t0 = now_s();
	struct run_spec s1, s2;
	struct dataset ds;

	rows(&ds, x, NULL, M, D, 77);
	for (size_t i = 0; i < (size_t)M * D; i++)
		x[i] *= 0.1;
	for (size_t i = 0; i < M; i++)
		for (size_t j = 0; j < D; j++)
			zbar[j] += x[i * D + j] / M;
	spec_init(&s1, "zeroth_order.o2nc_tree", "sphere_distance", TASK_UNLABELED, M, D, 0.1);
	spec_init(&s2, "zeroth_order.naive", "sphere_distance", TASK_UNLABELED, M, D, 0.1);
	s1.epsilon = s2.epsilon = 0.3407;
	s1.params[ZO_P_F_STAR] = s2.params[ZO_P_F_STAR] = 1.0;
	s1.params[ZO_P_START] = s2.params[ZO_P_START] = 1.1;
	for (int k = 0; k < SEEDS; k++) {
		c1[k] = certificate("zeroth_order.o2nc_tree", &s1, &ds, zbar, 1000 + k);
		c2[k] = certificate("zeroth_order.naive", &s2, &ds, zbar, 2000 + k);
		m1 += c1[k] / SEEDS;
		m2 += c2[k] / SEEDS;
	}
	for (int k = 0; k < SEEDS; k++) {
		v1 += (c1[k] - m1) * (c1[k] - m1) / (SEEDS - 1);
		v2 += (c2[k] - m2) * (c2[k] - m2) / (SEEDS - 1);
	}
	tstat = (m2 - m1) / sqrt(v1 / SEEDS + v2 / SEEDS);
	A = 1.0 + L * gd;
	rate1 = cbrt(A * D * L * L / (gd * M)) + cbrt(D * L * L * L / M) +
		sqrt(A * D * sqrt(D) * L / (rho * gd * M)) + sqrt(D * sqrt(D) * L * L / (rho * M));
	rate2 = cbrt(A * D * L * L / (gd * M)) + cbrt(A * D * D * D * L * L / (rho * rho * gd * M));
	printf("certificate o2nc_tree %.4f (sd %.4f), naive %.4f (sd %.4f): measured ratio %.3f, "
	       "rates without constants %.3f / %.3f = %.3f; Welch t = %.1f (> 3.579 for p < "
	       "1e-3); %.1f s\n",
	       m1, sqrt(v1), m2, sqrt(v2), m1 / m2, rate1, rate2, rate1 / rate2, tstat,
	       now_s() - t0);
	fflush(stdout);
	ck_assert(m1 < m2);
	ck_assert(tstat > 3.579);
}
END_TEST
#endif

static Suite *
suite(void)
{
	Suite *s = suite_create("zeroth_order");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_tree_nodes);
	tcase_add_test(tc, test_tree_running_noise);
	tcase_add_test(tc, test_sigma_table);
	tcase_add_test(tc, test_worked_examples);
	tcase_add_test(tc, test_small_t);
	tcase_add_test(tc, test_charge_is_rho_eff);
	tcase_add_test(tc, test_never_a_gradient);
	tcase_add_test(tc, test_estimators);
	tcase_add_test(tc, test_goldstein_table);
	tcase_add_test(tc, test_objective_values);
	tcase_add_test(tc, test_relu_net);
	tcase_add_test(tc, test_relu_net_runs);
#ifdef DPOPT_TESTING
	tcase_add_test(tc, test_beats_naive);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
