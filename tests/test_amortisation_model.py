"""Eq. 1 (AMORT-V1 §V-D): exact arithmetic, the trade-off function, the amortisation params and the widget guard."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from pqlab import params
from pqlab.amort import eq1
from pqlab.errors import ParamsError
from pqlab.figures import interactive

# Binary fractions, so every value below is exact in floating point.
INPUTS = eq1.CostInputs(c_mac=2.0, c_leaf=0.5, c_sign=247.5, c_fsync=0.0, label="sig only")
LOGGED = eq1.CostInputs(c_mac=2.0, c_leaf=0.5, c_sign=250.0, c_fsync=750.0, label="with log")


def test_eq1_cost_floor_and_k_star_exactly():
    assert eq1.floor(INPUTS) == 2.5
    assert eq1.cost(INPUTS, 1) == 250.0
    assert eq1.cost(INPUTS, 99) == 5.0          # at k* the checkpoint term equals the floor
    assert eq1.k_star(INPUTS) == 99.0
    assert eq1.k_star(LOGGED) == 400.0
    assert eq1.cost(LOGGED, 4) == 252.5
    np.testing.assert_array_equal(eq1.cost(LOGGED, np.array([1, 2, 8])), [1002.5, 502.5, 127.5])


def test_reduction_is_the_ratio_of_the_endpoints():
    assert eq1.reduction(LOGGED, 1, 400) == 1002.5 / 5.0
    assert eq1.reduction(INPUTS, 1, 1) == 1.0


def test_shares_dominant_and_the_log_free_variant():
    assert eq1.shares(LOGGED) == {eq1.SIGNATURE: 0.25, eq1.WRITE: 0.75}
    assert eq1.dominant(LOGGED) == eq1.WRITE
    assert eq1.dominant(INPUTS) == eq1.SIGNATURE
    assert eq1.k_star(dataclasses.replace(LOGGED, c_fsync=0.0)) == 100.0  # no durable log: C_fsync = 0


def test_window_is_k_over_rate():
    assert eq1.window(64, 16) == 4.0
    np.testing.assert_array_equal(eq1.window(np.array([1, 1024]), 1024), [1 / 1024, 1.0])


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), True, "1"])
def test_inputs_reject_non_costs(bad):
    with pytest.raises(ValueError, match="c_sign"):
        eq1.CostInputs(1.0, 1.0, bad)


def test_inputs_need_a_floor():
    with pytest.raises(ValueError, match="floor"):
        eq1.CostInputs(0.0, 0.0, 10.0)


@pytest.mark.parametrize("k", [0, 0.5, -3])
def test_interval_below_one_is_refused(k):
    with pytest.raises(ValueError, match="interval"):
        eq1.cost(INPUTS, k)


def test_tradeoff_from_a_window():
    point = eq1.tradeoff(LOGGED, 100, window_s=10.0)
    assert (point.k, point.window_s, point.cost_us, point.limited_by) == (1000, 10.0, 3.5, "window")
    assert eq1.tradeoff(LOGGED, 3, window_s=1.0).k == 3          # 1.0 s x 3 reports/s, despite float rounding
    assert eq1.tradeoff(LOGGED, 10, window_s=0.25).k == 2        # the largest k whose window fits


def test_tradeoff_from_a_budget_is_the_smallest_interval_within_it():
    point = eq1.tradeoff(INPUTS, 50, budget_us=5.0)
    assert (point.k, point.cost_us, point.limited_by) == (99, 5.0, "budget")
    assert point.window_s == 99 / 50
    assert eq1.tradeoff(INPUTS, 1, budget_us=1e9).k == 1


def test_tradeoff_from_k_and_its_overhead():
    point = eq1.tradeoff(INPUTS, 1, k=99)
    assert point.overhead_over_floor == 1.0 and point.k_star == 99.0


@pytest.mark.parametrize("kwargs, message", [
    ({}, "exactly one"), ({"window_s": 1.0, "k": 4}, "exactly one"),
    ({"window_s": 0.001}, "shorter than one report"), ({"budget_us": 2.5}, "floor"),
    ({"budget_us": 1.0}, "floor"), ({"k": 0}, "k must be"), ({"window_s": -1.0}, "window_s"),
])
def test_tradeoff_refuses_impossible_requests(kwargs, message):
    with pytest.raises(ValueError, match=message):
        eq1.tradeoff(INPUTS, 100, **kwargs)


def test_tradeoff_needs_a_positive_rate():
    with pytest.raises(ValueError, match="rate"):
        eq1.tradeoff(INPUTS, 0, k=1)


@given(c_sign=st.floats(1.0, 1e6), c_fsync=st.floats(0.0, 1e5), c_mac=st.floats(0.1, 20.0),
       over=st.floats(1e-3, 1e4))
def test_budget_gives_the_minimal_feasible_interval(c_sign, c_fsync, c_mac, over):
    inputs = eq1.CostInputs(c_mac, 0.5, c_sign, c_fsync)
    budget = inputs.floor * (1 + over)
    k = eq1.tradeoff(inputs, 1, budget_us=budget).k
    assert eq1.cost(inputs, k) <= budget
    assert k == 1 or eq1.cost(inputs, k - 1) > budget


def test_relative_errors():
    np.testing.assert_array_equal(eq1.relative_errors(np.array([11.0, 9.0]), np.array([10.0, 10.0])), [0.1, 0.1])
    with pytest.raises(ValueError, match="shapes"):
        eq1.relative_errors(np.ones(2), np.ones(3))


# --- params --------------------------------------------------------------------------------------------------------

def _with(repo_root, tmp_path, edit):
    data = yaml.safe_load((repo_root / "params" / "params.yaml").read_text())
    edit(data["amortisation"])
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    return path


def test_every_profile_of_the_shipped_params_loads(repo_root):
    for profile in ("smoke", "quick", "paper"):
        cfg = params.load(repo_root / "params" / "params.yaml", profile).amortisation
        assert cfg.intervals[0] == 1 and set(cfg.baselines) == {"mldsa_nolog", "mldsa_log", "slhdsa_log"}
    paper = params.load(repo_root / "params" / "params.yaml", "paper").amortisation
    assert (paper.trials, paper.omission_trials, paper.equivocation_trials, paper.intervals[-1]) == (5, 200, 200, 4096)


@pytest.mark.parametrize("edit, field", [
    (lambda s: s.update(intervals=[1, 4, 2]), "intervals"),
    (lambda s: s.update(intervals=[0, 4]), "intervals"),
    (lambda s: s.update(log_storage="nvme"), "log_storage"),
    (lambda s: s.update(rates=[1, -5]), "rates"),
    (lambda s: s.update(omission_strategies=["declared", "declared"]), "omission_strategies"),
    (lambda s: s.update(surprise=1), "amortisation.surprise"),
    (lambda s: s.update(baselines={"mldsa_log": {"label": "x", "signer": "RSA-2048", "durable_log": True}}),
     "amortisation.baselines.mldsa_log.signer"),
    (lambda s: s["profiles"]["paper"].update(trials=0), "amortisation.profiles.paper.trials"),
    (lambda s: s.update(equivocation_k=1), "amortisation.equivocation_k"),
])
def test_bad_amortisation_params_name_the_field(repo_root, tmp_path, edit, field):
    with pytest.raises(ParamsError, match=field.replace(".", r"\.")):
        params.load(_with(repo_root, tmp_path, edit), "quick")


# --- the interactive explorer only with a live front end -------------------------------------------------------------

def test_no_widgets_without_a_live_front_end(monkeypatch):
    monkeypatch.delenv(interactive.ENV, raising=False)
    assert interactive.live_frontend() is False           # pytest: no kernel, no front end
    assert interactive.tradeoff_explorer({"x": INPUTS}) is None
    monkeypatch.setenv("JPY_SESSION_NAME", "notebook.ipynb")
    assert interactive.live_frontend() is False           # still no IPython kernel in this process


def test_the_override_forces_either_way(monkeypatch):
    monkeypatch.setenv(interactive.ENV, "0")
    assert interactive.live_frontend() is False
    monkeypatch.setenv(interactive.ENV, "1")
    assert interactive.live_frontend() is True


def test_describe_names_k_window_and_cost():
    text = interactive.describe(eq1.tradeoff(LOGGED, 100, window_s=10.0))
    assert "k = **1,000**" in text and "10 s" in text and "3.5 µs/report" in text


def test_cli_reports_a_bad_amortisation_field_in_one_line(repo_root, tmp_path, capsys):
    from pqlab import cli

    path = _with(repo_root, tmp_path, lambda s: s.update(log_storage="nvme"))
    assert cli.main(["amortisation", "--params", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pqlab: error [PARAMS_INVALID]") and "log_storage" in err[0]
