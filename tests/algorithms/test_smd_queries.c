/*
 * test_smd_queries.c - synthetic.smd_queries (algorithms/synthetic/
 * smd_queries.c, synthetic/kway.c): the balanced schedule against the
 * golden values of the spec's Algorithm 5 table (docs/algorithms/
 * smd-queries.md), the query enumeration counts, Qm x by marginalisation
 * and the x update and data answers against a dense brute force, the event
 * and its calibration (zcdp at the closed form, the cap tight on both
 * ledger modes, a given tau_y above it refused), the refusals, the
 * released histogram (m rows over the universe), and the utility: the
 * max marginal error against the true distribution falls when n grows 16x
 * (one-sided sign test over 20 seeds).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "privacy/accountant.h"
#include "rng.h"
#include "synthetic/kway.h"
#include "synthetic/smd_queries.h"

#define MAXN 16000
#define MAXP 8

static const struct alg_ops *
smdq(void)
{
	const struct alg_ops *a = alg_find("synthetic.smd_queries");

	ck_assert_ptr_nonnull(a);
	return a;
}

static size_t
param_index(const char *name)
{
	const struct alg_param *p = alg_param_find(smdq(), name);

	ck_assert_msg(p != NULL, "no parameter %s", name);
	return (size_t)(p - smdq()->params);
}

static void
schema_of(struct data_schema *s, const size_t *sizes, size_t p)
{
	memset(s, 0, sizeof(*s));
	s->task = TASK_UNLABELED;
	s->n_categorical = p;
	for (size_t l = 0; l < p; l++) {
		snprintf(s->categorical[l].name, sizeof(s->categorical[l].name), "a%zu", l);
		s->categorical[l].size = sizes[l];
	}
	s->bounds = (struct bounds){ NAN, NAN, NAN, NAN, NAN };
}

static void
spec_of(struct run_spec *spec, const size_t *sizes, size_t p, size_t n, double eps)
{
	memset(spec, 0, sizeof(*spec));
	schema_of(&spec->schema, sizes, p);
	spec->epsilon = eps;
	spec->delta = 1e-6;
	spec->n = n;
	spec->dim = kway_universe(&spec->schema);
	spec->mode = ACCOUNTING_RENYI;
	alg_default_params(smdq(), spec->params);
}

/* The spec's Algorithm 5 table (epsilon 1, delta 1e-6): T balanced, tau_x,
 * tau_y = min(sqrt(ln|Q| / (2T)), the paper's cap n eps / (16 T sqrt(2 T
 * ln(1/delta)))).  T within 1 of the table. */
START_TEST(test_golden_balanced)
{
	static const struct {
		double n, z, q;
		double t, tau_x, tau_y;
	} g[] = {
		{ 1e4, 1024, 400, 626, 0.035076, 0.0075914 },
		{ 1e5, 65536, 100, 10317, 0.010929, 0.0011346 },
	};
	double ld = log(1e6);

	for (size_t i = 0; i < 2; i++) {
		double t = floor(smdq_balanced_steps(g[i].n, 1.0, 1e-6, log(g[i].z), log(g[i].q)));
		double tau_x = sqrt(log(g[i].z) / (9.0 * t));
		double paper_cap = g[i].n / (16.0 * t * sqrt(2.0 * t * ld));
		double tau_y = fmin(sqrt(log(g[i].q) / (2.0 * t)), paper_cap);

		ck_assert_msg(fabs(t - g[i].t) <= 1.0, "row %zu: T %.0f", i, t);
		ck_assert_msg(fabs(tau_x / g[i].tau_x - 1.0) < 2e-4, "row %zu: tau_x %.7f", i,
			      tau_x);
		ck_assert_msg(fabs(tau_y / g[i].tau_y - 1.0) < 3e-4, "row %zu: tau_y %.7f", i,
			      tau_y);
	}
}
END_TEST

/* The defaults of a realisable schema go through the same formula, and
 * the calibrated cap (zcdp of the bounded-range draws, sensitivity 1 / n)
 * is above the paper's advanced-composition cap. */
START_TEST(test_setup_defaults)
{
	static const size_t sizes[] = { 4, 4, 4, 4, 4 };
	struct run_spec spec;
	struct smdq_setup s;
	struct accountant_report rep;
	struct err e = { 0 };
	double t, cap, ld = log(1e6);

	spec_of(&spec, sizes, 5, 10000, 1.0);
	ck_assert_int_eq(smdq_setup(&spec, &s, &e), ERR_OK);
	ck_assert_uint_eq(s.universe, 1024);
	ck_assert_uint_eq(s.k, 2);
	ck_assert_uint_eq(s.subsets, 10);
	ck_assert_uint_eq(s.conj, 160);
	ck_assert_uint_eq(s.queries, 320);
	t = floor(3.0 / (4.0 * sqrt(2.0)) * 1e4 * sqrt(log(1024.0)) / (log(320.0) * sqrt(ld)));
	ck_assert_uint_eq(s.steps, (unsigned long)t);
	ck_assert_double_eq_tol(s.tau_x, sqrt(log(1024.0) / (9.0 * t)), 1e-12);
	ck_assert_double_eq_tol(s.tau_y_balanced, sqrt(log(320.0) / (2.0 * t)), 1e-12);
	ck_assert_double_eq_tol(s.rho_unit, (t - 1.0) * t * (2.0 * t - 1.0) / (12.0 * 1e8), 1e-9);
	ck_assert_uint_eq(s.rows, 10000);
	ck_assert_int_eq(smdq_cap(&s, ACCOUNTING_RENYI, 1.0, 1e-6, &cap, &rep, &e), ERR_OK);
	ck_assert_msg(cap > 1e4 / (16.0 * t * sqrt(2.0 * t * ld)), "cap %g", cap);
}
END_TEST

static void
check_tight(struct run_spec *spec, enum accounting_mode mode)
{
	struct run_plan plan;
	struct accountant_report rep;
	struct dp_event_tree ev;
	struct smdq_setup s;
	struct err e = { 0 };
	double cap, tau;
	size_t ky = param_index("step_size_y");

	spec->mode = mode;
	ck_assert_int_eq(smdq_setup(spec, &s, &e), ERR_OK);
	ck_assert_msg(alg_plan(smdq(), spec, &plan, &e) == ERR_OK, "%s", e.msg);
	ck_assert_int_eq(plan.event.n_nodes, 1);
	ck_assert_int_eq(plan.event.node[0].type, DP_EVENT_ZCDP);
	cap = run_plan_value(&plan, "step_size_y_cap");
	tau = run_plan_value(&plan, "step_size_y");
	ck_assert_double_eq(tau, fmin(cap, s.tau_y_balanced));
	ck_assert_double_eq_tol(plan.event.node[0].rho, s.rho_unit * tau * tau, 1e-15);
	/* The cap meets the target; 1 % above it does not. */
	ck_assert_int_eq(smdq_event(s.rho_unit, cap, &ev, &e), ERR_OK);
	ck_assert_int_eq(accountant_epsilon(&ev, mode, spec->delta, NULL, true, &rep, &e), ERR_OK);
	ck_assert_msg(rep.epsilon <= spec->epsilon, "eps %g", rep.epsilon);
	ck_assert_int_eq(smdq_event(s.rho_unit, cap * 1.01, &ev, &e), ERR_OK);
	ck_assert_int_eq(accountant_epsilon(&ev, mode, spec->delta, NULL, true, &rep, &e), ERR_OK);
	ck_assert_msg(rep.epsilon > spec->epsilon, "eps %g", rep.epsilon);
	/* A given tau_y above the cap is refused; below it, charged at it. */
	spec->params[ky] = cap * 1.01;
	ck_assert_int_eq(alg_plan(smdq(), spec, &plan, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.step_size_y");
	spec->params[ky] = cap * 0.5;
	ck_assert_int_eq(alg_plan(smdq(), spec, &plan, &e), ERR_OK);
	ck_assert_double_eq_tol(plan.event.node[0].rho, s.rho_unit * cap * cap * 0.25, 1e-15);
	spec->params[ky] = 0.0;
}

START_TEST(test_event_and_calibration)
{
	static const size_t sizes[] = { 3, 4, 5 };
	struct run_spec spec;

	/* Small n: the cap binds (tau_y < balanced). */
	spec_of(&spec, sizes, 3, 2000, 0.5);
	check_tight(&spec, ACCOUNTING_RENYI);
	check_tight(&spec, ACCOUNTING_BASIC);
	spec.epsilon = 4.0;
	spec.n = 50000;
	check_tight(&spec, ACCOUNTING_RENYI);
	check_tight(&spec, ACCOUNTING_BASIC);
}
END_TEST

START_TEST(test_query_counts)
{
	static const size_t sizes[] = { 2, 3, 4 };
	static const size_t want_s[] = { 3, 3, 1 }, want_m[] = { 9, 26, 24 };
	struct data_schema s;
	struct err e = { 0 };
	size_t ns, m;

	schema_of(&s, sizes, 3);
	ck_assert_uint_eq(kway_universe(&s), 24);
	for (size_t k = 1; k <= 3; k++) {
		ck_assert_int_eq(kway_count(&s, k, &ns, &m, &e), ERR_OK);
		ck_assert_uint_eq(ns, want_s[k - 1]);
		ck_assert_uint_eq(m, want_m[k - 1]);
	}
	ck_assert_int_eq(kway_count(&s, 4, &ns, &m, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.k");
	ck_assert_int_eq(kway_count(&s, 0, &ns, &m, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.k");
	s.n_categorical = 0;
	ck_assert_uint_eq(kway_universe(&s), 0);
	ck_assert_int_eq(kway_count(&s, 1, &ns, &m, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "schema.categorical");
}
END_TEST

/* q_j(u) by definition: the digits of u against the query's cell. */
static double
query_value(const struct kway *q, size_t j, size_t u)
{
	size_t digits[MAXP], sub, v[MAXP];
	double sign;
	bool hit = true;

	for (size_t l = q->p; l-- > 0;) {
		digits[l] = u % q->size[l];
		u /= q->size[l];
	}
	kway_query(q, j, &sub, v, &sign);
	for (size_t i = 0; i < q->k; i++)
		hit = hit && digits[q->attr[sub * q->k + i]] == v[i];
	return hit ? sign : 0.0;
}

START_TEST(test_marginals_match_dense)
{
	static const size_t sizes[] = { 2, 3, 4, 3 };
	struct data_schema s;
	struct kway q;
	struct err e = { 0 };
	struct rng r;
	double x[72], th[72], th2[72], conj[200], counts[200];
	uint32_t cat[50 * 4];
	size_t digits[MAXP];

	schema_of(&s, sizes, 4);
	rng_splitmix_init(&r, 17);
	for (size_t k = 1; k <= 4; k++) {
		ck_assert_int_eq(kway_init(&q, &s, k, &e), ERR_OK);
		ck_assert_uint_eq(q.universe, 72);
		ck_assert_uint_le(q.n_conj, 200);
		for (size_t u = 0; u < 72; u++)
			x[u] = rng_uniform(&r);
		kway_marginals(&q, x, conj, digits);
		for (size_t j = 0; j < 2 * q.n_conj; j++) {
			double dense = 0.0, got = j < q.n_conj ? conj[j] : -conj[j - q.n_conj];

			for (size_t u = 0; u < 72; u++)
				dense += query_value(&q, j, u) * x[u];
			ck_assert_msg(fabs(dense - got) < 1e-12, "k %zu query %zu: %g vs %g", k, j,
				      dense, got);
		}
		/* The x update adds tau q_j over the universe. */
		for (size_t j = 0; j < 2 * q.n_conj; j += 3) {
			memcpy(th, x, sizeof(th));
			kway_add_query(&q, j, 0.25, th, digits);
			for (size_t u = 0; u < 72; u++)
				th2[u] = x[u] + 0.25 * query_value(&q, j, u);
			ck_assert_mem_eq(th, th2, sizeof(th));
		}
		/* The data answers: counts of the rows with q_j = 1. */
		for (size_t i = 0; i < 50; i++)
			for (size_t l = 0; l < 4; l++)
				cat[i * 4 + l] = (uint32_t)rng_below(&r, sizes[l]);
		kway_counts(&q, cat, 50, counts);
		for (size_t j = 0; j < q.n_conj; j++) {
			double dense = 0.0;

			for (size_t i = 0; i < 50; i++)
				dense += query_value(&q, j, kway_index(&q, cat + i * 4));
			ck_assert_double_eq(dense, counts[j]);
		}
		kway_free(&q);
	}
}
END_TEST

START_TEST(test_refusals)
{
	static const size_t sizes[] = { 3, 4, 5 };
	size_t big[25];
	struct run_spec spec;
	struct run_plan plan;
	struct err e = { 0 };

	/* No categorical attribute. */
	spec_of(&spec, sizes, 3, 1000, 1.0);
	spec.schema.n_categorical = 0;
	spec.dim = 0;
	ck_assert_int_eq(alg_plan(smdq(), &spec, &plan, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "schema.categorical");
	/* A universe past the cap (25 binary attributes: 2^25). */
	for (size_t l = 0; l < 25; l++)
		big[l] = 2;
	spec_of(&spec, big, 25, 1000, 1.0);
	ck_assert_uint_eq(spec.dim, SIZE_MAX);
	ck_assert_int_eq(alg_plan(smdq(), &spec, &plan, &e), ERR_NUMERIC);
	ck_assert_str_eq(e.field, "schema.categorical");
	/* k out of range. */
	spec_of(&spec, sizes, 3, 1000, 1.0);
	spec.params[param_index("k")] = 4;
	ck_assert_int_eq(alg_plan(smdq(), &spec, &plan, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.k");
	spec.params[param_index("k")] = 65;
	ck_assert_int_eq(alg_plan(smdq(), &spec, &plan, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.k");
	/* One step sees no data. */
	spec.params[param_index("k")] = 0;
	spec.params[param_index("steps")] = 1;
	ck_assert_int_eq(alg_plan(smdq(), &spec, &plan, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.steps");
	/* A target too small for n: fewer than 2 balanced steps. */
	spec.params[param_index("steps")] = 0;
	spec.n = 20;
	spec.epsilon = 0.05;
	ck_assert_int_eq(alg_plan(smdq(), &spec, &plan, &e), ERR_TOO_SMALL);
	ck_assert_str_eq(e.field, "privacy.epsilon");
	/* An objective is refused. */
	spec_of(&spec, sizes, 3, 1000, 1.0);
	spec.objective.ops = (const struct objective_ops *)&spec; /* any non-NULL */
	ck_assert_int_eq(alg_plan(smdq(), &spec, &plan, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "objective");
}
END_TEST

/* A fixed non-uniform distribution over the universe of sizes, rows drawn
 * from it into cat. */
static void
draw_rows(struct rng *r, const double *cdf, size_t z, const size_t *sizes, size_t p, uint32_t *cat,
	  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double v = rng_uniform(r);
		size_t u = 0;

		while (u + 1 < z && cdf[u] <= v)
			u++;
		for (size_t l = p; l-- > 0;) {
			cat[i * p + l] = (uint32_t)(u % sizes[l]);
			u /= sizes[l];
		}
	}
}

/* max_j |q_j(D) - q_j(hist / m)| over the conjunctions (the negations
 * have the same errors). */
static double
max_error(const struct kway *q, const double *pd, const double *hist, double m)
{
	double a[256], b[256], h[64], err = 0.0;
	size_t digits[MAXP];

	for (size_t u = 0; u < q->universe; u++)
		h[u] = hist[u] / m;
	kway_marginals(q, pd, a, digits);
	kway_marginals(q, h, b, digits);
	for (size_t j = 0; j < q->n_conj; j++)
		err = fmax(err, fabs(a[j] - b[j]));
	return err;
}

static double
run_error(size_t n, uint64_t seed, const double *pd, const double *cdf, uint32_t *cat)
{
	static const size_t sizes[] = { 3, 3, 3 };
	struct run_spec spec;
	struct run_plan plan;
	struct dataset ds = { 0 };
	struct kway q;
	struct rng r;
	struct err e = { 0 };
	double hist[27], m;

	rng_splitmix_init(&r, seed);
	draw_rows(&r, cdf, 27, sizes, 3, cat, n);
	spec_of(&spec, sizes, 3, n, 1.0);
	ck_assert_msg(alg_plan(smdq(), &spec, &plan, &e) == ERR_OK, "%s", e.msg);
	ds.n = n;
	ds.cat = cat;
	ds.n_categorical = 3;
	ck_assert_msg(alg_run(smdq(), &spec, &plan, &ds, &r, NULL, NULL, hist, &e) == ERR_OK, "%s",
		      e.msg);
	m = 0.0;
	for (size_t u = 0; u < 27; u++) {
		ck_assert(hist[u] >= 0.0 && floor(hist[u]) == hist[u]);
		m += hist[u];
	}
	ck_assert_double_eq(m, (double)n);
	ck_assert_int_eq(kway_init(&q, &spec.schema, 2, &e), ERR_OK);
	m = max_error(&q, pd, hist, (double)n);
	kway_free(&q);
	return m;
}

/*
 * The max 2-way marginal error against the true distribution D (27 cells,
 * weights proportional to 1 + (u mod 7)^2) at n = 500 and n = 8000, 20
 * seeds, epsilon 1: the larger n must win in at least 16.  Measured: 20 of
 * 20, mean error 0.1143 at n = 500 (the uniform distribution's error is
 * 0.1142: at T = 32 the run has not left it) and 0.0747 at n = 8000 (T =
 * 518); at epsilon 10 0.091 and 0.022, at 100 0.047 and 0.012.  The x
 * player stepping away from the drawn query instead of towards it (the
 * sign of the x update flipped) gives 0 of 20 (0.120 and 0.156).  Under
 * the null "no better at 8000" (P[win] <= 1/2) a false pass has
 * probability P[Bin(20, 1/2) >= 16] = 0.006.
 */
START_TEST(test_error_falls_with_n)
{
	static uint32_t cat[MAXN * 3];
	double pd[27], cdf[27], total = 0.0, acc = 0.0, small = 0.0, large = 0.0;
	int wins = 0;

	for (size_t u = 0; u < 27; u++)
		total += pd[u] = 1.0 + (double)((u % 7) * (u % 7));
	for (size_t u = 0; u < 27; u++) {
		pd[u] /= total;
		acc += pd[u];
		cdf[u] = acc;
	}
	for (uint64_t seed = 1; seed <= 20; seed++) {
		double a = run_error(500, seed, pd, cdf, cat);
		double b = run_error(8000, 1000 + seed, pd, cdf, cat);

		small += a;
		large += b;
		wins += b < a;
	}
	fprintf(stderr, "smd_queries: error %.4f at n = 500, %.4f at n = 8000, %d of 20\n",
		small / 20.0, large / 20.0, wins);
	ck_assert_int_ge(wins, 16);
}
END_TEST

static Suite *
smdq_suite(void)
{
	Suite *s = suite_create("smd_queries");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_golden_balanced);
	tcase_add_test(tc, test_setup_defaults);
	tcase_add_test(tc, test_event_and_calibration);
	tcase_add_test(tc, test_query_counts);
	tcase_add_test(tc, test_marginals_match_dense);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_error_falls_with_n);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(smdq_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
