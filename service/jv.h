/*
 * jv.h - validation of JSON request bodies.
 *
 * Small getters that check presence, type and range of one member and, on
 * failure, name it in the error as a dotted path ("budget.epsilon").
 * Unknown members are errors too (jv_only_keys), so a typo in a request
 * is never silently ignored.  Returned strings and objects are borrowed
 * from the document.
 */
#ifndef SERVICE_JV_H
#define SERVICE_JV_H

#include <stdbool.h>

#include <jansson.h>

#include "err.h"

/* Parse a request body; ERR_INVALID with the parser's position when it is
 * not one JSON object (duplicate keys refused).  Owned result. */
enum err_code jv_parse_object(const char *body, size_t len, json_t **ret, struct err *e);

/* ERR_INVALID naming the first member of obj not in allowed (NULL-ended). */
enum err_code jv_only_keys(const json_t *obj, const char *prefix, const char *const *allowed,
			   struct err *e);

/* Member key of obj must be an object; *ret NULL when absent and optional. */
enum err_code jv_object(const json_t *obj, const char *prefix, const char *key, bool required,
			json_t **ret, struct err *e);

/* A string of 1..maxlen bytes; *ret NULL when absent and optional. */
enum err_code jv_string(const json_t *obj, const char *prefix, const char *key, bool required,
			size_t maxlen, const char **ret, struct err *e);

/* A finite number in [min, max] (min excluded when min_open); *ret
 * untouched when absent and optional; *ret_present tells (may be NULL). */
enum err_code jv_number(const json_t *obj, const char *prefix, const char *key, bool required,
			double min, bool min_open, double max, double *ret, bool *ret_present,
			struct err *e);

/* An integer in [min, max]; same conventions as jv_number. */
enum err_code jv_integer(const json_t *obj, const char *prefix, const char *key, bool required,
			 long long min, long long max, long long *ret, bool *ret_present,
			 struct err *e);

/* Build "prefix.key" (or "key") into out. */
void jv_path(char *out, size_t cap, const char *prefix, const char *key);

#endif /* SERVICE_JV_H */
