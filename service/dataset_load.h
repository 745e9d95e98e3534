/*
 * dataset_load.h - read a sealed dataset's stored records out of
 * PostgreSQL into the in-memory layout algorithms stream over (dense
 * row-major or CSR, with labels, groups and categorical cells: rows.h).
 */
#ifndef SERVICE_DATASET_LOAD_H
#define SERVICE_DATASET_LOAD_H

#include <stddef.h>

#include "data.h"
#include "db.h"
#include "err.h"
#include "rows.h"

struct loaded_dataset {
	struct dataset view;      /* borrows the arrays of rows */
	struct rows_builder rows; /* owned */
	size_t bytes;             /* memory held, for the cache's accounting */
};

/* Load every chunk of dataset id, which must hold exactly n records of the
 * schema in the layout, with nnz non-zeros when CSR (ERR_INTERNAL
 * otherwise: the store is inconsistent). */
enum err_code dataset_load(struct db_conn *db, const char *id, const struct data_schema *schema,
			   enum data_layout layout, size_t n, size_t nnz,
			   struct loaded_dataset *ret, struct err *e);

void loaded_dataset_clear(struct loaded_dataset *ds);

#endif /* SERVICE_DATASET_LOAD_H */
