"""One clear line and a non-zero exit for every bad input, through the CLI, `pqlab papermill` (what dvc repro runs)
and the notebooks; notebooks find params/ from the repository root; widget cells never run headless.

nbformat is imported inside the tests that read or write notebooks: importing it costs 1–2.6 s per process here
(its jsonschema imports rfc3987_syntax, which builds some thirty Lark parsers), and `make check` needs none of them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from pqlab import notebook
from pqlab.errors import ParamsError
from tests.conftest import foreground

PQLAB = [sys.executable, "-m", "pqlab.cli"]
REPO = Path(__file__).resolve().parent.parent


def _run(*args: str, cwd=None, env=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([*PQLAB, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, **(env or {})})


def one_line(done: subprocess.CompletedProcess, *fragments: str) -> str:
    """The single stderr line of a failed command (warnings aside), checked for ``fragments``."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("pqlab: warning:")]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("pqlab: error [")
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def _params(project: Path, mutate=None) -> Path:
    path = project / "params" / "params.yaml"
    if mutate:
        raw = yaml.safe_load(path.read_text())
        mutate(raw)
        path.write_text(yaml.safe_dump(raw))
    return path


def _small_transport(raw: dict) -> None:
    raw["transport"]["hops"] = [1]
    raw["transport"]["profiles"]["smoke"]["configurations"] = ["B", "D3", "C5", "C1"]


# --- the CLI ----------------------------------------------------------------------------------------------------

def test_non_utf8_params(project):
    path = _params(project)
    path.write_bytes(path.read_bytes() + b"\ncosts_note: caf\xe9\n")
    one_line(_run("params", "--params", str(path)), "PARAMS_INVALID", "not UTF-8")


def test_yaml_nested_five_thousand_deep(project):
    path = _params(project)
    path.write_text("profile: smoke\nseed: 1\ncosts: " + "[" * 5000 + "]" * 5000 + "\n")
    one_line(_run("params", "--params", str(path)), "PARAMS_INVALID", "nested too deeply")


def test_zero_workers(project):
    one_line(_run("transport", "--params", str(_params(project)), "--profile", "smoke", "--workers", "0"),
             "--workers", ">= 1")


def test_unreachable_dask_scheduler_fails_fast_in_one_line(project):
    start = time.monotonic()
    done = _run("transport", "--params", str(_params(project, _small_transport)), "--profile", "smoke",
                "--scheduler", "tcp://127.0.0.1:9", "--quiet", env={"PQLAB_DASK_CONNECT_TIMEOUT": "0.5"})
    one_line(done, "SCHEDULER_UNREACHABLE", "tcp://127.0.0.1:9")
    assert time.monotonic() - start < 60
    assert not [p for p in (project / "paper_figs").rglob("*") if p.is_file()]


def test_infinite_device_compute_in_a_configs_file(project, tmp_path):
    configs = tmp_path / "configs.yaml"
    configs.write_text("X:\n  sizes: [100, 200, 300, 20]\n  device_compute_ms: [.inf, 0]\n")
    one_line(_run("transport", "--params", str(_params(project)), "--profile", "smoke", "--configs", str(configs)),
             "PARAMS_INVALID", "device_compute_ms", str(configs))


@pytest.mark.parametrize("name", ["pqm4_cycles.yaml", "paper_reference.yaml"])
def test_corrupt_yaml_inputs_name_the_file(project, name):
    (project / "params" / name).write_bytes(b"algorithms: {a: [unclosed\n")
    if name == "paper_reference.yaml":
        done = _run("report", "--root", str(project))
    else:
        done = _run("design-space", "--params", str(_params(project)), "--profile", "smoke")
    one_line(done, "PARAMS_INVALID", name)


def test_validation_at_load_is_one_line_naming_the_exact_field(project):
    """`pqlab params` validates at load, before any study runs (every rule: tests/test_params.py)."""
    one_line(_run("params", "--params", str(_params(project, lambda r: r["transport"].__setitem__("hops", [1, 2, 2]))),
                  "--profile", "smoke"), "PARAMS_INVALID", "transport.hops[2]")


@pytest.mark.slow  # runs the transport grid
def test_interrupt_message_tells_the_truth_after_the_grid_finished(project):
    """SIGINT right after the grid finished: the outputs were not written, the grid's parts are kept."""
    path = _params(project, _small_transport)
    script = (
        "import signal, sys\n"
        "from pqlab import cli\n"
        "from pqlab.pipeline import outputs\n"
        "class Stop(outputs.OutputSet):\n"
        "    def __init__(self, *a, **k):\n"
        "        signal.raise_signal(signal.SIGINT)\n"  # the moment the grid is done, before staging
        "outputs.OutputSet = Stop\n"
        "import pqlab.studies.transport as t\n"
        "t.OutputSet = Stop\n"
        f"sys.exit(cli.main(['transport', '--params', {str(path)!r}, '--profile', 'smoke', '--workers', '1', "
        "'--quiet']))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          preexec_fn=foreground)
    assert done.returncode == 130, done.stderr
    message = done.stderr.strip().splitlines()[-1]
    parts = sorted((project / "data" / "raw").glob(".transport-*.parts"))  # the grid's resume cache
    assert parts and "part(s) are kept in" in message and all(str(p) in message for p in parts)
    assert not (project / "paper_figs" / "case" / "fig2_transport.png").exists()
    assert "nothing" not in message and "no partial output" not in message
    # the rerun reuses the kept parts and finishes
    rerun = _run("transport", "--params", str(path), "--profile", "smoke", "--workers", "1", "--quiet")
    assert rerun.returncode == 0, rerun.stderr
    assert not list((project / "data" / "raw").glob(".transport-*.parts"))


# --- notebooks -----------------------------------------------------------------------------------------------

def test_locate_params_from_the_repository_root_and_anywhere_below(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    assert notebook.locate_params() == REPO / "params" / "params.yaml"
    monkeypatch.chdir(REPO / "lib" / "pqlab")
    assert notebook.locate_params() == REPO / "params" / "params.yaml"
    monkeypatch.chdir(tmp_path)  # outside any project: the repository pqlab is installed from
    assert notebook.locate_params() == REPO / "params" / "params.yaml"
    with pytest.raises(ParamsError, match="params_path"):
        notebook.locate_params(tmp_path / "nowhere.yaml")  # an explicit wrong path is never replaced


def test_widgets_are_never_built_headless(monkeypatch, capsys):
    monkeypatch.delenv(notebook.INTERACTIVE_ENV, raising=False)
    monkeypatch.setenv(notebook.HEADLESS_ENV, "1")
    assert not notebook.interactive()
    assert notebook.widget("IntSlider", value=3) is None

    def survivors(limit=1):
        raise AssertionError("must not run")
    assert notebook.interact(survivors, limit=(1, 5)) is survivors
    assert "skipped in this headless run" in capsys.readouterr().out
    monkeypatch.delenv(notebook.HEADLESS_ENV)
    assert not notebook.interactive()  # plain Python, no kernel, no front end


def _notebook(path: Path, *cells: str) -> Path:
    import nbformat  # see the module docstring
    nb = nbformat.v4.new_notebook()
    nb.metadata = json.loads((REPO / "notebooks" / "01_cost_characterisation.ipynb").read_text())["metadata"]
    nb.cells = [nbformat.v4.new_code_cell('profile = "smoke"\nparams_path = "../params/params.yaml"',
                                          metadata={"tags": ["parameters"]}),
                *[nbformat.v4.new_code_cell(c) for c in cells]]
    nbformat.write(nb, path)
    return path


@pytest.mark.slow
def test_pqlab_papermill_turns_every_failure_into_one_line(project, tmp_path):
    bad = _params(project, lambda r: r["attack_matrix"]["profiles"]["smoke"].__setitem__("repeats", 0))
    study = REPO / "notebooks" / "02_attack_matrix.ipynb"
    done = _run("papermill", str(study), str(tmp_path / "o.ipynb"), "-p", "profile", "smoke",
                "-p", "params_path", str(bad))
    one_line(done, "PARAMS_INVALID", "attack_matrix.profiles.smoke.repeats")
    assert "Traceback" not in done.stderr and "[IPKernelApp]" not in done.stderr
    slow = _notebook(tmp_path / "slow.ipynb", "import time\ntime.sleep(120)")
    start = time.monotonic()
    one_line(_run("papermill", str(slow), str(tmp_path / "o.ipynb"), "--execution-timeout", "2"),
             "NOTEBOOK_TIMEOUT", "execution_timeout_s = 2")
    assert time.monotonic() - start < 90
    dead = _notebook(tmp_path / "dead.ipynb", "import os\nos._exit(7)")
    one_line(_run("papermill", str(dead), str(tmp_path / "o.ipynb")), "KERNEL_DIED")
    pqlab_error = _notebook(tmp_path / "own.ipynb", "from pqlab.errors import InputError\n"
                            "raise InputError('truncated', field='data/raw/costs.parquet')")
    one_line(_run("papermill", str(pqlab_error), str(tmp_path / "o.ipynb")), "INPUT_CORRUPT",
             "data/raw/costs.parquet: truncated")


@pytest.mark.slow
def test_plain_papermill_from_the_repository_root_with_the_notebooks_defaults(tmp_path):
    """The issue's try: `papermill notebooks/03_case_sizes.ipynb out.ipynb -k pqlab` from the repository root.
    Run by hand (no `-p pipeline True`), the study writes under the project's exploration/ folder, never into the
    pipeline's outputs; it runs in a copy of the repository."""
    copy = tmp_path / "repo"
    for name in ("params", "notebooks"):
        shutil.copytree(REPO / name, copy / name)
    done = subprocess.run([Path(sys.executable).parent / "papermill", "notebooks/03_case_sizes.ipynb",
                           str(tmp_path / "out.ipynb"), "-k", "pqlab", "--log-level", "WARNING"],
                          cwd=copy, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (copy / "exploration" / "paper_figs" / "case" / "table1_case_sizes.csv").is_file()
    assert not (copy / "paper_figs").exists()


@pytest.mark.slow
def test_dvc_repro_shows_the_one_line_not_a_papermill_traceback(tmp_path):
    """A parameter error raised inside a notebook stage, through `dvc repro`."""
    copy = tmp_path / "repo"
    for name in ("params", "notebooks", "lib"):
        shutil.copytree(REPO / name, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(REPO / "dvc.yaml", copy / "dvc.yaml")
    raw = yaml.safe_load((copy / "params" / "params.yaml").read_text())
    raw["attack_matrix"]["profiles"]["paper"]["repeats"] = 0  # a profile that is not even the one selected
    (copy / "params" / "params.yaml").write_text(yaml.safe_dump(raw))
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run([bin_dir / "dvc", "init", "--no-scm", "-q"], cwd=copy, check=True, env=env)
    done = subprocess.run([bin_dir / "dvc", "repro", "attack_matrix"], cwd=copy, capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    errors = [line for line in output.splitlines() if line.startswith("pqlab: error [")]
    assert len(errors) == 1 and "attack_matrix.profiles.paper.repeats" in errors[0], output
    assert "Traceback" not in output and "PapermillExecutionError" not in output
    assert len(output.strip().splitlines()) <= 5, output
