/*
 * bigint.h - fixed-width unsigned integers (512 bits) for the rare wide
 * paths of the exact samplers in privacy/noise.c.
 *
 * The discrete Gaussian's accept test compares a 64-bit uniform against a
 * rational exp(-num/den) whose numerator outgrows 128 bits only for
 * proposals far in the tail (beyond ~2000 sigma, probability < e^-2000).
 * Exactness demands that those be handled too, so noise.c falls back to
 * these schoolbook routines (Knuth, TAOCP vol. 2, 4.3.1, algorithms A, S,
 * M; division bit by bit, which is slow and simple).  Speed is irrelevant
 * here; being obviously right is the point.
 *
 * Numbers are little-endian arrays of 64-bit limbs; no allocation, no
 * sign.  Operations that can overflow say so in their return value.
 */
#ifndef ALGORITHMS_PRIVACY_BIGINT_H
#define ALGORITHMS_PRIVACY_BIGINT_H

#include <stdbool.h>
#include <stdint.h>

#define BIGINT_LIMBS 8 /* 512 bits */

struct bigint {
	uint64_t w[BIGINT_LIMBS]; /* w[0] is the least significant limb */
};

/* *a = hi 2^64 + lo. */
void bigint_set(struct bigint *a, uint64_t hi, uint64_t lo);

bool bigint_is_zero(const struct bigint *a);

/* -1, 0 or 1 as a <, =, > b. */
int bigint_cmp(const struct bigint *a, const struct bigint *b);

/* *r = a + b mod 2^512; true if the sum overflowed.  r may alias a or b. */
bool bigint_add(struct bigint *r, const struct bigint *a, const struct bigint *b);

/* *r = a - b mod 2^512; true if b > a (it borrowed).  r may alias a or b. */
bool bigint_sub(struct bigint *r, const struct bigint *a, const struct bigint *b);

/* *r = a b mod 2^512; true if the product is 2^512 or more.  r may alias. */
bool bigint_mul(struct bigint *r, const struct bigint *a, const struct bigint *b);

/* *a -= 1; a must not be zero. */
void bigint_dec(struct bigint *a);

/* *q = floor(a / d), *rem = a mod d; d must not be zero.  q and rem must
 * not alias a, d or each other. */
void bigint_divmod(struct bigint *q, struct bigint *rem, const struct bigint *a,
		   const struct bigint *d);

/* True if a < 2^128, then *hi, *lo are its two low limbs. */
bool bigint_get128(const struct bigint *a, uint64_t *hi, uint64_t *lo);

#endif /* ALGORITHMS_PRIVACY_BIGINT_H */
