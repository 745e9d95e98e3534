/*
 * work_rate.h - this machine's speed in work units per second, measured
 * at start-up.
 *
 * A run's work (alg_ops.work: per-record evaluations plus noise draws,
 * from public inputs) becomes seconds only through a speed, and a
 * constant speed was wrong by 2.3x on a loaded machine, so runs admitted
 * under the work limit timed out after they had been charged.  dpoptd
 * therefore times real runs of every registered algorithm on synthetic
 * data (public, generated here: nothing private is read) in two shapes,
 * one dominated by per-record evaluations and one by noise draws, and
 * keeps the slowest rate: the estimate of a run is work / rate, its
 * timeout a margin times that, and admission refuses a run whose
 * estimate exceeds DPOPT_MAX_RUN_SECONDS (run_pipeline.h's run_limits).
 *
 * The timing is thread CPU time, best of a few repetitions, so a busy
 * machine at start-up does not make the measurement itself noisy; the
 * margin covers the wall-clock slowdown of a loaded machine.  The whole
 * measurement takes well under a second.
 */
#ifndef SERVICE_WORK_RATE_H
#define SERVICE_WORK_RATE_H

#include "err.h"

/* Measure; *ret_rate is work units per CPU second (> 0), *ret_seconds the
 * wall time the measurement took.  ERR_NOMEM / ERR_INTERNAL when a
 * benchmark run could not be set up. */
enum err_code work_rate_measure(double *ret_rate, double *ret_seconds, struct err *e);

#endif /* SERVICE_WORK_RATE_H */
