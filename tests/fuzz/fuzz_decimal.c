/*
 * fuzz_decimal.c - libFuzzer target for common/decimal.c's number parser.
 *
 * Input: the text of one cell (at most 400 bytes).  decimal_parse must give
 * the status and, for an accepted cell, the value bit for bit that the
 * rules with strtod alone give (the oracle below: decimal.c before its
 * Eisel-Lemire fast path); decimal_parse_fast may only accept what the
 * oracle accepts, with the same bits.  Any disagreement aborts.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decimal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TEXT 400

static enum decimal_status
oracle(const char *s, size_t n, double *ret)
{
	const char *d = s;
	char *stop;
	double v;

	if (n == 0)
		return DECIMAL_EMPTY;
	if (*d == '+' || *d == '-')
		d++;
	if (!((unsigned char)(*d - '0') < 10) && *d != '.') {
		size_t k = strlen(d);

		if (strcasecmp(d, "inf") == 0 || strcasecmp(d, "infinity") == 0 ||
		    strcasecmp(d, "nan") == 0 ||
		    (k >= 5 && strncasecmp(d, "nan(", 4) == 0 && d[k - 1] == ')'))
			return DECIMAL_NOT_FINITE;
		return DECIMAL_NOT_NUMBER;
	}
	if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
		return DECIMAL_NOT_DECIMAL;
	errno = 0;
	v = strtod(s, &stop);
	if (stop != s + n)
		return DECIMAL_NOT_NUMBER;
	if (errno == ERANGE && isinf(v))
		return DECIMAL_RANGE;
	*ret = v;
	return DECIMAL_OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char ref[MAX_TEXT + 1], buf[MAX_TEXT + 1];
	double want = 0.0, got = 0.0, fast = 0.0;
	enum decimal_status ws, gs;

	if (size > MAX_TEXT)
		return 0;
	memcpy(ref, data, size);
	ref[size] = '\0';
	memcpy(buf, data, size);
	ws = oracle(ref, size, &want);
	gs = decimal_parse(buf, buf + size, &got);
	if (gs != ws)
		abort();
	if (ws == DECIMAL_OK && memcmp(&got, &want, sizeof(got)) != 0)
		abort();
	memcpy(buf, data, size);
	if (decimal_parse_fast(buf, buf + size, &fast) &&
	    (ws != DECIMAL_OK || memcmp(&fast, &want, sizeof(fast)) != 0))
		abort();
	return 0;
}
