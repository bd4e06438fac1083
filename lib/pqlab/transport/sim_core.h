/* The Thread/MRP handshake simulator's C core: its plan, its error codes, and its two entry points.
 *
 * Plain C, no Python: the CPython binding (_core.c) fills a SimPlan from model.build_plan, calls
 * sim_validate once, then sim_run per run index. Every failure is a sim_status code; sim_strerror
 * names it, and the binding maps it to pqlab.transport.core.SimulationError with the same name.
 */
#ifndef PQLAB_SIM_CORE_H
#define PQLAB_SIM_CORE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define MAXU 64
enum { SINGLE = 0, IPV6 = 1, PULL = 2, BLOCK = 3 };
/* model.INT_FIELDS / model.FLOAT_FIELDS order */
enum {
    MI_byte_us, MI_phy_bytes, MI_ack_psdu, MI_poll_psdu, MI_turnaround_us, MI_cca_us, MI_unit_us, MI_ack_wait_us,
    MI_min_be, MI_max_retries, MI_retx_delay, MI_retx_max_exp, MI_indirect_attempts, MI_poll_us, MI_gap_us,
    MI_reasm_us, MI_tick_us, MI_reasm_from_last, MI_dup_ack, MI_dev_interval_us, MI_ctrl_interval_us, MI_boost_us,
    MI_exp_cap, MI_mrp_tx, MI_standalone_us, MI_ctrl_compute_us, MI_dev_compute2_us, MI_dev_compute3_us,
    MI_max_time_us, MI_hops, MI_sleepy, MI_ack_on_arrival, MI_poll_timeout_us, MI_age_priority, MI_frame_rule,
    MI_ack_never, MI_retry_spacing, MI_block_handoff, MI_COUNT
};
#define SIM_MAX_HOPS 255   /* the frame rule keeps one frame queue per node */
enum { MF_margin, MF_base, MF_jitter, MF_p_good, MF_p_bad, MF_fraction_bad, MF_burst_us, MF_good_us, MF_COUNT };

typedef struct {
    int64_t m[MI_COUNT];
    double f[MF_COUNT];
    int n_units, n_psdu;
    int *unit_off, *unit_len, *psdu;
    int mode[4], first_unit[4], n_msg_units[4], bitmap_unit[4], request_unit[4], rejected[4];
    int ack_unit;
    uint64_t seed;
} SimPlan;

#define SIM_RESULT_FIELDS 8

/* Keep in step with SIM_ERROR_NAMES in sim_core.c (the binding exposes both). */
typedef enum {
    SIM_OK = 0,
    SIM_ERR_NO_MEMORY,         /* an allocation failed */
    SIM_ERR_PLAN_EMPTY,        /* no units or no frames */
    SIM_ERR_PLAN_UNITS,        /* unit lengths do not add up, or a unit has no frame */
    SIM_ERR_PLAN_REFERENCE,    /* a message refers to a unit that does not exist, or a bad transport mode */
    SIM_ERR_PLAN_PSDU,         /* a frame size outside 1..65535 */
    SIM_ERR_MODEL_RANGE,       /* an integer model value out of its range */
    SIM_ERR_MODEL_NOT_FINITE,  /* a probability or duration that is NaN, infinite, negative or above 1 */
    SIM_ERR_RUN_RANGE,         /* a run index at or beyond 2^63 */
    SIM_ERR_MODEL_CHOICE,      /* a channel rule, ACK-loss or indirect-retry choice outside its values */
    SIM_ERR_PATH_LENGTH,       /* hops above SIM_MAX_HOPS */
    SIM_ERR_CAPACITY,          /* an array or batch beyond SIM_MAX_ELEMENTS elements or SIZE_MAX bytes */
    SIM_ERR_TIME_RANGE,        /* the time limit, a loss-burst mean or the largest MRP backoff at or beyond its limit */
    SIM_ERR_COUNT
} sim_status;

/* Limits of the checked arithmetic. Arrays are indexed by int; times are int64 microseconds, and every time the
 * core converts from a double (MRP backoff, Gilbert-Elliott sojourn) or takes as its limit is below 2^61, so the
 * sum of two never overflows. The sojourn is the mean times -ln(1 - u) <= 53 ln 2 < 37 (u < 1 - 2^-53). */
#define SIM_MAX_ELEMENTS ((size_t)INT_MAX)
#define SIM_TIME_LIMIT ((int64_t)1 << 61)
#define SIM_SOJOURN_MEAN_LIMIT 0x1p55
/* Model values (sim_validate; plan_check.py the same): with these and max_time_us < SIM_TIME_LIMIT, one frame
 * exchange with every retry takes under 2^57 us, so every time of a run stays below 2^62 (NEVER) + 2^61. */
#define SIM_SIZE_MAX 65535                 /* phy_bytes, ack_psdu, poll_psdu (bytes, as a PSDU) */
#define SIM_PER_UNIT_MAX ((int64_t)1 << 20)  /* byte_us, unit_us */
#define SIM_EXPONENT_MAX 16                /* min_be, retx_max_exp */
#define SIM_COUNT_MAX 65536                /* max_retries, indirect_attempts, exp_cap, mrp_tx */
#define SIM_DURATION_MAX ((int64_t)1 << 32)  /* every other duration, us (71 minutes) */

/* The growth rule of every array of a run: capacity doubled from 16 until it holds `need` elements of `size` bytes.
 * Checked: need beyond SIM_MAX_ELEMENTS or need * size beyond SIZE_MAX is SIM_ERR_CAPACITY (nothing allocated), a
 * failed realloc SIM_ERR_NO_MEMORY; on failure *buf and *cap are unchanged. */
sim_status sim_grow(void **buf, size_t *cap, size_t need, size_t size);
const char *sim_strerror(sim_status status);
const char *sim_error_name(sim_status status);
sim_status sim_validate(const SimPlan *plan);
/* Simulate run `run` of a validated plan: SIM_RESULT_FIELDS int64 values into out. With trace != NULL the
 * event trace (quadruples) is returned in *trace (caller frees) and its length in *n_trace. */
sim_status sim_run(const SimPlan *plan, uint64_t run, int64_t *out, int64_t **trace, int *n_trace);

#endif
