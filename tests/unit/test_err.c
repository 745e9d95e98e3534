/*
 * test_err.c - struct err: a failure never reads as success, and a long
 * message is cut at a word boundary, never inside an id (issue 8, items 2
 * and 8).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

static const char ELLIPSIS[] = "\xe2\x80\xa6";

START_TEST(test_failed_never_ok)
{
	struct err e = { 0 };

	ck_assert_int_eq(err_failed(NULL), ERR_INTERNAL);
	ck_assert_int_eq(err_failed(&e), ERR_INTERNAL); /* failed without saying why */
	err_set(&e, ERR_DB, "database query failed");
	ck_assert_int_eq(err_failed(&e), ERR_DB);
	/* err_set() with no struct still returns its code */
	ck_assert_int_eq(err_set(NULL, ERR_BUDGET, "x"), ERR_BUDGET);
	ck_assert_int_eq(err_set_field(NULL, ERR_INVALID, "a.b", "x"), ERR_INVALID);
	err_detail(NULL, "ignored %d", 1); /* accepted, no effect */
}
END_TEST

START_TEST(test_short_message_whole)
{
	struct err e;

	err_set(&e, ERR_CONFLICT, "rows already sealed as dataset %s", "abc");
	ck_assert_str_eq(e.msg, "rows already sealed as dataset abc");
	err_detail(&e, "detail %d", 7);
	ck_assert_str_eq(e.detail, "detail 7");
	ck_assert_int_eq(e.code, ERR_CONFLICT);
}
END_TEST

/* A message that overflows is cut before the token that would not fit,
 * whatever the position of the id relative to the buffer's end. */
START_TEST(test_long_message_cut_at_word)
{
	static const char id[] = "0f8c5ae1-1f24-4f6e-9f0a-3b7cd12e9a44";
	char pad[1024];
	struct err e;

	for (size_t k = 400; k < 560; k++) {
		memset(pad, 'a', k);
		pad[k] = '\0';
		for (size_t i = 50; i < k; i += 50)
			pad[i] = ' ';
		err_set(&e, ERR_CONFLICT, "%s dataset %s, copy it", pad, id);
		size_t len = strlen(e.msg);

		ck_assert_uint_lt(len, sizeof(e.msg));
		if (strstr(e.msg, "copy it") != NULL) { /* it fit */
			ck_assert_ptr_null(strstr(e.msg, ELLIPSIS));
			ck_assert_ptr_nonnull(strstr(e.msg, id));
			continue;
		}
		/* cut: ends with " …", and the id is whole or absent */
		ck_assert_str_eq(e.msg + len - strlen(ELLIPSIS), ELLIPSIS);
		ck_assert_int_eq(e.msg[len - strlen(ELLIPSIS) - 1], ' ');
		const char *p = strstr(e.msg, id);
		const char *head = strstr(e.msg, "0f8c5ae1");

		ck_assert_msg(head == NULL || p == head, "id cut at k=%zu: %s", k, e.msg);
	}
}
END_TEST

/* One token longer than the buffer is cut where it must be, still marked,
 * and never leaves half a UTF-8 sequence. */
START_TEST(test_long_token_and_utf8)
{
	char big[2048];
	struct err e;

	for (size_t i = 0; i + 2 < sizeof(big); i += 2) {
		big[i] = '\xc3'; /* é */
		big[i + 1] = '\xa9';
	}
	big[sizeof(big) - 2] = '\0';
	err_set(&e, ERR_INVALID, "%s", big);
	size_t len = strlen(e.msg);

	ck_assert_str_eq(e.msg + len - strlen(ELLIPSIS), ELLIPSIS);
	/* everything before " …" is whole two-byte characters */
	ck_assert_int_eq((len - strlen(ELLIPSIS) - 1) % 2, 0);
	err_detail(&e, "%s", big);
	ck_assert_uint_lt(strlen(e.detail), sizeof(e.detail));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("err");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_failed_never_ok);
	tcase_add_test(tc, test_short_message_whole);
	tcase_add_test(tc, test_long_message_cut_at_word);
	tcase_add_test(tc, test_long_token_and_utf8);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
