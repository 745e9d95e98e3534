/*
 * event.h - what a private run releases, as a typed privacy event
 * (after dp_accounting's DpEvent; ACCOUNTING.md section 2).
 *
 * An algorithm computes its event from public parameters alone before the
 * run starts; the ledger charges it and the result reports it.  Every
 * event names its neighbouring relation; the ledger accepts replace_one
 * only.  This issue needs the Gaussian and the parallel composition of
 * identical parts; the privacy-core issue adds the rest of the types.
 */
#ifndef ALGORITHMS_PRIVACY_EVENT_H
#define ALGORITHMS_PRIVACY_EVENT_H

enum dp_relation {
	DP_REPLACE_ONE, /* neighbours differ by replacing one record */
	DP_ADD_REMOVE,  /* neighbours differ by adding or removing one record */
};

enum dp_event_type {
	DP_EVENT_GAUSSIAN, /* one Gaussian mechanism, noise_multiplier = sigma / Delta_2 */
	DP_EVENT_PARALLEL, /* `parts` copies of the Gaussian on disjoint record sets */
};

struct dp_event {
	enum dp_event_type type;
	enum dp_relation relation;
	double noise_multiplier; /* z = sigma / Delta_2 of the (inner) Gaussian */
	unsigned long parts;     /* DP_EVENT_PARALLEL: number of disjoint parts */
};

const char *dp_relation_name(enum dp_relation r);
const char *dp_event_type_name(enum dp_event_type t);

#endif /* ALGORITHMS_PRIVACY_EVENT_H */
