/* sim_grow (sim_core.h), the growth rule of every array of a simulator run, called directly with capacities and
 * element sizes no run reaches: one line per case, "case status capacity". tests/test_thread_checked_sizes.py
 * compiles and runs it; `make sanitize` runs it under ASan + UBSan. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_core.h"

static void show(const char *name, sim_status status, const size_t *cap) {
    printf("%s %s %zu\n", name, sim_error_name(status), *cap);
}

int main(void) {
    void *buf = NULL;
    size_t cap = 0;
    { sim_status st = sim_grow(&buf, &cap, 1, 8); show("first", st, &cap); }
    { sim_status st = sim_grow(&buf, &cap, 17, 8); show("doubled", st, &cap); }
    { sim_status st = sim_grow(&buf, &cap, 32, 8); show("fits", st, &cap); }
    void *kept = buf;
    /* more elements than an int index can reach: refused before any arithmetic or allocation */
    { sim_status st = sim_grow(&buf, &cap, SIM_MAX_ELEMENTS + 1, 1); show("elements", st, &cap); }
    /* need * size beyond SIZE_MAX: refused, never wrapped to a small allocation */
    { sim_status st = sim_grow(&buf, &cap, 64, SIZE_MAX / 32); show("bytes", st, &cap); }
    printf("unchanged %d\n", buf == kept);
    free(buf);
    /* a capacity past half the limit: doubling it would overflow an int capacity; it stops at the limit, and an
     * allocation that large fails cleanly with the capacity left as it was */
    void *none = NULL;
    size_t half = SIM_MAX_ELEMENTS / 2 + 1;
    { sim_status st = sim_grow(&none, &half, half + 1, SIZE_MAX / SIM_MAX_ELEMENTS); show("limit", st, &half); }
    printf("unallocated %d\n", none == NULL);
    return 0;
}
