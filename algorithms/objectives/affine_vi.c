/*
 * objectives/affine_vi.c - "affine_vi": the variational inequality of a
 * monotone affine operator (docs/algorithms/saddle-objectives.md §3; spec
 * 002's AFFINE_MONOTONE_VI in its public-A case):
 *
 *	F(u; b) = A u + b
 *
 * with A = 'objective.matrix', a public d x d matrix (d the dataset's
 * features, at most OBJECTIVE_MAX_MATRIX_DIM), and b a record: the whole
 * row of an unlabeled dataset.  So the data are in b only and the mean
 * operator is A u + mean(b).  Monotone for every record exactly when A +
 * A^T is positive semidefinite: <F(u) - F(v), u - v> = <A (u - v), u - v>
 * = (1/2) <(A + A^T)(u - v), u - v>.
 *
 * Why public A: the per-record form A_z = P_z + K_z needs d^2 columns per
 * record and a bound on ||A_z||_op that ingestion cannot enforce from the
 * declared row bounds; with a public A the only private part is b, bounded
 * by the declared row bound r_b (bounds_row_l2), which ingestion enforces.
 *
 * Monotonicity is checked when the objective is built (objective_init ->
 * affine_init), refused with "objective.matrix" otherwise: A + A^T = 0
 * exactly (a skew A: every entry pair cancels in floating point) passes;
 * otherwise S = A + A^T + tol I must pass a verified Cholesky test
 * (psd_certified below), tol = 1e-12 ||A||_F.  So an accepted A has
 * lambda_min(A + A^T) > -tol: a symmetric part negative by less than
 * 1e-12 ||A||_F passes (floating point cannot tell a singular PSD part
 * from one that is negative by a rounding error); it changes no privacy
 * constant (those rest on ||A||_op and r_b only).
 *
 * Constants over U (R_2, R_1 its l2 and l1 radii):
 *
 *	||F(u; b)||_2 <= sup_U ||A u||_2 + r_b
 *	    <= min(||A||_op R_2, max_j ||A e_j||_2 R_1) + r_b
 *	    (the second: ||A u|| <= sum_j |u_j| ||A e_j||; on an l1 ball or a
 *	    simplex it is exact at a vertex; the affine-VI bound M = ||A|| (||c|| + R) + sup ||b||
 *with c = 0)
 *	||F(u; b) - F(v; b)||_2 = ||A (u - v)||_2 <= ||A||_op ||u - v||_2 (beta)
 *
 * ||A||_op is bounded from above with a certificate, never estimated:
 * lambda_max(A^T A) <= t whenever t I - fl(A^T A) passes the verified
 * Cholesky test, bisected from t = ||A||_F^2 (always true) down to within
 * 1e-9 of the smallest such t, plus the rounding of fl(A^T A) (entrywise
 * at most gamma_d (|A|^T |A|)_ij, so of l2 norm at most gamma_d ||A||_F^2,
 * gamma_k = k u / (1 - k u), u = 2^-53) and of t I - fl(A^T A)'s diagonal
 * (at most 2 u ||A||_F^2).
 *
 * The gap (vi.h): the strong gap by one LMO as for every operator; the
 * weak gap sup_v <A v + b_bar, u_bar - v> is a concave quadratic in v,
 * solved by projected gradient ascent with a Frank-Wolfe certificate
 * (vi_gap_eval, through vi_ops.jacobian and jacobian_t).  For a skew A it
 * equals the closed form <b_bar, u_bar> - min_v <F(u_bar), v> (over a
 * ball: <b_bar, u_bar> + R ||A^T u_bar - b_bar||), which the
 * tests check.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "saddle.h"
#include "vi.h"

#define MAXD OBJECTIVE_MAX_MATRIX_DIM

/* gamma_k = k u / (1 - k u), u the unit roundoff (DBL_EPSILON / 2). */
static double
gamma_k(size_t k)
{
	const double u = DBL_EPSILON / 2.0;

	return (double)k * u / (1.0 - (double)k * u);
}

/*
 * True only if the symmetric n x n matrix M (row-major, overwritten) is
 * positive definite, proven by a floating-point Cholesky factorisation of
 * fl(M - c I) that runs to completion with positive pivots (S. M. Rump,
 * "Verification of positive definiteness", BIT 46 (2006): the criterion
 * c >= gamma_{n+1} / (1 - gamma_{n+1}) tr(M) + 4 n (2 (n + 1) + max_i
 * M_ii) eta, eta the smallest positive subnormal).  Here c = 2 gamma_{n+2}
 * tr(M) plus twice that underflow term, larger than the criterion's.
 * Needs a non-negative diagonal (else M is not PSD: false).
 */
static bool
psd_certified(double *M, size_t n)
{
	double tr = 0.0, dmax = 0.0, c;

	for (size_t i = 0; i < n; i++) {
		if (!(M[i * n + i] >= 0.0))
			return false;
		tr += M[i * n + i];
		dmax = fmax(dmax, M[i * n + i]);
	}
	c = 2.0 * gamma_k(n + 2) * tr * (1.0 + 4.0 * DBL_EPSILON) +
	    8.0 * (double)n * (2.0 * (double)(n + 1) + dmax) * DBL_TRUE_MIN;
	for (size_t i = 0; i < n; i++)
		M[i * n + i] -= c;
	for (size_t j = 0; j < n; j++) {
		double s = M[j * n + j];

		for (size_t k = 0; k < j; k++)
			s -= M[j * n + k] * M[j * n + k];
		if (!(s > 0.0))
			return false;
		s = sqrt(s);
		M[j * n + j] = s;
		for (size_t i = j + 1; i < n; i++) {
			double t = M[i * n + j];

			for (size_t k = 0; k < j; k++)
				t -= M[i * n + k] * M[j * n + k];
			M[i * n + j] = t / s;
		}
	}
	return true;
}

/* A certified upper bound on ||A||_op (see the top of the file). */
static double
opnorm_bound(const double *A, size_t n)
{
	double S[MAXD * MAXD], M[MAXD * MAXD], frob2 = 0.0, lo = 0.0, hi;

	for (size_t j = 0; j < n * n; j++)
		frob2 += A[j] * A[j];
	frob2 *= 1.0 + gamma_k(n * n);
	if (frob2 == 0.0)
		return 0.0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			double s = 0.0;

			for (size_t k = 0; k < n; k++)
				s += A[k * n + i] * A[k * n + j];
			S[i * n + j] = s;
		}
	hi = frob2;
	for (int it = 0; it < 200 && hi - lo > 1e-9 * hi; it++) {
		double t = 0.5 * (lo + hi);

		for (size_t j = 0; j < n * n; j++)
			M[j] = -S[j];
		for (size_t i = 0; i < n; i++)
			M[i * n + i] += t;
		if (psd_certified(M, n))
			hi = t;
		else
			lo = t;
	}
	/* The certificate is for M = fl(t I - fl(A^T A)): lambda_max(A^T A) <=
	 * t + (the diagonal's rounding, u (t + S_ii) <= 2 u ||A||_F^2) +
	 * (fl(A^T A)'s, gamma_n ||A||_F^2) <= hi + gamma_{n+4} ||A||_F^2; the
	 * sqrt and the sum round by at most a few ulps. */
	return sqrt((hi + gamma_k(n + 4) * frob2) * (1.0 + 8.0 * DBL_EPSILON)) *
	       (1.0 + 4.0 * DBL_EPSILON);
}

/* max_j ||A e_j||_2, rounded up. */
static double
max_column_norm(const double *A, size_t n)
{
	double m = 0.0;

	for (size_t j = 0; j < n; j++) {
		double s = 0.0;

		for (size_t i = 0; i < n; i++)
			s += A[i * n + j] * A[i * n + j];
		m = fmax(m, s);
	}
	return sqrt(m * (1.0 + gamma_k(n + 1))) * (1.0 + 4.0 * DBL_EPSILON);
}

static enum err_code
affine_init(struct objective *o, const struct data_schema *s, struct err *e)
{
	const size_t n = s->d;
	const double *A = o->p.matrix;
	double M[MAXD * MAXD], frob = 0.0;
	bool skew = true;

	if (s->task != TASK_UNLABELED)
		return err_set_field(e, ERR_INVALID, "objective.name",
				     "objective 'affine_vi' ('objective.name') needs an unlabeled "
				     "dataset (each row is a record's b)");
	if (o->p.matrix_dim != n)
		return err_set_field(e, ERR_INVALID, "objective.matrix",
				     "'objective.matrix' is required: a %zu x %zu matrix (one row "
				     "and column per feature of the dataset, at most %d)",
				     n, n, MAXD);
	for (size_t j = 0; j < n * n; j++)
		frob += A[j] * A[j];
	frob = sqrt(frob);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			M[i * n + j] = A[i * n + j] + A[j * n + i];
			if (M[i * n + j] != 0.0)
				skew = false;
		}
	if (!skew) {
		for (size_t i = 0; i < n; i++)
			M[i * n + i] += 1e-12 * frob;
		if (!psd_certified(M, n))
			return err_set_field(
				e, ERR_INVALID, "objective.matrix",
				"'objective.matrix' must be monotone: A + A^T positive "
				"semidefinite (its smallest eigenvalue is below "
				"-1e-12 ||A||_F)");
	}
	o->block_x = o->block_y = SIZE_MAX;
	o->offset_x = o->offset_y = 0;
	o->dim_x = n;
	o->dim_y = 0;
	o->dim = n;
	return ERR_OK;
}

static void
affine_eval(const struct objective *o, const struct dataset *ds, size_t i, const double *u,
	    double scale, double *g)
{
	const size_t n = o->dim;
	const double *A = o->p.matrix;

	for (size_t r = 0; r < n; r++) {
		double s = 0.0;

		for (size_t c = 0; c < n; c++)
			s += A[r * n + c] * u[c];
		g[r] += scale * s;
	}
	data_row_axpy(ds, i, scale, g);
}

/* out += A v. */
static void
affine_jacobian(const struct objective *o, const double *v, double *out)
{
	const size_t n = o->dim;

	for (size_t r = 0; r < n; r++)
		for (size_t c = 0; c < n; c++)
			out[r] += o->p.matrix[r * n + c] * v[c];
}

/* out += A^T v. */
static void
affine_jacobian_t(const struct objective *o, const double *v, double *out)
{
	const size_t n = o->dim;

	for (size_t r = 0; r < n; r++)
		for (size_t c = 0; c < n; c++)
			out[c] += o->p.matrix[r * n + c] * v[r];
}

static enum err_code
affine_constants(const struct objective *o, const struct data_schema *s, const struct constraint *u,
		 struct vi_constants *ret, struct err *e)
{
	const size_t n = o->dim;
	double rb, rb_inf, op;
	enum err_code rc;

	rc = saddle_block_bounds(s, SIZE_MAX, &rb, &rb_inf, e);
	if (rc != ERR_OK)
		return rc;
	op = opnorm_bound(o->p.matrix, n);
	ret->lipschitz_l2 = fmin(op * constraint_l2_radius(u, n),
				 max_column_norm(o->p.matrix, n) * constraint_l1_radius(u, n)) +
			    rb;
	ret->smooth_l2 = op;
	return ERR_OK;
}

static const struct vi_ops affine_ops = {
	.init = affine_init,
	.eval = affine_eval,
	.constants = affine_constants,
	.sets = (1u << CONSTRAINT_L2_BALL) | (1u << CONSTRAINT_L1_BALL) |
		(1u << CONSTRAINT_LP_BALL) | (1u << CONSTRAINT_SIMPLEX) | (1u << CONSTRAINT_BOX),
	.jacobian = affine_jacobian,
	.jacobian_t = affine_jacobian_t,
};

const struct objective_ops objective_affine_vi = {
	.name = "affine_vi",
	.doc = "Operator (variational inequality on one set U, 'constraints.x' only): F(u; b) = "
	       "A u + b with A = 'objective.matrix' public and monotone (A + A^T positive "
	       "semidefinite, checked), b a record: the whole row "
	       "(docs/algorithms/saddle-objectives.md §3).  Tasks: unlabeled.  Params: matrix "
	       "(required, d x d, d <= 32 the dataset's features, an array of d rows).  "
	       "Constants from the row's declared bound r_b, the set's radii R_2, R_1 and a "
	       "certified upper bound on ||A||_op (Cholesky-verified bisection): ||F|| <= "
	       "min(||A||_op R_2, max_j ||A e_j|| R_1) + r_b, Lipschitz ||A||_op.  Strong gap by "
	       "one LMO; weak gap by projected gradient ascent with a Frank-Wolfe certificate "
	       "(a closed form for skew A).",
	.tasks = 1u << TASK_UNLABELED,
	.params = 1u << OBJ_P_MATRIX,
	.smooth = true,
	.kind = OBJECTIVE_OPERATOR,
	.vi = &affine_ops,
};
