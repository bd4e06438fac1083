"""The harness's evidence is the native AMORT-V1 device path: octet-equal to the reference device, accepted by a
controller, and the report built inside the loop is the one the loop counted."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pqlab.amort.deployment import Deployment
from pqlab.amort.fastpath.api import open_controller, open_device
from pqlab.amort.messages import Report
from pqlab.amort.profile import PAPER_PROFILE
from pqlab.errors import CycleError
from pqlab.experiments import _cycle, control_cycle
from pqlab.params import ControlCycleParams, CycleConfiguration

pytestmark = pytest.mark.xdist_group("rt_core")  # pins the real-time core: one at a time (tests/smoke.py)

CPU = max(os.sched_getaffinity(0))


def test_the_evidence_hook_is_not_a_placeholder():
    assert _cycle.EVIDENCE_PLACEHOLDER == 0


PAPER = Deployment(b"CTRL-001", profile=PAPER_PROFILE)  # the control-cycle harness times the paper's evidence path


def _reference(spec: control_cycle.EvidenceSpec):
    return open_device("reference", PAPER, spec.dev_id, spec.epoch, spec.k_evid, spec.chain_seed,
                       tag_len=spec.tag_len, policy_id=spec.policy_id, chain_length=spec.chain_length)


@pytest.mark.parametrize("tags", [1, 2])
@pytest.mark.parametrize("tag_len", [8, 12, 16])
def test_reports_equal_the_reference_device_and_a_controller_accepts_them(tags, tag_len):
    spec = control_cycle.evidence_spec(tags, tag_len, 40, np.random.default_rng(tags * 100 + tag_len))
    stamps = [1_000_000 * i + 17 for i in range(1, 31)]
    reports, anchor = _cycle.reports(spec.as_tuple(), stamps)
    reference = _reference(spec)
    expected = [reference.report(spec.digest, t, disclosure_tag=tags == 2) for t in stamps]
    assert reports == expected
    assert anchor == reference.chain_key(0)
    assert len(reports[0]) == 83 + tag_len + (tag_len if tags == 2 else 0)  # the implied wire format
    controller = open_controller("reference", PAPER, sig_alg="ML-DSA-65")
    controller.register_epoch(spec.dev_id, spec.epoch, spec.k_evid, tag_len=tag_len, policy_id=spec.policy_id,
                              not_before=0)
    # each report judged when it is made: the stamps are 1,000 s apart, more than the freshness window between them
    assert sum(controller.ingest([r], now=t).n_accepted for r, t in zip(reports, stamps, strict=True)) == len(reports)


def test_reports_beyond_the_chain_fail_instead_of_reusing_keys():
    spec = control_cycle.evidence_spec(2, 16, 3, np.random.default_rng(5))
    with pytest.raises(CycleError, match="report 4"):
        _cycle.reports(spec.as_tuple(), [1, 2, 3, 4])


def test_a_bad_tag_length_is_refused_by_the_device_path():
    spec = control_cycle.evidence_spec(1, 16, 3, np.random.default_rng(5))
    bad = (*spec.as_tuple()[:-1], 10)
    with pytest.raises(CycleError, match="rejected by the device path"):
        _cycle.reports(bad, [1])


@pytest.mark.parametrize("tags", [1, 2])
def test_the_loop_builds_one_report_per_evidence_cycle(tags):
    spec = control_cycle.evidence_spec(tags, 16, 100, np.random.default_rng(9))
    raw = _cycle.run(1_000_000, 30, 3, CPU, False, 1, 8, 1, spec.as_tuple())
    evidence = np.frombuffer(raw["evidence"], dtype=np.uint8)
    evidence_ns = np.frombuffer(raw["evidence_ns"], dtype=np.int64)
    assert evidence.all() and (evidence_ns > 0).all()
    last = Report.decode(raw["last_report"])
    assert last.record.seq == 30  # warm-up cycles build no evidence
    reference = _reference(spec)
    for _ in range(29):
        reference.report(spec.digest, 0, disclosure_tag=tags == 2)
    assert raw["last_report"] == reference.report(spec.digest, last.record.timestamp, disclosure_tag=tags == 2)
    assert bool(last.dtag) == (tags == 2)


def test_one_hertz_evidence_runs_on_every_hundredth_cycle_at_10_ms():
    cfg = ControlCycleParams(period_us=1000, evidence_rate_hz=10.0, cycles=250, warmup_cycles=0,
                             configurations={"t": CycleConfiguration(label="t", tags=2)})
    samples, info = control_cycle.run_all(cfg, seed=3, progress=False)
    samples = samples[samples["configuration"] == "t"]
    assert info[0]["evidence_every"] == 100 and info[0]["rounds"] == 10  # 25-cycle rounds: the schedule runs on
    assert list(samples.index[samples["evidence"]]) == [0, 100, 200]
    assert (samples.loc[~samples["evidence"], "evidence_ns"] == 0).all()


def test_back_to_back_timing_builds_real_reports_and_names_a_failure():
    spec = control_cycle.evidence_spec(2, 16, 50, np.random.default_rng(4))
    ns = np.frombuffer(_cycle.time_reports(spec.as_tuple(), 50), dtype=np.int64)
    assert len(ns) == 50 and (ns > 0).all()
    with pytest.raises(CycleError, match="report 50"):
        _cycle.time_reports(control_cycle.evidence_spec(2, 16, 49, np.random.default_rng(4)).as_tuple(), 60)
    warm = control_cycle.back_to_back_evidence_us(ControlCycleParams(), np.random.default_rng(1), reports=200)
    assert set(warm) == {1, 2} and 0 < warm[1] and 0 < warm[2]
