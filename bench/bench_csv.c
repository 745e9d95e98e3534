/*
 * bench_csv.c - throughput of the CSV parser: builds an in-memory body of
 * 200,000 rows x 21 columns of 6-7 significant digit numbers (with a
 * header), feeds it in 64 KiB chunks and prints MB/s and rows/s, best of
 * a few runs.  Prints figures only; asserts nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csv.h"

#define ROWS  200000
#define COLS  21
#define CHUNK (64 * 1024)
#define RUNS  5

struct sink {
	double sum; /* keeps the parse from being optimised away */
	unsigned long rows;
};

static enum err_code
on_row(void *ctx, const double *cells, size_t ncols, unsigned long line, struct err *e)
{
	struct sink *s = ctx;

	s->sum += cells[0] + cells[ncols - 1];
	s->rows++;
	return ERR_OK;
}

static uint64_t
next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The body, NUL-terminated; *len gets its length.  NULL on failure. */
static char *
make_body(size_t *len)
{
	static const double scale[] = { 1e-4, 1e-2, 1.0, 1e2, 1e4 };
	size_t cap = (size_t)ROWS * COLS * 16 + 4096;
	char *buf = malloc(cap);
	uint64_t state = 0x2385;
	size_t n = 0;

	if (buf == NULL)
		return NULL;
	for (int c = 0; c < COLS; c++)
		n += (size_t)snprintf(buf + n, cap - n, c == 0 ? "x%d" : ",x%d", c);
	buf[n++] = '\n';
	for (int r = 0; r < ROWS; r++) {
		for (int c = 0; c < COLS; c++) {
			uint64_t u = next(&state);
			double v = (double)(u >> 11) / 9007199254740992.0 * 2.0 - 1.0;

			v *= scale[(u & 0xff) % 5];
			n += (size_t)snprintf(buf + n, cap - n, (u & 0x100) ? "%.6g" : "%.7g", v);
			buf[n++] = c == COLS - 1 ? '\n' : ',';
		}
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int
main(void)
{
	size_t len;
	char *body = make_body(&len);
	double best = 0.0;
	struct sink sink = { 0 };

	if (body == NULL) {
		fprintf(stderr, "bench_csv: out of memory\n");
		return 1;
	}
	for (int run = 0; run < RUNS; run++) {
		struct csv_parser p;
		struct err e;
		double t0, t;
		enum err_code rc;

		sink.rows = 0;
		if (csv_parser_init(&p, COLS, 4096, on_row, &sink, &e) != ERR_OK) {
			fprintf(stderr, "bench_csv: %s\n", e.msg);
			return 1;
		}
		t0 = now();
		rc = ERR_OK;
		for (size_t off = 0; rc == ERR_OK && off < len; off += CHUNK)
			rc = csv_parser_feed(&p, body + off, len - off < CHUNK ? len - off : CHUNK,
					     &e);
		if (rc == ERR_OK)
			rc = csv_parser_finish(&p, &e);
		t = now() - t0;
		csv_parser_clear(&p);
		if (rc != ERR_OK || sink.rows != ROWS) {
			fprintf(stderr, "bench_csv: parse failed: %s\n", e.msg);
			return 1;
		}
		if (best == 0.0 || t < best)
			best = t;
	}
	printf("csv: %zu bytes, %d rows x %d cols, %d KiB chunks, best of %d\n", len, ROWS, COLS,
	       CHUNK / 1024, RUNS);
	printf("csv: %.1f MB/s, %.0f rows/s, %.1f ns/cell (checksum %g)\n",
	       (double)len / best / 1e6, ROWS / best, best / ((double)ROWS * COLS) * 1e9, sink.sum);
	free(body);
	return 0;
}
