/*
 * model.c - the model document of a run and scoring rows with it
 * (model.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "jv.h"
#include "model.h"
#include "rows.h"

/* Margins per row of objective name under schema s (1, or K). */
static size_t
n_out_of(enum predict_link link, const struct data_schema *s)
{
	return link == PREDICT_SOFTMAX ? s->n_classes : 1;
}

static json_t *
num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

enum err_code
model_document(const json_t *run, const json_t *spec, json_t **ret, struct err *e)
{
	const char *state = json_string_value(json_object_get(run, "state"));
	const char *id = json_string_value(json_object_get(run, "id"));
	json_t *req = json_object_get(run, "request"), *result = json_object_get(run, "result");
	json_t *obj = json_object_get(req, "objective"), *x = json_object_get(result, "x");
	json_t *names = json_object_get(result, "feature_names"), *coef, *icpt, *doc;
	const char *name = json_string_value(json_object_get(obj, "name"));
	bool has_icpt = json_is_true(json_object_get(obj, "intercept"));
	struct data_schema s;
	enum predict_link link;
	size_t d, K;

	if (state == NULL || strcmp(state, "succeeded") != 0)
		return err_set(e, ERR_CONFLICT, "run '%s' has not succeeded (state '%s'): no model",
			       id != NULL ? id : "", state != NULL ? state : "");
	if (name == NULL || !predict_link_of(name, &link))
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "the run's objective '%s' ('objective.name') does not "
				     "predict: it has no model to score rows with",
				     name != NULL ? name : "");
	if (schema_parse(json_object_get(spec, "schema"), json_object_get(spec, "bounds"), &s, e) !=
	    ERR_OK)
		return err_set(e, ERR_INTERNAL, "run '%s': unreadable stored schema",
			       id != NULL ? id : "");
	d = s.d;
	K = n_out_of(link, &s);
	if (!json_is_array(x) || K == 0 || json_array_size(x) != (d + (has_icpt ? 1 : 0)) * K)
		return err_set(e, ERR_INTERNAL, "run '%s': the result does not fit its objective",
			       id != NULL ? id : "");
#define W(i) json_number_value(json_array_get(x, (i)))
	if (K == 1) {
		coef = json_array();
		for (size_t j = 0; coef != NULL && j < d; j++)
			json_array_append_new(coef, num(W(j)));
		icpt = has_icpt ? num(W(d)) : json_null();
	} else {
		coef = json_array();
		icpt = has_icpt ? json_array() : json_null();
		for (size_t k = 0; coef != NULL && k < K; k++) {
			json_t *row = json_array();

			for (size_t j = 0; row != NULL && j < d; j++)
				json_array_append_new(row, num(W(j * K + k)));
			json_array_append_new(coef, row);
			if (has_icpt && icpt != NULL)
				json_array_append_new(icpt, num(W(d * K + k)));
		}
	}
#undef W
	doc = json_pack("{s:s?, s:O?, s:O, s:O, s:O, s:o, s:o, s:O?}", "run_id", id, "algorithm",
			json_object_get(run, "algorithm"), "objective", obj, "schema",
			json_object_get(spec, "schema"), "bounds", json_object_get(spec, "bounds"),
			"coefficients", coef, "intercept", icpt, "privacy",
			json_object_get(run, "privacy"));
	if (doc != NULL && json_object_get(doc, "run_id") == NULL)
		json_object_set_new(doc, "run_id", json_null());
	if (doc != NULL && json_is_array(names) &&
	    json_object_set(doc, "feature_names", names) != 0) {
		json_decref(doc);
		doc = NULL;
	}
	if (doc == NULL)
		return err_set(e, ERR_NOMEM, "out of memory for the model");
	*ret = doc;
	return ERR_OK;
}

void
model_clear(struct model *m)
{
	schema_extra_clear(&m->x);
	free(m->w);
	memset(m, 0, sizeof(*m));
}

/* n finite numbers of arr into out; field names arr. */
static enum err_code
numbers(const json_t *arr, size_t n, const char *field, double *out, struct err *e)
{
	if (!json_is_array(arr) || json_array_size(arr) != n)
		return err_set_field(e, ERR_INVALID, field, "'%s' must be an array of %zu numbers",
				     field, n);
	for (size_t j = 0; j < n; j++) {
		json_t *v = json_array_get(arr, j);

		if (!json_is_number(v) || !isfinite(json_number_value(v)))
			return err_set_field(e, ERR_INVALID, field,
					     "'%s' must be an array of %zu finite numbers", field,
					     n);
		out[j] = json_number_value(v);
	}
	return ERR_OK;
}

enum err_code
model_load(const json_t *doc, struct model *ret, struct err *e)
{
	static const char *const obj_keys[] = { "name",
						"intercept",
						"ridge",
						"l1",
						"huber_delta",
						"class_prior",
						"group_proportions",
						"coupling",
						"parity_tolerance",
						"matrix",
						"width",
						"init_seed",
						NULL };
	struct model m = { 0 };
	json_t *obj, *coef, *icpt;
	const char *name;
	double *tmp = NULL;
	size_t d, K, dim;
	enum err_code rc;

	if (!json_is_object(doc))
		return err_set_field(e, ERR_INVALID, "model", "the model must be a JSON object");
	if ((rc = jv_object(doc, "model", "objective", true, &obj, e)) != ERR_OK ||
	    (rc = jv_only_keys(obj, "model.objective", obj_keys, e)) != ERR_OK ||
	    (rc = jv_string(obj, "model.objective", "name", true, 64, &name, e)) != ERR_OK)
		return rc;
	if (!predict_link_of(name, &m.p.link))
		return err_set_field(e, ERR_INVALID, "model.objective.name",
				     "'model.objective.name' '%s' does not predict", name);
	rc = schema_parse_extra(json_object_get(doc, "schema"), json_object_get(doc, "bounds"),
				&m.s, &m.x, e);
	if (rc != ERR_OK) {
		err_prefix_field(e, "model");
		return rc;
	}
	d = m.s.d;
	K = n_out_of(m.p.link, &m.s);
	if (K == 0 || (m.p.link == PREDICT_SOFTMAX) != (m.s.task == TASK_MULTICLASS) ||
	    m.s.task == TASK_UNLABELED) {
		model_clear(&m);
		return err_set_field(e, ERR_INVALID, "model.objective.name",
				     "'model.objective.name' does not fit 'model.schema.task'");
	}
	icpt = json_object_get(doc, "intercept");
	m.p.intercept = icpt != NULL && !json_is_null(icpt);
	m.p.d = d;
	m.p.n_out = K;
	m.p.classify = m.s.task != TASK_REGRESSION;
	m.ncols = d + m.s.n_categorical + (m.s.n_groups > 0 ? 1 : 0);
	dim = (d + (m.p.intercept ? 1 : 0)) * K;
	m.w = calloc(dim + 1, sizeof(double));
	tmp = calloc(d + K + 1, sizeof(double));
	if (m.w == NULL || tmp == NULL) {
		rc = err_set(e, ERR_NOMEM, "out of memory for the model");
		goto out;
	}
	coef = json_object_get(doc, "coefficients");
	if (K == 1) {
		rc = numbers(coef, d, "model.coefficients", m.w, e);
		if (rc == ERR_OK && m.p.intercept) {
			if (json_is_number(icpt) && isfinite(json_number_value(icpt)))
				m.w[d] = json_number_value(icpt);
			else
				rc = err_set_field(e, ERR_INVALID, "model.intercept",
						   "'model.intercept' must be null or a number");
		}
	} else {
		if (!json_is_array(coef) || json_array_size(coef) != K)
			rc = err_set_field(e, ERR_INVALID, "model.coefficients",
					   "'model.coefficients' must be %zu arrays (one a class)",
					   K);
		for (size_t k = 0; rc == ERR_OK && k < K; k++) {
			rc = numbers(json_array_get(coef, k), d, "model.coefficients", tmp, e);
			for (size_t j = 0; rc == ERR_OK && j < d; j++)
				m.w[j * K + k] = tmp[j];
		}
		if (rc == ERR_OK && m.p.intercept)
			rc = numbers(icpt, K, "model.intercept", m.w + d * K, e);
	}
out:
	free(tmp);
	if (rc != ERR_OK) {
		model_clear(&m);
		return rc;
	}
	m.p.w = m.w;
	*ret = m;
	return ERR_OK;
}

/* Rows being read: features only, at most max rows. */
struct rowbuf {
	const struct model *m;
	double *rows; /* owned until handed over */
	size_t n, cap, max;
};

static enum err_code
add_row(struct rowbuf *b, const double *cells, struct err *e)
{
	size_t d = b->m->s.d;

	if (b->n == b->max)
		return err_set_field(e, ERR_INVALID, "rows",
				     "more than %zu rows to score ('rows'): send them in parts",
				     b->max);
	if (b->n == b->cap) {
		size_t cap = b->cap == 0 ? 64 : 2 * b->cap;
		double *p = realloc(b->rows, (cap * d + 1) * sizeof(double));

		if (p == NULL)
			return err_set(e, ERR_NOMEM, "out of memory for the rows");
		b->rows = p;
		b->cap = cap;
	}
	memcpy(b->rows + b->n * d, cells, d * sizeof(double));
	rows_clip_dense(&b->m->s, b->rows + b->n * d);
	b->n++;
	return ERR_OK;
}

static enum err_code
on_csv(void *ctx, const double *cells, size_t ncols, unsigned long line, struct err *e)
{
	(void)ncols;
	(void)line;
	return add_row(ctx, cells, e);
}

static enum err_code
hand_over(struct rowbuf *b, enum err_code rc, double **ret_rows, size_t *ret_n)
{
	if (rc != ERR_OK) {
		free(b->rows);
		return rc;
	}
	*ret_rows = b->rows;
	*ret_n = b->n;
	return ERR_OK;
}

enum err_code
model_rows_csv(const struct model *m, const char *text, size_t len, size_t max_rows,
	       double **ret_rows, size_t *ret_n, struct err *e)
{
	struct rowbuf b = { .m = m, .max = max_rows };
	struct csv_parser p = { 0 };
	enum err_code rc;

	rc = csv_parser_init(&p, m->ncols, m->ncols * 64 + 256, on_csv, &b, e);
	for (size_t c = 0; rc == ERR_OK && c < m->s.n_categorical; c++)
		if (m->x.labels[c].count > 0)
			rc = csv_parser_set_labels(&p, m->s.d + c,
						   (const char *const *)m->x.labels[c].label,
						   m->x.labels[c].count, e);
	if (rc == ERR_OK)
		rc = csv_parser_feed(&p, text, len, e);
	if (rc == ERR_OK)
		rc = csv_parser_finish(&p, e);
	csv_parser_clear(&p);
	if (rc == ERR_INVALID)
		snprintf(e->field, sizeof(e->field), "rows");
	return hand_over(&b, rc, ret_rows, ret_n);
}

enum err_code
model_rows_json(const struct model *m, const json_t *doc, size_t max_rows, double **ret_rows,
		size_t *ret_n, struct err *e)
{
	static const char *const keys[] = { "rows", NULL };
	struct rowbuf b = { .m = m, .max = max_rows };
	json_t *arr, *row;
	double *cells = NULL;
	size_t i;
	enum err_code rc;

	if ((rc = jv_only_keys(doc, "", keys, e)) != ERR_OK)
		return rc;
	arr = json_object_get(doc, "rows");
	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return err_set_field(e, ERR_INVALID, "rows",
				     "'rows' must be a non-empty array of rows (arrays of %zu "
				     "numbers)",
				     m->ncols);
	if (json_array_size(arr) > max_rows)
		return err_set_field(e, ERR_INVALID, "rows",
				     "more than %zu rows to score ('rows'): send them in parts",
				     max_rows);
	cells = calloc(m->ncols + 1, sizeof(double));
	if (cells == NULL)
		return err_set(e, ERR_NOMEM, "out of memory for the rows");
	json_array_foreach (arr, i, row) {
		char field[48];

		snprintf(field, sizeof(field), "rows[%zu]", i);
		rc = numbers(row, m->ncols, field, cells, e);
		if (rc == ERR_OK)
			rc = add_row(&b, cells, e);
		if (rc != ERR_OK)
			break;
	}
	free(cells);
	return hand_over(&b, rc, ret_rows, ret_n);
}

static json_t *
prediction(const struct model *m, const double *x)
{
	size_t K = m->p.n_out;
	double margin[DATA_MAX_CLASSES + 1], prob[DATA_MAX_CLASSES + 1];
	long cls;
	json_t *o;

	predict_row(&m->p, x, margin, prob, &cls);
	if (m->p.link == PREDICT_SOFTMAX) {
		json_t *ms = json_array(), *ps = json_array();

		for (size_t k = 0; ms != NULL && ps != NULL && k < K; k++) {
			json_array_append_new(ms, num(margin[k]));
			json_array_append_new(ps, num(prob[k]));
		}
		return json_pack("{s:o, s:o, s:I}", "margins", ms, "probabilities", ps, "class",
				 (json_int_t)cls);
	}
	o = json_pack("{s:o}", "margin", num(margin[0]));
	if (o == NULL)
		return NULL;
	if (m->p.link == PREDICT_LOGISTIC)
		json_object_set_new(o, "probability", num(prob[0]));
	if (m->s.task == TASK_REGRESSION)
		json_object_set_new(o, "prediction", num(margin[0]));
	else
		json_object_set_new(o, "class", schema_label_json(&m->x.binary, cls > 0));
	return o;
}

json_t *
model_predict_json(const struct model *m, const double *rows, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr != NULL && i < n; i++) {
		json_t *p = prediction(m, rows + i * m->s.d);

		if (p == NULL || json_array_append_new(arr, p) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr != NULL ? json_pack("{s:o, s:I}", "predictions", arr, "n_rows", (json_int_t)n)
			   : NULL;
}
