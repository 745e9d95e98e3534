/*
 * test_rng.c - the buffered generator of common/rng.c: the word fast path
 * hands out exactly the bytes rng_bytes() would, wipes them, and the
 * splitmix stream does not depend on the buffer size (seeded tests pin
 * samples through it); a failing source gives zeros and rng_ok() false.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* splitmix64 written out again, independently of rng.c. */
static uint64_t
ref_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#define STREAM_WORDS (3 * RNG_BUFFER_BYTES / 8 + 5) /* three refills and a bit */

/* The stream is splitmix64's words in order, whatever RNG_BUFFER_BYTES. */
START_TEST(test_splitmix_stream)
{
	struct rng r;
	uint64_t s = 12345;

	rng_splitmix_init(&r, 12345);
	for (size_t i = 0; i < STREAM_WORDS; i++)
		ck_assert_uint_eq(rng_u64(&r), ref_next(&s));
	ck_assert(rng_ok(&r));
}
END_TEST

/* rng_u64() and rng_bytes() read one stream: draws of odd lengths leave
 * the position unaligned, so words also straddle refills. */
START_TEST(test_u64_matches_bytes)
{
	static const size_t lens[] = { 8, 3, 8, 8, 1, 13, 8, 64, 5, 8, 2, 8, 8, 8, 7 };
	struct rng a, b;
	size_t used = 0;

	rng_splitmix_init(&a, 99);
	rng_splitmix_init(&b, 99);
	for (size_t i = 0; used < 3 * RNG_BUFFER_BYTES; i++) {
		size_t len = lens[i % (sizeof(lens) / sizeof(lens[0]))];
		unsigned char x[64], y[64];

		if (len == 8) {
			uint64_t v = rng_u64(&a);

			memcpy(x, &v, 8);
		} else {
			rng_bytes(&a, x, len);
		}
		rng_bytes(&b, y, len);
		ck_assert_mem_eq(x, y, len);
		ck_assert_uint_eq(a.pos, b.pos);
		used += len;
	}
}
END_TEST

/* Bytes handed out by the fast path are cleared from the buffer. */
START_TEST(test_u64_wipes)
{
	static const unsigned char zero[8];
	struct rng r;

	rng_splitmix_init(&r, 7);
	for (int i = 0; i < 100; i++) {
		(void)rng_u64(&r);
		ck_assert_mem_eq(r.buf + r.pos - 8, zero, 8);
	}
	ck_assert_uint_eq(r.pos, 800);
}
END_TEST

/* One successful refill, then failures. */
static bool
once_refill(struct rng *r)
{
	if (r->splitmix == 0)
		return false;
	r->splitmix = 0;
	memset(r->buf, 0xa5, RNG_BUFFER_BYTES);
	return true;
}

START_TEST(test_failing_source)
{
	struct rng r;
	size_t words = RNG_BUFFER_BYTES / 8;

	rng_splitmix_init(&r, 1);
	r.refill = once_refill;
	for (size_t i = 0; i < words; i++)
		ck_assert_uint_eq(rng_u64(&r), 0xa5a5a5a5a5a5a5a5ULL);
	ck_assert(rng_ok(&r));
	for (size_t i = 0; i < 2 * words + 3; i++)
		ck_assert_uint_eq(rng_u64(&r), 0);
	ck_assert(!rng_ok(&r));
}
END_TEST

static Suite *
rng_suite(void)
{
	Suite *s = suite_create("rng");
	TCase *tc = tcase_create("unit");

	tcase_add_test(tc, test_splitmix_stream);
	tcase_add_test(tc, test_u64_matches_bytes);
	tcase_add_test(tc, test_u64_wipes);
	tcase_add_test(tc, test_failing_source);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(rng_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
