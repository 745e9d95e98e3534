/*
 * nseg_bench.c - saddle.nseg single pass against multi-pass as n grows
 * (README.md here); the experiment is euclid_saddle_bench.c, shared with
 * the other Euclidean saddle method.
 *
 *	nseg_bench [--smoke] [--seeds S] [--j J] [--n 250,500,1000,2000]
 *	           [--eps 1,4]
 */
#include "euclid_saddle_bench.h"

int
main(int argc, char **argv)
{
	static const double ns[] = { 250, 500, 1000, 2000 };

	return euclid_saddle_bench(argc, argv, "nseg_bench", "saddle.nseg", ns,
				   sizeof(ns) / sizeof(ns[0]));
}
