/* oploop: time HMAC-SHA-256 or ML-DSA-65 signing in a native loop against a chosen libcrypto.
 *
 * The library is opened with dlopen so one binary can time whichever OpenSSL build a machine
 * has (the system's, or another >= 3.5 one that offers ML-DSA). Prints one JSON object.
 *
 *   oploop LIBCRYPTO.so hmac   REPS MSG_OCTETS
 *   oploop LIBCRYPTO.so mldsa65 REPS MSG_OCTETS
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void *(*evp_sha256_fn)(void);
typedef unsigned char *(*hmac_fn)(const void *, const void *, int, const unsigned char *, size_t,
                                  unsigned char *, unsigned int *);
typedef void *(*ctx_from_name_fn)(void *, const char *, const char *);
typedef int (*ctx_int_fn)(void *);
typedef int (*generate_fn)(void *, void **);
typedef void (*free_fn)(void *);
typedef void *(*new_fn)(void);
typedef int (*sign_init_fn)(void *, void **, const char *, void *, const char *, void *, const void *);
typedef int (*sign_fn)(void *, unsigned char *, size_t *, const unsigned char *, size_t);
typedef const char *(*version_fn)(int);

static void *need(void *lib, const char *name) {
    void *symbol = dlsym(lib, name);
    if (!symbol) {
        printf("{\"available\": false, \"reason\": \"symbol %s missing\"}\n", name);
        exit(0);
    }
    return symbol;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s LIBCRYPTO hmac|mldsa65 REPS MSG_OCTETS\n", argv[0]);
        return 2;
    }
    const char *op = argv[2];
    long reps = strtol(argv[3], NULL, 10), msg_len = strtol(argv[4], NULL, 10);
    if (reps < 1 || msg_len < 1) {
        fprintf(stderr, "REPS and MSG_OCTETS must be positive\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("{\"available\": false, \"reason\": \"dlopen failed\"}\n");
        return 0;
    }
    const char *version = ((version_fn)need(lib, "OpenSSL_version"))(0);
    unsigned char *msg = malloc((size_t)msg_len), key[32], out[64], *sig = malloc(8192);
    uint64_t *samples = malloc(sizeof(uint64_t) * (size_t)reps);
    for (long i = 0; i < msg_len; i++) msg[i] = (unsigned char)(i * 31 + 7);
    for (int i = 0; i < 32; i++) key[i] = (unsigned char)(i * 17 + 3);

    if (strcmp(op, "hmac") == 0) {
        evp_sha256_fn sha256 = (evp_sha256_fn)need(lib, "EVP_sha256");
        hmac_fn hmac = (hmac_fn)need(lib, "HMAC");
        unsigned int out_len = 0;
        for (long i = 0; i < 1000; i++) hmac(sha256(), key, 32, msg, (size_t)msg_len, out, &out_len);
        for (long i = 0; i < reps; i++) {
            uint64_t start = now_ns();
            hmac(sha256(), key, 32, msg, (size_t)msg_len, out, &out_len);
            samples[i] = now_ns() - start;
        }
    } else if (strcmp(op, "mldsa65") == 0) {
        void *pctx = ((ctx_from_name_fn)need(lib, "EVP_PKEY_CTX_new_from_name"))(NULL, "ML-DSA-65", NULL);
        void *pkey = NULL;
        if (!pctx || ((ctx_int_fn)need(lib, "EVP_PKEY_keygen_init"))(pctx) <= 0 ||
            ((generate_fn)need(lib, "EVP_PKEY_generate"))(pctx, &pkey) <= 0) {
            printf("{\"available\": false, \"reason\": \"no ML-DSA-65 in %s\"}\n", version);
            return 0;
        }
        new_fn md_new = (new_fn)need(lib, "EVP_MD_CTX_new");
        free_fn md_free = (free_fn)need(lib, "EVP_MD_CTX_free");
        sign_init_fn sign_init = (sign_init_fn)need(lib, "EVP_DigestSignInit_ex");
        sign_fn sign = (sign_fn)need(lib, "EVP_DigestSign");
        for (long i = -10; i < reps; i++) { /* ten warm-up signatures */
            size_t sig_len = 8192;
            uint64_t start = now_ns();
            void *mctx = md_new();
            if (sign_init(mctx, NULL, NULL, NULL, NULL, pkey, NULL) <= 0 ||
                sign(mctx, sig, &sig_len, msg, (size_t)msg_len) <= 0) {
                printf("{\"available\": false, \"reason\": \"ML-DSA-65 signing failed in %s\"}\n", version);
                return 0;
            }
            md_free(mctx);
            if (i >= 0) samples[i] = now_ns() - start;
        }
    } else {
        fprintf(stderr, "unknown operation %s\n", op);
        return 2;
    }
    qsort(samples, (size_t)reps, sizeof(uint64_t), cmp_u64);
    printf("{\"available\": true, \"library\": \"%s\", \"operation\": \"%s\", \"reps\": %ld, "
           "\"median_ns\": %llu, \"p99_ns\": %llu}\n",
           version, op, reps, (unsigned long long)samples[reps / 2],
           (unsigned long long)samples[(size_t)((double)reps * 0.99)]);
    return 0;
}
