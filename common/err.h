/*
 * err.h - the one error type every fallible function carries up.
 *
 * A function that can fail returns enum err_code (ERR_OK is 0) and, when
 * the caller passed a non-NULL struct err, fills it in.  The returned code
 * is the truth: a function never derives its result from *e (which may be
 * NULL), except through err_failed(), which cannot return ERR_OK.
 *
 * Messages are never cut inside a word: text past a buffer's end is
 * dropped at the last blank before it and marked with "…", so an id the
 * message names is either whole or absent.  The struct is
 * caller-owned and fixed-size, so reporting an error never allocates and
 * out-of-memory can be reported like anything else.  The HTTP status of a
 * code is decided in exactly one place (service/http.c).
 */
#ifndef COMMON_ERR_H
#define COMMON_ERR_H

enum err_code {
	ERR_OK = 0,
	ERR_NOMEM,           /* an allocation failed */
	ERR_INVALID,         /* the caller supplied bad input (400) */
	ERR_UNAUTHENTICATED, /* no or unknown API key (401) */
	ERR_FORBIDDEN,       /* the key's role may not do this (403) */
	ERR_NOT_FOUND,       /* the named object does not exist or is not yours (404) */
	ERR_METHOD,          /* the resource exists, the method does not (405) */
	ERR_CONFLICT,        /* current state forbids the operation (409) */
	ERR_BUDGET,          /* the privacy budget would be exceeded (409) */
	ERR_MODE,            /* the dataset's accounting mode cannot charge this event (409) */
	ERR_TOO_LARGE,       /* request body over the limit (413) */
	ERR_MEDIA_TYPE,      /* wrong Content-Type (415) */
	ERR_NUMERIC,         /* numerically unusable: NaN/Inf, over a work limit (422) */
	ERR_CANCELLED,       /* stopped on request or at shutdown */
	ERR_DB,              /* the database is unavailable or failed (503) */
	ERR_INTERNAL,        /* a bug or an infrastructure failure (500) */
	ERR_RATE_LIMITED,    /* too many requests: a rate or concurrency limit (429) */
	ERR_TOO_SMALL,       /* the privacy target is too small for n: a vacuous run (422) */
	ERR__COUNT
};

struct err {
	enum err_code code;
	char field[64];   /* offending field as a dotted JSON path, "" if none */
	char msg[512];    /* primary: short, lower case, no final period */
	char detail[512]; /* optional: full sentences; may name internals */
};

/* Fill *e (if e != NULL) and return code, so callers can write
 * "return err_set(e, ERR_INVALID, ...);".  Overwrites any earlier error
 * and clears the field. */
enum err_code err_set(struct err *e, enum err_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* As err_set(), and name the offending field (a dotted JSON path such as
 * "bounds.label"); the message should name it too. */
enum err_code err_set_field(struct err *e, enum err_code code, const char *field, const char *fmt,
			    ...) __attribute__((format(printf, 4, 5)));

/* Add a detail line to an error already set.  Returns nothing on purpose:
 * "return err_detail(e, ...)" once read as success when e was NULL.  Set
 * the error, add the detail, then return the code you set. */
void err_detail(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The code of a failure a callee reported in *e: e->code, or ERR_INTERNAL
 * when e is NULL or holds ERR_OK (a callee that failed without saying
 * why).  Never ERR_OK, so "return err_failed(e)" cannot read as success. */
enum err_code err_failed(const struct err *e);

/* Prefix the field of an error already set, e.g. "objective" + "params.l2"
 * gives "objective.params.l2".  Used when a nested parser reports. */
void err_prefix_field(struct err *e, const char *prefix);

/* Stable snake_case name used in API error bodies and logs. */
const char *err_code_name(enum err_code code);

#endif /* COMMON_ERR_H */
