"""Find a liboqs shared library the way liboqs-python would, without importing ``oqs``.

liboqs-python, imported on a machine without liboqs, counts down, tries to git-clone and
build liboqs, and raises SystemExit on failure. This module answers "is liboqs here?"
with ctypes alone so that ``import oqs`` is only ever reached when it will succeed.

Where it looks, in order: the project's own build (``make liboqs``, under the running
Python's environment), ``$OQS_INSTALL_PATH`` (default ``~/_oqs``, liboqs-python's), the
active conda environment, then the system loader path.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class LiboqsLocation:
    """Where liboqs was found, or why it was not."""

    path: str | None
    reason: str
    install_dir: str | None = None

    @property
    def present(self) -> bool:
        return self.path is not None


def project_install_dir() -> Path:
    """Where ``make liboqs`` installs liboqs: ``liboqs/`` inside the environment running pqlab (``.venv``)."""
    return Path(sys.prefix) / "liboqs"


def _candidate_dirs() -> list[Path]:
    project = project_install_dir()
    dirs: list[Path] = [project / "lib", project / "lib64"]
    install = os.environ.get("OQS_INSTALL_PATH")
    base = Path(install) if install else Path.home() / "_oqs"
    dirs += [base / "lib", base / "lib64"]
    conda = os.environ.get("CONDA_PREFIX")
    if conda:
        dirs.append(Path(conda) / "lib")
    return dirs


@lru_cache(maxsize=1)
def locate_liboqs() -> LiboqsLocation:
    """Return the first loadable liboqs shared library, checked by actually loading it."""
    candidates: list[str] = []
    for directory in _candidate_dirs():
        candidates.append(str(directory / "liboqs.so"))
    for name in ("oqs", "liboqs"):
        found = ctypes.util.find_library(name)
        if found:
            candidates.append(found)
    tried = []
    for candidate in candidates:
        if os.sep in candidate and not Path(candidate).exists():
            continue
        tried.append(candidate)
        try:
            library = ctypes.CDLL(candidate)
        except OSError:
            continue
        if hasattr(library, "OQS_KEM_new") and hasattr(library, "OQS_SIG_new"):
            install_dir = str(Path(candidate).parent.parent) if os.sep in candidate else None
            return LiboqsLocation(candidate, "loaded", install_dir)
    where = ", ".join(str(d) for d in _candidate_dirs())
    detail = f"; tried {', '.join(tried)}" if tried else ""
    return LiboqsLocation(
        None, f"no liboqs shared library in {where} or on the system loader path{detail}"
    )


def loaded_file(function: object) -> str | None:
    """The file a loaded shared library was mapped from, found through one of its functions (``dladdr``)."""

    class _DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    try:
        dladdr = ctypes.CDLL(None).dladdr
    except (OSError, AttributeError):
        return None
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    address = ctypes.cast(function, ctypes.c_void_p).value
    if not address or not dladdr(address, ctypes.byref(info)) or not info.dli_fname:
        return None
    return os.path.realpath(os.fsdecode(info.dli_fname))
