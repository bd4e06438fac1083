/*
 * amort_core.h — the AMORT-V1 per-report path in plain C (C11 + OpenSSL >= 3.0 libcrypto).
 *
 * Controller side: decode and check batches of reports exactly as the Python reference model's
 * Controller.ingest does (same checks, same order, same codes), append accepted reports to an RFC 6962
 * tree, and assemble the to-be-signed checkpoint body byte-identical to pqlab.amort.messages.Checkpoint.
 * Device side: build a report (record, evidence tag, disclosure tag) and advance the disclosure chain.
 * Wire formats: docs/protocol.md. The reference model (lib/pqlab/amort/) is the readable truth; the
 * differential vectors in tests/vectors/amort_differential/ hold the two to each other.
 *
 * No Python, no global state: every object carries its own libcrypto handles, so a C harness may compile
 * amort_core.c into its own program. Objects are not thread-safe; use one per thread. Pointers returned by
 * accessors stay valid until the next call on the same object.
 */
#ifndef PQLAB_AMORT_CORE_H
#define PQLAB_AMORT_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AMORT_ID_OCTETS 8
#define AMORT_HASH_OCTETS 32
#define AMORT_KEY_OCTETS 32
#define AMORT_RECORD_OCTETS 83
#define AMORT_REPORT_MAX_OCTETS (AMORT_RECORD_OCTETS + 1 + 16 + 1 + 16) /* 117: both 16-octet tags, explicit */
#define AMORT_DEFAULT_MAX_REPORT_AGE 300000u /* ms (pqlab.amort.profile.DEFAULT_MAX_REPORT_AGE_MS) */

/* The deployment-wide choices (pqlab.amort.profile; docs/protocol.md): wire format and protocol variant. */
enum { AMORT_WIRE_IMPLIED = 0, AMORT_WIRE_EXPLICIT = 1 };  /* tags without / with length octets, ... */
enum { AMORT_VARIANT_PAPER = 0, AMORT_VARIANT_HARDENED = 1 }; /* hardened: the evidence tag covers the dtag */

typedef struct amort_options {
    uint8_t wire_format;     /* AMORT_WIRE_IMPLIED (default) or AMORT_WIRE_EXPLICIT */
    uint8_t variant;         /* AMORT_VARIANT_HARDENED (default) or AMORT_VARIANT_PAPER */
    uint64_t max_report_age; /* ms: an older report is EPOCH_STALE (controller only) */
} amort_options;

/* The defaults (the secure ones, as pqlab.amort.profile.SECURE): implied wire format, hardened variant,
 * AMORT_DEFAULT_MAX_REPORT_AGE. */
void amort_options_default(amort_options *options);
#define AMORT_BATCH_MAX 1024          /* reports per ingest call (pqlab.amort.fastpath.api.MAX_BATCH) */
#define AMORT_CHAIN_MAX (1u << 24)    /* disclosure keys per epoch */
#define AMORT_SIGNATURE_MAX 0xFFFFu   /* the checkpoint's 2-octet signature length */
#define AMORT_CLOSES_MAX 0xFFFFu      /* close entries per checkpoint (its 2-octet count); more wait for the next */

/* Status codes. 1..20 are the protocol codes, in the order of pqlab.amort.errors.Code; the CPython
 * binding maps each to the AmortError of the same name. The rest are not verdicts on a report. */
typedef enum amort_status {
    AMORT_OK = 0,
    AMORT_MAC_FAIL = 1,
    AMORT_TRUNCATED = 2,
    AMORT_TRAILING = 3,
    AMORT_SIG_FAIL = 4,
    AMORT_CHAIN_FAIL = 5,
    AMORT_PROOF_FAIL = 6,
    AMORT_SEQ_DUPLICATE = 7,
    AMORT_SEQ_GAP = 8,
    AMORT_EPOCH_STALE = 9,
    AMORT_DEVICE_UNKNOWN = 10,
    AMORT_REVOKED = 11,
    AMORT_CKPT_FORK = 12,
    AMORT_CKPT_DISCONTINUITY = 13,
    AMORT_DISCLOSE_EARLY = 14,
    AMORT_TAGLEN_DOWNGRADE = 15,
    AMORT_BAD_DOMAIN = 16,
    AMORT_BAD_VERSION = 17,
    AMORT_ERR_EVIDENCE_INCOMPLETE = 18,
    AMORT_ERR_RESTART_RATE = 19,
    AMORT_PROFILE_MISMATCH = 20, /* never from this core (it reads no profile octet); named for the table */
    AMORT_PROTOCOL_CODES = 20,
    AMORT_E_ARGUMENT = 32, /* an argument out of range (names its field) */
    AMORT_E_STATE = 33,    /* a call out of order (second body before commit, commit without body) */
    AMORT_E_LIMIT = 34,    /* a batch, chain or checkpoint larger than the format or API allows */
    AMORT_E_FRAME = 35,    /* a framed batch buffer breaks off inside a frame */
    AMORT_E_NOMEM = 36,
    AMORT_E_CRYPTO = 37,   /* libcrypto refused (never expected) */
    AMORT_E_CLOCK = 38     /* ingest without a clock: freshness cannot be judged, nothing is accepted */
} amort_status;

/* The status's name ("MAC_FAIL", ..., "E_ARGUMENT") and a one-line description; never NULL. */
const char *amort_status_name(amort_status status);
const char *amort_strerror(amort_status status);

/* Where a report was refused: the reference model's field names (pqlab.amort.codec / controller). */
typedef enum amort_field {
    AMORT_F_NONE = 0,
    AMORT_F_REPORT,              /* "Report": the whole message (not octets; trailing octets) */
    AMORT_F_DOMAIN_LEN,          /* "Report.domain.len" */
    AMORT_F_DOMAIN,              /* "Report.domain" */
    AMORT_F_VERSION_LEN,
    AMORT_F_VERSION,
    AMORT_F_DEV_ID_LEN,
    AMORT_F_DEV_ID,
    AMORT_F_EPOCH_LEN,
    AMORT_F_EPOCH,
    AMORT_F_SEQ_LEN,
    AMORT_F_SEQ,
    AMORT_F_TIMESTAMP_LEN,
    AMORT_F_TIMESTAMP,
    AMORT_F_DIGEST_LEN,
    AMORT_F_DIGEST,
    AMORT_F_POLICY_ID_LEN,
    AMORT_F_POLICY_ID,
    AMORT_F_FLAGS_LEN,
    AMORT_F_FLAGS,
    AMORT_F_TAG_LEN,             /* "Report.tag_len" */
    AMORT_F_TAG,                 /* "Report.tag" */
    AMORT_F_DTAG_LEN,
    AMORT_F_DTAG,
    AMORT_F_RECORD_DEV_ID,       /* "Record.dev_id": controller checks, no offset */
    AMORT_F_RECORD_EPOCH,
    AMORT_F_RECORD_TIMESTAMP,
    AMORT_F_RECORD_SEQ,
    AMORT_F_COUNT
} amort_field;

/* The field's name as the reference model spells it (e.g. "Report.digest"); "" for AMORT_F_NONE. */
const char *amort_field_name(amort_field field);

/* One report's outcome. offset is the byte offset the reference appends as "@offset", or -1. */
typedef struct amort_verdict {
    uint8_t code;   /* amort_status: AMORT_OK or a protocol code */
    uint8_t field;  /* amort_field */
    int32_t offset;
} amort_verdict;

/* A decoded report; pointers point into the decoded buffer. */
typedef struct amort_report {
    const uint8_t *record;   /* the 83 record octets (what both tags cover) */
    const uint8_t *dev_id;
    uint32_t epoch;
    uint64_t seq;
    uint64_t timestamp;
    const uint8_t *digest;
    uint16_t policy_id;
    uint8_t flags;
    uint8_t tag_len;
    const uint8_t *tag;
    uint8_t dtag_len;
    const uint8_t *dtag;
} amort_report;

/* Decode one report exactly as pqlab.amort.messages.Report.decode(data, wire_format=..., tag_len=...):
 * AMORT_OK, or the code with *where naming the field and offset. In the implied wire format tag_len is the
 * epoch's tag length (0: inferred from the length, as the reference does without one); the explicit format
 * ignores it. data == NULL stands for "not an octet string": TRUNCATED at "Report", as the reference
 * Reader says for a non-bytes input. amort_report_decode is the implied format with an inferred length. */
amort_status amort_report_decode_as(const uint8_t *data, size_t len, uint8_t wire_format, uint8_t tag_len,
                                    amort_report *out, amort_verdict *where);
amort_status amort_report_decode(const uint8_t *data, size_t len, amort_report *out, amort_verdict *where);

/* ---- controller ------------------------------------------------------------------------------------ */

typedef struct amort_controller amort_controller;

typedef struct amort_device_info {
    uint8_t dev_id[AMORT_ID_OCTETS];
    int revoked;
    uint32_t epoch;
    uint8_t tag_len;
    uint16_t policy_id;
    uint64_t expiry;
    uint64_t not_before;
    uint64_t last_seen;
    uint64_t last_committed;
    uint64_t last_timestamp;
} amort_device_info;

typedef struct amort_close_info {
    uint8_t dev_id[AMORT_ID_OCTETS];
    uint32_t epoch;
    uint64_t last_seen;
} amort_close_info;

/* A controller with the default options (options == NULL in _ex) or the given ones; AMORT_E_ARGUMENT for an
 * unknown wire format or variant, AMORT_SIG_FAIL for an unknown sig_alg. */
amort_status amort_controller_new(amort_controller **out, const uint8_t controller_id[AMORT_ID_OCTETS],
                                  uint8_t sig_alg);
amort_status amort_controller_new_ex(amort_controller **out, const uint8_t controller_id[AMORT_ID_OCTETS],
                                     uint8_t sig_alg, const amort_options *options);
void amort_controller_free(amort_controller *ctl);

/* Install epoch as the device's current one under k_evid (enrolling an unknown device), keying its MAC
 * context once; a previous epoch is closed (its pending reports dropped, an EPOCH_CLOSE queued).
 * not_before is the epoch's open time (a record stamped earlier is EPOCH_STALE).
 * AMORT_REVOKED, AMORT_EPOCH_STALE (epoch not above the current), AMORT_TAGLEN_DOWNGRADE, AMORT_E_ARGUMENT. */
amort_status amort_controller_register_epoch(amort_controller *ctl, const uint8_t dev_id[AMORT_ID_OCTETS],
                                             uint32_t epoch, const uint8_t k_evid[AMORT_KEY_OCTETS],
                                             uint8_t tag_len, uint64_t expiry, uint16_t policy_id,
                                             uint64_t not_before);
/* The controller's clock for the following ingests (ms, the timestamps' clock): with has_now, a report
 * older than max_report_age is EPOCH_STALE; without (the initial state), ingest refuses every batch with
 * AMORT_E_CLOCK — a report is never accepted with its freshness unchecked. */
void amort_controller_set_clock(amort_controller *ctl, int has_now, uint64_t now);
/* AMORT_DEVICE_UNKNOWN or AMORT_REVOKED (already revoked), as Controller.revoke. */
amort_status amort_controller_revoke(amort_controller *ctl, const uint8_t dev_id[AMORT_ID_OCTETS]);

/* Check count reports (reports[i] of lens[i] octets; reports[i] == NULL: not an octet string) in order,
 * writing one verdict each. Returns AMORT_OK unless the batch itself is refused (AMORT_E_CLOCK without a
 * clock, AMORT_E_LIMIT above AMORT_BATCH_MAX, AMORT_E_NOMEM, AMORT_E_CRYPTO). */
amort_status amort_controller_ingest(amort_controller *ctl, const uint8_t *const *reports, const size_t *lens,
                                     size_t count, amort_verdict *verdicts);
/* The same over one buffer of reports, each behind a 2-octet big-endian length. The framing is checked
 * before any report: AMORT_E_FRAME with *bad_offset, or AMORT_E_LIMIT. verdicts needs AMORT_BATCH_MAX. */
amort_status amort_controller_ingest_framed(amort_controller *ctl, const uint8_t *buffer, size_t len,
                                            amort_verdict *verdicts, size_t *count, size_t *bad_offset);

/* Append the pending reports to the tree and build the to-be-signed checkpoint (Checkpoint.tbs()) with up to
 * AMORT_CLOSES_MAX of the queued closes (the rest stay queued for the next body, oldest first).
 * *body stays valid until the next commit. AMORT_E_STATE if a body awaits commit, AMORT_E_LIMIT for a tree
 * or index at 2^64 or a body larger than size_t (checked before anything changes). */
amort_status amort_controller_checkpoint_body(amort_controller *ctl, const uint8_t **body, size_t *len);
/* Attach the signature: *signed_out = body || len(2) || signature (valid until the next body); chains
 * prev_hash = SHA-256("AMORT.LINK" || body) — the signature is not linked, so a re-signed body is the same
 * checkpoint — and advances the devices' committed ranges. */
amort_status amort_controller_commit(amort_controller *ctl, const uint8_t *signature, size_t signature_len,
                                     const uint8_t **signed_out, size_t *len);

uint64_t amort_controller_tree_size(const amort_controller *ctl);
amort_status amort_controller_root(amort_controller *ctl, uint8_t out[AMORT_HASH_OCTETS]);
uint64_t amort_controller_index(const amort_controller *ctl);
void amort_controller_prev_hash(const amort_controller *ctl, uint8_t out[AMORT_HASH_OCTETS]);
size_t amort_controller_pending(const amort_controller *ctl);
int amort_controller_awaiting_commit(const amort_controller *ctl);
/* SHA-256 over the pending reports' leaf hashes, in order (a compact fingerprint of the pending batch). */
amort_status amort_controller_pending_digest(amort_controller *ctl, uint8_t out[AMORT_HASH_OCTETS]);
/* AMORT_DEVICE_UNKNOWN if the device was never registered (revoked devices are reported). */
amort_status amort_controller_device(const amort_controller *ctl, const uint8_t dev_id[AMORT_ID_OCTETS],
                                     amort_device_info *out);
size_t amort_controller_device_count(const amort_controller *ctl);
void amort_controller_device_at(const amort_controller *ctl, size_t i, amort_device_info *out);
size_t amort_controller_close_count(const amort_controller *ctl);
void amort_controller_close_at(const amort_controller *ctl, size_t i, amort_close_info *out);

/* ---- device ---------------------------------------------------------------------------------------- */

typedef struct amort_device amort_device;

/* A device in epoch with evidence key k_evid and a disclosure chain K_0..K_L from chain_seed = K_L
 * (L = chain_length), K_(j-1) = SHA-256("AMORT.CHAIN" || K_j). Walks the chain once (L hashes) and then
 * keeps O(sqrt L) keys: each report does at most one chain hash. AMORT_CHAIN_FAIL for L < 1,
 * AMORT_E_LIMIT above AMORT_CHAIN_MAX, AMORT_TAGLEN_DOWNGRADE for a tag length outside {8, 12, 16}. */
amort_status amort_device_new(amort_device **out, const uint8_t dev_id[AMORT_ID_OCTETS], uint32_t epoch,
                              const uint8_t k_evid[AMORT_KEY_OCTETS], const uint8_t chain_seed[AMORT_KEY_OCTETS],
                              uint8_t tag_len, uint16_t policy_id, uint32_t chain_length);
/* The same with options (NULL: the defaults) and the sequence number of its first report (1: a new epoch;
 * above: an epoch resumed after a restart). AMORT_E_ARGUMENT for next_seq 0 or unknown options. */
amort_status amort_device_new_ex(amort_device **out, const uint8_t dev_id[AMORT_ID_OCTETS], uint32_t epoch,
                                 const uint8_t k_evid[AMORT_KEY_OCTETS], const uint8_t chain_seed[AMORT_KEY_OCTETS],
                                 uint8_t tag_len, uint16_t policy_id, uint32_t chain_length,
                                 const amort_options *options, uint64_t next_seq);
void amort_device_free(amort_device *dev);

/* The next report (seq = last + 1) into out (AMORT_REPORT_MAX_OCTETS): record, disclosure tag under K_seq
 * (with disclosure_tag) and evidence tag (hardened: over record and disclosure tag), in the options' wire
 * format. AMORT_CHAIN_FAIL when seq exceeds the chain, AMORT_EPOCH_STALE after seq 2^64 - 1 (the epoch
 * cannot go on); state unchanged on either. */
amort_status amort_device_report(amort_device *dev, const uint8_t digest[AMORT_HASH_OCTETS], uint64_t timestamp,
                                 uint8_t flags, int disclosure_tag, uint8_t *out, size_t *out_len);
/* K_j for 0 <= j <= L (O(sqrt L) hashes), else AMORT_CHAIN_FAIL. */
amort_status amort_device_chain_key(amort_device *dev, uint64_t j, uint8_t out[AMORT_KEY_OCTETS]);
uint64_t amort_device_seq(const amort_device *dev);
void amort_device_anchor(const amort_device *dev, uint8_t out[AMORT_KEY_OCTETS]);

/* ---- timing of the path's own primitives ------------------------------------------------------------ */

typedef struct amort_primitive_times {
    double hmac_ns;       /* evidence tag as the controller computes it: keyed context re-initialised, 83 B */
    double hmac_dup_ns;   /* the same with EVP_MAC_CTX_dup of the keyed context per record */
    double leaf_ns;       /* RFC 6962 leaf hash of a 117-octet report */
    double node_ns;       /* RFC 6962 interior node hash */
    double chain_ns;      /* one disclosure-chain step */
} amort_primitive_times;

/* Median-free simple timing: each primitive run `iterations` times back to back (CLOCK_MONOTONIC). */
amort_status amort_time_primitives(size_t iterations, amort_primitive_times *out);

#ifdef __cplusplus
}
#endif

#endif /* PQLAB_AMORT_CORE_H */
