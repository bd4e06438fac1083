/* Periodic control-cycle harness: pinned thread, absolute-time releases, synthetic scan, evidence hook. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cycle_core.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NS_PER_S 1000000000LL

/* cycles <= PQ_CYCLE_MAX_CYCLES is checked at run time, so every sample array's size is representable */
_Static_assert(PQ_CYCLE_MAX_CYCLES <= SIZE_MAX / sizeof(int64_t), "sample arrays must fit size_t");

const char *pq_cycle_status_name(int status) {
    switch (status) {
    case PQ_CYCLE_OK: return "PQ_CYCLE_OK";
    case PQ_CYCLE_EINVAL: return "PQ_CYCLE_EINVAL";
    case PQ_CYCLE_ENOMEM: return "PQ_CYCLE_ENOMEM";
    case PQ_CYCLE_ETHREAD: return "PQ_CYCLE_ETHREAD";
    case PQ_CYCLE_ECLOCK: return "PQ_CYCLE_ECLOCK";
    case PQ_CYCLE_EHOOK: return "PQ_CYCLE_EHOOK";
    }
    return "PQ_CYCLE_UNKNOWN";
}

/* ---- synthetic scan: input image -> PID blocks + interlock rungs -> output image ---------------- */

typedef struct {
    double setpoint, kp, ki, kd, integral, previous, out_lo, out_hi;
} pid_block;

struct pq_scan_state {
    uint32_t blocks;
    uint64_t rng;             /* xorshift64: the "field" that changes the inputs between scans */
    pid_block *pid;
    double *analog_in, *analog_out;
    uint32_t *digital_in, *digital_out;
    uint64_t scans;
};

static uint64_t xorshift64(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

pq_scan_state *pq_scan_new(uint32_t blocks, uint64_t seed) {
    if (blocks == 0 || blocks > PQ_SCAN_MAX_BLOCKS) return NULL;
    pq_scan_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->blocks = blocks;
    s->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
    s->pid = calloc(blocks, sizeof *s->pid);
    s->analog_in = calloc(blocks, sizeof *s->analog_in);
    s->analog_out = calloc(blocks, sizeof *s->analog_out);
    s->digital_in = calloc(blocks, sizeof *s->digital_in);
    s->digital_out = calloc(blocks, sizeof *s->digital_out);
    if (!s->pid || !s->analog_in || !s->analog_out || !s->digital_in || !s->digital_out) {
        pq_scan_free(s);
        return NULL;
    }
    for (uint32_t i = 0; i < blocks; i++) {
        pid_block *b = &s->pid[i];
        b->setpoint = 50.0 + (double)(xorshift64(&s->rng) % 1000) / 100.0;
        b->kp = 1.2;
        b->ki = 0.05;
        b->kd = 0.01;
        b->out_lo = 0.0;
        b->out_hi = 100.0;
    }
    return s;
}

void pq_scan_free(pq_scan_state *s) {
    if (!s) return;
    free(s->pid);
    free(s->analog_in);
    free(s->analog_out);
    free(s->digital_in);
    free(s->digital_out);
    free(s);
}

/* The analog output as an integer in 1/16 units: checked before the conversion, since converting a double
 * outside the integer's range (or NaN) is undefined behaviour. The PID clamp keeps it in [0, 100] here. */
static uint64_t output_units(double value) {
    double scaled = value * 16.0;
    if (!(scaled >= 0.0)) return 0; /* negative or NaN */
    if (scaled >= 18446744073709549568.0) return UINT64_MAX; /* the largest double below 2^64 */
    return (uint64_t)scaled;
}

uint64_t pq_scan_once(pq_scan_state *s) {
    /* input scan: fresh sensor values and digital inputs */
    for (uint32_t i = 0; i < s->blocks; i++) {
        uint64_t r = xorshift64(&s->rng);
        s->analog_in[i] = 45.0 + (double)(r & 0xFFFF) / 4096.0;
        s->digital_in[i] = (uint32_t)(r >> 32);
    }
    /* program scan: one PID loop and one interlock rung per block */
    uint64_t checksum = s->scans;
    for (uint32_t i = 0; i < s->blocks; i++) {
        pid_block *b = &s->pid[i];
        double error = b->setpoint - s->analog_in[i];
        b->integral += error;
        double out = b->kp * error + b->ki * b->integral + b->kd * (error - b->previous);
        b->previous = error;
        if (out < b->out_lo) { out = b->out_lo; b->integral -= error; }   /* anti-windup */
        if (out > b->out_hi) { out = b->out_hi; b->integral -= error; }
        uint32_t di = s->digital_in[i];
        int start = (di & 1u) != 0, stop = (di & 2u) != 0, guard = (di & 4u) != 0;
        uint32_t run = (uint32_t)((start || (s->digital_out[i] & 1u)) && !stop && guard);
        uint32_t alarm = (uint32_t)(out >= b->out_hi || out <= b->out_lo) << 1;
        /* output scan */
        s->analog_out[i] = run ? out : 0.0;
        s->digital_out[i] = run | alarm;
        checksum = checksum * 31u + s->digital_out[i] + output_units(s->analog_out[i]);
    }
    s->scans++;
    return checksum;
}

/* ---- the periodic loop ----------------------------------------------------------------------- */

typedef struct {
    const pq_cycle_config *cfg;
    pq_cycle_samples *out;
    pq_cycle_report *report;
    pq_scan_state *scan;
    int status;
} loop_args;

static int64_t ts_ns(const struct timespec *t) { return (int64_t)t->tv_sec * NS_PER_S + t->tv_nsec; }

static void ts_add(struct timespec *t, int64_t ns) {
    int64_t total = (int64_t)t->tv_nsec + ns;
    t->tv_sec += (time_t)(total / NS_PER_S);
    t->tv_nsec = (long)(total % NS_PER_S);
}

static void pin_and_schedule(const pq_cycle_config *cfg, pq_cycle_report *r) {
    pthread_t self = pthread_self();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cfg->cpu, &set);
    r->affinity_errno = pthread_setaffinity_np(self, sizeof set, &set);
    cpu_set_t got;
    CPU_ZERO(&got);
    if (pthread_getaffinity_np(self, sizeof got, &got) == 0) {
        r->affinity_cpus = CPU_COUNT(&got);
        r->affinity_is_target = r->affinity_cpus == 1 && CPU_ISSET(cfg->cpu, &got);
    }
    r->fifo_errno = -1;
    if (cfg->try_fifo) {
        struct sched_param sp;
        memset(&sp, 0, sizeof sp);
        sp.sched_priority = cfg->fifo_priority;
        r->fifo_errno = pthread_setschedparam(self, SCHED_FIFO, &sp);
    }
    struct sched_param now;
    int policy = -1;
    memset(&now, 0, sizeof now);
    if (pthread_getschedparam(self, &policy, &now) == 0) {
        r->policy = policy;
        r->priority = now.sched_priority;
    }
}

static void *loop_thread(void *arg) {
    loop_args *a = arg;
    const pq_cycle_config *cfg = a->cfg;
    pq_cycle_samples *out = a->out;
    pq_cycle_report *r = a->report;
    pin_and_schedule(cfg, r);

    /* touch every sample page before the first release so no cycle takes a page fault on them */
    memset(out->latency_ns, 0, (size_t)cfg->cycles * sizeof *out->latency_ns);
    memset(out->work_ns, 0, (size_t)cfg->cycles * sizeof *out->work_ns);
    memset(out->evidence_ns, 0, (size_t)cfg->cycles * sizeof *out->evidence_ns);
    memset(out->evidence, 0, (size_t)cfg->cycles * sizeof *out->evidence);
    memset(out->cpu, 0, (size_t)cfg->cycles * sizeof *out->cpu);

    struct timespec release, wake, worked, done;
    if (clock_gettime(CLOCK_MONOTONIC, &release) != 0) {
        r->clock_errno = errno;
        a->status = PQ_CYCLE_ECLOCK;
        return NULL;
    }
    ts_add(&release, cfg->period_ns);
    uint64_t checksum = 0, evidence_seq = 0;
    int64_t first_release = 0, last_done = 0;
    struct rusage before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    uint64_t total = (uint64_t)cfg->warmup + cfg->cycles;
    for (uint64_t i = 0; i < total; i++) {
        int recorded = i >= cfg->warmup;
        uint64_t k = recorded ? i - cfg->warmup : 0;
        if (recorded && k == 0) {
            getrusage(RUSAGE_THREAD, &before);
            first_release = ts_ns(&release);
        }
        int rc;
        do {
            rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &release, NULL);
        } while (rc == EINTR);
        if (rc != 0) {
            r->clock_errno = rc;
            a->status = PQ_CYCLE_ECLOCK;
            return NULL;
        }
        clock_gettime(CLOCK_MONOTONIC, &wake);
        checksum ^= pq_scan_once(a->scan);
        clock_gettime(CLOCK_MONOTONIC, &worked);
        done = worked;
        int evidence = recorded && cfg->evidence_every && (k + cfg->evidence_offset) % cfg->evidence_every == 0;
        if (evidence) {
            int hook = cfg->hook(cfg->hook_ctx, ++evidence_seq, (uint64_t)ts_ns(&worked));
            clock_gettime(CLOCK_MONOTONIC, &done);
            if (hook != 0) {
                r->hook_status = hook;
                a->status = PQ_CYCLE_EHOOK;
                return NULL;
            }
        }
        int64_t release_ns = ts_ns(&release);
        if (recorded) {
            int64_t done_ns = ts_ns(&done);
            out->latency_ns[k] = ts_ns(&wake) - release_ns;
            out->work_ns[k] = ts_ns(&worked) - ts_ns(&wake);
            out->evidence_ns[k] = evidence ? done_ns - ts_ns(&worked) : 0;
            out->evidence[k] = (uint8_t)evidence;
            int cpu = sched_getcpu();
            out->cpu[k] = cpu;
            if (cpu != cfg->cpu) r->off_target_cycles++;
            if (done_ns > release_ns + cfg->period_ns) r->overruns++;
            last_done = done_ns;
        }
        ts_add(&release, cfg->period_ns);   /* absolute schedule: a late cycle does not shift later ones */
    }
    getrusage(RUSAGE_THREAD, &after);
    r->voluntary_switches = after.ru_nvcsw - before.ru_nvcsw;
    r->involuntary_switches = after.ru_nivcsw - before.ru_nivcsw;
    r->wall_ns = last_done - first_release;
    r->workload_checksum = checksum;
    a->status = PQ_CYCLE_OK;
    return NULL;
}

int pq_cycle_run(const pq_cycle_config *cfg, pq_cycle_samples *out, pq_cycle_report *report) {
    if (!cfg || !out || !report) return PQ_CYCLE_EINVAL;
    if (cfg->period_ns < 10000 || cfg->period_ns > 10 * NS_PER_S || cfg->cycles == 0 ||
        cfg->cycles > PQ_CYCLE_MAX_CYCLES || cfg->warmup > PQ_CYCLE_MAX_CYCLES || cfg->cpu < 0 ||
        cfg->cpu >= CPU_SETSIZE || cfg->workload_blocks == 0 || cfg->workload_blocks > PQ_SCAN_MAX_BLOCKS ||
        (cfg->evidence_every && !cfg->hook) || (cfg->try_fifo && (cfg->fifo_priority < 1 || cfg->fifo_priority > 99)))
        return PQ_CYCLE_EINVAL;

    if (!out->latency_ns || !out->work_ns || !out->evidence_ns || !out->evidence || !out->cpu)
        return PQ_CYCLE_EINVAL;
    memset(report, 0, sizeof *report);
    report->policy = -1;
    pq_scan_state *scan = pq_scan_new(cfg->workload_blocks, 0x5EED5CA4ULL);
    if (!scan) return PQ_CYCLE_ENOMEM;
    loop_args args = {cfg, out, report, scan, PQ_CYCLE_ETHREAD};
    pthread_t thread;
    int rc = pthread_create(&thread, NULL, loop_thread, &args);
    if (rc == 0) rc = pthread_join(thread, NULL);
    pq_scan_free(scan);
    return rc == 0 ? args.status : PQ_CYCLE_ETHREAD;
}

void pq_clock_pairs(int64_t *out, uint32_t n) {
    if (out == NULL) return;
    struct timespec a, b;
    for (uint32_t i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_gettime(CLOCK_MONOTONIC, &b);
        out[i] = ts_ns(&b) - ts_ns(&a);
    }
}
