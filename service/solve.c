/*
 * solve.c - `dpoptd solve` (solve.h): read local files through the
 * upload's parsers and row rules, build the run request the API would get,
 * and run it through the service's own pipeline (run_pipeline.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "alg.h"
#include "csv.h"
#include "datasets.h"
#include "evaluate.h"
#include "handlers.h"
#include "libsvm.h"
#include "model.h"
#include "rows.h"
#include "run_pipeline.h"
#include "run_pool.h"
#include "schema.h"
#include "solve.h"

#define READ_BYTES (64u << 10)

struct solve_opts {
	const char *data, *format, *schema, *algorithm, *objective, *constraint, *constraint_y;
	const char *epsilon, *delta, *params, *mode, *eval, *eval_format;
	const char *predict, *model,
		*save_model; /* model.h: rows to score, a model to read/write */
	bool list;
	bool large_delta_ok; /* --acknowledge-large-delta: the dataset key of that name */
};

/* Progress on stderr (solve.h): data-independent, steps done / total. */
struct progress {
	struct timespec start;
	double after;   /* seconds before the first line */
	double printed; /* seconds at the last line, or -1 */
};

static double
since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static bool
on_progress(void *ctx, unsigned long done, unsigned long total)
{
	struct progress *p = ctx;
	double t = since(&p->start);

	if (t >= p->after && (p->printed < 0 || t - p->printed >= 0.5 || done == total)) {
		fprintf(stderr, "dpoptd solve: step %lu / %lu\n", done, total);
		p->printed = t;
	}
	return true;
}

static void
progress_init(struct progress *p)
{
	const char *ms = getenv("DPOPTD_SOLVE_PROGRESS_AFTER_MS");
	char *end;
	double v = ms != NULL ? strtod(ms, &end) : -1;

	clock_gettime(CLOCK_MONOTONIC, &p->start);
	p->after = ms != NULL && *ms != '\0' && *end == '\0' && v >= 0 ? v / 1000.0 : 1.0;
	p->printed = -1;
}

/* Rows of one file, through the upload's rules (rows.h). */
struct reader {
	const struct data_schema *s;
	const struct schema_extra *x;
	struct rows_builder *b;
	double *row;   /* d + tail */
	uint32_t *col; /* d */
};

static void
print_error(const struct err *e)
{
	json_t *j = json_pack("{s:{s:s, s:s, s:s*}}", "error", "code", err_code_name(e->code),
			      "message", e->msg, "field", e->field[0] != '\0' ? e->field : NULL);
	char *text = j != NULL ? json_dumps(j, JSON_INDENT(2)) : NULL;

	fprintf(stderr, "%s\n", text != NULL ? text : e->msg);
	free(text);
	json_decref(j);
}

static int
usage(const char *why)
{
	fprintf(stderr,
		"dpoptd solve: %s\n"
		"usage: dpoptd solve --data FILE --format csv|libsvm --schema FILE.json\n"
		"                    --algorithm NAME [--objective NAME|JSON] (all but synthetic "
		"data)\n"
		"                    [--constraint KIND:KEY=VALUE,...|JSON|@FILE.json]\n"
		"                    --epsilon E --delta D\n"
		"                    [--constraint-y KIND:KEY=VALUE,...|JSON|@FILE.json] (saddle "
		"methods)\n"
		"                    [--params JSON] [--mode renyi|basic] "
		"[--acknowledge-large-delta]\n"
		"                    [--eval FILE [--eval-format csv|libsvm]]\n"
		"                    [--predict FILE] [--save-model FILE.json]\n"
		"       dpoptd solve --model FILE.json --predict FILE\n"
		"       dpoptd solve --list\n",
		why);
	return 2;
}

static enum err_code
on_csv(void *ctx, const double *cells, size_t ncols, unsigned long line, struct err *e)
{
	struct reader *r = ctx;
	enum err_code rc;

	memcpy(r->row, cells, ncols * sizeof(double));
	rc = rows_map_label(&r->x->binary, true, &r->row[ncols - 1], line, "column", ncols, e);
	if (rc == ERR_OK)
		rc = rows_ingest_dense(r->s, r->row, line, e);
	if (rc != ERR_OK)
		return rc;
	return rows_builder_add_dense(r->b, r->row, r->row + r->s->d, e);
}

static enum err_code
on_svm(void *ctx, const struct libsvm_row *row, struct err *e)
{
	struct reader *r = ctx;
	struct libsvm_row m = *row; /* the label mapped */
	double tail[2];
	size_t nnz;
	enum err_code rc;

	rc = rows_map_label(&r->x->binary, false, &m.label, row->line, "entry", 1, e);
	if (rc == ERR_OK)
		rc = rows_ingest_libsvm(r->s, &m, r->col, r->row, &nnz, tail, e);
	if (rc != ERR_OK)
		return rc;
	return rows_builder_add_sparse(r->b, r->col, r->row, nnz, tail, e);
}

/* Read path (format "csv" or "libsvm") into b, whose schema is s. */
static enum err_code
read_rows(const char *path, const char *format, const struct data_schema *s,
	  const struct schema_extra *x, struct rows_builder *b, struct err *e)
{
	bool sparse;
	struct reader r = { .s = s, .x = x, .b = b };
	struct csv_parser csv = { 0 };
	struct libsvm_parser svm = { 0 };
	size_t d = s->d, t = rows_tail_len(s), n;
	char *buf = NULL;
	FILE *f = NULL;
	enum err_code rc;

	if (strcmp(format, "csv") == 0)
		sparse = false;
	else if (strcmp(format, "libsvm") == 0)
		sparse = true;
	else
		return err_set_field(e, ERR_INVALID, "format", "'--format' must be csv or libsvm");
	if (sparse && s->n_categorical > 0)
		return err_set_field(e, ERR_INVALID, "format",
				     "a schema with categorical attributes is read from CSV");
	if (sparse && x->binary.declared && !x->binary.numeric)
		return err_set_field(
			e, ERR_INVALID, "format",
			"a schema with string labels ('schema.labels') is read from CSV");
	rc = rows_builder_init(b, s, sparse ? DATA_CSR : DATA_DENSE, 0, 0, e);
	if (rc != ERR_OK)
		return rc;
	r.row = calloc(d + t + 1, sizeof(double));
	r.col = calloc(d + 1, sizeof(uint32_t));
	buf = malloc(READ_BYTES);
	if (r.row == NULL || r.col == NULL || buf == NULL) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	if (sparse) {
		rc = libsvm_parser_init(&svm, d, s->task != TASK_UNLABELED, (d + 2) * 64 + 1024,
					on_svm, &r, e);
	} else {
		rc = csv_parser_init(&csv, d + t, (d + t) * 64 + 256, on_csv, &r, e);
		if (rc == ERR_OK)
			rc = rows_csv_labels(&csv, s, x, e);
	}
	if (rc != ERR_OK)
		goto out;
	f = fopen(path, "rb");
	if (f == NULL) {
		rc = err_set_field(e, ERR_INVALID, "data", "cannot open '%s': %s", path,
				   strerror(errno));
		goto out;
	}
	while (rc == ERR_OK && (n = fread(buf, 1, READ_BYTES, f)) > 0)
		rc = sparse ? libsvm_parser_feed(&svm, buf, n, e)
			    : csv_parser_feed(&csv, buf, n, e);
	if (rc == ERR_OK && ferror(f))
		rc = err_set_field(e, ERR_INVALID, "data", "cannot read '%s'", path);
	if (rc == ERR_OK)
		rc = sparse ? libsvm_parser_finish(&svm, e) : csv_parser_finish(&csv, e);
out:
	if (f != NULL)
		fclose(f);
	csv_parser_clear(&csv);
	libsvm_parser_clear(&svm);
	free(buf);
	free(r.row);
	free(r.col);
	return rc;
}

static enum err_code
read_schema(const char *path, struct data_schema *ret, struct schema_extra *ret_x, struct err *e)
{
	json_error_t je;
	json_t *doc = json_load_file(path, 0, &je);
	enum err_code rc;

	if (doc == NULL)
		return err_set_field(e, ERR_INVALID, "schema", "cannot read '%s': %s (line %d)",
				     path, je.text, je.line);
	if (!json_is_object(doc)) {
		json_decref(doc);
		return err_set_field(e, ERR_INVALID, "schema",
				     "'%s' must hold {\"schema\": ..., \"bounds\": ...}", path);
	}
	rc = schema_parse_extra(json_object_get(doc, "schema"), json_object_get(doc, "bounds"), ret,
				ret_x, e);
	json_decref(doc);
	return rc;
}

static enum err_code json_arg(const char *text, const char *field, json_t **ret, struct err *e);
static enum err_code slurp(const char *path, const char *field, char **ret, size_t *ret_len,
			   struct err *e);

/* "l2_ball:radius=5" -> {"kind": "l2_ball", "radius": 5}; values are JSON
 * numbers (or strings when they are not numbers).  A JSON object is taken
 * as it is, and "@FILE" reads one from FILE: the kinds whose keys are not
 * numbers (a polytope's "vertices", an array of arrays) go that way.
 * field names the block ("constraints.x" for --constraint, "constraints.y"
 * for --constraint-y) and opt the option. */
static enum err_code
constraint_json(const char *spec, const char *field, const char *opt, json_t **ret, struct err *e)
{
	const char *colon = strchr(spec, ':');
	char kind[64], item[256];
	json_t *c;

	if (spec[0] == '{')
		return json_arg(spec, field, ret, e);
	if (spec[0] == '@') {
		char *text = NULL;
		size_t len;
		enum err_code rc = slurp(spec + 1, field, &text, &len, e);

		if (rc == ERR_OK)
			rc = json_arg(text, field, ret, e);
		free(text);
		return rc;
	}
	if (colon == NULL || colon == spec || (size_t)(colon - spec) >= sizeof(kind))
		return err_set_field(e, ERR_INVALID, field,
				     "'%s' must be KIND:KEY=VALUE,... (e.g. l2_ball:radius=5)",
				     opt);
	memcpy(kind, spec, (size_t)(colon - spec));
	kind[colon - spec] = '\0';
	c = json_pack("{s:s}", "kind", kind);
	for (const char *p = colon + 1; c != NULL && *p != '\0';) {
		size_t n = strcspn(p, ",");
		char *eq, *end;
		double v;

		if (n == 0 || n >= sizeof(item)) {
			json_decref(c);
			return err_set_field(e, ERR_INVALID, field,
					     "'%s': empty or overlong KEY=VALUE", opt);
		}
		memcpy(item, p, n);
		item[n] = '\0';
		eq = strchr(item, '=');
		if (eq == NULL || eq == item) {
			json_decref(c);
			return err_set_field(e, ERR_INVALID, field, "'%s': '%s' is not KEY=VALUE",
					     opt, item);
		}
		*eq++ = '\0';
		v = strtod(eq, &end);
		json_object_set_new(c, item,
				    *eq != '\0' && *end == '\0' ? json_real(v) : json_string(eq));
		p += n;
		if (*p == ',')
			p++;
	}
	if (c == NULL)
		return err_set(e, ERR_NOMEM, "out of memory");
	*ret = c;
	return ERR_OK;
}

static enum err_code
json_arg(const char *text, const char *field, json_t **ret, struct err *e)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);

	if (j == NULL || !json_is_object(j)) {
		json_decref(j);
		return err_set_field(e, ERR_INVALID, field, "'%s' must be a JSON object", field);
	}
	*ret = j;
	return ERR_OK;
}

/* The API's run request body, from the options. */
static enum err_code
request_json(const struct solve_opts *o, json_t **ret, struct err *e)
{
	json_t *obj = NULL, *cx = NULL, *cy = NULL, *cons = NULL, *params = NULL, *doc;
	char *end;
	double eps = strtod(o->epsilon, &end), delta;
	enum err_code rc;

	if (*o->epsilon == '\0' || *end != '\0')
		return err_set_field(e, ERR_INVALID, "privacy.epsilon",
				     "'--epsilon' must be a number");
	delta = strtod(o->delta, &end);
	if (*o->delta == '\0' || *end != '\0')
		return err_set_field(e, ERR_INVALID, "privacy.delta", "'--delta' must be a number");
	/* --objective is optional here as objective is in the API: a
	 * synthetic-data method (alg_ops.synthetic) takes none, the others
	 * refuse the request naming 'objective'. */
	if (o->objective == NULL)
		rc = ERR_OK;
	else if (o->objective[0] == '{')
		rc = json_arg(o->objective, "objective", &obj, e);
	else
		rc = (obj = json_pack("{s:s}", "name", o->objective)) != NULL
			     ? ERR_OK
			     : err_set(e, ERR_NOMEM, "out of memory");
	/* --constraint is optional here as constraints.x is in the API: a
	 * method with defaults from the bounds (alg_ops.defaults_from_bounds) takes none, the
	 * others refuse the request naming 'constraints'. */
	if (rc == ERR_OK && o->constraint != NULL)
		rc = constraint_json(o->constraint, "constraints.x", "--constraint", &cx, e);
	if (rc == ERR_OK && o->constraint_y != NULL)
		rc = constraint_json(o->constraint_y, "constraints.y", "--constraint-y", &cy, e);
	if (rc == ERR_OK && o->params != NULL)
		rc = json_arg(o->params, "params", &params, e);
	if (rc != ERR_OK) {
		json_decref(obj);
		json_decref(cx);
		json_decref(cy);
		return rc;
	}
	if (cx != NULL || cy != NULL) {
		/* json_object_set_new() takes its value even when it fails. */
		int bad = (cons = json_object()) == NULL;

		if (cx != NULL)
			bad |= bad ? (json_decref(cx), 1) : json_object_set_new(cons, "x", cx) != 0;
		if (cy != NULL)
			bad |= bad ? (json_decref(cy), 1) : json_object_set_new(cons, "y", cy) != 0;
		if (bad) {
			json_decref(cons);
			json_decref(obj);
			json_decref(params);
			return err_set(e, ERR_NOMEM, "out of memory");
		}
	}
	doc = json_pack("{s:s, s:o*, s:o*, s:{s:f, s:f}, s:o*}", "algorithm", o->algorithm,
			"objective", obj, "constraints", cons, "privacy", "epsilon", eps, "delta",
			delta, "params", params);
	if (doc == NULL)
		return err_set(e, ERR_NOMEM, "out of memory");
	*ret = doc;
	return ERR_OK;
}

/* The whole of a file (owned, NUL-terminated), for --predict and --model. */
static enum err_code
slurp(const char *path, const char *field, char **ret, size_t *ret_len, struct err *e)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (f == NULL)
		return err_set_field(e, ERR_INVALID, field, "cannot open '%s': %s", path,
				     strerror(errno));
	do {
		if (len + READ_BYTES + 1 > cap) {
			char *p = realloc(buf, cap = 2 * cap + READ_BYTES + 1);

			if (p == NULL) {
				free(buf);
				fclose(f);
				return err_set(e, ERR_NOMEM, "out of memory");
			}
			buf = p;
		}
		n = fread(buf + len, 1, READ_BYTES, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return err_set_field(e, ERR_INVALID, field, "cannot read '%s'", path);
	}
	fclose(f);
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return ERR_OK;
}

/* Score the rows of o->predict (CSV, or JSON {"rows": ...} when it starts
 * with '{') with the model document doc: {"predictions": ...}.  The rows
 * are the caller's own; no limit on their number. */
static enum err_code
predict_file(const struct solve_opts *o, const json_t *doc, json_t **ret, struct err *e)
{
	struct model m = { 0 };
	char *text = NULL;
	size_t len = 0, n = 0, skip;
	double *rows = NULL;
	json_t *body = NULL;
	enum err_code rc;

	rc = model_load(doc, &m, e);
	if (rc == ERR_OK)
		rc = slurp(o->predict, "predict", &text, &len, e);
	if (rc != ERR_OK)
		goto out;
	skip = strspn(text, " \t\r\n");
	if (text[skip] == '{') {
		json_error_t je;

		body = json_loadb(text, len, 0, &je);
		rc = body != NULL ? model_rows_json(&m, body, (size_t)-1 / 2, &rows, &n, e)
				  : err_set_field(e, ERR_INVALID, "rows",
						  "'%s' is not JSON: %s (line %d)", o->predict,
						  je.text, je.line);
	} else {
		rc = model_rows_csv(&m, text, len, (size_t)-1 / 2, &rows, &n, e);
	}
	if (rc == ERR_OK) {
		*ret = model_predict_json(&m, rows, n);
		if (*ret == NULL)
			rc = err_set(e, ERR_NOMEM, "out of memory");
	}
out:
	json_decref(body);
	free(text);
	free(rows);
	model_clear(&m);
	return rc;
}

/* --model FILE --predict FILE: no data, no run. */
static enum err_code
predict_only(const struct solve_opts *o, json_t **ret, struct err *e)
{
	json_error_t je;
	json_t *doc = json_load_file(o->model, 0, &je);
	enum err_code rc;

	if (doc == NULL)
		return err_set_field(e, ERR_INVALID, "model", "cannot read '%s': %s (line %d)",
				     o->model, je.text, je.line);
	rc = predict_file(o, doc, ret, e);
	json_decref(doc);
	return rc;
}

/* The model document of the run just solved (model.h), with no run id. */
static enum err_code
solved_model(const struct solve_opts *o, const struct data_schema *s, const struct schema_extra *x,
	     const struct planned_run *run, const json_t *result, json_t **ret, struct err *e)
{
	json_t *view, *spec;
	enum err_code rc;

	view = json_pack("{s:s, s:s, s:O, s:O?, s:O}", "algorithm", o->algorithm, "state",
			 "succeeded", "request", run->req.normalised, "privacy",
			 json_object_get(result, "privacy"), "result", result);
	spec = json_pack("{s:o?, s:o?}", "schema", schema_to_json_extra(s, x), "bounds",
			 schema_bounds_to_json(s));
	if (view == NULL || spec == NULL)
		rc = err_set(e, ERR_NOMEM, "out of memory");
	else
		rc = model_document(view, spec, ret, e);
	json_decref(view);
	json_decref(spec);
	return rc;
}

/* The seal-time order the service gives a loaded dataset (rows.h). */
static enum err_code
seal_order(struct rows_builder *b, struct err *e)
{
	struct rng *rng = rng_openssl_new(e);
	enum err_code rc = rng == NULL ? err_failed(e) : rows_builder_shuffle(b, rng, e);

	if (rc == ERR_OK && !rng_ok(rng))
		rc = err_set(e, ERR_INTERNAL, "the random generator failed");
	rng_free(rng);
	return rc;
}

static enum err_code
solve(const struct solve_opts *o, json_t **ret, struct err *e)
{
	struct data_schema s;
	struct schema_extra x = { 0 };
	struct rows_builder b = { 0 }, eb = { 0 };
	struct dataset_meta m = { 0 };
	struct planned_run run = { 0 };
	struct dataset view, eview;
	struct progress prog;
	json_t *doc = NULL, *result = NULL, *ev;
	double *w = NULL;
	enum err_code rc;

	rc = read_schema(o->schema, &s, &x, e);
	if (rc == ERR_OK)
		rc = read_rows(o->data, o->format, &s, &x, &b, e);
	if (rc == ERR_OK)
		rc = seal_order(&b, e);
	if (rc != ERR_OK)
		goto out;
	rows_builder_view(&b, &view, NULL);
	m.schema = s;
	m.d = s.d;
	m.task = s.task;
	m.bounds = s.bounds;
	m.n_rows = (long long)view.n;
	m.layout = b.layout;
	m.large_delta_ok = o->large_delta_ok;
	snprintf(m.state, sizeof(m.state), "sealed");
	snprintf(m.mode, sizeof(m.mode), "%s", o->mode != NULL ? o->mode : "renyi");
	if (strcmp(m.mode, "renyi") != 0 && strcmp(m.mode, "basic") != 0) {
		rc = err_set_field(e, ERR_INVALID, "accounting_mode",
				   "'--mode' must be renyi or basic");
		goto out;
	}
	rc = request_json(o, &doc, e);
	if (rc == ERR_OK) {
		rc = run_pipeline_plan(doc, &m, NULL, NULL, NULL, &run, e);
		if (rc == ERR_NUMERIC && strcmp(e->field, "privacy.delta") == 0)
			/* The API's message names the dataset key; here it is a flag. */
			err_set_field(e, ERR_NUMERIC, "privacy.delta",
				      "'--delta' = %g is not below 1/n = 1/%lld; pass "
				      "--acknowledge-large-delta to allow it",
				      strtod(o->delta, NULL), m.n_rows);
	}
	if (rc == ERR_OK) {
		run.threads = run_pool_threads(1); /* one run: this process is its only worker */
		progress_init(&prog);
		rc = run_pipeline_run(&run, &view, on_progress, &prog, &w, &result, e);
	}
	if (rc != ERR_OK)
		goto out;
	if (o->eval != NULL) {
		/* The caller vouches the file is public (solve.h). */
		rc = read_rows(o->eval, o->eval_format != NULL ? o->eval_format : o->format, &s, &x,
			       &eb, e);
		if (rc != ERR_OK) {
			err_prefix_field(e, "eval");
			goto out;
		}
		rows_builder_view(&eb, &eview, NULL);
		ev = run.req.alg->synthetic
			     ? evaluate_synthetic_json(&run.req.spec, &eview, w, NULL, e)
			     : evaluate_run_json(&run.req.spec, &s, &eview, w, NULL, e);
		if (ev == NULL) {
			rc = err_failed(e);
			err_prefix_field(e, "eval");
			goto out;
		}
		json_object_set_new(ev, "file", json_string(o->eval));
		json_object_set_new(result, "evaluation", ev);
	}
	if (o->predict != NULL || o->save_model != NULL) {
		json_t *model = NULL, *pred = NULL;

		rc = solved_model(o, &s, &x, &run, result, &model, e);
		if (rc == ERR_OK && o->save_model != NULL &&
		    json_dump_file(model, o->save_model, JSON_INDENT(2)) != 0)
			rc = err_set_field(e, ERR_INVALID, "save_model", "cannot write '%s'",
					   o->save_model);
		if (rc == ERR_OK && o->predict != NULL)
			rc = predict_file(o, model, &pred, e);
		if (rc == ERR_OK && pred != NULL)
			json_object_set_new(result, "predictions",
					    json_incref(json_object_get(pred, "predictions")));
		json_decref(pred);
		json_decref(model);
		if (rc != ERR_OK)
			goto out;
	}
	*ret = result;
	result = NULL;
out:
	json_decref(result);
	json_decref(doc);
	free(w);
	planned_run_clear(&run);
	rows_builder_clear(&b);
	rows_builder_clear(&eb);
	schema_extra_clear(&x);
	return rc;
}

int
solve_main(int argc, char **argv)
{
	struct solve_opts o = { 0 };
	struct {
		const char *name;
		const char **dst;
	} const opt[] = {
		{ "--data", &o.data },
		{ "--format", &o.format },
		{ "--schema", &o.schema },
		{ "--algorithm", &o.algorithm },
		{ "--objective", &o.objective },
		{ "--constraint", &o.constraint },
		{ "--epsilon", &o.epsilon },
		{ "--delta", &o.delta },
		{ "--params", &o.params },
		{ "--mode", &o.mode },
		{ "--eval", &o.eval },
		{ "--eval-format", &o.eval_format },
		{ "--constraint-y", &o.constraint_y },
		{ "--predict", &o.predict },
		{ "--model", &o.model },
		{ "--save-model", &o.save_model },
	};
	struct err e = { 0 };
	json_t *out = NULL;
	char *text;
	enum err_code rc;

	for (int i = 2; i < argc; i++) {
		size_t k;

		if (strcmp(argv[i], "--list") == 0) {
			o.list = true;
			continue;
		}
		if (strcmp(argv[i], "--acknowledge-large-delta") == 0) {
			o.large_delta_ok = true;
			continue;
		}
		for (k = 0; k < sizeof(opt) / sizeof(opt[0]); k++)
			if (strcmp(argv[i], opt[k].name) == 0)
				break;
		if (k == sizeof(opt) / sizeof(opt[0]))
			return usage("unknown option");
		if (i + 1 >= argc)
			return usage("an option lacks its value");
		*opt[k].dst = argv[++i];
	}
	if (o.list) {
		out = catalogue_json();
	} else if (o.model != NULL) {
		if (o.predict == NULL || o.data != NULL)
			return usage("--model FILE goes with --predict FILE and no --data");
		rc = predict_only(&o, &out, &e);
		if (rc != ERR_OK) {
			print_error(&e);
			return 1;
		}
	} else {
		if (o.data == NULL || o.format == NULL || o.schema == NULL || o.algorithm == NULL ||
		    o.epsilon == NULL || o.delta == NULL)
			return usage("missing a required option");
		rc = solve(&o, &out, &e);
		if (rc != ERR_OK) {
			print_error(&e);
			return 1;
		}
	}
	text = out != NULL ? json_dumps(out, JSON_INDENT(2)) : NULL;
	json_decref(out);
	if (text == NULL) {
		fprintf(stderr, "dpoptd solve: out of memory\n");
		return 1;
	}
	printf("%s\n", text);
	free(text);
	return 0;
}
