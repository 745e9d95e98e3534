/*
 * event.c - the API names of privacy events and neighbouring relations
 * (ACCOUNTING.md section 2).  The names are part of the stored run record
 * and of the result body: never rename one.
 */
#include <stddef.h>

#include "privacy/event.h"

const char *
dp_relation_name(enum dp_relation r)
{
	switch (r) { /* no default: -Wswitch flags a new relation left out */
	case DP_REPLACE_ONE:
		return "replace_one";
	case DP_ADD_REMOVE:
		return "add_remove";
	}
	return NULL;
}

const char *
dp_event_type_name(enum dp_event_type t)
{
	switch (t) {
	case DP_EVENT_GAUSSIAN:
		return "gaussian";
	case DP_EVENT_PARALLEL:
		return "parallel";
	}
	return NULL;
}
