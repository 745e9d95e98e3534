/*
 * feature_names.c - a CSV header's feature names (feature_names.h).
 */
#include <stdlib.h>
#include <string.h>

#include "feature_names.h"

void
feature_names_init(struct feature_names *f, size_t d)
{
	memset(f, 0, sizeof(*f));
	f->d = d;
}

void
feature_names_clear(struct feature_names *f)
{
	json_decref(f->names);
	memset(f, 0, sizeof(*f));
}

enum err_code
feature_names_on_header(void *ctx, size_t col, const char *name, size_t len, struct err *e)
{
	struct feature_names *f = ctx;
	json_t *s;

	if (col >= f->d || f->unusable)
		return ERR_OK; /* the tail's names (categorical, group, label) are not kept */
	if (f->names == NULL) {
		f->names = json_array();
		if (f->names == NULL)
			return err_set(e, ERR_NOMEM, "out of memory for the feature names");
	}
	/* json_stringn() refuses invalid UTF-8; PostgreSQL text refuses NUL. */
	s = len >= 1 && len <= FEATURE_NAME_MAX && memchr(name, '\0', len) == NULL
		    ? json_stringn(name, len)
		    : NULL;
	if (s == NULL || json_array_size(f->names) != col) {
		json_decref(s);
		json_decref(f->names);
		f->names = NULL;
		f->unusable = true;
		return ERR_OK;
	}
	if (json_array_append_new(f->names, s) != 0)
		return err_set(e, ERR_NOMEM, "out of memory for the feature names");
	return ERR_OK;
}

enum err_code
feature_names_store(struct db_conn *db, const char *dataset_id, const struct feature_names *f,
		    struct err *e)
{
	char *text;
	enum err_code rc;

	if (f->unusable || f->d == 0 || f->names == NULL || json_array_size(f->names) != f->d)
		return ERR_OK;
	text = json_dumps(f->names, JSON_COMPACT);
	if (text == NULL)
		return err_set(e, ERR_NOMEM, "out of memory for the feature names");
	rc = db_exec_command(db,
			     "UPDATE datasets SET feature_names ="
			     " ARRAY(SELECT jsonb_array_elements_text($2::jsonb)) WHERE id = $1",
			     2, (const char *const[]){ dataset_id, text }, e);
	free(text);
	return rc;
}
