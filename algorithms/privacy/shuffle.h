/*
 * shuffle.h - amplification by shuffling for adaptive local randomizers:
 * the closed form of V. Feldman, A. McMillan, K. Talwar, "Hiding among the
 * clones: a simple and nearly optimal analysis of privacy amplification by
 * shuffling", FOCS 2021 (arXiv:2012.12803; "FMT20" below).
 *
 * Setting: p records, each the input of one randomizer A_i(w_1..w_(i-1), .)
 * that is (eps0, delta0)-DP for every value of the earlier outputs; the
 * records are put in a secret uniformly random order before the
 * randomizers run.  Then (FMT20, Theorem 3.8, and Theorem 3.1 for
 * delta0 = 0), for any delta_s with eps0 <= log(p / (16 log(4 / delta_s))),
 * the sequence of outputs is (eps, delta)-DP with
 *
 *	eps   = log(1 + (1 - e^-eps0) / (1 + e^(-eps0 - e1)) (a + c)),
 *	        a = 8 sqrt(e^eps0 log(4 / delta_s) / p), c = 8 e^eps0 / p,
 *	        e1 = log(1 + a + c),
 *	delta = delta_s + (e^eps + 1) (1 + e^-eps0 / 2) p delta0.
 *
 * eps is the form of the authors' reference code (computeamplification.py
 * in apple/ml-shuffling-amplification, closedformanalysis), which is at
 * least the published factor (e^eps0 - 1) / (e^eps0 + 1) (conservative);
 * the condition uses log(4 / delta_s) as that code does, stricter than the
 * paper's log(2 / delta_s).  The delta term is Theorem 3.8's, not the
 * "20 p delta0" that Asi, Feldman, Koren and Talwar (ICML 2021, Lemma 4.5)
 * quote: the two agree only while (e^eps + 1)(1 + e^-eps0 / 2) <= 20, i.e.
 * for eps below about 2.5, and the quoted one is too small beyond.
 */
#ifndef ALGORITHMS_PRIVACY_SHUFFLE_H
#define ALGORITHMS_PRIVACY_SHUFFLE_H

#include <stdbool.h>

/* True when FMT20's condition holds: p >= 2 and
 * eps0 <= log(p / (16 log(4 / delta_s))). */
bool shuffle_fmt_applies(double eps0, double p, double delta_s);

/* The amplified epsilon above (eps0 > 0, p >= 2, 0 < delta_s < 1); NAN
 * outside.  The caller checks shuffle_fmt_applies(). */
double shuffle_fmt_epsilon(double eps0, double p, double delta_s);

/* The delta above for the amplified eps. */
double shuffle_fmt_delta(double eps, double eps0, double p, double delta_s, double delta0);

#endif /* ALGORITHMS_PRIVACY_SHUFFLE_H */
