"""liboqs-python is imported only when a loadable liboqs exists; otherwise nothing reaches for the network."""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pqlab.crypto import liboqs_probe

# The child hides the project's own build (`make liboqs`, .venv/liboqs) by pointing the probe at an empty
# folder: the machine "without liboqs" these tests need is this one minus that build. Only a liboqs on the
# system loader path, which the child would find too, makes them skip.
_PROBE = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    events = []
    def audit(event, args):
        if event in ("socket.connect", "socket.getaddrinfo", "os.system"):
            events.append(event)
        elif event == "subprocess.Popen":
            events.append("run:" + str(args[0]).rsplit("/", 1)[-1])
    sys.addaudithook(audit)
    from pqlab.crypto import liboqs_probe
    liboqs_probe.project_install_dir = lambda: Path(sys.argv[1])
    import pqlab.crypto as crypto
    statuses = {b.name: b.available for b in crypto.backends()}
    print(json.dumps({"oqs_imported": "oqs" in sys.modules, "events": events, "statuses": statuses}))
    """
)


_FIND_LIBRARY_TOOLS = {"run:ldconfig", "run:gcc", "run:cc", "run:ld", "run:objdump", "run:sh"}


def _system_liboqs() -> str | None:
    """A liboqs the system loader finds by name: the one place the child process would still see one."""
    return ctypes.util.find_library("oqs") or ctypes.util.find_library("liboqs")


def _skip_if_the_system_has_liboqs() -> None:
    found = _system_liboqs()
    if found:
        pytest.skip(f"a liboqs is on the system loader path ({found}); a child process would load it too")


def _run(tmp_path: Path, env_overrides: dict[str, str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OQS_INSTALL_PATH", "CONDA_PREFIX")}
    env.update(env_overrides)
    no_project_build = tmp_path / "no-project-build"
    done = subprocess.run([sys.executable, "-c", _PROBE, str(no_project_build)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_without_liboqs_oqs_is_never_imported_and_no_network_is_touched(tmp_path):
    _skip_if_the_system_has_liboqs()
    result = _run(tmp_path, {"HOME": str(tmp_path), "OQS_INSTALL_PATH": str(tmp_path / "no-oqs")})
    assert result["oqs_imported"] is False
    # ctypes.util.find_library may ask ldconfig/gcc/ld where libraries are; nothing else may run.
    unexpected = [e for e in result["events"] if e not in _FIND_LIBRARY_TOOLS]
    assert unexpected == []
    assert result["statuses"]["liboqs"] is False
    assert result["statuses"]["openssl"] or result["statuses"]["pqcrypto"]


def test_a_file_that_is_not_a_loadable_library_does_not_count(tmp_path):
    _skip_if_the_system_has_liboqs()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "liboqs.so").write_bytes(b"not an ELF file")
    result = _run(tmp_path, {"HOME": str(tmp_path), "OQS_INSTALL_PATH": str(tmp_path)})
    assert result["oqs_imported"] is False
    assert result["statuses"]["liboqs"] is False


@pytest.fixture
def fresh_probe(tmp_path, monkeypatch):
    """The probe with its cache cleared before and after, and no conda environment."""
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    liboqs_probe.locate_liboqs.cache_clear()
    yield liboqs_probe
    liboqs_probe.locate_liboqs.cache_clear()


def test_probe_reason_names_where_it_looked(tmp_path, monkeypatch, fresh_probe):
    _skip_if_the_system_has_liboqs()
    monkeypatch.setattr(fresh_probe, "project_install_dir", lambda: tmp_path / "project")
    monkeypatch.setenv("OQS_INSTALL_PATH", str(tmp_path / "elsewhere"))
    location = fresh_probe.locate_liboqs()
    assert not location.present
    assert str(tmp_path / "project" / "lib") in location.reason
    assert str(tmp_path / "elsewhere" / "lib") in location.reason


def test_the_project_build_is_looked_at_before_oqs_install_path(tmp_path, monkeypatch, fresh_probe):
    monkeypatch.setattr(fresh_probe, "project_install_dir", lambda: tmp_path / "project")
    monkeypatch.setenv("OQS_INSTALL_PATH", str(tmp_path / "elsewhere"))
    dirs = [str(d) for d in fresh_probe._candidate_dirs()]
    assert dirs[:4] == [str(tmp_path / p) for p in ("project/lib", "project/lib64", "elsewhere/lib", "elsewhere/lib64")]


def test_a_built_liboqs_in_the_venv_wins_over_oqs_install_path(tmp_path, monkeypatch, fresh_probe):
    built = fresh_probe.project_install_dir() / "lib" / "liboqs.so"
    if not built.exists():
        pytest.skip(f"no `make liboqs` build in {built.parent.parent}")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "liboqs.so").write_bytes(b"not an ELF file")
    monkeypatch.setenv("OQS_INSTALL_PATH", str(tmp_path))
    assert fresh_probe.locate_liboqs().path == str(built)
