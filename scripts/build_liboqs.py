"""`make liboqs`: build the pinned liboqs release as a shared library into the project's environment.

The release, its archive's SHA-256 and the build tools' pins are in requirements/liboqs.toml. The source is
``LIBOQS_SRC`` (an unpacked release, a checkout, or the release archive itself), otherwise the release archive
downloaded over HTTPS and checked against the pinned SHA-256. The library is installed into
``pqlab.crypto.liboqs_probe.project_install_dir()`` (``.venv/liboqs``), where pqlab looks first, so no variable
is needed. Re-running with the same release and algorithm choice does nothing; ``--clean`` removes the build.
Every failure is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

from pqlab.crypto.liboqs_backend import BUILD_IDS
from pqlab.crypto.liboqs_probe import project_install_dir

ROOT = Path(__file__).resolve().parent.parent
PIN = tomllib.loads((ROOT / "requirements" / "liboqs.toml").read_text())
STAMP = "pqlab-build.json"
DOWNLOAD_TIMEOUT_S = 30


class BuildError(Exception):
    """A failure `make liboqs` reports as one line."""


def _algorithms(choice: str) -> list[str]:
    if choice == "all":
        return []
    if choice == "default":
        return sorted(set(BUILD_IDS.values()))
    raise BuildError(f"LIBOQS_ALGS={choice!r}: expected 'default' (the algorithms pqlab uses) or 'all'")


def _source_version(source: Path) -> str:
    """The release a liboqs source tree says it is, from its top-level CMakeLists.txt."""
    cmake = source / "CMakeLists.txt"
    if not cmake.is_file():
        raise BuildError(f"LIBOQS_SRC={source}: no CMakeLists.txt there; expected an unpacked liboqs "
                         f"{PIN['version']} release or a checkout of its tag")
    text = cmake.read_text(errors="replace")
    parts = {key: re.search(rf'set\(OQS_VERSION_{key} "?([^")]*)"?\)', text) for key in
             ("MAJOR", "MINOR", "PATCH", "PRE_RELEASE")}
    if not all(parts[key] for key in ("MAJOR", "MINOR", "PATCH")) or "project(liboqs" not in text.replace(" ", ""):
        raise BuildError(f"LIBOQS_SRC={source}: CMakeLists.txt is not liboqs's (no OQS_VERSION_*)")
    version = ".".join(parts[key].group(1) for key in ("MAJOR", "MINOR", "PATCH"))
    return version + (parts["PRE_RELEASE"].group(1) if parts["PRE_RELEASE"] else "")


def _check_source(source: Path) -> Path:
    version = _source_version(source)
    if version != PIN["version"]:
        raise BuildError(f"LIBOQS_SRC={source} is liboqs {version}; pqlab pins {PIN['version']} "
                         f"(requirements/liboqs.toml)")
    return source


def _verify_archive(archive: Path, origin: str) -> None:
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != PIN["sha256"]:
        raise BuildError(f"{origin}: SHA-256 {digest} is not the pinned {PIN['sha256']} of liboqs "
                         f"{PIN['version']} (requirements/liboqs.toml); refusing to build it")


def _unpack(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    tops = [p for p in into.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise BuildError(f"{archive}: expected one top-level folder in the release archive, found {len(tops)}")
    return tops[0]


def _how_to_get_source(why: str) -> str:
    return (f"liboqs {PIN['version']} source not reachable ({why}): on a machine with internet download "
            f"{PIN['url']} (SHA-256 {PIN['sha256']}), then run `make liboqs LIBOQS_SRC=<that file or the folder "
            f"it unpacks to>`")


def _download(into: Path) -> Path:
    archive = into / f"liboqs-{PIN['version']}.tar.gz"
    if not PIN["url"].startswith("https://"):
        raise BuildError(f"requirements/liboqs.toml: url must be https, got {PIN['url']}")
    try:
        with urllib.request.urlopen(PIN["url"], timeout=DOWNLOAD_TIMEOUT_S) as response, archive.open("wb") as out:
            shutil.copyfileobj(response, out)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise BuildError(_how_to_get_source(" ".join(str(reason).split()))) from None
    _verify_archive(archive, PIN["url"])
    print(f"pqlab: downloaded {PIN['url']} (SHA-256 verified)", file=sys.stderr, flush=True)
    return archive


def _source(work: Path) -> Path:
    given = os.environ.get("LIBOQS_SRC", "").strip()
    if given:
        path = Path(given).expanduser()
        if path.is_dir():
            return _check_source(path.resolve())
        if path.is_file():
            _verify_archive(path, f"LIBOQS_SRC={path}")
            return _check_source(_unpack(path, work / "src"))
        raise BuildError(f"LIBOQS_SRC={given}: no such folder or file")
    archive = _download(work)
    return _check_source(_unpack(archive, work / "src"))


def _cmake_version(cmake: str) -> tuple[int, ...]:
    done = subprocess.run([cmake, "--version"], capture_output=True, text=True)
    found = re.search(r"version (\d+)\.(\d+)", done.stdout)
    return tuple(int(x) for x in found.groups()) if found else (0,)


def _tools() -> dict[str, str]:
    """cmake and ninja from the system when usable, otherwise PyPI's wheels installed into the venv."""
    bin_dir = Path(sys.executable).parent
    path = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
    minimum = tuple(int(x) for x in PIN["cmake_minimum"].split("."))
    cmake, ninja = shutil.which("cmake", path=path), shutil.which("ninja", path=path)
    if cmake is not None and _cmake_version(cmake) < minimum:
        cmake = None
    missing = [PIN[name] for name, found in (("cmake", cmake), ("ninja", ninja)) if found is None]
    if missing:
        print(f"pqlab: installing {' '.join(missing)} from PyPI into the venv", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *missing],
                              capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
            raise BuildError(f"cmake/ninja: none usable here (cmake >= {PIN['cmake_minimum']}) and "
                             f"`pip install {' '.join(missing)}` failed: {last}")
        cmake = cmake or shutil.which("cmake", path=str(bin_dir))
        ninja = ninja or shutil.which("ninja", path=str(bin_dir))
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        raise BuildError("no C compiler (cc, gcc or clang); on Debian/Ubuntu: sudo apt-get install build-essential")
    if cmake is None or ninja is None:
        raise BuildError("cmake/ninja: installed from PyPI but not found in the venv's bin folder")
    return {"cmake": cmake, "ninja": ninja, "cc": compiler}


def _run(command: list[str], log: Path, what: str, env: dict[str, str]) -> None:
    """Run one build step, its output into the log; on a terminal, ninja's one-line progress stays visible."""
    progress = what == "build" and sys.stdout.isatty()
    with log.open("a") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        done = subprocess.run(command, stdout=None if progress else out, stderr=out, env=env)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-15:]
        print("\n".join(tail), file=sys.stderr)
        raise BuildError(f"liboqs {what} failed (exit {done.returncode}); the end of its log is above")


def _library_version(library: Path) -> str:
    handle = ctypes.CDLL(str(library))
    handle.OQS_version.restype = ctypes.c_char_p
    return handle.OQS_version().decode()


def _built(prefix: Path, choice: str) -> dict | None:
    stamp = prefix / STAMP
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return None
    library = prefix / "lib" / "liboqs.so"
    wanted = {"version": PIN["version"], "algorithms": choice, "ids": _algorithms(choice)}
    if not library.exists() or any(recorded.get(k) != v for k, v in wanted.items()):
        return None
    return recorded


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def build(prefix: Path, choice: str, jobs: int) -> None:
    """Build liboqs into ``prefix`` unless the same release and algorithm choice is already there."""
    ids = _algorithms(choice)
    if _built(prefix, choice):
        print(f"pqlab: liboqs {PIN['version']} ({choice} algorithms) is already built in {_shown(prefix)}; "
              f"`make clean-liboqs` removes it")
        return
    started = time.monotonic()
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pqlab-liboqs-") as tmp:
        work = Path(tmp)
        source = _source(work)
        tools = _tools()
        build_dir, staging, log = work / "build", work / "staging", work / "build.log"
        env = dict(os.environ, CC=tools["cc"])
        configure = [tools["cmake"], "-S", str(source), "-B", str(build_dir), "-G", "Ninja",
                     f"-DCMAKE_MAKE_PROGRAM={tools['ninja']}", "-DCMAKE_BUILD_TYPE=Release",
                     "-DBUILD_SHARED_LIBS=ON", "-DOQS_BUILD_ONLY_LIB=ON", f"-DCMAKE_INSTALL_PREFIX={prefix}"]
        if ids:
            configure.append(f"-DOQS_MINIMAL_BUILD={';'.join(ids)}")
        what = f"{len(ids)} algorithms pqlab uses" if ids else "all algorithms"
        print(f"pqlab: building liboqs {PIN['version']} ({what}) from {source} with {jobs} jobs", flush=True)
        _run(configure, log, "configure", env)
        _run([tools["cmake"], "--build", str(build_dir), "--parallel", str(jobs)], log, "build", env)
        _run([tools["cmake"], "--install", str(build_dir)], log, "install", dict(env, DESTDIR=str(staging)))
        installed = staging / prefix.relative_to(prefix.anchor)
        library = installed / "lib" / "liboqs.so"
        if not library.exists():
            raise BuildError(f"liboqs install produced no {library.relative_to(staging)}")
        version = _library_version(library)
        if version != PIN["version"]:
            raise BuildError(f"the built library reports liboqs {version}, not {PIN['version']}")
        (installed / STAMP).write_text(json.dumps({"version": version, "algorithms": choice, "ids": ids,
                                                   "source": str(source)}, indent=2) + "\n")
        # copied beside the prefix, then swapped in by renames: an interrupted build leaves the previous one whole
        new, old = prefix.with_name(prefix.name + ".new"), prefix.with_name(prefix.name + ".old")
        for leftover in (new, old):
            shutil.rmtree(leftover, ignore_errors=True)
        shutil.copytree(installed, new, symlinks=True)
        if prefix.exists():
            prefix.rename(old)
        new.rename(prefix)
        shutil.rmtree(old, ignore_errors=True)
    print(f"pqlab: liboqs {PIN['version']} built in {_shown(prefix)} in {time.monotonic() - started:.0f} s; "
          f"pqlab finds it without a variable (`pqlab info`)")


def clean(prefix: Path) -> None:
    """Remove what `make liboqs` installed (only a folder it wrote, recognised by its stamp)."""
    if not prefix.exists():
        return
    if not (prefix / STAMP).exists():
        raise BuildError(f"{prefix} was not written by `make liboqs` (no {STAMP}); remove it yourself if you mean to")
    shutil.rmtree(prefix)
    print(f"pqlab: removed {_shown(prefix)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algorithms", default=os.environ.get("LIBOQS_ALGS") or "default",
                        help="'default' (the algorithms pqlab uses) or 'all'")
    parser.add_argument("--prefix", type=Path, default=project_install_dir(),
                        help="install folder (default: the venv's liboqs/, where pqlab looks first; "
                             "elsewhere, set OQS_INSTALL_PATH to it)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--clean", action="store_true", help="remove the installed library")
    args = parser.parse_args(argv)
    prefix = args.prefix.expanduser().absolute()
    try:
        if args.clean:
            clean(prefix)
        else:
            build(prefix, args.algorithms, max(1, args.jobs))
    except BuildError as exc:
        print(f"pqlab: error [LIBOQS_BUILD]: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pqlab: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
