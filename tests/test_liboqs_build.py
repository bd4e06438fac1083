"""`make liboqs`: the pinned release built from a local source, refused sources, and the one-line offline failure."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

from pqlab.crypto import liboqs_backend

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "build_liboqs.py"
PIN = tomllib.loads((REPO / "requirements" / "liboqs.toml").read_text())


def _build(prefix: Path, env_overrides: dict[str, str], unset: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(env_overrides)
    return subprocess.run([sys.executable, str(SCRIPT), "--prefix", str(prefix)], env=env, capture_output=True,
                          text=True, timeout=120)


def _one_line_failure(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("pqlab: error [LIBOQS_BUILD]: ")
    return lines[0]


def test_offline_without_a_source_stops_with_one_line_saying_how_to_get_it(tmp_path):
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens, as on a machine without internet
    proxies = {"https_proxy": closed, "HTTPS_PROXY": closed, "no_proxy": "", "NO_PROXY": ""}
    done = _build(tmp_path / "liboqs", proxies, unset=("LIBOQS_SRC",))
    line = _one_line_failure(done)
    assert PIN["url"] in line and PIN["sha256"] in line and "LIBOQS_SRC=" in line
    assert not (tmp_path / "liboqs").exists()


def test_a_source_tree_of_another_release_is_refused(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text(
        'project(liboqs C ASM)\nset(OQS_VERSION_MAJOR 0)\nset(OQS_VERSION_MINOR 15)\nset(OQS_VERSION_PATCH 0)\n'
        'set(OQS_VERSION_PRE_RELEASE "")\n')
    line = _one_line_failure(_build(tmp_path / "liboqs", {"LIBOQS_SRC": str(tmp_path / "src")}))
    assert "is liboqs 0.15.0" in line and PIN["version"] in line


def test_an_archive_that_is_not_the_pinned_release_is_refused(tmp_path):
    archive = tmp_path / "liboqs-0.16.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b'set(OQS_VERSION_MAJOR 0)\n'
        info = tarfile.TarInfo("liboqs-0.16.0/CMakeLists.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    line = _one_line_failure(_build(tmp_path / "liboqs", {"LIBOQS_SRC": str(archive)}))
    assert "SHA-256" in line and PIN["sha256"] in line


def test_the_default_build_has_every_algorithm_pqlab_asks_liboqs_for():
    assert set(liboqs_backend.BUILD_IDS) == set(liboqs_backend._KEMS) | set(liboqs_backend._SIGNERS)


def test_clean_refuses_a_folder_make_liboqs_did_not_write(tmp_path):
    (tmp_path / "liboqs").mkdir()
    (tmp_path / "liboqs" / "mine.txt").write_text("a user's file")
    done = subprocess.run([sys.executable, str(SCRIPT), "--clean", "--prefix", str(tmp_path / "liboqs")],
                          capture_output=True, text=True, timeout=60)
    _one_line_failure(done)
    assert (tmp_path / "liboqs" / "mine.txt").exists()


@pytest.mark.slow
def test_make_liboqs_from_a_local_source_then_info_and_a_signature():
    """With LIBOQS_SRC set, builds liboqs into this project's venv exactly as `make liboqs` does (a no-op when it
    is already built there), then checks that pqlab finds it with no variable set and signs with it."""
    source = os.environ.get("LIBOQS_SRC")
    if not source:
        pytest.skip("LIBOQS_SRC is not set: point it at a liboqs 0.16.0 source tree to build and check it")
    venv = REPO / ".venv"
    if Path(sys.prefix).resolve() != venv.resolve():
        pytest.skip(f"the tests run outside the project's venv ({sys.prefix}), where `make liboqs` installs")
    for algorithm_id in liboqs_backend.BUILD_IDS.values():  # every id is one liboqs 0.16.0 knows
        assert f"OQS_ENABLE_{algorithm_id}" in (Path(source) / ".CMake" / "alg_support.cmake").read_text()
    # -o: never remake the venv from inside the test run, only liboqs
    built = subprocess.run(["make", "-s", "-o", str(venv / ".pqlab-installed"), "liboqs"], cwd=REPO,
                           capture_output=True, text=True, timeout=3600, env=dict(os.environ, LIBOQS_SRC=source))
    assert built.returncode == 0, built.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("OQS_INSTALL_PATH", "CONDA_PREFIX", "LIBOQS_SRC")}
    info = subprocess.run([str(venv / "bin" / "pqlab"), "info", "--json", "--backend", "liboqs"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert info.returncode == 0, info.stderr
    (liboqs,) = json.loads(info.stdout)
    assert liboqs["available"], liboqs["reason"]
    assert liboqs["version"].startswith(f"liboqs {PIN['version']},")
    assert Path(liboqs["library"]).is_relative_to((venv / "liboqs").resolve())
    assert set(liboqs["signatures"]) == set(liboqs_backend._SIGNERS)
    sign = ("from pqlab.crypto import get_signer\n"
            "ours, theirs = get_signer('ML-DSA-65', 'liboqs'), get_signer('ML-DSA-65', 'openssl')\n"
            "pair = ours.keygen()\n"
            "signature = ours.sign(pair.secret, b'checkpoint')\n"
            "print(ours.verify(pair.public, b'checkpoint', signature), theirs.verify(pair.public, b'checkpoint', "
            "signature), ours.verify(pair.public, b'checkpoinT', signature))\n")
    signed = subprocess.run([str(venv / "bin" / "python"), "-c", sign], env=env, capture_output=True, text=True,
                            timeout=120)
    assert signed.returncode == 0, signed.stderr
    assert signed.stdout.split() == ["True", "True", "False"]
