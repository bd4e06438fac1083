"""The recovery figure from the same samples is the same bytes whatever the process did before: its strip-plot jitter
comes from a fixed seed and it is drawn in matplotlib's default style even after another figure set the shared theme
(a study's analysis in a notebook or a test process, against the same analysis in a fresh ``pqlab`` process)."""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab.figures import style
from pqlab.figures.recovery import fig_recovery


def _samples() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Three trials per arm and scenario (more than one point per strip, so seaborn jitters them)."""
    arms = pd.DataFrame([{"arm": arm, "scenario": scenario, "reissued": trial + (arm == "naive") * 80,
                          "ready_ms": 2.0 + trial + 5 * (arm == "tpm")}
                         for arm in ("fresh", "naive", "tpm") for scenario in ("restart", "rollback")
                         for trial in range(3)])
    restart = pd.DataFrame({"interrupted": [True, True, False], "kill_point": [40, 120, 0], "lost": [30, 50, 0],
                            "err_evidence_incomplete": [True, True, False]})
    return arms, restart


def _png(arms: pd.DataFrame, restart: pd.DataFrame) -> bytes:
    figure = fig_recovery(arms, restart, 64, "swtpm, software TPM")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=60, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def test_the_same_samples_give_the_same_bytes_whatever_numpys_global_state():
    arms, restart = _samples()
    np.random.seed(1)
    first = _png(arms, restart)
    np.random.seed(2)
    state = np.random.get_state()
    second = _png(arms, restart)
    assert first == second
    after = np.random.get_state()  # the caller's generator is given back untouched
    assert after[0] == state[0] and np.array_equal(after[1], state[1]) and after[2:] == state[2:]


def test_another_figure_setting_the_shared_theme_first_changes_no_byte():
    arms, restart = _samples()
    fresh = _png(arms, restart)
    with plt.rc_context():  # the theme is global: give the other tests of this process their style back
        style.apply()
        themed = _png(arms, restart)
    assert fresh == themed
