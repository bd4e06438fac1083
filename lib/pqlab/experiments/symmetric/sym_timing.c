/* Symmetric reference operations of AMORT-V1 Table I timed in a C loop over libcrypto (sym_timing.h). */
#define _POSIX_C_SOURCE 200809L
#include "sym_timing.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

const char *sym_status_name(sym_status status) {
    switch (status) {
    case SYM_OK: return "SYM_OK";
    case SYM_E_ARGUMENT: return "SYM_E_ARGUMENT";
    case SYM_E_CRYPTO: return "SYM_E_CRYPTO";
    case SYM_E_NOMEM: return "SYM_E_NOMEM";
    case SYM_E_CLOCK: return "SYM_E_CLOCK";
    }
    return "SYM_UNKNOWN";
}

static const char *const OP_NAMES[SYM_OP_COUNT] = {"empty", "hmac_sha256", "hmac_sha256_keyed",
                                                    "hmac_sha256_oneshot", "merkle_leaf_interior"};

const char *sym_op_name(sym_op op) { return (unsigned)op < SYM_OP_COUNT ? OP_NAMES[op] : "unknown"; }

typedef struct {
    const sym_inputs *in;
    EVP_MD *sha256;
    EVP_MD_CTX *md;
    EVP_MAC *hmac;
    EVP_MAC_CTX *per_call; /* SYM_OP_HMAC: the key applied on every call */
    EVP_MAC_CTX *keyed;    /* SYM_OP_HMAC_KEYED: keyed once */
    uint8_t leaf[SYM_DIGEST_OCTETS];
    uint8_t out[SYM_DIGEST_OCTETS];
} sym_ctx;

typedef int (*sym_fn)(sym_ctx *);

static void ctx_free(sym_ctx *c) {
    EVP_MAC_CTX_free(c->keyed);
    EVP_MAC_CTX_free(c->per_call);
    EVP_MAC_free(c->hmac);
    EVP_MD_CTX_free(c->md);
    EVP_MD_free(c->sha256);
    OPENSSL_cleanse(c, sizeof *c);
}

static EVP_MAC_CTX *hmac_context(EVP_MAC *hmac, const sym_inputs *in) {
    char digest[] = "SHA256";
    OSSL_PARAM params[2] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                            OSSL_PARAM_construct_end()};
    EVP_MAC_CTX *m = EVP_MAC_CTX_new(hmac);
    if (m != NULL && !EVP_MAC_init(m, in->key, in->key_len, params)) {
        EVP_MAC_CTX_free(m);
        m = NULL;
    }
    return m;
}

static sym_status ctx_init(sym_ctx *c, const sym_inputs *in) {
    memset(c, 0, sizeof *c);
    c->in = in;
    c->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    c->md = EVP_MD_CTX_new();
    c->hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (c->sha256 == NULL || c->md == NULL || c->hmac == NULL) {
        ctx_free(c);
        return SYM_E_CRYPTO;
    }
    c->per_call = hmac_context(c->hmac, in);
    c->keyed = hmac_context(c->hmac, in);
    if (c->per_call == NULL || c->keyed == NULL) {
        ctx_free(c);
        return SYM_E_CRYPTO;
    }
    return SYM_OK;
}

static int op_empty(sym_ctx *c) {
    (void)c;
    return 1;
}

static int mac_final(EVP_MAC_CTX *m, sym_ctx *c) {
    size_t outl = 0;
    return EVP_MAC_update(m, c->in->message, c->in->message_len) &&
           EVP_MAC_final(m, c->out, &outl, sizeof c->out) && outl == SYM_DIGEST_OCTETS;
}

static int op_hmac(sym_ctx *c) {
    return EVP_MAC_init(c->per_call, c->in->key, c->in->key_len, NULL) && mac_final(c->per_call, c);
}

static int op_hmac_keyed(sym_ctx *c) { /* a NULL key restarts from the keyed state (pads not recomputed) */
    return EVP_MAC_init(c->keyed, NULL, 0, NULL) && mac_final(c->keyed, c);
}

static int op_hmac_oneshot(sym_ctx *c) {
    size_t outl = 0;
    return EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, c->in->key, c->in->key_len, c->in->message,
                     c->in->message_len, c->out, sizeof c->out, &outl) != NULL &&
           outl == SYM_DIGEST_OCTETS;
}

static int sha256_prefixed(sym_ctx *c, uint8_t prefix, const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
                           uint8_t out[SYM_DIGEST_OCTETS]) {
    unsigned int outl = 0;
    return EVP_DigestInit_ex(c->md, c->sha256, NULL) && EVP_DigestUpdate(c->md, &prefix, 1) &&
           (an == 0 || EVP_DigestUpdate(c->md, a, an)) && (bn == 0 || EVP_DigestUpdate(c->md, b, bn)) &&
           EVP_DigestFinal_ex(c->md, out, &outl) && outl == SYM_DIGEST_OCTETS;
}

static int op_leaf_interior(sym_ctx *c) { /* RFC 6962: leaf = H(0x00 || m), node = H(0x01 || left || right) */
    return sha256_prefixed(c, 0x00, c->in->message, c->in->message_len, NULL, 0, c->leaf) &&
           sha256_prefixed(c, 0x01, c->in->sibling, SYM_DIGEST_OCTETS, c->leaf, SYM_DIGEST_OCTETS, c->out);
}

static const sym_fn OPS[SYM_OP_COUNT] = {op_empty, op_hmac, op_hmac_keyed, op_hmac_oneshot, op_leaf_interior};

static sym_status check_inputs(const sym_inputs *in) {
    if (in == NULL || in->key == NULL || in->key_len == 0 || in->key_len > SYM_KEY_MAX || in->sibling == NULL ||
        in->message_len > SYM_MESSAGE_MAX || (in->message_len > 0 && in->message == NULL))
        return SYM_E_ARGUMENT;
    return SYM_OK;
}

sym_status sym_compute(sym_op op, const sym_inputs *in, uint8_t out[SYM_DIGEST_OCTETS]) {
    sym_ctx c;
    sym_status s;
    int ok;
    if ((unsigned)op >= SYM_OP_COUNT || out == NULL) return SYM_E_ARGUMENT;
    if ((s = check_inputs(in)) != SYM_OK) return s;
    if ((s = ctx_init(&c, in)) != SYM_OK) return s;
    ok = OPS[op](&c);
    if (ok) memcpy(out, c.out, SYM_DIGEST_OCTETS);
    ctx_free(&c);
    return ok ? SYM_OK : SYM_E_CRYPTO;
}

/* a - b in nanoseconds (both from CLOCK_MONOTONIC, a later than b) */
static int64_t elapsed_ns(const struct timespec *a, const struct timespec *b) {
    return (int64_t)(a->tv_sec - b->tv_sec) * 1000000000LL + (int64_t)(a->tv_nsec - b->tv_nsec);
}

sym_status sym_measure(const sym_op *ops, size_t n_ops, const sym_inputs *in, size_t batch, size_t samples,
                       double *out_ns) {
    sym_ctx c;
    sym_status s;
    int ok = 1;
    if (ops == NULL || out_ns == NULL || n_ops == 0 || n_ops > SYM_OPS_MAX || batch == 0 || batch > SYM_BATCH_MAX ||
        samples == 0 || samples > SYM_SAMPLES_MAX || samples > SIZE_MAX / sizeof(double) / n_ops)
        return SYM_E_ARGUMENT;
    for (size_t i = 0; i < n_ops; i++)
        if ((unsigned)ops[i] >= SYM_OP_COUNT) return SYM_E_ARGUMENT;
    if ((s = check_inputs(in)) != SYM_OK) return s;
    if ((s = ctx_init(&c, in)) != SYM_OK) return s;
    for (size_t round = 0; round < samples && ok; round++) {
        for (size_t i = 0; i < n_ops && ok; i++) {
            /* the same loop for every operation, the empty one included: a volatile function pointer read and
             * an indirect call per iteration, so what SYM_OP_EMPTY costs is exactly the loop's share */
            sym_fn volatile fn = OPS[ops[i]];
            struct timespec start, stop;
            if (clock_gettime(CLOCK_MONOTONIC, &start) != 0) {
                ctx_free(&c);
                return SYM_E_CLOCK;
            }
            for (size_t j = 0; j < batch; j++) ok &= fn(&c);
            if (clock_gettime(CLOCK_MONOTONIC, &stop) != 0) {
                ctx_free(&c);
                return SYM_E_CLOCK;
            }
            out_ns[round * n_ops + i] = (double)elapsed_ns(&stop, &start) / (double)batch;
        }
    }
    ctx_free(&c);
    return ok ? SYM_OK : SYM_E_CRYPTO;
}
