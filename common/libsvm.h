/*
 * libsvm.h - a streaming, all-or-nothing parser for LIBSVM (SVMlight)
 * text uploads of sparse rows.
 *
 * The same shape and guarantees as csv.h: the body arrives in chunks of
 * any size, the parser calls the row callback once per data line, never
 * holds more than one line (at most max_line_bytes) in memory, and the
 * first error stops it for good (the caller rolls back what it stored).
 *
 * A line is
 *
 *     <label> [qid:<group>] <index>:<value> <index>:<value> ... [# comment]
 *
 * with tokens separated by blanks (spaces, tabs).  Without a label
 * (labeled = false, for unlabeled schemas) the line starts with the
 * optional qid or directly with the pairs.  Rules:
 *   - label and values are finite decimal numbers (decimal.h: no NaN, Inf,
 *     hex, or overflow); the label's kind (+-1, class index, range) is the
 *     caller's to check, not the parser's;
 *   - indices are 1-based decimal integers (digits only), strictly
 *     increasing along the line and at most d; the callback gets them
 *     0-based;
 *   - qid is an integer in [0, 2^32) and comes before the first pair;
 *   - explicit zero values are checked like any value, then dropped: the
 *     callback sees only non-zero values (nnz counts those), as CSR wants;
 *   - everything from the first '#' on a line is a comment; a line with
 *     nothing but a comment is skipped, wherever it is;
 *   - an unlabeled row whose values are all zero must still spell one
 *     pair ("1:0") or its qid: an empty line is a blank line.
 * Accepted around them: an optional UTF-8 byte-order mark, LF or CRLF line
 * ends, a missing final newline, blank lines at the end.  Refused
 * (ERR_INVALID, field "data", the message names the line and the 1-based
 * entry, i.e. the token counted from the label): any break of the rules
 * above, a blank line before a later non-blank line, a line over
 * max_line_bytes, a body without any row.
 */
#ifndef COMMON_LIBSVM_H
#define COMMON_LIBSVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "lines.h"

/* One parsed line; every pointer is borrowed until the callback returns. */
struct libsvm_row {
	double label;        /* 0 when the parser is unlabeled */
	bool has_group;      /* a qid was given */
	uint32_t group;      /* the qid, 0 without one */
	const uint32_t *col; /* nnz 0-based column indices, strictly increasing, < d */
	const double *val;   /* nnz non-zero finite values */
	size_t nnz;
	unsigned long line; /* 1-based line in the body */
};

/* Called once per data line.  Returning an error stops the parser with
 * that error. */
typedef enum err_code (*libsvm_row_fn)(void *ctx, const struct libsvm_row *row, struct err *e);

struct libsvm_parser {
	LINES_MEMBER; /* in: the line assembly (lines.h); line, len, failed, err_line */
	size_t d;     /* declared dimension: indices are 1 .. d */
	bool labeled; /* a line starts with its label */
	libsvm_row_fn on_row;
	void *ctx;               /* borrowed: passed to on_row */
	uint32_t *col;           /* owned: cap entries */
	double *val;             /* owned: cap entries */
	size_t cap;              /* most pairs a line can hold: min(d, max_line_bytes / 2 + 1) */
	unsigned long rows;      /* rows delivered */
	unsigned long err_entry; /* 1-based entry (token) of the error, 0 if none */
};

/* Set up p for dimension d.  ERR_INVALID for d > UINT32_MAX, or d == 0
 * without a label (such a line could hold nothing); ERR_NOMEM. */
enum err_code libsvm_parser_init(struct libsvm_parser *p, size_t d, bool labeled,
				 size_t max_line_bytes, libsvm_row_fn on_row, void *ctx,
				 struct err *e);

/* Feed the next chunk (any size, may split lines, tokens or the BOM). */
enum err_code libsvm_parser_feed(struct libsvm_parser *p, const char *buf, size_t len,
				 struct err *e);

/* End of body: flush the last line; ERR_INVALID when no row came. */
enum err_code libsvm_parser_finish(struct libsvm_parser *p, struct err *e);

/* Free what init allocated; accepts a zeroed or half-built parser. */
void libsvm_parser_clear(struct libsvm_parser *p);

#endif /* COMMON_LIBSVM_H */
