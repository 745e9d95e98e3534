/*
 * nispp_bench.c - saddle.nispp single pass against multi-pass at equal epsilon as n grows
 * (README.md here); the experiment is euclid_saddle_bench.c, shared with
 * the other Euclidean saddle method.
 *
 *	nispp_bench [--smoke] [--seeds S] [--j J] [--n 1000,4000,16000,64000]
 *	           [--eps 1,4]
 */
#include "euclid_saddle_bench.h"

int
main(int argc, char **argv)
{
	static const double ns[] = { 1000, 4000, 16000, 64000 };

	return euclid_saddle_bench(argc, argv, "nispp_bench", "saddle.nispp", ns,
				   sizeof(ns) / sizeof(ns[0]));
}
