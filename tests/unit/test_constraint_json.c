/*
 * test_constraint_json.c - the service's table of constraint JSON keys
 * (service/constraint_json.c) against the algorithms' table of operations
 * (algorithms/constraint.c), kind by kind: every kind has a row in both;
 * the table's example written as JSON has exactly "kind" and the row's
 * keys and parses back to the same set; a missing key, an unknown key, an
 * unknown or unsupported kind are refused naming the field.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "constraint_json.h"

static size_t
count_keys(const char *const *k)
{
	size_t n = 0;

	while (k[n] != NULL)
		n++;
	return n;
}

/* Same set: same kind and the same radii in l1, l2, linf in a few
 * dimensions, same membership of a few points (the fields a kind ignores
 * may differ). */
static void
assert_same_set(const struct constraint *a, const struct constraint *b, const char *name)
{
	static const double pts[][3] = {
		{ 0, 0, 0 }, { 0.3, -0.2, 0.1 }, { 1, 0, 0 }, { 2, 2, 2 }
	};

	ck_assert_int_eq(a->kind, b->kind);
	if (a->kind == CONSTRAINT_POLYTOPE) {
		/* the same list, bit for bit, and the same centre */
		ck_assert_uint_eq(a->n_vertices, b->n_vertices);
		ck_assert_uint_eq(a->vertex_dim, b->vertex_dim);
		ck_assert(memcmp(a->vertices, b->vertices,
				 a->n_vertices * a->vertex_dim * sizeof(double)) == 0);
		ck_assert(memcmp(a->centre, b->centre, a->vertex_dim * sizeof(double)) == 0);
		ck_assert(a->centre_radius == b->centre_radius);
		return;
	}
	for (size_t d = 1; d <= 5; d += 2) {
		ck_assert_msg(constraint_radius(a, d, 1.0) == constraint_radius(b, d, 1.0), "%s",
			      name);
		ck_assert_msg(constraint_radius(a, d, 2.0) == constraint_radius(b, d, 2.0), "%s",
			      name);
		ck_assert_msg(constraint_radius(a, d, INFINITY) ==
				      constraint_radius(b, d, INFINITY),
			      "%s", name);
	}
	for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++)
		ck_assert_msg(constraint_contains(a, pts[i], 3, 0.0, NULL) ==
				      constraint_contains(b, pts[i], 3, 0.0, NULL),
			      "%s: point %zu", name, i);
}

START_TEST(test_every_kind_round_trips)
{
	const struct constraint_ops *ops = constraint_ops_of((enum constraint_kind)_i);
	const struct constraint_json_ops *jops = constraint_json_ops_of((enum constraint_kind)_i);
	struct err e = { 0 };
	struct constraint c = { 0 };
	json_t *doc, *norm = NULL;
	double *owned = NULL;
	size_t nk;

	ck_assert_ptr_nonnull(ops);
	ck_assert_msg(
		jops != NULL && jops->keys != NULL && jops->parse != NULL && jops->to_json != NULL,
		"kind %d (%s) has no complete row in service/constraint_json.c", _i, ops->name);
	nk = count_keys(jops->keys);
	ck_assert_uint_ge(nk, 1);
	doc = constraint_json(&ops->example);
	ck_assert_ptr_nonnull(doc);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "kind")), ops->name);
	ck_assert_uint_eq(json_object_size(doc), 1 + nk);
	for (size_t i = 0; i < nk; i++)
		ck_assert_msg(json_is_number(json_object_get(doc, jops->keys[i])) ||
				      json_is_array(json_object_get(doc, jops->keys[i])),
			      "%s: no %s", ops->name, jops->keys[i]);

	ck_assert_msg(constraint_json_parse(doc, "constraints.x", "t", ~0u, &c, &owned, &norm,
					    &e) == ERR_OK,
		      "%s: %s", ops->name, e.msg);
	assert_same_set(&c, &ops->example, ops->name);
	ck_assert(json_equal(norm, doc));
	ck_assert((owned != NULL) == (_i == CONSTRAINT_POLYTOPE));
	free(owned);
	json_decref(norm);

	/* Each key missing is refused, naming it. */
	for (size_t i = 0; i < nk; i++) {
		json_t *less = json_deep_copy(doc);
		char want[96];

		json_object_del(less, jops->keys[i]);
		ck_assert_int_eq(constraint_json_parse(less, "constraints.y", "t", ~0u, &c, &owned,
						       &norm, &e),
				 ERR_INVALID);
		snprintf(want, sizeof(want), "constraints.y.%s", jops->keys[i]);
		ck_assert_str_eq(e.field, want);
		ck_assert_ptr_null(norm);
		json_decref(less);
	}
	/* An unknown key is refused. */
	json_object_set_new(doc, "radiuss", json_real(1.0));
	ck_assert_int_eq(
		constraint_json_parse(doc, "constraints.x", "t", ~0u, &c, &owned, &norm, &e),
		ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.radiuss");
	json_object_del(doc, "radiuss");
	/* A kind the method does not support is refused by name. */
	ck_assert_int_eq(constraint_json_parse(doc, "constraints.x", "m.x", ~(1u << _i), &c, &owned,
					       &norm, &e),
			 ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.kind");
	ck_assert_ptr_nonnull(strstr(e.msg, "m.x does not support"));
	json_decref(doc);
}
END_TEST

START_TEST(test_unknown_kind_lists_every_kind)
{
	struct err e = { 0 };
	struct constraint c;
	json_t *doc = json_pack("{s:s, s:f}", "kind", "l3_ball", "radius", 1.0), *norm = NULL;
	double *owned = NULL;

	ck_assert_int_eq(
		constraint_json_parse(doc, "constraints.x", "t", ~0u, &c, &owned, &norm, &e),
		ERR_INVALID);
	ck_assert_str_eq(e.field, "constraints.x.kind");
	for (int k = 0; k < CONSTRAINT__COUNT; k++) {
		const char *name = constraint_kind_name((enum constraint_kind)k);

		ck_assert_msg(name != NULL, "kind %d has no name", k);
		ck_assert_msg(strstr(e.msg, name) != NULL, "%s not listed in '%s'", name, e.msg);
	}
	ck_assert_ptr_null(constraint_json_ops_of(CONSTRAINT__COUNT));
	c.kind = CONSTRAINT__COUNT;
	ck_assert_ptr_null(constraint_json(&c));
	json_decref(doc);
}
END_TEST

/* The service's own ranges and the set's rules, through the table. */
START_TEST(test_ranges)
{
	static const struct {
		const char *json, *field;
	} bad[] = {
		{ "{\"kind\": \"l2_ball\", \"radius\": 0}", "constraints.x.radius" },
		{ "{\"kind\": \"l1_ball\", \"radius\": 2e9}", "constraints.x.radius" },
		{ "{\"kind\": \"simplex\", \"scale\": -1}", "constraints.x.scale" },
		{ "{\"kind\": \"simplex\", \"radius\": 1}", "constraints.x.radius" },
		{ "{\"kind\": \"box\", \"lo\": 1, \"hi\": 1}", "constraints.x.hi" },
		{ "{\"kind\": \"box\", \"lo\": 1}", "constraints.x.hi" },
		{ "{\"kind\": \"lp_ball\", \"radius\": 1, \"p\": 1}", "constraints.x.p" },
		{ "{\"kind\": \"lp_ball\", \"radius\": 1, \"p\": 2.5}", "constraints.x.p" },
		{ "{\"radius\": 1}", "constraints.x.kind" },
		{ "{\"kind\": \"polytope\"}", "constraints.x.vertices" },
		{ "{\"kind\": \"polytope\", \"vertices\": []}", "constraints.x.vertices" },
		{ "{\"kind\": \"polytope\", \"vertices\": [[1, 2]]}", "constraints.x.vertices" },
		{ "{\"kind\": \"polytope\", \"vertices\": [1, 2]}", "constraints.x.vertices[0]" },
		{ "{\"kind\": \"polytope\", \"vertices\": [[], []]}", "constraints.x.vertices[0]" },
		{ "{\"kind\": \"polytope\", \"vertices\": [[1, 2], [3, 4], [5]]}",
		  "constraints.x.vertices[2]" },
		{ "{\"kind\": \"polytope\", \"vertices\": [[1, 2], [3, \"4\"]]}",
		  "constraints.x.vertices[1]" },
		{ "{\"kind\": \"polytope\", \"vertices\": [[1, 2], [3, 2e9]]}",
		  "constraints.x.vertices[1]" },
		{ "{\"kind\": \"polytope\", \"vertices\": [[1, 2], [1, 2], [1, 2]]}",
		  "constraints.x.vertices" },
		{ "{\"kind\": \"polytope\", \"vertices\": [[1, 2], [0, 0]], \"radius\": 1}",
		  "constraints.x.radius" },
	};
	struct err e = { 0 };
	struct constraint c;
	json_t *norm = NULL;
	double *owned = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *doc = json_loads(bad[i].json, 0, NULL);

		ck_assert_ptr_nonnull(doc);
		ck_assert_int_eq(constraint_json_parse(doc, "constraints.x", "t", ~0u, &c, &owned,
						       &norm, &e),
				 ERR_INVALID);
		ck_assert_msg(strcmp(e.field, bad[i].field) == 0, "%s: field '%s', want '%s'",
			      bad[i].json, e.field, bad[i].field);
		ck_assert_ptr_null(norm);
		ck_assert_ptr_null(owned);
		json_decref(doc);
	}
}
END_TEST

static Suite *
constraint_json_suite(void)
{
	Suite *s = suite_create("constraint_json");
	TCase *tc = tcase_create("table");

	tcase_add_loop_test(tc, test_every_kind_round_trips, 0, CONSTRAINT__COUNT);
	tcase_add_test(tc, test_unknown_kind_lists_every_kind);
	tcase_add_test(tc, test_ranges);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(constraint_json_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
