/*
 * fuzz_csv.c - libFuzzer target for common/csv.c.
 *
 * Input: byte 0 picks the column count (1..8), byte 1 which columns take
 * labels, byte 2 the line limit, bytes 3..10 the chunking seed; the rest
 * is the body.  The body is parsed once whole and once in random chunks:
 * both runs must agree on the outcome, the error position, the header's
 * names and every row (a digest), a failed parser must stay failed with the same code, and
 * every delivered cell must be finite (a label cell an index in range).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "fuzz_split.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const labels[] = { "a", "b", "cat", "7", "x y" };
#define N_LABELS 5

struct run {
	enum err_code rc;
	unsigned long err_line, err_column, rows;
	uint64_t digest;
	size_t calls;
	size_t header_cols; /* on_header calls */
	unsigned label_mask;
};

static enum err_code
on_row(void *ctx, const double *cells, size_t ncols, unsigned long line, struct err *e)
{
	struct run *r = ctx;

	for (size_t j = 0; j < ncols; j++) {
		if (!isfinite(cells[j]))
			abort();
		if ((r->label_mask >> j) & 1) {
			if (!(cells[j] >= 0 && cells[j] < N_LABELS && cells[j] == floor(cells[j])))
				abort();
		}
	}
	r->calls++;
	fuzz_hash(&r->digest, &line, sizeof(line));
	fuzz_hash(&r->digest, cells, ncols * sizeof(double));
	return ERR_OK;
}

/* A header cell: trimmed (no blank at either end), within the line, in
 * column order; hashed with the rows. */
static enum err_code
on_header(void *ctx, size_t col, const char *name, size_t len, struct err *e)
{
	struct run *r = ctx;

	if (col != r->header_cols || (len > 0 && (name[0] == ' ' || name[0] == '\t' ||
						  name[len - 1] == ' ' || name[len - 1] == '\t')))
		abort();
	r->header_cols++;
	fuzz_hash(&r->digest, &col, sizeof(col));
	fuzz_hash(&r->digest, name, len);
	return ERR_OK;
}

static void
run(struct run *r, const char *body, size_t len, size_t ncols, unsigned mask, size_t max_line,
    uint64_t seed, bool whole)
{
	struct csv_parser p;
	struct err e;
	size_t off = 0;
	enum err_code rc;

	memset(r, 0, sizeof(*r));
	r->digest = 0xcbf29ce484222325ull;
	r->label_mask = mask;
	if (csv_parser_init(&p, ncols, max_line, on_row, r, &e) != ERR_OK)
		abort();
	p.on_header = on_header;
	p.header_ctx = r;
	for (size_t j = 0; j < ncols; j++)
		if ((mask >> j) & 1 && csv_parser_set_labels(&p, j, labels, N_LABELS, &e) != ERR_OK)
			abort();
	rc = ERR_OK;
	while (rc == ERR_OK && off < len) {
		size_t n = whole ? len : fuzz_chunk(&seed, len - off);

		rc = csv_parser_feed(&p, body + off, n, &e);
		off += n;
	}
	if (rc == ERR_OK)
		rc = csv_parser_finish(&p, &e);
	if (rc != ERR_OK) {
		/* sticky, same code; the message stays bounded */
		if (!p.failed || e.code != rc || strlen(e.msg) >= sizeof(e.msg))
			abort();
		if (csv_parser_feed(&p, "1\n", 2, &e) != rc || csv_parser_finish(&p, &e) != rc)
			abort();
	} else if (p.rows == 0) {
		abort(); /* success means at least one row */
	}
	if (p.rows != r->calls || p.len > max_line + 1 ||
	    (r->header_cols != 0 && r->header_cols != ncols))
		abort();
	r->rc = rc;
	r->err_line = p.err_line;
	r->err_column = p.err_column;
	r->rows = p.rows;
	csv_parser_clear(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run a, b;
	size_t ncols, max_line;
	unsigned mask;
	uint64_t seed = 0;

	if (size < 11)
		return 0;
	ncols = 1 + data[0] % 8;
	mask = data[1] & ((1u << ncols) - 1);
	max_line = 4 + (size_t)data[2] * 4;
	memcpy(&seed, data + 3, sizeof(seed));
	data += 11;
	size -= 11;

	run(&a, (const char *)data, size, ncols, mask, max_line, seed, true);
	run(&b, (const char *)data, size, ncols, mask, max_line, seed, false);
	if (a.rc != b.rc || a.err_line != b.err_line || a.err_column != b.err_column ||
	    a.rows != b.rows || a.digest != b.digest)
		abort();
	return 0;
}
