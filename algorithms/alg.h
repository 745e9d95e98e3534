/*
 * alg.h - the algorithm interface.
 *
 * Every optimization method is one const struct alg_ops, defined at the
 * bottom of its own .c file and listed in registry.c.  A run goes:
 *
 *	plan()    public inputs -> step count, privacy event, charge, noise;
 *	          pure, deterministic, never sees data; called only through
 *	          alg_plan(), after the driver's generic checks of the spec, at
 *	          admission (to charge) and again by the worker (to verify the
 *	          stored plan); the one place a method calibrates its noise
 *	work()    the run's cost from the spec and its plan; never calibrates
 *	init()    set up state for one run from the plan (never calibrates
 *	          again); all allocation happens here
 *	step()    one step; exactly plan.steps calls, never allocates
 *	result()  copy the released output (e.g. the averaged iterate) out
 *	fini()    release what init() acquired; accepts half-built state
 *
 * The loop belongs to the caller (driver.c): the number of steps is fixed
 * by plan() from public parameters, so wall time and progress reveal
 * nothing about the data (docs/privacy-model.md §1).  Code under
 * algorithms/ is pure computation: no I/O, threads, globals or logging,
 * randomness only through the struct rng passed in.
 */
#ifndef ALGORITHMS_ALG_H
#define ALGORITHMS_ALG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "constraint.h"
#include "data.h"
#include "err.h"
#include "objective.h"
#include "privacy/accountant.h"
#include "privacy/event.h"
#include "rng.h"
#include "saddle.h"

/* Upper bound on schema and report lengths, so callers use stack arrays. */
#define ALG_MAX_PARAMS 32
#define ALG_MAX_USED   24

enum alg_param_type {
	ALG_PARAM_REAL,
	ALG_PARAM_INT,
	ALG_PARAM_BOOL,
};

/* One entry of an algorithm's parameter schema.  The same table validates
 * requests, fills defaults and is served by GET /v1/algorithms. */
struct alg_param {
	const char *name; /* JSON key in "params", snake_case */
	enum alg_param_type type;
	double min;      /* inclusive */
	double max;      /* inclusive */
	double def;      /* used when the key is absent; 0 may mean "auto" (see doc) */
	const char *doc; /* one line for API users */
	/* ALG_PARAM_INT only, may be NULL: the names of the values min, min +
	 * 1, ..., max (max - min + 1 entries, then NULL).  A request may give
	 * the name instead of the number ("variant": "pure"); the catalogue
	 * lists them and the normalised request stores the name. */
	const char *const *choices;
};

/*
 * Which ledgers can charge a method's runs (docs/privacy-model.md §5): a
 * run whose event only one accountant can bound (an "approx" leaf: basic
 * composition only) cannot go on a 'renyi' dataset.  One rule per value
 * of a parameter ("variant" = approx), the method's modes otherwise.
 * alg_plan() refuses a spec on a mode its rule does not list with
 * ERR_MODE naming the parameter and giving the rule's hint, before any
 * calibration; the catalogue serves the rules as "ledger_modes".
 */
struct alg_mode_rule {
	const char *param; /* a parameter of the method; NULL ends the list */
	double value;      /* the rule holds when params[param] == value */
	unsigned modes;    /* bit (1u << ACCOUNTING_*) per mode that can charge it */
	const char *hint;  /* what to use instead on the other modes */
};

/*
 * A selection method's public candidate grid ("params.grid", for methods
 * with alg_ops.grid_base): up to ALG_GRID_MAX_DIMS of the base method's
 * parameters (indices into grid_base->params), each with 1 ..
 * ALG_GRID_MAX_VALUES values within that parameter's schema; the candidates
 * are every combination, at most ALG_GRID_MAX_CANDIDATES.  n_dims = 0: no
 * grid (the method's own default candidates).
 */
#define ALG_GRID_MAX_DIMS       3
#define ALG_GRID_MAX_VALUES     8
#define ALG_GRID_MAX_CANDIDATES 64

struct alg_grid_dim {
	unsigned param; /* index into the base method's params */
	unsigned n;     /* values */
	double value[ALG_GRID_MAX_VALUES];
};

struct alg_grid {
	unsigned n_dims;
	struct alg_grid_dim dim[ALG_GRID_MAX_DIMS];
};

/* The validated, public description of one run.  Everything here is
 * public: the request and the sealed dataset's public metadata. */
/*
 * A parallel-for the caller injects (algorithms create no threads): calls
 * fn(arg, k) exactly once for every k in 0 .. parts - 1, in any order and
 * on any of its threads, and returns when every call has returned.  The
 * service implements it over a small per-run pool (service/run_pool.h);
 * NULL in a run_spec means serial.  Methods split work by a public rule
 * that does not depend on the thread count, so results are the same bits
 * whatever runs them (row_order.h).
 *
 * background / join (both NULL, or both set): background(ctx, fn, arg)
 * calls fn(arg) once, on another thread while the caller goes on if one is
 * free, else before it returns; join(ctx) returns once that call has
 * returned.  At most one background call at a time; the caller touches
 * nothing fn uses until join().  The one-pass methods draw the next steps'
 * noise this way (gauss_onepass.h, struct onepass_noise).
 */
struct alg_exec {
	void (*parallel_for)(void *ctx, size_t parts, void (*fn)(void *arg, size_t k), void *arg);
	void (*background)(void *ctx, void (*fn)(void *arg), void *arg);
	void (*join)(void *ctx);
	void *ctx;
};

struct run_spec {
	struct objective objective;    /* the instance, built for schema (objective_init) */
	struct constraint x;           /* feasible set of the (primal) variable */
	double epsilon;                /* target, > 0 */
	double delta;                  /* target, in (0, 1) */
	double params[ALG_MAX_PARAMS]; /* dense, in the schema's order */
	struct alg_grid grid;          /* params.grid (selection methods); n_dims 0 if none */
	size_t n;                      /* sealed row count */
	size_t dim;                    /* length of the variable and of result(): objective.dim */
	struct data_schema schema;     /* the dataset's public schema: d, task, bounds, ... */
	/* The dataset's ledger: noise is calibrated so that the run's own
	 * (epsilon, delta) holds under this mode's accountant (docs/privacy-model.md
	 * §5): the exact analytic curve for basic, the RDP conversion
	 * for renyi. */
	enum accounting_mode mode;
	/* Borrowed, may be NULL (serial): the executor the batch gradients
	 * of one-pass methods are split over (struct alg_exec). */
	const struct alg_exec *exec;
#ifdef DPOPT_TESTING
	/* Borrowed, usually NULL: white-box access for the privacy audits
	 * (testing_hook.h).  Absent from production builds; never set from
	 * a request. */
	const struct alg_testing_hook *testing_hook;
#endif
	/*
	 * Blocks (saddle.h).  A saddle run's variable is u = (x, y): x =
	 * u[0 .. objective.dim_x) over the set x above, y = u[dim_x .. dim)
	 * over the set y below, dim = dim_x + dim_y; result() writes u and
	 * the service returns its two blocks as "x" and "y".  has_y is true
	 * when the request gave "constraints.y" (accepted only by methods with
	 * alg_ops.saddle; run_spec_blocks()).  Each block's geometry is the
	 * norm its method measures it in (GEOMETRY_L2, the zero value, for the
	 * Euclidean methods).  Minimisation runs leave all of this zero.
	 */
	bool has_y;
	struct constraint y;
	enum geometry geometry_x, geometry_y;
};

/* A value the run actually used, reported in the result ("step_size",
 * "noise_sigma", ...). */
struct alg_used {
	const char *name; /* static string */
	double value;
};

/* What plan() decides; stored with the run, reproducible from the spec. */
struct run_plan {
	unsigned long steps;        /* exact number of step() calls */
	struct dp_event_tree event; /* what the run releases */
	double charge_epsilon;      /* basic-composition charge; the event satisfies it */
	double charge_delta;
	size_t n_used;
	struct alg_used used[ALG_MAX_USED];
	/* The accountant that certified the charge: the name its calibration's
	 * struct accountant_report gave ("analytic_gaussian", "rdp" or
	 * "basic"; static), set by plan(); alg_plan() refuses a plan without
	 * one.  A label, not a parameter of the run: init()'s re-derivation
	 * leaves it out (onepass_same_plan), the worker's comparison with the
	 * stored plan includes it (run_plan_json). */
	const char *accountant;
};

struct alg_ops {
	const char *name;               /* stable API id: "<family>.<variant>" */
	unsigned version;               /* bump when outputs change for equal inputs */
	const char *doc;                /* one paragraph for the catalogue */
	const char *paper;              /* what it implements */
	const char *privacy_model;      /* e.g. "(epsilon, delta)-DP, replace-one" */
	const char *const *objectives;  /* NULL-terminated objective names */
	unsigned constraints;           /* bit (1u << CONSTRAINT_*) per supported set */
	const struct alg_param *params; /* ends with an entry whose name is NULL */
	size_t state_size;              /* bytes the driver zero-allocates for state */

	/* Derive the schedule and the event of a spec that passed
	 * alg_check_spec(); method-specific refusals only (e.g. a batch
	 * larger than n).  Called through alg_plan(). */
	enum err_code (*plan)(const struct run_spec *spec, struct run_plan *ret_plan,
			      struct err *e);
	/* Per-record evaluations plus noise draws, from public inputs only:
	 * the spec and the plan alg_plan() made for it. */
	double (*work)(const struct run_spec *spec, const struct run_plan *plan);
	enum err_code (*init)(void *state, const struct run_spec *spec, const struct run_plan *plan,
			      const struct dataset *ds, struct rng *rng, struct err *e);
	enum err_code (*step)(void *state, struct err *e);
	void (*result)(const void *state, double *ret_x); /* spec->dim doubles */
	void (*fini)(void *state);
	/* Optional (NULL: none): public values known only once the steps
	 * have run, appended to ret with run_plan_use() (e.g. the iterations
	 * a stopping rule on public randomness admitted).  Called after
	 * result(), never with a value that depends on the data. */
	void (*report)(const void *state, struct run_plan *ret);
	/* Saddle support: true when the method solves saddle objectives
	 * (OBJECTIVE_SADDLE, its objectives list only those) over x in
	 * 'constraints' times y in 'constraints_y'; false (the zero value)
	 * for minimisation methods, which refuse "constraints.y". */
	bool saddle;
	unsigned constraints_y; /* bit (1u << CONSTRAINT_*) per supported set of y */
	/* VI support: true when the method also solves operator objectives
	 * (OBJECTIVE_OPERATOR, vi.h) over one set u in 'constraints' (the
	 * request's "constraints.x"; "constraints.y" refused). */
	bool vi;
	/* Defaults from the declared bounds: without "constraints.x" the run
	 * is over subsampled_default_set()'s l2 ball, and one-margin losses
	 * get an intercept unless the request says otherwise
	 * (algorithms/sgd/README.md). */
	bool defaults_from_bounds;
	/* A selection method over another method's runs: "params.grid" may
	 * name any of grid_base's parameters (struct alg_grid).  NULL: the
	 * request has no "params.grid". */
	const struct alg_ops *grid_base;
	/* 0: both ledger modes; else bit (1u << ACCOUNTING_*) per mode. */
	unsigned modes;
	/* Per-value exceptions to modes (struct alg_mode_rule); NULL: none. */
	const struct alg_mode_rule *mode_rules;
	/*
	 * Synthetic data (synthetic/kway.h): the method takes no objective
	 * (spec->objective.ops NULL, objectives an empty list) and no
	 * constraints (constraints 0), reads the dataset's categorical
	 * attributes (schema.categorical, dataset.cat) and nothing else, and
	 * result() writes spec->dim = |universe| doubles: the counts of its
	 * synthetic rows per universe index (kway_universe(); the service sets
	 * spec->dim to it).
	 */
	bool synthetic;
	/*
	 * Function values only (docs/algorithms/zeroth-order.md): the method
	 * calls objective_value() and never a gradient.  Only such methods may
	 * list value-only objectives (objective_ops.value_only); the
	 * conformance test checks both directions.
	 */
	bool zeroth_order;
};

/* The modes that can charge spec's run of alg (mode_rules, then modes;
 * bits 1u << ACCOUNTING_*), and the hint of the rule that decided (NULL
 * when none did). */
unsigned alg_spec_modes(const struct alg_ops *alg, const struct run_spec *spec,
			const struct alg_mode_rule **ret_rule);

/* registry.c */
size_t alg_count(void);
const struct alg_ops *alg_at(size_t i);
const struct alg_ops *alg_find(const char *name);
size_t alg_param_count(const struct alg_ops *alg);
bool alg_supports_objective(const struct alg_ops *alg, const char *objective);

/* driver.c */

/* Called by the driver after every step with the number done; returns
 * false to stop the run (cancellation, shutdown, lost lease).  May be
 * NULL.  It must not look at the state: progress is public, the iterate
 * is not. */
typedef bool (*alg_progress_fn)(void *ctx, unsigned long done, unsigned long total);

/*
 * Run alg for exactly plan->steps steps on ds.  plan is the one
 * alg_plan() made for spec (the worker compares it with the stored one
 * first); the spec passes alg_check_spec() again here, which costs no
 * calibration.  ret_x (spec->dim doubles) is written only on success.
 * ERR_CANCELLED when progress() asked to stop; ERR_INTERNAL when the
 * generator failed.  This is the only loop over step() in the code base.
 */
enum err_code alg_run(const struct alg_ops *alg, const struct run_spec *spec,
		      const struct run_plan *plan, const struct dataset *ds, struct rng *rng,
		      alg_progress_fn progress, void *progress_ctx, double *ret_x, struct err *e);

/* alg_run(), and on success *ret_after (when not NULL) = *plan with the
 * method's after-run values appended (alg_ops.report): what the result's
 * params_used shows. */
enum err_code alg_run_report(const struct alg_ops *alg, const struct run_spec *spec,
			     const struct run_plan *plan, const struct dataset *ds, struct rng *rng,
			     alg_progress_fn progress, void *progress_ctx, double *ret_x,
			     struct run_plan *ret_after, struct err *e);

#ifdef DPOPT_TESTING
/* Test builds only: attach to spec the fault hook that makes a method's
 * certificate assertion fail (testing_hook.h (vi)), for the worker's
 * DPOPT_TEST_FAIL_CERTIFICATES.  The hook is a constant; spec borrows it. */
void alg_testing_fail_certificates(struct run_spec *spec);
#endif

/*
 * The generic checks of a spec, the same for every method, in this order:
 * the objective is one alg supports and accepts the dataset's task; the
 * blocks (run_spec_blocks: y only for saddle methods, and then required
 * unless the objective is an operator one: x alone, for methods with vi),
 * the set of each a kind alg supports and valid (constraint.h);
 * epsilon is finite and positive, delta in (0, 1); the dataset has rows
 * and features matching the objective; every parameter is in its schema's
 * range (an integer for ALG_PARAM_INT, 0 or 1 for ALG_PARAM_BOOL).
 * ERR_INVALID naming the field ("objective", "constraints.x",
 * "privacy.epsilon", "params.batch_size", ...).
 */
enum err_code alg_check_spec(const struct alg_ops *alg, const struct run_spec *spec, struct err *e);

/* alg_check_spec(), then alg->plan(): the only way to plan a run.
 * ERR_INTERNAL for a plan that names no accountant of its mode
 * (run_plan.accountant not one accountant_source() knows, or not "rdp"
 * on a renyi spec).  *ret_plan is written only on
 * success. */
enum err_code alg_plan(const struct alg_ops *alg, const struct run_spec *spec,
		       struct run_plan *ret_plan, struct err *e);

/* Build spec->objective from ops and p (NULL: the defaults) for
 * spec->schema and set spec->dim; objective_init's errors. */
enum err_code run_spec_set_objective(struct run_spec *spec, const struct objective_ops *ops,
				     const struct objective_params *p, struct err *e);

/*
 * The blocks of spec for alg (driver.c): *ret_x = (spec->x,
 * geometry_x) and, for a saddle run, *ret_y = (spec->y, geometry_y).
 * ERR_INVALID naming "constraints.y" when a minimisation method gets one
 * (has_y) or a saddle run lacks it or an operator run (one set, alg->vi)
 * has it, "constraints.x.kind" /
 * "constraints.y.kind" for a set kind the method does not support
 * (alg_ops.constraints / constraints_y), "constraints.x" / "constraints.y"
 * (or a member of it) for an unknown geometry or a set that does not
 * validate in the block's dimension, "objective" when the objective's kind
 * does not match the method.  Part of alg_check_spec(), the generic
 * checks; no method repeats it.
 */
enum err_code run_spec_blocks(const struct alg_ops *alg, const struct run_spec *spec,
			      struct saddle_block *ret_x, struct saddle_block *ret_y,
			      struct err *e);

/* A parameter's named values (alg_param.choices): the name of value v
 * (NULL when p has no choices or v is not one of them), and the value of
 * a name (false when p has no such name). */
const char *alg_param_choice_name(const struct alg_param *p, double v);
bool alg_param_choice_value(const struct alg_param *p, const char *name, double *ret);

/* The parameter of alg called name, or NULL. */
const struct alg_param *alg_param_find(const struct alg_ops *alg, const char *name);

/* Fill v with the schema defaults. */
void alg_default_params(const struct alg_ops *alg, double *v);

/* Append a used value to a plan; silently ignored past ALG_MAX_USED (a
 * programming error caught by the conformance test). */
void run_plan_use(struct run_plan *p, const char *name, double value);

/* The used value called name (run_plan_use), or NAN when the plan has
 * none: how init() reads back the schedule plan() derived. */
double run_plan_value(const struct run_plan *p, const char *name);

#endif /* ALGORITHMS_ALG_H */
