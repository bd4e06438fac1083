"""Run `pqlab` commands in processes forked from one interpreter that has already imported the CLI and every study.

A fresh `python -m pqlab.cli` spends about two seconds importing pandas, scipy, matplotlib and the study before it
does anything; the suite runs a few dozen whole commands (the session's smoke runs, the fault-injection runs), so
each runs in a process forked from a fork server that imported them once. The child is a real process calling
``pqlab.cli.main(argv)`` — what the `pqlab` entry point calls — with its own working directory, the caller's
environment and its file descriptors 1 and 2 sent to files. The entry points themselves (the `pqlab` script,
``python -m pqlab.cli``, exit codes, one-line errors) are tested as fresh processes in tests/test_entry_points.py.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import uuid
from pathlib import Path

from pqlab.pipeline import registry

# tests.faults holds the fault-injection runs' target; every stage's study module, as the registry names them
PRELOAD = ["pqlab.cli", "tests.faults", *(f"pqlab.studies.{stage.name}" for stage in registry.STAGES)]

_CONTEXT = None


def context():
    """The fork-server context, started on first use (its preload runs once per test process)."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = multiprocessing.get_context("forkserver")
        _CONTEXT.set_forkserver_preload(PRELOAD)
    return _CONTEXT


def _main(argv: list[str], cwd: str, environment: dict[str, str], result: str) -> None:
    """In the child: the caller's environment and working directory, stdout and stderr into files, then the CLI."""
    import signal

    from pqlab import cli

    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as in a fresh pqlab process
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(cwd)
    with open(f"{result}.stdout", "w") as out, open(f"{result}.stderr", "w") as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
    try:
        code = cli.main(argv)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    Path(result).write_text(json.dumps({"code": code}))


def run(argv: list[str], cwd: Path, timeout: float = 900) -> tuple[int, str, str]:
    """``pqlab <argv>`` in a forked process: (exit code, stdout, stderr); a killed or timed-out run has the negative
    signal number (-9) as its code, and a Python exception that escaped ``main`` exit code 1 (as the interpreter)."""
    result = Path(cwd) / f".pqlab-cli-{uuid.uuid4().hex[:12]}.json"
    process = context().Process(target=_main, args=(list(argv), str(cwd), dict(os.environ), str(result)))
    process.start()
    process.join(timeout)
    if process.is_alive():
        process.kill()
        process.join()
    texts = []
    for suffix in (".stdout", ".stderr"):
        path = Path(f"{result}{suffix}")
        texts.append(path.read_text(errors="replace") if path.exists() else "")
        path.unlink(missing_ok=True)
    code = json.loads(result.read_text())["code"] if process.exitcode == 0 and result.exists() else process.exitcode
    result.unlink(missing_ok=True)
    return code, texts[0], texts[1]
