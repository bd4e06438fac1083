/* The guarded size and counter computations of amort_core.c (issue 22 item 6), driven past their limits.
 *
 * Compiled together with amort_core.c as one translation unit (it includes the .c), so it can set a
 * controller's counters near 2^64 and call the size helpers with capacities no test could allocate.
 * Prints one line per guard: "<name> <status or value>"; the pytest checks each names the typed outcome. */
#include "amort_core.c"

#include <stdio.h>

static const uint8_t ID[AMORT_ID_OCTETS] = "PLC-0001";
static const uint8_t KEY[AMORT_KEY_OCTETS] = {1};

static void line(const char *name, amort_status s) { printf("%s %s\n", name, amort_status_name(s)); }

int main(void) {
    amort_controller *ctl;
    amort_device *dev;
    amort_options bad;
    const uint8_t *body;
    size_t len, cap = 0;
    void *buf = NULL;
    uint8_t out[AMORT_REPORT_MAX_OCTETS], digest[AMORT_HASH_OCTETS] = {0};

    /* size arithmetic: a would-be overflow is refused, never wrapped */
    printf("body_size_spans %zu\n", body_size(1, SIZE_MAX / 56 + 1, 0, 0));
    printf("body_size_exceptions %zu\n", body_size(1, 1, SIZE_MAX / 8, 0));
    printf("body_size_ok %zu\n", body_size(1, 2, 0, 0));
    printf("table_grown %zu\n", table_grown(SIZE_MAX / 2));
    printf("reserve %d\n", reserve(&buf, &cap, SIZE_MAX / 4, 8));
    free(buf);

    /* controller counters at 2^64: the tree size and the checkpoint index */
    if (amort_controller_new(&ctl, (const uint8_t *)"CTRL-001", 1) != AMORT_OK) return 1;
    if (amort_controller_register_epoch(ctl, ID, 1, KEY, 16, UINT64_MAX, 1, 0) != AMORT_OK) return 1;
    ctl->npend = 1; /* one pending report (its leaf is zero octets: it is never hashed) */
    ctl->pend = calloc(1, sizeof *ctl->pend);
    ctl->cap_pend = 1;
    ctl->tree_size = UINT64_MAX;
    line("tree_size_full", amort_controller_checkpoint_body(ctl, &body, &len));
    ctl->tree_size = 0;
    ctl->npend = 0;
    ctl->committed = UINT64_MAX;
    line("index_full", amort_controller_checkpoint_body(ctl, &body, &len));
    ctl->committed = 0;
    line("checkpoint_ok", amort_controller_checkpoint_body(ctl, &body, &len));
    amort_controller_free(ctl);

    /* options and sequence numbers */
    amort_options_default(&bad);
    bad.wire_format = 7;
    line("controller_bad_options", amort_controller_new_ex(&ctl, (const uint8_t *)"CTRL-001", 1, &bad));
    line("device_next_seq_zero", amort_device_new_ex(&dev, ID, 1, KEY, KEY, 16, 1, 4, NULL, 0));
    if (amort_device_new_ex(&dev, ID, 1, KEY, KEY, 16, 1, 4, NULL, UINT64_MAX) != AMORT_OK) return 1;
    line("device_last_seq", amort_device_report(dev, digest, 1, 0, 0, out, &len));
    line("device_seq_exhausted", amort_device_report(dev, digest, 2, 0, 0, out, &len));
    amort_device_free(dev);
    return 0;
}
