/*
 * schema.h - the "schema" and "bounds" members of POST /v1/datasets, from
 * JSON to struct data_schema (algorithms/data.h) and back.
 *
 * Accepted (every unknown key, wrong type or out-of-range value is
 * ERR_INVALID naming its dotted field, e.g. "schema.blocks[1].size"):
 *
 *   schema: {
 *     "features": d,            integer 0 .. SCHEMA_MAX_FEATURES; 0 only
 *                               with categorical attributes
 *     "task": "binary" | "regression" | "multiclass" | "unlabeled",
 *     "classes": K,             multiclass only (and required), 2 .. DATA_MAX_CLASSES
 *     "group": {"groups": G},   optional, 2 .. DATA_MAX_GROUPS
 *     "categorical": [          optional, at most DATA_MAX_CATEGORICAL
 *       {"name": str, "size": m}  or  {"name": str, "labels": [str, ...]}
 *     ],                        names unique; m (or the label count) 2 ..
 *                               SCHEMA_MAX_CATEGORY_SIZE
 *     "blocks": [               optional, at most DATA_MAX_BLOCKS
 *       {"name": str, "size": k, "bounds": {"l2": r, "linf": r}}
 *     ],                        names unique, k >= 1, sizes sum to d, at
 *                               least one bound per block; [] = absent
 *     "format": "dense" | "sparse"   optional, default dense
 *     "labels": [negative, positive]  binary only, optional: the two values
 *                               the label column holds, both numbers
 *                               (e.g. [0, 1]) or both strings (e.g.
 *                               ["no", "yes"], the categorical label rules
 *                               below), distinct; mapped to -1 and +1 at
 *                               ingestion (rows_map_label(), rows.h).
 *                               Absent: the label column holds -1 and 1.
 *   }
 *   bounds: {
 *     "feature_linf", "feature_l2"   at least one when d > 0
 *     "label"                        max |y|, regression only
 *     "label_range": [lo, hi]        regression only, lo < hi
 *     "feature_range": [lo, hi]      every feature cell in [lo, hi], lo < hi,
 *                                    clipped there at ingestion; alone (no
 *                                    feature_linf, feature_l2 or blocks),
 *                                    and not with the sparse format unless
 *                                    lo <= 0 <= hi (an absent cell is 0);
 *                                    implies feature_linf = max(|lo|, |hi|)
 *   }
 *
 * Names are 1 .. DATA_MAX_NAME - 1 bytes.  Norm bounds are in (0, 1e12];
 * label_range and feature_range ends in [-1e12, 1e12].  Regression needs exactly one of
 * "label" and "label_range".  A label of a categorical attribute is 1 ..
 * SCHEMA_MAX_LABEL bytes, unique within its attribute, and must be a
 * string some CSV cell can spell that is not also a number: no comma,
 * double quote, CR or LF, no blank at either end, and not a decimal
 * number (a cell "2" would otherwise be ambiguous between the label "2"
 * and the index 2; csv.h).
 *
 * Filled: struct bounds with NAN for what is not declared; for regression
 * label_lo/label_hi = the range, or [-label, label], and label =
 * max(|label_lo|, |label_hi|).  (data.h's comment says label_lo is NAN
 * when only label is declared; this module follows the newer rule.)
 *
 * The categorical labels and the format are not algorithm inputs, so they
 * are not in struct data_schema: schema_parse_extra() also fills a struct
 * schema_extra, which the upload path needs to map label cells.
 */
#ifndef SERVICE_SCHEMA_H
#define SERVICE_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "data.h"
#include "err.h"

#define SCHEMA_MAX_FEATURES      1000000
#define SCHEMA_MAX_CATEGORY_SIZE 65536
#define SCHEMA_MAX_LABEL         64 /* bytes of a categorical label */

/* Which upload encoding the owner means to use (informational). */
enum schema_format {
	SCHEMA_DENSE,  /* CSV rows */
	SCHEMA_SPARSE, /* LIBSVM lines */
};

/* The labels of one categorical attribute. */
struct schema_labels {
	size_t count; /* labels (= the attribute's size); 0 when declared by "size" */
	char **label; /* owned: count NUL-terminated strings in index order, or NULL */
};

/* The declared values of a binary label ("schema.labels"). */
struct schema_binary_labels {
	bool declared;   /* false: the label column holds -1 and 1 */
	bool numeric;    /* numbers (value), else strings (text) */
	double value[2]; /* numeric: the negative and the positive label */
	char *text[2];   /* owned, strings: the negative and the positive label, or NULL */
};

/* The service-side rest of a schema.  Owns its labels: schema_extra_clear(). */
struct schema_extra {
	enum schema_format format;
	size_t n_categorical; /* = data_schema.n_categorical */
	struct schema_labels labels[DATA_MAX_CATEGORICAL];
	struct schema_binary_labels binary; /* schema.labels */
};

/* The declared label of margin sign: positive (margin > 0) or negative, as
 * a new JSON value (number or string; -1 / 1 when none was declared).  NULL
 * when out of memory. */
json_t *schema_label_json(const struct schema_binary_labels *l, bool positive);

/* Parse the "schema" and "bounds" members (borrowed; either may be NULL,
 * which is "required" error).  *ret is written only on success. */
enum err_code schema_parse(const json_t *schema, const json_t *bounds, struct data_schema *ret,
			   struct err *e);

/* As schema_parse(), and fill *ret_extra (may be NULL), which then owns
 * copies of the labels.  Both outputs are written only on success. */
enum err_code schema_parse_extra(const json_t *schema, const json_t *bounds,
				 struct data_schema *ret, struct schema_extra *ret_extra,
				 struct err *e);

/* The "schema" member for s (new reference; NULL when out of memory):
 * categorical attributes by size, no "format".  s must be one that
 * schema_parse() produced; schema_parse() of the result gives s back. */
json_t *schema_to_json(const struct data_schema *s);

/* As schema_to_json(), with labels and format from x (may be NULL). */
json_t *schema_to_json_extra(const struct data_schema *s, const struct schema_extra *x);

/* The "bounds" member of s (new reference; NULL when out of memory).  A
 * symmetric regression range is written as "label"; with a feature range,
 * "feature_range" and not the feature_linf derived from it. */
json_t *schema_bounds_to_json(const struct data_schema *s);

/* Field-by-field equality (NAN equals NAN; name bytes after the NUL
 * ignored). */
bool schema_equal(const struct data_schema *a, const struct data_schema *b);
bool schema_extra_equal(const struct schema_extra *a, const struct schema_extra *b);

/* "binary", "regression", ...; NULL for an out-of-range task. */
const char *schema_task_name(enum task t);

/* Free the labels; accepts a zeroed or cleared struct.  Zeroes x. */
void schema_extra_clear(struct schema_extra *x);

#endif /* SERVICE_SCHEMA_H */
