/*
 * test_synthetic_api.c - synthetic.smd_queries through the API: a dataset
 * of categorical attributes only (features 0, two with labels, one by
 * size), a run with no objective and no constraints, its result (the
 * synthetic block, the params_used figures, the zcdp event) and GET
 * /v1/runs/{id}/synthetic.csv (the header of attribute names, m rows,
 * every cell a label of its attribute or an index below its size); a run
 * with a public eval_dataset_id (max_query_error recomputed here from the
 * CSV and the public rows); the refusals: an objective, no categorical
 * attribute, a universe above DPOPT_MAX_UNIVERSE, a run above the work
 * limit, k out of range, an eval dataset of other attributes; the CSV of
 * another tenant's run, of a run without synthetic rows, of an unknown
 * run (404), and the catalogue entry.
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

static const char *const env[] = { "DPOPT_MAX_UNIVERSE=4096", "DPOPT_MAX_RUN_WORK=1e8", NULL };

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

/* colour (3 labels) x size (4, by size) x smoker (2 labels): |Z| = 24. */
#define SURVEY(name, extra)                                                                        \
	"{\"name\": \"" name "\", \"schema\": {\"features\": 0, \"task\": \"unlabeled\","          \
	" \"categorical\": [{\"name\": \"colour\", \"labels\": [\"red\", \"green\", \"blue\"]},"   \
	" {\"name\": \"size\", \"size\": 4}, {\"name\": \"smoker\", \"labels\": [\"no\", "         \
	"\"yes\"]}]}, \"bounds\": {}," extra "}"

static const char *const colours[] = { "red", "green", "blue" };
static const char *const smoker[] = { "no", "yes" };

static unsigned long long
next(unsigned long long *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

/* n rows (header first), skewed: red and size 1 common, smokers rarer;
 * the cell counts into count[24] (universe index colour * 8 + size * 2 +
 * smoker).  Owned. */
static char *
survey_rows(size_t n, unsigned seed, double count[24])
{
	size_t cap = n * 32 + 64, len = 0;
	char *t = malloc(cap);
	unsigned long long st = 0x9e3779b97f4a7c15ULL * (seed + 1);

	ck_assert_ptr_nonnull(t);
	memset(count, 0, 24 * sizeof(double));
	len += (size_t)snprintf(t, cap, "colour,size,smoker\n");
	for (size_t i = 0; i < n; i++) {
		unsigned c = next(&st) % 10 < 6 ? 0 : (unsigned)(next(&st) % 3);
		unsigned s = next(&st) % 10 < 5 ? 1 : (unsigned)(next(&st) % 4);
		unsigned k = next(&st) % 10 < 2 + c ? 1 : 0;

		count[c * 8 + s * 2 + k] += 1.0;
		len += (size_t)snprintf(t + len, cap - len, "%s,%u,%s\n", colours[c], s, smoker[k]);
	}
	return t;
}

/* The universe index of one CSV line, checking every cell; -1 if bad. */
static int
parse_line(const char *line)
{
	char c[32], k[32];
	unsigned s;
	int ci = -1, ki = -1;

	if (sscanf(line, "%31[^,],%u,%31[^,\n]", c, &s, k) != 3 || s > 3)
		return -1;
	for (int i = 0; i < 3; i++)
		if (strcmp(c, colours[i]) == 0)
			ci = i;
	for (int i = 0; i < 2; i++)
		if (strcmp(k, smoker[i]) == 0)
			ki = i;
	return ci < 0 || ki < 0 ? -1 : ci * 8 + (int)s * 2 + ki;
}

/* GET the CSV of run: header, rows, every cell valid; the counts per
 * universe index into count[24]; returns the number of rows. */
static size_t
get_csv(const char *key, const char *run, double count[24])
{
	struct h_resp r = { 0 };
	char path[128];
	size_t rows = 0;
	char *line, *save = NULL;

	snprintf(path, sizeof(path), "/v1/runs/%s/synthetic.csv", run);
	h_http(&srv, "GET", path, key, NULL, NULL, 0, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_msg(strncmp(r.ctype, "text/csv", 8) == 0, "Content-Type '%s'", r.ctype);
	memset(count, 0, 24 * sizeof(double));
	line = strtok_r(r.body, "\n", &save);
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(line, "colour,size,smoker");
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		int u = parse_line(line);

		ck_assert_msg(u >= 0, "bad line '%s'", line);
		count[u] += 1.0;
		rows++;
	}
	h_resp_clear(&r);
	return rows;
}

/* max over the 2-way marginals of |p(a) - p(b)| for count vectors. */
static double
max_2way_error(const double *a, double na, const double *b, double nb)
{
	static const unsigned size[3] = { 3, 4, 2 };
	double worst = 0.0;

	for (unsigned i = 0; i < 3; i++)
		for (unsigned j = i + 1; j < 3; j++)
			for (unsigned vi = 0; vi < size[i]; vi++)
				for (unsigned vj = 0; vj < size[j]; vj++) {
					double pa = 0.0, pb = 0.0;

					for (unsigned u = 0; u < 24; u++) {
						unsigned d[3] = { u / 8, (u / 2) % 4, u % 2 };

						if (d[i] == vi && d[j] == vj) {
							pa += a[u] / na;
							pb += b[u] / nb;
						}
					}
					worst = fmax(worst, fabs(pa - pb));
				}
	return worst;
}

/* A POST refused with status, code, field and message part. */
static void
refused(const char *path, const char *body, long status, const char *code, const char *field,
	const char *part)
{
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL,
		       status, code, field, part);
}

#define RUN(extra)                                                                                 \
	"{\"algorithm\": \"synthetic.smd_queries\","                                               \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}" extra "}"

START_TEST(test_synthetic_run_and_csv)
{
	char a[40], p[40], run[40], run2[40], body[512], path[128];
	double train[24], pub[24], syn[24], total = 0.0, err;
	char *rows = survey_rows(3000, 1, train), *test = survey_rows(2000, 2, pub);
	json_t *j;

	h_dataset_create(&srv, owner, SURVEY("survey", BUDGET), a);
	h_upload(&srv, owner, a, rows);
	h_dataset_create(&srv, owner, SURVEY("survey-public", "\"public\": true"), p);
	h_upload(&srv, owner, p, test);

	/* The estimate takes the same request. */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	j = h_json(&srv, "POST", path, owner, RUN(""), 200);
	ck_assert_int_ge(json_integer_value(h_get(j, "plan.steps")), 2);
	json_decref(j);

	json_decref(h_run_create(&srv, owner, a, RUN(", \"params\": {\"rows\": 500}"), run));
	j = h_run_wait(&srv, owner, run, "succeeded", 60);
	ck_assert_ptr_null(h_get(j, "result.x"));
	ck_assert_ptr_null(h_get(j, "request.objective"));
	ck_assert_int_eq(json_integer_value(h_get(j, "result.synthetic.rows")), 500);
	ck_assert_int_eq(json_integer_value(h_get(j, "result.synthetic.universe")), 24);
	ck_assert(json_is_array(h_get(j, "result.synthetic.cells")));
	ck_assert_str_eq(json_string_value(h_get(j, "result.privacy.event.type")), "zcdp");
	ck_assert(json_number_value(h_get(j, "result.params_used.k")) == 2.0);
	/* 3 pairs of attributes: 12 + 6 + 8 cells, and their negations. */
	ck_assert(json_number_value(h_get(j, "result.params_used.queries")) == 52.0);
	ck_assert(json_number_value(h_get(j, "result.params_used.universe")) == 24.0);
	ck_assert(json_number_value(h_get(j, "result.params_used.sensitivity")) == 1.0 / 3000.0);
	ck_assert(json_number_value(h_get(j, "result.params_used.error_bound")) > 0.0);
	ck_assert(json_number_value(h_get(j, "result.params_used.step_size_y")) <=
		  json_number_value(h_get(j, "result.params_used.step_size_y_cap")));
	ck_assert_ptr_null(h_get(j, "result.evaluation"));
	json_decref(j);
	ck_assert_uint_eq(get_csv(owner, run, syn), 500);

	/* With the public evaluation dataset: the max 2-way error of the CSV
	 * rows against the public rows, recomputed here. */
	snprintf(body, sizeof(body), RUN(", \"eval_dataset_id\": \"%s\""), p);
	json_decref(h_run_create(&srv, owner, a, body, run2));
	j = h_run_wait(&srv, owner, run2, "succeeded", 60);
	ck_assert_str_eq(json_string_value(h_get(j, "result.evaluation.dataset_id")), p);
	ck_assert_int_eq(json_integer_value(h_get(j, "result.evaluation.n_rows")), 2000);
	ck_assert_int_eq(json_integer_value(h_get(j, "result.evaluation.queries")), 52);
	ck_assert_uint_eq(get_csv(owner, run2, syn), 3000);
	for (size_t u = 0; u < 24; u++)
		total += syn[u];
	err = max_2way_error(pub, 2000.0, syn, total);
	ck_assert_msg(fabs(json_number_value(h_get(j, "result.evaluation.max_query_error")) - err) <
			      1e-9,
		      "max_query_error %.17g, recomputed %.17g",
		      json_number_value(h_get(j, "result.evaluation.max_query_error")), err);
	json_decref(j);
	free(rows);
	free(test);
}
END_TEST

START_TEST(test_synthetic_refusals)
{
	char a[40], f[40], big[40], other[40], run[40], analyst2[128], path[128], body[1024];
	double cnt[24];
	char *rows = survey_rows(500, 3, cnt), *fcsv;
	json_t *j;

	h_dataset_create(&srv, owner, SURVEY("survey", BUDGET), a);
	h_upload(&srv, owner, a, rows);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	/* No objective, no constraints. */
	refused(path, RUN(", \"objective\": {\"name\": \"logistic\"}"), 400, "invalid_request",
		"objective", "takes no objective");
	refused(path, RUN(", \"constraints\": {\"x\": {\"kind\": \"simplex\"}}"), 400,
		"invalid_request", "constraints", NULL);
	/* k out of range. */
	refused(path, RUN(", \"params\": {\"k\": 4}"), 400, "invalid_request", "params.k", NULL);
	/* Above the work limit (1e8 here): 1e6 steps over 24 x 52, 3.9e8. */
	refused(path, RUN(", \"params\": {\"steps\": 1000000}"), 422, "unprocessable", "params",
		"DPOPT_MAX_RUN_WORK");
	/* Too small a target for n. */
	refused(path,
		"{\"algorithm\": \"synthetic.smd_queries\","
		" \"privacy\": {\"epsilon\": 0.001, \"delta\": 1e-6}}",
		422, "privacy_too_small_for_n", "privacy.epsilon", NULL);

	/* No categorical attribute. */
	h_dataset_create(&srv, owner,
			 "{\"name\": \"f\", \"schema\": {\"features\": 3, \"task\": \"binary\"},"
			 " \"bounds\": {\"feature_l2\": 1}," BUDGET "}",
			 f);
	fcsv = h_csv(50, 3, true, 4);
	h_upload(&srv, owner, f, fcsv);
	free(fcsv);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", f);
	refused(path, RUN(""), 400, "invalid_request", "schema.categorical", NULL);

	/* A universe of 8 x 8 x 8 x 16 = 8192 > DPOPT_MAX_UNIVERSE = 4096. */
	h_dataset_create(
		&srv, owner,
		"{\"name\": \"big\", \"schema\": {\"features\": 0, \"task\": \"unlabeled\","
		" \"categorical\": [{\"name\": \"a\", \"size\": 8}, {\"name\": \"b\", "
		"\"size\": 8}, {\"name\": \"c\", \"size\": 8}, {\"name\": \"d\", \"size\": "
		"16}]}, \"bounds\": {}," BUDGET "}",
		big);
	h_upload(&srv, owner, big, "a,b,c,d\n1,2,3,4\n0,0,0,0\n");
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", big);
	refused(path, RUN(""), 422, "unprocessable", "schema.categorical", "DPOPT_MAX_UNIVERSE");

	/* An evaluation dataset of other attributes. */
	h_dataset_create(&srv, owner,
			 "{\"name\": \"other\", \"schema\": {\"features\": 0, \"task\": "
			 "\"unlabeled\", \"categorical\": [{\"name\": \"a\", \"size\": 24}]},"
			 " \"bounds\": {}, \"public\": true}",
			 other);
	h_upload(&srv, owner, other, "a\n1\n2\n");
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	snprintf(body, sizeof(body), RUN(", \"eval_dataset_id\": \"%s\""), other);
	refused(path, body, 400, "invalid_request", "eval_dataset_id", "categorical");

	/* The CSV: an unknown run, another tenant's run, a run without
	 * synthetic rows. */
	h_expect_error(&srv, "GET", "/v1/runs/00000000-0000-4000-8000-000000000000/synthetic.csv",
		       owner, NULL, NULL, 0, NULL, 404, "not_found", NULL, NULL);
	json_decref(h_run_create(&srv, owner, a, RUN(""), run));
	json_decref(h_run_wait(&srv, owner, run, "succeeded", 60));
	ck_assert_uint_eq(get_csv(owner, run, cnt), 500);
	h_key_create(db, "other", "owner", analyst2, sizeof(analyst2));
	snprintf(path, sizeof(path), "/v1/runs/%s/synthetic.csv", run);
	h_expect_error(&srv, "GET", path, analyst2, NULL, NULL, 0, NULL, 404, "not_found", NULL,
		       NULL);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", f);
	j = h_run_create(&srv, owner, f,
			 "{\"algorithm\": \"frank_wolfe.private\", \"objective\": {\"name\": "
			 "\"logistic\"}, \"constraints\": {\"x\": {\"kind\": \"l1_ball\", "
			 "\"radius\": 1}}, \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}}",
			 run);
	json_decref(j);
	json_decref(h_run_wait(&srv, owner, run, "succeeded", 60));
	snprintf(path, sizeof(path), "/v1/runs/%s/synthetic.csv", run);
	h_expect_error(&srv, "GET", path, owner, NULL, NULL, 0, NULL, 404, "not_found", NULL,
		       "no synthetic rows");
	free(rows);
}
END_TEST

START_TEST(test_synthetic_catalogue)
{
	json_t *j = h_json(&srv, "GET", "/v1/algorithms", owner, NULL, 200), *algs, *a;
	size_t i;
	bool found = false;

	algs = h_get(j, "algorithms");
	json_array_foreach (algs, i, a) {
		if (strcmp(json_string_value(json_object_get(a, "name")),
			   "synthetic.smd_queries") != 0)
			continue;
		found = true;
		ck_assert_uint_eq(json_array_size(json_object_get(a, "objectives")), 0);
		ck_assert(json_is_true(json_object_get(a, "synthetic")));
	}
	ck_assert(found);
	json_decref(j);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("synthetic_api");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	h_init();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_synthetic_run_and_csv);
	tcase_add_test(tc, test_synthetic_refusals);
	tcase_add_test(tc, test_synthetic_catalogue);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(nf);
}
