/*
 * decimal.h - the one definition of "a number" in text uploads, shared by
 * the CSV and LIBSVM parsers so both accept and refuse the same cells.
 *
 * A number is what strtod() reads from the whole text, except that only a
 * sign, a digit or a point may start it: hexadecimal floats, NaN and
 * Inf (any case), leading white space and trailing junk are refused, and
 * a magnitude that overflows a double is refused.  An underflow to zero
 * or to a subnormal is accepted.  Never allocates.
 */
#ifndef COMMON_DECIMAL_H
#define COMMON_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum decimal_status {
	DECIMAL_OK,
	DECIMAL_RANGE,       /* a decimal number whose magnitude overflows a double */
	DECIMAL_EMPTY,       /* no bytes at all */
	DECIMAL_NOT_NUMBER,  /* anything else that strtod does not consume entirely */
	DECIMAL_NOT_FINITE,  /* nan, inf, infinity in any case */
	DECIMAL_NOT_DECIMAL, /* a hexadecimal float or integer */
};

/* Bytes decimal_quote() writes at most, its NUL included. */
#define DECIMAL_QUOTE_SIZE 68

/* Convert s[0..end) (no trimming here).  Writes a NUL at *end, which must
 * be writable.  *ret is set only for DECIMAL_OK. */
enum decimal_status decimal_parse(char *s, char *end, double *ret);

/* The fast path of decimal_parse, exposed for its tests: true, with *ret
 * set, when s[0..end) is [+-]digits[.digits][(e|E)[+-]digits] (either
 * digit run may be empty, not both) with at most 19 significant digits
 * and a normal, finite, unambiguously rounded value.  Then *ret is
 * bit for bit what strtod returns (correctly rounded, ties to even).
 * False means "ask strtod", not "not a number".  Reads no byte at or
 * past end. */
bool decimal_parse_fast(const char *s, const char *end, double *ret);

/* The same number rule on the longest prefix of s[0..end) that has its
 * form: the end of that prefix, with *ret set, or NULL ("ask strtod",
 * *ret unspecified).  The caller checks that the prefix is the whole
 * token (what follows is a separator).  Eight digits at a time where
 * eight bytes remain before end; reads no byte at or past end. */
const char *decimal_scan_fast(const char *s, const char *end, double *ret);

/* The 1 to 7 digits at s read as an unsigned integer in one step, when
 * the byte after them is stop and eight bytes remain before end: their
 * count, with *ret set.  0 otherwise (the caller reads byte by byte).
 * Reads no byte at or past end. */
int decimal_uint8(const char *s, const char *end, char stop, uint64_t *ret);

/* A short, printable form of s[0..n) for an error message, into out
 * (DECIMAL_QUOTE_SIZE bytes): at most 32 input bytes, quotes and
 * backslashes escaped, other non-printable bytes as \xNN, "..." if cut. */
void decimal_quote(char *out, const char *s, size_t n);

/* A short lower-case phrase for a status other than DECIMAL_OK, to
 * follow "<what> is", e.g. "not a finite number", "out of range". */
const char *decimal_status_text(enum decimal_status st);

#endif /* COMMON_DECIMAL_H */
