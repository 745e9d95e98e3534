/*
 * row_order.c - the sequential visiting order of one-pass runs and the
 * batch gradient over it (row_order.h).
 */
#include <stdlib.h>
#include <string.h>

#include "row_order.h"

/* About 1 MiB of dense row data per block. */
#define BLOCK_BYTES ((size_t)1 << 20)
#define CSR_BLOCK   4096
#define MIN_BLOCKS  64
/* Slices of a batch: at least this many doubles of model-sized work
 * (rows x dim) each, at most PARTS_MAX of them. */
#define PART_GRAIN ((size_t)1 << 16)
#define PARTS_MAX  8

size_t
row_order_block_len(size_t n, size_t d, enum data_layout layout)
{
	size_t row_bytes = (d + 1) * sizeof(double);
	size_t len = layout == DATA_CSR ? CSR_BLOCK : (BLOCK_BYTES + row_bytes - 1) / row_bytes;
	size_t cap = (n + MIN_BLOCKS - 1) / MIN_BLOCKS;

	if (len > cap)
		len = cap;
	return len < 1 ? 1 : len;
}

static size_t
block_size(const struct row_order *o, size_t k)
{
	return k + 1 < o->blocks ? o->len : o->n - k * o->len;
}

static void
fill_starts(struct row_order *o)
{
	o->start[0] = 0;
	for (size_t i = 0; i < o->blocks; i++)
		o->start[i + 1] = o->start[i] + block_size(o, o->perm[i]);
}

enum err_code
row_order_draw(struct row_order *o, struct rng *rng, size_t n, size_t len, struct err *e)
{
	memset(o, 0, sizeof(*o));
	if (n < 1 || len < 1)
		return err_set(e, ERR_INTERNAL, "row order of no rows");
	o->n = n;
	o->len = len;
	o->blocks = (n + len - 1) / len;
	o->perm = calloc(o->blocks, sizeof(*o->perm));
	o->inner = calloc(o->blocks, sizeof(*o->inner));
	o->start = calloc(o->blocks + 1, sizeof(*o->start));
	if (o->perm == NULL || o->inner == NULL || o->start == NULL)
		return err_set(e, ERR_NOMEM, "cannot allocate the row order");
	o->rot = (size_t)rng_below(rng, n);
	for (size_t i = 0; i < o->blocks; i++)
		o->perm[i] = i;
	for (size_t i = 0; i + 1 < o->blocks; i++) {
		size_t j = i + (size_t)rng_below(rng, o->blocks - i), t = o->perm[i];

		o->perm[i] = o->perm[j];
		o->perm[j] = t;
	}
	for (size_t k = 0; k < o->blocks; k++)
		o->inner[k] = (size_t)rng_below(rng, block_size(o, k));
	fill_starts(o);
	return ERR_OK;
}

/* The visited block holding position pos: start[i] <= pos < start[i + 1]. */
static size_t
visited_block(const struct row_order *o, size_t pos)
{
	size_t lo = 0, hi = o->blocks;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->start[mid] <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

size_t
row_order_run(const struct row_order *o, size_t pos, size_t max, size_t *ret_first)
{
	size_t i = visited_block(o, pos), k = o->perm[i], len = block_size(o, k);
	size_t t = pos - o->start[i], off = (o->inner[k] + t) % len;
	size_t count = len - off, q, row;

	if (count > len - t)
		count = len - t;
	if (count > max)
		count = max;
	q = k * o->len + off;
	row = q + o->rot < o->n ? q + o->rot : q + o->rot - o->n;
	if (count > o->n - row)
		count = o->n - row;
	*ret_first = row;
	return count;
}

size_t
row_order_row(const struct row_order *o, size_t pos)
{
	size_t row;

	(void)row_order_run(o, pos, 1, &row);
	return row;
}

void
row_order_put_first(struct row_order *o, size_t row)
{
	size_t q = row >= o->rot ? row - o->rot : row + o->n - o->rot, k = q / o->len;

	for (size_t i = 0; i < o->blocks; i++)
		if (o->perm[i] == k) {
			o->perm[i] = o->perm[0];
			o->perm[0] = k;
			break;
		}
	o->inner[k] = q - k * o->len;
	fill_starts(o);
}

void
row_order_free(struct row_order *o)
{
	free(o->perm);
	free(o->inner);
	free(o->start);
	o->perm = o->inner = o->start = NULL;
}

void
dataset_rows_view(const struct dataset *ds, size_t first, size_t count, struct dataset *ret)
{
	*ret = *ds;
	ret->n = count;
	if (ds->layout == DATA_DENSE)
		ret->x = ds->x + first * ds->d;
	else
		ret->row_ptr = ds->row_ptr + first;
	if (ds->y != NULL)
		ret->y = ds->y + first;
	if (ds->group != NULL)
		ret->group = ds->group + first;
	if (ds->cat != NULL)
		ret->cat = ds->cat + first * ds->n_categorical;
}

size_t
row_order_parts(size_t m, size_t dim)
{
	size_t work = m * (dim > 0 ? dim : 1), parts = work / PART_GRAIN;

	if (parts > PARTS_MAX)
		parts = PARTS_MAX;
	if (parts > m)
		parts = m;
	return parts < 1 ? 1 : parts;
}

/* g += the batch gradient over positions p0 .. p0 + m - 1, range by range. */
static void
ranges_grad(const struct row_order *o, const struct objective *obj, const struct dataset *ds,
	    size_t p0, size_t m, const double *w, double clip, double *g)
{
	for (size_t pos = p0, end = p0 + m; pos < end;) {
		struct dataset v;
		size_t first, c = row_order_run(o, pos, end - pos, &first);

		dataset_rows_view(ds, first, c, &v);
		objective_batch_grad(obj, &v, NULL, c, w, clip, g);
		pos += c;
	}
}

struct part_job {
	const struct row_order *o;
	const struct objective *obj;
	const struct dataset *ds;
	size_t p0, m, parts, dim;
	const double *w;
	double clip;
	double *scratch;
};

static void
part_run(void *arg, size_t k)
{
	const struct part_job *j = arg;
	size_t a = j->m * k / j->parts, b = j->m * (k + 1) / j->parts;
	double *gk = j->scratch + k * j->dim;

	memset(gk, 0, j->dim * sizeof(*gk));
	ranges_grad(j->o, j->obj, j->ds, j->p0 + a, b - a, j->w, j->clip, gk);
}

void
row_order_batch_grad(const struct row_order *o, const struct objective *obj,
		     const struct dataset *ds, size_t p0, size_t m, const double *w, double clip,
		     double *g, size_t dim, double *scratch, const struct alg_exec *exec)
{
	size_t parts = row_order_parts(m, dim);
	struct part_job j = { o, obj, ds, p0, m, parts, dim, w, clip, scratch };

	if (parts == 1) {
		ranges_grad(o, obj, ds, p0, m, w, clip, g);
		return;
	}
	if (exec != NULL)
		exec->parallel_for(exec->ctx, parts, part_run, &j);
	else
		for (size_t k = 0; k < parts; k++)
			part_run(&j, k);
	/* The fixed reduction order: slice 0, 1, ... */
	for (size_t k = 0; k < parts; k++)
		for (size_t c = 0; c < dim; c++)
			g[c] += scratch[k * dim + c];
}
