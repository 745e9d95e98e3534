/*
 * test_rows.c - service/rows.{h,c}: tail validation, clipping to every
 * declared bound (dense and sparse alike), the packed records and the
 * builder (round trips; corrupt records fail closed).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "libsvm.h"
#include "rows.h"
#include "schema.h"

static struct data_schema
schema(size_t d, enum task task)
{
	struct data_schema s = { .d = d, .task = task };

	s.bounds = (struct bounds){ NAN, NAN, NAN, NAN, NAN };
	return s;
}

static unsigned long long rng_state = 0x1234567;

static double
unif(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng_state >> 11) * 0x1p-53;
}

START_TEST(test_tail_checks)
{
	struct data_schema s = schema(2, TASK_MULTICLASS);
	struct err e = { 0 };
	double t[4];

	s.n_classes = 3;
	s.n_groups = 2;
	s.n_categorical = 1;
	s.categorical[0] = (struct data_categorical){ .name = "colour", .size = 4 };
	ck_assert_uint_eq(rows_tail_len(&s), 3);
	memcpy(t, (double[]){ 3, 1, 2 }, sizeof(double) * 3);
	ck_assert_int_eq(rows_check_tail(&s, t, 7, 3, &e), ERR_OK);
	memcpy(t, (double[]){ 4, 1, 2 }, sizeof(double) * 3);
	ck_assert_int_eq(rows_check_tail(&s, t, 7, 3, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "data");
	ck_assert_ptr_nonnull(strstr(e.msg, "line 7, column 3"));
	ck_assert_ptr_nonnull(strstr(e.msg, "colour"));
	memcpy(t, (double[]){ 1.5, 1, 2 }, sizeof(double) * 3);
	ck_assert_int_eq(rows_check_tail(&s, t, 7, 3, &e), ERR_INVALID);
	memcpy(t, (double[]){ 0, 2, 2 }, sizeof(double) * 3);
	ck_assert_int_eq(rows_check_tail(&s, t, 8, 3, &e), ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(e.msg, "line 8, column 4: the group"));
	memcpy(t, (double[]){ 0, 1, 3 }, sizeof(double) * 3);
	ck_assert_int_eq(rows_check_tail(&s, t, 9, 3, &e), ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(e.msg, "line 9, column 5: the label must be a class"));
	memcpy(t, (double[]){ 0, -1, 0 }, sizeof(double) * 3);
	ck_assert_int_eq(rows_check_tail(&s, t, 9, 3, &e), ERR_INVALID);

	s = schema(2, TASK_BINARY);
	t[0] = 0.0;
	ck_assert_int_eq(rows_check_tail(&s, t, 1, 3, &e), ERR_INVALID);
	t[0] = -1.0;
	ck_assert_int_eq(rows_check_tail(&s, t, 1, 3, &e), ERR_OK);

	s = schema(2, TASK_REGRESSION);
	s.bounds.label_lo = -1.0;
	s.bounds.label_hi = 3.0;
	s.bounds.label = 3.0;
	t[0] = 7.0;
	ck_assert_int_eq(rows_check_tail(&s, t, 1, 3, &e), ERR_OK);
	ck_assert_double_eq(t[0], 3.0);
	t[0] = -2.0;
	ck_assert_int_eq(rows_check_tail(&s, t, 1, 3, &e), ERR_OK);
	ck_assert_double_eq(t[0], -1.0);

	s = schema(2, TASK_UNLABELED);
	ck_assert_uint_eq(rows_tail_len(&s), 0);
	ck_assert_int_eq(rows_check_tail(&s, t, 1, 3, &e), ERR_OK);
}
END_TEST

/* Labels of rows read through the CSV parser, mapped (at most 8 rows). */
struct mapped {
	const struct schema_binary_labels *l;
	double y[8];
	size_t n;
};

static enum err_code
on_mapped(void *ctx, const double *cells, size_t ncols, unsigned long line, struct err *e)
{
	struct mapped *m = ctx;
	double y = cells[ncols - 1];
	enum err_code rc = rows_map_label(m->l, true, &y, line, "column", ncols, e);

	if (rc == ERR_OK)
		m->y[m->n++] = y;
	return rc;
}

/* Read body (d = 1, binary) under the declared labels; the code. */
static enum err_code
read_labels(const char *labels, const char *body, struct mapped *m, struct err *e)
{
	char text[160];
	json_t *js, *jb = json_pack("{s:f}", "feature_l2", 1.0);
	struct data_schema s;
	struct schema_extra x;
	struct csv_parser p = { 0 };
	enum err_code rc;

	snprintf(text, sizeof(text), "{\"features\": 1, \"task\": \"binary\", \"labels\": %s}",
		 labels);
	js = json_loads(text, 0, NULL);
	ck_assert_int_eq(schema_parse_extra(js, jb, &s, &x, e), ERR_OK);
	json_decref(js);
	json_decref(jb);
	memset(m, 0, sizeof(*m));
	m->l = &x.binary;
	rc = csv_parser_init(&p, 2, 256, on_mapped, m, e);
	if (rc == ERR_OK)
		rc = rows_csv_labels(&p, &s, &x, e);
	if (rc == ERR_OK)
		rc = csv_parser_feed(&p, body, strlen(body), e);
	if (rc == ERR_OK)
		rc = csv_parser_finish(&p, e);
	csv_parser_clear(&p);
	if (rc == ERR_OK) {
		/* LIBSVM labels are numbers: string labels are refused there. */
		double y = 1.0;
		enum err_code r2 = rows_map_label(&x.binary, false, &y, 3, "entry", 1, e);

		ck_assert_int_eq(r2, x.binary.numeric ? ERR_OK : ERR_INVALID);
		if (x.binary.numeric)
			ck_assert_double_eq(y, x.binary.value[0] == 1.0 ? -1.0 : 1.0);
		else
			ck_assert_ptr_nonnull(strstr(e->msg, "upload as CSV"));
	}
	schema_extra_clear(&x);
	return rc;
}

/* schema.labels: two declared values become -1 / +1 at ingestion; any
 * other cell is refused naming its line and column, never its value. */
START_TEST(test_declared_labels)
{
	struct mapped m;
	struct err e = { 0 };

	ck_assert_int_eq(
		read_labels("[\"no\", \"yes\"]", "x,y\n0.5,yes\n0.1,no\n0.2,\"yes\"\n", &m, &e),
		ERR_OK);
	ck_assert_uint_eq(m.n, 3);
	ck_assert_double_eq(m.y[0], 1.0);
	ck_assert_double_eq(m.y[1], -1.0);
	ck_assert_double_eq(m.y[2], 1.0);
	ck_assert_int_eq(read_labels("[\"no\", \"yes\"]", "0.5,yes\n0.1,maybe\n", &m, &e),
			 ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(e.msg, "line 2"));

	ck_assert_int_eq(read_labels("[0, 1]", "0.5,1\n0.1,0\n0.3,1.0\n", &m, &e), ERR_OK);
	ck_assert_uint_eq(m.n, 3);
	ck_assert_double_eq(m.y[0], 1.0);
	ck_assert_double_eq(m.y[1], -1.0);
	ck_assert_double_eq(m.y[2], 1.0);
	ck_assert_int_eq(read_labels("[0, 1]", "0.5,1\n0.1,-1\n", &m, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "data");
	ck_assert_ptr_nonnull(strstr(e.msg, "line 2, column 2"));
	ck_assert_ptr_nonnull(strstr(e.msg, "schema.labels"));
	ck_assert_ptr_null(strstr(e.msg, "-1"));

	/* [1, 2]: 1 is the negative label now; 2 the positive */
	ck_assert_int_eq(read_labels("[1, 2]", "0.5,2\n0.1,1\n", &m, &e), ERR_OK);
	ck_assert_double_eq(m.y[0], 1.0);
	ck_assert_double_eq(m.y[1], -1.0);
	ck_assert_int_eq(read_labels("[1, 2]", "0.5,0.5\n", &m, &e), ERR_INVALID);
	ck_assert_ptr_null(strstr(e.msg, "0.5"));

	/* nothing declared: unchanged */
	{
		struct schema_binary_labels none = { 0 };
		double y = 7.0;

		ck_assert_int_eq(rows_map_label(&none, true, &y, 1, "column", 2, &e), ERR_OK);
		ck_assert_double_eq(y, 7.0);
	}
}
END_TEST

static double
l2(const double *v, size_t k)
{
	double s = 0.0;

	for (size_t j = 0; j < k; j++)
		s += v[j] * v[j];
	return sqrt(s);
}

static double
linf(const double *v, size_t k)
{
	double m = 0.0;

	for (size_t j = 0; j < k; j++)
		m = fmax(m, fabs(v[j]));
	return m;
}

/* Every declared bound holds after clipping; sparse clipping of the
 * non-zeros gives exactly the dense result. */
START_TEST(test_clip_bounds_dense_and_sparse)
{
	struct data_schema s = schema(9, TASK_BINARY);
	double x[9], v[9];
	uint32_t col[9];

	s.bounds.feature_linf = 0.7;
	s.bounds.feature_l2 = 1.3;
	s.n_blocks = 2;
	s.blocks[0] =
		(struct data_block){ .name = "a", .offset = 0, .size = 4, .l2 = 0.5, .linf = NAN };
	s.blocks[1] =
		(struct data_block){ .name = "b", .offset = 4, .size = 5, .l2 = NAN, .linf = 0.2 };
	for (int trial = 0; trial < 2000; trial++) {
		double scale = pow(10.0, 6.0 * unif() - 2.0);
		size_t nnz = 0;

		for (size_t j = 0; j < 9; j++) {
			x[j] = unif() < 0.3 ? 0.0 : scale * (2.0 * unif() - 1.0);
			if (trial % 97 == 0)
				x[j] = (j % 2 ? -1 : 1) * 1e300; /* overflow in the squares */
		}
		for (size_t j = 0; j < 9; j++)
			if (x[j] != 0.0) {
				col[nnz] = (uint32_t)j;
				v[nnz++] = x[j];
			}
		rows_clip_dense(&s, x);
		rows_clip_sparse(&s, col, v, nnz);
		ck_assert_double_le(linf(x, 9), 0.7);
		ck_assert_double_le(l2(x, 4), 0.5);
		ck_assert_double_le(linf(x + 4, 5), 0.2);
		ck_assert_double_le(l2(x, 9), 1.3);
		for (size_t k = 0; k < nnz; k++)
			ck_assert_double_eq(v[k], x[col[k]]);
	}
	/* A row within every bound is left alone. */
	{
		double in[9] = { 0.1, -0.2, 0.1, 0, 0.1, 0.05, 0, 0, -0.1 }, keep[9];

		memcpy(keep, in, sizeof(in));
		rows_clip_dense(&s, in);
		ck_assert_mem_eq(in, keep, sizeof(in));
	}
}
END_TEST

/* bounds.feature_range: every cell clipped into [lo, hi] (0 and negatives
 * up to lo, large down to hi), the implied feature_linf met; a LIBSVM row
 * (absent cells 0) refused when 0 is outside, clipped when inside; a
 * stored sparse record refused (fail closed) when 0 is outside. */
START_TEST(test_clip_feature_range)
{
	struct data_schema s = schema(5, TASK_UNLABELED);
	double x[5] = { 0.0, -3.0, 1.1, 7.5, 0.5 }, val[3] = { 2.0, -0.5, 0.25 }, v[3], tail[1];
	uint32_t col[3] = { 0, 2, 4 }, c[3];
	struct libsvm_row r = { .col = col, .val = val, .nnz = 3, .line = 4 };
	struct err e = { 0 };
	size_t nnz = 0;

	s.feature_lo = 0.5;
	s.feature_hi = 2.0;
	s.bounds.feature_linf = 2.0;
	ck_assert_int_eq(rows_ingest_dense(&s, x, 1, &e), ERR_OK);
	ck_assert_double_eq(x[0], 0.5);
	ck_assert_double_eq(x[1], 0.5);
	ck_assert_double_eq(x[2], 1.1);
	ck_assert_double_eq(x[3], 2.0);
	ck_assert_double_eq(x[4], 0.5);
	ck_assert_int_eq(rows_ingest_libsvm(&s, &r, c, v, &nnz, tail, &e), ERR_INVALID);
	ck_assert_str_eq(e.field, "data");
	ck_assert(strstr(e.msg, "feature_range") != NULL);
	{
		struct rows_builder b;
		unsigned char rec[4 + 12 * 3];

		ck_assert_int_eq(rows_builder_init(&b, &s, DATA_CSR, 1, 3, &e), ERR_OK);
		rows_put_sparse(&s, rec, col, val, 3, NULL);
		ck_assert_int_eq(rows_builder_add_records(&b, rec, sizeof(rec), 1, &e),
				 ERR_INTERNAL);
		rows_builder_clear(&b);
	}
	/* a range holding 0: sparse rows clipped, a clipped-to-0 entry dropped */
	s.feature_lo = 0.0;
	s.feature_hi = 1.0;
	s.bounds.feature_linf = 1.0;
	ck_assert_int_eq(rows_ingest_libsvm(&s, &r, c, v, &nnz, tail, &e), ERR_OK);
	ck_assert_uint_eq(nnz, 2);
	ck_assert_uint_eq(c[0], 0);
	ck_assert_double_eq(v[0], 1.0);
	ck_assert_uint_eq(c[1], 4);
	ck_assert_double_eq(v[1], 0.25);
}
END_TEST

static void
assert_same(const struct dataset *a, const struct dataset *b, const struct data_schema *s)
{
	ck_assert_uint_eq(a->n, b->n);
	ck_assert_int_eq(a->layout, b->layout);
	if (a->layout == DATA_DENSE) {
		ck_assert_mem_eq(a->x, b->x, a->n * s->d * sizeof(double));
	} else {
		ck_assert_mem_eq(a->row_ptr, b->row_ptr, (a->n + 1) * sizeof(size_t));
		ck_assert_mem_eq(a->col, b->col, a->row_ptr[a->n] * sizeof(uint32_t));
		ck_assert_mem_eq(a->val, b->val, a->row_ptr[a->n] * sizeof(double));
	}
	ck_assert_mem_eq(a->y, b->y, a->n * sizeof(double));
	ck_assert_mem_eq(a->group, b->group, a->n * sizeof(uint32_t));
	ck_assert_mem_eq(a->cat, b->cat, a->n * s->n_categorical * sizeof(uint32_t));
}

/* Rows added directly and rows packed, stored and decoded give the same
 * dataset, for both layouts. */
START_TEST(test_records_round_trip)
{
	struct data_schema s = schema(50, TASK_MULTICLASS);
	struct err e = { 0 };

	s.n_classes = 5;
	s.n_groups = 3;
	s.n_categorical = 2;
	s.categorical[0] = (struct data_categorical){ .name = "c0", .size = 2 };
	s.categorical[1] = (struct data_categorical){ .name = "c1", .size = 7 };
	for (int layout = 0; layout < 2; layout++) {
		struct rows_builder direct, stored;
		unsigned char *buf = malloc(1000 * rows_dense_bytes(&s)), *p = buf;
		struct dataset a, b;
		size_t rows = 1000;

		ck_assert_ptr_nonnull(buf);
		ck_assert_int_eq(rows_builder_init(&direct, &s, (enum data_layout)layout, 0, 0, &e),
				 ERR_OK);
		ck_assert_int_eq(
			rows_builder_init(&stored, &s, (enum data_layout)layout, 10, 10, &e),
			ERR_OK);
		for (size_t i = 0; i < rows; i++) {
			double x[50], tail[4] = { (double)(i % 2), (double)(i % 7), (double)(i % 3),
						  (double)(i % 5) };
			uint32_t col[50];
			double val[50];
			size_t nnz = 0;

			for (size_t j = 0; j < 50; j++) {
				x[j] = unif() < 0.8 ? 0.0 : unif() - 0.5;
				if (x[j] != 0.0) {
					col[nnz] = (uint32_t)j;
					val[nnz++] = x[j];
				}
			}
			if (layout == DATA_DENSE) {
				ck_assert_int_eq(rows_builder_add_dense(&direct, x, tail, &e),
						 ERR_OK);
				rows_put_dense(&s, p, x, tail);
				p += rows_dense_bytes(&s);
			} else {
				ck_assert_int_eq(
					rows_builder_add_sparse(&direct, col, val, nnz, tail, &e),
					ERR_OK);
				rows_put_sparse(&s, p, col, val, nnz, tail);
				p += rows_sparse_bytes(&s, nnz);
			}
		}
		/* Two chunks, split at a record boundary. */
		{
			size_t half = 0;
			unsigned char *q = buf;

			for (size_t i = 0; i < rows / 2; i++) {
				size_t sz = layout == DATA_DENSE
						    ? rows_dense_bytes(&s)
						    : rows_sparse_bytes(&s, q[0] | q[1] << 8);

				q += sz;
				half += sz;
			}
			ck_assert_int_eq(rows_builder_add_records(&stored, buf, half, rows / 2, &e),
					 ERR_OK);
			ck_assert_int_eq(rows_builder_add_records(&stored, buf + half,
								  (size_t)(p - buf) - half,
								  rows - rows / 2, &e),
					 ERR_OK);
		}
		rows_builder_view(&direct, &a, NULL);
		rows_builder_view(&stored, &b, NULL);
		assert_same(&a, &b, &s);
		ck_assert_uint_eq(a.n_classes, 5);
		ck_assert_uint_eq(a.group[4], 1);
		ck_assert_uint_eq(a.cat[2 * 5 + 1], 5);
		ck_assert_double_eq(a.y[6], 1.0);
		rows_builder_clear(&direct);
		rows_builder_clear(&stored);
		free(buf);
	}
}
END_TEST

/* Corrupt stored records are refused (fail closed), never loaded. */
START_TEST(test_corrupt_records_refused)
{
	struct data_schema s = schema(4, TASK_BINARY);
	struct rows_builder b;
	struct err e = { 0 };
	unsigned char buf[256];
	double tail[1] = { 1.0 };

	ck_assert_int_eq(rows_builder_init(&b, &s, DATA_CSR, 0, 0, &e), ERR_OK);
	rows_put_sparse(&s, buf, (const uint32_t[]){ 1, 3 }, (const double[]){ 0.5, -0.5 }, 2,
			tail);
	ck_assert_int_eq(rows_builder_add_records(&b, buf, rows_sparse_bytes(&s, 2), 1, &e),
			 ERR_OK);
	/* truncated */
	ck_assert_int_eq(rows_builder_add_records(&b, buf, rows_sparse_bytes(&s, 2) - 1, 1, &e),
			 ERR_INTERNAL);
	/* left-over bytes */
	ck_assert_int_eq(rows_builder_add_records(&b, buf, rows_sparse_bytes(&s, 2) + 3, 1, &e),
			 ERR_INTERNAL);
	/* columns out of order, out of range, a zero value, a bad label */
	rows_put_sparse(&s, buf, (const uint32_t[]){ 3, 1 }, (const double[]){ 0.5, -0.5 }, 2,
			tail);
	ck_assert_int_eq(rows_builder_add_records(&b, buf, rows_sparse_bytes(&s, 2), 1, &e),
			 ERR_INTERNAL);
	rows_put_sparse(&s, buf, (const uint32_t[]){ 1, 4 }, (const double[]){ 0.5, -0.5 }, 2,
			tail);
	ck_assert_int_eq(rows_builder_add_records(&b, buf, rows_sparse_bytes(&s, 2), 1, &e),
			 ERR_INTERNAL);
	rows_put_sparse(&s, buf, (const uint32_t[]){ 1, 2 }, (const double[]){ 0.0, -0.5 }, 2,
			tail);
	ck_assert_int_eq(rows_builder_add_records(&b, buf, rows_sparse_bytes(&s, 2), 1, &e),
			 ERR_INTERNAL);
	tail[0] = 0.5;
	rows_put_sparse(&s, buf, (const uint32_t[]){ 1, 2 }, (const double[]){ 0.1, -0.5 }, 2,
			tail);
	ck_assert_int_eq(rows_builder_add_records(&b, buf, rows_sparse_bytes(&s, 2), 1, &e),
			 ERR_INTERNAL);
	ck_assert_uint_eq(b.n, 1);
	rows_builder_clear(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("rows");
	TCase *tc = tcase_create("rows");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_tail_checks);
	tcase_add_test(tc, test_declared_labels);
	tcase_add_test(tc, test_clip_bounds_dense_and_sparse);
	tcase_add_test(tc, test_clip_feature_range);
	tcase_add_test(tc, test_records_round_trip);
	tcase_add_test(tc, test_corrupt_records_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
