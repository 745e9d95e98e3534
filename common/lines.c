/*
 * lines.c - the line assembly declared in lines.h.  Lines are found with
 * memchr and copied into the one buffer; a leading BOM is matched byte by
 * byte across chunks, and a false start hands its bytes back as data.
 * Nothing is allocated after lines_init().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"

static const unsigned char utf8_bom[3] = { 0xef, 0xbb, 0xbf };

enum err_code
lines_fail(struct lines *l, enum err_code code, unsigned long line)
{
	l->failed = true;
	l->fail_code = code;
	l->err_line = line;
	return code;
}

static enum err_code
too_long(struct lines *l, struct err *e)
{
	unsigned long line = l->lineno + 1;

	lines_fail(l, ERR_INVALID, line);
	return err_set_field(e, ERR_INVALID, "data", "line %lu: longer than %zu bytes", line,
			     l->max_line_bytes);
}

static enum err_code
sticky(const struct lines *l, struct err *e)
{
	enum err_code code = l->fail_code != ERR_OK ? l->fail_code : ERR_INVALID;

	if (l->err_line != 0)
		return err_set_field(e, code, "data", "line %lu: the data was already refused",
				     l->err_line);
	return err_set_field(e, code, "data", "the data was already refused");
}

/* The line in l->line is complete (its LF, if any, already dropped). */
static enum err_code
end_line(struct lines *l, lines_fn fn, void *ctx, struct err *e)
{
	unsigned long line = l->lineno + 1;
	size_t len = l->len;
	size_t i;
	enum err_code rc;

	l->len = 0;
	if (len > 0 && l->line[len - 1] == '\r')
		len--;
	if (len > l->max_line_bytes) /* cannot happen: append() caps it */
		return too_long(l, e);

	for (i = 0; i < len && (l->line[i] == ' ' || l->line[i] == '\t'); i++)
		;
	if (i == len) {
		if (!l->pending_blank) {
			l->pending_blank = true;
			l->blank_line = line;
		}
		l->lineno++;
		return ERR_OK;
	}
	if (l->pending_blank) {
		lines_fail(l, ERR_INVALID, l->blank_line);
		return err_set_field(e, ERR_INVALID, "data", "line %lu: empty line", l->blank_line);
	}

	rc = fn(ctx, l->line, len, line, e);
	if (rc != ERR_OK)
		return lines_fail(l, rc, line);
	l->lineno++;
	return ERR_OK;
}

/* Add src[0..n) to the line being assembled, failing as soon as it is
 * certain to exceed max_line_bytes (one extra byte is held for a CR). */
static enum err_code
append(struct lines *l, const char *src, size_t n, struct err *e)
{
	if (n > l->max_line_bytes + 1 - l->len)
		return too_long(l, e);
	memcpy(l->line + l->len, src, n);
	l->len += n;
	if (l->len > l->max_line_bytes && l->line[l->len - 1] != '\r')
		return too_long(l, e);
	return ERR_OK;
}

enum err_code
lines_init(struct lines *l, size_t max_line_bytes)
{
	memset(l, 0, sizeof(*l));
	if (max_line_bytes >= SIZE_MAX - 1)
		return ERR_NOMEM;
	l->line = malloc(max_line_bytes + 1);
	if (l->line == NULL)
		return ERR_NOMEM;
	l->max_line_bytes = max_line_bytes;
	return ERR_OK;
}

enum err_code
lines_feed(struct lines *l, const char *buf, size_t len, lines_fn fn, void *ctx, struct err *e)
{
	enum err_code rc;

	if (l->failed)
		return sticky(l, e);

	if (!l->started) {
		while (len > 0 && l->bom_seen < sizeof(utf8_bom) &&
		       (unsigned char)*buf == utf8_bom[l->bom_seen]) {
			l->bom_seen++;
			buf++;
			len--;
		}
		if (len == 0 && l->bom_seen < sizeof(utf8_bom))
			return ERR_OK; /* still a possible BOM */
		l->started = true;
		if (l->bom_seen < sizeof(utf8_bom)) { /* a false start: those bytes are data */
			rc = append(l, (const char *)utf8_bom, l->bom_seen, e);
			if (rc != ERR_OK)
				return rc;
		}
	}

	while (len > 0) {
		const char *nl = memchr(buf, '\n', len);
		size_t n = nl != NULL ? (size_t)(nl - buf) : len;

		rc = append(l, buf, n, e);
		if (rc != ERR_OK)
			return rc;
		if (nl == NULL)
			break;
		rc = end_line(l, fn, ctx, e);
		if (rc != ERR_OK)
			return rc;
		buf += n + 1;
		len -= n + 1;
	}
	return ERR_OK;
}

enum err_code
lines_finish(struct lines *l, lines_fn fn, void *ctx, const unsigned long *rows, struct err *e)
{
	enum err_code rc;

	if (l->failed)
		return sticky(l, e);

	if (!l->started) {
		l->started = true;
		if (l->bom_seen < sizeof(utf8_bom)) {
			rc = append(l, (const char *)utf8_bom, l->bom_seen, e);
			if (rc != ERR_OK)
				return rc;
		}
	}
	if (l->len > 0) {
		rc = end_line(l, fn, ctx, e);
		if (rc != ERR_OK)
			return rc;
	}
	if (*rows == 0) {
		lines_fail(l, ERR_INVALID, 0);
		return err_set_field(e, ERR_INVALID, "data", "no data rows");
	}
	return ERR_OK;
}

bool
lines_begun(const struct lines *l)
{
	return l->started || l->bom_seen > 0 || l->failed;
}

void
lines_clear(struct lines *l)
{
	free(l->line);
	memset(l, 0, sizeof(*l));
}
