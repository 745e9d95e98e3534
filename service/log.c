/*
 * log.c - the JSON-lines logger.  The level is set once before threads
 * start and only read afterwards.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"

static enum log_level min_level = LOG_INFO; /* written only before threads start */
static bool to_stdout;                      /* written only before threads start */

void
log_set_level(enum log_level level)
{
	min_level = level;
}

void
log_to_stdout(void)
{
	to_stdout = true;
}

int
log_level_from_name(const char *name)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };

	for (int i = 0; i < 4; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

static const char *
level_name(enum log_level l)
{
	switch (l) {
	case LOG_DEBUG:
		return "debug";
	case LOG_INFO:
		return "info";
	case LOG_WARN:
		return "warn";
	case LOG_ERROR:
		return "error";
	}
	return "error";
}

/* Copy s into out as the inside of a JSON string. */
static void
json_escape(char *out, size_t cap, const char *s)
{
	size_t j = 0;

	for (; s != NULL && *s != '\0' && j + 7 < cap; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			out[j++] = '\\';
			out[j++] = (char)c;
		} else if (c < 0x20) {
			j += (size_t)snprintf(out + j, cap - j, "\\u%04x", c);
		} else {
			out[j++] = (char)c;
		}
	}
	out[j] = '\0';
}

static void
emit(enum log_level level, const char *ctx, const char *code, const char *msg, const char *detail)
{
	char emsg[512], edetail[600], ectx[80];
	struct timespec ts;
	long long ms;
	FILE *out;

	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	json_escape(emsg, sizeof(emsg), msg);
	json_escape(edetail, sizeof(edetail), detail);
	json_escape(ectx, sizeof(ectx), ctx);
	out = to_stdout ? stdout : stderr;
	/* One line under the stream's lock; stdout is buffered, so it is
	 * flushed before the lock goes (a pipe reader sees whole lines). */
	flockfile(out);
	fprintf(out,
		"{\"ts_ms\":%lld,\"level\":\"%s\",\"ctx\":\"%s\",\"code\":\"%s\",\"msg\":\"%s\","
		"\"detail\":\"%s\"}\n",
		ms, level_name(level), ectx, code, emsg, edetail);
	fflush(out);
	funlockfile(out);
}

void
log_msg(enum log_level level, const char *ctx, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (level < min_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(level, ctx, "", msg, "");
}

void
log_err(const char *ctx, const struct err *e)
{
	enum log_level level = LOG_ERROR;

	switch (e->code) { /* no default: -Wswitch flags a new code */
	case ERR_OK:
	case ERR_INVALID:
	case ERR_UNAUTHENTICATED:
	case ERR_FORBIDDEN:
	case ERR_NOT_FOUND:
	case ERR_METHOD:
	case ERR_CONFLICT:
	case ERR_BUDGET:
	case ERR_MODE:
	case ERR_TOO_LARGE:
	case ERR_MEDIA_TYPE:
	case ERR_NUMERIC:
	case ERR_CANCELLED:
	case ERR_RATE_LIMITED:
	case ERR_TOO_SMALL:
		level = LOG_INFO;
		break;
	case ERR_NOMEM:
	case ERR_DB:
	case ERR_INTERNAL:
	case ERR__COUNT:
		level = LOG_ERROR;
		break;
	}
	if (level < min_level)
		return;
	if (level == LOG_INFO) {
		/*
		 * A client's mistake: its message may quote what the client sent,
		 * and for an upload that is a cell of private data (issue 8 item
		 * 3).  The client got the message; the log keeps the code and the
		 * field, which name a place, never a value.  Failing closed: no
		 * parser has to remember to mark its messages.
		 */
		char where[sizeof(e->field) + 16];

		snprintf(where, sizeof(where), "field '%s'", e->field[0] != '\0' ? e->field : "-");
		emit(level, ctx, err_code_name(e->code), where, "");
		return;
	}
	/* Ours (5xx): messages and details are written by this code base from
	 * codes, ids and SQLSTATEs, never from request or row text (db_check
	 * keeps the server's text out). */
	emit(level, ctx, err_code_name(e->code), e->msg, e->detail);
}
