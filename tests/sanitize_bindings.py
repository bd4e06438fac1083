"""Every function of a C binding (_cycle, _symmetric, the Thread core's _core, the AMORT fast path's _amort_native),
success and error paths, in a loop: `make sanitize` runs it under ASan + UBSan with leak detection on and full
allocation stacks, so a leaked buffer or reference on any path shows as a leak whose stack names the binding's
sources (the tests run under the sanitizers with the fast unwinder, which drops the binding's frame from a leaked
Python object's stack). Usage: python -m tests.sanitize_bindings cycle|symmetric|thread|amort [rounds]."""

from __future__ import annotations

import functools
import os
import sys

from pqlab.errors import PqlabError


def _refused(call, *args) -> None:
    try:
        call(*args)
    except PqlabError:
        return
    raise AssertionError(f"{call.__name__}{args!r} was accepted")


def exercise_cycle(rounds: int) -> None:
    from pqlab.experiments import _cycle

    cpu = max(os.sched_getaffinity(0))
    spec = (2, b"k" * 32, b"s" * 32, 64, b"d" * 8, 1, b"g" * 32, 1, 16)
    for _ in range(rounds):
        result = _cycle.run(100_000, 8, 2, cpu, False, 1, 8, 2, spec)
        assert len(result["latency_ns"]) == 8 * 8 and result["last_report"]
        one = (1, *spec[1:])
        rotated = _cycle.run(100_000, 9, 1, cpu, False, 1, 8, 1, None, (one, spec), evidence_offset=3)
        assert list(rotated["variant"]) == [0, 1, 2] * 3
        _refused(_cycle.run, 100_000, 8, 0, cpu, False, 1, 8, 1, None, (spec, one))   # two tags first
        _refused(_cycle.run, 100_000, 8, 0, cpu, False, 1, 8, 1, spec, (one, spec))   # a spec and a rotation
        _refused(_cycle.run, 100_000, 8, 0, cpu, False, 1, 8, 1, None, (one,))        # not a pair
        _refused(_cycle.run, 100_000, 8, 0, cpu, False, 1, 8, 1, spec, None, -1)      # a negative offset
        reports, anchor = _cycle.reports(spec, [1, 2, 3])
        assert len(reports) == 3 and len(anchor) == 32
        assert len(_cycle.time_reports(spec, 4)) == 4 * 8
        assert len(_cycle.clock_pairs(16)) == 16 * 8
        _cycle.scan(8, 3, 42)
        _refused(_cycle.run, 100_000, 2**32 + 8, 0, cpu, False, 1, 8, 0)
        _refused(_cycle.run, 100_000, 8, 0, cpu, False, 1, 8, 1)                  # evidence without a spec
        _refused(_cycle.run, 100_000, 8, 0, cpu, False, 1, 8, 1, spec[:8])
        _refused(_cycle.time_reports, (*spec[:1], b"k" * 31, *spec[2:]), 1)
        _refused(_cycle.time_reports, (*spec[:8], 10), 1)                        # the device path refuses it
        _refused(_cycle.time_reports, (*spec[:3], 2, *spec[4:]), 5)              # the chain runs out
        _refused(_cycle.reports, spec, [1, -5])
        _refused(_cycle.reports, (*spec[:3], 1, *spec[4:]), [1, 2, 3])
        _refused(_cycle.clock_pairs, 2**32 + 1)
        _refused(_cycle.scan, 8, 1, -1)


def exercise_symmetric(rounds: int) -> None:
    from pqlab.experiments import _symmetric

    for _ in range(rounds):
        for op in range(len(_symmetric.op_names())):
            assert len(_symmetric.compute(op, b"k" * 32, bytes(83), b"s" * 32)) == 32
        assert len(_symmetric.measure([0, 1, 2, 3, 4], b"k" * 32, bytes(83), b"s" * 32, 4, 3)) == 5 * 3 * 8
        _refused(_symmetric.compute, 2**63, b"k", bytes(83), bytes(32))
        _refused(_symmetric.compute, 1, b"", bytes(83), bytes(32))
        _refused(_symmetric.measure, [0, 2**32 + 1], b"k", bytes(83), bytes(32), 1, 1)
        _refused(_symmetric.measure, [], b"k", bytes(83), bytes(32), 1, 1)
        _refused(_symmetric.measure, [0], b"k", bytes(65537), bytes(32), 1, 1)
        _refused(_symmetric.measure, [0], b"k", bytes(83), bytes(32), 2**64 + 1, 1)
        _refused(_symmetric.measure, [0], b"k", bytes(83), bytes(32), 1, 2**32)
        _symmetric.openssl_version()


def exercise_transport(rounds: int) -> None:
    import copy

    from pqlab.errors import SimulationError
    from pqlab.transport import _core, core
    from pqlab.transport.config import TransportParams
    from pqlab.transport.model import Scenario, build_plan

    plan = build_plan(Scenario((1300, 3000, 2000, 20), 2, "light_wifi", True, "block"), TransportParams())
    plan.ints["max_time_us"] = 5_000_000
    bad_int, bad_unit, bad_mode = copy.deepcopy(plan), copy.deepcopy(plan), copy.deepcopy(plan)
    bad_int.ints["max_time_us"] = 2**64       # a model value beyond int64
    bad_unit.units[3][0] = 2**40              # a frame size beyond a C int
    bad_mode.mode[1] = 2**40
    for _ in range(rounds):
        assert core.run(plan, 0, 2).shape == (2, len(core.RESULT_FIELDS))
        result, events = core.trace(plan, 1)
        assert len(result) == len(core.RESULT_FIELDS) and len(events) > 0
        for bad in (bad_int, bad_unit, bad_mode):
            _refused(core.run, bad, 0, 1)
        _refused(core.run, plan, 0, 2**58)       # the batch's bytes overflow
        _refused(core.run, plan, 2**63, 1)       # a run index beyond the core's range
        assert len(_core.error_names()) > 1
    assert issubclass(SimulationError, PqlabError)


def exercise_amort(rounds: int) -> None:
    from pqlab.amort.deployment import Deployment
    from pqlab.amort.fastpath import native
    from pqlab.amort.fastpath.api import frame, open_controller, open_device
    from pqlab.amort.profile import Profile

    for wire_format in ("implied", "explicit"):
        for _ in range(rounds):
            deployment = Deployment(b"CTRL-001", profile=Profile(wire_format=wire_format))
            ctl = open_controller("native", deployment)
            dev = open_device("native", deployment, b"PLC-0001", 1, bytes(32), bytes(range(32)), chain_length=16)
            ctl.register_epoch(dev.dev_id, 1, bytes(32), not_before=0)
            good = [dev.report(bytes(32), t) for t in range(1, 4)]
            bad = [good[0], good[1][:50], good[2] + b"x", b"", bytes(200)]  # duplicate, truncated, trailing, ...
            assert ctl.ingest(good, now=4).codes == bytes(3) and any(ctl.ingest(bad, now=4).codes)
            _refused(ctl.ingest, good)                            # no clock: refused whole
            _refused(native.load().Controller(b"CTRL-001", 1, 0, 1, 300_000).ingest, good, None)
            ctl.ingest(frame([dev.report(bytes(32), 9)]), now=10)
            assert len(ctl.checkpoint_body()) > 0 and len(ctl.commit(bytes(64))) > 0
            assert ctl.state()["tree_size"] == 4 and ctl.device(dev.dev_id)["last_seen"] >= 3
            assert len(dev.chain_key(3)) == 32 and len(dev.anchor) == 32
            _refused(ctl.commit, bytes(64))                       # nothing awaiting commit
            _refused(ctl.revoke, b"PLC-9999")                     # an unknown device
            _refused(functools.partial(ctl.ingest, frame(good) + b"\x00", now=4))  # a frame broken off
            _refused(functools.partial(ctl.ingest, [b"x"] * 1025, now=4))        # over the batch limit
            _refused(functools.partial(ctl.register_epoch, b"PLC", 1, bytes(32), not_before=0))  # a short dev_id
            _refused(dev.chain_key, 17)                                           # beyond the chain
            _refused(functools.partial(open_device, "native", deployment, b"PLC-0001", 1, bytes(32), bytes(32),
                                       chain_length=0))


if __name__ == "__main__":
    binding, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 50
    {"cycle": exercise_cycle, "symmetric": exercise_symmetric, "transport": exercise_transport,
     "amort": exercise_amort}[binding](count)
    print(f"{binding}: {count} rounds of every call and error path")
