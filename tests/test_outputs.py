"""Output sets are replaced as one: never a mix of two runs, whatever kills or interrupts the commit; files get
the mode the umask gives; what killed runs leave is recovered; the interrupt message tells the truth."""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
from pathlib import Path

import pytest

from pqlab import io
from pqlab.errors import OutputError
from pqlab.paths import ProjectPaths
from pqlab.pipeline import outputs
from pqlab.pipeline.outputs import STAGING, OutputSet, recover, scratch_dir
from tests import faults

FILES = ("data/derived/a.json", "data/derived/b.csv", "paper_figs/case/c.md", "paper_figs/case/d.txt")


def _write_set(root: Path, label: str) -> list[Path]:
    with OutputSet(ProjectPaths(root), "demo") as out:
        for name in FILES:
            out.text(root / name, f"{label} {name}\n")
    return out.written


def _state(root: Path) -> set[str]:
    """Which runs' files are in place: {"old"}, {"new"} or, if the set were mixed, both."""
    return {(root / name).read_text().split()[0] for name in FILES if (root / name).exists()}


def _leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if STAGING in p.parts or p.name.endswith(io.TEMP_SUFFIX))


def _in_child(action) -> int:
    """Run ``action`` in a forked child; its exit status, or -signal if a signal ended it."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            # Ctrl-C as a foreground pqlab process has it, even when the test run was started as a background
            # job, whose processes inherit SIGINT ignored (tests/conftest.py, foreground)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            code = action() or 0
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _at_rename(number: int, act) -> None:
    """Call ``act`` when this process is about to do its ``number``-th rename (os.rename / os.replace)."""
    seen = [0]

    def hook(event, args):
        if event == "os.rename":
            seen[0] += 1
            if seen[0] == number:
                act()
    sys.addaudithook(hook)


def _renames_in_a_commit(tmp_path: Path) -> int:
    root = tmp_path / "count"
    _write_set(root, "old")
    counter = [0]
    pid = os.fork()
    if pid == 0:  # pragma: no cover
        sys.addaudithook(lambda e, a: counter.__setitem__(0, counter[0] + (e == "os.rename")))
        _write_set(root, "new")
        os._exit(min(counter[0], 250))
    _, status = os.waitpid(pid, 0)
    return os.WEXITSTATUS(status)


def test_a_commit_replaces_every_file_and_leaves_nothing_behind(tmp_path):
    _write_set(tmp_path, "old")
    written = _write_set(tmp_path, "new")
    assert _state(tmp_path) == {"new"} and len(written) == len(FILES)
    assert _leftovers(tmp_path) == []


def test_an_exception_while_staging_keeps_the_previous_set(tmp_path):
    _write_set(tmp_path, "old")
    with pytest.raises(RuntimeError), OutputSet(ProjectPaths(tmp_path), "demo") as out:
        out.text(tmp_path / FILES[0], "new\n")
        raise RuntimeError("the study failed half way")
    assert _state(tmp_path) == {"old"} and _leftovers(tmp_path) == []


def test_a_failing_move_rolls_every_file_back(tmp_path):
    _write_set(tmp_path, "old")
    (tmp_path / "paper_figs" / "blocked").write_text("a file where a folder should be")
    with pytest.raises(OutputError, match="previous outputs were kept") as caught:
        with OutputSet(ProjectPaths(tmp_path), "demo") as out:
            for name in FILES:  # data/derived/* are moved first (sorted), then paper_figs/blocked/ fails
                out.text(tmp_path / name, f"new {name}\n")
            out.text(tmp_path / "paper_figs" / "blocked" / "e.md", "cannot be placed\n")
    assert "\n" not in str(caught.value)
    assert _state(tmp_path) == {"old"} and _leftovers(tmp_path) == []


def test_a_rollback_that_fails_too_is_one_line_and_the_next_run_puts_the_previous_set_back(tmp_path, monkeypatch):
    """A move fails, then putting a previous file back fails as well (an I/O error twice): the run ends with one
    OutputError, and the journal and the moved-aside files stay for the next run, which completes the rollback."""
    _write_set(tmp_path, "old")
    real_replace = os.replace
    calls = {"new": 0, "back": 0}

    def failing(src, dst, *args, **kwargs):
        parts = Path(src).parts
        if "new" in parts and STAGING in parts:
            calls["new"] += 1
            if calls["new"] == 3:  # the third file's move into place
                raise OSError(5, "Input/output error", str(src))
        if "old" in parts and STAGING in parts and Path(dst).parent != Path(src).parent:
            calls["back"] += 1
            if calls["back"] == 1:  # the first previous file on its way back
                raise OSError(5, "Input/output error", str(src))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(outputs.os, "replace", failing)
    with pytest.raises(OutputError, match="next run") as caught:
        _write_set(tmp_path, "new")
    monkeypatch.setattr(outputs.os, "replace", real_replace)
    assert "\n" not in str(caught.value) and calls == {"new": 3, "back": 1}
    assert _leftovers(tmp_path), "the journal and the previous files must be kept for the next run"
    assert any("completed the interrupted commit" in line for line in recover(tmp_path))
    assert _state(tmp_path) == {"old"} and _leftovers(tmp_path) == []


def test_a_folder_in_place_of_an_output_is_never_moved_away(tmp_path):
    _write_set(tmp_path, "old")
    folder = tmp_path / "paper_figs" / "case" / "e.md"
    folder.mkdir()
    (folder / "keep").write_text("the user's")
    with pytest.raises(OutputError, match="folder"), OutputSet(ProjectPaths(tmp_path), "demo") as out:
        out.text(tmp_path / FILES[0], "new\n")
        out.text(folder, "x\n")
    assert (folder / "keep").read_text() == "the user's" and _state(tmp_path) == {"old"}


def test_sigkill_at_every_rename_of_a_commit_never_leaves_a_mix(tmp_path):
    total = _renames_in_a_commit(tmp_path)
    assert total >= 2 * len(FILES)  # a journal, then each file moved aside and into place
    outcomes = set()
    for number in range(1, total + 1):
        root = tmp_path / f"kill{number}"
        _write_set(root, "old")
        status = _in_child(lambda root=root, number=number: (
            _at_rename(number, lambda: os.kill(os.getpid(), signal.SIGKILL)), _write_set(root, "new"))[1] and 0)
        assert status == -signal.SIGKILL
        recover(root)  # what the next run does first
        state = _state(root)
        assert state in ({"old"}, {"new"}), (number, state)
        assert _leftovers(root) == [], number
        outcomes.add(frozenset(state))
        faults.record("SIGKILL at a rename of a commit", f"rename {number}", "correct result")
    assert outcomes == {frozenset({"old"}), frozenset({"new"})}  # killed before and after the journal


def test_ctrl_c_during_a_commit_is_held_until_the_set_is_whole(tmp_path):
    total = _renames_in_a_commit(tmp_path)
    for number in (1, 2, total // 2, total):
        root = tmp_path / f"int{number}"
        _write_set(root, "old")

        def run(root=root, number=number) -> int:
            _at_rename(number, lambda: signal.raise_signal(signal.SIGINT))
            try:
                _write_set(root, "new")
            except KeyboardInterrupt:
                return 42 if outputs.STATUS["demo"]["state"] == "committed" else 43
            return 0
        assert _in_child(run) == 42, number  # the interrupt arrived, after the whole set was in place
        assert _state(root) == {"new"} and _leftovers(root) == []
        faults.record("SIGINT at a rename of a commit", f"rename {number}", "correct result")


def test_ctrl_c_while_staging_keeps_the_previous_set(tmp_path):
    _write_set(tmp_path, "old")

    def run() -> int:
        try:
            with OutputSet(ProjectPaths(tmp_path), "demo") as out:
                out.text(tmp_path / FILES[0], "new\n")
                signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            return 42 if "was not written" in outputs.interrupt_report() else 43
        return 0
    assert _in_child(run) == 42
    assert _state(tmp_path) == {"old"} and _leftovers(tmp_path) == []


def test_a_run_killed_while_staging_leaves_a_folder_the_next_run_removes(tmp_path):
    _write_set(tmp_path, "old")

    def run() -> None:
        out = OutputSet(ProjectPaths(tmp_path), "demo")
        out.text(tmp_path / FILES[0], "new\n")
        os.kill(os.getpid(), signal.SIGKILL)
    assert _in_child(run) == -signal.SIGKILL
    assert _leftovers(tmp_path)  # the killed run's staging folder
    _write_set(tmp_path, "new")
    assert _state(tmp_path) == {"new"} and _leftovers(tmp_path) == []


def test_a_live_runs_staging_folder_is_not_recovered(tmp_path):
    out = OutputSet(ProjectPaths(tmp_path), "demo")
    out.text(tmp_path / FILES[0], "mine\n")
    _in_child(lambda: recover(tmp_path) and 0)  # another process looks: the folder is alive
    out.commit()
    assert (tmp_path / FILES[0]).read_text() == "mine\n"


def test_scratch_folders_are_removed_even_after_a_kill(tmp_path):
    paths = ProjectPaths(tmp_path)
    with scratch_dir(paths, "demo") as scratch:
        (scratch / "log").write_text("x")
    assert _leftovers(tmp_path) == []

    def run() -> None:
        with scratch_dir(paths, "demo") as scratch:
            (scratch / "log").write_text("x")
            os.kill(os.getpid(), signal.SIGKILL)
    _in_child(run)
    assert _leftovers(tmp_path)
    recover(tmp_path)
    assert _leftovers(tmp_path) == []


def test_recover_meets_a_staging_folder_another_run_just_removed(tmp_path, monkeypatch):
    """Another run finishes its commit (its lock file removed) and drops the emptied staging folder between this
    run's look at the stale commit lock and its attempt to take it: nothing is stale then, and nothing is raised
    (`make check` saw a bare FileNotFoundError from this window in the two-process test below)."""
    base = tmp_path / STAGING
    base.mkdir()
    (base / outputs._COMMIT_LOCK).touch()

    class OtherRunFinishes(io.FileLock):
        def acquire(self, blocking: bool = False) -> bool:
            (base / outputs._COMMIT_LOCK).unlink(missing_ok=True)
            base.rmdir()
            return super().acquire(blocking)

    monkeypatch.setattr(outputs, "FileLock", OtherRunFinishes)
    assert recover(tmp_path) == []
    assert not base.exists()


def test_recover_meets_a_staging_folder_removed_before_it_is_listed(tmp_path, monkeypatch):
    base = tmp_path / STAGING
    base.mkdir()
    real_iterdir = Path.iterdir

    def removed_first(self: Path):
        if self == base:
            base.rmdir()
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", removed_first)
    assert recover(tmp_path) == []


def test_two_processes_committing_into_one_project_each_leave_a_whole_set(tmp_path):
    _write_set(tmp_path, "old")
    read, write = os.pipe()

    def writer(label: str):
        def run() -> int:
            os.read(read, 1)  # start together
            for _ in range(15):
                _write_set(tmp_path, label)
            return 0
        return run
    children = []
    for label in ("A", "B"):
        pid = os.fork()
        if pid == 0:  # pragma: no cover
            code = 3
            try:
                code = writer(label)()
            except BaseException as exc:
                (tmp_path / f"error-{label}").write_text(repr(exc))
            finally:
                os._exit(code)
        children.append(pid)
    os.write(write, b"go")
    statuses = [os.waitpid(pid, 0)[1] for pid in children]
    assert all(os.WIFEXITED(s) and os.WEXITSTATUS(s) == 0 for s in statuses), \
        [p.read_text() for p in tmp_path.glob("error-*")]
    assert _state(tmp_path) in ({"A"}, {"B"}) and _leftovers(tmp_path) == []
    for label in ("A", "B"):
        faults.record("two concurrent runs", f"output set {label}", "correct result")


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_files_get_the_mode_the_umask_gives(tmp_path, umask, mode):
    import pandas as pd

    previous = os.umask(umask)
    try:
        with OutputSet(ProjectPaths(tmp_path), "demo") as out:
            out.text(tmp_path / "t.txt", "x")
            out.parquet(tmp_path / "t.parquet", pd.DataFrame({"a": [1]}))
            out.json(tmp_path / "t.json", {"a": 1})
        io.write_text(tmp_path / "io.txt", "x")
        io.write_parquet(tmp_path / "io.parquet", pd.DataFrame({"a": [1]}))
    finally:
        os.umask(previous)
    for name in ("t.txt", "t.parquet", "t.json", "io.txt", "io.parquet"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name


def test_interrupt_report_says_what_was_written(tmp_path):
    outputs.STATUS.clear()
    assert "no output set was written" in outputs.interrupt_report()
    _write_set(tmp_path, "new")
    report = outputs.interrupt_report({tmp_path / ".x.parts": 3})
    assert "complete new output set of demo (4 files) was written" in report
    assert "3 finished part(s) are kept" in report
    outputs.STATUS.clear()


def test_headline_metrics_are_four_keys_beside_the_full_metrics(tmp_path):
    with OutputSet(ProjectPaths(tmp_path), "demo") as out:
        out.metrics(tmp_path / "demo_metrics.json", {"profile": "smoke", "deep": {"x": 2.5}, "other": [1]},
                    label="x", key="deep.x", unit="ms")
    compact = json.loads((tmp_path / "demo_headline.json").read_text())
    assert compact == {"profile": "smoke", "headline": "x", "value": 2.5, "unit": "ms"}
    assert json.loads((tmp_path / "demo_metrics.json").read_text())["deep"] == {"x": 2.5}


def test_rounded_rounds_float_columns_by_places_or_significant_digits_and_keeps_the_rest():
    import pandas as pd

    from pqlab.pipeline.outputs import rounded

    frame = pd.DataFrame({"name": ["a", "b"], "n": [1, 2], "ms": [1.23456, 98765.4321], "p_value": [1.23456e-7, 0.5]})
    places = rounded(frame, decimals=2, keep=("p_value",))
    assert places["ms"].tolist() == [1.23, 98765.43] and places["p_value"].tolist() == [1.23456e-7, 0.5]
    assert places["name"].tolist() == ["a", "b"] and places["n"].tolist() == [1, 2]
    digits = rounded(frame, significant=4)
    assert digits["ms"].tolist() == [1.235, 98770.0] and digits["p_value"].tolist() == [1.235e-7, 0.5]
    assert frame["ms"].tolist() == [1.23456, 98765.4321]  # a copy
    with pytest.raises(ValueError, match="not both"):
        rounded(frame, decimals=2, significant=3)
