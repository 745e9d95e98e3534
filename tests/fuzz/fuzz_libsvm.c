/*
 * fuzz_libsvm.c - libFuzzer target for common/libsvm.c.
 *
 * Input: byte 0 picks the dimension (0..255), byte 1 labeled or not, byte
 * 2 the line limit, bytes 3..10 the chunking seed; the rest is the body.
 * Parsed once whole and once in random chunks: both runs must agree on
 * the outcome, the error position and every row (a digest); a failed
 * parser stays failed with the same code; every row has strictly
 * increasing columns below d, non-zero finite values and a finite label.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_split.h"
#include "libsvm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	enum err_code rc;
	unsigned long err_line, err_entry, rows;
	uint64_t digest;
	size_t calls;
	size_t d;
	bool labeled;
};

static enum err_code
on_row(void *ctx, const struct libsvm_row *row, struct err *e)
{
	struct run *r = ctx;

	if (!isfinite(row->label) || (!r->labeled && row->label != 0.0) || row->nnz > r->d)
		abort();
	if (!row->has_group && row->group != 0)
		abort();
	for (size_t k = 0; k < row->nnz; k++) {
		if (row->col[k] >= r->d || !isfinite(row->val[k]) || row->val[k] == 0.0)
			abort();
		if (k > 0 && row->col[k - 1] >= row->col[k])
			abort();
	}
	r->calls++;
	fuzz_hash(&r->digest, &row->line, sizeof(row->line));
	fuzz_hash(&r->digest, &row->label, sizeof(row->label));
	fuzz_hash(&r->digest, &row->has_group, sizeof(row->has_group));
	fuzz_hash(&r->digest, &row->group, sizeof(row->group));
	fuzz_hash(&r->digest, row->col, row->nnz * sizeof(*row->col));
	fuzz_hash(&r->digest, row->val, row->nnz * sizeof(*row->val));
	return ERR_OK;
}

static void
run(struct run *r, const char *body, size_t len, size_t d, bool labeled, size_t max_line,
    uint64_t seed, bool whole)
{
	struct libsvm_parser p;
	struct err e;
	size_t off = 0;
	enum err_code rc;

	memset(r, 0, sizeof(*r));
	r->digest = 0xcbf29ce484222325ull;
	r->d = d;
	r->labeled = labeled;
	rc = libsvm_parser_init(&p, d, labeled, max_line, on_row, r, &e);
	if (rc != ERR_OK) {
		if (!(d == 0 && !labeled))
			abort();
		r->rc = rc;
		libsvm_parser_clear(&p);
		return;
	}
	while (rc == ERR_OK && off < len) {
		size_t n = whole ? len : fuzz_chunk(&seed, len - off);

		rc = libsvm_parser_feed(&p, body + off, n, &e);
		off += n;
	}
	if (rc == ERR_OK)
		rc = libsvm_parser_finish(&p, &e);
	if (rc != ERR_OK) {
		if (!p.failed || e.code != rc || strlen(e.msg) >= sizeof(e.msg))
			abort();
		if (libsvm_parser_feed(&p, "1\n", 2, &e) != rc ||
		    libsvm_parser_finish(&p, &e) != rc)
			abort();
	} else if (p.rows == 0) {
		abort();
	}
	if (p.rows != r->calls || p.len > max_line + 1)
		abort();
	r->rc = rc;
	r->err_line = p.err_line;
	r->err_entry = p.err_entry;
	r->rows = p.rows;
	libsvm_parser_clear(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run a, b;
	size_t d, max_line;
	bool labeled;
	uint64_t seed = 0;

	if (size < 11)
		return 0;
	d = data[0];
	labeled = (data[1] & 1) == 0;
	max_line = 4 + (size_t)data[2] * 4;
	memcpy(&seed, data + 3, sizeof(seed));
	data += 11;
	size -= 11;

	run(&a, (const char *)data, size, d, labeled, max_line, seed, true);
	run(&b, (const char *)data, size, d, labeled, max_line, seed, false);
	if (a.rc != b.rc || a.err_line != b.err_line || a.err_entry != b.err_entry ||
	    a.rows != b.rows || a.digest != b.digest)
		abort();
	return 0;
}
