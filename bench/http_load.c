/*
 * http_load.c - closed-loop HTTP/1.1 load: C keep-alive connections, each
 * sending one request after the other for S seconds; prints the rate of
 * completed requests and the latency percentiles.
 *
 *   http_load --host 127.0.0.1 --port P --conns C --seconds S [--threads T]
 *             [--header "K: V"]... [--method GET|POST] [--body FILE]
 *             --path PATH [--path PATH]...
 *
 * T threads (default 2) each drive their share of the connections from one
 * epoll loop, as pgbench -j 2 drives its clients: one thread per
 * connection cost twice pgbench's client CPU per request (16.5 against
 * 7.4-9 us, measured on GET /v1/runs/{id} at 64 connections) on the two
 * cores the service and PostgreSQL share with it.  Every connection is
 * persistent (keep-alive), like pgbench's; a request is timed from its
 * send to the last byte of its response.
 *
 * Connection i uses the (i mod n)-th --path (so 64 paths over 64
 * connections spread the load over 64 resources).  Output, one line:
 *   requests=N seconds=S rate=R p50_ms=A p99_ms=B max_ms=C errors=E
 * where errors counts responses whose status is not 2xx and failed
 * connections; any error makes the exit status 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PATHS   256
#define MAX_HEADERS 8

static const char *host = "127.0.0.1", *method = "GET";
static int port, conns = 64, nthreads = 2;
static double seconds = 5.0;
static const char *paths[MAX_PATHS], *headers[MAX_HEADERS];
static int npaths, nheaders;
static char *body;
static size_t body_len;
static double t_end;

struct worker {
	pthread_t tid;
	int index;   /* the thread's index: it drives connections index, index + T, ... */
	double *lat; /* seconds */
	size_t n, cap;
	long errors;
};

/* One connection: its socket, the response read so far, the send time. */
struct conn {
	int fd, index;
	char *buf;
	size_t have, cap, head, need;
	double t0;
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The value of the Content-Length header in head (n bytes), or NULL. */
static const char *
content_length(const char *head, size_t n)
{
	static const char name[] = "\r\ncontent-length:";

	for (size_t i = 0; i + sizeof(name) - 1 <= n; i++)
		if (strncasecmp(head + i, name, sizeof(name) - 1) == 0)
			return head + i + sizeof(name) - 1;
	return NULL;
}

static int
dial(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int
send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The request text of connection index (its path: the (index mod n)-th). */
static char *
request_text(int index, size_t *ret_len)
{
	char *req = NULL;
	FILE *m = open_memstream(&req, ret_len);

	if (m == NULL)
		return NULL;
	fprintf(m, "%s %s HTTP/1.1\r\nHost: %s:%d\r\n", method, paths[index % npaths], host, port);
	for (int i = 0; i < nheaders; i++)
		fprintf(m, "%s\r\n", headers[i]);
	if (body != NULL)
		fprintf(m, "Content-Type: application/json\r\nContent-Length: %zu\r\n", body_len);
	fprintf(m, "\r\n");
	if (body != NULL)
		fwrite(body, 1, body_len, m);
	return fclose(m) == 0 ? req : NULL;
}

/* Send c's request (a few hundred bytes into an idle socket: the blocking
 * send returns at once) and note the time; -1 when the connection failed. */
static int
conn_send(struct conn *c, const char *req, size_t len)
{
	c->have = c->head = c->need = 0;
	c->t0 = now();
	return send_all(c->fd, req, len);
}

/* Read what the socket holds (after EPOLLIN: recv does not block); the
 * response's status once it is complete (Content-Length framing: the
 * service always sends it), 0 while it is not, -1 when the connection
 * failed. */
static int
conn_read(struct conn *c)
{
	ssize_t r;
	int status;

	if (c->have + 4096 > c->cap) {
		c->cap = (c->cap + 4096) * 2;
		c->buf = realloc(c->buf, c->cap);
		if (c->buf == NULL)
			return -1;
	}
	do
		r = recv(c->fd, c->buf + c->have, c->cap - c->have - 1, 0);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return -1;
	c->have += (size_t)r;
	c->buf[c->have] = '\0';
	if (c->head == 0) {
		const char *hdr_end = strstr(c->buf, "\r\n\r\n"), *cl;

		if (hdr_end == NULL)
			return 0;
		c->head = (size_t)(hdr_end - c->buf) + 4;
		cl = content_length(c->buf, c->head);
		if (cl == NULL)
			return -1;
		c->need = c->head + strtoul(cl, NULL, 10);
	}
	if (c->have < c->need)
		return 0;
	if (sscanf(c->buf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	return status;
}

static void
record(struct worker *w, double t)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 4096;
		w->lat = realloc(w->lat, w->cap * sizeof(double));
		if (w->lat == NULL)
			abort();
	}
	w->lat[w->n++] = t;
}

/* (Re)open c and send its first request: false when that failed (the
 * connection is then out of the run, counted as an error). */
static bool
conn_open(int ep, struct conn *c, const char *req, size_t len)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

	c->fd = dial();
	if (c->fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0 ||
	    conn_send(c, req, len) != 0) {
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
		return false;
	}
	return true;
}

static void *
run(void *arg)
{
	struct worker *w = arg;
	int n = 0, ep = epoll_create1(0), live = 0;
	struct conn *cs;
	char **reqs;
	size_t *lens;
	struct epoll_event evs[64];

	for (int i = w->index; i < conns; i += nthreads)
		n++;
	cs = calloc((size_t)n, sizeof(*cs));
	reqs = calloc((size_t)n, sizeof(*reqs));
	lens = calloc((size_t)n, sizeof(*lens));
	if (ep < 0 || cs == NULL || reqs == NULL || lens == NULL)
		abort();
	for (int k = 0; k < n; k++) {
		cs[k].index = k;
		reqs[k] = request_text(w->index + k * nthreads, &lens[k]);
		if (reqs[k] == NULL)
			abort();
		if (conn_open(ep, &cs[k], reqs[k], lens[k]))
			live++;
		else
			w->errors++;
	}
	while (live > 0) {
		double left = t_end - now();
		int m;

		if (left <= 0)
			break;
		m = epoll_wait(ep, evs, 64, (int)(left * 1e3) + 1);
		for (int i = 0; i < m; i++) {
			struct conn *c = evs[i].data.ptr;
			int k = c->index, status = conn_read(c);

			if (status == 0)
				continue;
			if (status > 0) {
				double t = now();

				if (status < 200 || status > 299)
					w->errors++;
				if (t < t_end)
					record(w, t - c->t0);
				if (conn_send(c, reqs[k], lens[k]) == 0)
					continue;
			}
			/* The connection failed: count it, and open another. */
			w->errors++;
			close(c->fd);
			if (!conn_open(ep, c, reqs[k], lens[k])) {
				w->errors++;
				live--;
			}
		}
	}
	for (int k = 0; k < n; k++) {
		if (cs[k].fd >= 0)
			close(cs[k].fd);
		free(cs[k].buf);
		free(reqs[k]);
	}
	close(ep);
	free(cs);
	free(reqs);
	free(lens);
	return NULL;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
usage(void)
{
	fprintf(stderr, "usage: http_load --port P --path PATH [--path PATH]... [--host H] "
			"[--conns C] [--seconds S] [--threads T] [--header 'K: V']... [--method M] "
			"[--body FILE]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct worker *ws;
	double *all, t0, elapsed;
	size_t total = 0, k = 0;
	long errors = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v == NULL)
			usage();
		i++;
		if (strcmp(a, "--host") == 0)
			host = v;
		else if (strcmp(a, "--port") == 0)
			port = atoi(v);
		else if (strcmp(a, "--conns") == 0)
			conns = atoi(v);
		else if (strcmp(a, "--seconds") == 0)
			seconds = atof(v);
		else if (strcmp(a, "--threads") == 0)
			nthreads = atoi(v);
		else if (strcmp(a, "--method") == 0)
			method = v;
		else if (strcmp(a, "--header") == 0 && nheaders < MAX_HEADERS)
			headers[nheaders++] = v;
		else if (strcmp(a, "--path") == 0 && npaths < MAX_PATHS)
			paths[npaths++] = v;
		else if (strcmp(a, "--body") == 0) {
			FILE *f = fopen(v, "rb");

			if (f == NULL || fseek(f, 0, SEEK_END) != 0)
				usage();
			body_len = (size_t)ftell(f);
			rewind(f);
			body = malloc(body_len + 1);
			if (body == NULL || fread(body, 1, body_len, f) != body_len)
				usage();
			fclose(f);
		} else
			usage();
	}
	if (port <= 0 || npaths == 0 || conns < 1 || !(seconds > 0) || nthreads < 1)
		usage();
	if (nthreads > conns)
		nthreads = conns;
	ws = calloc((size_t)nthreads, sizeof(*ws));
	if (ws == NULL)
		return 1;
	t0 = now();
	t_end = t0 + seconds;
	for (int i = 0; i < nthreads; i++) {
		ws[i].index = i;
		if (pthread_create(&ws[i].tid, NULL, run, &ws[i]) != 0)
			return 1;
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(ws[i].tid, NULL);
		total += ws[i].n;
		errors += ws[i].errors;
	}
	elapsed = now() - t0;
	all = malloc((total ? total : 1) * sizeof(double));
	if (all == NULL)
		return 1;
	for (int i = 0; i < nthreads; i++) {
		memcpy(all + k, ws[i].lat, ws[i].n * sizeof(double));
		k += ws[i].n;
		free(ws[i].lat);
	}
	qsort(all, total, sizeof(double), cmp);
	printf("requests=%zu seconds=%.3f rate=%.1f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f "
	       "errors=%ld\n",
	       total, elapsed, (double)total / elapsed, total ? all[total / 2] * 1e3 : 0.0,
	       total ? all[(size_t)((double)(total - 1) * 0.99)] * 1e3 : 0.0,
	       total ? all[total - 1] * 1e3 : 0.0, errors);
	free(all);
	free(ws);
	free(body);
	return errors != 0 || total == 0;
}
