/*
 * fuzz_split.h - shared by the libFuzzer targets: take a few leading bytes
 * of the input as settings, and cut the rest into chunks at points drawn
 * from a seed that is also part of the input, so the fuzzer explores
 * chunk boundaries as well as contents.
 */
#ifndef FUZZ_SPLIT_H
#define FUZZ_SPLIT_H

#include <stddef.h>
#include <stdint.h>

/* A small deterministic generator (splitmix64). */
static inline uint64_t
fuzz_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The next chunk length for `left` bytes: mostly short (1..16), sometimes
 * long, sometimes zero (an empty feed is legal and must be harmless). */
static inline size_t
fuzz_chunk(uint64_t *s, size_t left)
{
	uint64_t r = fuzz_next(s);
	size_t n;

	switch (r & 7) {
	case 0:
		n = 0;
		break;
	case 1:
		n = left;
		break;
	case 2:
		n = (size_t)(r >> 8) % 257;
		break;
	default:
		n = 1 + (size_t)(r >> 8) % 16;
		break;
	}
	return n < left ? n : left;
}

/* FNV-1a over n bytes, folded into *h: a digest of the rows delivered. */
static inline void
fuzz_hash(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		*h ^= b[i];
		*h *= 0x100000001b3ull;
	}
}

#endif /* FUZZ_SPLIT_H */
