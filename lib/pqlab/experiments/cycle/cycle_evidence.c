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

struct pq_rotation {
    pq_evidence *one, *two;
    uint64_t calls;
};

pq_rotation *pq_rotation_new(const pq_evidence_config *one, const pq_evidence_config *two) {
    if (!one || !two || one->tags != PQ_EVIDENCE_ONE_TAG || two->tags != PQ_EVIDENCE_TWO_TAGS) return NULL;
    pq_rotation *rot = calloc(1, sizeof *rot);
    if (!rot) return NULL;
    rot->one = pq_evidence_new(one);
    rot->two = pq_evidence_new(two);
    if (!rot->one || !rot->two) {
        pq_rotation_free(rot);
        return NULL;
    }
    return rot;
}

int pq_rotation_variant(uint64_t call) { return (int)(call % 3u); }

int pq_rotation_hook(void *ctx, uint64_t seq, uint64_t now_ns) {
    pq_rotation *rot = ctx;
    int variant = pq_rotation_variant(rot->calls++);
    (void)seq; /* each device numbers its own reports: one in three cycles each */
    if (variant == 0) return 0;
    pq_evidence *ev = variant == 1 ? rot->one : rot->two;
    return pq_evidence_hook(ev, amort_device_seq(ev->device) + 1, now_ns);
}

void pq_rotation_free(pq_rotation *rot) {
    if (!rot) return;
    pq_evidence_free(rot->one);
    pq_evidence_free(rot->two);
    free(rot);
}
