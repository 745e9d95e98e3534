/*
 * bigint.c - schoolbook arithmetic on 512-bit unsigned integers (see
 * bigint.h).  Addition, subtraction and multiplication follow Knuth,
 * TAOCP vol. 2, 4.3.1 (algorithms A, S, M); division is restoring long
 * division one bit at a time, 512 steps, used only in the rare tail path
 * of the exact samplers and at parameter-preparation time.
 *
 * unsigned __int128 is a GCC/Clang extension.  It is used for the 64x64
 * limb products and the carries because both compilers the project
 * supports have it on every 64-bit target we build for, and it is much
 * easier to check than hand-split 32-bit half-limbs.
 */
#include <string.h>

#include "privacy/bigint.h"

__extension__ typedef unsigned __int128 u128;

void
bigint_set(struct bigint *a, uint64_t hi, uint64_t lo)
{
	memset(a, 0, sizeof(*a));
	a->w[0] = lo;
	a->w[1] = hi;
}

bool
bigint_is_zero(const struct bigint *a)
{
	uint64_t acc = 0;

	for (int i = 0; i < BIGINT_LIMBS; i++)
		acc |= a->w[i];
	return acc == 0;
}

int
bigint_cmp(const struct bigint *a, const struct bigint *b)
{
	for (int i = BIGINT_LIMBS - 1; i >= 0; i--) {
		if (a->w[i] != b->w[i])
			return a->w[i] < b->w[i] ? -1 : 1;
	}
	return 0;
}

bool
bigint_add(struct bigint *r, const struct bigint *a, const struct bigint *b)
{
	uint64_t carry = 0;

	for (int i = 0; i < BIGINT_LIMBS; i++) {
		u128 s = (u128)a->w[i] + b->w[i] + carry;

		r->w[i] = (uint64_t)s;
		carry = (uint64_t)(s >> 64);
	}
	return carry != 0;
}

bool
bigint_sub(struct bigint *r, const struct bigint *a, const struct bigint *b)
{
	uint64_t borrow = 0;

	for (int i = 0; i < BIGINT_LIMBS; i++) {
		uint64_t x = a->w[i], y = b->w[i];
		uint64_t d = x - y - borrow;

		borrow = (x < y) || (x == y && borrow) ? 1 : 0;
		r->w[i] = d;
	}
	return borrow != 0;
}

bool
bigint_mul(struct bigint *r, const struct bigint *a, const struct bigint *b)
{
	uint64_t t[2 * BIGINT_LIMBS] = { 0 };
	bool over = false;

	for (int i = 0; i < BIGINT_LIMBS; i++) {
		uint64_t carry = 0;

		if (a->w[i] == 0)
			continue;
		for (int j = 0; j < BIGINT_LIMBS; j++) {
			u128 p = (u128)a->w[i] * b->w[j] + t[i + j] + carry;

			t[i + j] = (uint64_t)p;
			carry = (uint64_t)(p >> 64);
		}
		t[i + BIGINT_LIMBS] = carry;
	}
	for (int i = BIGINT_LIMBS; i < 2 * BIGINT_LIMBS; i++)
		over |= t[i] != 0;
	memcpy(r->w, t, sizeof(r->w));
	return over;
}

void
bigint_dec(struct bigint *a)
{
	for (int i = 0; i < BIGINT_LIMBS; i++) {
		if (a->w[i]-- != 0)
			return;
	}
}

void
bigint_divmod(struct bigint *q, struct bigint *rem, const struct bigint *a, const struct bigint *d)
{
	memset(q, 0, sizeof(*q));
	memset(rem, 0, sizeof(*rem));
	for (int bit = 64 * BIGINT_LIMBS - 1; bit >= 0; bit--) {
		/* rem = 2 rem + (bit of a); the bit shifted out of the top is
		 * kept, since rem < d < 2^512 allows 2 rem to reach 2^513 */
		uint64_t out = rem->w[BIGINT_LIMBS - 1] >> 63;

		for (int i = BIGINT_LIMBS - 1; i > 0; i--)
			rem->w[i] = rem->w[i] << 1 | rem->w[i - 1] >> 63;
		rem->w[0] = rem->w[0] << 1 | (a->w[bit / 64] >> (bit % 64) & 1);
		if (out || bigint_cmp(rem, d) >= 0) {
			/* the true difference is below d, so the subtraction
			 * modulo 2^512 gives it exactly */
			bigint_sub(rem, rem, d);
			q->w[bit / 64] |= (uint64_t)1 << (bit % 64);
		}
	}
}

bool
bigint_get128(const struct bigint *a, uint64_t *hi, uint64_t *lo)
{
	for (int i = 2; i < BIGINT_LIMBS; i++) {
		if (a->w[i] != 0)
			return false;
	}
	*hi = a->w[1];
	*lo = a->w[0];
	return true;
}
