/*
 * ratelimit.c - token buckets in an open-addressed table (see ratelimit.h).
 */
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ratelimit.h"

#define KEY_MAX 64 /* bytes kept of a key; longer keys are cut (ids and addresses fit) */
#define PROBES  8  /* slots looked at for one key */

struct bucket {
	char key[KEY_MAX + 1]; /* "" when free */
	double tokens;
	double last; /* when tokens was computed */
};

struct ratelimit {
	pthread_mutex_t lock;
	double rate, burst;
	size_t mask;            /* slots - 1 */
	struct bucket *buckets; /* owned: mask + 1 */
};

struct ratelimit *
ratelimit_new(double rate, double burst, size_t slots)
{
	struct ratelimit *rl;
	size_t n = 16;

	if (!(rate > 0.0) || !(burst >= 1.0))
		return NULL;
	while (n < slots && n < ((size_t)1 << 24))
		n <<= 1;
	rl = calloc(1, sizeof(*rl));
	if (rl == NULL)
		return NULL;
	rl->buckets = calloc(n, sizeof(*rl->buckets));
	if (rl->buckets == NULL) {
		free(rl);
		return NULL;
	}
	pthread_mutex_init(&rl->lock, NULL);
	rl->rate = rate;
	rl->burst = burst;
	rl->mask = n - 1;
	return rl;
}

void
ratelimit_free(struct ratelimit *rl)
{
	if (rl == NULL)
		return;
	pthread_mutex_destroy(&rl->lock);
	free(rl->buckets);
	free(rl);
}

/* FNV-1a over the kept bytes of the key. */
static uint64_t
hash(const char *key)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < KEY_MAX && key[i] != '\0'; i++) {
		h ^= (unsigned char)key[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* key's bucket, refilled to now; when it has none, a new full one if
 * insert, else NULL (a look must not evict another key's bucket: that
 * would let lookups from many addresses reset a throttled one).  Called
 * with the lock held. */
static struct bucket *
find(struct ratelimit *rl, const char *key, double now, bool insert)
{
	size_t start = (size_t)hash(key) & rl->mask;
	struct bucket *victim = NULL, *b;

	for (size_t i = 0; i < PROBES; i++) {
		b = &rl->buckets[(start + i) & rl->mask];
		if (b->key[0] != '\0' && strncmp(b->key, key, KEY_MAX) == 0) {
			if (now > b->last) {
				b->tokens = fmin(rl->burst, b->tokens + (now - b->last) * rl->rate);
				b->last = now;
			}
			return b;
		}
		/* Prefer a free slot, else the one touched longest ago. */
		if (victim == NULL ||
		    (victim->key[0] != '\0' && (b->key[0] == '\0' || b->last < victim->last)))
			victim = b;
	}
	if (!insert)
		return NULL;
	snprintf(victim->key, sizeof(victim->key), "%s", key);
	victim->tokens = rl->burst;
	victim->last = now;
	return victim;
}

static unsigned
retry_after(const struct ratelimit *rl, const struct bucket *b)
{
	double s = ceil((1.0 - b->tokens) / rl->rate);

	return s < 1.0 ? 1u : s > 86400.0 ? 86400u : (unsigned)s;
}

static bool
take_or_peek(struct ratelimit *rl, const char *key, double now, bool take,
	     unsigned *ret_retry_after)
{
	struct bucket *b;
	bool ok;

	pthread_mutex_lock(&rl->lock);
	b = find(rl, key, now, take);
	ok = b == NULL || b->tokens >= 1.0; /* no bucket: a full one */
	if (ok && take)
		b->tokens -= 1.0;
	if (!ok && b != NULL && ret_retry_after != NULL)
		*ret_retry_after = retry_after(rl, b);
	pthread_mutex_unlock(&rl->lock);
	return ok;
}

bool
ratelimit_take(struct ratelimit *rl, const char *key, double now, unsigned *ret_retry_after)
{
	return take_or_peek(rl, key, now, true, ret_retry_after);
}

bool
ratelimit_peek(struct ratelimit *rl, const char *key, double now, unsigned *ret_retry_after)
{
	return take_or_peek(rl, key, now, false, ret_retry_after);
}
