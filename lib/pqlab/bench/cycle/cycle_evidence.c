/* PLACEHOLDER — replaced by the native AMORT-V1 device path once branch `native` lands amort_core.
 * Until then pq_evidence_hook only copies octets so the loop can be developed; PQ_EVIDENCE_IS_PLACEHOLDER
 * tells Python (pqlab.bench._cycle.EVIDENCE_PLACEHOLDER) and the study refuses to report with it. */
#include "cycle_evidence.h"

#include <stdlib.h>
#include <string.h>

const int PQ_EVIDENCE_IS_PLACEHOLDER = 1;

struct pq_evidence {
    pq_evidence_config cfg;
    uint8_t last[PQ_EVIDENCE_MAX_REPORT];
    size_t last_len;
};

pq_evidence *pq_evidence_new(const pq_evidence_config *cfg) {
    if (!cfg || (cfg->tags != PQ_EVIDENCE_ONE_TAG && cfg->tags != PQ_EVIDENCE_TWO_TAGS)) return NULL;
    pq_evidence *ev = calloc(1, sizeof *ev);
    if (ev) ev->cfg = *cfg;
    return ev;
}

int pq_evidence_hook(void *ctx, uint64_t seq, uint64_t now_ns) {
    pq_evidence *ev = ctx;
    memcpy(ev->last, &seq, sizeof seq);
    memcpy(ev->last + 8, &now_ns, sizeof now_ns);
    ev->last_len = 16;
    return 0;
}

size_t pq_evidence_last(const pq_evidence *ev, uint8_t *buf, size_t cap) {
    if (!ev || cap < ev->last_len) return 0;
    memcpy(buf, ev->last, ev->last_len);
    return ev->last_len;
}

void pq_evidence_anchor(const pq_evidence *ev, uint8_t out[32]) { memcpy(out, ev->cfg.chain_seed, 32); }

void pq_evidence_free(pq_evidence *ev) { free(ev); }
