/*
 * test_openapi.c - the route table (service/router.c) and the contract
 * (api/openapi.yaml) list the same operations.
 *
 * No YAML library: a line-based parse of the spec's `paths:` section, where
 * path keys sit at 2 spaces of indentation and start with "/", operation
 * keys at 4 spaces and are HTTP methods, and an operation's own keys at 6
 * (`security:`, `x-required-role:`).  The spec's location comes from
 * argv[1] (meson passes it) or DPOPT_OPENAPI.
 */
#include <check.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "http.h"

#define MAX_OPS  128
#define MAX_TEXT 4096

/* One operation of the spec. */
struct op {
	char method[8]; /* upper case, as in the route table */
	char path[160];
	unsigned line; /* of the method key, for messages */
	bool public_;  /* `security: []` */
	bool bearer;   /* `security:` naming bearerAuth */
	bool owner;    /* `x-required-role: owner` */
};

struct spec {
	char version[32]; /* value of the top-level `openapi:` line, unquoted */
	struct op ops[MAX_OPS];
	size_t n_ops;
};

static const char *spec_path;

/* Bounded append to a message buffer; silently truncates. */
static void __attribute__((format(printf, 2, 3)))
text_add(char text[MAX_TEXT], const char *fmt, ...)
{
	size_t len = strlen(text);
	va_list ap;

	if (len + 1 >= MAX_TEXT)
		return;
	va_start(ap, fmt);
	vsnprintf(text + len, MAX_TEXT - len, fmt, ap);
	va_end(ap);
}

static size_t
indent_of(const char *s)
{
	size_t n = 0;

	while (s[n] == ' ')
		n++;
	return n;
}

/* Copy the scalar s (up to a comment or the end) into out, without the
 * quotes and blanks around it. */
static void
scalar(const char *s, char *out, size_t cap)
{
	size_t n;

	while (*s == ' ')
		s++;
	n = strcspn(s, "#");
	while (n > 0 && s[n - 1] == ' ')
		n--;
	if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0]) {
		s++;
		n -= 2;
	}
	snprintf(out, cap, "%.*s", (int)n, s);
}

/* The mapping key of line s (indentation already skipped) into out, and
 * the rest after the colon in *ret_rest; false when s is not "key:...". */
static bool
mapping_key(const char *s, char *out, size_t cap, const char **ret_rest)
{
	const char *colon = s;
	char raw[160];

	/* The key ends at the first ':' followed by a blank or the end. */
	for (;;) {
		colon = strchr(colon, ':');
		if (colon == NULL)
			return false;
		if (colon[1] == '\0' || colon[1] == ' ')
			break;
		colon++;
	}
	snprintf(raw, sizeof(raw), "%.*s", (int)(colon - s), s);
	scalar(raw, out, cap);
	*ret_rest = colon + 1;
	return true;
}

static bool
is_method(const char *key, char upper[8])
{
	static const char *const methods[] = { "get",   "put",     "post", "delete",
					       "patch", "options", "head", "trace" };

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(key, methods[i]) == 0) {
			for (size_t j = 0; key[j] != '\0'; j++)
				upper[j] = (char)toupper((unsigned char)key[j]);
			upper[strlen(key)] = '\0';
			return true;
		}
	}
	return false;
}

/* Parse the file at path; on failure false with a message in err. */
static bool
spec_load(const char *path, struct spec *ret, char err[MAX_TEXT])
{
	FILE *f = fopen(path, "r");
	char *line = NULL, key[160], path_key[160] = "";
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	bool in_paths = false, seen_paths = false, in_security = false;
	struct op *op = NULL;

	memset(ret, 0, sizeof(*ret));
	if (f == NULL) {
		text_add(err, "cannot open %s", path);
		return false;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		const char *s, *rest;
		size_t ind;

		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		ind = indent_of(line);
		s = line + ind;
		if (*s == '\0' || *s == '#')
			continue;
		if (ind == 0) {
			in_paths = false;
			op = NULL;
			if (!mapping_key(s, key, sizeof(key), &rest))
				continue;
			if (strcmp(key, "openapi") == 0)
				scalar(rest, ret->version, sizeof(ret->version));
			if (strcmp(key, "paths") == 0)
				in_paths = seen_paths = true;
			continue;
		}
		if (!in_paths)
			continue;
		if (ind <= 4)
			in_security = false;
		if (ind == 2) {
			op = NULL;
			path_key[0] = '\0';
			if (mapping_key(s, key, sizeof(key), &rest) && key[0] == '/')
				snprintf(path_key, sizeof(path_key), "%s", key);
		} else if (ind == 4) {
			char method[8];

			op = NULL;
			if (path_key[0] == '\0' || !mapping_key(s, key, sizeof(key), &rest) ||
			    !is_method(key, method))
				continue;
			if (ret->n_ops == MAX_OPS) {
				text_add(err, "%s: more than %d operations", path, MAX_OPS);
				break;
			}
			op = &ret->ops[ret->n_ops++];
			snprintf(op->method, sizeof(op->method), "%s", method);
			snprintf(op->path, sizeof(op->path), "%s", path_key);
			op->line = lineno;
		} else if (op != NULL && ind == 6 && mapping_key(s, key, sizeof(key), &rest)) {
			char value[64];

			scalar(rest, value, sizeof(value));
			in_security = false;
			if (strcmp(key, "security") == 0) {
				if (strcmp(value, "[]") == 0)
					op->public_ = true;
				else if (strstr(value, "bearerAuth") != NULL)
					op->bearer = true;
				else if (value[0] == '\0')
					in_security = true; /* a block list follows */
			} else if (strcmp(key, "x-required-role") == 0) {
				op->owner = strcmp(value, "owner") == 0;
			}
		} else if (op != NULL && in_security && ind > 6 &&
			   strstr(s, "bearerAuth") != NULL) {
			op->bearer = true;
		}
	}
	free(line);
	fclose(f);
	if (err[0] != '\0')
		return false;
	if (!seen_paths)
		text_add(err, "%s: no top-level `paths:` key", path);
	else if (ret->n_ops == 0)
		text_add(err, "%s: no operation found under `paths:`", path);
	return err[0] == '\0';
}

static void
load(struct spec *s)
{
	char err[MAX_TEXT] = "";

	ck_assert_msg(spec_path != NULL,
		      "pass the path of api/openapi.yaml as argv[1] or in DPOPT_OPENAPI");
	ck_assert_msg(spec_load(spec_path, s, err), "%s", err);
}

static const struct op *
spec_find(const struct spec *s, const char *method, const char *path)
{
	for (size_t i = 0; i < s->n_ops; i++)
		if (strcmp(s->ops[i].method, method) == 0 && strcmp(s->ops[i].path, path) == 0)
			return &s->ops[i];
	return NULL;
}

static const struct route *
table_find(const char *method, const char *path)
{
	for (size_t i = 0; i < router_count(); i++) {
		const struct route *r = router_at(i);

		if (strcmp(r->method, method) == 0 && strcmp(r->pattern, path) == 0)
			return r;
	}
	return NULL;
}

START_TEST(test_version)
{
	static struct spec s;
	const char *v = s.version;

	load(&s);
	ck_assert_msg(strncmp(v, "3.1.", 4) == 0 && isdigit((unsigned char)v[4]) &&
			      v[strspn(v + 4, "0123456789") + 4] == '\0',
		      "%s: `openapi:` is '%s', expected 3.1.x", spec_path, v);
}
END_TEST

START_TEST(test_same_operations)
{
	static struct spec s;
	static char missing[MAX_TEXT], extra[MAX_TEXT];
	size_t n_missing = 0, n_extra = 0;

	load(&s);
	missing[0] = extra[0] = '\0';
	for (size_t i = 0; i < router_count(); i++) {
		const struct route *r = router_at(i);

		if (spec_find(&s, r->method, r->pattern) == NULL) {
			text_add(missing, "\n  %s %s", r->method, r->pattern);
			n_missing++;
		}
	}
	for (size_t i = 0; i < s.n_ops; i++) {
		if (table_find(s.ops[i].method, s.ops[i].path) == NULL) {
			text_add(extra, "\n  %s %s (line %u)", s.ops[i].method, s.ops[i].path,
				 s.ops[i].line);
			n_extra++;
		}
	}
	if (n_missing > 0)
		fprintf(stderr, "routes of service/router.c missing from %s:%s\n", spec_path,
			missing);
	if (n_extra > 0)
		fprintf(stderr, "operations of %s not in service/router.c:%s\n", spec_path, extra);
	ck_assert_msg(n_missing == 0 && n_extra == 0,
		      "%zu route(s) missing from the spec:%s\n%zu operation(s) not in the route "
		      "table:%s",
		      n_missing, missing, n_extra, extra);
}
END_TEST

START_TEST(test_no_duplicates)
{
	static struct spec s;

	load(&s);
	for (size_t i = 0; i < s.n_ops; i++)
		for (size_t j = i + 1; j < s.n_ops; j++)
			ck_assert_msg(strcmp(s.ops[i].method, s.ops[j].method) != 0 ||
					      strcmp(s.ops[i].path, s.ops[j].path) != 0,
				      "%s %s appears twice (lines %u and %u)", s.ops[i].method,
				      s.ops[i].path, s.ops[i].line, s.ops[j].line);
	for (size_t i = 0; i < router_count(); i++)
		for (size_t j = i + 1; j < router_count(); j++)
			ck_assert_msg(
				strcmp(router_at(i)->method, router_at(j)->method) != 0 ||
					strcmp(router_at(i)->pattern, router_at(j)->pattern) != 0,
				"route %s %s is in the table twice", router_at(i)->method,
				router_at(i)->pattern);
}
END_TEST

/* Keyed routes declare the bearer scheme, the others `security: []`;
 * owner-only routes say `x-required-role: owner`. */
START_TEST(test_security)
{
	static struct spec s;
	static char bad[MAX_TEXT];
	size_t n_bad = 0;

	load(&s);
	bad[0] = '\0';
	for (size_t i = 0; i < router_count(); i++) {
		const struct route *r = router_at(i);
		const struct op *op = spec_find(&s, r->method, r->pattern);
		bool auth = (r->flags & ROUTE_AUTH) != 0, owner = (r->flags & ROUTE_OWNER) != 0;

		if (op == NULL)
			continue; /* test_same_operations reports it */
		if (auth && (!op->bearer || op->public_)) {
			text_add(bad, "\n  %s %s: needs a key, so `security: [bearerAuth: []]`",
				 r->method, r->pattern);
			n_bad++;
		}
		if (!auth && (!op->public_ || op->bearer)) {
			text_add(bad, "\n  %s %s: needs no key, so `security: []`", r->method,
				 r->pattern);
			n_bad++;
		}
		if (owner != op->owner) {
			text_add(bad, "\n  %s %s: `x-required-role: owner` %s", r->method,
				 r->pattern, owner ? "missing" : "on a route open to analysts");
			n_bad++;
		}
	}
	if (n_bad > 0)
		fprintf(stderr, "security of %s disagrees with service/router.c:%s\n", spec_path,
			bad);
	ck_assert_msg(n_bad == 0, "%zu security mismatch(es):%s", n_bad, bad);
}
END_TEST

int
main(int argc, char **argv)
{
	Suite *s = suite_create("openapi");
	TCase *tc = tcase_create("contract");
	SRunner *sr;
	int failed;

	spec_path = argc > 1 ? argv[1] : getenv("DPOPT_OPENAPI");
	tcase_add_test(tc, test_version);
	tcase_add_test(tc, test_same_operations);
	tcase_add_test(tc, test_no_duplicates);
	tcase_add_test(tc, test_security);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
