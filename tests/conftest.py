"""Shared fixtures: the repository root, the vendored test vectors (tests/vectors/), a scratch project tree, the
hypothesis profiles, and the fault-injection count gathered from every xdist worker."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

REPO = Path(__file__).resolve().parent.parent
VECTORS = REPO / "tests" / "vectors"

# Hypothesis example counts, chosen here and nowhere else: per profile, for a property (an example runs a model, a
# simulation, a bootstrap or a reference writer) and for a fuzz property (cheap arbitrary or mutated input into a
# public decoder, verifier or encoder: issue 16 asks 10,000 examples of each). `make check` runs the fast profile,
# `make test` (and so CI, .ci/run) the thorough one; PQLAB_HYPOTHESIS_PROFILE picks one for a plain pytest run.
EXAMPLES = {"fast": {"property": 100, "fuzz": 300}, "thorough": {"property": 500, "fuzz": 10_000}}
PROFILE = os.environ.get("PQLAB_HYPOTHESIS_PROFILE", "fast")
if PROFILE not in EXAMPLES:
    raise pytest.UsageError(f"PQLAB_HYPOTHESIS_PROFILE={PROFILE!r}: one of {', '.join(EXAMPLES)}")
for _name, _counts in EXAMPLES.items():
    settings.register_profile(_name, max_examples=_counts["property"], deadline=None)
    # fuzz runs are the same every time (no example database, derandomised) and spend their time in the code under
    # test rather than in shrinking; a large or slow input is what they are for
    settings.register_profile(f"{_name}-fuzz", max_examples=_counts["fuzz"], deadline=None, database=None,
                              derandomize=True, phases=[Phase.generate],
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                     HealthCheck.filter_too_much])
settings.load_profile(PROFILE)
FUZZ = settings.get_profile(f"{PROFILE}-fuzz")  # @FUZZ on a fuzz property; every other property takes the profile's


def foreground() -> None:
    """``preexec_fn`` of a child process a test interrupts: SIGINT as a shell's foreground command has it.

    A non-interactive shell starts a background job (``make test &``, a CI step or an agent's command run that way)
    with SIGINT ignored, and an ignored signal stays ignored across fork and exec: the pytest process, its xdist
    workers and every child they start would ignore Ctrl-C, and the interrupt tests would see nothing happen.
    Forked children that run pqlab in-process install Python's handler themselves (tests/faults.py,
    tests/forked_cli.py, tests/test_outputs.py)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def vectors() -> Path:
    """Test data vendored from upstream sources (tests/vectors/SOURCES.md names each file's origin)."""
    return VECTORS


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A scratch project tree with the repo's params files, so studies write under tmp_path."""
    (tmp_path / "params").mkdir()
    for source in (REPO / "params").glob("*.yaml"):
        shutil.copy(source, tmp_path / "params" / source.name)
    return tmp_path


@pytest.fixture(scope="session")
def dvc_scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pipeline copied with placeholder outputs and committed, for `dvc status` (tests/dvc_scratch.py); its tests
    carry ``dvc_scratch.SHARES_THE_SCRATCH`` so one worker builds it once."""
    from tests import dvc_scratch as scratch

    return scratch.build(tmp_path_factory.mktemp("status") / "project")


@pytest.fixture(scope="session")
def smoke(tmp_path_factory: pytest.TempPathFactory):
    """Every stage's CLI run once per test session into a new empty --out-dir (tests/smoke.py), shared by workers."""
    from tests.smoke import SmokeOutputs

    return SmokeOutputs(tmp_path_factory)


class _FaultCounts:
    """xdist: each worker hands its fault log to the controller, which prints the one summary line."""

    @pytest.hookimpl
    def pytest_testnodedown(self, node, error):
        from tests import faults

        faults.LOG.extend(tuple(entry) for entry in getattr(node, "workeroutput", {}).get("fault_log", []))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """Tests marked ``slow`` first — a stable sort after pytest-randomly's shuffle, so each tier keeps its random
    order — so under xdist the long ones start early instead of one worker finishing a late one while the rest idle."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_configure(config):
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_FaultCounts(), "pqlab-fault-counts")


def pytest_sessionfinish(session):
    if hasattr(session.config, "workeroutput"):  # an xdist worker: its faults go to the controller
        from tests import faults

        session.config.workeroutput["fault_log"] = [list(entry) for entry in faults.LOG]


def pytest_terminal_summary(terminalreporter):
    """The fault-injection count (tests/faults.py), when fault-injection tests ran."""
    from tests import faults

    if faults.LOG:
        terminalreporter.write_line(faults.summary())
