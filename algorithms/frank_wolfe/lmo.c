/*
 * frank_wolfe/lmo.c - the noisy linear minimisation oracle (lmo.h).
 */
#include <math.h>
#include <string.h>

#include "frank_wolfe/lmo.h"
#include "privacy/noise.h"

size_t
fw_vertex_count(const struct constraint *c, size_t d)
{
	if (c->kind == CONSTRAINT_L1_BALL)
		return 2 * d;
	if (c->kind == CONSTRAINT_SIMPLEX)
		return d;
	if (c->kind == CONSTRAINT_POLYTOPE && c->vertex_dim == d)
		return c->n_vertices;
	return 0;
}

double
fw_vertex_norm(const struct constraint *c)
{
	return c->kind == CONSTRAINT_POLYTOPE ? c->centre_radius : c->radius;
}

double
fw_polytope_work(const struct constraint *c, size_t d)
{
	return c->kind == CONSTRAINT_POLYTOPE ? (double)c->n_vertices * (double)d : 0.0;
}

void
fw_start(const struct constraint *c, double *x, size_t d)
{
	double v = c->kind == CONSTRAINT_SIMPLEX ? c->radius / (double)d : 0.0;

	if (c->kind == CONSTRAINT_POLYTOPE) {
		/* the centroid, lambda uniform */
		memset(x, 0, d * sizeof(*x));
		for (size_t i = 0; i < c->n_vertices; i++)
			for (size_t j = 0; j < d; j++)
				x[j] += c->vertices[i * d + j];
		for (size_t j = 0; j < d; j++)
			x[j] /= (double)c->n_vertices;
		return;
	}
	for (size_t j = 0; j < d; j++)
		x[j] = v;
}

/*
 * A polytope's scores -<v_i - c, v> / temp, computed as -(R_c / temp)
 * <(v_i - c) / R_c, v>: shifting every score by <c, v> changes no
 * distribution (lmo.h), and the division by R_c makes the l1 ball's
 * vertices +-r e_j (centre 0, R_c = r) and the simplex's s e_j exactly
 * +-e_j, so that such a list gives the same weights, bit for bit, as the
 * kinds themselves (-(r / temp) v_j; tests/algorithms/test_smd_maurey.c).
 */
static void
polytope_log_weights(const struct constraint *c, const double *v, size_t d, double temp,
		     double *ret_w)
{
	const double rc = c->centre_radius, s = rc / temp;

	for (size_t i = 0; i < c->n_vertices; i++) {
		const double *vi = c->vertices + i * d;
		double dot = 0.0;

		for (size_t j = 0; j < d; j++)
			dot += (vi[j] - c->centre[j]) / rc * v[j];
		ret_w[i] = -s * dot;
	}
}

void
fw_log_weights(const struct constraint *c, const double *v, size_t d, double temp, double *ret_w)
{
	double s = c->radius / temp;

	if (c->kind == CONSTRAINT_POLYTOPE) {
		polytope_log_weights(c, v, d, temp, ret_w);
		return;
	}
	for (size_t j = 0; j < d; j++)
		ret_w[j] = -s * v[j];
	if (c->kind == CONSTRAINT_L1_BALL)
		for (size_t j = 0; j < d; j++)
			ret_w[d + j] = s * v[j];
}

enum err_code
fw_noisy_vertex(struct rng *r, const struct constraint *c, const double *v, size_t d, double temp,
		double *w, size_t *ret_vertex, struct err *e)
{
	fw_log_weights(c, v, d, temp, w);
	return noise_exp_mech(r, w, fw_vertex_count(c, d), ret_vertex, e);
}

void
fw_add_vertex(const struct constraint *c, size_t d, size_t vertex, double scale, double *v)
{
	size_t j = vertex < d ? vertex : vertex - d;
	double sign = vertex < d ? 1.0 : -1.0;

	if (c->kind == CONSTRAINT_POLYTOPE) {
		const double *vi = c->vertices + vertex * d;

		/* zero entries skipped: the same sums as the kinds' single
		 * coordinate for their vertex lists, and O(non-zeros) */
		for (size_t k = 0; k < d; k++)
			if (vi[k] != 0.0)
				v[k] += scale * vi[k];
		return;
	}
	v[j] += scale * sign * c->radius;
}

void
fw_move(const struct constraint *c, double *x, size_t d, size_t vertex, double eta)
{
	for (size_t i = 0; i < d; i++)
		x[i] *= 1.0 - eta;
	fw_add_vertex(c, d, vertex, eta, x);
}

void
fw_add_clamped(const struct dataset *ds, size_t i, size_t dim, double bound, double *g, double *dst)
{
	if (ds->layout != DATA_CSR) {
		for (size_t c = 0; c < dim; c++) {
			dst[c] += fmin(fmax(g[c], -bound), bound);
			g[c] = 0.0;
		}
		return;
	}
	for (size_t k = ds->row_ptr[i]; k < ds->row_ptr[i + 1]; k++) {
		size_t c = ds->col[k];

		dst[c] += fmin(fmax(g[c], -bound), bound);
		g[c] = 0.0;
	}
	for (size_t c = ds->d; c < dim; c++) {
		dst[c] += fmin(fmax(g[c], -bound), bound);
		g[c] = 0.0;
	}
}
