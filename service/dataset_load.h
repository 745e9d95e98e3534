/*
 * dataset_load.h - read a sealed dataset's rows out of PostgreSQL into the
 * dense in-memory layout algorithms stream over.
 */
#ifndef SERVICE_DATASET_LOAD_H
#define SERVICE_DATASET_LOAD_H

#include "data.h"
#include "db.h"
#include "err.h"

struct loaded_dataset {
	struct dataset view; /* borrows x and y below */
	double *x;           /* owned: n * d, row-major */
	double *y;           /* owned: n */
	size_t bytes;        /* memory held, for the cache's accounting */
};

/* Load every chunk of dataset_id, which must hold exactly n rows of d
 * features (ERR_INTERNAL otherwise: the store is inconsistent). */
enum err_code dataset_load(struct db_conn *db, const char *dataset_id, size_t n, size_t d,
			   struct loaded_dataset *ret, struct err *e);

void loaded_dataset_clear(struct loaded_dataset *ds);

#endif /* SERVICE_DATASET_LOAD_H */
