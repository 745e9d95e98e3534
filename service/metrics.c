/*
 * metrics.c - request counters and latency histograms, rendered in the
 * Prometheus text exposition format (version 0.0.4).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "metrics.h"
#include "util.h"

static const unsigned statuses[] = { 200, 201, 202, 204, 400, 401, 403, 404, 405,
				     409, 413, 415, 422, 429, 500, 503, 0 /* other */ };
static const double buckets[] = { 0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
				  0.25,  0.5,   1.0,  2.5,   5.0,  10.0 };

#define N_STATUS  ARRAY_SIZE(statuses)
#define N_BUCKETS ARRAY_SIZE(buckets)

struct route_metrics {
	atomic_ulong count[N_STATUS];
	atomic_ulong bucket[N_BUCKETS + 1]; /* last: +Inf */
	atomic_ullong sum_us;               /* latency sum in microseconds */
};

struct metrics {
	size_t routes;
	struct route_metrics r[]; /* routes + 1 ("no route") */
};

struct metrics *
metrics_new(size_t routes)
{
	struct metrics *m = calloc(1, sizeof(*m) + (routes + 1) * sizeof(struct route_metrics));

	if (m != NULL)
		m->routes = routes;
	return m;
}

void
metrics_free(struct metrics *m)
{
	free(m);
}

void
metrics_observe_request(struct metrics *m, size_t route, unsigned status, double seconds)
{
	struct route_metrics *r;
	size_t s = N_STATUS - 1, b = N_BUCKETS;

	if (m == NULL)
		return;
	r = &m->r[route <= m->routes ? route : m->routes];
	for (size_t i = 0; i + 1 < N_STATUS; i++)
		if (statuses[i] == status)
			s = i;
	for (size_t i = 0; i < N_BUCKETS; i++)
		if (seconds <= buckets[i]) {
			b = i;
			break;
		}
	atomic_fetch_add_explicit(&r->count[s], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->bucket[b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->sum_us, (unsigned long long)(seconds * 1e6),
				  memory_order_relaxed);
}

/* A growable string for the exposition text. */
struct buf {
	char *s;
	size_t len, cap;
	bool failed;
};

static void __attribute__((format(printf, 2, 3))) buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = b->cap * 2 + (size_t)n;
			char *p = realloc(b->s, cap);

			if (p == NULL) {
				b->failed = true;
				return;
			}
			b->s = p;
			b->cap = cap;
		}
	}
}

static void
route_label(size_t i, size_t routes, char *out, size_t cap)
{
	if (i < routes)
		snprintf(out, cap, "%s %s", router_at(i)->method, router_at(i)->pattern);
	else
		snprintf(out, cap, "none");
}

static void
render_runs(struct buf *b, struct db_conn *db)
{
	static const char *const states[] = { "queued", "running", "succeeded", "failed",
					      "cancelled" };
	PGresult *res;
	long long counts[5] = { 0 };

	if (db == NULL)
		return;
	res = db_exec(db, "SELECT state, count(*) FROM runs GROUP BY state", 0, NULL,
		      PGRES_TUPLES_OK, NULL);
	if (res == NULL)
		return;
	for (int i = 0; i < PQntuples(res); i++)
		for (size_t k = 0; k < 5; k++)
			if (strcmp(PQgetvalue(res, i, 0), states[k]) == 0)
				counts[k] = atoll(PQgetvalue(res, i, 1));
	PQclear(res);
	buf_printf(b, "# HELP dpopt_runs Runs in the shared database by state.\n"
		      "# TYPE dpopt_runs gauge\n");
	for (size_t k = 0; k < 5; k++)
		buf_printf(b, "dpopt_runs{state=\"%s\"} %lld\n", states[k], counts[k]);
	buf_printf(b,
		   "# HELP dpopt_queue_depth Runs waiting for a worker.\n"
		   "# TYPE dpopt_queue_depth gauge\ndpopt_queue_depth %lld\n",
		   counts[0]);
}

/* This process's shared dataset cache (dataset_cache.h). */
static void
render_cache(struct buf *b, struct dataset_cache *c)
{
	struct dataset_cache_stats st;

	if (c == NULL)
		return;
	dataset_cache_stats(c, &st);
	buf_printf(b,
		   "# HELP dpopt_dataset_cache_bytes Memory held by loaded datasets.\n"
		   "# TYPE dpopt_dataset_cache_bytes gauge\ndpopt_dataset_cache_bytes %zu\n"
		   "# HELP dpopt_dataset_cache_entries Loaded datasets.\n"
		   "# TYPE dpopt_dataset_cache_entries gauge\ndpopt_dataset_cache_entries %zu\n"
		   "# HELP dpopt_dataset_cache_lookups_total Dataset lookups by outcome.\n"
		   "# TYPE dpopt_dataset_cache_lookups_total counter\n"
		   "dpopt_dataset_cache_lookups_total{outcome=\"hit\"} %lu\n"
		   "dpopt_dataset_cache_lookups_total{outcome=\"miss\"} %lu\n"
		   "# HELP dpopt_dataset_cache_evictions_total Loaded datasets freed.\n"
		   "# TYPE dpopt_dataset_cache_evictions_total counter\n"
		   "dpopt_dataset_cache_evictions_total %lu\n",
		   st.bytes, st.entries, st.hits, st.misses, st.evictions);
}

char *
metrics_render(struct metrics *m, struct db_conn *db, struct dataset_cache *cache, struct err *e)
{
	struct buf b = { .cap = 4096 };
	char label[128];

	b.s = malloc(b.cap);
	if (b.s == NULL) {
		err_set(e, ERR_NOMEM, "cannot render metrics");
		return NULL;
	}
	b.s[0] = '\0';
	buf_printf(&b, "# HELP dpopt_http_requests_total HTTP requests by route and status.\n"
		       "# TYPE dpopt_http_requests_total counter\n");
	for (size_t i = 0; i <= m->routes; i++) {
		route_label(i, m->routes, label, sizeof(label));
		for (size_t s = 0; s < N_STATUS; s++) {
			unsigned long c =
				atomic_load_explicit(&m->r[i].count[s], memory_order_relaxed);
			char st[16];

			if (c == 0)
				continue;
			if (statuses[s] == 0)
				snprintf(st, sizeof(st), "other");
			else
				snprintf(st, sizeof(st), "%u", statuses[s]);
			buf_printf(&b,
				   "dpopt_http_requests_total{route=\"%s\",status=\"%s\"} %lu\n",
				   label, st, c);
		}
	}
	buf_printf(&b, "# HELP dpopt_http_request_duration_seconds Request latency.\n"
		       "# TYPE dpopt_http_request_duration_seconds histogram\n");
	for (size_t i = 0; i <= m->routes; i++) {
		unsigned long cum = 0;

		route_label(i, m->routes, label, sizeof(label));
		for (size_t k = 0; k <= N_BUCKETS; k++) {
			cum += atomic_load_explicit(&m->r[i].bucket[k], memory_order_relaxed);
			if (k < N_BUCKETS)
				buf_printf(
					&b,
					"dpopt_http_request_duration_seconds_bucket{route=\"%s\","
					"le=\"%g\"} %lu\n",
					label, buckets[k], cum);
			else
				buf_printf(
					&b,
					"dpopt_http_request_duration_seconds_bucket{route=\"%s\","
					"le=\"+Inf\"} %lu\n",
					label, cum);
		}
		buf_printf(
			&b, "dpopt_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n", label,
			(double)atomic_load_explicit(&m->r[i].sum_us, memory_order_relaxed) * 1e-6);
		buf_printf(&b, "dpopt_http_request_duration_seconds_count{route=\"%s\"} %lu\n",
			   label, cum);
	}
	render_runs(&b, db);
	render_cache(&b, cache);
	if (b.failed) {
		free(b.s);
		err_set(e, ERR_NOMEM, "cannot render metrics");
		return NULL;
	}
	return b.s;
}
