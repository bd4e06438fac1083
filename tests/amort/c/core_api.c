/* A plain C program on amort_core's C API (no Python): what a C harness compiling amort_core.c sees.
 *
 * usage: core_api DEV_ID_HEX K_EVID_HEX CHAIN_SEED_HEX TAG_LEN CHAIN_LENGTH REPORTS
 * Prints the anchor, then one report per line (hex), then the verdicts of a controller that ingests the
 * reports twice (the second time every report is a replay), then the checkpoint body. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amort_core.h"

static int unhex(const char *s, uint8_t *out, size_t n) {
    if (strlen(s) != 2 * n) return 0;
    for (size_t i = 0; i < n; i++)
        if (sscanf(s + 2 * i, "%2hhx", &out[i]) != 1) return 0;
    return 1;
}

static void puthex(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) printf("%02x", p[i]);
    printf("\n");
}

int main(int argc, char **argv) {
    uint8_t dev_id[AMORT_ID_OCTETS], k_evid[AMORT_KEY_OCTETS], seed[AMORT_KEY_OCTETS], anchor[AMORT_KEY_OCTETS];
    uint8_t digest[AMORT_HASH_OCTETS] = {0}, (*reports)[AMORT_REPORT_MAX_OCTETS];
    const uint8_t **ptrs;
    size_t *lens, count;
    amort_verdict *verdicts;
    amort_device *dev;
    amort_controller *ctl;
    const uint8_t *body;
    size_t body_len;
    if (argc != 7 || !unhex(argv[1], dev_id, sizeof dev_id) || !unhex(argv[2], k_evid, sizeof k_evid) ||
        !unhex(argv[3], seed, sizeof seed)) {
        fprintf(stderr, "usage: core_api DEV_ID K_EVID CHAIN_SEED TAG_LEN CHAIN_LENGTH REPORTS\n");
        return 2;
    }
    count = (size_t)atoi(argv[6]);
    if (amort_device_new(&dev, dev_id, 1, k_evid, seed, (uint8_t)atoi(argv[4]), 1, (uint32_t)atoi(argv[5])) !=
        AMORT_OK)
        return 3;
    amort_device_anchor(dev, anchor);
    puthex(anchor, sizeof anchor);
    reports = calloc(count, sizeof *reports);
    ptrs = calloc(count, sizeof *ptrs);
    lens = calloc(count, sizeof *lens);
    verdicts = calloc(count, sizeof *verdicts);
    for (size_t i = 0; i < count; i++) {
        digest[0] = (uint8_t)i;
        if (amort_device_report(dev, digest, 1000 + i, 0, 1, reports[i], &lens[i]) != AMORT_OK) return 4;
        ptrs[i] = reports[i];
        puthex(reports[i], lens[i]);
    }
    if (amort_controller_new(&ctl, (const uint8_t *)"CTRL-001", 1) != AMORT_OK ||
        amort_controller_register_epoch(ctl, dev_id, 1, k_evid, (uint8_t)atoi(argv[4]), UINT64_MAX, 1, 0) != AMORT_OK)
        return 5;
    if (amort_controller_ingest(ctl, ptrs, lens, count, verdicts) != AMORT_E_CLOCK) return 8; /* no clock: refused */
    amort_controller_set_clock(ctl, 1, 1000 + count);
    for (int round = 0; round < 2; round++) {
        if (amort_controller_ingest(ctl, ptrs, lens, count, verdicts) != AMORT_OK) return 6;
        for (size_t i = 0; i < count; i++)
            printf("%s%s", amort_status_name((amort_status)verdicts[i].code), i + 1 < count ? " " : "\n");
    }
    if (amort_controller_checkpoint_body(ctl, &body, &body_len) != AMORT_OK) return 7;
    puthex(body, body_len);
    amort_controller_free(ctl);
    amort_device_free(dev);
    free(reports);
    free(ptrs);
    free(lens);
    free(verdicts);
    return 0;
}
