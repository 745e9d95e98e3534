/*
 * test_csv.c - the streaming CSV parser: accepted shapes (header, BOM,
 * CRLF, quotes, blanks), every chunking of a body giving the same rows,
 * and every refusal naming its line and column, with the parser staying
 * failed afterwards and memory bounded by max_line_bytes.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

#define MAX_ROWS 16
#define MAX_COLS 8

struct result {
	enum err_code rc; /* first error, or that of finish */
	bool feed_failed; /* the error came from csv_parser_feed */
	struct err e;
	unsigned long err_line;
	unsigned long err_column;
	size_t calls;   /* on_row calls */
	size_t fail_at; /* on_row call that returns ERR_DB, 0 for none */
	size_t nrows;
	size_t ncols;
	unsigned long lines[MAX_ROWS];
	double vals[MAX_ROWS][MAX_COLS];
};

static enum err_code
collect(void *ctx, const double *cells, size_t ncols, unsigned long line, struct err *e)
{
	struct result *r = ctx;

	r->calls++;
	if (r->fail_at != 0 && r->calls == r->fail_at)
		return err_set(e, ERR_DB, "store failed at line %lu", line);
	ck_assert_uint_eq(ncols, r->ncols);
	ck_assert_uint_lt(r->nrows, MAX_ROWS);
	r->lines[r->nrows] = line;
	memcpy(r->vals[r->nrows], cells, ncols * sizeof(double));
	r->nrows++;
	return ERR_OK;
}

/* Parse body[0..len): a first chunk of `first` bytes, then chunks of
 * `step` bytes (0: all the rest at once), then finish. */
static void
parse_with(struct result *r, const char *body, size_t len, size_t ncols, size_t max_line,
	   size_t first, size_t step)
{
	struct csv_parser p;
	size_t off;

	memset(r, 0, sizeof(*r));
	r->ncols = ncols;
	ck_assert_int_eq(csv_parser_init(&p, ncols, max_line, collect, r, &r->e), ERR_OK);
	if (first > len)
		first = len;
	r->rc = csv_parser_feed(&p, body, first, &r->e);
	off = first;
	while (r->rc == ERR_OK && off < len) {
		size_t n = step == 0 || step > len - off ? len - off : step;

		r->rc = csv_parser_feed(&p, body + off, n, &r->e);
		off += n;
	}
	if (r->rc != ERR_OK)
		r->feed_failed = true;
	else
		r->rc = csv_parser_finish(&p, &r->e);
	r->err_line = p.err_line;
	r->err_column = p.err_column;
	ck_assert(p.len <= max_line + 1);
	csv_parser_clear(&p);
}

static void
parse_str(struct result *r, const char *body, size_t ncols)
{
	parse_with(r, body, strlen(body), ncols, 1024, strlen(body), 0);
}

#define ck_assert_msg_has(r, s)                                                                    \
	ck_assert_msg(strstr((r)->e.msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (r)->e.msg,  \
		      (s))

static void
assert_refused(const struct result *r, unsigned long line, unsigned long column)
{
	char want[64];

	ck_assert_int_eq(r->rc, ERR_INVALID);
	ck_assert_int_eq(r->e.code, ERR_INVALID);
	ck_assert_str_eq(r->e.field, "data");
	ck_assert_uint_eq(r->err_line, line);
	ck_assert_uint_eq(r->err_column, column);
	if (column != 0)
		snprintf(want, sizeof(want), "line %lu, column %lu: ", line, column);
	else
		snprintf(want, sizeof(want), "line %lu: ", line);
	ck_assert_msg_has(r, want);
	ck_assert_uint_lt(strlen(r->e.msg), sizeof(r->e.msg) - 1);
}

static void
assert_same_rows(const struct result *a, const struct result *b)
{
	ck_assert_int_eq(a->rc, b->rc);
	ck_assert_uint_eq(a->nrows, b->nrows);
	for (size_t i = 0; i < a->nrows; i++) {
		ck_assert_uint_eq(a->lines[i], b->lines[i]);
		for (size_t j = 0; j < a->ncols; j++)
			ck_assert_msg(a->vals[i][j] == b->vals[i][j], "row %zu col %zu", i, j);
	}
}

START_TEST(test_no_header)
{
	struct result r;

	parse_str(&r, "0.2385,-1.5212e-3,7\n-0.00041,1e-7,314159.26\n", 3);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_uint_eq(r.lines[0], 1);
	ck_assert_uint_eq(r.lines[1], 2);
	ck_assert_double_eq(r.vals[0][0], 0.2385);
	ck_assert_double_eq(r.vals[0][1], -1.5212e-3);
	ck_assert_double_eq(r.vals[0][2], 7.0);
	ck_assert_double_eq(r.vals[1][0], -0.00041);
	ck_assert_double_eq(r.vals[1][1], 1e-7);
	ck_assert_double_eq(r.vals[1][2], 314159.26);
	ck_assert_uint_eq(r.err_line, 0);
	ck_assert_uint_eq(r.err_column, 0);
}
END_TEST

START_TEST(test_header)
{
	struct result r;

	parse_str(&r, "alpha,beta,\"gamma\"\n0.2385,-1.5212e-3,-.625\n+4.5e2,0,3\n", 3);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_uint_eq(r.lines[0], 2);
	ck_assert_uint_eq(r.lines[1], 3);
	ck_assert_double_eq(r.vals[0][0], 0.2385);
	ck_assert_double_eq(r.vals[0][1], -1.5212e-3);
	ck_assert_double_eq(r.vals[0][2], -0.625);
	ck_assert_double_eq(r.vals[1][0], 450.0);

	/* empty header names (a pandas index column) are still a header */
	parse_str(&r, ",x\n0.2385,-1.5212e-3\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 1);
	ck_assert_uint_eq(r.lines[0], 2);

	/* a header-like line after a data first line is a bad data row */
	parse_str(&r, "0.2385,-1.5212e-3\nalpha,beta\n", 2);
	assert_refused(&r, 2, 1);
	ck_assert_msg_has(&r, "not a number: \"alpha\"");
	ck_assert_uint_eq(r.nrows, 1);
}
END_TEST

START_TEST(test_crlf)
{
	struct result r;

	parse_str(&r, "x,y\r\n0.2385,-1.5212e-3\r\n8.75,-3.125\r\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_uint_eq(r.lines[0], 2);
	ck_assert_uint_eq(r.lines[1], 3);
	ck_assert_double_eq(r.vals[0][1], -1.5212e-3);
	ck_assert_double_eq(r.vals[1][1], -3.125);

	/* a CR anywhere but at the line end is part of the cell */
	parse_str(&r, "0.2385,-1.5212e-3\r\n1,2\r3\n", 2);
	assert_refused(&r, 2, 2);
	ck_assert_msg_has(&r, "\"2\\x0d3\"");
}
END_TEST

START_TEST(test_bom)
{
	struct result r;

	parse_str(&r, "\xEF\xBB\xBFx,y\n0.2385,-1.5212e-3\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 1);
	ck_assert_uint_eq(r.lines[0], 2);

	parse_str(&r,
		  "\xEF\xBB\xBF"
		  "0.2385,-1.5212e-3\n",
		  2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 1);
	ck_assert_uint_eq(r.lines[0], 1);
	ck_assert_double_eq(r.vals[0][0], 0.2385);

	/* split anywhere, right before a data row: no header to hide a BOM
	 * byte taken for data */
	for (size_t k = 0; k <= 7; k++) {
		parse_with(&r,
			   "\xEF\xBB\xBF"
			   "1,2\n",
			   7, 2, 64, k, 1);
		ck_assert_int_eq(r.rc, ERR_OK);
		ck_assert_uint_eq(r.nrows, 1);
		ck_assert_double_eq(r.vals[0][0], 1.0);
	}

	/* the start of a BOM that is not one is data */
	parse_str(&r,
		  "\xEF\xBB"
		  "1,2\n",
		  2);
	assert_refused(&r, 1, 1);
	ck_assert_msg_has(&r, "\"\\xef\\xbb1\"");

	/* a BOM counts once, at the very start only */
	parse_str(&r,
		  "\xEF\xBB\xBF\xEF\xBB\xBF"
		  "1,2\n",
		  2);
	assert_refused(&r, 1, 1);
}
END_TEST

START_TEST(test_no_final_newline)
{
	struct result r;

	parse_str(&r, "0.2385,-1.5212e-3\n4.5,-6.25", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_uint_eq(r.lines[1], 2);
	ck_assert_double_eq(r.vals[1][1], -6.25);

	parse_str(&r, "0.2385,-1.5212e-3\r\n4.5,-6.25\r", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_double_eq(r.vals[1][1], -6.25);

	/* the error in an unterminated last line comes from finish */
	parse_str(&r, "0.2385,-1.5212e-3\n4.5,x", 2);
	assert_refused(&r, 2, 2);
	ck_assert(!r.feed_failed);
}
END_TEST

START_TEST(test_trailing_blank_lines)
{
	struct result r;

	parse_str(&r, "a,b\n0.2385,-1.5212e-3\n\n\r\n \t\n\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 1);

	parse_str(&r, "0.2385,-1.5212e-3\n\n  ", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 1);
}
END_TEST

static const char chunk_body[] = "\xEF\xBB\xBF"
				 " h1 ,\"h2\",h3\r\n"
				 "0.2385,\"-1.5212e-3\", 17\r\n"
				 "-4.5e2,.125,+3\n"
				 "\t9.0625 ,\" 0.0078125\",-0\r\n"
				 "\n\r\n";

START_TEST(test_every_chunking)
{
	size_t len = sizeof(chunk_body) - 1;
	struct result ref, r;

	parse_with(&ref, chunk_body, len, 3, 64, len, 0);
	ck_assert_int_eq(ref.rc, ERR_OK);
	ck_assert_uint_eq(ref.nrows, 3);
	ck_assert_uint_eq(ref.lines[0], 2);
	ck_assert_uint_eq(ref.lines[2], 4);
	ck_assert_double_eq(ref.vals[0][1], -1.5212e-3);
	ck_assert_double_eq(ref.vals[1][0], -450.0);
	ck_assert_double_eq(ref.vals[2][0], 9.0625);
	ck_assert_double_eq(ref.vals[2][1], 0.0078125);
	ck_assert(ref.vals[2][2] == 0.0 && signbit(ref.vals[2][2]));

	parse_with(&r, chunk_body, len, 3, 64, 0, 1);
	assert_same_rows(&ref, &r);
	for (size_t k = 0; k <= len; k++) {
		parse_with(&r, chunk_body, len, 3, 64, k, 0);
		assert_same_rows(&ref, &r);
	}
	/* also three chunks: every pair of split points */
	for (size_t k = 0; k <= len; k++)
		for (size_t m = 1; m <= len - k; m++) {
			parse_with(&r, chunk_body, len, 3, 64, k, m);
			assert_same_rows(&ref, &r);
		}
}
END_TEST

START_TEST(test_every_chunking_error)
{
	static const char body[] = "\xEF\xBB\xBFx,y\r\n0.2385,-1.5212e-3\r\n7.5,0.5e\r\n1,2\r\n";
	size_t len = sizeof(body) - 1;
	struct result ref, r;

	parse_with(&ref, body, len, 2, 64, len, 0);
	assert_refused(&ref, 3, 2);
	ck_assert_msg_has(&ref, "not a number: \"0.5e\"");
	ck_assert_uint_eq(ref.nrows, 1);
	for (size_t k = 0; k <= len; k++) {
		parse_with(&r, body, len, 2, 64, k, 0);
		assert_refused(&r, 3, 2);
		ck_assert_str_eq(r.e.msg, ref.e.msg);
		ck_assert_uint_eq(r.nrows, 1);
	}
	parse_with(&r, body, len, 2, 64, 0, 1);
	assert_refused(&r, 3, 2);
	ck_assert_str_eq(r.e.msg, ref.e.msg);
}
END_TEST

START_TEST(test_too_few_cells)
{
	struct result r;

	parse_str(&r, "0.2385,-1.5212e-3,7\n4.5,6.25\n", 3);
	assert_refused(&r, 2, 3);
	ck_assert_msg_has(&r, "expected 3 cells, found 2");
	ck_assert_uint_eq(r.nrows, 1);

	parse_str(&r, "0.2385\n", 3);
	assert_refused(&r, 1, 2);

	/* a header with the wrong width */
	parse_str(&r, "a,b\n1,2,3\n", 3);
	assert_refused(&r, 1, 3);
	ck_assert_uint_eq(r.calls, 0);
}
END_TEST

START_TEST(test_too_many_cells)
{
	struct result r;

	parse_str(&r, "0.2385,-1.5212e-3,7\n4.5,6.25,1,2,3\n", 3);
	assert_refused(&r, 2, 4);
	ck_assert_msg_has(&r, "expected 3 cells, found 5");
	ck_assert_uint_eq(r.nrows, 1);

	/* a trailing comma is one more (empty) cell */
	parse_str(&r, "0.2385,-1.5212e-3,\n", 2);
	assert_refused(&r, 1, 3);

	parse_str(&r, "a,b,c\n1,2\n", 2);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "found 3");
}
END_TEST

START_TEST(test_non_numeric)
{
	struct result r;

	parse_str(&r, "0.5,0.25\n1.5,abc\n", 2);
	assert_refused(&r, 2, 2);
	ck_assert_msg_has(&r, "not a number: \"abc\"");
	ck_assert_uint_eq(r.nrows, 1);

	/* some numeric, some not: the first line is a bad data row */
	parse_str(&r, "x,0.5\n1,2\n", 2);
	assert_refused(&r, 1, 1);
	ck_assert_uint_eq(r.calls, 0);

	parse_str(&r, "0.5,0.25,1\n1.5,,2\n", 3);
	assert_refused(&r, 2, 2);
	ck_assert_msg_has(&r, "empty cell");

	parse_str(&r, "0.5,0.25\n1.5,\n", 2);
	assert_refused(&r, 2, 2);
	ck_assert_msg_has(&r, "empty cell");

	parse_str(&r, "0.5,0.25\n1.5,\"\"\n", 2);
	assert_refused(&r, 2, 2);
	ck_assert_msg_has(&r, "empty cell");

	static const char *bad[] = { "1e",  "1.2.3", ".",   "-",   "+-1", "1 2", "\"1",
				     "1\"", "'1'",   "\v1", "1e+", "--1", "1d0", "e5" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char body[64];

		snprintf(body, sizeof(body), "0.5,0.25\n7,%s\n", bad[i]);
		parse_str(&r, body, 2);
		ck_assert_msg(r.rc == ERR_INVALID, "accepted %s", bad[i]);
		ck_assert_uint_eq(r.err_line, 2);
		ck_assert_uint_eq(r.err_column, 2);
	}
}
END_TEST

START_TEST(test_nul_byte)
{
	static const char body[] = "0.5,0.25\n1.5,2\0\n";
	struct result r;

	parse_with(&r, body, sizeof(body) - 1, 2, 64, sizeof(body) - 1, 0);
	assert_refused(&r, 2, 2);
	ck_assert_msg_has(&r, "\"2\\x00\"");
}
END_TEST

START_TEST(test_non_finite)
{
	static const char *bad[] = { "NaN",     "nan",      "-nan",      "Inf",   "-inf",
				     "+INF",    "infinity", "-Infinity", "1e999", "-1e999",
				     "1.8e308", "0x1p3",    "0X10",      "-0x1",  "nan(0x1)",
				     "\"nan\"", " inf ",    "\"1e999\"" };
	struct result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char body[64];

		snprintf(body, sizeof(body), "0.2385,-1.5212e-3\n7.5,%s\n", bad[i]);
		parse_str(&r, body, 2);
		ck_assert_msg(r.rc == ERR_INVALID, "accepted %s", bad[i]);
		assert_refused(&r, 2, 2);
		ck_assert_uint_eq(r.nrows, 1);

		/* on the first line, next to a number */
		snprintf(body, sizeof(body), "7.5,%s\n0.2385,-1.5212e-3\n", bad[i]);
		parse_str(&r, body, 2);
		assert_refused(&r, 1, 2);
		ck_assert_uint_eq(r.calls, 0);
	}
	parse_str(&r, "1,nan\n", 2);
	ck_assert_msg_has(&r, "not a finite number: \"nan\"");
	parse_str(&r, "1,1e999\n", 2);
	ck_assert_msg_has(&r, "number out of range: \"1e999\"");
	parse_str(&r, "1,0x1p3\n", 2);
	ck_assert_msg_has(&r, "not a decimal number: \"0x1p3\"");

	/* underflow is not overflow: tiny values are kept */
	parse_str(&r, "4e-320,1e-400\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_double_eq(r.vals[0][0], 4e-320);
	ck_assert_double_eq(r.vals[0][1], 0.0);
	parse_str(&r, "1.7976931348623157e308,-1.7976931348623157e308\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert(isfinite(r.vals[0][0]) && r.vals[0][1] < 0);
}
END_TEST

START_TEST(test_empty_body)
{
	static const char *bodies[] = { "",         "\xEF\xBB\xBF",     "\n",
					"\n\n\r\n", "\xEF\xBB\xBF\r\n", "  \t" };
	struct result r;

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		parse_str(&r, bodies[i], 2);
		ck_assert_int_eq(r.rc, ERR_INVALID);
		ck_assert(!r.feed_failed);
		ck_assert_str_eq(r.e.msg, "no data rows");
		ck_assert_str_eq(r.e.field, "data");
		ck_assert_uint_eq(r.calls, 0);
	}
	/* a lone partial BOM is a one-cell line: here a header */
	parse_str(&r, "\xEF\xBB", 1);
	ck_assert_int_eq(r.rc, ERR_INVALID);
	ck_assert_str_eq(r.e.msg, "no data rows");
}
END_TEST

START_TEST(test_header_only)
{
	static const char *bodies[] = { "a,b\n", "a,b",
					("\xEF\xBB\xBF" /* a BOM, then the header */
					 "a,b\r\n\r\n\n") };
	struct result r;

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		parse_str(&r, bodies[i], 2);
		ck_assert_int_eq(r.rc, ERR_INVALID);
		ck_assert_str_eq(r.e.msg, "no data rows");
		ck_assert_uint_eq(r.calls, 0);
	}
}
END_TEST

START_TEST(test_blank_line_in_middle)
{
	struct result r;

	parse_str(&r, "0.2385,-1.5212e-3\n\n3,4\n", 2);
	assert_refused(&r, 2, 0);
	ck_assert_msg_has(&r, "empty line");
	ck_assert_uint_eq(r.nrows, 1);

	/* a run of empty lines: the first is named */
	parse_str(&r, "a,b\n1,2\n\r\n \t\n\n5,6\n", 2);
	assert_refused(&r, 3, 0);
	ck_assert_uint_eq(r.nrows, 1);

	parse_str(&r, "\n1,2\n", 2);
	assert_refused(&r, 1, 0);
	ck_assert_uint_eq(r.calls, 0);

	/* detected by finish when the last line has no newline */
	parse_str(&r, "1,2\n\n3,4", 2);
	assert_refused(&r, 2, 0);
	ck_assert(!r.feed_failed);
}
END_TEST

START_TEST(test_long_line)
{
	struct result r;
	struct csv_parser p;
	struct err e;
	char *big;
	size_t i;

	/* exactly max_line_bytes (16) is fine, with any terminator */
	parse_with(&r, "0.2385,-1.52e-03\n", 17, 2, 16, 17, 0);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_double_eq(r.vals[0][1], -1.52e-03);
	parse_with(&r, "0.2385,-1.52e-03\r\n", 18, 2, 16, 1, 1);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 1);
	parse_with(&r, "0.2385,-1.52e-03", 16, 2, 16, 16, 0);
	ck_assert_int_eq(r.rc, ERR_OK);
	parse_with(&r, "0.2385,-1.52e-03\r", 17, 2, 16, 17, 0);
	ck_assert_int_eq(r.rc, ERR_OK);

	/* one byte more is refused */
	parse_with(&r, "1,2\n0.23851,-1.52e-03\n", 22, 2, 16, 22, 0);
	assert_refused(&r, 2, 0);
	ck_assert_msg_has(&r, "longer than 16 bytes");
	parse_with(&r, "1,2\n0.23851,-1.52e-03\r\n", 23, 2, 16, 0, 1);
	assert_refused(&r, 2, 0);
	ck_assert(r.feed_failed);

	/* a megabyte without a newline fails in the feed, not at finish */
	big = malloc(1 << 20);
	ck_assert_ptr_nonnull(big);
	memset(big, '1', 1 << 20);
	ck_assert_int_eq(csv_parser_init(&p, 2, 16, collect, &r, &e), ERR_OK);
	memset(&r, 0, sizeof(r));
	r.ncols = 2;
	ck_assert_int_eq(csv_parser_feed(&p, "0.25,0.5\n", 9, &e), ERR_OK);
	ck_assert_int_eq(csv_parser_feed(&p, big, 1 << 20, &e), ERR_INVALID);
	ck_assert_uint_eq(p.err_line, 2);
	ck_assert(p.len <= 17);
	csv_parser_clear(&p);

	/* byte by byte: it fires as soon as the 17th byte is not a CR */
	ck_assert_int_eq(csv_parser_init(&p, 2, 16, collect, &r, &e), ERR_OK);
	ck_assert_int_eq(csv_parser_feed(&p, "0.25,0.5\n", 9, &e), ERR_OK);
	for (i = 0; i < 1000; i++) {
		if (csv_parser_feed(&p, big + i, 1, &e) != ERR_OK)
			break;
		ck_assert(p.len <= 17);
	}
	ck_assert_uint_eq(i, 16);
	ck_assert_uint_eq(p.err_line, 2);
	ck_assert_str_eq(e.msg, "line 2: longer than 16 bytes");
	csv_parser_clear(&p);

	/* a 17th byte that is a CR must be followed by the LF */
	ck_assert_int_eq(csv_parser_init(&p, 2, 16, collect, &r, &e), ERR_OK);
	ck_assert_int_eq(csv_parser_feed(&p, "0.2385,-1.52e-03\r", 17, &e), ERR_OK);
	ck_assert_int_eq(csv_parser_feed(&p, "5", 1, &e), ERR_INVALID);
	ck_assert_uint_eq(p.err_line, 1);
	csv_parser_clear(&p);
	free(big);
}
END_TEST

START_TEST(test_quoted)
{
	struct result r;

	parse_str(&r, "\"x\",\"y\"\n\"0.2385\",\"-1.5212e-3\"\n\" 7.25 \",-8\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_double_eq(r.vals[0][0], 0.2385);
	ck_assert_double_eq(r.vals[0][1], -1.5212e-3);
	ck_assert_double_eq(r.vals[1][0], 7.25);
	ck_assert_double_eq(r.vals[1][1], -8.0);

	/* one pair only */
	parse_str(&r, "1,\"\"2\"\"\n", 2);
	assert_refused(&r, 1, 2);
}
END_TEST

START_TEST(test_blank_padded)
{
	struct result r;

	parse_str(&r, " 0.2385\t,\t -1.5212e-3  \n \"6.5\" ,\t\"-0.0625\"\t\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_double_eq(r.vals[0][0], 0.2385);
	ck_assert_double_eq(r.vals[0][1], -1.5212e-3);
	ck_assert_double_eq(r.vals[1][0], 6.5);
	ck_assert_double_eq(r.vals[1][1], -0.0625);

	/* a blank-only cell is empty */
	parse_str(&r, "0.2385, \t \n", 2);
	assert_refused(&r, 1, 2);
	ck_assert_msg_has(&r, "empty cell");
}
END_TEST

START_TEST(test_callback_error)
{
	static const char body[] = "x,y\n0.2385,-1.5212e-3\n2,3\n4,5\n";
	struct csv_parser p;
	struct result r;
	struct err e;

	memset(&r, 0, sizeof(r));
	r.ncols = 2;
	r.fail_at = 2;
	ck_assert_int_eq(csv_parser_init(&p, 2, 64, collect, &r, &e), ERR_OK);
	ck_assert_int_eq(csv_parser_feed(&p, body, sizeof(body) - 1, &e), ERR_DB);
	ck_assert_str_eq(e.msg, "store failed at line 3");
	ck_assert_uint_eq(r.calls, 2);
	ck_assert_uint_eq(r.nrows, 1);
	ck_assert_uint_eq(p.err_line, 3);
	ck_assert_uint_eq(p.err_column, 0);
	ck_assert(p.failed);

	/* stays failed with the same code; on_row is not called again */
	ck_assert_int_eq(csv_parser_feed(&p, "6,7\n", 4, &e), ERR_DB);
	ck_assert_int_eq(csv_parser_finish(&p, &e), ERR_DB);
	ck_assert_uint_eq(r.calls, 2);
	ck_assert_uint_eq(p.err_line, 3);
	csv_parser_clear(&p);
}
END_TEST

START_TEST(test_sticky)
{
	struct csv_parser p;
	struct result r;
	struct err e;

	memset(&r, 0, sizeof(r));
	r.ncols = 2;
	ck_assert_int_eq(csv_parser_init(&p, 2, 64, collect, &r, &e), ERR_OK);
	ck_assert_int_eq(csv_parser_feed(&p, "0.2385,-1.5212e-3\n1,inf\n", 24, &e), ERR_INVALID);
	ck_assert_uint_eq(p.err_line, 2);
	ck_assert_uint_eq(p.err_column, 2);
	ck_assert_uint_eq(r.calls, 1);

	ck_assert_int_eq(csv_parser_feed(&p, "3,4\n5,6\n", 8, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_feed(&p, "", 0, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_finish(&p, &e), ERR_INVALID);
	ck_assert_int_eq(e.code, ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(e.msg, "line 2"));
	ck_assert_uint_eq(r.calls, 1);
	ck_assert_uint_eq(p.err_line, 2);
	ck_assert_uint_eq(p.err_column, 2);
	csv_parser_clear(&p);

	/* "no data rows" is sticky too */
	ck_assert_int_eq(csv_parser_init(&p, 2, 64, collect, &r, &e), ERR_OK);
	ck_assert_int_eq(csv_parser_finish(&p, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_feed(&p, "1,2\n", 4, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_finish(&p, &e), ERR_INVALID);
	ck_assert_uint_eq(r.calls, 1);
	csv_parser_clear(&p);
}
END_TEST

START_TEST(test_message_bounded)
{
	char body[512];
	struct result r;
	int n;

	/* 200 bytes of cell with a control byte and a quote near the start */
	n = snprintf(body, sizeof(body), "1,2\n3,\x01\"");
	memset(body + n, 'q', 200);
	body[n + 200] = '\0';
	parse_str(&r, body, 2);
	assert_refused(&r, 2, 2);
	ck_assert_msg_has(&r, "\"\\x01\\\"qqq");
	ck_assert_msg_has(&r, "...\"");
	ck_assert_ptr_null(strstr(r.e.msg, "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"));

	/* all non-printable: still within the message buffer, still complete */
	memcpy(body, "1,2\n3,", 6);
	memset(body + 6, 0x7f, 100);
	body[106] = '\0';
	parse_str(&r, body, 2);
	assert_refused(&r, 2, 2);
	ck_assert_msg_has(&r, "\\x7f\\x7f");
	ck_assert_msg_has(&r, "...\"");
}
END_TEST

START_TEST(test_init_clear)
{
	struct csv_parser p;
	struct err e;

	memset(&p, 0, sizeof(p));
	csv_parser_clear(&p);
	csv_parser_clear(&p);
	ck_assert_int_eq(csv_parser_init(&p, 0, 64, collect, NULL, &e), ERR_INVALID);
	ck_assert_int_eq(e.code, ERR_INVALID);
	csv_parser_clear(&p);
	ck_assert_int_eq(csv_parser_init(&p, 3, 64, collect, NULL, NULL), ERR_OK);
	ck_assert_ptr_nonnull(p.line);
	ck_assert_ptr_nonnull(p.cells);
	csv_parser_clear(&p);
	ck_assert_ptr_null(p.line);
	ck_assert_ptr_null(p.cells);
	ck_assert_uint_eq(p.ncols, 0);

	/* a NULL struct err is allowed everywhere */
	ck_assert_int_eq(csv_parser_init(&p, 1, 64, NULL, NULL, NULL), ERR_OK);
	ck_assert_int_eq(csv_parser_feed(&p, "x\n2.5\n", 6, NULL), ERR_OK);
	ck_assert_int_eq(csv_parser_finish(&p, NULL), ERR_OK);
	ck_assert_uint_eq(p.rows, 1);
	csv_parser_clear(&p);
	ck_assert_int_eq(csv_parser_init(&p, 1, 64, NULL, NULL, NULL), ERR_OK);
	ck_assert_int_eq(csv_parser_feed(&p, "2.5\nx\n", 6, NULL), ERR_INVALID);
	ck_assert_int_eq(csv_parser_finish(&p, NULL), ERR_INVALID);
	csv_parser_clear(&p);
}
END_TEST

static const char *const animals[] = { "cat", "dog", "fish" };

/* As parse_with(), in chunks of step bytes (0: all at once), with column
 * col a label column of animals, and column 0 one of no/yes if with_yesno. */
static void
parse_labels(struct result *r, const char *body, size_t ncols, size_t col, bool with_yesno,
	     size_t step)
{
	static const char *const yesno[] = { "no", "yes" };
	struct csv_parser p;
	size_t len = strlen(body), off = 0;

	memset(r, 0, sizeof(*r));
	r->ncols = ncols;
	ck_assert_int_eq(csv_parser_init(&p, ncols, 1024, collect, r, &r->e), ERR_OK);
	ck_assert_int_eq(csv_parser_set_labels(&p, col, animals, 3, &r->e), ERR_OK);
	if (with_yesno)
		ck_assert_int_eq(csv_parser_set_labels(&p, 0, yesno, 2, &r->e), ERR_OK);
	r->rc = ERR_OK;
	while (r->rc == ERR_OK && off < len) {
		size_t n = step == 0 || step > len - off ? len - off : step;

		r->rc = csv_parser_feed(&p, body + off, n, &r->e);
		off += n;
	}
	if (r->rc != ERR_OK)
		r->feed_failed = true;
	else
		r->rc = csv_parser_finish(&p, &r->e);
	r->err_line = p.err_line;
	r->err_column = p.err_column;
	csv_parser_clear(&p);
}

START_TEST(test_labels)
{
	struct result r;

	parse_labels(&r, "0.2385,cat\n-1.5,\" dog \"\n7,fish\n8,2\n9,0.0\n10,1e0\n", 2, 1, false,
		     0);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 6);
	ck_assert_double_eq(r.vals[0][0], 0.2385);
	ck_assert_double_eq(r.vals[0][1], 0.0);
	ck_assert_double_eq(r.vals[1][1], 1.0);
	ck_assert_double_eq(r.vals[2][1], 2.0);
	ck_assert_double_eq(r.vals[3][1], 2.0);
	ck_assert_double_eq(r.vals[4][1], 0.0);
	ck_assert_double_eq(r.vals[5][1], 1.0);
	ck_assert(!signbit(r.vals[4][1]));

	/* -0 is index 0, with a positive sign */
	parse_labels(&r, "1,-0\n", 2, 1, false, 0);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert(!signbit(r.vals[0][1]));

	/* two label columns, and a header */
	parse_labels(&r, "answer,x,animal\nyes,0.5,dog\nno,-0.25,0\n", 3, 2, true, 0);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_uint_eq(r.lines[0], 2);
	ck_assert_double_eq(r.vals[0][0], 1.0);
	ck_assert_double_eq(r.vals[0][2], 1.0);
	ck_assert_double_eq(r.vals[1][0], 0.0);
	ck_assert_double_eq(r.vals[1][2], 0.0);

	/* the numeric columns are unchanged */
	parse_labels(&r, "1,cat\ndog,cat\n", 2, 1, false, 0);
	assert_refused(&r, 2, 1);
	ck_assert_msg_has(&r, "not a number: \"dog\"");
}
END_TEST

START_TEST(test_labels_refused)
{
	static const char *const bad[] = { "bird", "3",       "-1",  "1.5", "1e999",
					   "Cat",  "cat dog", "nan", "0x1" };
	struct result r;
	char body[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(body, sizeof(body), "1,cat\n2,%s\n", bad[i]);
		parse_labels(&r, body, 2, 1, false, 0);
		assert_refused(&r, 2, 2);
		ck_assert_msg_has(&r, "not one of the 3 labels nor an index 0 to 2");
		ck_assert_msg(strstr(r.e.detail, "\"cat\", \"dog\", \"fish\"") != NULL,
			      "detail \"%s\"", r.e.detail);
		ck_assert_msg(strstr(r.e.detail, "column 2") != NULL, "detail \"%s\"", r.e.detail);
	}
	parse_labels(&r, "1,cat\n2,\"\"\n", 2, 1, false, 0);
	assert_refused(&r, 2, 2);
	ck_assert_msg_has(&r, "empty cell");
}
END_TEST

START_TEST(test_labels_header_rule)
{
	struct result r;

	/* a first line of labels only is data, not a header */
	parse_labels(&r, "dog\ncat\n", 1, 0, false, 0);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_uint_eq(r.lines[0], 1);
	ck_assert_double_eq(r.vals[0][0], 1.0);

	/* an index in the first line is a number: data */
	parse_labels(&r, "2\ncat\n", 1, 0, false, 0);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);

	/* a name that is no label: header */
	parse_labels(&r, "animal\ncat\n", 1, 0, false, 0);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 1);
	ck_assert_uint_eq(r.lines[0], 2);

	/* a first line with a label beside names is a data row, refused */
	parse_labels(&r, "x,cat\n1,dog\n", 2, 1, false, 0);
	assert_refused(&r, 1, 1);
	ck_assert_msg_has(&r, "not a number: \"x\"");

	/* a bad index in the first line is a number: refused as data */
	parse_labels(&r, "1,7\n1,dog\n", 2, 1, false, 0);
	assert_refused(&r, 1, 2);

	/* a header with a numeric-looking name in a label column is no header */
	parse_labels(&r, "x,y\n1,dog\n", 2, 1, false, 0);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 1);
}
END_TEST

START_TEST(test_labels_every_chunking)
{
	static const char body[] = "\xEF\xBB\xBF"
				   "animal,x\r\n\"fish\",0.25\r\ndog,-1\r\n1,2\r\n";
	struct result whole, r;

	parse_labels(&whole, body, 2, 0, false, 0);
	ck_assert_int_eq(whole.rc, ERR_OK);
	ck_assert_uint_eq(whole.nrows, 3);
	ck_assert_double_eq(whole.vals[0][0], 2.0);
	for (size_t step = 1; step <= strlen(body); step++) {
		parse_labels(&r, body, 2, 0, false, step);
		assert_same_rows(&whole, &r);
	}
}
END_TEST

START_TEST(test_set_labels_refused)
{
	static const char *const dup[] = { "a", "b", "a" };
	static const char *const empty[] = { "a", "" };
	static const char *const comma[] = { "a,b" };
	static const char *const quote[] = { "\"a\"" };
	static const char *const blank[] = { " a" };
	static const char *const nl[] = { "a\nb" };
	static const char *const ok[] = { "a", "b" };
	struct csv_parser p;
	struct err e;

	ck_assert_int_eq(csv_parser_init(&p, 2, 64, NULL, NULL, &e), ERR_OK);
	ck_assert_int_eq(csv_parser_set_labels(&p, 2, ok, 2, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_set_labels(&p, 0, ok, 0, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_set_labels(&p, 0, dup, 3, &e), ERR_INVALID);
	ck_assert_msg(strstr(e.msg, "duplicate") != NULL, "%s", e.msg);
	ck_assert_int_eq(csv_parser_set_labels(&p, 0, empty, 2, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_set_labels(&p, 0, comma, 1, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_set_labels(&p, 0, quote, 1, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_set_labels(&p, 0, blank, 1, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_set_labels(&p, 0, nl, 1, &e), ERR_INVALID);
	ck_assert_int_eq(csv_parser_set_labels(&p, 0, ok, 2, &e), ERR_OK);
	ck_assert_int_eq(csv_parser_set_labels(&p, 0, ok, 2, &e), ERR_OK); /* replaces */
	ck_assert_int_eq(csv_parser_feed(&p, "a,", 2, &e), ERR_OK);
	ck_assert_int_eq(csv_parser_set_labels(&p, 1, ok, 2, &e), ERR_INVALID);
	csv_parser_clear(&p);
}
END_TEST

/* The header's cells (on_header): names joined by '|', and the count. */
struct names {
	char text[256];
	size_t calls;
	size_t fail_at; /* on_header call that fails, 0 for none */
};

static enum err_code
collect_name(void *ctx, size_t col, const char *name, size_t len, struct err *e)
{
	struct names *n = ctx;
	size_t used = strlen(n->text);

	ck_assert_uint_eq(col, n->calls);
	n->calls++;
	if (n->fail_at != 0 && n->calls == n->fail_at)
		return err_set(e, ERR_NOMEM, "header store failed");
	snprintf(n->text + used, sizeof(n->text) - used, "%s%.*s", col > 0 ? "|" : "", (int)len,
		 name);
	return ERR_OK;
}

/* Parse body in chunks of step bytes with a header callback; returns the
 * outcome, the names in *n and the data rows in *rows. */
static enum err_code
parse_names(const char *body, size_t ncols, size_t step, struct names *n, size_t fail_at,
	    unsigned long *rows)
{
	struct csv_parser p;
	struct result r;
	struct err e = { 0 };
	size_t len = strlen(body), off = 0;
	enum err_code rc = ERR_OK;

	memset(n, 0, sizeof(*n));
	memset(&r, 0, sizeof(r));
	n->fail_at = fail_at;
	r.ncols = ncols;
	ck_assert_int_eq(csv_parser_init(&p, ncols, 256, collect, &r, &e), ERR_OK);
	p.on_header = collect_name;
	p.header_ctx = n;
	while (rc == ERR_OK && off < len) {
		size_t k = step > len - off ? len - off : step;

		rc = csv_parser_feed(&p, body + off, k, &e);
		off += k;
	}
	if (rc == ERR_OK)
		rc = csv_parser_finish(&p, &e);
	*rows = r.nrows;
	csv_parser_clear(&p);
	return rc;
}

START_TEST(test_header_names)
{
	static const char body[] = "\xef\xbb\xbf \"age years\" ,\" b \",c\r\n1,2,3\r\n4,5,6\n";
	struct names n;
	unsigned long rows;

	/* Every chunking gives the same names, trimmed and unquoted like
	 * cells, after a byte-order mark, with CRLF. */
	for (size_t step = 1; step <= sizeof(body); step++) {
		ck_assert_int_eq(parse_names(body, 3, step, &n, 0, &rows), ERR_OK);
		ck_assert_str_eq(n.text, "age years|b|c");
		ck_assert_uint_eq(rows, 2);
	}
	ck_assert_int_eq(parse_names("a,b,c\n1,2,3\n", 3, 5, &n, 0, &rows), ERR_OK);
	ck_assert_str_eq(n.text, "a|b|c");
	/* No header: no call, and the first row is data. */
	ck_assert_int_eq(parse_names("1,2,3\n4,5,6\n", 3, 4, &n, 0, &rows), ERR_OK);
	ck_assert_uint_eq(n.calls, 0);
	ck_assert_uint_eq(rows, 2);
	/* A header of the wrong width is refused before any call. */
	ck_assert_int_eq(parse_names("a,b\n1,2,3\n", 3, 64, &n, 0, &rows), ERR_INVALID);
	ck_assert_uint_eq(n.calls, 0);
	/* The callback's error stops the parser with that error. */
	ck_assert_int_eq(parse_names("a,b,c\n1,2,3\n", 3, 64, &n, 2, &rows), ERR_NOMEM);
	ck_assert_uint_eq(rows, 0);
}
END_TEST

static Suite *
csv_suite(void)
{
	Suite *s = suite_create("csv");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_no_header);
	tcase_add_test(tc, test_header);
	tcase_add_test(tc, test_crlf);
	tcase_add_test(tc, test_bom);
	tcase_add_test(tc, test_no_final_newline);
	tcase_add_test(tc, test_trailing_blank_lines);
	tcase_add_test(tc, test_every_chunking);
	tcase_add_test(tc, test_every_chunking_error);
	tcase_add_test(tc, test_too_few_cells);
	tcase_add_test(tc, test_too_many_cells);
	tcase_add_test(tc, test_non_numeric);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_non_finite);
	tcase_add_test(tc, test_empty_body);
	tcase_add_test(tc, test_header_only);
	tcase_add_test(tc, test_blank_line_in_middle);
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_quoted);
	tcase_add_test(tc, test_blank_padded);
	tcase_add_test(tc, test_callback_error);
	tcase_add_test(tc, test_sticky);
	tcase_add_test(tc, test_message_bounded);
	tcase_add_test(tc, test_init_clear);
	tcase_add_test(tc, test_labels);
	tcase_add_test(tc, test_labels_refused);
	tcase_add_test(tc, test_labels_header_rule);
	tcase_add_test(tc, test_labels_every_chunking);
	tcase_add_test(tc, test_set_labels_refused);
	tcase_add_test(tc, test_header_names);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(csv_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
