/* Device-side evidence generation for the control-cycle harness: one report per call, built with the
 * native AMORT-V1 device path (lib/pqlab/amort/fastpath/native/amort_core.h) — the 83-octet record, its evidence
 * tag under K_evid and, for two tags, the disclosure tag under K_j with the chain step.
 */
#ifndef PQ_CYCLE_EVIDENCE_H
#define PQ_CYCLE_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { PQ_EVIDENCE_ONE_TAG = 1, PQ_EVIDENCE_TWO_TAGS = 2 };
#define PQ_EVIDENCE_MAX_REPORT 160   /* at least AMORT_REPORT_MAX_OCTETS (117: record + two 16-octet tags) */

typedef struct {
    int tags;                 /* PQ_EVIDENCE_ONE_TAG or PQ_EVIDENCE_TWO_TAGS */
    uint8_t k_evid[32];       /* epoch evidence key */
    uint8_t chain_seed[32];   /* device-only disclosure seed K_L */
    uint32_t chain_length;    /* L: reports the epoch can carry */
    uint8_t dev_id[8];
    uint32_t epoch;
    uint8_t digest[32];       /* cached measurement digest of the software state */
    uint16_t policy_id;
    uint8_t tag_len;          /* 8, 12 or 16 */
} pq_evidence_config;

typedef struct pq_evidence pq_evidence;

/* NULL on bad configuration or allocation failure. */
pq_evidence *pq_evidence_new(const pq_evidence_config *cfg);
/* pq_cycle_hook: build report `seq` (1-based) stamped `now_ns`; 0 on success. */
int pq_evidence_hook(void *ctx, uint64_t seq, uint64_t now_ns);
/* Copy the last report's octets into buf; returns its length (0 if none, or cap too small). */
size_t pq_evidence_last(const pq_evidence *ev, uint8_t *buf, size_t cap);
/* Anchor K0 of the disclosure chain (what EPOCH_OPEN commits). */
void pq_evidence_anchor(const pq_evidence *ev, uint8_t out[32]);
void pq_evidence_free(pq_evidence *ev);

/* The per-scan cost run: no evidence, one tag and two tags with the chain step in rotation, cycle by cycle, so
 * the three workloads meet the same state of the host (its caches, its other tenants) and their difference is
 * the added work alone. Cycle i of the recorded cycles runs variant i % 3 (0: none, 1: one tag, 2: two tags);
 * every variant, the empty one too, goes through the same hook call and clock reads. */
typedef struct pq_rotation pq_rotation;

/* NULL on bad configuration (`one` must be a one-tag config, `two` a two-tag one) or allocation failure. */
pq_rotation *pq_rotation_new(const pq_evidence_config *one, const pq_evidence_config *two);
/* pq_cycle_hook: the next variant of the rotation; 0 on success. */
int pq_rotation_hook(void *ctx, uint64_t seq, uint64_t now_ns);
/* The variant the n-th call (0-based) ran: n % 3. */
int pq_rotation_variant(uint64_t call);
void pq_rotation_free(pq_rotation *rot);

#ifdef __cplusplus
}
#endif

#endif /* PQ_CYCLE_EVIDENCE_H */
