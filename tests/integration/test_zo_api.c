/*
 * test_zo_api.c - the zeroth-order methods' relu_net objective through the
 * API (docs/algorithms/zeroth-order.md): the catalogue lists it for both
 * methods with the oracle "value" and its parameters width and init_seed;
 * zeroth_order.o2nc_tree and zeroth_order.naive runs succeed on a
 * regression dataset, returning (d + intercept) * width coordinates, the
 * normalised objective recording the width and the init_seed (default 0,
 * or the request's); the refusals name their fields before any charge
 * (objective.width missing, 0, too large, not an integer, or on another
 * objective; objective.init_seed negative; params.start with relu_net);
 * and no model (400 naming objective.name).
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

#define DATASET                                                                                    \
	"{\"name\": \"net\", \"schema\": {\"features\": 3, \"task\": \"regression\"},"             \
	" \"bounds\": {\"feature_l2\": 1, \"label\": 1}, \"budget\": {\"epsilon\": 20, "           \
	"\"delta\": 1e-5}, \"accounting_mode\": \"basic\"}"
#define RUN(alg, objective, params)                                                                \
	"{\"algorithm\": \"" alg "\", \"objective\": " objective ","                               \
	" \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 10}},"                      \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}, \"params\": " params "}"

START_TEST(test_catalogue)
{
	json_t *algs = h_json(&srv, "GET", "/v1/algorithms", owner, NULL, 200), *a, *o, *p;
	size_t i, k, l;
	int found = 0;

	json_array_foreach (h_get(algs, "algorithms"), i, a) {
		const char *name = json_string_value(json_object_get(a, "name"));

		if (strncmp(name, "zeroth_order.", 13) != 0)
			continue;
		json_array_foreach (json_object_get(a, "objectives"), k, o) {
			bool width = false, seed = false;

			if (strcmp(json_string_value(json_object_get(o, "name")), "relu_net") != 0)
				continue;
			found++;
			ck_assert_str_eq(json_string_value(json_object_get(o, "oracle")), "value");
			json_array_foreach (json_object_get(o, "params"), l, p) {
				width |= strcmp(json_string_value(p), "width") == 0;
				seed |= strcmp(json_string_value(p), "init_seed") == 0;
			}
			ck_assert(width && seed);
		}
	}
	ck_assert_int_eq(found, 2);
	json_decref(algs);
}
END_TEST

static void
refused(const char *ds, const char *body, const char *field)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 400,
		       "invalid_request", field, NULL);
}

START_TEST(test_runs)
{
	char ds[40], run[40], path[128], before[4096], after[4096];
	char *csv = h_csv(3000, 3, false, 0x5eed);
	json_t *j;

	h_dataset_create(&srv, owner, DATASET, ds);
	h_upload(&srv, owner, ds, csv);

	json_decref(h_run_create(&srv, owner, ds,
				 RUN("zeroth_order.o2nc_tree",
				     "{\"name\": \"relu_net\", \"width\": 3, \"intercept\": true}",
				     "{}"),
				 run));
	j = h_run_wait(&srv, owner, run, "succeeded", 120);
	ck_assert_int_eq(json_array_size(h_get(j, "result.x")), 12);
	ck_assert_int_eq(json_integer_value(h_get(j, "request.objective.width")), 3);
	ck_assert_int_eq(json_integer_value(h_get(j, "request.objective.init_seed")), 0);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), "gaussian");
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/runs/%s/model", run);
	h_expect_error(&srv, "GET", path, owner, NULL, NULL, 0, NULL, 400, "invalid_request",
		       "objective.name", "does not predict");

	json_decref(
		h_run_create(&srv, owner, ds,
			     RUN("zeroth_order.naive",
				 "{\"name\": \"relu_net\", \"width\": 2, \"init_seed\": 5}", "{}"),
			     run));
	j = h_run_wait(&srv, owner, run, "succeeded", 120);
	ck_assert_int_eq(json_array_size(h_get(j, "result.x")), 6);
	ck_assert_int_eq(json_integer_value(h_get(j, "request.objective.width")), 2);
	ck_assert_int_eq(json_integer_value(h_get(j, "request.objective.init_seed")), 5);
	for (size_t k = 0; k < 6; k++)
		ck_assert(isfinite(json_number_value(json_array_get(h_get(j, "result.x"), k))));
	json_decref(j);

	/* refusals, before any charge */
	h_ledger_snapshot(db, before, sizeof(before));
	refused(ds, RUN("zeroth_order.o2nc_tree", "{\"name\": \"relu_net\"}", "{}"),
		"objective.width");
	refused(ds, RUN("zeroth_order.o2nc_tree", "{\"name\": \"relu_net\", \"width\": 0}", "{}"),
		"objective.width");
	refused(ds, RUN("zeroth_order.o2nc_tree", "{\"name\": \"relu_net\", \"width\": 257}", "{}"),
		"objective.width");
	refused(ds, RUN("zeroth_order.naive", "{\"name\": \"relu_net\", \"width\": \"two\"}", "{}"),
		"objective.width");
	refused(ds, RUN("zeroth_order.naive", "{\"name\": \"relu_neuron\", \"width\": 2}", "{}"),
		"objective.width");
	refused(ds,
		RUN("zeroth_order.naive",
		    "{\"name\": \"relu_net\", \"width\": 2, \"init_seed\": -1}", "{}"),
		"objective.init_seed");
	refused(ds,
		RUN("zeroth_order.o2nc_tree", "{\"name\": \"relu_net\", \"width\": 2}",
		    "{\"start\": 0.5}"),
		"params.start");
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(before, after);
	free(csv);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("zo_api");
	TCase *tc = tcase_create("zo_api");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_catalogue);
	tcase_add_test(tc, test_runs);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
