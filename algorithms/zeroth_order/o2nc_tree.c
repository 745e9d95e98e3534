/*
 * zeroth_order/o2nc_tree.c - "zeroth_order.o2nc_tree": private
 * zeroth-order optimization of nonsmooth nonconvex objectives by
 * online-to-nonconvex conversion (Q. Zhang, H. Tran, A. Cutkosky, "Private
 * Zeroth-Order Nonsmooth Nonconvex Optimization", ICLR 2024, Algorithms 3,
 * 4, 1, 2, 5 with Theorem 4.9's parameters).
 *
 * K rounds of T steps of O2NC with projected online subgradient descent
 * (steps of length <= D = delta / T); the oracle is variance reduced: a
 * GRAD estimate on B1 = T + 1 records at step 1, then one DIFF estimate
 * of one record per step (d directions uniform on the sphere per record,
 * every finite difference clipped), privatised by the binary tree
 * mechanism restarted each round.  T = max(T1, T2) (the paper's min is an
 * erratum), K = floor(M / (2T)); the result is the average of one
 * uniformly chosen round's points, (2 delta, eps)-stationary in
 * expectation (the paper's "(delta, eps)" is an erratum).
 *
 * Accounting: the calibrated z gives rho_paper = 1 / z (the paper's rho:
 * (alpha, alpha rho^2 / 2)-RDP, i.e. rho_zcdp = rho_paper^2 / 2, not the
 * paper's rho), sigma = z sqrt(max(Lambda s_G^2, (Lambda - 1) s_D^2)) with
 * Lambda = floor(log2 T) + 1 (the paper's sqrt(2 ln T) count is wrong for
 * small T, zero at T = 1), and the event is gaussian(z = 1 / rho_eff).
 * run.c has the loop and the argument; docs/algorithms/zeroth-order.md the
 * derivations.
 */
#include "run.h"

static const char *const o2nc_objectives[] = { "sphere_distance",
					       "capped_l1_regression",
					       "ramp_classification",
					       "robust_phase_retrieval",
					       "relu_neuron",
					       "relu_net",
					       NULL };

static enum err_code
o2nc_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	return zo_plan(spec, false, ret_plan, e);
}

static enum err_code
o2nc_init(void *state, const struct run_spec *spec, const struct run_plan *plan,
	  const struct dataset *ds, struct rng *rng, struct err *e)
{
	return zo_init(state, spec, plan, ds, rng, false, e);
}

const struct alg_ops alg_zo_o2nc_tree = {
	.name = "zeroth_order.o2nc_tree",
	.version = 1,
	.doc = "Private zeroth-order optimization of nonsmooth nonconvex objectives from "
	       "function values only: online-to-nonconvex conversion with projected online "
	       "subgradient descent, a variance-reduced oracle (a large-batch two-point "
	       "gradient estimate, then one-record gradient differences, d random directions "
	       "per record, every finite difference clipped) privatised by the tree mechanism; "
	       "one pass over the data; the result is the average of one random round's "
	       "points, a (2 gold_delta, eps)-Goldstein-stationary point in expectation.  "
	       "constraints.x is an l2 ball onto which the result is projected (the iterates "
	       "stay within K gold_delta of 0).  Work grows like n d^2.",
	.paper = "Q. Zhang, H. Tran, A. Cutkosky, Private Zeroth-Order Nonsmooth Nonconvex "
		 "Optimization, ICLR 2024 (Algorithms 1-5, Theorem 4.9, with the corrections of "
		 "docs/algorithms/zeroth-order.md)",
	.privacy_model = "(alpha, alpha rho_eff^2 / 2)-RDP for every alpha (a Gaussian of "
			 "z = 1 / rho_eff), replace-one; calibrated to (epsilon, delta)",
	.objectives = o2nc_objectives,
	.constraints = 1u << CONSTRAINT_L2_BALL,
	.params = zo_run_params,
	.state_size = sizeof(struct zo_state),
	.plan = o2nc_plan,
	.work = zo_work,
	.init = o2nc_init,
	.step = zo_step,
	.result = zo_result,
	.fini = zo_fini,
	.zeroth_order = true,
};
