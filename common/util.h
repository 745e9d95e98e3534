/*
 * util.h - tiny helpers shared by every tree: array length, checked size
 * arithmetic.  Header-only, no state.
 */
#ifndef COMMON_UTIL_H
#define COMMON_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* *ret = a * b; false (and *ret untouched) on overflow. */
static inline bool
size_mul(size_t a, size_t b, size_t *ret)
{
	if (a != 0 && b > SIZE_MAX / a)
		return false;
	*ret = a * b;
	return true;
}

#endif /* COMMON_UTIL_H */
