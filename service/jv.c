/*
 * jv.c - JSON member validation with field names in every error.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jv.h"

void
jv_path(char *out, size_t cap, const char *prefix, const char *key)
{
	if (prefix == NULL || prefix[0] == '\0')
		snprintf(out, cap, "%s", key);
	else
		snprintf(out, cap, "%s.%s", prefix, key);
}

enum err_code
jv_parse_object(const char *body, size_t len, json_t **ret, struct err *e)
{
	json_error_t jerr;
	json_t *doc;

	if (body == NULL || len == 0)
		return err_set_field(e, ERR_INVALID, "body", "request body is empty");
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (doc == NULL)
		return err_set_field(e, ERR_INVALID, "body",
				     "body is not valid JSON: %s (line %d, column %d)", jerr.text,
				     jerr.line, jerr.column);
	if (!json_is_object(doc)) {
		json_decref(doc);
		return err_set_field(e, ERR_INVALID, "body", "body must be a JSON object");
	}
	*ret = doc;
	return ERR_OK;
}

enum err_code
jv_only_keys(const json_t *obj, const char *prefix, const char *const *allowed, struct err *e)
{
	const char *key;
	json_t *v;
	char path[128];

	json_object_foreach ((json_t *)obj, key, v) {
		bool ok = false;

		for (size_t i = 0; allowed[i] != NULL && !ok; i++)
			ok = strcmp(key, allowed[i]) == 0;
		if (!ok) {
			jv_path(path, sizeof(path), prefix, key);
			return err_set_field(e, ERR_INVALID, path, "unknown field '%s'", path);
		}
	}
	return ERR_OK;
}

enum err_code
jv_object(const json_t *obj, const char *prefix, const char *key, bool required, json_t **ret,
	  struct err *e)
{
	json_t *v = json_object_get(obj, key);
	char path[128];

	jv_path(path, sizeof(path), prefix, key);
	if (v == NULL || json_is_null(v)) {
		if (required)
			return err_set_field(e, ERR_INVALID, path, "'%s' is required", path);
		*ret = NULL;
		return ERR_OK;
	}
	if (!json_is_object(v))
		return err_set_field(e, ERR_INVALID, path, "'%s' must be an object", path);
	*ret = v;
	return ERR_OK;
}

enum err_code
jv_string(const json_t *obj, const char *prefix, const char *key, bool required, size_t maxlen,
	  const char **ret, struct err *e)
{
	json_t *v = json_object_get(obj, key);
	char path[128];

	jv_path(path, sizeof(path), prefix, key);
	if (v == NULL || json_is_null(v)) {
		if (required)
			return err_set_field(e, ERR_INVALID, path, "'%s' is required", path);
		*ret = NULL;
		return ERR_OK;
	}
	if (!json_is_string(v))
		return err_set_field(e, ERR_INVALID, path, "'%s' must be a string", path);
	if (json_string_length(v) == 0 || json_string_length(v) > maxlen ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return err_set_field(e, ERR_INVALID, path,
				     "'%s' must be 1 to %zu bytes without NUL characters", path,
				     maxlen);
	*ret = json_string_value(v);
	return ERR_OK;
}

enum err_code
jv_number(const json_t *obj, const char *prefix, const char *key, bool required, double min,
	  bool min_open, double max, double *ret, bool *ret_present, struct err *e)
{
	json_t *v = json_object_get(obj, key);
	char path[128];
	double x;

	jv_path(path, sizeof(path), prefix, key);
	if (ret_present != NULL)
		*ret_present = false;
	if (v == NULL || json_is_null(v)) {
		if (required)
			return err_set_field(e, ERR_INVALID, path, "'%s' is required", path);
		return ERR_OK;
	}
	if (!json_is_number(v))
		return err_set_field(e, ERR_INVALID, path, "'%s' must be a number", path);
	x = json_number_value(v);
	if (!isfinite(x) || x > max || (min_open ? x <= min : x < min))
		return err_set_field(e, ERR_INVALID, path, "'%s' must be within %s%g, %g]", path,
				     min_open ? "(" : "[", min, max);
	*ret = x;
	if (ret_present != NULL)
		*ret_present = true;
	return ERR_OK;
}

enum err_code
jv_integer(const json_t *obj, const char *prefix, const char *key, bool required, long long min,
	   long long max, long long *ret, bool *ret_present, struct err *e)
{
	json_t *v = json_object_get(obj, key);
	char path[128];
	long long x;

	jv_path(path, sizeof(path), prefix, key);
	if (ret_present != NULL)
		*ret_present = false;
	if (v == NULL || json_is_null(v)) {
		if (required)
			return err_set_field(e, ERR_INVALID, path, "'%s' is required", path);
		return ERR_OK;
	}
	if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
	    fabs(json_real_value(v)) < 9e15)
		x = (long long)json_real_value(v);
	else if (json_is_integer(v))
		x = json_integer_value(v);
	else
		return err_set_field(e, ERR_INVALID, path, "'%s' must be an integer", path);
	if (x < min || x > max)
		return err_set_field(e, ERR_INVALID, path,
				     "'%s' must be an integer within [%lld, %lld]", path, min, max);
	*ret = x;
	if (ret_present != NULL)
		*ret_present = true;
	return ERR_OK;
}
