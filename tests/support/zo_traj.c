/*
 * zo_traj.c - the zeroth-order trajectory certificate (zo_traj.h).
 */
#include <math.h>

#include "zo_traj.h"

void
zo_traj_point(void *ctx, unsigned long index, const double *w, size_t len)
{
	struct zo_traj *t = ctx;
	double nrm = 0.0, c;

	for (size_t j = 0; j < len; j++)
		nrm = hypot(nrm, w[j]);
	c = nrm > 0.0 ? (nrm > 1.0 ? 1.0 : -1.0) / nrm : 0.0;
	for (size_t j = 0; j < len; j++)
		t->sum[j] += c * w[j] + t->zbar[j];
	if ((index + 1) % t->T == 0) {
		double n2 = 0.0;

		for (size_t j = 0; j < len; j++) {
			n2 += (t->sum[j] / (double)t->T) * (t->sum[j] / (double)t->T);
			t->sum[j] = 0.0;
		}
		t->cert_sum += sqrt(n2);
		t->rounds++;
	}
}
