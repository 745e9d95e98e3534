/*
 * test_dataset_cache.c - the workers' shared dataset cache
 * (service/dataset_cache.h) with a counting loader: one load per dataset
 * however many threads ask at once, LRU eviction by bytes, entries in use
 * never freed, failed loads not cached, idle entries dropped.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dataset_cache.h"

#define ENTRY_BYTES 1000

static atomic_uint loads;
static atomic_bool fail_next;

static void
sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

/* A dataset of one row whose label is the id's first character. */
static enum err_code
fake_load(void *ctx, struct db_conn *db, const char *id, const void *arg,
	  struct loaded_dataset *ret, struct err *e)
{
	long delay = arg != NULL ? *(const long *)arg : 0;

	atomic_fetch_add(&loads, 1);
	if (delay > 0)
		sleep_ms(delay);
	if (atomic_exchange(&fail_next, false))
		return err_set(e, ERR_DB, "load failed");
	{
		struct data_schema s = { .d = 1, .task = TASK_REGRESSION };
		double x = 0.5, y = (double)id[0];

		s.bounds = (struct bounds){ NAN, 1.0, 1e9, -1e9, 1e9 };
		*ret = (struct loaded_dataset){ 0 };
		ck_assert_int_eq(rows_builder_init(&ret->rows, &s, DATA_DENSE, 1, 0, e), ERR_OK);
		ck_assert_int_eq(rows_builder_add_dense(&ret->rows, &x, &y, e), ERR_OK);
		rows_builder_view(&ret->rows, &ret->view, NULL);
	}
	ret->bytes = ENTRY_BYTES;
	return ERR_OK;
}

static const struct loaded_dataset *
get(struct dataset_cache *c, const char *id)
{
	const struct loaded_dataset *ds = NULL;
	struct err e = { 0 };

	ck_assert_int_eq(dataset_cache_get(c, NULL, id, NULL, &ds, &e), ERR_OK);
	ck_assert_double_eq(ds->view.y[0], (double)id[0]);
	return ds;
}

START_TEST(test_hit_after_miss)
{
	struct dataset_cache *c = dataset_cache_new(10 * ENTRY_BYTES, 600, fake_load, NULL);
	struct dataset_cache_stats st;
	const struct loaded_dataset *a, *b;

	atomic_store(&loads, 0);
	a = get(c, "a");
	dataset_cache_put(c, a);
	b = get(c, "a");
	ck_assert_ptr_eq(a, b);
	dataset_cache_put(c, b);
	ck_assert_uint_eq(atomic_load(&loads), 1);
	dataset_cache_stats(c, &st);
	ck_assert_uint_eq(st.hits, 1);
	ck_assert_uint_eq(st.misses, 1);
	ck_assert_uint_eq(st.entries, 1);
	ck_assert_uint_eq(st.bytes, ENTRY_BYTES);
	dataset_cache_free(c);
}
END_TEST

struct racer {
	struct dataset_cache *c;
	const struct loaded_dataset *got;
	double label; /* what the thread saw at once, -1 for no rows */
};

static void *
race(void *arg)
{
	struct racer *r = arg;
	long delay = 50;
	struct err e = { 0 };

	r->label = -2;
	if (dataset_cache_get(r->c, NULL, "z", &delay, &r->got, &e) == ERR_OK)
		r->label = r->got->view.y != NULL ? r->got->view.y[0] : -1;
	return NULL;
}

START_TEST(test_concurrent_gets_load_once)
{
	struct dataset_cache *c = dataset_cache_new(10 * ENTRY_BYTES, 600, fake_load, NULL);
	struct racer r[8];
	pthread_t t[8];

	atomic_store(&loads, 0);
	for (int i = 0; i < 8; i++) {
		r[i] = (struct racer){ .c = c };
		ck_assert_int_eq(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(atomic_load(&loads), 1);
	for (int i = 0; i < 8; i++) {
		/* Every thread sees the loaded rows, never a half-built entry. */
		ck_assert_double_eq(r[i].label, 'z');
		ck_assert_ptr_eq(r[i].got, r[0].got);
		dataset_cache_put(c, r[i].got);
	}
	dataset_cache_free(c);
}
END_TEST

START_TEST(test_lru_eviction)
{
	struct dataset_cache *c = dataset_cache_new(2 * ENTRY_BYTES, 600, fake_load, NULL);
	struct dataset_cache_stats st;

	atomic_store(&loads, 0);
	dataset_cache_put(c, get(c, "a"));
	dataset_cache_put(c, get(c, "b"));
	dataset_cache_put(c, get(c, "a")); /* a is now the most recent */
	dataset_cache_put(c, get(c, "c")); /* evicts b, the least recent */
	ck_assert_uint_eq(atomic_load(&loads), 3);
	dataset_cache_put(c, get(c, "a"));
	dataset_cache_put(c, get(c, "c"));
	ck_assert_uint_eq(atomic_load(&loads), 3);
	dataset_cache_put(c, get(c, "b"));
	ck_assert_uint_eq(atomic_load(&loads), 4);
	dataset_cache_stats(c, &st);
	ck_assert_uint_le(st.bytes, 2 * ENTRY_BYTES);
	ck_assert_uint_eq(st.evictions, 2);
	dataset_cache_free(c);
}
END_TEST

START_TEST(test_in_use_never_freed)
{
	/* Nothing is kept once unused, but a held entry stays valid and is
	 * shared. */
	struct dataset_cache *c = dataset_cache_new(0, 600, fake_load, NULL);
	const struct loaded_dataset *a, *b;
	struct dataset_cache_stats st;

	atomic_store(&loads, 0);
	a = get(c, "a");
	dataset_cache_put(c, get(c, "x")); /* over the limit: would evict a if it could */
	b = get(c, "a");
	ck_assert_ptr_eq(a, b);
	ck_assert_double_eq(a->view.y[0], 'a');
	dataset_cache_put(c, a);
	dataset_cache_put(c, b);
	dataset_cache_stats(c, &st);
	ck_assert_uint_eq(st.entries, 0);
	ck_assert_uint_eq(st.bytes, 0);
	dataset_cache_free(c);
}
END_TEST

START_TEST(test_failed_load_not_cached)
{
	struct dataset_cache *c = dataset_cache_new(10 * ENTRY_BYTES, 600, fake_load, NULL);
	const struct loaded_dataset *ds = NULL;
	struct err e = { 0 };
	struct dataset_cache_stats st;

	atomic_store(&loads, 0);
	atomic_store(&fail_next, true);
	ck_assert_int_eq(dataset_cache_get(c, NULL, "f", NULL, &ds, &e), ERR_DB);
	dataset_cache_stats(c, &st);
	ck_assert_uint_eq(st.entries, 0);
	dataset_cache_put(c, get(c, "f"));
	ck_assert_uint_eq(atomic_load(&loads), 2);
	dataset_cache_free(c);
}
END_TEST

START_TEST(test_idle_entries_dropped)
{
	struct dataset_cache *c = dataset_cache_new(10 * ENTRY_BYTES, 0.05, fake_load, NULL);

	atomic_store(&loads, 0);
	dataset_cache_put(c, get(c, "a"));
	sleep_ms(120);
	dataset_cache_put(c, get(c, "a"));
	ck_assert_uint_eq(atomic_load(&loads), 2);
	dataset_cache_free(c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("dataset_cache");
	TCase *tc = tcase_create("cache");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_hit_after_miss);
	tcase_add_test(tc, test_concurrent_gets_load_once);
	tcase_add_test(tc, test_lru_eviction);
	tcase_add_test(tc, test_in_use_never_freed);
	tcase_add_test(tc, test_failed_load_not_cached);
	tcase_add_test(tc, test_idle_entries_dropped);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
