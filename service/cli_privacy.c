/*
 * cli_privacy.c - `dpoptd privacy` (see cli_privacy.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_privacy.h"
#include "event_json.h"
#include "privacy/accountant.h"
#include "privacy/calibrate.h"
#include "privacy/rdp.h"

struct cli_args {
	const char *events;
	const char *calibrate;
	double epsilon, delta;
	unsigned long count;
	enum accounting_mode mode;
	bool reference_grid;
};

static int
fail(const struct err *e)
{
	fprintf(stderr, "dpoptd privacy: %s%s%s%s\n", e->field[0] != '\0' ? e->field : "",
		e->field[0] != '\0' ? ": " : "", e->msg, e->detail[0] != '\0' ? "" : "");
	return 1;
}

static int
usage(void)
{
	fprintf(stderr, "usage: dpoptd privacy --events FILE.json --delta D [--mode renyi|basic]"
			" [--grid default|reference]\n"
			"       dpoptd privacy --calibrate gaussian --epsilon E --delta D"
			" [--count K] [--mode renyi|basic]\n");
	return 2;
}

static bool
parse_double(const char *s, double *ret)
{
	char *end;

	*ret = strtod(s, &end);
	return *s != '\0' && *end == '\0';
}

static int
parse_args(int argc, char **argv, struct cli_args *a)
{
	*a = (struct cli_args){ .count = 1, .mode = ACCOUNTING_RENYI };
	for (int i = 0; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (strcmp(k, "--events") == 0)
			a->events = v;
		else if (strcmp(k, "--calibrate") == 0)
			a->calibrate = v;
		else if (strcmp(k, "--epsilon") == 0 && parse_double(v, &a->epsilon))
			continue;
		else if (strcmp(k, "--delta") == 0 && parse_double(v, &a->delta))
			continue;
		else if (strcmp(k, "--count") == 0 && strtoul(v, NULL, 10) > 0)
			a->count = strtoul(v, NULL, 10);
		else if (strcmp(k, "--mode") == 0 && strcmp(v, "basic") == 0)
			a->mode = ACCOUNTING_BASIC;
		else if (strcmp(k, "--mode") == 0 && strcmp(v, "renyi") == 0)
			a->mode = ACCOUNTING_RENYI;
		else if (strcmp(k, "--grid") == 0 && strcmp(v, "reference") == 0)
			a->reference_grid = true;
		else if (strcmp(k, "--grid") == 0 && strcmp(v, "default") == 0)
			a->reference_grid = false;
		else
			return usage();
	}
	if (argc % 2 != 0 || (a->events == NULL) == (a->calibrate == NULL))
		return usage();
	return 0;
}

/* The events of the file, composed (a single event stays as it is). */
static enum err_code
load_events(const char *path, struct dp_event_tree *ret, struct err *e)
{
	struct dp_event_tree parts[16];
	const struct dp_event_tree *ptr[16];
	json_error_t jerr;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	enum err_code rc = ERR_OK;
	size_t n;

	if (doc == NULL)
		return err_set(e, ERR_INVALID, "%s: %s (line %d)", path, jerr.text, jerr.line);
	if (!json_is_array(doc)) {
		rc = dp_event_from_json(doc, "event", ret, e);
		json_decref(doc);
		return rc;
	}
	n = json_array_size(doc);
	if (n == 0 || n > 16)
		rc = err_set(e, ERR_INVALID, "%s must hold 1 to 16 events", path);
	for (size_t i = 0; rc == ERR_OK && i < n; i++) {
		char path_i[32];

		snprintf(path_i, sizeof(path_i), "events[%zu]", i);
		rc = dp_event_from_json(json_array_get(doc, i), path_i, &parts[i], e);
		ptr[i] = &parts[i];
	}
	json_decref(doc);
	if (rc != ERR_OK)
		return rc;
	if (n == 1) {
		*ret = parts[0];
		return ERR_OK;
	}
	return dp_event_join(ret, DP_EVENT_COMPOSED, ptr, (unsigned)n, e);
}

static enum err_code
gaussian_family(double z, void *ctx, struct dp_event_tree *ret, struct err *e)
{
	const unsigned long *count = ctx;
	struct dp_event sc = { .type = DP_EVENT_SELF_COMPOSED, .count = *count };

	dp_event_gaussian(ret, DP_REPLACE_ONE, z);
	return *count > 1 ? dp_event_wrap(ret, &sc, e) : ERR_OK;
}

int
cli_privacy(int argc, char **argv)
{
	struct cli_args a;
	struct rdp_grid grid;
	struct accountant_report rep;
	struct dp_event_tree t;
	struct err e = { 0 };
	json_t *out;
	int rc = parse_args(argc, argv, &a);

	if (rc != 0)
		return rc;
	if (a.reference_grid)
		rdp_grid_reference(&grid);
	else
		rdp_grid_default(&grid);
	if (a.events != NULL) {
		if (load_events(a.events, &t, &e) != ERR_OK ||
		    accountant_epsilon(&t, a.mode, a.delta, &grid, false, &rep, &e) != ERR_OK)
			return fail(&e);
		out = json_pack("{s:f, s:f, s:s, s:s, s:f, s:o}", "epsilon", rep.epsilon, "delta",
				rep.delta, "mode", a.mode == ACCOUNTING_BASIC ? "basic" : "renyi",
				"accountant", rep.accountant, "order", rep.order, "event",
				dp_event_to_json(&t));
	} else {
		double z;

		if (strcmp(a.calibrate, "gaussian") != 0)
			return usage();
		if (calibrate(gaussian_family, &a.count, a.mode, a.epsilon, a.delta, 1e-4, 1e8,
			      &grid, &z, &rep, &e) != ERR_OK)
			return fail(&e);
		out = json_pack("{s:s, s:f, s:I, s:f, s:f, s:s, s:s, s:f}", "mechanism", "gaussian",
				"noise_multiplier", z, "count", (json_int_t)a.count, "epsilon",
				rep.epsilon, "delta", rep.delta, "mode",
				a.mode == ACCOUNTING_BASIC ? "basic" : "renyi", "accountant",
				rep.accountant, "order", rep.order);
	}
	if (out == NULL)
		return 1;
	json_dumpf(out, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	printf("\n");
	json_decref(out);
	return 0;
}
