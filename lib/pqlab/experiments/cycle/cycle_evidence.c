/* Evidence generation for the control-cycle harness through the native AMORT-V1 device path (amort_core). */
#include "cycle_evidence.h"

#include <stdlib.h>
#include <string.h>

#include "amort_core.h"

const int PQ_EVIDENCE_IS_PLACEHOLDER = 0;

struct pq_evidence {
    pq_evidence_config cfg;
    amort_device *device;
    uint8_t last[AMORT_REPORT_MAX_OCTETS];
    size_t last_len;
};

pq_evidence *pq_evidence_new(const pq_evidence_config *cfg) {
    if (!cfg || (cfg->tags != PQ_EVIDENCE_ONE_TAG && cfg->tags != PQ_EVIDENCE_TWO_TAGS)) return NULL;
    pq_evidence *ev = calloc(1, sizeof *ev);
    if (!ev) return NULL;
    ev->cfg = *cfg;
    /* walks the disclosure chain once here, before the first release, never inside a cycle; the paper's design
     * (Fig. 6 times the paper's evidence path: the evidence tag over the record alone) */
    amort_options paper;
    amort_options_default(&paper);
    paper.variant = AMORT_VARIANT_PAPER;
    if (amort_device_new_ex(&ev->device, cfg->dev_id, cfg->epoch, cfg->k_evid, cfg->chain_seed, cfg->tag_len,
                            cfg->policy_id, cfg->chain_length, &paper, 1) != AMORT_OK) {
        free(ev);
        return NULL;
    }
    return ev;
}

int pq_evidence_hook(void *ctx, uint64_t seq, uint64_t now_ns) {
    pq_evidence *ev = ctx;
    /* record (next sequence number, this cycle's monotonic time, the cached state digest), evidence tag under
     * K_evid, and with two tags the disclosure tag under K_seq with the chain step */
    size_t len = 0;
    amort_status status = amort_device_report(ev->device, ev->cfg.digest, now_ns, 0,
                                              ev->cfg.tags == PQ_EVIDENCE_TWO_TAGS, ev->last, &len);
    if (status != AMORT_OK) return (int)status;
    if (amort_device_seq(ev->device) != seq) return -1; /* the device numbers reports as the loop counts them */
    ev->last_len = len;
    return 0;
}

size_t pq_evidence_last(const pq_evidence *ev, uint8_t *buf, size_t cap) {
    if (!ev || cap < ev->last_len) return 0;
    memcpy(buf, ev->last, ev->last_len);
    return ev->last_len;
}

void pq_evidence_anchor(const pq_evidence *ev, uint8_t out[32]) { amort_device_anchor(ev->device, out); }

void pq_evidence_free(pq_evidence *ev) {
    if (!ev) return;
    amort_device_free(ev->device);
    free(ev);
}
