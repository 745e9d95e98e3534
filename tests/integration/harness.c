/*
 * harness.c - see harness.h.
 *
 * dpoptd runs as a child process with an environment built here (the
 * caller's minus every DPOPT_* variable, plus ours), its stdout and
 * stderr appended to a log file.  A server is remembered with the pid of
 * the process that started it: under CK_FORK a test that fails exits its
 * child process, and the exit hook kills what that process started (the
 * server also gets SIGKILL from the kernel when its parent dies).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <libpq-fe.h>

#include "harness.h"

extern char **environ;

#define MAX_LIVE     32
#define KEY_LEN      85 /* "dpk_" 16 hex "_" 64 hex */
#define READY_WAIT_S 60.0

static const char *const sanitizer_markers[] = { "ERROR: AddressSanitizer",
						 "runtime error:", "LeakSanitizer", NULL };

static char log_dir[256];
static char contract_log[600]; /* "" unless DPOPT_TEST_CONTRACT_DIR is set */
static bool fixture_failed;    /* h_server_stop_fixture() saw a problem */
static unsigned db_counter, log_counter;
static struct {
	pid_t pid;
	pid_t owner;
} live[MAX_LIVE];

double
h_timeout_scale(void)
{
	const char *v = getenv("DPOPT_TEST_TIMEOUT_SCALE");
	double k = v != NULL && v[0] != '\0' ? strtod(v, NULL) : 1.0;

	return isfinite(k) && k >= 1.0 ? k : 1.0;
}

double
h_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void
h_sleep(double seconds)
{
	struct timespec t = { .tv_sec = (time_t)seconds,
			      .tv_nsec = (long)((seconds - floor(seconds)) * 1e9) };

	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

static const char *
bin_path(void)
{
	const char *bin = getenv("DPOPT_BIN");

	ck_assert_msg(bin != NULL && bin[0] != '\0', "DPOPT_BIN is not set");
	return bin;
}

static void
live_add(pid_t pid)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		if (live[i].pid == 0) {
			live[i].pid = pid;
			live[i].owner = getpid();
			return;
		}
	}
	ck_abort_msg("more than %d servers at once", MAX_LIVE);
}

static void
live_remove(pid_t pid)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (live[i].pid == pid)
			live[i].pid = 0;
}

/* Exit hook: a test that failed may leave its servers behind. */
static void
kill_leftovers(void)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		if (live[i].pid != 0 && live[i].owner == getpid()) {
			kill(live[i].pid, SIGKILL);
			waitpid(live[i].pid, NULL, 0);
			live[i].pid = 0;
		}
	}
}

/* The contract record (tests/integration/contract_check.py validates it
 * against api/openapi.yaml): with DPOPT_TEST_CONTRACT_DIR set, every
 * response h_http() receives is one JSON line in
 * $DPOPT_TEST_CONTRACT_DIR/<program>-<pid>.jsonl.  A program's records of
 * an earlier run are removed first, so the directory holds the latest run
 * of each program. */
static void
contract_init(void)
{
	const char *dir = getenv("DPOPT_TEST_CONTRACT_DIR");
	char exe[512], prefix[256], path[1200];
	const char *prog;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	DIR *d;
	struct dirent *ent;

	if (dir == NULL || dir[0] == '\0')
		return;
	exe[n > 0 ? n : 0] = '\0';
	prog = strrchr(exe, '/') != NULL ? strrchr(exe, '/') + 1 : "program";
	snprintf(prefix, sizeof(prefix), "%s-", prog);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "harness: mkdir %s: %s\n", dir, strerror(errno));
		exit(EXIT_FAILURE);
	}
	d = opendir(dir);
	while (d != NULL && (ent = readdir(d)) != NULL) {
		if (strncmp(ent->d_name, prefix, strlen(prefix)) == 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
			unlink(path);
		}
	}
	if (d != NULL)
		closedir(d);
	/* The pid is filled in per process (Check forks per test). */
	snprintf(contract_log, sizeof(contract_log), "%s/%s", dir, prefix);
}

/* Append one record; one write() on an O_APPEND file, so records of
 * concurrent threads never interleave.  A record that cannot be written
 * is a harness failure (the validator must not pass on missing data). */
static void
contract_record(const char *method, const char *path, const struct h_resp *r)
{
	char file[700];
	json_t *rec, *body;
	char *line;
	size_t len;
	int fd;
	ssize_t w;

	if (contract_log[0] == '\0' || r->status == 0)
		return;
	snprintf(file, sizeof(file), "%s%ld.jsonl", contract_log, (long)getpid());
	body = json_stringn(r->body, r->len); /* NULL when not UTF-8: recorded as null */
	rec = json_pack("{s:s, s:s, s:I, s:s, s:o}", "method", method, "path", path, "status",
			(json_int_t)r->status, "content_type", r->ctype, "body",
			body != NULL ? body : json_null());
	line = rec != NULL ? json_dumps(rec, JSON_COMPACT) : NULL;
	json_decref(rec);
	fd = line != NULL ? open(file, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
	len = line != NULL ? strlen(line) : 0;
	if (line != NULL)
		line[len] = '\n'; /* over the NUL: written with its length */
	w = fd >= 0 ? write(fd, line, len + 1) : -1;
	if (fd >= 0)
		close(fd);
	free(line);
	if (w != (ssize_t)len + 1) {
		fprintf(stderr, "harness: cannot record to %s\n", file);
		abort();
	}
}

void
h_init(void)
{
	const char *x;

	snprintf(log_dir, sizeof(log_dir), "/tmp/dpopt-it.XXXXXX");
	if (mkdtemp(log_dir) == NULL) {
		perror("mkdtemp");
		exit(EXIT_FAILURE);
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "curl_global_init failed\n");
		exit(EXIT_FAILURE);
	}
	atexit(kill_leftovers);
	contract_init();
	x = getenv("CK_EXCLUDE_TAGS");
	if (x != NULL && strstr(x, H_TAG_HOOKS) != NULL) {
		printf("harness: the test cases tagged '" H_TAG_HOOKS "' are not run: they need "
		       "the DPOPT_TEST_* hooks of a -Dtesting=true dpoptd\n");
		fflush(stdout); /* before Check forks */
	}
}

/* Whole file, NUL-terminated, or NULL. */
static char *
read_file(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t len = 0, cap = 0, n;

	if (f == NULL)
		return NULL;
	do {
		if (cap - len < 4096) {
			char *q = realloc(p, cap + 65536);

			if (q == NULL) {
				free(p);
				fclose(f);
				return NULL;
			}
			p = q;
			cap += 65536;
		}
		n = fread(p + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	p[len] = '\0';
	if (ret_len != NULL)
		*ret_len = len;
	return p;
}

static const char *
sanitizer_report(const char *text)
{
	for (int i = 0; sanitizer_markers[i] != NULL; i++)
		if (text != NULL && strstr(text, sanitizer_markers[i]) != NULL)
			return sanitizer_markers[i];
	return NULL;
}

static void
print_log(const char *path)
{
	size_t len = 0;
	char *text = read_file(path, &len);
	const size_t max = 64 * 1024;

	fprintf(stderr, "==== %s (%zu bytes) ====\n", path, len);
	if (text != NULL)
		fputs(len > max ? text + len - max : text, stderr);
	fprintf(stderr, "==== end of %s ====\n", path);
	free(text);
}

int
h_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}

void
h_owner_setup(struct h_server *s, char *db, size_t db_cap, char *owner, size_t owner_cap,
	      const struct h_opts *opts)
{
	h_db_create(db, db_cap);
	h_key_create(db, "acme", "owner", owner, owner_cap);
	h_server_start(s, db, opts);
}

int
h_finish(int nfailed)
{
	DIR *dir = opendir(log_dir);
	struct dirent *ent;
	char path[600];
	bool bad = false;

	kill_leftovers();
	while (dir != NULL && (ent = readdir(dir)) != NULL) {
		char *text;
		const char *marker;

		if (ent->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", log_dir, ent->d_name);
		text = read_file(path, NULL);
		marker = sanitizer_report(text);
		free(text);
		if (marker != NULL) {
			fprintf(stderr, "harness: '%s' in %s\n", marker, path);
			bad = true;
		}
		if (marker != NULL || nfailed > 0)
			print_log(path);
		else
			unlink(path);
	}
	if (dir != NULL)
		closedir(dir);
	if (fixture_failed) {
		fprintf(stderr, "harness: a fixture's dpoptd did not stop cleanly\n");
		bad = true;
	}
	if (!bad && nfailed == 0)
		rmdir(log_dir);
	else
		fprintf(stderr, "harness: logs kept in %s\n", log_dir);
	curl_global_cleanup();
	return !bad && nfailed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

void
h_db_create(char *out, size_t cap)
{
	const char *admin = getenv("DPOPT_TEST_PG");
	char conninfo[512], sql[128], name[64];
	PGconn *pg;
	PGresult *res;

	ck_assert_msg(admin != NULL, "DPOPT_TEST_PG is not set: run under with_pg.sh");
	snprintf(name, sizeof(name), "t_%ld_%u", (long)getpid(), db_counter++);
	snprintf(conninfo, sizeof(conninfo), "%s dbname=postgres", admin);
	pg = PQconnectdb(conninfo);
	ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "connect %s: %s", conninfo,
		      PQerrorMessage(pg));
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
	res = PQexec(pg, sql);
	ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s: %s", sql, PQerrorMessage(pg));
	PQclear(res);
	PQfinish(pg);
	snprintf(out, cap, "%s dbname=%s", admin, name);
}

/* A port nobody listens on now (another process may take it before
 * dpoptd binds it: h_server_start() retries). */
static unsigned
free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned port;

	ck_assert_msg(fd >= 0, "socket: %s", strerror(errno));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_msg(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "bind: %s", strerror(errno));
	ck_assert(getsockname(fd, (struct sockaddr *)&a, &alen) == 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* The caller's environment minus DPOPT_*, plus extra (NULL-ended).  The
 * strings are borrowed; free only the array. */
static char **
child_env(char *const *extra)
{
	size_t n = 0, m = 0, k = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	while (extra[m] != NULL)
		m++;
	env = calloc(n + m + 1, sizeof(*env));
	ck_assert(env != NULL);
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "DPOPT_", 6) != 0)
			env[k++] = environ[i];
	for (size_t i = 0; i < m; i++)
		env[k++] = extra[i];
	env[k] = NULL;
	return env;
}

/* fork + execve with stdout to out_fd (or the log) and stderr to the log. */
static pid_t
spawn(char *const *argv, char **env, const char *log, int out_fd)
{
	pid_t parent = getpid();
	pid_t pid;
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

	ck_assert_msg(fd >= 0, "open %s: %s", log, strerror(errno));
	fflush(NULL); /* the child must not flush our buffers again */
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(out_fd >= 0 ? out_fd : fd, 1);
		dup2(fd, 2);
		/* Die with the test process, whatever way it ends. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		execve(argv[0], argv, env);
		dprintf(2, "harness: execve %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd);
	return pid;
}

static const char *
log_level(void)
{
	const char *l = getenv("DPOPT_TEST_LOG_LEVEL");

	return l != NULL && l[0] != '\0' ? l : "warn";
}

/* One attempt: true when ready, false when dpoptd exited early. */
static bool
start_once(struct h_server *s, int *ret_status)
{
	char url[600], listen[64], workers[48], lease[48], delay[48], body[48], level[48];
	char threads[48], work[64];
	/* Tests send bursts from one address: no limit of the service's
	 * defaults should refuse them unless a test asks (h_opts.env). */
	static char *const lifted[] = { "DPOPT_RATE_LIMIT_PER_SECOND=0",
					"DPOPT_AUTH_FAILURES_BURST=1000000",
					"DPOPT_MAX_CONNECTIONS_PER_CLIENT=100000",
					"DPOPT_MAX_UPLOADS_PER_TENANT=1024", NULL };
	char *extra[48];
	char *argv[2] = { (char *)bin_path(), NULL };
	char **env;
	int k = 0;
	double deadline;

	s->port = free_port();
	/* getenv() finds the first of two equal names: the test's go first. */
	for (size_t i = 0; s->opts.env != NULL && s->opts.env[i] != NULL && k < 24; i++)
		extra[k++] = (char *)s->opts.env[i];
	for (size_t i = 0; i < 8 && s->opts.env_more[i] != NULL; i++)
		extra[k++] = (char *)s->opts.env_more[i];
	snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%u", s->port);
	snprintf(url, sizeof(url), "DPOPT_DATABASE_URL=%s", s->db);
	snprintf(listen, sizeof(listen), "DPOPT_LISTEN=127.0.0.1:%u", s->port);
	snprintf(workers, sizeof(workers), "DPOPT_WORKERS=%u",
		 s->opts.workers != 0 ? s->opts.workers : 2);
	snprintf(delay, sizeof(delay), "DPOPT_TEST_STEP_DELAY_MS=%u", s->opts.step_delay_ms);
	snprintf(level, sizeof(level), "DPOPT_LOG_LEVEL=%s", log_level());
	extra[k++] = url;
	extra[k++] = listen;
	extra[k++] = workers;
	extra[k++] = delay;
	extra[k++] = level;
	if (s->opts.lease_seconds != 0) {
		snprintf(lease, sizeof(lease), "DPOPT_LEASE_SECONDS=%u", s->opts.lease_seconds);
		extra[k++] = lease;
	}
	if (s->opts.max_body_bytes != 0) {
		snprintf(body, sizeof(body), "DPOPT_MAX_BODY_BYTES=%u", s->opts.max_body_bytes);
		extra[k++] = body;
	}
	if (s->opts.http_threads != 0) {
		snprintf(threads, sizeof(threads), "DPOPT_HTTP_THREADS=%u", s->opts.http_threads);
		extra[k++] = threads;
	}
	if (s->opts.max_run_work != 0.0) {
		snprintf(work, sizeof(work), "DPOPT_MAX_RUN_WORK=%.17g", s->opts.max_run_work);
		extra[k++] = work;
	}
	for (size_t i = 0; lifted[i] != NULL; i++)
		extra[k++] = lifted[i];
	extra[k] = NULL;
	env = child_env(extra);
	s->pid = spawn(argv, env, s->log, -1);
	free(env);
	live_add(s->pid);

	deadline = h_now() + READY_WAIT_S * h_timeout_scale();
	while (h_now() < deadline) {
		struct h_resp r;
		long status;

		if (waitpid(s->pid, ret_status, WNOHANG) == s->pid) {
			live_remove(s->pid);
			s->pid = 0;
			return false;
		}
		h_http(s, "GET", "/readyz", NULL, NULL, NULL, 0, NULL, &r);
		status = r.status;
		h_resp_clear(&r);
		if (status == 200)
			return true;
		h_sleep(0.02);
	}
	print_log(s->log);
	ck_abort_msg("dpoptd (pid %ld) not ready after %.0f s", (long)s->pid,
		     READY_WAIT_S * h_timeout_scale());
	return false;
}

static void
server_start(struct h_server *s)
{
	for (int attempt = 0; attempt < 5; attempt++) {
		struct stat st;
		off_t before = stat(s->log, &st) == 0 ? st.st_size : 0;
		int status = 0;
		char *text;
		bool port_taken;

		if (start_once(s, &status))
			return;
		/* Lost the race for the port: try another one. */
		text = read_file(s->log, NULL);
		port_taken = text != NULL && (size_t)before <= strlen(text) &&
			     strstr(text + before, "cannot listen") != NULL;
		free(text);
		if (!port_taken) {
			print_log(s->log);
			ck_abort_msg("dpoptd exited at start (status 0x%x), see %s", status,
				     s->log);
		}
	}
	ck_abort_msg("dpoptd found no free port");
}

void
h_server_start(struct h_server *s, const char *db, const struct h_opts *opts)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->db, sizeof(s->db), "%s", db);
	if (opts != NULL)
		s->opts = *opts;
	snprintf(s->log, sizeof(s->log), "%s/dpoptd-%ld-%u.log", log_dir, (long)getpid(),
		 log_counter++);
	server_start(s);
}

void
h_server_restart(struct h_server *s)
{
	ck_assert_msg(s->pid == 0, "restart of a running server");
	server_start(s);
}

void
h_server_check_log(const struct h_server *s)
{
	char *text = read_file(s->log, NULL);
	const char *marker = sanitizer_report(text);

	free(text);
	if (marker != NULL)
		print_log(s->log);
	ck_assert_msg(marker == NULL, "'%s' in the dpoptd log %s", marker, s->log);
}

int
h_server_stop(struct h_server *s, int sig, double timeout_s)
{
	double deadline = h_now() + (timeout_s *= h_timeout_scale());
	int status = 0;
	pid_t pid = s->pid;

	ck_assert_msg(pid != 0, "stop of a server that is not running");
	kill(pid, sig);
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (h_now() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			live_remove(pid);
			s->pid = 0;
			print_log(s->log);
			ck_abort_msg("dpoptd did not exit within %.1f s of signal %d", timeout_s,
				     sig);
		}
		h_sleep(0.01);
	}
	live_remove(pid);
	s->pid = 0;
	h_server_check_log(s);
	return status;
}

void
h_server_stop_fixture(struct h_server *s, double timeout_s)
{
	double deadline = h_now() + (timeout_s *= h_timeout_scale());
	int status = 0;
	pid_t pid = s->pid;
	char *text;
	const char *marker;

	if (pid == 0)
		return; /* the setup failed */
	kill(pid, SIGTERM);
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (h_now() > deadline) {
			fprintf(stderr, "harness: dpoptd %ld ignored SIGTERM for %.0f s\n",
				(long)pid, timeout_s);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fixture_failed = true;
			break;
		}
		h_sleep(0.01);
	}
	live_remove(pid);
	s->pid = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "harness: dpoptd %ld ended with status 0x%x on SIGTERM\n",
			(long)pid, status);
		fixture_failed = true;
	}
	text = read_file(s->log, NULL);
	marker = sanitizer_report(text);
	free(text);
	if (marker != NULL) {
		fprintf(stderr, "harness: '%s' in %s\n", marker, s->log);
		fixture_failed = true;
	}
}

void
h_key_create(const char *db, const char *tenant, const char *role, char *out, size_t cap)
{
	char url[600], level[48], log[600];
	char *extra[3] = { url, level, NULL };
	char *argv[] = { (char *)bin_path(), "keys",   "create",     "--tenant",
			 (char *)tenant,     "--role", (char *)role, NULL };
	char buf[256], **env;
	size_t len = 0;
	ssize_t n;
	int fds[2], status = 0;
	pid_t pid;

	snprintf(url, sizeof(url), "DPOPT_DATABASE_URL=%s", db);
	snprintf(level, sizeof(level), "DPOPT_LOG_LEVEL=%s", log_level());
	snprintf(log, sizeof(log), "%s/keys-%ld.log", log_dir, (long)getpid());
	ck_assert(pipe(fds) == 0);
	env = child_env(extra);
	pid = spawn(argv, env, log, fds[1]);
	free(env);
	close(fds[1]);
	while ((n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0 ||
	       (n < 0 && errno == EINTR))
		len += n > 0 ? (size_t)n : 0;
	close(fds[0]);
	buf[len] = '\0';
	waitpid(pid, &status, 0);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "dpoptd keys create failed (status 0x%x), see %s", status, log);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	ck_assert_msg(len == KEY_LEN && strncmp(buf, "dpk_", 4) == 0, "not a key: '%s'", buf);
	ck_assert(cap > len);
	memcpy(out, buf, len + 1);
}

/* HTTP */

struct sink {
	char *p;
	size_t len, cap;
	bool failed;
};

static size_t
on_body(char *data, size_t size, size_t nmemb, void *ud)
{
	struct sink *b = ud;
	size_t n = size * nmemb;

	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap != 0 ? b->cap : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (p == NULL) {
			b->failed = true;
			return 0;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/* Copy the value of header line "name: value\r\n" into out. */
static void
header_value(const char *line, size_t n, const char *name, char *out, size_t cap)
{
	size_t k = strlen(name), end;

	if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
		return;
	line += k + 1;
	n -= k + 1;
	while (n > 0 && (*line == ' ' || *line == '\t')) {
		line++;
		n--;
	}
	end = n;
	while (end > 0 && (line[end - 1] == '\r' || line[end - 1] == '\n' || line[end - 1] == ' '))
		end--;
	if (end >= cap)
		end = cap - 1;
	memcpy(out, line, end);
	out[end] = '\0';
}

static size_t
on_header(char *line, size_t size, size_t nmemb, void *ud)
{
	struct h_resp *r = ud;
	size_t n = size * nmemb;

	header_value(line, n, "Location", r->location, sizeof(r->location));
	header_value(line, n, "Content-Type", r->ctype, sizeof(r->ctype));
	header_value(line, n, "Allow", r->allow, sizeof(r->allow));
	header_value(line, n, "Idempotent-Replayed", r->replayed, sizeof(r->replayed));
	return n;
}

void
h_http(const struct h_server *s, const char *method, const char *path, const char *key,
       const char *ctype, const char *body, size_t len, const char *const *headers,
       struct h_resp *r)
{
	char url[1024], line[512];
	struct curl_slist *hl = NULL;
	struct sink sink = { 0 };
	CURL *c;
	CURLcode cc;

	memset(r, 0, sizeof(*r));
	c = curl_easy_init();
	if (c == NULL) {
		snprintf(r->curl_err, sizeof(r->curl_err), "curl_easy_init failed");
		return;
	}
	snprintf(url, sizeof(url), "%s%s", s->base, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROXY, ""); /* never an http_proxy from the environment */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)(10.0 * h_timeout_scale()));
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)(60.0 * h_timeout_scale()));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	if (strcmp(method, "GET") != 0)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		snprintf(line, sizeof(line), "Content-Type:%s%s", ctype != NULL ? " " : "",
			 ctype != NULL ? ctype : ""); /* "Content-Type:" drops curl's default */
		hl = curl_slist_append(hl, line);
	}
	hl = curl_slist_append(hl, "Expect:"); /* no 100-continue round trip */
	if (key != NULL) {
		snprintf(line, sizeof(line), "Authorization: Bearer %s", key);
		hl = curl_slist_append(hl, line);
	}
	for (size_t i = 0; headers != NULL && headers[i] != NULL; i++)
		hl = curl_slist_append(hl, headers[i]);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);

	cc = curl_easy_perform(c);
	if (cc == CURLE_OK && !sink.failed) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	} else {
		snprintf(r->curl_err, sizeof(r->curl_err), "%s %.160s: %s", method, path,
			 curl_easy_strerror(cc));
		r->status = 0;
	}
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	r->body = sink.p != NULL ? sink.p : calloc(1, 1);
	r->len = sink.len;
	if (r->status != 0 && r->len > 0 && strncmp(r->ctype, "application/json", 16) == 0)
		r->json = json_loadb(r->body, r->len, 0, NULL);
	contract_record(method, path, r);
}

void
h_resp_clear(struct h_resp *r)
{
	free(r->body);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

json_t *
h_json(const struct h_server *s, const char *method, const char *path, const char *key,
       const char *body, long want_status)
{
	struct h_resp r;
	json_t *j;

	h_http(s, method, path, key, body != NULL ? "application/json" : NULL, body,
	       body != NULL ? strlen(body) : 0, NULL, &r);
	ck_assert_msg(r.status == want_status, "%s %s: status %ld, want %ld: %s%s", method, path,
		      r.status, want_status, h_short(r.body), r.curl_err);
	j = r.json;
	r.json = NULL;
	h_resp_clear(&r);
	return j;
}

void
h_expect_error(const struct h_server *s, const char *method, const char *path, const char *key,
	       const char *ctype, const char *body, size_t len, const char *const *headers,
	       long status, const char *code, const char *field, const char *msg_part)
{
	char before[512], after[512];
	struct h_resp r;
	json_t *err, *f;
	const char *msg, *rid;

	h_ledger_snapshot(s->db, before, sizeof(before));
	h_http(s, method, path, key, ctype, body, len, headers, &r);
	ck_assert_msg(r.status == status, "%s %s: status %ld, want %ld: %s%s", method, path,
		      r.status, status, h_short(r.body), r.curl_err);
	err = json_object_get(r.json, "error");
	ck_assert_msg(json_is_object(err), "%s %s: no error object: %s", method, path,
		      h_short(r.body));
	ck_assert_msg(json_is_string(json_object_get(err, "code")) &&
			      strcmp(json_string_value(json_object_get(err, "code")), code) == 0,
		      "%s %s: error code, want '%s': %s", method, path, code, h_short(r.body));
	f = json_object_get(err, "field");
	if (field == NULL)
		ck_assert_msg(f == NULL, "%s %s: unexpected field: %s", method, path,
			      h_short(r.body));
	else
		ck_assert_msg(json_is_string(f) && strcmp(json_string_value(f), field) == 0,
			      "%s %s: field, want '%s': %s", method, path, field, h_short(r.body));
	msg = json_string_value(json_object_get(err, "message"));
	ck_assert_msg(msg != NULL && msg[0] != '\0', "%s %s: no message: %s", method, path,
		      h_short(r.body));
	if (msg_part != NULL)
		ck_assert_msg(strstr(msg, msg_part) != NULL, "%s %s: message lacks '%s': %s",
			      method, path, msg_part, h_short(r.body));
	rid = json_string_value(json_object_get(err, "request_id"));
	ck_assert_msg(rid != NULL && strlen(rid) == 16, "%s %s: request_id: %s", method, path,
		      h_short(r.body));
	h_resp_clear(&r);
	h_ledger_snapshot(s->db, after, sizeof(after));
	ck_assert_msg(strcmp(before, after) == 0, "%s %s changed the ledger: %s -> %s", method,
		      path, before, after);
}

/* Data */

struct text {
	char *p;
	size_t len, cap;
};

static void __attribute__((format(printf, 2, 3))) text_printf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		ck_assert(n >= 0);
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		t->cap = t->cap * 2 + (size_t)n + 1;
		t->p = realloc(t->p, t->cap);
		ck_assert(t->p != NULL);
	}
}

/* xorshift64*: reproducible, uniform in [0, 1). */
static double
uniform(unsigned long long *state)
{
	unsigned long long x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (double)((x * 2685821657736338717ULL) >> 11) * 0x1p-53;
}

char *
h_csv(size_t n, size_t d, bool binary, unsigned seed)
{
	/* Every call (in every forked test) makes different rows: the service
	 * refuses a tenant's
	 * second upload of the same rows (budget laundering), so tests that
	 * want that upload the same text twice. */
	static unsigned calls; /* test thread only */
	struct text t = { .cap = 4096 };
	unsigned long long st = 0x9e3779b97f4a7c15ULL ^ seed ^ ((unsigned long long)++calls << 32) ^
				((unsigned long long)getpid() << 40); /* Check forks per test */
	/* Every cell within 0.999 / sqrt(d): the l2 norm stays below 1 even
	 * after the cells are rounded to six decimals. */
	double scale = 0.999 / sqrt((double)d);

	t.p = malloc(t.cap);
	ck_assert(t.p != NULL);
	t.p[0] = '\0';
	for (size_t j = 0; j < d; j++)
		text_printf(&t, "x%zu,", j + 1);
	text_printf(&t, "y\n");
	for (size_t i = 0; i < n; i++) {
		double dot = 0.0;

		for (size_t j = 0; j < d; j++) {
			double x = (2.0 * uniform(&st) - 1.0) * scale;
			double w = (j % 2 == 0 ? 1.0 : -1.0) * (1.0 + (double)j);

			dot += w * x;
			text_printf(&t, "%.6f,", x);
		}
		dot += 0.2 * (uniform(&st) - 0.5);
		if (binary)
			text_printf(&t, "%d\n", dot >= 0.0 ? 1 : -1);
		else
			text_printf(&t, "%.6f\n", dot);
	}
	return t.p;
}

void
h_dataset_create(const struct h_server *s, const char *key, const char *body, char *id)
{
	json_t *j = h_json(s, "POST", "/v1/datasets", key, body, 201);
	const char *v = json_string_value(json_object_get(j, "id"));

	ck_assert_msg(v != NULL && strlen(v) == H_UUID_LEN, "no dataset id");
	ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "created");
	memcpy(id, v, H_UUID_LEN + 1);
	json_decref(j);
}

void
h_upload(const struct h_server *s, const char *key, const char *id, const char *csv)
{
	char path[128];
	struct h_resp r;

	snprintf(path, sizeof(path), "/v1/datasets/%s/data", id);
	h_http(s, "PUT", path, key, "text/csv", csv, strlen(csv), NULL, &r);
	ck_assert_msg(r.status == 200, "PUT %s: status %ld: %s%s", path, r.status, h_short(r.body),
		      r.curl_err);
	ck_assert_str_eq(json_string_value(json_object_get(r.json, "state")), "sealed");
	h_resp_clear(&r);
}

void
h_dataset_sealed(const struct h_server *s, const char *key, const char *epsilon, char *id)
{
	char body[512];
	char *csv = h_csv(H_N, H_D, true, 1);

	snprintf(body, sizeof(body), H_DATASET_FMT, "sealed", epsilon);
	h_dataset_create(s, key, body, id);
	h_upload(s, key, id, csv);
	free(csv);
}

json_t *
h_run_create(const struct h_server *s, const char *key, const char *ds, const char *body,
	     char *run_id)
{
	char path[128];
	json_t *j;
	const char *v;

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs", ds);
	j = h_json(s, "POST", path, key, body, 202);
	v = json_string_value(json_object_get(j, "id"));
	ck_assert_msg(v != NULL && strlen(v) == H_UUID_LEN, "no run id");
	if (run_id != NULL)
		memcpy(run_id, v, H_UUID_LEN + 1);
	return j;
}

static bool
is_terminal(const char *state)
{
	return strcmp(state, "succeeded") == 0 || strcmp(state, "failed") == 0 ||
	       strcmp(state, "cancelled") == 0;
}

json_t *
h_run_wait(const struct h_server *s, const char *key, const char *id, const char *want,
	   double timeout_s)
{
	char path[128];
	double deadline = h_now() + (timeout_s *= h_timeout_scale());

	snprintf(path, sizeof(path), "/v1/runs/%s", id);
	for (;;) {
		json_t *j = h_json(s, "GET", path, key, NULL, 200);
		const char *state = json_string_value(json_object_get(j, "state"));
		char *dump;

		ck_assert(state != NULL);
		if (want != NULL ? strcmp(state, want) == 0 : is_terminal(state))
			return j;
		if (h_now() > deadline || (want != NULL && is_terminal(state))) {
			dump = json_dumps(j, JSON_COMPACT);
			ck_abort_msg("run %s: state '%s' after %.1f s, want %s: %s", id, state,
				     timeout_s, want != NULL ? want : "a final state",
				     h_short(dump));
		}
		json_decref(j);
		h_sleep(0.05);
	}
}

const char *
h_short(const char *s)
{
	static _Thread_local char buf[2004];

	if (s == NULL || strlen(s) < 2000)
		return s;
	memcpy(buf, s, 2000);
	memcpy(buf + 2000, "...", 4);
	return buf;
}

json_t *
h_get(json_t *j, const char *path)
{
	char key[128];

	while (j != NULL && *path != '\0') {
		size_t n = strcspn(path, ".");

		ck_assert(n < sizeof(key));
		memcpy(key, path, n);
		key[n] = '\0';
		j = json_object_get(j, key);
		path += path[n] == '.' ? n + 1 : n;
	}
	return j;
}

/* SQL */

static void __attribute__((format(printf, 4, 0)))
sql_v(const char *db, char *out, size_t cap, const char *fmt, va_list ap)
{
	char sql[4096];
	PGconn *pg;
	PGresult *res;
	size_t len = 0;

	vsnprintf(sql, sizeof(sql), fmt, ap);
	pg = PQconnectdb(db);
	ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "connect %s: %s", db, PQerrorMessage(pg));
	res = PQexec(pg, sql);
	ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(pg));
	ck_assert_msg(PQntuples(res) >= 1, "%s: no row", sql);
	out[0] = '\0';
	/* Columns joined by '|'. */
	for (int c = 0; c < PQnfields(res); c++) {
		int n = snprintf(out + len, cap - len, "%s%s", c > 0 ? "|" : "",
				 PQgetvalue(res, 0, c));

		ck_assert_msg(n >= 0 && (size_t)n < cap - len, "%s: result too long", sql);
		len += (size_t)n;
	}
	PQclear(res);
	PQfinish(pg);
}

void
h_sql(const char *db, char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sql_v(db, out, cap, fmt, ap);
	va_end(ap);
}

long long
h_sql_ll(const char *db, const char *fmt, ...)
{
	char out[64], *end;
	long long v;
	va_list ap;

	va_start(ap, fmt);
	sql_v(db, out, sizeof(out), fmt, ap);
	va_end(ap);
	v = strtoll(out, &end, 10);
	ck_assert_msg(out[0] != '\0' && *end == '\0', "not an integer: '%s'", out);
	return v;
}

void
h_ledger_check(const char *db, const char *id, char *out, size_t cap)
{
	char row[512], *bar;

	/* Exact decimals on both sides: numeric equality, no float anywhere. */
	h_sql(db, row, sizeof(row),
	      "SELECT (d.spent_epsilon = coalesce(sum(CASE l.kind WHEN 'charge' THEN l.epsilon"
	      " ELSE -l.epsilon END), 0) AND d.spent_delta = coalesce(sum(CASE l.kind"
	      " WHEN 'charge' THEN l.delta ELSE -l.delta END), 0))::text,"
	      " d.spent_epsilon::text, d.spent_delta::text,"
	      " coalesce(sum(CASE l.kind WHEN 'charge' THEN l.epsilon ELSE -l.epsilon END), "
	      "0)::text,"
	      " coalesce(sum(CASE l.kind WHEN 'charge' THEN l.delta ELSE -l.delta END), 0)::text"
	      " FROM datasets d LEFT JOIN ledger_entries l ON l.dataset_id = d.id"
	      " WHERE d.id = '%s' GROUP BY d.id",
	      id);
	ck_assert_msg(strncmp(row, "true|", 5) == 0,
		      "dataset %s: spent (eps|delta) differs from the ledger: %s", id, row);
	bar = strchr(row + 5, '|');
	ck_assert(bar != NULL);
	*bar = '\0';
	snprintf(out, cap, "%s", row + 5);
}

void
h_ledger_snapshot(const char *db, char *out, size_t cap)
{
	h_sql(db, out, cap,
	      "SELECT count(*), coalesce(max(id), 0), coalesce(sum(epsilon), 0),"
	      " coalesce(sum(delta), 0),"
	      " (SELECT coalesce(sum(spent_epsilon), 0) FROM datasets),"
	      " (SELECT coalesce(sum(spent_delta), 0) FROM datasets),"
	      " (SELECT count(*) FROM runs)"
	      " FROM ledger_entries");
}

/* A connected socket to 127.0.0.1:port from src (NULL: any), or -1. */
int
h_raw_connect(const char *src, unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (src != NULL) {
		struct sockaddr_in b = { .sin_family = AF_INET };

		inet_pton(AF_INET, src, &b.sin_addr);
		if (bind(fd, (struct sockaddr *)&b, sizeof(b)) != 0) {
			close(fd);
			return -1;
		}
	}
	a.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

bool
h_send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

/* Read until the peer closes or timeout_s passes; owned text ("" when
 * nothing came). */
char *
h_read_reply(int fd, double timeout_s)
{
	double deadline = h_now() + timeout_s;
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);

	ck_assert(buf != NULL);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = deadline - h_now();
		ssize_t k;

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			break;
		if (len + 4096 > cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert(buf != NULL);
		}
		k = recv(fd, buf + len, cap - len - 1, 0);
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	return buf;
}

char *
h_read_log(const struct h_server *s)
{
	char *text = read_file(s->log, NULL);

	ck_assert_msg(text != NULL, "cannot read %s", s->log);
	return text;
}
