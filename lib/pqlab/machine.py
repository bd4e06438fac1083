"""Facts about the machine and software a measurement ran on, recorded beside every raw sample."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import platform
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

_LIBRARIES = ("pqlab", "numpy", "scipy", "pandas", "pyarrow", "cryptography", "pqcrypto", "liboqs-python")


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (falls back to platform.processor())."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def frequency_governor() -> str | None:
    """The cpufreq scaling governor of CPU 0, when the kernel exposes it."""
    try:
        return Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").read_text().strip()
    except OSError:
        return None


def cpu_frequency_mhz() -> float | None:
    """The current frequency of CPU 0 in MHz, when readable."""
    try:
        return int(Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq").read_text()) / 1000.0
    except (OSError, ValueError):
        return None


def git_commit(where: str | Path | None = None) -> str | None:
    """The HEAD commit of the repository containing ``where`` (+ "-dirty" when modified)."""
    cwd = Path(where) if where else Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd, capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}-dirty" if dirty else commit


def library_versions() -> dict[str, str]:
    """Installed versions of the libraries that shape a measurement."""
    versions = {"python": platform.python_version()}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """BLAKE2 hash of the pqlab package's own source files (.py, .c, .h): which code produced a result,
    stable across runs, unlike a git "dirty" flag that any edited file flips."""
    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=12)
    for path in sorted(p for p in package.rglob("*") if p.suffix in (".py", ".c", ".h") and p.is_file()):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run_metadata(params: Any = None, backends: dict[str, str] | None = None, *, stable: bool = False) -> dict[str, Any]:
    """The metadata block stored with raw samples: machine, software, code version, time and params.

    ``stable``: for model outputs that must be byte-identical across runs — no timestamp, no clock frequency,
    and the code identified by HEAD plus the package's source fingerprint instead of a dirty flag.
    """
    meta = {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "frequency_governor": frequency_governor(),
        "platform": platform.platform(),
        "libraries": library_versions(),
        "backends": backends or {},
        "source_fingerprint": source_fingerprint(),
        "params": params,
    }
    if stable:
        commit = git_commit()
        meta["git_commit"] = commit.removesuffix("-dirty") if commit else None
        return meta
    return meta | {"git_commit": git_commit(), "cpu_frequency_mhz": cpu_frequency_mhz(),
                   "timestamp_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
