"""The extended design space: the paper's points unchanged inside it, fronts checked by brute force, byte-stable."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import yaml

from pqlab import params
from pqlab.case import design_tables
from pqlab.case import extended_space as ext
from pqlab.case.device_compute import load_cycles
from pqlab.errors import ParamsError
from pqlab.paths import ProjectPaths, find_params
from pqlab.studies import extended_design_space


def _small(project, **extended):
    """The paper's dimensions cut down (as tests/faults.py does) and a few additions: seconds, not a minute."""
    path = project / "params" / "params.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["design_space"].update(key_exchanges=["ML-KEM-512"], noc=["ML-DSA-44", "Falcon-512"], icac=[None],
                               rcac=["ECDSA-P256", "ML-DSA-44"], modes=["sig/none", "sig/both", "kem-pdk/both"],
                               configurations=["B", "D3"])
    raw["extended_design_space"] = {"add_key_exchanges": ["HQC-1"], "add_noc": ["HAWK-512", "SQIsign-I"],
                                    "add_icac": ["HAWK-512"], "add_rcac": ["HAWK-512", "UOV-Ip-pkc"], **extended}
    path.write_text(yaml.safe_dump(raw))
    return params.load(path, "smoke")


@pytest.fixture
def small_run(project):
    settings = _small(project)
    return settings, extended_design_space.run(settings, ProjectPaths(project), progress=False)


def test_the_papers_points_are_inside_with_identical_numbers(project, small_run):
    settings, result = small_run
    space = result.data["space"]
    assert len(space) == 2 * 4 * 2 * 4 * 3 and space["in_paper_space"].sum() == 1 * 2 * 1 * 2 * 3
    paper = design_tables.build_space(settings.design_space, load_cycles(project / "params" / "pqm4_cycles.yaml"),
                                      settings.framing.max_app_payload)
    mine = space[space["in_paper_space"]].set_index("point")
    for row in paper.itertuples():
        assert (mine.loc[row.point, "total"], mine.loc[row.point, "largest"]) == (row.total, row.largest)
        assert mine.loc[row.point, "device_ms"] == row.device_ms
    assert result.metrics["paper_points"] == len(paper)


def test_fronts_are_the_brute_force_fronts_of_the_points_with_a_device_cost(small_run):
    _, result = small_run
    space = result.data["space"]
    fronts = result.tables["extended_design_space_pareto"]
    for name, families in ext.RESTRICTIONS.items():
        points = space[space["device_known"] & space["family"].isin(families)]
        xs, ys = points["total"].to_numpy(), points["device_ms"].to_numpy()
        on_front = [not np.any((xs <= x) & (ys <= y) & ((xs < x) | (ys < y))) for x, y in zip(xs, ys, strict=True)]
        expected = {(int(x), round(float(y), 2)) for x, y, f in zip(xs, ys, on_front, strict=True) if f}
        front = fronts[fronts["restriction"] == name]
        assert set(zip(front["total"], front["device_ms"], strict=True)) == expected, name


def test_a_class_entering_a_front_holds_new_points_only_and_unknown_costs_stay_off(small_run):
    _, result = small_run
    space = result.data["space"]
    fronts = result.tables["extended_design_space_pareto"]
    assert not space.loc[space["family"] == ext.FAMILY_NEWER, "device_known"].all()  # SQIsign: no cycle count
    for row in fronts.itertuples():
        members = space[(space["total"] == row.total) & (space["device_ms"].round(2) == row.device_ms)
                        & space["device_known"] & space["family"].isin(ext.RESTRICTIONS[row.restriction])]
        assert len(members) == row.points and members["device_known"].all()
        if not row.was_on_paper_front:
            assert not members["in_paper_space"].any() and row.new_points == row.points
    unranked = result.tables["extended_design_space_unranked"]
    assert len(unranked) and unranked["no_cycle_count"].str.contains("SQIsign-I").any()
    entering = sum(len(f["entering"]) for f in result.metrics["fronts"].values())
    assert entering == int((~fronts["was_on_paper_front"]).sum())


@pytest.mark.slow  # runs the whole stage twice
def test_the_stage_is_byte_stable_and_its_figure_is_named_after_its_function(project):
    settings = _small(project)
    digests = []
    for _ in range(2):
        result = extended_design_space.run(settings, ProjectPaths(project), progress=False)
        digests.append({p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(result.files)})
    assert digests[0] == digests[1]
    assert {"fig_extended_design_space.pdf", "fig_extended_design_space.png"} <= set(digests[0])


def test_the_section_stays_out_of_every_other_stages_provenance():
    settings = params.load(find_params(), "quick")
    assert "extended_design_space" not in settings.model_dump()
    assert "extended_design_space" in params.dump_all(settings)


def test_bad_additions_name_their_field(project):
    with pytest.raises(ParamsError, match=r"extended_design_space\.add_noc\[1\]: 'Dilithium9' is not"):
        _small(project, add_noc=["HAWK-512", "Dilithium9"])
    settings = _small(project, add_rcac=["ML-DSA-44"])
    with pytest.raises(ParamsError, match=r"extended_design_space\.add_rcac\[0\].*already in design_space\.rcac"):
        extended_design_space.run(settings, ProjectPaths(project), progress=False)
