/*
 * run_pool.c - the per-run executor (run_pool.h).
 */
#include <stdlib.h>
#include <unistd.h>

#include "run_pool.h"

unsigned
run_pool_threads(unsigned workers)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *s = getenv("DPOPT_RUN_THREADS");
	unsigned long want;
	unsigned cap;
	char *end;

	if (cpus < 1)
		cpus = 1;
	want = (unsigned long)cpus;
	if (s != NULL && *s != '\0') {
		unsigned long v = strtoul(s, &end, 10);

		if (*end == '\0' && v >= 1)
			want = v;
	}
	cap = (unsigned)cpus / (workers > 0 ? workers : 1);
	if (cap < 1)
		cap = 1;
	if (want > cap)
		want = cap;
	if (want > RUN_POOL_MAX)
		want = RUN_POOL_MAX;
	return (unsigned)want;
}

/* Claim and run parts until none is left; called with mu held, returns
 * with it held. */
static void
drain(struct run_pool *p)
{
	while (p->next < p->parts) {
		size_t k = p->next++;

		pthread_mutex_unlock(&p->mu);
		p->fn(p->arg, k);
		pthread_mutex_lock(&p->mu);
		if (++p->finished == p->parts)
			pthread_cond_signal(&p->done);
	}
}

/* Run the queued background call; called with mu held, returns with it
 * held. */
static void
run_background(struct run_pool *p)
{
	p->bg_queued = false;
	p->bg_running = true;
	pthread_mutex_unlock(&p->mu);
	p->bg_fn(p->bg_arg);
	pthread_mutex_lock(&p->mu);
	p->bg_running = false;
	pthread_cond_broadcast(&p->done);
}

static void *
helper(void *arg)
{
	struct run_pool *p = arg;
	unsigned long seen = 0;

	pthread_mutex_lock(&p->mu);
	seen = p->spawn_gen;
	for (;;) {
		while (!p->stop && p->gen == seen && !p->bg_queued)
			pthread_cond_wait(&p->go, &p->mu);
		if (p->stop)
			break;
		if (p->bg_queued) {
			run_background(p);
			continue;
		}
		seen = p->gen;
		drain(p);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Start the helpers not yet started; called with mu held. */
static void
spawn_helpers(struct run_pool *p)
{
	p->spawn_gen = p->gen; /* helpers started now take the next call only */
	while (!p->failed && p->started + 1 < p->threads) {
		if (pthread_create(&p->tid[p->started], NULL, helper, p) != 0)
			p->failed = true; /* fewer helpers: the same parts, the same bits */
		else
			p->started++;
	}
}

static void
pool_for(void *ctx, size_t parts, void (*fn)(void *arg, size_t k), void *arg)
{
	struct run_pool *p = ctx;

	if (p->threads <= 1 || parts <= 1) {
		for (size_t k = 0; k < parts; k++)
			fn(arg, k);
		return;
	}
	pthread_mutex_lock(&p->mu);
	spawn_helpers(p);
	p->fn = fn;
	p->arg = arg;
	p->parts = parts;
	p->next = 0;
	p->finished = 0;
	p->gen++;
	pthread_cond_broadcast(&p->go);
	drain(p);
	while (p->finished < p->parts)
		pthread_cond_wait(&p->done, &p->mu);
	p->parts = 0; /* late helpers find nothing to claim */
	pthread_mutex_unlock(&p->mu);
}

static void
pool_background(void *ctx, void (*fn)(void *arg), void *arg)
{
	struct run_pool *p = ctx;

	if (p->threads <= 1) {
		fn(arg);
		return;
	}
	pthread_mutex_lock(&p->mu);
	spawn_helpers(p);
	p->bg_fn = fn;
	p->bg_arg = arg;
	p->bg_queued = true;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
}

static void
pool_join(void *ctx)
{
	struct run_pool *p = ctx;

	if (p->threads <= 1)
		return;
	pthread_mutex_lock(&p->mu);
	if (p->bg_queued) /* no helper took it: run it here */
		run_background(p);
	while (p->bg_running)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void
run_pool_init(struct run_pool *p, unsigned t)
{
	*p = (struct run_pool){ 0 };
	p->threads = t < 1 ? 1 : t > RUN_POOL_MAX ? RUN_POOL_MAX : t;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	p->exec.parallel_for = pool_for;
	p->exec.background = pool_background;
	p->exec.join = pool_join;
	p->exec.ctx = p;
}

void
run_pool_clear(struct run_pool *p)
{
	pool_join(p); /* a background call the run left unjoined */
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->started; i++)
		pthread_join(p->tid[i], NULL);
	p->started = 0;
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
}
