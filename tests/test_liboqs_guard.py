"""liboqs-python is imported only when a loadable liboqs exists; otherwise nothing reaches for the network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pqlab.crypto import liboqs_probe

_PROBE = textwrap.dedent(
    """
    import json, sys
    events = []
    def audit(event, args):
        if event in ("socket.connect", "socket.getaddrinfo", "os.system"):
            events.append(event)
        elif event == "subprocess.Popen":
            events.append("run:" + str(args[0]).rsplit("/", 1)[-1])
    sys.addaudithook(audit)
    import pqlab.crypto as crypto
    statuses = {b.name: b.available for b in crypto.backends()}
    print(json.dumps({"oqs_imported": "oqs" in sys.modules, "events": events, "statuses": statuses}))
    """
)


_FIND_LIBRARY_TOOLS = {"run:ldconfig", "run:gcc", "run:cc", "run:ld", "run:objdump", "run:sh"}


def _run(env_overrides: dict[str, str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OQS_INSTALL_PATH", "CONDA_PREFIX")}
    env.update(env_overrides)
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_without_liboqs_oqs_is_never_imported_and_no_network_is_touched(tmp_path):
    if liboqs_probe.locate_liboqs().present:
        pytest.skip("liboqs is installed here; this test needs a machine without it")
    result = _run({"HOME": str(tmp_path), "OQS_INSTALL_PATH": str(tmp_path / "no-oqs")})
    assert result["oqs_imported"] is False
    # ctypes.util.find_library may ask ldconfig/gcc/ld where libraries are; nothing else may run.
    unexpected = [e for e in result["events"] if e not in _FIND_LIBRARY_TOOLS]
    assert unexpected == []
    assert result["statuses"]["liboqs"] is False
    assert result["statuses"]["openssl"] or result["statuses"]["pqcrypto"]


def test_a_file_that_is_not_a_loadable_library_does_not_count(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "liboqs.so").write_bytes(b"not an ELF file")
    if liboqs_probe.locate_liboqs().present:
        pytest.skip("a real liboqs is installed on the loader path here")
    result = _run({"HOME": str(tmp_path), "OQS_INSTALL_PATH": str(tmp_path)})
    assert result["oqs_imported"] is False
    assert result["statuses"]["liboqs"] is False


def test_probe_reason_names_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("OQS_INSTALL_PATH", str(tmp_path / "elsewhere"))
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    liboqs_probe.locate_liboqs.cache_clear()
    try:
        location = liboqs_probe.locate_liboqs()
        if location.present:
            pytest.skip("liboqs found on the system loader path")
        assert str(tmp_path / "elsewhere" / "lib") in location.reason
    finally:
        liboqs_probe.locate_liboqs.cache_clear()
