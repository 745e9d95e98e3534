/*
 * zeroth_order/naive.c - "zeroth_order.naive": the naive private baseline
 * of Zhang, Tran, Cutkosky (ICLR 2024, Algorithm 6, Appendix E): the same
 * O2NC loop (run.c) with a one-record, one-direction two-point estimate
 * and fresh Gaussian noise at every step, no tree and no variance
 * reduction.  B = 1, D = delta / T, K = floor(M / T), T = max(T1, T2n)
 * with T2n = (d^(3/2) L delta M / (A rho))^(2/3) (the paper's min is an
 * erratum), sigma = 2 d L z (the paper's d L / (B rho) is half the
 * replace-one sensitivity).  Each record is used once in one Gaussian
 * release: the event is parallel(K T x gaussian(z)).  Its rate is worse
 * than o2nc_tree's by a factor 1/eps in the privacy term; it exists as a
 * baseline.  docs/algorithms/zeroth-order.md.
 */
#include "run.h"

static const char *const naive_objectives[] = { "sphere_distance",
						"capped_l1_regression",
						"ramp_classification",
						"robust_phase_retrieval",
						"relu_neuron",
						"relu_net",
						NULL };

static enum err_code
naive_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	return zo_plan(spec, true, ret_plan, e);
}

static enum err_code
naive_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	   const struct dataset *ds, struct rng *rng, struct err *e)
{
	return zo_init(state, spec, plan, ds, rng, true, e);
}

const struct alg_ops alg_zo_naive = {
	.name = "zeroth_order.naive",
	.version = 1,
	.doc = "Baseline for zeroth_order.o2nc_tree: the same online-to-nonconvex conversion "
	       "with a one-record, one-direction clipped two-point gradient estimate and fresh "
	       "Gaussian noise at every step (no tree, no variance reduction).  Needs far more "
	       "data than o2nc_tree for the same stationarity; offered for comparison.",
	.paper = "Q. Zhang, H. Tran, A. Cutkosky, Private Zeroth-Order Nonsmooth Nonconvex "
		 "Optimization, ICLR 2024 (Algorithm 6, with the corrected noise of "
		 "docs/algorithms/zeroth-order.md)",
	.privacy_model = "(epsilon, delta)-DP, replace-one: one Gaussian mechanism per record",
	.objectives = naive_objectives,
	.constraints = 1u << CONSTRAINT_L2_BALL,
	.params = zo_run_params,
	.state_size = sizeof(struct zo_state),
	.plan = naive_plan,
	.work = zo_work,
	.init = naive_init,
	.step = zo_step,
	.result = zo_result,
	.fini = zo_fini,
	.zeroth_order = true,
};
