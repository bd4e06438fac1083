/* Symmetric reference operations of AMORT-V1 Table I timed in a C loop over libcrypto (§V-C).
 *
 * Plain C, no Python: sym_compute() runs one operation once and returns its output (so a Python twin can
 * check what is timed), sym_measure() times operations in batches, interleaved sample by sample, through the
 * same function pointers. The empty operation (an indirect call to a function that does nothing) times the
 * loop's own cost, which the caller subtracts. Every size is checked before it is used.
 */
#ifndef PQLAB_SYM_TIMING_H
#define PQLAB_SYM_TIMING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SYM_OK = 0,
    SYM_E_ARGUMENT = 1, /* an operation, size or count out of range */
    SYM_E_CRYPTO = 2,   /* libcrypto refused an operation */
    SYM_E_NOMEM = 3,    /* an allocation failed */
    SYM_E_CLOCK = 4     /* clock_gettime failed */
} sym_status;

typedef enum {
    SYM_OP_EMPTY = 0,            /* the loop's own cost */
    SYM_OP_HMAC = 1,             /* HMAC-SHA-256 with the key applied on every call (EVP_MAC_init with the key) */
    SYM_OP_HMAC_KEYED = 2,       /* keyed once, restarted per message (the controller fast path's MAC) */
    SYM_OP_HMAC_ONESHOT = 3,     /* the library's one-shot call, EVP_Q_mac (algorithm fetched per call) */
    SYM_OP_LEAF_INTERIOR = 4,    /* RFC 6962 node(sibling, leaf(message)): one leaf and one interior hash */
    SYM_OP_COUNT = 5
} sym_op;

#define SYM_DIGEST_OCTETS 32
#define SYM_KEY_MAX 128
#define SYM_MESSAGE_MAX 65536
#define SYM_BATCH_MAX (1u << 24)
#define SYM_SAMPLES_MAX (1u << 24)
#define SYM_OPS_MAX 16

typedef struct {
    const uint8_t *key;      /* HMAC key, 1..SYM_KEY_MAX octets */
    size_t key_len;
    const uint8_t *message;  /* the MAC'd record / the leaf's data, 0..SYM_MESSAGE_MAX octets */
    size_t message_len;
    const uint8_t *sibling;  /* SYM_DIGEST_OCTETS: the left child of the interior hash */
} sym_inputs;

const char *sym_status_name(sym_status status);
const char *sym_op_name(sym_op op);

/* One call of op; its output (SYM_DIGEST_OCTETS, all zero for SYM_OP_EMPTY) into out. */
sym_status sym_compute(sym_op op, const sym_inputs *in, uint8_t out[SYM_DIGEST_OCTETS]);

/* samples rounds; in each round every op of ops (in the order given) times `batch` back-to-back calls with
 * CLOCK_MONOTONIC. out_ns[round * n_ops + i] = nanoseconds per call of ops[i] in that round (the loop's own
 * cost included: time SYM_OP_EMPTY beside the others and subtract it). out_ns holds samples * n_ops values. */
sym_status sym_measure(const sym_op *ops, size_t n_ops, const sym_inputs *in, size_t batch, size_t samples,
                       double *out_ns);

#ifdef __cplusplus
}
#endif

#endif /* PQLAB_SYM_TIMING_H */
