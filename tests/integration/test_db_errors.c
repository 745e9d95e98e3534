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

int
main(void)
{
	Suite *s = suite_create("db_errors");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_failed_query_without_err);
	tcase_add_test(tc, test_detail_has_no_server_text);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
