/*
 * log.h - JSON-lines logging to stderr, or to stdout once log_to_stdout()
 * is called (the server under DPOPT_LOG_FORMAT=json, for a container's log
 * pipeline; the commands keep stdout for their own output).
 *
 * One object per line, written with one fprintf so that lines from several
 * threads never interleave: {"ts_ms", "level", "ctx", "code", "msg",
 * "detail"}.  Only service/ logs, and only where an error is finally
 * handled.  Never log request bodies, data values, keys, connection
 * strings or anything computed from private data.
 */
#ifndef SERVICE_LOG_H
#define SERVICE_LOG_H

#include "err.h"

enum log_level {
	LOG_DEBUG,
	LOG_INFO,
	LOG_WARN,
	LOG_ERROR,
};

/* Set once in main() before threads start. */
void log_set_level(enum log_level level);
int log_level_from_name(const char *name); /* -1 when unknown */
/* Set once before threads start: every later line goes to stdout, flushed
 * line by line. */
void log_to_stdout(void);

/* ctx: a request or run id, or NULL. */
void log_msg(enum log_level level, const char *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Log an error where it is handled: level error for our failures (5xx,
 * database) with message and detail, info for the client's mistakes with
 * code and field only (their messages may quote uploaded cells). */
void log_err(const char *ctx, const struct err *e);

#endif /* SERVICE_LOG_H */
