/*
 * synthetic/smd_queries.h - the public schedule of synthetic.smd_queries
 * (smd_queries.c; docs/algorithms/smd-queries.md), for its tests.
 */
#ifndef ALGORITHMS_SYNTHETIC_SMD_QUERIES_H
#define ALGORITHMS_SYNTHETIC_SMD_QUERIES_H

#include "alg.h"

/* Everything derived from the public spec (plan() and init() alike). */
struct smdq_setup {
	size_t k, subsets, conj, queries, universe, rows;
	double lz, lq;         /* ln|Z|, ln|Q| */
	unsigned long steps;   /* T */
	double tau_x;          /* given or sqrt(max(ln|Z|, 1) / (9 T)) */
	double tau_y_balanced; /* sqrt(max(ln|Q|, 1) / (2 T)) */
	double rho_unit;       /* (T - 1) T (2T - 1) / (12 n^2): rho = rho_unit tau_y^2 */
};

/* The balanced step count of the spec's Theorem G.1 (erratum ER7), before
 * rounding: 3 / (4 sqrt 2) n eps sqrt(lz) / (lq sqrt(ln(1 / delta))). */
double smdq_balanced_steps(double n, double epsilon, double delta, double lz, double lq);

/* The schedule of spec; the refusals of plan() before calibration. */
enum err_code smdq_setup(const struct run_spec *spec, struct smdq_setup *ret, struct err *e);

/* The run's event at tau_y: zcdp(rho_unit tau_y^2). */
enum err_code smdq_event(double rho_unit, double tau_y, struct dp_event_tree *ret, struct err *e);

/* tau_y^priv: the largest tau_y (within CALIBRATE_REL_TOL) whose event
 * meets (epsilon, delta) on mode, by calibrate(). */
enum err_code smdq_cap(const struct smdq_setup *s, enum accounting_mode mode, double epsilon,
		       double delta, double *ret_tau, struct accountant_report *ret_report,
		       struct err *e);

/* The public error bound reported as "error_bound" (n records). */
double smdq_error_bound(const struct smdq_setup *s, double n, double tau_x, double tau_y);

extern const struct alg_ops alg_synthetic_smd_queries;

#endif /* ALGORITHMS_SYNTHETIC_SMD_QUERIES_H */
