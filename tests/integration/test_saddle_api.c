/*
 * test_saddle_api.c - saddle-point runs through the API (issue 9):
 * saddle.sgda_one_pass with constraints.x and constraints.y on an
 * unlabeled dataset of two schema blocks (bilinear) and on a binary
 * dataset with a group column (worst_group_logistic, y on a simplex); the
 * result's x and y blocks; the strong and weak gap on a public evaluation
 * dataset, checked against the closed form recomputed here; refusals
 * naming constraints.y; the catalogue's kinds, saddle flag and
 * constraints.y.  VI mode: bilinear_vi (an operator objective on one set)
 * through saddle.sgda_one_pass with constraints.x only, the result x, the
 * VI gaps recomputed here, and its refusals.  fair_logistic_lagrangian,
 * auc_minimax and affine_vi through saddle.sgda_one_pass (their results,
 * gaps and refusals naming the field).  saddle.nseg (both variants,
 * VI mode, its refusals): test_nseg; saddle.nispp likewise: test_nispp.
 * saddle.recursive_regularization (both variants, its refusals):
 * test_recursive_regularization.
 * Polytopes (issue 13): x over a vertex list in saddle.smd_maurey, the
 * result in conv(V) by its barycentric coordinates, the stored list, the
 * gap evaluator over it; bad lists refused naming the field (400), a list
 * above DPOPT_MAX_VERTICES (8 here) refused with 422, neither charged.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static struct h_server srv;
static char db[512];
static char owner[128];

static const char *const env[] = { "DPOPT_MAX_VERTICES=8", NULL };

static void
setup(void)
{
	struct h_opts o = { .env = env };

	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, &o);
}

static void
teardown(void)
{
	h_server_stop_fixture(&srv, 30.0);
}

#define BUDGET " \"budget\": {\"epsilon\": 20, \"delta\": 1e-5}"

/* Two blocks a = columns 1..2 and b = columns 3..4, each in the unit l2
 * ball. */
#define BLOCKS_SCHEMA(name, extra)                                                                 \
	"{\"name\": \"" name "\", \"schema\": {\"features\": 4, \"task\": \"unlabeled\","          \
	" \"blocks\": [{\"name\": \"a\", \"size\": 2, \"bounds\": {\"l2\": 1}},"                   \
	" {\"name\": \"b\", \"size\": 2, \"bounds\": {\"l2\": 1}}]},"                              \
	" \"bounds\": {\"feature_l2\": 1.5}," extra "}"

static unsigned long long
next(unsigned long long *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

/* n unlabeled rows (a, b): every entry +-0.7 (||a|| = ||b|| = 0.99, no
 * clipping), a_1 mostly +, b_2 mostly -; the column means into mean[4].
 * Owned. */
static char *
bilinear_rows(size_t n, unsigned seed, double mean[4])
{
	static const unsigned bias[4] = { 80, 50, 50, 25 }; /* P(+) in percent */
	size_t cap = n * 64 + 1, len = 0;
	char *t = malloc(cap);
	unsigned long long st = 0x9e3779b97f4a7c15ULL * (seed + 1);

	ck_assert_ptr_nonnull(t);
	memset(mean, 0, 4 * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < 4; j++) {
			double v = next(&st) % 100 < bias[j] ? 0.7 : -0.7;

			mean[j] += v / (double)n;
			len += (size_t)snprintf(t + len, cap - len, "%.1f%s", v,
						j < 3 ? "," : "\n");
		}
	}
	return t;
}

/* n binary rows of 3 features with a group column (G = 2) before the
 * label; group 1's labels are noisier.  Owned. */
static char *
group_rows(size_t n, unsigned seed)
{
	size_t cap = n * 64 + 1, len = 0;
	char *t = malloc(cap);
	unsigned long long st = 0x9e3779b97f4a7c15ULL * (seed + 1);

	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < n; i++) {
		double x[3], z = 0.0;
		unsigned g = (unsigned)(next(&st) % 2);
		int y;

		for (size_t j = 0; j < 3; j++) {
			x[j] = ((double)(next(&st) >> 11) * 0x1p-53 - 0.5);
			z += x[j] * (j == 0 ? 2.0 : 1.0);
		}
		y = z > 0 ? 1 : -1;
		if (next(&st) % 100 < (g == 1 ? 30u : 5u))
			y = -y;
		len += (size_t)snprintf(t + len, cap - len, "%.6f,%.6f,%.6f,%u,%d\n", x[0], x[1],
					x[2], g, y);
	}
	return t;
}

static double
norm2(double a, double b)
{
	return sqrt(a * a + b * b);
}

/* The array at path (of n numbers), into v. */
static void
numbers(json_t *j, const char *path, size_t n, double *v)
{
	json_t *a = h_get(j, path), *x;
	size_t i;

	ck_assert_msg(json_is_array(a) && json_array_size(a) == n, "%s: want %zu numbers", path, n);
	json_array_foreach (a, i, x) {
		ck_assert(json_is_number(x));
		v[i] = json_number_value(x);
	}
}

static void
bracket(json_t *j, const char *path, double *lo, double *hi)
{
	char p[96];

	snprintf(p, sizeof(p), "%s.lower", path);
	ck_assert_msg(json_is_number(h_get(j, p)), "%s", p);
	*lo = json_number_value(h_get(j, p));
	snprintf(p, sizeof(p), "%s.upper", path);
	ck_assert_msg(json_is_number(h_get(j, p)), "%s", p);
	*hi = json_number_value(h_get(j, p));
	ck_assert_msg(*lo <= *hi, "%s: lower %.17g > upper %.17g", path, *lo, *hi);
}

#define BILINEAR_RUN(extra)                                                                        \
	"{\"algorithm\": \"saddle.sgda_one_pass\","                                                \
	" \"objective\": {\"name\": \"bilinear\", \"coupling\": 0.5},"                             \
	" \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 1},"                        \
	" \"y\": {\"kind\": \"l2_ball\", \"radius\": 1}},"                                         \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}" extra "}"

/*
 * bilinear: x and y of two entries each inside their balls, and on the
 * public evaluation dataset the gap of (x, y) in closed form over l2 balls
 * (docs/algorithms/saddle.md §3), recomputed here from the evaluation rows:
 *	gap = <mu_a, x> + R_y ||g x - mu_b|| + <mu_b, y> + R_x ||g y + mu_a||.
 */
START_TEST(test_bilinear)
{
	char a[40], p[40], run[40], body[1024], path[128];
	double mtrain[4], meval[4], x[2], y[2], slo, shi, wlo, whi, want;
	char *train = bilinear_rows(4000, 1, mtrain), *test = bilinear_rows(1000, 2, meval);
	const double g = 0.5;
	json_t *j;

	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("pairs", BUDGET), a);
	h_upload(&srv, owner, a, train);
	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("pairs-public", "\"public\": true"), p);
	h_upload(&srv, owner, p, test);

	/* The estimate takes the same request. */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	j = h_json(&srv, "POST", path, owner, BILINEAR_RUN(""), 200);
	ck_assert_int_ge(json_integer_value(h_get(j, "plan.steps")), 1);
	json_decref(j);

	snprintf(body, sizeof(body), BILINEAR_RUN(", \"eval_dataset_id\": \"%s\""), p);
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 2, x);
	numbers(j, "result.y", 2, y);
	ck_assert(norm2(x[0], x[1]) <= 1.0 + 1e-9);
	ck_assert(norm2(y[0], y[1]) <= 1.0 + 1e-9);
	/* The stored request keeps both sets and the coupling. */
	ck_assert_str_eq(json_string_value(h_get(j, "request.constraints.y.kind")), "l2_ball");
	ck_assert(json_number_value(h_get(j, "request.objective.coupling")) == 0.5);

	ck_assert_str_eq(json_string_value(h_get(j, "result.evaluation.dataset_id")), p);
	ck_assert_int_eq(json_integer_value(h_get(j, "result.evaluation.n_rows")), 1000);
	ck_assert_ptr_null(h_get(j, "result.evaluation.loss"));
	bracket(j, "result.evaluation.strong_gap", &slo, &shi);
	bracket(j, "result.evaluation.weak_gap", &wlo, &whi);
	ck_assert(wlo <= shi && whi <= shi + 1e-12); /* weak <= strong */
	want = meval[0] * x[0] + meval[1] * x[1] + norm2(g * x[0] - meval[2], g * x[1] - meval[3]) +
	       meval[2] * y[0] + meval[3] * y[1] + norm2(g * y[0] + meval[0], g * y[1] + meval[1]);
	ck_assert_msg(want >= 0.0, "gap %.17g", want);
	ck_assert_msg(slo - 1e-9 <= want && want <= shi + 1e-9,
		      "closed-form gap %.17g outside [%.17g, %.17g]", want, slo, shi);
	ck_assert_msg(shi - slo <= 1e-9, "linear inner problems close: [%.17g, %.17g]", slo, shi);
	json_decref(j);
	free(train);
	free(test);
}
END_TEST

#define VI_RUN(sets, extra)                                                                        \
	"{\"algorithm\": \"saddle.sgda_one_pass\","                                                \
	" \"objective\": {\"name\": \"bilinear_vi\", \"coupling\": 0.5},"                          \
	" \"constraints\": {" sets "},"                                                            \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}" extra "}"
#define VI_X "\"x\": {\"kind\": \"l2_ball\", \"radius\": 1.5}"

/*
 * bilinear_vi (VI mode, one set U = the l2 ball of radius 1.5 in R^4, u =
 * (x, y) stacked): the result x holds all of u, no y; on the public
 * evaluation dataset the VI gaps in closed form (vi.h), recomputed here
 * with F_bar(u) = (g y + mu_a, mu_b - g x), c_bar = mu:
 *	strong = <F_bar(u), u> + R ||F_bar(u)||,  weak = <c_bar, u> + R ||F_bar(u)||.
 */
START_TEST(test_vi)
{
	char a[40], p[40], run[40], body[1024], path[128];
	double mtrain[4], meval[4], u[4], f[4], slo, shi, wlo, whi, fu = 0.0, cu = 0.0, fn = 0.0;
	char *train = bilinear_rows(4000, 7, mtrain), *test = bilinear_rows(1000, 8, meval);
	const double g = 0.5, R = 1.5;
	json_t *j;

	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("vi-pairs", BUDGET), a);
	h_upload(&srv, owner, a, train);
	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("vi-public", "\"public\": true"), p);
	h_upload(&srv, owner, p, test);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	j = h_json(&srv, "POST", path, owner, VI_RUN(VI_X, ""), 200);
	ck_assert_int_ge(json_integer_value(h_get(j, "plan.steps")), 1);
	json_decref(j);

	snprintf(body, sizeof(body), VI_RUN(VI_X, ", \"eval_dataset_id\": \"%s\""), p);
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 4, u);
	ck_assert_ptr_null(h_get(j, "result.y"));
	ck_assert(sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) <= R + 1e-9);
	ck_assert_ptr_null(h_get(j, "request.constraints.y"));
	ck_assert_str_eq(json_string_value(h_get(j, "request.objective.name")), "bilinear_vi");
	ck_assert_int_eq(json_integer_value(h_get(j, "result.evaluation.n_rows")), 1000);
	ck_assert_ptr_null(h_get(j, "result.evaluation.loss"));
	bracket(j, "result.evaluation.strong_gap", &slo, &shi);
	bracket(j, "result.evaluation.weak_gap", &wlo, &whi);
	f[0] = g * u[2] + meval[0];
	f[1] = g * u[3] + meval[1];
	f[2] = meval[2] - g * u[0];
	f[3] = meval[3] - g * u[1];
	for (size_t k = 0; k < 4; k++) {
		fu += f[k] * u[k];
		cu += meval[k] * u[k];
		fn += f[k] * f[k];
	}
	ck_assert_msg(fabs(slo - (fu + R * sqrt(fn))) <= 1e-9 && shi - slo <= 1e-12,
		      "strong gap [%.17g, %.17g], want %.17g", slo, shi, fu + R * sqrt(fn));
	ck_assert_msg(fabs(wlo - (cu + R * sqrt(fn))) <= 1e-9 && whi - wlo <= 1e-12,
		      "weak gap [%.17g, %.17g], want %.17g", wlo, whi, cu + R * sqrt(fn));
	ck_assert(wlo >= -1e-12);
	json_decref(j);

	/* Refusals, nothing charged: constraints.y with an operator objective
	 * (on runs and the estimate), bilinear_vi on a minimisation method. */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	snprintf(body, sizeof(body), "%s",
		 VI_RUN(VI_X ", \"y\": {\"kind\": \"l2_ball\", \"radius\": 1}", ""));
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "constraints.y", "operator");
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "constraints.y", "operator");
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	snprintf(body, sizeof(body),
		 "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": "
		 "\"bilinear_vi\"}, \"constraints\": {" VI_X "},"
		 " \"privacy\": {\"epsilon\": 0.5, \"delta\": 1e-7}}");
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "objective.name", NULL);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM runs WHERE dataset_id = '%s'", a), 1);
	free(train);
	free(test);
}
END_TEST

/* worst_group_logistic: x over an l2 ball, y over the simplex of the 2
 * groups; the gap on a public dataset with the same groups. */
START_TEST(test_worst_group)
{
	char a[40], p[40], q[40], run[40], body[1024], path[128];
	char *train = group_rows(3000, 3), *test = group_rows(600, 4);
	double x[3], y[2], slo, shi, wlo, whi;
	json_t *j;

#define GROUP_SCHEMA(name, groups, extra)                                                          \
	"{\"name\": \"" name "\", \"schema\": {\"features\": 3, \"task\": \"binary\","             \
	" \"group\": {\"groups\": " groups "}}, \"bounds\": {\"feature_l2\": 1}," extra "}"
#define WG_RUN                                                                                     \
	"{\"algorithm\": \"saddle.sgda_one_pass\","                                                \
	" \"objective\": {\"name\": \"worst_group_logistic\", \"group_proportions\": [0.5, 0.5]}," \
	" \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 2},"                        \
	" \"y\": {\"kind\": \"simplex\", \"scale\": 1}},"                                          \
	" \"privacy\": {\"epsilon\": 2, \"delta\": 1e-6}, \"eval_dataset_id\": \"%s\"}"
#define WG_SMD                                                                                     \
	"{\"algorithm\": \"saddle.smd_maurey\","                                                   \
	" \"objective\": {\"name\": \"worst_group_logistic\", \"group_proportions\": [0.5, 0.5]}," \
	" \"constraints\": {\"x\": {\"kind\": \"simplex\", \"scale\": 1},"                         \
	" \"y\": {\"kind\": \"simplex\", \"scale\": 1}},"                                          \
	" \"privacy\": {\"epsilon\": 2, \"delta\": 1e-6}}"

	h_dataset_create(&srv, owner, GROUP_SCHEMA("groups", "2", BUDGET), a);
	h_upload(&srv, owner, a, train);
	h_dataset_create(&srv, owner, GROUP_SCHEMA("groups-public", "2", "\"public\": true"), p);
	h_upload(&srv, owner, p, test);
	/* A public dataset without the run's groups is refused, nothing charged. */
	h_dataset_create(&srv, owner,
			 "{\"name\": \"nogroups\", \"schema\": {\"features\": 3, \"task\": "
			 "\"binary\"}, \"bounds\": {\"feature_l2\": 1}, \"public\": true}",
			 q);
	h_upload(&srv, owner, q, "0.1,0.2,0.3,1\n-0.1,0.2,0.3,-1\n");
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	snprintf(body, sizeof(body), WG_RUN, q);
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "eval_dataset_id", NULL);

	snprintf(body, sizeof(body), WG_RUN, p);
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 3, x);
	numbers(j, "result.y", 2, y);
	ck_assert(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) <= 2.0 + 1e-9);
	ck_assert(y[0] >= 0.0 && y[1] >= 0.0 && fabs(y[0] + y[1] - 1.0) <= 1e-9);
	ck_assert_str_eq(json_string_value(h_get(j, "result.evaluation.dataset_id")), p);
	ck_assert_int_eq(json_integer_value(h_get(j, "result.evaluation.n_rows")), 600);
	bracket(j, "result.evaluation.strong_gap", &slo, &shi);
	bracket(j, "result.evaluation.weak_gap", &wlo, &whi);
	ck_assert(wlo <= shi && whi <= shi + 1e-12);
	ck_assert_msg(shi >= 0.0 && isfinite(slo), "gap [%.17g, %.17g]", slo, shi);
	json_decref(j);
	/* runs:estimate warns when a method's theoretical gap bound says
	 * nothing (saddle.smd_maurey here: its bound is far above the
	 * population F's range at n = 3000); sgda reports no bound, so no
	 * warnings member. */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	snprintf(body, sizeof(body), WG_SMD);
	j = h_json(&srv, "POST", path, owner, body, 200);
	ck_assert(json_number_value(h_get(j, "plan.params_used.gap_bound")) >
		  json_number_value(h_get(j, "plan.params_used.trivial_gap_bound")));
	ck_assert_uint_eq(json_array_size(json_object_get(j, "warnings")), 1);
	ck_assert(strstr(json_string_value(json_array_get(json_object_get(j, "warnings"), 0)),
			 "trivial bound") != NULL);
	json_decref(j);
	snprintf(body, sizeof(body), WG_RUN, p);
	j = h_json(&srv, "POST", path, owner, body, 200);
	ck_assert_ptr_null(json_object_get(j, "warnings"));
	json_decref(j);
	free(train);
	free(test);
#undef WG_SMD
#undef WG_RUN
}
END_TEST

/* Refusals name constraints.y (or the member at fault); none charges. */
START_TEST(test_refusals)
{
	char a[40], b[40], p[40], path[128], pathb[128], body[1024], spent[64], spent2[64];
	double m[4];
	char *rows = bilinear_rows(500, 5, m), *other = bilinear_rows(50, 6, m);
	struct {
		const char *body, *field, *msg;
	} const cases[] = {
		/* a saddle method without y */
		{ "{\"algorithm\": \"saddle.sgda_one_pass\", \"objective\": {\"name\": "
		  "\"bilinear\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": "
		  "1}}, \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}}",
		  "constraints.y", "required" },
		/* coupling is bilinear's */
		{ "{\"algorithm\": \"saddle.sgda_one_pass\", \"objective\": {\"name\": "
		  "\"bilinear\", \"coupling\": -1}, \"constraints\": {\"x\": {\"kind\": "
		  "\"l2_ball\", \"radius\": 1}, \"y\": {\"kind\": \"l2_ball\", \"radius\": 1}}, "
		  "\"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}}",
		  "objective.coupling", NULL },
		/* y of an unknown kind */
		{ "{\"algorithm\": \"saddle.sgda_one_pass\", \"objective\": {\"name\": "
		  "\"bilinear\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": "
		  "1}, \"y\": {\"kind\": \"nope\"}}, \"privacy\": {\"epsilon\": 1, \"delta\": "
		  "1e-6}}",
		  "constraints.y.kind", NULL },
		/* y's radius */
		{ "{\"algorithm\": \"saddle.sgda_one_pass\", \"objective\": {\"name\": "
		  "\"bilinear\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": "
		  "1}, \"y\": {\"kind\": \"l2_ball\", \"radius\": -1}}, \"privacy\": {\"epsilon\": "
		  "1, \"delta\": 1e-6}}",
		  "constraints.y.radius", NULL },
	};

	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("pairs", BUDGET), a);
	h_upload(&srv, owner, a, rows);
	h_dataset_sealed(&srv, owner, "1", b);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	snprintf(pathb, sizeof(pathb), "/v1/datasets/%s/runs", b);
	h_ledger_check(db, a, spent, sizeof(spent));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		h_expect_error(&srv, "POST", path, owner, "application/json", cases[i].body,
			       strlen(cases[i].body), NULL, 400, "invalid_request", cases[i].field,
			       cases[i].msg);
	}
	/* The estimate refuses the same, naming the same field. */
	snprintf(body, sizeof(body), "/v1/datasets/%s/runs:estimate", a);
	h_expect_error(&srv, "POST", body, owner, "application/json", cases[0].body,
		       strlen(cases[0].body), NULL, 400, "invalid_request", "constraints.y", NULL);

	/* constraints.y on a minimisation method. */
	snprintf(body, sizeof(body),
		 "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": \"logistic\"},"
		 " \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 1},"
		 " \"y\": {\"kind\": \"l2_ball\", \"radius\": 1}},"
		 " \"privacy\": {\"epsilon\": 0.5, \"delta\": 1e-7}}");
	h_expect_error(&srv, "POST", pathb, owner, "application/json", body, strlen(body), NULL,
		       400, "invalid_request", "constraints.y", "not a saddle-point method");
	/* A saddle objective on a minimisation method, a minimisation one on
	 * the saddle method. */
	snprintf(body, sizeof(body),
		 "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": \"bilinear\"},"
		 " \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 1}},"
		 " \"privacy\": {\"epsilon\": 0.5, \"delta\": 1e-7}}");
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "objective.name", NULL);
	snprintf(body, sizeof(body),
		 "{\"algorithm\": \"saddle.sgda_one_pass\", \"objective\": {\"name\": "
		 "\"logistic\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 1},"
		 " \"y\": {\"kind\": \"l2_ball\", \"radius\": 1}},"
		 " \"privacy\": {\"epsilon\": 0.5, \"delta\": 1e-7}}");
	h_expect_error(&srv, "POST", pathb, owner, "application/json", body, strlen(body), NULL,
		       400, "invalid_request", "objective.name", NULL);

	/* An evaluation dataset with other blocks. */
	h_dataset_create(&srv, owner,
			 "{\"name\": \"other-blocks\", \"schema\": {\"features\": 4, \"task\":"
			 " \"unlabeled\", \"blocks\": [{\"name\": \"a\", \"size\": 1, \"bounds\":"
			 " {\"l2\": 1}}, {\"name\": \"b\", \"size\": 3, \"bounds\": {\"l2\": 1}}]},"
			 " \"bounds\": {\"feature_l2\": 1.5}, \"public\": true}",
			 p);
	h_upload(&srv, owner, p, other);
	snprintf(body, sizeof(body), BILINEAR_RUN(", \"eval_dataset_id\": \"%s\""), p);
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "eval_dataset_id", "blocks");

	ck_assert_int_eq(
		h_sql_ll(db, "SELECT count(*) FROM runs WHERE dataset_id IN ('%s', '%s')", a, b),
		0);
	h_ledger_check(db, a, spent2, sizeof(spent2));
	ck_assert_str_eq(spent, spent2);
	free(rows);
	free(other);
}
END_TEST

#define NSEG_RUN(obj, sets, params, extra)                                                         \
	"{\"algorithm\": \"saddle.nseg\", \"objective\": " obj ","                                 \
	" \"constraints\": {" sets "}, \"params\": {" params "},"                                  \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}" extra "}"
#define NSEG_BILINEAR "{\"name\": \"bilinear\", \"coupling\": 0.5}"
#define NSEG_BALLS                                                                                 \
	"\"x\": {\"kind\": \"l2_ball\", \"radius\": 1}, \"y\": {\"kind\": \"l2_ball\", "           \
	"\"radius\": 1}"

/*
 * saddle.nseg (docs/algorithms/nseg.md) through the API.  single_pass on
 * bilinear: the estimate's schedule (B = round(sqrt(4 ln 1e6)) = 7, T =
 * floor(n / 14), one parallel Gaussian event of 2T parts), the result in
 * the balls and its gap on public data against the closed form (as
 * test_bilinear).  multi_pass on 120 rows: T = n^2 = 14400, the event
 * self_composed(sampled_without_replacement(120, 1, gaussian), 28800),
 * the run succeeds.  VI mode: bilinear_vi over one ball.  Refusals before
 * any charge: the vacuous regime (422 privacy_too_small_for_n naming
 * privacy.epsilon), a single-pass batch that does not fit twice
 * (params.batch_size), a multi-pass run over the work limit (422 naming
 * params, DPOPT_MAX_RUN_WORK).
 */
START_TEST(test_nseg)
{
	char a[40], p[40], s[40], run[40], body[2048], path[128], before[4096], after[4096];
	double mtrain[4], meval[4], msmall[4], x[2], y[2], u[4], slo, shi, want;
	char *train = bilinear_rows(4000, 11, mtrain), *test = bilinear_rows(1000, 12, meval);
	char *small = bilinear_rows(120, 13, msmall);
	const double g = 0.5;
	json_t *j;

	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("nseg-pairs", BUDGET), a);
	h_upload(&srv, owner, a, train);
	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("nseg-public", "\"public\": true"), p);
	h_upload(&srv, owner, p, test);
	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("nseg-small", BUDGET), s);
	h_upload(&srv, owner, s, small);

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	j = h_json(&srv, "POST", path, owner, NSEG_RUN(NSEG_BILINEAR, NSEG_BALLS, "", ""), 200);
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.steps")), 4000 / 14);
	ck_assert(json_number_value(h_get(j, "plan.params_used.batch_size")) == 7.0);
	ck_assert(json_number_value(h_get(j, "plan.params_used.evaluations")) == 2.0 * (4000 / 14));
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), "parallel");
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.event.parts")), 2 * (4000 / 14));
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_array_get(h_get(j, "plan.event.events"), 0), "type")),
			 "gaussian");
	ck_assert(json_number_value(h_get(j, "plan.params_used.noise_sigma")) <
		  json_number_value(h_get(j, "plan.params_used.paper_noise_sigma")));
	json_decref(j);

	snprintf(body, sizeof(body),
		 NSEG_RUN(NSEG_BILINEAR, NSEG_BALLS, "\"variant\": \"single_pass\"",
			  ", \"eval_dataset_id\": \"%s\""),
		 p);
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 2, x);
	numbers(j, "result.y", 2, y);
	ck_assert(norm2(x[0], x[1]) <= 1.0 + 1e-9);
	ck_assert(norm2(y[0], y[1]) <= 1.0 + 1e-9);
	ck_assert_str_eq(json_string_value(h_get(j, "request.params.variant")), "single_pass");
	bracket(j, "result.evaluation.strong_gap", &slo, &shi);
	want = meval[0] * x[0] + meval[1] * x[1] + norm2(g * x[0] - meval[2], g * x[1] - meval[3]) +
	       meval[2] * y[0] + meval[3] * y[1] + norm2(g * y[0] + meval[0], g * y[1] + meval[1]);
	ck_assert_msg(slo - 1e-9 <= want && want <= shi + 1e-9,
		      "closed-form gap %.17g outside [%.17g, %.17g]", want, slo, shi);
	json_decref(j);

	/* multi_pass on 120 rows */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", s);
	j = h_json(&srv, "POST", path, owner,
		   NSEG_RUN(NSEG_BILINEAR, NSEG_BALLS, "\"variant\": \"multi_pass\"", ""), 200);
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.steps")), 14400);
	ck_assert(json_number_value(h_get(j, "plan.params_used.batch_size")) == 1.0);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), "self_composed");
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.event.count")), 28800);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.event.type")),
			 "sampled_without_replacement");
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.event.event.n")), 120);
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.event.event.batch")), 1);
	json_decref(j);
	snprintf(body, sizeof(body), "%s",
		 NSEG_RUN(NSEG_BILINEAR, NSEG_BALLS, "\"variant\": \"multi_pass\"", ""));
	json_decref(h_run_create(&srv, owner, s, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 2, x);
	numbers(j, "result.y", 2, y);
	ck_assert(norm2(x[0], x[1]) <= 1.0 + 1e-9);
	ck_assert(norm2(y[0], y[1]) <= 1.0 + 1e-9);
	json_decref(j);

	/* VI mode: bilinear_vi over one ball, the result x holds all of u */
	snprintf(body, sizeof(body), "%s",
		 NSEG_RUN("{\"name\": \"bilinear_vi\", \"coupling\": 0.5}",
			  "\"x\": {\"kind\": \"l2_ball\", \"radius\": 1.5}", "", ""));
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 4, u);
	ck_assert_ptr_null(h_get(j, "result.y"));
	ck_assert(sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) <= 1.5 + 1e-9);
	json_decref(j);

	/* Refusals, nothing charged. */
	h_ledger_snapshot(db, before, sizeof(before));
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	snprintf(body, sizeof(body), "%s",
		 "{\"algorithm\": \"saddle.nseg\", \"objective\": " NSEG_BILINEAR
		 ", \"constraints\": {" NSEG_BALLS "}, \"privacy\": {\"epsilon\": 0.001, "
		 "\"delta\": 1e-6}}");
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 422,
		       "privacy_too_small_for_n", "privacy.epsilon", NULL);
	snprintf(body, sizeof(body), "%s",
		 NSEG_RUN(NSEG_BILINEAR, NSEG_BALLS, "\"batch_size\": 2001", ""));
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "params.batch_size", NULL);
	snprintf(body, sizeof(body), "%s",
		 NSEG_RUN(NSEG_BILINEAR, NSEG_BALLS,
			  "\"variant\": \"multi_pass\", \"iterations\": 10000000000", ""));
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 422,
		       "unprocessable", "params", "DPOPT_MAX_RUN_WORK");
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(before, after);
	free(train);
	free(test);
	free(small);
}
END_TEST

#define POLY_RUN(alg, vertices, extra)                                                             \
	"{\"algorithm\": \"" alg "\","                                                             \
	" \"objective\": {\"name\": \"bilinear\", \"coupling\": 0.5},"                             \
	" \"constraints\": {\"x\": {\"kind\": \"polytope\", \"vertices\": " vertices "},"          \
	" \"y\": {\"kind\": \"simplex\", \"scale\": 1}},"                                          \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}" extra "}"
/* A triangle and a point inside it. */
#define TRIANGLE "[[0.6, 0], [0, 0.6], [-0.6, -0.6], [0.1, 0.1]]"

/*
 * x over a vertex list: saddle.smd_maurey runs, x lies in the triangle
 * (barycentric coordinates >= 0), y in the simplex, the stored request
 * keeps the list, and the gap on the public dataset brackets.  Bad lists
 * are refused naming the field, nine vertices (above DPOPT_MAX_VERTICES =
 * 8) with 422, and none of those is charged.
 */
START_TEST(test_polytope)
{
	char a[40], p[40], run[40], body[2048], path[128], spent[64], spent2[64];
	double mtrain[4], meval[4], x[2], y[2], slo, shi, l1, l2;
	char *train = bilinear_rows(3000, 7, mtrain), *test = bilinear_rows(500, 8, meval);
	json_t *j;
	struct {
		const char *body, *field, *msg;
		int status;
	} const bad[] = {
		{ POLY_RUN("saddle.smd_maurey", "[[0.6, 0], [0, 0.6, 1], [0, 0]]", ""),
		  "constraints.x.vertices[1]", "2 numbers", 400 },
		{ POLY_RUN("saddle.smd_maurey", "[[0.6, 0]]", ""), "constraints.x.vertices",
		  "at least 2", 400 },
		{ POLY_RUN("saddle.smd_maurey", "[[0.6, 0, 1], [0, 0.6, 1]]", ""),
		  "constraints.x.vertices", "coordinates", 400 },
		{ POLY_RUN("saddle.smd_maurey", "[[0.5, 0.5], [0.5, 0.5]]", ""),
		  "constraints.x.vertices", "same point", 400 },
		{ POLY_RUN("saddle.smd_maurey", "[[0.6, 0], [0, \"x\"]]", ""),
		  "constraints.x.vertices[1]", NULL, 400 },
		{ POLY_RUN("saddle.sgda_one_pass", TRIANGLE, ""), "constraints.x.kind",
		  "does not support", 400 },
		{ POLY_RUN("saddle.smd_maurey",
			   "[[0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0], [0, 0.5], [0.5, 1], "
			   "[1, 0.5], [0.5, 0.5]]",
			   ""),
		  "constraints.x.vertices", "DPOPT_MAX_VERTICES", 422 },
	};

	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("poly", BUDGET), a);
	h_upload(&srv, owner, a, train);
	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("poly-public", "\"public\": true"), p);
	h_upload(&srv, owner, p, test);

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	h_ledger_check(db, a, spent, sizeof(spent));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		h_expect_error(&srv, "POST", path, owner, "application/json", bad[i].body,
			       strlen(bad[i].body), NULL, bad[i].status,
			       bad[i].status == 400 ? "invalid_request" : "unprocessable",
			       bad[i].field, bad[i].msg);
	ck_assert_int_eq(h_sql_ll(db, "SELECT count(*) FROM runs WHERE dataset_id = '%s'", a), 0);
	h_ledger_check(db, a, spent2, sizeof(spent2));
	ck_assert_str_eq(spent, spent2);

	snprintf(body, sizeof(body),
		 POLY_RUN("saddle.smd_maurey", TRIANGLE, ", \"eval_dataset_id\": \"%s\""), p);
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 2, x);
	numbers(j, "result.y", 2, y);
	/* x = l1 (0.6, 0) + l2 (0, 0.6) + (1 - l1 - l2)(-0.6, -0.6) */
	{
		/* solve [1.2 0.6; 0.6 1.2] (l1, l2) = x + 0.6 */
		double b0 = x[0] + 0.6, b1 = x[1] + 0.6, det = 1.2 * 1.2 - 0.6 * 0.6;

		l1 = (1.2 * b0 - 0.6 * b1) / det;
		l2 = (1.2 * b1 - 0.6 * b0) / det;
	}
	ck_assert_msg(l1 >= -1e-9 && l2 >= -1e-9 && l1 + l2 <= 1.0 + 1e-9,
		      "x = (%g, %g) outside the triangle (%g, %g)", x[0], x[1], l1, l2);
	ck_assert(y[0] >= 0.0 && y[1] >= 0.0 && fabs(y[0] + y[1] - 1.0) <= 1e-12);
	ck_assert_str_eq(json_string_value(h_get(j, "request.constraints.x.kind")), "polytope");
	ck_assert_uint_eq(json_array_size(h_get(j, "request.constraints.x.vertices")), 4);
	ck_assert(json_integer_value(h_get(j, "result.params_used.vertices_x")) == 4 ||
		  json_number_value(h_get(j, "result.params_used.vertices_x")) == 4.0);
	bracket(j, "result.evaluation.strong_gap", &slo, &shi);
	ck_assert(shi - slo <= 1e-6);
	json_decref(j);
	free(train);
	free(test);
}
END_TEST

#define NISPP_RUN(obj, sets, params, extra)                                                        \
	"{\"algorithm\": \"saddle.nispp\", \"objective\": " obj ","                                \
	" \"constraints\": {" sets "}, \"params\": {" params "},"                                  \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}" extra "}"

/*
 * saddle.nispp (docs/algorithms/nispp.md) through the API.  single_pass on
 * bilinear: the estimate's schedule (B = round(4000^(1/3)) = 16, N = 250,
 * one parallel Gaussian event of N parts, the prox weight and the privacy
 * accuracy 2 M^2 / (lambda B^2) recorded), the result in the balls, its
 * gap on public data against the closed form, no inner count or
 * certificate anywhere in the run.  multi_pass on 120 rows: N = 120, the
 * event self_composed(sampled_without_replacement(120, 11, gaussian),
 * 120), with the operator-extrapolation solver.  VI mode.  Refusals before
 * any charge: the vacuous regime (422 privacy_too_small_for_n), the fixed
 * point below lambda = L (params.inner_solver).
 */
START_TEST(test_nispp)
{
	char a[40], p[40], s[40], run[40], body[2048], path[128], before[4096], after[4096];
	double mtrain[4], meval[4], msmall[4], x[2], y[2], u[4], slo, shi, want, lam, m;
	char *train = bilinear_rows(4000, 21, mtrain), *test = bilinear_rows(1000, 22, meval);
	char *small = bilinear_rows(120, 23, msmall), *text;
	const double g = 0.5;
	json_t *j;

	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("nispp-pairs", BUDGET), a);
	h_upload(&srv, owner, a, train);
	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("nispp-public", "\"public\": true"), p);
	h_upload(&srv, owner, p, test);
	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("nispp-small", BUDGET), s);
	h_upload(&srv, owner, s, small);

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	j = h_json(&srv, "POST", path, owner, NISPP_RUN(NSEG_BILINEAR, NSEG_BALLS, "", ""), 200);
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.steps")), 250);
	ck_assert(json_number_value(h_get(j, "plan.params_used.batch_size")) == 16.0);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), "parallel");
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.event.parts")), 250);
	lam = json_number_value(h_get(j, "plan.params_used.prox_weight"));
	m = json_number_value(h_get(j, "plan.params_used.operator_bound"));
	ck_assert(lam > 0.0 && m > 0.0);
	ck_assert_double_eq_tol(json_number_value(h_get(j, "plan.params_used.privacy_accuracy")),
				2.0 * m * m / (lam * 256.0), 1e-12);
	ck_assert_double_eq_tol(json_number_value(h_get(j, "plan.params_used.sensitivity")),
				4.0 * m / (lam * 16.0), 1e-12);
	json_decref(j);

	snprintf(body, sizeof(body),
		 NISPP_RUN(NSEG_BILINEAR, NSEG_BALLS, "\"variant\": \"single_pass\"",
			   ", \"eval_dataset_id\": \"%s\""),
		 p);
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 2, x);
	numbers(j, "result.y", 2, y);
	ck_assert(norm2(x[0], x[1]) <= 1.0 + 1e-9);
	ck_assert(norm2(y[0], y[1]) <= 1.0 + 1e-9);
	bracket(j, "result.evaluation.strong_gap", &slo, &shi);
	want = meval[0] * x[0] + meval[1] * x[1] + norm2(g * x[0] - meval[2], g * x[1] - meval[3]) +
	       meval[2] * y[0] + meval[3] * y[1] + norm2(g * y[0] + meval[0], g * y[1] + meval[1]);
	ck_assert_msg(slo - 1e-9 <= want && want <= shi + 1e-9,
		      "closed-form gap %.17g outside [%.17g, %.17g]", want, slo, shi);
	text = json_dumps(j, JSON_COMPACT);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strstr(text, "certificate") == NULL && strstr(text, "inner_iter") == NULL,
		      "the run shows an inner count or certificate");
	free(text);
	json_decref(j);

	/* multi_pass on 120 rows, operator extrapolation */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", s);
	j = h_json(&srv, "POST", path, owner,
		   NISPP_RUN(NSEG_BILINEAR, NSEG_BALLS,
			     "\"variant\": \"multi_pass\", \"inner_solver\": "
			     "\"operator_extrapolation\"",
			     ""),
		   200);
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.steps")), 120);
	ck_assert(json_number_value(h_get(j, "plan.params_used.batch_size")) == 11.0);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), "self_composed");
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.event.count")), 120);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.event.type")),
			 "sampled_without_replacement");
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.event.event.n")), 120);
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.event.event.batch")), 11);
	json_decref(j);
	snprintf(body, sizeof(body), "%s",
		 NISPP_RUN(NSEG_BILINEAR, NSEG_BALLS,
			   "\"variant\": \"multi_pass\", \"inner_solver\": "
			   "\"operator_extrapolation\"",
			   ""));
	json_decref(h_run_create(&srv, owner, s, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 2, x);
	numbers(j, "result.y", 2, y);
	ck_assert(norm2(x[0], x[1]) <= 1.0 + 1e-9);
	ck_assert(norm2(y[0], y[1]) <= 1.0 + 1e-9);
	json_decref(j);

	/* VI mode */
	snprintf(body, sizeof(body), "%s",
		 NISPP_RUN("{\"name\": \"bilinear_vi\", \"coupling\": 0.5}",
			   "\"x\": {\"kind\": \"l2_ball\", \"radius\": 1.5}", "", ""));
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 4, u);
	ck_assert_ptr_null(h_get(j, "result.y"));
	ck_assert(sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) <= 1.5 + 1e-9);
	json_decref(j);

	/* Refusals, nothing charged. */
	h_ledger_snapshot(db, before, sizeof(before));
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	snprintf(body, sizeof(body), "%s",
		 "{\"algorithm\": \"saddle.nispp\", \"objective\": " NSEG_BILINEAR
		 ", \"constraints\": {" NSEG_BALLS "}, \"privacy\": {\"epsilon\": 0.001, "
		 "\"delta\": 1e-6}}");
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 422,
		       "privacy_too_small_for_n", "privacy.epsilon", NULL);
	snprintf(body, sizeof(body), "%s",
		 NISPP_RUN(NSEG_BILINEAR, NSEG_BALLS,
			   "\"inner_solver\": \"fixed_point\", \"prox_weight\": 0.01", ""));
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "params.inner_solver", NULL);
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(before, after);
	free(train);
	free(test);
	free(small);
}
END_TEST

#define RR_RUN(params, extra)                                                                      \
	"{\"algorithm\": \"saddle.recursive_regularization\", \"objective\": " NSEG_BILINEAR       \
	", \"constraints\": {" NSEG_BALLS "}, \"params\": {" params "},"                           \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}" extra "}"

/*
 * saddle.recursive_regularization (docs/algorithms/recursive-regularization.md)
 * through the API on 4096 bilinear pairs: the estimate's schedule (n' =
 * 341, T = 4 rounds, one parallel Gaussian event over the T K batches of
 * the sgda variant); the sgda result in the balls and its gap on public
 * data against the closed form (as test_bilinear); outpert_cert succeeds
 * with one parallel event over the 4 rounds; refusals before any charge:
 * the theory multiplier 48 at this n (422 privacy_too_small_for_n naming
 * privacy.epsilon), a batch larger than n' (params.batch_size).
 */
START_TEST(test_recursive_regularization)
{
	char a[40], p[40], run[40], body[2048], path[128], before[4096], after[4096];
	double mtrain[4], meval[4], x[2], y[2], slo, shi, want;
	char *train = bilinear_rows(4096, 21, mtrain), *test = bilinear_rows(1000, 22, meval);
	const double g = 0.5;
	json_t *j;
	long steps;

	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("rr-pairs", BUDGET), a);
	h_upload(&srv, owner, a, train);
	h_dataset_create(&srv, owner, BLOCKS_SCHEMA("rr-public", "\"public\": true"), p);
	h_upload(&srv, owner, p, test);

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	/* the default variant (auto) chooses outpert_cert here and says so */
	j = h_json(&srv, "POST", path, owner, RR_RUN("", ""), 200);
	steps = (long)json_integer_value(h_get(j, "plan.steps"));
	ck_assert(json_number_value(h_get(j, "plan.params_used.variant")) == 1.0);
	ck_assert(json_number_value(h_get(j, "plan.params_used.chunk_size")) == 341.0);
	ck_assert(json_number_value(h_get(j, "plan.params_used.rounds")) == 4.0);
	ck_assert(json_number_value(h_get(j, "plan.params_used.extragradient_iterations")) > 4.0);
	ck_assert_int_eq(steps, 4);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), "parallel");
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.event.parts")), steps);
	json_decref(j);
	j = h_json(&srv, "POST", path, owner, RR_RUN("\"variant\": \"sgda\"", ""), 200);
	steps = (long)json_integer_value(h_get(j, "plan.steps"));
	ck_assert(json_number_value(h_get(j, "plan.params_used.variant")) == 0.0);
	ck_assert(json_number_value(h_get(j, "plan.params_used.round_steps")) * 4.0 ==
		  (double)steps);
	ck_assert_int_eq(json_integer_value(h_get(j, "plan.event.parts")), steps);
	json_decref(j);

	snprintf(body, sizeof(body),
		 RR_RUN("\"variant\": \"sgda\"", ", \"eval_dataset_id\": \"%s\""), p);
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 2, x);
	numbers(j, "result.y", 2, y);
	ck_assert(norm2(x[0], x[1]) <= 1.0 + 1e-9);
	ck_assert(norm2(y[0], y[1]) <= 1.0 + 1e-9);
	bracket(j, "result.evaluation.strong_gap", &slo, &shi);
	want = meval[0] * x[0] + meval[1] * x[1] + norm2(g * x[0] - meval[2], g * x[1] - meval[3]) +
	       meval[2] * y[0] + meval[3] * y[1] + norm2(g * y[0] + meval[0], g * y[1] + meval[1]);
	ck_assert_msg(slo - 1e-9 <= want && want <= shi + 1e-9,
		      "closed-form gap %.17g outside [%.17g, %.17g]", want, slo, shi);
	json_decref(j);

	snprintf(body, sizeof(body), "%s", RR_RUN("\"variant\": \"outpert_cert\"", ""));
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 2, x);
	numbers(j, "result.y", 2, y);
	ck_assert(norm2(x[0], x[1]) <= 1.0 + 1e-9);
	ck_assert(norm2(y[0], y[1]) <= 1.0 + 1e-9);
	ck_assert_str_eq(json_string_value(h_get(j, "privacy.event.type")), "parallel");
	ck_assert_int_eq(json_integer_value(h_get(j, "privacy.event.parts")), 4);
	json_decref(j);

	/* Refusals, nothing charged. */
	h_ledger_snapshot(db, before, sizeof(before));
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	snprintf(body, sizeof(body), "%s", RR_RUN("\"regularization_multiplier\": 48", ""));
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 422,
		       "privacy_too_small_for_n", "privacy.epsilon", NULL);
	snprintf(body, sizeof(body), "%s", RR_RUN("\"batch_size\": 342", ""));
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "params.batch_size", NULL);
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(before, after);
	free(train);
	free(test);
}
END_TEST

/* GET /v1/algorithms: objective kinds, the saddle flag, constraints.y. */
START_TEST(test_catalogue)
{
	json_t *j = h_json(&srv, "GET", "/v1/algorithms", owner, NULL, 200), *a, *o;
	size_t i, k;
	bool seen_sgda = false, seen_sgd = false;

	json_array_foreach (h_get(j, "algorithms"), i, a) {
		const char *name = json_string_value(json_object_get(a, "name"));
		bool saddle = json_is_true(json_object_get(a, "saddle"));

		ck_assert(json_is_boolean(json_object_get(a, "saddle")));
		ck_assert(saddle == (h_get(a, "constraints.y") != NULL));
		json_array_foreach (json_object_get(a, "objectives"), k, o) {
			const char *kind = json_string_value(json_object_get(o, "kind"));

			/* Saddle methods may also solve operator (VI) objectives. */
			ck_assert_msg(strcmp(kind, saddle ? "saddle" : "minimize") == 0 ||
					      (saddle && strcmp(kind, "operator") == 0),
				      "%s: kind %s", name, kind);
		}
		if (strcmp(name, "saddle.sgda_one_pass") == 0) {
			seen_sgda = true;
			ck_assert(saddle);
			ck_assert_uint_ge(json_array_size(h_get(a, "constraints.y")), 2);
			ck_assert_uint_eq(json_array_size(json_object_get(a, "objectives")), 8);
			o = json_array_get(json_object_get(a, "objectives"), 6);
			ck_assert_str_eq(json_string_value(json_object_get(o, "name")),
					 "bilinear_vi");
			ck_assert_str_eq(json_string_value(json_object_get(o, "kind")), "operator");
			o = json_array_get(json_object_get(a, "objectives"), 4);
			ck_assert_str_eq(json_string_value(json_object_get(o, "name")),
					 "fair_logistic_lagrangian");
			ck_assert_str_eq(json_string_value(json_object_get(o, "kind")), "saddle");
			ck_assert_uint_eq(json_array_size(json_object_get(o, "params")), 2);
			o = json_array_get(json_object_get(a, "objectives"), 7);
			ck_assert_str_eq(json_string_value(json_object_get(o, "name")),
					 "affine_vi");
			ck_assert_str_eq(json_string_value(json_object_get(o, "kind")), "operator");
		}
		if (strcmp(name, "dp_sgd.one_pass") == 0) {
			seen_sgd = true;
			ck_assert(!saddle);
		}
	}
	ck_assert(seen_sgda && seen_sgd);
	json_decref(j);
}
END_TEST

/* The mean over the CSV rows "x0,x1,x2,g,y" of the logistic loss at x
 * and of c(g) <x, a> (c = g / p1 - (1 - g) / p0): R(x) and H(x). */
static void
fair_means(const char *rows, const double *x, double p0, double p1, double *ret_r, double *ret_h)
{
	double a[3], r = 0.0, h = 0.0;
	unsigned g;
	int y, used;
	size_t n = 0;

	while (sscanf(rows, "%lf,%lf,%lf,%u,%d\n%n", &a[0], &a[1], &a[2], &g, &y, &used) == 5) {
		double z = a[0] * x[0] + a[1] * x[1] + a[2] * x[2];

		r += log1p(exp(-(double)y * z));
		h += (g == 1 ? 1.0 / p1 : -1.0 / p0) * z;
		n++;
		rows += used;
	}
	ck_assert_uint_gt(n, 0);
	*ret_r = r / (double)n;
	*ret_h = h / (double)n;
}

/*
 * fair_logistic_lagrangian (x in an l2 ball, the multipliers y in the box
 * [0, 2]) on the binary rows with a group column of 2 (the sensitive
 * attribute): the result's x and y in their sets, the normalised request
 * keeps parity_tolerance, and the strong gap on the public rows is at
 * least the closed-form max over y minus F(x, y) (docs/algorithms/saddle-objectives.md: max_y F
 * = R(x) + Lambda (max(0, H - tau) + max(0, -H - tau)); the min over x is
 * at most F(x, y)).  Refusals naming the field: a y box with lo != 0, a y
 * ball, no group proportions.  auc_minimax runs on the same rows (x =
 * (w, a_+, b_-) in a box, alpha in a box).  affine_vi on two-feature
 * unlabeled rows with a monotone public matrix, its VI gaps on public
 * rows; a non-monotone matrix and a non-square one refused naming
 * objective.matrix.
 */
START_TEST(test_fair_auc_affine)
{
	char a[40], p[40], v[40], vp[40], run[40], body[1024], path[128];
	char *train = group_rows(3000, 13), *test = group_rows(600, 14);
	double x[6], y[2], slo, shi, wlo, whi, R, H, closed, F;
	const double tau = 0.05, lam = 2.0;
	json_t *j;

#define FAIR_RUN(ysets, extra)                                                                     \
	"{\"algorithm\": \"saddle.sgda_one_pass\","                                                \
	" \"objective\": {\"name\": \"fair_logistic_lagrangian\","                                 \
	" \"group_proportions\": [0.5, 0.5], \"parity_tolerance\": 0.05},"                         \
	" \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 2}, \"y\": " ysets "},"     \
	" \"privacy\": {\"epsilon\": 2, \"delta\": 1e-6}" extra "}"
#define FAIR_Y "{\"kind\": \"box\", \"lo\": 0, \"hi\": 2}"

	h_dataset_create(&srv, owner, GROUP_SCHEMA("fair", "2", BUDGET), a);
	h_upload(&srv, owner, a, train);
	h_dataset_create(&srv, owner, GROUP_SCHEMA("fair-public", "2", "\"public\": true"), p);
	h_upload(&srv, owner, p, test);
	snprintf(body, sizeof(body), FAIR_RUN(FAIR_Y, ", \"eval_dataset_id\": \"%s\""), p);
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 3, x);
	numbers(j, "result.y", 2, y);
	ck_assert(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) <= 2.0 + 1e-9);
	ck_assert(y[0] >= 0.0 && y[0] <= lam && y[1] >= 0.0 && y[1] <= lam);
	ck_assert(json_number_value(h_get(j, "request.objective.parity_tolerance")) == tau);
	bracket(j, "result.evaluation.strong_gap", &slo, &shi);
	bracket(j, "result.evaluation.weak_gap", &wlo, &whi);
	fair_means(test, x, 0.5, 0.5, &R, &H);
	closed = R + lam * (fmax(0.0, H - tau) + fmax(0.0, -H - tau));
	F = R + (y[0] - y[1]) * H - (y[0] + y[1]) * tau;
	ck_assert_msg(shi >= closed - F - 1e-9 && slo >= -1e-9,
		      "gap [%.17g, %.17g], max_y F - F(x, y) = %.17g", slo, shi, closed - F);
	ck_assert(shi - slo <= 1e-6);
	json_decref(j);

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	snprintf(body, sizeof(body), "%s",
		 FAIR_RUN("{\"kind\": \"box\", \"lo\": -1, \"hi\": 2}", ""));
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "constraints.y.lo", NULL);
	snprintf(body, sizeof(body), "%s", FAIR_RUN("{\"kind\": \"l2_ball\", \"radius\": 2}", ""));
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "constraints.y", NULL);
	snprintf(body, sizeof(body),
		 "{\"algorithm\": \"saddle.sgda_one_pass\", \"objective\": {\"name\": "
		 "\"fair_logistic_lagrangian\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", "
		 "\"radius\": 2}, \"y\": " FAIR_Y
		 "}, \"privacy\": {\"epsilon\": 2, \"delta\": 1e-6}}");
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "objective.group_proportions", NULL);

	/* auc_minimax on the same rows */
	snprintf(
		body, sizeof(body),
		"{\"algorithm\": \"saddle.sgda_one_pass\", \"objective\": {\"name\": "
		"\"auc_minimax\", \"class_prior\": [0.5, 0.5]}, \"constraints\": {\"x\": "
		"{\"kind\": \"box\", \"lo\": -1, \"hi\": 1}, \"y\": {\"kind\": \"box\", \"lo\": "
		"-2, "
		"\"hi\": 2}}, \"privacy\": {\"epsilon\": 2, \"delta\": 1e-6}, \"eval_dataset_id\": "
		"\"%s\"}",
		p);
	json_decref(h_run_create(&srv, owner, a, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 5, x);
	numbers(j, "result.y", 1, y);
	for (int k = 0; k < 5; k++)
		ck_assert(fabs(x[k]) <= 1.0);
	ck_assert(fabs(y[0]) <= 2.0);
	bracket(j, "result.evaluation.strong_gap", &slo, &shi);
	ck_assert(slo >= -1e-9 && shi - slo <= 1e-6);
	json_decref(j);

	/* affine_vi: F(u; b) = A u + b on rows b of two features */
	h_dataset_create(&srv, owner,
			 "{\"name\": \"affine\", \"schema\": {\"features\": 2, \"task\": "
			 "\"unlabeled\"}, \"bounds\": {\"feature_l2\": 1}," BUDGET "}",
			 v);
	h_upload(&srv, owner, v, "0.5,-0.2\n0.3,0.1\n0.6,-0.4\n0.2,0.2\n0.4,-0.1\n0.7,0.0\n");
	h_dataset_create(&srv, owner,
			 "{\"name\": \"affine-public\", \"schema\": {\"features\": 2, \"task\": "
			 "\"unlabeled\"}, \"bounds\": {\"feature_l2\": 1}, \"public\": true}",
			 vp);
	h_upload(&srv, owner, vp, "0.5,-0.2\n0.4,0.0\n");
#define AFFINE_RUN(matrix, extra)                                                                  \
	"{\"algorithm\": \"saddle.sgda_one_pass\", \"objective\": {\"name\": \"affine_vi\", "      \
	"\"matrix\": " matrix "}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": "   \
	"1}}, \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}" extra "}"
	snprintf(body, sizeof(body),
		 AFFINE_RUN("[[1, 0.5], [-0.5, 0.2]]", ", \"eval_dataset_id\": \"%s\""), vp);
	json_decref(h_run_create(&srv, owner, v, body, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	numbers(j, "result.x", 2, x);
	ck_assert(hypot(x[0], x[1]) <= 1.0 + 1e-9);
	ck_assert(json_number_value(json_array_get(
			  json_array_get(h_get(j, "request.objective.matrix"), 1), 0)) == -0.5);
	bracket(j, "result.evaluation.strong_gap", &slo, &shi);
	bracket(j, "result.evaluation.weak_gap", &wlo, &whi);
	ck_assert_msg(wlo >= -1e-12 && wlo <= slo + 1e-9, "weak %.17g strong %.17g", wlo, slo);
	ck_assert_msg(wlo <= whi && whi - wlo <= 1e-9, "weak gap [%.17g, %.17g]", wlo, whi);
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", v);
	snprintf(body, sizeof(body), "%s", AFFINE_RUN("[[1, 0], [0, -0.1]]", ""));
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "objective.matrix", "monotone");
	snprintf(body, sizeof(body), "%s", AFFINE_RUN("[[1, 0], [0]]", ""));
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", "objective.matrix", "square");
	free(train);
	free(test);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("saddle_api");
	TCase *tc = tcase_create("saddle_api");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_bilinear);
	tcase_add_test(tc, test_worst_group);
	tcase_add_test(tc, test_vi);
	tcase_add_test(tc, test_fair_auc_affine);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_polytope);
	tcase_add_test(tc, test_catalogue);
	tcase_add_test(tc, test_nseg);
	tcase_add_test(tc, test_nispp);
	tcase_add_test(tc, test_recursive_regularization);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
