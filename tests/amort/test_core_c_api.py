"""amort_core compiles and runs as plain C (no Python), and agrees with the reference model."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pqlab.amort.deployment import Deployment
from pqlab.amort.fastpath.api import open_controller, open_device
from pqlab.amort.profile import SECURE

HERE = Path(__file__).resolve().parent
CORE = HERE.parent.parent / "lib" / "pqlab" / "amort" / "fastpath" / "native"


def compile_c(out: Path, sources: list[Path], *flags: str) -> Path:
    """``sources`` built into the program ``out`` with libcrypto, -Wall -Wextra -Werror (skip without a toolchain)."""
    cc, pkg = shutil.which("cc"), shutil.which("pkg-config")
    if cc is None or pkg is None:
        pytest.skip("needs cc and pkg-config")
    crypto = subprocess.run([pkg, "--cflags", "--libs", "libcrypto"], capture_output=True, text=True)
    if crypto.returncode != 0:
        pytest.skip("libcrypto development files not found (libssl-dev)")
    subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *flags, f"-I{CORE}", *map(str, sources), "-o",
                    str(out), *crypto.stdout.split()], check=True)
    return out


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return compile_c(tmp_path_factory.mktemp("c") / "core_api", [HERE / "c" / "core_api.c", CORE / "amort_core.c"],
                     "-O2")


def test_c_program_matches_the_reference(program: Path) -> None:
    dev_id, k_evid, seed = b"PLC-0042", bytes(range(32)), bytes(range(32, 64))
    lines = subprocess.run([str(program), dev_id.hex(), k_evid.hex(), seed.hex(), "12", "10", "7"],
                           capture_output=True, text=True, check=True).stdout.split("\n")
    # amort_core's defaults are the library's: the hardened variant, the implied wire format (pqlab.amort.profile)
    deployment = Deployment(b"CTRL-001", profile=SECURE)
    device = open_device("reference", deployment, dev_id, 1, k_evid, seed, tag_len=12, chain_length=10)
    reports = [device.report(bytes([i]) + bytes(31), 1000 + i) for i in range(7)]
    assert lines[0] == device.anchor.hex()
    assert lines[1:8] == [r.hex() for r in reports]
    assert lines[8].split() == ["OK"] * 7  # (before them, an ingest without a clock was refused: E_CLOCK)
    assert lines[9].split() == ["SEQ_DUPLICATE"] * 7
    ctl = open_controller("reference", deployment)
    ctl.register_epoch(dev_id, 1, k_evid, tag_len=12, not_before=0)
    ctl.ingest(reports, now=1007)
    assert lines[10] == ctl.checkpoint_body().hex()


def test_guarded_sizes_and_counters_give_typed_statuses(tmp_path_factory) -> None:
    """Issue 22 item 6: every size and counter guard of amort_core.c, driven past its limit by a C program that
    compiles the core into itself: refused with a status (or a 0 size), never wrapped."""
    out = compile_c(tmp_path_factory.mktemp("limits") / "limits", [HERE / "c" / "limits.c"], "-O1",
                    "-Wno-unused-function")
    lines = dict(line.split() for line in subprocess.run([str(out)], capture_output=True, text=True,
                                                          check=True).stdout.splitlines())
    assert lines == {
        # body_size counts the signed octets: the fixed 117 less the 2-octet signature length
        "body_size_spans": "0", "body_size_exceptions": "0", "body_size_ok": str(115 + 2 * 56),
        "table_grown": "0", "reserve": "0",
        "tree_size_full": "E_LIMIT", "index_full": "E_LIMIT", "checkpoint_ok": "OK",
        "controller_bad_options": "E_ARGUMENT", "device_next_seq_zero": "E_ARGUMENT",
        "device_last_seq": "OK", "device_seq_exhausted": "EPOCH_STALE",
    }
