/*
 * lines.h - the line assembly under the streaming upload parsers (csv.c,
 * libsvm.c): chunks of any size in, one complete line at a time out.
 *
 * A parser embeds a struct lines, feeds it each chunk with its own line
 * callback, and keeps only its grammar.  The chunks may split a line, a
 * CRLF or the optional UTF-8 byte-order mark anywhere.  Bytes are copied
 * into one buffer of max_line_bytes + 1 (room for the CR before an LF, or
 * for a NUL after the last byte); the callback gets each line that is not
 * blank, its LF and CR dropped, in place.  Refused here (ERR_INVALID,
 * field "data", the message names the line):
 *   - a line over max_line_bytes (terminator excluded), as soon as that
 *     is certain, so the buffer never grows;
 *   - a blank line (nothing but spaces and tabs) before a line that is
 *     not blank: blank lines are accepted only at the end;
 *   - at lines_finish(), a body in which the parser counted no data row.
 * The first error, from here or from the callback, stops it for good:
 * every later call returns that code again, "line L: the data was already
 * refused".
 */
#ifndef COMMON_LINES_H
#define COMMON_LINES_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* Called once per complete line that is not blank: s[0..len), len >= 1,
 * without its LF or CR; s[len] is writable and s may be modified in
 * place.  line is 1-based in the body.  Returning an error stops the
 * assembly with that error at this line. */
typedef enum err_code (*lines_fn)(void *ctx, char *s, size_t len, unsigned long line,
				  struct err *e);

struct lines {
	char *line;             /* owned: the line being assembled, max_line_bytes + 1 */
	size_t len;             /* bytes in line */
	bool failed;            /* sticky: a call returned an error */
	unsigned long err_line; /* 1-based line of the error, 0 if none */
	/* LINES_MEMBER mirrors the four fields above: keep them first */
	size_t max_line_bytes;    /* longest accepted line, terminator excluded */
	unsigned long lineno;     /* lines completed so far */
	unsigned long blank_line; /* first line of the pending run of blank lines */
	unsigned bom_seen;        /* bytes of a leading BOM matched so far */
	bool started;             /* past the BOM check */
	bool pending_blank;       /* a blank line was seen; an error unless at the end */
	enum err_code fail_code;  /* the first error, returned again once failed */
};

/*
 * How a parser embeds its struct lines: as the member `in`, whose first
 * four fields are also the parser's own line, len, failed and err_line,
 * the names its users and tests read (csv.h and libsvm.h had them before
 * lines.h).  An anonymous union of in with an anonymous struct of in's
 * leading fields, which C11 lets one read through either (6.5.2.3p6,
 * common initial sequence); the idea of Linux's struct_group().  Write
 * them only through in.
 */
#define LINES_MEMBER                                                                               \
	union {                                                                                    \
		struct lines in;                                                                   \
		struct {                                                                           \
			char *line;                                                                \
			size_t len;                                                                \
			bool failed;                                                               \
			unsigned long err_line;                                                    \
		};                                                                                 \
	}

/* Set up l (zeroing it first) for lines of at most max_line_bytes.
 * ERR_NOMEM, with no message (the parser words it), when the buffer
 * cannot be had; l is then still safe to lines_clear(). */
enum err_code lines_init(struct lines *l, size_t max_line_bytes);

/* Feed the next chunk buf[0..len): completes lines, calling fn(ctx, ...)
 * for each that is not blank. */
enum err_code lines_feed(struct lines *l, const char *buf, size_t len, lines_fn fn, void *ctx,
			 struct err *e);

/* End of body: the last line, if it has no LF, goes to fn too.  rows is
 * the parser's count of data rows, read after that line: ERR_INVALID when
 * it is 0 ("no data rows"). */
enum err_code lines_finish(struct lines *l, lines_fn fn, void *ctx, const unsigned long *rows,
			   struct err *e);

/* Mark l failed with code at line (0 if none), for an error the parser
 * words itself; returns code. */
enum err_code lines_fail(struct lines *l, enum err_code code, unsigned long line);

/* True once feeding has begun: a byte was taken, or a call failed. */
bool lines_begun(const struct lines *l);

/* Free the buffer; accepts a zeroed or half-built l. */
void lines_clear(struct lines *l);

#endif /* COMMON_LINES_H */
