/*
 * synthetic_csv.c - a synthetic-data run's rows as CSV (synthetic_csv.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "synthetic_csv.h"

struct buf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void
put(struct buf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap > 0 ? b->cap : 4096;
		char *q;

		while (b->len + n + 1 > cap)
			cap *= 2;
		q = realloc(b->p, cap);
		if (q == NULL) {
			b->failed = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* One field, quoted when it needs to be. */
static void
put_field(struct buf *b, const char *s)
{
	size_t n = strlen(s);
	bool quote = n > 0 && (s[0] == ' ' || s[n - 1] == ' ');

	for (size_t i = 0; !quote && i < n; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	if (!quote) {
		put(b, s, n);
		return;
	}
	put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			put(b, "\"", 1); /* a quote is doubled */
		put(b, s + i, 1);
	}
	put(b, "\"", 1);
}

enum err_code
synthetic_csv(const json_t *run, const json_t *spec, char **ret, struct err *e)
{
	const char *state = json_string_value(json_object_get(run, "state"));
	const char *id = json_string_value(json_object_get(run, "id"));
	json_t *syn = json_object_get(json_object_get(run, "result"), "synthetic");
	json_t *cats = json_object_get(json_object_get(spec, "schema"), "categorical");
	json_t *cells = json_object_get(syn, "cells");
	size_t p = json_array_size(cats), size[DATA_MAX_CATEGORICAL], universe = 1;
	size_t digits[DATA_MAX_CATEGORICAL];
	json_t *labels[DATA_MAX_CATEGORICAL];
	struct buf b = { 0 };
	char num[32];

	if (state == NULL || strcmp(state, "succeeded") != 0)
		return err_set(e, ERR_CONFLICT,
			       "run '%s' has not succeeded (state '%s'): no synthetic rows",
			       id != NULL ? id : "", state != NULL ? state : "");
	if (!json_is_object(syn))
		return err_set(e, ERR_NOT_FOUND, "run '%s' has no synthetic rows",
			       id != NULL ? id : "");
	if (p == 0 || p > DATA_MAX_CATEGORICAL || !json_is_array(cells))
		return err_set(e, ERR_INTERNAL, "run '%s': the result does not fit its schema",
			       id != NULL ? id : "");
	for (size_t l = 0; l < p; l++) {
		json_t *c = json_array_get(cats, l);
		const char *name = json_string_value(json_object_get(c, "name"));

		labels[l] = json_object_get(c, "labels");
		size[l] = json_is_array(labels[l])
				  ? json_array_size(labels[l])
				  : (size_t)json_integer_value(json_object_get(c, "size"));
		if (name == NULL || size[l] < 1)
			return err_set(e, ERR_INTERNAL, "run '%s': unreadable stored schema",
				       id != NULL ? id : "");
		universe *= size[l];
		if (l > 0)
			put(&b, ",", 1);
		put_field(&b, name);
	}
	put(&b, "\n", 1);
	for (size_t i = 0; i < json_array_size(cells); i++) {
		json_t *cell = json_array_get(cells, i);
		json_int_t u = json_integer_value(json_array_get(cell, 0)),
			   count = json_integer_value(json_array_get(cell, 1));

		if (u < 0 || (size_t)u >= universe || count < 0) {
			free(b.p);
			return err_set(e, ERR_INTERNAL,
				       "run '%s': the result does not fit its schema",
				       id != NULL ? id : "");
		}
		for (size_t l = p, v = (size_t)u; l-- > 0;) {
			digits[l] = v % size[l];
			v /= size[l];
		}
		for (json_int_t r = 0; r < count; r++) {
			for (size_t l = 0; l < p; l++) {
				const char *lab =
					json_string_value(json_array_get(labels[l], digits[l]));

				if (l > 0)
					put(&b, ",", 1);
				if (lab != NULL) {
					put_field(&b, lab);
				} else {
					snprintf(num, sizeof(num), "%zu", digits[l]);
					put(&b, num, strlen(num));
				}
			}
			put(&b, "\n", 1);
		}
	}
	if (b.failed) {
		free(b.p);
		return err_set(e, ERR_NOMEM, "out of memory for the synthetic rows");
	}
	*ret = b.p;
	return ERR_OK;
}
