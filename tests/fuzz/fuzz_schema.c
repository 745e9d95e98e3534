/*
 * fuzz_schema.c - libFuzzer target for service/schema.c.
 *
 * Input: a JSON document; its "schema" and "bounds" members (whatever
 * they are) go to schema_parse_extra().  A refusal must name a field.  An
 * accepted schema must survive schema_to_json_extra() -> text -> parse,
 * and schema_to_json() -> parse (labels dropped), unchanged.  There is
 * nothing to chunk here: jansson takes the whole body.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
round_trip(const struct data_schema *s, const struct schema_extra *x)
{
	struct data_schema s2;
	struct schema_extra x2;
	struct err e;
	json_t *js, *jb, *js2, *jb2;
	char *ts, *tb;

	js = schema_to_json_extra(s, x);
	jb = schema_bounds_to_json(s);
	if (js == NULL || jb == NULL)
		abort();
	ts = json_dumps(js, JSON_COMPACT);
	tb = json_dumps(jb, JSON_COMPACT);
	if (ts == NULL || tb == NULL)
		abort();
	js2 = json_loads(ts, JSON_REJECT_DUPLICATES, NULL);
	jb2 = json_loads(tb, JSON_REJECT_DUPLICATES, NULL);
	if (js2 == NULL || jb2 == NULL)
		abort();
	if (schema_parse_extra(js2, jb2, &s2, &x2, &e) != ERR_OK)
		abort();
	if (!schema_equal(s, &s2) || !schema_extra_equal(x, &x2))
		abort();
	schema_extra_clear(&x2);
	json_decref(js);
	json_decref(js2);
	free(ts);

	js = schema_to_json(s);
	if (js == NULL || schema_parse(js, jb2, &s2, &e) != ERR_OK || !schema_equal(s, &s2))
		abort();
	json_decref(js);
	json_decref(jb);
	json_decref(jb2);
	free(tb);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct data_schema s;
	struct schema_extra x;
	struct err e;
	json_t *doc;
	enum err_code rc;

	doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
	if (doc == NULL)
		return 0;
	memset(&e, 0, sizeof(e));
	rc = schema_parse_extra(json_object_get(doc, "schema"), json_object_get(doc, "bounds"), &s,
				&x, &e);
	if (rc == ERR_OK)
		round_trip(&s, &x);
	else if (rc != ERR_INVALID || e.code != rc || e.field[0] == '\0')
		abort();
	if (rc == ERR_OK)
		schema_extra_clear(&x);
	json_decref(doc);
	return 0;
}
