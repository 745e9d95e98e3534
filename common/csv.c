/*
 * csv.c - the streaming numeric CSV parser declared in csv.h.  Bytes are
 * copied into one line buffer (max_line_bytes + 1: room for a CR before
 * the LF, or for the NUL that ends the last cell), lines are found with
 * memchr, cells are split with memchr and converted in place with strtod.
 * Nothing is allocated after csv_parser_init().
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "csv.h"
#include "util.h"

/* At most this many bytes of a cell are quoted back in an error message,
 * and at most CSV_QUOTE_CHARS characters once escaped: the message (160
 * bytes) must keep its closing quote even for the longest line number. */
#define CSV_QUOTE_BYTES 32
#define CSV_QUOTE_CHARS 64

static const unsigned char csv_bom[3] = { 0xef, 0xbb, 0xbf };

enum cell_status {
	CELL_OK,
	CELL_RANGE,       /* a decimal number whose magnitude overflows a double */
	CELL_EMPTY,       /* nothing but blanks (and maybe a pair of quotes) */
	CELL_NOT_NUMBER,  /* anything else that strtod does not consume entirely */
	CELL_NOT_FINITE,  /* nan, inf, infinity in any case */
	CELL_NOT_DECIMAL, /* a hexadecimal float or integer */
};

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

/* Mark p failed with code, at line and column (0 if none); returns code. */
static enum err_code
fail(struct csv_parser *p, enum err_code code, unsigned long line, unsigned long column)
{
	p->failed = true;
	p->fail_code = code;
	p->err_line = line;
	p->err_column = column;
	return code;
}

/* Write a quotable form of s[0..n) into out (CSV_QUOTE_CHARS + 4 bytes):
 * at most CSV_QUOTE_BYTES bytes, quotes and backslashes escaped, other
 * non-printable bytes as \xNN, and "..." if cut short. */
static void
quote_cell(char *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	size_t i;

	for (i = 0; i < n && i < CSV_QUOTE_BYTES; i++) {
		unsigned char c = (unsigned char)s[i];
		bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
		size_t need = plain ? 1 : (c == '"' || c == '\\') ? 2 : 4;

		if (o + need > CSV_QUOTE_CHARS)
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

static enum err_code
cell_error(struct csv_parser *p, unsigned long line, unsigned long col, enum cell_status st,
	   const char *s, size_t n, struct err *e)
{
	char q[CSV_QUOTE_CHARS + 4];
	const char *what = "not a number";

	fail(p, ERR_INVALID, line, col);
	switch (st) { /* no default: -Wswitch flags a new status left out */
	case CELL_EMPTY:
		return err_set_field(e, ERR_INVALID, "data", "line %lu, column %lu: empty cell",
				     line, col);
	case CELL_RANGE:
		what = "number out of range";
		break;
	case CELL_NOT_FINITE:
		what = "not a finite number";
		break;
	case CELL_NOT_DECIMAL:
		what = "not a decimal number";
		break;
	case CELL_OK:
	case CELL_NOT_NUMBER:
		break;
	}
	quote_cell(q, s, n);
	return err_set_field(e, ERR_INVALID, "data", "line %lu, column %lu: %s: \"%s\"", line, col,
			     what, q);
}

static enum err_code
too_long(struct csv_parser *p, struct err *e)
{
	unsigned long line = p->lineno + 1;

	fail(p, ERR_INVALID, line, 0);
	return err_set_field(e, ERR_INVALID, "data", "line %lu: longer than %zu bytes", line,
			     p->max_line_bytes);
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

/* Convert the cell s[0..end).  Blanks and one pair of surrounding double
 * quotes (and blanks inside them) are dropped first; *qs and *qn get what is
 * left, for an error message.  May write a NUL at the trimmed end, which
 * is at most end itself. */
static enum cell_status
parse_cell(char *s, char *end, double *out, const char **qs, size_t *qn)
{
	const char *d;
	char *stop;
	double v;

	while (s < end && is_blank(*s))
		s++;
	while (end > s && is_blank(end[-1]))
		end--;
	if (end - s >= 2 && *s == '"' && end[-1] == '"') {
		s++;
		end--;
		while (s < end && is_blank(*s))
			s++;
		while (end > s && is_blank(end[-1]))
			end--;
	}
	*qs = s;
	*qn = (size_t)(end - s);
	if (s == end)
		return CELL_EMPTY;
	*end = '\0';

	/* strtod would also skip leading white space and read hex, NaN and
	 * Inf: only a digit or a point may follow the sign. */
	d = s;
	if (*d == '+' || *d == '-')
		d++;
	if (!is_digit(*d) && *d != '.')
		return is_nonfinite_word(d) ? CELL_NOT_FINITE : CELL_NOT_NUMBER;
	if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
		return CELL_NOT_DECIMAL;

	errno = 0;
	v = strtod(s, &stop);
	if (stop != end) /* also catches a NUL byte inside the cell */
		return CELL_NOT_NUMBER;
	if (errno == ERANGE && isinf(v)) /* overflow to +-HUGE_VAL */
		return CELL_RANGE;
	*out = v; /* an underflow to zero or a subnormal is accepted */
	return CELL_OK;
}

static enum err_code
count_error(struct csv_parser *p, unsigned long line, size_t found, bool more, struct err *e)
{
	if (more) {
		fail(p, ERR_INVALID, line, (unsigned long)p->ncols + 1);
		return err_set_field(e, ERR_INVALID, "data",
				     "line %lu, column %lu: expected %zu cells, found %zu", line,
				     (unsigned long)p->ncols + 1, p->ncols, found);
	}
	fail(p, ERR_INVALID, line, (unsigned long)found + 1);
	return err_set_field(e, ERR_INVALID, "data",
			     "line %lu, column %lu: expected %zu cells, found %zu", line,
			     (unsigned long)found + 1, p->ncols, found);
}

/* Split and convert a non-empty line s[0..len) (s[len] is writable) and
 * deliver it, or take it as the header. */
static enum err_code
parse_line(struct csv_parser *p, char *s, size_t len, unsigned long line, struct err *e)
{
	bool first = !p->header_checked; /* classify instead of failing fast */
	char *lend = s + len;
	char *pos = s;
	size_t col = 0;
	size_t numeric = 0;
	size_t bad_col = 0;
	enum cell_status bad_st = CELL_OK;
	const char *bad_s = NULL;
	size_t bad_n = 0;
	bool more = false;

	for (;;) {
		char *comma = memchr(pos, ',', (size_t)(lend - pos));
		char *cend = comma != NULL ? comma : lend;
		enum cell_status st;
		const char *qs;
		size_t qn;

		if (col == p->ncols) {
			more = true;
			break;
		}
		st = parse_cell(pos, cend, &p->cells[col], &qs, &qn);
		col++;
		if (st == CELL_OK || st == CELL_RANGE)
			numeric++;
		if (st != CELL_OK && bad_col == 0) {
			if (!first)
				return cell_error(p, line, col, st, qs, qn, e);
			bad_col = col;
			bad_st = st;
			bad_s = qs;
			bad_n = qn;
		}
		if (comma == NULL)
			break;
		pos = comma + 1;
	}

	if (more) {
		size_t found = col + 1;
		const char *c = pos;

		while ((c = memchr(c, ',', (size_t)(lend - c))) != NULL) {
			found++;
			c++;
		}
		if (first && numeric == 0) /* a header with the wrong width */
			return count_error(p, line, found, true, e);
		if (bad_col != 0)
			return cell_error(p, line, bad_col, bad_st, bad_s, bad_n, e);
		return count_error(p, line, found, true, e);
	}
	if (first && numeric == 0) {
		if (col != p->ncols)
			return count_error(p, line, col, false, e);
		p->header_checked = true;
		return ERR_OK;
	}
	if (bad_col != 0)
		return cell_error(p, line, bad_col, bad_st, bad_s, bad_n, e);
	if (col != p->ncols)
		return count_error(p, line, col, false, e);

	p->header_checked = true;
	if (p->on_row != NULL) {
		enum err_code rc = p->on_row(p->ctx, p->cells, p->ncols, line, e);

		if (rc != ERR_OK)
			return fail(p, rc, line, 0);
	}
	p->rows++;
	return ERR_OK;
}

/* The line in p->line is complete (its LF, if any, already dropped). */
static enum err_code
end_line(struct csv_parser *p, struct err *e)
{
	unsigned long line = p->lineno + 1;
	size_t len = p->len;
	size_t i;
	enum err_code rc;

	p->len = 0;
	if (len > 0 && p->line[len - 1] == '\r')
		len--;
	if (len > p->max_line_bytes) /* cannot happen: append() caps it */
		return too_long(p, e);

	for (i = 0; i < len && is_blank(p->line[i]); i++)
		;
	if (i == len) {
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

	rc = parse_line(p, p->line, len, line, e);
	if (rc != ERR_OK)
		return rc;
	p->lineno++;
	return ERR_OK;
}

/* Add src[0..n) to the line being assembled, failing as soon as it is
 * certain to exceed max_line_bytes (one extra byte is held for a CR). */
static enum err_code
append(struct csv_parser *p, const char *src, size_t n, struct err *e)
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
sticky(struct csv_parser *p, struct err *e)
{
	enum err_code code = p->fail_code != ERR_OK ? p->fail_code : ERR_INVALID;

	if (p->err_line != 0)
		return err_set_field(e, code, "data", "line %lu: the data was already refused",
				     p->err_line);
	return err_set_field(e, code, "data", "the data was already refused");
}

enum err_code
csv_parser_init(struct csv_parser *p, size_t ncols, size_t max_line_bytes, csv_row_fn on_row,
		void *ctx, struct err *e)
{
	size_t cells_bytes;

	memset(p, 0, sizeof(*p));
	if (ncols == 0)
		return err_set(e, ERR_INVALID, "a csv row needs at least one column");
	if (max_line_bytes >= SIZE_MAX - 1 || !size_mul(ncols, sizeof(double), &cells_bytes))
		return err_set(e, ERR_NOMEM, "csv parser buffers too large");
	p->line = malloc(max_line_bytes + 1);
	p->cells = malloc(cells_bytes);
	if (p->line == NULL || p->cells == NULL) {
		csv_parser_clear(p);
		return err_set(e, ERR_NOMEM, "out of memory for the csv parser");
	}
	p->ncols = ncols;
	p->max_line_bytes = max_line_bytes;
	p->on_row = on_row;
	p->ctx = ctx;
	return ERR_OK;
}

enum err_code
csv_parser_feed(struct csv_parser *p, const char *buf, size_t len, struct err *e)
{
	enum err_code rc;

	if (p->failed)
		return sticky(p, e);

	if (!p->started) {
		while (len > 0 && p->bom_seen < sizeof(csv_bom) &&
		       (unsigned char)*buf == csv_bom[p->bom_seen]) {
			p->bom_seen++;
			buf++;
			len--;
		}
		if (len == 0 && p->bom_seen < sizeof(csv_bom))
			return ERR_OK; /* still a possible BOM */
		p->started = true;
		if (p->bom_seen < sizeof(csv_bom)) { /* a false start: those bytes are data */
			rc = append(p, (const char *)csv_bom, p->bom_seen, e);
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
csv_parser_finish(struct csv_parser *p, struct err *e)
{
	enum err_code rc;

	if (p->failed)
		return sticky(p, e);

	if (!p->started) {
		p->started = true;
		if (p->bom_seen < sizeof(csv_bom)) {
			rc = append(p, (const char *)csv_bom, p->bom_seen, e);
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
csv_parser_clear(struct csv_parser *p)
{
	free(p->line);
	free(p->cells);
	memset(p, 0, sizeof(*p));
}
