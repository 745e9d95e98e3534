/*
 * libsvm.c - the streaming LIBSVM parser declared in libsvm.h.  lines.c
 * assembles the lines (BOM, CRLF, blank lines, length, sticky failure),
 * as for csv.c; here a complete line is cut at its first '#' and split
 * into blank-separated tokens, converted in place.  Nothing is allocated
 * after libsvm_parser_init().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "libsvm.h"
#include "util.h"

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool
is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

/* Refuse the token s[0..n), entry `entry` of line `line`: "line L, entry
 * K: WHAT: "token"". */
static enum err_code
token_error(struct libsvm_parser *p, unsigned long line, unsigned long entry, const char *what,
	    const char *s, size_t n, struct err *e)
{
	char q[DECIMAL_QUOTE_SIZE];

	p->err_entry = entry;
	decimal_quote(q, s, n);
	return err_set_field(e, ERR_INVALID, "data", "line %lu, entry %lu: %s: \"%s\"", line, entry,
			     what, q);
}

/* A number token s[0..end) (end writable); what names it ("label",
 * "value") in an error. */
static enum err_code
number(struct libsvm_parser *p, unsigned long line, unsigned long entry, const char *what, char *s,
       char *end, double *ret, struct err *e)
{
	enum decimal_status st = decimal_parse(s, end, ret);
	char msg[48];

	if (st == DECIMAL_OK)
		return ERR_OK;
	snprintf(msg, sizeof(msg), "%s is %s", what, decimal_status_text(st));
	return token_error(p, line, entry, msg, s, (size_t)(end - s), e);
}

enum uint_status {
	UINT_OK,
	UINT_NOT_DIGITS, /* empty, or a byte that is not a digit */
	UINT_TOO_BIG,    /* digits only, over max */
};

/* Read the digits s[0..n) as an unsigned integer of at most max. */
static enum uint_status
read_uint(const char *s, size_t n, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;
	bool big = false;

	if (n == 0)
		return UINT_NOT_DIGITS;
	for (size_t i = 0; i < n; i++) {
		unsigned dg = (unsigned char)(s[i] - '0');

		if (dg > 9)
			return UINT_NOT_DIGITS;
		if (big || v > (max - dg) / 10)
			big = true;
		else
			v = v * 10 + dg;
	}
	if (big)
		return UINT_TOO_BIG;
	*ret = v;
	return UINT_OK;
}

/* Split and convert the non-empty, comment-free line s[0..len) (s[len]
 * is writable) and deliver it. */
static enum err_code
parse_line(struct libsvm_parser *p, char *s, size_t len, unsigned long line, struct err *e)
{
	struct libsvm_row row = { .line = line };
	char *lend = s + len;
	char *pos = s;
	unsigned long entry = 0;
	size_t nnz = 0;
	bool pairs = false; /* a pair was seen (zero or not) */
	uint64_t prev = 0;  /* the previous index, 0 before the first */
	enum err_code rc;

	for (;;) {
		char *tok, *tend, *colon;
		enum uint_status ust;
		uint64_t idx;
		double v;

		while (pos < lend && is_blank(*pos))
			pos++;
		if (pos == lend)
			break;
		if (entry > 0 || !p->labeled) {
			/* The fast path: a valid "index:value" in one pass, no copy,
			 * no NUL written.  Anything else, every error included, takes
			 * the general path below, which gives the same result and
			 * names the fault. */
			const char *q = pos, *vend;
			uint64_t fi = 0;
			int nd = 0;

			nd = decimal_uint8(q, lend, ':', &fi);
			q += nd;
			if (nd == 0)
				for (; q < lend && is_digit(*q) && nd < 19; q++, nd++)
					fi = fi * 10 + (uint64_t)(*q - '0');
			if (nd > 0 && q < lend && *q == ':' && fi > prev && fi <= p->d &&
			    nnz < p->cap && (vend = decimal_scan_fast(q + 1, lend, &v)) != NULL &&
			    (vend == lend || is_blank(*vend))) {
				entry++;
				pairs = true;
				prev = fi;
				pos = s + (vend - s);
				if (v == 0.0)
					continue; /* dropped, as below */
				p->col[nnz] = (uint32_t)(fi - 1);
				p->val[nnz] = v;
				nnz++;
				continue;
			}
		}
		tok = pos;
		while (pos < lend && !is_blank(*pos))
			pos++;
		tend = pos;
		entry++;
		colon = memchr(tok, ':', (size_t)(tend - tok));

		if (entry == 1 && p->labeled) {
			if (colon != NULL)
				return token_error(p, line, entry,
						   "expected a label before the features", tok,
						   (size_t)(tend - tok), e);
			rc = number(p, line, entry, "label", tok, tend, &row.label, e);
			if (rc != ERR_OK)
				return rc;
			if (pos < lend)
				pos++; /* past the blank number() overwrote */
			continue;
		}
		if (tend - tok >= 4 && memcmp(tok, "qid:", 4) == 0) {
			if (row.has_group)
				return token_error(p, line, entry, "qid given twice", tok,
						   (size_t)(tend - tok), e);
			if (pairs)
				return token_error(p, line, entry,
						   "qid must come before the features", tok,
						   (size_t)(tend - tok), e);
			if (read_uint(tok + 4, (size_t)(tend - tok - 4), UINT32_MAX, &idx) !=
			    UINT_OK)
				return token_error(p, line, entry,
						   "qid is not an integer in [0, 4294967295]", tok,
						   (size_t)(tend - tok), e);
			row.has_group = true;
			row.group = (uint32_t)idx;
			continue;
		}
		if (colon == NULL)
			return token_error(p, line, entry, "expected index:value", tok,
					   (size_t)(tend - tok), e);
		ust = read_uint(tok, (size_t)(colon - tok), UINT64_MAX, &idx);
		if (ust == UINT_NOT_DIGITS || (ust == UINT_OK && idx == 0))
			return token_error(p, line, entry, "index is not a positive integer", tok,
					   (size_t)(tend - tok), e);
		if (ust == UINT_TOO_BIG || idx > p->d) {
			char msg[64];

			snprintf(msg, sizeof(msg), "index exceeds the dimension %zu", p->d);
			return token_error(p, line, entry, msg, tok, (size_t)(tend - tok), e);
		}
		if (idx == prev)
			return token_error(p, line, entry, "duplicate index", tok,
					   (size_t)(tend - tok), e);
		if (idx < prev)
			return token_error(p, line, entry, "indices must be strictly increasing",
					   tok, (size_t)(tend - tok), e);
		rc = number(p, line, entry, "value", colon + 1, tend, &v, e);
		if (rc != ERR_OK)
			return rc;
		if (pos < lend)
			pos++; /* past the blank number() overwrote */
		pairs = true;
		prev = idx;
		if (v == 0.0)
			continue;  /* checked, then dropped: CSR holds non-zeros */
		if (nnz == p->cap) /* cannot happen: cap bounds any valid line */
			return token_error(p, line, entry, "too many entries", tok,
					   (size_t)(tend - tok), e);
		p->col[nnz] = (uint32_t)(idx - 1);
		p->val[nnz] = v;
		nnz++;
	}

	row.col = p->col;
	row.val = p->val;
	row.nnz = nnz;
	if (p->on_row != NULL) {
		rc = p->on_row(p->ctx, &row, e);
		if (rc != ERR_OK)
			return rc;
	}
	p->rows++;
	return ERR_OK;
}

/* The lines_fn: cut the non-blank line s[0..len) at its first '#' and
 * parse what is left, unless that is blank too (a comment line).  An
 * error sets err_entry where it has one; lines.c records the line. */
static enum err_code
parse_comment_line(void *ctx, char *s, size_t len, unsigned long line, struct err *e)
{
	char *hash = memchr(s, '#', len);
	size_t i;

	if (hash != NULL)
		len = (size_t)(hash - s);
	for (i = 0; i < len && is_blank(s[i]); i++)
		;
	if (i == len)
		return ERR_OK;
	return parse_line(ctx, s, len, line, e);
}

enum err_code
libsvm_parser_init(struct libsvm_parser *p, size_t d, bool labeled, size_t max_line_bytes,
		   libsvm_row_fn on_row, void *ctx, struct err *e)
{
	size_t cap;
	enum err_code rc;

	memset(p, 0, sizeof(*p));
	if (d > UINT32_MAX)
		return err_set(e, ERR_INVALID, "a libsvm dimension must be at most %u", UINT32_MAX);
	if (d == 0 && !labeled)
		return err_set(e, ERR_INVALID, "an unlabeled libsvm body needs a dimension >= 1");
	if (max_line_bytes >= SIZE_MAX - 1)
		return err_set(e, ERR_NOMEM, "libsvm parser buffers too large");
	/* k pairs take at least 3k bytes plus k - 1 blanks. */
	cap = max_line_bytes / 2 + 1;
	if (cap > d)
		cap = d;
	rc = lines_init(&p->in, max_line_bytes);
	p->col = calloc(cap > 0 ? cap : 1, sizeof(*p->col));
	p->val = calloc(cap > 0 ? cap : 1, sizeof(*p->val));
	if (rc != ERR_OK || p->col == NULL || p->val == NULL) {
		libsvm_parser_clear(p);
		return err_set(e, ERR_NOMEM, "out of memory for the libsvm parser");
	}
	p->d = d;
	p->labeled = labeled;
	p->cap = cap;
	p->on_row = on_row;
	p->ctx = ctx;
	return ERR_OK;
}

enum err_code
libsvm_parser_feed(struct libsvm_parser *p, const char *buf, size_t len, struct err *e)
{
	return lines_feed(&p->in, buf, len, parse_comment_line, p, e);
}

enum err_code
libsvm_parser_finish(struct libsvm_parser *p, struct err *e)
{
	return lines_finish(&p->in, parse_comment_line, p, &p->rows, e);
}

void
libsvm_parser_clear(struct libsvm_parser *p)
{
	lines_clear(&p->in);
	free(p->col);
	free(p->val);
	memset(p, 0, sizeof(*p));
}
