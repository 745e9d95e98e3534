/*
 * frank_wolfe/lmo.h - the noisy linear minimisation oracle the Frank-Wolfe
 * methods share (frank_wolfe.private, frank_wolfe.private_vr): the
 * polytope's vertices, the exponential mechanism over them, and the
 * Frank-Wolfe move towards the chosen one.
 *
 * Sets: the l1 ball of radius r (m = 2d vertices, index i < d is +r e_i,
 * i >= d is -r e_(i-d)), the simplex of scale s (m = d vertices s e_i)
 * and a polytope given by its vertex list (m vertices v_i in the list's
 * order; constraint.h).  The scores are shift invariant: adding the same
 * <c, v> to every score changes no distribution of the mechanism below
 * (nor an entropic mirror step), so a run may score vertex i by <c_i - c,
 * v> for any fixed public centre c.  The sensitivity then needs only
 *
 *	R_c = max_i ||c_i - c||_1,
 *
 * an upper bound over the vertices, never that every vertex attains it: a
 * change of the linear functional v by ||dv||_inf moves every score by at
 * most ||c_i - c||_1 ||dv||_inf <= R_c ||dv||_inf.  The l1 ball and the
 * simplex use c = 0 (R_c = r, or s, and there every vertex happens to
 * attain it); a polytope the centre constraint_polytope() picks from the
 * vertices alone (public: the vertices are part of the request), with R_c
 * at most its l1 diameter.
 *
 * The mechanism: vertex i with probability proportional to
 * exp(-<c_i, v> / temp) (report-noisy-min with Gumbel noise, i.e. the
 * exponential mechanism; noise_exp_mech).  If every score moves by at most
 * Delta between neighbours, each draw is (2 Delta / temp)-bounded-range
 * (D. Durfee, R. Rogers, "Practical differentially private top-k
 * selection with pay-what-you-get composition", NeurIPS 2019), hence
 * (2 Delta / temp)-DP.  The floating-point caveat of noise_exp_mech applies.
 */
#ifndef ALGORITHMS_FRANK_WOLFE_LMO_H
#define ALGORITHMS_FRANK_WOLFE_LMO_H

#include <stddef.h>

#include "constraint.h"
#include "data.h"
#include "err.h"
#include "rng.h"

/* Number of vertices m of c in dimension d (2d, d, or the polytope's
 * list when its vertices have d coordinates); 0 for other kinds. */
size_t fw_vertex_count(const struct constraint *c, size_t d);

/* R_c = max_i ||c_i - c||_1 about the scores' centre c: the radius, the
 * simplex's scale, or the polytope's centre_radius. */
double fw_vertex_norm(const struct constraint *c);

/* The extra work of a polytope's vertex list in dimension d: m d per
 * evaluation of fw_log_weights() (one dot product per vertex; the l1 ball
 * and the simplex cost O(d), counted by the methods already); 0 for the
 * other kinds.  For the methods' work(). */
double fw_polytope_work(const struct constraint *c, size_t d);

/* x <- the centre of the set (0, or s / d per coordinate on the simplex,
 * the vertices' mean on a polytope): the point of lambda uniform. */
void fw_start(const struct constraint *c, double *x, size_t d);

/* ret_w[i] = -<c_i, v> / temp for the m vertices, up to a shift common to
 * all i (-<c_i - c, v> / temp on a polytope). */
void fw_log_weights(const struct constraint *c, const double *v, size_t d, double temp,
		    double *ret_w);

/* A vertex drawn by the exponential mechanism at temperature temp (scratch
 * w: m doubles); noise_exp_mech's errors. */
enum err_code fw_noisy_vertex(struct rng *r, const struct constraint *c, const double *v, size_t d,
			      double temp, double *w, size_t *ret_vertex, struct err *e);

/* v <- v + scale c_vertex (d coordinates). */
void fw_add_vertex(const struct constraint *c, size_t d, size_t vertex, double scale, double *v);

/*
 * dst += clamp_B(g) coordinate-wise, for g holding the gradient (or a
 * difference of gradients) of record i of ds alone, and g <- 0 again, over
 * dim coordinates.  Dense rows: every coordinate.  CSR rows: a one-margin
 * loss's gradient is phi' x~_i, non-zero only on the row's columns and the
 * intercept's coordinates [ds->d, dim) (the Frank-Wolfe objectives are the
 * one-margin GLMs), so only those are read and reset: O(non-zeros) per
 * record instead of O(dim), with the same sums in the same order (the
 * dense loop adds clamp(0) = 0 elsewhere).
 */
void fw_add_clamped(const struct dataset *ds, size_t i, size_t dim, double bound, double *g,
		    double *dst);

/* x <- (1 - eta) x + eta c_vertex. */
void fw_move(const struct constraint *c, double *x, size_t d, size_t vertex, double eta);

#endif /* ALGORITHMS_FRANK_WOLFE_LMO_H */
