/*
 * content_hash.h - a hash of a dataset's rows as a multiset.
 *
 * Each row is hashed as its canonical bytes (the clipped values as
 * little-endian float64, -0 as +0, prefixed by the row length), and the
 * digests are added as 256-bit integers modulo 2^256 (an additive multiset
 * hash).  The result is independent of the row order and of the encoding
 * the rows arrived in (CSV today, LIBSVM later): identical clipped rows
 * give identical hashes.  Used to refuse re-uploading the same data under
 * a fresh budget (budget laundering, docs/privacy-model.md §4.4).
 */
#ifndef SERVICE_CONTENT_HASH_H
#define SERVICE_CONTENT_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct content_hash {
	uint64_t sum[4]; /* little-endian limbs of the running sum mod 2^256 */
	void *ctx;       /* owned: the digest context, reused row after row */
};

void content_hash_init(struct content_hash *h);

/* Free what the hash holds (the sum stays readable). */
void content_hash_clear(struct content_hash *h);

/* Add one row of n values (features then label, already clipped). */
enum err_code content_hash_add(struct content_hash *h, const double *row, size_t n, struct err *e);

/* The 32-byte result as 64 lower-case hex digits. */
void content_hash_hex(const struct content_hash *h, char out[65]);

#endif /* SERVICE_CONTENT_HASH_H */
