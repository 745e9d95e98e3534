/*
 * cli_privacy.h - `dpoptd privacy`: the accountants from the command line.
 *
 *	dpoptd privacy --events FILE.json --delta D [--mode renyi|basic]
 *	               [--grid default|reference]
 *	dpoptd privacy --calibrate gaussian --epsilon E --delta D
 *	               [--count K] [--mode renyi|basic]
 *
 * The first prints, as JSON, the epsilon at delta of the composition of
 * the events in FILE (one event or a list; add_remove events allowed, as
 * this is the accountant, not the ledger), per accountant of the mode,
 * with the optimal order.  The second prints the smallest noise
 * multiplier z for which K Gaussian mechanisms of multiplier z (composed)
 * meet (E, D) under the mode's accountant.
 */
#ifndef SERVICE_CLI_PRIVACY_H
#define SERVICE_CLI_PRIVACY_H

/* argv holds the arguments after "privacy"; returns the exit status.
 * Prints the result to stdout, errors to stderr. */
int cli_privacy(int argc, char **argv);

#endif /* SERVICE_CLI_PRIVACY_H */
