"""The device_origin stage on the smoke profile: Fig. 5's audit levels at every k, O(j) vs O(1) traversal by
counting hash steps, disclosure delay by protocol state, one vs two tags, prover work, outputs and provenance."""

from __future__ import annotations

import warnings

import pytest

from pqlab import io, params
from pqlab.amort import chain
from pqlab.amort.messages import Disclosure
from pqlab.experiments import device_origin as experiment
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from pqlab.paths import ProjectPaths
from pqlab.studies import device_origin as study


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from tests.conftest import REPO

    root = tmp_path_factory.mktemp("project")
    (root / "params").mkdir()
    (root / "params" / "params.yaml").write_text((REPO / "params" / "params.yaml").read_text())
    settings = params.load(root / "params" / "params.yaml", "smoke")
    with warnings.catch_warnings():  # native requested but not built: the fallback warns (and is recorded)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = study.run(settings, ProjectPaths(root), progress=False)
    return settings, ProjectPaths(root), result


@pytest.mark.slow  # runs the whole study
def test_every_audit_level_is_measured_at_every_k(run):
    settings, _, result = run
    cfg = settings.device_origin
    auditor = result.data["auditor"]
    assert sorted(auditor["k"].unique()) == list(cfg.k_values)
    counts = auditor.groupby(["k", "component"]).size()
    assert (counts == cfg.trials * cfg.reps).all()
    assert set(auditor["component"]) == set(experiment.COMPONENTS)
    assert (auditor["us_per_report"] > 0).all()
    lines = {line.get_label() for line in result.figure.axes[0].get_lines()}
    assert {"(a) log only", "(b) chain, independent traversal", "(b) chain, in-order traversal",
            "(b) MAC recheck", "(c) device signature"} <= lines


@pytest.mark.slow  # runs the whole study
def test_independent_traversal_hashes_j_steps_and_in_order_one(run, tmp_path, monkeypatch):
    """The work behind Fig. 5's two chain lines, counted: verifying K_1..K_k independently takes k(k+1)/2 hash
    steps (grows with k per report); in order it takes k (one per report, flat in k)."""
    settings, _, _ = run
    steps = {"n": 0}
    original = chain.step

    def counting(key: bytes) -> bytes:
        steps["n"] += 1
        return original(key)

    for k in settings.device_origin.k_values[:2]:
        interval = experiment.build_interval(k, settings, 0, tmp_path)
        keys = [Disclosure.decode(d).key for d in interval.disclosures]
        monkeypatch.setattr(chain, "step", counting)
        steps["n"] = 0
        for j, key in enumerate(keys, start=1):
            chain.verify_independent(interval.anchor, j, key)
        assert steps["n"] == k * (k + 1) // 2
        steps["n"] = 0
        verifier = chain.InOrderVerifier(interval.anchor)
        for j, key in enumerate(keys, start=1):
            verifier.verify(j, key)
        assert steps["n"] == k
        monkeypatch.setattr(chain, "step", original)
        # the auditor accepts every report's origin, both ways
        auditor = interval.auditor(through=2)
        for report, disclosure, proof in zip(interval.reports, interval.disclosures, interval.proofs, strict=True):
            auditor.verify_origin(report, disclosure, proof, in_order=True)
        assert interval.delay_records == [k - j for j in range(1, k + 1)]


@pytest.mark.slow  # runs the whole study
def test_disclosure_delay_in_records_and_seconds(run):
    settings, _, result = run
    table = result.tables["device_origin_auditor"].set_index("k")
    rate = settings.device_origin.report_rate_hz
    for k, row in table.iterrows():
        assert row["max_records"] == k - 1
        assert row["mean_records"] == pytest.approx((k - 1) / 2)
        assert row["max_seconds"] == pytest.approx((k - 1) / rate)


@pytest.mark.slow  # runs the whole study
def test_one_and_two_tag_rounds_alternate_and_differ_in_size(run):
    settings, _, result = run
    tags = result.data["tags"]
    cfg = settings.device_origin
    assert (tags.groupby("tags").size() == cfg.controller_trials * cfg.controller_rounds).all()
    for trial, group in tags.groupby("trial"):
        order = list(group.sort_values("round")["tags"])
        assert order[:2] == ([1, 2] if trial % 2 == 0 else [2, 1])
    sizes = tags.groupby("tags")["report_octets"].unique()
    assert list(sizes[1]) == [83 + cfg.tag_len] and list(sizes[2]) == [83 + 2 * cfg.tag_len]  # implied wire format
    assert (tags["identities"] == cfg.controller_identities).all()
    prover = result.data["prover"]
    assert len(prover) == cfg.prover_trials * cfg.prover_reports
    assert set(result.tables["device_origin_tags"]["side"]) == {"controller", "prover"}


@pytest.mark.slow  # runs the whole study
def test_outputs_and_provenance(run):
    settings, paths, result = run
    for relative in ("paper_figs/amort/fig5_auditor.pdf", "paper_figs/amort/fig5_auditor.png",
                     "paper_figs/amort/device_origin_auditor.csv", "paper_figs/amort/device_origin_tags.md",
                     "data/derived/device_origin_metrics.json"):
        assert (paths.root / relative).stat().st_size > 0, relative
    meta = io.read_parquet_metadata(paths.raw / "device_origin_tags.parquet")
    assert meta["controller_path"] == result.metrics["controller_path"]
    assert meta["controller_path_requested"] == settings.amort.controller_path
    metrics = read_json(paths.derived / "device_origin_metrics.json")
    assert set(metrics["auditor"]) == {f"k{k}" for k in settings.device_origin.k_values}
    assert metrics["prover"]["extra_us_per_report"] == pytest.approx(
        metrics["prover"]["second_tag_us"] + metrics["prover"]["chain_us_per_report"], abs=1e-3)


def test_paper_profile_covers_k_from_2_6_to_2_12(repo_root):
    paper = params.load(repo_root / "params" / "params.yaml", "paper").device_origin
    assert paper.k_values == tuple(1 << e for e in range(6, 13))
    assert paper.controller_identities == 10_000 and paper.trials == 5
