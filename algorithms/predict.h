/*
 * predict.h - scoring rows with a released model: the one pure function
 * the API (POST /v1/runs/{id}/predict) and `dpoptd solve --predict` share.
 *
 * A model is the released w of a minimize objective (objective.h's layout)
 * and how its margins become predictions:
 *
 *	one-margin (logistic, worst_group_logistic, hinge, least_squares,
 *	huber):  z = <w_1..d, x> (+ b);
 *	multiclass_logistic, K classes:  s_k = sum_j x_j W[j K + k] (+ b_k).
 *
 *	link       probability                 class
 *	logistic   P(+1) = 1 / (1 + e^-z)      +1 when z > 0, else -1
 *	margin     none                        binary task: as above; regression: none
 *	softmax    P(k) = e^s_k / sum e^s_i    argmax_k s_k (the first on ties)
 *
 * For regression the prediction is the margin itself.  Scoring reads only
 * the model and the row (public to the caller): it is post-processing of
 * the release and charges nothing.
 */
#ifndef ALGORITHMS_PREDICT_H
#define ALGORITHMS_PREDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "data.h"

enum predict_link {
	PREDICT_MARGIN,   /* regression (prediction = margin) or a sign classifier */
	PREDICT_LOGISTIC, /* binary, with P(+1) */
	PREDICT_SOFTMAX,  /* multiclass, with P(k) */
};

struct predict_model {
	size_t d;       /* features */
	size_t n_out;   /* margins per row: 1, or K (softmax) */
	bool intercept; /* b after the weights (objective.h) */
	bool classify;  /* a class is predicted (binary or multiclass task) */
	enum predict_link link;
	const double *w; /* borrowed: (d + intercept) * n_out entries */
};

/* The link of objective `name` ("logistic", "multiclass_logistic", ...):
 * false for an objective whose output is not a predictor (saddle ones). */
bool predict_link_of(const char *name, enum predict_link *ret);

/* Score row x (d values): margin[0 .. n_out), prob[0 .. n_out) (NAN for
 * the margin link; for logistic prob[0] = P(+1)), and the class: -1 / +1
 * (binary) or 0 .. K-1 (multiclass); 0 when !m->classify. */
void predict_row(const struct predict_model *m, const double *x, double *margin, double *prob,
		 long *cls);

#endif /* ALGORITHMS_PREDICT_H */
