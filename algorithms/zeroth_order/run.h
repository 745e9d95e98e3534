/*
 * zeroth_order/run.h - the O2NC loop both zeroth-order methods run
 * (zeroth_order.o2nc_tree with the tree-mechanism variance-reduced oracle,
 * zeroth_order.naive with the naive oracle); each method's file owns its
 * parameters, catalogue text and ops table.  docs/algorithms/zeroth-order.md.
 */
#ifndef ALGORITHMS_ZEROTH_ORDER_RUN_H
#define ALGORITHMS_ZEROTH_ORDER_RUN_H

#include <stdbool.h>

#include "alg.h"
#include "privacy/noise.h"
#include "zo.h"

/* The methods' common parameters, in this order at the start of each
 * schema (zo_run_params). */
enum { ZO_P_GOLD_DELTA, ZO_P_F_STAR, ZO_P_T_RULE, ZO_P_STEP_RULE, ZO_P_START, ZO_P__COUNT };
extern const struct alg_param zo_run_params[ZO_P__COUNT + 1];

/* Everything plan() derives from the public spec and the calibrated z. */
struct zo_setup {
	bool naive;
	size_t dim;
	double L, gd, fstar, radius;
	double z, rho; /* noise multiplier and rho_paper = 1 / z */
	unsigned long T, K;
	size_t B1;         /* records of the first step of a round (naive: 1) */
	double D;          /* step radius gd / T */
	double s_g, s_d;   /* sensitivities of GRAD and DIFF (naive: s_d unused) */
	int lattice_k;     /* noise lattice step 2^-k */
	double s_gl, s_dl; /* the same raised by the rounding */
	unsigned lambda;   /* bit length of T */
	double sens_eff;   /* sqrt(max(Lambda s_gl^2, (Lambda - 1) s_dl^2)) (naive: s_gl) */
	double sigma;      /* z sens_eff */
	double rho_eff;    /* sens_eff / sigma */
	double G, eta;     /* fixed step rule */
	bool adaptive;
};

enum err_code zo_plan(const struct run_spec *spec, bool naive, struct run_plan *ret_plan,
		      struct err *e);
double zo_work(const struct run_spec *spec, const struct run_plan *plan);
enum err_code zo_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
		      const struct dataset *ds, struct rng *rng, bool naive, struct err *e);
enum err_code zo_step(void *state, struct err *e);
void zo_result(const void *state, double *ret_x);
void zo_fini(void *state);

/* Derive the setup at noise multiplier z (no calibration): tests. */
enum err_code zo_setup_at(const struct run_spec *spec, bool naive, double z, struct zo_setup *ret,
			  struct err *e);

struct zo_state {
	struct zo_setup su;
	struct zo_eval ev;
	struct zo_tree tree;
	struct dgauss_params noise;
	struct constraint ball;
	size_t n;
	unsigned long k; /* rounds done */
	unsigned long t; /* inner steps done in round k */
	double sumsq;    /* adaptive step: sum of ||g~_i||^2 this round */
	unsigned long kstar;
	size_t ptr;
	size_t *order;
	double *x, *w, *wprev, *delta, *g, *gt, *tmp, *xi, *wsum, *out, *u, *p, *treevec, *scratch;
#ifdef DPOPT_TESTING
	const struct alg_testing_hook *hook;
#endif
};

#endif /* ALGORITHMS_ZEROTH_ORDER_RUN_H */
