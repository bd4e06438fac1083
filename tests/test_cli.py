"""The command line: `pqlab info`, and one clear error line with a non-zero exit for bad input."""

from __future__ import annotations

import contextlib
import io
import subprocess

import pytest
import yaml

from pqlab import cli


def _run(*args: str) -> subprocess.CompletedProcess:
    """``pqlab ARGS`` in this process (its exit code and both streams); tests/test_entry_points.py and
    tests/test_readme.py run the same entry point as a separate process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    return subprocess.CompletedProcess(["pqlab", *args], code, out.getvalue(), err.getvalue())


def _assert_one_line_error(done: subprocess.CompletedProcess, *fragments: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_info_lists_backends_with_versions_and_sizes():
    done = _run("info")
    assert done.returncode == 0, done.stderr
    assert "openssl: cryptography" in done.stdout
    assert "ML-DSA-65                  1952" in done.stdout
    assert "liboqs" in done.stdout


def test_unknown_backend(tmp_path):
    _assert_one_line_error(_run("info", "--backend", "botan"), "UNKNOWN_BACKEND", "botan")


def _params_file(project, mutate):
    path = project / "params" / "params.yaml"
    raw = yaml.safe_load(path.read_text())
    mutate(raw)
    path.write_text(yaml.safe_dump(raw))
    return path


def test_wrong_type_in_params(project):
    path = _params_file(project, lambda r: r["costs"]["profiles"]["smoke"].__setitem__("trials", "two"))
    _assert_one_line_error(_run("costs", "--params", str(path), "--profile", "smoke"), "costs.profiles.smoke.trials")
    assert not (project / "data").exists()


def test_unknown_algorithm(project):
    """Names are checked against the backends' registry when params are loaded, before any work starts."""
    path = _params_file(project, lambda r: r["costs"].__setitem__("kem", "ML-KEM-777"))
    _assert_one_line_error(_run("costs", "--params", str(path), "--profile", "smoke", "--quiet"),
                           "PARAMS_INVALID", "costs.kem", "ML-KEM-777")
    assert not list(project.rglob("*.parquet"))


def test_unwritable_output_folder_leaves_nothing(project, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    done = _run("costs", "--params", str(project / "params" / "params.yaml"), "--profile", "smoke",
                "--out-dir", str(blocker / "out"), "--quiet")
    _assert_one_line_error(done, "OUTPUT_UNWRITABLE", "not-a-folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-folder", "params"]
    assert not (project / "data").exists()


def test_params_prints_resolved_values(repo_root):
    done = _run("params", "--params", str(repo_root / "params" / "params.yaml"), "--profile", "paper")
    assert done.returncode == 0, done.stderr
    assert '"reps": 1000' in done.stdout


@pytest.mark.slow  # runs the whole full-image study
def test_full_image_on_a_named_directory(project, tmp_path):
    image = tmp_path / "img"
    (image / "sub").mkdir(parents=True)
    (image / "sub" / "a.bin").write_bytes(b"x" * 9000)
    (image / "b.bin").write_bytes(b"y" * 100)
    done = _run("full-image", "--params", str(project / "params" / "params.yaml"), "--profile", "smoke",
                "--image-dir", str(image), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "warm cache" in done.stdout and "cold cache" in done.stdout
    assert "eviction verified by mincore" in done.stdout and " 0 after" in done.stdout
    assert (project / "paper_figs" / "amort" / "table5_image.md").exists()


def test_full_image_without_the_generated_tree_is_one_error_line(project):
    _assert_one_line_error(_run("full-image", "--params", str(project / "params" / "params.yaml"), "--profile",
                                "quick"), "IMAGE_UNREADABLE", "pqlab image-tree")


def test_control_cycle_on_an_unavailable_cpu_is_one_error_line(project):
    path = _params_file(project, lambda r: r["control_cycle"].__setitem__("cpu", 4000))
    _assert_one_line_error(_run("control-cycle", "--params", str(path), "--profile", "smoke"),
                           "CYCLE_UNAVAILABLE", "control_cycle.cpu")
