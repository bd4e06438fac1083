"""Machine-readable output stays machine-readable: no backend writes to stdout when it is imported or used."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from pqlab.crypto import liboqs_probe

_USE_EVERY_BACKEND = textwrap.dedent(
    """
    import importlib
    from pqlab import crypto
    from pqlab.crypto.registry import _MODULES
    for module, _kem, _signer in _MODULES.values():
        importlib.import_module(module)
    for status in crypto.backends():
        for algorithm in status.signatures[:1]:
            signer = crypto.get_signer(algorithm, status.name)
            pair = signer.keygen()
            assert signer.verify(pair.public, b"m", signer.sign(pair.secret, b"m"))
    print("done")
    """
)


def test_importing_and_using_every_backend_prints_nothing():
    done = subprocess.run([sys.executable, "-c", _USE_EVERY_BACKEND], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"


def test_pqlab_info_json_parses_and_uses_liboqs_when_it_is_built():
    done = subprocess.run([sys.executable, "-m", "pqlab.cli", "info", "--json"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    report = {entry["backend"]: entry for entry in json.loads(done.stdout)}
    assert set(report) == {"liboqs", "openssl", "pqcrypto"}
    liboqs = liboqs_probe.locate_liboqs()
    assert report["liboqs"]["available"] is liboqs.present, report["liboqs"]["reason"]
    if liboqs.present:  # the case this test exists for: liboqs-python's import-time log line
        assert report["liboqs"]["version"].startswith("liboqs ")
        assert report["liboqs"]["library"].endswith(".so") or ".so." in report["liboqs"]["library"]
        assert report["liboqs"]["signatures"]
