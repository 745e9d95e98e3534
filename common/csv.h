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
 */
#ifndef COMMON_CSV_H
#define COMMON_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* Called once per data row; cells has ncols entries, line is 1-based in
 * the body.  Returning an error stops the parser with that error. */
typedef enum err_code (*csv_row_fn)(void *ctx, const double *cells, size_t ncols,
				    unsigned long line, struct err *e);

struct csv_parser {
	size_t ncols;          /* cells every row must have */
	size_t max_line_bytes; /* longest accepted line, terminator excluded */
	csv_row_fn on_row;
	void *ctx;                /* borrowed: passed to on_row */
	char *line;               /* owned: the line being assembled */
	size_t len;               /* bytes in line */
	double *cells;            /* owned: ncols parsed cells */
	unsigned long lineno;     /* lines completed so far */
	unsigned long rows;       /* data rows delivered */
	unsigned bom_seen;        /* bytes of a leading BOM matched so far */
	bool started;             /* past the BOM check */
	bool header_checked;      /* first line has been classified */
	bool pending_blank;       /* an empty line was seen; an error unless at the end */
	bool failed;              /* sticky: a call returned an error */
	unsigned long err_line;   /* 1-based line of the error, 0 if none */
	unsigned long err_column; /* 1-based column (cell) of the error, 0 if none */
	/* private to csv.c */
	unsigned long blank_line; /* first line of the pending run of empty lines */
	enum err_code fail_code;  /* the first error, returned again once failed */
};

/* Set up p.  ERR_NOMEM, or ERR_INVALID for ncols == 0. */
enum err_code csv_parser_init(struct csv_parser *p, size_t ncols, size_t max_line_bytes,
			      csv_row_fn on_row, void *ctx, struct err *e);

/* Feed the next chunk (any size, may split lines, cells or the BOM). */
enum err_code csv_parser_feed(struct csv_parser *p, const char *buf, size_t len, struct err *e);

/* End of body: flush the last line; ERR_INVALID when no data row came. */
enum err_code csv_parser_finish(struct csv_parser *p, struct err *e);

/* Free what init allocated; accepts a zeroed or half-built parser. */
void csv_parser_clear(struct csv_parser *p);

#endif /* COMMON_CSV_H */
