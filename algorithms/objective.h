/*
 * objective.h - per-record losses, public regularizers, and the constants
 * (Lipschitz, smoothness, strong convexity, value bound) derived from
 * public inputs only.
 *
 * An objective is an instance: a const struct objective_ops from the
 * static registry (objective.c) plus the request's public parameters,
 * validated against the dataset's public schema by objective_init().  The
 * function it stands for is
 *
 *	F(w) = (1/n) sum_i omega_i loss(w; x_i, y_i) + (mu/2) ||w'||_2^2
 *	       + lambda ||w'||_1
 *
 * with omega_i = 1/(K pi_{y_i}) when a class_prior is given (times
 * 1/(G pi_{g_i}) when group_proportions are given), and w' the penalised
 * coordinates (all but the intercept).  The variable w has dim entries:
 *
 *	one-margin losses (logistic, least_squares, hinge, huber):
 *	    w = (w_1 .. w_d [, b]), z = <w, x~> with x~ = (x [, 1]);
 *	multiclass_logistic, K classes:
 *	    w = W feature-major, W[j K + k] (kernels.h), then [b_0 .. b_{K-1}];
 *	    s_k = sum_j x_j W[j K + k] (+ b_k).
 *
 * so dim = (d + intercept) * K_out with K_out = 1 or K.  The class and group
 * weights are public inputs of the request, never computed from the rows
 * (estimating them would be a release).  Each ops table carries its
 * catalogue text (formula, tasks, parameters, how each constant is
 * derived); GET /v1/algorithms serves it.
 */
#ifndef ALGORITHMS_OBJECTIVE_H
#define ALGORITHMS_OBJECTIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "constraint.h"
#include "data.h"
#include "err.h"

/* The request's "objective" keys an objective may accept (ops->params). */
enum objective_param {
	OBJ_P_INTERCEPT,
	OBJ_P_RIDGE,
	OBJ_P_L1,
	OBJ_P_HUBER_DELTA,
	OBJ_P_CLASS_PRIOR,
	OBJ_P_GROUP_PROPORTIONS,
	OBJ_P_COUPLING,         /* bilinear: gamma of the public coupling gamma <x, y> */
	OBJ_P_PARITY_TOLERANCE, /* fair_logistic_lagrangian: tau_f >= 0 */
	OBJ_P_MATRIX,           /* affine_vi: the public square matrix A */
	OBJ_P_WIDTH,            /* relu_net: hidden width m (required for it) */
	OBJ_P_INIT_SEED,        /* relu_net: public seed of its initial point x_1 */
	OBJ_P__COUNT
};

/*
 * What an objective stands for.  minimize: F(w) above, one variable w.
 * saddle: min_x max_y (1/n) sum_i f(x, y; z_i), convex in x, concave in y,
 * over a product X x Y of two blocks, the variable u = (x, y) their
 * concatenation (saddle.h: the per-record value and the operator
 * (grad_x f, -grad_y f) in one pass, constants per block).  operator: a
 * monotone operator F on one set (variational inequality mode, vi.h: the
 * per-record F(u; z) over one block x, its norm bound and Lipschitz
 * constant).  The zero value is minimize, so an ops
 * table that does not say is a minimisation objective.
 */
enum objective_kind {
	OBJECTIVE_MINIMIZE = 0,
	OBJECTIVE_SADDLE,
	OBJECTIVE_OPERATOR,
	OBJECTIVE__KIND_COUNT
};

/* API name of a kind ("minimize", "saddle", "operator"); NULL if unknown. */
const char *objective_kind_name(enum objective_kind k);

/* API key of a parameter ("intercept", ...). */
const char *objective_param_name(enum objective_param p);

/* The largest public matrix ('objective.matrix', affine_vi): its order. */
#define OBJECTIVE_MAX_MATRIX_DIM 32

/* relu_net's largest hidden width ('objective.width'). */
#define OBJECTIVE_MAX_WIDTH 256
/* relu_net's default 'objective.init_seed' (0: a zeroed params struct is
 * the default). */
#define OBJECTIVE_DEFAULT_INIT_SEED 0

/* Public parameters, as the request gives them. */
struct objective_params {
	bool intercept;     /* unpenalised bias as the last coordinate(s) of w */
	double ridge;       /* mu >= 0: (mu/2) ||w'||^2 */
	double l1;          /* lambda >= 0: lambda ||w'||_1 (with ridge: elastic net) */
	double huber_delta; /* huber only, > 0; NAN = the default 1 */
	size_t n_class_prior;
	double class_prior[DATA_MAX_CLASSES]; /* K (multiclass) or 2 ([-1, +1]) entries */
	size_t n_group_proportions;
	double group_proportions[DATA_MAX_GROUPS]; /* G entries */
	double coupling;         /* bilinear: gamma >= 0 of gamma <x, y> (0: none) */
	double parity_tolerance; /* fair_logistic_lagrangian: tau_f >= 0 (default 0) */
	/* affine_vi: the public matrix A, matrix_dim x matrix_dim row-major
	 * (matrix[r * matrix_dim + c]); matrix_dim 0 when absent. */
	size_t matrix_dim;
	double matrix[OBJECTIVE_MAX_MATRIX_DIM * OBJECTIVE_MAX_MATRIX_DIM];
	/* relu_net: the hidden width m (0: absent) and the public seed of
	 * its initial point (objective_start). */
	size_t width;
	unsigned long long init_seed;
};

/* Bounds every constant is built from (objective_constants fills it; a
 * loss's constants() reads it).  x~ is the row with the intercept's 1. */
struct objective_geometry {
	double x_l2;   /* ||x~||_2 <= x_l2 (bounds_row_l2, with 1 added in square) */
	double x_linf; /* ||x~||_inf <= x_linf (feature_linf, else feature_l2; >= 1 w/ intercept) */
	double r_l2;   /* ||w||_2 <= r_l2 over the set (INFINITY if unbounded) */
	double r_l1;   /* ||w||_1 <= r_l1 over the set */
	double margin; /* |<w, x~>| <= margin: min(r_l2 x_l2, r_l1 x_linf) */
	double label;  /* |y| bound: 1 binary, bounds.label regression, NAN undeclared */
	size_t n_classes;
	double x_lo, x_hi;    /* every cell in [x_lo, x_hi] (bounds.feature_range), else NAN */
	double simplex_scale; /* the set is {w >= 0, sum w = s}: s; NAN for other sets */
};

/*
 * Constants over the feasible set, of one record's weighted data term
 * omega_i loss(.; x_i, y_i) unless said otherwise.  Each is an upper bound
 * derived from public inputs only; INFINITY when none exists (hinge is not
 * smooth; a loss on an unbounded set has no value bound).
 */
struct objective_constants {
	double lipschitz_l2;     /* ||grad||_2 <= this: the DP sensitivity input */
	double lipschitz_linf;   /* ||grad||_inf <= this: Lipschitz w.r.t. ||.||_1 */
	double smooth_l2;        /* ||grad(w) - grad(w')||_2 <= this ||w - w'||_2 */
	double smooth_l1;        /* ||grad(w) - grad(w')||_inf <= this ||w - w'||_1 */
	double strong_convexity; /* of F w.r.t. ||.||_2, from ridge (0 with an intercept) */
	double reg_lipschitz_l2; /* ||grad reg||_2 over the set (regularizer only) */
	double value_bound;      /* 0 <= omega_i loss <= this (zeroth-order methods) */
	double max_weight;       /* max omega_i = 1/(K pi_min) * 1/(G pi_min) */
};

struct objective;
struct saddle_ops;
struct vi_ops;

struct objective_ops {
	const char *name; /* API id, e.g. "logistic" */
	const char *doc;  /* catalogue: formula, tasks, params, constants */
	unsigned tasks;   /* bit (1u << TASK_*) for each task it accepts */
	unsigned params;  /* bit (1u << OBJ_P_*) for each parameter it accepts */
	bool smooth;      /* smooth_l2 finite */
	/*
	 * One-margin losses: phi(z, y) and a derivative (a subgradient where
	 * phi is not differentiable) at z = <w, x~>; delta is huber_delta.
	 * NULL for multi-output losses.
	 */
	double (*phi)(double z, double y, double delta);
	double (*dphi)(double z, double y, double delta);
	/*
	 * Multi-output losses (K = n_classes margins s): the loss of class y at
	 * s and, when ret_r is not NULL, r = d loss / d s (K entries).  NULL
	 * for one-margin losses.
	 */
	double (*multi)(const double *s, size_t K, size_t y, double *ret_r);
	/*
	 * Unweighted per-record constants from g (max_weight, the regularizer
	 * and strong convexity are added by objective_constants).  Names the
	 * missing bound ("bounds.label") or an unbounded set ("constraints.x")
	 * with ERR_INVALID when it needs one.
	 */
	enum err_code (*constants)(const struct objective *o, const struct objective_geometry *g,
				   struct objective_constants *ret, struct err *e);
	/* OBJECTIVE_MINIMIZE (0) unless set.  A saddle objective leaves phi,
	 * multi and constants NULL and gives its operations in saddle. */
	enum objective_kind kind;
	/* Minimisation objectives: the constraint kinds (bit 1u <<
	 * CONSTRAINT_*) their constants cover; 0 = every kind.
	 * objective_constants() refuses another naming "constraints.x.kind". */
	unsigned sets;
	/*
	 * The oracle: false (the zero value) for value and gradient; true
	 * for function values only (zeroth order, docs/algorithms/zeroth-order.md).
	 * A value-only objective has no dphi and no multi; its loss is phi
	 * (a one-margin loss) or value below.  Only methods with
	 * alg_ops.zeroth_order list it (the conformance test checks), and
	 * objective_grad / objective_batch_grad refuse it (NAN, g untouched).
	 */
	bool value_only;
	/*
	 * Value-only losses that are not a function of the margin alone:
	 * the loss at w given the record's margin z = <w, x~> and label y (0
	 * on unlabeled data).  NULL for every other objective.
	 */
	double (*value)(const struct objective *o, double z, double y, const double *w);
	/*
	 * Value-only losses of n_out > 1 pre-activations (relu_net: n_out =
	 * the hidden width m, w laid out feature-major like
	 * multiclass_logistic, s_k = sum_j x_j W[j m + k] (+ b_k)): the loss
	 * at s given the label y.  NULL for every other objective.
	 */
	double (*hidden)(const struct objective *o, const double *s, double y);
	/*
	 * The objective's own public start point x_1 (dim entries), a
	 * function of its public parameters only (relu_net: a Gaussian
	 * initialisation drawn from objective.init_seed).  NULL when the
	 * method's own start applies.
	 */
	void (*start)(const struct objective *o, double *ret_x);
	const struct saddle_ops *saddle; /* OBJECTIVE_SADDLE only; static */
	const struct vi_ops *vi;         /* OBJECTIVE_OPERATOR only; static */
};

/* An objective instance: plain value, no pointers but ops. */
struct objective {
	const struct objective_ops *ops; /* static registry (or a test's table) */
	struct objective_params p;
	enum task task;
	size_t d;         /* features */
	size_t n_out;     /* margins per record: 1, or K for multi-output losses */
	size_t dim;       /* length of w: (d + intercept) * n_out */
	size_t n_classes; /* K from the schema (multiclass), else 0 */
	size_t n_groups;  /* G from the schema, else 0 */
	double delta;     /* huber_delta in effect */
	bool class_weighted, group_weighted;
	double class_w[DATA_MAX_CLASSES]; /* 1/(K pi_k); binary: [0] for -1, [1] for +1 */
	double group_w[DATA_MAX_GROUPS];  /* 1/(G pi_g) */
	/* Saddle objectives: dim = dim_x + dim_y, x = u[0 .. dim_x), y =
	 * u[dim_x .. dim); the schema blocks (data_block) the record's two
	 * vectors come from, or SIZE_MAX when the objective reads the whole
	 * row, and the first feature column of each.  0 for minimisation
	 * objectives. */
	size_t dim_x, dim_y;
	size_t block_x, block_y;
	size_t offset_x, offset_y;
	size_t offset_a; /* matrix_game, quadratic_game: the payoff matrix's first column */
	/* The intercept's constant feature c in x~ = (x, c) (objective_init:
	 * 1).  Only a method's private working copy changes it, to train in
	 * the coordinates u_b = b / c (sgd/subsampled.c); a model's intercept
	 * is c w_b.  0 reads as 1. */
	double icpt_scale;
};

/* Registry of objectives. */
size_t objective_count(void);
const struct objective_ops *objective_at(size_t i);
const struct objective_ops *objective_find(const char *name);

/* params with every default: no intercept, no regularizer, huber_delta
 * NAN (= 1), no weights. */
void objective_params_default(struct objective_params *p);

/*
 * Build an instance of ops for datasets of schema s (borrowed, only read
 * here).  ERR_INVALID naming the request field ("objective.name" for a
 * task the loss does not accept, "objective.intercept", "objective.ridge",
 * "objective.l1", "objective.huber_delta", "objective.class_prior",
 * "objective.group_proportions") when a parameter does not fit.  *ret is
 * written only on success.
 */
enum err_code objective_init(struct objective *ret, const struct objective_ops *ops,
			     const struct objective_params *p, const struct data_schema *s,
			     struct err *e);

/* ERR_INTERNAL unless ds has the shape o was built for (d, labels unless
 * the objective reads none, group column when group weights are used). */
enum err_code objective_check_dataset(const struct objective *o, const struct dataset *ds,
				      struct err *e);

/*
 * Constants of o over the feasible set c (of dimension o->dim) from the
 * declared bounds of s.  *ret is written only on success.
 */
enum err_code objective_constants(const struct objective *o, const struct data_schema *s,
				  const struct constraint *c, struct objective_constants *ret,
				  struct err *e);

/*
 * A bound on ||grad(omega_i loss)(0)||_2 (every margin 0) over every row and
 * label the declared bounds of s allow: X~ max_y |phi'(0, y)| for a
 * one-margin loss, X~ ||softmax(0) - e_y||_2 = X~ sqrt((K - 1)/K) for
 * multiclass, times the largest weight; X~ the row bound with the
 * intercept's feature.  At most lipschitz_l2 wherever 0 is in the set: a
 * clip norm for methods that start at 0 (algorithms/sgd/README.md).  It
 * calls the loss's derivative, at 0 only.  ERR_INVALID naming the missing
 * bound; INFINITY for saddle and operator objectives.
 */
enum err_code objective_grad_origin_l2(const struct objective *o, const struct data_schema *s,
				       double *ret, struct err *e);

/* True when o has its own public start point (ops->start): write it to
 * ret_x (o->dim entries).  False leaves ret_x alone. */
bool objective_start(const struct objective *o, double *ret_x);

/* omega_i loss(w; x_i, y_i): function-value-only access (an unlabeled
 * record's y reads as 0).  Multi-output
 * losses use up to DATA_MAX_CLASSES doubles of stack. */
double objective_value(const struct objective *o, const struct dataset *ds, size_t i,
		       const double *w);

/* g += scale * grad(omega_i loss)(w) (dim entries); returns the loss. */
double objective_grad(const struct objective *o, const struct dataset *ds, size_t i,
		      const double *w, double scale, double *g);

/*
 * The hot loop: g += sum over the m records idx[0..m-1] (rows 0..m-1 when
 * idx is NULL) of clip_C(grad(omega_i loss_i)(w)), data term only, with
 * clip_C(v) = v min(1, C / ||v||_2).  clip = INFINITY computes the plain
 * sum; a finite clip is the rounding guard of DP methods (their constants
 * bound every gradient already, so it only ever acts on rounding).  This
 * adds a clip argument to the signature because the guard needs
 * each record's gradient norm, which is cheap inside the pass (||x||^2
 * comes with the dot product) and expensive after it.  g must not alias
 * w or the data.
 */
void objective_batch_grad(const struct objective *o, const struct dataset *ds, const size_t *idx,
			  size_t m, const double *w, double clip, double *g);

/* The regularizer (mu/2) ||w'||^2 + lambda ||w'||_1 (not the intercept). */
double objective_reg_value(const struct objective *o, const double *w);

/* g += scale * (mu w' + lambda sign(w')), sign(0) = 0; the intercept
 * entries get nothing. */
void objective_reg_grad(const struct objective *o, const double *w, double scale, double *g);

/* F(w): mean weighted loss over ds plus the regularizer (public
 * evaluation and tests only: a loss on private data is a release and is
 * never returned by the service).  NAN when ds is empty. */
double objective_mean_loss(const struct objective *o, const struct dataset *ds, const double *w);

/* Fraction of records classified right: binary by the sign of z (z > 0
 * means +1), multiclass by argmax (first on ties).  NAN for other tasks
 * or an empty ds. */
double objective_accuracy(const struct objective *o, const struct dataset *ds, const double *w);

#endif /* ALGORITHMS_OBJECTIVE_H */
