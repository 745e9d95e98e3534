/*
 * decimal.c - the number rules declared in decimal.h.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decimal.h"
#include "decimal_pow10_table.h"

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

/* The high and low 64 bits of a * b. */
static void
mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
#if defined(__SIZEOF_INT128__)
	__extension__ unsigned __int128 p = (unsigned __int128)a * b;

	*hi = (uint64_t)(p >> 64);
	*lo = (uint64_t)p;
#else
	uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;

	*hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
	*lo = (mid << 32) | (uint32_t)p00;
#endif
}

/*
 * The double nearest man * 10^exp10 (man != 0), rounded to nearest even,
 * by the Eisel-Lemire algorithm: one or two 64x128-bit products with a
 * truncated power of ten give the 54 leading bits of the product, and the
 * bits below them show whether the truncation could have changed the
 * rounding.  Returns false whenever it could, and for a result that
 * would be subnormal, infinite, or outside the table: the caller then
 * asks strtod.  Pure integer arithmetic, so the FPU rounding mode does not
 * matter.  After D. Lemire, "Number parsing at a gigabyte per second",
 * Softw. Pract. Exp. 51(8), 2021, in N. Tao's formulation (the checks
 * below, each a "give up", are his).
 */
static bool
eisel_lemire(uint64_t man, int64_t exp10, bool neg, double *ret)
{
	const uint64_t *pw;
	uint64_t x_hi, x_lo, y_hi, y_lo, mant, bits;
	int64_t exp2;
	int clz, msb;

	if (exp10 < POW10_MIN_EXP10 || exp10 > POW10_MAX_EXP10)
		return false;
	pw = pow10_table[exp10 - POW10_MIN_EXP10];
	clz = __builtin_clzll(man);
	man <<= clz;
	/* floor(exp10 * log2(10)) for |exp10| <= 348, plus the bias. */
	exp2 = ((217706 * exp10) >> 16) + 64 + 1023 - clz;

	mul_64x64(man, pw[1], &x_hi, &x_lo);
	/* The low bits are all ones: the truncated low half of the power may
	 * carry into them.  Take it into account. */
	if ((x_hi & 0x1FF) == 0x1FF && x_lo + man < man) {
		uint64_t m_hi, m_lo;

		mul_64x64(man, pw[0], &y_hi, &y_lo);
		m_hi = x_hi;
		m_lo = x_lo + y_hi;
		if (m_lo < x_lo)
			m_hi++;
		if ((m_hi & 0x1FF) == 0x1FF && m_lo + 1 == 0 && y_lo + man < man)
			return false;
		x_hi = m_hi;
		x_lo = m_lo;
	}
	msb = (int)(x_hi >> 63);
	mant = x_hi >> (msb + 9);
	exp2 -= 1 ^ msb;
	/* Exactly half way between two doubles, as far as these bits tell. */
	if (x_lo == 0 && (x_hi & 0x1FF) == 0 && (mant & 3) == 1)
		return false;
	mant += mant & 1;
	mant >>= 1;
	if (mant >> 53 > 0) {
		mant >>= 1;
		exp2++;
	}
	if (exp2 <= 0 || exp2 >= 0x7FF) /* subnormal, zero or infinite */
		return false;
	bits = (uint64_t)exp2 << 52 | (mant & 0x000FFFFFFFFFFFFFULL);
	if (neg)
		bits |= 0x8000000000000000ULL;
	memcpy(ret, &bits, sizeof(*ret));
	return true;
}

/*
 * Clinger's fast path: a mantissa below 2^53 and a power of ten up to
 * 10^22 are both exact doubles, so one IEEE multiplication or division
 * rounds their product or quotient correctly (ties to even).  Needs
 * double arithmetic evaluated in double (FLT_EVAL_METHOD 0: SSE2 on
 * x86-64, every AArch64) and the default rounding mode, which nothing in
 * this program changes.  W. D. Clinger, "How to read floating point
 * numbers accurately", PLDI 1990.
 */
static bool
clinger(uint64_t man, int64_t exp10, bool neg, double *ret)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	static const double exact[23] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
					  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
					  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	double v;

	if (man > (1ULL << 53) || exp10 < -22 || exp10 > 22)
		return false;
	v = (double)man; /* exact */
	v = exp10 < 0 ? v / exact[-exp10] : v * exact[exp10];
	*ret = neg ? -v : v;
	return true;
#else
	(void)man, (void)exp10, (void)neg, (void)ret;
	return false;
#endif
}

/*
 * Eight digits at a time (SWAR): the bytes at p as a little-endian word,
 * how many of them lead as digits, and their value.  From D. Lemire's
 * and simdjson's "parse eight digits" (three multiplications).
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define DECIMAL_SWAR 1

static uint64_t
load8(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The number of leading digit bytes (0..8) of the word v. */
static int
digit_run(uint64_t v)
{
	uint64_t a = v ^ 0x3030303030303030ULL; /* a digit byte becomes 0..9 */
	/* A byte is not a digit when its high nibble is set or adding 6 to it
	 * reaches 0x10.  Carries only run upwards, from the first non-digit
	 * byte on, so the lowest flagged byte is exact. */
	uint64_t bad =
		(a & 0xF0F0F0F0F0F0F0F0ULL) | ((a + 0x0606060606060606ULL) & 0x1010101010101010ULL);

	return bad == 0 ? 8 : __builtin_ctzll(bad) / 8;
}

/* The value of the n (1..8) leading digits of the word v. */
static uint64_t
digits_value(uint64_t v, int n)
{
	v = (v ^ 0x3030303030303030ULL) << (8 * (8 - n)); /* leading zeros in front */
	v = (v * 10) + (v >> 8);
	v = (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
	     (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
	    32;
	return (uint32_t)v;
}

/* 10^k for k in 0..8, exact. */
static const uint64_t pow10_u64[9] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000
};
#endif

/*
 * Read the digit run at p (before end) into man: nd counts the
 * significant digits (leading zeros are skipped by the caller), frac
 * digits also lower exp10.  The end of the run, or NULL past 19
 * significant digits (more than man holds: strtod's job).  A macro, not a
 * function, so that man, nd and exp10 stay in registers.  DIGIT_TAIL
 * reads the digits one at a time: the SWAR run's tail, or the whole run.
 */
#define DIGIT_TAIL(p, end, man, nd, exp10, frac, any)                                              \
	do {                                                                                       \
		for (; (p) < (end) && is_digit(*(p)); (p)++, (nd)++, (any) = true) {               \
			if ((nd) >= 19)                                                            \
				return NULL;                                                       \
			(man) = (man)*10 + (uint64_t)(*(p) - '0');                                 \
			if (frac)                                                                  \
				(exp10)--;                                                         \
		}                                                                                  \
	} while (0)

#ifdef DECIMAL_SWAR
#define DIGIT_RUN(p, end, man, nd, exp10, frac, any)                                               \
	do {                                                                                       \
		while ((end) - (p) >= 8) {                                                         \
			uint64_t w_ = load8(p);                                                    \
			int n_ = digit_run(w_);                                                    \
                                                                                                   \
			if (n_ == 0)                                                               \
				break;                                                             \
			if ((nd) + n_ > 19)                                                        \
				return NULL;                                                       \
			(man) = (man)*pow10_u64[n_] + digits_value(w_, n_);                        \
			(nd) += n_;                                                                \
			if (frac)                                                                  \
				(exp10) -= n_;                                                     \
			(any) = true;                                                              \
			(p) += n_;                                                                 \
			if (n_ < 8)                                                                \
				break;                                                             \
		}                                                                                  \
		DIGIT_TAIL(p, end, man, nd, exp10, frac, any);                                     \
	} while (0)
#else
#define DIGIT_RUN DIGIT_TAIL
#endif

const char *
decimal_scan_fast(const char *s, const char *end, double *ret)
{
	const char *p = s;
	uint64_t man = 0;
	int64_t exp10 = 0;
	int nd = 0; /* significant digits in man */
	bool neg = false, any = false;

	if (p < end) { /* no branch on the sign: random signs would mispredict */
		neg = *p == '-';
		p += neg | (*p == '+');
	}
	while (p < end && *p == '0') {
		p++;
		any = true;
	}
	DIGIT_RUN(p, end, man, nd, exp10, false, any);
	if (p < end && *p == '.') {
		p++;
#ifdef DECIMAL_SWAR
		/* The common cell, "0.0123456": a fraction of 1 to 7 digits in
		 * one word, its leading zeros read as digits (they add nothing to
		 * man; nd then overstates the significant digits, harmlessly
		 * below 19).  No loop over the zeros, whose count varies from
		 * cell to cell and would mispredict. */
		if (nd == 0 && end - p >= 8) {
			uint64_t w = load8(p);
			int n = digit_run(w);

			if (n > 0 && n < 8) {
				man = digits_value(w, n);
				nd = n;
				exp10 -= n;
				p += n;
				any = true;
				goto exponent;
			}
		}
#endif
		if (nd == 0)
			for (; p < end && *p == '0'; p++, exp10--)
				any = true;
		DIGIT_RUN(p, end, man, nd, exp10, true, any);
	}
#ifdef DECIMAL_SWAR
exponent:
#endif
	if (!any)
		return NULL;
	if (p < end && (*p == 'e' || *p == 'E')) {
		bool eneg = false;
		int64_t ev = 0;

		p++;
		if (p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		if (p == end || !is_digit(*p))
			return NULL;
		for (; p < end && is_digit(*p); p++)
			if (ev < 100000) /* far beyond any double; no overflow */
				ev = ev * 10 + (*p - '0');
		exp10 += eneg ? -ev : ev;
	}
	if (man == 0) {
		*ret = neg ? -0.0 : 0.0;
		return p;
	}
	if (clinger(man, exp10, neg, ret) || eisel_lemire(man, exp10, neg, ret))
		return p;
	return NULL;
}

int
decimal_uint8(const char *s, const char *end, char stop, uint64_t *ret)
{
#ifdef DECIMAL_SWAR
	if (end - s >= 8) {
		uint64_t w = load8(s);
		int n = digit_run(w);

		if (n > 0 && n < 8 && s[n] == stop) {
			*ret = digits_value(w, n);
			return n;
		}
	}
#else
	(void)s, (void)end, (void)stop, (void)ret;
#endif
	return 0;
}

bool
decimal_parse_fast(const char *s, const char *end, double *ret)
{
	double v;

	/* *ret is set only on success, as before the scan existed. */
	if (decimal_scan_fast(s, end, &v) != end)
		return false;
	*ret = v;
	return true;
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
	/* The common case, correctly rounded without strtod; the rest (and
	 * anything malformed, to be classified below) falls through. */
	if (decimal_parse_fast(s, end, ret))
		return DECIMAL_OK;

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
