/*
 * constraint_json.h - the JSON form of each constraint kind: its keys,
 * parsed into a struct constraint and written back normalised.
 *
 * One row per kind, a table parallel to the operations of
 * algorithms/constraint.c and indexed by the same enum (the algorithms
 * layer may not use jansson).  A kind without a row fails to compile when
 * it is the last and fails tests/unit/test_constraint_json.c otherwise.
 */
#ifndef SERVICE_CONSTRAINT_JSON_H
#define SERVICE_CONSTRAINT_JSON_H

#include <jansson.h>

#include "constraint.h"
#include "err.h"

struct constraint_json_ops {
	/* The members besides "kind", NULL-terminated (borrowed, static). */
	const char *const *keys;
	/* obj's keys (checked to be "kind" plus keys) into c, whose kind is
	 * set; errors name prefix.key.  The API's own ranges (1e9 caps) are
	 * checked here, the set's rules by constraint_validate() after.  A
	 * kind whose data c borrows (a polytope's vertices) allocates it and
	 * hands it over in *ret_owned (left alone by the others). */
	enum err_code (*parse)(const json_t *obj, const char *prefix, struct constraint *c,
			       double **ret_owned, struct err *e);
	/* The members besides "kind" written into obj (owned by the caller);
	 * false when out of memory. */
	bool (*to_json)(const struct constraint *c, json_t *obj);
};

/* The row of kind k; NULL when k is not a kind. */
const struct constraint_json_ops *constraint_json_ops_of(enum constraint_kind k);

/*
 * The constraint object obj at JSON path prefix ("constraints.x") into
 * *ret, and its normalised form into *ret_norm (owned by the caller): the
 * kind must be named, be one of the bits of supported (1u << kind; else
 * "<who> does not support ..."), have exactly its keys, and validate
 * (constraint_validate() in dimension 1, a polytope in its vertices'
 * dimension).  Every error names the field.  A polytope's vertex storage,
 * which *ret borrows, is handed to the caller in *ret_owned (free() it
 * after the last use of every copy of *ret); NULL for the other kinds and
 * on error.
 */
enum err_code constraint_json_parse(const json_t *obj, const char *prefix, const char *who,
				    unsigned supported, struct constraint *ret, double **ret_owned,
				    json_t **ret_norm, struct err *e);

/* {"kind": ..., keys...} of c; a new reference, NULL when out of memory or
 * c's kind is not a kind. */
json_t *constraint_json(const struct constraint *c);

#endif /* SERVICE_CONSTRAINT_JSON_H */
