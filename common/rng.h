/*
 * rng.h - the one randomness interface.
 *
 * Algorithms never pick their randomness: the caller passes a struct rng.
 * Production uses rng_openssl_new() (OpenSSL RAND_priv_bytes through a
 * buffer, one generator per run); tests inject rng_splitmix_init() with a
 * fixed seed.  No request can choose the generator or a seed.
 *
 * Draws are infallible to keep hot loops simple: a source that fails (the
 * OpenSSL DRBG refusing to generate) marks the generator failed, returns
 * zeros from then on, and rng_ok() turns false.  The driver checks
 * rng_ok() after every step and fails the run closed.
 *
 * Not thread-safe: one generator per thread (per run).
 */
#ifndef COMMON_RNG_H
#define COMMON_RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* 64 KiB: RAND_priv_bytes costs ~1 us per call on top of ~0.17 ns per
 * byte (OpenSSL 3.0, AES-256 CTR-DRBG, measured on the dev VM), so 4 KiB
 * blocks spent more than half the generator's time in per-call overhead;
 * 64 KiB is also the DRBG's largest single request.  A struct rng is
 * therefore ~64 KiB: production generators are on the heap; tests keep
 * theirs on the (8 MiB) main stack, never on small thread stacks. */
#define RNG_BUFFER_BYTES 65536

struct rng {
	/* Refill buf completely; false on failure.  state is the source's. */
	bool (*refill)(struct rng *r);
	void (*destroy)(struct rng *r); /* frees what the source owns; may be NULL */
	/* An owned generator of the same kind for another thread (rng_split). */
	struct rng *(*split)(struct rng *r, struct err *e);
	uint64_t splitmix; /* state of the splitmix source */
	size_t pos;        /* next unread byte of buf */
	bool failed;       /* sticky: a refill failed */
	unsigned char buf[RNG_BUFFER_BYTES];
};

/* Production generator: RAND_priv_bytes in 64 KiB blocks.  Returns an owned
 * generator (free with rng_free()) or NULL with *e set. */
struct rng *rng_openssl_new(struct err *e);

/* Deterministic generator for tests and benchmarks (splitmix64).  Fills a
 * caller-owned struct; nothing to free (rng_free() is not called on it). */
void rng_splitmix_init(struct rng *r, uint64_t seed);

/*
 * A second, owned generator of the same kind, for draws made on another
 * thread (a generator is not thread-safe): for OpenSSL a new generator
 * (RAND_priv_bytes keeps a private DRBG per thread; nothing is derived
 * from r), for splitmix one seeded with the next word of r (so a seeded
 * test stays reproducible).  Free it with rng_free().  NULL with *e set if
 * it cannot be made.
 */
struct rng *rng_split(struct rng *r, struct err *e);

/* Frees a generator from rng_openssl_new() or rng_split(); accepts NULL. */
void rng_free(struct rng *r);

/* True while every draw so far came from a working source. */
bool rng_ok(const struct rng *r);

/* 64 uniformly random bits. */
uint64_t rng_u64(struct rng *r);

/* Uniform on [0, 1) with 53 random bits. */
double rng_uniform(struct rng *r);

/* Uniform on {0, ..., bound - 1} without modulo bias; bound >= 1. */
uint64_t rng_below(struct rng *r, uint64_t bound);

/* Fill buf with random bytes. */
void rng_bytes(struct rng *r, void *buf, size_t len);

#endif /* COMMON_RNG_H */
