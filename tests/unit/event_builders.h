/*
 * event_builders.h - one-expression constructors of privacy event trees
 * for the accountant tests (test_rdp.c, test_accountant.c).  Test code:
 * failures are Check assertions.  static inline so each test uses only
 * what it needs.
 */
#ifndef TESTS_UNIT_EVENT_BUILDERS_H
#define TESTS_UNIT_EVENT_BUILDERS_H

#include <check.h>
#include <stdint.h>

#include "privacy/event.h"

static inline struct dp_event_tree
gaussian(enum dp_relation r, double z)
{
	struct dp_event_tree t;

	dp_event_gaussian(&t, r, z);
	return t;
}

static inline struct dp_event_tree
laplace(double b)
{
	struct dp_event_tree t;

	dp_event_laplace(&t, DP_REPLACE_ONE, b);
	return t;
}

static inline struct dp_event_tree
pure(double eps)
{
	struct dp_event_tree t;

	dp_event_pure(&t, DP_REPLACE_ONE, eps);
	return t;
}

static inline struct dp_event_tree
bounded_range(double eps)
{
	struct dp_event_tree t;

	dp_event_bounded_range(&t, DP_REPLACE_ONE, eps);
	return t;
}

static inline struct dp_event_tree
zcdp(double rho)
{
	struct dp_event_tree t;

	dp_event_zcdp(&t, DP_REPLACE_ONE, rho);
	return t;
}

static inline struct dp_event_tree
approx(double eps, double delta)
{
	struct dp_event_tree t;

	dp_event_approx(&t, DP_REPLACE_ONE, eps, delta);
	return t;
}

static inline struct dp_event_tree
wrap(struct dp_event_tree t, struct dp_event p)
{
	struct err e = { 0 };

	ck_assert_msg(dp_event_wrap(&t, &p, &e) == ERR_OK, "wrap: %s", e.msg);
	return t;
}

static inline struct dp_event_tree
wor(struct dp_event_tree t, uint64_t n, uint64_t batch)
{
	return wrap(t, (struct dp_event){ .type = DP_EVENT_SAMPLED_WOR, .n = n, .batch = batch });
}

static inline struct dp_event_tree
poisson(struct dp_event_tree t, double q)
{
	return wrap(t, (struct dp_event){ .type = DP_EVENT_POISSON, .sampling_rate = q });
}

static inline struct dp_event_tree
self_composed(struct dp_event_tree t, uint64_t k)
{
	return wrap(t, (struct dp_event){ .type = DP_EVENT_SELF_COMPOSED, .count = k });
}

static inline struct dp_event_tree
join(enum dp_event_type type, const struct dp_event_tree *a, unsigned k)
{
	const struct dp_event_tree *parts[16];
	struct dp_event_tree t;
	struct err e = { 0 };

	ck_assert(k <= 16);
	for (unsigned i = 0; i < k; i++)
		parts[i] = &a[i];
	ck_assert_msg(dp_event_join(&t, type, parts, k, &e) == ERR_OK, "join: %s", e.msg);
	return t;
}

static inline struct dp_event_tree
repeat(struct dp_event_tree t, unsigned k)
{
	struct dp_event_tree a[16];

	for (unsigned i = 0; i < k; i++)
		a[i] = t;
	return join(DP_EVENT_COMPOSED, a, k);
}

/* Private selection over t: K ~ truncated negative binomial (eta, gamma). */
static inline struct dp_event_tree
selection_tnb(struct dp_event_tree t, double eta, double gamma)
{
	struct dp_event p = { .type = DP_EVENT_SELECTION_TNB, .eta = eta, .gamma = gamma };

	return wrap(t, p);
}

/* Private selection over t: K ~ Poisson(mu). */
static inline struct dp_event_tree
selection_poisson(struct dp_event_tree t, double mu)
{
	struct dp_event p = { .type = DP_EVENT_SELECTION_POISSON, .mu = mu };

	return wrap(t, p);
}

#endif /* TESTS_UNIT_EVENT_BUILDERS_H */
