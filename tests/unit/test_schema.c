/*
 * test_schema.c - the dataset schema and bounds (service/schema.c): the
 * legacy wire format keeps its meaning, every refusal names its dotted
 * field, outputs are untouched on failure, and parse -> to_json -> parse
 * gives the same schema back.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

static json_t *
load(const char *text)
{
	json_error_t jerr;
	json_t *v =
		json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);

	ck_assert_msg(v != NULL, "bad test JSON %s: %s", text, jerr.text);
	return v;
}

/* Parse schema and bounds texts; returns the code, fills s, x and e. */
static enum err_code
parse(const char *schema, const char *bounds, struct data_schema *s, struct schema_extra *x,
      struct err *e)
{
	json_t *js = schema != NULL ? load(schema) : NULL;
	json_t *jb = bounds != NULL ? load(bounds) : NULL;
	enum err_code rc = schema_parse_extra(js, jb, s, x, e);

	json_decref(js);
	json_decref(jb);
	return rc;
}

START_TEST(test_legacy)
{
	struct data_schema s;
	struct err e;

	ck_assert_int_eq(parse("{\"features\": 10, \"task\": \"binary\"}", "{\"feature_l2\": 1}",
			       &s, NULL, &e),
			 ERR_OK);
	ck_assert_uint_eq(s.d, 10);
	ck_assert_int_eq(s.task, TASK_BINARY);
	ck_assert_uint_eq(s.n_classes, 0);
	ck_assert_uint_eq(s.n_groups, 0);
	ck_assert_uint_eq(s.n_blocks, 0);
	ck_assert_uint_eq(s.n_categorical, 0);
	ck_assert_double_eq(s.bounds.feature_l2, 1.0);
	ck_assert(isnan(s.bounds.feature_linf));
	ck_assert(isnan(s.bounds.label));
	ck_assert(isnan(s.bounds.label_lo));
	ck_assert(isnan(s.bounds.label_hi));

	ck_assert_int_eq(parse("{\"features\": 3, \"task\": \"regression\"}",
			       "{\"feature_linf\": 0.2385, \"label\": 4.5}", &s, NULL, &e),
			 ERR_OK);
	ck_assert_int_eq(s.task, TASK_REGRESSION);
	ck_assert_double_eq(s.bounds.feature_linf, 0.2385);
	ck_assert(isnan(s.bounds.feature_l2));
	ck_assert_double_eq(s.bounds.label, 4.5);
	ck_assert_double_eq(s.bounds.label_lo, -4.5);
	ck_assert_double_eq(s.bounds.label_hi, 4.5);
}
END_TEST

START_TEST(test_full)
{
	struct data_schema s;
	struct schema_extra x;
	struct err e;

	ck_assert_int_eq(
		parse("{\"features\": 5, \"task\": \"multiclass\", \"classes\": 7,"
		      " \"group\": {\"groups\": 3},"
		      " \"categorical\": [{\"name\": \"colour\", \"labels\": [\"red\", \"green\","
		      " \"blue\"]}, {\"name\": \"zip\", \"size\": 900}],"
		      " \"blocks\": [{\"name\": \"a\", \"size\": 2, \"bounds\": {\"l2\": 1.5}},"
		      " {\"name\": \"b\", \"size\": 3, \"bounds\": {\"linf\": 0.25, \"l2\": 0.5}}],"
		      " \"format\": \"sparse\"}",
		      "{\"feature_l2\": 2, \"feature_linf\": 0.5}", &s, &x, &e),
		ERR_OK);
	ck_assert_uint_eq(s.d, 5);
	ck_assert_int_eq(s.task, TASK_MULTICLASS);
	ck_assert_uint_eq(s.n_classes, 7);
	ck_assert_uint_eq(s.n_groups, 3);
	ck_assert_uint_eq(s.n_categorical, 2);
	ck_assert_str_eq(s.categorical[0].name, "colour");
	ck_assert_uint_eq(s.categorical[0].size, 3);
	ck_assert_str_eq(s.categorical[1].name, "zip");
	ck_assert_uint_eq(s.categorical[1].size, 900);
	ck_assert_uint_eq(s.n_blocks, 2);
	ck_assert_str_eq(s.blocks[0].name, "a");
	ck_assert_uint_eq(s.blocks[0].offset, 0);
	ck_assert_uint_eq(s.blocks[0].size, 2);
	ck_assert_double_eq(s.blocks[0].l2, 1.5);
	ck_assert(isnan(s.blocks[0].linf));
	ck_assert_uint_eq(s.blocks[1].offset, 2);
	ck_assert_uint_eq(s.blocks[1].size, 3);
	ck_assert_double_eq(s.blocks[1].linf, 0.25);
	ck_assert(isnan(s.bounds.label));
	ck_assert_int_eq(x.format, SCHEMA_SPARSE);
	ck_assert_uint_eq(x.n_categorical, 2);
	ck_assert_uint_eq(x.labels[0].count, 3);
	ck_assert_str_eq(x.labels[0].label[2], "blue");
	ck_assert_uint_eq(x.labels[1].count, 0);
	ck_assert_ptr_null(x.labels[1].label);
	schema_extra_clear(&x);
	schema_extra_clear(&x); /* twice is fine */

	/* only categorical attributes, unlabeled, a range label */
	ck_assert_int_eq(parse("{\"features\": 0, \"task\": \"regression\", \"categorical\":"
			       " [{\"name\": \"c\", \"size\": 2}]}",
			       "{\"label_range\": [-1, 3.5]}", &s, &x, &e),
			 ERR_OK);
	ck_assert_uint_eq(s.d, 0);
	ck_assert_double_eq(s.bounds.label_lo, -1.0);
	ck_assert_double_eq(s.bounds.label_hi, 3.5);
	ck_assert_double_eq(s.bounds.label, 3.5);
	ck_assert_int_eq(x.format, SCHEMA_DENSE);
	schema_extra_clear(&x);

	ck_assert_int_eq(parse("{\"features\": 2, \"task\": \"unlabeled\", \"blocks\": []}",
			       "{\"feature_linf\": 1}", &s, NULL, &e),
			 ERR_OK);
	ck_assert_int_eq(s.task, TASK_UNLABELED);
	ck_assert_uint_eq(s.n_blocks, 0);
	ck_assert(!schema_feature_range(&s, NULL, NULL));

	/* a feature range: the cells' box, feature_linf derived from it */
	ck_assert_int_eq(parse("{\"features\": 4, \"task\": \"unlabeled\"}",
			       "{\"feature_range\": [0.5, 2.5]}", &s, NULL, &e),
			 ERR_OK);
	ck_assert(schema_feature_range(&s, NULL, NULL));
	ck_assert_double_eq(s.feature_lo, 0.5);
	ck_assert_double_eq(s.feature_hi, 2.5);
	ck_assert_double_eq(s.bounds.feature_linf, 2.5);
	ck_assert(isnan(s.bounds.feature_l2));
	{
		json_t *jb = schema_bounds_to_json(&s);

		ck_assert_ptr_nonnull(jb);
		ck_assert_ptr_null(json_object_get(jb, "feature_linf"));
		ck_assert_double_eq(
			json_number_value(json_array_get(json_object_get(jb, "feature_range"), 1)),
			2.5);
		json_decref(jb);
	}
	ck_assert_int_eq(parse("{\"features\": 4, \"task\": \"unlabeled\"}",
			       "{\"feature_range\": [-4, 1]}", &s, NULL, &e),
			 ERR_OK);
	ck_assert_double_eq(s.bounds.feature_linf, 4.0);
}
END_TEST

struct bad_case {
	const char *schema; /* NULL: absent */
	const char *bounds;
	const char *field; /* e.field */
	const char *msg;   /* a substring of e.msg */
};

#define B10 "{\"features\": 10, \"task\": \"binary\""
#define L2  "{\"feature_l2\": 1}"
#define CAT(x)                                                                                     \
	"{\"features\": 1, \"task\": \"binary\", \"categorical\": [{\"name\": \"c\", " x "}]}"
#define BLK(x) "{\"features\": 4, \"task\": \"binary\", \"blocks\": [" x "]}"
#define REG    "{\"features\": 2, \"task\": \"regression\"}"

static const struct bad_case bad_cases[] = {
	/* the two members */
	{ NULL, L2, "schema", "'schema' is required" },
	{ "[]", L2, "schema", "must be an object" },
	{ B10 "}", NULL, "bounds", "'bounds' is required" },
	{ B10 "}", "3", "bounds", "must be an object" },
	/* schema */
	{ B10 ", \"colour\": 1}", L2, "schema.colour", "unknown field 'schema.colour'" },
	{ "{\"task\": \"binary\"}", L2, "schema.features", "required" },
	{ "{\"features\": -1, \"task\": \"binary\"}", L2, "schema.features",
	  "within [0, 1000000]" },
	{ "{\"features\": 1000001, \"task\": \"binary\"}", L2, "schema.features", "within" },
	{ "{\"features\": 1.5, \"task\": \"binary\"}", L2, "schema.features", "integer" },
	{ "{\"features\": 0, \"task\": \"binary\"}", L2, "schema.features", "at least 1" },
	{ "{\"features\": 3}", L2, "schema.task", "required" },
	{ "{\"features\": 3, \"task\": \"ranking\"}", L2, "schema.task", "'multiclass'" },
	{ "{\"features\": 3, \"task\": 1}", L2, "schema.task", "string" },
	{ "{\"features\": 3, \"task\": \"multiclass\"}", L2, "schema.classes", "required" },
	{ "{\"features\": 3, \"task\": \"multiclass\", \"classes\": 1}", L2, "schema.classes",
	  "within [2, 1024]" },
	{ "{\"features\": 3, \"task\": \"multiclass\", \"classes\": 1025}", L2, "schema.classes",
	  "within" },
	{ B10 ", \"classes\": 3}", L2, "schema.classes", "only for the multiclass task" },
	{ B10 ", \"group\": 3}", L2, "schema.group", "must be an object" },
	{ B10 ", \"group\": {}}", L2, "schema.group.groups", "required" },
	{ B10 ", \"group\": {\"groups\": 1}}", L2, "schema.group.groups", "within [2, 1024]" },
	{ B10 ", \"group\": {\"groups\": 1025}}", L2, "schema.group.groups", "within" },
	{ B10 ", \"group\": {\"groups\": 2, \"g\": 1}}", L2, "schema.group.g", "unknown field" },
	{ B10 ", \"format\": \"csv\"}", L2, "schema.format", "'dense' (the default) or 'sparse'" },
	{ B10 ", \"format\": 1}", L2, "schema.format", "string" },
	/* categorical */
	{ B10 ", \"categorical\": {}}", L2, "schema.categorical", "must be an array" },
	{ B10 ", \"categorical\": [1]}", L2, "schema.categorical[0]", "must be an object" },
	{ CAT("\"size\": 2, \"kind\": 1"), L2, "schema.categorical[0].kind", "unknown field" },
	{ "{\"features\": 1, \"task\": \"binary\", \"categorical\": [{\"size\": 2}]}", L2,
	  "schema.categorical[0].name", "required" },
	{ "{\"features\": 1, \"task\": \"binary\", \"categorical\": [{\"name\": \"\", \"size\": "
	  "2}]}",
	  L2, "schema.categorical[0].name", "1 to 63 bytes" },
	{ CAT("\"size\": 1"), L2, "schema.categorical[0].size", "within [2, 65536]" },
	{ CAT("\"size\": 65537"), L2, "schema.categorical[0].size", "within" },
	{ CAT("\"size\": 2, \"labels\": [\"a\", \"b\"]"), L2, "schema.categorical[0].size",
	  "not both" },
	{ "{\"features\": 1, \"task\": \"binary\", \"categorical\": [{\"name\": \"c\"}]}", L2,
	  "schema.categorical[0].size", "'schema.categorical[0].labels' is required" },
	{ CAT("\"labels\": \"a\""), L2, "schema.categorical[0].labels", "must be an array" },
	{ CAT("\"labels\": [\"a\"]"), L2, "schema.categorical[0].labels", "2 to 65536 labels" },
	{ CAT("\"labels\": [\"a\", 2]"), L2, "schema.categorical[0].labels[1]", "string" },
	{ CAT("\"labels\": [\"a\", \"\"]"), L2, "schema.categorical[0].labels[1]",
	  "1 to 64 bytes" },
	{ CAT("\"labels\": [\"a\", "
	      "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"]"),
	  L2, "schema.categorical[0].labels[1]", "1 to 64 bytes" },
	{ CAT("\"labels\": [\"a\", \"b\\u0000c\"]"), L2, "schema.categorical[0].labels[1]",
	  "without NUL" },
	{ CAT("\"labels\": [\"a\", \"b\", \"a\"]"), L2, "schema.categorical[0].labels",
	  "repeats the label \"a\"" },
	{ CAT("\"labels\": [\"a\", \"b,c\"]"), L2, "schema.categorical[0].labels[1]", "comma" },
	{ CAT("\"labels\": [\"a\", \"b\\\"c\"]"), L2, "schema.categorical[0].labels[1]",
	  "double quote" },
	{ CAT("\"labels\": [\" a\", \"b\"]"), L2, "schema.categorical[0].labels[0]", "blanks" },
	{ CAT("\"labels\": [\"a\", \"b\\n\"]"), L2, "schema.categorical[0].labels[1]",
	  "line break" },
	{ CAT("\"labels\": [\"a\", \"2\"]"), L2, "schema.categorical[0].labels[1]",
	  "must not be a number" },
	{ CAT("\"labels\": [\"-1.5e3\", \"b\"]"), L2, "schema.categorical[0].labels[0]",
	  "must not be a number" },
	{ "{\"features\": 1, \"task\": \"binary\", \"categorical\": [{\"name\": \"c\", \"size\": "
	  "2}, {\"name\": \"c\", \"size\": 3}]}",
	  L2, "schema.categorical[1].name", "repeats the name of 'schema.categorical[0]'" },
	/* blocks */
	{ B10 ", \"blocks\": 1}", L2, "schema.blocks", "must be an array" },
	{ BLK("2"), L2, "schema.blocks[0]", "must be an object" },
	{ BLK("{\"name\": \"a\", \"size\": 4, \"bounds\": {\"l2\": 1}, \"x\": 1}"), L2,
	  "schema.blocks[0].x", "unknown field" },
	{ BLK("{\"size\": 4, \"bounds\": {\"l2\": 1}}"), L2, "schema.blocks[0].name", "required" },
	{ BLK("{\"name\": \"a\", \"bounds\": {\"l2\": 1}}"), L2, "schema.blocks[0].size",
	  "required" },
	{ BLK("{\"name\": \"a\", \"size\": 0, \"bounds\": {\"l2\": 1}}"), L2,
	  "schema.blocks[0].size", "within [1, 1000000]" },
	{ BLK("{\"name\": \"a\", \"size\": 4}"), L2, "schema.blocks[0].bounds", "required" },
	{ BLK("{\"name\": \"a\", \"size\": 4, \"bounds\": {}}"), L2, "schema.blocks[0].bounds",
	  "'l2' or 'linf'" },
	{ BLK("{\"name\": \"a\", \"size\": 4, \"bounds\": {\"l1\": 1}}"), L2,
	  "schema.blocks[0].bounds.l1", "unknown field" },
	{ BLK("{\"name\": \"a\", \"size\": 4, \"bounds\": {\"l2\": 0}}"), L2,
	  "schema.blocks[0].bounds.l2", "within (0, 1e+12]" },
	{ BLK("{\"name\": \"a\", \"size\": 4, \"bounds\": {\"linf\": -1}}"), L2,
	  "schema.blocks[0].bounds.linf", "within" },
	{ BLK("{\"name\": \"a\", \"size\": 2, \"bounds\": {\"l2\": 1}}, {\"name\": \"a\", "
	      "\"size\": "
	      "2, \"bounds\": {\"l2\": 1}}"),
	  L2, "schema.blocks[1].name", "repeats the name of 'schema.blocks[0]'" },
	{ BLK("{\"name\": \"a\", \"size\": 3, \"bounds\": {\"l2\": 1}}, {\"name\": \"b\", "
	      "\"size\": "
	      "2, \"bounds\": {\"l2\": 1}}"),
	  L2, "schema.blocks[1].size", "past 'schema.features' = 4" },
	{ BLK("{\"name\": \"a\", \"size\": 3, \"bounds\": {\"l2\": 1}}"), L2, "schema.blocks",
	  "sum to 3, not to 'schema.features' = 4" },
	{ BLK("{\"name\": \"a\", \"size\": 4, \"bounds\": {\"l2\": 1}}, {}, {}, {}, {}, {}, {}, "
	      "{}, "
	      "{}, {}, {}, {}, {}, {}, {}, {}, {}"),
	  L2, "schema.blocks", "more than 16 entries" },
	/* bounds */
	{ B10 "}", "{\"feature_l3\": 1}", "bounds.feature_l3",
	  "unknown field 'bounds.feature_l3'" },
	{ B10 "}", "{}", "bounds.feature_l2", "at least one feature bound" },
	{ B10 "}", "{\"feature_l2\": 0}", "bounds.feature_l2", "within (0, 1e+12]" },
	{ B10 "}", "{\"feature_l2\": \"1\"}", "bounds.feature_l2", "must be a number" },
	{ B10 "}", "{\"feature_linf\": -2}", "bounds.feature_linf", "within" },
	{ B10 "}", "{\"feature_linf\": 1e13}", "bounds.feature_linf", "within" },
	{ B10 "}", "{\"feature_l2\": 1, \"label\": 1}", "bounds.label",
	  "only for the regression task" },
	{ B10 "}", "{\"feature_l2\": 1, \"label_range\": [0, 1]}", "bounds.label_range",
	  "only for the regression task" },
	{ "{\"features\": 3, \"task\": \"multiclass\", \"classes\": 3}",
	  "{\"feature_l2\": 1, \"label\": 2}", "bounds.label", "only for the regression task" },
	{ "{\"features\": 3, \"task\": \"unlabeled\"}", "{\"feature_l2\": 1, \"label\": 2}",
	  "bounds.label", "only for the regression task" },
	{ REG, "{\"feature_l2\": 1}", "bounds.label", "is required for the regression task" },
	{ REG, "{\"feature_l2\": 1, \"label\": 1, \"label_range\": [0, 1]}", "bounds.label_range",
	  "not both" },
	{ REG, "{\"feature_l2\": 1, \"label\": 0}", "bounds.label", "within (0, 1e+12]" },
	{ REG, "{\"feature_l2\": 1, \"label_range\": [1, 1]}", "bounds.label_range", "lo < hi" },
	{ REG, "{\"feature_l2\": 1, \"label_range\": [2, 1]}", "bounds.label_range", "lo < hi" },
	{ REG, "{\"feature_l2\": 1, \"label_range\": [1]}", "bounds.label_range", "two numbers" },
	{ REG, "{\"feature_l2\": 1, \"label_range\": [1, 2, 3]}", "bounds.label_range",
	  "two numbers" },
	{ REG, "{\"feature_l2\": 1, \"label_range\": [\"0\", 2]}", "bounds.label_range",
	  "two numbers" },
	{ REG, "{\"feature_l2\": 1, \"label_range\": {\"lo\": 0}}", "bounds.label_range",
	  "two numbers" },
	{ REG, "{\"feature_l2\": 1, \"label_range\": [-2e12, 0]}", "bounds.label_range",
	  "within [-1e+12, 1e+12]" },
/* bounds.feature_range: a box for every cell, given alone */
#define UNL "{\"features\": 3, \"task\": \"unlabeled\""
	{ UNL "}", "{\"feature_range\": [1, 1]}", "bounds.feature_range", "lo < hi" },
	{ UNL "}", "{\"feature_range\": [1.2, 0.8]}", "bounds.feature_range", "lo < hi" },
	{ UNL "}", "{\"feature_range\": [0.8]}", "bounds.feature_range", "two numbers" },
	{ UNL "}", "{\"feature_range\": [0.8, 2e12]}", "bounds.feature_range", "within" },
	{ UNL "}", "{\"feature_range\": [0.5, 2], \"feature_linf\": 2}", "bounds.feature_range",
	  "without 'bounds.feature_linf'" },
	{ UNL "}", "{\"feature_range\": [0.5, 2], \"feature_l2\": 9}", "bounds.feature_range",
	  "without 'bounds.feature_linf'" },
	{ UNL ", \"format\": \"sparse\"}", "{\"feature_range\": [0.5, 2]}", "bounds.feature_range",
	  "sparse" },
	{ UNL ", \"format\": \"sparse\"}", "{\"feature_range\": [-2, -0.5]}",
	  "bounds.feature_range", "sparse" },
	{ UNL ", \"blocks\": [{\"name\": \"a\", \"size\": 3, \"bounds\": {\"l2\": 1}}]}",
	  "{\"feature_range\": [0.5, 2]}", "bounds.feature_range", "schema.blocks" },
	/* schema.labels: a binary task's two values */
	{ "{\"features\": 2, \"task\": \"regression\", \"labels\": [0, 1]}",
	  "{\"feature_l2\": 1, \"label\": 1}", "schema.labels", "only for the binary task" },
	{ B10 ", \"labels\": 1}", L2, "schema.labels", "must be an array" },
	{ B10 ", \"labels\": [0]}", L2, "schema.labels", "two values" },
	{ B10 ", \"labels\": [0, 1, 2]}", L2, "schema.labels", "more than 2" },
	{ B10 ", \"labels\": [0, \"yes\"]}", L2, "schema.labels[1]", "two numbers or two strings" },
	{ B10 ", \"labels\": [\"no\", 1]}", L2, "schema.labels[1]", "two numbers or two strings" },
	{ B10 ", \"labels\": [null, 1]}", L2, "schema.labels[0]", "two numbers or two strings" },
	{ B10 ", \"labels\": [1, 1.0]}", L2, "schema.labels", "two different values" },
	{ B10 ", \"labels\": [\"y\", \"y\"]}", L2, "schema.labels", "two different values" },
	{ B10 ", \"labels\": [\"no\", \"\"]}", L2, "schema.labels[1]", "1 to 64 bytes" },
	{ B10 ", \"labels\": [\"no\", \"2\"]}", L2, "schema.labels[1]", "must not be a number" },
	{ B10 ", \"labels\": [\"a,b\", \"c\"]}", L2, "schema.labels[0]", "comma" },
};

START_TEST(test_refused)
{
	const struct bad_case *c = &bad_cases[_i];
	struct data_schema s, before;
	struct schema_extra x, xbefore;
	struct err e;

	memset(&s, 0xab, sizeof(s));
	memset(&x, 0xcd, sizeof(x));
	before = s;
	xbefore = x;
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(parse(c->schema, c->bounds, &s, &x, &e), ERR_INVALID);
	ck_assert_int_eq(e.code, ERR_INVALID);
	ck_assert_msg(strcmp(e.field, c->field) == 0, "case %d: field \"%s\", want \"%s\" (%s)", _i,
		      e.field, c->field, e.msg);
	ck_assert_msg(strstr(e.msg, c->msg) != NULL, "case %d: message \"%s\" lacks \"%s\"", _i,
		      e.msg, c->msg);
	/* outputs untouched */
	ck_assert(memcmp(&s, &before, sizeof(s)) == 0);
	ck_assert(memcmp(&x, &xbefore, sizeof(x)) == 0);
}
END_TEST

static const char *const good_cases[][2] = {
	{ B10 "}", L2 },
	{ B10 "}", "{\"feature_linf\": 0.2385, \"feature_l2\": 1.5212}" },
	{ REG, "{\"feature_l2\": 1, \"label\": 3}" },
	{ REG, "{\"feature_l2\": 1, \"label_range\": [-3, 3]}" },
	{ REG, "{\"feature_l2\": 1, \"label_range\": [0.1, 0.7]}" },
	{ REG, "{\"feature_l2\": 1, \"label_range\": [-5, -0.25]}" },
	{ "{\"features\": 6, \"task\": \"multiclass\", \"classes\": 1024, \"group\": {\"groups\": "
	  "1024}, \"format\": \"dense\"}",
	  L2 },
	{ "{\"features\": 0, \"task\": \"unlabeled\", \"categorical\": [{\"name\": \"a\", "
	  "\"labels\": [\"x\", \"y y\", \"\\u00e9t\\u00e9\"]}, {\"name\": \"b\", \"size\": "
	  "65536}], "
	  "\"format\": \"sparse\"}",
	  "{}" },
	{ "{\"features\": 5, \"task\": \"binary\", \"blocks\": [{\"name\": \"p\", \"size\": 1, "
	  "\"bounds\": {\"l2\": 0.1}}, {\"name\": \"q\", \"size\": 4, \"bounds\": {\"linf\": "
	  "0.30000000000000004, \"l2\": 7}}]}",
	  "{\"feature_linf\": 1e-300}" },
	{ B10 ", \"labels\": [0, 1]}", L2 },
	{ UNL "}", "{\"feature_range\": [0.5, 2.25]}" },
	{ UNL ", \"format\": \"sparse\"}", "{\"feature_range\": [-1, 0.75]}" },
	{ REG, "{\"feature_range\": [-0.3, 0.1], \"label\": 1}" },
	{ B10 ", \"labels\": [2.5, -7]}", L2 },
	{ B10 ", \"labels\": [\"no\", \"yes\"]}", L2 },
};

START_TEST(test_round_trip)
{
	struct data_schema s, s2, s3;
	struct schema_extra x, x2;
	json_t *js, *jb, *js2;
	char *text;
	struct err e;

	ck_assert_int_eq(parse(good_cases[_i][0], good_cases[_i][1], &s, &x, &e), ERR_OK);

	/* with labels and format, through text */
	js = schema_to_json_extra(&s, &x);
	jb = schema_bounds_to_json(&s);
	ck_assert_ptr_nonnull(js);
	ck_assert_ptr_nonnull(jb);
	text = json_dumps(js, JSON_COMPACT);
	js2 = load(text);
	free(text);
	ck_assert_int_eq(schema_parse_extra(js2, jb, &s2, &x2, &e), ERR_OK);
	ck_assert(schema_equal(&s, &s2));
	ck_assert(schema_extra_equal(&x, &x2));
	json_decref(js);
	json_decref(js2);
	schema_extra_clear(&x2);

	/* without: categorical attributes by size, same data_schema */
	js = schema_to_json(&s);
	ck_assert_ptr_nonnull(js);
	ck_assert_int_eq(schema_parse(js, jb, &s3, &e), ERR_OK);
	ck_assert(schema_equal(&s, &s3));
	json_decref(js);
	json_decref(jb);
	schema_extra_clear(&x);
}
END_TEST

START_TEST(test_equal)
{
	struct data_schema a, b;
	struct err e;

	ck_assert_int_eq(parse(B10 "}", L2, &a, NULL, &e), ERR_OK);
	b = a;
	ck_assert(schema_equal(&a, &b));
	b.bounds.feature_linf = 1.0;
	ck_assert(!schema_equal(&a, &b));
	b = a;
	b.d = 11;
	ck_assert(!schema_equal(&a, &b));
	ck_assert_str_eq(schema_task_name(TASK_UNLABELED), "unlabeled");
}
END_TEST

/* schema.labels: what was declared, its JSON (the margin's sign back to a
 * label), and inequality of different declarations. */
START_TEST(test_binary_labels)
{
	struct data_schema s;
	struct schema_extra x, y, z;
	struct err e;
	json_t *j;

	ck_assert_int_eq(parse(B10 ", \"labels\": [\"no\", \"yes\"]}", L2, &s, &x, &e), ERR_OK);
	ck_assert(x.binary.declared && !x.binary.numeric);
	ck_assert_str_eq(x.binary.text[0], "no");
	ck_assert_str_eq(x.binary.text[1], "yes");
	j = schema_label_json(&x.binary, true);
	ck_assert_str_eq(json_string_value(j), "yes");
	json_decref(j);
	ck_assert_int_eq(parse(B10 ", \"labels\": [0, 2.5]}", L2, &s, &y, &e), ERR_OK);
	ck_assert(y.binary.declared && y.binary.numeric);
	ck_assert_double_eq(y.binary.value[0], 0.0);
	ck_assert_double_eq(y.binary.value[1], 2.5);
	j = schema_label_json(&y.binary, false);
	ck_assert(json_is_integer(j) && json_integer_value(j) == 0);
	json_decref(j);
	j = schema_label_json(&y.binary, true);
	ck_assert(json_is_real(j) && json_real_value(j) == 2.5);
	json_decref(j);
	ck_assert_int_eq(parse(B10 "}", L2, &s, &z, &e), ERR_OK);
	ck_assert(!z.binary.declared);
	j = schema_label_json(&z.binary, false);
	ck_assert(json_is_integer(j) && json_integer_value(j) == -1);
	json_decref(j);
	ck_assert(!schema_extra_equal(&x, &y));
	ck_assert(!schema_extra_equal(&y, &z));
	ck_assert(!schema_extra_equal(&x, &z));
	schema_extra_clear(&x);
	schema_extra_clear(&y);
	schema_extra_clear(&z);
	ck_assert_ptr_null(schema_task_name(TASK__COUNT));
}
END_TEST

static Suite *
schema_suite(void)
{
	Suite *s = suite_create("schema");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_legacy);
	tcase_add_test(tc, test_full);
	tcase_add_loop_test(tc, test_refused, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_loop_test(tc, test_round_trip, 0,
			    (int)(sizeof(good_cases) / sizeof(good_cases[0])));
	tcase_add_test(tc, test_equal);
	tcase_add_test(tc, test_binary_labels);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(schema_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
