/*
 * run_pool.h - the per-run thread pool behind struct alg_exec (alg.h):
 * algorithms/ creates no threads, so a run that splits its batch gradient
 * (algorithms/row_order.h) gets this executor injected in its run_spec.
 *
 * A pool of t threads is the caller plus t - 1 helpers, started on the
 * first parallel_for (a run that never splits starts none) and joined by
 * run_pool_clear().  The helpers block on a condition variable between
 * calls (no spinning: the machine is shared).  The split and the order of
 * the reduction are the method's, fixed by public sizes only, so a run
 * gives the same bits on any pool size.
 *
 * background(fn, arg) (alg_exec.background) hands fn to a helper and
 * returns; join() waits for it.  A helper that is free takes it; if none
 * has by the time join() is called (a pool of 1, helpers that could not
 * start), the caller runs it there.  While a helper runs it, parallel_for
 * parts are run by the caller and the other helpers (same parts, same
 * bits).
 */
#ifndef SERVICE_RUN_POOL_H
#define SERVICE_RUN_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "alg.h"

#define RUN_POOL_MAX 64

struct run_pool {
	struct alg_exec exec; /* what the run_spec borrows; ctx = this pool */
	unsigned threads;     /* t, >= 1 (1: the caller runs every part) */
	unsigned started;     /* helpers running */
	bool failed;          /* a helper could not start: the caller runs the rest */
	pthread_t tid[RUN_POOL_MAX];
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	unsigned long gen;       /* call number, bumped by each parallel_for */
	unsigned long spawn_gen; /* gen before the call that started the helpers */
	bool stop;
	void (*fn)(void *arg, size_t k);
	void *arg;
	size_t parts, next, finished;
	void (*bg_fn)(void *arg); /* the background call: queued, then running */
	void *bg_arg;
	bool bg_queued, bg_running;
};

/*
 * The threads of one run: DPOPT_RUN_THREADS when set (an integer >= 1;
 * otherwise, or unset, the online CPUs), capped at online CPUs / workers
 * (at least 1) so that `workers` runs at once never ask for more threads
 * than the machine has, and at RUN_POOL_MAX.
 */
unsigned run_pool_threads(unsigned workers);

/* A pool of t threads (t clamped to [1, RUN_POOL_MAX]); starts nothing. */
void run_pool_init(struct run_pool *p, unsigned t);

/* Stop and join the helpers. */
void run_pool_clear(struct run_pool *p);

#endif /* SERVICE_RUN_POOL_H */
