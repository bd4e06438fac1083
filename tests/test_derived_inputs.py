"""One reader for every derived input (issue 24, item 1): files a pqlab stage wrote are read only through pqlab.io,
which checks the SHA-256 recorded in them, so an edited value is INPUT_CORRUPT in the stage that reads it.

The scan below finds every direct read in the library (pandas / pyarrow / json / numpy / yaml readers, ``open``
for reading, ``read_text`` / ``read_bytes``) outside ``pqlab.io`` and ``pqlab.bounded``; each must be listed in
``NOT_DERIVED`` with why the file it reads is not a stage's output. A new direct read of a derived file fails here.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pqlab import cli, io, params
from pqlab.paths import ProjectPaths
from pqlab.studies import amortisation
from tests import faults
from tests.conftest import REPO

LIB = REPO / "lib"
CHECKED_READERS = {"pqlab/io.py", "pqlab/bounded.py"}  # the checked readers themselves
MODULE_READERS = {"pd": {"read_parquet", "read_csv", "read_json", "read_feather", "read_pickle", "read_table"},
                  "pq": {"read_table", "read_schema", "read_metadata", "ParquetFile", "ParquetDataset"},
                  "json": {"load", "loads"}, "np": {"load", "fromfile", "loadtxt", "genfromtxt"},
                  "yaml": {"load", "safe_load", "full_load", "unsafe_load", "compose", "load_all", "safe_load_all"}}
METHOD_READERS = {"read_text", "read_bytes"}

# (module, function) -> why what it reads is not a file a pqlab stage wrote
NOT_DERIVED = {
    ("pqlab/amort/durable.py", "DurableLog.entries"): "the protocol's own append-only log inside a running measurement",
    ("pqlab/experiments/recovery/driver.py", "ProverProcess._tail"): "the prover process's stderr, for an error line",
    ("pqlab/amort/recovery/prover.py", "Identity.from_json"): "the provisioned identity a trial hands its prover",
    ("pqlab/amort/recovery/prover.py", "Prover.__init__"): "the provisioned identity file of a trial's prover",
    ("pqlab/amort/recovery/state.py", "write_state"): "a folder opened to fsync it",
    ("pqlab/amort/recovery/state.py", "read_state"): "the prover's state file, the object under test (rollback)",
    ("pqlab/experiments/recovery/trials.py", "_replace_file"): "a file opened to fsync it",
    ("pqlab/experiments/recovery/trials.py", "arm_trial.on_hook"): "the prover's state file, snapshotted for rollback",
    ("pqlab/experiments/recovery/trials.py", "arm_trial"): "the prover's state file, compared with the stale copy",
    ("pqlab/amort/recovery/wire.py", "read_frame"): "a frame from the prover's pipe",
    ("pqlab/experiments/control_cycle.py", "BackgroundSigner.__enter__"): "the background signer's stdout",
    ("pqlab/experiments/control_cycle.py", "BackgroundSigner.__exit__"): "the background signer's stdout",
    ("pqlab/experiments/control_cycle.py", "steal_ticks"): "/proc/stat",
    ("pqlab/experiments/controller_worker.py", "memory_kib"): "/proc/self/status",
    ("pqlab/experiments/controller_worker.py", "run"): "the reports its parent wrote for this one trial",
    ("pqlab/experiments/controller_worker.py", "main"): "the job on stdin",
    ("pqlab/experiments/image.py", "file_digest"): "an image file being measured (hashed, not parsed)",
    ("pqlab/experiments/pagecache.py", "resident_pages"): "a file opened for mincore",
    ("pqlab/experiments/pagecache.py", "evict"): "a file opened for fsync and fadvise",
    ("pqlab/experiments/scaling.py", "run_worker"): "the worker process's stdout",
    ("pqlab/cache.py", "PartStore._read_manifest"): "the resume cache's manifest: unreadable means recompute, with a "
                                                    "warning (pqlab.cache)",
    ("pqlab/cache.py", "PartStore.load"): "a resume part, verified against the cache manifest's SHA-256 first",
    ("pqlab/cli_whatif.py", "_loadavg"): "/proc/loadavg",
    ("pqlab/crosscheck/ns3_program.py", "program_path"): "the ns-3 scenario program's C++ source, hashed to name its "
                                                          "build",
    ("pqlab/generated.py", "_same_content"): "compared byte for byte with what is about to be written",
    ("pqlab/machine.py", "cpu_model"): "/proc/cpuinfo",
    ("pqlab/machine.py", "frequency_governor"): "/sys cpufreq",
    ("pqlab/machine.py", "cpu_frequency_mhz"): "/sys cpufreq",
    ("pqlab/machine.py", "source_fingerprint"): "the package's own source files",
    ("pqlab/notebook.py", "_parent_programs"): "/proc/<pid>/cmdline",
    ("pqlab/notebook.py", "run_headless"): "the kernel's log, for an error line",
    ("pqlab/pipeline/dvc_file.py", "stale"): "dvc.yaml itself, compared with what the stage registry gives",
    ("pqlab/cli.py", "_pipeline"): "docs/architecture.md itself, compared with what the generator gives",
    ("pqlab/pipeline/architecture.py", "_figure_functions"): "the figure modules' source, for their functions",
    ("pqlab/pipeline/architecture.py", "render"): "params/paper_reference.yaml: the papers' coverage",
    ("pqlab/pipeline/import_closure.py", "_imports"): "the package's own source files, parsed for their imports",
    ("pqlab/pipeline/outputs.py", "recover"): "the commit journal of a killed run (unreadable means nothing to replay)",
    ("pqlab/studies/resolve_params.py", "run"): "its own previous output, compared so unchanged bytes stay untouched",
    ("pqlab/transport/grid.py", "code_fingerprint"): "the simulator's own source files",
}


def _mode_is_write(mode: ast.expr | None) -> bool:
    return isinstance(mode, ast.Constant) and bool(set(str(mode.value)) & set("wax"))


def _is_read(call: ast.Call) -> bool:
    f = call.func
    keyword_mode = next((k.value for k in call.keywords if k.arg == "mode"), None)
    if isinstance(f, ast.Name):
        return f.id == "open" and not _mode_is_write(call.args[1] if len(call.args) > 1 else keyword_mode)
    if not isinstance(f, ast.Attribute):
        return False
    receiver = f.value.id if isinstance(f.value, ast.Name) else None
    if f.attr in MODULE_READERS.get(receiver, ()) or f.attr in METHOD_READERS:
        return True
    if f.attr == "open" and receiver == "os":
        return "O_RDONLY" in ast.unparse(call)
    if f.attr == "open" and receiver != "self":  # Path.open
        return not _mode_is_write(call.args[0] if call.args else keyword_mode)
    return False


def direct_reads(source: str) -> list[tuple[str, int, str]]:
    """(enclosing function, line, call) of every direct file read in ``source``."""
    found: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            named = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            if isinstance(child, ast.Call) and _is_read(child):
                found.append((".".join(scope) or "<module>", child.lineno, ast.unparse(child)[:100]))
            visit(child, [*scope, child.name] if named else scope)

    visit(ast.parse(source), [])
    return found


def library_reads() -> dict[tuple[str, str], list[str]]:
    reads: dict[tuple[str, str], list[str]] = {}
    for path in sorted((LIB / "pqlab").rglob("*.py")):
        module = path.relative_to(LIB).as_posix()
        if module in CHECKED_READERS:
            continue
        for function, line, call in direct_reads(path.read_text()):
            reads.setdefault((module, function), []).append(f"{module}:{line}: {call}")
    return reads


def test_the_scan_finds_the_direct_reads_it_must_refuse():
    source = ("import json\nimport pandas as pd\n"
              "def stats(p):\n    return pd.read_parquet(p)\n"
              "def metrics(p):\n    return json.loads(p.read_text())\n"
              "def raw(p):\n    with open(p) as h:\n        return h.read()\n"
              "def write(p):\n    with open(p, 'w') as h:\n        h.write('x')\n")
    assert [(f, c.split("(")[0]) for f, _, c in direct_reads(source)] == [
        ("stats", "pd.read_parquet"), ("metrics", "json.loads"), ("metrics", "p.read_text"), ("raw", "open")]


def test_every_direct_read_in_the_library_is_of_a_file_no_stage_wrote():
    reads = library_reads()
    unexplained = [line for key, lines in reads.items() if key not in NOT_DERIVED for line in lines]
    assert not unexplained, ("read these through pqlab.io.read_json / read_parquet (checksum verified), or add them "
                             "to NOT_DERIVED saying why the file is not a stage's output:\n" + "\n".join(unexplained))
    stale = sorted(set(NOT_DERIVED) - set(reads))
    assert not stale, f"NOT_DERIVED lists functions that no longer read a file: {stale}"


# --- edited inputs caught by the stage that reads them ------------------------------------------------------------

@pytest.fixture(scope="module")
def costs_project(tmp_path_factory) -> Path:
    """A project after a real (small) costs run: costs_stats.parquet and costs_metrics.json with their SHA-256."""
    root = faults.make_project(tmp_path_factory.mktemp("costs") / "project")
    assert cli.main(faults.command("costs", root)) == 0
    return root


@pytest.fixture
def project(costs_project, tmp_path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(costs_project, root)
    return root


@pytest.fixture
def image_dir(tmp_path) -> Path:
    folder = tmp_path / "image"
    folder.mkdir()
    (folder / "a.bin").write_bytes(bytes(range(256)) * 400)
    return folder


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_amortisation_refuses_costs_stats_with_one_median_multiplied_by_ten(project, capsys):
    path = project / "data" / "derived" / "costs_stats.parquet"
    settings = params.load(project / "params" / "params.yaml", "smoke")
    stats, provenance = amortisation.cost_medians(settings, ProjectPaths(project), progress=False)
    assert provenance["source"] == "data/derived/costs_stats.parquet"  # the written file reads back as it is
    table = pq.read_table(path)
    frame = table.to_pandas()
    row = frame.index[frame["op_id"] == "sign_ML-DSA-65"][0]
    frame.loc[row, "median"] *= 10
    edited = pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False)
    assert edited.schema.metadata == table.schema.metadata  # the recorded SHA-256 is kept, only a value changed
    pq.write_table(edited, path)
    assert pq.read_table(path).to_pandas().loc[row, "median"] == pytest.approx(10 * stats.loc[row, "median"])

    assert cli.main(["amortisation", "--params", str(project / "params" / "params.yaml"), "--profile", "smoke",
                     "--quiet"]) == 2
    line = _one_line(capsys)
    assert line.startswith("pqlab: error [INPUT_CORRUPT]: ") and str(path) in line
    assert "does not match the SHA-256" in line and "rerun the costs stage" in line
    assert not (project / "paper_figs" / "amort" / "table2_amortised.csv").exists()


def _full_image(project: Path, image_dir: Path) -> int:
    return cli.main(["full-image", "--params", str(project / "params" / "params.yaml"), "--profile", "smoke",
                     "--quiet", "--image-dir", str(image_dir)])


def test_full_image_uses_the_cost_study_median_it_recorded(project, image_dir, capsys):
    metrics = io.read_json(project / "data" / "derived" / "costs_metrics.json")
    assert _full_image(project, image_dir) == 0
    written = io.read_json(project / "data" / "derived" / "full_image_metrics.json")
    assert written["signature"]["median_us"] == metrics["table1"]["sign_ML-DSA-65"]["median_us"]


def test_full_image_refuses_costs_metrics_with_one_digit_edited(project, image_dir, capsys):
    path = project / "data" / "derived" / "costs_metrics.json"
    median = io.read_json(path)["table1"]["sign_ML-DSA-65"]["median_us"]
    text = path.read_text()
    needle = f'"median_us": {json.dumps(median)}'
    start = text.index('"sign_ML-DSA-65"')
    at = text.index(needle, start) + len('"median_us": ')
    # the number's last digit: editing its first could make a leading zero, which is not JSON
    digit = max(i for i in range(at, at + len(json.dumps(median))) if text[i].isdigit())
    path.write_text(text[:digit] + str((int(text[digit]) + 1) % 10) + text[digit + 1:])
    json.loads(path.read_text())  # still valid JSON: only a number differs

    assert _full_image(project, image_dir) == 2
    line = _one_line(capsys)
    assert line.startswith("pqlab: error [INPUT_CORRUPT]: ") and str(path) in line
    assert "does not match the SHA-256" in line and "rerun the costs stage" in line
    assert not (project / "data" / "derived" / "full_image_metrics.json").exists()


def test_a_truncated_costs_metrics_is_corrupt_not_missing(project, image_dir, capsys):
    path = project / "data" / "derived" / "costs_metrics.json"
    path.write_bytes(path.read_bytes()[:500])
    assert _full_image(project, image_dir) == 2
    line = _one_line(capsys)
    assert line.startswith("pqlab: error [INPUT_CORRUPT]: ") and str(path) in line and "run the costs stage" in line


def test_an_absent_costs_metrics_says_run_the_costs_stage_first(project, image_dir, capsys):
    (project / "data" / "derived" / "costs_metrics.json").unlink()
    assert _full_image(project, image_dir) == 0
    written = io.read_json(project / "data" / "derived" / "full_image_metrics.json")
    assert written["signature"]["median_us"] is None
    assert written["signature"]["missing"] == "run the costs stage first (dvc repro costs)"
    assert capsys.readouterr().err.strip() == ("pqlab: warning: Table V's ratio to one signature stays empty: run the "
                                               "costs stage first (dvc repro costs)")


def test_a_stage_named_reader_says_which_stage_to_run(tmp_path):
    from pqlab.errors import InputError, StudyInputError

    with pytest.raises(StudyInputError, match=r"run the costs stage first \(dvc repro costs\)"):
        io.read_parquet(tmp_path / "costs_stats.parquet", stage="costs")
    (tmp_path / "x.json").write_text('{"a": 1, "pqlab_sha256": "00"}')
    with pytest.raises(InputError, match="rerun the costs stage"):
        io.read_json(tmp_path / "x.json", stage="costs")
