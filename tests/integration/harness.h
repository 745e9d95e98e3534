/*
 * harness.h - the integration test harness: a fresh PostgreSQL database,
 * the real dpoptd as a child process, API keys made by `dpoptd keys
 * create`, HTTP over libcurl and SQL over libpq for assertions.
 *
 * Every test program runs under tests/integration/with_pg.sh, which sets
 * DPOPT_TEST_PG; DPOPT_BIN names the dpoptd to test.  Failures are Check
 * assertions, so the helpers may be called from tests and from fixtures,
 * never from helper threads (h_http() alone is thread-safe and does not
 * assert).
 *
 * Every dpoptd's stderr goes to a log file in one directory per test
 * program (level warn; DPOPT_TEST_LOG_LEVEL=info for more); h_finish()
 * prints the logs when a test failed and fails the program when a log
 * holds a sanitizer report.
 */
#ifndef TESTS_INTEGRATION_HARNESS_H
#define TESTS_INTEGRATION_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <check.h>
#include <jansson.h>

#define H_UUID_LEN 36

/* A dataset request that fits the standard binary CSV (d = 5, rows in the
 * unit l2 ball); %s is the name, %s the epsilon budget. */
#define H_DATASET_FMT                                                                              \
	"{\"name\": \"%s\", \"schema\": {\"features\": 5, \"task\": \"binary\"},"                  \
	" \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": %s, \"delta\": 1e-4},"        \
	" \"accounting_mode\": \"basic\"}"

/* The standard run: epsilon 0.1, delta 1e-6. */
#define H_RUN_BODY                                                                                 \
	"{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": \"logistic\"},"            \
	" \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 3}},"                       \
	" \"privacy\": {\"epsilon\": 0.1, \"delta\": 1e-6}}"

/* The same run in exactly ten steps of 200 records (n = 2000). */
#define H_RUN_BODY_10_STEPS                                                                        \
	"{\"algorithm\": \"dp_sgd.one_pass\", \"objective\": {\"name\": \"logistic\"},"            \
	" \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 3}},"                       \
	" \"privacy\": {\"epsilon\": 0.1, \"delta\": 1e-6}, \"params\": {\"batch_size\": 200}}"

#define H_N 2000 /* rows of the standard CSV */
#define H_D 5    /* features of the standard CSV */

struct h_opts {
	unsigned workers;        /* DPOPT_WORKERS; 0: 2 */
	unsigned lease_seconds;  /* DPOPT_LEASE_SECONDS; 0: the default */
	unsigned step_delay_ms;  /* DPOPT_TEST_STEP_DELAY_MS */
	unsigned max_body_bytes; /* DPOPT_MAX_BODY_BYTES; 0: the default */
	unsigned http_threads;   /* DPOPT_HTTP_THREADS; 0: the default */
	double max_run_work;     /* DPOPT_MAX_RUN_WORK; 0: the default */
	/* More "NAME=value" settings, NULL-ended, or NULL.  They win over the
	 * harness's own: the request and connection limits are lifted for
	 * tests unless a test sets them here. */
	const char *const *env;
	const char *env_more[8]; /* more settings, NULL-ended, copied in by a test */
};

struct h_server {
	pid_t pid;     /* 0 when not running */
	unsigned port; /* changes on every start */
	char base[64]; /* "http://127.0.0.1:<port>" */
	char db[512];  /* conninfo of its database */
	char log[512]; /* its stderr, appended across restarts */
	struct h_opts opts;
};

struct h_resp {
	long status; /* 0: no response (transport error) */
	char *body;  /* owned, NUL-terminated */
	size_t len;
	json_t *json;       /* owned: the parsed body, NULL if not JSON */
	char location[256]; /* Location header, "" if none */
	char ctype[128];    /* Content-Type header, "" if none */
	char allow[128];    /* Allow header, "" if none */
	char replayed[16];  /* Idempotent-Replayed header, "" if none */
	char curl_err[256]; /* why status is 0 */
};

/* The Check tag of the test cases that need the testing hooks of a
 * -Dtesting=true dpoptd (the DPOPT_TEST_* delays): a production build runs
 * its programs with CK_EXCLUDE_TAGS=hooks (tests/integration/meson.build). */
#define H_TAG_HOOKS "hooks"

/* Once, first thing in main(): libcurl, the log directory, the exit hook
 * that kills servers a failed test left behind; says so when the test
 * cases tagged H_TAG_HOOKS are excluded. */
void h_init(void);

/* Last thing in main(): print the logs if nfailed > 0, scan them for
 * sanitizer reports; returns the exit status for main(). */
int h_finish(int nfailed);

/* Run s verbosely, free it and return h_finish() of its failures. */
int h_run_suite(Suite *s);

/* The common fixture: a fresh database (db), an owner key of tenant
 * "acme" (owner) and dpoptd on it with opts (NULL: defaults). */
void h_owner_setup(struct h_server *s, char *db, size_t db_cap, char *owner, size_t owner_cap,
		   const struct h_opts *opts);

/* CREATE DATABASE t_<pid>_<n>; out gets its conninfo. */
void h_db_create(char *out, size_t cap);

/* Start dpoptd on db with opts (NULL: defaults) on a free port and wait
 * for GET /readyz. */
void h_server_start(struct h_server *s, const char *db, const struct h_opts *opts);

/* Same database and options, a new port. */
void h_server_restart(struct h_server *s);

/* Send sig and wait up to timeout_s (times h_timeout_scale()) for the exit; returns the wait status
 * (SIGKILL after the timeout fails the test).  The log is checked for
 * sanitizer reports. */
int h_server_stop(struct h_server *s, int sig, double timeout_s);

/* For unchecked fixtures, where a failed assertion would end the whole
 * runner: SIGTERM, and if dpoptd does not exit 0 within timeout_s or its
 * log holds a sanitizer report, say so and make h_finish() fail. */
void h_server_stop_fixture(struct h_server *s, double timeout_s);

/* Fail the test if the server's log holds a sanitizer report. */
void h_server_check_log(const struct h_server *s);

/* `dpoptd keys create --tenant T --role R` on db; out gets the key. */
void h_key_create(const char *db, const char *tenant, const char *role, char *out, size_t cap);

/* One HTTP request; key NULL: no Authorization header; ctype NULL with a
 * body: no Content-Type header; body NULL: no body; headers: extra
 * "Name: value" lines, NULL-ended, or NULL.  Thread-safe, never asserts:
 * r->status is 0 when no response came. */
void h_http(const struct h_server *s, const char *method, const char *path, const char *key,
	    const char *ctype, const char *body, size_t len, const char *const *headers,
	    struct h_resp *r);
void h_resp_clear(struct h_resp *r);

/* h_http() with a JSON body (or none), asserting the status; returns the
 * parsed body (owned, may be NULL for 204). */
json_t *h_json(const struct h_server *s, const char *method, const char *path, const char *key,
	       const char *body, long want_status);

/* Assert an error reply: status, error.code, error.field (NULL: no
 * field), and that the message contains msg_part (NULL: anything).  The
 * ledger of the server's database must be unchanged by the request. */
void h_expect_error(const struct h_server *s, const char *method, const char *path, const char *key,
		    const char *ctype, const char *body, size_t len, const char *const *headers,
		    long status, const char *code, const char *field, const char *msg_part);

/* The standard data: n rows of d features in the unit l2 ball, label last
 * (+-1 for binary, real otherwise); different rows on every call.  Owned,
 * NUL-terminated.  Test thread only. */
char *h_csv(size_t n, size_t d, bool binary, unsigned seed);

/* POST /v1/datasets with body (201); id gets its id. */
void h_dataset_create(const struct h_server *s, const char *key, const char *body, char *id);

/* PUT the CSV (200, sealed). */
void h_upload(const struct h_server *s, const char *key, const char *id, const char *csv);

/* A sealed standard binary dataset with the given epsilon budget ("1"). */
void h_dataset_sealed(const struct h_server *s, const char *key, const char *epsilon, char *id);

/* POST /v1/datasets/{ds}/runs (202); run_id gets its id (may be NULL). */
json_t *h_run_create(const struct h_server *s, const char *key, const char *ds, const char *body,
		     char *run_id);

/* Poll GET /v1/runs/{id} until its state is want (NULL: any terminal
 * state) or timeout_s (times h_timeout_scale()) passes (a failure);
 * returns the run. */
json_t *h_run_wait(const struct h_server *s, const char *key, const char *id, const char *want,
		   double timeout_s);

/* SQL on db: the first column of the first row as text ("" for NULL);
 * any error or no row fails the test.  Arguments are printf'd into the
 * statement: pass only ids the service generated. */
void h_sql(const char *db, char *out, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
long long h_sql_ll(const char *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* datasets.spent_epsilon/spent_delta equal the ledger's charges minus its
 * refunds for dataset id, as exact numerics; returns spent_epsilon as
 * text in out. */
void h_ledger_check(const char *db, const char *id, char *out, size_t cap);

/* A digest of every ledger entry and every dataset's spent budget. */
void h_ledger_snapshot(const char *db, char *out, size_t cap);

/* The member at a dotted path ("privacy.charged.epsilon"), or NULL;
 * borrowed. */
json_t *h_get(json_t *j, const char *path);

/* s, or its first 2000 bytes and "...": Check refuses failure messages
 * over 8 KiB.  The result is in a per-thread buffer when cut. */
const char *h_short(const char *s);

/* DPOPT_TEST_TIMEOUT_SCALE (at least 1; default 1): how much slower than
 * a debugoptimized build this one is allowed to be (meson's test setup
 * sets it for sanitizer builds, with CK_TIMEOUT_MULTIPLIER and meson's own
 * timeout multiplier).  Every wait of the harness (readiness, stop, a run's
 * state, an HTTP reply) is multiplied by it; a test's own deadlines should
 * be too.  Never used to make a test stricter. */
double h_timeout_scale(void);

/* Monotonic seconds; sleep in seconds. */
double h_now(void);
void h_sleep(double seconds);

/* Raw sockets, for what libcurl will not do (a body sent in parts, a
 * connection left idle): a socket connected to 127.0.0.1:port from
 * source address src (NULL: any), or -1; send all of p (false on error
 * or a send timeout); read until the peer closes or timeout_s passes
 * (owned text, "" when nothing came). */
int h_raw_connect(const char *src, unsigned port);
bool h_send_all(int fd, const char *p, size_t n);
char *h_read_reply(int fd, double timeout_s);

/* The server's whole log so far (owned), for scans such as "no data value
 * in the log". */
char *h_read_log(const struct h_server *s);

#endif /* TESTS_INTEGRATION_HARNESS_H */
