/*
 * test_maurey_sco.c - mirror_descent.maurey_sco
 * (algorithms/mirror_descent/maurey_sco.c): the default schedule from the
 * formulas of Theorem 5.1 (first-order smooth), the event (pure DP per
 * draw, K (R + 1) draws) and its calibration, the refusals, the released
 * point (an average of K vertices), and the utility: the population excess
 * loss falls when n grows 8x (sign test over 20 seeds).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "objective.h"
#include "privacy/accountant.h"
#include "sparse_glm.h"

static const struct alg_ops *
msc(void)
{
	const struct alg_ops *a = alg_find("mirror_descent.maurey_sco");

	ck_assert_ptr_nonnull(a);
	return a;
}

static size_t
param_index(const char *name)
{
	const struct alg_param *p = alg_param_find(msc(), name);

	ck_assert_msg(p != NULL, "no parameter %s", name);
	return (size_t)(p - msc()->params);
}

static void
spec_init(struct run_spec *s, size_t n, size_t d)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->schema.d = d;
	s->schema.task = TASK_BINARY;
	s->schema.bounds = (struct bounds){ 1.0, NAN, NAN, NAN, NAN };
	s->x = (struct constraint){ .kind = CONSTRAINT_L1_BALL, .radius = 1.0 };
	s->epsilon = 1.0;
	s->delta = 1e-6;
	s->mode = ACCOUNTING_BASIC;
	alg_default_params(msc(), s->params);
	ck_assert_int_eq(run_spec_set_objective(s, objective_find("logistic"), NULL, NULL), ERR_OK);
}

static double
used(const struct run_plan *p, const char *name)
{
	double v = run_plan_value(p, name);

	ck_assert_msg(!isnan(v), "no used value %s", name);
	return v;
}

static double
eps_at(const struct run_plan *p, double tau_scale)
{
	struct dp_event_tree t = p->event;
	struct accountant_report rep;
	struct err e = { 0 };

	for (unsigned i = 0; i < t.n_nodes; i++)
		if (t.node[i].type == DP_EVENT_PURE)
			t.node[i].epsilon *= tau_scale;
	ck_assert_msg(accountant_epsilon(&t, ACCOUNTING_BASIC, 1e-6, NULL, true, &rep, &e) ==
			      ERR_OK,
		      "%s", e.msg);
	return rep.epsilon;
}

/* n = 1e5, d = 100, the l1 ball (m = 200, l = ln 200), L = 1 (logistic,
 * feature_linf 1), (1, 1e-6): T = floor((n eps)^(4/5) / (l Ld)^(2/5)),
 * K = ceil(T / l), q = floor(sqrt(T) / l), R = min(q, T) + floor(T / q) - 1
 * refreshes, K (R + 1) draws of pure(4 tau L / B). */
START_TEST(test_schedule_and_event)
{
	struct run_spec s;
	struct run_plan p, q2;
	struct err e = { 0 };
	double ell = log(200.0), t, k, q, r, tau;
	const struct dp_event *leaf = NULL, *self = NULL;

	spec_init(&s, 100000, 100);
	ck_assert_msg(alg_plan(msc(), &s, &p, &e) == ERR_OK, "%s", e.msg);
	t = floor(pow(1e5, 0.8) / pow(ell * log(1e6), 0.4));
	k = ceil(t / ell);
	q = floor(sqrt(t) / ell);
	r = fmin(q, t) + floor(t / q) - 1.0;
	printf("maurey_sco: T = %lu (%.0f), K = %.0f (%.0f), q = %.0f (%.0f), R = %.0f, tau = "
	       "%.6g\n",
	       p.steps, t, used(&p, "draws"), k, used(&p, "refresh"), q, used(&p, "refreshes"),
	       used(&p, "step_size"));
	ck_assert_uint_eq(p.steps, (unsigned long)t);
	ck_assert_double_eq(used(&p, "draws"), k);
	ck_assert_double_eq(used(&p, "refresh"), q);
	ck_assert_double_eq(used(&p, "refreshes"), r);
	ck_assert_double_eq(used(&p, "draw_count"), k * (r + 1.0));
	ck_assert_double_eq(used(&p, "batch_size"), floor(1e5 / t));
	for (unsigned i = 0; i < p.event.n_nodes; i++) {
		if (p.event.node[i].type == DP_EVENT_PURE)
			leaf = &p.event.node[i];
		if (p.event.node[i].type == DP_EVENT_SELF_COMPOSED)
			self = &p.event.node[i];
	}
	ck_assert_ptr_nonnull(leaf);
	ck_assert_ptr_nonnull(self);
	ck_assert_uint_eq(self->count, (uint64_t)(k * (r + 1.0)));
	tau = used(&p, "step_size");
	ck_assert_double_eq_tol(leaf->epsilon, 4.0 * tau / used(&p, "batch_size"), 1e-15);
	ck_assert(eps_at(&p, 1.0) <= 1.0);
	/* A given step above the cap is refused, naming it; below, charged
	 * at its own cost. */
	s.params[param_index("step_size")] = 1e3 * tau;
	ck_assert_int_eq(alg_plan(msc(), &s, &q2, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.step_size");
	s.params[param_index("step_size")] = 0.25 * tau;
	ck_assert(alg_plan(msc(), &s, &q2, &e) == ERR_OK);
	ck_assert(eps_at(&q2, 1.0) < eps_at(&p, 1.0));
	s.params[param_index("step_size")] = 0.0;
	s.params[param_index("steps")] = 100001;
	ck_assert_int_eq(alg_plan(msc(), &s, &q2, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.steps");
}
END_TEST

/* The cap binds at a small epsilon, and is tight there. */
START_TEST(test_cap_tight)
{
	struct run_spec s;
	struct run_plan p;
	struct err e = { 0 };

	spec_init(&s, 20000, 50);
	s.epsilon = 0.2;
	ck_assert_msg(alg_plan(msc(), &s, &p, &e) == ERR_OK, "%s", e.msg);
	ck_assert(eps_at(&p, 1.0) <= 0.2);
	ck_assert_msg(eps_at(&p, 1.01) > 0.2, "the cap does not bind: tau %.6g",
		      used(&p, "step_size"));
}
END_TEST

/* The result is an average of K vertices of the l1 ball: every entry a
 * multiple of 1/K, at most K non-zeros, ||x||_1 <= 1. */
START_TEST(test_result_is_sparse_average)
{
	struct sparse_glm m;
	double w[50], l1 = 0.0, k;
	size_t nnz = 0;
	char msg[256];
	static const struct sparse_glm_param par[1] = { { "draws", 12 } };

	sparse_glm_init(&m, 50, 5, 3);
	sparse_glm_rows(&m, 2000, 4);
	ck_assert_msg(sparse_glm_run(&m, "mirror_descent.maurey_sco", 1.0, 1e-6, par, 1, 5, w, msg,
				     sizeof(msg)),
		      "%s", msg);
	k = 12.0;
	for (size_t j = 0; j < 50; j++) {
		ck_assert_double_eq_tol(w[j] * k, round(w[j] * k), 1e-9);
		nnz += w[j] != 0.0;
		l1 += fabs(w[j]);
	}
	ck_assert(nnz <= 12);
	ck_assert(l1 <= 1.0 + 1e-12);
	sparse_glm_free(&m);
}
END_TEST

/*
 * The l1 ball's vertex list {+-e_j} (frank_wolfe/lmo.h's order) as a
 * "polytope" runs as the l1 ball itself, in mirror_descent.maurey_sco and
 * in frank_wolfe.private (the other user of the vertex helpers: fw_start,
 * fw_move): the same plan and the same result bits for the same seed.
 */
START_TEST(test_vertex_list_is_the_l1_ball)
{
	static const char *const algs[] = { "mirror_descent.maurey_sco", "frank_wolfe.private" };
	enum { D = 20, N = 1500 };
	struct sparse_glm m;
	double st[2 * D * D + 4 * D];

	sparse_glm_init(&m, D, 4, 8);
	sparse_glm_rows(&m, N, 9);
	memset(st, 0, sizeof(st));
	for (size_t i = 0; i < 2 * D; i++)
		st[i * D + i % D] = i < D ? 1.0 : -1.0;
	for (size_t k = 0; k < 2; k++) {
		const struct alg_ops *a = alg_find(algs[k]);
		struct run_spec sa, sb;
		struct run_plan pa, pb;
		struct err e = { 0 };
		struct rng r;
		double wa[D], wb[D];

		ck_assert_ptr_nonnull(a);
		spec_init(&sa, N, D);
		alg_default_params(a, sa.params);
		sb = sa;
		ck_assert_int_eq(constraint_polytope(&sb.x, 2 * D, D, st, "constraints.x", &e),
				 ERR_OK);
		ck_assert_msg(alg_plan(a, &sa, &pa, &e) == ERR_OK, "%s", e.msg);
		ck_assert_msg(alg_plan(a, &sb, &pb, &e) == ERR_OK, "%s", e.msg);
		ck_assert_uint_eq(pa.steps, pb.steps);
		ck_assert_uint_eq(pa.n_used, pb.n_used);
		for (size_t i = 0; i < pa.n_used; i++)
			ck_assert_msg(
				memcmp(&pa.used[i].value, &pb.used[i].value, sizeof(double)) == 0,
				"%s: %s differs", algs[k], pa.used[i].name);
		/* the list's work adds m d per score evaluation */
		ck_assert(a->work(&sb, &pb) > a->work(&sa, &pa));
		rng_splitmix_init(&r, 77);
		ck_assert(alg_run(a, &sa, &pa, &m.ds, &r, NULL, NULL, wa, &e) == ERR_OK);
		rng_splitmix_init(&r, 77);
		ck_assert(alg_run(a, &sb, &pb, &m.ds, &r, NULL, NULL, wb, &e) == ERR_OK);
		ck_assert_msg(memcmp(wa, wb, sizeof(wa)) == 0, "%s: results differ", algs[k]);
	}
	sparse_glm_free(&m);
}
END_TEST

#define U_SEEDS 20
#define U_N     4000
#define U_D     50
#define U_EPS   4.0

static double
run_excess(size_t n, uint64_t seed)
{
	struct sparse_glm m;
	double w[U_D], ex;
	char msg[256];

	sparse_glm_init(&m, U_D, 5, seed);
	sparse_glm_rows(&m, n, seed + 100);
	ck_assert_msg(sparse_glm_run(&m, "mirror_descent.maurey_sco", U_EPS, 1e-6, NULL, 0,
				     seed + 200, w, msg, sizeof(msg)),
		      "%s", msg);
	ex = sparse_glm_excess(&m, w, 20000, seed + 300);
	sparse_glm_free(&m);
	return ex;
}

/*
 * At epsilon = 4 (d = 50, a 5-sparse w*): the method is slow -- its
 * K (R + 1) draws (about 1e5 at n = 3.2e4) leave each a tiny epsilon, so
 * tau is small -- and at n = 4000 its mean excess is about the zero
 * model's (0.033 against 0.031; frank_wolfe.private reaches 0.007), at
 * 8n below it (0.030).  Measured 18 of 20 seeds falling.
 */
START_TEST(test_excess_falls_with_n)
{
	int wins = 0;
	double s1 = 0.0, s8 = 0.0;

	for (uint64_t seed = 1; seed <= U_SEEDS; seed++) {
		double e1 = run_excess(U_N, seed), e8 = run_excess(8 * U_N, seed);

		wins += e8 < e1;
		s1 += e1;
		s8 += e8;
	}
	/* One-sided sign test: P(wins >= 16 of 20 | p = 1/2) = 0.0059. */
	printf("maurey_sco utility: mean population excess %.5f at n = %d, %.5f at 8n; %d of %d "
	       "seeds fell\n",
	       s1 / U_SEEDS, U_N, s8 / U_SEEDS, wins, U_SEEDS);
	ck_assert_msg(wins >= 16, "the excess fell on %d of %d seeds only", wins, U_SEEDS);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("maurey_sco");
	TCase *c = tcase_create("schedule");
	TCase *u = tcase_create("runs");
	SRunner *sr;
	int failed;

	tcase_add_test(c, test_schedule_and_event);
	tcase_add_test(c, test_cap_tight);
	suite_add_tcase(s, c);
	tcase_set_timeout(u, 300);
	tcase_add_test(u, test_result_is_sparse_average);
	tcase_add_test(u, test_vertex_list_is_the_l1_ball);
	tcase_add_test(u, test_excess_falls_with_n);
	suite_add_tcase(s, u);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
