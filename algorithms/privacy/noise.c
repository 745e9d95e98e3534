/*
 * noise.c - every DP noise draw of the service: exact Bernoulli, discrete
 * Laplace and discrete Gaussian samplers, the lattice front end and the
 * exponential mechanism.  (The continuous polar-method Gaussian left for
 * the tests: tests/support/polar_gaussian.c.)
 *
 * Sources:
 * - C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
 *   Differential Privacy", NeurIPS 2020, arXiv:2004.00010 ("CKS20"):
 *   Algorithm 1 (Bernoulli(exp(-g)), after von Neumann and Forsythe),
 *   Algorithm 2 (discrete Laplace), Algorithm 3 (discrete Gaussian), and
 *   the privacy of N_Z(0, sigma^2) on integer-valued queries (Theorem 4:
 *   Delta^2 / (2 sigma^2)-zCDP).
 * - D. Lemire, "Fast Random Integer Generation in an Interval", ACM TOMACS
 *   29(1), 2019: exact uniform integers by multiply-and-reject.
 * - E. J. Gumbel (1954) / the Gumbel-max trick for the exponential
 *   mechanism; C. Ilvento, "Implementing the Exponential Mechanism with
 *   Base-2 Differential Privacy", CCS 2020, for its floating-point risk.
 * - I. Mironov, "On Significance of the Least Significant Bits for
 *   Differential Privacy", CCS 2012; J. Jin et al., "Are We There Yet?
 *   Timing and Floating-Point Attacks on Differential Privacy Systems",
 *   IEEE S&P 2022: why the integer samplers exist.
 *
 * Exactness.  Every decision of the integer samplers compares integers
 * with a uniform integer: one below n by Lemire's method (the high half of
 * x n for a uniform word x, rejecting the few x that would bias it), or a
 * lazily drawn one (bern_frac_wide(): its leading 24 bits, uniform below
 * a 24-bit bound, almost always decide; the rest is drawn only on a tie).
 * The samplers are CKS20's algorithms line by line, with these changes,
 * each of which preserves the output law exactly:
 *
 * 1. Bernoulli(g / K) for g = a / b is one comparison with a uniform
 *    integer below b K, or, when b K would overflow, the AND of independent
 *    Bernoulli(1 / K) and Bernoulli(a / b) (probabilities multiply).
 * 2. Algorithm 1's chain for Bernoulli(exp(-g)) (K = 1, 2, ... while
 *    Bernoulli(g / K) succeeds; answer "K odd") passes K = j with
 *    probability g^j / j!, and these events are nested.  So ONE uniform x
 *    below N decides the first links when the thresholds N g^j / j! are
 *    integers: below 10! for g = 1 (Bernoulli(exp(-1)), thresholds
 *    10! / j!, links 1..9), below 2 t^2 for the Laplace tilt g = u / t
 *    (thresholds 2 u t and u^2, links 1..2).  Past those links the chain
 *    goes on with fresh draws, as in CKS20.
 * 3. Two Bernoulli(exp(-1)) come from one uniform below (10!)^2 (its
 *    quotient and remainder by 10! are independent and uniform).
 * 4. The discrete Gaussian inlines Algorithm 2 into Algorithm 3.  Algorithm
 *    2's restarts (tilt rejected, or "-0") restart Algorithm 3's loop
 *    instead, which is the same process: nothing drawn before them is
 *    kept.
 * 5. Extra draws that are never used (two Bernoulli(exp(-1)) drawn where
 *    one decides) do not change any law.
 *
 * noise_dgauss_fill_batched() runs the same discrete Gaussian as stages
 * over batches of candidates, with four more law-preserving changes
 * (6-9) and the argument that emitting the accepted candidates in order
 * gives i.i.d. N_Z(0, sigma^2): see "Discrete Gaussian in batches" below.
 *
 * Sizes.  sigma^2 = t m / e with t = floor(sigma) + 1, m < 2^63 and the
 * accept test's denominator 2 m e t < 2^127.  A proposal with |Y| e < 2^63
 * (|Y| <= y_fast) has a numerator (|Y| e - m)^2 < 2^126, computed in
 * 128 bits; with e chosen so that m ~ 2^52 that covers proposals out to
 * ~2000 sigma.  Farther ones (probability < e^-2000, but possible) take
 * the 512-bit path in bigint.c, so no proposal is ever mishandled.  The
 * geometric count V is a 64-bit loop counter that saturates just below
 * 2^64: the one corner where the law is not exact, reached only after 2^64
 * successive successes (probability exp(-2^64), and 2^63 loop iterations
 * of running time).  So |Y| < 2^115 for the Gaussian (t <= 2^51) and
 * < 2^127 for the Laplace (t / s <= 2^52), and every result fits a signed
 * 128-bit integer.  unsigned __int128 is a GCC/Clang extension;
 * the project builds with those two only, on 64-bit targets, and 128-bit
 * integers keep the exact products checkable at a glance.
 *
 * Speed.  Random words are read in blocks of up to 64 into a pool on the
 * stack (one rng_bytes() call per block: a call per word cost ~10x more),
 * split into 32-bit halves and single bits where those suffice, and wiped
 * when the call ends.  Per-parameter constants (Lemire thresholds, the
 * tilt's 2 t^2, the accept test's leading bits) are computed once by the
 * prepare functions.  Most remaining cost is unpredictable branches:
 * every Bernoulli is a coin flip the processor cannot guess.
 *
 * Timing.  The work per sample depends on the noise drawn (how many
 * proposals, how long V is), never on the data: x enters only the
 * rounding and the final addition.  A caller that exposes per-sample
 * timing together with the output would leak about the noise (Jin et al.
 * 2022); runs report only whole-run times over many draws.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "privacy/bigint.h"
#include "privacy/noise.h"

__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

#define U128_MAX (~(u128)0)

/* ---------------------------------------------------------------------------
 * Random word pool.
 */

#define POOL_WORDS 64 /* largest block read at once */
#define POOL_FIRST 4  /* first block: a single sample needs ~6 words */

/* Bytes are handed out from a block in 8- or 4-byte pieces by position,
 * so a 32-bit draw costs no branch beyond the (predictable) refill. */
struct pool {
	struct rng *r;
	size_t pos, len; /* next unused byte, bytes filled */
	size_t next;     /* words in the next block (doubles up to POOL_WORDS) */
	bool failed;     /* the generator failed: stop loops, return zeros */
	unsigned nbits;
	uint64_t bits; /* unused single bits */
	uint64_t w[POOL_WORDS];
};

static void
pool_init(struct pool *p, struct rng *r)
{
	p->r = r;
	p->pos = p->len = 0;
	p->next = POOL_FIRST;
	p->failed = !rng_ok(r);
	p->nbits = 0;
	p->bits = 0;
}

static void
pool_refill(struct pool *p)
{
	p->len = p->next * 8;
	if (p->next < POOL_WORDS)
		p->next *= 2;
	rng_bytes(p->r, p->w, p->len);
	p->pos = 0;
	if (!rng_ok(p->r))
		p->failed = true;
}

/* Bits handed out may be noise: clear them like rng.c clears its buffer.
 * Volatile stores, so the compiler cannot drop them as dead. */
static void
pool_wipe(struct pool *p)
{
	volatile uint64_t *w = p->w;

	for (size_t i = 0; i < p->len / 8; i++)
		w[i] = 0;
	*(volatile uint64_t *)&p->bits = 0;
}

static inline uint64_t
pool_u64(struct pool *p)
{
	uint64_t x;

	if (p->pos + 8 > p->len)
		pool_refill(p);
	memcpy(&x, (const unsigned char *)p->w + p->pos, 8);
	p->pos += 8;
	return x;
}

static inline uint32_t
pool_u32(struct pool *p)
{
	uint32_t x;

	if (p->pos + 4 > p->len)
		pool_refill(p);
	memcpy(&x, (const unsigned char *)p->w + p->pos, 4);
	p->pos += 4;
	return x;
}

static inline unsigned
pool_bit(struct pool *p)
{
	unsigned b;

	if (p->nbits == 0) {
		p->bits = pool_u64(p);
		p->nbits = 64;
	}
	b = (unsigned)(p->bits & 1);
	p->bits >>= 1;
	p->nbits--;
	return b;
}

/* Uniform on [0, 2^s), 1 <= s <= 128. */
static u128
pool_low(struct pool *p, int s)
{
	if (s <= 32)
		return pool_u32(p) & (uint32_t)(((uint64_t)1 << s) - 1);
	if (s < 64)
		return pool_u64(p) & (((uint64_t)1 << s) - 1);
	if (s == 64)
		return pool_u64(p);
	if (s < 128)
		return (u128)(pool_u64(p) & (((uint64_t)1 << (s - 64)) - 1)) << 64 | pool_u64(p);
	return (u128)pool_u64(p) << 64 | pool_u64(p);
}

/* ---------------------------------------------------------------------------
 * Exact uniform integers and Bernoulli trials.
 */

/* Uniform on {0, ..., n - 1}, 1 <= n < 2^32, thr = 2^32 mod n (Lemire
 * 2019: x n = hi 2^32 + lo; hi is uniform once lo < thr is rejected). */
static inline uint32_t
below32_thr(struct pool *p, uint32_t n, uint32_t thr)
{
	uint64_t m = (uint64_t)pool_u32(p) * n;

	while ((uint32_t)m < thr) {
		if (p->failed)
			return 0;
		m = (uint64_t)pool_u32(p) * n;
	}
	return (uint32_t)(m >> 32);
}

/* The same in 64 bits, thr = 2^64 mod n. */
static inline uint64_t
below64_thr(struct pool *p, uint64_t n, uint64_t thr)
{
	u128 m = (u128)pool_u64(p) * n;

	while ((uint64_t)m < thr) {
		if (p->failed)
			return 0;
		m = (u128)pool_u64(p) * n;
	}
	return (uint64_t)(m >> 64);
}

/* Uniform below n, 1 <= n < 2^32; the threshold is computed only in the
 * rare case lo < n (and folded to a constant when n is one). */
static inline uint32_t
below32(struct pool *p, uint32_t n)
{
	uint64_t m = (uint64_t)pool_u32(p) * n;

	if ((uint32_t)m < n) {
		uint32_t thr = -n % n;

		while ((uint32_t)m < thr) {
			if (p->failed)
				return 0;
			m = (uint64_t)pool_u32(p) * n;
		}
	}
	return (uint32_t)(m >> 32);
}

/* Uniform below n >= 1 (32-bit draws up to 2^24, else 64-bit). */
static inline uint64_t
below64(struct pool *p, uint64_t n)
{
	u128 m;

	if (n <= ((uint64_t)1 << 24))
		return below32(p, (uint32_t)n);
	m = (u128)pool_u64(p) * n;
	if ((uint64_t)m < n) {
		uint64_t thr = -n % n;

		while ((uint64_t)m < thr) {
			if (p->failed)
				return 0;
			m = (u128)pool_u64(p) * n;
		}
	}
	return (uint64_t)(m >> 64);
}

/* Lemire threshold for below_pre(): 2^32 mod n if n <= 2^24 (32-bit draws,
 * rejected with probability < 2^-8), else 2^64 mod n (64-bit draws,
 * rejected with probability < n / 2^64). */
static uint64_t
below_thr(uint64_t n)
{
	uint32_t n32 = (uint32_t)n;

	if (n <= ((uint64_t)1 << 24))
		return (0u - n32) % n32;
	return (0 - n) % n;
}

/* Uniform below n >= 1 with thr = below_thr(n) precomputed. */
static inline uint64_t
below_pre(struct pool *p, uint64_t n, uint64_t thr)
{
	if (n <= ((uint64_t)1 << 24))
		return below32_thr(p, (uint32_t)n, (uint32_t)thr);
	return below64_thr(p, n, thr);
}

static inline int
bitlen128(u128 v)
{
	uint64_t hi = (uint64_t)(v >> 64), lo = (uint64_t)v;

	if (hi != 0)
		return 128 - __builtin_clzll(hi);
	return lo != 0 ? 64 - __builtin_clzll(lo) : 0;
}

/* Bernoulli(a / b) for 2^24 < b, a < b, given s = bitlen(b - 1) - 24, bh =
 * (b - 1) >> s (so 2^23 <= bh < 2^24) and thr = 2^32 mod (bh + 1).  A
 * candidate c = x 2^s + l (x uniform below bh + 1, l uniform on [0, 2^s))
 * is uniform on [0, (bh + 1) 2^s), which contains [0, b); c >= b is
 * rejected and the answer is c < a.  x alone decides unless it equals
 * a >> s or bh (probability < 2^-22); only then are the low bits drawn. */
static inline bool
bern_frac_lazy(struct pool *p, u128 a, u128 b, int s, uint32_t bh, uint32_t thr)
{
	uint32_t ah = (uint32_t)(a >> s);

	for (;;) {
		uint32_t x = below32_thr(p, bh + 1, thr);
		u128 c;

		if (x != ah && x != bh)
			return x < ah; /* x < ah: c < a;  x > ah: a < c < b */
		c = (u128)x << s | pool_low(p, s);
		if (c >= b) {
			if (p->failed)
				return false;
			continue;
		}
		return c < a;
	}
}

/* The same with s, bh and thr computed here. */
static bool
bern_frac_wide(struct pool *p, u128 a, u128 b)
{
	int s = bitlen128(b - 1) - 24;
	uint32_t bh = (uint32_t)((b - 1) >> s);

	return bern_frac_lazy(p, a, b, s, bh, -(bh + 1) % (bh + 1));
}

/* Bernoulli(a / b), 0 <= a <= b, b >= 1. */
static inline bool
bern_frac(struct pool *p, u128 a, u128 b)
{
	if (a >= b)
		return true;
	if (b <= ((uint64_t)1 << 24))
		return below32(p, (uint32_t)b) < a;
	return bern_frac_wide(p, a, b);
}

/* Bernoulli(a / (b k)), k >= 1 (change 1 when b k overflows). */
static inline bool
bern_frac_k(struct pool *p, u128 a, u128 b, uint64_t k)
{
	if (b <= U128_MAX / k)
		return bern_frac(p, a, b * k);
	/* both drawn, then combined: the AND of two independent trials */
	return (unsigned)(below64(p, k) == 0) & (unsigned)bern_frac(p, a, b);
}

/* Links K >= k0 of Algorithm 1's chain for g = a / b, once K < k0
 * passed: "K odd" for the first K whose Bernoulli(a / (b K)) fails. */
static bool
bern_exp_chain_from(struct pool *p, u128 a, u128 b, uint64_t k0)
{
	for (uint64_t k = k0;; k++) {
		if (!bern_frac_k(p, a, b, k))
			return k & 1;
		if (p->failed)
			return false;
	}
}

/* Links K >= 3, once K = 1 and 2 passed. */
static bool
bern_exp_chain3(struct pool *p, u128 a, u128 b)
{
	return bern_exp_chain_from(p, a, b, 3);
}

/* Bernoulli(exp(-a / b)) for 0 <= a < b: CKS20 Algorithm 1. */
static bool
bern_exp_frac(struct pool *p, u128 a, u128 b)
{
	if (a == 0 || !bern_frac(p, a, b))
		return true; /* stopped at K = 1 */
	if (!bern_frac_k(p, a, b, 2))
		return false; /* stopped at K = 2 */
	return bern_exp_chain3(p, a, b);
}

/* 10! / j! for j = 0..10: with x uniform below 10!, x < 10! / j! has
 * probability exactly 1 / j! (change 2).  10! < 2^22. */
#define FACT10 3628800u
static const uint32_t fact10_over[11] = {
	3628800, 3628800, 1814400, 604800, 151200, 30240, 5040, 720, 90, 10, 1,
};

/* The chain of exp1_of() once x < 10! / 5! (it passed K = 5). */
static bool
exp1_tail(struct pool *p, uint32_t x)
{
	for (unsigned j = 6; j <= 10; j++) {
		if (x >= fact10_over[j])
			return j & 1; /* the chain stopped at K = j */
	}
	for (uint32_t k = 11;; k++) {
		if (below32(p, k) != 0)
			return k & 1;
		if (p->failed)
			return false;
	}
}

/* Bernoulli(exp(-1)) from x uniform below 10!: Algorithm 1 at g = 1, its
 * chain stopping at the first K with x >= 10! / K!.  The common case (it
 * stops at K <= 5) is computed without branches. */
static inline unsigned
exp1_of(struct pool *p, uint32_t x)
{
	if (x < fact10_over[5])
		return exp1_tail(p, x);
	/* passes K = 1 always, K = j iff x < 10! / j! */
	return (2 + (x < fact10_over[2]) + (x < fact10_over[3]) + (x < fact10_over[4])) & 1;
}

/* Bernoulli(exp(-1)). */
static inline bool
bern_exp1(struct pool *p)
{
	return exp1_of(p, below32(p, FACT10));
}

/* Two independent Bernoulli(exp(-1)) from one word (change 3). */
static inline void
bern_exp1_pair(struct pool *p, unsigned *ret_b1, unsigned *ret_b2)
{
	uint64_t x = below64(p, (uint64_t)FACT10 * FACT10);

	*ret_b1 = exp1_of(p, (uint32_t)(x / FACT10));
	*ret_b2 = exp1_of(p, (uint32_t)(x % FACT10));
}

/* Bernoulli(exp(-q)) for an integer q >= 0: q independent Bernoulli(exp(-1))
 * that must all succeed; stops at the first failure. */
static bool
bern_exp_int(struct pool *p, u128 q)
{
	for (; q > 0; q--) {
		if (!bern_exp1(p) || p->failed)
			return false;
	}
	return true;
}

/* Geometric: the number of Bernoulli(exp(-1)) successes before the first
 * failure, P(V >= v) = exp(-v).  Two trials per round (change 3), so the
 * loop goes on with probability e^-2 only.  See the file comment on
 * 2^64. */
static inline uint64_t
geom_exp1(struct pool *p)
{
	uint64_t v = 0;

	for (;;) {
		unsigned b1, b2;

		bern_exp1_pair(p, &b1, &b2);
		if ((b1 & b2) == 0 || p->failed)
			return v + b1;
		if (v < UINT64_MAX - 2)
			v += 2;
	}
}

/* For c uniform on [0, d), with s, dh, thr as for bern_frac_lazy():
 * [c < t1] + [c < t2], t2 <= t1 < d, from the leading bits unless a tie. */
static inline unsigned
below_count2(struct pool *p, u128 d, int s, uint32_t dh, uint32_t thr, u128 t1, u128 t2)
{
	uint32_t h1 = (uint32_t)(t1 >> s), h2 = (uint32_t)(t2 >> s);

	for (;;) {
		uint32_t x = below32_thr(p, dh + 1, thr);
		u128 c;

		if (x != h1 && x != h2 && x != dh)
			return (x < h1) + (x < h2);
		c = (u128)x << s | pool_low(p, s);
		if (c >= d) {
			if (p->failed)
				return 0;
			continue;
		}
		return (c < t1) + (c < t2);
	}
}

/* The constants of bern_exp_tilt() for scale t (see struct noise_tilt). */
static void
tilt_prepare(uint64_t t, struct noise_tilt *ret)
{
	u128 d = (u128)2 * t * t;

	memset(ret, 0, sizeof(*ret));
	if (t <= ((uint64_t)1 << 31)) {
		ret->d = (uint64_t)d;
		ret->thr = -ret->d % ret->d;
	} else if (t <= ((uint64_t)1 << 62)) {
		ret->s = bitlen128(d - 1) - 24;
		ret->dh = (uint32_t)((d - 1) >> ret->s);
		ret->dthr = -(ret->dh + 1) % (ret->dh + 1);
	} else {
		ret->s = -1; /* 2 t^2 >= 2^125: the plain chain */
	}
}

/* The Laplace tilt Bernoulli(exp(-u / t)), u < t (Algorithm 2's D):
 * Algorithm 1's links 1 and 2 from one uniform x below d = 2 t^2 (change
 * 2: the chain passes K = 1 iff x < 2 u t, K = 2 iff x < u^2).  For
 * t <= 2^31 x is drawn by Lemire's method in 64 bits with the threshold
 * precomputed; above, lazily from its leading 24 bits. */
static inline bool
bern_exp_tilt(struct pool *p, uint64_t u, uint64_t t, const struct noise_tilt *k)
{
	unsigned n;

	if (k->d != 0) {
		uint64_t x = below64_thr(p, k->d, k->thr);

		if (x >= u * u)
			return x >= 2 * u * t; /* stopped at K = 1 (x >= 2 u t) or K = 2 */
		return bern_exp_chain3(p, u, t);
	}
	if (k->s < 0)
		return bern_exp_frac(p, u, t);
	n = below_count2(p, (u128)2 * t * t, k->s, k->dh, k->dthr, (u128)2 * u * t, (u128)u * u);
	if (n < 2)
		return n == 0;
	return bern_exp_chain3(p, u, t);
}

/* ---------------------------------------------------------------------------
 * Public exact primitives.
 */

enum err_code
noise_bernoulli(struct rng *r, uint64_t num, uint64_t den, bool *ret_b, struct err *e)
{
	struct pool p;

	if (den == 0 || num > den)
		return err_set(e, ERR_INVALID, "bernoulli probability must be num / den in [0, 1]");
	pool_init(&p, r);
	*ret_b = bern_frac(&p, num, den);
	pool_wipe(&p);
	return ERR_OK;
}

enum err_code
noise_bernoulli_exp(struct rng *r, uint64_t num, uint64_t den, bool *ret_b, struct err *e)
{
	struct pool p;

	if (den == 0)
		return err_set(e, ERR_INVALID,
			       "bernoulli exponent must be num / den with den >= 1");
	pool_init(&p, r);
	*ret_b = bern_exp_int(&p, num / den) && bern_exp_frac(&p, num % den, den);
	pool_wipe(&p);
	return ERR_OK;
}

/* ---------------------------------------------------------------------------
 * Discrete Laplace: CKS20 Algorithm 2.
 */

static uint64_t
gcd64(uint64_t a, uint64_t b)
{
	while (b != 0) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

enum err_code
noise_dlap_prepare(uint64_t t, uint64_t s, struct dlap_params *ret_p, struct err *e)
{
	struct dlap_params p;
	uint64_t g;

	if (t == 0 || s == 0)
		return err_set(e, ERR_INVALID, "laplace scale must be t / s with t, s >= 1");
	g = gcd64(t, s);
	t /= g;
	s /= g;
	/* t / s in [2^-10, 2^52], compared exactly */
	if ((u128)t << 10 < s || t > (u128)s << 52)
		return err_set(e, ERR_INVALID,
			       "laplace scale %g is outside the supported range [2^-10, 2^52]",
			       (double)t / (double)s);
	memset(&p, 0, sizeof(p));
	p.t = t;
	p.s = s;
	p.scale = (double)t / (double)s;
	p.shift = (s & (s - 1)) == 0 ? (unsigned)__builtin_ctzll(s) : 64;
	p.t_thr = below_thr(t);
	tilt_prepare(t, &p.tilt);
	*ret_p = p;
	return ERR_OK;
}

enum err_code
noise_dlap_prepare_real(double b, struct dlap_params *ret_p, struct err *e)
{
	uint64_t m;
	int ex, q;

	if (!(b >= NOISE_DLAP_SCALE_MIN && b <= NOISE_DLAP_SCALE_MAX))
		return err_set(e, ERR_INVALID,
			       "laplace scale %g is outside the supported range [2^-10, 2^52]", b);
	/* b = m 2^q exactly, m odd */
	m = (uint64_t)ldexp(frexp(b, &ex), 53);
	q = ex - 53;
	while ((m & 1) == 0) {
		m >>= 1;
		q++;
	}
	if (q >= 0)
		return noise_dlap_prepare(m << q, 1, ret_p, e);    /* b <= 2^52: no overflow */
	return noise_dlap_prepare(m, (uint64_t)1 << -q, ret_p, e); /* b >= 2^-10: -q <= 63 */
}

/* One signed sample of Lap_Z(t / s): CKS20 Algorithm 2. */
static i128
dlap_draw(struct pool *p, const struct dlap_params *l)
{
	for (;;) {
		uint64_t u = below_pre(p, l->t, l->t_thr), v;
		u128 x;
		unsigned neg;

		if (!bern_exp_tilt(p, u, l->t, &l->tilt)) { /* D = Bernoulli(exp(-U / t)) */
			if (p->failed)
				return 0;
			continue;
		}
		v = geom_exp1(p);
		x = (u128)l->t * v + u;
		x = l->shift < 64 ? x >> l->shift : x / l->s; /* Y = floor(X / s) */
		neg = pool_bit(p);
		if (p->failed)
			return 0;
		if (neg && x == 0)
			continue; /* -0 would double the mass at 0 */
		return neg ? -(i128)x : (i128)x;
	}
}

static inline int64_t
sat64(i128 v)
{
	if (v > INT64_MAX)
		return INT64_MAX;
	if (v < -INT64_MAX)
		return -INT64_MAX;
	return (int64_t)v;
}

void
noise_dlap_fill(struct rng *r, const struct dlap_params *l, int64_t *out, size_t n)
{
	struct pool p;

	pool_init(&p, r);
	for (size_t i = 0; i < n; i++)
		out[i] = sat64(dlap_draw(&p, l));
	pool_wipe(&p);
}

int64_t
noise_dlap_sample(struct rng *r, const struct dlap_params *l)
{
	int64_t y;

	noise_dlap_fill(r, l, &y, 1);
	return y;
}

/* ---------------------------------------------------------------------------
 * Discrete Gaussian: CKS20 Algorithm 3 with Algorithm 2 inlined.
 */

static inline u128
dg_den(const struct dgauss_params *g)
{
	return (u128)g->den[1] << 64 | g->den[0];
}

static uint64_t
isqrt64(uint64_t x)
{
	/* a floating-point guess, then exact integer correction */
	uint64_t s = (uint64_t)sqrt((double)x);

	while (s > 0 && (u128)s * s > x)
		s--;
	while ((u128)(s + 1) * (s + 1) <= x)
		s++;
	return s;
}

static u128
gcd128(u128 a, u128 b)
{
	while (b != 0) {
		u128 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The common tail of both prepares: t, and mu = m / e in any terms. */
static enum err_code
dgauss_finish(uint64_t t, u128 m, u128 e_, struct dgauss_params *ret_p, struct err *e)
{
	struct dgauss_params p;
	u128 g = gcd128(m, e_), den;

	m /= g;
	e_ /= g;
	if (m == 0 || m > INT64_MAX || e_ > UINT64_MAX || t > ((uint64_t)1 << 51))
		goto out_range;
	den = 2 * m * e_; /* < 2^128: m < 2^63, e < 2^64 */
	if (den > (((u128)1 << 127) - 1) / t)
		goto out_range;
	den *= t;
	memset(&p, 0, sizeof(p));
	p.t = t;
	p.m = (uint64_t)m;
	p.e = (uint64_t)e_;
	p.sigma2 = (double)t * (double)p.m / (double)p.e;
	p.den[0] = (uint64_t)den;
	p.den[1] = (uint64_t)(den >> 64);
	p.y_fast = INT64_MAX / p.e; /* |y e - m| < 2^63 up to here */
	p.t_thr = below_thr(t);
	tilt_prepare(t, &p.tilt);
	if (den > ((u128)1 << 24)) { /* the accept test's lazy Bernoulli */
		p.den_s = bitlen128(den - 1) - 24;
		p.den_bh = (uint32_t)((den - 1) >> p.den_s);
		p.den_bh_thr = -(p.den_bh + 1) % (p.den_bh + 1);
	}
	*ret_p = p;
	return ERR_OK;

out_range:
	return err_set(e, ERR_INVALID,
		       "discrete gaussian sigma^2 has no representation in the supported range");
}

enum err_code
noise_dgauss_prepare(uint64_t num, uint64_t den, struct dgauss_params *ret_p, struct err *e)
{
	uint64_t t;

	if (num == 0 || den == 0)
		return err_set(e, ERR_INVALID, "discrete gaussian sigma^2 must be num / den > 0");
	t = isqrt64(num / den) + 1; /* floor(sigma) + 1 */
	return dgauss_finish(t, num, (u128)den * t, ret_p, e);
}

enum err_code
noise_dgauss_prepare_real(double sigma, struct dgauss_params *ret_p, struct err *e)
{
	uint64_t t, m;
	int ex, ex_mu, q, sh, pe;
	u128 num, den, mm;

	if (!(sigma >= NOISE_DGAUSS_SIGMA_MIN && sigma <= NOISE_DGAUSS_SIGMA_MAX))
		return err_set(
			e, ERR_INVALID,
			"discrete gaussian sigma %g (lattice units) is outside the supported "
			"range [2^-4, 2^50]",
			sigma);
	t = (uint64_t)floor(sigma) + 1;
	m = (uint64_t)ldexp(frexp(sigma, &ex), 53); /* sigma = m 2^q exactly */
	q = ex - 53;
	/* e = 2^pe with mu e ~ 2^52 (mu = sigma^2 / t; the double only picks
	 * the power of two, the value below is exact) */
	frexp(sigma * sigma / (double)t, &ex_mu);
	pe = 52 - ex_mu;
	pe = pe < 0 ? 0 : pe > 62 ? 62 : pe;
	/* m_mu = ceil(sigma^2 2^pe / t) = ceil(m^2 2^sh / t), sh = 2q + pe */
	num = (u128)m * m; /* < 2^106 */
	den = t;
	sh = 2 * q + pe;
	if (sh >= 0) {
		if (sh > 20)
			goto out_range; /* cannot happen in range; keeps num < 2^128 */
		num <<= sh;
	} else {
		if (-sh > 127 - bitlen128(den))
			goto out_range;
		den <<= -sh;
	}
	mm = num / den + (num % den != 0); /* rounded UP: sigma^2 used >= sigma^2 */
	return dgauss_finish(t, mm, (u128)1 << pe, ret_p, e);

out_range:
	return err_set(e, ERR_INVALID,
		       "discrete gaussian sigma has no representation in the supported range");
}

/* Bernoulli(exp(-a / den)), a < den: Algorithm 1 with links 1 and 2 drawn
 * lazily from the precomputed leading bits of den (den K - 1 for K = 2 has
 * the same 24 leading bits, one place higher). */
static inline bool
dgauss_exp_frac(struct pool *p, const struct dgauss_params *g, u128 a)
{
	u128 den = dg_den(g);

	if (a == 0)
		return true;
	if (g->den_s == 0)
		return bern_exp_frac(p, a, den);
	if (!bern_frac_lazy(p, a, den, g->den_s, g->den_bh, g->den_bh_thr))
		return true; /* stopped at K = 1 */
	if (!bern_frac_lazy(p, a, 2 * den, g->den_s + 1, g->den_bh, g->den_bh_thr))
		return false; /* stopped at K = 2 */
	return bern_exp_chain3(p, a, den);
}

/* Algorithm 3's test for the proposal y = |Y|, Bernoulli(exp(-G)) with
 * G = (y - mu)^2 / (2 sigma^2) = (y e - m)^2 / (2 m e t), the 512-bit way. */
static bool
dgauss_accept_wide(struct pool *p, const struct dgauss_params *g, u128 y)
{
	struct bigint a, b, num, quo, rem;
	u128 den = dg_den(g);
	uint64_t hi, lo;

	bigint_set(&a, (uint64_t)(y >> 64), (uint64_t)y);
	bigint_set(&b, 0, g->e);
	bigint_mul(&a, &a, &b); /* y e < 2^179 */
	bigint_set(&b, 0, g->m);
	if (bigint_cmp(&a, &b) >= 0)
		bigint_sub(&a, &a, &b);
	else
		bigint_sub(&a, &b, &a);
	bigint_mul(&num, &a, &a); /* (y e - m)^2 < 2^358 */
	bigint_set(&b, (uint64_t)(den >> 64), (uint64_t)den);
	bigint_divmod(&quo, &rem, &num, &b);
	while (!bigint_is_zero(&quo)) { /* Bernoulli(exp(-floor G)) */
		if (!bern_exp1(p) || p->failed)
			return false;
		bigint_dec(&quo);
	}
	bigint_get128(&rem, &hi, &lo); /* rem < den < 2^127 */
	return dgauss_exp_frac(p, g, (u128)hi << 64 | lo);
}

/* The same for y <= y_fast, in 128 bits. */
static inline bool
dgauss_accept(struct pool *p, const struct dgauss_params *g, u128 y)
{
	u128 den = dg_den(g), num, q;
	uint64_t ye, a;

	if (y > g->y_fast)
		return dgauss_accept_wide(p, g, y);
	ye = (uint64_t)y * g->e; /* < 2^63 */
	a = ye >= g->m ? ye - g->m : g->m - ye;
	num = (u128)a * a; /* < 2^126 */
	if (num >= den) {  /* G >= 1: about one proposal in ten */
		if ((den >> 64) == 0) {
			q = num / den;
		} else {
			/* den >= 2^64, so q < 2^62: a quotient by the leading
			 * 63 bits of den (rounded up) is at most two short */
			int sh = bitlen128(den) - 63;

			q = (num >> sh) / (uint64_t)((den >> sh) + 1);
		}
		num -= q * den;
		while (num >= den) {
			num -= den;
			q++;
		}
		if (!bern_exp_int(p, q))
			return false;
	}
	return dgauss_exp_frac(p, g, num);
}

static i128
dgauss_draw(struct pool *p, const struct dgauss_params *g)
{
	for (;;) {
		uint64_t u = below_pre(p, g->t, g->t_thr), v;
		u128 y;
		unsigned neg;

		/* Algorithm 2: D = Bernoulli(exp(-U / t)) */
		if (!bern_exp_tilt(p, u, g->t, &g->tilt)) {
			if (p->failed)
				return 0;
			continue;
		}
		v = geom_exp1(p);
		y = (u128)g->t * v + u; /* < 2^115: t <= 2^51 */
		neg = pool_bit(p);
		if (p->failed)
			return 0;
		if (neg && y == 0)
			continue; /* Algorithm 2's "-0" restart */
		if (dgauss_accept(p, g, y))
			return neg ? -(i128)y : (i128)y;
		if (p->failed)
			return 0;
	}
}

void
noise_dgauss_fill(struct rng *r, const struct dgauss_params *g, int64_t *out, size_t n)
{
	struct pool p;

	pool_init(&p, r);
	for (size_t i = 0; i < n; i++)
		out[i] = sat64(dgauss_draw(&p, g));
	pool_wipe(&p);
}

void
noise_dgauss_fill_wide(struct rng *r, const struct dgauss_params *g, struct noise_i128 *out,
		       size_t n)
{
	struct pool p;

	pool_init(&p, r);
	for (size_t i = 0; i < n; i++) {
		i128 y = dgauss_draw(&p, g);

		out[i].lo = (uint64_t)y;
		out[i].hi = (int64_t)(y >> 64); /* |y| < 2^115: arithmetic shift keeps the sign */
	}
	pool_wipe(&p);
}

int64_t
noise_dgauss_sample(struct rng *r, const struct dgauss_params *g)
{
	int64_t y;

	noise_dgauss_fill(r, g, &y, 1);
	return y;
}

/* ---------------------------------------------------------------------------
 * Discrete Gaussian in batches: noise_dgauss_fill_batched().
 *
 * The same algorithm as dgauss_draw() (CKS20 Algorithm 3 with Algorithm 2
 * inlined), reorganised for fills of many samples.  A candidate is one
 * pass of dgauss_draw()'s loop: U uniform below t, the tilt
 * Bernoulli(exp(-U / t)), V, the sign, the "-0" rule and the accept test.
 * Candidates are run in batches of up to DGB_MAX, stage by stage over
 * arrays: stage 1 (dgb_stage1) draws U and decides the tilt for every
 * candidate of the batch from one 64-bit word each; stages 2 and 3
 * (dgb_stage23) draw V and the sign from one word and decide the accept
 * test from another for each of the tilt's survivors.  Each stage decides
 * the common cases with arithmetic and compares only (no branch on a
 * random value), records each candidate's fate in an array and keeps the
 * survivors in order (a branch-free compaction, idx[n] = i; n += ok).  The
 * rare cases (a tie in a lazily drawn comparison, a Bernoulli chain past
 * the links drawn in the batch, V >= 2 or a Bernoulli(exp(-1)) past K = 5,
 * G >= 1, a proposal beyond y_fast) are finished one candidate at a time
 * by the scalar code above, with fresh draws from the pool: per sample,
 * about 0.09 tilt finishes, 0.19 V finishes and 0.17 accept-test
 * finishes (0.12 of them G >= 1) against 2.1 candidates.
 *
 * Why the law is exactly N_Z(0, sigma^2).  (a) Every candidate's decisions
 * use only its own draws, all fresh (bits are never reused between
 * candidates; which bits a candidate gets depends on nothing it could
 * see), so candidates are i.i.d. trials: each is accepted with the same
 * probability, and an accepted one's value has the law of dgauss_draw()'s
 * output.  (b) The survivors are emitted in candidate order, and the
 * value of the k-th accepted candidate is independent of which earlier
 * candidates were accepted and of how many candidates a batch holds, so
 * the outputs are i.i.d. N_Z(0, sigma^2) (the first n accepted trials of
 * an i.i.d. sequence).  Accepted candidates left over at the end are
 * discarded unseen (change 5).  Emitting the fast-path survivors before
 * the slow-path ones would NOT be exact (the two groups have different
 * conditional laws), which is why every stage keeps candidate order.
 * (c) Beyond changes 1-5, stage by stage:
 *  6. A uniform drawn by Lemire's method that falls in the rejected
 *     region (lo < thr) rejects the whole candidate instead of being
 *     drawn again; so does a lazily drawn uniform whose leading part
 *     equals its bound's and whose low bits take it past the bound.
 *     A candidate is accepted iff ALL its uniforms are valid AND its
 *     tests pass; given validity its uniforms are independent and exactly
 *     uniform on their ranges, i.e. the candidate is one pass of
 *     dgauss_draw()'s loop, and validity is an event independent of that
 *     pass's outcome, so accepted candidates have the scalar law.  This
 *     needs the validity of every uniform the candidate drew to be
 *     checked on EVERY path that accepts (a rejection needs no check),
 *     also for uniforms the path did not use: checking a lazy uniform's
 *     bound only where its comparison was reached made the check depend
 *     on y (found by test_dgauss_batched_ties, see the tests).
 *  7. The tilt's first three links come from ONE uniform below 6 t^3
 *     (change 2 with N = 3! t^3: the chain passes K = j iff it is below
 *     6 t^3 g^j / j! for g = U / t, i.e. below 6 t^2 U, 3 t U^2, U^3; it
 *     stops at K = 1, 2 or 3, or goes on from K = 4 with fresh draws).
 *     That uniform is drawn lazily as in below_count2(): its 24 leading
 *     bits (uniform below ((6 t^3 - 1) >> s) + 1) decide unless they
 *     equal a threshold's or the bound's, and only such a tie draws the
 *     low s bits (scalar).  U itself is a 32-bit Lemire draw below t.
 *  8. V's first two Bernoulli(exp(-1)) and the sign come from ONE uniform
 *     below 2 (10!)^2: its parity and the quotient and remainder of its
 *     half by 10! are independent and uniform (change 3).  If both trials
 *     succeed, V goes on with geom_exp1() (the geometric is memoryless).
 *  9. The accept test's links K = 1 and K = 2 (Algorithm 1 on G = num /
 *     den < 1: Bernoulli(G), then Bernoulli(G / 2)) are two lazy
 *     uniforms from one word, drawn for every candidate; the second is
 *     unused when the first link decides (change 5).  A candidate whose V
 *     was finished by the scalar code uses its own word afterwards: it was
 *     drawn for it and never looked at, so it is still fresh.
 * Which words a candidate reads (their position in the stream depends on
 * how many candidates of its batch survived stage 1) is decided before
 * they are read and never by their values, so each read is a fresh
 * uniform word.
 * No floating point is used; every decision compares integers exactly, as
 * in the scalar code.  The work depends on the noise drawn only.
 *
 * Supported for t <= 2^30 (sigma < 2^30 - 1: U is a 32-bit draw, 6 t^2
 * fits 64 bits and 6 t^3 < 2^93); above, the fill draws sample by sample
 * with dgauss_draw(), as noise_dgauss_fill_wide().
 */

#define DGB_MAX  256 /* candidates per batch */
#define DGB_LEAD 24  /* bits of a lazily drawn uniform's leading part */

/* The 2 (10!)^2 of change 8, below 2^45. */
#define DGB_N2 ((uint64_t)2 * FACT10 * FACT10)

/* Per-fill constants. */
struct dgb_consts {
	uint64_t t;         /* the Laplace scale, <= 2^30 */
	uint32_t t_thr;     /* 2^32 mod t */
	uint64_t t6, t3;    /* 6 t^2 (< 2^63) and 3 t */
	u128 d;             /* 6 t^3, the tilt's range (change 7) */
	int ds;             /* bitlen(d - 1) - 24 if d > 2^24, else 0 */
	uint32_t dh, dthr;  /* (d - 1) >> ds, 2^32 mod (dh + 1) */
	uint64_t n2_thr;    /* 2^64 mod DGB_N2 */
	u128 den;           /* 2 m e t */
	int s1, s2;         /* the accept test's links: shift of den, 2 den */
	uint32_t bh1, thr1; /* (den - 1) >> s1, 2^32 mod (bh1 + 1) */
	uint32_t bh2, thr2; /* (2 den - 1) >> s2, 2^32 mod (bh2 + 1) */
};

/* Per-batch work arrays (on the stack; wiped at the end of the fill). */
struct dgb_work {
	uint64_t w[2 * DGB_MAX]; /* one stage's random words */
	uint64_t v[DGB_MAX];     /* V of stage 2's survivors */
	uint32_t u[DGB_MAX];     /* U (stage 1: per candidate; then compacted) */
	uint32_t x[DGB_MAX];     /* a lazily drawn leading part, for the scalar finish */
	uint32_t x2[DGB_MAX];
	uint32_t ax1[DGB_MAX], ax2[DGB_MAX]; /* the accept test's leading parts */
	uint8_t neg[DGB_MAX];                /* the sign */
	uint8_t st[DGB_MAX];                 /* fate: 1 survives the stage, 0 rejected */
	uint16_t fb[DGB_MAX];                /* candidates the scalar code finishes */
	uint16_t act[DGB_MAX];               /* stage 2: candidates whose V is still counting */
	u128 num[DGB_MAX];                   /* the accept test's numerator (y e - m)^2 */
};

/* lead: the width of the lazily drawn leading parts (DGB_LEAD; tests pass
 * a small one to make ties frequent). */
static void
dgb_prepare(const struct dgauss_params *g, int lead, struct dgb_consts *c)
{
	u128 den = dg_den(g), one = 1;

	memset(c, 0, sizeof(*c));
	c->t = g->t;
	c->t_thr = (uint32_t)(-(uint32_t)g->t % (uint32_t)g->t);
	c->t6 = 6 * g->t * g->t;
	c->t3 = 3 * g->t;
	c->d = (u128)c->t6 * g->t;
	if (c->d > one << lead) {
		c->ds = bitlen128(c->d - 1) - lead;
		c->dh = (uint32_t)((c->d - 1) >> c->ds);
	} else {
		c->dh = (uint32_t)(c->d - 1);
	}
	c->dthr = -(c->dh + 1) % (c->dh + 1);
	c->n2_thr = -DGB_N2 % DGB_N2;
	c->den = den;
	if (den > one << lead) {
		c->s1 = bitlen128(den - 1) - lead;
		c->bh1 = (uint32_t)((den - 1) >> c->s1);
		c->s2 = c->s1 + 1; /* 2 den - 1 has the same leading bits */
		c->bh2 = c->bh1;
	} else {
		c->bh1 = (uint32_t)(den - 1);
		if (2 * den > one << lead) {
			c->s2 = bitlen128(2 * den - 1) - lead;
			c->bh2 = (uint32_t)((2 * den - 1) >> c->s2);
		} else {
			c->bh2 = (uint32_t)(2 * den - 1);
		}
	}
	c->thr1 = -(c->bh1 + 1) % (c->bh1 + 1);
	c->thr2 = -(c->bh2 + 1) % (c->bh2 + 1);
}

/* n fresh words for one stage, straight from the generator. */
static void
dgb_words(struct pool *p, uint64_t *w, size_t n)
{
	rng_bytes(p->r, w, n * sizeof(*w));
	if (!rng_ok(p->r))
		p->failed = true;
}

/* Stage 1 for nb candidates: U and the tilt.  Returns the survivors,
 * their U compacted in order into wk->u. */
static size_t
dgb_stage1(struct pool *p, const struct dgb_consts *c, struct dgb_work *wk, size_t nb)
{
	size_t nf = 0, n = 0;

	dgb_words(p, wk->w, nb);
	for (size_t i = 0; i < nb; i++) {
		uint64_t mu = (uint64_t)(uint32_t)wk->w[i] * c->t;
		uint64_t mx = (wk->w[i] >> 32) * ((uint64_t)c->dh + 1);
		uint32_t u = (uint32_t)(mu >> 32), x = (uint32_t)(mx >> 32);
		unsigned ok = ((uint32_t)mu >= c->t_thr) & ((uint32_t)mx >= c->dthr);
		uint64_t u2 = (uint64_t)u * u;
		/* the chain passes K = j iff the uniform below 6 t^3 is below
		 * 6 t^3 g^j / j! (g = u / t): 6 t^2 u, 3 t u^2, u^3 */
		uint32_t h1 = (uint32_t)(((u128)c->t6 * u) >> c->ds);
		uint32_t h2 = (uint32_t)(((u128)c->t3 * u2) >> c->ds);
		uint32_t h3 = (uint32_t)(((u128)u2 * u) >> c->ds);
		unsigned tie = (c->ds != 0) & ((x == h1) | (x == h2) | (x == h3) | (x == c->dh));
		unsigned cnt = (x < h1) + (x < h2) + (x < h3);

		wk->u[i] = u;
		wk->x[i] = x;
		/* the chain stopped at K = cnt + 1: accept iff that is odd */
		wk->st[i] = (uint8_t)(ok & (tie ^ 1) & ((cnt & 1) ^ 1) & (cnt != 3));
		wk->fb[nf] = (uint16_t)i;
		nf += ok & (tie | (cnt == 3));
	}
	for (size_t j = 0; j < nf && !p->failed; j++) {
		size_t i = wk->fb[j];
		uint64_t u = wk->u[i], u2 = u * u;
		u128 t1 = (u128)c->t6 * u, t2 = (u128)c->t3 * u2, t3 = (u128)u2 * u;
		unsigned cnt = 3;

		if (c->ds != 0 &&
		    (wk->x[i] == (uint32_t)(t1 >> c->ds) || wk->x[i] == (uint32_t)(t2 >> c->ds) ||
		     wk->x[i] == (uint32_t)(t3 >> c->ds) || wk->x[i] == c->dh)) {
			u128 cc = (u128)wk->x[i] << c->ds | pool_low(p, c->ds);

			if (cc >= c->d)
				continue; /* change 6 */
			cnt = (cc < t1) + (cc < t2) + (cc < t3);
		}
		wk->st[i] =
			(uint8_t)(cnt == 3 ? bern_exp_chain_from(p, u, c->t, 4) : (cnt & 1) == 0);
	}
	for (size_t i = 0; i < nb; i++) {
		wk->u[n] = wk->u[i];
		n += wk->st[i];
	}
	return n;
}

/* Stage 2's V for one candidate from the word w (change 8): *ret_v is
 * decided unless the result is 0 (a tail or both trials succeeded; the
 * parts are kept in *ret_x1, *ret_x2 for dgb_v_finish()).  *ret_neg is the
 * sign, *ret_ok 0 if the uniform was rejected (change 6). */
static inline unsigned
dgb_v(uint64_t w, uint64_t n2_thr, uint64_t *ret_v, unsigned *ret_neg, unsigned *ret_ok,
      uint32_t *ret_x1, uint32_t *ret_x2)
{
	u128 mm = (u128)w * DGB_N2;
	uint64_t r = (uint64_t)(mm >> 64);
	uint32_t x1 = (uint32_t)((r >> 1) / FACT10), x2 = (uint32_t)((r >> 1) % FACT10);
	unsigned tail1 = x1 < fact10_over[5], tail2 = x2 < fact10_over[5];
	/* exp1_of() without its tail: passes K = 1 always, K = j iff
	 * x < 10! / j!, and is 1 iff it stops at an odd K */
	unsigned b1 =
		(2 + (x1 < fact10_over[2]) + (x1 < fact10_over[3]) + (x1 < fact10_over[4])) & 1;
	unsigned b2 =
		(2 + (x2 < fact10_over[2]) + (x2 < fact10_over[3]) + (x2 < fact10_over[4])) & 1;

	*ret_ok = (uint64_t)mm >= n2_thr;
	*ret_neg = (unsigned)(r & 1);
	*ret_v = b1;
	*ret_x1 = x1;
	*ret_x2 = x2;
	/* decided: the first trial failed, or the first succeeded and the
	 * second failed */
	return (tail1 ^ 1) & ((b1 == 0) | ((tail2 ^ 1) & (b2 == 0)));
}

/* V when dgb_v() did not decide it: exp1_of() on x1, then x2 (their
 * tails with fresh draws), then geom_exp1() afresh (memoryless). */
static uint64_t
dgb_v_finish(struct pool *p, uint32_t x1, uint32_t x2)
{
	uint64_t v;

	if (!exp1_of(p, x1))
		return 0;
	if (!exp1_of(p, x2))
		return 1;
	v = geom_exp1(p);
	return v < UINT64_MAX - 2 ? v + 2 : v; /* the file comment's saturation */
}

/* The accept test's links K = 1 and 2 from the word w (change 9) for the
 * proposal y: 1 accept, 0 reject, 2 undecided (dgb_accept_finish() with
 * *ret_num, *ret_x1, *ret_x2). */
static inline unsigned
dgb_test(const struct dgauss_params *g, const struct dgb_consts *c, uint64_t w, u128 y,
	 u128 *ret_num, uint32_t *ret_x1, uint32_t *ret_x2)
{
	uint64_t ye = (uint64_t)y * g->e; /* < 2^63 unless y > y_fast */
	uint64_t a = ye >= g->m ? ye - g->m : g->m - ye;
	u128 num = (u128)a * a;
	unsigned slow = (y > g->y_fast) | (num >= c->den);
	uint64_t mx1 = (uint64_t)(uint32_t)w * ((uint64_t)c->bh1 + 1);
	uint64_t mx2 = (w >> 32) * ((uint64_t)c->bh2 + 1);
	uint32_t x1 = (uint32_t)(mx1 >> 32), x2 = (uint32_t)(mx2 >> 32);
	/* num >> s2 = (num >> s1) >> (s2 - s1) when num < den (else unused) */
	uint32_t ah1 = (uint32_t)(num >> c->s1), ah2 = ah1 >> (c->s2 - c->s1);
	unsigned ok = ((uint32_t)mx1 >= c->thr1) & ((uint32_t)mx2 >= c->thr2);
	unsigned tie1 = (c->s1 != 0) & ((x1 == ah1) | (x1 == c->bh1));
	unsigned tie2 = (c->s2 != 0) & ((x2 == ah2) | (x2 == c->bh2));
	unsigned pass1 = x1 < ah1, pass2 = x2 < ah2;
	/* decided here: accepted at K = 1 (both uniforms valid: a leading
	 * part equal to the bound's needs its low bits, in the finish), or
	 * rejected at K = 2 (validity does not matter for a rejection) */
	unsigned bnd2 = (c->s2 != 0) & (x2 == c->bh2);
	unsigned acc = ok & ((slow | tie1 | pass1 | bnd2) ^ 1);
	unsigned rej = (ok ^ 1) | ((slow | tie1 | tie2 | (pass1 ^ 1) | pass2) ^ 1);

	*ret_num = num;
	*ret_x1 = x1;
	*ret_x2 = x2;
	return acc | (((acc | rej) ^ 1) << 1);
}

/* The scalar finish of the accept test for candidate i (the cases of
 * change 9 that the leading bits do not decide). */
static bool
dgb_accept_finish(struct pool *p, const struct dgauss_params *g, const struct dgb_consts *c,
		  const struct dgb_work *wk, size_t i, u128 y)
{
	u128 num = wk->num[i], c1 = 0, c2 = 0;
	unsigned have1 = 0, have2 = 0;

	/* First the validity of BOTH lazily drawn uniforms (change 6): a
	 * leading part equal to the bound's may stand for a value past it,
	 * which rejects the candidate whatever path it takes below, so that
	 * the rejection's probability does not depend on y */
	if (c->s1 != 0 && wk->ax1[i] == c->bh1) {
		c1 = (u128)wk->ax1[i] << c->s1 | pool_low(p, c->s1);
		have1 = 1;
		if (c1 >= c->den)
			return false;
	}
	if (c->s2 != 0 && wk->ax2[i] == c->bh2) {
		c2 = (u128)wk->ax2[i] << c->s2 | pool_low(p, c->s2);
		have2 = 1;
		if (c2 >= 2 * c->den)
			return false;
	}
	if (y > g->y_fast || num >= c->den)
		return dgauss_accept(p, g, y); /* G >= 1 or a far proposal: fresh draws */
	if (c->s1 != 0 && (have1 || wk->ax1[i] == (uint32_t)(num >> c->s1))) {
		/* link 1 tied: the low bits decide */
		if (!have1)
			c1 = (u128)wk->ax1[i] << c->s1 | pool_low(p, c->s1);
		if (c1 >= num)
			return true; /* stopped at K = 1 */
	} else if (wk->ax1[i] >= (uint32_t)(num >> c->s1)) {
		return true; /* stopped at K = 1 (reached here for link 2's bound) */
	}
	/* link 1 passed */
	if (c->s2 != 0 && (have2 || wk->ax2[i] == (uint32_t)(num >> c->s2))) {
		if (!have2)
			c2 = (u128)wk->ax2[i] << c->s2 | pool_low(p, c->s2);
		if (c2 >= num)
			return false; /* stopped at K = 2 */
	} else if (wk->ax2[i] >= (uint32_t)(num >> c->s2)) {
		return false; /* stopped at K = 2 (reached here for a bound) */
	}
	return bern_exp_chain3(p, num, c->den); /* passed K = 1 and 2 */
}

/* Stages 2 and 3 for the n1 survivors of stage 1, in one pass: V, the
 * sign and the "-0" rule from one word (dgb_v()), the accept test from a
 * second (dgb_test()).  A candidate whose V is not decided by its word
 * has V finished by the scalar code and is then tested with its own
 * (unused, so fresh) second word.  Accepted values are written to out in
 * order, at most n - *filled of them. */
static void
dgb_stage23(struct pool *p, const struct dgauss_params *g, const struct dgb_consts *c,
	    struct dgb_work *wk, size_t n1, struct noise_i128 *out, size_t n, size_t *filled)
{
	size_t nf = 0, nv = 0, k = *filled;

	dgb_words(p, wk->w, 2 * n1);
	for (size_t i = 0; i < n1; i++) {
		uint64_t v;
		unsigned neg, ok, done, code, good;
		u128 y;

		done = dgb_v(wk->w[i], c->n2_thr, &v, &neg, &ok, &wk->x[i], &wk->x2[i]);
		y = (u128)c->t * v + wk->u[i];
		code = dgb_test(g, c, wk->w[n1 + i], y, &wk->num[i], &wk->ax1[i], &wk->ax2[i]);
		good = ok & done & ((neg & (y == 0)) ^ 1); /* "-0" restarts */
		wk->v[i] = v;
		wk->neg[i] = (uint8_t)neg;
		wk->st[i] = (uint8_t)(good & (code == 1));
		wk->fb[nf] = (uint16_t)i;
		nf += good & (code == 2);
		wk->act[nv] = (uint16_t)i;
		nv += ok & (done ^ 1);
	}
	for (size_t j = 0; j < nv && !p->failed; j++) {
		size_t i = wk->act[j];
		uint64_t v = dgb_v_finish(p, wk->x[i], wk->x2[i]);
		u128 y = (u128)c->t * v + wk->u[i];
		unsigned code;

		wk->v[i] = v;
		if (wk->neg[i] && y == 0)
			continue; /* "-0" */
		code = dgb_test(g, c, wk->w[n1 + i], y, &wk->num[i], &wk->ax1[i], &wk->ax2[i]);
		wk->st[i] =
			(uint8_t)(code == 1 || (code == 2 && dgb_accept_finish(p, g, c, wk, i, y)));
	}
	for (size_t j = 0; j < nf && !p->failed; j++) {
		size_t i = wk->fb[j];

		wk->st[i] = (uint8_t)dgb_accept_finish(p, g, c, wk, i,
						       (u128)c->t * wk->v[i] + wk->u[i]);
	}
	if (p->failed)
		return;
	for (size_t i = 0; i < n1 && k < n; i++) {
		u128 mask = -(u128)wk->neg[i]; /* the sign without a branch */
		u128 y = (((u128)c->t * wk->v[i] + wk->u[i]) ^ mask) - mask;

		out[k].lo = (uint64_t)y;
		out[k].hi = (int64_t)(y >> 64);
		k += wk->st[i];
	}
	*filled = k;
}

static void
dgb_wipe(struct dgb_work *wk)
{
	volatile unsigned char *b = (volatile unsigned char *)wk;

	for (size_t i = 0; i < sizeof(*wk); i++)
		b[i] = 0;
}

static void
dgb_fill(struct rng *r, const struct dgauss_params *g, int lead, struct noise_i128 *out, size_t n)
{
	struct dgb_consts c;
	struct dgb_work wk;
	struct pool p;
	size_t filled = 0;

	if (g->t > ((uint64_t)1 << 30)) {
		noise_dgauss_fill_wide(r, g, out, n);
		return;
	}
	pool_init(&p, r);
	dgb_prepare(g, lead, &c);
	while (filled < n && !p.failed) {
		/* about 2 candidates per sample: a public size, from n only */
		size_t left = n - filled;
		size_t nb = left < (DGB_MAX - 16) / 2 ? 2 * left + 16 : DGB_MAX;
		size_t n1 = dgb_stage1(&p, &c, &wk, nb);

		if (n1 > 0 && !p.failed)
			dgb_stage23(&p, g, &c, &wk, n1, out, n, &filled);
	}
	if (p.failed) {
		for (size_t i = 0; i < n; i++)
			out[i].lo = 0, out[i].hi = 0;
	}
	dgb_wipe(&wk);
	pool_wipe(&p);
}

void
noise_dgauss_fill_batched(struct rng *r, const struct dgauss_params *g, struct noise_i128 *out,
			  size_t n)
{
	dgb_fill(r, g, DGB_LEAD, out, n);
}

#ifdef DPOPT_TESTING
void
noise_dgauss_fill_batched_lead(struct rng *r, const struct dgauss_params *g, int lead,
			       struct noise_i128 *out, size_t n)
{
	dgb_fill(r, g, lead < 2 ? 2 : lead > DGB_LEAD ? DGB_LEAD : lead, out, n);
}
#endif

/* ---------------------------------------------------------------------------
 * Lattice front end.
 */

/* The rounding's increase per unit of gamma, rounded up: sqrt(d), d or 1.
 * *ret_c is set on ERR_OK only; gcc -O3 cannot see that "return err_set(...)"
 * is never ERR_OK, so its callers start c at +inf, a value every check
 * refuses (-Wmaybe-uninitialized). */
static enum err_code
lattice_factor(enum noise_norm norm, double sensitivity, size_t d, double *ret_c, struct err *e)
{
	double c;

	if (!(isfinite(sensitivity) && sensitivity > 0.0))
		return err_set(e, ERR_INVALID, "sensitivity must be a finite positive number");
	if (d == 0 || d > ((size_t)1 << 53))
		return err_set(e, ERR_INVALID, "dimension must be in [1, 2^53]");
	switch (norm) {
	case NOISE_NORM_L2:
		c = sqrt((double)d); /* correctly rounded; make it an upper bound */
		if (fma(c, c, -(double)d) < 0.0)
			c = nextafter(c, INFINITY);
		break;
	case NOISE_NORM_L1:
		c = (double)d;
		break;
	case NOISE_NORM_LINF:
		c = 1.0;
		break;
	default:
		return err_set(e, ERR_INVALID, "unknown norm");
	}
	*ret_c = c;
	return ERR_OK;
}

enum err_code
noise_lattice_step(enum noise_norm norm, double sensitivity, size_t d, int *ret_k, struct err *e)
{
	enum err_code rc;
	double c = INFINITY, bound; /* set by lattice_factor on ERR_OK (see below) */
	int k;

	rc = lattice_factor(norm, sensitivity, d, &c, e);
	if (rc != ERR_OK)
		return rc;
	/* a hair below 1e-6 so that the rounded-up sum stays <= (1 + 1e-6) Delta */
	bound = NOISE_LATTICE_SLACK * (1.0 - 0x1p-30) * sensitivity;
	if (!(bound > 0.0))
		return err_set(e, ERR_INVALID, "sensitivity %g is too small", sensitivity);
	if (!isfinite(c / bound))
		return err_set(e, ERR_INVALID, "sensitivity %g is too small", sensitivity);
	frexp(c / bound, &k); /* c / bound < 2^k: a first guess, fixed exactly below */
	while (k > NOISE_LATTICE_K_MIN && ldexp(c, -(k - 1)) <= bound)
		k--;
	while (k < NOISE_LATTICE_K_MAX && ldexp(c, -k) > bound)
		k++;
	if (ldexp(c, -k) > bound)
		return err_set(e, ERR_INVALID,
			       "sensitivity %g needs a lattice step outside 2^[%d, %d]",
			       sensitivity, -NOISE_LATTICE_K_MAX, -NOISE_LATTICE_K_MIN);
	*ret_k = k;
	return ERR_OK;
}

enum err_code
noise_lattice_sensitivity(enum noise_norm norm, double sensitivity, size_t d, int k, double *ret,
			  struct err *e)
{
	enum err_code rc;
	double c = INFINITY, s; /* set by lattice_factor on ERR_OK (see above) */

	rc = lattice_factor(norm, sensitivity, d, &c, e);
	if (rc != ERR_OK)
		return rc;
	if (k < NOISE_LATTICE_K_MIN || k > NOISE_LATTICE_K_MAX)
		return err_set(e, ERR_INVALID, "lattice exponent %d is outside [%d, %d]", k,
			       NOISE_LATTICE_K_MIN, NOISE_LATTICE_K_MAX);
	/* c 2^-k is exact (c is already rounded up); the sum is rounded to
	 * nearest, so one step up makes it an upper bound */
	s = nextafter(sensitivity + ldexp(c, -k), INFINITY);
	if (!isfinite(s))
		return err_set(e, ERR_INVALID, "inflated sensitivity overflows");
	*ret = s;
	return ERR_OK;
}

/* Every x[i] finite with |x[i] 2^k| <= NOISE_LATTICE_MAX, before anything
 * is touched. */
static enum err_code
lattice_check(const double *x, size_t d, int k, struct err *e)
{
	double scale = ldexp(1.0, k); /* exact products; overflow gives inf */

	if (k < NOISE_LATTICE_K_MIN || k > NOISE_LATTICE_K_MAX)
		return err_set(e, ERR_INVALID, "lattice exponent %d is outside [%d, %d]", k,
			       NOISE_LATTICE_K_MIN, NOISE_LATTICE_K_MAX);
	for (size_t i = 0; i < d; i++) {
		if (!(fabs(x[i]) * scale <= NOISE_LATTICE_MAX))
			return err_set(e, ERR_NUMERIC,
				       "value is not finite or too large for the noise lattice");
	}
	return ERR_OK;
}

/* Rounding to the nearest lattice point (halves away from zero): a fixed
 * function of x, so it moves a coordinate by at most gamma / 2 on each
 * side of a neighbouring pair.  scale = 2^k, so x * scale is exact
 * (|k| <= 512; lattice_check() bounded the result by 2^62, and a result
 * below 2^-1022 rounds to 0 whatever its low bits). */
static inline int64_t
lattice_round(double x, double scale)
{
	return (int64_t)round(x * scale);
}

/* gamma (z + n), inv = 2^-k: converting the exact integer to double is
 * post-processing of the mechanism's output, so its rounding costs no
 * privacy. */
static inline double
lattice_unround(int64_t z, i128 n, double inv)
{
	i128 v = (i128)z + n;

	if (v >= INT64_MIN && v <= INT64_MAX)
		return (double)(int64_t)v * inv; /* one instruction, not __floattidf */
	return (double)v * inv;
}

enum err_code
noise_lattice_gaussian_prepared(struct rng *r, const struct dgauss_params *g, int k, double *x,
				size_t d, struct err *e)
{
	double scale = ldexp(1.0, k), inv = ldexp(1.0, -k);
	struct pool p;
	enum err_code rc;

	rc = lattice_check(x, d, k, e);
	if (rc != ERR_OK)
		return rc;
	pool_init(&p, r);
	for (size_t i = 0; i < d; i++)
		x[i] = lattice_unround(lattice_round(x[i], scale), dgauss_draw(&p, g), inv);
	pool_wipe(&p);
	return ERR_OK;
}

enum err_code
noise_lattice_add(const struct noise_i128 *noise, int k, double *x, size_t d, struct err *e)
{
	double scale = ldexp(1.0, k), inv = ldexp(1.0, -k);
	enum err_code rc;

	rc = lattice_check(x, d, k, e);
	if (rc != ERR_OK)
		return rc;
	for (size_t i = 0; i < d; i++) {
		i128 n = (i128)((u128)(uint64_t)noise[i].hi << 64 | noise[i].lo);

		x[i] = lattice_unround(lattice_round(x[i], scale), n, inv);
	}
	return ERR_OK;
}

enum err_code
noise_lattice_gaussian(struct rng *r, double sigma, int k, double *x, size_t d, struct err *e)
{
	struct dgauss_params g;
	enum err_code rc;

	if (k < NOISE_LATTICE_K_MIN || k > NOISE_LATTICE_K_MAX)
		return err_set(e, ERR_INVALID, "lattice exponent %d is outside [%d, %d]", k,
			       NOISE_LATTICE_K_MIN, NOISE_LATTICE_K_MAX);
	if (!(isfinite(sigma) && sigma > 0.0))
		return err_set(e, ERR_INVALID, "noise sigma must be a finite positive number");
	rc = noise_dgauss_prepare_real(ldexp(sigma, k), &g, e);
	if (rc != ERR_OK)
		return rc;
	return noise_lattice_gaussian_prepared(r, &g, k, x, d, e);
}

enum err_code
noise_lattice_laplace(struct rng *r, double b, int k, double *x, size_t d, struct err *e)
{
	double scale = ldexp(1.0, k), inv = ldexp(1.0, -k);
	struct dlap_params l;
	struct pool p;
	enum err_code rc;

	if (k < NOISE_LATTICE_K_MIN || k > NOISE_LATTICE_K_MAX)
		return err_set(e, ERR_INVALID, "lattice exponent %d is outside [%d, %d]", k,
			       NOISE_LATTICE_K_MIN, NOISE_LATTICE_K_MAX);
	if (!(isfinite(b) && b > 0.0))
		return err_set(e, ERR_INVALID, "laplace scale must be a finite positive number");
	rc = noise_dlap_prepare_real(ldexp(b, k), &l, e);
	if (rc != ERR_OK)
		return rc;
	rc = lattice_check(x, d, k, e);
	if (rc != ERR_OK)
		return rc;
	pool_init(&p, r);
	for (size_t i = 0; i < d; i++)
		x[i] = lattice_unround(lattice_round(x[i], scale), dlap_draw(&p, &l), inv);
	pool_wipe(&p);
	return ERR_OK;
}

/* ---------------------------------------------------------------------------
 * Exponential mechanism: Gumbel-argmax.
 *
 * argmax_j (w_j + G_j) with G_j independent standard Gumbel is j with
 * probability exp(w_j) / sum exp(w_i) (Gumbel 1954; the "Gumbel-max
 * trick").  G = -log(E), E = -log(U) ~ Exp(1), U = (x + 1/2) 2^-64 for a
 * uniform 64-bit x, with E computed without cancellation on either side of
 * U = 1/2.  Every index costs the same draws and arithmetic whatever its
 * weight, so the time does not depend on the scores.
 *
 * Floating-point caveat (not exact; Ilvento, CCS 2020).  (1) U takes 2^64
 * values, so G lies in [-3.81, 45.06]: an index whose log weight is more
 * than ~48.9 below the largest is never chosen, though its true
 * probability is up to e^-48.9 ~ 6e-22 of the largest one's.  A neighbour
 * can move an index across that line, so the mechanism is (eps, delta)-DP
 * with delta <= k 6e-22, not pure eps-DP.  (2) log and log1p are faithful
 * to ~1 ulp, so each key is off by ~1e-16 relative: the realised
 * probabilities differ from the ideal ones by a relative amount of the
 * same order, which shifts the privacy loss by ~1e-14 at the scores in
 * use.  Ilvento's base-2 exact method would remove both; until then the
 * bounded_range charge is computed for the ideal mechanism and these two
 * effects are the residual risk.
 */
static inline double
gumbel64(uint64_t x)
{
	double ex;

	if (x < (uint64_t)1 << 63) /* U < 1/2: log(U) is accurate */
		ex = -log(ldexp((double)x + 0.5, -64));
	else /* U >= 1/2: 1 - U = (~x + 1/2) 2^-64 exactly, log1p is accurate */
		ex = -log1p(-ldexp((double)~x + 0.5, -64));
	return -log(ex);
}

enum err_code
noise_exp_mech(struct rng *r, const double *log_weights, size_t k, size_t *ret_index, struct err *e)
{
	struct pool p;
	bool any = false;
	double best = -INFINITY;
	size_t best_i = 0;

	if (log_weights == NULL || k == 0)
		return err_set(e, ERR_INVALID,
			       "the exponential mechanism needs at least one weight");
	for (size_t j = 0; j < k; j++) {
		if (isnan(log_weights[j]) || log_weights[j] == INFINITY)
			return err_set(e, ERR_NUMERIC,
				       "an exponential mechanism weight is not finite");
		any |= log_weights[j] > -INFINITY;
	}
	if (!any)
		return err_set(e, ERR_NUMERIC, "every exponential mechanism weight is zero");
	pool_init(&p, r);
	for (size_t j = 0; j < k; j++) {
		double key = log_weights[j] + gumbel64(pool_u64(&p));

		if (key > best) { /* -inf keys never pass: best starts at -inf */
			best = key;
			best_i = j;
		}
	}
	pool_wipe(&p);
	*ret_index = best_i;
	return ERR_OK;
}
