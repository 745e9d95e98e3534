/*
 * rng_openssl.c - the production randomness source: OpenSSL's private
 * DRBG (RAND_priv_bytes), read 64 KiB at a time so that a run needing
 * 10^8 draws makes ~10^4 library calls, not 10^8 (each call costs ~1 us
 * of fixed overhead, as much as ~6 KiB of output).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "rng.h"

static bool
openssl_refill(struct rng *r)
{
	return RAND_priv_bytes(r->buf, RNG_BUFFER_BYTES) == 1;
}

static void
openssl_destroy(struct rng *r)
{
	memset(r, 0, sizeof(*r)); /* the buffer may hold unused noise bits */
	free(r);
}

static struct rng *
openssl_split(struct rng *r, struct err *e)
{
	(void)r; /* independent: a new generator, nothing derived from r */
	return rng_openssl_new(e);
}

struct rng *
rng_openssl_new(struct err *e)
{
	struct rng *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		err_set(e, ERR_NOMEM, "cannot allocate a random generator");
		return NULL;
	}
	r->refill = openssl_refill;
	r->destroy = openssl_destroy;
	r->split = openssl_split;
	r->pos = RNG_BUFFER_BYTES;
	if (!openssl_refill(r)) {
		free(r);
		err_set(e, ERR_INTERNAL, "the OpenSSL random generator is unavailable");
		return NULL;
	}
	r->pos = 0;
	return r;
}
