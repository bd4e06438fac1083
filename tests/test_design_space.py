"""The design space: exact point count, sizes from the encoder, families, filters, and the study's outputs."""

from __future__ import annotations

import pytest

from pqlab import params
from pqlab.case import design_space as ds
from pqlab.case import design_tables
from pqlab.case.configurations import CaseConfig, case_message_sizes
from pqlab.errors import ParamsError
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from pqlab.paths import ProjectPaths
from pqlab.studies import design_space as design_space_study


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    from tests.conftest import REPO

    root = tmp_path_factory.mktemp("design")
    (root / "params").mkdir()
    for source in (REPO / "params").glob("*.yaml"):
        (root / "params" / source.name).write_text(source.read_text())
    settings = params.load(root / "params" / "params.yaml", "smoke")
    return root, settings, design_space_study.run(settings, ProjectPaths(root))


@pytest.mark.slow  # runs the whole study
def test_exactly_3780_distinct_points(study):
    _, settings, result = study
    p = settings.design_space
    expected = len(p.key_exchanges) * len(p.noc) * len(p.icac) * len(p.rcac) * len(p.modes)
    assert expected == 3780
    assert len(result.data['space']) == 3780
    assert result.data['space'][["key_exchange", "noc", "icac", "rcac", "mode"]].drop_duplicates().shape[0] == 3780


@pytest.mark.slow  # runs the whole study
def test_sizes_are_the_encoders(study):
    _, _, result = study
    for row in result.data['space'].sample(25, random_state=7).to_dict("records"):
        config = CaseConfig(key_exchange=row["key_exchange"], noc=row["noc"],
                            icac=None if row["icac"] == "none" else row["icac"], rcac=row["rcac"],
                            auth=row["auth"], cached=row["cached"],
                            auth_kem="ML-KEM-768" if row["auth"] != "sig" else None)
        sizes = case_message_sizes(config)
        assert sizes["Total"] == row["total"]
        assert max(sizes[m] for m in ds.MESSAGES) == row["largest"]
        assert row["fits"] == (row["largest"] <= 1178)


@pytest.mark.slow  # runs the whole study
def test_pareto_rows_are_not_dominated_within_their_restriction(study):
    _, _, result = study
    for name, families in design_tables.RESTRICTIONS.items():
        pool = ds.restrict(result.data['space'], families)
        pareto = result.tables['design_space_pareto']
        for row in pareto[pareto["restriction"] == name].itertuples():
            better = pool[(pool["total"] <= row.total) & (pool["device_ms"] <= row.device_ms + 1e-9)
                          & ((pool["total"] < row.total) | (pool["device_ms"] < row.device_ms - 0.005))]
            assert better.empty, (name, row)


def test_families_rank_the_least_established_algorithm():
    base = dict(key_exchange="ML-KEM-768", icac=None, auth="sig", cached="none")
    assert ds.family(CaseConfig(noc="ML-DSA-44", rcac="SLH-DSA-SHA2-128s", **base)) == ds.FAMILY_FIPS
    assert ds.family(CaseConfig(noc="Falcon-512", rcac="ML-DSA-44", **base)) == ds.FAMILY_FALCON
    assert ds.family(CaseConfig(noc="Falcon-512", rcac="UOV-Is-pkc", **base)) == ds.FAMILY_ADDITIONAL
    assert ds.family(CaseConfig(noc="MAYO-2", rcac="ECDSA-P256", **base)) == ds.FAMILY_CLASSICAL


@pytest.mark.slow  # runs the whole study
def test_filter_space_applies_every_constraint(study):
    _, _, result = study
    found = ds.filter_space(result.data['space'], max_message=2500, max_device_ms=50, families=[ds.FAMILY_FIPS])
    assert not found.empty
    assert (found["largest"] <= 2500).all() and (found["device_ms"] <= 50).all()
    assert set(found["family"]) == {ds.FAMILY_FIPS}
    assert list(found["total"]) == sorted(found["total"])


@pytest.mark.slow  # runs the whole study
def test_outputs_and_metrics(study):
    root, _, result = study
    for relative in ("data/derived/design_space.parquet", "paper_figs/case/fig6_design_space.png",
                     "paper_figs/case/table1_device_pq.md", "paper_figs/case/design_space_pareto.md"):
        assert (root / relative).stat().st_size > 0
    metrics = read_json(root / "data" / "derived" / "design_space_metrics.json")
    assert metrics["points"] == 3780
    assert set(metrics["device_pq"]) == {c for c in result.tables['table1_device_pq']["config"]}


def test_bad_mode_names_its_entry():
    from tests.conftest import REPO

    settings = params.load(REPO / "params" / "params.yaml", "smoke")
    bad = settings.design_space.model_copy(update={"modes": ("sig/none", "pdk/all")})
    with pytest.raises(ParamsError, match=r"design_space.modes\[1\]"):
        design_tables.parse_modes(bad.modes)
