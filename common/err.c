/*
 * err.c - filling struct err.  Never allocates: a message longer than its
 * buffer is cut at a word boundary and marked, rather than lost.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

/* Format into out[size]; when the text does not fit, cut it at the last
 * blank that leaves room for " …" so no token (an id, a number) is cut in
 * two.  A single token longer than the buffer is cut where it must be. */
static void __attribute__((format(printf, 3, 0)))
format_fit(char *out, size_t size, const char *fmt, va_list ap)
{
	static const char mark[] = " \xe2\x80\xa6"; /* " …" */
	int n = vsnprintf(out, size, fmt, ap);
	size_t keep;

	if (n < 0) {
		out[0] = '\0';
		return;
	}
	if ((size_t)n < size)
		return;
	keep = size - sizeof(mark); /* room for the mark and the NUL */
	while (keep > 0 && out[keep] != ' ')
		keep--;
	if (keep == 0)
		keep = size - sizeof(mark);
	/* Never end inside a UTF-8 sequence. */
	while (keep > 0 && ((unsigned char)out[keep] & 0xC0) == 0x80)
		keep--;
	memcpy(out + keep, mark, sizeof(mark));
}

enum err_code
err_set(struct err *e, enum err_code code, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return code;
	e->code = code;
	e->field[0] = '\0';
	e->detail[0] = '\0';
	va_start(ap, fmt);
	format_fit(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

enum err_code
err_set_field(struct err *e, enum err_code code, const char *field, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return code;
	e->code = code;
	snprintf(e->field, sizeof(e->field), "%s", field);
	e->detail[0] = '\0';
	va_start(ap, fmt);
	format_fit(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

void
err_detail(struct err *e, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return;
	va_start(ap, fmt);
	format_fit(e->detail, sizeof(e->detail), fmt, ap);
	va_end(ap);
}

enum err_code
err_failed(const struct err *e)
{
	if (e == NULL || e->code == ERR_OK)
		return ERR_INTERNAL;
	return e->code;
}

void
err_prefix_field(struct err *e, const char *prefix)
{
	/* Room for both parts, then truncated into the field. */
	char tmp[2 * sizeof(e->field) + 2];

	if (e == NULL || prefix == NULL || prefix[0] == '\0')
		return;
	if (e->field[0] == '\0')
		snprintf(tmp, sizeof(tmp), "%.63s", prefix);
	else
		snprintf(tmp, sizeof(tmp), "%.63s.%.63s", prefix, e->field);
	tmp[sizeof(e->field) - 1] = '\0';
	memcpy(e->field, tmp, sizeof(e->field));
}

const char *
err_code_name(enum err_code code)
{
	switch (code) { /* no default: -Wswitch flags a new code left out */
	case ERR_OK:
		return "ok";
	case ERR_NOMEM:
		return "out_of_memory";
	case ERR_INVALID:
		return "invalid_request";
	case ERR_UNAUTHENTICATED:
		return "unauthenticated";
	case ERR_FORBIDDEN:
		return "forbidden";
	case ERR_NOT_FOUND:
		return "not_found";
	case ERR_METHOD:
		return "method_not_allowed";
	case ERR_CONFLICT:
		return "conflict";
	case ERR_BUDGET:
		return "budget_exceeded";
	case ERR_MODE:
		return "accounting_mode_unsupported";
	case ERR_TOO_LARGE:
		return "body_too_large";
	case ERR_MEDIA_TYPE:
		return "unsupported_media_type";
	case ERR_NUMERIC:
		return "unprocessable";
	case ERR_CANCELLED:
		return "cancelled";
	case ERR_DB:
		return "database_unavailable";
	case ERR_INTERNAL:
		return "internal_error";
	case ERR_RATE_LIMITED:
		return "rate_limited";
	case ERR_TOO_SMALL:
		return "privacy_too_small_for_n";
	case ERR__COUNT:
		break;
	}
	return "internal_error";
}
