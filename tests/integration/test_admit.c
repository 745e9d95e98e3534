/*
 * test_admit.c - admission at the budget's edge, through dpopt_admit2()
 * (migration 0014; dpopt_admit() of 0012 for replicas not yet upgraded)
 * and the service: a run that exactly fits is admitted and one that is
 * one ulp over is refused, in both accounting modes and, for 'renyi', at
 * every order; the SQL fit check (dpopt_up(), dpopt_filter_fit()) is the
 * C one bit for bit; the functions fail closed when the filter is not the
 * one the service checked (0012) or the curve is not on the ledger's
 * orders (0014), or the dataset is not what the run was planned for.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "harness.h"

static struct h_server srv;
static char db[512];
static char owner[128]; /* tenant acme, owner */

#define MAX_ORDERS 24

static void
setup(void)
{
	h_owner_setup(&srv, db, sizeof(db), owner, sizeof(owner), NULL);
}

static void
teardown(void)
{
	h_server_stop_fixture(&srv, 30.0);
}

/* A sealed standard binary dataset with this budget and mode. */
static void
dataset(const char *epsilon, const char *delta, const char *mode, char *id)
{
	char body[512];
	char *csv = h_csv(H_N, H_D, true, 7);

	snprintf(body, sizeof(body),
		 "{\"name\": \"edge\", \"schema\": {\"features\": 5, \"task\": \"binary\"},"
		 " \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": %s, \"delta\": %s},"
		 " \"accounting_mode\": \"%s\"}",
		 epsilon, delta, mode);
	h_dataset_create(&srv, owner, body, id);
	h_upload(&srv, owner, id, csv);
	free(csv);
}

/* The standard run with this (epsilon, delta); body has room for 512. */
static void
run_body(char *body, const char *epsilon, const char *delta)
{
	snprintf(body, 512,
		 "{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": \"logistic\"},"
		 " \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 3}},"
		 " \"privacy\": {\"epsilon\": %s, \"delta\": %s}}",
		 epsilon, delta);
}

/* The shortest decimal of v that reads back as v. */
static void
shortest(double v, char out[32])
{
	for (int p = 1; p <= 17; p++) {
		snprintf(out, 32, "%.*g", p, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

/* basic: epsilon 0.3 holds 0.1 + 0.1 + 0.1 exactly; after 0.2, a run of
 * the next double above 0.1 is refused with what remains, then 0.1 is
 * admitted and fills the budget exactly. */
START_TEST(test_basic_epsilon_edge)
{
	char ds[40], path[128], body[512], over[32], want[256], out[64];
	json_t *j;

	dataset("0.3", "1e-4", "basic", ds);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, NULL));
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, NULL));
	shortest(nextafter(0.1, INFINITY), over);
	ck_assert_str_eq(over, "0.10000000000000002");
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	h_sql(db, out, sizeof(out),
	      "SELECT (budget_delta - spent_delta)::text FROM datasets"
	      " WHERE id = '%s'",
	      ds);
	snprintf(want, sizeof(want),
		 "the run costs epsilon %s, delta 1e-06; the dataset has epsilon 0.1, delta %s "
		 "remaining",
		 over, out);
	run_body(body, over, "1e-6");
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 409,
		       "budget_exceeded", "privacy", want);
	j = h_run_create(&srv, owner, ds, H_RUN_BODY, NULL);
	ck_assert_double_eq(json_number_value(h_get(j, "privacy.charged.epsilon")), 0.1);
	json_decref(j);
	h_ledger_check(db, ds, out, sizeof(out));
	ck_assert_str_eq(out, "0.3");
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT (spent_epsilon = budget_epsilon)::int FROM datasets"
				  " WHERE id = '%s'",
				  ds),
			 1);
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "budget_exceeded", "privacy",
		       "the dataset has epsilon 0.0, delta");
}
END_TEST

/* basic, the delta sum: 3e-6 holds three runs of 1e-6; the next double
 * above 1e-6 is refused after two, then 1e-6 fills it exactly. */
START_TEST(test_basic_delta_edge)
{
	char ds[40], path[128], body[512], over[32], out[64];

	dataset("10", "3e-6", "basic", ds);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, NULL));
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, NULL));
	shortest(nextafter(1e-6, INFINITY), over);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	run_body(body, "0.1", over);
	h_expect_error(&srv, "POST", path, owner, "application/json", body, strlen(body), NULL, 409,
		       "budget_exceeded", "privacy",
		       "the run costs epsilon 0.1, delta 1.0000000000000002e-06; the dataset has "
		       "epsilon 9.8, delta 0.000001 remaining");
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, NULL));
	h_ledger_check(db, ds, out, sizeof(out));
	ck_assert_int_eq(h_sql_ll(db,
				  "SELECT (spent_delta = budget_delta)::int FROM datasets"
				  " WHERE id = '%s'",
				  ds),
			 1);
}
END_TEST

/* A float8[] column's text into v; returns how many. */
static unsigned
parse_array(const char *text, double *v)
{
	const char *p = text + 1;
	unsigned m = 0;
	char *end;

	ck_assert_msg(text[0] == '{', "not an array: %s", text);
	while (*p != '}' && m < MAX_ORDERS) {
		v[m++] = strtod(p, &end);
		ck_assert(end != p);
		p = *end == ',' ? end + 1 : end;
	}
	return m;
}

static void
set_spent(const char *ds, const double *s, unsigned m)
{
	char lit[MAX_ORDERS * 26 + 3], out[16];
	size_t used = 0;

	lit[used++] = '{';
	for (unsigned i = 0; i < m; i++)
		used += (size_t)snprintf(lit + used, sizeof(lit) - used, "%s%.17g", i ? "," : "",
					 s[i]);
	snprintf(lit + used, sizeof(lit) - used, "}");
	h_sql(db, out, sizeof(out),
	      "WITH u AS (UPDATE datasets SET spent_rdp = '%s' WHERE id = '%s' RETURNING 1)"
	      " SELECT count(*) FROM u",
	      lit, ds);
	ck_assert_str_eq(out, "1");
}

static double
up(double x)
{
	return nextafter(x, INFINITY);
}

/*
 * A renyi dataset with one probe run: the run's curve r and the caps on the
 * filter's orders (m of them), and per order the edge: s[i] the largest
 * spent at which the run still fits (up(s + up(r)) <= cap), over[i] = up(s[i])
 * where it no longer does; room[i] false (s = over = cap) where the run fits
 * nowhere even when empty.  *ret_fits: the orders with room.
 */
static unsigned
renyi_edges(char ds[40], double *r, double *cap, double *s, double *over, bool *room,
	    unsigned *ret_fits)
{
	char probe[40], text[MAX_ORDERS * 26 + 3];
	unsigned m, fits = 0;

	dataset("1", "1e-4", "renyi", ds);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, probe));
	h_sql(db, text, sizeof(text), "SELECT charge_rdp::text FROM runs WHERE id = '%s'", probe);
	m = parse_array(text, r);
	h_sql(db, text, sizeof(text), "SELECT filter_caps::text FROM datasets WHERE id = '%s'", ds);
	ck_assert_uint_eq(parse_array(text, cap), m);
	for (unsigned i = 0; i < m; i++) {
		double u = up(r[i]), x = cap[i] - u;

		room[i] = x >= 0.0;
		if (!room[i]) { /* no room at this order even when empty */
			s[i] = over[i] = cap[i];
			continue;
		}
		while (x > 0.0 && up(x + u) > cap[i])
			x = nextafter(x, -INFINITY);
		while (up(up(x) + u) <= cap[i])
			x = up(x);
		ck_assert(up(x + u) <= cap[i] && up(up(x) + u) > cap[i]);
		s[i] = x;
		over[i] = up(x);
		fits++;
	}
	*ret_fits = fits;
	return m;
}

/*
 * renyi: the filter admits a run when up(spent + up(rdp)) <= cap at some
 * order (algorithms/privacy/filter.c).  With spent at the largest value
 * that fits at every order where any does, the run is admitted and the
 * stored vector is exactly up(spent + up(rdp)); one ulp more at every order
 * and it is refused.
 */
START_TEST(test_renyi_filter_edge)
{
	char ds[40], path[128], text[MAX_ORDERS * 26 + 3];
	double r[MAX_ORDERS], cap[MAX_ORDERS], s[MAX_ORDERS], over[MAX_ORDERS];
	double got[MAX_ORDERS];
	bool room[MAX_ORDERS];
	unsigned fits, m = renyi_edges(ds, r, cap, s, over, room, &fits);

	ck_assert_uint_gt(fits, 0);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);

	set_spent(ds, over, m);
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "budget_exceeded", "privacy",
		       "does not fit the dataset's R");
	set_spent(ds, s, m);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, NULL));
	h_sql(db, text, sizeof(text), "SELECT spent_rdp::text FROM datasets WHERE id = '%s'", ds);
	ck_assert_uint_eq(parse_array(text, got), m);
	for (unsigned i = 0; i < m; i++)
		ck_assert_msg(got[i] == up(s[i] + up(r[i])), "order %u: stored %.17g, want %.17g",
			      i, got[i], up(s[i] + up(r[i])));
	h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
		       strlen(H_RUN_BODY), NULL, 409, "budget_exceeded", "privacy", NULL);
}
END_TEST

/*
 * renyi, order by order (issue 17: the fit check is SQL now, migration
 * 0014): with every other order one ulp over its edge, a run that fits
 * exactly at order i alone is admitted, the stored vector is exactly
 * up(spent + up(rdp)) at every order, and one ulp more at i is refused.
 */
START_TEST(test_renyi_fit_each_order)
{
	char ds[40], path[128], text[MAX_ORDERS * 26 + 3];
	double r[MAX_ORDERS], cap[MAX_ORDERS], s[MAX_ORDERS], over[MAX_ORDERS];
	double sp[MAX_ORDERS], got[MAX_ORDERS];
	bool room[MAX_ORDERS];
	unsigned fits, m = renyi_edges(ds, r, cap, s, over, room, &fits);

	ck_assert_uint_gt(fits, 1); /* more than one order to tell apart */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	for (unsigned i = 0; i < m; i++) {
		if (!room[i])
			continue;
		memcpy(sp, over, m * sizeof(double));
		sp[i] = s[i];
		set_spent(ds, sp, m);
		json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, NULL));
		h_sql(db, text, sizeof(text),
		      "SELECT spent_rdp::text FROM datasets WHERE id = '%s'", ds);
		ck_assert_uint_eq(parse_array(text, got), m);
		for (unsigned j = 0; j < m; j++)
			ck_assert_msg(got[j] == up(sp[j] + up(r[j])),
				      "fit at order %u: order %u stored %.17g, want %.17g", i, j,
				      got[j], up(sp[j] + up(r[j])));
		set_spent(ds, over, m);
		h_expect_error(&srv, "POST", path, owner, "application/json", H_RUN_BODY,
			       strlen(H_RUN_BODY), NULL, 409, "budget_exceeded", "privacy",
			       "does not fit the dataset's R");
	}
}
END_TEST

/* One SQL value: expr evaluated on pg, as a double (float8 text is the
 * shortest exact decimal since PostgreSQL 12). */
static double
sql_double(PGconn *pg, const char *expr)
{
	char sql[512];
	PGresult *res;
	double v;

	snprintf(sql, sizeof(sql), "SELECT (%s)::float8", expr);
	res = PQexec(pg, sql);
	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", expr,
		      PQresultErrorMessage(res));
	v = strtod(PQgetvalue(res, 0, 0), NULL);
	PQclear(res);
	return v;
}

/* dpopt_up() (migration 0014) is nextafter(x, +inf) at the edges of
 * binary64 (zero, subnormals, the normal boundary, binade ends, large
 * values) and refuses what the filter never holds. */
START_TEST(test_sql_up_is_nextafter)
{
	const double xs[] = { 0.0,
			      4.9406564584124654e-324,
			      2.2250738585072009e-308,
			      2.2250738585072014e-308,
			      1e-300,
			      0.1,
			      0.5,
			      1.0,
			      nextafter(1.0, 0.0),
			      nextafter(2.0, 0.0),
			      2.0,
			      3.0,
			      1e15,
			      nextafter(9007199254740992.0, 0.0),
			      1e300,
			      nextafter(DBL_MAX, 0.0) };
	PGconn *pg = PQconnectdb(db);
	char expr[128];

	ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "connect: %s", PQerrorMessage(pg));
	for (size_t k = 0; k < sizeof(xs) / sizeof(xs[0]); k++) {
		double got;

		snprintf(expr, sizeof(expr), "dpopt_up('%.17g'::float8)", xs[k]);
		got = sql_double(pg, expr);
		ck_assert_msg(got == nextafter(xs[k], INFINITY), "%s = %.17g, want %.17g", expr,
			      got, nextafter(xs[k], INFINITY));
	}
	for (size_t k = 0; k < 4; k++) {
		static const char *bad[] = { "-1", "'Infinity'", "'NaN'",
					     "'1.7976931348623157e308'" };
		PGresult *res;

		snprintf(expr, sizeof(expr), "SELECT dpopt_up(%s::float8)", bad[k]);
		res = PQexec(pg, expr);
		ck_assert_msg(PQresultStatus(res) == PGRES_FATAL_ERROR, "%s answered", expr);
		PQclear(res);
	}
	PQfinish(pg);
}
END_TEST

/* dpopt_filter_fit() against the C check (filter_fits() and filter_add()
 * of algorithms/privacy/filter.c: up(spent + up(rdp)) <= cap) on 400
 * three-order filters drawn at the edge: each spent a few ulps either side
 * of the largest value that fits. */
START_TEST(test_sql_fit_matches_c)
{
	PGconn *pg = PQconnectdb(db);
	unsigned seed = 17, yes = 0, no = 0;

	ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "connect: %s", PQerrorMessage(pg));
	PQclear(PQexec(pg, "SET extra_float_digits = 3"));
	for (int t = 0; t < 400; t++) {
		double sp[3], cap[3], r[3], want[3];
		bool fit = false;
		char sql[1024];
		PGresult *res;

		for (int i = 0; i < 3; i++) {
			double x;

			cap[i] = 0.05 + (double)(rand_r(&seed) % 100000) * 1e-5;
			r[i] = (double)(rand_r(&seed) % 100000) * 1e-7 + 1e-9;
			x = cap[i] - up(r[i]);
			while (up(x + up(r[i])) > cap[i])
				x = nextafter(x, -INFINITY);
			while (up(up(x) + up(r[i])) <= cap[i])
				x = up(x);
			for (int k = rand_r(&seed) % 7 - 3; k != 0; k += k > 0 ? -1 : 1)
				x = nextafter(x, k > 0 ? INFINITY : -INFINITY);
			sp[i] = x;
			want[i] = up(sp[i] + up(r[i]));
			fit = fit || want[i] <= cap[i];
		}
		snprintf(sql, sizeof(sql),
			 "SELECT fits, spent[1], spent[2], spent[3] FROM dpopt_filter_fit("
			 "'{%.17g,%.17g,%.17g}', '{%.17g,%.17g,%.17g}', '{%.17g,%.17g,%.17g}')",
			 sp[0], sp[1], sp[2], cap[0], cap[1], cap[2], r[0], r[1], r[2]);
		res = PQexec(pg, sql);
		ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s",
			      PQresultErrorMessage(res));
		ck_assert_msg(strcmp(PQgetvalue(res, 0, 0), fit ? "t" : "f") == 0,
			      "case %d: SQL fits=%s, C %d", t, PQgetvalue(res, 0, 0), fit);
		for (int i = 0; i < 3; i++)
			ck_assert_msg(strtod(PQgetvalue(res, 0, 1 + i), NULL) == want[i],
				      "case %d order %d: SQL %s, C %.17g", t, i,
				      PQgetvalue(res, 0, 1 + i), want[i]);
		PQclear(res);
		if (fit)
			yes++;
		else
			no++;
	}
	PQfinish(pg);
	/* Both answers occur (P(a case fits) = 1 - (3/7)^3 ~ 0.92). */
	ck_assert_uint_gt(yes, 0);
	ck_assert_uint_gt(no, 0);
}
END_TEST

/* Run sql (a call of fn) on its own connection: it must fail with an
 * error naming want, and write nothing to the ledger. */
static void
sql_fails(const char *sql, const char *fn, const char *want)
{
	char before[256], after[256];
	PGconn *pg = PQconnectdb(db);
	PGresult *res;

	ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "connect: %s", PQerrorMessage(pg));
	h_ledger_snapshot(db, before, sizeof(before));
	res = PQexec(pg, sql);
	ck_assert_msg(PQresultStatus(res) == PGRES_FATAL_ERROR, "%s answered %s", fn,
		      PQresStatus(PQresultStatus(res)));
	ck_assert_msg(strstr(PQresultErrorMessage(res), want) != NULL, "error: %s",
		      PQresultErrorMessage(res));
	PQclear(res);
	PQfinish(pg);
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(after, before);
}

/* dpopt_admit2() (migration 0014) fails closed: a curve on other orders
 * than the ledger's, a missing curve, and a mode other than the one the
 * run was planned for are errors, and nothing is written. */
static void
admit2_fails(const char *ds, const char *mode, const char *orders, const char *rdp,
	     const char *want)
{
	char sql[4096];

	snprintf(sql, sizeof(sql),
		 "SELECT * FROM dpopt_admit2(gen_random_uuid(), '%s', 'acme', '%s', NULL, '00',"
		 " 'dp_sgd.one_pass', '{}', '{}', '{}', 0.1, 0.000001, 1, 1, 60, %s, %s,"
		 " 'dpopt_runs', 'acme', NULL, 'operator', 'cli', NULL, NULL, NULL)",
		 ds, mode, orders, rdp);
	sql_fails(sql, "dpopt_admit2()", want);
}

START_TEST(test_admit2_fails_closed)
{
	char ds[40], probe[40], orders[MAX_ORDERS * 26 + 8], rdp[MAX_ORDERS * 26 + 8];
	char o[MAX_ORDERS * 26 + 16], r[MAX_ORDERS * 26 + 16], o2[MAX_ORDERS * 26 + 16];
	double v[MAX_ORDERS];
	unsigned m;
	size_t used = 0;

	dataset("1", "1e-4", "renyi", ds);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, probe));
	h_sql(db, orders, sizeof(orders),
	      "SELECT filter_orders::text FROM datasets WHERE id = '%s'", ds);
	h_sql(db, rdp, sizeof(rdp), "SELECT charge_rdp::text FROM runs WHERE id = '%s'", probe);
	snprintf(o, sizeof(o), "'%s'", orders);
	snprintf(r, sizeof(r), "'%s'", rdp);
	/* The same orders but the first one ulp above: not the ledger's. */
	m = parse_array(orders, v);
	v[0] = up(v[0]);
	used += (size_t)snprintf(o2, sizeof(o2), "'{");
	for (unsigned i = 0; i < m; i++)
		used += (size_t)snprintf(o2 + used, sizeof(o2) - used, "%s%.17g", i ? "," : "",
					 v[i]);
	snprintf(o2 + used, sizeof(o2) - used, "}'");
	admit2_fails(ds, "renyi", o2, r, "is not on the filter's orders");
	admit2_fails(ds, "renyi", o, "NULL", "needs its curve and orders");
	admit2_fails(ds, "basic", "NULL", "NULL", "changed since the run was planned");
}
END_TEST

/* Call dpopt_admit() directly for a run on ds, whose curve and new spent
 * vector are vec (a literal of the filter's length), with spent_old (a
 * literal); expect an error naming want, and nothing written. */
static void
admit_fails(const char *ds, const char *mode, const char *vec, const char *spent_old,
	    const char *want)
{
	char sql[4096];

	snprintf(sql, sizeof(sql),
		 "SELECT * FROM dpopt_admit(gen_random_uuid(), '%s', 'acme', '%s', NULL, '00',"
		 " 'dp_sgd.one_pass', '{}', '{}', '{}', 0.1, 0.000001, 1, 1, 60, %s, %s, %s, 0.1,"
		 " 'dpopt_runs', 'acme', NULL, 'operator', 'cli', NULL, NULL, NULL)",
		 ds, mode, vec, spent_old, vec);
	sql_fails(sql, "dpopt_admit()", want);
}

/* Fail closed: a spent vector other than the stored one (the filter the
 * service checked is not the one it would write over), a missing one, and
 * a mode other than the one the run was planned for are errors. */
START_TEST(test_admit_fails_closed)
{
	char ds[40], text[MAX_ORDERS * 26 + 8], lit[MAX_ORDERS * 26 + 16];
	char zero[MAX_ORDERS * 26 + 16];
	double v[MAX_ORDERS];
	unsigned m;
	size_t used = 0;

	dataset("1", "1e-4", "renyi", ds);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, NULL));
	h_sql(db, text, sizeof(text), "SELECT spent_rdp::text FROM datasets WHERE id = '%s'", ds);
	snprintf(lit, sizeof(lit), "'%s'", text);
	/* The empty filter's vector, of the same length: not the stored one. */
	m = parse_array(text, v);
	used += (size_t)snprintf(zero, sizeof(zero), "'{");
	for (unsigned i = 0; i < m; i++)
		used += (size_t)snprintf(zero + used, sizeof(zero) - used, "%s0", i ? "," : "");
	snprintf(zero + used, sizeof(zero) - used, "}'");
	admit_fails(ds, "renyi", lit, zero, "is not the one checked");
	admit_fails(ds, "renyi", lit, "NULL", "needs its vectors");
	admit_fails(ds, "basic", lit, lit, "changed since the run was planned");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("admit");
	TCase *tc = tcase_create("admit");

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_basic_epsilon_edge);
	tcase_add_test(tc, test_basic_delta_edge);
	tcase_add_test(tc, test_renyi_filter_edge);
	tcase_add_test(tc, test_admit_fails_closed);
	tcase_add_test(tc, test_renyi_fit_each_order);
	tcase_add_test(tc, test_sql_up_is_nextafter);
	tcase_add_test(tc, test_sql_fit_matches_c);
	tcase_add_test(tc, test_admit2_fails_closed);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
