/*
 * test_ratelimit.c - token buckets (service/ratelimit.h): burst, refill,
 * Retry-After, peek, independence of keys, and eviction that can only
 * forget a bucket (never throttle a key that has not spent its burst).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "ratelimit.h"

START_TEST(test_burst_then_refill)
{
	struct ratelimit *rl = ratelimit_new(2.0, 3.0, 64); /* 2 per second, burst 3 */
	unsigned ra = 0;

	ck_assert_ptr_nonnull(rl);
	for (int i = 0; i < 3; i++)
		ck_assert(ratelimit_take(rl, "k", 100.0, &ra));
	ck_assert(!ratelimit_take(rl, "k", 100.0, &ra));
	ck_assert_uint_eq(ra, 1); /* half a second to the next token, rounded up */
	ck_assert(!ratelimit_take(rl, "k", 100.4, &ra));
	ck_assert(ratelimit_take(rl, "k", 100.5, &ra));
	/* Idle for long: refilled to the burst, not beyond. */
	for (int i = 0; i < 3; i++)
		ck_assert(ratelimit_take(rl, "k", 1000.0, &ra));
	ck_assert(!ratelimit_take(rl, "k", 1000.0, &ra));
	ratelimit_free(rl);
}
END_TEST

/* Looking never evicts: a key spent to zero stays throttled however many
 * other keys are only looked at (peeks of unknown addresses on every
 * request once reset a throttled address by pushing its bucket out). */
START_TEST(test_peek_never_evicts)
{
	struct ratelimit *rl = ratelimit_new(0.001, 1.0, 16);
	char key[32];
	unsigned ra = 0;

	ck_assert_ptr_nonnull(rl);
	ck_assert(ratelimit_take(rl, "x", 1.0, &ra));
	ck_assert(!ratelimit_peek(rl, "x", 1.0, &ra));
	for (int i = 0; i < 10000; i++) {
		snprintf(key, sizeof(key), "peek-%d", i);
		ck_assert(ratelimit_peek(rl, key, 1.0, &ra)); /* unknown: a full bucket */
	}
	ck_assert(!ratelimit_peek(rl, "x", 1.0, &ra));
	ck_assert(!ratelimit_take(rl, "x", 1.0, &ra));
	ck_assert_uint_ge(ra, 1);
	ratelimit_free(rl);
}
END_TEST

START_TEST(test_retry_after_slow_rate)
{
	struct ratelimit *rl = ratelimit_new(0.1, 1.0, 16); /* one per 10 s */
	unsigned ra = 0;

	ck_assert(ratelimit_take(rl, "a", 5.0, &ra));
	ck_assert(!ratelimit_take(rl, "a", 5.0, &ra));
	ck_assert_uint_eq(ra, 10);
	ck_assert(!ratelimit_peek(rl, "a", 11.0, &ra));
	ck_assert_uint_eq(ra, 4);
	ratelimit_free(rl);
}
END_TEST

START_TEST(test_peek_does_not_take)
{
	struct ratelimit *rl = ratelimit_new(1.0, 1.0, 16);

	for (int i = 0; i < 5; i++)
		ck_assert(ratelimit_peek(rl, "p", 1.0, NULL));
	ck_assert(ratelimit_take(rl, "p", 1.0, NULL));
	ck_assert(!ratelimit_peek(rl, "p", 1.0, NULL));
	ratelimit_free(rl);
}
END_TEST

START_TEST(test_keys_independent_and_eviction_lenient)
{
	struct ratelimit *rl = ratelimit_new(0.001, 2.0, 16);
	char key[32];

	ck_assert(ratelimit_take(rl, "x", 1.0, NULL));
	ck_assert(ratelimit_take(rl, "x", 1.0, NULL));
	ck_assert(!ratelimit_take(rl, "x", 1.0, NULL));
	ck_assert(ratelimit_take(rl, "y", 1.0, NULL));
	/* Far more keys than slots: every new key starts with its burst. */
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		ck_assert(ratelimit_take(rl, key, 2.0 + i, NULL));
	}
	ratelimit_free(rl);
}
END_TEST

START_TEST(test_bad_parameters)
{
	ck_assert_ptr_null(ratelimit_new(0.0, 1.0, 16));
	ck_assert_ptr_null(ratelimit_new(1.0, 0.5, 16));
	ratelimit_free(NULL);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ratelimit");
	TCase *tc = tcase_create("ratelimit");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_burst_then_refill);
	tcase_add_test(tc, test_peek_never_evicts);
	tcase_add_test(tc, test_retry_after_slow_rate);
	tcase_add_test(tc, test_peek_does_not_take);
	tcase_add_test(tc, test_keys_independent_and_eviction_lenient);
	tcase_add_test(tc, test_bad_parameters);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
