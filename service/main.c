/*
 * main.c - dpoptd: configuration, start-up, signals, shutdown, and the
 * administrative commands.  The only file that exits.
 *
 *	dpoptd                      serve (migrations applied first)
 *	dpoptd migrate              apply pending migrations and exit
 *	dpoptd keys create|list|revoke|rotate ...
 *	                            API keys (cli_keys.h)
 *	dpoptd privacy ...          the accountants (cli_privacy.h)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "auth.h"
#include "cli_keys.h"
#include "cli_privacy.h"
#include "config.h"
#include "dataset_cache.h"
#include "db.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "migrate.h"
#include "server.h"
#include "solve.h"
#include "work_rate.h"
#include "worker.h"

static void
die(const struct err *e)
{
	log_err("main", e);
	fprintf(stderr, "dpoptd: %s%s%s\n", e->msg, e->detail[0] != '\0' ? ": " : "", e->detail);
	exit(1);
}

static void
usage(void)
{
	fprintf(stderr, "usage: dpoptd [migrate | keys create|list|revoke|rotate ... |"
			" privacy ... | solve ...]\n");
	exit(2);
}

static int
cmd_migrate(const struct config *cfg)
{
	struct err e = { 0 };
	struct db_conn *db = db_connect(cfg->database_url, &e);
	unsigned applied = 0;

	if (db == NULL || migrate_apply(db, &applied, &e) != ERR_OK)
		die(&e);
	db_close(db);
	log_msg(LOG_INFO, "main", "%u migration(s) applied", applied);
	return 0;
}

/*
 * The drain's bound (DPOPT_SHUTDOWN_SECONDS), started by SIGTERM: a worker
 * stops only after its current step or dataset load, which has no bound
 * of its own.  Past the bound the process exits as if it had crashed: runs
 * still held keep their leases, which expire, and another replica's lease
 * keeper re-queues them (their charges stand, paid once at admission).
 */
static void *
drain_watchdog(void *arg)
{
	const struct server *srv = arg;
	struct timespec t = { .tv_sec = (time_t)srv->cfg.shutdown_seconds, .tv_nsec = 0 };

	while (nanosleep(&t, &t) != 0)
		;
	log_msg(LOG_ERROR, "main",
		"drain not finished within DPOPT_SHUTDOWN_SECONDS (%u s): exiting; runs still held "
		"are resumed elsewhere once their leases expire",
		srv->cfg.shutdown_seconds);
	_exit(1);
	return NULL;
}

static int
serve(struct server *srv)
{
	struct err e = { 0 };
	struct workers *workers;
	struct db_conn *db;
	sigset_t sigs;
	unsigned applied = 0;
	int sig = 0;

	/* Block the stop signals in every thread; main waits for them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* The server's log lines go to stdout under DPOPT_LOG_FORMAT=json; the
	 * commands (migrate, keys) keep stdout for what they print. */
	if (srv->cfg.log_stdout)
		log_to_stdout();

	/* The work model's speed: measured here, before any thread runs, so
	 * the benchmark has a core to itself as far as this process goes. */
	if (srv->cfg.work_rate == 0.0) {
		double took = 0.0;

		if (work_rate_measure(&srv->cfg.work_rate, &took, &e) != ERR_OK)
			die(&e);
		log_msg(LOG_INFO, "main",
			"work rate measured: %.4g work units per CPU second (benchmark %.0f ms)",
			srv->cfg.work_rate, took * 1e3);
	} else {
		log_msg(LOG_INFO, "main", "work rate set by DPOPT_WORK_RATE: %.4g per second",
			srv->cfg.work_rate);
	}
	db = db_connect(srv->cfg.database_url, &e);
	/* A migration may rewrite a large table: no statement timeout there
	 * (the advisory lock of another replica's migration is waited for). */
	if (db == NULL || db_command(db, "SET statement_timeout = 0", &e) != ERR_OK ||
	    migrate_apply(db, &applied, &e) != ERR_OK)
		die(&e);
	db_close(db);
	srv->pool = db_pool_new(srv->cfg.database_url, srv->cfg.db_pool, &e);
	srv->metrics = metrics_new(router_count());
	srv->datasets = dataset_cache_new((size_t)srv->cfg.dataset_cache_bytes,
					  srv->cfg.dataset_cache_idle, worker_load_dataset, srv);
	if (srv->pool == NULL || srv->metrics == NULL || srv->datasets == NULL)
		die(&e);
	workers = workers_start(srv, &e);
	if (workers == NULL)
		die(&e);
	if (http_start(srv, &e) != ERR_OK)
		die(&e);
	log_msg(LOG_INFO, "main",
		"dpoptd listening on %s:%u with %u workers (%u migrations applied)",
		srv->cfg.listen_host, srv->cfg.listen_port, srv->cfg.workers, applied);

	while (sigwait(&sigs, &sig) != 0 || (sig != SIGTERM && sig != SIGINT))
		;
	log_msg(LOG_INFO, "main", "signal %d: stopping", sig);
	atomic_store(&srv->draining, true); /* /readyz 503 from now on */
	{
		pthread_t watchdog;

		if (pthread_create(&watchdog, NULL, drain_watchdog, srv) == 0)
			pthread_detach(watchdog);
		else
			log_msg(LOG_WARN, "main", "no drain watchdog: the drain is unbounded");
	}
	if (srv->cfg.shutdown_delay > 0) {
		/* Still serving while the load balancer notices /readyz. */
		struct timespec t = { .tv_sec = (time_t)srv->cfg.shutdown_delay, .tv_nsec = 0 };

		while (nanosleep(&t, &t) != 0)
			;
	}
	atomic_store(&srv->stopping, true);
	http_stop(srv);        /* no new requests; handlers in flight finish */
	workers_join(workers); /* each finishes its step and re-queues its run */
	db_pool_free(srv->pool);
	metrics_free(srv->metrics);
	dataset_cache_free(srv->datasets);
	log_msg(LOG_INFO, "main", "stopped");
	return 0;
}

int
main(int argc, char **argv)
{
	static struct server srv; /* process-wide; read-only once threads start */
	struct err e = { 0 };
	int level;

	/* The offline solver needs no service configuration or database. */
	if (argc >= 2 && strcmp(argv[1], "solve") == 0) {
		json_object_seed(0);
		return solve_main(argc, argv);
	}
	if (config_from_env(&srv.cfg, &e) != ERR_OK)
		die(&e);
	level = log_level_from_name(srv.cfg.log_level);
	if (level < 0) {
		err_set_field(&e, ERR_INVALID, "DPOPT_LOG_LEVEL",
			      "DPOPT_LOG_LEVEL must be debug, info, warn or error");
		die(&e);
	}
	log_set_level((enum log_level)level);
	db_set_prepare(srv.cfg.db_prepare);
	db_configure(&(struct db_limits){ .connect_timeout_s = srv.cfg.db_connect_timeout,
					  .statement_timeout_ms = srv.cfg.db_statement_ms,
					  .answer_grace_ms = 5000 });
	json_object_seed(0); /* before any thread uses jansson */
	atomic_init(&srv.stopping, false);
	atomic_init(&srv.draining, false);

	if (argc == 1)
		return serve(&srv);
	if (strcmp(argv[1], "migrate") == 0 && argc == 2)
		return cmd_migrate(&srv.cfg);
	if (argc >= 2 && strcmp(argv[1], "privacy") == 0)
		return cli_privacy(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "keys") == 0)
		return cli_keys(srv.cfg.database_url, argc - 2, argv + 2);
	usage();
	return 2;
}
