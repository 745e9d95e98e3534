/*
 * predict.c - scoring rows with a released model (predict.h).
 */
#include <math.h>
#include <string.h>

#include "predict.h"

bool
predict_link_of(const char *name, enum predict_link *ret)
{
	static const struct {
		const char *name;
		enum predict_link link;
	} table[] = {
		{ "logistic", PREDICT_LOGISTIC },
		{ "worst_group_logistic", PREDICT_LOGISTIC },
		{ "multiclass_logistic", PREDICT_SOFTMAX },
		{ "hinge", PREDICT_MARGIN },
		{ "least_squares", PREDICT_MARGIN },
		{ "huber", PREDICT_MARGIN },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(name, table[i].name) == 0) {
			*ret = table[i].link;
			return true;
		}
	return false;
}

/* 1 / (1 + e^-z) without overflow. */
static double
sigmoid(double z)
{
	if (z >= 0)
		return 1.0 / (1.0 + exp(-z));
	double t = exp(z);

	return t / (1.0 + t);
}

void
predict_row(const struct predict_model *m, const double *x, double *margin, double *prob, long *cls)
{
	size_t K = m->n_out, d = m->d;

	for (size_t k = 0; k < K; k++)
		margin[k] = m->intercept ? m->w[d * K + k] : 0.0;
	for (size_t j = 0; j < d; j++)
		for (size_t k = 0; k < K; k++)
			margin[k] += x[j] * m->w[j * K + k];
	*cls = 0;
	switch (m->link) {
	case PREDICT_LOGISTIC:
		prob[0] = sigmoid(margin[0]);
		*cls = margin[0] > 0 ? 1 : -1;
		break;
	case PREDICT_SOFTMAX: {
		double top = margin[0], sum = 0.0;

		for (size_t k = 1; k < K; k++)
			if (margin[k] > top) {
				top = margin[k];
				*cls = (long)k;
			}
		for (size_t k = 0; k < K; k++)
			sum += prob[k] = exp(margin[k] - top);
		for (size_t k = 0; k < K; k++)
			prob[k] /= sum;
		break;
	}
	case PREDICT_MARGIN:
	default:
		for (size_t k = 0; k < K; k++)
			prob[k] = NAN;
		if (m->classify)
			*cls = margin[0] > 0 ? 1 : -1;
		break;
	}
}
