/*
 * upload.h - PUT /v1/datasets/{id}/data: the streamed, all-or-nothing CSV
 * upload that clips every row to the declared bounds and seals the
 * dataset.
 */
#ifndef SERVICE_UPLOAD_H
#define SERVICE_UPLOAD_H

#include <stddef.h>

#include "data.h"
#include "err.h"
#include "http.h"

extern const struct stream_ops upload_ops;

/* Clip one row in place: coordinates to [-linf, linf], then the row to l2
 * norm <= feature_l2, then the label to [-label, label] for regression;
 * binary labels must be -1 or +1 (ERR_INVALID otherwise).  Exposed for
 * the unit tests; undeclared bounds (NAN) are not applied. */
enum err_code upload_clip_row(const struct bounds *b, enum task task, double *x, size_t d,
			      double *y, struct err *e);

#endif /* SERVICE_UPLOAD_H */
