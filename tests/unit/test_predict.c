/*
 * test_predict.c - scoring with a released model (algorithms/predict.c):
 * margins against hand computation in the objective's layout (one-margin
 * and multiclass, with and without intercept), probabilities and classes,
 * no overflow at large margins, and the objective-to-link table.
 */
#include <check.h>
#include <math.h>

#include "predict.h"

START_TEST(test_logistic_intercept)
{
	const double w[] = { 0.5, -2.0, 0.25 }; /* w1, w2, b */
	const double x[] = { 1.0, 0.5 };
	struct predict_model m = { .d = 2,
				   .n_out = 1,
				   .intercept = true,
				   .classify = true,
				   .link = PREDICT_LOGISTIC,
				   .w = w };
	double z, p;
	long c;

	predict_row(&m, x, &z, &p, &c);
	ck_assert_double_eq_tol(z, 0.5 - 1.0 + 0.25, 1e-15);
	ck_assert_double_eq_tol(p, 1.0 / (1.0 + exp(0.25)), 1e-15);
	ck_assert_int_eq(c, -1);
	m.intercept = false;
	predict_row(&m, (const double[]){ 1.0, -0.5 }, &z, &p, &c);
	ck_assert_double_eq_tol(z, 1.5, 1e-15);
	ck_assert_int_eq(c, 1);
	/* large margins: probabilities 0 and 1, never NaN */
	predict_row(&m, (const double[]){ -2000.0, 0.0 }, &z, &p, &c);
	ck_assert(p >= 0.0 && p < 1e-300);
	predict_row(&m, (const double[]){ 2000.0, 0.0 }, &z, &p, &c);
	ck_assert_double_eq(p, 1.0);
}
END_TEST

START_TEST(test_softmax)
{
	/* d = 2, K = 3, feature-major W[j K + k], then b_k */
	const double w[] = { 1, 0, -1, /* x1 */ 0, 2, 0, /* x2 */ 0.1, 0.2, 0.3 };
	const double x[] = { 0.5, 1.0 };
	struct predict_model m = { .d = 2,
				   .n_out = 3,
				   .intercept = true,
				   .classify = true,
				   .link = PREDICT_SOFTMAX,
				   .w = w };
	double s[3], p[3], want[3] = { 0.5 + 0.1, 2.0 + 0.2, -0.5 + 0.3 }, sum = 0;
	long c;

	predict_row(&m, x, s, p, &c);
	for (int k = 0; k < 3; k++) {
		ck_assert_double_eq_tol(s[k], want[k], 1e-15);
		sum += exp(want[k]);
	}
	for (int k = 0; k < 3; k++)
		ck_assert_double_eq_tol(p[k], exp(want[k]) / sum, 1e-15);
	ck_assert_int_eq(c, 1);
}
END_TEST

START_TEST(test_margin_link)
{
	const double w[] = { 2.0, 3.0, -1.0 };
	struct predict_model m = { .d = 2,
				   .n_out = 1,
				   .intercept = true,
				   .classify = false,
				   .link = PREDICT_MARGIN,
				   .w = w };
	double z, p;
	long c = 7;
	enum predict_link l;

	predict_row(&m, (const double[]){ 1.0, 1.0 }, &z, &p, &c);
	ck_assert_double_eq(z, 4.0);
	ck_assert(isnan(p));
	ck_assert_int_eq(c, 0);
	m.classify = true; /* hinge on a binary task */
	predict_row(&m, (const double[]){ -1.0, 0.0 }, &z, &p, &c);
	ck_assert_int_eq(c, -1);

	ck_assert(predict_link_of("logistic", &l) && l == PREDICT_LOGISTIC);
	ck_assert(predict_link_of("multiclass_logistic", &l) && l == PREDICT_SOFTMAX);
	ck_assert(predict_link_of("least_squares", &l) && l == PREDICT_MARGIN);
	ck_assert(!predict_link_of("bilinear", &l));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("predict");
	TCase *tc = tcase_create("core");
	SRunner *r;
	int failed;

	tcase_add_test(tc, test_logistic_intercept);
	tcase_add_test(tc, test_softmax);
	tcase_add_test(tc, test_margin_link);
	suite_add_tcase(s, tc);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed == 0 ? 0 : 1;
}
