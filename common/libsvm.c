/*
 * libsvm.c - the streaming LIBSVM parser declared in libsvm.h.  The line
 * assembly (BOM, CRLF, one line buffer of max_line_bytes + 1, sticky
 * failure) is csv.c's; a complete line is cut at its first '#' and split
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

static const unsigned char libsvm_bom[3] = { 0xef, 0xbb, 0xbf };

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Mark p failed with code, at line and entry (0 if none); returns code. */
static enum err_code
fail(struct libsvm_parser *p, enum err_code code, unsigned long line, unsigned long entry)
{
	p->failed = true;
	p->fail_code = code;
	p->err_line = line;
	p->err_entry = entry;
	return code;
}

/* Refuse the token s[0..n), entry `entry` of line `line`: "line L, entry
 * K: WHAT: "token"". */
static enum err_code
token_error(struct libsvm_parser *p, unsigned long line, unsigned long entry, const char *what,
	    const char *s, size_t n, struct err *e)
{
	char q[DECIMAL_QUOTE_SIZE];

	fail(p, ERR_INVALID, line, entry);
	decimal_quote(q, s, n);
	return err_set_field(e, ERR_INVALID, "data", "line %lu, entry %lu: %s: \"%s\"", line, entry,
			     what, q);
}

static enum err_code
too_long(struct libsvm_parser *p, struct err *e)
{
	unsigned long line = p->lineno + 1;

	fail(p, ERR_INVALID, line, 0);
	return err_set_field(e, ERR_INVALID, "data", "line %lu: longer than %zu bytes", line,
			     p->max_line_bytes);
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
			return fail(p, rc, line, 0);
	}
	p->rows++;
	return ERR_OK;
}

/* The line in p->line is complete (its LF, if any, already dropped). */
static enum err_code
end_line(struct libsvm_parser *p, struct err *e)
{
	unsigned long line = p->lineno + 1;
	size_t len = p->len;
	char *hash;
	bool comment;
	size_t i;
	enum err_code rc;

	p->len = 0;
	if (len > 0 && p->line[len - 1] == '\r')
		len--;
	if (len > p->max_line_bytes) /* cannot happen: append() caps it */
		return too_long(p, e);
	hash = memchr(p->line, '#', len);
	comment = hash != NULL;
	if (comment)
		len = (size_t)(hash - p->line);

	for (i = 0; i < len && is_blank(p->line[i]); i++)
		;
	if (i == len && !comment) {
		if (!p->pending_blank) {
			p->pending_blank = true;
			p->blank_line = line;
		}
		p->lineno++;
		return ERR_OK;
	}
	if (p->pending_blank) {
		fail(p, ERR_INVALID, p->blank_line, 0);
		return err_set_field(e, ERR_INVALID, "data", "line %lu: empty line", p->blank_line);
	}
	if (i < len) {
		rc = parse_line(p, p->line, len, line, e);
		if (rc != ERR_OK)
			return rc;
	}
	p->lineno++;
	return ERR_OK;
}

/* Add src[0..n) to the line being assembled, failing as soon as it is
 * certain to exceed max_line_bytes (one extra byte is held for a CR). */
static enum err_code
append(struct libsvm_parser *p, const char *src, size_t n, struct err *e)
{
	if (n > p->max_line_bytes + 1 - p->len)
		return too_long(p, e);
	memcpy(p->line + p->len, src, n);
	p->len += n;
	if (p->len > p->max_line_bytes && p->line[p->len - 1] != '\r')
		return too_long(p, e);
	return ERR_OK;
}

static enum err_code
sticky(struct libsvm_parser *p, struct err *e)
{
	enum err_code code = p->fail_code != ERR_OK ? p->fail_code : ERR_INVALID;

	if (p->err_line != 0)
		return err_set_field(e, code, "data", "line %lu: the data was already refused",
				     p->err_line);
	return err_set_field(e, code, "data", "the data was already refused");
}

enum err_code
libsvm_parser_init(struct libsvm_parser *p, size_t d, bool labeled, size_t max_line_bytes,
		   libsvm_row_fn on_row, void *ctx, struct err *e)
{
	size_t cap;

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
	p->line = malloc(max_line_bytes + 1);
	p->col = calloc(cap > 0 ? cap : 1, sizeof(*p->col));
	p->val = calloc(cap > 0 ? cap : 1, sizeof(*p->val));
	if (p->line == NULL || p->col == NULL || p->val == NULL) {
		libsvm_parser_clear(p);
		return err_set(e, ERR_NOMEM, "out of memory for the libsvm parser");
	}
	p->d = d;
	p->labeled = labeled;
	p->cap = cap;
	p->max_line_bytes = max_line_bytes;
	p->on_row = on_row;
	p->ctx = ctx;
	return ERR_OK;
}

enum err_code
libsvm_parser_feed(struct libsvm_parser *p, const char *buf, size_t len, struct err *e)
{
	enum err_code rc;

	if (p->failed)
		return sticky(p, e);

	if (!p->started) {
		while (len > 0 && p->bom_seen < sizeof(libsvm_bom) &&
		       (unsigned char)*buf == libsvm_bom[p->bom_seen]) {
			p->bom_seen++;
			buf++;
			len--;
		}
		if (len == 0 && p->bom_seen < sizeof(libsvm_bom))
			return ERR_OK; /* still a possible BOM */
		p->started = true;
		if (p->bom_seen < sizeof(libsvm_bom)) { /* a false start: those bytes are data */
			rc = append(p, (const char *)libsvm_bom, p->bom_seen, e);
			if (rc != ERR_OK)
				return rc;
		}
	}

	while (len > 0) {
		const char *nl = memchr(buf, '\n', len);
		size_t n = nl != NULL ? (size_t)(nl - buf) : len;

		rc = append(p, buf, n, e);
		if (rc != ERR_OK)
			return rc;
		if (nl == NULL)
			break;
		rc = end_line(p, e);
		if (rc != ERR_OK)
			return rc;
		buf += n + 1;
		len -= n + 1;
	}
	return ERR_OK;
}

enum err_code
libsvm_parser_finish(struct libsvm_parser *p, struct err *e)
{
	enum err_code rc;

	if (p->failed)
		return sticky(p, e);

	if (!p->started) {
		p->started = true;
		if (p->bom_seen < sizeof(libsvm_bom)) {
			rc = append(p, (const char *)libsvm_bom, p->bom_seen, e);
			if (rc != ERR_OK)
				return rc;
		}
	}
	if (p->len > 0) {
		rc = end_line(p, e);
		if (rc != ERR_OK)
			return rc;
	}
	if (p->rows == 0) {
		fail(p, ERR_INVALID, 0, 0);
		return err_set_field(e, ERR_INVALID, "data", "no data rows");
	}
	return ERR_OK;
}

void
libsvm_parser_clear(struct libsvm_parser *p)
{
	free(p->line);
	free(p->col);
	free(p->val);
	memset(p, 0, sizeof(*p));
}
