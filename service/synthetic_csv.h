/*
 * synthetic_csv.h - the synthetic rows of a synthetic-data run
 * (alg_ops.synthetic) as CSV: GET /v1/runs/{id}/synthetic.csv.
 *
 * The rows are streamed, never built in memory: a run of n = 10^7 rows
 * over a few attributes is hundreds of megabytes of text, while its
 * stored result is a sparse histogram of at most min(n, |universe|)
 * cells.  The reader renders one line per cell once and repeats it
 * count times; its memory is the run's JSON plus one line.
 */
#ifndef SERVICE_SYNTHETIC_CSV_H
#define SERVICE_SYNTHETIC_CSV_H

#include <stddef.h>

#include <jansson.h>

#include "err.h"

struct synthetic_csv;

/*
 * A reader of the CSV text of run (the JSON view of runs.c) on its
 * dataset's stored spec ({"schema": {"categorical": [{"name", "size" |
 * "labels"}, ...]}}): a header of the categorical attributes' names, then
 * one line per synthetic row, the cells the attributes' labels (their
 * indices for an attribute without labels), rows in increasing universe
 * index.  Fields with a comma, a quote, a line break or outer spaces are
 * quoted (RFC 4180).  Everything is checked here, so reading cannot fail:
 * ERR_CONFLICT when the run has not succeeded, ERR_NOT_FOUND when its
 * result has no synthetic rows, ERR_INTERNAL for a stored result that does
 * not fit the schema, ERR_NOMEM.  The reader keeps its own references to
 * run and spec; *ret is the caller's, freed by synthetic_csv_close().
 */
enum err_code synthetic_csv_open(json_t *run, json_t *spec, struct synthetic_csv **ret,
				 struct err *e);

/* Up to max bytes of the text into buf (not terminated); 0 at the end
 * only (max >= 1). */
size_t synthetic_csv_read(struct synthetic_csv *c, char *buf, size_t max);

/* Frees c and its references; NULL is a no-op. */
void synthetic_csv_close(struct synthetic_csv *c);

#endif /* SERVICE_SYNTHETIC_CSV_H */
