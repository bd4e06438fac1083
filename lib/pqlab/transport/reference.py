"""The Python twin of the C core: the same Thread/MRP handshake model, event by event, slow and readable.

Model (PQ-CASE §IV-C): a path of ``hops`` 802.15.4 links between the controller side (node 0) and the
device (node ``hops``), one shared channel without spatial reuse. The channel serves one frame exchange
at a time: the earliest that can start; among those, the datagram queued first at its sending node.
Each datagram crosses the path store-and-forward: all its frames on link 1, then link 2, ... .
Time is integer microseconds.

Frame exchange (direct): retx delay (retries only) + CSMA backoff U{0..2^minBE-1} slots + CCA + turnaround,
airtime (6 + PSDU) x 32 us; the ACK follows a turnaround, or the sender gives up after the ACK wait.
Loss: one time-based Gilbert-Elliott process shared by all links; a frame (or ACK) is lost with the loss
probability of the state at its start. Sleepy device: the last link to it is indirect — the device polls
on a fixed grid (random phase), at once after a frame with frame-pending, and again after its data-poll
timeout when an announced frame did not arrive; the poll is a direct frame (MAC retries), the data frame
has none; ``indirect_attempts`` failed data frames lose the datagram.
MRP per Eq. 1; acknowledgements ride on the next message the receiver hands to the transport or go out
standalone after 200 ms. As in the paper, a piggybacked acknowledgement arrives after the loss-free
delivery time of the reply's first unit (the whole message for IPv6 fragmentation), computed with the
mean CSMA backoff and no queueing; with ``piggyback_ack_on_arrival`` it arrives with that unit itself.

Frame rule (``channel_priority: frame_fifo``): instead of datagrams crossing the path one after another, every
node keeps a FIFO of frames; the origin enqueues all frames of a copy at hand-off and each router enqueues every
frame it receives (the sleepy device's parent keeps the device's frames in a separate indirect queue served at
the device's polls). When the channel is free, the next frame exchange goes to a node drawn uniformly among those
whose head frame is ready (the indirect queue counts as one more contender). A datagram is reassembled at the
destination only; once one of its frames is lost (MAC retries or indirect attempts exhausted, or the reassembly
timeout) every remaining frame of it is dropped wherever it is queued. Block transfer's MRP timer starts when
the copy (its last segment) is handed to the transport (``block_handoff``, always set under the frame rule;
the datagram rules start it when the last segment has left the sender unless it is set).

Switches the paper leaves open: ``ack_never`` (imm-ACK frames are never lost) and ``retry_spacing`` (when an
unacknowledged indirect frame is retried: 0 after the device's data-poll timeout, 1 at its next regular poll,
2 right after the ACK wait).

The random draws happen in a fixed order that the C core (sim_core.c) follows exactly.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from pqlab.errors import SimulationError
from pqlab.transport.model import BLOCK, IPV6, PULL, SINGLE, Plan
from pqlab.transport.plan_check import TIME_LIMIT, validate
from pqlab.transport.prng import Xoshiro256

DOWN, UP = 0, 1                      # controller -> device, device -> controller
CONTROLLER, DEVICE = 0, 1
DATA, ACK, BITMAP = 0, 1, 2          # flow kinds
WHOLE, SEGMENT, REQUEST = 0, 1, 2    # message kinds
EV_DELIVER, EV_MRP, EV_STANDALONE, EV_HANDOFF, EV_PIGGYBACK = 0, 1, 2, 3, 4
NEVER = 1 << 62
SPACING_TIMEOUT, SPACING_POLL, SPACING_BACK_TO_BACK = 0, 1, 2   # retry_spacing values


@dataclass
class Result:
    ok: bool
    time_us: int                # completion (status report at the controller) or time of failure
    failed_message: int         # -1, or 0..3 (Sigma1, Sigma2, Sigma3, status report)
    retransmissions: int        # MRP retransmissions (timer expiry or block-transfer resend)
    spurious: int               # MRP retransmissions sent after a copy of the message that did arrive complete
    frames: int                 # 802.15.4 data frames and data polls transmitted (with MAC retries)
    device_tx_us: int
    device_rx_us: int

    def as_tuple(self) -> tuple[int, ...]:
        return (int(self.ok), self.time_us, self.failed_message, self.retransmissions, self.spurious,
                self.frames, self.device_tx_us, self.device_rx_us)


@dataclass
class Message:
    hs: int                      # handshake message it belongs to
    kind: int
    seg: int
    direction: int
    mode: int                    # SINGLE, IPV6 (whole message) / BLOCK; segments and requests travel SINGLE
    units: list[int]
    tx: int = 0
    acked: bool = False
    delivered: bool = False
    timer_gen: int = 0
    first_copy: int = -1         # earliest transmission (0 = original) that arrived complete
    received: int = 0            # block transfer: receiver's bitmap
    confirmed: int = 0           # block transfer: what the sender knows arrived


@dataclass
class Flow:
    fid: int
    kind: int
    msg: int
    direction: int
    units: list[int]
    tags: list[int]
    ready: int
    queued: int                  # when the current datagram joined the sending node's queue (FIFO order)
    piggy: int = -1
    copy: int = 0                # which transmission of its message this flow carries
    bitmap: int = 0
    pos: int = 0
    hop: int = 0
    frame: int = 0
    hop_first: int = 0
    last_arrival: int = 0
    lost: bool = False
    chain: bool = False
    attempts: int = 0
    delivered: int = 0
    piggy_done: bool = False
    done: bool = False
    # frame rule: per datagram (unit position) — lost, first and last frame arrival at the destination
    ulost: list[bool] = field(default_factory=list)
    ufirst: list[int] = field(default_factory=list)
    ulast: list[int] = field(default_factory=list)


@dataclass
class QFrame:
    """Frame rule: one frame waiting in a node's FIFO."""

    fid: int
    pos: int                     # datagram (unit position in its flow)
    k: int                       # frame index within the datagram
    link: int                    # links crossed so far (0 at the origin)
    ready: int                   # when it joined this queue


@dataclass
class Node:
    last_rx: int = -1
    ack_gen: int = 0


class Handshake:
    """One CASE handshake; ``run()`` returns its Result."""

    def __init__(self, plan: Plan, run: int) -> None:
        if not 0 <= run < 1 << 63:  # as sim_run in the C core: an index is never wrapped
            raise SimulationError("SIM_ERR_RUN_RANGE", "a run index is at or beyond 2^63")
        validate(plan)  # the C core's plan checks, in its order: the same plans refused with the same code
        self.plan = plan
        self.m = plan.ints
        self.f = plan.floats
        self.rng = Xoshiro256(plan.seed, run)
        self.msgs: list[Message] = []
        self.flows: list[Flow] = []
        self.events: list[tuple[int, int, int, int, int]] = []   # (time, seq, type, a, b)
        self.seq = 0
        self.nodes = [Node(), Node()]
        self.chan_free = 0
        self.retrans = self.frames = self.dev_tx = self.dev_rx = 0
        self.result: Result | None = None
        self.trace: list[tuple[int, int, int, int]] = []   # (0, start, flow, channel free) / (1, time, kind, a)
        # channel: Gilbert-Elliott state
        self.bad = False
        self.next_switch = NEVER
        if self.f["fraction_bad"] > 0:
            self.bad = self.rng.uniform() < self.f["fraction_bad"]
            self.next_switch = self._sojourn()
        self.poll_phase = self.rng.below(self.m["poll_us"]) if self.m["sleepy"] else 0
        # frame rule: one FIFO per node (0 = controller side ... hops = device), the indirect queue at the
        # device's parent, and each node's silence after a frame its neighbour must forward
        self.queues: list[deque[QFrame]] = [deque() for _ in range(self.m["hops"] + 1)]
        self.ind_queue: deque[QFrame] = deque()
        self.hold = [0] * (self.m["hops"] + 1)
        self.ind_chain = False       # the device polls at once (frame pending / retry), at ind_chain_at
        self.ind_chain_at = 0
        self.ind_after = 0           # otherwise the next poll-grid instant at or after this and the frame's arrival
        self.ind_attempts = 0

    # ---------- channel ----------
    def _sojourn(self) -> int:
        return self.rng.exponential_us(self.f["burst_us"] if self.bad else self.f["good_us"])

    def lost(self, t: int) -> bool:
        while t >= self.next_switch:
            self.bad = not self.bad
            self.next_switch += self._sojourn()
        p = self.f["p_bad"] if self.bad else self.f["p_good"]
        return self.rng.uniform() < p

    def airtime(self, psdu: int) -> int:
        return (self.m["phy_bytes"] + psdu) * self.m["byte_us"]

    def csma(self) -> int:
        return self.rng.below(1 << self.m["min_be"]) * self.m["unit_us"] + self.m["cca_us"] + self.m["turnaround_us"]

    # ---------- one frame on one link ----------
    def direct_frame(self, t: int, psdu: int, dev_sends: bool, dev_receives: bool) -> tuple[int, bool]:
        m = self.m
        air, ack_air = self.airtime(psdu), self.airtime(m["ack_psdu"])
        for attempt in range(m["max_retries"] + 1):
            if attempt > 0 and m["retx_delay"]:
                t += self.rng.below(1 << min(attempt - 1, m["retx_max_exp"])) * m["unit_us"]
            t += self.csma()
            data_lost = self.lost(t)
            self.frames += 1
            end = t + air
            ok = False
            if not data_lost:
                ack_start = end + m["turnaround_us"]
                ok = True if m["ack_never"] else not self.lost(ack_start)
            if dev_sends:
                self.dev_tx += air
                self.dev_rx += ack_air if ok else m["ack_wait_us"]
            if dev_receives:
                self.dev_rx += air
                if not data_lost:
                    self.dev_tx += ack_air
            if ok:
                return end + m["turnaround_us"] + ack_air, True
            t = end + m["ack_wait_us"]
        return t, False

    def indirect_frame(self, t: int, psdu: int) -> tuple[int, int, int]:
        """Data poll (a direct frame from the device) + one data frame from the parent, no MAC retries.

        Returns (channel free, status, retry): status 0 ok, 1 poll failed (wait for the poll grid),
        2 data frame failed (the device polls again ``poll_timeout`` after its poll was acknowledged).
        """
        m = self.m
        air, ack_air = self.airtime(psdu), self.airtime(m["ack_psdu"])
        t, polled = self.direct_frame(t, m["poll_psdu"], True, False)
        if not polled:
            return t, 1, t
        t += self.csma()
        data_lost = self.lost(t)
        self.frames += 1
        end = t + air
        if not data_lost:
            ack_start = end + m["turnaround_us"]
            ack_lost = False if m["ack_never"] else self.lost(ack_start)
            self.dev_rx += air
            self.dev_tx += ack_air
            if not ack_lost:
                return ack_start + ack_air, 0, ack_start + ack_air
            return end + m["ack_wait_us"], 2, self.indirect_retry(t, end)
        self.dev_rx += m["poll_timeout_us"]   # the device listens until its data-poll timeout
        return end + m["ack_wait_us"], 2, self.indirect_retry(t, end)

    def indirect_retry(self, t: int, end: int) -> int:
        """When the parent can retry an unacknowledged indirect frame sent at ``t`` (``retry_spacing``)."""
        m = self.m
        if m["retry_spacing"] == SPACING_POLL:
            return self.next_poll(end + m["ack_wait_us"])
        if m["retry_spacing"] == SPACING_BACK_TO_BACK:
            return end + m["ack_wait_us"]
        return max(end + m["ack_wait_us"], t + m["poll_timeout_us"])

    def next_poll(self, t: int) -> int:
        """First poll-grid instant at or after t."""
        period, phase = self.m["poll_us"], self.poll_phase
        if t <= phase:
            return phase
        return phase + (t - phase + period - 1) // period * period

    def is_indirect(self, fl: Flow) -> bool:
        return bool(self.m["sleepy"]) and fl.direction == DOWN and fl.hop == self.m["hops"] - 1

    # ---------- flows ----------
    def new_flow(self, kind: int, msg: int, direction: int, units: list[int], tags: list[int], t: int) -> Flow:
        fl = Flow(fid=len(self.flows), kind=kind, msg=msg, direction=direction, units=units, tags=tags, ready=t,
                  queued=t)
        self.flows.append(fl)
        if self.m["frame_rule"]:
            fl.ulost, fl.ufirst, fl.ulast = [False] * len(units), [0] * len(units), [0] * len(units)
            for pos, u in enumerate(units):
                for k in range(len(self.plan.units[u])):
                    self.enqueue(QFrame(fl.fid, pos, k, 0, t))
        else:
            self._arm(fl)
        return fl

    # ---------- frame rule ----------
    def enqueue(self, fr: QFrame) -> None:
        """Put a frame in the FIFO of the node that sends it over its next link."""
        hops = self.m["hops"]
        direction = self.flows[fr.fid].direction
        if self.m["sleepy"] and direction == DOWN and fr.link == hops - 1:
            self.ind_queue.append(fr)
        else:
            self.queues[fr.link if direction == DOWN else hops - fr.link].append(fr)

    def _drop_lost_heads(self, queue: deque[QFrame]) -> None:
        while queue and self.flows[queue[0].fid].ulost[queue[0].pos]:
            queue.popleft()
            if queue is self.ind_queue:
                self.ind_attempts = 0

    def _ind_start(self) -> int:
        head = self.ind_queue[0]
        if self.ind_chain:
            return max(self.ind_chain_at, head.ready)
        return self.next_poll(max(head.ready, self.ind_after))

    def frame_contenders(self) -> list[tuple[int, int]]:
        """(earliest start, contender) for every node with a queued frame; contender hops+1 = indirect queue."""
        out = []
        for n, queue in enumerate(self.queues):
            self._drop_lost_heads(queue)
            if queue:
                out.append((max(self.chan_free, queue[0].ready, self.hold[n]), n))
        if self.m["sleepy"]:
            self._drop_lost_heads(self.ind_queue)
            if self.ind_queue:
                out.append((max(self.chan_free, self._ind_start()), self.m["hops"] + 1))
            else:
                self.ind_chain = False
        return out

    def datagram_lost(self, fl: Flow, pos: int) -> None:
        fl.ulost[pos] = True

    def frame_transmit(self, contender: int, start: int) -> int:
        """One frame exchange of the contender's head frame; returns its flow id."""
        m = self.m
        hops = m["hops"]
        indirect = contender == hops + 1
        queue = self.ind_queue if indirect else self.queues[contender]
        fr = queue[0]
        fl = self.flows[fr.fid]
        psdu = self.plan.units[fl.units[fr.pos]][fr.k]
        if indirect:
            end, status, retry = self.indirect_frame(start, psdu)
            self.chan_free = end
            if status == 1:
                self.ind_chain = False
                self.ind_after = end + 1
                return fr.fid
            if status == 2:
                self.ind_attempts += 1
                if self.ind_attempts < m["indirect_attempts"]:
                    self.ind_chain = True
                    self.ind_chain_at = retry
                    return fr.fid
                queue.popleft()
                self.ind_attempts = 0
                self.ind_chain = False
                self.ind_after = end
                self.datagram_lost(fl, fr.pos)
                return fr.fid
            queue.popleft()
            self.ind_attempts = 0
            self._drop_lost_heads(queue)
            # frame pending: the device polls again at once when the parent already holds its next frame
            self.ind_chain = bool(queue) and queue[0].ready <= end
            self.ind_chain_at = end
            self.ind_after = end
            self.frame_arrived(fl, fr, end)
            return fr.fid
        dev_sends = fl.direction == UP and fr.link == 0
        dev_receives = fl.direction == DOWN and fr.link == hops - 1
        end, ok = self.direct_frame(start, psdu, dev_sends, dev_receives)
        self.chan_free = end
        queue.popleft()
        if not ok:
            self.datagram_lost(fl, fr.pos)
            return fr.fid
        if m["gap_us"] and fr.link < hops - 1:
            self.hold[contender] = end + m["gap_us"]
        self.frame_arrived(fl, fr, end)
        return fr.fid

    def frame_arrived(self, fl: Flow, fr: QFrame, end: int) -> None:
        """A frame reached the next node: queue it there, or reassemble at the destination."""
        m = self.m
        if fr.link + 1 < m["hops"]:
            self.enqueue(QFrame(fr.fid, fr.pos, fr.k, fr.link + 1, end))
            return
        pos = fr.pos
        nframes = len(self.plan.units[fl.units[pos]])
        if fr.k == 0:
            fl.ufirst[pos] = end
        elif m["reasm_from_last"]:
            expiry = fl.ulast[pos] + m["reasm_us"]
            tick = (expiry + m["tick_us"] - 1) // m["tick_us"] * m["tick_us"]
            if end > tick:
                self.datagram_lost(fl, pos)
                return
        fl.ulast[pos] = end
        if fr.k < nframes - 1:
            return
        if not m["reasm_from_last"] and nframes > 1 and end - fl.ufirst[pos] > m["reasm_us"]:
            self.datagram_lost(fl, pos)
            return
        self.push(end, EV_DELIVER, fl.fid, pos)

    def _arm(self, fl: Flow) -> None:
        """Set the ready time for the flow's next frame if it waits for a poll."""
        if self.is_indirect(fl) and not fl.chain:
            fl.ready = self.next_poll(fl.ready)

    def transmit(self, fl: Flow) -> None:
        m = self.m
        hops = m["hops"]
        start = max(self.chan_free, fl.ready)
        psdus = self.plan.units[fl.units[fl.pos]]
        psdu = psdus[fl.frame]
        if self.is_indirect(fl):
            end, status, retry = self.indirect_frame(start, psdu)
            self.chan_free = end
            if status == 1:
                fl.chain = False
                fl.ready = end + 1
                self._arm(fl)
                return
            if status == 2:
                fl.attempts += 1
                if fl.attempts < m["indirect_attempts"]:
                    fl.chain = True          # a quick poll after the data-poll timeout, not the poll grid
                    fl.ready = retry
                    return
                fl.chain = False
                ok = False
            else:
                ok = True
            fl.attempts = 0
        else:
            dev_sends = fl.direction == UP and fl.hop == 0
            dev_receives = fl.direction == DOWN and fl.hop == hops - 1
            end, ok = self.direct_frame(start, psdu, dev_sends, dev_receives)
            self.chan_free = end
        fl.ready = end
        if not ok:
            self._left_sender(fl)
            self._next_unit(fl)
            return
        # the frame arrived at the next node
        final_hop = fl.hop == hops - 1
        if fl.frame == 0:
            fl.hop_first = end
        elif m["reasm_from_last"]:
            if final_hop:
                expiry = fl.last_arrival + m["reasm_us"]
                tick = (expiry + m["tick_us"] - 1) // m["tick_us"] * m["tick_us"]
                if end > tick:
                    fl.lost = True
        fl.last_arrival = end
        fl.frame += 1
        if fl.frame < len(psdus):
            fl.chain = self.is_indirect(fl)
            if m["gap_us"] and not final_hop:
                fl.ready = end + m["gap_us"]
            self._arm(fl)
            return
        # the whole datagram crossed this link
        if not m["reasm_from_last"] and len(psdus) > 1 and end - fl.hop_first > m["reasm_us"]:
            fl.lost = True
        if fl.lost:
            self._left_sender(fl)
            self._next_unit(fl)
            return
        self._left_sender(fl)
        fl.frame = 0
        fl.hop += 1
        if not m["age_priority"]:
            fl.queued = end
        fl.chain = False
        if fl.hop == hops:
            self.push(end, EV_DELIVER, fl.fid, fl.pos)
            self._next_unit(fl)
            return
        self._arm(fl)

    def _left_sender(self, fl: Flow) -> None:
        """Block transfer: the MRP timer starts when the burst's last segment has left the sender."""
        if self.m["block_handoff"] or self.msgs[fl.msg].mode != BLOCK:
            return
        if fl.hop == 0 and fl.kind == DATA and fl.pos == len(fl.units) - 1:
            self.arm_timer(fl.msg, fl.ready)

    def _next_unit(self, fl: Flow) -> None:
        fl.pos += 1
        fl.hop = fl.frame = fl.attempts = 0
        fl.lost = fl.chain = False
        if fl.pos == len(fl.units):
            fl.done = True
        else:
            self._arm(fl)

    # ---------- events ----------
    def push(self, t: int, kind: int, a: int, b: int) -> None:
        self.events.append((t, self.seq, kind, a, b))
        self.seq += 1

    def pop(self) -> tuple[int, int, int, int, int] | None:
        if not self.events:
            return None
        best = min(range(len(self.events)), key=lambda i: self.events[i][:2])
        return self.events.pop(best)

    def peek_time(self) -> int:
        return min(e[0] for e in self.events) if self.events else NEVER

    # ---------- MRP ----------
    def backoff(self, msg: Message) -> int:
        m, f = self.m, self.f
        n = msg.tx - 1                      # transmissions made before this one
        if msg.direction == UP:             # the device sends: controller's interval + the device's boost
            interval, boost = m["ctrl_interval_us"], m["boost_us"]
        else:
            interval, boost = m["dev_interval_us"], 0
        e = min(max(0, n - 1), m["exp_cap"])
        u = self.rng.uniform()
        return math.floor(interval * f["margin"] * f["base"] ** e * (1.0 + f["jitter"] * u)) + boost

    def send_reliable(self, mi: int, t: int, units: list[int], tags: list[int], count: bool = True) -> None:
        msg = self.msgs[mi]
        if count:
            msg.tx += 1
        node = self.nodes[CONTROLLER if msg.direction == DOWN else DEVICE]
        fl = self.new_flow(DATA, mi, msg.direction, units, tags, t)
        fl.piggy = node.last_rx
        fl.copy = msg.tx - 1
        if not self.m["ack_on_arrival"] and fl.piggy >= 0:
            first = units if msg.mode == IPV6 else units[:1]
            self.push(self.loss_free_arrival(t, first, msg.direction), EV_PIGGYBACK, fl.piggy, 0)
        node.ack_gen += 1                   # a pending standalone ACK is now piggybacked
        msg.timer_gen += 1
        if msg.mode != BLOCK or self.m["block_handoff"]:   # block transfer: at hand-off, or see _left_sender
            self.arm_timer(mi, t)

    def loss_free_arrival(self, t: int, units: list[int], direction: int) -> int:
        """When ``units`` would arrive without loss or queueing, with the mean CSMA backoff."""
        m = self.m
        backoff = ((1 << m["min_be"]) - 1) * m["unit_us"] // 2
        per_frame = backoff + m["cca_us"] + 2 * m["turnaround_us"] + self.airtime(m["ack_psdu"])
        poll = per_frame + self.airtime(m["poll_psdu"])
        for u in units:
            psdus = self.plan.units[u]
            for hop in range(m["hops"]):
                indirect = m["sleepy"] and direction == DOWN and hop == m["hops"] - 1
                for k, psdu in enumerate(psdus):
                    if t >= TIME_LIMIT:  # an estimate: saturates far beyond any run's time limit, as in C
                        return TIME_LIMIT
                    if indirect:
                        if k == 0:
                            t = self.next_poll(t)
                        t += poll
                    t += per_frame + self.airtime(psdu)
                    if m["gap_us"] and hop < m["hops"] - 1 and k < len(psdus) - 1:
                        t += m["gap_us"]
        return t

    def arm_timer(self, mi: int, t: int) -> None:
        msg = self.msgs[mi]
        self.push(t + self.backoff(msg), EV_MRP, mi, msg.timer_gen)

    def new_message(self, hs: int, kind: int, seg: int, direction: int, t: int) -> None:
        p = self.plan
        if kind == WHOLE:
            mode = p.mode[hs]
            units = list(range(p.first_unit[hs], p.first_unit[hs] + p.n_units[hs]))
        elif kind == SEGMENT:
            mode, units = SINGLE, [p.first_unit[hs] + seg]
        else:
            mode, units = SINGLE, [p.request_unit[hs]]
        self.msgs.append(Message(hs=hs, kind=kind, seg=seg, direction=direction, mode=mode, units=units))
        self.send_reliable(len(self.msgs) - 1, t, units, list(range(len(units))))

    def all_bits(self, msg: Message) -> int:
        return (1 << len(msg.units)) - 1

    def resend(self, mi: int, t: int, count: bool) -> None:
        msg = self.msgs[mi]
        if msg.mode == BLOCK:
            tags = [i for i in range(len(msg.units)) if not msg.confirmed >> i & 1]
            self.send_reliable(mi, t, [msg.units[i] for i in tags], tags, count)
        else:
            self.send_reliable(mi, t, msg.units, list(range(len(msg.units))), count)

    def acknowledge(self, mi: int) -> None:
        if mi >= 0:
            msg = self.msgs[mi]
            msg.acked = True
            msg.timer_gen += 1

    def start_message(self, hs: int, t: int) -> None:
        direction = DOWN if hs % 2 == 0 else UP
        if self.plan.mode[hs] == PULL:
            self.new_message(hs, SEGMENT, 0, direction, t)
        else:
            self.new_message(hs, WHOLE, 0, direction, t)

    def application(self, hs: int, t: int) -> None:
        if hs == 3:
            self.result = self._result(True, t, -1)
            return
        nxt = hs + 1
        compute = {1: self.m["dev_compute2_us"], 2: self.m["ctrl_compute_us"], 3: self.m["dev_compute3_us"]}[nxt]
        self.push(t + compute, EV_HANDOFF, nxt, 0)

    def completed(self, mi: int, t: int) -> None:
        msg = self.msgs[mi]
        n = self.plan.n_units[msg.hs]
        if msg.kind == SEGMENT and msg.seg < n - 1:
            self.new_message(msg.hs, REQUEST, msg.seg + 1, 1 - msg.direction, t)
        elif msg.kind == REQUEST:
            self.new_message(msg.hs, SEGMENT, msg.seg, 1 - msg.direction, t)
        else:
            self.application(msg.hs, t)

    def deliver(self, fl: Flow, pos: int, t: int) -> None:
        fl.delivered += 1
        if fl.kind == ACK:
            self.acknowledge(fl.msg)
            return
        msg = self.msgs[fl.msg]
        if fl.kind == BITMAP:
            msg.confirmed |= fl.bitmap
            if msg.confirmed == self.all_bits(msg):
                self.acknowledge(fl.msg)
            elif not msg.acked:
                self.retrans += 1
                self.resend(fl.msg, t, count=False)
            return
        whole = fl.delivered == len(fl.units)
        if self.m["ack_on_arrival"] and fl.piggy >= 0 and not fl.piggy_done and (msg.mode != IPV6 or whole):
            fl.piggy_done = True
            self.acknowledge(fl.piggy)
        if msg.mode == BLOCK:
            msg.received |= 1 << fl.tags[pos]
            if pos == len(fl.units) - 1:
                bm = self.new_flow(BITMAP, fl.msg, 1 - msg.direction, [self.plan.bitmap_unit[msg.hs]], [0], t)
                bm.bitmap = msg.received
            complete = msg.received == self.all_bits(msg)
        elif msg.mode == IPV6:
            complete = whole and not self.plan.rejected[msg.hs]
        else:
            complete = True
        if not complete:
            return
        if msg.first_copy < 0 or fl.copy < msg.first_copy:
            msg.first_copy = fl.copy
        receiver = self.nodes[DEVICE if msg.direction == DOWN else CONTROLLER]
        if msg.delivered:
            if self.m["dup_ack"] and msg.mode != BLOCK:
                self.new_flow(ACK, fl.msg, 1 - msg.direction, [self.plan.ack_unit], [0], t)
            return
        msg.delivered = True
        if msg.mode != BLOCK:
            receiver.last_rx = fl.msg
            receiver.ack_gen += 1
            self.push(t + self.m["standalone_us"], EV_STANDALONE, DEVICE if msg.direction == DOWN else CONTROLLER,
                      receiver.ack_gen)
        self.completed(fl.msg, t)

    def handle(self, ev: tuple[int, int, int, int, int]) -> None:
        t, _, kind, a, b = ev
        if kind == EV_DELIVER:
            self.deliver(self.flows[a], b, t)
        elif kind == EV_MRP:
            msg = self.msgs[a]
            if msg.acked or b != msg.timer_gen:
                return
            if msg.tx >= self.m["mrp_tx"]:
                self.result = self._result(False, t, msg.hs)
                return
            self.retrans += 1
            self.resend(a, t, count=True)
        elif kind == EV_STANDALONE:
            node = self.nodes[a]
            if b == node.ack_gen and node.last_rx >= 0:
                direction = DOWN if a == CONTROLLER else UP
                self.new_flow(ACK, node.last_rx, direction, [self.plan.ack_unit], [0], t)
        elif kind == EV_HANDOFF:
            self.start_message(a, t)
        elif kind == EV_PIGGYBACK:
            self.acknowledge(a)

    def _result(self, ok: bool, t: int, failed: int) -> Result:
        # a retransmission is spurious when an earlier transmission of the same message arrived complete
        spurious = sum(m.tx - 1 - m.first_copy for m in self.msgs if m.first_copy >= 0)
        return Result(ok, t, failed, self.retrans, spurious, self.frames, self.dev_tx, self.dev_rx)

    def run(self) -> Result:
        self.start_message(0, 0)
        frame_rule = bool(self.m["frame_rule"])
        while self.result is None:
            fl = None
            if frame_rule:
                contenders = self.frame_contenders()
                t_fl = min(c[0] for c in contenders) if contenders else NEVER
            else:
                active = [fl for fl in self.flows if not fl.done]
                fl = min(active, key=lambda x: (max(self.chan_free, x.ready), x.queued, x.fid)) if active else None
                t_fl = max(self.chan_free, fl.ready) if fl is not None else NEVER
            t_ev = self.peek_time()
            if min(t_ev, t_fl) > self.m["max_time_us"]:
                failing = next((m.hs for m in self.msgs if not m.delivered), 3)
                return self._result(False, self.m["max_time_us"], failing)
            if frame_rule and t_fl < t_ev:
                ready = [c for start, c in contenders if start == t_fl]
                chosen = ready[self.rng.below(len(ready))] if len(ready) > 1 else ready[0]
                fid = self.frame_transmit(chosen, t_fl)
                self.trace.append((0, t_fl, fid, self.chan_free))
            elif fl is not None and t_fl < t_ev:
                self.transmit(fl)
                self.trace.append((0, t_fl, fl.fid, self.chan_free))
            else:
                ev = self.pop()
                assert ev is not None
                self.trace.append((1, ev[0], ev[2], ev[3]))
                self.handle(ev)
        return self.result


def simulate(plan: Plan, run: int) -> Result:
    """Run one handshake of ``plan`` with run index ``run``."""
    return Handshake(plan, run).run()


def simulate_traced(plan: Plan, run: int) -> tuple[Result, list[tuple[int, int, int, int]]]:
    """Like simulate, with the event trace: every frame exchange and every handled event, in order."""
    handshake = Handshake(plan, run)
    result = handshake.run()
    return result, handshake.trace
