/*
 * config.c - environment variables, their defaults and limits.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "constraint.h"
#include "synthetic/kway.h"

static enum err_code
env_uint(const char *name, uint64_t def, uint64_t min, uint64_t max, uint64_t *ret, struct err *e)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (s == NULL || s[0] == '\0') {
		*ret = def;
		return ERR_OK;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || s[0] == '-' || v < min || v > max)
		return err_set_field(e, ERR_INVALID, name,
				     "%s must be an integer within [%" PRIu64 ", %" PRIu64 "]",
				     name, min, max);
	*ret = v;
	return ERR_OK;
}

static enum err_code
env_double(const char *name, double def, double min, double max, double *ret, struct err *e)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (s == NULL || s[0] == '\0') {
		*ret = def;
		return ERR_OK;
	}
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(v >= min && v <= max))
		return err_set_field(e, ERR_INVALID, name, "%s must be a number within [%g, %g]",
				     name, min, max);
	*ret = v;
	return ERR_OK;
}

static enum err_code
env_str(const char *name, const char *def, char *out, size_t cap, struct err *e)
{
	const char *s = getenv(name);

	if (s == NULL || s[0] == '\0')
		s = def;
	if (strlen(s) >= cap)
		return err_set_field(e, ERR_INVALID, name, "%s is longer than %zu bytes", name,
				     cap - 1);
	memcpy(out, s, strlen(s) + 1);
	return ERR_OK;
}

static enum err_code
parse_listen(const char *s, struct config *c, struct err *e)
{
	const char *colon = strrchr(s, ':');
	char *end;
	unsigned long port;

	if (colon == NULL || colon == s || (size_t)(colon - s) >= sizeof(c->listen_host))
		return err_set_field(e, ERR_INVALID, "DPOPT_LISTEN",
				     "DPOPT_LISTEN must be HOST:PORT, e.g. 127.0.0.1:8080");
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port > 65535 || colon[1] == '\0')
		return err_set_field(e, ERR_INVALID, "DPOPT_LISTEN",
				     "DPOPT_LISTEN port must be within [0, 65535]");
	memcpy(c->listen_host, s, (size_t)(colon - s));
	c->listen_host[colon - s] = '\0';
	c->listen_port = (unsigned)port;
	return ERR_OK;
}

/* Timeouts, the reaper and the run-time model (issue 8 items 4, 5a, 5b). */
static enum err_code
config_faults(struct config *c, struct err *e)
{
	uint64_t v;
	enum err_code rc;

	if ((rc = env_uint("DPOPT_DB_CONNECT_TIMEOUT_SECONDS", 5, 2, 600, &v, e)) != ERR_OK)
		return rc;
	c->db_connect_timeout = (unsigned)v;
	if ((rc = env_uint("DPOPT_DB_STATEMENT_TIMEOUT_MS", 30000, 0, 86400000, &v, e)) != ERR_OK)
		return rc;
	c->db_statement_ms = (unsigned)v;
	if ((rc = env_uint("DPOPT_READYZ_TIMEOUT_MS", 2000, 100, 60000, &v, e)) != ERR_OK)
		return rc;
	c->readyz_timeout_ms = (unsigned)v;
	if ((rc = env_uint("DPOPT_REAPER_SECONDS", 5, 1, 3600, &v, e)) != ERR_OK)
		return rc;
	c->reaper_seconds = (unsigned)v;
	if ((rc = env_double("DPOPT_RUN_TIMEOUT_MARGIN", 10.0, 1.0, 1000.0, &c->run_timeout_margin,
			     e)) != ERR_OK)
		return rc;
	if ((rc = env_uint("DPOPT_MIN_RUN_TIMEOUT_SECONDS", 60, 1, 86400, &v, e)) != ERR_OK)
		return rc;
	c->min_run_timeout = (unsigned)v;
	if ((rc = env_double("DPOPT_MAX_RUN_SECONDS", 3600.0, 1e-6, 86400.0, &c->max_run_seconds,
			     e)) != ERR_OK)
		return rc;
	if (c->run_timeout_margin * c->max_run_seconds > 86400.0 * 7)
		return err_set_field(e, ERR_INVALID, "DPOPT_MAX_RUN_SECONDS",
				     "DPOPT_MAX_RUN_SECONDS times DPOPT_RUN_TIMEOUT_MARGIN must be"
				     " at most a week");
	if ((rc = env_uint("DPOPT_TEST_LOAD_DELAY_MS", 0, 0, 600000, &v, e)) != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	c->test_load_delay_ms = (unsigned)v;
#else
	if (v != 0)
		return err_set_field(e, ERR_INVALID, "DPOPT_TEST_LOAD_DELAY_MS",
				     "DPOPT_TEST_LOAD_DELAY_MS exists only in testing builds");
#endif
	if ((rc = env_uint("DPOPT_TEST_STEP_DELAY_ATTEMPTS", 0, 0, 100, &v, e)) != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	c->test_delay_attempts = (unsigned)v;
#else
	if (v != 0)
		return err_set_field(
			e, ERR_INVALID, "DPOPT_TEST_STEP_DELAY_ATTEMPTS",
			"DPOPT_TEST_STEP_DELAY_ATTEMPTS exists only in testing builds");
#endif
	if ((rc = env_uint("DPOPT_TEST_FAIL_CERTIFICATES", 0, 0, 1, &v, e)) != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	c->test_fail_certificates = v != 0;
#else
	if (v != 0)
		return err_set_field(e, ERR_INVALID, "DPOPT_TEST_FAIL_CERTIFICATES",
				     "DPOPT_TEST_FAIL_CERTIFICATES exists only in testing builds");
#endif
	return ERR_OK;
}

/* The HTTP limits (service/http.c).  Uploads hold a pooled connection
 * each for their whole body, so fewer may run than the pool has:
 * by default half of it, which leaves the other half to reads, admissions
 * and /readyz. */
static enum err_code
config_http_limits(struct config *c, struct err *e)
{
	uint64_t v;
	enum err_code rc;

	if ((rc = env_uint("DPOPT_HTTP_IDLE_TIMEOUT_SECONDS", 15, 1, 3600, &v, e)) != ERR_OK)
		return rc;
	c->http_idle_timeout = (unsigned)v;
	if ((rc = env_uint("DPOPT_MAX_CONNECTIONS", 1000, 16, 1000000, &v, e)) != ERR_OK)
		return rc;
	c->max_connections = (unsigned)v;
	if ((rc = env_uint("DPOPT_MAX_CONNECTIONS_PER_CLIENT", 64, 1, 1000000, &v, e)) != ERR_OK)
		return rc;
	c->max_connections_per_ip = (unsigned)v;
	if ((rc = env_uint("DPOPT_MAX_UPLOADS", c->db_pool > 1 ? c->db_pool / 2 : 1, 1, 1024, &v,
			   e)) != ERR_OK)
		return rc;
	if (c->db_pool > 1 && v >= c->db_pool)
		return err_set_field(e, ERR_INVALID, "DPOPT_MAX_UPLOADS",
				     "DPOPT_MAX_UPLOADS must be below DPOPT_DB_POOL (%u): each "
				     "upload holds a connection",
				     c->db_pool);
	c->max_uploads = (unsigned)v;
	if ((rc = env_uint("DPOPT_MAX_UPLOADS_PER_TENANT", 2, 1, 1024, &v, e)) != ERR_OK)
		return rc;
	c->max_uploads_per_tenant = (unsigned)v;
	if ((rc = env_double("DPOPT_RATE_LIMIT_PER_SECOND", 50.0, 0.0, 1e9, &c->rate_limit, e)) !=
		    ERR_OK ||
	    (rc = env_double("DPOPT_RATE_LIMIT_BURST", 100.0, 1.0, 1e9, &c->rate_limit_burst, e)) !=
		    ERR_OK ||
	    (rc = env_double("DPOPT_AUTH_FAILURES_PER_MINUTE", 30.0, 0.001, 1e9,
			     &c->auth_failures_per_minute, e)) != ERR_OK ||
	    (rc = env_double("DPOPT_AUTH_FAILURES_BURST", 10.0, 1.0, 1e9, &c->auth_failures_burst,
			     e)) != ERR_OK)
		return rc;
	if ((rc = env_str("DPOPT_CORS_ORIGINS", "", c->cors_origins, sizeof(c->cors_origins), e)) !=
	    ERR_OK)
		return rc;
	if ((rc = env_uint("DPOPT_SHUTDOWN_GRACE_SECONDS", 10, 0, 600, &v, e)) != ERR_OK)
		return rc;
	c->shutdown_grace = (unsigned)v;
	if ((rc = env_uint("DPOPT_CONNECTION_RESERVE", 16, 0, 1000000, &v, e)) != ERR_OK)
		return rc;
	if (v >= c->max_connections)
		return err_set_field(
			e, ERR_INVALID, "DPOPT_CONNECTION_RESERVE",
			"DPOPT_CONNECTION_RESERVE must be below DPOPT_MAX_CONNECTIONS (%u)",
			c->max_connections);
	c->connection_reserve = (unsigned)v;
	return ERR_OK;
}

/* DPOPT_LOG_FORMAT: unset or empty keeps the JSON lines on stderr; "json"
 * sends them to stdout, where a container's log pipeline reads one object
 * per line.  The lines are the same either way. */
static enum err_code
config_log_format(struct config *c, struct err *e)
{
	char format[16];
	enum err_code rc;

	if ((rc = env_str("DPOPT_LOG_FORMAT", "", format, sizeof(format), e)) != ERR_OK)
		return rc;
	if (format[0] != '\0' && strcmp(format, "json") != 0)
		return err_set_field(
			e, ERR_INVALID, "DPOPT_LOG_FORMAT",
			"DPOPT_LOG_FORMAT must be json (JSON lines on stdout) or unset "
			"(JSON lines on stderr)");
	c->log_stdout = format[0] != '\0';
	return ERR_OK;
}

/* DPOPT_SHUTDOWN_DELAY_SECONDS: after SIGTERM, /readyz answers 503 while
 * everything else is still served, so that a load balancer (Kubernetes'
 * endpoints) stops sending before the listener closes.
 * DPOPT_SHUTDOWN_SECONDS: SIGTERM to exit, at most; above the delay and the
 * requests' grace, below the orchestrator's (Kubernetes: 30 s). */
static enum err_code
config_shutdown(struct config *c, struct err *e)
{
	uint64_t v;
	enum err_code rc;

	if ((rc = env_uint("DPOPT_SHUTDOWN_DELAY_SECONDS", 0, 0, 600, &v, e)) != ERR_OK)
		return rc;
	c->shutdown_delay = (unsigned)v;
	if ((rc = env_uint("DPOPT_SHUTDOWN_SECONDS", 25, 1, 3600, &v, e)) != ERR_OK)
		return rc;
	if (v <= (uint64_t)c->shutdown_delay + c->shutdown_grace)
		return err_set_field(
			e, ERR_INVALID, "DPOPT_SHUTDOWN_SECONDS",
			"DPOPT_SHUTDOWN_SECONDS must be above "
			"DPOPT_SHUTDOWN_DELAY_SECONDS + DPOPT_SHUTDOWN_GRACE_SECONDS (%u)",
			c->shutdown_delay + c->shutdown_grace);
	c->shutdown_seconds = (unsigned)v;
	return ERR_OK;
}

enum err_code
config_from_env(struct config *ret, struct err *e)
{
	struct config c = { 0 };
	char listen[128], host[64];
	uint64_t v;
	enum err_code rc;

	if ((rc = env_str("DPOPT_LISTEN", "127.0.0.1:8080", listen, sizeof(listen), e)) != ERR_OK ||
	    (rc = parse_listen(listen, &c, e)) != ERR_OK)
		return rc;
	if ((rc = env_str("DPOPT_DATABASE_URL", "dbname=dpopt", c.database_url,
			  sizeof(c.database_url), e)) != ERR_OK)
		return rc;
	if ((rc = env_uint("DPOPT_WORKERS", 2, 1, 256, &v, e)) != ERR_OK)
		return rc;
	c.workers = (unsigned)v;
	/* Every HTTP thread blocks on the database for the span of a keyed
	 * request: with one pooled connection per thread none waits for a
	 * connection while another sits idle (bench/read_path.sh measured 8/8
	 * above 4/8 on both reads, README "Configuration").  Uploads hold a
	 * connection each for their whole body, at most DPOPT_MAX_UPLOADS =
	 * half the pool: the default pool is twice the threads, so uploads at
	 * their limit still leave every thread its connection (with one
	 * thread and a pool of one, an upload took the only connection and
	 * every other request got 503: tests/integration/test_race.c,
	 * test_upload_in_progress). */
	if ((rc = env_uint("DPOPT_HTTP_THREADS", 8, 1, 256, &v, e)) != ERR_OK)
		return rc;
	c.http_threads = (unsigned)v;
	if ((rc = env_uint("DPOPT_DB_POOL", 2 * c.http_threads, 1, 1024, &v, e)) != ERR_OK)
		return rc;
	c.db_pool = (unsigned)v;
	if ((rc = env_uint("DPOPT_DB_PREPARE", 1, 0, 1, &v, e)) != ERR_OK)
		return rc;
	c.db_prepare = v != 0;
	if ((rc = env_uint("DPOPT_MAX_BODY_BYTES", 1 << 20, 1024, 1 << 30, &v, e)) != ERR_OK)
		return rc;
	c.max_body_bytes = (size_t)v;
	if ((rc = env_uint("DPOPT_MAX_UPLOAD_BYTES", 4ULL << 30, 1024, 1ULL << 40, &v, e)) !=
	    ERR_OK)
		return rc;
	c.max_upload_bytes = v;
	if ((rc = env_uint("DPOPT_MAX_FEATURES", 100000, 1, 10000000, &v, e)) != ERR_OK)
		return rc;
	c.max_features = (unsigned)v;
	/* The universe of a synthetic-data run (the product of the categorical
	 * attributes' sizes): at most KWAY_MAX_UNIVERSE in any build. */
	if ((rc = env_uint("DPOPT_MAX_UNIVERSE", 1u << 20, 2, KWAY_MAX_UNIVERSE, &v, e)) != ERR_OK)
		return rc;
	c.max_universe = (size_t)v;
	/* A polytope's vertex list ("constraints.x": {"kind": "polytope"}):
	 * at most CONSTRAINT_MAX_VERTICES in any build. */
	if ((rc = env_uint("DPOPT_MAX_VERTICES", 100000, 2, CONSTRAINT_MAX_VERTICES, &v, e)) !=
	    ERR_OK)
		return rc;
	c.max_vertices = (size_t)v;
	if ((rc = env_uint("DPOPT_LEASE_SECONDS", 30, 2, 86400, &v, e)) != ERR_OK)
		return rc;
	c.lease_seconds = (unsigned)v;
	if ((rc = env_uint("DPOPT_MAX_ATTEMPTS", 3, 1, 100, &v, e)) != ERR_OK)
		return rc;
	c.max_attempts = (unsigned)v;
	/* Defaults: 5e10 work units; dp_sgd.one_pass measured 1.2e8 cells per
	 * second with lattice noise (bench/bench_dp_sgd, n = 1e6, d = 100), so
	 * about 7 minutes there; within the 30-minute aim of issue #3.
	 * DPOPT_WORK_RATE 0 (the default): measured at start-up (work_rate.h);
	 * a positive value replaces the measurement. */
	if ((rc = env_double("DPOPT_MAX_RUN_WORK", 5e10, 1e3, 1e16, &c.max_run_work, e)) !=
		    ERR_OK ||
	    (rc = env_double("DPOPT_WORK_RATE", 0.0, 0.0, 1e12, &c.work_rate, e)) != ERR_OK)
		return rc;
	/* Loaded datasets shared by the workers (service/dataset_cache.h):
	 * 1 GiB by default; an unused one is freed after 10 minutes. */
	{
		double bytes;

		if ((rc = env_double("DPOPT_DATASET_CACHE_BYTES", 1073741824.0, 0.0, 1e15, &bytes,
				     e)) != ERR_OK ||
		    (rc = env_double("DPOPT_DATASET_CACHE_IDLE_SECONDS", 600.0, 0.0, 1e7,
				     &c.dataset_cache_idle, e)) != ERR_OK)
			return rc;
		c.dataset_cache_bytes = (uint64_t)bytes;
	}
	if ((rc = env_uint("DPOPT_TEST_STEP_DELAY_MS", 0, 0, 60000, &v, e)) != ERR_OK)
		return rc;
#ifdef DPOPT_TESTING
	c.test_step_delay_ms = (unsigned)v;
#else
	if (v != 0)
		return err_set_field(e, ERR_INVALID, "DPOPT_TEST_STEP_DELAY_MS",
				     "DPOPT_TEST_STEP_DELAY_MS exists only in testing builds");
#endif
	if ((rc = env_str("DPOPT_LOG_LEVEL", "info", c.log_level, sizeof(c.log_level), e)) !=
	    ERR_OK)
		return rc;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	snprintf(listen, sizeof(listen), "%s:%ld", host, (long)getpid());
	if ((rc = env_str("DPOPT_INSTANCE_ID", listen, c.instance_id, sizeof(c.instance_id), e)) !=
	    ERR_OK)
		return rc;
	if ((rc = config_faults(&c, e)) != ERR_OK)
		return rc;
	if ((rc = config_http_limits(&c, e)) != ERR_OK)
		return rc;
	if ((rc = config_log_format(&c, e)) != ERR_OK)
		return rc;
	if ((rc = config_shutdown(&c, e)) != ERR_OK)
		return rc;
	*ret = c;
	return ERR_OK;
}
