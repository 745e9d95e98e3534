/*
 * dataset_cache.c - a reference-counted LRU of loaded datasets.
 *
 * One mutex guards the list; loading happens outside it, flagged on the
 * entry so that other threads wanting the same dataset wait on the
 * condition variable instead of loading it again.  The list is short (a
 * few datasets fit in memory), so lookups are linear.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dataset_cache.h"

struct entry {
	char id[37];
	struct loaded_dataset ds;
	unsigned refs;
	bool loading;       /* a thread is loading it; ds not valid yet */
	bool failed;        /* the load failed: waiters retry on their own */
	double last_used;   /* monotonic seconds of the last get() or put() */
	struct entry *prev; /* towards the most recently used */
	struct entry *next; /* towards the least recently used */
};

struct dataset_cache {
	pthread_mutex_t mu;
	pthread_cond_t loaded;
	size_t max_bytes;
	double idle_seconds;
	dataset_loader_fn load;
	void *load_ctx;
	struct entry *head; /* most recently used */
	struct entry *tail;
	struct dataset_cache_stats st;
};

static double
now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void
unlink_entry(struct dataset_cache *c, struct entry *en)
{
	if (en->prev != NULL)
		en->prev->next = en->next;
	else
		c->head = en->next;
	if (en->next != NULL)
		en->next->prev = en->prev;
	else
		c->tail = en->prev;
	en->prev = en->next = NULL;
}

static void
push_front(struct dataset_cache *c, struct entry *en)
{
	en->prev = NULL;
	en->next = c->head;
	if (c->head != NULL)
		c->head->prev = en;
	c->head = en;
	if (c->tail == NULL)
		c->tail = en;
}

static void
free_entry(struct dataset_cache *c, struct entry *en)
{
	unlink_entry(c, en);
	if (!en->loading && !en->failed) {
		c->st.bytes -= en->ds.bytes;
		c->st.entries--;
	}
	loaded_dataset_clear(&en->ds);
	free(en);
}

/* Free unused entries, least recently used first, while over the limit;
 * and every unused entry idle for too long.  Called with mu held. */
static void
trim(struct dataset_cache *c, double now)
{
	struct entry *en = c->tail, *prev;

	for (; en != NULL; en = prev) {
		prev = en->prev;
		if (en->refs > 0 || en->loading)
			continue;
		if (c->st.bytes > c->max_bytes || now - en->last_used > c->idle_seconds) {
			free_entry(c, en);
			c->st.evictions++;
		}
	}
}

struct dataset_cache *
dataset_cache_new(size_t max_bytes, double idle_seconds, dataset_loader_fn load, void *load_ctx)
{
	struct dataset_cache *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	if (pthread_mutex_init(&c->mu, NULL) != 0) {
		free(c);
		return NULL;
	}
	if (pthread_cond_init(&c->loaded, NULL) != 0) {
		pthread_mutex_destroy(&c->mu);
		free(c);
		return NULL;
	}
	c->max_bytes = max_bytes;
	c->idle_seconds = idle_seconds;
	c->load = load;
	c->load_ctx = load_ctx;
	return c;
}

void
dataset_cache_free(struct dataset_cache *c)
{
	if (c == NULL)
		return;
	while (c->head != NULL)
		free_entry(c, c->head);
	pthread_cond_destroy(&c->loaded);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static struct entry *
find(struct dataset_cache *c, const char *id)
{
	for (struct entry *en = c->head; en != NULL; en = en->next)
		if (!en->failed && strcmp(en->id, id) == 0)
			return en;
	return NULL;
}

enum err_code
dataset_cache_get(struct dataset_cache *c, struct db_conn *db, const char *id, const void *arg,
		  const struct loaded_dataset **ret, struct err *e)
{
	struct entry *en;
	struct loaded_dataset ds = { 0 };
	enum err_code rc;

	pthread_mutex_lock(&c->mu);
	trim(c, now_seconds());
	while ((en = find(c, id)) != NULL && en->loading)
		pthread_cond_wait(&c->loaded, &c->mu);
	if (en != NULL) {
		en->refs++;
		en->last_used = now_seconds();
		unlink_entry(c, en);
		push_front(c, en);
		c->st.hits++;
		pthread_mutex_unlock(&c->mu);
		*ret = &en->ds;
		return ERR_OK;
	}
	en = calloc(1, sizeof(*en));
	if (en == NULL) {
		pthread_mutex_unlock(&c->mu);
		return err_set(e, ERR_NOMEM, "cannot allocate a cache entry");
	}
	snprintf(en->id, sizeof(en->id), "%s", id);
	en->loading = true;
	en->refs = 1;
	push_front(c, en);
	c->st.misses++;
	pthread_mutex_unlock(&c->mu);

	rc = c->load(c->load_ctx, db, id, arg, &ds, e);

	pthread_mutex_lock(&c->mu);
	en->loading = false;
	if (rc != ERR_OK) {
		en->failed = true; /* not found by find(); freed here */
		en->refs = 0;
		free_entry(c, en);
		en = NULL;
	} else {
		en->ds = ds;
		en->last_used = now_seconds();
		c->st.bytes += ds.bytes;
		c->st.entries++;
		trim(c, en->last_used);
	}
	pthread_cond_broadcast(&c->loaded);
	pthread_mutex_unlock(&c->mu);
	if (en == NULL)
		return rc;
	*ret = &en->ds;
	return ERR_OK;
}

void
dataset_cache_put(struct dataset_cache *c, const struct loaded_dataset *ds)
{
	if (ds == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	for (struct entry *en = c->head; en != NULL; en = en->next) {
		if (&en->ds != ds)
			continue;
		en->refs--;
		en->last_used = now_seconds();
		break;
	}
	trim(c, now_seconds());
	pthread_mutex_unlock(&c->mu);
}

void
dataset_cache_stats(struct dataset_cache *c, struct dataset_cache_stats *ret)
{
	pthread_mutex_lock(&c->mu);
	*ret = c->st;
	pthread_mutex_unlock(&c->mu);
}
