/*
 * test_decimal.c - the number parser (common/decimal.c) against strtod:
 * every input gets the status and, when accepted, the value bit for bit
 * that the strtod-only rules give (the oracle below, decimal.c's code
 * before the Eisel-Lemire fast path).  Edge cases (subnormals, the
 * extremes, exact halfway cases and their neighbours, 19 and 20 digit
 * mantissas, malformed spellings, nan/inf) and a few million random
 * spellings; and the fast path must actually take the common shapes.
 * decimal_scan_fast (the parsers' in-place reader, eight digits at a
 * time) on every one of those inputs followed by a separator and more
 * digits, and on digit runs of every length across its word boundaries.
 */
#include <check.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decimal.h"

/* decimal_parse as it was with strtod alone: the oracle. */
static enum decimal_status
oracle(const char *text, double *ret)
{
	char buf[512];
	const char *d;
	char *stop;
	size_t n = strlen(text);
	double v;

	ck_assert_uint_lt(n, sizeof(buf));
	memcpy(buf, text, n + 1);
	if (n == 0)
		return DECIMAL_EMPTY;
	d = buf;
	if (*d == '+' || *d == '-')
		d++;
	if (!((unsigned char)(*d - '0') < 10) && *d != '.') {
		if (strcasecmp(d, "inf") == 0 || strcasecmp(d, "infinity") == 0 ||
		    strcasecmp(d, "nan") == 0 ||
		    (strlen(d) >= 5 && strncasecmp(d, "nan(", 4) == 0 && d[strlen(d) - 1] == ')'))
			return DECIMAL_NOT_FINITE;
		return DECIMAL_NOT_NUMBER;
	}
	if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
		return DECIMAL_NOT_DECIMAL;
	errno = 0;
	v = strtod(buf, &stop);
	if (*stop != '\0')
		return DECIMAL_NOT_NUMBER;
	if (errno == ERANGE && isinf(v))
		return DECIMAL_RANGE;
	*ret = v;
	return DECIMAL_OK;
}

static uint64_t
bits_of(double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	return u;
}

static double
of_bits(uint64_t u)
{
	double v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

static unsigned long fast_taken; /* inputs decimal_parse_fast answered */

/* decimal_scan_fast on text followed by a separator and more digits (so
 * that eight-byte words straddle the token's end): it must stop exactly
 * at the separator with the bits decimal_parse_fast gives the token
 * (accepted: fast_ok, fast) or give up; on a prefix it stops short of, the
 * prefix is a number of its own and the value is that prefix's. */
static void
check_scan(const char *text, bool fast_ok, double fast)
{
	static const char seps[] = { ' ', '\t', ':', '#', '\r', ',' };
	char buf[600];
	size_t n = strlen(text);

	ck_assert_uint_lt(n + 20, sizeof(buf));
	for (size_t k = 0; k < sizeof(seps); k++) {
		double v = 0.0, pv = 0.0;
		const char *q;

		memcpy(buf, text, n);
		buf[n] = seps[k];
		memcpy(buf + n + 1, "1234567890123456", 16);
		/* the end anywhere from the token's own end to well past it */
		q = decimal_scan_fast(buf, buf + n + 1 + (k * 3) % 17, &v);
		if (fast_ok) {
			ck_assert_msg(q == buf + n, "'%s' + '%c': scan stops at %td", text, seps[k],
				      q != NULL ? q - buf : (ptrdiff_t)-1);
			ck_assert_msg(bits_of(v) == bits_of(fast), "'%s': scan %a, fast %a", text,
				      v, fast);
		} else if (q != NULL) {
			ck_assert_msg(q < buf + n, "'%s': scan accepts what the fast path refuses",
				      text);
			ck_assert_msg(decimal_parse_fast(buf, q, &pv) && bits_of(pv) == bits_of(v),
				      "'%s': scan's prefix of %td bytes disagrees", text, q - buf);
		}
	}
}

/* decimal_parse and decimal_parse_fast agree with the oracle on text. */
static void
check_one(const char *text)
{
	char buf[512];
	size_t n = strlen(text);
	double want = 0.0, got = 0.0, fast = 0.0;
	enum decimal_status ws, gs;

	ck_assert_uint_lt(n, sizeof(buf) - 1);
	memcpy(buf, text, n + 1);
	buf[n + 1] = 'X'; /* decimal_parse writes the NUL at end itself */
	ws = oracle(text, &want);
	gs = decimal_parse(buf, buf + n, &got);
	ck_assert_msg(gs == ws, "'%s': status %d, strtod's rules say %d", text, gs, ws);
	if (ws == DECIMAL_OK)
		ck_assert_msg(bits_of(got) == bits_of(want), "'%s': %a, strtod says %a", text, got,
			      want);
	memcpy(buf, text, n + 1);
	if (decimal_parse_fast(buf, buf + n, &fast)) {
		fast_taken++;
		ck_assert_msg(ws == DECIMAL_OK, "'%s': the fast path accepts what strtod refuses",
			      text);
		ck_assert_msg(bits_of(fast) == bits_of(want), "'%s': fast %a, strtod says %a", text,
			      fast, want);
	}
	check_scan(text, decimal_parse_fast(buf, buf + n, &fast), fast);
}

static uint64_t rng_state = 0x5eed17;

static uint64_t
next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

START_TEST(test_edge_cases)
{
	static const char *const cases[] = {
		"0",
		"-0",
		"+0",
		"0.0",
		"-0.0",
		".0",
		"0.",
		"-.0",
		"00",
		"000.000e5",
		"0e999999",
		"-0e-999999",
		"1",
		"-1",
		"+1",
		"1.",
		".5",
		"-.5",
		"1e0",
		"1E0",
		"1e+0",
		"1e-0",
		"1.5e3",
		"1.5E-3",
		"123456789",
		"0.1",
		"0.2",
		"0.3",
		"2.5",
		"3.5",
		"1e22",
		"1e23",
		"9007199254740992",
		"9007199254740993",
		"9007199254740994",
		"9007199254740995",
		"9007199254740993.0000",
		"900719925474099.3e1",
		"18014398509481985",
		"18014398509481986",
		"4503599627370496.5",
		"4503599627370497.5",
		"9999999999999999999",
		"99999999999999999999",
		"1234567890123456789",
		"12345678901234567890",
		"12345678901234567891e-5",
		"0.000000000000000000001",
		"00000000000000000000000000001",
		"1.0000000000000000000000000000001",
		"179769313486231570000000000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000000000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000000000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000000000000000000000000000000000000000000000000000000000000",
		"1.7976931348623157e308",
		"1.7976931348623158e308",
		"1.7976931348623159e308",
		"-1.7976931348623157e308",
		"1.8e308",
		"1e309",
		"-1e309",
		"1e400",
		"1e99999999999",
		"2.2250738585072014e-308",
		"2.2250738585072011e-308",
		"2.2250738585072012e-308",
		"2.225073858507201e-308",
		"4.9406564584124654e-324",
		"5e-324",
		"2.4703282292062327e-324",
		"2.4703282292062328e-324",
		"3e-324",
		"1e-324",
		"1e-400",
		"-1e-400",
		"1e-99999999999",
		"7.2057594037927933e16",
		"1.00000000000000011102230246251565404236316680908203125",
		"1.00000000000000011102230246251565404236316680908203124",
		"1.00000000000000011102230246251565404236316680908203126",
		"0.1e-350",
		"10e-350",
		"1e-342",
		"1e-343",
		"1e-348",
		"1e-349",
		"1e308",
		"1e347",
		"1e-307",
		"1e-308",
		/* refused, each for strtod's reason */
		"",
		"+",
		"-",
		".",
		"+.",
		"-.",
		"e5",
		".e5",
		"1e",
		"1e+",
		"1e-",
		"1E",
		"1.2.3",
		"1e5x",
		"1x",
		"--1",
		"+-1",
		"1-",
		"1 ",
		" 1",
		"1,5",
		"0x10",
		"0X1p3",
		"-0x1",
		"0x",
		"inf",
		"-inf",
		"+Inf",
		"INFINITY",
		"infinity",
		"nan",
		"-NaN",
		"nan(123)",
		"nan(",
		"infx",
		"1e1e1",
		"1..",
		"..1",
		"1_000",
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_one(cases[i]);
}
END_TEST

/* A NUL inside the text: refused, and never read past. */
START_TEST(test_embedded_nul)
{
	static const char twelve[] = "12";
	char buf[8] = { '1', '\0', '2', 'X' };
	double v;

	ck_assert_int_eq(decimal_parse(buf, buf + 3, &v), DECIMAL_NOT_NUMBER);
	/* end before the '2': only "1" is read */
	ck_assert(decimal_parse_fast(twelve, &twelve[1], &v) && v == 1.0);
}
END_TEST

/* v in spelling f (0..7) of test_random_doubles. */
static void
spell(char *text, size_t size, unsigned f, double v)
{
	switch (f) { /* literal formats: -Wformat-nonliteral */
	case 0:
		snprintf(text, size, "%.17g", v);
		break;
	case 1:
		snprintf(text, size, "%.16g", v);
		break;
	case 2:
		snprintf(text, size, "%.15g", v);
		break;
	case 3:
		snprintf(text, size, "%.6g", v);
		break;
	case 4:
		snprintf(text, size, "%.7g", v);
		break;
	case 5: /* long fixed spellings of huge values cost strtod much time */
		if (fabs(v) < 1e30)
			snprintf(text, size, "%.9f", v);
		else
			snprintf(text, size, "%.9e", v);
		break;
	case 6:
		snprintf(text, size, "%.3e", v);
		break;
	default:
		snprintf(text, size, "%.18e", v);
		break;
	}
}

/* Every double printed at 17, 16 and 15 significant digits (random bit
 * patterns across all exponents: normal and subnormal), and printed the
 * way data files usually are (%g, %f): the common shapes take the fast
 * path. */
START_TEST(test_random_doubles)
{
	char text[400];
	unsigned long n = 0;

	fast_taken = 0;
	for (int i = 0; i < 20000; i++) {
		uint64_t u = next();
		double v = of_bits(u);

		if (!isfinite(v))
			continue;
		for (unsigned f = 0; f < 8; f++) {
			spell(text, sizeof(text), f, v);
			check_one(text);
			n++;
		}
	}
	/* Uniform bits put ~half the values out of 1e+-22 and a few beyond
	 * the table; 17-digit spellings all fit 19 digits. */
	ck_assert_msg(fast_taken > n * 9 / 10, "fast path took %lu of %lu", fast_taken, n);
	fast_taken = 0;
	n = 0;
	for (int i = 0; i < 25000; i++) {
		double v = ((double)(next() >> 11) / 9007199254740992.0 * 2.0 - 1.0) *
			   pow(10.0, (double)(int)(next() % 13) - 6);

		spell(text, sizeof(text), (unsigned)(next() % 5), v);
		check_one(text);
		n++;
	}
	ck_assert_msg(fast_taken == n, "fast path took %lu of %lu ordinary cells", fast_taken, n);
}
END_TEST

/* Random decimal spellings: 1 to 22 digits, a point anywhere, leading
 * zeros, an exponent over the whole range and beyond. */
START_TEST(test_random_spellings)
{
	char text[128];

	for (int i = 0; i < 30000; i++) {
		uint64_t r = next();
		int nd = 1 + (int)(r % 22), point = (int)((r >> 8) % (uint64_t)(nd + 2)) - 1;
		int lead = (r >> 16) % 4 == 0 ? (int)((r >> 18) % 4) : 0;
		size_t k = 0;

		if ((r >> 20) & 1)
			text[k++] = (r >> 21) & 1 ? '-' : '+';
		for (int z = 0; z < lead; z++)
			text[k++] = '0';
		for (int j = 0; j < nd; j++) {
			if (j == point)
				text[k++] = '.';
			/* runs of 9s and 0s make carries and ties likelier */
			uint64_t c = next();
			text[k++] = (char)('0' + ((c & 3) == 0 ? 9 : (c & 3) == 1 ? 0 : c % 10));
		}
		if (point == nd)
			text[k++] = '.';
		if ((r >> 24) % 3 != 0) {
			int ex = (int)((r >> 28) % 760) - 380;

			k += (size_t)snprintf(text + k, sizeof(text) - k,
					      (r >> 40) & 1 ? "e%d" : "E%+d", ex);
		} else {
			text[k] = '\0';
		}
		check_one(text);
	}
}
END_TEST

/* Exact halfway points between neighbouring doubles, where ties go to
 * the even one, and the decimals one unit either side: m * 2^k for odd
 * 54-bit m (a tie at the 53-bit precision), as integers and as scaled
 * decimals; and the midpoints of small doubles written out exactly. */
START_TEST(test_halfway)
{
	char text[128];

	for (int i = 0; i < 12000; i++) {
		uint64_t m = (next() >> 10) | (1ULL << 53) | 1; /* 54 bits, odd */
		int k = (int)(next() % 11);
		__extension__ unsigned __int128 v = (unsigned __int128)m << k;
		char digits[64];
		size_t nd = 0;

		while (v > 0) {
			digits[nd++] = (char)('0' + (int)(v % 10));
			v /= 10;
		}
		for (size_t j = 0; j < nd; j++)
			text[j] = digits[nd - 1 - j];
		text[nd] = '\0';
		check_one(text);
		/* the same value with a point and an exponent */
		snprintf(text + nd, sizeof(text) - nd, "e0");
		check_one(text);
		memmove(text + 2, text + 1, nd + 1);
		text[1] = '.';
		snprintf(text + nd + 1, sizeof(text) - nd - 1, "e%zu", nd - 1);
		check_one(text);
		/* one unit either side in the last digit */
		text[nd] = text[nd] == '9' ? '8' : (char)(text[nd] + 1);
		check_one(text);
	}
	/* halfway between 1 and the next double above it, and around 2^-1022 */
	check_one("1.00000000000000011102230246251565404236316680908203125");
	check_one("2.2250738585072013830902327173324040642192159804623318306e-308");
}
END_TEST

/* Digit runs of every length from 1 to 24 (over the 19 a mantissa
 * holds), after 0 to 3 leading zeros and a point at every place, with the
 * end bound at every distance 0..9 past the run: the eight-at-a-time
 * reader against strtod at each word boundary. */
START_TEST(test_digit_runs)
{
	char text[64];

	for (int nd = 1; nd <= 24; nd++)
		for (int lead = 0; lead < 4; lead++)
			for (int point = -1; point <= nd; point++) {
				size_t k = 0;

				for (int z = 0; z < lead; z++)
					text[k++] = '0';
				for (int j = 0; j < nd; j++) {
					if (j == point)
						text[k++] = '.';
					text[k++] = (char)('1' + (j * 7 + nd) % 9);
				}
				if (point == nd)
					text[k++] = '.';
				text[k] = '\0';
				check_one(text);
				snprintf(text + k, sizeof(text) - k, "e-7");
				check_one(text);
			}
}
END_TEST

/* decimal_uint8: 1 to 7 digits before the stop byte in one step, with
 * eight bytes before the end; every other shape answers 0. */
START_TEST(test_uint8)
{
	char buf[32];
	uint64_t v;

	for (int n = 0; n <= 9; n++) {
		uint64_t want = 0;

		for (int j = 0; j < n; j++) {
			buf[j] = (char)('0' + (j * 3 + n) % 10);
			want = want * 10 + (uint64_t)((j * 3 + n) % 10);
		}
		memcpy(buf + n, ":0.5 7:1 9:2 ", 13);
		v = 12345;
		if (n >= 1 && n <= 7) {
			ck_assert_int_eq(decimal_uint8(buf, buf + n + 13, ':', &v), n);
			ck_assert_uint_eq(v, want);
			/* another stop byte, or fewer than eight bytes left */
			ck_assert_int_eq(decimal_uint8(buf, buf + n + 13, ' ', &v), 0);
			ck_assert_int_eq(decimal_uint8(buf, buf + 7, ':', &v), 0);
		} else {
			ck_assert_int_eq(decimal_uint8(buf, buf + n + 13, ':', &v), 0);
			ck_assert_uint_eq(v, 12345);
		}
	}
	{
		/* named, not "..." + n: clang's -Wstring-plus-int */
		const char *zeros = "0000000:12345678", *letter = "12a4:5678",
			   *minus = "-1234:5678";

		ck_assert_int_eq(decimal_uint8(zeros, zeros + strlen(zeros), ':', &v), 7);
		ck_assert_uint_eq(v, 0);
		ck_assert_int_eq(decimal_uint8(letter, letter + strlen(letter), ':', &v), 0);
		ck_assert_int_eq(decimal_uint8(minus, minus + strlen(minus), ':', &v), 0);
	}
}
END_TEST

static Suite *
decimal_suite(void)
{
	Suite *s = suite_create("decimal");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60); /* >= 10x the program's CPU (tests/README.md) */
	tcase_add_test(tc, test_edge_cases);
	tcase_add_test(tc, test_embedded_nul);
	tcase_add_test(tc, test_random_doubles);
	tcase_add_test(tc, test_random_spellings);
	tcase_add_test(tc, test_halfway);
	tcase_add_test(tc, test_digit_runs);
	tcase_add_test(tc, test_uint8);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(decimal_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
