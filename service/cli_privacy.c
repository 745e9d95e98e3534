/*
 * cli_privacy.c - `dpoptd privacy` (see cli_privacy.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_privacy.h"
#include "event_json.h"
#include "privacy/accountant.h"
#include "privacy/calibrate.h"
#include "privacy/pld.h"
#include "privacy/rdp.h"

struct cli_args {
	const char *events;
	const char *calibrate;
	double epsilon, delta;
	unsigned long count;
	enum accounting_mode mode;
	bool reference_grid;
	const char *accountant; /* NULL, "pld", "rdp" or "best" */
	double step;            /* --step: the PLD's grid step */
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
			"       dpoptd privacy --events FILE.json --delta D"
			" --accountant pld|rdp|best [--step H] [--grid default|reference]\n"
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
	*a = (struct cli_args){ .count = 1, .mode = ACCOUNTING_RENYI, .step = PLD_DEFAULT_STEP };
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
		else if (strcmp(k, "--accountant") == 0 &&
			 (strcmp(v, "pld") == 0 || strcmp(v, "rdp") == 0 || strcmp(v, "best") == 0))
			a->accountant = v;
		else if (strcmp(k, "--grid") == 0 && strcmp(v, "default") == 0)
			a->reference_grid = false;
		else if (strcmp(k, "--step") == 0 && parse_double(v, &a->step) && a->step >= 1e-5 &&
			 a->step <= 0.1)
			continue;
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

/*
 * --accountant: each accountant's figure for the event, for any
 * relation (the command is a calculator; the ledger takes replace_one
 * only).  "rdp": the Renyi conversion; "pld": the PLD accountant's upper
 * bound with its discretisation interval [lower, upper]; "best": both,
 * the basic mode's other candidates (analytic Gaussian, basic
 * composition), and the smallest valid bound.  An accountant that cannot
 * bound the event is reported with its message, not as a number.
 * --step sets the PLD's grid (default PLD_DEFAULT_STEP, finer than the
 * ledger's ACCOUNTANT_PLD_STEP: a calculator can afford it; a coarser
 * step is faster and its upper figure is still a bound).
 */
static json_t *
accountants_json(const struct dp_event_tree *t, const struct cli_args *a,
		 const struct rdp_grid *grid, struct err *e)
{
	json_t *out = json_object();
	struct accountant_report rep;
	struct pld_interval iv;
	struct err ce = { 0 };
	double best = INFINITY;
	const char *best_name = NULL;
	bool want_rdp = strcmp(a->accountant, "pld") != 0;
	bool want_pld = strcmp(a->accountant, "rdp") != 0;

	if (out == NULL)
		return NULL;
	json_object_set_new(out, "delta", json_real(a->delta));
	if (want_rdp) {
		if (accountant_epsilon(t, ACCOUNTING_RENYI, a->delta, grid, false, &rep, &ce) ==
		    ERR_OK) {
			json_object_set_new(out, "rdp",
					    json_pack("{s:f, s:f}", "epsilon", rep.epsilon, "order",
						      rep.order));
			best = rep.epsilon;
			best_name = "rdp";
		} else {
			json_object_set_new(out, "rdp", json_pack("{s:s}", "unsupported", ce.msg));
		}
	}
	if (strcmp(a->accountant, "best") == 0) {
		memset(&ce, 0, sizeof(ce));
		if (accountant_epsilon(t, ACCOUNTING_BASIC, a->delta, grid, false, &rep, &ce) ==
			    ERR_OK &&
		    rep.delta <= a->delta) {
			json_object_set_new(out, "basic_mode",
					    json_pack("{s:f, s:f, s:s}", "epsilon", rep.epsilon,
						      "delta", rep.delta, "accountant",
						      rep.accountant));
			if (rep.epsilon < best) {
				best = rep.epsilon;
				best_name = rep.accountant;
			}
		}
	}
	if (want_pld) {
		memset(&ce, 0, sizeof(ce));
		if (pld_epsilon(t, a->delta, a->step, &iv, &ce) == ERR_OK) {
			json_object_set_new(out, "pld",
					    json_pack("{s:f, s:[f, f], s:f}", "epsilon", iv.upper,
						      "interval", iv.lower, iv.upper, "step",
						      a->step));
			if (iv.upper < best) {
				best = iv.upper;
				best_name = "pld";
			}
		} else {
			json_object_set_new(out, "pld", json_pack("{s:s}", "unsupported", ce.msg));
		}
	}
	if (best_name == NULL) {
		json_decref(out);
		err_set(e, ERR_INVALID, "no accountant can bound this event");
		return NULL;
	}
	json_object_set_new(out, "epsilon", json_real(best));
	json_object_set_new(out, "accountant", json_string(best_name));
	json_object_set_new(out, "event", dp_event_to_json(t));
	return out;
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
	if (a.events != NULL && a.accountant != NULL) {
		if (load_events(a.events, &t, &e) != ERR_OK)
			return fail(&e);
		if ((out = accountants_json(&t, &a, &grid, &e)) == NULL)
			return fail(&e);
	} else if (a.events != NULL) {
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
