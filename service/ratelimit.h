/*
 * ratelimit.h - token buckets keyed by a short string (an API key's id, a
 * client address), in memory, for one process.
 *
 * A bucket holds at most burst tokens and gains rate tokens per second.
 * The table has a fixed number of slots: when a key's neighbourhood is
 * full, the bucket touched longest ago is forgotten (a forgotten bucket
 * starts full again, so an eviction can only be lenient).  Limits are per
 * replica: N replicas admit N times the configured rate.
 */
#ifndef SERVICE_RATELIMIT_H
#define SERVICE_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>

struct ratelimit;

/* A table of at most slots buckets (rounded up to a power of two);
 * rate > 0 tokens per second, burst >= 1.  Owned result or NULL. */
struct ratelimit *ratelimit_new(double rate, double burst, size_t slots);
void ratelimit_free(struct ratelimit *rl); /* accepts NULL */

/* Take one token from key's bucket at time now (seconds, monotonic).
 * True when there was one; otherwise false and *ret_retry_after gets the
 * whole seconds (>= 1) until one will be.  Thread-safe. */
bool ratelimit_take(struct ratelimit *rl, const char *key, double now, unsigned *ret_retry_after);

/* As ratelimit_take() but only looks: true when a token is there now. */
bool ratelimit_peek(struct ratelimit *rl, const char *key, double now, unsigned *ret_retry_after);

#endif /* SERVICE_RATELIMIT_H */
