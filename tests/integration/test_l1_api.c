/*
 * test_l1_api.c - the l1-geometry methods through the API (issue 12):
 * mirror_descent.noisy, mirror_descent.localized, frank_wolfe.private_vr
 * and frank_wolfe.private are in the catalogue (the variant's named values
 * and its ledger_modes rule included), each runs at its defaults over an
 * l1 ball to a model inside it with the documented event; the approx
 * variant on a 'renyi' dataset is 409 accounting_mode_unsupported naming
 * params.variant and suggesting pure, with nothing charged, and runs on a
 * 'basic' one; a privacy target too small for the dataset's size is 422
 * privacy_too_small_for_n naming privacy.epsilon, before any charge.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static struct h_server srv;
static char db[512];
static char owner[128];

static void
setup(void)
{
	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, NULL);
}

static void
teardown(void)
{
	h_server_stop_fixture(&srv, 30.0);
}

#define SCHEMA(name, mode)                                                                         \
	"{\"name\": \"" name "\", \"schema\": {\"features\": 4, \"task\": \"binary\"},"            \
	" \"bounds\": {\"feature_l2\": 1, \"feature_linf\": 1},"                                   \
	" \"budget\": {\"epsilon\": 20, \"delta\": 1e-5}, \"accounting_mode\": \"" mode "\"}"
#define RUN(alg, eps, params)                                                                      \
	"{\"algorithm\": \"" alg "\", \"objective\": {\"name\": \"logistic\"},"                    \
	" \"constraints\": {\"x\": {\"kind\": \"l1_ball\", \"radius\": 1}},"                       \
	" \"privacy\": {\"epsilon\": " eps ", \"delta\": 1e-6}, \"params\": {" params "}}"

static const char *const l1_methods[] = { "mirror_descent.noisy", "mirror_descent.localized",
					  "frank_wolfe.private_vr", "frank_wolfe.private" };

/* The catalogue entry of name, or fails; borrowed from algs. */
static json_t *
entry(json_t *algs, const char *name)
{
	size_t i;
	json_t *x;

	json_array_foreach (h_get(algs, "algorithms"), i, x)
		if (strcmp(json_string_value(json_object_get(x, "name")), name) == 0)
			return x;
	ck_abort_msg("%s is not in the catalogue", name);
	return NULL;
}

/* ||result.x||_1 of a succeeded run. */
static double
result_l1(json_t *run)
{
	double s = 0.0;
	size_t i;
	json_t *v;

	json_array_foreach (h_get(run, "result.x"), i, v)
		s += fabs(json_number_value(v));
	return s;
}

START_TEST(test_catalogue)
{
	json_t *algs = h_json(&srv, "GET", "/v1/algorithms", owner, NULL, 200), *vr, *p, *rule;
	size_t i;
	bool have_variant = false;

	for (size_t k = 0; k < sizeof(l1_methods) / sizeof(l1_methods[0]); k++)
		ck_assert_ptr_nonnull(entry(algs, l1_methods[k]));
	vr = entry(algs, "frank_wolfe.private_vr");
	json_array_foreach (h_get(vr, "params"), i, p) {
		if (strcmp(json_string_value(json_object_get(p, "name")), "variant") != 0)
			continue;
		have_variant = true;
		ck_assert_str_eq(
			json_string_value(json_array_get(json_object_get(p, "choices"), 0)),
			"pure");
		ck_assert_str_eq(
			json_string_value(json_array_get(json_object_get(p, "choices"), 1)),
			"approx");
	}
	ck_assert(have_variant);
	ck_assert_int_eq(json_array_size(h_get(vr, "ledger_modes.default")), 2);
	rule = json_array_get(h_get(vr, "ledger_modes.rules"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(rule, "param")), "variant");
	ck_assert_str_eq(json_string_value(json_object_get(rule, "value")), "approx");
	ck_assert_int_eq(json_array_size(json_object_get(rule, "modes")), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(rule, "modes"), 0)),
			 "basic");
	json_decref(algs);
}
END_TEST

/* Each method at its defaults on a 'renyi' dataset: succeeded, a model in
 * the l1 ball, the documented root event. */
START_TEST(test_runs_renyi)
{
	static const char *const bodies[] = {
		RUN("mirror_descent.noisy", "1", ""),
		RUN("mirror_descent.localized", "1", ""),
		RUN("frank_wolfe.private_vr", "1", "\"variant\": \"pure\""),
		RUN("frank_wolfe.private", "1", ""),
	};
	static const char *const root[] = { "self_composed", "parallel", "parallel",
					    "self_composed" };
	const char *approx = RUN("frank_wolfe.private_vr", "1", "\"variant\": \"approx\"");
	char a[40], run[40], path[128], before[4096], after[4096];
	char *data = h_csv(3000, 4, true, 0x11);
	json_t *j;

	h_dataset_create(&srv, owner, SCHEMA("l1-renyi", "renyi"), a);
	h_upload(&srv, owner, a, data);
	for (size_t k = 0; k < sizeof(bodies) / sizeof(bodies[0]); k++) {
		json_decref(h_run_create(&srv, owner, a, bodies[k], run));
		j = h_run_wait(&srv, owner, run, "succeeded", 120);
		ck_assert_msg(result_l1(j) <= 1.0 + 1e-9, "%s: ||x||_1 = %g", l1_methods[k],
			      result_l1(j));
		ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), root[k]);
		if (k == 2) /* the stored request holds the variant's name */
			ck_assert_str_eq(json_string_value(h_get(j, "request.params.variant")),
					 "pure");
		json_decref(j);
	}
	/* approx on renyi: refused before any charge, naming the variant */
	h_ledger_snapshot(db, before, sizeof(before));
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	h_expect_error(&srv, "POST", path, owner, "application/json", approx, strlen(approx), NULL,
		       409, "accounting_mode_unsupported", "params.variant", "'pure'");
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(before, after);
	free(data);
}
END_TEST

/* The approx variant on a 'basic' dataset: charged as an approx event. */
START_TEST(test_approx_basic)
{
	const char *approx = RUN("frank_wolfe.private_vr", "1", "\"variant\": \"approx\"");
	char a[40], run[40];
	char *data = h_csv(3000, 4, true, 0x12);
	json_t *j;

	h_dataset_create(&srv, owner, SCHEMA("l1-basic", "basic"), a);
	h_upload(&srv, owner, a, data);
	json_decref(h_run_create(&srv, owner, a, approx, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 120);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), "approx");
	ck_assert(result_l1(j) <= 1.0 + 1e-9);
	json_decref(j);
	free(data);
}
END_TEST

/* Too small a target for n: 422 privacy_too_small_for_n on the estimate
 * and on submission, nothing charged. */
START_TEST(test_too_small)
{
	const char *tiny = RUN("frank_wolfe.private_vr", "0.001", "");
	char a[40], path[128], before[4096], after[4096];
	char *data = h_csv(40, 4, true, 0x13);

	h_dataset_create(&srv, owner, SCHEMA("l1-tiny", "basic"), a);
	h_upload(&srv, owner, a, data);
	h_ledger_snapshot(db, before, sizeof(before));
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	h_expect_error(&srv, "POST", path, owner, "application/json", tiny, strlen(tiny), NULL, 422,
		       "privacy_too_small_for_n", "privacy.epsilon", NULL);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", a);
	h_expect_error(&srv, "POST", path, owner, "application/json", tiny, strlen(tiny), NULL, 422,
		       "privacy_too_small_for_n", "privacy.epsilon", NULL);
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(before, after);
	free(data);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("l1_api");
	TCase *tc = tcase_create("l1_api");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_catalogue);
	tcase_add_test(tc, test_runs_renyi);
	tcase_add_test(tc, test_approx_basic);
	tcase_add_test(tc, test_too_small);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
