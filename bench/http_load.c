/*
 * http_load.c - closed-loop HTTP/1.1 load: C keep-alive connections, each
 * sending one request after the other for S seconds; prints the rate of
 * completed requests and the latency percentiles.
 *
 *   http_load --host 127.0.0.1 --port P --conns C --seconds S
 *             [--header "K: V"]... [--method GET|POST] [--body FILE]
 *             --path PATH [--path PATH]...
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PATHS   256
#define MAX_HEADERS 8

static const char *host = "127.0.0.1", *method = "GET";
static int port, conns = 64;
static double seconds = 5.0;
static const char *paths[MAX_PATHS], *headers[MAX_HEADERS];
static int npaths, nheaders;
static char *body;
static size_t body_len;
static double t_end;

struct worker {
	pthread_t tid;
	int index;
	double *lat; /* seconds */
	size_t n, cap;
	long errors;
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

/* Read one response (Content-Length framing; the service always sends
 * it); its status, or -1 when the connection failed.  buf keeps bytes
 * past the response for the next one (there are none: one request at a
 * time). */
static int
read_response(int fd, char **buf, size_t *cap)
{
	size_t have = 0, head = 0, need;
	char *hdr_end;
	const char *cl;
	int status;

	for (;;) {
		ssize_t r;

		if (have + 4096 > *cap) {
			*cap = (*cap + 4096) * 2;
			*buf = realloc(*buf, *cap);
			if (*buf == NULL)
				return -1;
		}
		r = recv(fd, *buf + have, *cap - have - 1, 0);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		have += (size_t)r;
		(*buf)[have] = '\0';
		if (head == 0) {
			hdr_end = strstr(*buf, "\r\n\r\n");
			if (hdr_end == NULL)
				continue;
			head = (size_t)(hdr_end - *buf) + 4;
		}
		cl = content_length(*buf, head);
		if (cl == NULL)
			return -1;
		need = head + strtoul(cl, NULL, 10);
		if (have >= need)
			break;
	}
	if (sscanf(*buf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	return status;
}

static void *
run(void *arg)
{
	struct worker *w = arg;
	const char *path = paths[w->index % npaths];
	char *req = NULL, *buf = NULL;
	size_t cap = 0, len;
	int fd = dial();
	FILE *m;

	m = open_memstream(&req, &len);
	fprintf(m, "%s %s HTTP/1.1\r\nHost: %s:%d\r\n", method, path, host, port);
	for (int i = 0; i < nheaders; i++)
		fprintf(m, "%s\r\n", headers[i]);
	if (body != NULL)
		fprintf(m, "Content-Type: application/json\r\nContent-Length: %zu\r\n", body_len);
	fprintf(m, "\r\n");
	if (body != NULL)
		fwrite(body, 1, body_len, m);
	fclose(m);
	while (fd >= 0 && now() < t_end) {
		double t0 = now();
		int status;

		if (send_all(fd, req, len) != 0 || (status = read_response(fd, &buf, &cap)) < 0) {
			w->errors++;
			close(fd);
			fd = dial();
			continue;
		}
		if (status < 200 || status > 299)
			w->errors++;
		if (w->n == w->cap) {
			w->cap = w->cap ? w->cap * 2 : 4096;
			w->lat = realloc(w->lat, w->cap * sizeof(double));
			if (w->lat == NULL)
				abort();
		}
		w->lat[w->n++] = now() - t0;
	}
	if (fd < 0)
		w->errors++;
	else
		close(fd);
	free(req);
	free(buf);
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
			"[--conns C] [--seconds S] [--header 'K: V']... [--method M] "
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
	if (port <= 0 || npaths == 0 || conns < 1 || !(seconds > 0))
		usage();
	ws = calloc((size_t)conns, sizeof(*ws));
	if (ws == NULL)
		return 1;
	t0 = now();
	t_end = t0 + seconds;
	for (int i = 0; i < conns; i++) {
		ws[i].index = i;
		if (pthread_create(&ws[i].tid, NULL, run, &ws[i]) != 0)
			return 1;
	}
	for (int i = 0; i < conns; i++) {
		pthread_join(ws[i].tid, NULL);
		total += ws[i].n;
		errors += ws[i].errors;
	}
	elapsed = now() - t0;
	all = malloc((total ? total : 1) * sizeof(double));
	if (all == NULL)
		return 1;
	for (int i = 0; i < conns; i++) {
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
