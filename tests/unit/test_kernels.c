/*
 * test_kernels.c - the dense block kernels of kernels.h (struct kern_ops):
 * every instruction-set copy the CPU runs (baseline SSE2, AVX2, AVX-512F,
 * forced one at a time through kern_ops_for()) gives the same bits as the
 * scalar reference loops of kernels.h (kern_dot_sqnorm, kern_dot,
 * kern_axpy): tolerance zero, because the copies share one order of
 * operations and none uses fused multiply-add (kernels_isa.c).  A path the
 * CPU lacks is reported and skipped; the baseline always runs.  Then the
 * one-margin batch gradient, which runs on the best copy, equals the sum
 * of per-record gradients bit for bit, dense and sequential.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "objective.h"
#include "rng.h"

#define MAXD 131

static double
rnd(struct rng *r)
{
	/* mixed magnitudes, so that rounding differences would show */
	return (2.0 * rng_uniform(r) - 1.0) * ldexp(1.0, (int)rng_below(r, 21) - 10);
}

static int
same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* dots and axpys of path isa against the reference, for d = 1 .. MAXD,
 * nb = 1 .. 8 rows. */
START_TEST(test_path_matches_reference)
{
	const struct kern_ops *k = kern_ops_for((enum kern_isa)_i);
	static double x[8][MAXD], w[MAXD], g[MAXD], want[MAXD];
	struct rng r;
	size_t checked = 0;

	if (k == NULL) {
		printf("kernel path %d: not supported by this CPU, skipped\n", _i);
		return;
	}
	printf("kernel path %s: checking\n", k->name);
	rng_splitmix_init(&r, 0x6e7 + (uint64_t)_i);
	for (size_t d = 1; d <= MAXD; d += (d < 20 ? 1 : 7)) {
		for (size_t nb = 1; nb <= 8; nb++) {
			const double *rows[8];
			double z[8], nn[8], z2[8], c[8];

			for (size_t t = 0; t < nb; t++) {
				for (size_t j = 0; j < d; j++)
					x[t][j] = rnd(&r);
				rows[t] = x[t];
				c[t] = rnd(&r);
			}
			for (size_t j = 0; j < d; j++) {
				w[j] = rnd(&r);
				g[j] = want[j] = rnd(&r);
			}
			k->dots(rows, nb, w, d, z, nn);
			k->dots(rows, nb, w, d, z2, NULL);
			for (size_t t = 0; t < nb; t++) {
				double rn, rz = kern_dot_sqnorm(w, x[t], d, &rn);

				ck_assert_msg(same_bits(z[t], rz),
					      "%s d=%zu nb=%zu: dot %.17g != %.17g", k->name, d, nb,
					      z[t], rz);
				ck_assert_msg(same_bits(nn[t], rn),
					      "%s d=%zu: sqnorm %.17g != %.17g", k->name, d, nn[t],
					      rn);
				ck_assert_msg(same_bits(z2[t], kern_dot(x[t], w, d)),
					      "%s d=%zu: dot without norm", k->name, d);
				kern_axpy(c[t], x[t], want, d);
			}
			k->axpys(rows, c, nb, g, d);
			for (size_t j = 0; j < d; j++)
				ck_assert_msg(same_bits(g[j], want[j]),
					      "%s d=%zu nb=%zu: g[%zu] %.17g != %.17g", k->name, d,
					      nb, j, g[j], want[j]);
			checked++;
		}
	}
	ck_assert_uint_eq(checked, 280); /* 35 widths x 8 block sizes */
}
END_TEST

/* The best copy is one of the table's, and the baseline always exists. */
START_TEST(test_dispatch)
{
	const struct kern_ops *best = kern_ops_best(), *base = kern_ops_for(KERN_ISA_BASELINE);
	int found = 0;

	ck_assert_ptr_nonnull(base);
	ck_assert_ptr_null(kern_ops_for(KERN_ISA__COUNT));
	for (int i = 0; i < KERN_ISA__COUNT; i++)
		found |= kern_ops_for((enum kern_isa)i) == best;
	ck_assert(found);
	printf("kernel path in use: %s\n", best->name);
}
END_TEST

/* The batch gradient on the best path: the bits of the per-record sum, for
 * a sequential dense pass of more than one block (d not a multiple of 8),
 * with and without the clip. */
START_TEST(test_batch_equals_records)
{
	enum { N = 37, D = 13 };
	static double x[N * D], y[N];
	struct data_schema s;
	struct objective_params p;
	struct objective o;
	struct err e = { 0 };
	struct rng r;
	struct dataset ds = { .n = N, .d = D, .layout = DATA_DENSE, .x = x, .y = y };
	double w[D + 1], want[D + 1] = { 0 }, got[D + 1] = { 0 };

	memset(&s, 0, sizeof(s));
	s.d = D;
	s.task = TASK_BINARY;
	s.bounds.feature_l2 = 1.0;
	s.bounds.feature_linf = NAN;
	s.bounds.label = s.bounds.label_lo = s.bounds.label_hi = NAN;
	objective_params_default(&p);
	p.intercept = true;
	ck_assert_int_eq(objective_init(&o, objective_find("logistic"), &p, &s, &e), ERR_OK);
	rng_splitmix_init(&r, 0xfeed);
	for (size_t i = 0; i < N; i++) {
		for (size_t j = 0; j < D; j++)
			x[i * D + j] = (2.0 * rng_uniform(&r) - 1.0) / sqrt((double)D);
		y[i] = rng_uniform(&r) < 0.5 ? -1.0 : 1.0;
	}
	for (size_t j = 0; j <= D; j++)
		w[j] = 2.0 * rng_uniform(&r) - 1.0;
	for (size_t i = 0; i < N; i++)
		(void)objective_grad(&o, &ds, i, w, 1.0, want);
	objective_batch_grad(&o, &ds, NULL, N, w, INFINITY, got);
	for (size_t j = 0; j <= D; j++)
		ck_assert_msg(same_bits(got[j], want[j]), "g[%zu] %.17g != %.17g", j, got[j],
			      want[j]);
	/* a clip above every record's norm changes nothing */
	memset(got, 0, sizeof(got));
	objective_batch_grad(&o, &ds, NULL, N, w, 1e6, got);
	for (size_t j = 0; j <= D; j++)
		ck_assert(same_bits(got[j], want[j]));
}
END_TEST

/* The CSR pass (the sparse loops of kernels.h in blocks of rows): the
 * bits of the per-record sum, whole and one row at a time. */
START_TEST(test_csr_batch_equals_records)
{
	enum { N = 64, D = 50, NNZ = 5 };
	static double val[N * NNZ], y[N];
	static uint32_t col[N * NNZ];
	static size_t row_ptr[N + 1];
	struct data_schema s;
	struct objective_params p;
	struct objective o;
	struct err e = { 0 };
	struct rng r;
	struct dataset ds = { .n = N,
			      .d = D,
			      .layout = DATA_CSR,
			      .row_ptr = row_ptr,
			      .col = col,
			      .val = val,
			      .y = y };
	double w[D + 1], want[D + 1] = { 0 }, got[D + 1] = { 0 };

	memset(&s, 0, sizeof(s));
	s.d = D;
	s.task = TASK_BINARY;
	s.bounds.feature_l2 = 1.0;
	s.bounds.feature_linf = NAN;
	s.bounds.label = s.bounds.label_lo = s.bounds.label_hi = NAN;
	objective_params_default(&p);
	p.intercept = true;
	ck_assert_int_eq(objective_init(&o, objective_find("logistic"), &p, &s, &e), ERR_OK);
	rng_splitmix_init(&r, 0xc5a);
	for (size_t i = 0; i < N; i++) {
		row_ptr[i] = i * NNZ;
		for (size_t k = 0; k < NNZ; k++) {
			/* distinct sorted columns, one per stripe of D / NNZ */
			col[i * NNZ + k] = (uint32_t)(k * (D / NNZ) + rng_below(&r, D / NNZ));
			val[i * NNZ + k] = (2.0 * rng_uniform(&r) - 1.0) / sqrt((double)NNZ);
		}
		y[i] = rng_uniform(&r) < 0.5 ? -1.0 : 1.0;
	}
	row_ptr[N] = N * NNZ;
	for (size_t j = 0; j <= D; j++)
		w[j] = 2.0 * rng_uniform(&r) - 1.0;
	for (size_t i = 0; i < N; i++)
		(void)objective_grad(&o, &ds, i, w, 1.0, want);
	objective_batch_grad(&o, &ds, NULL, N, w, INFINITY, got);
	for (size_t j = 0; j <= D; j++)
		ck_assert_msg(same_bits(got[j], want[j]), "csr g[%zu] %.17g != %.17g", j, got[j],
			      want[j]);
	memset(got, 0, sizeof(got));
	objective_batch_grad(&o, &ds, NULL, N, w, 1e6, got);
	for (size_t j = 0; j <= D; j++)
		ck_assert(same_bits(got[j], want[j]));
	/* one row at a time, onto the running sum */
	memset(got, 0, sizeof(got));
	for (size_t i = 0; i < N; i++)
		objective_batch_grad(&o, &ds, &i, 1, w, INFINITY, got);
	for (size_t j = 0; j <= D; j++)
		ck_assert(same_bits(got[j], want[j]));
}
END_TEST

/*
 * A CSR batch large enough for the interleaved scratch (kern_wg_new():
 * w and g in one array, and, sequential, the col/val prefetch ahead)
 * against the plain loops one row at a time (too few entries for the
 * scratch): the same bits, with the clip active on some rows and without,
 * sequential and gathered, onto a gradient that does not start at zero
 * (the scratch must start from g's values).  Rows of 0 to 24 entries
 * (odd and even lengths, empty rows), d = 300.
 */
START_TEST(test_csr_interleaved_equals_plain)
{
	enum { N = 400, D = 300, MAXNNZ = 24 };
	static double val[N * MAXNNZ], y[N];
	static uint32_t col[N * MAXNNZ];
	static size_t row_ptr[N + 1], perm[N];
	struct data_schema s;
	struct objective_params p;
	struct objective o;
	struct err e = { 0 };
	struct rng r;
	struct dataset ds = { .n = N,
			      .d = D,
			      .layout = DATA_CSR,
			      .row_ptr = row_ptr,
			      .col = col,
			      .val = val,
			      .y = y };
	double w[D + 1], g0[D + 1], want[D + 1], got[D + 1];
	const double clips[2] = { 0.3, INFINITY };
	double unclipped[D + 1];
	size_t nnz = 0, nonempty = 0;

	memset(&s, 0, sizeof(s));
	s.d = D;
	s.task = TASK_BINARY;
	s.bounds.feature_l2 = 1.0;
	s.bounds.feature_linf = NAN;
	s.bounds.label = s.bounds.label_lo = s.bounds.label_hi = NAN;
	objective_params_default(&p);
	p.intercept = true;
	ck_assert_int_eq(objective_init(&o, objective_find("logistic"), &p, &s, &e), ERR_OK);
	rng_splitmix_init(&r, 0x3c5);
	for (size_t i = 0; i < N; i++) {
		const size_t len = (size_t)rng_below(&r, MAXNNZ + 1), stripe = D / MAXNNZ;
		row_ptr[i] = nnz;
		for (size_t k = 0; k < len; k++) {
			/* distinct sorted columns, one per stripe */
			col[nnz] = (uint32_t)(k * stripe + rng_below(&r, stripe));
			val[nnz] = rnd(&r) / 1024.0 / MAXNNZ; /* ||x|| <= 1 */
			nnz++;
		}
		nonempty += len > 0;
		y[i] = rng_uniform(&r) < 0.5 ? -1.0 : 1.0;
		perm[i] = i;
	}
	row_ptr[N] = nnz;
	for (size_t i = N - 1; i > 0; i--) { /* Fisher-Yates */
		size_t j = (size_t)rng_below(&r, i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t j = 0; j <= D; j++) {
		w[j] = rnd(&r);
		g0[j] = rnd(&r);
	}
	/* the whole batch takes the scratch, one row never does */
	ck_assert(kern_wg_worth(nnz, D));
	ck_assert(!kern_wg_worth(MAXNNZ, D));
	ck_assert_uint_gt(nonempty, N / 2);
	for (int c = 0; c < 2; c++) {
		for (int gathered = 0; gathered < 2; gathered++) {
			memcpy(want, g0, sizeof(want));
			for (size_t k = 0; k < N; k++) {
				size_t i = gathered ? perm[k] : k;

				objective_batch_grad(&o, &ds, &i, 1, w, clips[c], want);
			}
			memcpy(got, g0, sizeof(got));
			objective_batch_grad(&o, &ds, gathered ? perm : NULL, N, w, clips[c], got);
			for (size_t j = 0; j <= D; j++)
				ck_assert_msg(same_bits(got[j], want[j]),
					      "clip %g gathered %d: g[%zu] %.17g != %.17g",
					      clips[c], gathered, j, got[j], want[j]);
			if (c == 1 && !gathered)
				memcpy(unclipped, got, sizeof(got));
		}
	}
	/* the clip of 0.3 was active: the clipped sum (want, c = 0) differs */
	objective_batch_grad(&o, &ds, NULL, N, w, clips[0], memcpy(want, g0, sizeof(want)));
	ck_assert(memcmp(want, unclipped, sizeof(want)) != 0);
	/* the strided loops are the plain ones: stride 2 over interleaved copies */
	{
		static double wi[2 * D], gi[2 * D], gp[D];
		struct rng q;

		rng_splitmix_init(&q, 0x51de);
		for (size_t j = 0; j < D; j++) {
			wi[2 * j] = w[j];
			gi[2 * j + 1] = gp[j] = rnd(&q);
		}
		for (size_t i = 0; i < N; i++) {
			const size_t b = row_ptr[i], len = row_ptr[i + 1] - b;
			double n1, n2, a = rnd(&q);

			ck_assert(same_bits(kern_sdot_s(col + b, val + b, len, wi, 2),
					    kern_sdot(col + b, val + b, len, w)));
			ck_assert(same_bits(kern_sdot_sqnorm_s(col + b, val + b, len, wi, 2, &n1),
					    kern_sdot_sqnorm(col + b, val + b, len, w, &n2)));
			ck_assert(same_bits(n1, n2));
			kern_saxpy_s(a, col + b, val + b, len, gi + 1, 2);
			kern_saxpy(a, col + b, val + b, len, gp);
		}
		for (size_t j = 0; j < D; j++)
			ck_assert(same_bits(gi[2 * j + 1], gp[j]));
	}
}
END_TEST

static Suite *
kernels_suite(void)
{
	Suite *s = suite_create("kernels");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_path_matches_reference, 0, KERN_ISA__COUNT);
	tcase_add_test(tc, test_dispatch);
	tcase_add_test(tc, test_batch_equals_records);
	tcase_add_test(tc, test_csr_batch_equals_records);
	tcase_add_test(tc, test_csr_interleaved_equals_plain);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(kernels_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
