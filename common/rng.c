/*
 * rng.c - buffered draws on top of a refill function, and the splitmix64
 * test source.  The OpenSSL source is in rng_openssl.c.
 */
#include <stdlib.h>
#include <string.h>

#include "rng.h"

static uint64_t
splitmix_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static bool
splitmix_refill(struct rng *r)
{
	for (size_t i = 0; i < RNG_BUFFER_BYTES; i += 8) {
		uint64_t v = splitmix_next(&r->splitmix);

		memcpy(r->buf + i, &v, 8);
	}
	return true;
}

static void
splitmix_heap_destroy(struct rng *r)
{
	memset(r, 0, sizeof(*r));
	free(r);
}

/* A heap splitmix seeded with the next word of r. */
static struct rng *
splitmix_split(struct rng *r, struct err *e)
{
	struct rng *c = malloc(sizeof(*c));

	if (c == NULL) {
		err_set(e, ERR_NOMEM, "cannot allocate a random generator");
		return NULL;
	}
	rng_splitmix_init(c, rng_u64(r));
	c->destroy = splitmix_heap_destroy;
	return c;
}

void
rng_splitmix_init(struct rng *r, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	r->refill = splitmix_refill;
	r->destroy = NULL;
	r->split = splitmix_split;
	r->splitmix = seed;
	r->pos = RNG_BUFFER_BYTES; /* empty: first draw refills */
}

struct rng *
rng_split(struct rng *r, struct err *e)
{
	if (r->split == NULL) {
		err_set(e, ERR_INTERNAL, "this random generator cannot be split");
		return NULL;
	}
	return r->split(r, e);
}

void
rng_free(struct rng *r)
{
	if (r == NULL)
		return;
	if (r->destroy != NULL)
		r->destroy(r);
}

bool
rng_ok(const struct rng *r)
{
	return !r->failed;
}

void
rng_bytes(struct rng *r, void *buf, size_t len)
{
	unsigned char *out = buf;

	while (len > 0) {
		size_t take;

		if (r->pos >= RNG_BUFFER_BYTES) {
			if (r->failed || !r->refill(r)) {
				/* Fail closed: zeros, and the driver sees rng_ok() false. */
				r->failed = true;
				memset(r->buf, 0, RNG_BUFFER_BYTES);
			}
			r->pos = 0;
		}
		take = RNG_BUFFER_BYTES - r->pos;
		if (take > len)
			take = len;
		memcpy(out, r->buf + r->pos, take);
		/* Bytes handed out are wiped from the buffer: they may be noise. */
		memset(r->buf + r->pos, 0, take);
		r->pos += take;
		out += take;
		len -= take;
	}
}

uint64_t
rng_u64(struct rng *r)
{
	uint64_t v;

	/* The same bytes as rng_bytes(r, &v, 8), without its loop while
	 * the buffer holds a whole word. */
	if (r->pos <= RNG_BUFFER_BYTES - sizeof(v)) {
		memcpy(&v, r->buf + r->pos, sizeof(v));
		memset(r->buf + r->pos, 0, sizeof(v));
		r->pos += sizeof(v);
		return v;
	}
	rng_bytes(r, &v, sizeof(v));
	return v;
}

double
rng_uniform(struct rng *r)
{
	return (double)(rng_u64(r) >> 11) * 0x1.0p-53;
}

uint64_t
rng_below(struct rng *r, uint64_t bound)
{
	/* Rejection on the top of the range: exact, expected < 2 draws. */
	uint64_t limit = UINT64_MAX - (UINT64_MAX % bound + 1) % bound;

	for (;;) {
		uint64_t v = rng_u64(r);

		if (v <= limit)
			return v % bound;
		if (r->failed)
			return 0;
	}
}
