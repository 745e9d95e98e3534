/*
 * test_log_privacy.c - no uploaded value reaches the log (issue 8 item 3).
 *
 * Rows with a marker in every position where ingestion refuses a value
 * (a feature cell, a label, a class, a group, a categorical cell, a quoted
 * cell, a LIBSVM label, index, value, qid and token), and
 * a number marker where a value is refused for its range.  The uploader's
 * own error may quote the line; the log, at level debug, never does.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MARK "MRK7Q"
#define NUM  "77713" /* digits of the numeric markers below */

static char db[512], owner[128];
static struct h_server srv;

static void
setup(void)
{
	setenv("DPOPT_TEST_LOG_LEVEL", "debug", 1);
	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, NULL);
}

static void
teardown(void)
{
	h_server_stop_fixture(&srv, 30.0);
}

#define BUDGET " \"budget\": {\"epsilon\": 1, \"delta\": 1e-6}"

static unsigned refused;

static void
bad(const char *ds, const char *ctype, const char *body)
{
	char path[128];
	struct h_resp r;

	snprintf(path, sizeof(path), "/v1/datasets/%s/data", ds);
	h_http(&srv, "PUT", path, owner, ctype, body, strlen(body), NULL, &r);
	ck_assert_msg(r.status >= 400 && r.status < 500, "PUT %s %s: %ld %s", ctype, h_short(body),
		      r.status, h_short(r.body));
	refused++;
	h_resp_clear(&r);
}

static void
create(const char *body, char *id)
{
	h_dataset_create(&srv, owner, body, id);
}

START_TEST(test_no_value_in_log)
{
	char bin[40], mc[40], grp[40], cat[40], reg[40];
	char *log;

	create("{\"name\": \"bin\", \"schema\": {\"features\": 2, \"task\": \"binary\"},"
	       " \"bounds\": {\"feature_l2\": 1}," BUDGET "}",
	       bin);
	bad(bin, "text/csv", MARK ",0.2,1\n");
	bad(bin, "text/csv", "0.1," MARK ",1\n");
	bad(bin, "text/csv", "0.1,0.2," MARK "\n");
	bad(bin, "text/csv", "0.1,0.2,0.77713\n");
	bad(bin, "text/csv", "0.1,0.2,1," MARK "\n");
	bad(bin, "text/csv", "0.1,0.2,1\n0.3\n" MARK "\n");
	bad(bin, "text/csv", "\"" MARK "\",0.2,1\n");
	bad(bin, "text/csv", "\"0.1\"" MARK ",0.2,1\n");
	bad(bin, "text/csv", "0.1,0.2,1e99977713\n");
	bad(bin, "text/csv", "0.1,nan" MARK ",1\n");
	bad(bin, "text/x-libsvm", MARK " 1:0.1\n");
	bad(bin, "text/x-libsvm", "1 " MARK ":0.1\n");
	bad(bin, "text/x-libsvm", "1 1:" MARK "\n");
	bad(bin, "text/x-libsvm", "1 1:0.1 " MARK "\n");
	bad(bin, "text/x-libsvm", "1 77713:0.1\n");
	bad(bin, "text/x-libsvm", "0.77713 1:0.1\n");
	bad(bin, "text/x-libsvm", "1 qid:" MARK " 1:0.1\n");

	create("{\"name\": \"mc\", \"schema\": {\"features\": 2, \"task\": \"multiclass\","
	       " \"classes\": 3}, \"bounds\": {\"feature_linf\": 1}," BUDGET "}",
	       mc);
	bad(mc, "text/csv", "0.1,0.2," MARK "\n");
	bad(mc, "text/csv", "0.1,0.2,77713\n");

	create("{\"name\": \"grp\", \"schema\": {\"features\": 2, \"task\": \"binary\","
	       " \"group\": {\"groups\": 2}}, \"bounds\": {\"feature_l2\": 1}," BUDGET "}",
	       grp);
	bad(grp, "text/csv", "0.1,0.2," MARK ",1\n");
	bad(grp, "text/csv", "0.1,0.2,77713,1\n");
	bad(grp, "text/x-libsvm", "1 qid:77713 1:0.1\n");

	create("{\"name\": \"cat\", \"schema\": {\"features\": 0, \"task\": \"unlabeled\","
	       " \"categorical\": [{\"name\": \"colour\", \"labels\": [\"red\", \"green\"]},"
	       " {\"name\": \"size\", \"size\": 3}]}, \"bounds\": {}," BUDGET "}",
	       cat);
	bad(cat, "text/csv", "colour,size\n" MARK ",2\n");
	bad(cat, "text/csv", "colour,size\nred,77713\n");

	create("{\"name\": \"reg\", \"schema\": {\"features\": 2, \"task\": \"regression\"},"
	       " \"bounds\": {\"feature_l2\": 1, \"label_range\": [-1, 1]}," BUDGET "}",
	       reg);
	bad(reg, "text/csv", "0.1,0.2," MARK "\n");
	bad(reg, "text/x-libsvm", MARK " 1:0.1\n");

	h_server_stop(&srv, SIGTERM, 30.0);
	log = h_read_log(&srv);
	/* The refusals were logged (so the scan below can fail) ... */
	ck_assert_msg(strstr(log, "invalid_request") != NULL, "no refusal logged: %s",
		      h_short(log));
	/* ... and none carries a value. */
	ck_assert_msg(strstr(log, MARK) == NULL, "a cell in the log: %s",
		      h_short(strstr(log, MARK)));
	ck_assert_msg(strstr(log, NUM) == NULL, "a number in the log: %s",
		      h_short(strstr(log, NUM)));
	ck_assert_uint_ge(refused, 25);
	free(log);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("log_privacy");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_no_value_in_log);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
