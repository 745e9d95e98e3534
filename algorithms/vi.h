/*
 * vi.h - operator objectives (objective kind OBJECTIVE_OPERATOR): the
 * variational inequality of a monotone operator on one set U,
 *
 *	find u* in U with <F(u*), u - u*> >= 0 for all u in U,
 *	F(u) = (1/n) sum_i F(u; z_i),
 *
 * (docs/algorithms/saddle.md §9).  The variable u is one block ("x",
 * dimension o->dim) over one set (struct constraint, "constraints.x";
 * never "constraints.y").  Monotonicity, <F(u) - F(v), u - v> >= 0 for
 * every record, is a property the objective states in its catalogue text
 * and its tests check; nothing here can verify it at run time.  An
 * objective gives F(u; z) of one record and, from the declared public
 * bounds only (never the rows), the constants over U:
 *
 *	||F(u; z)||_2 <= lipschitz_l2 for u in U  (the operator's norm
 *	    bound: the DP sensitivity input, replace-one moves a batch mean by
 *	    at most 2 lipschitz_l2 / b),
 *	||F(u; z) - F(v; z)||_2 <= smooth_l2 ||u - v||_2  (beta).
 *
 * Objectives: bilinear_vi (objectives/bilinear_vi.c).
 */
#ifndef ALGORITHMS_VI_H
#define ALGORITHMS_VI_H

#include <stdbool.h>
#include <stddef.h>

#include "constraint.h"
#include "data.h"
#include "err.h"
#include "objective.h"

struct vi_constants {
	double lipschitz_l2; /* ||F(u; z)||_2 over U */
	double smooth_l2;    /* beta: Lipschitz constant of u -> F(u; z) in l2 */
};

struct vi_ops {
	/* Fill o->dim (and what the objective reads) from the schema;
	 * ERR_INVALID naming "objective.name" when the schema does not fit. */
	enum err_code (*init)(struct objective *o, const struct data_schema *s, struct err *e);
	/* g += scale F(u; z_i) (o->dim entries). */
	void (*eval)(const struct objective *o, const struct dataset *ds, size_t i, const double *u,
		     double scale, double *g);
	/* Constants over the set u (of the kinds in sets, bounded). */
	enum err_code (*constants)(const struct objective *o, const struct data_schema *s,
				   const struct constraint *u, struct vi_constants *ret,
				   struct err *e);
	unsigned sets; /* bit (1u << CONSTRAINT_*) per set kind its constants cover */
	/* F(u; z) = c(z) + J u with one public J, J^T = -J (monotone with
	 * <F(u) - F(v), u - v> = 0): vi_gap_eval's closed form needs it. */
	bool skew_affine;
	/* F(u; z) = c(z) + J u with one public monotone J (J + J^T PSD):
	 * out += J v and out += J^T v.  Both or neither; with them
	 * vi_gap_eval computes the weak gap by a certified inner solve. */
	void (*jacobian)(const struct objective *o, const double *v, double *out);
	void (*jacobian_t)(const struct objective *o, const double *v, double *out);
};

/* Constants of o over u from the declared bounds of s.  ERR_INVALID
 * naming "constraints.x" for a set the objective does not cover or that
 * does not validate; *ret written only on success. */
enum err_code vi_constants(const struct objective *o, const struct data_schema *s,
			   const struct constraint *u, struct vi_constants *ret, struct err *e);

/* g += scale F(u; z_i). */
void vi_operator(const struct objective *o, const struct dataset *ds, size_t i, const double *u,
		 double scale, double *g);

/*
 * g += sum over the m records idx[0..m-1] (rows 0..m-1 when idx is NULL)
 * of clip_C(F(u; z_i)) (clip = INFINITY: the plain sum).  scratch: o->dim
 * doubles.  g must not alias u, scratch or the data.
 */
void vi_batch_operator(const struct objective *o, const struct dataset *ds, const size_t *idx,
		       size_t m, const double *u, double clip, double *scratch, double *g);

/*
 * The gaps of u_bar in U on ds (public evaluation data only), for
 * F = the mean operator of ds:
 *
 *	strong gap  = sup_{v in U} <F(u_bar), u_bar - v>
 *	            = <F(u_bar), u_bar> - min_{v in U} <F(u_bar), v>   (the LMO)
 *	weak gap    = sup_{v in U} <F(v), u_bar - v>
 *
 * both >= 0.  For a skew-affine F = c + J u (vi_ops.skew_affine), <F(v),
 * u_bar - v> = <c, u_bar> - <c + J u_bar, v> (as <J v, v> = 0 and
 * <J v, u_bar> = -<v, J u_bar>), so weak = <c, u_bar> - min_v <F(u_bar),
 * v>, a closed form (it equals the strong gap, as <J u_bar, u_bar> = 0).
 * For an affine F = c + J u with J + J^T PSD (vi_ops.jacobian and
 * jacobian_t), psi(v) = <c + J v, u_bar - v> is a concave quadratic: it is
 * maximised over U by projected gradient ascent (step 1 / beta, beta a
 * power-iteration estimate of ||J + J^T||) and bracketed by the
 * Frank-Wolfe certificate max_U psi <= psi(v) + max_{s in U} <grad psi(v),
 * s - v>; the weak gap returned is the bracket's upper end, a certified
 * upper bound within 1e-10 (1 + |gap|) of the value unless 10^5 steps did
 * not close the bracket (then still an upper bound; vi_gap_bracket gives
 * both ends).  For other operators
 * the weak gap is NAN (not computed).  ERR_INVALID for an empty ds or an
 * unusable set; ERR_NOMEM.
 */
enum err_code vi_gap_eval(const struct objective *o, const struct dataset *ds,
			  const struct constraint *u, const double *u_bar, double *ret_strong,
			  double *ret_weak, struct err *e);

/* The same with the weak gap's certified bracket [*ret_weak_lo, *ret_weak]
 * (equal for the closed forms; NAN both when not computed).  ret_weak and
 * ret_weak_lo both NULL or both not. */
enum err_code vi_gap_bracket(const struct objective *o, const struct dataset *ds,
			     const struct constraint *u, const double *u_bar, double *ret_strong,
			     double *ret_weak_lo, double *ret_weak, struct err *e);

#endif /* ALGORITHMS_VI_H */
