/*
 * synthetic_csv.c - a synthetic-data run's rows as streamed CSV
 * (synthetic_csv.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "synthetic_csv.h"

struct synthetic_csv {
	json_t *run, *spec; /* owned references */
	json_t *cells;      /* borrowed from run: [[universe index, count], ...] */
	size_t ncells, p, universe;
	size_t size[DATA_MAX_CATEGORICAL];
	json_t *labels[DATA_MAX_CATEGORICAL]; /* borrowed from spec; NULL: indices */
	size_t next;                          /* the next cell to render */
	json_int_t left;                      /* copies of line still to send after this one */
	char *line;                           /* owned: line_cap bytes, the current line */
	size_t line_len, line_pos, line_cap;
};

static bool
needs_quotes(const char *s, size_t n)
{
	if (n > 0 && (s[0] == ' ' || s[n - 1] == ' '))
		return true;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
			return true;
	return false;
}

/* Bytes field s takes in the CSV, quotes included. */
static size_t
field_width(const char *s)
{
	size_t n = strlen(s), w = n;

	if (!needs_quotes(s, n))
		return n;
	for (size_t i = 0; i < n; i++)
		w += s[i] == '"'; /* a quote is doubled */
	return w + 2;
}

/* Field s at dst (room for field_width(s)); returns its width. */
static size_t
put_field(char *dst, const char *s)
{
	size_t n = strlen(s), w = 0;

	if (!needs_quotes(s, n)) {
		memcpy(dst, s, n);
		return n;
	}
	dst[w++] = '"';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			dst[w++] = '"';
		dst[w++] = s[i];
	}
	dst[w++] = '"';
	return w;
}

/* The label of value v of attribute l, or NULL for its index. */
static const char *
label_of(const struct synthetic_csv *c, size_t l, size_t v)
{
	return c->labels[l] != NULL ? json_string_value(json_array_get(c->labels[l], v)) : NULL;
}

/* Width of value v of attribute l in a row. */
static size_t
value_width(const struct synthetic_csv *c, size_t l, size_t v)
{
	const char *lab = label_of(c, l, v);
	char num[32];

	return lab != NULL ? field_width(lab) : (size_t)snprintf(num, sizeof(num), "%zu", v);
}

/* line <- the row of universe index u (checked < universe). */
static void
render_row(struct synthetic_csv *c, size_t u)
{
	size_t digits[DATA_MAX_CATEGORICAL], w = 0;

	for (size_t l = c->p; l-- > 0;) {
		digits[l] = u % c->size[l];
		u /= c->size[l];
	}
	for (size_t l = 0; l < c->p; l++) {
		const char *lab = label_of(c, l, digits[l]);

		if (l > 0)
			c->line[w++] = ',';
		if (lab != NULL)
			w += put_field(c->line + w, lab);
		else
			w += (size_t)snprintf(c->line + w, c->line_cap - w, "%zu", digits[l]);
	}
	c->line[w++] = '\n';
	c->line_len = w;
	c->line_pos = 0;
}

/* Reads the stored schema and checks every cell; sets the line's
 * capacity to the longest line (header or row) + 1. */
static enum err_code
check(struct synthetic_csv *c, const char *id, struct err *e)
{
	json_t *cats = json_object_get(json_object_get(c->spec, "schema"), "categorical");
	size_t head = 0, row = 0;

	c->p = json_array_size(cats);
	if (c->p == 0 || c->p > DATA_MAX_CATEGORICAL || !json_is_array(c->cells))
		return err_set(e, ERR_INTERNAL, "run '%s': the result does not fit its schema", id);
	c->universe = 1;
	for (size_t l = 0; l < c->p; l++) {
		json_t *a = json_array_get(cats, l);
		const char *name = json_string_value(json_object_get(a, "name"));
		json_int_t size = json_integer_value(json_object_get(a, "size"));
		size_t widest = 0;

		c->labels[l] = json_object_get(a, "labels");
		if (!json_is_array(c->labels[l]))
			c->labels[l] = NULL;
		c->size[l] = c->labels[l] != NULL ? json_array_size(c->labels[l])
			     : size > 0           ? (size_t)size
						  : 0;
		if (name == NULL || c->size[l] < 1 || c->universe > SIZE_MAX / c->size[l])
			return err_set(e, ERR_INTERNAL, "run '%s': unreadable stored schema", id);
		c->universe *= c->size[l];
		head += field_width(name) + 1;
		/* Indices grow with v: the last is the widest of them. */
		if (c->labels[l] == NULL)
			widest = value_width(c, l, c->size[l] - 1);
		for (size_t v = 0; c->labels[l] != NULL && v < c->size[l]; v++) {
			size_t w = value_width(c, l, v);

			widest = w > widest ? w : widest;
		}
		row += widest + 1;
	}
	c->ncells = json_array_size(c->cells);
	for (size_t i = 0; i < c->ncells; i++) {
		json_t *cell = json_array_get(c->cells, i);
		json_int_t u = json_integer_value(json_array_get(cell, 0)),
			   count = json_integer_value(json_array_get(cell, 1));

		if (u < 0 || (size_t)u >= c->universe || count < 0)
			return err_set(e, ERR_INTERNAL,
				       "run '%s': the result does not fit its schema", id);
	}
	c->line_cap = (head > row ? head : row) + 1;
	return ERR_OK;
}

enum err_code
synthetic_csv_open(json_t *run, json_t *spec, struct synthetic_csv **ret, struct err *e)
{
	const char *state = json_string_value(json_object_get(run, "state"));
	const char *id = json_string_value(json_object_get(run, "id"));
	json_t *syn = json_object_get(json_object_get(run, "result"), "synthetic");
	json_t *cats;
	struct synthetic_csv *c;
	size_t w = 0;
	enum err_code rc;

	if (id == NULL)
		id = "";
	if (state == NULL || strcmp(state, "succeeded") != 0)
		return err_set(e, ERR_CONFLICT,
			       "run '%s' has not succeeded (state '%s'): no synthetic rows", id,
			       state != NULL ? state : "");
	if (!json_is_object(syn))
		return err_set(e, ERR_NOT_FOUND, "run '%s' has no synthetic rows", id);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return err_set(e, ERR_NOMEM, "out of memory for the synthetic rows");
	c->run = json_incref(run);
	c->spec = json_incref(spec);
	c->cells = json_object_get(syn, "cells");
	rc = check(c, id, e);
	if (rc == ERR_OK && (c->line = malloc(c->line_cap)) == NULL)
		rc = err_set(e, ERR_NOMEM, "out of memory for the synthetic rows");
	if (rc != ERR_OK) {
		synthetic_csv_close(c);
		return rc;
	}
	/* The first line is the header. */
	cats = json_object_get(json_object_get(spec, "schema"), "categorical");
	for (size_t l = 0; l < c->p; l++) {
		if (l > 0)
			c->line[w++] = ',';
		w += put_field(c->line + w,
			       json_string_value(json_object_get(json_array_get(cats, l), "name")));
	}
	c->line[w++] = '\n';
	c->line_len = w;
	*ret = c;
	return ERR_OK;
}

size_t
synthetic_csv_read(struct synthetic_csv *c, char *buf, size_t max)
{
	size_t done = 0;

	while (done < max) {
		if (c->line_pos == c->line_len) {
			if (c->left > 0) {
				c->left--;
				c->line_pos = 0;
			} else {
				json_t *cell = NULL;
				json_int_t count = 0;

				/* The next cell with rows (a count of 0 has none). */
				while (count == 0 && c->next < c->ncells) {
					cell = json_array_get(c->cells, c->next++);
					count = json_integer_value(json_array_get(cell, 1));
				}
				if (count == 0)
					break; /* the end */
				render_row(c, (size_t)json_integer_value(json_array_get(cell, 0)));
				c->left = count - 1;
			}
		}
		{
			size_t n = c->line_len - c->line_pos;

			if (n > max - done)
				n = max - done;
			memcpy(buf + done, c->line + c->line_pos, n);
			c->line_pos += n;
			done += n;
		}
	}
	return done;
}

void
synthetic_csv_close(struct synthetic_csv *c)
{
	if (c == NULL)
		return;
	json_decref(c->run);
	json_decref(c->spec);
	free(c->line);
	free(c);
}
