"""Every function of the bench bindings (_cycle, _symmetric), success and error paths, in a loop: `make sanitize`
runs it under ASan + UBSan with leak detection on, so a leaked buffer or reference on any path shows as a leak whose
stack names the binding's sources. Usage: python -m tests.sanitize_bench_bindings cycle|symmetric [rounds]."""

from __future__ import annotations

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
    from pqlab.bench import _cycle

    cpu = max(os.sched_getaffinity(0))
    spec = (2, b"k" * 32, b"s" * 32, 64, b"d" * 8, 1, b"g" * 32, 1, 16)
    for _ in range(rounds):
        result = _cycle.run(100_000, 8, 2, cpu, False, 1, 8, 2, spec)
        assert len(result["latency_ns"]) == 8 * 8 and result["last_report"]
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
    from pqlab.bench import _symmetric

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


if __name__ == "__main__":
    binding, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 50
    {"cycle": exercise_cycle, "symmetric": exercise_symmetric}[binding](count)
    print(f"{binding}: {count} rounds of every call and error path")
