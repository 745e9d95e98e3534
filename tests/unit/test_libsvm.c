/*
 * test_libsvm.c - the streaming LIBSVM parser: accepted lines (labels,
 * qid, comments, zeros dropped, unlabeled mode), every chunking of a body
 * giving the same rows, and every refusal naming its line and entry, with
 * the parser staying failed afterwards.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsvm.h"

#define MAX_ROWS 16
#define MAX_NNZ  8

struct result {
	enum err_code rc; /* first error, or that of finish */
	bool feed_failed; /* the error came from libsvm_parser_feed */
	struct err e;
	unsigned long err_line;
	unsigned long err_entry;
	size_t calls;   /* on_row calls */
	size_t fail_at; /* on_row call that returns ERR_DB, 0 for none */
	size_t nrows;
	unsigned long lines[MAX_ROWS];
	double labels[MAX_ROWS];
	bool has_group[MAX_ROWS];
	uint32_t groups[MAX_ROWS];
	size_t nnz[MAX_ROWS];
	uint32_t cols[MAX_ROWS][MAX_NNZ];
	double vals[MAX_ROWS][MAX_NNZ];
};

static enum err_code
collect(void *ctx, const struct libsvm_row *row, struct err *e)
{
	struct result *r = ctx;
	size_t i = r->nrows;

	r->calls++;
	if (r->fail_at != 0 && r->calls == r->fail_at)
		return err_set(e, ERR_DB, "store failed at line %lu", row->line);
	ck_assert_uint_lt(i, MAX_ROWS);
	ck_assert_uint_le(row->nnz, MAX_NNZ);
	r->lines[i] = row->line;
	r->labels[i] = row->label;
	r->has_group[i] = row->has_group;
	r->groups[i] = row->group;
	r->nnz[i] = row->nnz;
	for (size_t k = 0; k < row->nnz; k++) {
		ck_assert(row->val[k] != 0.0);
		if (k > 0)
			ck_assert_uint_lt(row->col[k - 1], row->col[k]);
		r->cols[i][k] = row->col[k];
		r->vals[i][k] = row->val[k];
	}
	r->nrows++;
	return ERR_OK;
}

/* Parse body[0..len): a first chunk of `first` bytes, then chunks of
 * `step` bytes (0: all the rest at once), then finish. */
static void
parse_with(struct result *r, const char *body, size_t len, size_t d, bool labeled, size_t max_line,
	   size_t first, size_t step, size_t fail_at)
{
	struct libsvm_parser p;
	size_t off;

	memset(r, 0, sizeof(*r));
	r->fail_at = fail_at;
	ck_assert_int_eq(libsvm_parser_init(&p, d, labeled, max_line, collect, r, &r->e), ERR_OK);
	if (first > len)
		first = len;
	r->rc = libsvm_parser_feed(&p, body, first, &r->e);
	off = first;
	while (r->rc == ERR_OK && off < len) {
		size_t n = step == 0 || step > len - off ? len - off : step;

		r->rc = libsvm_parser_feed(&p, body + off, n, &r->e);
		off += n;
	}
	if (r->rc != ERR_OK)
		r->feed_failed = true;
	else
		r->rc = libsvm_parser_finish(&p, &r->e);
	r->err_line = p.err_line;
	r->err_entry = p.err_entry;
	ck_assert(p.len <= max_line + 1);
	libsvm_parser_clear(&p);
}

static void
parse_str(struct result *r, const char *body, size_t d)
{
	parse_with(r, body, strlen(body), d, true, 1024, strlen(body), 0, 0);
}

static void
parse_unlabeled(struct result *r, const char *body, size_t d)
{
	parse_with(r, body, strlen(body), d, false, 1024, strlen(body), 0, 0);
}

#define ck_assert_msg_has(r, s)                                                                    \
	ck_assert_msg(strstr((r)->e.msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (r)->e.msg,  \
		      (s))

static void
assert_refused(const struct result *r, unsigned long line, unsigned long entry)
{
	char want[64];

	ck_assert_int_eq(r->rc, ERR_INVALID);
	ck_assert_int_eq(r->e.code, ERR_INVALID);
	ck_assert_str_eq(r->e.field, "data");
	ck_assert_uint_eq(r->err_line, line);
	ck_assert_uint_eq(r->err_entry, entry);
	if (entry != 0)
		snprintf(want, sizeof(want), "line %lu, entry %lu: ", line, entry);
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
	ck_assert_uint_eq(a->err_line, b->err_line);
	ck_assert_uint_eq(a->err_entry, b->err_entry);
	for (size_t i = 0; i < a->nrows; i++) {
		ck_assert_uint_eq(a->lines[i], b->lines[i]);
		ck_assert(a->labels[i] == b->labels[i]);
		ck_assert(a->has_group[i] == b->has_group[i]);
		ck_assert_uint_eq(a->groups[i], b->groups[i]);
		ck_assert_uint_eq(a->nnz[i], b->nnz[i]);
		for (size_t k = 0; k < a->nnz[i]; k++) {
			ck_assert_uint_eq(a->cols[i][k], b->cols[i][k]);
			ck_assert(a->vals[i][k] == b->vals[i][k]);
		}
	}
}

START_TEST(test_basic)
{
	struct result r;

	parse_str(&r, "+1 1:0.2385 3:-1.5212e-3 7:17\n-1 2:.625\n", 7);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_uint_eq(r.lines[0], 1);
	ck_assert_double_eq(r.labels[0], 1.0);
	ck_assert(!r.has_group[0]);
	ck_assert_uint_eq(r.nnz[0], 3);
	ck_assert_uint_eq(r.cols[0][0], 0);
	ck_assert_uint_eq(r.cols[0][1], 2);
	ck_assert_uint_eq(r.cols[0][2], 6);
	ck_assert_double_eq(r.vals[0][0], 0.2385);
	ck_assert_double_eq(r.vals[0][1], -1.5212e-3);
	ck_assert_double_eq(r.vals[0][2], 17.0);
	ck_assert_uint_eq(r.lines[1], 2);
	ck_assert_double_eq(r.labels[1], -1.0);
	ck_assert_uint_eq(r.nnz[1], 1);
	ck_assert_uint_eq(r.cols[1][0], 1);
	ck_assert_double_eq(r.vals[1][0], 0.625);
	ck_assert_uint_eq(r.err_line, 0);

	/* real and class-index labels are the caller's to check */
	parse_str(&r, "3.75 1:1\n2 2:0.5\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_double_eq(r.labels[0], 3.75);
	ck_assert_double_eq(r.labels[1], 2.0);

	/* a row without features, blanks and tabs anywhere */
	parse_str(&r, "\t-1  \n 1 \t 2:4.5\t\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_uint_eq(r.nnz[0], 0);
	ck_assert_uint_eq(r.nnz[1], 1);
	ck_assert_double_eq(r.vals[1][0], 4.5);
}
END_TEST

START_TEST(test_zeros_dropped)
{
	struct result r;

	parse_str(&r, "1 1:0 2:0.0 3:-0 4:8.5 5:0e10\n", 5);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nnz[0], 1);
	ck_assert_uint_eq(r.cols[0][0], 3);
	ck_assert_double_eq(r.vals[0][0], 8.5);

	/* a dropped zero still counts for the order */
	parse_str(&r, "1 2:0 1:3\n", 5);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "strictly increasing");
}
END_TEST

START_TEST(test_qid)
{
	struct result r;

	parse_str(&r, "1 qid:0 1:2\n-1 qid:4294967295 2:3\n1 1:1\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 3);
	ck_assert(r.has_group[0]);
	ck_assert_uint_eq(r.groups[0], 0);
	ck_assert(r.has_group[1]);
	ck_assert_uint_eq(r.groups[1], 4294967295u);
	ck_assert(!r.has_group[2]);

	parse_str(&r, "1 qid:4294967296 1:2\n", 2);
	assert_refused(&r, 1, 2);
	ck_assert_msg_has(&r, "qid is not an integer");
	parse_str(&r, "1 qid:-1 1:2\n", 2);
	assert_refused(&r, 1, 2);
	parse_str(&r, "1 qid:1.5 1:2\n", 2);
	assert_refused(&r, 1, 2);
	parse_str(&r, "1 qid: 1:2\n", 2);
	assert_refused(&r, 1, 2);
	parse_str(&r, "1 1:2 qid:3\n", 2);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "qid must come before the features");
	parse_str(&r, "1 qid:3 qid:3 1:2\n", 2);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "qid given twice");
	/* before the label is not a label */
	parse_str(&r, "qid:3 1 1:2\n", 2);
	assert_refused(&r, 1, 1);
	ck_assert_msg_has(&r, "expected a label");
}
END_TEST

START_TEST(test_unlabeled)
{
	struct result r;

	parse_unlabeled(&r, "1:0.2385 3:-4\nqid:7 2:1.5\n1:0\n", 3);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 3);
	ck_assert_double_eq(r.labels[0], 0.0);
	ck_assert_uint_eq(r.nnz[0], 2);
	ck_assert_uint_eq(r.cols[0][1], 2);
	ck_assert(r.has_group[1]);
	ck_assert_uint_eq(r.groups[1], 7);
	ck_assert_uint_eq(r.nnz[1], 1);
	ck_assert_uint_eq(r.nnz[2], 0);

	/* a label in unlabeled mode is a bad pair */
	parse_unlabeled(&r, "1 1:0.5\n", 3);
	assert_refused(&r, 1, 1);
	ck_assert_msg_has(&r, "expected index:value: \"1\"");

	/* and a labeled parser wants its label */
	parse_str(&r, "1:0.5 2:1\n", 3);
	assert_refused(&r, 1, 1);
	ck_assert_msg_has(&r, "expected a label before the features: \"1:0.5\"");

	/* init refuses what could never hold a row */
	{
		struct libsvm_parser p;
		struct err e;

		ck_assert_int_eq(libsvm_parser_init(&p, 0, false, 64, collect, NULL, &e),
				 ERR_INVALID);
		libsvm_parser_clear(&p);
		ck_assert_int_eq(libsvm_parser_init(&p, 0, true, 64, collect, NULL, &e), ERR_OK);
		libsvm_parser_clear(&p);
		ck_assert_int_eq(
			libsvm_parser_init(&p, (size_t)UINT32_MAX + 1, true, 64, collect, NULL, &e),
			ERR_INVALID);
		libsvm_parser_clear(&p);
	}
}
END_TEST

START_TEST(test_comments)
{
	struct result r;

	parse_str(&r, "# a header comment\n1 1:2 # row one\n  # indented\n-1 2:3#tight\n# end\n",
		  2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_uint_eq(r.lines[0], 2);
	ck_assert_uint_eq(r.lines[1], 4);
	ck_assert_double_eq(r.vals[1][0], 3.0);

	/* a blank line before a comment line is still a blank line in the middle */
	parse_str(&r, "1 1:2\n\n# late\n", 2);
	assert_refused(&r, 2, 0);
	ck_assert_msg_has(&r, "empty line");

	/* only comments: no rows */
	parse_str(&r, "# nothing\n", 2);
	ck_assert_int_eq(r.rc, ERR_INVALID);
	ck_assert_msg_has(&r, "no data rows");
}
END_TEST

START_TEST(test_bom_crlf_final)
{
	struct result r;

	parse_str(&r, "\xEF\xBB\xBF+1 1:2\r\n-1 2:3\r\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_double_eq(r.vals[1][0], 3.0);

	parse_str(&r, "1 1:2\n-1 2:3", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);
	ck_assert_uint_eq(r.lines[1], 2);

	parse_str(&r, "1 1:2\n-1 2:3\r", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 2);

	/* trailing blank lines are fine */
	parse_str(&r, "1 1:2\n\n \t\n\r\n", 2);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nrows, 1);

	/* a broken BOM is data */
	parse_str(&r,
		  "\xEF\xBB"
		  "1 1:2\n",
		  2);
	assert_refused(&r, 1, 1);

	/* a CR inside a line is part of a token */
	parse_str(&r, "1 1:2\r3\n", 2);
	assert_refused(&r, 1, 2);
	ck_assert_msg_has(&r, "\\x0d");

	/* the error in an unterminated last line comes from finish */
	parse_str(&r, "1 1:2\n-1 2:x", 2);
	assert_refused(&r, 2, 2);
	ck_assert(!r.feed_failed);
}
END_TEST

START_TEST(test_bad_indices)
{
	struct result r;

	parse_str(&r, "1 1:2 1:3\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "duplicate index: \"1:3\"");
	parse_str(&r, "1 3:2 2:3\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "indices must be strictly increasing: \"2:3\"");
	parse_str(&r, "1 0:2\n", 4);
	assert_refused(&r, 1, 2);
	ck_assert_msg_has(&r, "index is not a positive integer");
	parse_str(&r, "1 5:2\n", 4);
	assert_refused(&r, 1, 2);
	ck_assert_msg_has(&r, "index exceeds the dimension 4: \"5:2\"");
	parse_str(&r, "1 4:2\n", 4);
	ck_assert_int_eq(r.rc, ERR_OK);
	parse_str(&r, "1 99999999999999999999999:2\n", 4);
	assert_refused(&r, 1, 2);
	ck_assert_msg_has(&r, "exceeds the dimension");
	parse_str(&r, "1 -1:2\n", 4);
	assert_refused(&r, 1, 2);
	parse_str(&r, "1 +1:2\n", 4);
	assert_refused(&r, 1, 2);
	parse_str(&r, "1 1.0:2\n", 4);
	assert_refused(&r, 1, 2);
	parse_str(&r, "1 :2\n", 4);
	assert_refused(&r, 1, 2);
	parse_str(&r, "1 a:2\n", 4);
	assert_refused(&r, 1, 2);
	parse_str(&r, "1 1:2 3\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "expected index:value: \"3\"");
	/* on the second line */
	parse_str(&r, "1 1:2\n-1 2:1 2:1\n", 4);
	assert_refused(&r, 2, 3);
	ck_assert_uint_eq(r.nrows, 1);
}
END_TEST

START_TEST(test_bad_numbers)
{
	static const char *const bad_values[] = { "nan",   "inf",   "-Infinity", "NaN(1)",
						  "0x1p3", "1e999", "abc",       "1.2.3",
						  "",      "1,5",   "1:2" };
	static const char *const bad_labels[] = { "nan", "+inf", "0x10", "-1e400", "yes", "1/2" };
	struct result r;
	char body[64];

	for (size_t i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		snprintf(body, sizeof(body), "1 1:2\n-1 1:%s 2:1\n", bad_values[i]);
		parse_str(&r, body, 4);
		assert_refused(&r, 2, 2);
		ck_assert_msg_has(&r, "value is ");
	}
	for (size_t i = 0; i < sizeof(bad_labels) / sizeof(bad_labels[0]); i++) {
		snprintf(body, sizeof(body), "1 1:2\n%s 1:1\n", bad_labels[i]);
		parse_str(&r, body, 4);
		assert_refused(&r, 2, 1);
		ck_assert_msg_has(&r, "label is ");
	}
	parse_str(&r, "1e999 1:1\n", 4);
	ck_assert_msg_has(&r, "label is out of range");
	parse_str(&r, "1 1:nan\n", 4);
	ck_assert_msg_has(&r, "value is not a finite number: \"nan\"");
	/* an underflow is a (dropped) zero or a subnormal, not an error */
	parse_str(&r, "1 1:1e-400 2:4e-320\n", 4);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.nnz[0], 1);
	ck_assert_uint_eq(r.cols[0][0], 1);
}
END_TEST

/* The one-pass reader of "index:value" pairs against strtod, bit for bit:
 * short and long values (up to 19 significant digits it reads itself,
 * more go to strtod), exponents, signs, leading zeros of index and
 * value, each pair followed by every separator a line may have (blank,
 * tab, several blanks, CRLF, LF, a comment, the body's end without a
 * newline); and the refusals near it keep their line, entry and words. */
START_TEST(test_pairs_one_pass)
{
	static const char *const values[] = {
		"0.5",
		"-0.012345",
		"+7",
		"12345678",
		"123456789",
		".25",
		"5.",
		"0.000000000000000000001234",
		"1234567890123456789",
		"12345678901234567890123",
		"0.1234567890123456789",
		"0.12345678901234567890",
		"-1.5e-3",
		"2E+2",
		"9.999999999999999e22",
		"4.9e-324",
		"00000000000000000000000000001",
		"1e-400",
	};
	static const char *const after[] = { " 9:1\n", "\t9:1\n", "   9:1 \n", "\r\n",
					     "\n",     "",        " # c 1:x\n" };
	struct result r;
	char body[128];

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		for (size_t a = 0; a < sizeof(after) / sizeof(after[0]); a++) {
			double want = strtod(values[i], NULL);

			snprintf(body, sizeof(body), "-1 0003:%s%s", values[i], after[a]);
			parse_str(&r, body, 9);
			ck_assert_msg(r.rc == ERR_OK, "'%s': %s", body, r.e.msg);
			ck_assert_uint_eq(r.nrows, 1);
			if (want == 0.0) {
				ck_assert_uint_eq(r.nnz[0], a < 3 ? 1 : 0);
				continue;
			}
			ck_assert_uint_eq(r.cols[0][0], 2);
			ck_assert_msg(memcmp(&r.vals[0][0], &want, sizeof(want)) == 0,
				      "'%s': %a, strtod says %a", body, r.vals[0][0], want);
			ck_assert_uint_eq(r.nnz[0], a < 3 ? 2 : 1);
		}
	/* a value that runs into a non-blank is one bad token */
	parse_str(&r, "1 1:0.5 2:0.25x 3:1\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "value is not a number: \"0.25x\"");
	parse_str(&r, "1 1:0.5 2:0.123456789:3\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "value is not a number");
	parse_str(&r, "1 1:0.5 2:1e\n", 4);
	assert_refused(&r, 1, 3);
	parse_str(&r, "1 1:0.5 2:\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "value is empty");
	parse_str(&r, "1 1:0.5 2:0x10\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "value is not a decimal number");
	parse_str(&r, "1 1:0.5 2:-inf\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "value is not a finite number");
	parse_str(&r, "1 1:0.5 2:1e999\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "value is out of range");
	/* index faults after pairs the one-pass reader took */
	parse_str(&r, "1 1:0.5 2:0.25 2:0.5\n", 4);
	assert_refused(&r, 1, 4);
	ck_assert_msg_has(&r, "duplicate index: \"2:0.5\"");
	parse_str(&r, "1 1:0.5 3:0.25 2:0.5\n", 4);
	assert_refused(&r, 1, 4);
	ck_assert_msg_has(&r, "strictly increasing");
	parse_str(&r, "1 1:0.5 5:0.25\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "index exceeds the dimension 4");
	parse_str(&r, "1 1:0.5 0000000000000000000002:0.25\n", 4);
	ck_assert_int_eq(r.rc, ERR_OK);
	ck_assert_uint_eq(r.cols[0][1], 1);
	parse_str(&r, "1 1:0.5 00:0.25\n", 4);
	assert_refused(&r, 1, 3);
	ck_assert_msg_has(&r, "index is not a positive integer");
}
END_TEST

START_TEST(test_nul_byte)
{
	static const char body[] = "1 1:2\n1 1:2\0003\n";
	struct result r;

	parse_with(&r, body, sizeof(body) - 1, 4, true, 64, sizeof(body) - 1, 0, 0);
	assert_refused(&r, 2, 2);
	ck_assert_msg_has(&r, "\\x00");
}
END_TEST

START_TEST(test_blank_in_middle)
{
	struct result r;

	parse_str(&r, "1 1:2\n\n \n-1 2:3\n", 2);
	assert_refused(&r, 2, 0);
	ck_assert_msg_has(&r, "line 2: empty line");
	ck_assert_uint_eq(r.nrows, 1);
}
END_TEST

START_TEST(test_empty_body)
{
	struct result r;

	parse_str(&r, "", 2);
	ck_assert_int_eq(r.rc, ERR_INVALID);
	ck_assert_msg_has(&r, "no data rows");
	ck_assert(!r.feed_failed);
	parse_str(&r, "\n\n", 2);
	ck_assert_int_eq(r.rc, ERR_INVALID);
	parse_str(&r, "\xEF\xBB\xBF", 2);
	ck_assert_int_eq(r.rc, ERR_INVALID);
	ck_assert_msg_has(&r, "no data rows");
}
END_TEST

START_TEST(test_long_line)
{
	static const char body[] = "1 1:2.5\n-1 1:2.25 2:3\n";
	struct result r;

	/* the second line is 13 bytes: 13 passes, 12 fails, in any chunking */
	parse_with(&r, body, strlen(body), 4, true, 13, strlen(body), 0, 0);
	ck_assert_int_eq(r.rc, ERR_OK);
	for (size_t step = 1; step <= strlen(body); step++) {
		parse_with(&r, body, strlen(body), 4, true, 12, 0, step, 0);
		assert_refused(&r, 2, 0);
		ck_assert_msg_has(&r, "longer than 12 bytes");
		ck_assert(r.feed_failed);
	}
	/* CRLF: the CR does not count */
	parse_with(&r, "1 1:2.5\r\n", 9, 4, true, 7, 9, 0, 0);
	ck_assert_int_eq(r.rc, ERR_OK);
}
END_TEST

static const char chunk_body[] = "\xEF\xBB\xBF"
				 "# comment\r\n"
				 "+1 qid:3 1:0.2385 4:-1.5e-3 # c\r\n"
				 "-1\t2:17 3:0\r\n"
				 "0.5 qid:12 1:1 2:2 3:3 4:4\r\n"
				 "\r\n";

START_TEST(test_every_chunking)
{
	struct result whole, r;
	size_t len = strlen(chunk_body);

	parse_with(&whole, chunk_body, len, 4, true, 64, len, 0, 0);
	ck_assert_int_eq(whole.rc, ERR_OK);
	ck_assert_uint_eq(whole.nrows, 3);
	ck_assert_uint_eq(whole.lines[0], 2);
	ck_assert_uint_eq(whole.groups[0], 3);
	ck_assert_uint_eq(whole.nnz[1], 1);
	ck_assert_uint_eq(whole.nnz[2], 4);
	ck_assert_uint_eq(whole.groups[2], 12);
	for (size_t first = 0; first <= len; first++) {
		parse_with(&r, chunk_body, len, 4, true, 64, first, 0, 0);
		assert_same_rows(&whole, &r);
		parse_with(&r, chunk_body, len, 4, true, 64, first, 1, 0);
		assert_same_rows(&whole, &r);
		parse_with(&r, chunk_body, len, 4, true, 64, first, 3, 0);
		assert_same_rows(&whole, &r);
	}
}
END_TEST

START_TEST(test_every_chunking_error)
{
	static const char body[] = "1 1:2\n-1 qid:1 2:3 2:4\n1 1:1\n";
	struct result whole, r;
	size_t len = strlen(body);

	parse_with(&whole, body, len, 4, true, 64, len, 0, 0);
	assert_refused(&whole, 2, 4);
	ck_assert_uint_eq(whole.nrows, 1);
	for (size_t first = 0; first <= len; first++) {
		parse_with(&r, body, len, 4, true, 64, first, 1, 0);
		assert_same_rows(&whole, &r);
		ck_assert_str_eq(r.e.msg, whole.e.msg);
	}
}
END_TEST

START_TEST(test_callback_error)
{
	struct result r;

	parse_with(&r, "1 1:2\n-1 2:3\n1 1:1\n", 18, 4, true, 64, 18, 0, 2);
	ck_assert_int_eq(r.rc, ERR_DB);
	ck_assert_uint_eq(r.nrows, 1);
	ck_assert_uint_eq(r.err_line, 2);
	ck_assert_uint_eq(r.err_entry, 0);
	ck_assert_msg_has(&r, "store failed at line 2");
}
END_TEST

START_TEST(test_sticky)
{
	struct libsvm_parser p;
	struct result r;
	struct err e;

	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(libsvm_parser_init(&p, 4, true, 64, collect, &r, &e), ERR_OK);
	ck_assert_int_eq(libsvm_parser_feed(&p, "1 1:2\n1 9:1\n", 12, &e), ERR_INVALID);
	ck_assert_uint_eq(p.err_line, 2);
	ck_assert_int_eq(libsvm_parser_feed(&p, "1 1:2\n", 6, &e), ERR_INVALID);
	ck_assert_str_eq(e.msg, "line 2: the data was already refused");
	ck_assert_int_eq(libsvm_parser_finish(&p, &e), ERR_INVALID);
	ck_assert_str_eq(e.msg, "line 2: the data was already refused");
	ck_assert_uint_eq(r.nrows, 1);
	libsvm_parser_clear(&p);

	/* a callback error is sticky with its own code */
	memset(&r, 0, sizeof(r));
	r.fail_at = 1;
	ck_assert_int_eq(libsvm_parser_init(&p, 4, true, 64, collect, &r, &e), ERR_OK);
	ck_assert_int_eq(libsvm_parser_feed(&p, "1 1:2\n", 6, &e), ERR_DB);
	ck_assert_int_eq(libsvm_parser_finish(&p, &e), ERR_DB);
	libsvm_parser_clear(&p);
}
END_TEST

START_TEST(test_message_bounded)
{
	char body[600];
	struct result r;

	memset(body, 'x', sizeof(body) - 1);
	body[0] = '1';
	body[1] = ' ';
	body[2] = '1';
	body[3] = ':';
	body[sizeof(body) - 1] = '\0';
	parse_with(&r, body, strlen(body), 4, true, 1024, strlen(body), 0, 0);
	assert_refused(&r, 1, 2);
	ck_assert_msg_has(&r, "...\"");
}
END_TEST

START_TEST(test_clear_zeroed)
{
	struct libsvm_parser p;

	memset(&p, 0, sizeof(p));
	libsvm_parser_clear(&p);
	libsvm_parser_clear(&p);
}
END_TEST

static Suite *
libsvm_suite(void)
{
	Suite *s = suite_create("libsvm");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_basic);
	tcase_add_test(tc, test_zeros_dropped);
	tcase_add_test(tc, test_qid);
	tcase_add_test(tc, test_unlabeled);
	tcase_add_test(tc, test_comments);
	tcase_add_test(tc, test_bom_crlf_final);
	tcase_add_test(tc, test_bad_indices);
	tcase_add_test(tc, test_bad_numbers);
	tcase_add_test(tc, test_pairs_one_pass);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_blank_in_middle);
	tcase_add_test(tc, test_empty_body);
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_every_chunking);
	tcase_add_test(tc, test_every_chunking_error);
	tcase_add_test(tc, test_callback_error);
	tcase_add_test(tc, test_sticky);
	tcase_add_test(tc, test_message_bounded);
	tcase_add_test(tc, test_clear_zeroed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(libsvm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
