/*
 * event_json.h - privacy events as JSON, both ways.
 *
 *	{"type": "gaussian", "relation": "replace_one", "noise_multiplier": 4.22}
 *	{"type": "parallel", "relation": "replace_one", "parts": 740,
 *	 "events": [{"type": "gaussian", ...}]}
 *	{"type": "self_composed", "count": 100, "event": {...}}
 *	{"type": "sampled_without_replacement", "n": 60000, "batch": 150, "event": {...}}
 *	{"type": "poisson_sampled", "sampling_rate": 0.0025, "event": {...}}
 *	{"type": "composed", "events": [...]}
 *
 * "relation" defaults to "replace_one" when absent and is inherited by
 * children that omit it.  Stored with every run and returned in results.
 */
#ifndef SERVICE_EVENT_JSON_H
#define SERVICE_EVENT_JSON_H

#include <jansson.h>

#include "err.h"
#include "privacy/event.h"

/* Owned JSON of the tree, or NULL on allocation failure. */
json_t *dp_event_to_json(const struct dp_event_tree *t);

/* Parse and check (dp_event_check) an event; errors name the JSON path
 * under prefix ("events[2].event.noise_multiplier"). */
enum err_code dp_event_from_json(const json_t *j, const char *prefix, struct dp_event_tree *ret,
				 struct err *e);

#endif /* SERVICE_EVENT_JSON_H */
