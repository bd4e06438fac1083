/*
 * amort_core.c — the AMORT-V1 per-report path in plain C over OpenSSL libcrypto (see amort_core.h).
 *
 * Each function mirrors one piece of the Python reference model and says which:
 *   amort_report_decode        pqlab.amort.messages.Report.decode (codec.Reader, Prefixed, Message.read)
 *   ingest_one                 pqlab.amort.controller.Controller.ingest (checks in the same order)
 *   build_body / commit        Controller.build_checkpoint / record_checkpoint, messages.Checkpoint.tbs()
 *   tree_append / tree_root    pqlab.amort.merkle.IncrementalTree
 *   subtree_root               pqlab.amort.merkle.root (bottom-up pairing, odd node carried up)
 *   amort_device_report        pqlab.amort.device.encode_report with a DisclosureChain
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "amort_core.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if !defined(OPENSSL_VERSION_MAJOR) || OPENSSL_VERSION_MAJOR < 3
#error "amort_core needs OpenSSL >= 3.0 development files (Debian: libssl-dev)"
#endif

#define NONE32 UINT32_MAX

/* ---- status and field tables ------------------------------------------------------------------------ */

const char *amort_status_name(amort_status status) {
    switch (status) {
    case AMORT_OK: return "OK";
    case AMORT_MAC_FAIL: return "MAC_FAIL";
    case AMORT_TRUNCATED: return "TRUNCATED";
    case AMORT_TRAILING: return "TRAILING";
    case AMORT_SIG_FAIL: return "SIG_FAIL";
    case AMORT_CHAIN_FAIL: return "CHAIN_FAIL";
    case AMORT_PROOF_FAIL: return "PROOF_FAIL";
    case AMORT_SEQ_DUPLICATE: return "SEQ_DUPLICATE";
    case AMORT_SEQ_GAP: return "SEQ_GAP";
    case AMORT_EPOCH_STALE: return "EPOCH_STALE";
    case AMORT_DEVICE_UNKNOWN: return "DEVICE_UNKNOWN";
    case AMORT_REVOKED: return "REVOKED";
    case AMORT_CKPT_FORK: return "CKPT_FORK";
    case AMORT_CKPT_DISCONTINUITY: return "CKPT_DISCONTINUITY";
    case AMORT_DISCLOSE_EARLY: return "DISCLOSE_EARLY";
    case AMORT_TAGLEN_DOWNGRADE: return "TAGLEN_DOWNGRADE";
    case AMORT_BAD_DOMAIN: return "BAD_DOMAIN";
    case AMORT_BAD_VERSION: return "BAD_VERSION";
    case AMORT_ERR_EVIDENCE_INCOMPLETE: return "ERR_EVIDENCE_INCOMPLETE";
    case AMORT_ERR_RESTART_RATE: return "ERR_RESTART_RATE";
    case AMORT_PROFILE_MISMATCH: return "PROFILE_MISMATCH";
    case AMORT_E_ARGUMENT: return "E_ARGUMENT";
    case AMORT_E_STATE: return "E_STATE";
    case AMORT_E_LIMIT: return "E_LIMIT";
    case AMORT_E_FRAME: return "E_FRAME";
    case AMORT_E_NOMEM: return "E_NOMEM";
    case AMORT_E_CRYPTO: return "E_CRYPTO";
    case AMORT_E_CLOCK: return "E_CLOCK";
    }
    return "UNKNOWN";
}

const char *amort_strerror(amort_status status) {
    switch (status) {
    case AMORT_OK: return "accepted";
    case AMORT_MAC_FAIL: return "evidence tag does not verify under K_evid";
    case AMORT_TRUNCATED: return "input ends early or a length prefix is shorter than the field";
    case AMORT_TRAILING: return "octets after the message or a length prefix longer than the field";
    case AMORT_SIG_FAIL: return "signature or signature algorithm refused";
    case AMORT_CHAIN_FAIL: return "disclosure key outside the chain";
    case AMORT_PROOF_FAIL: return "Merkle proof refused";
    case AMORT_SEQ_DUPLICATE: return "sequence number already seen";
    case AMORT_SEQ_GAP: return "sequence number skips";
    case AMORT_EPOCH_STALE: return "not the device's current epoch, or past its expiry";
    case AMORT_DEVICE_UNKNOWN: return "device not registered";
    case AMORT_REVOKED: return "device revoked";
    case AMORT_CKPT_FORK: return "two checkpoints at one index";
    case AMORT_CKPT_DISCONTINUITY: return "checkpoint does not continue the chain";
    case AMORT_DISCLOSE_EARLY: return "key disclosed before commitment";
    case AMORT_TAGLEN_DOWNGRADE: return "tag length not the epoch's or not one of 8, 12, 16";
    case AMORT_BAD_DOMAIN: return "wrong domain tag";
    case AMORT_BAD_VERSION: return "unknown version";
    case AMORT_ERR_EVIDENCE_INCOMPLETE: return "an epoch closed with uncommitted evidence";
    case AMORT_ERR_RESTART_RATE: return "too many epoch opens in the restart window";
    case AMORT_PROFILE_MISMATCH: return "evidence of another deployment profile";
    case AMORT_E_ARGUMENT: return "argument out of range";
    case AMORT_E_STATE: return "call out of order";
    case AMORT_E_LIMIT: return "larger than the format or the API allows";
    case AMORT_E_FRAME: return "batch buffer breaks off inside a frame";
    case AMORT_E_NOMEM: return "out of memory";
    case AMORT_E_CRYPTO: return "libcrypto call failed";
    case AMORT_E_CLOCK: return "no clock: the controller cannot judge freshness and accepts nothing";
    }
    return "unknown status";
}

static const char *const FIELD_NAMES[AMORT_F_COUNT] = {
    [AMORT_F_NONE] = "",
    [AMORT_F_REPORT] = "Report",
    [AMORT_F_DOMAIN_LEN] = "Report.domain.len",
    [AMORT_F_DOMAIN] = "Report.domain",
    [AMORT_F_VERSION_LEN] = "Report.version.len",
    [AMORT_F_VERSION] = "Report.version",
    [AMORT_F_DEV_ID_LEN] = "Report.dev_id.len",
    [AMORT_F_DEV_ID] = "Report.dev_id",
    [AMORT_F_EPOCH_LEN] = "Report.epoch.len",
    [AMORT_F_EPOCH] = "Report.epoch",
    [AMORT_F_SEQ_LEN] = "Report.seq.len",
    [AMORT_F_SEQ] = "Report.seq",
    [AMORT_F_TIMESTAMP_LEN] = "Report.timestamp.len",
    [AMORT_F_TIMESTAMP] = "Report.timestamp",
    [AMORT_F_DIGEST_LEN] = "Report.digest.len",
    [AMORT_F_DIGEST] = "Report.digest",
    [AMORT_F_POLICY_ID_LEN] = "Report.policy_id.len",
    [AMORT_F_POLICY_ID] = "Report.policy_id",
    [AMORT_F_FLAGS_LEN] = "Report.flags.len",
    [AMORT_F_FLAGS] = "Report.flags",
    [AMORT_F_TAG_LEN] = "Report.tag_len",
    [AMORT_F_TAG] = "Report.tag",
    [AMORT_F_DTAG_LEN] = "Report.dtag_len",
    [AMORT_F_DTAG] = "Report.dtag",
    [AMORT_F_RECORD_DEV_ID] = "Record.dev_id",
    [AMORT_F_RECORD_EPOCH] = "Record.epoch",
    [AMORT_F_RECORD_TIMESTAMP] = "Record.timestamp",
    [AMORT_F_RECORD_SEQ] = "Record.seq",
};

const char *amort_field_name(amort_field field) {
    return (unsigned)field < AMORT_F_COUNT ? FIELD_NAMES[field] : "";
}

/* ---- big-endian helpers ----------------------------------------------------------------------------- */

static uint64_t get_be(const uint8_t *p, size_t width) {
    uint64_t v = 0;
    for (size_t i = 0; i < width; i++) v = (v << 8) | p[i];
    return v;
}

static void put_be(uint8_t *p, uint64_t v, size_t width) {
    for (size_t i = width; i-- > 0;) {
        p[i] = (uint8_t)(v & 0xFF);
        v >>= 8;
    }
}

/* ---- libcrypto handles (one set per object: no globals) ---------------------------------------------- */

typedef struct amort_crypto {
    EVP_MD *sha256;
    EVP_MAC *hmac;
    EVP_MD_CTX *md;
} amort_crypto;

static void crypto_free(amort_crypto *c) {
    EVP_MD_CTX_free(c->md);
    EVP_MAC_free(c->hmac);
    EVP_MD_free(c->sha256);
    memset(c, 0, sizeof *c);
}

static amort_status crypto_init(amort_crypto *c) {
    c->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    c->hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    c->md = EVP_MD_CTX_new();
    if (c->sha256 == NULL || c->hmac == NULL || c->md == NULL) {
        crypto_free(c);
        return AMORT_E_CRYPTO;
    }
    return AMORT_OK;
}

/* A zeroed object of size octets whose amort_crypto member (at crypto_offset) is initialised; NULL with *status set
 * (AMORT_E_NOMEM or AMORT_E_CRYPTO) and nothing left allocated when either step fails. */
static void *alloc_with_crypto(size_t size, size_t crypto_offset, amort_status *status) {
    unsigned char *object = calloc(1, size);
    if (object == NULL) {
        *status = AMORT_E_NOMEM;
        return NULL;
    }
    if (crypto_init((amort_crypto *)(object + crypto_offset)) != AMORT_OK) {
        free(object);
        *status = AMORT_E_CRYPTO;
        return NULL;
    }
    *status = AMORT_OK;
    return object;
}

/* SHA-256(a || b || d); b and d may be empty. */
static int sha256_3(amort_crypto *c, const uint8_t *a, size_t an, const uint8_t *b, size_t bn, const uint8_t *d,
                    size_t dn, uint8_t out[AMORT_HASH_OCTETS]) {
    unsigned int outl = 0;
    if (!EVP_DigestInit_ex(c->md, c->sha256, NULL) || !EVP_DigestUpdate(c->md, a, an)) return 0;
    if (bn && !EVP_DigestUpdate(c->md, b, bn)) return 0;
    if (dn && !EVP_DigestUpdate(c->md, d, dn)) return 0;
    return EVP_DigestFinal_ex(c->md, out, &outl) && outl == AMORT_HASH_OCTETS;
}

static const uint8_t LEAF_PREFIX[1] = {0x00};
static const uint8_t NODE_PREFIX[1] = {0x01};
static const char CHAIN_DOMAIN[] = "AMORT.CHAIN";
static const char LINK_DOMAIN[] = "AMORT.LINK";

static int leaf_hash(amort_crypto *c, const uint8_t *data, size_t n, uint8_t out[AMORT_HASH_OCTETS]) {
    return sha256_3(c, LEAF_PREFIX, 1, data, n, NULL, 0, out);
}

static int node_hash(amort_crypto *c, const uint8_t *left, const uint8_t *right, uint8_t out[AMORT_HASH_OCTETS]) {
    return sha256_3(c, NODE_PREFIX, 1, left, AMORT_HASH_OCTETS, right, AMORT_HASH_OCTETS, out);
}

/* K_(j-1) = SHA-256("AMORT.CHAIN" || K_j) (pqlab.amort.chain.step) */
static int chain_step(amort_crypto *c, const uint8_t *key, uint8_t out[AMORT_KEY_OCTETS]) {
    return sha256_3(c, (const uint8_t *)CHAIN_DOMAIN, sizeof CHAIN_DOMAIN - 1, key, AMORT_KEY_OCTETS, NULL, 0, out);
}

/* An HMAC-SHA-256 context keyed with key (32 octets). */
static EVP_MAC_CTX *mac_new(amort_crypto *c, const uint8_t *key) {
    char digest[] = "SHA256";
    OSSL_PARAM params[2] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                            OSSL_PARAM_construct_end()};
    EVP_MAC_CTX *m = EVP_MAC_CTX_new(c->hmac);
    if (m == NULL) return NULL;
    if (!EVP_MAC_init(m, key, AMORT_KEY_OCTETS, params)) {
        EVP_MAC_CTX_free(m);
        return NULL;
    }
    return m;
}

/* HMAC over data with the context's key: EVP_MAC_init with a NULL key restarts from the keyed state
 * (the inner and outer pads are not recomputed). */
static int mac_compute(EVP_MAC_CTX *m, const uint8_t *data, size_t n, uint8_t out[AMORT_HASH_OCTETS]) {
    size_t outl = 0;
    return EVP_MAC_init(m, NULL, 0, NULL) && EVP_MAC_update(m, data, n) &&
           EVP_MAC_final(m, out, &outl, AMORT_HASH_OCTETS) && outl == AMORT_HASH_OCTETS;
}

/* ---- report decoding (Report.decode) ------------------------------------------------------------------ */

#define REJECT(where, code_, field_, off_)                                                                    \
    do {                                                                                                      \
        (where)->code = (uint8_t)(code_);                                                                     \
        (where)->field = (uint8_t)(field_);                                                                   \
        (where)->offset = (int32_t)(off_);                                                                    \
        return (code_);                                                                                       \
    } while (0)

static int tag_len_ok(unsigned n) { return n == 8 || n == 12 || n == 16; }

/* A tag section some epoch allows: one or two tags of 8, 12 or 16 octets (messages.TAG_SECTION_LENGTHS). */
static int one_tag(size_t n) { return n == 8 || n == 12 || n == 16; }
static int tag_section_ok(size_t n) { return one_tag(n) || n == 24 || n == 32; }

void amort_options_default(amort_options *o) {
    o->wire_format = AMORT_WIRE_IMPLIED;
    o->variant = AMORT_VARIANT_HARDENED;
    o->max_report_age = AMORT_DEFAULT_MAX_REPORT_AGE;
}

static int options_ok(const amort_options *o) {
    return (o->wire_format == AMORT_WIRE_IMPLIED || o->wire_format == AMORT_WIRE_EXPLICIT) &&
           (o->variant == AMORT_VARIANT_PAPER || o->variant == AMORT_VARIANT_HARDENED);
}

/* The 83-octet record at the start of a report (messages.Record.read): AMORT_OK with *pos = 83. */
static amort_status decode_record(const uint8_t *p, size_t n, amort_report *r, amort_verdict *w, size_t *pos_out) {
    /* The seven length-prefixed record fields after the header (messages.Record.SPEC). */
    static const struct {
        uint8_t width;
        uint8_t len_field;
    } FIELDS[7] = {{8, AMORT_F_DEV_ID_LEN}, {4, AMORT_F_EPOCH_LEN}, {8, AMORT_F_SEQ_LEN},
                   {8, AMORT_F_TIMESTAMP_LEN}, {32, AMORT_F_DIGEST_LEN}, {2, AMORT_F_POLICY_ID_LEN},
                   {1, AMORT_F_FLAGS_LEN}};
    const uint8_t *at[7];
    size_t pos;
    w->code = AMORT_OK;
    w->field = AMORT_F_NONE;
    w->offset = -1;
    if (p == NULL) REJECT(w, AMORT_TRUNCATED, AMORT_F_REPORT, -1);
    /* domain tag: one length octet, then "AMORT.EVID" */
    if (n < 1) REJECT(w, AMORT_TRUNCATED, AMORT_F_DOMAIN_LEN, 0);
    if (p[0] != 10) REJECT(w, AMORT_BAD_DOMAIN, AMORT_F_DOMAIN, 0);
    if (n - 1 < 10) REJECT(w, AMORT_TRUNCATED, AMORT_F_DOMAIN, 1);
    if (memcmp(p + 1, "AMORT.EVID", 10) != 0) REJECT(w, AMORT_BAD_DOMAIN, AMORT_F_DOMAIN, 1);
    /* version, itself length-prefixed in the record */
    if (n - 11 < 1) REJECT(w, AMORT_TRUNCATED, AMORT_F_VERSION_LEN, 11);
    if (p[11] != 1) REJECT(w, AMORT_BAD_VERSION, AMORT_F_VERSION, 11);
    if (n - 12 < 1) REJECT(w, AMORT_TRUNCATED, AMORT_F_VERSION, 12);
    if (p[12] != 1) REJECT(w, AMORT_BAD_VERSION, AMORT_F_VERSION, 12);
    pos = 13;
    for (size_t i = 0; i < 7; i++) {
        unsigned width = FIELDS[i].width, len_field = FIELDS[i].len_field;
        if (n - pos < 1) REJECT(w, AMORT_TRUNCATED, len_field, pos);
        if (p[pos] != width) REJECT(w, p[pos] < width ? AMORT_TRUNCATED : AMORT_TRAILING, len_field + 1, pos);
        pos++;
        if (n - pos < width) REJECT(w, AMORT_TRUNCATED, len_field + 1, pos);
        at[i] = p + pos;
        pos += width;
    }
    r->record = p;
    r->dev_id = at[0];
    r->epoch = (uint32_t)get_be(at[1], 4);
    r->seq = get_be(at[2], 8);
    r->timestamp = get_be(at[3], 8);
    r->digest = at[4];
    r->policy_id = (uint16_t)get_be(at[5], 2);
    r->flags = at[6][0];
    *pos_out = pos;
    return AMORT_OK;
}

/* The explicit format's tags: each behind a length octet (Report.decode, wire_format="explicit"). */
static amort_status decode_tags_explicit(const uint8_t *p, size_t n, size_t pos, amort_report *r, amort_verdict *w) {
    if (n - pos < 1) REJECT(w, AMORT_TRUNCATED, AMORT_F_TAG_LEN, pos);
    r->tag_len = p[pos];
    if (!tag_len_ok(r->tag_len)) REJECT(w, AMORT_TAGLEN_DOWNGRADE, AMORT_F_TAG_LEN, pos);
    pos++;
    if (n - pos < r->tag_len) REJECT(w, AMORT_TRUNCATED, AMORT_F_TAG, pos);
    r->tag = p + pos;
    pos += r->tag_len;
    /* optional disclosure tag: none, or as long as the evidence tag */
    if (n - pos < 1) REJECT(w, AMORT_TRUNCATED, AMORT_F_DTAG_LEN, pos);
    r->dtag_len = p[pos];
    if (r->dtag_len != 0 && (!tag_len_ok(r->dtag_len) || r->dtag_len != r->tag_len))
        REJECT(w, AMORT_TAGLEN_DOWNGRADE, AMORT_F_DTAG_LEN, pos);
    pos++;
    if (n - pos < r->dtag_len) REJECT(w, AMORT_TRUNCATED, AMORT_F_DTAG, pos);
    r->dtag = p + pos;
    pos += r->dtag_len;
    if (pos != n) REJECT(w, AMORT_TRAILING, AMORT_F_REPORT, pos);
    return AMORT_OK;
}

/* The implied format's tags (messages.split_tags): the rest of the input is one or two tags of tag_len. */
static amort_status split_tags(const uint8_t *p, size_t n, size_t pos, unsigned tag_len, amort_report *r,
                               amort_verdict *w) {
    size_t rest = n - pos;
    if (tag_len == 0)
        tag_len = one_tag(rest) ? (unsigned)rest : tag_section_ok(rest) ? (unsigned)(rest / 2) : 16;
    r->tag_len = (uint8_t)tag_len;
    r->tag = p + pos;
    r->dtag = p + pos + tag_len;
    if (rest == tag_len) {
        r->dtag_len = 0;
        return AMORT_OK;
    }
    if (rest == 2 * (size_t)tag_len) {
        r->dtag_len = (uint8_t)tag_len;
        return AMORT_OK;
    }
    if (tag_section_ok(rest)) REJECT(w, AMORT_TAGLEN_DOWNGRADE, AMORT_F_TAG, pos);
    if (rest < tag_len) REJECT(w, AMORT_TRUNCATED, AMORT_F_TAG, pos);
    if (rest < 2 * (size_t)tag_len) REJECT(w, AMORT_TRUNCATED, AMORT_F_DTAG, pos + tag_len);
    REJECT(w, AMORT_TRAILING, AMORT_F_REPORT, pos + 2 * (size_t)tag_len);
}

amort_status amort_report_decode_as(const uint8_t *p, size_t n, uint8_t wire_format, uint8_t tag_len,
                                    amort_report *r, amort_verdict *w) {
    size_t pos = 0;
    amort_status s = decode_record(p, n, r, w, &pos);
    if (s != AMORT_OK) return s;
    if (wire_format == AMORT_WIRE_EXPLICIT) return decode_tags_explicit(p, n, pos, r, w);
    return split_tags(p, n, pos, tag_len, r, w);
}

amort_status amort_report_decode(const uint8_t *p, size_t n, amort_report *r, amort_verdict *w) {
    return amort_report_decode_as(p, n, AMORT_WIRE_IMPLIED, 0, r, w);
}

/* ---- controller ------------------------------------------------------------------------------------ */

typedef struct dev_slot {
    uint8_t dev_id[AMORT_ID_OCTETS];
    uint64_t key; /* dev_id as a big-endian integer: hash and sort key */
    uint8_t revoked, has_epoch, tag_len;
    uint16_t policy_id;
    uint32_t epoch;
    uint64_t expiry, not_before, last_seen, last_committed, last_timestamp;
    EVP_MAC_CTX *mac; /* keyed with K_evid once per epoch */
    uint32_t g_head, g_tail, g_count; /* this device's reports in the body being built */
} dev_slot;

typedef struct pending_item {
    uint32_t dev, epoch, next;
    uint64_t seq;
    uint8_t leaf[AMORT_HASH_OCTETS];
} pending_item;

typedef struct close_item {
    uint32_t dev, epoch;
    uint64_t last_seen, committed_hi;
} close_item;

typedef struct span_item {
    uint32_t dev, epoch;
    uint64_t seq_hi;
} span_item;

struct amort_controller {
    amort_crypto c;
    uint8_t controller_id[AMORT_ID_OCTETS];
    uint8_t sig_alg;
    amort_options options;
    int has_now; /* the clock of amort_controller_set_clock */
    uint64_t now;
    dev_slot *devs;
    size_t ndevs, cap_devs;
    uint32_t *table; /* open addressing over devs, NONE32 = empty */
    size_t table_cap;
    pending_item *pend;
    size_t npend, cap_pend;
    close_item *closes;
    size_t ncloses, cap_closes;
    /* the RFC 6962 tree: perfect subtrees, left to right (merkle.IncrementalTree._stack) */
    uint64_t tree_size;
    size_t nstack;
    uint8_t heights[64];
    uint8_t stack[64][AMORT_HASH_OCTETS];
    /* the checkpoint chain */
    uint64_t committed;
    uint8_t prev_hash[AMORT_HASH_OCTETS];
    int awaiting;
    uint8_t *body, *signed_buf;
    size_t body_len, body_cap, signed_len, signed_cap;
    span_item *spans;
    size_t nspans, cap_spans;
    /* scratch for building a body */
    uint32_t *touched, *order;
    size_t cap_touched, cap_order;
    uint32_t *sorted; /* every device in dev_id order, valid while nsorted == ndevs */
    size_t nsorted, cap_sorted;
    uint8_t (*hashes)[AMORT_HASH_OCTETS];
    size_t cap_hashes;
    span_item *exceptions; /* implied format: spans whose epoch is not the checkpoint's base epoch */
    size_t cap_exceptions;
};

/* *acc += count * unit, or 0 if that overflows size_t (every buffer size is computed this way). */
static int size_add(size_t *acc, size_t count, size_t unit) {
    if (unit != 0 && count > (SIZE_MAX - *acc) / unit) return 0;
    *acc += count * unit;
    return 1;
}

/* Grow *buf to hold at least need items of size bytes each. */
static int reserve(void **buf, size_t *cap, size_t need, size_t size) {
    size_t n = *cap ? *cap : 16;
    void *grown;
    if (need <= *cap) return 1;
    while (n < need) {
        if (n > SIZE_MAX / 2 / size) return 0;
        n *= 2;
    }
    grown = realloc(*buf, n * size);
    if (grown == NULL) return 0;
    *buf = grown;
    *cap = n;
    return 1;
}

static uint64_t mix64(uint64_t x) { /* splitmix64 finaliser */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static dev_slot *find_dev(const amort_controller *ctl, const uint8_t *dev_id) {
    uint64_t key = get_be(dev_id, AMORT_ID_OCTETS);
    size_t mask = ctl->table_cap - 1;
    if (ctl->table_cap == 0) return NULL;
    for (size_t i = (size_t)mix64(key) & mask;; i = (i + 1) & mask) {
        uint32_t d = ctl->table[i];
        if (d == NONE32) return NULL;
        if (ctl->devs[d].key == key) return &ctl->devs[d];
    }
}

static void table_put(uint32_t *table, size_t cap, uint64_t key, uint32_t d) {
    size_t mask = cap - 1;
    size_t i = (size_t)mix64(key) & mask;
    while (table[i] != NONE32) i = (i + 1) & mask;
    table[i] = d;
}

/* The open-addressing table's next capacity (double, at least 64), or 0 when that overflows size_t. */
static size_t table_grown(size_t cap) {
    if (cap == 0) return 64;
    if (cap > SIZE_MAX / 2 / sizeof(uint32_t)) return 0;
    return cap * 2;
}

static dev_slot *add_dev(amort_controller *ctl, const uint8_t *dev_id) {
    dev_slot *slot;
    if (ctl->ndevs >= NONE32 - 1) return NULL;
    if (!reserve((void **)&ctl->devs, &ctl->cap_devs, ctl->ndevs + 1, sizeof *ctl->devs)) return NULL;
    if (2 * (ctl->ndevs + 1) > ctl->table_cap) { /* keep the load at or below one half */
        size_t cap = table_grown(ctl->table_cap);
        uint32_t *table = cap ? malloc(cap * sizeof *table) : NULL;
        if (table == NULL) return NULL;
        memset(table, 0xFF, cap * sizeof *table);
        for (size_t d = 0; d < ctl->ndevs; d++) table_put(table, cap, ctl->devs[d].key, (uint32_t)d);
        free(ctl->table);
        ctl->table = table;
        ctl->table_cap = cap;
    }
    slot = &ctl->devs[ctl->ndevs];
    memset(slot, 0, sizeof *slot);
    memcpy(slot->dev_id, dev_id, AMORT_ID_OCTETS);
    slot->key = get_be(dev_id, AMORT_ID_OCTETS);
    slot->tag_len = 16; /* the reference's _DeviceState default, visible in state before any epoch */
    slot->g_head = slot->g_tail = NONE32;
    table_put(ctl->table, ctl->table_cap, slot->key, (uint32_t)ctl->ndevs);
    ctl->ndevs++;
    return slot;
}

amort_status amort_controller_new(amort_controller **out, const uint8_t controller_id[AMORT_ID_OCTETS],
                                  uint8_t sig_alg) {
    return amort_controller_new_ex(out, controller_id, sig_alg, NULL);
}

amort_status amort_controller_new_ex(amort_controller **out, const uint8_t controller_id[AMORT_ID_OCTETS],
                                     uint8_t sig_alg, const amort_options *options) {
    amort_controller *ctl;
    amort_options o;
    amort_status s;
    *out = NULL;
    if (options == NULL) amort_options_default(&o);
    else o = *options;
    if (!options_ok(&o)) return AMORT_E_ARGUMENT;
    if (sig_alg != 1 && sig_alg != 2) return AMORT_SIG_FAIL;
    ctl = alloc_with_crypto(sizeof *ctl, offsetof(amort_controller, c), &s);
    if (ctl == NULL) return s;
    memcpy(ctl->controller_id, controller_id, AMORT_ID_OCTETS);
    ctl->sig_alg = sig_alg;
    ctl->options = o;
    *out = ctl;
    return AMORT_OK;
}

void amort_controller_set_clock(amort_controller *ctl, int has_now, uint64_t now) {
    ctl->has_now = has_now != 0;
    ctl->now = now;
}

void amort_controller_free(amort_controller *ctl) {
    if (ctl == NULL) return;
    for (size_t d = 0; d < ctl->ndevs; d++) EVP_MAC_CTX_free(ctl->devs[d].mac);
    crypto_free(&ctl->c);
    free(ctl->devs);
    free(ctl->table);
    free(ctl->pend);
    free(ctl->closes);
    free(ctl->body);
    free(ctl->signed_buf);
    free(ctl->spans);
    free(ctl->touched);
    free(ctl->order);
    free(ctl->sorted);
    free(ctl->hashes);
    free(ctl->exceptions);
    OPENSSL_cleanse(ctl, sizeof *ctl);
    free(ctl);
}

/* Controller.install_epoch (after the fast path's enrolment of an unknown device). */
amort_status amort_controller_register_epoch(amort_controller *ctl, const uint8_t dev_id[AMORT_ID_OCTETS],
                                             uint32_t epoch, const uint8_t k_evid[AMORT_KEY_OCTETS],
                                             uint8_t tag_len, uint64_t expiry, uint16_t policy_id,
                                             uint64_t not_before) {
    dev_slot *slot;
    uint32_t d;
    if (!tag_len_ok(tag_len)) return AMORT_TAGLEN_DOWNGRADE;
    if (epoch == 0) return AMORT_E_ARGUMENT;
    slot = find_dev(ctl, dev_id);
    if (slot != NULL && slot->revoked) return AMORT_REVOKED;
    if (slot != NULL && epoch <= slot->epoch) return AMORT_EPOCH_STALE;
    if (slot == NULL && (slot = add_dev(ctl, dev_id)) == NULL) return AMORT_E_NOMEM;
    if (slot->mac == NULL) {
        if ((slot->mac = mac_new(&ctl->c, k_evid)) == NULL) return AMORT_E_CRYPTO;
    } else if (!EVP_MAC_init(slot->mac, k_evid, AMORT_KEY_OCTETS, NULL)) {
        return AMORT_E_CRYPTO;
    }
    d = (uint32_t)(slot - ctl->devs);
    if (slot->has_epoch) { /* Controller._close_epoch: drop its uncommitted reports, queue an EPOCH_CLOSE */
        size_t kept = 0;
        if (!reserve((void **)&ctl->closes, &ctl->cap_closes, ctl->ncloses + 1, sizeof *ctl->closes))
            return AMORT_E_NOMEM;
        for (size_t i = 0; i < ctl->npend; i++)
            if (!(ctl->pend[i].dev == d && ctl->pend[i].epoch == slot->epoch)) ctl->pend[kept++] = ctl->pend[i];
        ctl->npend = kept;
        ctl->closes[ctl->ncloses++] = (close_item){d, slot->epoch, slot->last_seen, slot->last_committed};
    }
    slot->has_epoch = 1;
    slot->epoch = epoch;
    slot->tag_len = tag_len;
    slot->policy_id = policy_id;
    slot->expiry = expiry;
    slot->not_before = not_before;
    slot->last_seen = slot->last_committed = slot->last_timestamp = 0;
    return AMORT_OK;
}

amort_status amort_controller_revoke(amort_controller *ctl, const uint8_t dev_id[AMORT_ID_OCTETS]) {
    dev_slot *slot = find_dev(ctl, dev_id);
    if (slot == NULL) return AMORT_DEVICE_UNKNOWN;
    if (slot->revoked) return AMORT_REVOKED;
    slot->revoked = 1;
    return AMORT_OK;
}

/* A controller verdict on a decoded report (no byte offset), returned from ingest_one. */
#define VERDICT(v, code_, field_)                                                                            \
    do {                                                                                                      \
        (v)->code = (uint8_t)(code_);                                                                         \
        (v)->field = (uint8_t)(field_);                                                                       \
        return AMORT_OK;                                                                                      \
    } while (0)

/* HMAC over a || b with the context's key (b may be empty). */
static int mac_compute2(EVP_MAC_CTX *m, const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
                        uint8_t out[AMORT_HASH_OCTETS]) {
    size_t outl = 0;
    return EVP_MAC_init(m, NULL, 0, NULL) && EVP_MAC_update(m, a, an) && (bn == 0 || EVP_MAC_update(m, b, bn)) &&
           EVP_MAC_final(m, out, &outl, AMORT_HASH_OCTETS) && outl == AMORT_HASH_OCTETS;
}

/* Controller.ingest for one report: the verdict goes to *v; the return value is only for failures of the
 * machinery (memory, libcrypto). The checks and their order are the reference's. */
static amort_status ingest_one(amort_controller *ctl, const uint8_t *p, size_t n, amort_verdict *v) {
    amort_report r;
    dev_slot *slot;
    pending_item *item;
    size_t pos = 0;
    int implied = ctl->options.wire_format == AMORT_WIRE_IMPLIED;
    uint8_t mac[AMORT_HASH_OCTETS];
    if (implied ? decode_record(p, n, &r, v, &pos) != AMORT_OK : amort_report_decode_as(p, n, AMORT_WIRE_EXPLICIT,
                                                                                        0, &r, v) != AMORT_OK)
        return AMORT_OK;
    slot = find_dev(ctl, r.dev_id);
    if (slot == NULL) VERDICT(v, AMORT_DEVICE_UNKNOWN, AMORT_F_RECORD_DEV_ID);
    if (slot->revoked) VERDICT(v, AMORT_REVOKED, AMORT_F_RECORD_DEV_ID);
    if (!slot->has_epoch || r.epoch != slot->epoch) VERDICT(v, AMORT_EPOCH_STALE, AMORT_F_RECORD_EPOCH);
    if (r.timestamp > slot->expiry) VERDICT(v, AMORT_EPOCH_STALE, AMORT_F_RECORD_TIMESTAMP);
    if (implied) {
        if (split_tags(p, n, pos, slot->tag_len, &r, v) != AMORT_OK) return AMORT_OK;
    } else if (r.tag_len != slot->tag_len) {
        VERDICT(v, AMORT_TAGLEN_DOWNGRADE, AMORT_F_TAG_LEN);
    }
    if (!mac_compute2(slot->mac, r.record, AMORT_RECORD_OCTETS, r.dtag,
                      ctl->options.variant == AMORT_VARIANT_HARDENED ? r.dtag_len : 0, mac))
        return AMORT_E_CRYPTO;
    if (CRYPTO_memcmp(mac, r.tag, r.tag_len) != 0) VERDICT(v, AMORT_MAC_FAIL, AMORT_F_TAG);
    if (r.seq <= slot->last_seen) VERDICT(v, AMORT_SEQ_DUPLICATE, AMORT_F_RECORD_SEQ);
    if (slot->last_seen == UINT64_MAX || r.seq != slot->last_seen + 1) VERDICT(v, AMORT_SEQ_GAP, AMORT_F_RECORD_SEQ);
    /* Controller._check_time: monotonic from the epoch's opening on, and no older than max_report_age */
    if (r.timestamp < slot->not_before || r.timestamp < slot->last_timestamp ||
        (ctl->now > r.timestamp && ctl->now - r.timestamp > ctl->options.max_report_age))
        VERDICT(v, AMORT_EPOCH_STALE, AMORT_F_RECORD_TIMESTAMP);
    if (!reserve((void **)&ctl->pend, &ctl->cap_pend, ctl->npend + 1, sizeof *ctl->pend)) return AMORT_E_NOMEM;
    item = &ctl->pend[ctl->npend];
    if (!leaf_hash(&ctl->c, p, n, item->leaf)) return AMORT_E_CRYPTO;
    item->dev = (uint32_t)(slot - ctl->devs);
    item->epoch = r.epoch;
    item->seq = r.seq;
    item->next = NONE32;
    ctl->npend++;
    slot->last_seen = r.seq;
    slot->last_timestamp = r.timestamp;
    return AMORT_OK;
}

amort_status amort_controller_ingest(amort_controller *ctl, const uint8_t *const *reports, const size_t *lens,
                                     size_t count, amort_verdict *verdicts) {
    if (!ctl->has_now) return AMORT_E_CLOCK;
    if (count > AMORT_BATCH_MAX) return AMORT_E_LIMIT;
    for (size_t i = 0; i < count; i++) {
        amort_status s = ingest_one(ctl, reports[i], reports[i] ? lens[i] : 0, &verdicts[i]);
        if (s != AMORT_OK) return s;
    }
    return AMORT_OK;
}

amort_status amort_controller_ingest_framed(amort_controller *ctl, const uint8_t *buffer, size_t len,
                                            amort_verdict *verdicts, size_t *count, size_t *bad_offset) {
    size_t pos = 0, n = 0;
    *count = 0;
    *bad_offset = 0;
    if (!ctl->has_now) return AMORT_E_CLOCK;
    while (pos < len) { /* the whole framing first (fastpath.unframe), so a broken buffer changes nothing */
        size_t k;
        if (len - pos < 2) {
            *bad_offset = pos;
            return AMORT_E_FRAME;
        }
        k = (size_t)get_be(buffer + pos, 2);
        if (k > len - pos - 2) {
            *bad_offset = pos;
            return AMORT_E_FRAME;
        }
        pos += 2 + k;
        if (++n > AMORT_BATCH_MAX) return AMORT_E_LIMIT;
    }
    for (pos = 0; *count < n; (*count)++) {
        size_t k = (size_t)get_be(buffer + pos, 2);
        amort_status s = ingest_one(ctl, buffer + pos + 2, k, &verdicts[*count]);
        if (s != AMORT_OK) return s;
        pos += 2 + k;
    }
    return AMORT_OK;
}

/* ---- the RFC 6962 tree (merkle.IncrementalTree) ------------------------------------------------------ */

static int tree_append(amort_controller *ctl, const uint8_t leaf[AMORT_HASH_OCTETS]) {
    uint8_t h[AMORT_HASH_OCTETS];
    unsigned height = 0;
    memcpy(h, leaf, AMORT_HASH_OCTETS);
    while (ctl->nstack > 0 && ctl->heights[ctl->nstack - 1] == height) {
        if (!node_hash(&ctl->c, ctl->stack[ctl->nstack - 1], h, h)) return 0;
        ctl->nstack--;
        height++;
    }
    ctl->heights[ctl->nstack] = (uint8_t)height;
    memcpy(ctl->stack[ctl->nstack], h, AMORT_HASH_OCTETS);
    ctl->nstack++;
    ctl->tree_size++;
    return 1;
}

static int tree_root(amort_controller *ctl, uint8_t out[AMORT_HASH_OCTETS]) {
    uint8_t r[AMORT_HASH_OCTETS];
    if (ctl->nstack == 0) return sha256_3(&ctl->c, (const uint8_t *)"", 0, NULL, 0, NULL, 0, out);
    memcpy(r, ctl->stack[ctl->nstack - 1], AMORT_HASH_OCTETS);
    for (size_t i = ctl->nstack - 1; i-- > 0;)
        if (!node_hash(&ctl->c, ctl->stack[i], r, r)) return 0;
    memcpy(out, r, AMORT_HASH_OCTETS);
    return 1;
}

/* merkle.root over n leaf hashes, in place: pair bottom-up, carry an odd node up unchanged. */
static int subtree_root(amort_crypto *c, uint8_t (*h)[AMORT_HASH_OCTETS], size_t n, uint8_t out[AMORT_HASH_OCTETS]) {
    while (n > 1) {
        size_t half = n / 2;
        for (size_t i = 0; i < half; i++)
            if (!node_hash(c, h[2 * i], h[2 * i + 1], h[i])) return 0;
        if (n % 2) memmove(h[half], h[n - 1], AMORT_HASH_OCTETS);
        n = half + n % 2;
    }
    memcpy(out, h[0], AMORT_HASH_OCTETS);
    return 1;
}

/* ---- checkpoints (Controller.build_checkpoint / record_checkpoint, Checkpoint.tbs) -------------------- */

typedef struct sort_entry {
    uint64_t key;
    uint32_t dev;
} sort_entry;

static int cmp_sort_entry(const void *a, const void *b) {
    const sort_entry *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

/* Undo the per-device grouping of the pending reports. */
static void ungroup(amort_controller *ctl, size_t ntouched) {
    for (size_t t = 0; t < ntouched; t++) {
        dev_slot *slot = &ctl->devs[ctl->touched[t]];
        slot->g_head = slot->g_tail = NONE32;
        slot->g_count = 0;
    }
}

/* The close entry's last committed seq: its (device, epoch) span in this body, else what was committed. */
static uint64_t close_committed(const amort_controller *ctl, const close_item *cl) {
    for (size_t s = 0; s < ctl->nspans; s++)
        if (ctl->spans[s].dev == cl->dev && ctl->spans[s].epoch == cl->epoch) return ctl->spans[s].seq_hi;
    return cl->committed_hi;
}

/* Every device in dev_id order; re-sorted only after registrations added devices. */
static int sort_devices(amort_controller *ctl) {
    sort_entry *tmp;
    if (ctl->nsorted == ctl->ndevs) return 1;
    if (!reserve((void **)&ctl->sorted, &ctl->cap_sorted, ctl->ndevs + 1, sizeof *ctl->sorted)) return 0;
    if ((tmp = malloc((ctl->ndevs + 1) * sizeof *tmp)) == NULL) return 0;
    for (size_t d = 0; d < ctl->ndevs; d++) tmp[d] = (sort_entry){ctl->devs[d].key, (uint32_t)d};
    qsort(tmp, ctl->ndevs, sizeof *tmp, cmp_sort_entry);
    for (size_t d = 0; d < ctl->ndevs; d++) ctl->sorted[d] = tmp[d].dev;
    free(tmp);
    ctl->nsorted = ctl->ndevs;
    return 1;
}

/* The devices with pending reports in dev_id order (the spans' canonical order) into ctl->order: a walk of
 * the cached sorted device list when many devices report, a sort of just those devices when few do. */
static int span_order(amort_controller *ctl, size_t ntouched) {
    if (ntouched * 8 >= ctl->ndevs) {
        size_t k = 0;
        if (!sort_devices(ctl)) return 0;
        for (size_t i = 0; i < ctl->ndevs; i++)
            if (ctl->devs[ctl->sorted[i]].g_count) ctl->order[k++] = ctl->sorted[i];
    } else {
        sort_entry *tmp = malloc((ntouched + 1) * sizeof *tmp);
        if (tmp == NULL) return 0;
        for (size_t t = 0; t < ntouched; t++) tmp[t] = (sort_entry){ctl->devs[ctl->touched[t]].key, ctl->touched[t]};
        qsort(tmp, ntouched, sizeof *tmp, cmp_sort_entry);
        for (size_t t = 0; t < ntouched; t++) ctl->order[t] = tmp[t].dev;
        free(tmp);
    }
    return 1;
}

/* The body's octets: header and fixed fields, the span list of the wire format, the close entries. 0 when the
 * size overflows size_t. */
static size_t body_size(int implied, size_t spans, size_t exceptions, size_t closes) {
    size_t size = 12 + 8 + 8 + 32 + 8 + 32 + 4 + 2 + 1; /* ... root, span count, close count, sig_alg */
    if (implied && !size_add(&size, 1, 4 + 4)) return 0; /* base epoch, exception count */
    if (!size_add(&size, spans, implied ? 56 : 60) || !size_add(&size, exceptions, implied ? 8 : 0) ||
        !size_add(&size, closes, 28))
        return 0;
    return size;
}

/* Every allocation happens before the tree changes, so only a libcrypto failure (AMORT_E_CRYPTO, never
 * expected) can leave the controller half-way; it is then unusable. */
amort_status amort_controller_checkpoint_body(amort_controller *ctl, const uint8_t **body, size_t *len) {
    size_t ntouched = 0, most = 1, size, pos = 0, nexc = 0;
    size_t ntake = ctl->ncloses > AMORT_CLOSES_MAX ? AMORT_CLOSES_MAX : ctl->ncloses; /* the rest wait */
    int implied = ctl->options.wire_format == AMORT_WIRE_IMPLIED;
    uint32_t base = 0;
    uint8_t root[AMORT_HASH_OCTETS];
    *body = NULL;
    *len = 0;
    if (ctl->awaiting) return AMORT_E_STATE;
    if (ctl->npend > UINT64_MAX - ctl->tree_size || ctl->committed == UINT64_MAX) return AMORT_E_LIMIT;
    if (!reserve((void **)&ctl->touched, &ctl->cap_touched, ctl->npend + 1, sizeof *ctl->touched))
        return AMORT_E_NOMEM;
    /* group the pending reports per device in arrival order; a device has one epoch among them, because
     * installing a newer epoch dropped the older one's pending reports */
    for (size_t i = 0; i < ctl->npend; i++) {
        pending_item *item = &ctl->pend[i];
        dev_slot *slot = &ctl->devs[item->dev];
        if (slot->g_count == 0) {
            ctl->touched[ntouched++] = item->dev;
            slot->g_head = (uint32_t)i;
        } else {
            ctl->pend[slot->g_tail].next = (uint32_t)i;
        }
        slot->g_tail = (uint32_t)i;
        item->next = NONE32;
        if (++slot->g_count > most) most = slot->g_count;
    }
    if (!reserve((void **)&ctl->order, &ctl->cap_order, ntouched + 1, sizeof *ctl->order) ||
        !reserve((void **)&ctl->spans, &ctl->cap_spans, ntouched + 1, sizeof *ctl->spans) ||
        !reserve((void **)&ctl->exceptions, &ctl->cap_exceptions, ntouched + 1, sizeof *ctl->exceptions) ||
        !reserve((void **)&ctl->hashes, &ctl->cap_hashes, most, sizeof *ctl->hashes) || !span_order(ctl, ntouched)) {
        ungroup(ctl, ntouched);
        return AMORT_E_NOMEM;
    }
    /* implied format (messages.ImpliedSpans): the first span's epoch is the base, the others are exceptions */
    for (size_t t = 0; t < ntouched; t++) {
        uint32_t epoch = ctl->pend[ctl->devs[ctl->order[t]].g_head].epoch;
        if (t == 0) base = epoch;
        else if (epoch != base) nexc++;
    }
    size = body_size(implied, ntouched, nexc, ntake);
    if (size == 0 || ntouched > UINT32_MAX) {
        ungroup(ctl, ntouched);
        return AMORT_E_LIMIT;
    }
    if (!reserve((void **)&ctl->body, &ctl->body_cap, size, 1)) {
        ungroup(ctl, ntouched);
        return AMORT_E_NOMEM;
    }
    /* the leaves join the tree in arrival order */
    for (size_t i = 0; i < ctl->npend; i++)
        if (!tree_append(ctl, ctl->pend[i].leaf)) goto crypto;
    if (!tree_root(ctl, root)) goto crypto;
    /* header and fixed fields */
    ctl->body[pos++] = 10;
    memcpy(ctl->body + pos, "AMORT.CKPT", 10);
    pos += 10;
    ctl->body[pos++] = 1;
    memcpy(ctl->body + pos, ctl->controller_id, AMORT_ID_OCTETS);
    put_be(ctl->body + pos + 8, ctl->committed, 8);
    memcpy(ctl->body + pos + 16, ctl->prev_hash, AMORT_HASH_OCTETS);
    put_be(ctl->body + pos + 48, ctl->tree_size, 8);
    memcpy(ctl->body + pos + 56, root, AMORT_HASH_OCTETS);
    pos += 88;
    if (implied) {
        put_be(ctl->body + pos, base, 4);
        pos += 4;
    }
    put_be(ctl->body + pos, ntouched, 4);
    pos += 4;
    /* spans: (dev_id, [epoch,] seq_lo, seq_hi, subtree root over the device's leaves in this batch) */
    ctl->nspans = 0;
    nexc = 0;
    for (size_t t = 0; t < ntouched; t++) {
        const dev_slot *slot = &ctl->devs[ctl->order[t]];
        const pending_item *first = &ctl->pend[slot->g_head], *last = &ctl->pend[slot->g_tail];
        size_t k = 0;
        for (uint32_t i = slot->g_head; i != NONE32; i = ctl->pend[i].next)
            memcpy(ctl->hashes[k++], ctl->pend[i].leaf, AMORT_HASH_OCTETS);
        memcpy(ctl->body + pos, slot->dev_id, AMORT_ID_OCTETS);
        pos += AMORT_ID_OCTETS;
        if (!implied) {
            put_be(ctl->body + pos, first->epoch, 4);
            pos += 4;
        } else if (first->epoch != base) {
            ctl->exceptions[nexc++] = (span_item){(uint32_t)t, first->epoch, 0};
        }
        put_be(ctl->body + pos, first->seq, 8);
        put_be(ctl->body + pos + 8, last->seq, 8);
        if (!subtree_root(&ctl->c, ctl->hashes, k, ctl->body + pos + 16)) goto crypto;
        pos += 48;
        ctl->spans[ctl->nspans++] = (span_item){ctl->order[t], first->epoch, last->seq};
    }
    if (implied) { /* the epoch exceptions: (span index, epoch), indexes increasing */
        put_be(ctl->body + pos, nexc, 4);
        pos += 4;
        for (size_t e = 0; e < nexc; e++) {
            put_be(ctl->body + pos, ctl->exceptions[e].dev, 4);
            put_be(ctl->body + pos + 4, ctl->exceptions[e].epoch, 4);
            pos += 8;
        }
    }
    /* EPOCH_CLOSE entries */
    put_be(ctl->body + pos, ntake, 2);
    pos += 2;
    for (size_t i = 0; i < ntake; i++) {
        const close_item *cl = &ctl->closes[i];
        memcpy(ctl->body + pos, ctl->devs[cl->dev].dev_id, AMORT_ID_OCTETS);
        put_be(ctl->body + pos + 8, cl->epoch, 4);
        put_be(ctl->body + pos + 12, close_committed(ctl, cl), 8);
        put_be(ctl->body + pos + 20, cl->last_seen, 8);
        pos += 28;
    }
    ctl->body[pos++] = ctl->sig_alg;
    ctl->body_len = pos;
    ungroup(ctl, ntouched);
    ctl->npend = 0;
    if (ctl->ncloses > ntake) /* the closes beyond this body move to the front, for the next one */
        memmove(ctl->closes, ctl->closes + ntake, (ctl->ncloses - ntake) * sizeof *ctl->closes);
    ctl->ncloses -= ntake;
    ctl->awaiting = 1;
    *body = ctl->body;
    *len = ctl->body_len;
    return AMORT_OK;
crypto:
    ungroup(ctl, ntouched);
    return AMORT_E_CRYPTO;
}

amort_status amort_controller_commit(amort_controller *ctl, const uint8_t *signature, size_t signature_len,
                                     const uint8_t **signed_out, size_t *len) {
    size_t n;
    *signed_out = NULL;
    *len = 0;
    if (!ctl->awaiting) return AMORT_E_STATE;
    if (signature_len > AMORT_SIGNATURE_MAX) return AMORT_E_ARGUMENT;
    n = ctl->body_len; /* + 2 + signature_len, checked */
    if (!size_add(&n, 1, 2) || !size_add(&n, signature_len, 1)) return AMORT_E_LIMIT;
    if (!reserve((void **)&ctl->signed_buf, &ctl->signed_cap, n, 1)) return AMORT_E_NOMEM;
    memcpy(ctl->signed_buf, ctl->body, ctl->body_len);
    put_be(ctl->signed_buf + ctl->body_len, signature_len, 2);
    if (signature_len) memcpy(ctl->signed_buf + ctl->body_len + 2, signature, signature_len);
    /* the link covers the signed octets (the body), not the randomised signature (controller.link_hash) */
    if (!sha256_3(&ctl->c, (const uint8_t *)LINK_DOMAIN, sizeof LINK_DOMAIN - 1, ctl->body, ctl->body_len, NULL, 0,
                  ctl->prev_hash))
        return AMORT_E_CRYPTO;
    ctl->signed_len = n;
    ctl->committed++;
    ctl->awaiting = 0;
    for (size_t s = 0; s < ctl->nspans; s++) { /* Controller.record_checkpoint's committed ranges */
        const span_item *sp = &ctl->spans[s];
        dev_slot *slot = &ctl->devs[sp->dev];
        if (slot->has_epoch && slot->epoch == sp->epoch) {
            if (sp->seq_hi > slot->last_committed) slot->last_committed = sp->seq_hi;
        } else { /* the epoch was closed after the body was built: its queued close sees the commitment */
            for (size_t i = 0; i < ctl->ncloses; i++) {
                close_item *cl = &ctl->closes[i];
                if (cl->dev == sp->dev && cl->epoch == sp->epoch && sp->seq_hi > cl->committed_hi)
                    cl->committed_hi = sp->seq_hi;
            }
        }
    }
    ctl->nspans = 0;
    *signed_out = ctl->signed_buf;
    *len = n;
    return AMORT_OK;
}

/* ---- controller state ----------------------------------------------------------------------------------- */

uint64_t amort_controller_tree_size(const amort_controller *ctl) { return ctl->tree_size; }

amort_status amort_controller_root(amort_controller *ctl, uint8_t out[AMORT_HASH_OCTETS]) {
    return tree_root(ctl, out) ? AMORT_OK : AMORT_E_CRYPTO;
}

uint64_t amort_controller_index(const amort_controller *ctl) { return ctl->committed + (ctl->awaiting ? 1 : 0); }

void amort_controller_prev_hash(const amort_controller *ctl, uint8_t out[AMORT_HASH_OCTETS]) {
    memcpy(out, ctl->prev_hash, AMORT_HASH_OCTETS);
}

size_t amort_controller_pending(const amort_controller *ctl) { return ctl->npend; }

int amort_controller_awaiting_commit(const amort_controller *ctl) { return ctl->awaiting; }

amort_status amort_controller_pending_digest(amort_controller *ctl, uint8_t out[AMORT_HASH_OCTETS]) {
    unsigned int outl = 0;
    if (!EVP_DigestInit_ex(ctl->c.md, ctl->c.sha256, NULL)) return AMORT_E_CRYPTO;
    for (size_t i = 0; i < ctl->npend; i++)
        if (!EVP_DigestUpdate(ctl->c.md, ctl->pend[i].leaf, AMORT_HASH_OCTETS)) return AMORT_E_CRYPTO;
    return EVP_DigestFinal_ex(ctl->c.md, out, &outl) ? AMORT_OK : AMORT_E_CRYPTO;
}

static void device_info(const dev_slot *slot, amort_device_info *out) {
    memcpy(out->dev_id, slot->dev_id, AMORT_ID_OCTETS);
    out->revoked = slot->revoked;
    out->epoch = slot->epoch;
    out->tag_len = slot->tag_len;
    out->policy_id = slot->policy_id;
    out->expiry = slot->expiry;
    out->not_before = slot->not_before;
    out->last_seen = slot->last_seen;
    out->last_committed = slot->last_committed;
    out->last_timestamp = slot->last_timestamp;
}

amort_status amort_controller_device(const amort_controller *ctl, const uint8_t dev_id[AMORT_ID_OCTETS],
                                     amort_device_info *out) {
    const dev_slot *slot = find_dev(ctl, dev_id);
    if (slot == NULL) return AMORT_DEVICE_UNKNOWN;
    device_info(slot, out);
    return AMORT_OK;
}

size_t amort_controller_device_count(const amort_controller *ctl) { return ctl->ndevs; }

void amort_controller_device_at(const amort_controller *ctl, size_t i, amort_device_info *out) {
    device_info(&ctl->devs[i], out);
}

size_t amort_controller_close_count(const amort_controller *ctl) { return ctl->ncloses; }

void amort_controller_close_at(const amort_controller *ctl, size_t i, amort_close_info *out) {
    memcpy(out->dev_id, ctl->devs[ctl->closes[i].dev].dev_id, AMORT_ID_OCTETS);
    out->epoch = ctl->closes[i].epoch;
    out->last_seen = ctl->closes[i].last_seen;
}

/* ---- device ------------------------------------------------------------------------------------------ */

/* The disclosure chain is walked once from K_L at epoch start. It is cut into S segments of m = ceil(sqrt L)
 * keys; the top key of every segment is kept (a "pebble"), the keys of the current segment are in `cur`,
 * and while the device reports from one segment, the next one is rebuilt from its pebble into `nxt`, one
 * hash per report. So each report costs at most one chain hash and memory is O(sqrt L) keys. */
struct amort_device {
    amort_crypto c;
    EVP_MAC_CTX *evid; /* keyed with K_evid once per epoch */
    EVP_MAC_CTX *disc; /* re-keyed with K_seq per report */
    uint8_t dev_id[AMORT_ID_OCTETS];
    uint32_t epoch;
    uint16_t policy_id;
    uint8_t tag_len;
    uint32_t length, m, nseg; /* L, segment size, number of segments */
    uint64_t seq;             /* last report built */
    uint8_t anchor[AMORT_KEY_OCTETS];
    uint8_t (*pebbles)[AMORT_KEY_OCTETS]; /* pebbles[s] = K_top(s) */
    uint8_t (*cur)[AMORT_KEY_OCTETS];     /* keys of segment cur_seg, cur[j - base - 1] = K_j */
    uint8_t (*nxt)[AMORT_KEY_OCTETS];     /* segment build_seg, filled from its top down to build_j */
    uint32_t cur_seg, build_seg, build_j;
    amort_options options;
};

/* Segment s covers keys base(s) + 1 .. top(s); s < nseg <= 4097 and m <= 4097, so base(s) < L + m fits. */
static uint32_t seg_base(const amort_device *d, uint32_t s) { return (uint32_t)((uint64_t)s * d->m); }

static uint32_t seg_top(const amort_device *d, uint32_t s) {
    uint64_t top = ((uint64_t)s + 1) * d->m;
    return top < d->length ? (uint32_t)top : d->length;
}

static void start_build(amort_device *d, uint32_t s) {
    d->build_seg = s;
    d->build_j = seg_top(d, s);
    memcpy(d->nxt[d->build_j - seg_base(d, s) - 1], d->pebbles[s], AMORT_KEY_OCTETS);
}

/* One hash of the next segment's rebuild (none when it is complete). */
static int build_step(amort_device *d) {
    uint32_t base;
    if (d->build_seg == NONE32) return 1;
    base = seg_base(d, d->build_seg);
    if (d->build_j <= base + 1) return 1;
    if (!chain_step(&d->c, d->nxt[d->build_j - base - 1], d->nxt[d->build_j - base - 2])) return 0;
    d->build_j--;
    return 1;
}

/* After report j: move to the next segment at its top, else take one rebuild step. */
static int chain_advance(amort_device *d, uint64_t j) {
    if (j >= d->length) return 1;
    if (j == seg_top(d, d->cur_seg)) {
        uint8_t (*t)[AMORT_KEY_OCTETS] = d->cur;
        /* the rebuild is complete here (m - 1 steps fit in the segment's m reports); finish it regardless */
        while (d->build_seg != NONE32 && d->build_j > seg_base(d, d->build_seg) + 1)
            if (!build_step(d)) return 0;
        d->cur = d->nxt;
        d->nxt = t;
        d->cur_seg++;
        if (d->cur_seg + 1 < d->nseg) start_build(d, d->cur_seg + 1);
        else d->build_seg = NONE32;
        return 1;
    }
    return build_step(d);
}

amort_status amort_device_new(amort_device **out, const uint8_t dev_id[AMORT_ID_OCTETS], uint32_t epoch,
                              const uint8_t k_evid[AMORT_KEY_OCTETS], const uint8_t chain_seed[AMORT_KEY_OCTETS],
                              uint8_t tag_len, uint16_t policy_id, uint32_t chain_length) {
    return amort_device_new_ex(out, dev_id, epoch, k_evid, chain_seed, tag_len, policy_id, chain_length, NULL, 1);
}

amort_status amort_device_new_ex(amort_device **out, const uint8_t dev_id[AMORT_ID_OCTETS], uint32_t epoch,
                                 const uint8_t k_evid[AMORT_KEY_OCTETS], const uint8_t chain_seed[AMORT_KEY_OCTETS],
                                 uint8_t tag_len, uint16_t policy_id, uint32_t chain_length,
                                 const amort_options *options, uint64_t next_seq) {
    amort_device *d;
    amort_options o;
    amort_status status;
    uint8_t k[AMORT_KEY_OCTETS];
    uint32_t first; /* the segment holding key next_seq, whose keys `cur` starts with */
    *out = NULL;
    if (options == NULL) amort_options_default(&o);
    else o = *options;
    if (!options_ok(&o) || next_seq == 0) return AMORT_E_ARGUMENT;
    if (!tag_len_ok(tag_len)) return AMORT_TAGLEN_DOWNGRADE;
    if (chain_length < 1) return AMORT_CHAIN_FAIL;
    if (chain_length > AMORT_CHAIN_MAX) return AMORT_E_LIMIT;
    d = alloc_with_crypto(sizeof *d, offsetof(amort_device, c), &status);
    if (d == NULL) return status;
    memcpy(d->dev_id, dev_id, AMORT_ID_OCTETS);
    d->options = o;
    d->epoch = epoch;
    d->policy_id = policy_id;
    d->tag_len = tag_len;
    d->length = chain_length;
    d->seq = next_seq - 1;
    for (d->m = 1; (uint64_t)d->m * d->m < chain_length; d->m++) {
    }
    d->nseg = (chain_length + d->m - 1) / d->m;
    first = next_seq <= chain_length ? (uint32_t)((next_seq - 1) / d->m) : d->nseg - 1;
    d->pebbles = malloc((size_t)d->nseg * AMORT_KEY_OCTETS);
    d->cur = malloc((size_t)d->m * AMORT_KEY_OCTETS);
    d->nxt = malloc((size_t)d->m * AMORT_KEY_OCTETS);
    d->evid = mac_new(&d->c, k_evid);
    d->disc = mac_new(&d->c, k_evid);
    if (d->pebbles == NULL || d->cur == NULL || d->nxt == NULL || d->evid == NULL || d->disc == NULL) {
        amort_status s = (d->evid == NULL || d->disc == NULL) ? AMORT_E_CRYPTO : AMORT_E_NOMEM;
        amort_device_free(d);
        return s;
    }
    /* walk K_L down to K_0 once: keep every segment's top key and the keys of the first segment in use */
    memcpy(k, chain_seed, AMORT_KEY_OCTETS);
    for (uint32_t j = chain_length; j >= 1; j--) {
        uint32_t s = (j - 1) / d->m;
        if (j == seg_top(d, s)) memcpy(d->pebbles[s], k, AMORT_KEY_OCTETS);
        if (s == first) memcpy(d->cur[j - seg_base(d, s) - 1], k, AMORT_KEY_OCTETS);
        if (!chain_step(&d->c, k, k)) {
            amort_device_free(d);
            return AMORT_E_CRYPTO;
        }
    }
    memcpy(d->anchor, k, AMORT_KEY_OCTETS);
    OPENSSL_cleanse(k, sizeof k);
    d->cur_seg = first;
    d->build_seg = NONE32;
    if (first + 1 < d->nseg) start_build(d, first + 1);
    *out = d;
    return AMORT_OK;
}

void amort_device_free(amort_device *d) {
    if (d == NULL) return;
    EVP_MAC_CTX_free(d->evid);
    EVP_MAC_CTX_free(d->disc);
    crypto_free(&d->c);
    if (d->pebbles) OPENSSL_cleanse(d->pebbles, (size_t)d->nseg * AMORT_KEY_OCTETS);
    if (d->cur) OPENSSL_cleanse(d->cur, (size_t)d->m * AMORT_KEY_OCTETS);
    if (d->nxt) OPENSSL_cleanse(d->nxt, (size_t)d->m * AMORT_KEY_OCTETS);
    free(d->pebbles);
    free(d->cur);
    free(d->nxt);
    OPENSSL_cleanse(d, sizeof *d);
    free(d);
}

amort_status amort_device_report(amort_device *d, const uint8_t digest[AMORT_HASH_OCTETS], uint64_t timestamp,
                                 uint8_t flags, int disclosure_tag, uint8_t *out, size_t *out_len) {
    uint8_t tag[AMORT_HASH_OCTETS], dtag[AMORT_HASH_OCTETS];
    uint64_t j;
    size_t pos, dtag_len = 0;
    int explicit = d->options.wire_format == AMORT_WIRE_EXPLICIT;
    *out_len = 0;
    if (d->seq == UINT64_MAX) return AMORT_EPOCH_STALE; /* Device.report: the epoch cannot go on */
    j = d->seq + 1;
    if (disclosure_tag && j > d->length) return AMORT_CHAIN_FAIL;
    /* the canonical record (docs/protocol.md: every field behind its width) */
    out[0] = 10;
    memcpy(out + 1, "AMORT.EVID", 10);
    out[11] = 1;
    out[12] = 1;
    out[13] = 8;
    memcpy(out + 14, d->dev_id, AMORT_ID_OCTETS);
    out[22] = 4;
    put_be(out + 23, d->epoch, 4);
    out[27] = 8;
    put_be(out + 28, j, 8);
    out[36] = 8;
    put_be(out + 37, timestamp, 8);
    out[45] = 32;
    memcpy(out + 46, digest, AMORT_HASH_OCTETS);
    out[78] = 2;
    put_be(out + 79, d->policy_id, 2);
    out[81] = 1;
    out[82] = flags;
    /* disclosure tag under K_j */
    if (disclosure_tag) {
        size_t outl = 0;
        const uint8_t *key = d->cur[j - seg_base(d, d->cur_seg) - 1];
        if (!EVP_MAC_init(d->disc, key, AMORT_KEY_OCTETS, NULL) || !EVP_MAC_update(d->disc, out, AMORT_RECORD_OCTETS) ||
            !EVP_MAC_final(d->disc, dtag, &outl, AMORT_HASH_OCTETS))
            return AMORT_E_CRYPTO;
        dtag_len = d->tag_len;
    }
    /* evidence tag under K_evid: over the record, hardened over the record and the disclosure tag */
    if (!mac_compute2(d->evid, out, AMORT_RECORD_OCTETS, dtag,
                      d->options.variant == AMORT_VARIANT_HARDENED ? dtag_len : 0, tag))
        return AMORT_E_CRYPTO;
    pos = AMORT_RECORD_OCTETS;
    if (explicit) out[pos++] = d->tag_len;
    memcpy(out + pos, tag, d->tag_len);
    pos += d->tag_len;
    if (explicit) out[pos++] = (uint8_t)dtag_len;
    memcpy(out + pos, dtag, dtag_len);
    pos += dtag_len;
    if (!chain_advance(d, j)) return AMORT_E_CRYPTO;
    d->seq = j;
    *out_len = pos;
    return AMORT_OK;
}

amort_status amort_device_chain_key(amort_device *d, uint64_t j, uint8_t out[AMORT_KEY_OCTETS]) {
    uint32_t s, top;
    uint8_t k[AMORT_KEY_OCTETS];
    if (j == 0) {
        memcpy(out, d->anchor, AMORT_KEY_OCTETS);
        return AMORT_OK;
    }
    if (j > d->length) return AMORT_CHAIN_FAIL;
    s = (uint32_t)((j - 1) / d->m);
    top = seg_top(d, s);
    memcpy(k, d->pebbles[s], AMORT_KEY_OCTETS);
    for (uint64_t i = top; i > j; i--)
        if (!chain_step(&d->c, k, k)) return AMORT_E_CRYPTO;
    memcpy(out, k, AMORT_KEY_OCTETS);
    OPENSSL_cleanse(k, sizeof k);
    return AMORT_OK;
}

uint64_t amort_device_seq(const amort_device *d) { return d->seq; }

void amort_device_anchor(const amort_device *d, uint8_t out[AMORT_KEY_OCTETS]) {
    memcpy(out, d->anchor, AMORT_KEY_OCTETS);
}

/* ---- timing of the primitives ------------------------------------------------------------------------ */

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

amort_status amort_time_primitives(size_t iterations, amort_primitive_times *out) {
    amort_crypto c;
    EVP_MAC_CTX *keyed;
    uint8_t key[AMORT_KEY_OCTETS], report[AMORT_REPORT_MAX_OCTETS], h[AMORT_HASH_OCTETS];
    double t;
    int ok = 1;
    memset(out, 0, sizeof *out);
    if (iterations == 0) return AMORT_E_ARGUMENT;
    for (size_t i = 0; i < sizeof key; i++) key[i] = (uint8_t)(i * 7 + 1);
    for (size_t i = 0; i < sizeof report; i++) report[i] = (uint8_t)(i * 13 + 5);
    memset(h, 0x5A, sizeof h);
    if (crypto_init(&c) != AMORT_OK) return AMORT_E_CRYPTO;
    if ((keyed = mac_new(&c, key)) == NULL) {
        crypto_free(&c);
        return AMORT_E_CRYPTO;
    }
    t = now_ns();
    for (size_t i = 0; i < iterations && ok; i++) ok = mac_compute(keyed, report, AMORT_RECORD_OCTETS, h);
    out->hmac_ns = (now_ns() - t) / (double)iterations;
    t = now_ns();
    for (size_t i = 0; i < iterations && ok; i++) {
        size_t outl = 0;
        EVP_MAC_CTX *dup = EVP_MAC_CTX_dup(keyed);
        ok = dup != NULL && EVP_MAC_update(dup, report, AMORT_RECORD_OCTETS) &&
             EVP_MAC_final(dup, h, &outl, AMORT_HASH_OCTETS);
        EVP_MAC_CTX_free(dup);
    }
    out->hmac_dup_ns = (now_ns() - t) / (double)iterations;
    t = now_ns();
    for (size_t i = 0; i < iterations && ok; i++) ok = leaf_hash(&c, report, sizeof report, h);
    out->leaf_ns = (now_ns() - t) / (double)iterations;
    t = now_ns();
    for (size_t i = 0; i < iterations && ok; i++) ok = node_hash(&c, h, h, h);
    out->node_ns = (now_ns() - t) / (double)iterations;
    t = now_ns();
    for (size_t i = 0; i < iterations && ok; i++) ok = chain_step(&c, h, h);
    out->chain_ns = (now_ns() - t) / (double)iterations;
    EVP_MAC_CTX_free(keyed);
    crypto_free(&c);
    return ok ? AMORT_OK : AMORT_E_CRYPTO;
}
