/*
 * test_validation.c - request validation without a database: JSON getters,
 * run requests against a dataset's public metadata, row clipping, charge
 * texts, the route table and the error-to-status map.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "event_json.h"
#include "http.h"
#include "jv.h"
#include "ledger.h"
#include "privacy/filter.h"
#include "run_request.h"
#include "upload.h"

static json_t *
parse(const char *text)
{
	json_t *doc = NULL;
	struct err e = { 0 };

	ck_assert_msg(jv_parse_object(text, strlen(text), &doc, &e) == ERR_OK, "%s", e.msg);
	return doc;
}

START_TEST(test_jv_parse_errors)
{
	json_t *doc = (json_t *)0x1;
	struct err e = { 0 };

	ck_assert_int_eq(jv_parse_object("", 0, &doc, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "body");
	ck_assert_int_eq(jv_parse_object("{\"a\":1,\"a\":2}", 13, &doc, &e), ERR_INVALID);
	ck_assert_int_eq(jv_parse_object("[1]", 3, &doc, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "body");
	ck_assert_ptr_eq(doc, (json_t *)0x1); /* untouched on failure */
}
END_TEST

START_TEST(test_jv_numbers)
{
	json_t *doc = parse("{\"a\": 0.2385, \"b\": -1, \"c\": \"x\", \"n\": 7, \"r\": 7.5}");
	struct err e = { 0 };
	double x = 42.0;
	long long i = 42;
	bool present = true;

	ck_assert_int_eq(jv_number(doc, "p", "a", true, 0, true, 1, &x, &present, &e), ERR_OK);
	ck_assert(x == 0.2385 && present);
	x = 42.0;
	ck_assert_int_eq(jv_number(doc, "p", "b", true, 0, true, 1, &x, NULL, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "p.b");
	ck_assert(x == 42.0);
	ck_assert_int_eq(jv_number(doc, "p", "c", true, 0, true, 1, &x, NULL, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "p.c");
	ck_assert_int_eq(jv_number(doc, "", "zz", true, 0, true, 1, &x, NULL, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "zz");
	ck_assert_int_eq(jv_number(doc, "", "zz", false, 0, true, 1, &x, &present, &e), ERR_OK);
	ck_assert(!present && x == 42.0);
	ck_assert_int_eq(jv_integer(doc, "", "n", true, 1, 10, &i, NULL, &e), ERR_OK);
	ck_assert_int_eq(i, 7);
	ck_assert_int_eq(jv_integer(doc, "", "r", true, 1, 10, &i, NULL, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "r");
	ck_assert_int_eq(jv_integer(doc, "", "n", true, 8, 10, &i, NULL, &e), ERR_INVALID);
	json_decref(doc);
}
END_TEST

START_TEST(test_jv_unknown_keys)
{
	static const char *const allowed[] = { "a", "b", NULL };
	json_t *doc = parse("{\"a\": 1, \"bb\": 2}");
	struct err e = { 0 };

	ck_assert_int_eq(jv_only_keys(doc, "top", allowed, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "top.bb");
	ck_assert_ptr_nonnull(strstr(e.msg, "top.bb"));
	json_decref(doc);
}
END_TEST

static struct dataset_meta
meta(enum task task, double label)
{
	struct dataset_meta m = { .d = 5, .task = task, .n_rows = 4000 };

	m.bounds = (struct bounds){ .feature_linf = NAN,
				    .feature_l2 = 1.0,
				    .label = label,
				    .label_lo = NAN,
				    .label_hi = NAN };
	m.schema = (struct data_schema){ .d = m.d, .task = task, .bounds = m.bounds };
	strcpy(m.id, "00000000-0000-0000-0000-000000000001");
	strcpy(m.state, "sealed");
	return m;
}

#define GOOD_RUN                                                                                   \
	"{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": \"%s\"},"                  \
	" \"constraints\": {\"x\": {\"kind\": \"%s\", \"radius\": 3}},"                            \
	" \"privacy\": {\"epsilon\": %s, \"delta\": 1e-6}%s}"

/* Parse a run request built from GOOD_RUN; return the code and field. */
static enum err_code
try_run(const struct dataset_meta *m, const char *objective, const char *kind, const char *eps,
	const char *extra, struct err *e)
{
	char body[1024];
	struct run_request r = { 0 };
	json_t *doc;
	enum err_code rc;

	snprintf(body, sizeof(body), GOOD_RUN, objective, kind, eps, extra);
	doc = parse(body);
	rc = run_request_parse(doc, m, &r, e);
	if (rc == ERR_OK) {
		struct run_plan plan;

		ck_assert_ptr_nonnull(r.normalised);
		rc = alg_plan(r.alg, &r.spec, &plan, e);
	}
	run_request_clear(&r);
	json_decref(doc);
	return rc;
}

/* The "objective" object: every key parsed, unknown ones and bad values
 * refused by name, and the normalised document parses to the same spec. */
static enum err_code
try_objective(const struct dataset_meta *m, const char *objective, struct run_request *r,
	      struct err *e)
{
	char body[1024];
	json_t *doc;
	enum err_code rc;

	snprintf(body, sizeof(body),
		 "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": %s,"
		 " \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 3}},"
		 " \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}}",
		 objective);
	doc = parse(body);
	memset(e, 0, sizeof(*e));
	rc = run_request_parse(doc, m, r, e);
	json_decref(doc);
	return rc;
}

/* "params.grid" of select.random_stopping: parsed into the spec's grid
 * (indices into dp_sgd.subsampled's parameters), normalised, planned with
 * one representative per distinct event and a mixture of them; every bad
 * grid refused naming its field, and no other method accepts one. */
static enum err_code
try_grid(const struct dataset_meta *m, const char *algorithm, const char *params,
	 struct run_request *r, struct err *e)
{
	char body[1024];
	json_t *doc;
	enum err_code rc;

	snprintf(body, sizeof(body),
		 "{\"algorithm\": \"%s\", \"objective\": {\"name\": \"logistic\"},"
		 " \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 3}},"
		 " \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}, \"params\": %s}",
		 algorithm, params);
	doc = parse(body);
	memset(e, 0, sizeof(*e));
	memset(r, 0, sizeof(*r));
	rc = run_request_parse(doc, m, r, e);
	json_decref(doc);
	return rc;
}

START_TEST(test_run_request_grid)
{
	struct dataset_meta bin = meta(TASK_BINARY, NAN);
	const char *sel = "select.random_stopping";
	const struct {
		const char *alg;
		const char *params;
		const char *field;
	} bad[] = {
		{ "dp_sgd.subsampled", "{\"grid\": {\"clip\": [1]}}", "params.grid" },
		{ sel, "{\"grid\": []}", "params.grid" },
		{ sel, "{\"grid\": {}}", "params.grid" },
		{ sel, "{\"grid\": {\"nope\": [1]}}", "params.grid.nope" },
		{ sel, "{\"grid\": {\"clip\": 0.5}}", "params.grid.clip" },
		{ sel, "{\"grid\": {\"clip\": []}}", "params.grid.clip" },
		{ sel, "{\"grid\": {\"clip\": [0.5, -1]}}", "params.grid.clip[1]" },
		{ sel, "{\"grid\": {\"steps\": [2.5]}}", "params.grid.steps[0]" },
		{ sel, "{\"grid\": {\"average\": [1]}}", "params.grid.average[0]" },
		{ sel, "{\"grid\": {\"clip\": [1, 2, 3, 4, 5, 6, 7, 8, 9]}}", "params.grid.clip" },
		{ sel,
		  "{\"grid\": {\"clip\": [1, 2, 3, 4], \"steps\": [1, 2, 3, 4],"
		  " \"momentum\": [0, 0.1, 0.2, 0.3, 0.4]}}",
		  "params.grid" },
		{ sel,
		  "{\"grid\": {\"clip\": [1], \"steps\": [1], \"momentum\": [0],"
		  " \"average\": [true]}}",
		  "params.grid" },
	};
	struct run_request r;
	struct run_plan plan;
	struct err e;
	json_t *g;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(try_grid(&bin, bad[i].alg, bad[i].params, &r, &e) == ERR_INVALID,
			      "%s accepted", bad[i].params);
		ck_assert_msg(strcmp(e.field, bad[i].field) == 0, "%s: field %s, want %s",
			      bad[i].params, e.field, bad[i].field);
		run_request_clear(&r);
	}
	/* Plan-time refusals: a candidate the base refuses, a step grid beside it. */
	ck_assert_int_eq(
		try_grid(&bin, sel, "{\"grid\": {\"steps\": [10], \"epochs\": [2]}}", &r, &e),
		ERR_OK);
	ck_assert_int_eq(alg_plan(r.alg, &r.spec, &plan, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.grid");
	run_request_clear(&r);
	ck_assert_int_eq(try_grid(&bin, sel,
				  "{\"grid\": {\"clip\": [1]}, \"step_size_min\": 0.1,"
				  " \"step_size_max\": 1}",
				  &r, &e),
			 ERR_OK);
	ck_assert_int_eq(alg_plan(r.alg, &r.spec, &plan, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "params.grid");
	run_request_clear(&r);

	/* A good grid: 2 x 2 candidates, two step counts, so two distinct
	 * events under one mixture. */
	ck_assert_msg(try_grid(&bin, sel,
			       "{\"grid\": {\"clip\": [0.5, 0.125], \"steps\": [10, 40]}}", &r,
			       &e) == ERR_OK,
		      "%s (%s)", e.msg, e.field);
	ck_assert_uint_eq(r.spec.grid.n_dims, 2);
	ck_assert_uint_eq(r.spec.grid.dim[1].n, 2);
	ck_assert(r.spec.grid.dim[1].value[1] == 40.0);
	g = json_object_get(json_object_get(r.normalised, "params"), "grid");
	ck_assert(json_is_object(g) && json_array_size(json_object_get(g, "steps")) == 2);
	ck_assert(json_is_integer(json_array_get(json_object_get(g, "steps"), 0)));
	{
		/* The stored (normalised) request parses to the same grid. */
		struct run_request r2 = { 0 };

		ck_assert_int_eq(run_request_parse(r.normalised, &bin, &r2, &e), ERR_OK);
		ck_assert(memcmp(&r2.spec.grid, &r.spec.grid, sizeof(r.spec.grid)) == 0);
		run_request_clear(&r2);
	}
	ck_assert_msg(alg_plan(r.alg, &r.spec, &plan, &e) == ERR_OK, "%s", e.msg);
	ck_assert(run_plan_value(&plan, "candidates") == 4.0);
	ck_assert(run_plan_value(&plan, "candidate_events") == 2.0);
	ck_assert(run_plan_value(&plan, "steps_per_repetition") == 40.0);
	/* selection(parallel(mixture(self_composed x 10, self_composed x 40), score)) */
	ck_assert_int_eq(plan.event.node[0].type, DP_EVENT_SELECTION_POISSON);
	ck_assert_int_eq(plan.event.node[1].type, DP_EVENT_PARALLEL);
	ck_assert_int_eq(plan.event.node[2].type, DP_EVENT_MIXTURE);
	ck_assert_uint_eq(plan.event.node[2].n_children, 2);
	run_request_clear(&r);
}
END_TEST

START_TEST(test_run_request_objective)
{
	struct dataset_meta bin = meta(TASK_BINARY, NAN), reg = meta(TASK_REGRESSION, 2.0);
	const struct {
		const struct dataset_meta *m;
		const char *obj;
		const char *field;
	} bad[] = {
		{ &bin, "{\"name\": \"logistic\", \"bias\": 1}", "objective.bias" },
		{ &bin, "{\"name\": \"logistic\", \"intercept\": 1}", "objective.intercept" },
		{ &bin, "{\"name\": \"logistic\", \"ridge\": -0.1}", "objective.ridge" },
		{ &bin, "{\"name\": \"logistic\", \"l1\": \"x\"}", "objective.l1" },
		{ &bin, "{\"name\": \"logistic\", \"huber_delta\": 1}", "objective.huber_delta" },
		{ &reg, "{\"name\": \"huber\", \"huber_delta\": 0}", "objective.huber_delta" },
		{ &bin, "{\"name\": \"logistic\", \"class_prior\": [0.5]}",
		  "objective.class_prior" },
		{ &bin, "{\"name\": \"logistic\", \"class_prior\": [0.5, 0.6]}",
		  "objective.class_prior" },
		{ &bin, "{\"name\": \"logistic\", \"class_prior\": \"a\"}",
		  "objective.class_prior" },
		{ &reg, "{\"name\": \"huber\", \"class_prior\": [0.5, 0.5]}",
		  "objective.class_prior" },
		{ &bin, "{\"name\": \"logistic\", \"group_proportions\": [0.5, 0.5]}",
		  "objective.group_proportions" },
		{ &bin, "{\"name\": \"multiclass_logistic\"}", "objective.name" },
		{ &bin, "{\"name\": \"logistic\", \"params\": {\"a\": 1}}", "objective.params.a" },
	};
	struct run_request r = { 0 }, r2 = { 0 };
	struct err e;
	char *text;
	json_t *doc;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(try_objective(bad[i].m, bad[i].obj, &r, &e) == ERR_INVALID,
			      "%s accepted", bad[i].obj);
		ck_assert_msg(strcmp(e.field, bad[i].field) == 0, "%s: field %s, want %s",
			      bad[i].obj, e.field, bad[i].field);
	}
	ck_assert_int_eq(try_objective(&bin, "{\"name\": \"logistic\", \"params\": {}}", &r, &e),
			 ERR_OK);
	run_request_clear(&r);
	ck_assert_int_eq(try_objective(&bin,
				       "{\"name\": \"hinge\", \"intercept\": true, \"ridge\": 0.5,"
				       " \"l1\": 0.25, \"class_prior\": [0.25, 0.75]}",
				       &r, &e),
			 ERR_OK);
	ck_assert_str_eq(r.spec.objective.ops->name, "hinge");
	ck_assert(r.spec.objective.p.intercept && r.spec.objective.p.ridge == 0.5);
	ck_assert(r.spec.objective.p.l1 == 0.25 && r.spec.objective.p.n_class_prior == 2);
	ck_assert_uint_eq(r.spec.dim, 6);
	ck_assert_uint_eq(r.spec.schema.d, 5);
	/* The worker parses the stored normalised document: same spec. */
	text = json_dumps(r.normalised, JSON_COMPACT);
	doc = parse(text);
	ck_assert_int_eq(run_request_parse(doc, &bin, &r2, &e), ERR_OK);
	ck_assert(memcmp(&r.spec.objective, &r2.spec.objective, sizeof(r.spec.objective)) == 0);
	ck_assert_uint_eq(r2.spec.dim, 6);
	free(text);
	json_decref(doc);
	run_request_clear(&r);
	run_request_clear(&r2);
	ck_assert_int_eq(try_objective(&reg, "{\"name\": \"huber\"}", &r, &e), ERR_OK);
	ck_assert(json_real_value(json_object_get(json_object_get(r.normalised, "objective"),
						  "huber_delta")) == 1.0);
	run_request_clear(&r);
}
END_TEST

START_TEST(test_run_request_fields)
{
	struct dataset_meta bin = meta(TASK_BINARY, NAN), reg = meta(TASK_REGRESSION, NAN);
	struct err e = { 0 };

	ck_assert_int_eq(try_run(&bin, "logistic", "l2_ball", "0.5", "", &e), ERR_OK);
	ck_assert_int_eq(try_run(&bin, "logistic", "l1_ball", "0.5", "", &e), ERR_OK);
	ck_assert_int_eq(try_run(&bin, "logistic", "l2_ballx", "0.5", "", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.kind");
	ck_assert_int_eq(try_run(&bin, "hinge2", "l2_ball", "0.5", "", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "objective.name");
	ck_assert_int_eq(try_run(&reg, "logistic", "l2_ball", "0.5", "", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "objective.name");
	ck_assert_int_eq(try_run(&bin, "logistic", "l2_ball", "0", "", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "privacy.epsilon");
	ck_assert_int_eq(try_run(&bin, "logistic", "l2_ball", "-1", "", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "privacy.epsilon");
	ck_assert_int_eq(
		try_run(&bin, "logistic", "l2_ball", "0.5", ", \"params\": {\"bogus\": 1}", &e),
		ERR_INVALID);
	ck_assert_str_eq(e.field, "params.bogus");
	ck_assert_int_eq(try_run(&bin, "logistic", "l2_ball", "0.5",
				 ", \"params\": {\"batch_size\": -3}", &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "params.batch_size");
	ck_assert_int_eq(try_run(&bin, "logistic", "l2_ball", "0.5",
				 ", \"params\": {\"batch_size\": 4001}", &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "params.batch_size");
	ck_assert_int_eq(try_run(&bin, "logistic", "l2_ball", "0.5", ", \"extra\": {}", &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "extra");
	/* least squares on regression data needs the label bound */
	ck_assert_int_eq(try_run(&reg, "least_squares", "l2_ball", "0.5", "", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "bounds.label");
	reg.bounds.label = 2.0;
	reg.schema.bounds.label = 2.0;
	ck_assert_int_eq(try_run(&reg, "least_squares", "l2_ball", "0.5", "", &e), ERR_OK);
}
END_TEST

START_TEST(test_run_request_normalised_roundtrip)
{
	struct dataset_meta bin = meta(TASK_BINARY, NAN);
	struct run_request a = { 0 }, b = { 0 };
	struct run_plan pa, pb;
	struct err e = { 0 };
	json_t *doc =
		parse("{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": "
		      "\"logistic\"}, \"constraints\": {\"x\": {\"kind\": \"l2_ball\", "
		      "\"radius\": 2.5212}}, \"privacy\": {\"epsilon\": 0.7, \"delta\": 1e-7}}");

	/* The worker re-parses the stored normalised request: same spec, same plan. */
	ck_assert_int_eq(run_request_parse(doc, &bin, &a, &e), ERR_OK);
	ck_assert_int_eq(run_request_parse(a.normalised, &bin, &b, &e), ERR_OK);
	ck_assert_int_eq(alg_plan(a.alg, &a.spec, &pa, &e), ERR_OK);
	ck_assert_int_eq(alg_plan(b.alg, &b.spec, &pb, &e), ERR_OK);
	ck_assert_uint_eq(pa.steps, pb.steps);
	ck_assert(dp_event_equal(&pa.event, &pb.event));
	ck_assert(memcmp(a.spec.params, b.spec.params, sizeof(a.spec.params)) == 0);
	run_request_clear(&a);
	run_request_clear(&b);
	json_decref(doc);
}
END_TEST

START_TEST(test_clip_rows)
{
	struct bounds b = { 0.5, 0.6, 2.0, NAN, NAN };
	struct err e = { 0 };
	double x[3] = { 3.0, -0.2385, 0.4 }, y = 7.0, n2 = 0.0;

	ck_assert_int_eq(upload_clip_row(&b, TASK_REGRESSION, x, 3, &y, &e), ERR_OK);
	for (int j = 0; j < 3; j++) {
		ck_assert(fabs(x[j]) <= 0.5);
		n2 += x[j] * x[j];
	}
	ck_assert(sqrt(n2) <= 0.6);
	ck_assert(y == 2.0);
	y = 0.5;
	ck_assert_int_eq(upload_clip_row(&b, TASK_BINARY, x, 3, &y, &e), ERR_INVALID);
	y = -1.0;
	ck_assert_int_eq(upload_clip_row(&b, TASK_BINARY, x, 3, &y, &e), ERR_OK);
	/* huge values: the l2 rescale must not overflow to NaN */
	{
		struct bounds l2only = { NAN, 1.0, NAN, NAN, NAN };
		double big[2] = { 1e200, -3e200 };

		y = 1.0;
		ck_assert_int_eq(upload_clip_row(&l2only, TASK_BINARY, big, 2, &y, &e), ERR_OK);
		ck_assert(isfinite(big[0]) && isfinite(big[1]));
		ck_assert(sqrt(big[0] * big[0] + big[1] * big[1]) <= 1.0);
	}
}
END_TEST

START_TEST(test_clip_rows_random_l2)
{
	struct bounds b = { NAN, 0.7331, NAN, NAN, NAN };
	struct err e = { 0 };
	unsigned s = 12345;

	for (int t = 0; t < 20000; t++) {
		double x[7], y = 1.0, n2 = 0.0;

		for (int j = 0; j < 7; j++) {
			s = s * 1103515245u + 12345u;
			x[j] = ((double)(s >> 8) / (1 << 24) - 0.5) * (t % 13 + 1);
		}
		ck_assert_int_eq(upload_clip_row(&b, TASK_BINARY, x, 7, &y, &e), ERR_OK);
		for (int j = 0; j < 7; j++)
			n2 += x[j] * x[j];
		ck_assert_msg(sqrt(n2) <= b.feature_l2, "row %d has norm %.17g", t, sqrt(n2));
	}
}
END_TEST

START_TEST(test_charge_texts)
{
	char eps[32], delta[32];
	struct err e = { 0 };

	ck_assert_int_eq(ledger_charge_text(0.1, 1e-6, eps, delta, &e), ERR_OK);
	ck_assert_str_eq(eps, "0.1");
	ck_assert_str_eq(delta, "1e-06");
	ck_assert_int_eq(ledger_charge_text(1.0 / 3.0, 0, eps, delta, &e), ERR_OK);
	ck_assert(strtod(eps, NULL) == 1.0 / 3.0);
	/* fail closed: nothing non-finite, negative or zero is charged */
	ck_assert_int_eq(ledger_charge_text(0.0, 0, eps, delta, &e), ERR_INVALID);
	ck_assert_int_eq(ledger_charge_text(-10.0, 0, eps, delta, &e), ERR_INVALID);
	ck_assert_int_eq(ledger_charge_text(NAN, 0, eps, delta, &e), ERR_INVALID);
	ck_assert_int_eq(ledger_charge_text(INFINITY, 0, eps, delta, &e), ERR_INVALID);
	ck_assert_int_eq(ledger_charge_text(0.5, -1e-9, eps, delta, &e), ERR_INVALID);
	ck_assert_int_eq(ledger_charge_text(0.5, NAN, eps, delta, &e), ERR_INVALID);
	ck_assert_int_eq(ledger_charge_text(0.5, 1.0, eps, delta, &e), ERR_INVALID);
}
END_TEST

START_TEST(test_decimal_text_roundtrips)
{
	unsigned long long s = 88172645463325252ULL;

	for (int i = 0; i < 100000; i++) {
		char t[32];
		double v;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		v = (double)(s >> 11) * 0x1.0p-53 * pow(10.0, (double)(i % 20) - 10.0);
		db_double_text(v, t);
		ck_assert_msg(strtod(t, NULL) == v, "%s does not read back as %.17g", t, v);
	}
}
END_TEST

START_TEST(test_routes)
{
	char id[37], allow[64];

	ck_assert_ptr_nonnull(router_match("GET", "/healthz", id, allow));
	ck_assert_ptr_null(router_match("POST", "/healthz", id, allow));
	ck_assert_str_eq(allow, "GET");
	ck_assert_ptr_null(router_match("PUT", "/v1/datasets/x", id, allow));
	ck_assert_str_eq(allow, "GET, PATCH, DELETE");
	ck_assert_ptr_null(router_match("GET", "/nope", id, allow));
	ck_assert_str_eq(allow, "");
	ck_assert_ptr_nonnull(router_match(
		"GET", "/v1/datasets/00000000-0000-0000-0000-00000000000a/runs", id, allow));
	ck_assert_str_eq(id, "00000000-0000-0000-0000-00000000000a");
	ck_assert_ptr_null(router_match("GET", "/v1/datasets//runs", id, allow));
	ck_assert_ptr_null(router_match("GET", "/v1/datasets/a/b/runs", id, allow));
}
END_TEST

START_TEST(test_status_map)
{
	static const unsigned want[ERR__COUNT] = {
		[ERR_OK] = 200,           [ERR_NOMEM] = 500,
		[ERR_INVALID] = 400,      [ERR_UNAUTHENTICATED] = 401,
		[ERR_FORBIDDEN] = 403,    [ERR_NOT_FOUND] = 404,
		[ERR_METHOD] = 405,       [ERR_CONFLICT] = 409,
		[ERR_BUDGET] = 409,       [ERR_MODE] = 409,
		[ERR_TOO_LARGE] = 413,    [ERR_MEDIA_TYPE] = 415,
		[ERR_NUMERIC] = 422,      [ERR_CANCELLED] = 500,
		[ERR_DB] = 503,           [ERR_INTERNAL] = 500,
		[ERR_RATE_LIMITED] = 429, [ERR_TOO_SMALL] = 422,
	};

	for (int c = 0; c < ERR__COUNT; c++) {
		ck_assert_uint_eq(http_status_for((enum err_code)c), want[c]);
		ck_assert_str_ne(err_code_name((enum err_code)c), "");
		for (int d = 0; d < c; d++)
			ck_assert_str_ne(err_code_name((enum err_code)c),
					 err_code_name((enum err_code)d));
	}
}
END_TEST

START_TEST(test_event_json_roundtrip)
{
	const char *text =
		"{\"type\": \"composed\", \"events\": ["
		" {\"type\": \"self_composed\", \"count\": 3000, \"event\":"
		"  {\"type\": \"sampled_without_replacement\", \"n\": 60000, \"batch\": 150,"
		"   \"event\": {\"type\": \"gaussian\", \"noise_multiplier\": 1.3}}},"
		" {\"type\": \"parallel\", \"parts\": 7, \"events\": ["
		"  {\"type\": \"laplace\", \"noise_multiplier\": 0.2385},"
		"  {\"type\": \"bounded_range\", \"epsilon\": 0.5212}]},"
		" {\"type\": \"zcdp\", \"rho\": 0.01}, {\"type\": \"pure\", \"epsilon\": 0.1},"
		" {\"type\": \"mixture\", \"events\": ["
		"  {\"type\": \"gaussian\", \"noise_multiplier\": 2},"
		"  {\"type\": \"self_composed\", \"count\": 4, \"event\":"
		"   {\"type\": \"gaussian\", \"noise_multiplier\": 4}}]}]}";
	struct dp_event_tree t, u;
	struct err e = { 0 };
	json_t *doc = parse(text), *back;

	ck_assert_msg(dp_event_from_json(doc, "event", &t, &e) == ERR_OK, "%s (%s)", e.msg,
		      e.field);
	ck_assert_uint_eq(t.n_nodes, 13);
	ck_assert(t.node[0].type == DP_EVENT_COMPOSED && t.node[0].n_children == 5);
	ck_assert(t.node[5].type == DP_EVENT_MIXTURE && t.node[5].n_children == 2);
	ck_assert(t.node[0].relation == DP_REPLACE_ONE);
	back = dp_event_to_json(&t);
	ck_assert_int_eq(dp_event_from_json(back, "event", &u, &e), ERR_OK);
	ck_assert(dp_event_equal(&t, &u));
	json_decref(back);
	json_decref(doc);
}
END_TEST

static enum err_code try_event(const char *text, struct err *e);

/* The private-selection events round-trip and name their bad fields. */
START_TEST(test_event_json_selection)
{
	struct err e = { 0 };
	struct dp_event_tree t, u;
	json_t *doc = parse("{\"type\": \"selection_tnb\", \"eta\": 1, \"gamma\": 0.1,"
			    " \"event\": {\"type\": \"gaussian\", \"noise_multiplier\": 3}}");
	json_t *back;

	ck_assert_msg(dp_event_from_json(doc, "event", &t, &e) == ERR_OK, "%s", e.msg);
	ck_assert(t.node[0].type == DP_EVENT_SELECTION_TNB && t.node[0].eta == 1.0 &&
		  t.node[0].gamma == 0.1 && t.n_nodes == 2);
	back = dp_event_to_json(&t);
	ck_assert_int_eq(dp_event_from_json(back, "event", &u, &e), ERR_OK);
	ck_assert(dp_event_equal(&t, &u));
	json_decref(back);
	json_decref(doc);
	ck_assert_int_eq(try_event("{\"type\": \"selection_poisson\", \"mu\": 4,"
				   " \"event\": {\"type\": \"pure\", \"epsilon\": 1}}",
				   &e),
			 ERR_OK);
	ck_assert_int_eq(try_event("{\"type\": \"selection_tnb\", \"eta\": 1, \"gamma\": 1,"
				   " \"event\": {\"type\": \"pure\", \"epsilon\": 1}}",
				   &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "event.gamma");
	ck_assert_int_eq(try_event("{\"type\": \"selection_tnb\", \"eta\": -1, \"gamma\": 0.5,"
				   " \"event\": {\"type\": \"pure\", \"epsilon\": 1}}",
				   &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "event.eta");
	ck_assert_int_eq(try_event("{\"type\": \"selection_poisson\", \"mu\": 0,"
				   " \"event\": {\"type\": \"pure\", \"epsilon\": 1}}",
				   &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "event.mu");
	ck_assert_int_eq(try_event("{\"type\": \"selection_poisson\", \"mu\": 2}", &e),
			 ERR_INVALID);
}
END_TEST

static enum err_code
try_event(const char *text, struct err *e)
{
	struct dp_event_tree t;
	json_t *doc = parse(text);
	enum err_code rc = dp_event_from_json(doc, "event", &t, e);

	json_decref(doc);
	return rc;
}

START_TEST(test_event_json_errors)
{
	struct err e = { 0 };

	ck_assert_int_eq(try_event("{\"type\": \"gauss\"}", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "event.type");
	ck_assert_int_eq(try_event("{\"type\": \"gaussian\"}", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "event.noise_multiplier");
	ck_assert_int_eq(try_event("{\"type\": \"gaussian\", \"noise_multiplier\": -1}", &e),
			 ERR_INVALID);
	ck_assert_int_eq(try_event("{\"type\": \"composed\", \"events\": []}", &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "event.events");
	ck_assert_int_eq(try_event("{\"type\": \"composed\", \"events\": [{\"type\": "
				   "\"pure\", \"epsilon\": 1, \"relation\": \"add_remove\"}]}",
				   &e),
			 ERR_INVALID); /* one relation per tree */
	ck_assert_int_eq(try_event("{\"type\": \"sampled_without_replacement\", \"n\": 10, "
				   "\"batch\": 11, \"event\": {\"type\": \"pure\", "
				   "\"epsilon\": 1}}",
				   &e),
			 ERR_INVALID);
	ck_assert_int_eq(try_event("{\"type\": \"self_composed\", \"count\": 2, \"event\": "
				   "{\"type\": \"pure\", \"epsilon\": 1, \"x\": 1}}",
				   &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "event.event.x");
}
END_TEST

START_TEST(test_event_join_and_wrap)
{
	struct dp_event_tree a, b, c, j;
	const struct dp_event_tree *parts[3] = { &a, &b, &c };
	struct dp_event sc = { .type = DP_EVENT_SELF_COMPOSED, .count = 5 };
	struct err e = { 0 };

	dp_event_gaussian(&a, DP_REPLACE_ONE, 2.0);
	ck_assert_int_eq(dp_event_wrap(&a, &sc, &e), ERR_OK);
	dp_event_pure(&b, DP_REPLACE_ONE, 0.25);
	dp_event_laplace(&c, DP_REPLACE_ONE, 3.0);
	ck_assert_int_eq(dp_event_wrap(&c, &sc, &e), ERR_OK);
	ck_assert_int_eq(dp_event_join(&j, DP_EVENT_COMPOSED, parts, 3, &e), ERR_OK);
	ck_assert_int_eq(dp_event_check(&j, &e), ERR_OK);
	ck_assert_uint_eq(j.n_nodes, 6);
	ck_assert(j.node[j.node[1].first_child].type == DP_EVENT_GAUSSIAN);
	ck_assert(j.node[j.node[1].first_child].noise_multiplier == 2.0);
	ck_assert(j.node[2].type == DP_EVENT_PURE);
	ck_assert(j.node[j.node[3].first_child].type == DP_EVENT_LAPLACE);
	dp_event_pure(&b, DP_ADD_REMOVE, 0.25);
	ck_assert_int_eq(dp_event_join(&j, DP_EVENT_COMPOSED, parts, 3, &e), ERR_INVALID);
}
END_TEST

/* A renyi ledger cannot charge an event without a Rényi curve: 409
 * accounting_mode_unsupported naming the algorithm, never a zero cost. */
START_TEST(test_renyi_refuses_approx)
{
	struct filter f;
	struct dp_event_tree ev;
	double rdp[FILTER_MAX_ORDERS];
	struct err e = { 0 };

	ck_assert_int_eq(filter_init(&f, 1.0, 1e-5, &e), ERR_OK);
	dp_event_approx(&ev, DP_REPLACE_ONE, 0.5, 1e-7);
	ck_assert_int_eq(ledger_rdp_on_filter(&f, &ev, rdp, &e), ERR_MODE);
	ck_assert_str_eq(e.field, "algorithm");
	ck_assert_str_eq(err_code_name(e.code), "accounting_mode_unsupported");
	ck_assert_uint_eq(http_status_for(e.code), 409);
	/* a Gaussian's curve is charged rounded up */
	dp_event_gaussian(&ev, DP_REPLACE_ONE, 3.0);
	ck_assert_int_eq(ledger_rdp_on_filter(&f, &ev, rdp, &e), ERR_OK);
	for (unsigned i = 0; i < f.m; i++)
		ck_assert(rdp[i] > f.order[i] / 18.0 && rdp[i] <= f.order[i] / 18.0 * (1 + 1e-15));
}
END_TEST

static Suite *
validation_suite(void)
{
	Suite *s = suite_create("validation");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_jv_parse_errors);
	tcase_add_test(tc, test_run_request_grid);
	tcase_add_test(tc, test_jv_numbers);
	tcase_add_test(tc, test_jv_unknown_keys);
	tcase_add_test(tc, test_run_request_fields);
	tcase_add_test(tc, test_run_request_objective);
	tcase_add_test(tc, test_run_request_normalised_roundtrip);
	tcase_add_test(tc, test_clip_rows);
	tcase_add_test(tc, test_clip_rows_random_l2);
	tcase_add_test(tc, test_charge_texts);
	tcase_add_test(tc, test_decimal_text_roundtrips);
	tcase_add_test(tc, test_routes);
	tcase_add_test(tc, test_status_map);
	tcase_add_test(tc, test_event_json_roundtrip);
	tcase_add_test(tc, test_event_json_errors);
	tcase_add_test(tc, test_event_json_selection);
	tcase_add_test(tc, test_event_join_and_wrap);
	tcase_add_test(tc, test_renyi_refuses_approx);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(validation_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
