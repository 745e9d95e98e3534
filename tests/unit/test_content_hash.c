/*
 * test_content_hash.c - the multiset hash of canonical rows
 * (service/content_hash.c) against values computed independently (Python's
 * hashlib: the sum mod 2^256 of SHA-256(le64(n) || le64(each value))), so
 * that a faster implementation cannot change a stored hash: a dataset
 * sealed before must still match the same rows uploaded after (budget
 * laundering, docs/privacy-model.md §4.4).  Also order independence, -0 as
 * +0, rows longer than the stack buffer, and one hash's context reused
 * over many rows and after content_hash_clear().
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "content_hash.h"

static void
hex_of(struct content_hash *h, const double *const *rows, const size_t *n, size_t k, char out[65])
{
	struct err e = { 0 };

	content_hash_init(h);
	for (size_t i = 0; i < k; i++)
		ck_assert_int_eq(content_hash_add(h, rows[i], n[i], &e), ERR_OK);
	content_hash_hex(h, out);
}

START_TEST(test_known_values)
{
	static const double a[] = { 1.0, 2.0 }, b[] = { 3.0, -0.0, 0.125 };
	double lng[150];
	const double *rows[3] = { a, b, lng };
	const size_t n[3] = { 2, 3, 150 };
	struct content_hash h;
	char hex[65];

	for (int i = 0; i < 150; i++)
		lng[i] = (double)i * 0.5 - 7.25;
	hex_of(&h, rows, n, 0, hex);
	ck_assert_str_eq(hex, "0000000000000000000000000000000000000000000000000000000000000000");
	content_hash_clear(&h);
	hex_of(&h, rows, n, 1, hex);
	ck_assert_str_eq(hex, "58a0548f49580a1576b34c78fd5dfa97e4142f177b3857f48037d9528581ef6c");
	content_hash_clear(&h);
	hex_of(&h, rows, n, 3, hex);
	ck_assert_str_eq(hex, "988543d4552cda30c3abc0f60a46b74b45b82d685d6e499467b386ee989295ba");
	content_hash_clear(&h);
	content_hash_clear(&h); /* twice is harmless */
}
END_TEST

/* Many rows through one context give what each row through a fresh hash
 * gives, summed; in any order; -0 hashes as +0. */
START_TEST(test_reuse_order_zero)
{
	enum { ROWS = 2000, D = 70 };
	struct content_hash one, fwd, rev;
	struct err e = { 0 };
	char a[65], b[65], c[65];
	double *x = malloc(sizeof(double) * ROWS * D);
	uint64_t sum[4] = { 0 };

	ck_assert_ptr_nonnull(x);
	for (size_t i = 0; i < (size_t)ROWS * D; i++)
		x[i] = (double)((i * 2654435761u) % 1000) / 7.0 - 50.0;
	content_hash_init(&fwd);
	content_hash_init(&rev);
	for (size_t r = 0; r < ROWS; r++) {
		size_t len = 1 + r % D;
		uint64_t carry = 0;

		ck_assert_int_eq(content_hash_add(&fwd, x + r * D, len, &e), ERR_OK);
		ck_assert_int_eq(
			content_hash_add(&rev, x + (ROWS - 1 - r) * D, 1 + (ROWS - 1 - r) % D, &e),
			ERR_OK);
		content_hash_init(&one);
		ck_assert_int_eq(content_hash_add(&one, x + r * D, len, &e), ERR_OK);
		content_hash_clear(&one);
		for (int l = 0; l < 4; l++) {
			uint64_t s = sum[l] + one.sum[l], t = s + carry;

			carry = (uint64_t)(s < one.sum[l]) | (uint64_t)(t < s);
			sum[l] = t;
		}
	}
	content_hash_hex(&fwd, a);
	content_hash_hex(&rev, b);
	ck_assert_str_eq(a, b);
	memcpy(one.sum, sum, sizeof(sum));
	content_hash_hex(&one, c);
	ck_assert_str_eq(a, c);
	content_hash_clear(&fwd);
	content_hash_clear(&rev);

	{
		static const double pz[] = { 0.0, 1.5 }, nz[] = { -0.0, 1.5 };

		content_hash_init(&fwd);
		content_hash_init(&rev);
		ck_assert_int_eq(content_hash_add(&fwd, pz, 2, &e), ERR_OK);
		ck_assert_int_eq(content_hash_add(&rev, nz, 2, &e), ERR_OK);
		ck_assert_mem_eq(fwd.sum, rev.sum, sizeof(fwd.sum));
		content_hash_clear(&fwd);
		content_hash_clear(&rev);
	}
	free(x);
}
END_TEST

static Suite *
content_hash_suite(void)
{
	Suite *s = suite_create("content_hash");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60); /* >= 10x the program's CPU (tests/README.md) */
	tcase_add_test(tc, test_known_values);
	tcase_add_test(tc, test_reuse_order_zero);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(content_hash_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
