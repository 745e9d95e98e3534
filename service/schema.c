/*
 * schema.c - the dataset schema and bounds declared in schema.h.
 *
 * Parsing builds into locals and copies out at the end, so outputs are
 * untouched on failure; every check names the member it refuses.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "jv.h"
#include "schema.h"

/* Largest declared norm or label magnitude, as datasets.c had it. */
#define SCHEMA_MAX_BOUND 1e12

static const char *const task_names[TASK__COUNT] = {
	[TASK_BINARY] = "binary",
	[TASK_REGRESSION] = "regression",
	[TASK_MULTICLASS] = "multiclass",
	[TASK_UNLABELED] = "unlabeled",
};

const char *
schema_task_name(enum task t)
{
	return (unsigned)t < TASK__COUNT ? task_names[t] : NULL;
}

void
schema_extra_clear(struct schema_extra *x)
{
	for (size_t i = 0; i < DATA_MAX_CATEGORICAL; i++) {
		struct schema_labels *l = &x->labels[i];

		for (size_t k = 0; l->label != NULL && k < l->count; k++)
			free(l->label[k]);
		free(l->label);
	}
	free(x->binary.text[0]);
	free(x->binary.text[1]);
	memset(x, 0, sizeof(*x));
}

/* Member key of obj as an array (NULL when absent or null). */
static enum err_code
get_array(const json_t *obj, const char *prefix, const char *key, size_t max, json_t **ret,
	  struct err *e)
{
	json_t *v = json_object_get(obj, key);
	char path[64];

	jv_path(path, sizeof(path), prefix, key);
	*ret = NULL;
	if (v == NULL || json_is_null(v))
		return ERR_OK;
	if (!json_is_array(v))
		return err_set_field(e, ERR_INVALID, path, "'%s' must be an array", path);
	if (json_array_size(v) > max)
		return err_set_field(e, ERR_INVALID, path, "'%s' has more than %zu entries", path,
				     max);
	*ret = v;
	return ERR_OK;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Refuse a label no CSV cell could spell, or one that reads as a number. */
static enum err_code
check_label(const char *s, size_t n, const char *path, struct err *e)
{
	char buf[SCHEMA_MAX_LABEL + 1];
	enum decimal_status st;
	double v;

	if (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t' ||
	    strpbrk(s, ",\"\r\n") != NULL)
		return err_set_field(e, ERR_INVALID, path,
				     "'%s' must not have blanks at either end nor hold a comma, "
				     "a double quote or a line break",
				     path);
	memcpy(buf, s, n);
	st = decimal_parse(buf, buf + n, &v);
	if (st == DECIMAL_OK || st == DECIMAL_RANGE)
		return err_set_field(e, ERR_INVALID, path,
				     "'%s' must not be a number: a cell \"%s\" would be read as "
				     "an index",
				     path, s);
	return ERR_OK;
}

/* The "labels" array of categorical attribute i, into *l (owned copies). */
static enum err_code
parse_labels(const json_t *arr, const char *prefix, struct schema_labels *l, struct err *e)
{
	size_t n = json_array_size(arr);
	const char **sorted = NULL;
	char path[64];
	enum err_code rc = ERR_OK;

	jv_path(path, sizeof(path), prefix, "labels");
	if (n < 2 || n > SCHEMA_MAX_CATEGORY_SIZE)
		return err_set_field(e, ERR_INVALID, path, "'%s' must have 2 to %d labels", path,
				     SCHEMA_MAX_CATEGORY_SIZE);
	l->label = calloc(n, sizeof(*l->label));
	sorted = calloc(n, sizeof(*sorted));
	if (l->label == NULL || sorted == NULL) {
		rc = err_set(e, ERR_NOMEM, "out of memory for categorical labels");
		goto out;
	}
	l->count = n;
	for (size_t k = 0; k < n; k++) {
		json_t *v = json_array_get(arr, k);
		size_t len;

		snprintf(path, sizeof(path), "%s.labels[%zu]", prefix, k);
		if (!json_is_string(v)) {
			rc = err_set_field(e, ERR_INVALID, path, "'%s' must be a string", path);
			goto out;
		}
		len = json_string_length(v);
		if (len == 0 || len > SCHEMA_MAX_LABEL || strlen(json_string_value(v)) != len) {
			rc = err_set_field(e, ERR_INVALID, path,
					   "'%s' must be 1 to %d bytes without NUL characters",
					   path, SCHEMA_MAX_LABEL);
			goto out;
		}
		rc = check_label(json_string_value(v), len, path, e);
		if (rc != ERR_OK)
			goto out;
		l->label[k] = malloc(len + 1);
		if (l->label[k] == NULL) {
			rc = err_set(e, ERR_NOMEM, "out of memory for categorical labels");
			goto out;
		}
		memcpy(l->label[k], json_string_value(v), len + 1);
		sorted[k] = l->label[k];
	}
	qsort(sorted, n, sizeof(*sorted), cmp_str);
	for (size_t k = 1; k < n; k++) {
		if (strcmp(sorted[k - 1], sorted[k]) == 0) {
			jv_path(path, sizeof(path), prefix, "labels");
			rc = err_set_field(e, ERR_INVALID, path, "'%s' repeats the label \"%s\"",
					   path, sorted[k]);
			goto out;
		}
	}
out:
	free(sorted);
	return rc;
}

static enum err_code
parse_categorical(const json_t *schema, struct data_schema *s, struct schema_extra *x,
		  struct err *e)
{
	static const char *const keys[] = { "name", "size", "labels", NULL };
	json_t *arr, *item;
	size_t i;
	enum err_code rc;

	rc = get_array(schema, "schema", "categorical", DATA_MAX_CATEGORICAL, &arr, e);
	if (rc != ERR_OK || arr == NULL)
		return rc;
	json_array_foreach (arr, i, item) {
		struct data_categorical *c = &s->categorical[i];
		char prefix[48], path[64];
		const char *name;
		json_t *labels;
		long long size = 0;
		bool has_size;

		snprintf(prefix, sizeof(prefix), "schema.categorical[%zu]", i);
		if (!json_is_object(item))
			return err_set_field(e, ERR_INVALID, prefix, "'%s' must be an object",
					     prefix);
		if ((rc = jv_only_keys(item, prefix, keys, e)) != ERR_OK ||
		    (rc = jv_string(item, prefix, "name", true, DATA_MAX_NAME - 1, &name, e)) !=
			    ERR_OK ||
		    (rc = jv_integer(item, prefix, "size", false, 2, SCHEMA_MAX_CATEGORY_SIZE,
				     &size, &has_size, e)) != ERR_OK ||
		    (rc = get_array(item, prefix, "labels", SCHEMA_MAX_CATEGORY_SIZE, &labels,
				    e)) != ERR_OK)
			return rc;
		for (size_t k = 0; k < i; k++) {
			if (strcmp(s->categorical[k].name, name) == 0) {
				jv_path(path, sizeof(path), prefix, "name");
				return err_set_field(e, ERR_INVALID, path,
						     "'%s' repeats the name of "
						     "'schema.categorical[%zu]'",
						     path, k);
			}
		}
		jv_path(path, sizeof(path), prefix, "size");
		if (has_size && labels != NULL)
			return err_set_field(e, ERR_INVALID, path,
					     "give '%s' or '%s.labels', not both", path, prefix);
		if (!has_size && labels == NULL)
			return err_set_field(e, ERR_INVALID, path,
					     "'%s' or '%s.labels' is required", path, prefix);
		if (labels != NULL) {
			/* x->n_categorical first: clear() frees what was built */
			x->n_categorical = i + 1;
			rc = parse_labels(labels, prefix, &x->labels[i], e);
			if (rc != ERR_OK)
				return rc;
			size = (long long)x->labels[i].count;
		}
		snprintf(c->name, sizeof(c->name), "%s", name);
		c->size = (size_t)size;
		s->n_categorical = i + 1;
		x->n_categorical = i + 1;
	}
	return ERR_OK;
}

static enum err_code
parse_blocks(const json_t *schema, struct data_schema *s, struct err *e)
{
	static const char *const keys[] = { "name", "size", "bounds", NULL };
	static const char *const bound_keys[] = { "l2", "linf", NULL };
	json_t *arr, *item;
	size_t i, offset = 0;
	enum err_code rc;

	rc = get_array(schema, "schema", "blocks", DATA_MAX_BLOCKS, &arr, e);
	if (rc != ERR_OK || arr == NULL || json_array_size(arr) == 0)
		return rc; /* [] is no blocks: one implicit block of all features */
	json_array_foreach (arr, i, item) {
		struct data_block *b = &s->blocks[i];
		char prefix[48], bprefix[56], path[64];
		const char *name;
		json_t *bounds;
		long long size;
		bool has_l2, has_linf;

		snprintf(prefix, sizeof(prefix), "schema.blocks[%zu]", i);
		snprintf(bprefix, sizeof(bprefix), "%s.bounds", prefix);
		b->l2 = NAN;
		b->linf = NAN;
		if (!json_is_object(item))
			return err_set_field(e, ERR_INVALID, prefix, "'%s' must be an object",
					     prefix);
		if ((rc = jv_only_keys(item, prefix, keys, e)) != ERR_OK ||
		    (rc = jv_string(item, prefix, "name", true, DATA_MAX_NAME - 1, &name, e)) !=
			    ERR_OK ||
		    (rc = jv_integer(item, prefix, "size", true, 1, SCHEMA_MAX_FEATURES, &size,
				     NULL, e)) != ERR_OK ||
		    (rc = jv_object(item, prefix, "bounds", true, &bounds, e)) != ERR_OK ||
		    (rc = jv_only_keys(bounds, bprefix, bound_keys, e)) != ERR_OK ||
		    (rc = jv_number(bounds, bprefix, "l2", false, 0, true, SCHEMA_MAX_BOUND, &b->l2,
				    &has_l2, e)) != ERR_OK ||
		    (rc = jv_number(bounds, bprefix, "linf", false, 0, true, SCHEMA_MAX_BOUND,
				    &b->linf, &has_linf, e)) != ERR_OK)
			return rc;
		if (!has_l2 && !has_linf)
			return err_set_field(e, ERR_INVALID, bprefix,
					     "'%s' must declare 'l2' or 'linf' (or both)", bprefix);
		for (size_t k = 0; k < i; k++) {
			if (strcmp(s->blocks[k].name, name) == 0) {
				jv_path(path, sizeof(path), prefix, "name");
				return err_set_field(
					e, ERR_INVALID, path,
					"'%s' repeats the name of 'schema.blocks[%zu]'", path, k);
			}
		}
		if ((size_t)size > s->d - offset) {
			jv_path(path, sizeof(path), prefix, "size");
			return err_set_field(
				e, ERR_INVALID, path,
				"'%s' takes the block sizes past 'schema.features' = %zu", path,
				s->d);
		}
		snprintf(b->name, sizeof(b->name), "%s", name);
		b->offset = offset;
		b->size = (size_t)size;
		offset += (size_t)size;
		s->n_blocks = i + 1;
	}
	if (offset != s->d)
		return err_set_field(e, ERR_INVALID, "schema.blocks",
				     "the sizes in 'schema.blocks' sum to %zu, not to "
				     "'schema.features' = %zu",
				     offset, s->d);
	return ERR_OK;
}

/* "schema.labels": [negative, positive], binary only. */
static enum err_code
parse_binary_labels(const json_t *schema, const struct data_schema *s,
		    struct schema_binary_labels *l, struct err *e)
{
	json_t *arr, *v[2];
	enum err_code rc;

	rc = get_array(schema, "schema", "labels", 2, &arr, e);
	if (rc != ERR_OK || arr == NULL)
		return rc;
	if (s->task != TASK_BINARY)
		return err_set_field(e, ERR_INVALID, "schema.labels",
				     "'schema.labels' is only for the binary task");
	if (json_array_size(arr) != 2)
		return err_set_field(e, ERR_INVALID, "schema.labels",
				     "'schema.labels' must be [negative, positive]: two values");
	v[0] = json_array_get(arr, 0);
	v[1] = json_array_get(arr, 1);
	l->numeric = json_is_number(v[0]);
	for (size_t k = 0; k < 2; k++) {
		char path[32];

		snprintf(path, sizeof(path), "schema.labels[%zu]", k);
		if (l->numeric ? !json_is_number(v[k]) : !json_is_string(v[k]))
			return err_set_field(e, ERR_INVALID, path,
					     "'schema.labels' must be two numbers or two strings");
		if (l->numeric) {
			l->value[k] = json_number_value(v[k]);
			if (!isfinite(l->value[k]))
				return err_set_field(e, ERR_INVALID, path, "'%s' must be finite",
						     path);
			continue;
		}
		size_t len = json_string_length(v[k]);
		if (len == 0 || len > SCHEMA_MAX_LABEL || strlen(json_string_value(v[k])) != len)
			return err_set_field(e, ERR_INVALID, path,
					     "'%s' must be 1 to %d bytes without NUL characters",
					     path, SCHEMA_MAX_LABEL);
		rc = check_label(json_string_value(v[k]), len, path, e);
		if (rc != ERR_OK)
			return rc;
		l->text[k] = strdup(json_string_value(v[k]));
		if (l->text[k] == NULL)
			return err_set(e, ERR_NOMEM, "out of memory for schema.labels");
	}
	if (l->numeric ? l->value[0] == l->value[1] : strcmp(l->text[0], l->text[1]) == 0)
		return err_set_field(e, ERR_INVALID, "schema.labels",
				     "'schema.labels' must be two different values");
	l->declared = true;
	return ERR_OK;
}

json_t *
schema_label_json(const struct schema_binary_labels *l, bool positive)
{
	if (!l->declared)
		return json_integer(positive ? 1 : -1);
	if (!l->numeric)
		return json_string(l->text[positive]);
	if (l->value[positive] == floor(l->value[positive]) && fabs(l->value[positive]) < 9e15)
		return json_integer((json_int_t)l->value[positive]);
	return json_real(l->value[positive]);
}

static enum err_code
parse_schema(const json_t *schema, struct data_schema *s, struct schema_extra *x, struct err *e)
{
	static const char *const keys[] = { "features", "task",   "classes", "group", "categorical",
					    "blocks",   "format", "labels",  NULL };
	static const char *const group_keys[] = { "groups", NULL };
	const char *task, *format;
	json_t *group;
	long long features, classes = 0, groups = 0;
	bool has_classes;
	size_t t;
	enum err_code rc;

	if (schema == NULL || json_is_null(schema))
		return err_set_field(e, ERR_INVALID, "schema", "'schema' is required");
	if (!json_is_object(schema))
		return err_set_field(e, ERR_INVALID, "schema", "'schema' must be an object");
	if ((rc = jv_only_keys(schema, "schema", keys, e)) != ERR_OK ||
	    (rc = jv_integer(schema, "schema", "features", true, 0, SCHEMA_MAX_FEATURES, &features,
			     NULL, e)) != ERR_OK ||
	    (rc = jv_string(schema, "schema", "task", true, 32, &task, e)) != ERR_OK)
		return rc;
	for (t = 0; t < TASK__COUNT && strcmp(task, task_names[t]) != 0; t++)
		;
	if (t == TASK__COUNT)
		return err_set_field(e, ERR_INVALID, "schema.task",
				     "'schema.task' must be 'binary', 'regression', 'multiclass' "
				     "or 'unlabeled'");
	s->task = (enum task)t;
	s->d = (size_t)features;

	rc = jv_integer(schema, "schema", "classes", false, 2, DATA_MAX_CLASSES, &classes,
			&has_classes, e);
	if (rc != ERR_OK)
		return rc;
	if (s->task == TASK_MULTICLASS && !has_classes)
		return err_set_field(e, ERR_INVALID, "schema.classes",
				     "'schema.classes' is required for the multiclass task");
	if (s->task != TASK_MULTICLASS && has_classes)
		return err_set_field(e, ERR_INVALID, "schema.classes",
				     "'schema.classes' is only for the multiclass task");
	s->n_classes = (size_t)classes;

	if ((rc = jv_object(schema, "schema", "group", false, &group, e)) != ERR_OK)
		return rc;
	if (group != NULL) {
		if ((rc = jv_only_keys(group, "schema.group", group_keys, e)) != ERR_OK ||
		    (rc = jv_integer(group, "schema.group", "groups", true, 2, DATA_MAX_GROUPS,
				     &groups, NULL, e)) != ERR_OK)
			return rc;
		s->n_groups = (size_t)groups;
	}

	rc = parse_categorical(schema, s, x, e);
	if (rc != ERR_OK)
		return rc;
	if (s->d == 0 && s->n_categorical == 0)
		return err_set_field(e, ERR_INVALID, "schema.features",
				     "'schema.features' must be at least 1 without "
				     "'schema.categorical' attributes");
	rc = parse_blocks(schema, s, e);
	if (rc != ERR_OK)
		return rc;

	if ((rc = jv_string(schema, "schema", "format", false, 16, &format, e)) != ERR_OK)
		return rc;
	if (format == NULL || strcmp(format, "dense") == 0)
		x->format = SCHEMA_DENSE;
	else if (strcmp(format, "sparse") == 0)
		x->format = SCHEMA_SPARSE;
	else
		return err_set_field(e, ERR_INVALID, "schema.format",
				     "'schema.format' must be 'dense' (the default) or 'sparse'");
	return parse_binary_labels(schema, s, &x->binary, e);
}

/* "bounds.label_range" or "bounds.feature_range" (path): [lo, hi],
 * finite, lo < hi. */
static enum err_code
parse_range(const json_t *v, const char *path, double *ret_lo, double *ret_hi, struct err *e)
{
	double lo, hi;

	if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_number(json_array_get(v, 0)) ||
	    !json_is_number(json_array_get(v, 1)))
		return err_set_field(e, ERR_INVALID, path,
				     "'%s' must be an array [lo, hi] of two "
				     "numbers",
				     path);
	lo = json_number_value(json_array_get(v, 0));
	hi = json_number_value(json_array_get(v, 1));
	if (!(fabs(lo) <= SCHEMA_MAX_BOUND && fabs(hi) <= SCHEMA_MAX_BOUND))
		return err_set_field(e, ERR_INVALID, path, "'%s' must lie within [%g, %g]", path,
				     -SCHEMA_MAX_BOUND, SCHEMA_MAX_BOUND);
	if (!(lo < hi))
		return err_set_field(e, ERR_INVALID, path, "'%s' must have lo < hi", path);
	*ret_lo = lo;
	*ret_hi = hi;
	return ERR_OK;
}

/*
 * "bounds.feature_range": every feature cell in [lo, hi], clipped there at
 * ingestion.  It bounds each cell, so feature_linf = max(|lo|, |hi|) is
 * derived from it (and not written back, schema_bounds_to_json()).  It is
 * given alone: a feature_linf or feature_l2, or a block's bounds, clip
 * after it and could move a cell out of the range again (a row scaled into
 * an l2 ball leaves [lo, hi] when lo > 0).  A sparse dataset stores no
 * zeros: an absent cell is 0, so a range without 0 refuses the sparse
 * format (and LIBSVM uploads, rows.c).
 */
static enum err_code
parse_feature_range(const json_t *range, bool has_linf, bool has_l2, enum schema_format format,
		    struct data_schema *s, struct err *e)
{
	const char *path = "bounds.feature_range";
	double lo, hi;
	enum err_code rc;

	rc = parse_range(range, path, &lo, &hi, e);
	if (rc != ERR_OK)
		return rc;
	if (has_linf || has_l2)
		return err_set_field(e, ERR_INVALID, path,
				     "'%s' bounds every cell already: give it without "
				     "'bounds.feature_linf' and 'bounds.feature_l2'",
				     path);
	if (s->n_blocks > 0)
		return err_set_field(e, ERR_INVALID, path,
				     "'%s' is for datasets without 'schema.blocks'", path);
	if (format == SCHEMA_SPARSE && !(lo <= 0.0 && 0.0 <= hi))
		return err_set_field(e, ERR_INVALID, path,
				     "'%s' excludes 0, the value of every absent cell of a sparse "
				     "dataset: use the dense format",
				     path);
	s->feature_lo = lo;
	s->feature_hi = hi;
	s->bounds.feature_linf = fmax(fabs(lo), fabs(hi));
	return ERR_OK;
}

static enum err_code
parse_bounds(const json_t *bounds, enum schema_format format, struct data_schema *s, struct err *e)
{
	static const char *const keys[] = { "feature_linf", "feature_l2",    "label",
					    "label_range",  "feature_range", NULL };
	struct bounds *b = &s->bounds;
	json_t *range, *frange;
	bool has_linf, has_l2, has_label;
	double label = NAN, lo = NAN, hi = NAN;
	enum err_code rc;

	*b = (struct bounds){ NAN, NAN, NAN, NAN, NAN };
	s->feature_lo = s->feature_hi = NAN;
	if (bounds == NULL || json_is_null(bounds))
		return err_set_field(e, ERR_INVALID, "bounds", "'bounds' is required");
	if (!json_is_object(bounds))
		return err_set_field(e, ERR_INVALID, "bounds", "'bounds' must be an object");
	if ((rc = jv_only_keys(bounds, "bounds", keys, e)) != ERR_OK ||
	    (rc = jv_number(bounds, "bounds", "feature_linf", false, 0, true, SCHEMA_MAX_BOUND,
			    &b->feature_linf, &has_linf, e)) != ERR_OK ||
	    (rc = jv_number(bounds, "bounds", "feature_l2", false, 0, true, SCHEMA_MAX_BOUND,
			    &b->feature_l2, &has_l2, e)) != ERR_OK ||
	    (rc = jv_number(bounds, "bounds", "label", false, 0, true, SCHEMA_MAX_BOUND, &label,
			    &has_label, e)) != ERR_OK)
		return rc;
	range = json_object_get(bounds, "label_range");
	if (json_is_null(range))
		range = NULL;
	if (range != NULL && (rc = parse_range(range, "bounds.label_range", &lo, &hi, e)) != ERR_OK)
		return rc;
	frange = json_object_get(bounds, "feature_range");
	if (json_is_null(frange))
		frange = NULL;
	if (frange != NULL &&
	    (rc = parse_feature_range(frange, has_linf, has_l2, format, s, e)) != ERR_OK)
		return rc;
	if (s->d > 0 && !has_linf && !has_l2 && frange == NULL)
		return err_set_field(e, ERR_INVALID, "bounds.feature_l2",
				     "declare at least one feature bound: 'bounds.feature_l2', "
				     "'bounds.feature_linf' or 'bounds.feature_range'");
	if (s->task != TASK_REGRESSION) {
		if (has_label)
			return err_set_field(e, ERR_INVALID, "bounds.label",
					     "'bounds.label' is only for the regression task");
		if (range != NULL)
			return err_set_field(
				e, ERR_INVALID, "bounds.label_range",
				"'bounds.label_range' is only for the regression task");
		return ERR_OK;
	}
	if (has_label && range != NULL)
		return err_set_field(e, ERR_INVALID, "bounds.label_range",
				     "give 'bounds.label' or 'bounds.label_range', not both");
	if (!has_label && range == NULL)
		return err_set_field(e, ERR_INVALID, "bounds.label",
				     "'bounds.label' or 'bounds.label_range' is required for the "
				     "regression task");
	if (has_label) {
		lo = -label;
		hi = label;
	}
	b->label_lo = lo;
	b->label_hi = hi;
	b->label = fmax(fabs(lo), fabs(hi));
	return ERR_OK;
}

enum err_code
schema_parse_extra(const json_t *schema, const json_t *bounds, struct data_schema *ret,
		   struct schema_extra *ret_extra, struct err *e)
{
	struct data_schema s;
	struct schema_extra x;
	enum err_code rc;

	memset(&s, 0, sizeof(s));
	memset(&x, 0, sizeof(x));
	rc = parse_schema(schema, &s, &x, e);
	if (rc == ERR_OK)
		rc = parse_bounds(bounds, x.format, &s, e);
	if (rc != ERR_OK) {
		schema_extra_clear(&x);
		return rc;
	}
	*ret = s;
	if (ret_extra != NULL)
		*ret_extra = x; /* the labels move */
	else
		schema_extra_clear(&x);
	return ERR_OK;
}

enum err_code
schema_parse(const json_t *schema, const json_t *bounds, struct data_schema *ret, struct err *e)
{
	return schema_parse_extra(schema, bounds, ret, NULL, e);
}

/* Set key of obj to v (stolen); true on failure, including v == NULL. */
static bool
set(json_t *obj, const char *key, json_t *v)
{
	return json_object_set_new(obj, key, v) != 0;
}

static json_t *
categorical_json(const struct data_categorical *c, const struct schema_labels *l)
{
	json_t *o = json_object();
	bool bad = o == NULL;

	bad = bad || set(o, "name", json_string(c->name));
	if (l != NULL && l->label != NULL) {
		json_t *arr = json_array();

		bad = bad || arr == NULL;
		for (size_t k = 0; !bad && k < l->count; k++)
			bad = json_array_append_new(arr, json_string(l->label[k])) != 0;
		if (bad)
			json_decref(arr);
		else
			bad = set(o, "labels", arr);
	} else {
		bad = bad || set(o, "size", json_integer((json_int_t)c->size));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
block_json(const struct data_block *b)
{
	json_t *o = json_object(), *bounds = json_object();
	bool bad = o == NULL || bounds == NULL;

	if (!bad && !isnan(b->l2))
		bad = set(bounds, "l2", json_real(b->l2));
	if (!bad && !isnan(b->linf))
		bad = set(bounds, "linf", json_real(b->linf));
	bad = bad || set(o, "name", json_string(b->name)) ||
	      set(o, "size", json_integer((json_int_t)b->size));
	if (bad) {
		json_decref(bounds);
		json_decref(o);
		return NULL;
	}
	if (set(o, "bounds", bounds)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
schema_to_json_extra(const struct data_schema *s, const struct schema_extra *x)
{
	json_t *o = json_object();
	bool bad = o == NULL;

	bad = bad || set(o, "features", json_integer((json_int_t)s->d)) ||
	      set(o, "task", json_string(schema_task_name(s->task)));
	if (!bad && s->task == TASK_MULTICLASS)
		bad = set(o, "classes", json_integer((json_int_t)s->n_classes));
	if (!bad && s->n_groups > 0)
		bad = set(o, "group", json_pack("{s:I}", "groups", (json_int_t)s->n_groups));
	if (!bad && s->n_categorical > 0) {
		json_t *arr = json_array();

		bad = arr == NULL;
		for (size_t i = 0; !bad && i < s->n_categorical; i++)
			bad = json_array_append_new(
				      arr, categorical_json(&s->categorical[i],
							    x != NULL ? &x->labels[i] : NULL)) != 0;
		bad = bad ? (json_decref(arr), true) : set(o, "categorical", arr);
	}
	if (!bad && s->n_blocks > 0) {
		json_t *arr = json_array();

		bad = arr == NULL;
		for (size_t i = 0; !bad && i < s->n_blocks; i++)
			bad = json_array_append_new(arr, block_json(&s->blocks[i])) != 0;
		bad = bad ? (json_decref(arr), true) : set(o, "blocks", arr);
	}
	if (!bad && x != NULL)
		bad = set(o, "format",
			  json_string(x->format == SCHEMA_SPARSE ? "sparse" : "dense"));
	if (!bad && x != NULL && x->binary.declared)
		bad = set(o, "labels",
			  json_pack("[o, o]", schema_label_json(&x->binary, false),
				    schema_label_json(&x->binary, true)));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
schema_to_json(const struct data_schema *s)
{
	return schema_to_json_extra(s, NULL);
}

json_t *
schema_bounds_to_json(const struct data_schema *s)
{
	const struct bounds *b = &s->bounds;
	json_t *o = json_object();
	double lo, hi;
	bool bad = o == NULL, range = schema_feature_range(s, &lo, &hi);

	/* With a range, feature_linf is derived from it (parse_feature_range). */
	if (!bad && range)
		bad = set(o, "feature_range", json_pack("[f, f]", lo, hi));
	if (!bad && !range && !isnan(b->feature_linf))
		bad = set(o, "feature_linf", json_real(b->feature_linf));
	if (!bad && !isnan(b->feature_l2))
		bad = set(o, "feature_l2", json_real(b->feature_l2));
	if (!bad && !isnan(b->label_lo) && !isnan(b->label_hi)) {
		if (b->label_lo == -b->label_hi && b->label == b->label_hi)
			bad = set(o, "label", json_real(b->label));
		else
			bad = set(o, "label_range", json_pack("[f, f]", b->label_lo, b->label_hi));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static bool
same(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

bool
schema_equal(const struct data_schema *a, const struct data_schema *b)
{
	if (a->d != b->d || a->task != b->task || a->n_classes != b->n_classes ||
	    a->n_groups != b->n_groups || a->n_blocks != b->n_blocks ||
	    a->n_categorical != b->n_categorical)
		return false;
	for (size_t i = 0; i < a->n_blocks && i < DATA_MAX_BLOCKS; i++) {
		const struct data_block *x = &a->blocks[i], *y = &b->blocks[i];

		if (strcmp(x->name, y->name) != 0 || x->offset != y->offset || x->size != y->size ||
		    !same(x->l2, y->l2) || !same(x->linf, y->linf))
			return false;
	}
	for (size_t i = 0; i < a->n_categorical && i < DATA_MAX_CATEGORICAL; i++) {
		if (strcmp(a->categorical[i].name, b->categorical[i].name) != 0 ||
		    a->categorical[i].size != b->categorical[i].size)
			return false;
	}
	return same(a->bounds.feature_linf, b->bounds.feature_linf) &&
	       same(a->bounds.feature_l2, b->bounds.feature_l2) &&
	       same(a->bounds.label, b->bounds.label) &&
	       same(a->bounds.label_lo, b->bounds.label_lo) &&
	       same(a->bounds.label_hi, b->bounds.label_hi) &&
	       schema_feature_range(a, NULL, NULL) == schema_feature_range(b, NULL, NULL) &&
	       (!schema_feature_range(a, NULL, NULL) ||
		(a->feature_lo == b->feature_lo && a->feature_hi == b->feature_hi));
}

bool
schema_extra_equal(const struct schema_extra *a, const struct schema_extra *b)
{
	const struct schema_binary_labels *p = &a->binary, *q = &b->binary;

	if (a->format != b->format || a->n_categorical != b->n_categorical ||
	    p->declared != q->declared)
		return false;
	if (p->declared && (p->numeric != q->numeric ||
			    (p->numeric ? p->value[0] != q->value[0] || p->value[1] != q->value[1]
					: strcmp(p->text[0], q->text[0]) != 0 ||
						  strcmp(p->text[1], q->text[1]) != 0)))
		return false;
	for (size_t i = 0; i < a->n_categorical && i < DATA_MAX_CATEGORICAL; i++) {
		const struct schema_labels *x = &a->labels[i], *y = &b->labels[i];

		if (x->count != y->count || (x->label == NULL) != (y->label == NULL))
			return false;
		for (size_t k = 0; x->label != NULL && k < x->count; k++)
			if (strcmp(x->label[k], y->label[k]) != 0)
				return false;
	}
	return true;
}
