/*
 * decimal.c - the number rules declared in decimal.h.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decimal.h"

/* At most this many bytes of a cell are quoted back, and at most
 * QUOTE_CHARS characters once escaped: a 160-byte message must keep its
 * closing quote even for the longest line number. */
#define QUOTE_BYTES 32
#define QUOTE_CHARS 64

_Static_assert(DECIMAL_QUOTE_SIZE >= QUOTE_CHARS + 4, "room for \"...\" and the NUL");

static bool
is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

/* True for a NUL-terminated s (after an optional sign) that strtod would
 * read as a NaN or an infinity. */
static bool
is_nonfinite_word(const char *s)
{
	size_t n;

	if (strcasecmp(s, "inf") == 0 || strcasecmp(s, "infinity") == 0 ||
	    strcasecmp(s, "nan") == 0)
		return true;
	n = strlen(s);
	return n >= 5 && strncasecmp(s, "nan(", 4) == 0 && s[n - 1] == ')';
}

enum decimal_status
decimal_parse(char *s, char *end, double *ret)
{
	const char *d;
	char *stop;
	double v;

	if (s == end)
		return DECIMAL_EMPTY;
	*end = '\0';

	/* strtod would also skip leading white space and read hex, NaN and
	 * Inf: only a digit or a point may follow the sign. */
	d = s;
	if (*d == '+' || *d == '-')
		d++;
	if (!is_digit(*d) && *d != '.')
		return is_nonfinite_word(d) ? DECIMAL_NOT_FINITE : DECIMAL_NOT_NUMBER;
	if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
		return DECIMAL_NOT_DECIMAL;

	errno = 0;
	v = strtod(s, &stop);
	if (stop != end) /* also catches a NUL byte inside the text */
		return DECIMAL_NOT_NUMBER;
	if (errno == ERANGE && isinf(v)) /* overflow to +-HUGE_VAL */
		return DECIMAL_RANGE;
	*ret = v; /* an underflow to zero or a subnormal is accepted */
	return DECIMAL_OK;
}

void
decimal_quote(char *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	size_t i;

	for (i = 0; i < n && i < QUOTE_BYTES; i++) {
		unsigned char c = (unsigned char)s[i];
		bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
		size_t need = plain ? 1 : (c == '"' || c == '\\') ? 2 : 4;

		if (o + need > QUOTE_CHARS)
			break;
		if (plain) {
			out[o++] = (char)c;
		} else if (need == 2) {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 0xf];
		}
	}
	if (i < n) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

const char *
decimal_status_text(enum decimal_status st)
{
	switch (st) { /* no default: -Wswitch flags a new status left out */
	case DECIMAL_OK:
		return "a number";
	case DECIMAL_RANGE:
		return "out of range";
	case DECIMAL_EMPTY:
		return "empty";
	case DECIMAL_NOT_NUMBER:
		return "not a number";
	case DECIMAL_NOT_FINITE:
		return "not a finite number";
	case DECIMAL_NOT_DECIMAL:
		return "not a decimal number";
	}
	return "not a number";
}
