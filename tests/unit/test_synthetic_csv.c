/*
 * test_synthetic_csv.c - the synthetic rows of a run as CSV
 * (service/synthetic_csv.c): the header of attribute names, the cells as
 * labels or indices (universe index decoded with attribute 0 most
 * significant), each cell's count repeated, RFC 4180 quoting of labels and
 * names with a comma, a quote or outer spaces; a run that has not
 * succeeded is 409, one without synthetic rows 404, a stored result that
 * does not fit the schema 500.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "synthetic_csv.h"

static const char *spec_text =
	"{\"schema\": {\"features\": 0, \"task\": \"unlabeled\", \"categorical\": ["
	"{\"name\": \"colour\", \"labels\": [\"red\", \"a, b\", \"say \\\"hi\\\"\"]},"
	"{\"name\": \"size\", \"size\": 2}, {\"name\": \" odd name\", \"labels\": [\"n\", "
	"\"y\"]}]},"
	" \"bounds\": {}}";

static enum err_code
csv_of(const char *run_text, char **ret, struct err *e)
{
	json_t *run = json_loads(run_text, 0, NULL), *spec = json_loads(spec_text, 0, NULL);
	enum err_code rc;

	ck_assert_ptr_nonnull(run);
	ck_assert_ptr_nonnull(spec);
	rc = synthetic_csv(run, spec, ret, e);
	json_decref(run);
	json_decref(spec);
	return rc;
}

START_TEST(test_rows)
{
	char *text = NULL;
	struct err e = { 0 };

	/* Universe 3 x 2 x 2 = 12: index 0 = (red, 0, n), 5 = (a, b; 0; y) =
	 * 1 * 4 + 0 * 2 + 1, 11 = (say "hi", 1, y). */
	ck_assert_int_eq(csv_of("{\"id\": \"r\", \"state\": \"succeeded\", \"result\": "
				"{\"synthetic\": {\"rows\": 4, \"universe\": 12, \"cells\": "
				"[[0, 1], [5, 2], [11, 1]]}}}",
				&text, &e),
			 ERR_OK);
	ck_assert_str_eq(text, "colour,size,\" odd name\"\n"
			       "red,0,n\n"
			       "\"a, b\",0,y\n"
			       "\"a, b\",0,y\n"
			       "\"say \"\"hi\"\"\",1,y\n");
	free(text);
}
END_TEST

START_TEST(test_refusals)
{
	char *text = NULL;
	struct err e = { 0 };

	ck_assert_int_eq(csv_of("{\"id\": \"r\", \"state\": \"running\"}", &text, &e),
			 ERR_CONFLICT);
	ck_assert_int_eq(csv_of("{\"id\": \"r\", \"state\": \"succeeded\", \"result\": "
				"{\"x\": [1, 2]}}",
				&text, &e),
			 ERR_NOT_FOUND);
	ck_assert_int_eq(csv_of("{\"id\": \"r\", \"state\": \"succeeded\", \"result\": "
				"{\"synthetic\": {\"rows\": 1, \"universe\": 12, \"cells\": "
				"[[12, 1]]}}}",
				&text, &e),
			 ERR_INTERNAL);
	ck_assert_ptr_null(text);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("synthetic_csv");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_rows);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
