/*
 * test_subsampled_api.c - dp_sgd.subsampled through the API (issue 11):
 * the catalogue lists it with its parameters; runs:estimate shows the
 * defaults it picked (batch size, epochs, steps, step size, noise) and the
 * event self_composed(sampled_without_replacement(gaussian)); a run at the
 * defaults and a shuffled-epochs run succeed through the generic pipeline
 * with a model inside its ball (the intercept on by default for this
 * method, off when the request says so); a bad combination of parameters is 400
 * naming the field; without constraints it runs over its default set (an
 * l2 ball of radius 10 here), stored in the request, while
 * dp_sgd.one_pass still refuses a request without constraints.  On a
 * 'basic' dataset the plan's accountant label names the accountant that
 * bounded the event (the RDP conversion for the sampled event, the exact
 * analytic-Gaussian curve for shuffled epochs and for one_pass), as the
 * estimate's standalone report does, and a run's result carries it.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static struct h_server srv;
static char db[512];
static char owner[128];

static void
setup(void)
{
	h_db_create(db, sizeof(db));
	h_key_create(db, "acme", "owner", owner, sizeof(owner));
	h_server_start(&srv, db, NULL);
}

static void
teardown(void)
{
	h_server_stop_fixture(&srv, 30.0);
}

#define SCHEMA                                                                                     \
	"{\"name\": \"sub\", \"schema\": {\"features\": 3, \"task\": \"binary\"},"                 \
	" \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": 20, \"delta\": 1e-5}}"
#define SCHEMA_BASIC                                                                               \
	"{\"name\": \"sub-basic\", \"schema\": {\"features\": 3, \"task\": \"binary\"},"           \
	" \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": 20, \"delta\": 1e-5},"        \
	" \"accounting_mode\": \"basic\"}"
#define RUN(params)                                                                                \
	"{\"algorithm\": \"dp_sgd.subsampled\", \"objective\": {\"name\": \"logistic\"},"          \
	" \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 5}},"                       \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}, \"params\": {" params "}}"

#define RUN_NOICPT(params)                                                                         \
	"{\"algorithm\": \"dp_sgd.subsampled\","                                                   \
	" \"objective\": {\"name\": \"logistic\", \"intercept\": false},"                          \
	" \"constraints\": {\"x\": {\"kind\": \"l2_ball\", \"radius\": 5}},"                       \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}, \"params\": {" params "}}"
#define NOSET(alg)                                                                                 \
	"{\"algorithm\": \"" alg "\", \"objective\": {\"name\": \"logistic\"},"                    \
	" \"privacy\": {\"epsilon\": 1, \"delta\": 1e-6}}"

static unsigned long long
next(unsigned long long *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

/* n binary rows of 3 features in [-0.5, 0.5], label sign(2 x1 + x2)
 * with 10 % flipped, drawn from seed (other rows for another seed: the
 * same rows never get a second budget).  Owned. */
static char *
rows(size_t n, unsigned long long seed)
{
	size_t cap = n * 48 + 1, len = 0;
	char *t = malloc(cap);
	unsigned long long st = seed;

	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < n; i++) {
		double x[3];
		int y;

		for (size_t j = 0; j < 3; j++)
			x[j] = (double)(next(&st) >> 11) * 0x1p-53 - 0.5;
		y = 2.0 * x[0] + x[1] > 0 ? 1 : -1;
		if (next(&st) % 100 < 10)
			y = -y;
		len += (size_t)snprintf(t + len, cap - len, "%.6f,%.6f,%.6f,%d\n", x[0], x[1], x[2],
					y);
	}
	return t;
}

static double
num(json_t *j, const char *path)
{
	json_t *v = h_get(j, path);

	ck_assert_msg(json_is_number(v), "%s is not a number", path);
	return json_number_value(v);
}

START_TEST(test_subsampled_runs)
{
	char a[40], run[40], path[128];
	const char *bad = RUN("\"steps\": 10, \"epochs\": 2");
	const char *noset_one_pass = NOSET("dp_sgd.one_pass");
	char *data = rows(2000, 0x9e3779b97f4a7c15ULL);
	json_t *j, *algs, *x;
	size_t i;
	bool listed = false;
	double w[4] = { 0 }, nrm = 0.0, b;

	algs = h_json(&srv, "GET", "/v1/algorithms", owner, NULL, 200);
	json_array_foreach (h_get(algs, "algorithms"), i, x)
		if (strcmp(json_string_value(json_object_get(x, "name")), "dp_sgd.subsampled") == 0)
			listed = true;
	ck_assert_msg(listed, "dp_sgd.subsampled is not in the catalogue");
	json_decref(algs);

	h_dataset_create(&srv, owner, SCHEMA, a);
	h_upload(&srv, owner, a, data);

	/* The estimate shows what the defaults picked: whole-data steps (b =
	 * n = 2000), T = clamp(ceil(rho n^2 / (8 p)), 3, 300) = 300 here, the
	 * event self_composed(gaussian) with no sampling; a given batch below
	 * n samples, with epochs 5: T = ceil(5 n / b). */
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	j = h_json(&srv, "POST", path, owner, RUN(""), 200);
	b = num(j, "plan.params_used.batch_size");
	ck_assert_double_eq(b, 2000.0);
	ck_assert_double_eq(num(j, "plan.steps"), 300.0);
	ck_assert(num(j, "plan.params_used.step_size") > 0.0);
	ck_assert(num(j, "plan.params_used.noise_multiplier") > 0.0);
	ck_assert(num(j, "plan.params_used.clip") > 0.0);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), "self_composed");
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.event.type")), "gaussian");
	json_decref(j);
	j = h_json(&srv, "POST", path, owner, RUN("\"batch_size\": 45"), 200);
	ck_assert_double_eq(num(j, "plan.steps"), ceil(5.0 * 2000.0 / 45.0));
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.event.type")),
			 "sampled_without_replacement");
	/* A renyi dataset charges the RDP curve; the PLD's figure for the same
	 * run is shown beside it, for information (smaller, not charged). */
	ck_assert_str_eq(json_string_value(h_get(j, "standalone.accountant")), "rdp");
	ck_assert_str_eq(json_string_value(h_get(j, "standalone.pld_information.accountant")),
			 "pld");
	ck_assert(json_is_false(h_get(j, "standalone.pld_information.charged")));
	printf("renyi estimate: rdp %.6f, pld (information) %.6f\n", num(j, "standalone.epsilon"),
	       num(j, "standalone.pld_information.epsilon"));
	ck_assert(num(j, "standalone.pld_information.epsilon") < num(j, "standalone.epsilon"));
	json_decref(j);

	/* Intercept on by default for this method: 3 features and a bias. */
	json_decref(h_run_create(&srv, owner, a, RUN(""), run));
	j = h_run_wait(&srv, owner, run, "succeeded", 120);
	ck_assert(json_is_true(h_get(j, "request.objective.intercept")));
	ck_assert_int_eq(json_array_size(h_get(j, "result.x")), 4);
	json_array_foreach (h_get(j, "result.x"), i, x) {
		w[i] = json_number_value(x);
		nrm += w[i] * w[i];
	}
	ck_assert(sqrt(nrm) <= 5.0 + 1e-9);
	json_decref(j);

	json_decref(
		h_run_create(&srv, owner, a, RUN_NOICPT("\"shuffle\": true, \"epochs\": 2"), run));
	j = h_run_wait(&srv, owner, run, "succeeded", 120);
	ck_assert(json_is_false(h_get(j, "request.objective.intercept")));
	ck_assert_int_eq(json_array_size(h_get(j, "result.x")), 3);
	json_decref(j);

	h_expect_error(&srv, "POST", path, owner, "application/json", bad, strlen(bad), NULL, 400,
		       "invalid_request", "params.steps", NULL);

	/* No constraints: the default set, l2 ball of radius max(10, 2 Y) / X
	 * = 10 / sqrt(2) (X = sqrt(1 + 1) with the default intercept, binary),
	 * stored in the request; one_pass still needs constraints.x. */
	json_decref(h_run_create(&srv, owner, a, NOSET("dp_sgd.subsampled"), run));
	j = h_run_wait(&srv, owner, run, "succeeded", 120);
	ck_assert_str_eq(json_string_value(h_get(j, "request.constraints.x.kind")), "l2_ball");
	ck_assert_double_eq_tol(num(j, "request.constraints.x.radius"), 10.0 / sqrt(2.0), 1e-12);
	json_decref(j);
	h_expect_error(&srv, "POST", path, owner, "application/json", noset_one_pass,
		       strlen(noset_one_pass), NULL, 400, "invalid_request", "constraints", NULL);
	free(data);
}
END_TEST

/* select.random_stopping through the API: the estimate shows the cap and
 * the grid and charges nothing, the run succeeds charged exactly its
 * target once, its event is the capped selection over parallel(training,
 * score), the default set and intercept apply, and nothing of K, the
 * scores or the winning step size is in the result; refusals name the
 * field. */
START_TEST(test_select_runs)
{
	char a[40], run[40], path[128];
	const char *sel = NOSET("select.random_stopping");
	const char *bad = "{\"algorithm\": \"select.random_stopping\", \"objective\": "
			  "{\"name\": \"logistic\"}, \"privacy\": {\"epsilon\": 1, \"delta\": "
			  "1e-6}, \"params\": {\"step_size_min\": 0.1}}";
	const char *grid = "{\"algorithm\": \"select.random_stopping\", \"objective\": "
			   "{\"name\": \"logistic\"}, \"privacy\": {\"epsilon\": 1, \"delta\": "
			   "1e-6}, \"params\": {\"grid\": {\"steps\": [5, 20], \"clip\": [0.5, "
			   "0.1]}}}";
	const char *bad_grid = "{\"algorithm\": \"select.random_stopping\", \"objective\": "
			       "{\"name\": \"logistic\"}, \"privacy\": {\"epsilon\": 1, "
			       "\"delta\": 1e-6}, \"params\": {\"grid\": {\"clip\": [-1]}}}";
	char *data = rows(2001, 0x9e3779b97f4a7c15ULL); /* not the other tests' rows (laundering) */
	json_t *j, *k;
	const char *key;

	h_dataset_create(&srv, owner, SCHEMA, a);
	h_upload(&srv, owner, a, data);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	j = h_json(&srv, "POST", path, owner, sel, 200);
	ck_assert_double_eq(num(j, "plan.params_used.repetitions_performed"), 20.0);
	ck_assert_double_eq(num(j, "plan.params_used.validation_rows"), 400.0);
	ck_assert_double_eq(num(j, "plan.params_used.grid_size"), 1.0);
	ck_assert_double_eq(num(j, "plan.params_used.clip_grid_size"), 4.0);
	ck_assert_double_eq(num(j, "plan.params_used.candidates"), 4.0);
	ck_assert_double_eq(num(j, "plan.params_used.clip_min"),
			    num(j, "plan.params_used.clip_max") / 8.0);
	ck_assert_double_eq(num(j, "plan.steps"),
			    20.0 * (num(j, "plan.params_used.steps_per_repetition") + 1.0));
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.type")), "selection_poisson");
	ck_assert_double_eq(num(j, "plan.event.k_max"), 20.0);
	json_decref(j);

	json_decref(h_run_create(&srv, owner, a, sel, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 300);
	ck_assert(json_is_true(h_get(j, "request.objective.intercept")));
	ck_assert_str_eq(json_string_value(h_get(j, "request.constraints.x.kind")), "l2_ball");
	ck_assert_int_eq(json_array_size(h_get(j, "result.x")), 4);
	ck_assert_str_eq(json_string_value(h_get(j, "privacy.event.type")), "selection_poisson");
	ck_assert_str_eq(json_string_value(h_get(j, "privacy.event.event.type")), "parallel");
	/* The result releases the model only. */
	json_object_foreach (h_get(j, "result"), key, k)
		ck_assert_msg(strstr(key, "score") == NULL && strcmp(key, "k") != 0 &&
				      strstr(key, "repetitions") == NULL,
			      "result has %s", key);
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/datasets/%s/budget", a);
	j = h_json(&srv, "GET", path, owner, NULL, 200);
	json_decref(j);

	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	h_expect_error(&srv, "POST", path, owner, "application/json", bad, strlen(bad), NULL, 400,
		       "invalid_request", "params.step_size_min", NULL);

	/* params.grid: any of dp_sgd.subsampled's parameters; two step counts
	 * give a mixture of two training events; the stored request keeps the
	 * grid; a bad value is refused naming it. */
	j = h_json(&srv, "POST", path, owner, grid, 200);
	ck_assert_double_eq(num(j, "plan.params_used.candidates"), 4.0);
	ck_assert_double_eq(num(j, "plan.params_used.candidate_events"), 2.0);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_array_get(h_get(j, "plan.event.event.events"), 0), "type")),
			 "mixture");
	json_decref(j);
	json_decref(h_run_create(&srv, owner, a, grid, run));
	j = h_run_wait(&srv, owner, run, "succeeded", 300);
	ck_assert_int_eq(json_array_size(h_get(j, "request.params.grid.steps")), 2);
	ck_assert_int_eq(json_array_size(h_get(j, "result.x")), 4);
	json_decref(j);
	h_expect_error(&srv, "POST", path, owner, "application/json", bad_grid, strlen(bad_grid),
		       NULL, 400, "invalid_request", "params.grid.clip[0]", NULL);
	free(data);
}
END_TEST

/* The plan's label on a basic dataset names the accountant of the charge:
 * the estimate's plan, its standalone report and a run's result agree. */
static void
expect_label(const char *path, const char *body, const char *accountant, const char *event)
{
	char want[128];
	json_t *j = h_json(&srv, "POST", path, owner, body, 200);

	snprintf(want, sizeof(want), "%s (%s); basic composition ledger", accountant,
		 strcmp(accountant, "rdp") == 0   ? "improved conversion"
		 : strcmp(accountant, "pld") == 0 ? "Doroshenko et al. 2022"
						  : "Balle & Wang 2018");
	ck_assert_str_eq(json_string_value(h_get(j, "plan.event.event.type")), event);
	ck_assert_str_eq(json_string_value(h_get(j, "standalone.accountant")), accountant);
	ck_assert_str_eq(json_string_value(h_get(j, "plan.accountant")), want);
	json_decref(j);
}

/* `dpoptd privacy --events F --delta D --mode M` on a run's recorded
 * event: its epsilon (12 significant digits). */
static double
cli_epsilon(const json_t *event, double delta, const char *mode)
{
	char dir[] = "/tmp/dpopt-reaccount-XXXXXX", ev[128], cmd[1024], buf[8192];
	const char *bin = getenv("DPOPT_BIN");
	FILE *f;
	size_t n;
	json_t *out;
	double eps;

	ck_assert_ptr_nonnull(bin);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(ev, sizeof(ev), "%s/event.json", dir);
	ck_assert_int_eq(json_dump_file(event, ev, 0), 0);
	snprintf(cmd, sizeof(cmd), "'%s' privacy --events '%s' --delta %.17g --mode %s", bin, ev,
		 delta, mode);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	ck_assert_int_eq(pclose(f), 0);
	remove(ev);
	rmdir(dir);
	out = json_loads(buf, 0, NULL);
	ck_assert_msg(out != NULL, "dpoptd privacy printed: %s", buf);
	eps = json_number_value(json_object_get(out, "epsilon"));
	json_decref(out);
	return eps;
}

/* Re-accounting the run's recorded event (its params_used and event are
 * all it takes) reproduces the run's own epsilon, the one the estimate of
 * the same request reports (the same deterministic calibration, the same
 * noise), within the charged target; the RDP conversion of the same event
 * is above the target: the PLD saved noise. */
static void
reaccount(json_t *run, const char *path, const char *body)
{
	json_t *est = h_json(&srv, "POST", path, owner, body, 200);
	double charged = num(run, "plan.charge.epsilon"), delta = num(run, "plan.charge.delta");
	double own = num(est, "standalone.epsilon");
	double basic = cli_epsilon(h_get(run, "plan.event"), delta, "basic");
	double rdp = cli_epsilon(h_get(run, "plan.event"), delta, "renyi");

	printf("re-accounted: charged %.12g, estimate %.12g, basic %.12g, rdp %.12g\n", charged,
	       own, basic, rdp);
	ck_assert_double_eq(num(est, "plan.params_used.noise_multiplier"),
			    num(run, "plan.params_used.noise_multiplier"));
	ck_assert_msg(fabs(basic - own) <= 1e-10 * own, "estimate %.17g, re-accounted %.17g", own,
		      basic);
	ck_assert(basic <= charged && basic >= 0.99 * charged && rdp > charged);
	json_decref(est);
}

START_TEST(test_basic_accountant_label)
{
	char a[40], run[40], path[128];
	char *data = rows(2000, 0x2545f4914f6cdd1dULL);
	json_t *j;

	h_dataset_create(&srv, owner, SCHEMA_BASIC, a);
	h_upload(&srv, owner, a, data);
	snprintf(path, sizeof(path), "/v1/datasets/%s/runs:estimate", a);
	/* The sampled event has no exact curve: the PLD bounds it (below the
	 * RDP conversion). */
	expect_label(path, RUN("\"batch_size\": 45"), "pld", "sampled_without_replacement");
	/* Whole-data steps (the default here) compose plain Gaussians: the
	 * exact curve. */
	expect_label(path, RUN(""), "analytic_gaussian", "gaussian");
	/* Shuffled epochs compose plain Gaussians: the exact curve. */
	expect_label(path, RUN("\"shuffle\": true, \"epochs\": 2"), "analytic_gaussian",
		     "gaussian");

	/* The worker plans again and compares with the stored plan, label
	 * included; the result carries the same label. */
	json_decref(h_run_create(&srv, owner, a, RUN("\"batch_size\": 45"), run));
	j = h_run_wait(&srv, owner, run, "succeeded", 120);
	ck_assert_str_eq(json_string_value(h_get(j, "result.privacy.accountant")),
			 "pld (Doroshenko et al. 2022); basic composition ledger");
	ck_assert_str_eq(json_string_value(h_get(j, "plan.accountant")),
			 "pld (Doroshenko et al. 2022); basic composition ledger");
	reaccount(j, path, RUN("\"batch_size\": 45"));
	json_decref(j);
	free(data);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("subsampled_api");
	TCase *tc = tcase_create("subsampled_api");
	SRunner *sr;
	int failed;

	h_init();
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_subsampled_runs);
	tcase_add_test(tc, test_select_runs);
	tcase_add_test(tc, test_basic_accountant_label);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed);
}
