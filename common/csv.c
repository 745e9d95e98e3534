/*
 * csv.c - the streaming numeric CSV parser declared in csv.h.  lines.c
 * assembles the lines (BOM, CRLF, blank lines, length, sticky failure);
 * here each line is split into cells with memchr and converted in place
 * (decimal_parse), using the byte after the line for the NUL that ends
 * the last cell.  Nothing is allocated after csv_parser_init() and
 * csv_parser_set_labels().
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "decimal.h"
#include "util.h"

/* The labels of one label column (csv_parser_set_labels), copied. */
struct csv_label_col {
	size_t count;   /* labels; cells may also be indices 0 .. count - 1 */
	char **label;   /* owned: count NUL-terminated copies, in index order */
	size_t *len;    /* owned: their lengths */
	size_t *sorted; /* owned: indices ordered by label bytes, for bsearch */
};

enum cell_status {
	CELL_OK,
	CELL_RANGE,       /* a decimal number whose magnitude overflows a double */
	CELL_EMPTY,       /* nothing but blanks (and maybe a pair of quotes) */
	CELL_NOT_NUMBER,  /* anything else that strtod does not consume entirely */
	CELL_NOT_FINITE,  /* nan, inf, infinity in any case */
	CELL_NOT_DECIMAL, /* a hexadecimal float or integer */
	CELL_NOT_LABEL,   /* label column: neither a label nor a number */
	CELL_BAD_INDEX,   /* label column: a number that is not an index 0 .. count - 1 */
};

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Compare a[0..an) with b[0..bn) as byte strings. */
static int
bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	if (c != 0)
		return c;
	return an < bn ? -1 : an > bn ? 1 : 0;
}

/* The index of the label s[0..n) in lc, or -1. */
static long
label_find(const struct csv_label_col *lc, const char *s, size_t n)
{
	size_t lo = 0, hi = lc->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		size_t k = lc->sorted[mid];
		int c = bytes_cmp(s, n, lc->label[k], lc->len[k]);

		if (c == 0)
			return (long)k;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* Write "Allowed in column C: "a", "b", ..., or an index 0 to K-1." as the
 * error's detail, cut short to fit. */
static void
label_detail(const struct csv_label_col *lc, unsigned long col, struct err *e)
{
	char list[200];
	size_t o = 0;

	list[0] = '\0';
	for (size_t i = 0; i < lc->count; i++) {
		char q[DECIMAL_QUOTE_SIZE];
		int n;

		decimal_quote(q, lc->label[i], lc->len[i]);
		n = snprintf(list + o, sizeof(list) - o, "%s\"%s\"", i == 0 ? "" : ", ", q);
		if (n < 0 || (size_t)n >= sizeof(list) - o - 8) {
			list[o] = '\0';
			snprintf(list + o, sizeof(list) - o, ", ...");
			break;
		}
		o += (size_t)n;
	}
	err_detail(e, "Allowed in column %lu: %s, or an index 0 to %zu.", col, list, lc->count - 1);
}

static enum err_code
cell_error(struct csv_parser *p, unsigned long line, unsigned long col, enum cell_status st,
	   const char *s, size_t n, struct err *e)
{
	const struct csv_label_col *lc = p->label_cols != NULL ? p->label_cols[col - 1] : NULL;
	char q[DECIMAL_QUOTE_SIZE];
	const char *what = "not a number";

	p->err_column = col;
	switch (st) { /* no default: -Wswitch flags a new status left out */
	case CELL_NOT_LABEL:
	case CELL_BAD_INDEX:
		decimal_quote(q, s, n);
		err_set_field(e, ERR_INVALID, "data",
			      "line %lu, column %lu: not one of the %zu labels nor an index 0 to "
			      "%zu: \"%s\"",
			      line, col, lc->count, lc->count - 1, q);
		label_detail(lc, col, e);
		return ERR_INVALID;
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
	decimal_quote(q, s, n);
	return err_set_field(e, ERR_INVALID, "data", "line %lu, column %lu: %s: \"%s\"", line, col,
			     what, q);
}

/* Trim the cell s[0..end): blanks, then one pair of surrounding double
 * quotes and blanks inside them. */
static void
trim_cell(char **s, char **end)
{
	char *a = *s, *b = *end;

	while (a < b && is_blank(*a))
		a++;
	while (b > a && is_blank(b[-1]))
		b--;
	if (b - a >= 2 && *a == '"' && b[-1] == '"') {
		a++;
		b--;
		while (a < b && is_blank(*a))
			a++;
		while (b > a && is_blank(b[-1]))
			b--;
	}
	*s = a;
	*end = b;
}

/* Convert the cell s[0..end) of a column with labels lc (NULL for a plain
 * numeric column).  *qs and *qn get the trimmed text, for an error
 * message.  May write a NUL at the trimmed end, which is at most end. */
static enum cell_status
parse_cell(const struct csv_label_col *lc, char *s, char *end, double *out, const char **qs,
	   size_t *qn)
{
	enum decimal_status st;
	double v = 0.0;
	long k;

	trim_cell(&s, &end);
	*qs = s;
	*qn = (size_t)(end - s);
	if (s == end)
		return CELL_EMPTY;
	if (lc != NULL) {
		/* A label wins over an index that reads the same. */
		k = label_find(lc, s, (size_t)(end - s));
		if (k >= 0) {
			*out = (double)k;
			return CELL_OK;
		}
		st = decimal_parse(s, end, &v);
		if (st == DECIMAL_RANGE)
			return CELL_BAD_INDEX;
		if (st != DECIMAL_OK)
			return CELL_NOT_LABEL;
		if (!(v >= 0.0 && v < (double)lc->count && v == floor(v)))
			return CELL_BAD_INDEX;
		*out = v + 0.0; /* -0 is index 0 */
		return CELL_OK;
	}
	st = decimal_parse(s, end, &v);
	switch (st) { /* no default: -Wswitch flags a new status left out */
	case DECIMAL_OK:
		*out = v;
		return CELL_OK;
	case DECIMAL_RANGE:
		return CELL_RANGE;
	case DECIMAL_EMPTY:
		return CELL_EMPTY;
	case DECIMAL_NOT_NUMBER:
		return CELL_NOT_NUMBER;
	case DECIMAL_NOT_FINITE:
		return CELL_NOT_FINITE;
	case DECIMAL_NOT_DECIMAL:
		return CELL_NOT_DECIMAL;
	}
	return CELL_NOT_NUMBER;
}

static enum err_code
count_error(struct csv_parser *p, unsigned long line, size_t found, bool more, struct err *e)
{
	if (more) {
		p->err_column = (unsigned long)p->ncols + 1;
		return err_set_field(e, ERR_INVALID, "data",
				     "line %lu, column %lu: expected %zu cells, found %zu", line,
				     (unsigned long)p->ncols + 1, p->ncols, found);
	}
	p->err_column = (unsigned long)found + 1;
	return err_set_field(e, ERR_INVALID, "data",
			     "line %lu, column %lu: expected %zu cells, found %zu", line,
			     (unsigned long)found + 1, p->ncols, found);
}

/* Give the kept first line, a header, to on_header cell by cell (split
 * and trimmed as parse_line() does), then drop it. */
static enum err_code
deliver_header(struct csv_parser *p, struct err *e)
{
	char *pos = p->first_line, *lend = p->first_line + p->first_len;
	enum err_code rc = ERR_OK;

	for (size_t col = 0; pos != NULL && rc == ERR_OK; col++) {
		char *comma = memchr(pos, ',', (size_t)(lend - pos));
		char *a = pos, *b = comma != NULL ? comma : lend;

		trim_cell(&a, &b);
		rc = p->on_header(p->header_ctx, col, a, (size_t)(b - a), e);
		pos = comma != NULL ? comma + 1 : NULL;
	}
	free(p->first_line);
	p->first_line = NULL;
	return rc;
}

/* The lines_fn: split and convert the non-blank line s[0..len) (s[len]
 * is writable) and deliver it, or take it as the header.  An error sets
 * err_column where it has one; lines.c records the line. */
static enum err_code
parse_line(void *ctx, char *s, size_t len, unsigned long line, struct err *e)
{
	struct csv_parser *p = ctx;
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

	/* Parsing may overwrite the line: keep the first one for its header. */
	if (first && p->on_header != NULL && p->first_line == NULL) {
		p->first_line = malloc(len + 1);
		if (p->first_line == NULL)
			return err_set(e, ERR_NOMEM, "out of memory for the csv header");
		memcpy(p->first_line, s, len);
		p->first_line[len] = '\0';
		p->first_len = len;
	}
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
		st = parse_cell(p->label_cols != NULL ? p->label_cols[col] : NULL, pos, cend,
				&p->cells[col], &qs, &qn);
		col++;
		/* Evidence of a data row (see csv.h): a number anywhere, or a
		 * declared label in a label column. */
		if (st == CELL_OK || st == CELL_RANGE || st == CELL_BAD_INDEX)
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
		return deliver_header(p, e);
	}
	if (bad_col != 0)
		return cell_error(p, line, bad_col, bad_st, bad_s, bad_n, e);
	if (col != p->ncols)
		return count_error(p, line, col, false, e);

	p->header_checked = true;
	free(p->first_line); /* a data row: no header */
	p->first_line = NULL;
	if (p->on_row != NULL) {
		enum err_code rc = p->on_row(p->ctx, p->cells, p->ncols, line, e);

		if (rc != ERR_OK)
			return rc;
	}
	p->rows++;
	return ERR_OK;
}

enum err_code
csv_parser_init(struct csv_parser *p, size_t ncols, size_t max_line_bytes, csv_row_fn on_row,
		void *ctx, struct err *e)
{
	size_t cells_bytes;
	enum err_code rc;

	memset(p, 0, sizeof(*p));
	if (ncols == 0)
		return err_set(e, ERR_INVALID, "a csv row needs at least one column");
	if (max_line_bytes >= SIZE_MAX - 1 || !size_mul(ncols, sizeof(double), &cells_bytes))
		return err_set(e, ERR_NOMEM, "csv parser buffers too large");
	rc = lines_init(&p->in, max_line_bytes);
	p->cells = malloc(cells_bytes);
	if (rc != ERR_OK || p->cells == NULL) {
		csv_parser_clear(p);
		return err_set(e, ERR_NOMEM, "out of memory for the csv parser");
	}
	p->ncols = ncols;
	p->on_row = on_row;
	p->ctx = ctx;
	return ERR_OK;
}

enum err_code
csv_parser_feed(struct csv_parser *p, const char *buf, size_t len, struct err *e)
{
	return lines_feed(&p->in, buf, len, parse_line, p, e);
}

enum err_code
csv_parser_finish(struct csv_parser *p, struct err *e)
{
	return lines_finish(&p->in, parse_line, p, &p->rows, e);
}

static void
label_col_free(struct csv_label_col *lc)
{
	if (lc == NULL)
		return;
	for (size_t i = 0; lc->label != NULL && i < lc->count; i++)
		free(lc->label[i]);
	free(lc->label);
	free(lc->len);
	free(lc->sorted);
	free(lc);
}

/* True when some cell, after trimming and unquoting, can spell s. */
static bool
is_spellable(const char *s, size_t n)
{
	if (n == 0 || is_blank(s[0]) || is_blank(s[n - 1]))
		return false;
	return memchr(s, ',', n) == NULL && memchr(s, '"', n) == NULL &&
	       memchr(s, '\r', n) == NULL && memchr(s, '\n', n) == NULL;
}

/* Order lc->sorted by label bytes; false on a duplicate.  A Shell sort:
 * qsort() has no context argument to reach the labels through. */
static bool
sort_labels(struct csv_label_col *lc)
{
	for (size_t i = 0; i < lc->count; i++)
		lc->sorted[i] = i;
	for (size_t gap = lc->count / 2; gap > 0; gap /= 2) {
		for (size_t i = gap; i < lc->count; i++) {
			size_t k = lc->sorted[i];
			size_t j = i;

			while (j >= gap && bytes_cmp(lc->label[lc->sorted[j - gap]],
						     lc->len[lc->sorted[j - gap]], lc->label[k],
						     lc->len[k]) > 0) {
				lc->sorted[j] = lc->sorted[j - gap];
				j -= gap;
			}
			lc->sorted[j] = k;
		}
	}
	for (size_t i = 1; i < lc->count; i++) {
		size_t a = lc->sorted[i - 1], b = lc->sorted[i];

		if (bytes_cmp(lc->label[a], lc->len[a], lc->label[b], lc->len[b]) == 0)
			return false;
	}
	return true;
}

enum err_code
csv_parser_set_labels(struct csv_parser *p, size_t col, const char *const *labels, size_t count,
		      struct err *e)
{
	struct csv_label_col *lc;
	enum err_code rc = ERR_OK;

	if (lines_begun(&p->in))
		return err_set(e, ERR_INVALID, "csv labels must be set before the first chunk");
	if (col >= p->ncols)
		return err_set(e, ERR_INVALID, "csv label column %zu is not below %zu", col,
			       p->ncols);
	if (count == 0 || count > LONG_MAX)
		return err_set(e, ERR_INVALID, "csv label column %zu needs at least one label",
			       col);
	if (p->label_cols == NULL) {
		p->label_cols = calloc(p->ncols, sizeof(*p->label_cols));
		if (p->label_cols == NULL)
			return err_set(e, ERR_NOMEM, "out of memory for csv labels");
	}
	lc = calloc(1, sizeof(*lc));
	if (lc == NULL)
		return err_set(e, ERR_NOMEM, "out of memory for csv labels");
	lc->count = count;
	lc->label = calloc(count, sizeof(*lc->label));
	lc->len = calloc(count, sizeof(*lc->len));
	lc->sorted = calloc(count, sizeof(*lc->sorted));
	if (lc->label == NULL || lc->len == NULL || lc->sorted == NULL) {
		rc = err_set(e, ERR_NOMEM, "out of memory for csv labels");
		goto out_free;
	}
	for (size_t i = 0; i < count; i++) {
		size_t n = strlen(labels[i]);

		if (!is_spellable(labels[i], n)) {
			rc = err_set(e, ERR_INVALID,
				     "csv label %zu of column %zu is empty, has blanks at an end "
				     "or holds a comma, a quote or a line break",
				     i, col);
			goto out_free;
		}
		lc->label[i] = malloc(n + 1);
		if (lc->label[i] == NULL) {
			rc = err_set(e, ERR_NOMEM, "out of memory for csv labels");
			goto out_free;
		}
		memcpy(lc->label[i], labels[i], n + 1);
		lc->len[i] = n;
	}
	if (!sort_labels(lc)) {
		rc = err_set(e, ERR_INVALID, "csv label column %zu has a duplicate label", col);
		goto out_free;
	}
	label_col_free(p->label_cols[col]);
	p->label_cols[col] = lc;
	return ERR_OK;

out_free:
	label_col_free(lc);
	return rc;
}

void
csv_parser_clear(struct csv_parser *p)
{
	lines_clear(&p->in);
	free(p->cells);
	for (size_t i = 0; p->label_cols != NULL && i < p->ncols; i++)
		label_col_free(p->label_cols[i]);
	free(p->label_cols);
	free(p->first_line);
	memset(p, 0, sizeof(*p));
}
