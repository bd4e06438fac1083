"""Integrity by default (issue 36): no edited input used silently, no user file deleted, no traceback, no orphan.

Each test is one of the issue's tries as a new user makes it: a pandas round trip of a derived file, a metrics file
with its digest removed, raw samples edited in place, a file edited on purpose and imported as such, a pipe closed
early, a usage error, a bad --figure or --storage, SIGINT to a notebook's kernel or during a progress bar, SIGKILL
to a run with a worker pool. (The first-time parameter and the params bomb under `make repro`: tests/test_dvc_params.py;
the forged manifest: tests/test_generated_folder.py.)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pqlab import cli, io, params
from pqlab.errors import PqlabError
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.studies import report as report_study
from tests import faults
from tests.conftest import REPO, foreground
from tests.test_no_space import small_tmpfs  # noqa: F401 - a fixture: a real 1 MiB tmpfs (root only)

PQLAB = str(Path(sys.executable).with_name("pqlab"))


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _pqlab(*argv: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([PQLAB, *argv], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=foreground)


# --- a project with measured and analysed costs and amortisation (smoke profile) -----------------------------------

@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> Path:
    root = faults.make_project(tmp_path_factory.mktemp("integrity") / "project")
    for stage in ("costs", "amortisation"):
        assert cli.main(faults.command(stage, root)) == 0, stage
    return root


@pytest.fixture
def project(measured, tmp_path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(measured, root)
    return root


def _argv(stage: str, root: Path, *extra: str) -> list[str]:
    return [*faults.command(stage, root), *extra]


def _pandas_round_trip(path: Path, change) -> None:
    """What a user does with pandas: read, change, ``to_parquet`` (pandas keeps none of pqlab's metadata)."""
    frame = pd.read_parquet(path)
    change(frame)
    frame.to_parquet(path)


def _sign_times_ten(frame: pd.DataFrame, column: str) -> None:
    frame.loc[frame["op_id"] == "sign_ML-DSA-65", column] *= 10


def test_a_pandas_round_trip_of_costs_stats_is_refused_by_amortisation_and_whatif(project, capsys):
    """The try: costs_stats.parquet's ML-DSA-65 median ×10 through pandas; amortisation --analyse-only exited 0 with
    Eq. 1 on the edited median, and `whatif amort` took it too."""
    path = project / "data" / "derived" / "costs_stats.parquet"
    _pandas_round_trip(path, lambda frame: _sign_times_ten(frame, "median"))
    table2 = project / "paper_figs" / "amort" / "table2_amortised.csv"
    before = table2.read_bytes()

    assert cli.main(_argv("amortisation", project, "--analyse-only")) == 2
    line = _one_line(capsys)
    assert line.startswith(f"pqlab: error [INPUT_UNVERIFIED]: {path}: ") and "no pqlab_sha256" in line
    assert "dvc repro costs" in line
    assert table2.read_bytes() == before

    assert cli.main(["whatif", "amort", "--params", str(project / "params" / "params.yaml"), "--rate", "10",
                     "--window-s", "30", "--storage", "none"]) == 2
    line = _one_line(capsys)
    assert line.startswith(f"pqlab: error [INPUT_UNVERIFIED]: {path}: ")


def test_a_metrics_json_with_its_digest_removed_is_refused_by_full_image(project, tmp_path, capsys):
    path = project / "data" / "derived" / "costs_metrics.json"
    document = json.loads(path.read_text())
    del document["pqlab_sha256"]
    document["table1"]["sign_ML-DSA-65"]["median_us"] *= 10
    path.write_text(json.dumps(document, indent=2))
    image = tmp_path / "image"
    image.mkdir()
    (image / "a.bin").write_bytes(bytes(range(256)) * 400)

    assert cli.main(_argv("full_image", project, "--image-dir", str(image))) == 2
    line = _one_line(capsys)
    assert line.startswith(f"pqlab: error [INPUT_UNVERIFIED]: {path}: ") and "dvc repro costs" in line
    assert not (project / "data" / "derived" / "full_image_metrics.json").exists()


def test_costs_profile_is_recorded_and_whatif_names_it(project, capsys):
    """Provenance read from where it is written: costs_profile was always null and whatif said "profile None"."""
    metrics = io.read_json(project / "data" / "derived" / "amortisation_metrics.json")
    assert metrics["inputs"]["costs_profile"] == "smoke"
    assert cli.main(["whatif", "amort", "--params", str(project / "params" / "params.yaml"), "--rate", "10",
                     "--window-s", "30", "--storage", "none", "--c-sign", "100"]) == 0
    out = capsys.readouterr().out
    assert "profile smoke" in out and "profile None" not in out


# --- raw samples: in place exactly as on import; edited on purpose only through `raw import --edited` -------------

def _without_digest(path: Path, change=lambda table: table) -> None:
    """An edit that keeps pqlab's provenance but drops the digest (pyarrow, metadata copied by hand)."""
    table = pq.read_table(path)
    metadata = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"pqlab_sha256"}
    pq.write_table(change(table).replace_schema_metadata(metadata), path)


def _times_ten(column: str):
    def change(table: pa.Table) -> pa.Table:
        index = table.schema.get_field_index(column)
        values = pa.compute.multiply(table.column(index), 10)
        return table.set_column(index, column, values.cast(table.schema.field(index).type))
    return change


def test_a_raw_grid_edited_in_place_is_refused_like_on_import(smoke, tmp_path):
    """The try: transport_grid.parquet with time_s ×10 and the digest dropped; `transport --analyse-only` exited 0 with
    D3 ten times slower while `raw import` refused the same file."""
    root = tmp_path / "out"
    shutil.copytree(smoke.run("transport").ok().root, root)
    path = root / "data" / "raw" / "transport_grid.parquet"
    _without_digest(path, _times_ten("time_s"))
    before = (root / "data" / "derived" / "transport_metrics.json").read_bytes()

    argv = ["transport", "--params", str(REPO / "params" / "params.yaml"), "--profile", "smoke", "--out-dir",
            str(root), "--analyse-only", "--workers", "1", "--quiet"]
    analysed = _pqlab(*argv)
    assert analysed.returncode == 2, analysed.stdout[-2000:]
    assert analysed.stderr.strip().count("\n") == 0
    assert analysed.stderr.startswith(f"pqlab: error [INPUT_UNVERIFIED]: {path}: ")
    assert (root / "data" / "derived" / "transport_metrics.json").read_bytes() == before

    imported = _pqlab("raw", "import", str(path), "--params", str(REPO / "params" / "params.yaml"), "--profile",
                      "smoke", "--out-dir", str(tmp_path / "other"))
    assert imported.returncode == 2 and imported.stderr.startswith("pqlab: error [INPUT_UNVERIFIED]: ")


def _mutations(settings: params.StudyParams) -> dict[str, object]:
    def other_stage(table: pa.Table) -> pa.Table:
        meta = json.loads(table.schema.metadata[b"pqlab"])
        meta["raw_samples"]["stage"] = "control_cycle"
        return io.parquet_table(table.to_pandas(), meta)

    def other_params(table: pa.Table) -> pa.Table:
        meta = json.loads(table.schema.metadata[b"pqlab"])
        block = meta["raw_samples"]
        block["measurement_params"]["costs"]["reps"] += 1
        block["params_hash"] = raw_provenance.params_hash(block["measurement_params"])
        return io.parquet_table(table.to_pandas(), meta)

    def value_changed(table: pa.Table) -> pa.Table:
        return _times_ten("net_ns")(table).replace_schema_metadata(table.schema.metadata)

    def no_column(table: pa.Table) -> pa.Table:
        meta = json.loads(table.schema.metadata[b"pqlab"])
        return io.parquet_table(table.to_pandas().drop(columns=["net_ns"]), meta)

    return {"digest dropped": "drop", "value changed, digest kept": value_changed, "measured for another stage":
            other_stage, "other measurement parameters": other_params, "a column missing": no_column}


def test_a_raw_file_in_place_gets_exactly_the_checks_of_raw_import(measured, tmp_path):
    """Five edits of data/raw/costs.parquet: the analysis in place and `raw import --stage costs` refuse each with the
    same error (before, in place a file without its digest was read as it was)."""
    settings = params.load(measured / "params" / "params.yaml", "smoke")
    for what, change in _mutations(settings).items():
        root = tmp_path / what.replace(" ", "_").replace(",", "")
        shutil.copytree(measured, root)
        path = root / "data" / "raw" / "costs.parquet"
        if change == "drop":
            _without_digest(path)
        else:
            pq.write_table(change(pq.read_table(path)), path)
        with pytest.raises(PqlabError) as in_place:
            raw_io.read(registry.raw_spec("costs"), settings, ProjectPaths(root))
        with pytest.raises(PqlabError) as on_import:
            raw_io.import_file(path, settings, ProjectPaths(tmp_path / f"{root.name}-import"), "costs")
        assert type(in_place.value) is type(on_import.value), what
        assert in_place.value.code == on_import.value.code, what
        # the same words; only the remedy may differ (in place it names the stage that measures the file)
        assert str(in_place.value).split(";")[0] == str(on_import.value).split(";")[0], what


def test_an_edited_raw_file_comes_in_only_through_raw_import_edited_and_every_row_it_feeds_says_so(project,
                                                                                                     capsys):
    raw = project / "data" / "raw" / "costs.parquet"
    edited = project.parent / "costs_edited.parquet"
    shutil.copy(raw, edited)
    _pandas_round_trip(edited, lambda frame: _sign_times_ten(frame, "net_ns"))
    argv_params = ["--params", str(project / "params" / "params.yaml"), "--profile", "smoke"]

    assert cli.main(["raw", "import", str(edited), *argv_params]) == 2  # not pqlab's as it is: refused
    assert "[INPUT_UNVERIFIED]" in _one_line(capsys)
    assert cli.main(["raw", "import", "--edited", str(edited), "--stage", "costs", *argv_params]) == 0
    assert "EDITED BY HAND" in capsys.readouterr().out
    block = io.read_parquet_metadata(raw)["raw_samples"]
    assert block["edited_by_hand"]["imported_from"] == str(edited.resolve())
    assert block["edited_by_hand"]["source_sha256"] == io.file_digest(edited)

    for stage in ("costs", "amortisation"):  # amortisation reads the costs stage's statistics
        assert cli.main(_argv(stage, project, "--analyse-only")) == 0, stage
        metrics = io.read_json(project / "data" / "derived" / f"{stage}_metrics.json")
        assert any("costs.parquet" in name for name in metrics["raw_samples"]["hand_edited"]), stage
    capsys.readouterr()
    report_study.run(None, ProjectPaths(project, project / "params"))
    rows = pd.read_csv(project / "paper_figs" / "report_rows.csv", keep_default_na=False)
    fed = rows["produced_by"].str.split(" ").str[0].isin(["costs", "amortisation"])
    assert fed.sum() > 20
    assert rows.loc[fed, "produced_by"].str.contains("hand-edited input").all()
    assert rows.loc[fed, "reason"].str.contains("EDITED BY HAND").all()
    assert not rows.loc[~fed, "produced_by"].str.contains("hand-edited").any()
    report = (project / "paper_figs" / "REPORT.md").read_text()
    assert "**EDITED BY HAND**: costs.parquet" in report


# --- one line for every failure --------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["info"], ["params"], ["whatif", "amort", "--rate", "10", "--window-s", "30",
                                                         "--storage", "none", "--c-sign", "100", "--c-mac", "1",
                                                         "--c-leaf", "1"]], ids=["info", "params", "whatif"])
def test_a_reader_that_goes_away_is_a_quiet_exit(argv):
    """`pqlab info | head -1`: a BrokenPipeError traceback before; now quiet, with the status SIGPIPE gives."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write (head -1 after its line)
    try:
        done = subprocess.run([PQLAB, *argv], cwd=REPO, stdout=write, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write)
    assert done.stderr == "" and done.returncode == 141


def test_a_usage_error_is_one_line(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["whatif", "case", "--hops", "four"])
    assert exited.value.code == 2
    line = _one_line(capsys)
    assert line == ("pqlab: error [USAGE]: pqlab whatif case: argument --hops: invalid int value: 'four' "
                    "(see pqlab whatif case --help)")


def test_a_deployment_name_with_a_tab_is_refused(capsys):
    assert cli.main(["whatif", "amort", "--name", "line\tone", "--rate", "10", "--window-s", "30", "--storage",
                     "none", "--c-sign", "100", "--c-mac", "1", "--c-leaf", "1"]) == 2
    line = _one_line(capsys)
    assert line.startswith("pqlab: error [PARAMS_INVALID]: --name") and "'\\t' at position 4" in line
    assert capsys.readouterr().out == ""


def test_an_unsupported_figure_format_is_refused_before_computing(capsys):
    started = time.monotonic()
    assert cli.main(["whatif", "case", "--preset", "D3", "--figure", "x.txt"]) == 2
    assert time.monotonic() - started < 5  # no simulation ran (it takes tens of seconds at 300 runs)
    line = _one_line(capsys)
    assert line.startswith("pqlab: error [OUTPUT_UNWRITABLE]: --figure x.txt: .txt is not a figure format")
    assert capsys.readouterr().out == "" and not Path("x.txt").exists()


def _whatif_storage(folder: Path | str, capsys) -> str:
    assert cli.main(["whatif", "amort", "--rate", "10", "--window-s", "30", "--c-sign", "100", "--c-mac", "1",
                     "--c-leaf", "1", "--storage", str(folder)]) == 2
    return _one_line(capsys)


def test_a_storage_folder_that_cannot_be_written_is_one_line_naming_it(capsys):
    line = _whatif_storage("/proc", capsys)
    assert line.startswith("pqlab: error [OUTPUT_UNWRITABLE]: --storage: /proc is not writable")


def _mount(folder: Path, options: str) -> None:
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


def test_a_read_only_storage_folder_is_one_line_naming_it(tmp_path, capsys):
    folder = tmp_path / "ro"
    _mount(folder, "size=1m,ro")
    try:
        line = _whatif_storage(folder, capsys)
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
    assert line == f"pqlab: error [OUTPUT_UNWRITABLE]: --storage: {folder} is not writable (Read-only file system)"


def test_a_full_storage_folder_names_it_not_the_current_folder(small_tmpfs, capsys):  # noqa: F811 - the fixture
    with open(small_tmpfs / "fill", "wb") as handle:
        handle.write(b"\0" * (1 << 20))
    line = _whatif_storage(small_tmpfs, capsys)
    assert line.startswith(f"pqlab: error [OUTPUT_UNWRITABLE]: --storage {small_tmpfs}: no space left there")
    assert str(Path.cwd()) not in line.replace(str(small_tmpfs), "")


# --- signals: a notebook's kernel interrupted, a progress bar interrupted, a pool's parent killed ---------------------

SLEEPER = {"cells": [{"cell_type": "code", "execution_count": None, "id": "p", "metadata": {"tags": ["parameters"]},
                      "outputs": [], "source": "profile = 'smoke'\nparams_path = None"},
                     {"cell_type": "code", "execution_count": None, "id": "s", "metadata": {}, "outputs": [],
                      "source": "import time\nprint('started', flush=True)\nfor _ in range(1200):\n    "
                                "time.sleep(0.1)"}],
           "metadata": {"kernelspec": {"name": "pqlab", "display_name": "Python (pqlab)", "language": "python"}},
           "nbformat": 4, "nbformat_minor": 5}


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in found]


def _wait_for(predicate, timeout: float = 120.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_sigint_to_a_notebooks_kernel_is_one_line(tmp_path):
    """SIGINT reaching the kernel of `pqlab papermill` (Ctrl-C to the group, kill -INT to the kernel): it printed the
    cell's KeyboardInterrupt traceback; now the run says it was interrupted, exit 130."""
    notebook = tmp_path / "sleeper.ipynb"
    notebook.write_text(json.dumps(SLEEPER))
    run = subprocess.Popen([PQLAB, "papermill", str(notebook), str(tmp_path / "out.ipynb")], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=foreground)
    try:
        kernel = _wait_for(lambda: _children(run.pid))[0]
        time.sleep(8)  # the kernel is in the sleeping cell by now (a start takes 1-3 s)
        os.kill(kernel, signal.SIGINT)
        _, err = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 130, err
    assert err.strip().splitlines() == [f"pqlab: interrupted while {notebook} ran; its study replaces an output set "
                                        "only whole, so each is the previous complete set or the new complete one"]


def test_a_kernel_that_dies_while_starting_is_one_line(tmp_path):
    """A kernel that exits before it is ready: jupyter_client's RuntimeError was a traceback."""
    spec = tmp_path / "jupyter" / "kernels" / "dies"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [sys.executable, "-c", "import sys; sys.exit(3)", "-f",
                                                           "{connection_file}"], "display_name": "dies",
                                                  "language": "python"}))
    notebook = tmp_path / "sleeper.ipynb"
    notebook.write_text(json.dumps(SLEEPER))
    done = subprocess.run([PQLAB, "papermill", str(notebook), str(tmp_path / "out.ipynb"), "-k", "dies"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "JUPYTER_PATH": str(tmp_path / "jupyter")})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"pqlab: error [KERNEL_DIED]: {notebook}: the kernel failed while starting: Kernel died before replying to "
        f"kernel_info (executed notebook: {tmp_path / 'out.ipynb'})"]


def test_sigint_during_a_progress_bar_ends_with_the_message(tmp_path):
    """SIGINT during `extended-design-space`: its bar was closed after the message and, on a terminal, drew over it
    (exit 130, no message seen). Now the bars are closed first: the message is the last line."""
    root = faults.make_project(tmp_path / "project")
    run = subprocess.Popen([PQLAB, "extended-design-space", "--params", str(root / "params" / "params.yaml"),
                            "--profile", "quick"], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           preexec_fn=foreground)
    seen = b""
    try:
        while b"point/s]" not in seen:  # the bar is drawing
            chunk = os.read(run.stderr.fileno(), 4096)
            assert chunk, seen.decode(errors="replace")
            seen += chunk
        run.send_signal(signal.SIGINT)
        _, rest = run.communicate(timeout=120)
    finally:
        run.kill()
    err = (seen + rest).decode()
    assert run.returncode == 130
    last = err.rstrip("\n").split("\n")[-1]
    assert last.startswith("pqlab: interrupted; ") and "\r" not in last, err[-500:]
    assert "extended design space:" in err  # the bar was there, and closed before the message


def test_a_bar_interrupted_while_it_starts_still_leaves_the_message_on_its_own_line(monkeypatch, capsys):
    """The race the SIGINT test above can hit under load: the interrupt lands inside tqdm's constructor after its
    first draw, so the bar is never closed and its line stays open; the message must still start a line."""
    import argparse

    from tqdm import tqdm

    def interrupted_while_drawing(self, *args, **kwargs):
        self.fp.write("\rstarting:   0%|          | 0/9 [00:00<?, ?point/s]")
        raise KeyboardInterrupt

    monkeypatch.setattr(tqdm, "refresh", interrupted_while_drawing)

    def run(args):
        tqdm(total=9, desc="starting")

    parser = argparse.ArgumentParser()
    parser.set_defaults(func=run, command="demo")
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    assert cli.main([]) == 130
    err = capsys.readouterr().err
    assert err.endswith("\n") and err.rstrip("\n").split("\n")[-1].startswith("pqlab: interrupted; "), err
    assert "?point/s]\n" in err


def test_sigkill_to_a_run_leaves_no_pool_worker_behind(tmp_path):
    """SIGKILL to `pqlab transport`: its pool workers stayed alive with PPID 1 indefinitely."""
    root = faults.make_project(tmp_path / "project")
    run = subprocess.Popen([PQLAB, "transport", "--measure-only", "--workers", "2", "--quiet", "--params",
                            str(root / "params" / "params.yaml"), "--profile", "smoke"], cwd=root,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    workers: list[int] = []
    try:
        workers = _wait_for(lambda: (lambda kids: kids if len(kids) >= 2 else None)(_children(run.pid)))
        run.kill()
        run.wait(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in workers):
            time.sleep(0.1)
        alive = [pid for pid in workers if Path(f"/proc/{pid}").exists()
                 and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"]
        assert not alive, f"workers still alive after their parent was killed: {alive}"
    finally:
        for pid in workers:  # a failing run must not leave them behind either
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
