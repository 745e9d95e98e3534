/*
 * event_json.c - privacy event trees to and from JSON.
 */
#include <stdio.h>
#include <string.h>

#include "event_json.h"
#include "privacy/selection.h"
#include "jv.h"

static json_t *
node_json(const struct dp_event_tree *t, unsigned i)
{
	const struct dp_event *n = &t->node[i];
	json_t *j = json_pack("{s:s, s:s}", "type", dp_event_type_name(n->type), "relation",
			      dp_relation_name(n->relation));
	json_t *kids;

	if (j == NULL)
		return NULL;
	switch (n->type) {
	case DP_EVENT_GAUSSIAN:
	case DP_EVENT_LAPLACE:
		json_object_set_new(j, "noise_multiplier", json_real(n->noise_multiplier));
		break;
	case DP_EVENT_PURE:
	case DP_EVENT_BOUNDED_RANGE:
		json_object_set_new(j, "epsilon", json_real(n->epsilon));
		break;
	case DP_EVENT_ZCDP:
		json_object_set_new(j, "rho", json_real(n->rho));
		break;
	case DP_EVENT_APPROX:
		json_object_set_new(j, "epsilon", json_real(n->epsilon));
		json_object_set_new(j, "delta", json_real(n->delta));
		break;
	case DP_EVENT_SAMPLED_WOR:
		json_object_set_new(j, "n", json_integer((json_int_t)n->n));
		json_object_set_new(j, "batch", json_integer((json_int_t)n->batch));
		break;
	case DP_EVENT_POISSON:
		json_object_set_new(j, "sampling_rate", json_real(n->sampling_rate));
		break;
	case DP_EVENT_SELF_COMPOSED:
		json_object_set_new(j, "count", json_integer((json_int_t)n->count));
		break;
	case DP_EVENT_PARALLEL:
		json_object_set_new(j, "parts", json_integer((json_int_t)n->count));
		break;
	case DP_EVENT_SELECTION_TNB:
		json_object_set_new(j, "eta", json_real(n->eta));
		json_object_set_new(j, "gamma", json_real(n->gamma));
		if (n->k_max != 0)
			json_object_set_new(j, "k_max", json_integer((json_int_t)n->k_max));
		break;
	case DP_EVENT_SELECTION_POISSON:
		json_object_set_new(j, "mu", json_real(n->mu));
		if (n->k_max != 0)
			json_object_set_new(j, "k_max", json_integer((json_int_t)n->k_max));
		break;
	case DP_EVENT_COMPOSED:
	case DP_EVENT_MIXTURE:
	case DP_EVENT__COUNT:
		break;
	}
	if (dp_event_arity(n->type) == 1) {
		json_object_set_new(j, "event", node_json(t, n->first_child));
	} else if (n->n_children > 0) {
		kids = json_array();
		for (unsigned c = 0; kids != NULL && c < n->n_children; c++)
			json_array_append_new(kids, node_json(t, n->first_child + c));
		json_object_set_new(j, "events", kids);
	}
	return j;
}

json_t *
dp_event_to_json(const struct dp_event_tree *t)
{
	return t->n_nodes > 0 ? node_json(t, 0) : NULL;
}

/* The optional cap of a selection node (0 when absent). */
static enum err_code
selection_k_max(const json_t *j, const char *path, struct dp_event *n, struct err *e)
{
	long long v = 0;
	enum err_code rc = jv_integer(j, path, "k_max", false, 1, SELECTION_MAX_K, &v, NULL, e);

	n->k_max = (uint64_t)v;
	return rc;
}

/* Parse the node at j into t->node[i]; its children go to fresh slots. */
static enum err_code
parse_node(const json_t *j, const char *path, enum dp_relation inherited, struct dp_event_tree *t,
	   unsigned i, struct err *e)
{
	static const char *const keys[] = { "type",
					    "relation",
					    "noise_multiplier",
					    "epsilon",
					    "delta",
					    "rho",
					    "sampling_rate",
					    "n",
					    "batch",
					    "count",
					    "parts",
					    "event",
					    "events",
					    "eta",
					    "gamma",
					    "mu",
					    "k_max",
					    NULL };
	struct dp_event *n = &t->node[i];
	const char *type, *rel;
	char sub[96], field[80];
	json_t *child, *kids;
	long long v;
	int k;
	enum err_code rc;

	if (!json_is_object(j))
		return err_set_field(e, ERR_INVALID, path, "'%s' must be an event object", path);
	if ((rc = jv_only_keys(j, path, keys, e)) != ERR_OK ||
	    (rc = jv_string(j, path, "type", true, 40, &type, e)) != ERR_OK ||
	    (rc = jv_string(j, path, "relation", false, 20, &rel, e)) != ERR_OK)
		return rc;
	memset(n, 0, sizeof(*n));
	jv_path(field, sizeof(field), path, "type");
	k = dp_event_type_from_name(type);
	if (k < 0)
		return err_set_field(e, ERR_INVALID, field, "unknown event type '%s'", type);
	n->type = (enum dp_event_type)k;
	n->relation = inherited;
	if (rel != NULL) {
		jv_path(field, sizeof(field), path, "relation");
		k = dp_relation_from_name(rel);
		if (k < 0)
			return err_set_field(e, ERR_INVALID, field, "unknown relation '%s'", rel);
		n->relation = (enum dp_relation)k;
	}
	switch (n->type) {
	case DP_EVENT_GAUSSIAN:
	case DP_EVENT_LAPLACE:
		rc = jv_number(j, path, "noise_multiplier", true, 0, true, 1e12,
			       &n->noise_multiplier, NULL, e);
		break;
	case DP_EVENT_PURE:
	case DP_EVENT_BOUNDED_RANGE:
		rc = jv_number(j, path, "epsilon", true, 0, true, 1e6, &n->epsilon, NULL, e);
		break;
	case DP_EVENT_ZCDP:
		rc = jv_number(j, path, "rho", true, 0, true, 1e12, &n->rho, NULL, e);
		break;
	case DP_EVENT_APPROX:
		rc = jv_number(j, path, "epsilon", true, 0, false, 1e6, &n->epsilon, NULL, e);
		if (rc == ERR_OK)
			rc = jv_number(j, path, "delta", true, 0, false, 1, &n->delta, NULL, e);
		break;
	case DP_EVENT_SAMPLED_WOR:
		rc = jv_integer(j, path, "n", true, 1, 1LL << 53, &v, NULL, e);
		n->n = (uint64_t)v;
		if (rc == ERR_OK)
			rc = jv_integer(j, path, "batch", true, 1, 1LL << 53, &v, NULL, e);
		n->batch = (uint64_t)v;
		break;
	case DP_EVENT_POISSON:
		rc = jv_number(j, path, "sampling_rate", true, 0, true, 1, &n->sampling_rate, NULL,
			       e);
		break;
	case DP_EVENT_SELF_COMPOSED:
		rc = jv_integer(j, path, "count", true, 1, 1LL << 53, &v, NULL, e);
		n->count = (uint64_t)v;
		break;
	case DP_EVENT_SELECTION_TNB:
		/* eta > -1: jv_number's exclusive lower bound. */
		rc = jv_number(j, path, "eta", true, -1, true, 1e6, &n->eta, NULL, e);
		if (rc == ERR_OK)
			rc = jv_number(j, path, "gamma", true, 0, true, 1e6, &n->gamma, NULL, e);
		if (rc == ERR_OK && !(n->gamma < 1.0)) {
			jv_path(field, sizeof(field), path, "gamma");
			rc = err_set_field(e, ERR_INVALID, field, "'%s' must be in (0, 1)", field);
		}
		if (rc == ERR_OK)
			rc = selection_k_max(j, path, n, e);
		break;
	case DP_EVENT_SELECTION_POISSON:
		rc = jv_number(j, path, "mu", true, 0, true, 1e9, &n->mu, NULL, e);
		if (rc == ERR_OK)
			rc = selection_k_max(j, path, n, e);
		break;
	case DP_EVENT_PARALLEL:
	case DP_EVENT_COMPOSED:
	case DP_EVENT_MIXTURE:
	case DP_EVENT__COUNT:
		break;
	}
	if (rc != ERR_OK)
		return rc;
	if (dp_event_arity(n->type) == 1) {
		rc = jv_object(j, path, "event", true, &child, e);
		if (rc != ERR_OK)
			return rc;
		if (t->n_nodes >= DP_EVENT_MAX_NODES)
			return err_set_field(e, ERR_INVALID, path, "event has more than %d nodes",
					     DP_EVENT_MAX_NODES);
		n->first_child = t->n_nodes++;
		n->n_children = 1;
		jv_path(sub, sizeof(sub), path, "event");
		return parse_node(child, sub, n->relation, t, n->first_child, e);
	}
	if (dp_event_arity(n->type) == 0)
		return ERR_OK;
	jv_path(field, sizeof(field), path, "events");
	kids = json_object_get(j, "events");
	if (!json_is_array(kids) || json_array_size(kids) == 0)
		return err_set_field(e, ERR_INVALID, field, "'%s' must be a non-empty array",
				     field);
	if (t->n_nodes + json_array_size(kids) > DP_EVENT_MAX_NODES)
		return err_set_field(e, ERR_INVALID, path, "event has more than %d nodes",
				     DP_EVENT_MAX_NODES);
	n->first_child = t->n_nodes;
	n->n_children = (uint16_t)json_array_size(kids);
	t->n_nodes = (uint16_t)(t->n_nodes + n->n_children);
	if (n->type == DP_EVENT_PARALLEL) {
		rc = jv_integer(j, path, "parts", false, n->n_children, 1LL << 53, &v, NULL, e);
		if (rc != ERR_OK)
			return rc;
		n->count = json_object_get(j, "parts") != NULL ? (uint64_t)v : n->n_children;
	}
	for (unsigned c = 0; c < n->n_children; c++) {
		snprintf(sub, sizeof(sub), "%.80s[%u]", field, c);
		rc = parse_node(json_array_get(kids, c), sub, n->relation, t, n->first_child + c,
				e);
		if (rc != ERR_OK)
			return rc;
	}
	return ERR_OK;
}

enum err_code
dp_event_from_json(const json_t *j, const char *prefix, struct dp_event_tree *ret, struct err *e)
{
	struct dp_event_tree t;
	enum err_code rc;

	memset(&t, 0, sizeof(t));
	t.n_nodes = 1;
	rc = parse_node(j, prefix, DP_REPLACE_ONE, &t, 0, e);
	if (rc == ERR_OK)
		rc = dp_event_check(&t, e);
	if (rc == ERR_OK)
		*ret = t;
	return rc;
}
