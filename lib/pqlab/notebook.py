"""Notebook helpers: the first code cell's ``setup``, widgets only with a live front end, and ``pqlab papermill``.

Every study notebook's first code cell calls :func:`setup`, which finds ``params/params.yaml`` from the
repository wherever the notebook runs, and :func:`project_paths`: run by the pipeline (``pipeline = True``) a
notebook writes into the project, opened by hand into ``exploration/``. A :class:`pqlab.errors.PqlabError` raised in
any cell shows as its one line (``pqlab: error [CODE]: field: message``; set ``PQLAB_TRACEBACK=1`` for the
traceback). Interactive widget
cells go through :func:`interact`, which only builds widgets when a live Jupyter front end is attached, so a
headless run (papermill, tests) never waits on one. ``pqlab papermill`` (used by every notebook stage in
dvc.yaml) runs a notebook headless with papermill's execution timeout and turns every failure into one line on
stderr with a non-zero exit, so ``dvc repro`` shows that line instead of a papermill traceback.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pqlab.errors import NotebookError, ParamsError

DEFAULT_PARAMS_PATH = "../params/params.yaml"  # the parameters cell's default: right when run from notebooks/
EXPLORATION_DIR = "exploration"  # a notebook run by hand writes its outputs here, never into the pipeline's
HEADLESS_ENV = "PQLAB_HEADLESS"          # set: never build widgets (pqlab papermill and the tests set it)
INTERACTIVE_ENV = "PQLAB_INTERACTIVE"    # set: always build widgets (a front end the detection misses)
WIDGETS_ENV = "PQLAB_WIDGETS"            # "1" / "0": widgets on / off, whatever else is set
_BATCH_RUNNERS = ("papermill", "nbclient", "nbconvert", "pytest")
_ONE_LINE = re.compile(r"^pqlab: error \[([A-Za-z0-9_]+)\]: (.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


# --- inside the kernel ---------------------------------------------------------------------------------------

def locate_params(params_path: str | Path = DEFAULT_PARAMS_PATH) -> Path:
    """The parameters file a notebook should load.

    An existing path is used as given. The notebooks' default (``../params/params.yaml``, right from
    ``notebooks/``) falls back to the ``params/params.yaml`` found walking up from the working directory, then
    to the repository pqlab is installed from, so ``papermill notebooks/01_….ipynb out.ipynb`` works from the
    repository root too. Any other missing path is a ParamsError.
    """
    from pqlab.paths import find_params

    path = Path(params_path)
    if path.is_file():
        return path.resolve()
    if str(params_path) == DEFAULT_PARAMS_PATH:
        for start in (Path.cwd(), Path(__file__).resolve().parent):
            try:
                return find_params(start)
            except ParamsError:
                continue
    raise ParamsError(f"no parameters file {path} (working directory {Path.cwd()})", field="params_path")


def project_paths(params_path: str | Path, pipeline: bool) -> Any:
    """Where a study notebook writes (a :class:`pqlab.paths.ProjectPaths`): the project when ``dvc repro`` runs it
    (``pipeline = True``); opened by hand, the scratch project ``<project>/exploration/``, which reads the same
    ``params/`` but never overwrites the pipeline's data/ and paper_figs/ (says so in one line)."""
    from pqlab.paths import ProjectPaths, project_root

    root = project_root(params_path)
    if pipeline:
        return ProjectPaths(root)
    scratch = root / EXPLORATION_DIR
    print(f"exploring: this run writes under {scratch} (dvc repro writes the project's data/ and paper_figs/)")
    return ProjectPaths(scratch, root / "params")


def setup(params_path: str | Path = DEFAULT_PARAMS_PATH) -> Path:
    """Call first in every study notebook: returns the parameters file to load (see :func:`locate_params`)."""
    return locate_params(params_path)


def _parent_programs() -> set[str]:
    """The names the kernel's parent runs as: its executable, and for an interpreter or ``jupyter`` the module
    (``-m``), script or subcommand it runs — never its other arguments (a JupyterLab started on a folder under
    pytest's temporary ``pytest-of-*`` is still a live front end)."""
    pid = os.environ.get("JPY_PARENT_PID") or str(os.getppid())
    try:
        argv = Path(f"/proc/{int(pid)}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except (OSError, ValueError):
        return set()
    argv = [a for a in argv if a]
    if not argv:
        return set()
    programs = {Path(argv[0]).name}
    rest = argv[1:]
    if Path(argv[0]).name.startswith(("python", "jupyter")):
        if "-m" in rest and rest.index("-m") + 1 < len(rest):
            programs.add(rest[rest.index("-m") + 1])
        else:
            first = next((a for a in rest if not a.startswith("-")), None)
            if first is not None:
                programs.add(Path(first).name)  # a script, or jupyter's subcommand
    return programs


def interactive() -> bool:
    """True only when a live Jupyter front end (JupyterLab, Notebook, VS Code) runs this kernel."""
    forced = os.environ.get(WIDGETS_ENV)
    if forced in ("0", "1"):
        return forced == "1"
    if os.environ.get(HEADLESS_ENV):
        return False
    if os.environ.get(INTERACTIVE_ENV):
        return True
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
        return False
    if not (os.environ.get("JPY_SESSION_NAME") or "__vsc_ipynb_file__" in shell.user_ns):
        return False  # papermill, nbclient and nbconvert start kernels without a session
    programs = _parent_programs()
    return not any(runner in program for program in programs for runner in _BATCH_RUNNERS)


def text_progress_when_headless() -> None:
    """In a kernel without a live front end, ``tqdm.auto`` draws text instead of widgets (nobody would see the
    widgets, and their traffic goes unanswered). pqlab's ``__init__`` calls this before any module imports tqdm."""
    if in_headless_kernel():
        import tqdm.auto
        import tqdm.std

        tqdm.auto.tqdm, tqdm.auto.trange = tqdm.std.tqdm, tqdm.std.trange


def in_headless_kernel() -> bool:
    """True inside a Jupyter kernel that no live front end is attached to (papermill, nbclient, tests)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell" and not interactive()


def interact(function: Callable[..., Any], **controls: Any) -> Any:
    """``ipywidgets.interact(function, **controls)`` with a live front end; otherwise one line and no widgets."""
    if interactive():
        import ipywidgets

        return ipywidgets.interact(function, **controls)
    print(f"({function.__name__}: interactive controls need a live Jupyter front end; skipped in this headless run)")
    return function


def widget(kind: str, **options: Any) -> Any:
    """``ipywidgets.<kind>(**options)`` with a live front end (a control for :func:`interact`); otherwise None."""
    if not interactive():
        return None
    import ipywidgets

    return getattr(ipywidgets, kind)(**options)


# --- outside the kernel: pqlab papermill -----------------------------------------------------------------------

def _failure(exc: Exception, notebook: Path, output: Path) -> NotebookError:
    ename, evalue = getattr(exc, "ename", type(exc).__name__), getattr(exc, "evalue", str(exc))
    lines = [_ANSI.sub("", line) for line in getattr(exc, "traceback", []) or []]
    if len(lines) == 1 and (found := _ONE_LINE.match(lines[0].strip())):
        return NotebookError(found.group(2), code=found.group(1))  # the notebook's own one-line error
    if lines:
        print("\n".join(lines), file=sys.stderr)
    where = f"cell In [{exc.exec_count}] of " if getattr(exc, "exec_count", None) else ""
    return NotebookError(f"{ename}: {' '.join(str(evalue).split())[:300]} ({where}{notebook}; executed notebook: "
                         f"{output})", field=str(notebook))


@contextmanager
def _kernel_stderr_captured() -> Iterator[Path]:
    """Send file descriptor 2 (which the kernel inherits) to a temporary log while the notebook runs.

    The kernel's own stderr carries only its start-up warnings and shutdown noise (cell output, stderr
    included, goes into the executed notebook); it is shown only if the kernel dies.
    """
    handle, name = tempfile.mkstemp(prefix="pqlab-kernel-", suffix=".log")
    saved = os.dup(2)
    previous = sys.stderr
    sys.stderr.flush()
    os.dup2(handle, 2)
    sys.stderr = os.fdopen(os.dup(saved), "w", buffering=1)  # this process's own messages still show
    try:
        yield Path(name)
    finally:
        sys.stderr.flush()
        sys.stderr.close()
        sys.stderr = previous
        os.dup2(saved, 2)
        os.close(saved)
        os.close(handle)


def run_headless(
    notebook: str | Path,
    output: str | Path,
    parameters: Mapping[str, Any],
    *,
    kernel_name: str = "pqlab",
    execution_timeout: int | None = None,
    cwd: str | Path | None = None,
    progress: bool | None = None,
) -> None:
    """Execute ``notebook`` into ``output`` with papermill; every failure becomes a NotebookError (one line)."""
    import logging

    import papermill
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient.exceptions import DeadKernelError
    from papermill.exceptions import PapermillException, PapermillExecutionError

    notebook, output = Path(notebook), Path(output)
    if not notebook.is_file():
        raise NotebookError("no such notebook", field=str(notebook))
    # their errors are said again in our one line; asyncio's would be a "Task exception was never retrieved"
    # traceback (a DeadKernelError) when an interrupt cuts nbclient's loop short
    for name in ("papermill", "nbclient", "traitlets", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # The kernel inherits these: widget cells never wait for a front end, and progress bars (tqdm would draw
    # them as widgets in a kernel) are off; this process's own environment is restored afterwards.
    kernel_env = {HEADLESS_ENV: "1", "TQDM_DISABLE": "1"}
    saved_env = {name: os.environ.get(name) for name in kernel_env}
    os.environ.update(kernel_env)
    with _kernel_stderr_captured() as kernel_log:
        try:
            papermill.execute_notebook(
                str(notebook), str(output), parameters=dict(parameters), kernel_name=kernel_name,
                progress_bar=sys.stderr.isatty() if progress is None else progress, log_output=False,
                execution_timeout=execution_timeout, cwd=str(cwd) if cwd is not None else None)
            return
        except PapermillExecutionError as exc:
            if exc.ename == "KeyboardInterrupt":  # SIGINT reached the kernel (Ctrl-C to the group, kill -INT)
                raise KeyboardInterrupt from None
            failure = _failure(exc, notebook, output)
        except TimeoutError:
            failure = NotebookError(f"a cell ran longer than execution_timeout_s = {execution_timeout} s and was "
                                    f"stopped (executed notebook: {output})", field=str(notebook),
                                    code="NOTEBOOK_TIMEOUT")
        except DeadKernelError:
            log = [line for line in kernel_log.read_text(errors="replace").splitlines()
                   if line.strip() and "without encryption" not in line][-20:]
            print("\n".join(log), file=sys.stderr)
            failure = NotebookError(f"the kernel died (executed notebook: {output})", field=str(notebook),
                                    code="KERNEL_DIED")
        except NoSuchKernel:
            failure = NotebookError(f"no Jupyter kernel named {kernel_name!r}; `make setup` installs it",
                                    field=str(notebook))
        except RuntimeError as exc:  # jupyter_client: "Kernel died before replying to kernel_info" (killed early)
            failure = NotebookError(f"the kernel failed while starting: {' '.join(str(exc).split())[:200]} "
                                    f"(executed notebook: {output})", field=str(notebook), code="KERNEL_DIED")
        except (PapermillException, OSError, ValueError) as exc:
            failure = NotebookError(" ".join(str(exc).split())[:300] or type(exc).__name__, field=str(notebook))
        finally:
            kernel_log.unlink(missing_ok=True)
            for name, value in saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    raise failure


def parameter_value(text: str) -> Any:
    """A ``-p NAME VALUE`` value as papermill's command line reads it (int, float, bool, None or str)."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"True": True, "False": False, "None": None}.get(text, text)
