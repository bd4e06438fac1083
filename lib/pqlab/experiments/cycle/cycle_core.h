/* Periodic control-cycle harness (AMORT-V1 §V-G): a synthetic PLC scan released every period on one
 * pinned core, timed from its scheduled release to its completion.
 *
 * Plain C (POSIX + Linux affinity calls), no Python: pq_cycle_run() starts one thread, pins it to
 * cfg->cpu, asks for SCHED_FIFO when cfg->try_fifo is set (and records what it actually obtained),
 * then sleeps to absolute release times with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME).
 * Each cycle runs the scan workload and, on every `evidence_every`-th cycle, the evidence hook.
 */
#ifndef PQ_CYCLE_CORE_H
#define PQ_CYCLE_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes of pq_cycle_run (negative = nothing was measured). */
typedef enum {
    PQ_CYCLE_OK = 0,
    PQ_CYCLE_EINVAL = -1,     /* a configuration value is out of range */
    PQ_CYCLE_ENOMEM = -2,     /* the workload's process image could not be allocated */
    PQ_CYCLE_ETHREAD = -3,    /* the measurement thread could not be created or joined */
    PQ_CYCLE_ECLOCK = -4,     /* clock_gettime / clock_nanosleep failed (errno in report.clock_errno) */
    PQ_CYCLE_EHOOK = -5       /* the evidence hook returned non-zero (its value in report.hook_status) */
} pq_cycle_status;

/* Limits every size is checked against before it is used (the binding checks the same bounds first). */
#define PQ_CYCLE_MAX_CYCLES 100000000u   /* recorded (and warm-up) cycles: 800 MB per int64 sample array */
#define PQ_SCAN_MAX_BLOCKS (1u << 24)     /* synthetic scan blocks */

/* "PQ_CYCLE_OK", "PQ_CYCLE_EINVAL", ... for a status value (the binding's error codes). */
const char *pq_cycle_status_name(int status);

/* Work done once per evidence cycle; returns 0 on success. `seq` counts evidence cycles from 1. */
typedef int (*pq_cycle_hook)(void *ctx, uint64_t seq, uint64_t now_ns);

typedef struct {
    int64_t period_ns;        /* release period (10 ms in the paper) */
    uint32_t cycles;          /* recorded cycles */
    uint32_t warmup;          /* cycles run first and not recorded */
    int cpu;                  /* the one core the thread is pinned to */
    int try_fifo;             /* ask for SCHED_FIFO */
    int fifo_priority;        /* its priority, 1..99 */
    uint32_t workload_blocks; /* size of the synthetic scan: PID blocks + interlock rungs per block */
    uint32_t evidence_every;  /* 0 = never; n = on every n-th recorded cycle */
    uint32_t evidence_offset; /* recorded cycles of this configuration before this run: the schedule continues */
    pq_cycle_hook hook;       /* evidence generation; NULL when evidence_every == 0 */
    void *hook_ctx;
} pq_cycle_config;

/* Per-cycle samples, each array `cycles` long, supplied by the caller. */
typedef struct {
    int64_t *latency_ns;      /* wake-up time - scheduled release */
    int64_t *work_ns;         /* scan workload */
    int64_t *evidence_ns;     /* evidence hook (0 on cycles without evidence) */
    uint8_t *evidence;        /* 1 when the hook ran this cycle */
    int32_t *cpu;             /* sched_getcpu() at completion */
} pq_cycle_samples;

typedef struct {
    int affinity_errno;       /* pthread_setaffinity_np result (0 = pinned) */
    int affinity_cpus;        /* CPUs in the thread's affinity mask read back after pinning */
    int affinity_is_target;   /* 1 when that mask is exactly {cpu} */
    int fifo_errno;           /* pthread_setschedparam(SCHED_FIFO) result; -1 when not tried */
    int policy;               /* policy read back: SCHED_OTHER 0, SCHED_FIFO 1, SCHED_RR 2, ... */
    int priority;             /* priority read back */
    int clock_errno;
    int hook_status;
    uint32_t off_target_cycles;   /* recorded cycles that completed on another CPU */
    uint32_t overruns;        /* recorded cycles whose completion passed the next release */
    int64_t voluntary_switches;   /* getrusage(RUSAGE_THREAD) over the recorded cycles */
    int64_t involuntary_switches;
    int64_t wall_ns;          /* first release to last completion */
    uint64_t workload_checksum;   /* output of the scan, so the compiler cannot drop it */
} pq_cycle_report;

/* Run the loop in a new thread and wait for it. */
int pq_cycle_run(const pq_cycle_config *cfg, pq_cycle_samples *out, pq_cycle_report *report);

/* One scan of the synthetic workload on a caller-owned state (for tests and calibration). */
typedef struct pq_scan_state pq_scan_state;
pq_scan_state *pq_scan_new(uint32_t blocks, uint64_t seed);
uint64_t pq_scan_once(pq_scan_state *state);
void pq_scan_free(pq_scan_state *state);

/* n differences of back-to-back clock_gettime(CLOCK_MONOTONIC) reads, the clock's own cost. */
void pq_clock_pairs(int64_t *out, uint32_t n);

#ifdef __cplusplus
}
#endif

#endif /* PQ_CYCLE_CORE_H */
