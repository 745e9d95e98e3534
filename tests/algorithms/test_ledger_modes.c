/*
 * test_ledger_modes.c - the driver's ledger-mode rules (alg.h, struct
 * alg_mode_rule): a run whose parameter value only one accountant can
 * charge is refused on the other mode by alg_plan() with ERR_MODE (409
 * accounting_mode_unsupported) naming that parameter, its value's name and
 * the rule's hint, before the method's plan() is called; every other run
 * reaches plan().  A fake method whose plan() only records that it was
 * called, so the test sees exactly where the refusal happens.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"

static int plan_calls;

static enum err_code
fake_plan(const struct run_spec *spec, struct run_plan *ret_plan, struct err *e)
{
	plan_calls++;
	return err_set(e, ERR_NUMERIC, "plan reached");
}

static const char *const fake_variants[] = { "pure", "approx", NULL };

static const struct alg_param fake_params[] = {
	{ "variant", ALG_PARAM_INT, 0.0, 1.0, 0.0, "pure or approx", fake_variants },
	{ 0 },
};

static const struct alg_mode_rule fake_rules[] = {
	{ "variant", 1.0, 1u << ACCOUNTING_BASIC, "use 'variant': 'pure' on a renyi dataset" },
	{ 0 },
};

static const char *const fake_objectives[] = { "logistic", NULL };

static const struct alg_ops fake = {
	.name = "test.fake",
	.version = 1,
	.doc = "",
	.paper = "",
	.privacy_model = "",
	.objectives = fake_objectives,
	.constraints = 1u << CONSTRAINT_L1_BALL,
	.params = fake_params,
	.plan = fake_plan,
	.mode_rules = fake_rules,
};

static void
spec_init(struct run_spec *s, double variant, enum accounting_mode mode)
{
	memset(s, 0, sizeof(*s));
	s->x.kind = CONSTRAINT_L1_BALL;
	s->x.radius = 1.0;
	s->epsilon = 1.0;
	s->delta = 1e-6;
	s->n = 100;
	s->mode = mode;
	s->schema.d = 3;
	s->schema.task = TASK_BINARY;
	s->schema.bounds.feature_linf = 1.0;
	s->schema.bounds.feature_l2 = NAN;
	s->schema.bounds.label = s->schema.bounds.label_lo = s->schema.bounds.label_hi = NAN;
	ck_assert_int_eq(run_spec_set_objective(s, objective_find("logistic"), NULL, NULL), ERR_OK);
	s->params[0] = variant;
}

START_TEST(test_mode_rules)
{
	struct run_spec spec;
	struct run_plan plan;
	struct err e = { 0 };
	const struct alg_mode_rule *rule;

	/* approx on renyi: refused before plan(), naming the parameter */
	spec_init(&spec, 1.0, ACCOUNTING_RENYI);
	plan_calls = 0;
	ck_assert_int_eq(alg_plan(&fake, &spec, &plan, &e), ERR_MODE);
	ck_assert_int_eq(plan_calls, 0);
	ck_assert_str_eq(e.field, "params.variant");
	ck_assert_ptr_nonnull(strstr(e.msg, "'approx'"));
	ck_assert_ptr_nonnull(strstr(e.msg, "use 'variant': 'pure'"));
	ck_assert_str_eq(err_code_name(e.code), "accounting_mode_unsupported");
	ck_assert_uint_eq(alg_spec_modes(&fake, &spec, &rule), 1u << ACCOUNTING_BASIC);
	ck_assert_ptr_eq(rule, &fake_rules[0]);
	/* approx on basic, pure on either: plan() is reached */
	spec_init(&spec, 1.0, ACCOUNTING_BASIC);
	ck_assert_int_eq(alg_plan(&fake, &spec, &plan, &e), ERR_NUMERIC);
	spec_init(&spec, 0.0, ACCOUNTING_RENYI);
	ck_assert_int_eq(alg_plan(&fake, &spec, &plan, &e), ERR_NUMERIC);
	ck_assert_uint_eq(alg_spec_modes(&fake, &spec, &rule),
			  (1u << ACCOUNTING_BASIC) | (1u << ACCOUNTING_RENYI));
	ck_assert_ptr_null(rule);
	ck_assert_int_eq(plan_calls, 2);
}
END_TEST

/* Every registered method's rules name one of its own parameters, with a
 * value inside its schema and at least one mode. */
START_TEST(test_registry_rules_valid)
{
	for (size_t i = 0; i < alg_count(); i++) {
		const struct alg_ops *a = alg_at(i);

		for (const struct alg_mode_rule *r = a->mode_rules; r != NULL && r->param != NULL;
		     r++) {
			const struct alg_param *p = a->params;

			while (p->name != NULL && strcmp(p->name, r->param) != 0)
				p++;
			ck_assert_msg(p->name != NULL, "%s: rule on unknown %s", a->name, r->param);
			ck_assert(r->value >= p->min && r->value <= p->max);
			ck_assert_uint_ne(r->modes & ((1u << ACCOUNTING__COUNT) - 1u), 0);
		}
		for (const struct alg_param *p = a->params; p->name != NULL; p++) {
			size_t k = 0;

			if (p->choices == NULL)
				continue;
			ck_assert_int_eq(p->type, ALG_PARAM_INT);
			while (p->choices[k] != NULL)
				k++;
			ck_assert_msg((double)k == p->max - p->min + 1.0, "%s.%s: %zu choices",
				      a->name, p->name, k);
		}
	}
}
END_TEST

static Suite *
ledger_modes_suite(void)
{
	Suite *s = suite_create("ledger_modes");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_mode_rules);
	tcase_add_test(tc, test_registry_rules_valid);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(ledger_modes_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
