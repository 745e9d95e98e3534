/*
 * test_onepass_order.c - the sequential order of one-pass runs
 * (algorithms/row_order.h), the seal-time shuffle (service/rows.h,
 * rows_builder_shuffle) and the per-run pool (service/run_pool.h):
 *
 *  - the order visits every stored row exactly once, in runs of
 *    consecutive rows, and put_first moves a row to position 0;
 *  - optimisation quality: dp_sgd.one_pass on data stored sorted by label,
 *    after one seal-time shuffle, with 24 run seeds, against 24 runs on
 *    fresh uniformly random orders (the old scheme) with the same seeds
 *    (so the same noise draws): a one-sided paired t test on the loss
 *    (excess loss over a common reference: the same differences);
 *  - the batch split: bit-identical results with no executor, a pool of 1
 *    and a pool of 2 threads.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "objective.h"
#include "row_order.h"
#include "rows.h"
#include "run_pool.h"

static double
std_normal(struct rng *r)
{
	double u = 1.0 - rng_uniform(r), v = rng_uniform(r);

	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

START_TEST(test_order_visits_every_row_once)
{
	static const size_t ns[] = { 1, 2, 7, 100, 1000, 4097 };
	static const size_t lens[] = { 1, 3, 64, 1000, 5000 };

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
		for (size_t c = 0; c < sizeof(lens) / sizeof(lens[0]); c++) {
			size_t n = ns[a], len = lens[c] < n ? lens[c] : n, runs = 0;
			unsigned char *seen = calloc(n, 1);
			struct row_order o;
			struct rng r;
			struct err e = { 0 };

			ck_assert_ptr_nonnull(seen);
			rng_splitmix_init(&r, 17 + n + len);
			ck_assert_int_eq(row_order_draw(&o, &r, n, len, &e), ERR_OK);
			for (size_t pos = 0; pos < n;) {
				size_t first, cnt = row_order_run(&o, pos, n - pos, &first);

				ck_assert_uint_ge(cnt, 1);
				ck_assert_uint_le(first + cnt, n);
				for (size_t i = 0; i < cnt; i++) {
					ck_assert_uint_eq(row_order_row(&o, pos + i), first + i);
					ck_assert_msg(!seen[first + i], "row %zu twice", first + i);
					seen[first + i] = 1;
				}
				pos += cnt;
				runs++;
			}
			/* at most three breaks per block: block end, inner wrap, wrap at n */
			ck_assert_uint_le(runs, 3 * o.blocks + 1);
			row_order_put_first(&o, n / 2);
			ck_assert_uint_eq(row_order_row(&o, 0), n / 2);
			memset(seen, 0, n);
			for (size_t pos = 0; pos < n; pos++) {
				size_t row = row_order_row(&o, pos);

				ck_assert(!seen[row]);
				seen[row] = 1;
			}
			row_order_free(&o);
			free(seen);
		}
	}
}
END_TEST

/* The seal-time shuffle keeps every row whole (features, label, group,
 * categorical cells move together), dense and CSR, and moves rows. */
START_TEST(test_seal_shuffle_keeps_rows)
{
	const size_t n = 500, d = 4;

	for (int csr = 0; csr < 2; csr++) {
		struct rows_builder b = { 0 };
		unsigned char *seen = calloc(n, 1);
		size_t moved = 0, nnz = 0;
		struct rng r;
		struct err e = { 0 };

		ck_assert_ptr_nonnull(seen);
		b.schema.d = d;
		b.schema.task = TASK_REGRESSION;
		b.schema.n_groups = 3;
		b.schema.n_categorical = 2;
		b.layout = csr ? DATA_CSR : DATA_DENSE;
		b.n = b.cap = n;
		b.y = malloc(n * sizeof(double));
		b.group = malloc(n * sizeof(uint32_t));
		b.cat = malloc(2 * n * sizeof(uint32_t));
		ck_assert(b.y != NULL && b.group != NULL && b.cat != NULL);
		if (csr) {
			b.row_ptr = malloc((n + 1) * sizeof(size_t));
			b.col = malloc(2 * n * sizeof(uint32_t));
			b.val = malloc(2 * n * sizeof(double));
			ck_assert(b.row_ptr != NULL && b.col != NULL && b.val != NULL);
			b.row_ptr[0] = 0;
		} else {
			b.x = malloc(n * d * sizeof(double));
			ck_assert_ptr_nonnull(b.x);
		}
		for (size_t i = 0; i < n; i++) {
			b.y[i] = (double)i;
			b.group[i] = (uint32_t)(i % 3);
			b.cat[2 * i] = (uint32_t)(i % 7);
			b.cat[2 * i + 1] = (uint32_t)(i % 11);
			if (csr) {
				/* rows of 1 or 2 entries: (i mod d, i + 1) [, (d - 1, -i)] */
				b.col[nnz] = (uint32_t)(i % (d - 1));
				b.val[nnz++] = (double)i + 1.0;
				if (i % 2) {
					b.col[nnz] = (uint32_t)(d - 1);
					b.val[nnz++] = -(double)i;
				}
				b.row_ptr[i + 1] = nnz;
			} else {
				for (size_t j = 0; j < d; j++)
					b.x[i * d + j] = (double)(i * d + j);
			}
		}
		b.nnz = b.nnz_cap = nnz;
		rng_splitmix_init(&r, 3);
		ck_assert_int_eq(rows_builder_shuffle(&b, &r, &e), ERR_OK);
		for (size_t k = 0; k < n; k++) {
			size_t i = (size_t)b.y[k];

			ck_assert(i < n && !seen[i]);
			seen[i] = 1;
			moved += i != k;
			ck_assert_uint_eq(b.group[k], i % 3);
			ck_assert_uint_eq(b.cat[2 * k], i % 7);
			ck_assert_uint_eq(b.cat[2 * k + 1], i % 11);
			if (csr) {
				size_t lo = b.row_ptr[k];

				ck_assert_uint_eq(b.row_ptr[k + 1] - lo, 1 + i % 2);
				ck_assert_uint_eq(b.col[lo], i % (d - 1));
				ck_assert(b.val[lo] == (double)i + 1.0);
				if (i % 2)
					ck_assert(b.col[lo + 1] == d - 1 &&
						  b.val[lo + 1] == -(double)i);
			} else {
				for (size_t j = 0; j < d; j++)
					ck_assert(b.x[k * d + j] == (double)(i * d + j));
			}
		}
		ck_assert_uint_eq(csr ? b.row_ptr[n] : nnz, nnz);
		ck_assert_uint_gt(moved, n / 2);
		rows_builder_clear(&b);
		free(seen);
	}
}
END_TEST

/* ---- optimisation quality against a uniformly random order ---- */

#define Q_N     20000
#define Q_D     10
#define Q_SEEDS 24
/* t_{0.9995} with 23 degrees of freedom: a false failure has probability
 * 5e-4; a mean shift of about (3.77 + 1.32) = 5.1 standard errors of the
 * mean paired difference is detected with probability 0.9. */
#define Q_T_CRIT 3.77

struct qdata {
	struct data_schema schema;
	double *x, *y; /* n * d, n: sorted by label (-1 rows first) */
};

static void
qdata_init(struct qdata *q)
{
	struct rng r;
	double w[Q_D], nw = 0.0;
	double *x = malloc(Q_N * Q_D * sizeof(double)), *y = malloc(Q_N * sizeof(double));
	size_t lo = 0, hi = Q_N;

	ck_assert(x != NULL && y != NULL);
	q->x = malloc(Q_N * Q_D * sizeof(double));
	q->y = malloc(Q_N * sizeof(double));
	ck_assert(q->x != NULL && q->y != NULL);
	rng_splitmix_init(&r, 4242);
	for (int j = 0; j < Q_D; j++) {
		w[j] = std_normal(&r);
		nw += w[j] * w[j];
	}
	for (size_t i = 0; i < Q_N; i++) {
		double *row = x + i * Q_D, n2 = 0.0, z = 0.0;

		for (int j = 0; j < Q_D; j++) {
			row[j] = std_normal(&r) / sqrt((double)Q_D);
			n2 += row[j] * row[j];
		}
		n2 = sqrt(n2);
		for (int j = 0; j < Q_D; j++) {
			if (n2 > 1.0)
				row[j] /= n2;
			z += 3.5 / sqrt(nw) * w[j] * row[j];
		}
		y[i] = rng_uniform(&r) < 1.0 / (1.0 + exp(-z)) ? 1.0 : -1.0;
	}
	/* Stored sorted by label: the worst order for a sequential pass. */
	for (size_t i = 0; i < Q_N; i++) {
		size_t to = y[i] < 0 ? lo++ : --hi;

		memcpy(q->x + to * Q_D, x + i * Q_D, Q_D * sizeof(double));
		q->y[to] = y[i];
	}
	free(x);
	free(y);
	memset(&q->schema, 0, sizeof(q->schema));
	q->schema.d = Q_D;
	q->schema.task = TASK_BINARY;
	q->schema.bounds.feature_l2 = 1.0;
	q->schema.bounds.feature_linf = NAN;
	q->schema.bounds.label = NAN;
	q->schema.bounds.label_lo = q->schema.bounds.label_hi = NAN;
}

static void
q_spec(struct run_spec *s, const struct alg_ops *a, const struct data_schema *sc, size_t n,
       bool intercept)
{
	struct objective_params op;

	memset(s, 0, sizeof(*s));
	s->x.kind = CONSTRAINT_L2_BALL;
	s->x.radius = 5.0;
	s->epsilon = 1;
	s->delta = 1e-6;
	alg_default_params(a, s->params);
	s->n = n;
	s->schema = *sc;
	objective_params_default(&op);
	op.intercept = intercept;
	ck_assert_int_eq(run_spec_set_objective(s, objective_find("logistic"), &op, NULL), ERR_OK);
}

static double
q_loss(const struct alg_ops *a, const struct run_spec *s, const struct run_plan *plan,
       const struct dataset *run_on, const struct dataset *eval_on, uint64_t seed)
{
	double w[Q_D + 2];
	struct err e = { 0 };
	struct rng r;

	rng_splitmix_init(&r, seed);
	ck_assert_msg(alg_run(a, s, plan, run_on, &r, NULL, NULL, w, &e) == ERR_OK, "run: %s",
		      e.msg);
	return objective_mean_loss(&s->objective, eval_on, w);
}

static void
mean_var(const double *v, int k, double *m, double *var)
{
	double s = 0.0, ss = 0.0;

	for (int i = 0; i < k; i++)
		s += v[i];
	*m = s / k;
	for (int i = 0; i < k; i++)
		ss += (v[i] - *m) * (v[i] - *m);
	*var = ss / (k - 1);
}

START_TEST(test_quality_equals_random_order)
{
	const struct alg_ops *a = alg_find("dp_sgd.one_pass");
	struct qdata q;
	struct rows_builder b = { 0 };
	struct dataset sorted, sealed;
	struct run_spec s;
	struct run_plan plan;
	struct err e = { 0 };
	struct rng seal;
	double seq[Q_SEEDS], rnd[Q_SEEDS], dif[Q_SEEDS], ms, vs, mr, vr, md, vd, se, t;

	ck_assert_ptr_nonnull(a);
	qdata_init(&q);
	sorted = (struct dataset){ .n = Q_N, .d = Q_D, .layout = DATA_DENSE, .x = q.x, .y = q.y };
	/* The service's seal-time shuffle, once, as the cache does on load
	 * (a seeded generator standing in for the CSPRNG). */
	b.schema = q.schema;
	b.layout = DATA_DENSE;
	b.n = b.cap = Q_N;
	b.x = malloc(Q_N * Q_D * sizeof(double));
	b.y = malloc(Q_N * sizeof(double));
	ck_assert(b.x != NULL && b.y != NULL);
	memcpy(b.x, q.x, Q_N * Q_D * sizeof(double));
	memcpy(b.y, q.y, Q_N * sizeof(double));
	rng_splitmix_init(&seal, 99);
	ck_assert_int_eq(rows_builder_shuffle(&b, &seal, &e), ERR_OK);
	rows_builder_view(&b, &sealed, NULL);

	q_spec(&s, a, &q.schema, Q_N, true);
	ck_assert_msg(alg_plan(a, &s, &plan, &e) == ERR_OK, "plan: %s", e.msg);
	for (int k = 0; k < Q_SEEDS; k++) {
		struct dataset_copy perm = { 0 };
		size_t idx[Q_N];
		struct rng r;

		/* This run: the sequential order over the one sealed order. */
		seq[k] = q_loss(a, &s, &plan, &sealed, &sorted, 1000 + (uint64_t)k);
		/* The reference: a fresh uniformly random order of the rows. */
		for (size_t i = 0; i < Q_N; i++)
			idx[i] = i;
		rng_splitmix_init(&r, 5000 + (uint64_t)k);
		for (size_t i = Q_N - 1; i > 0; i--) {
			size_t j = (size_t)rng_below(&r, i + 1), tmp = idx[i];

			idx[i] = idx[j];
			idx[j] = tmp;
		}
		ck_assert_int_eq(dataset_subset(&sorted, idx, Q_N, &perm, &e), ERR_OK);
		rnd[k] = q_loss(a, &s, &plan, &perm.ds, &sorted, 1000 + (uint64_t)k);
		dataset_copy_free(&perm);
	}
	for (int k = 0; k < Q_SEEDS; k++)
		dif[k] = seq[k] - rnd[k];
	mean_var(seq, Q_SEEDS, &ms, &vs);
	mean_var(rnd, Q_SEEDS, &mr, &vr);
	mean_var(dif, Q_SEEDS, &md, &vd);
	se = sqrt(vd / Q_SEEDS);
	t = md / se;
	fprintf(stderr,
		"onepass order: mean loss sequential %.6f (sd %.2e), random %.6f (sd %.2e), "
		"paired difference %.2e, se %.2e, t %.2f (fail above %.2f; detects +%.2e with "
		"p 0.9)\n",
		ms, sqrt(vs), mr, sqrt(vr), md, se, t, Q_T_CRIT, 5.1 * se);
	ck_assert_msg(t <= Q_T_CRIT,
		      "sequential order worse than a random order: t = %.2f > %.2f (mean loss "
		      "%.6f vs %.6f)",
		      t, Q_T_CRIT, ms, mr);
	rows_builder_clear(&b);
	free(q.x);
	free(q.y);
}
END_TEST

/* ---- the batch split: the same bits on any pool ---- */

#define P_N 40000
#define P_D 50

START_TEST(test_threads_bit_identical)
{
	const struct alg_ops *a = alg_find("dp_sgd.one_pass");
	struct data_schema sc = { .d = P_D, .task = TASK_BINARY };
	double *x = malloc((size_t)P_N * P_D * sizeof(double)), *y = malloc(P_N * sizeof(double));
	/* Zeroed: without an intercept the run writes only P_D entries, and
	 * the memcmp below reads all P_D + 1 (a stale last entry failed it
	 * when CK_FORK=no reused the stack of an earlier test). */
	double w0[P_D + 1] = { 0 }, w1[P_D + 1] = { 0 }, w2[P_D + 1] = { 0 };
	double *out[3] = { w0, w1, w2 };
	struct dataset ds;
	struct run_spec s;
	struct run_plan plan;
	struct err e = { 0 };
	struct rng r;

	ck_assert(a != NULL && x != NULL && y != NULL);
	rng_splitmix_init(&r, 7);
	for (size_t i = 0; i < P_N; i++) {
		for (size_t j = 0; j < P_D; j++)
			x[i * P_D + j] = (2.0 * rng_uniform(&r) - 1.0) / sqrt((double)P_D);
		y[i] = rng_uniform(&r) < 0.5 ? -1.0 : 1.0;
	}
	ds = (struct dataset){ .n = P_N, .d = P_D, .layout = DATA_DENSE, .x = x, .y = y };
	sc.bounds.feature_l2 = 1.0;
	sc.bounds.feature_linf = NAN;
	sc.bounds.label = sc.bounds.label_lo = sc.bounds.label_hi = NAN;
	q_spec(&s, a, &sc, P_N, false);
	s.params[0] = 4000; /* batch_size: 4000 x 51 gives 3 slices */
	ck_assert_uint_ge(row_order_parts(4000, P_D + 1), 2);
	ck_assert_msg(alg_plan(a, &s, &plan, &e) == ERR_OK, "plan: %s", e.msg);
	for (int t = 0; t < 3; t++) {
		struct run_pool pool;

		run_pool_init(&pool, (unsigned)t);
		s.exec = t == 0 ? NULL : &pool.exec;
		rng_splitmix_init(&r, 31);
		ck_assert_msg(alg_run(a, &s, &plan, &ds, &r, NULL, NULL, out[t], &e) == ERR_OK,
			      "run: %s", e.msg);
		if (t == 2)
			ck_assert_msg(pool.started == 1, "the helper thread did not start");
		run_pool_clear(&pool);
	}
	ck_assert_msg(memcmp(w0, w1, sizeof(w0)) == 0, "pool of 1 differs from serial");
	ck_assert_msg(memcmp(w0, w2, sizeof(w0)) == 0, "pool of 2 differs from serial");
	/* The raw batch sums (before the noise lattice's rounding, which
	 * would hide a last-bit difference), batch after batch. */
	{
		struct row_order o;
		struct run_pool pool;
		struct alg_exec *ex;
		double wq[P_D + 1], g0[P_D + 1], g2[P_D + 1], scratch[8 * (P_D + 1)];

		rng_splitmix_init(&r, 5);
		ck_assert_int_eq(row_order_draw(&o, &r, P_N, 700, &e), ERR_OK);
		for (size_t j = 0; j <= P_D; j++)
			wq[j] = (2.0 * rng_uniform(&r) - 1.0) / sqrt((double)P_D);
		run_pool_init(&pool, 2);
		ex = &pool.exec;
		for (size_t p0 = 0; p0 + 4000 <= P_N; p0 += 4000) {
			memset(g0, 0, sizeof(g0));
			memset(g2, 0, sizeof(g2));
			row_order_batch_grad(&o, &s.objective, &ds, p0, 4000, wq, 10.0, g0, P_D,
					     scratch, NULL);
			row_order_batch_grad(&o, &s.objective, &ds, p0, 4000, wq, 10.0, g2, P_D,
					     scratch, ex);
			ck_assert_msg(memcmp(g0, g2, sizeof(g0)) == 0,
				      "batch at %zu: the sums differ with 2 threads", p0);
		}
		run_pool_clear(&pool);
		row_order_free(&o);
	}
	free(x);
	free(y);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("onepass_order");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_order_visits_every_row_once);
	tcase_add_test(tc, test_seal_shuffle_keeps_rows);
	tcase_add_test(tc, test_quality_equals_random_order);
	tcase_add_test(tc, test_threads_bit_identical);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
