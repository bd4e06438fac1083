"""Which parent process counts as a batch runner for ``pqlab.notebook.interactive``: its program, not its paths."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from pqlab import notebook


@pytest.fixture
def parent(tmp_path, monkeypatch):
    """Start a sleeping process whose command line is ``python <tmp>/<script> <args>`` and point the kernel's
    parent pid at it."""
    started = []

    def start(script: str, *args: str) -> set[str]:
        path = tmp_path / script
        path.write_text("import time\ntime.sleep(30)\n")
        process = subprocess.Popen([sys.executable, str(path), *args])
        started.append(process)
        monkeypatch.setenv("JPY_PARENT_PID", str(process.pid))
        for _ in range(100):  # the cmdline is the interpreter's own until exec has finished
            if path.name in notebook._parent_programs():
                break
            time.sleep(0.01)
        return notebook._parent_programs()

    yield start
    for process in started:
        process.kill()
        process.wait()


def test_a_front_end_started_on_a_pytest_folder_is_not_a_batch_runner(parent):
    programs = parent("jupyter-lab", "--notebook-dir", "/tmp/pytest-of-root/pytest-1/nb", "--port", "8890")
    assert programs == {"jupyter-lab", _interpreter()}
    assert not any(runner in program for program in programs for runner in notebook._BATCH_RUNNERS)


def test_a_batch_runner_is_recognised_by_its_program(parent):
    programs = parent("papermill", "in.ipynb", "out.ipynb")
    assert "papermill" in programs


def test_a_parent_that_is_gone_names_no_program(monkeypatch):
    monkeypatch.setenv("JPY_PARENT_PID", str(2**22 + 12345))  # above the kernel's pid_max default
    assert notebook._parent_programs() == set()


def _interpreter() -> str:
    from pathlib import Path

    return Path(sys.executable).name
