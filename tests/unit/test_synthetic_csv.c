/*
 * test_synthetic_csv.c - the synthetic rows of a run as streamed CSV
 * (service/synthetic_csv.c): the header of attribute names, the cells as
 * labels or indices (universe index decoded with attribute 0 most
 * significant), each cell's count repeated, RFC 4180 quoting of labels and
 * names with a comma, a quote or outer spaces; the same text whatever the
 * size of the reads (1 to 80 bytes: lines cut anywhere), 10^5 rows of one
 * cell; a run that has not succeeded is 409, one without synthetic rows
 * 404, a stored result that does not fit the schema 500, all before any
 * byte is read.
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

/* Universe 3 x 2 x 2 = 12: index 0 = (red, 0, n), 5 = (a, b; 0; y) =
 * 1 * 4 + 0 * 2 + 1, 11 = (say "hi", 1, y). */
static const char *rows_run = "{\"id\": \"r\", \"state\": \"succeeded\", \"result\": "
			      "{\"synthetic\": {\"rows\": 4, \"universe\": 12, \"cells\": "
			      "[[0, 1], [3, 0], [5, 2], [11, 1]]}}}";

static const char *rows_text = "colour,size,\" odd name\"\n"
			       "red,0,n\n"
			       "\"a, b\",0,y\n"
			       "\"a, b\",0,y\n"
			       "\"say \"\"hi\"\"\",1,y\n";

/* The whole text read in reads of at most chunk bytes. */
static char *
read_all(struct synthetic_csv *c, size_t chunk)
{
	size_t len = 0, cap = 64, n;
	char *text = malloc(cap);

	ck_assert_ptr_nonnull(text);
	for (;;) {
		if (cap - len < chunk + 1) {
			cap = 2 * cap + chunk;
			text = realloc(text, cap);
			ck_assert_ptr_nonnull(text);
		}
		n = synthetic_csv_read(c, text + len, chunk);
		ck_assert_uint_le(n, chunk);
		if (n == 0)
			break;
		len += n;
	}
	/* The end stays the end. */
	ck_assert_uint_eq(synthetic_csv_read(c, text + len, chunk), 0);
	text[len] = '\0';
	return text;
}

static enum err_code
csv_in_chunks(const char *run_text, size_t chunk, char **ret, struct err *e)
{
	json_t *run = json_loads(run_text, 0, NULL), *spec = json_loads(spec_text, 0, NULL);
	struct synthetic_csv *c = NULL;
	enum err_code rc;

	ck_assert_ptr_nonnull(run);
	ck_assert_ptr_nonnull(spec);
	rc = synthetic_csv_open(run, spec, &c, e);
	/* The reader holds its own references. */
	json_decref(run);
	json_decref(spec);
	if (rc != ERR_OK) {
		ck_assert_ptr_null(c);
		return rc;
	}
	*ret = read_all(c, chunk);
	synthetic_csv_close(c);
	return rc;
}

START_TEST(test_rows)
{
	char *text = NULL;
	struct err e = { 0 };

	ck_assert_int_eq(csv_in_chunks(rows_run, 4096, &text, &e), ERR_OK);
	ck_assert_str_eq(text, rows_text);
	free(text);
}
END_TEST

/* Every read size gives the same text: lines cut anywhere, a cell's
 * repeated line restarted, a count of 0 skipped. */
START_TEST(test_chunks)
{
	struct err e = { 0 };

	for (size_t chunk = 1; chunk <= 80; chunk++) {
		char *text = NULL;

		ck_assert_int_eq(csv_in_chunks(rows_run, chunk, &text, &e), ERR_OK);
		ck_assert_str_eq(text, rows_text);
		free(text);
	}
}
END_TEST

/* 10^5 rows of one cell: the line is repeated, not rebuilt. */
START_TEST(test_many_rows)
{
	struct err e = { 0 };
	char *text = NULL;
	size_t lines = 0;

	ck_assert_int_eq(csv_in_chunks("{\"id\": \"r\", \"state\": \"succeeded\", \"result\": "
				       "{\"synthetic\": {\"rows\": 100000, \"universe\": 12, "
				       "\"cells\": [[6, 100000]]}}}",
				       1000, &text, &e),
			 ERR_OK);
	for (const char *p = text; *p != '\0'; p++)
		lines += *p == '\n';
	ck_assert_uint_eq(lines, 100001);
	/* index 6 = 1 * 4 + 1 * 2 + 0 */
	ck_assert_str_eq(text + strlen(text) - 12, "\n\"a, b\",1,n\n");
	free(text);
}
END_TEST

START_TEST(test_refusals)
{
	char *text = NULL;
	struct err e = { 0 };

	ck_assert_int_eq(csv_in_chunks("{\"id\": \"r\", \"state\": \"running\"}", 64, &text, &e),
			 ERR_CONFLICT);
	ck_assert_int_eq(csv_in_chunks("{\"id\": \"r\", \"state\": \"succeeded\", \"result\": "
				       "{\"x\": [1, 2]}}",
				       64, &text, &e),
			 ERR_NOT_FOUND);
	ck_assert_int_eq(csv_in_chunks("{\"id\": \"r\", \"state\": \"succeeded\", \"result\": "
				       "{\"synthetic\": {\"rows\": 1, \"universe\": 12, \"cells\": "
				       "[[0, 1], [12, 1]]}}}",
				       64, &text, &e),
			 ERR_INTERNAL);
	ck_assert_int_eq(csv_in_chunks("{\"id\": \"r\", \"state\": \"succeeded\", \"result\": "
				       "{\"synthetic\": {\"rows\": 1, \"universe\": 12, \"cells\": "
				       "[[1, -1]]}}}",
				       64, &text, &e),
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
	tcase_add_test(tc, test_chunks);
	tcase_add_test(tc, test_many_rows);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
