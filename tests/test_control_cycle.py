"""The control-cycle harness: the C loop pins, schedules, times and counts; configurations and summaries."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from pqlab.analysis import control_cycle as cycle_analysis
from pqlab.errors import CycleError
from pqlab.experiments import _cycle, control_cycle
from pqlab.params import ControlCycleParams, CycleConfiguration

pytestmark = pytest.mark.xdist_group("rt_core")  # pins the real-time core: one at a time (tests/smoke.py)

CPU = max(os.sched_getaffinity(0))


def _params(**overrides) -> ControlCycleParams:
    base = {"period_us": 1000, "cycles": 40, "warmup_cycles": 5,
            "configurations": {"baseline": CycleConfiguration(label="baseline")}}
    return ControlCycleParams(**(base | overrides))


def test_scan_workload_is_deterministic_and_depends_on_its_inputs():
    assert _cycle.scan(8, 50, 7) == _cycle.scan(8, 50, 7)
    assert _cycle.scan(8, 50, 7) != _cycle.scan(8, 50, 8)
    assert _cycle.scan(8, 50, 7) != _cycle.scan(9, 50, 7)
    with pytest.raises(CycleError, match=r"^blocks: "):
        _cycle.scan(0, 1, 1)


def test_scan_checksums_are_unchanged_by_the_checked_output_conversion():
    # values from before the double -> integer conversion of the output image was range-checked (commit 965b356)
    assert _cycle.scan(8, 50, 7) == 24897853539938
    assert _cycle.scan(8, 1000, 12345) == 550331808278895
    assert _cycle.scan(64, 300, 1) == 8708200741999542763


def test_loop_pins_to_the_core_and_records_every_cycle():
    raw = _cycle.run(1_000_000, 40, 5, CPU, False, 1, 8, 0)
    latency = np.frombuffer(raw["latency_ns"], dtype=np.int64)
    work = np.frombuffer(raw["work_ns"], dtype=np.int64)
    cpus = np.frombuffer(raw["cpu"], dtype=np.int32)
    assert len(latency) == len(work) == 40
    assert (latency >= 0).all() and (work > 0).all()
    assert raw["affinity_errno"] == 0 and raw["affinity_is_target"] == 1 and raw["affinity_cpus"] == 1
    assert (cpus == CPU).all() and raw["off_target_cycles"] == 0
    assert raw["fifo_errno"] == -1 and raw["policy"] == os.SCHED_OTHER
    # absolute releases: 40 recorded cycles span exactly 39 periods plus the last cycle's response, however late
    # a wake-up was under load (a relative schedule would add every cycle's latency and work)
    assert raw["wall_ns"] == 39_000_000 + latency[-1] + work[-1]
    assert raw["voluntary_switches"] >= 1


def test_realtime_request_is_recorded_as_obtained_or_refused():
    raw = _cycle.run(1_000_000, 10, 0, CPU, True, 10, 8, 0)
    if raw["fifo_errno"] == 0:
        assert raw["policy"] == os.SCHED_FIFO and raw["priority"] == 10
    else:
        assert raw["policy"] == os.SCHED_OTHER and raw["fifo_errno"] > 0


# every argument the binding used to parse with a wrapping "I" / "K" format: a value that used to wrap to a
# small valid one (2^32 + 40 cycles ran 40) or to a huge allocation now gives a typed error naming the argument
@pytest.mark.parametrize(("bad", "field"), [
    ({"cycles": 0}, "cycles"), ({"cycles": 2**32 + 40}, "cycles"), ({"cycles": _cycle.MAX_CYCLES + 1}, "cycles"),
    ({"warmup": 2**32 + 1}, "warmup"), ({"warmup": -1}, "warmup"), ({"period_ns": 10}, "period_ns"),
    ({"period_ns": 2**64 + 1_000_000}, "period_ns"), ({"workload_blocks": 0}, "workload_blocks"),
    ({"workload_blocks": 2**32 + 8}, "workload_blocks"), ({"cpu": -1}, "cpu"), ({"cpu": 2**31}, "cpu"),
    ({"fifo_priority": 100}, "fifo_priority"), ({"evidence_every": 2**32}, "evidence_every"),
    ({"cycles": 5.0}, "cycles"), ({"cycles": True}, "cycles"),
])
def test_out_of_range_loop_configuration_is_a_typed_error_naming_the_argument(bad, field):
    args = {"period_ns": 1_000_000, "cycles": 5, "warmup": 0, "cpu": CPU, "try_fifo": False, "fifo_priority": 1,
            "workload_blocks": 8, "evidence_every": 0} | bad
    with pytest.raises(CycleError, match=f"^{field}: ") as caught:
        _cycle.run(**args)
    assert caught.value.code == "PQ_CYCLE_EINVAL" and caught.value.field == field


def _spec(**overrides) -> tuple:
    spec = {"tags": 1, "k_evid": b"k" * 32, "chain_seed": b"s" * 32, "chain_length": 16, "dev_id": b"d" * 8,
            "epoch": 1, "digest": b"g" * 32, "policy_id": 1, "tag_len": 16} | overrides
    return tuple(spec.values())


@pytest.mark.parametrize(("bad", "field"), [
    ({"tags": 3}, "tags"), ({"chain_length": 2**32 + 2}, "chain_length"), ({"chain_length": 0}, "chain_length"),
    ({"epoch": 2**32}, "epoch"), ({"policy_id": 2**32 + 1}, "policy_id"), ({"policy_id": 65536}, "policy_id"),
    ({"tag_len": 2**32 + 16}, "tag_len"), ({"k_evid": b"k" * 31}, "k_evid"), ({"dev_id": "PLC-0001"}, "dev_id"),
])
def test_out_of_range_evidence_spec_is_a_typed_error(bad, field):
    with pytest.raises(CycleError, match=f"^{field}: "):
        _cycle.time_reports(_spec(**bad), 4)
    with pytest.raises(CycleError, match=f"^{field}: "):
        _cycle.run(1_000_000, 5, 0, CPU, False, 1, 8, 1, _spec(**bad))


def test_counts_and_seeds_that_used_to_wrap_are_refused():
    with pytest.raises(CycleError, match=r"^n: "):
        _cycle.time_reports(_spec(), 2**32 + 3)       # the "I" format ran 3 reports
    with pytest.raises(CycleError, match=r"^n: "):
        _cycle.clock_pairs(2**32 + 1)
    with pytest.raises(CycleError, match=r"^seed: "):
        _cycle.scan(8, 1, -1)                          # the "K" format took 2^64 - 1
    with pytest.raises(CycleError, match=r"^timestamps: "):
        _cycle.reports(_spec(), [1, -5])
    assert len(_cycle.time_reports(_spec(), 3)) == 3 * 8


def test_a_spec_the_device_path_rejects_and_a_hook_failure_are_typed():
    with pytest.raises(CycleError, match="rejected by the device path") as caught:
        _cycle.time_reports(_spec(tag_len=10), 1)     # in range for the binding, not a valid tag length
    assert caught.value.field == "evidence"
    with pytest.raises(CycleError, match="device path failed") as caught:
        _cycle.time_reports(_spec(tags=2, chain_length=2), 5)  # the chain carries two reports
    assert caught.value.code == "PQ_CYCLE_EHOOK"


def test_evidence_without_a_spec_is_refused():
    with pytest.raises(CycleError, match="evidence spec"):
        _cycle.run(1_000_000, 5, 0, CPU, False, 1, 8, 1)


def test_evidence_every_follows_rate_and_period():
    cfg = _params(period_us=10_000, evidence_rate_hz=1.0)
    assert control_cycle.evidence_every(cfg, CycleConfiguration(label="x")) == 0
    assert control_cycle.evidence_every(cfg, CycleConfiguration(label="x", tags=1)) == 100
    assert control_cycle.evidence_every(cfg, CycleConfiguration(label="x", tags=2, every_cycle=True)) == 1
    assert control_cycle.evidence_every(_params(period_us=1000, evidence_rate_hz=4.0),
                                        CycleConfiguration(label="x", tags=1)) == 250


def test_unavailable_cpu_is_a_cycle_error():
    with pytest.raises(control_cycle.CycleError, match="not available"):
        control_cycle.run_all(_params(cpu=4095), seed=1, progress=False)


def test_baseline_run_summary_counts_cycles_and_records_the_policy():
    cfg = _params(realtime=False)
    samples, info = control_cycle.run_all(cfg, seed=1, progress=False)
    assert len(samples) == 80 and (samples["configuration"] == "baseline").sum() == 40  # + the scan-cost rotation
    assert (samples["response_ns"] == samples["latency_ns"] + samples["work_ns"] + samples["evidence_ns"]).all()
    assert info[0]["policy_name"] == "SCHED_OTHER" and not info[0]["realtime_obtained"]
    summary = cycle_analysis.summarise(samples, cfg)
    row = summary.iloc[0]
    assert row["cycles"] == 40 and row["evidence_cycles"] == 0
    assert row["p50_us"] <= row["p99_us"] <= row["p999_us"] <= row["max_us"]
    baseline = samples[samples["configuration"] == "baseline"]  # the row is the baseline's, not the rotation's
    assert row["deadline_misses"] == int((baseline["response_ns"] > 1_000_000).sum())


def test_deadline_misses_and_tail_percentiles_on_known_samples():
    response = np.concatenate([np.full(998, 5_000), [20_000, 3_000_000]]).astype(np.int64)
    samples = pd.DataFrame({"configuration": "baseline", "latency_ns": response, "work_ns": 0, "evidence_ns": 0,
                            "execution_ns": 0, "response_ns": response, "evidence": False})
    summary = cycle_analysis.summarise(samples, _params(deadline_us=1000)).iloc[0]
    assert summary["deadline_misses"] == 1
    assert summary["max_us"] == 3000.0
    assert summary["p50_us"] == 5.0
    assert 5.0 < summary["p999_us"] < 3000.0
    assert cycle_analysis.summarise(samples, _params(deadline_us=10)).iloc[0]["deadline_misses"] == 2


def test_background_signer_runs_pinned_to_the_same_core():
    with control_cycle.BackgroundSigner("ML-DSA-65", "auto", CPU, 4096, 3) as signer:
        raw = _cycle.run(1_000_000, 100, 0, CPU, False, 1, 8, 0)
        pid = signer._process.pid
        # its own session and process group, so a notebook's Ctrl-C reaches the study, which stops it
        assert os.getsid(pid) == os.getpgid(pid) == pid != os.getsid(0)
    assert signer.ready["affinity"] == [CPU]
    assert signer.stopped["signatures"] > 0 and signer.stopped["cpu_seconds"] > 0
    assert raw["off_target_cycles"] == 0


def test_background_signer_with_an_unknown_algorithm_fails_with_its_reason():
    with pytest.raises(control_cycle.CycleError, match="did not start"), \
            control_cycle.BackgroundSigner("NO-SUCH-SIG", "auto", CPU, 16, 1):
        pass


def test_unknown_background_signer_fails_before_any_run():
    cfg = _params(configurations={"bg": CycleConfiguration(label="bg", background_signer="NO-SUCH-SIG")})
    with pytest.raises(control_cycle.CycleError, match="NO-SUCH-SIG") as caught:
        control_cycle.run_all(cfg, seed=1, progress=False)
    assert caught.value.field == "control_cycle.configurations.bg.background_signer"


def _steal_column(cpu: int) -> int:
    """The eighth value of the ``cpuN`` line of /proc/stat (steal), read independently of the code under test."""
    line = next(x for x in open("/proc/stat").read().splitlines() if x.split()[0] == f"cpu{cpu}")
    return int(line.split()[8])


def test_steal_time_is_read_for_an_existing_cpu_only():
    before = _steal_column(CPU)
    ticks = control_cycle.steal_ticks(CPU)
    assert isinstance(ticks, int) and before <= ticks <= _steal_column(CPU)  # a counter: read between two reads
    assert control_cycle.steal_ticks(4095) is None


# --- the per-scan cost: interleaved rounds, the rotation, the study's sanity checks (issue 39) -------------------

def test_configurations_run_interleaved_in_rounds_and_count_every_cycle():
    cfg = _params(realtime=False, rounds=4, configurations={
        "baseline": CycleConfiguration(label="baseline"),
        "tag1_every": CycleConfiguration(label="1 tag", tags=1, every_cycle=True)})
    samples, info = control_cycle.run_all(cfg, seed=2, progress=False)
    for name in ("baseline", "tag1_every", "scan_cost"):
        mine = samples[samples["configuration"] == name]
        assert len(mine) == 40 and list(mine["cycle"]) == list(range(40)), name
        assert sorted(mine["round"].unique()) == [0, 1, 2, 3] and (mine.groupby("round").size() == 10).all()
    assert [i["configuration"] for i in info] == ["baseline", "tag1_every", "scan_cost"]
    assert all(i["rounds"] == 4 for i in info)
    assert samples.loc[samples["configuration"] == "tag1_every", "evidence"].all()
    assert (samples.loc[samples["configuration"] != "scan_cost", "variant"] == -1).all()


def test_the_rotation_runs_no_evidence_one_tag_and_two_tags_cycle_by_cycle():
    rng = np.random.default_rng(5)
    one = control_cycle.evidence_spec(1, 16, 100, rng).as_tuple()
    two = control_cycle.evidence_spec(2, 16, 100, rng).as_tuple()
    raw = _cycle.run(1_000_000, 30, 2, CPU, False, 1, 8, 1, None, (one, two))
    variant = np.frombuffer(raw["variant"], dtype=np.int8)
    assert list(variant) == [i % 3 for i in range(30)]
    evidence = np.frombuffer(raw["evidence_ns"], dtype=np.int64)
    # a real report costs far more than an empty hook call (its two clock reads)
    assert np.median(evidence[variant == 1]) > 5 * np.median(evidence[variant == 0])
    with pytest.raises(CycleError, match=r"^rotation: "):
        _cycle.run(1_000_000, 30, 2, CPU, False, 1, 8, 1, None, (two, one))  # the one-tag spec comes first
    with pytest.raises(CycleError, match=r"^rotation: "):
        _cycle.run(1_000_000, 30, 2, CPU, False, 1, 8, 2, None, (one, two))  # a rotation runs on every cycle


def _rotation_samples(us: dict[int, float], cycles: int = 300) -> pd.DataFrame:
    """Known rotation cycles: variant v takes us[v] µs (with a little spread), and one Fig. 6 baseline run."""
    rng = np.random.default_rng(9)
    variant = np.arange(cycles) % 3
    execution = (np.array([us[int(v)] for v in variant]) * 1000 + rng.integers(0, 50, cycles)).astype(np.int64)
    rotation = pd.DataFrame({"configuration": "scan_cost", "latency_ns": 10_000, "work_ns": 900,
                             "evidence_ns": execution - 900, "execution_ns": execution,
                             "response_ns": execution + 10_000, "evidence": True, "variant": variant})
    baseline = rotation.assign(configuration="baseline", evidence=False, variant=-1, evidence_ns=0,
                               execution_ns=1000, response_ns=11_000)
    return pd.concat([baseline, rotation], ignore_index=True)


def test_added_work_costs_time_on_known_rotation_samples():
    cfg = _params()
    samples = _rotation_samples({0: 1.0, 1: 6.0, 2: 11.0})
    cost = cycle_analysis.per_scan_cost(samples, cfg).set_index("tags")
    assert cost.loc[0, "execution_p50_us"] == pytest.approx(1.0, abs=0.06)
    assert cost.loc[2, "execution_p50_us"] == pytest.approx(11.0, abs=0.06)
    added = cycle_analysis.added_cost(samples, cfg, seed=0).set_index("what")
    assert added.loc["second_tag_and_chain", "added_us"] == pytest.approx(5.0, abs=0.1)
    assert added.loc["second_tag_and_chain", "added_lo_us"] > 4.5
    sanity = cycle_analysis.sanity(cycle_analysis.summarise(samples, cfg), cost.reset_index(), added.reset_index(),
                                   cfg.confidence)
    assert sanity["failed"] == [] and sanity["checks"] == 3 + 3  # three orderings, one configuration's ladders


def test_a_two_tag_scan_faster_than_one_fails_the_studys_sanity_check():
    cfg = _params()
    samples = _rotation_samples({0: 1.0, 1: 28.6, 2: 17.2})  # the contradiction issue 39 found in the report
    cost = cycle_analysis.per_scan_cost(samples, cfg)
    added = cycle_analysis.added_cost(samples, cfg, seed=0)
    sanity = cycle_analysis.sanity(cycle_analysis.summarise(samples, cfg), cost, added, cfg.confidence)
    [failure] = sanity["failed"]
    assert failure["check"] == "second_tag_and_chain adds time over one tag"
    assert "measures 11.4" in failure["cause"] and "faster than one tag" in failure["cause"]
    assert "per_scan_cost_us" in failure["keys"] and "second_tag_and_chain_us" in failure["keys"]


def test_samples_without_the_rotation_run_are_a_typed_error():
    samples = _rotation_samples({0: 1.0, 1: 2.0, 2: 3.0})
    with pytest.raises(CycleError, match="no per-scan cost rotation run"):
        cycle_analysis.per_scan_cost(samples[samples["configuration"] == "baseline"], _params())
