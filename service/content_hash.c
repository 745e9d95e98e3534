/*
 * content_hash.c - the additive multiset hash of canonical rows.
 *
 * One digest per row: OpenSSL 3 looks the algorithm up in its provider
 * store (under a read-write lock) whenever a context is initialised with
 * EVP_sha256(), and a fresh context is an allocation, which per row of a
 * 200k-row upload cost more than hashing its bytes.  So SHA-256 is fetched
 * once per process and each hash keeps one context, re-initialised per
 * row.  The bytes hashed, and so every hash, are unchanged.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "content_hash.h"

#define ROW_MAX_STACK 64 /* values hashed from a stack buffer; longer rows stream */

static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
static EVP_MD *sha256_md; /* fetched once, kept for the process's life */

static void
sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

void
content_hash_init(struct content_hash *h)
{
	memset(h, 0, sizeof(*h));
}

void
content_hash_clear(struct content_hash *h)
{
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}

static void
put_le64(unsigned char *p, uint64_t u)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(u >> (8 * i));
}

enum err_code
content_hash_add(struct content_hash *h, const double *row, size_t n, struct err *e)
{
	unsigned char md[32], buf[8 * ROW_MAX_STACK];
	unsigned int len = 0;
	EVP_MD_CTX *ctx;
	uint64_t carry = 0;
	bool ok;

	pthread_once(&sha256_once, sha256_fetch);
	if (h->ctx == NULL)
		h->ctx = EVP_MD_CTX_new();
	ctx = h->ctx;
	put_le64(buf, (uint64_t)n);
	ok = ctx != NULL && sha256_md != NULL && EVP_DigestInit_ex2(ctx, sha256_md, NULL) == 1 &&
	     EVP_DigestUpdate(ctx, buf, 8) == 1;
	for (size_t i = 0; ok && i < n; i += ROW_MAX_STACK) {
		size_t k = n - i < ROW_MAX_STACK ? n - i : ROW_MAX_STACK;

		for (size_t j = 0; j < k; j++) {
			double v = row[i + j] == 0.0 ? 0.0 : row[i + j]; /* -0 is +0 */
			uint64_t u;

			memcpy(&u, &v, 8);
			put_le64(buf + 8 * j, u);
		}
		ok = EVP_DigestUpdate(ctx, buf, 8 * k) == 1;
	}
	ok = ok && EVP_DigestFinal_ex(ctx, md, &len) == 1 && len == 32;
	if (!ok)
		return err_set(e, ERR_INTERNAL, "SHA-256 failed");
	/* sum += digest (as a little-endian 256-bit integer), mod 2^256 */
	for (int l = 0; l < 4; l++) {
		uint64_t d = 0, s, t;

		for (int i = 0; i < 8; i++)
			d |= (uint64_t)md[8 * l + i] << (8 * i);
		s = h->sum[l] + d;
		t = s + carry;
		carry = (uint64_t)(s < d) | (uint64_t)(t < s);
		h->sum[l] = t;
	}
	return ERR_OK;
}

void
content_hash_hex(const struct content_hash *h, char out[65])
{
	for (int l = 0; l < 4; l++)
		for (int i = 0; i < 8; i++)
			snprintf(out + 2 * (8 * l + i), 3, "%02x",
				 (unsigned)((h->sum[l] >> (8 * i)) & 0xff));
}
