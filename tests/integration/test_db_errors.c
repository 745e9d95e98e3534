/*
 * test_db_errors.c - a failed query is a failure whatever error struct the
 * caller passes (issue 8 item 2: db_check() with e == NULL once returned
 * ERR_OK, so a lease renewal read a database error as a lost lease and a
 * failed LISTEN passed silently).  Real PostgreSQL from with_pg.sh.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "err.h"

static struct db_conn *
connect_admin(void)
{
	char url[512];
	const char *pg = getenv("DPOPT_TEST_PG");
	struct err e = { 0 };
	struct db_conn *db;

	ck_assert_ptr_nonnull(pg);
	snprintf(url, sizeof(url), "%s dbname=postgres", pg);
	db = db_connect(url, &e);
	ck_assert_msg(db != NULL, "connect: %s", e.msg);
	return db;
}

START_TEST(test_failed_query_without_err)
{
	struct db_conn *db = connect_admin();
	const char *values[1] = { "x" };
	PGresult *res;

	ck_assert_int_eq(db_command(db, "SELEC 1", NULL), ERR_DB);
	ck_assert_int_eq(db_command(db, "LISTEN \"\"", NULL), ERR_DB);
	ck_assert_int_eq(db_exec_command(db, "SELECT $1::int", 1, values, NULL), ERR_DB);
	res = db_exec(db, "SELECT $1::int", 1, values, PGRES_TUPLES_OK, NULL);
	ck_assert_ptr_null(res);
	/* a serialization failure keeps its retryable code without a struct */
	res = PQexec(db->pg, "DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001'; END $$");
	ck_assert_int_eq(db_check(db, res, PGRES_COMMAND_OK, NULL), ERR_CONFLICT);
	PQclear(res);
	ck_assert_int_eq(db_check(db, NULL, PGRES_COMMAND_OK, NULL), ERR_DB);
	/* and the connection is still usable: a good query is OK */
	ck_assert_int_eq(db_command(db, "SET application_name = 't'", NULL), ERR_OK);
	db_close(db);
}
END_TEST

/* The 5xx detail names the SQLSTATE, never the server's text, which can
 * quote a value from a row. */
START_TEST(test_detail_has_no_server_text)
{
	struct db_conn *db = connect_admin();
	const char *values[1] = { "MARKER-7f3a" };
	struct err e = { 0 };

	ck_assert_int_eq(db_exec_command(db, "SELECT $1::int", 1, values, &e), ERR_DB);
	ck_assert_ptr_null(strstr(e.detail, "MARKER"));
	ck_assert_ptr_null(strstr(e.msg, "MARKER"));
	ck_assert_ptr_nonnull(strstr(e.detail, "22P02"));
	db_close(db);
}
END_TEST

/* sql with one parameter, its single value as a long long. */
static long long
one(struct db_conn *db, const char *sql, const char *param)
{
	const char *values[1] = { param };
	struct err e = { 0 };
	PGresult *res = db_exec(db, sql, 1, values, PGRES_TUPLES_OK, &e);
	long long v;

	ck_assert_msg(res != NULL, "%s: %s %s", sql, e.msg, e.detail);
	v = atoll(PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

/* Statements this session has prepared, as the server sees them. */
static long long
server_prepared(struct db_conn *db)
{
	return one(db, "SELECT count(*) FROM pg_prepared_statements WHERE name LIKE $1", "dp%");
}

/* Parameterised statements are prepared once per session and executed by
 * name after; a new session (the server ended the old one) prepares them
 * again; a statement that cannot be prepared (an aborted transaction) is
 * an error and is prepared by a later call; at most DB_PREPARED_MAX stay
 * prepared, the rest run unprepared with the same results. */
START_TEST(test_prepared_statements)
{
	struct db_conn *db = connect_admin(), *admin = connect_admin();
	struct err e = { 0 };
	char pid[16], sql[64];
	unsigned gen;

	ck_assert_int_eq(one(db, "SELECT $1::int + 1", "41"), 42);
	ck_assert_int_eq(one(db, "SELECT $1::int + 1", "1"), 2);
	ck_assert_int_eq(server_prepared(db), 2); /* the sum and the count */
	ck_assert_int_eq(one(db, "SELECT $1::int + 1", "-1"), 0);
	ck_assert_int_eq(server_prepared(db), 2);
	ck_assert_uint_eq(db->prepared_count, 2);

	/* The server ends the session: the pool's check reconnects and the
	 * statements are prepared again on the new session. */
	snprintf(pid, sizeof(pid), "%d", PQbackendPID(db->pg));
	gen = db->generation;
	ck_assert_int_eq(one(admin, "SELECT count(*) FROM pg_terminate_backend($1::int)", pid), 1);
	for (int i = 0; i < 200 && db_validate(db, &e) == ERR_OK && db->generation == gen; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	ck_assert_uint_ne(db->generation, gen);
	ck_assert_int_eq(one(db, "SELECT $1::int + 1", "6"), 7);
	ck_assert_int_eq(server_prepared(db), 2);

	/* In an aborted transaction a new text cannot be prepared: an error,
	 * not remembered; after ROLLBACK it is prepared and runs. */
	ck_assert_int_eq(db_command(db, "BEGIN", NULL), ERR_OK);
	ck_assert_int_eq(db_exec_command(db, "SELECT $1::int", 1, (const char *[]){ "x" }, &e),
			 ERR_DB);
	ck_assert_ptr_nonnull(strstr(e.detail, "22P02"));
	ck_assert_int_eq(db_exec_command(db, "SELECT $1::int * 2", 1, (const char *[]){ "4" }, &e),
			 ERR_DB);
	ck_assert_ptr_nonnull(strstr(e.detail, "25P02"));
	ck_assert_int_eq(db_command(db, "ROLLBACK", NULL), ERR_OK);
	ck_assert_int_eq(one(db, "SELECT $1::int * 2", "4"), 8);

	/* The bound: past DB_PREPARED_MAX texts, unprepared and still right. */
	for (int i = 0; i < DB_PREPARED_MAX + 20; i++) {
		snprintf(sql, sizeof(sql), "SELECT $1::int + %d", i);
		ck_assert_int_eq(one(db, sql, "1000"), 1000 + i);
	}
	ck_assert_uint_eq(db->prepared_count, DB_PREPARED_MAX);
	ck_assert_int_eq(server_prepared(db), DB_PREPARED_MAX);

	/* Switched off (a transaction-pooling proxy): nothing new prepared. */
	db_set_prepare(false);
	ck_assert_int_eq(one(db, "SELECT $1::int - 1", "1"), 0);
	db_set_prepare(true);
	ck_assert_uint_eq(db->prepared_count, DB_PREPARED_MAX);
	db_close(admin);
	db_close(db);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("db_errors");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_failed_query_without_err);
	tcase_add_test(tc, test_detail_has_no_server_text);
	tcase_add_test(tc, test_prepared_statements);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
