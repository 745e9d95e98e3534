/*
 * feature_names.h - the names of a dataset's d feature columns, taken from
 * the header row of a CSV upload.
 *
 * A header is declared by the owner, not row data: it is the same whichever
 * rows the file holds, so it is no function of any individual's record.
 * Once sealed the names are public, like the schema: runs' results show
 * them next to the coefficient vector x (runs.c).  They are kept only when
 * all d are usable (1 to FEATURE_NAME_MAX bytes of UTF-8 without NUL);
 * otherwise the dataset has no names and the upload is unaffected.
 */
#ifndef SERVICE_FEATURE_NAMES_H
#define SERVICE_FEATURE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "db.h"
#include "err.h"

#define FEATURE_NAME_MAX 128

struct feature_names {
	size_t d;      /* feature columns: the header's first d cells */
	json_t *names; /* owned: array of the names so far, NULL when none or unusable */
	bool unusable; /* some name was unusable: keep none */
};

/* Expect d feature names. */
void feature_names_init(struct feature_names *f, size_t d);
void feature_names_clear(struct feature_names *f); /* accepts a zeroed struct */

/* csv_header_fn (common/csv.h) with ctx a struct feature_names: takes the
 * header's cell col.  Never fails but for ERR_NOMEM. */
enum err_code feature_names_on_header(void *ctx, size_t col, const char *name, size_t len,
				      struct err *e);

/* Store the names on dataset_id (inside the seal's transaction) when all d
 * came and were usable; nothing otherwise. */
enum err_code feature_names_store(struct db_conn *db, const char *dataset_id,
				  const struct feature_names *f, struct err *e);

#endif /* SERVICE_FEATURE_NAMES_H */
