"""The ns-3 scenario program: build it against Debian's libns3 (pkg-config), find it, run it on scenario files.

``python -m pqlab.crosscheck.ns3_program build`` (called by ``make setup``) compiles ``ns3/thread_chain.cc`` into
``build/ns3/`` of the checkout (``~/.cache/pqlab/ns3`` for an installed package), named by the hash of the source
and of the ns-3 version, so a changed program or library is rebuilt; the stage builds it too when it is missing.
``PQLAB_NS3_PROGRAM`` names a program built elsewhere. Without ns-3, :func:`status` says why and what to install.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pqlab.errors import PqlabError

SOURCE = Path(__file__).parent / "ns3" / "thread_chain.cc"
MODULES = ("ns3-lr-wpan", "ns3-sixlowpan", "ns3-internet", "ns3-propagation", "ns3-spectrum", "ns3-mobility",
           "ns3-network", "ns3-core")
DEBIAN_PACKAGES = ("libns3-dev", "pkg-config", "g++")
APT_LINE = "sudo apt-get install -y " + " ".join(DEBIAN_PACKAGES)
PROGRAM_ENV = "PQLAB_NS3_PROGRAM"
REQUIRE_ENV = "PQLAB_REQUIRE_NS3"
RESULT_FIELDS = ("run", "ok", "time_us", "failed_message", "retransmissions", "spurious", "frames", "ack_frames",
                 "mac_drops", "noack_drops", "cca_drops", "phy_rx_drops", "loss_model_drops", "datagrams_sent",
                 "datagrams_recv", "psdu_bytes", "turnaround_ignored", "phy_fault")


class Ns3Error(PqlabError, RuntimeError):
    """ns-3 or its scenario program is missing, does not build, or a run failed."""

    code = "NS3_UNAVAILABLE"


@dataclass(frozen=True)
class Ns3Output:
    """One invocation's results (a row per run) and what ns-3 reported it used (``# key value`` lines)."""

    runs: pd.DataFrame
    used: dict[str, str]


def _pkg_config(*args: str) -> str:
    done = subprocess.run(["pkg-config", *args, *MODULES], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Ns3Error(f"pkg-config cannot find ns-3's modules ({done.stderr.strip()[:200]}); on Debian: {APT_LINE}")
    return done.stdout.strip()


def version() -> str:
    """The installed ns-3 version (pkg-config), or raise Ns3Error saying what to install."""
    if shutil.which("pkg-config") is None:
        raise Ns3Error(f"pkg-config not found; on Debian: {APT_LINE}")
    return _pkg_config("--modversion").splitlines()[0]


def _build_dir() -> Path:
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "setup.py").exists() and os.access(checkout, os.W_OK):
        return checkout / "build" / "ns3"
    return Path.home() / ".cache" / "pqlab" / "ns3"


def program_path() -> Path:
    """Where the program for this source and this ns-3 version lives (built or not)."""
    digest = hashlib.blake2b(SOURCE.read_bytes() + version().encode(), digest_size=6).hexdigest()
    return _build_dir() / f"thread_chain-{digest}"


def _link_flags() -> list[str]:
    # pkg-config lists a few absolute .so paths (gsl, sqlite) the libraries already link themselves; on a machine
    # without their -dev packages those paths do not exist, so only -l/-L flags are passed (order kept)
    flags = []
    for flag in _pkg_config("--libs").split():
        if flag.startswith(("-l", "-L")) and flag not in flags:
            flags.append(flag)
    return flags


def build(*, quiet: bool = False) -> Path:
    """Compile the program if it is not built yet for this source and ns-3; return its path."""
    target = program_path()
    if target.exists():
        return target
    compiler = shutil.which(os.environ.get("CXX", "g++"))
    if compiler is None:
        raise Ns3Error(f"no C++ compiler (g++) found; on Debian: {APT_LINE}")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".build-", delete=False) as tmp:
        partial = Path(tmp.name)
    command = [compiler, "-std=c++17", "-O2", "-Wall", "-Wno-unused-parameter", "-o", str(partial), str(SOURCE),
               *_link_flags()]
    if not quiet:
        print(f"pqlab: building the ns-3 scenario program ({target.name})", file=sys.stderr)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        raise Ns3Error(f"the ns-3 scenario program did not build:\n{done.stderr[-3000:]}")
    partial.chmod(0o755)
    os.replace(partial, target)
    return target


def locate(*, build_if_missing: bool = True) -> Path:
    """The program to run: ``PQLAB_NS3_PROGRAM``, else this checkout's build (built now if missing)."""
    override = os.environ.get(PROGRAM_ENV)
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise Ns3Error(f"{PROGRAM_ENV}={override} is not an executable file")
        return path
    path = program_path()
    if path.exists():
        return path
    if not build_if_missing:
        raise Ns3Error(f"the ns-3 scenario program is not built ({path}); run: make setup")
    return build()


def status() -> tuple[bool, str]:
    """(True, program path) when the cross-check can run here, else (False, why and what to install)."""
    try:
        return True, str(locate())
    except Ns3Error as exc:
        return False, str(exc)


def parse(text: str) -> Ns3Output:
    """Parse the program's output: ``# key value`` lines and one ``run ...`` line per run."""
    used: dict[str, str] = {}
    rows = []
    for line in text.splitlines():
        if line.startswith("# "):
            key, _, value = line[2:].partition(" ")
            used[key] = value
        elif line.startswith("run "):
            values = line.split()[1:]
            if len(values) != len(RESULT_FIELDS):
                raise Ns3Error(f"ns-3 program: a run line with {len(values)} fields, expected {len(RESULT_FIELDS)}")
            rows.append([int(v) for v in values])
    return Ns3Output(pd.DataFrame(rows, columns=list(RESULT_FIELDS), dtype="int64"), used)


def run_file(program: Path, scenario_text: str, *, timeout_s: float = 3600.0) -> Ns3Output:
    """Run the program on one scenario file's text; raise Ns3Error with its message when it fails."""
    with tempfile.TemporaryDirectory(prefix="pqlab-ns3-") as tmp:
        path = Path(tmp) / "scenario.txt"
        path.write_text(scenario_text)
        try:
            done = subprocess.run([str(program), str(path)], capture_output=True, text=True, check=False,
                                  timeout=timeout_s, cwd=tmp)
        except subprocess.TimeoutExpired as exc:
            raise Ns3Error(f"ns-3 program: no result within {timeout_s:.0f} s") from exc
    if done.returncode != 0:
        kept = Path(tempfile.mkstemp(prefix="pqlab-ns3-failed-", suffix=".txt")[1])
        kept.write_text(scenario_text)
        last = [line for line in done.stdout.splitlines() if line.startswith("run ")][-1:]
        raise Ns3Error(f"ns-3 program exited {done.returncode} (scenario kept in {kept}; last finished run: "
                       f"{last[0].split()[1] if last else 'none'}): {done.stderr[-2000:]}")
    return parse(done.stdout)


def main(argv: list[str] | None = None) -> int:
    """``build``: compile the program (prints why not, exit 0, unless ``--strict``); ``status``: say if it runs."""
    args = list(sys.argv[1:] if argv is None else argv)
    strict = "--strict" in args
    args = [a for a in args if a != "--strict"]
    if args == ["build"]:
        try:
            print(f"pqlab: ns-3 scenario program: {build(quiet=True)}")
            return 0
        except Ns3Error as exc:
            print(f"pqlab: the transport cross-check will not run: {exc}")
            return 1 if strict else 0
    if args == ["status"]:
        ok, what = status()
        print(what)
        return 0 if ok else 1
    print("usage: python -m pqlab.crosscheck.ns3_program build|status [--strict]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
