/*
 * test_filter.c - the Rényi filter (algorithms/privacy/filter.c): the grid
 * and caps, rounding directions, admission, refunds by recomputation, and
 * the noise a single Gaussian run needs to fill a budget.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "privacy/filter.h"

/* Smallest Gaussian noise multiplier z whose curve a/(2 z^2) fits f. */
static double
min_gaussian_z(const struct filter *f)
{
	double lo = 0.01, hi = 1e6;

	for (int it = 0; it < 200; it++) {
		double z = sqrt(lo * hi), run[FILTER_MAX_ORDERS];
		int idx;

		for (unsigned i = 0; i < f->m; i++)
			run[i] = f->order[i] / (2.0 * z * z);
		ck_assert_int_eq(filter_fits(f, run, &idx, NULL), ERR_OK);
		if (idx >= 0)
			hi = z;
		else
			lo = z;
	}
	return hi;
}

START_TEST(test_grid_and_caps)
{
	struct filter f;
	struct err e = { 0 };

	ck_assert_int_eq(filter_init(&f, 1.0, 1e-6, &e), ERR_OK);
	ck_assert_uint_eq(f.m, 6);
	ck_assert_double_eq_tol(f.order[0], 17.0, 1e-12);
	ck_assert_double_eq_tol(f.order[f.m - 1], 1.0 + exp2(6.5), 1e-9);
	for (unsigned i = 0; i < f.m; i++) {
		double exact = filter_cap(1.0, 1e-6, f.m, f.order[i]);

		ck_assert(f.cap[i] > 0.0 && f.cap[i] < exact); /* rounded down */
		ck_assert(f.spent[i] == 0.0);
		if (i > 0)
			ck_assert(f.order[i] > f.order[i - 1]);
	}
	/* One Gaussian run filling (1, 1e-6): 4.894 with this grid (4.22 basic,
	 * 4.53 with one order, 5.06 with 16: docs/privacy-model.md §4.2). */
	ck_assert_double_eq_tol(min_gaussian_z(&f), 4.894, 5e-3);
	/* Larger budgets have lower orders, and every budget gets some. */
	ck_assert_int_eq(filter_init(&f, 10.0, 1e-6, &e), ERR_OK);
	ck_assert(f.order[0] < 4.0);
	ck_assert_double_eq_tol(min_gaussian_z(&f), 0.603, 2e-3);
	ck_assert_int_eq(filter_init(&f, 0.01, 1e-9, &e), ERR_OK);
	ck_assert(f.m >= 3 && f.order[f.m - 1] > 4000.0);
}
END_TEST

START_TEST(test_refusals)
{
	struct filter f = { .m = 99 };
	struct err e = { 0 };
	double run[FILTER_MAX_ORDERS] = { 0 };
	int idx;

	ck_assert_int_eq(filter_init(&f, 1.0, 0.0, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "budget.delta");
	ck_assert_int_eq(filter_init(&f, 0.0, 1e-6, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "budget.epsilon");
	ck_assert_int_eq(filter_init(&f, 1e-7, 1e-12, &e), ERR_INVALID); /* no positive cap */
	ck_assert_uint_eq(f.m, 99);                                      /* untouched */
	ck_assert_int_eq(filter_init(&f, 1.0, 1e-6, &e), ERR_OK);
	run[2] = NAN;
	ck_assert_int_eq(filter_fits(&f, run, &idx, &e), ERR_NUMERIC);
	run[2] = -1e-9;
	ck_assert_int_eq(filter_fits(&f, run, &idx, &e), ERR_NUMERIC);
	run[2] = INFINITY;
	ck_assert_int_eq(filter_fits(&f, run, &idx, &e), ERR_NUMERIC);
}
END_TEST

START_TEST(test_admission_sequence)
{
	struct filter f;
	double run[FILTER_MAX_ORDERS];
	unsigned admitted = 0;
	int idx;

	/* Gaussians of z = 15 into (1, 1e-6): each order a can take
	 * floor(cap(a) / (a / 450)) of them; the filter admits the best of
	 * those counts, then nothing more. */
	ck_assert_int_eq(filter_init(&f, 1.0, 1e-6, NULL), ERR_OK);
	for (unsigned i = 0; i < f.m; i++)
		run[i] = f.order[i] / (2.0 * 15.0 * 15.0);
	for (;;) {
		ck_assert_int_eq(filter_fits(&f, run, &idx, NULL), ERR_OK);
		if (idx < 0)
			break;
		filter_add(&f, run);
		admitted++;
		/* the admitting order is never exceeded */
		ck_assert(f.spent[idx] <= f.cap[idx]);
	}
	{
		unsigned best = 0;

		for (unsigned i = 0; i < f.m; i++) {
			unsigned k = (unsigned)floor(f.cap[i] / run[i]);

			/* rounding up may cost the last one at an exact fit */
			if (k * run[i] == f.cap[i])
				k--;
			best = k > best ? k : best;
		}
		ck_assert_uint_eq(admitted, best);
		ck_assert_uint_eq(admitted, 9); /* 9 z = 15 runs: mu = 3/15 */
	}
}
END_TEST

START_TEST(test_rounding_and_sums)
{
	struct filter f;
	double rows[3 * FILTER_MAX_ORDERS], sum[FILTER_MAX_ORDERS];

	ck_assert_int_eq(filter_init(&f, 3.0, 1e-5, NULL), ERR_OK);
	for (unsigned r = 0; r < 3; r++)
		for (unsigned i = 0; i < f.m; i++)
			rows[r * f.m + i] = 0.1 * (r + 1) + 1e-3 * i;
	for (unsigned r = 0; r < 3; r++)
		filter_add(&f, rows + r * f.m);
	filter_sum(f.m, rows, 3, sum);
	for (unsigned i = 0; i < f.m; i++) {
		double exact = 0.6 + 3e-3 * i;

		ck_assert(sum[i] == f.spent[i]); /* a refund's recomputation agrees */
		ck_assert(sum[i] >= exact);      /* rounded up, never below */
		ck_assert(sum[i] <= exact * (1 + 1e-14));
	}
}
END_TEST

START_TEST(test_indicative_epsilon)
{
	struct filter f;
	double run[FILTER_MAX_ORDERS];
	double before, after;
	bool any;

	ck_assert_int_eq(filter_init(&f, 1.0, 1e-6, NULL), ERR_OK);
	before = filter_spent_epsilon(&f, 1e-6, &any);
	ck_assert(any && before == 0.0); /* nothing spent */
	for (unsigned i = 0; i < f.m; i++)
		run[i] = f.order[i] / (2.0 * 10.0 * 10.0);
	filter_add(&f, run);
	after = filter_spent_epsilon(&f, 1e-6, &any);
	ck_assert(any && after > before && after <= 1.0);
	/* one z = 4.894 run fills it: the indicative spend reaches ~1 */
	for (unsigned i = 0; i < f.m; i++)
		f.spent[i] = f.order[i] / (2.0 * 4.894 * 4.894);
	after = filter_spent_epsilon(&f, 1e-6, &any);
	ck_assert_double_eq_tol(after, 1.0, 2e-3);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("filter");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_grid_and_caps);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_admission_sequence);
	tcase_add_test(tc, test_rounding_and_sums);
	tcase_add_test(tc, test_indicative_epsilon);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
