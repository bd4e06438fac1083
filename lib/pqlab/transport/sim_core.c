/* C core of the Thread/MRP handshake simulator: the model of reference.py, draw for draw.
 *
 * reference.py is the specification; this file follows it function by function (same names),
 * with the same xoshiro256** / splitmix64 PRNG, so both give identical results for a plan and
 * a run index. No Python here: sim_core.h is the interface, _core.c the CPython binding.
 */
#include "sim_core.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NEVER ((int64_t)1 << 62)
enum { DOWN = 0, UP = 1 };
enum { CONTROLLER = 0, DEVICE = 1 };
enum { DATA = 0, ACK = 1, BITMAP = 2 };
enum { WHOLE = 0, SEGMENT = 1, REQUEST = 2 };
enum { EV_DELIVER = 0, EV_MRP = 1, EV_STANDALONE = 2, EV_HANDOFF = 3, EV_PIGGYBACK = 4 };
enum { SPACING_TIMEOUT = 0, SPACING_POLL = 1, SPACING_BACK_TO_BACK = 2 };


typedef struct { uint64_t s[4]; } Rng;

static uint64_t splitmix64(uint64_t *x) {
    *x += 0x9E3779B97F4A7C15ULL;
    uint64_t z = *x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static void rng_init(Rng *r, uint64_t hash, uint64_t run) {
    uint64_t x = hash ^ (run * 0x9E3779B97F4A7C15ULL);
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}
static uint64_t next_u64(Rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}
static double uniform(Rng *r) { return (double)(next_u64(r) >> 11) * (1.0 / 9007199254740992.0); }
static int64_t below(Rng *r, int64_t n) { return (int64_t)(next_u64(r) % (uint64_t)n); }
/* x (>= 0) floored to int64, or SIM_TIME_LIMIT with *fail set when it is not below it (never for a validated
 * plan: sim_validate bounds every value converted here) — the conversion itself is never out of range. */
static int64_t floor_time(double x, sim_status *fail) {
    if (!(x < (double)SIM_TIME_LIMIT)) { if (!*fail) *fail = SIM_ERR_TIME_RANGE; return SIM_TIME_LIMIT; }
    return (int64_t)floor(x);
}
static int64_t exponential_us(Rng *r, double mean, sim_status *fail) {
    int64_t v = floor_time(-mean * log(1.0 - uniform(r)), fail);
    return v < 1 ? 1 : v;
}

typedef struct {
    int hs, kind, seg, direction, mode, n;
    int units[MAXU];
    int tx, acked, delivered, timer_gen, first_copy;
    uint64_t received, confirmed;
} Message;

typedef struct {
    int fid, kind, msg, direction, n;
    int units[MAXU], tags[MAXU];
    int64_t ready, queued;
    int piggy, copy;
    uint64_t bitmap;
    int pos, hop, frame;
    int64_t hop_first, last_arrival;
    int lost, chain, attempts, delivered, piggy_done, done;
    /* frame rule: per datagram (unit position) — lost, first and last frame arrival at the destination */
    unsigned char ulost[MAXU];
    int64_t ufirst[MAXU], ulast[MAXU];
} Flow;

/* frame rule: one frame waiting in a node's FIFO (reference.QFrame) */
typedef struct { int fid, pos, k, link; int64_t ready; } QFrame;
typedef struct { QFrame *q; int head, n; size_t cap; } Queue;   /* live frames: q[head .. n-1] */

typedef struct { int64_t t; int64_t seq; int kind, a, b; } Event;
typedef struct { int last_rx, ack_gen; } Node;

typedef struct {
    const SimPlan *p;
    const int64_t *m;
    const double *f;
    Rng rng;
    Message *msgs; int n_msgs; size_t cap_msgs;
    Flow *flows; int n_flows; size_t cap_flows;
    int *active; int n_active; size_t cap_active;
    Event *events; int n_events; size_t cap_events;
    int64_t seq;
    Node nodes[2];
    int64_t chan_free;
    int64_t retrans, spurious, frames, dev_tx, dev_rx;
    int have_result;
    sim_status fail;   /* set by the first failure (no memory, a capacity or time out of range): the run stops */
    int64_t res[8];
    int bad;
    int64_t next_switch, poll_phase;
    /* frame rule: queues[0..hops] per node, queues[hops+1] the indirect queue at the device's parent */
    Queue *queues;
    int64_t *hold;
    int *cand; int64_t *cstart;
    int ind_chain, ind_attempts;
    int64_t ind_chain_at, ind_after;
    int64_t *trace; int n_trace, tracing; size_t cap_trace;   /* quadruples, as reference.Handshake.trace */
} Sim;

sim_status sim_grow(void **buf, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return SIM_OK;
    if (size == 0 || need > SIM_MAX_ELEMENTS || need > SIZE_MAX / size) return SIM_ERR_CAPACITY;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) nc = nc > SIM_MAX_ELEMENTS / 2 ? SIM_MAX_ELEMENTS : nc * 2;  /* never doubled past the limit */
    if (nc > SIZE_MAX / size) nc = need;
    void *q = realloc(*buf, nc * size);
    if (!q) return SIM_ERR_NO_MEMORY;
    *buf = q;
    *cap = nc;
    return SIM_OK;
}

/* One more element in a run's array; on failure the run records why and stops (the array is left as it was). */
static void *grow(Sim *s, void *ptr, size_t *cap, int n, size_t size) {
    if (s->fail) return ptr;
    void *buf = ptr;
    sim_status status = sim_grow(&buf, cap, (size_t)n + 1, size);
    if (status != SIM_OK) s->fail = status;
    return buf;
}

/* ---------- channel ---------- */
static int64_t sojourn(Sim *s) {
    return exponential_us(&s->rng, s->bad ? s->f[MF_burst_us] : s->f[MF_good_us], &s->fail);
}
static int lost(Sim *s, int64_t t) {
    while (t >= s->next_switch) {
        s->bad = !s->bad;
        s->next_switch += sojourn(s);
    }
    double p = s->bad ? s->f[MF_p_bad] : s->f[MF_p_good];
    return uniform(&s->rng) < p;
}
static int64_t airtime(Sim *s, int64_t psdu) { return (s->m[MI_phy_bytes] + psdu) * s->m[MI_byte_us]; }
static int64_t csma(Sim *s) {
    return below(&s->rng, (int64_t)1 << s->m[MI_min_be]) * s->m[MI_unit_us] + s->m[MI_cca_us] + s->m[MI_turnaround_us];
}

/* ---------- one frame on one link ---------- */
static int64_t direct_frame(Sim *s, int64_t t, int64_t psdu, int dev_sends, int dev_receives, int *ok_out) {
    const int64_t *m = s->m;
    int64_t air = airtime(s, psdu), ack_air = airtime(s, m[MI_ack_psdu]);
    for (int64_t attempt = 0; attempt < m[MI_max_retries] + 1; attempt++) {
        if (attempt > 0 && m[MI_retx_delay]) {
            int64_t e = attempt - 1 < m[MI_retx_max_exp] ? attempt - 1 : m[MI_retx_max_exp];
            t += below(&s->rng, (int64_t)1 << e) * m[MI_unit_us];
        }
        t += csma(s);
        int data_lost = lost(s, t);
        s->frames++;
        int64_t end = t + air;
        int ok = 0;
        if (!data_lost) {
            int64_t ack_start = end + m[MI_turnaround_us];
            ok = m[MI_ack_never] ? 1 : !lost(s, ack_start);
        }
        if (dev_sends) {
            s->dev_tx += air;
            s->dev_rx += ok ? ack_air : m[MI_ack_wait_us];
        }
        if (dev_receives) {
            s->dev_rx += air;
            if (!data_lost) s->dev_tx += ack_air;
        }
        if (ok) { *ok_out = 1; return end + m[MI_turnaround_us] + ack_air; }
        t = end + m[MI_ack_wait_us];
    }
    *ok_out = 0;
    return t;
}

static int64_t next_poll(Sim *s, int64_t t);
static int64_t indirect_retry(Sim *s, int64_t t, int64_t end) {
    const int64_t *m = s->m;
    if (m[MI_retry_spacing] == SPACING_POLL) return next_poll(s, end + m[MI_ack_wait_us]);
    if (m[MI_retry_spacing] == SPACING_BACK_TO_BACK) return end + m[MI_ack_wait_us];
    return end + m[MI_ack_wait_us] > t + m[MI_poll_timeout_us] ? end + m[MI_ack_wait_us] : t + m[MI_poll_timeout_us];
}

static int64_t indirect_frame(Sim *s, int64_t t, int64_t psdu, int *status, int64_t *retry) {
    const int64_t *m = s->m;
    int64_t air = airtime(s, psdu), ack_air = airtime(s, m[MI_ack_psdu]);
    int polled;
    t = direct_frame(s, t, m[MI_poll_psdu], 1, 0, &polled);
    if (!polled) { *status = 1; *retry = t; return t; }
    t += csma(s);
    int data_lost = lost(s, t);
    s->frames++;
    int64_t end = t + air;
    if (!data_lost) {
        int64_t ack_start = end + m[MI_turnaround_us];
        int ack_lost = m[MI_ack_never] ? 0 : lost(s, ack_start);
        s->dev_rx += air;
        s->dev_tx += ack_air;
        if (!ack_lost) { *status = 0; *retry = ack_start + ack_air; return ack_start + ack_air; }
        *status = 2; *retry = indirect_retry(s, t, end);
        return end + m[MI_ack_wait_us];
    }
    s->dev_rx += m[MI_poll_timeout_us];
    *status = 2; *retry = indirect_retry(s, t, end);
    return end + m[MI_ack_wait_us];
}

static int64_t next_poll(Sim *s, int64_t t) {
    int64_t period = s->m[MI_poll_us], phase = s->poll_phase;
    if (t <= phase) return phase;
    return phase + (t - phase + period - 1) / period * period;
}
static int is_indirect(Sim *s, const Flow *fl) {
    return s->m[MI_sleepy] && fl->direction == DOWN && fl->hop == s->m[MI_hops] - 1;
}

/* ---------- events ---------- */
static void push(Sim *s, int64_t t, int kind, int a, int b) {
    s->events = grow(s, s->events, &s->cap_events, s->n_events, sizeof(Event));
    if (s->fail) return;
    Event *e = &s->events[s->n_events++];
    e->t = t; e->seq = s->seq++; e->kind = kind; e->a = a; e->b = b;
}
static int best_event(Sim *s) {
    int best = -1;
    for (int i = 0; i < s->n_events; i++) {
        Event *e = &s->events[i];
        if (best < 0 || e->t < s->events[best].t || (e->t == s->events[best].t && e->seq < s->events[best].seq))
            best = i;
    }
    return best;
}

/* ---------- frame rule: queues ---------- */
static void enqueue(Sim *s, QFrame fr) {
    int64_t hops = s->m[MI_hops];
    int direction = s->flows[fr.fid].direction;
    Queue *q;
    if (s->m[MI_sleepy] && direction == DOWN && fr.link == hops - 1) q = &s->queues[hops + 1];
    else q = &s->queues[direction == DOWN ? fr.link : hops - fr.link];
    q->q = grow(s, q->q, &q->cap, q->n, sizeof(QFrame));
    if (s->fail) return;
    q->q[q->n++] = fr;
}
static int q_empty(const Queue *q) { return q->head == q->n; }
static void q_pop(Queue *q) {
    q->head++;
    if (q->head == q->n) q->head = q->n = 0;
}

/* ---------- flows ---------- */
static void arm(Sim *s, Flow *fl) {
    if (is_indirect(s, fl) && !fl->chain) fl->ready = next_poll(s, fl->ready);
}
static int new_flow(Sim *s, int kind, int msg, int direction, const int *units, const int *tags, int n, int64_t t) {
    s->flows = grow(s, s->flows, &s->cap_flows, s->n_flows, sizeof(Flow));
    s->active = grow(s, s->active, &s->cap_active, s->n_active, sizeof(int));
    if (s->fail) return 0;
    int fid = s->n_flows++;
    Flow *fl = &s->flows[fid];
    memset(fl, 0, sizeof(Flow));
    fl->fid = fid; fl->kind = kind; fl->msg = msg; fl->direction = direction; fl->n = n;
    memcpy(fl->units, units, sizeof(int) * (size_t)n);
    memcpy(fl->tags, tags, sizeof(int) * (size_t)n);
    fl->ready = t; fl->queued = t; fl->piggy = -1;
    s->active[s->n_active++] = fid;
    if (s->m[MI_frame_rule]) {
        for (int pos = 0; pos < n && !s->fail; pos++) {
            int nf = s->p->unit_len[units[pos]];
            for (int k = 0; k < nf && !s->fail; k++) {
                QFrame fr = {fid, pos, k, 0, t};
                enqueue(s, fr);
            }
        }
    } else {
        arm(s, fl);
    }
    return fid;
}

static int64_t backoff(Sim *s, Message *msg);
static void arm_timer(Sim *s, int mi, int64_t t) {
    int64_t b = backoff(s, &s->msgs[mi]);
    push(s, t + b, EV_MRP, mi, s->msgs[mi].timer_gen);
}

static void left_sender(Sim *s, Flow *fl) {
    if (!s->m[MI_block_handoff] && fl->hop == 0 && fl->kind == DATA && fl->pos == fl->n - 1 && s->msgs[fl->msg].mode == BLOCK)
        arm_timer(s, fl->msg, fl->ready);
}
static void next_unit(Sim *s, Flow *fl) {
    fl->pos++;
    fl->hop = fl->frame = fl->attempts = 0;
    fl->lost = fl->chain = 0;
    if (fl->pos == fl->n) fl->done = 1;
    else arm(s, fl);
}

static void transmit(Sim *s, int fid) {
    const int64_t *m = s->m;
    Flow *fl = &s->flows[fid];
    int64_t hops = m[MI_hops];
    int64_t start = s->chan_free > fl->ready ? s->chan_free : fl->ready;
    int u = fl->units[fl->pos];
    int nframes = s->p->unit_len[u];
    int64_t psdu = s->p->psdu[s->p->unit_off[u] + fl->frame];
    int64_t end;
    int ok;
    if (is_indirect(s, fl)) {
        int status;
        int64_t retry;
        end = indirect_frame(s, start, psdu, &status, &retry);
        s->chan_free = end;
        if (status == 1) {
            fl->chain = 0; fl->ready = end + 1; arm(s, fl);
            return;
        }
        if (status == 2) {
            fl->attempts++;
            if (fl->attempts < m[MI_indirect_attempts]) {
                fl->chain = 1;
                fl->ready = retry;
                return;
            }
            fl->chain = 0;
            ok = 0;
        } else {
            ok = 1;
        }
        fl->attempts = 0;
    } else {
        int dev_sends = fl->direction == UP && fl->hop == 0;
        int dev_receives = fl->direction == DOWN && fl->hop == hops - 1;
        end = direct_frame(s, start, psdu, dev_sends, dev_receives, &ok);
        s->chan_free = end;
    }
    fl->ready = end;
    if (!ok) {
        left_sender(s, fl);
        next_unit(s, fl);
        return;
    }
    int final_hop = fl->hop == hops - 1;
    if (fl->frame == 0) {
        fl->hop_first = end;
    } else if (m[MI_reasm_from_last]) {
        if (final_hop) {
            int64_t expiry = fl->last_arrival + m[MI_reasm_us];
            int64_t tick = (expiry + m[MI_tick_us] - 1) / m[MI_tick_us] * m[MI_tick_us];
            if (end > tick) fl->lost = 1;
        }
    }
    fl->last_arrival = end;
    fl->frame++;
    if (fl->frame < nframes) {
        fl->chain = is_indirect(s, fl);
        if (m[MI_gap_us] && !final_hop) fl->ready = end + m[MI_gap_us];
        arm(s, fl);
        return;
    }
    if (!m[MI_reasm_from_last] && nframes > 1 && end - fl->hop_first > m[MI_reasm_us]) fl->lost = 1;
    if (fl->lost) {
        left_sender(s, fl);
        next_unit(s, fl);
        return;
    }
    left_sender(s, fl);
    fl->frame = 0;
    fl->hop++;
    if (!m[MI_age_priority]) fl->queued = end;
    fl->chain = 0;
    if (fl->hop == hops) {
        push(s, end, EV_DELIVER, fl->fid, fl->pos);
        next_unit(s, fl);
        return;
    }
    arm(s, fl);
}

/* ---------- MRP ---------- */
static int64_t backoff(Sim *s, Message *msg) {
    const int64_t *m = s->m;
    const double *f = s->f;
    int64_t n = msg->tx - 1;
    int64_t interval, boost;
    if (msg->direction == UP) { interval = m[MI_ctrl_interval_us]; boost = m[MI_boost_us]; }
    else { interval = m[MI_dev_interval_us]; boost = 0; }
    int64_t e = n - 1 > 0 ? n - 1 : 0;
    if (e > m[MI_exp_cap]) e = m[MI_exp_cap];
    double u = uniform(&s->rng);
    return floor_time((double)interval * f[MF_margin] * pow(f[MF_base], (double)e) * (1.0 + f[MF_jitter] * u), &s->fail)
           + boost;
}

static int64_t loss_free_arrival(Sim *s, int64_t t, const int *units, int n, int direction) {
    const int64_t *m = s->m;
    int64_t backoff = (((int64_t)1 << m[MI_min_be]) - 1) * m[MI_unit_us] / 2;   /* an estimate: saturates below */
    int64_t per_frame = backoff + m[MI_cca_us] + 2 * m[MI_turnaround_us] + airtime(s, m[MI_ack_psdu]);
    int64_t poll = per_frame + airtime(s, m[MI_poll_psdu]);
    for (int i = 0; i < n; i++) {
        int u = units[i], nf = s->p->unit_len[u];
        const int *psdus = s->p->psdu + s->p->unit_off[u];
        for (int64_t hop = 0; hop < m[MI_hops]; hop++) {
            int indirect = m[MI_sleepy] && direction == DOWN && hop == m[MI_hops] - 1;
            for (int k = 0; k < nf; k++) {
                if (t >= SIM_TIME_LIMIT) return SIM_TIME_LIMIT;   /* far beyond any run's time limit */
                if (indirect) {
                    if (k == 0) t = next_poll(s, t);
                    t += poll;
                }
                t += per_frame + airtime(s, psdus[k]);
                if (m[MI_gap_us] && hop < m[MI_hops] - 1 && k < nf - 1) t += m[MI_gap_us];
            }
        }
    }
    return t;
}

static void send_reliable(Sim *s, int mi, int64_t t, const int *units, const int *tags, int n, int count) {
    Message *msg = &s->msgs[mi];
    if (count) msg->tx++;
    Node *node = &s->nodes[msg->direction == DOWN ? CONTROLLER : DEVICE];
    int fid = new_flow(s, DATA, mi, msg->direction, units, tags, n, t);
    if (s->fail) return;
    s->flows[fid].piggy = node->last_rx;
    s->flows[fid].copy = s->msgs[mi].tx - 1;
    if (!s->m[MI_ack_on_arrival] && node->last_rx >= 0) {
        int nfirst = s->msgs[mi].mode == IPV6 ? n : 1;
        push(s, loss_free_arrival(s, t, units, nfirst, s->msgs[mi].direction), EV_PIGGYBACK, node->last_rx, 0);
    }
    node->ack_gen++;
    msg = &s->msgs[mi];
    msg->timer_gen++;
    if (msg->mode != BLOCK || s->m[MI_block_handoff]) arm_timer(s, mi, t);   /* block: at hand-off, or left_sender */
}

static void new_message(Sim *s, int hs, int kind, int seg, int direction, int64_t t) {
    const SimPlan *p = s->p;
    s->msgs = grow(s, s->msgs, &s->cap_msgs, s->n_msgs, sizeof(Message));
    if (s->fail) return;
    Message *msg = &s->msgs[s->n_msgs];
    memset(msg, 0, sizeof(Message));
    msg->first_copy = -1;
    msg->hs = hs; msg->kind = kind; msg->seg = seg; msg->direction = direction;
    if (kind == WHOLE) {
        msg->mode = p->mode[hs];
        msg->n = p->n_msg_units[hs];
        for (int i = 0; i < msg->n; i++) msg->units[i] = p->first_unit[hs] + i;
    } else if (kind == SEGMENT) {
        msg->mode = SINGLE; msg->n = 1; msg->units[0] = p->first_unit[hs] + seg;
    } else {
        msg->mode = SINGLE; msg->n = 1; msg->units[0] = p->request_unit[hs];
    }
    int mi = s->n_msgs++;
    int tags[MAXU];
    for (int i = 0; i < msg->n; i++) tags[i] = i;
    int units[MAXU];
    memcpy(units, msg->units, sizeof(int) * (size_t)msg->n);
    send_reliable(s, mi, t, units, tags, msg->n, 1);
}

static uint64_t all_bits(const Message *msg) { return msg->n == 64 ? ~(uint64_t)0 : (((uint64_t)1 << msg->n) - 1); }

static void resend(Sim *s, int mi, int64_t t, int count) {
    Message *msg = &s->msgs[mi];
    int units[MAXU], tags[MAXU], n = 0;
    for (int i = 0; i < msg->n; i++) {
        if (msg->mode == BLOCK && ((msg->confirmed >> i) & 1)) continue;
        tags[n] = i; units[n] = msg->units[i]; n++;
    }
    send_reliable(s, mi, t, units, tags, n, count);
}

static void acknowledge(Sim *s, int mi) {
    if (mi >= 0) { s->msgs[mi].acked = 1; s->msgs[mi].timer_gen++; }
}

static void set_result(Sim *s, int ok, int64_t t, int failed) {
    s->have_result = 1;
    s->spurious = 0;
    for (int i = 0; i < s->n_msgs; i++)
        if (s->msgs[i].first_copy >= 0) s->spurious += s->msgs[i].tx - 1 - s->msgs[i].first_copy;
    int64_t r[8] = {ok, t, failed, s->retrans, s->spurious, s->frames, s->dev_tx, s->dev_rx};
    memcpy(s->res, r, sizeof r);
}

static void start_message(Sim *s, int hs, int64_t t) {
    int direction = hs % 2 == 0 ? DOWN : UP;
    new_message(s, hs, s->p->mode[hs] == PULL ? SEGMENT : WHOLE, 0, direction, t);
}

static void application(Sim *s, int hs, int64_t t) {
    if (hs == 3) { set_result(s, 1, t, -1); return; }
    int nxt = hs + 1;
    int64_t compute = nxt == 1 ? s->m[MI_dev_compute2_us] : nxt == 2 ? s->m[MI_ctrl_compute_us] : s->m[MI_dev_compute3_us];
    push(s, t + compute, EV_HANDOFF, nxt, 0);
}

static void completed(Sim *s, int mi, int64_t t) {
    Message msg = s->msgs[mi];
    int n = s->p->n_msg_units[msg.hs];
    if (msg.kind == SEGMENT && msg.seg < n - 1) new_message(s, msg.hs, REQUEST, msg.seg + 1, 1 - msg.direction, t);
    else if (msg.kind == REQUEST) new_message(s, msg.hs, SEGMENT, msg.seg, 1 - msg.direction, t);
    else application(s, msg.hs, t);
}

static void deliver(Sim *s, int fid, int pos, int64_t t) {
    Flow *fl = &s->flows[fid];
    fl->delivered++;
    if (fl->kind == ACK) { acknowledge(s, fl->msg); return; }
    int mi = fl->msg;
    Message *msg = &s->msgs[mi];
    if (fl->kind == BITMAP) {
        msg->confirmed |= fl->bitmap;
        if (msg->confirmed == all_bits(msg)) acknowledge(s, mi);
        else if (!msg->acked) { s->retrans++; resend(s, mi, t, 0); }
        return;
    }
    int whole = fl->delivered == fl->n;
    if (s->m[MI_ack_on_arrival] && fl->piggy >= 0 && !fl->piggy_done && (msg->mode != IPV6 || whole)) {
        fl->piggy_done = 1;
        acknowledge(s, fl->piggy);
    }
    int complete;
    if (msg->mode == BLOCK) {
        msg->received |= (uint64_t)1 << fl->tags[pos];
        if (pos == fl->n - 1) {
            int bu = s->p->bitmap_unit[msg->hs], zero = 0;
            uint64_t snap = msg->received;
            int bid = new_flow(s, BITMAP, mi, 1 - msg->direction, &bu, &zero, 1, t);
            if (s->fail) return;
            s->flows[bid].bitmap = snap;
            fl = &s->flows[fid];
            msg = &s->msgs[mi];
        }
        complete = msg->received == all_bits(msg);
    } else if (msg->mode == IPV6) {
        complete = whole && !s->p->rejected[msg->hs];
    } else {
        complete = 1;
    }
    if (!complete) return;
    if (msg->first_copy < 0 || fl->copy < msg->first_copy) msg->first_copy = fl->copy;
    int rnode = msg->direction == DOWN ? DEVICE : CONTROLLER;
    if (msg->delivered) {
        if (s->m[MI_dup_ack] && msg->mode != BLOCK) {
            int au = s->p->ack_unit, zero = 0;
            new_flow(s, ACK, mi, 1 - msg->direction, &au, &zero, 1, t);
        }
        return;
    }
    msg->delivered = 1;
    if (msg->mode != BLOCK) {
        s->nodes[rnode].last_rx = mi;
        s->nodes[rnode].ack_gen++;
        push(s, t + s->m[MI_standalone_us], EV_STANDALONE, rnode, s->nodes[rnode].ack_gen);
    }
    completed(s, mi, t);
}

/* ---------- frame rule: scheduling and transmission ---------- */
static void drop_lost_heads(Sim *s, int qi) {
    Queue *q = &s->queues[qi];
    while (!q_empty(q) && s->flows[q->q[q->head].fid].ulost[q->q[q->head].pos]) {
        q_pop(q);
        if (qi == s->m[MI_hops] + 1) s->ind_attempts = 0;
    }
}

static int64_t ind_start(Sim *s) {
    const QFrame *head = &s->queues[s->m[MI_hops] + 1].q[s->queues[s->m[MI_hops] + 1].head];
    if (s->ind_chain) return s->ind_chain_at > head->ready ? s->ind_chain_at : head->ready;
    return next_poll(s, head->ready > s->ind_after ? head->ready : s->ind_after);
}

static int64_t max3(int64_t a, int64_t b, int64_t c) { int64_t x = a > b ? a : b; return x > c ? x : c; }

/* Contenders with a queued frame into s->cand / s->cstart (nodes 0..hops, then hops+1 = indirect queue). */
static int frame_contenders(Sim *s) {
    int64_t hops = s->m[MI_hops];
    int n = 0;
    for (int i = 0; i <= hops; i++) {
        drop_lost_heads(s, i);
        Queue *q = &s->queues[i];
        if (!q_empty(q)) {
            s->cand[n] = i;
            s->cstart[n++] = max3(s->chan_free, q->q[q->head].ready, s->hold[i]);
        }
    }
    if (s->m[MI_sleepy]) {
        drop_lost_heads(s, (int)hops + 1);
        if (!q_empty(&s->queues[hops + 1])) {
            int64_t st = ind_start(s);
            s->cand[n] = (int)hops + 1;
            s->cstart[n++] = s->chan_free > st ? s->chan_free : st;
        } else {
            s->ind_chain = 0;
        }
    }
    return n;
}

static void frame_arrived(Sim *s, int fid, QFrame fr, int64_t end) {
    const int64_t *m = s->m;
    if (fr.link + 1 < m[MI_hops]) {
        QFrame next = {fr.fid, fr.pos, fr.k, fr.link + 1, end};
        enqueue(s, next);
        return;
    }
    Flow *fl = &s->flows[fid];
    int pos = fr.pos;
    int nframes = s->p->unit_len[fl->units[pos]];
    if (fr.k == 0) {
        fl->ufirst[pos] = end;
    } else if (m[MI_reasm_from_last]) {
        int64_t expiry = fl->ulast[pos] + m[MI_reasm_us];
        int64_t tick = (expiry + m[MI_tick_us] - 1) / m[MI_tick_us] * m[MI_tick_us];
        if (end > tick) { fl->ulost[pos] = 1; return; }
    }
    fl->ulast[pos] = end;
    if (fr.k < nframes - 1) return;
    if (!m[MI_reasm_from_last] && nframes > 1 && end - fl->ufirst[pos] > m[MI_reasm_us]) { fl->ulost[pos] = 1; return; }
    push(s, end, EV_DELIVER, fid, pos);
}

static int frame_transmit(Sim *s, int contender, int64_t start) {
    const int64_t *m = s->m;
    int64_t hops = m[MI_hops];
    int indirect = contender == hops + 1;
    Queue *q = &s->queues[contender];
    QFrame fr = q->q[q->head];
    Flow *fl = &s->flows[fr.fid];
    int64_t psdu = s->p->psdu[s->p->unit_off[fl->units[fr.pos]] + fr.k];
    if (indirect) {
        int status;
        int64_t retry;
        int64_t end = indirect_frame(s, start, psdu, &status, &retry);
        s->chan_free = end;
        if (status == 1) { s->ind_chain = 0; s->ind_after = end + 1; return fr.fid; }
        if (status == 2) {
            s->ind_attempts++;
            if (s->ind_attempts < m[MI_indirect_attempts]) { s->ind_chain = 1; s->ind_chain_at = retry; return fr.fid; }
            q_pop(q);
            s->ind_attempts = 0; s->ind_chain = 0; s->ind_after = end;
            fl->ulost[fr.pos] = 1;
            return fr.fid;
        }
        q_pop(q);
        s->ind_attempts = 0;
        drop_lost_heads(s, contender);
        s->ind_chain = !q_empty(q) && q->q[q->head].ready <= end;
        s->ind_chain_at = end; s->ind_after = end;
        frame_arrived(s, fr.fid, fr, end);
        return fr.fid;
    }
    int dev_sends = fl->direction == UP && fr.link == 0;
    int dev_receives = fl->direction == DOWN && fr.link == hops - 1;
    int ok;
    int64_t end = direct_frame(s, start, psdu, dev_sends, dev_receives, &ok);
    s->chan_free = end;
    q_pop(q);
    if (!ok) { fl->ulost[fr.pos] = 1; return fr.fid; }
    if (m[MI_gap_us] && fr.link < hops - 1) s->hold[contender] = end + m[MI_gap_us];
    frame_arrived(s, fr.fid, fr, end);
    return fr.fid;
}

static void handle(Sim *s, Event ev) {
    int64_t t = ev.t;
    if (ev.kind == EV_DELIVER) {
        deliver(s, ev.a, ev.b, t);
    } else if (ev.kind == EV_MRP) {
        Message *msg = &s->msgs[ev.a];
        if (msg->acked || ev.b != msg->timer_gen) return;
        if (msg->tx >= s->m[MI_mrp_tx]) { set_result(s, 0, t, msg->hs); return; }
        s->retrans++;
        resend(s, ev.a, t, 1);
    } else if (ev.kind == EV_STANDALONE) {
        Node *node = &s->nodes[ev.a];
        if (ev.b == node->ack_gen && node->last_rx >= 0) {
            int direction = ev.a == CONTROLLER ? DOWN : UP;
            int au = s->p->ack_unit, zero = 0;
            new_flow(s, ACK, node->last_rx, direction, &au, &zero, 1, t);
        }
    } else if (ev.kind == EV_HANDOFF) {
        start_message(s, ev.a, t);
    } else {
        acknowledge(s, ev.a);
    }
}

static void record(Sim *s, int64_t a, int64_t b, int64_t c, int64_t d) {
    if (!s->tracing) return;
    s->trace = grow(s, s->trace, &s->cap_trace, s->n_trace, 4 * sizeof(int64_t));
    if (s->fail) return;
    int64_t *q = s->trace + (size_t)4 * (size_t)s->n_trace++;
    q[0] = a; q[1] = b; q[2] = c; q[3] = d;
}

static sim_status simulate(const SimPlan *p, uint64_t run, int64_t *out, int64_t **trace, int *n_trace) {
    Sim s;
    memset(&s, 0, sizeof s);
    s.tracing = trace != NULL;
    s.p = p; s.m = p->m; s.f = p->f;
    s.nodes[0].last_rx = s.nodes[1].last_rx = -1;
    rng_init(&s.rng, p->seed, run);
    s.bad = 0;
    s.next_switch = NEVER;
    if (s.f[MF_fraction_bad] > 0) {
        s.bad = uniform(&s.rng) < s.f[MF_fraction_bad];
        s.next_switch = sojourn(&s);
    }
    s.poll_phase = s.m[MI_sleepy] ? below(&s.rng, s.m[MI_poll_us]) : 0;
    int frame_rule = (int)s.m[MI_frame_rule];
    if (frame_rule) {
        int64_t nodes = s.m[MI_hops] + 2;
        s.queues = calloc((size_t)nodes, sizeof(Queue));
        s.hold = calloc((size_t)nodes, sizeof(int64_t));
        s.cand = calloc((size_t)nodes, sizeof(int));
        s.cstart = calloc((size_t)nodes, sizeof(int64_t));
        if (!s.queues || !s.hold || !s.cand || !s.cstart) s.fail = SIM_ERR_NO_MEMORY;
    }
    if (!s.fail) start_message(&s, 0, 0);
    while (!s.have_result && !s.fail) {
        int best = -1;
        int64_t bstart = 0;
        int ncand = 0;
        if (frame_rule) {
            ncand = frame_contenders(&s);
            for (int i = 0; i < ncand; i++)
                if (best < 0 || s.cstart[i] < bstart) { best = i; bstart = s.cstart[i]; }
        }
        for (int i = 0; !frame_rule && i < s.n_active; i++) {
            Flow *fl = &s.flows[s.active[i]];
            if (fl->done) { s.active[i] = s.active[--s.n_active]; i--; continue; }
            int64_t st = s.chan_free > fl->ready ? s.chan_free : fl->ready;
            if (best < 0) { best = fl->fid; bstart = st; continue; }
            Flow *b = &s.flows[best];
            if (st < bstart || (st == bstart && (fl->queued < b->queued || (fl->queued == b->queued && fl->fid < b->fid)))) {
                best = fl->fid; bstart = st;
            }
        }
        int ei = best_event(&s);
        int64_t t_ev = ei >= 0 ? s.events[ei].t : NEVER;
        int64_t t_fl = best >= 0 ? bstart : NEVER;
        int64_t first = t_ev < t_fl ? t_ev : t_fl;
        if (first > s.m[MI_max_time_us]) {
            int failing = 3;
            for (int i = 0; i < s.n_msgs; i++) if (!s.msgs[i].delivered) { failing = s.msgs[i].hs; break; }
            set_result(&s, 0, s.m[MI_max_time_us], failing);
            break;
        }
        if (frame_rule && best >= 0 && t_fl < t_ev) {
            int ready = 0, chosen = -1;
            for (int i = 0; i < ncand; i++) if (s.cstart[i] == t_fl) ready++;
            int pick = ready > 1 ? (int)below(&s.rng, ready) : 0;
            for (int i = 0; i < ncand; i++)
                if (s.cstart[i] == t_fl && pick-- == 0) { chosen = s.cand[i]; break; }
            int fid = frame_transmit(&s, chosen, t_fl);
            record(&s, 0, t_fl, fid, s.chan_free);
        } else if (best >= 0 && t_fl < t_ev) {
            transmit(&s, best);
            record(&s, 0, t_fl, best, s.chan_free);
        } else {
            Event ev = s.events[ei];
            s.events[ei] = s.events[--s.n_events];
            record(&s, 1, ev.t, ev.kind, ev.a);
            handle(&s, ev);
        }
    }
    if (!s.fail) memcpy(out, s.res, sizeof s.res);
    free(s.msgs); free(s.flows); free(s.active); free(s.events);
    if (s.queues)
        for (int64_t i = 0; i < s.m[MI_hops] + 2; i++) free(s.queues[i].q);
    free(s.queues); free(s.hold); free(s.cand); free(s.cstart);
    if (trace && !s.fail) { *trace = s.trace; *n_trace = s.n_trace; }
    else free(s.trace);
    return s.fail;
}

/* ---------- interface (sim_core.h) ---------- */
static const char *const SIM_ERROR_NAMES[SIM_ERR_COUNT] = {
    "SIM_OK", "SIM_ERR_NO_MEMORY", "SIM_ERR_PLAN_EMPTY", "SIM_ERR_PLAN_UNITS", "SIM_ERR_PLAN_REFERENCE",
    "SIM_ERR_PLAN_PSDU", "SIM_ERR_MODEL_RANGE", "SIM_ERR_MODEL_NOT_FINITE", "SIM_ERR_RUN_RANGE",
    "SIM_ERR_MODEL_CHOICE", "SIM_ERR_PATH_LENGTH", "SIM_ERR_CAPACITY", "SIM_ERR_TIME_RANGE",
};
static const char *const SIM_ERROR_TEXT[SIM_ERR_COUNT] = {
    "no error",
    "the simulator ran out of memory",
    "the plan has no units or no frames",
    "unit lengths do not add up to the frame list, or a unit has no frame",
    "a message refers to a unit that does not exist, or has an unknown transport mode",
    "a frame size is outside 1..65535 bytes",
    "an integer model value is out of range",
    "a probability or duration is NaN, infinite, negative, or a probability above 1",
    "a run index is at or beyond 2^63",
    "a channel rule, ACK-loss or indirect-retry choice is outside its values",
    "a path of more hops than the simulator supports (255)",
    "a size or capacity beyond what the simulator can hold (2^31 - 1 elements, or the batch's bytes)",
    "a model time beyond the simulator's range: the time limit, a loss-burst mean or the largest MRP backoff "
    "(2^61 us)",
};

const char *sim_error_name(sim_status status) {
    return status >= 0 && status < SIM_ERR_COUNT ? SIM_ERROR_NAMES[status] : "SIM_ERR_UNKNOWN";
}

const char *sim_strerror(sim_status status) {
    return status >= 0 && status < SIM_ERR_COUNT ? SIM_ERROR_TEXT[status] : "unknown simulator error";
}

static int finite_nonneg(double x) { return isfinite(x) && x >= 0.0; }

sim_status sim_validate(const SimPlan *p) {
    if (p->n_units < 1 || p->n_psdu < 1) return SIM_ERR_PLAN_EMPTY;
    int64_t off = 0;   /* at most n_units * INT_MAX: no overflow in 64 bits */
    for (int i = 0; i < p->n_units; i++) {
        if (p->unit_len[i] < 1 || p->unit_off[i] != off) return SIM_ERR_PLAN_UNITS;
        off += p->unit_len[i];
    }
    if (off != p->n_psdu) return SIM_ERR_PLAN_UNITS;
    for (int i = 0; i < 4; i++) {
        if (p->n_msg_units[i] < 1 || p->n_msg_units[i] > MAXU) return SIM_ERR_PLAN_REFERENCE;
        if (p->first_unit[i] < 0 || (int64_t)p->first_unit[i] + p->n_msg_units[i] > p->n_units || p->bitmap_unit[i] < 0 ||
            p->bitmap_unit[i] >= p->n_units || p->request_unit[i] < 0 || p->request_unit[i] >= p->n_units ||
            p->mode[i] < SINGLE || p->mode[i] > BLOCK)
            return SIM_ERR_PLAN_REFERENCE;
    }
    if (p->ack_unit < 0 || p->ack_unit >= p->n_units) return SIM_ERR_PLAN_REFERENCE;
    for (int i = 0; i < p->n_psdu; i++)
        if (p->psdu[i] < 1 || p->psdu[i] > 65535) return SIM_ERR_PLAN_PSDU;
    const int64_t *m = p->m;
    if (m[MI_hops] < 1 || m[MI_poll_us] < 1 || m[MI_tick_us] < 1 || m[MI_min_be] < 0 || m[MI_min_be] > 30 ||
        m[MI_retx_max_exp] < 0 || m[MI_retx_max_exp] > 30 || m[MI_max_retries] < 0 || m[MI_indirect_attempts] < 1 ||
        m[MI_exp_cap] < 0 || m[MI_mrp_tx] < 1 || m[MI_max_time_us] < 0)
        return SIM_ERR_MODEL_RANGE;
    for (int i = 0; i < MI_COUNT; i++)
        if (m[i] < 0) return SIM_ERR_MODEL_RANGE;  /* every count, flag and duration is non-negative */
    /* Upper bounds that keep every int64 time sum of a run below 2^63 (sim_core.h); params' ranges are inside. */
    static const int sizes[] = {MI_phy_bytes, MI_ack_psdu, MI_poll_psdu};
    static const int per_unit[] = {MI_byte_us, MI_unit_us};
    static const int exponents[] = {MI_min_be, MI_retx_max_exp};
    static const int counts[] = {MI_max_retries, MI_indirect_attempts, MI_exp_cap, MI_mrp_tx};
    static const int durations[] = {MI_turnaround_us, MI_cca_us, MI_ack_wait_us, MI_poll_us, MI_gap_us, MI_reasm_us,
                                    MI_tick_us, MI_dev_interval_us, MI_ctrl_interval_us, MI_boost_us, MI_standalone_us,
                                    MI_ctrl_compute_us, MI_dev_compute2_us, MI_dev_compute3_us, MI_poll_timeout_us};
    static const struct { const int *fields; size_t n; int64_t max; } bounds[] = {
        {sizes, sizeof sizes / sizeof *sizes, SIM_SIZE_MAX},
        {per_unit, sizeof per_unit / sizeof *per_unit, SIM_PER_UNIT_MAX},
        {exponents, sizeof exponents / sizeof *exponents, SIM_EXPONENT_MAX},
        {counts, sizeof counts / sizeof *counts, SIM_COUNT_MAX},
        {durations, sizeof durations / sizeof *durations, SIM_DURATION_MAX},
    };
    for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++)
        for (size_t i = 0; i < bounds[b].n; i++)
            if (m[bounds[b].fields[i]] > bounds[b].max) return SIM_ERR_MODEL_RANGE;
    if (m[MI_hops] > SIM_MAX_HOPS) return SIM_ERR_PATH_LENGTH;
    if (m[MI_age_priority] > 1 || m[MI_frame_rule] > 1 || m[MI_age_priority] + m[MI_frame_rule] > 1 ||
        m[MI_ack_never] > 1 || m[MI_retry_spacing] > SPACING_BACK_TO_BACK || m[MI_block_handoff] > 1 ||
        (m[MI_frame_rule] && !m[MI_block_handoff]))
        return SIM_ERR_MODEL_CHOICE;
    const double *f = p->f;
    for (int i = 0; i < MF_COUNT; i++)
        if (!finite_nonneg(f[i])) return SIM_ERR_MODEL_NOT_FINITE;
    if (f[MF_p_good] > 1.0 || f[MF_p_bad] > 1.0 || f[MF_fraction_bad] >= 1.0) return SIM_ERR_MODEL_NOT_FINITE;
    if (f[MF_fraction_bad] > 0.0 && (f[MF_burst_us] <= 0.0 || f[MF_good_us] <= 0.0)) return SIM_ERR_MODEL_NOT_FINITE;
    /* Times converted from doubles stay below SIM_TIME_LIMIT: the run's time limit, every Gilbert-Elliott sojourn
     * (mean x at most 53 ln 2 < 2^6) and every MRP backoff (its largest exponent and jitter), so that a timer plus
     * the time it is armed at never overflows int64. */
    if (m[MI_max_time_us] >= SIM_TIME_LIMIT || m[MI_boost_us] >= SIM_TIME_LIMIT) return SIM_ERR_TIME_RANGE;
    if (!(f[MF_burst_us] < SIM_SOJOURN_MEAN_LIMIT) || !(f[MF_good_us] < SIM_SOJOURN_MEAN_LIMIT)) return SIM_ERR_TIME_RANGE;
    int64_t e = m[MI_mrp_tx] - 2 > 0 ? m[MI_mrp_tx] - 2 : 0;
    if (e > m[MI_exp_cap]) e = m[MI_exp_cap];
    double growth = fmax(1.0, pow(f[MF_base], (double)e));
    for (int i = 0; i < 2; i++) {
        int64_t interval = i == 0 ? m[MI_dev_interval_us] : m[MI_ctrl_interval_us];
        if (!((double)interval * f[MF_margin] * growth * (1.0 + f[MF_jitter]) < (double)SIM_TIME_LIMIT))
            return SIM_ERR_TIME_RANGE;
    }
    return SIM_OK;
}

sim_status sim_run(const SimPlan *p, uint64_t run, int64_t *out, int64_t **trace, int *n_trace) {
    if (run >= ((uint64_t)1 << 63)) return SIM_ERR_RUN_RANGE;
    return simulate(p, run, out, trace, n_trace);
}
