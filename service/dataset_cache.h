/*
 * dataset_cache.h - sealed datasets loaded once per process and shared
 * read-only by the runs of every worker thread.
 *
 * A sealed dataset never changes (its rows are immutable after the seal),
 * so a loaded copy is valid for as long as the dataset is not deleted.  The
 * cache keeps loaded datasets in memory up to DPOPT_DATASET_CACHE_BYTES:
 *
 *	dataset_cache_get()      the copy of a dataset, loading it on a miss;
 *	                         a reference the caller must put back
 *	dataset_cache_put()      give the reference back
 *
 * Entries are reference counted: one in use is never freed.  When the
 * total exceeds the limit, unused entries are freed least recently used
 * first; a dataset larger than the limit on its own is loaded for the run
 * and freed when its last reference goes.  An entry unused for
 * idle_seconds is freed at the next get(), so that the rows of a deleted
 * dataset do not linger in memory; every get() also checks (the caller
 * does, through datasets_meta) that the dataset still exists.
 *
 * Two threads asking for the same missing dataset load it once: the second
 * waits for the first.  A failed load is not cached.  Thread-safe.
 */
#ifndef SERVICE_DATASET_CACHE_H
#define SERVICE_DATASET_CACHE_H

#include <stddef.h>

#include "dataset_load.h"
#include "db.h"
#include "err.h"

struct dataset_cache;

/* Loads dataset id into ret (the cache owns it afterwards, and reads
 * ret->bytes); arg is get()'s, e.g. the dataset's public metadata. */
typedef enum err_code (*dataset_loader_fn)(void *ctx, struct db_conn *db, const char *id,
					   const void *arg, struct loaded_dataset *ret,
					   struct err *e);

struct dataset_cache_stats {
	size_t entries;
	size_t bytes;         /* resident bytes of cached entries */
	unsigned long hits;   /* get() served from memory */
	unsigned long misses; /* get() that loaded */
	unsigned long evictions;
};

/* A cache of at most max_bytes of unused entries (0: nothing is kept once
 * unused).  NULL on allocation failure. */
struct dataset_cache *dataset_cache_new(size_t max_bytes, double idle_seconds,
					dataset_loader_fn load, void *load_ctx);

/* Frees every entry; no reference may be outstanding. */
void dataset_cache_free(struct dataset_cache *c);

/* The loaded dataset id: *ret points into the cache until put().  Errors
 * of the loader are returned as they are. */
enum err_code dataset_cache_get(struct dataset_cache *c, struct db_conn *db, const char *id,
				const void *arg, const struct loaded_dataset **ret, struct err *e);

/* Give back a reference obtained from get(). */
void dataset_cache_put(struct dataset_cache *c, const struct loaded_dataset *ds);

void dataset_cache_stats(struct dataset_cache *c, struct dataset_cache_stats *ret);

#endif /* SERVICE_DATASET_CACHE_H */
