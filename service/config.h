/*
 * config.h - dpoptd's configuration, read once from the environment.
 *
 * Every variable has a default and a range; a bad value stops the process
 * at start with a message naming the variable.  The table in README.md is
 * the user-facing copy of config.c's table.
 */
#ifndef SERVICE_CONFIG_H
#define SERVICE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct config {
	char listen_host[64];         /* DPOPT_LISTEN host part */
	unsigned listen_port;         /* DPOPT_LISTEN port part */
	char database_url[1024];      /* DPOPT_DATABASE_URL (libpq conninfo or URI) */
	unsigned workers;             /* DPOPT_WORKERS: run-executing threads */
	unsigned http_threads;        /* DPOPT_HTTP_THREADS: libmicrohttpd thread pool */
	unsigned db_pool;             /* DPOPT_DB_POOL: connections for HTTP threads */
	bool db_prepare;              /* DPOPT_DB_PREPARE: prepared statements (db.h) */
	size_t max_body_bytes;        /* DPOPT_MAX_BODY_BYTES: JSON request bodies */
	uint64_t max_upload_bytes;    /* DPOPT_MAX_UPLOAD_BYTES: streamed dataset uploads */
	unsigned max_features;        /* DPOPT_MAX_FEATURES */
	size_t max_universe;          /* DPOPT_MAX_UNIVERSE: synthetic data's universe */
	size_t max_vertices;          /* DPOPT_MAX_VERTICES: a polytope's vertex list */
	unsigned lease_seconds;       /* DPOPT_LEASE_SECONDS: a claimed run's lease */
	unsigned max_attempts;        /* DPOPT_MAX_ATTEMPTS: re-queues after lost leases */
	double max_run_work;          /* DPOPT_MAX_RUN_WORK: admission limit on a run's work */
	double work_rate;             /* DPOPT_WORK_RATE: work units per second, for timeouts */
	uint64_t dataset_cache_bytes; /* DPOPT_DATASET_CACHE_BYTES: loaded datasets kept */
	double dataset_cache_idle;    /* DPOPT_DATASET_CACHE_IDLE_SECONDS */
	char instance_id[96];         /* DPOPT_INSTANCE_ID: names this process in leases */
	char log_level[16];           /* DPOPT_LOG_LEVEL */
	unsigned test_step_delay_ms;  /* DPOPT_TEST_STEP_DELAY_MS: testing builds only */
	/* Issue 8 items 4, 5a, 5b: timeouts, leases, database faults. */
	unsigned db_connect_timeout;  /* DPOPT_DB_CONNECT_TIMEOUT_SECONDS */
	unsigned db_statement_ms;     /* DPOPT_DB_STATEMENT_TIMEOUT_MS: 0 none */
	unsigned readyz_timeout_ms;   /* DPOPT_READYZ_TIMEOUT_MS: /readyz's own bound */
	unsigned reaper_seconds;      /* DPOPT_REAPER_SECONDS: expired-lease reaper period */
	double run_timeout_margin;    /* DPOPT_RUN_TIMEOUT_MARGIN: timeout / estimated time */
	unsigned min_run_timeout;     /* DPOPT_MIN_RUN_TIMEOUT_SECONDS */
	double max_run_seconds;       /* DPOPT_MAX_RUN_SECONDS: admission limit, estimated s */
	unsigned test_load_delay_ms;  /* DPOPT_TEST_LOAD_DELAY_MS: testing builds only */
	unsigned test_delay_attempts; /* DPOPT_TEST_STEP_DELAY_ATTEMPTS: testing builds only */
	bool test_fail_certificates;  /* DPOPT_TEST_FAIL_CERTIFICATES: testing builds only */
	/* HTTP limits (service/http.c); every one is per replica. */
	unsigned http_idle_timeout;      /* DPOPT_HTTP_IDLE_TIMEOUT_SECONDS: silent connection */
	unsigned max_connections;        /* DPOPT_MAX_CONNECTIONS: open at once, in total */
	unsigned max_connections_per_ip; /* DPOPT_MAX_CONNECTIONS_PER_CLIENT: per client address */
	unsigned max_uploads;            /* DPOPT_MAX_UPLOADS: uploads in flight, < db_pool */
	unsigned max_uploads_per_tenant; /* DPOPT_MAX_UPLOADS_PER_TENANT */
	double rate_limit;               /* DPOPT_RATE_LIMIT_PER_SECOND: per key; 0: none */
	double rate_limit_burst;         /* DPOPT_RATE_LIMIT_BURST */
	double auth_failures_per_minute; /* DPOPT_AUTH_FAILURES_PER_MINUTE: per client address */
	double auth_failures_burst;      /* DPOPT_AUTH_FAILURES_BURST */
	char cors_origins[1024];         /* DPOPT_CORS_ORIGINS: "" (none), "*", or a list */
	unsigned shutdown_grace;         /* DPOPT_SHUTDOWN_GRACE_SECONDS: requests may finish */
	unsigned connection_reserve;     /* DPOPT_CONNECTION_RESERVE: for clients holding <= 1 */
	/* Issue 10: containers. */
	bool log_stdout;           /* DPOPT_LOG_FORMAT=json: the server's JSON lines on stdout */
	unsigned shutdown_seconds; /* DPOPT_SHUTDOWN_SECONDS: the whole drain's bound */
	unsigned shutdown_delay;   /* DPOPT_SHUTDOWN_DELAY_SECONDS: /readyz 503, still serving */
};

/* Fill *ret from the environment (getenv).  ERR_INVALID naming the variable
 * in e->field when one is malformed or out of range. */
enum err_code config_from_env(struct config *ret, struct err *e);

#endif /* SERVICE_CONFIG_H */
