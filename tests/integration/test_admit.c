/*
 * test_admit.c - admission at the budget's edge, through dpopt_admit()
 * (migration 0012) and the service: a run that exactly fits is admitted
 * and one that is one ulp over is refused, in both accounting modes; the
 * function fails closed when the filter it is asked to write is not the
 * one the service checked, or the dataset is not what the run was planned
 * for.
 */
#include <check.h>
#include <math.h>
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
 * renyi: the filter admits a run when up(spent + up(rdp)) <= cap at some
 * order (algorithms/privacy/filter.c).  With spent at the largest value
 * that fits at every order where any does, the run is admitted and the
 * stored vector is exactly up(spent + up(rdp)); one ulp more at every order
 * and it is refused.
 */
START_TEST(test_renyi_filter_edge)
{
	char ds[40], path[128], probe[40], text[MAX_ORDERS * 26 + 3];
	double r[MAX_ORDERS], cap[MAX_ORDERS], s[MAX_ORDERS], over[MAX_ORDERS];
	double got[MAX_ORDERS];
	unsigned m, fits = 0;

	dataset("1", "1e-4", "renyi", ds);
	json_decref(h_run_create(&srv, owner, ds, H_RUN_BODY, probe));
	h_sql(db, text, sizeof(text), "SELECT charge_rdp::text FROM runs WHERE id = '%s'", probe);
	m = parse_array(text, r);
	h_sql(db, text, sizeof(text), "SELECT filter_caps::text FROM datasets WHERE id = '%s'", ds);
	ck_assert_uint_eq(parse_array(text, cap), m);
	for (unsigned i = 0; i < m; i++) {
		double u = up(r[i]), x = cap[i] - u;

		if (!(x >= 0.0)) { /* no room at this order even when empty */
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

/* Call dpopt_admit() directly for a run on ds, whose curve and new spent
 * vector are vec (a literal of the filter's length), with spent_old (a
 * literal); expect an error naming want, and nothing written. */
static void
admit_fails(const char *ds, const char *mode, const char *vec, const char *spent_old,
	    const char *want)
{
	char sql[4096], before[256], after[256];
	PGconn *pg = PQconnectdb(db);
	PGresult *res;

	ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "connect: %s", PQerrorMessage(pg));
	h_ledger_snapshot(db, before, sizeof(before));
	snprintf(sql, sizeof(sql),
		 "SELECT * FROM dpopt_admit(gen_random_uuid(), '%s', 'acme', '%s', NULL, '00',"
		 " 'dp_sgd.one_pass', '{}', '{}', '{}', 0.1, 0.000001, 1, 1, 60, %s, %s, %s, 0.1,"
		 " 'dpopt_runs', 'acme', NULL, 'operator', 'cli', NULL, NULL, NULL)",
		 ds, mode, vec, spent_old, vec);
	res = PQexec(pg, sql);
	ck_assert_msg(PQresultStatus(res) == PGRES_FATAL_ERROR, "dpopt_admit() answered %s",
		      PQresStatus(PQresultStatus(res)));
	ck_assert_msg(strstr(PQresultErrorMessage(res), want) != NULL, "error: %s",
		      PQresultErrorMessage(res));
	PQclear(res);
	PQfinish(pg);
	h_ledger_snapshot(db, after, sizeof(after));
	ck_assert_str_eq(after, before);
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
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
