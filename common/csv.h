/*
 * csv.h - a streaming, all-or-nothing parser for numeric CSV uploads.
 *
 * The body of PUT /v1/datasets/{id}/data arrives in chunks of any size;
 * the parser is fed each chunk and calls the row callback once per data
 * row with the row's cells as doubles.  It never holds more than one line
 * (at most max_line_bytes) in memory.  The first error stops it for good:
 * the caller rolls back everything it stored, so no row is ever silently
 * dropped.
 *
 * Accepted: an optional UTF-8 byte-order mark; an optional header row (the
 * first line, if none of its cells is a number); LF or CRLF line ends; a
 * missing final newline; cells with surrounding blanks or double quotes.
 * Refused (ERR_INVALID, the message names line and column): a row with the
 * wrong number of cells, a cell that is not a finite decimal number (NaN
 * and Inf included), an empty line before the end, a line over
 * max_line_bytes, an empty body or a body with a header only.
 *
 * Label columns (csv_parser_set_labels): a cell of such a column is one of
 * the column's labels (exact match after the trimming and unquoting every
 * cell gets) or an integer index 0 .. count - 1 written as a decimal
 * number ("2", "2.0"); the row callback gets the index as a double.  A
 * cell that equals a label is that label, even when it also reads as an
 * index.  Anything else is refused, naming line and column, with the
 * allowed labels in the detail.
 *
 * The header rule, with label columns: the first line is a header when
 * none of its cells is a number and none of its label-column cells is a
 * declared label.  A valid data row always has a number or a label, so it
 * is never taken for a header (no row is silently dropped); a header whose
 * names all happen to be declared labels of their label columns, with no
 * numeric column beside them, is read as data, so do not name a label
 * column after one of its own labels.
 */
#ifndef COMMON_CSV_H
#define COMMON_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "lines.h"

struct csv_label_col; /* private to csv.c */

/* Called once per cell of a header row, in column order (col 0-based),
 * with the cell trimmed and unquoted like a data cell; name is not
 * NUL-terminated.  Returning an error stops the parser with that error. */
typedef enum err_code (*csv_header_fn)(void *ctx, size_t col, const char *name, size_t len,
				       struct err *e);

/* Called once per data row; cells has ncols entries, line is 1-based in
 * the body.  Returning an error stops the parser with that error. */
typedef enum err_code (*csv_row_fn)(void *ctx, const double *cells, size_t ncols,
				    unsigned long line, struct err *e);

struct csv_parser {
	LINES_MEMBER; /* in: the line assembly (lines.h); line, len, failed, err_line */
	size_t ncols; /* cells every row must have */
	csv_row_fn on_row;
	void *ctx;                         /* borrowed: passed to on_row */
	double *cells;                     /* owned: ncols parsed cells */
	struct csv_label_col **label_cols; /* owned: ncols entries (NULL: numeric), or NULL */
	unsigned long rows;                /* data rows delivered */
	bool header_checked;               /* first line has been classified */
	unsigned long err_column;          /* 1-based column (cell) of the error, 0 if none */
	/* Optional, set after init: the header's cells go to on_header. */
	csv_header_fn on_header;
	void *header_ctx; /* borrowed: passed to on_header */
	char *first_line; /* owned: the first line, kept until it is classified */
	size_t first_len;
};

/* Set up p.  ERR_NOMEM, or ERR_INVALID for ncols == 0. */
enum err_code csv_parser_init(struct csv_parser *p, size_t ncols, size_t max_line_bytes,
			      csv_row_fn on_row, void *ctx, struct err *e);

/* Make the 0-based column col a label column with count labels (copied:
 * labels may be freed after the call); replaces labels set before for
 * col.  Call after init and before the first chunk.  ERR_INVALID when col
 * >= ncols, count == 0, a label is duplicated or could never match a cell
 * (empty, blanks at an end, a comma, a double quote, CR or LF), or feeding
 * has started; ERR_NOMEM.  On failure the column is left as it was. */
enum err_code csv_parser_set_labels(struct csv_parser *p, size_t col, const char *const *labels,
				    size_t count, struct err *e);

/* Feed the next chunk (any size, may split lines, cells or the BOM). */
enum err_code csv_parser_feed(struct csv_parser *p, const char *buf, size_t len, struct err *e);

/* End of body: flush the last line; ERR_INVALID when no data row came. */
enum err_code csv_parser_finish(struct csv_parser *p, struct err *e);

/* Free what init allocated; accepts a zeroed or half-built parser. */
void csv_parser_clear(struct csv_parser *p);

#endif /* COMMON_CSV_H */
