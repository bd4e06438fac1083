"""Typed exceptions shared by the whole package, each carrying a stable error code.

The error convention of pqlab:

* **Protocol rejections carry protocol codes.** A message the protocol refuses raises the protocol's own
  exception with its code: :class:`pqlab.amort.errors.AmortError` (one of AMORT-V1's codes, e.g. MAC_FAIL,
  TRUNCATED at a byte offset) and :class:`pqlab.case.tlv.TLVError` (Matter TLV decoding, naming the offset).
  Decoders reject; they never crash with anything else.
* **Caller misuse is ValueError / TypeError.** A programming error — a negative run index, an impossible
  Merkle index, bytes where an int belongs — raises the built-in exception, as the standard library does.
* **Environment and input problems are PqlabError subclasses** with a ``code``: parameters (ParamsError),
  unknown algorithms or backends, unwritable outputs, corrupt inputs. The CLI prints them as one line
  ``pqlab: error [CODE]: field: message`` and exits non-zero.
* **Corrupt inputs name the file** (InputError); a run that finds another run using the same folder says so
  (BusyError); a Dask scheduler that cannot be reached within a short connect timeout is SchedulerError; a
  notebook that fails, times out or loses its kernel under ``pqlab papermill`` is NotebookError. Every
  entry point (the CLI, the notebooks' first cell via ``pqlab.notebook.setup``, ``pqlab papermill`` under
  ``dvc repro``) prints such an error as the one line of :func:`one_line` and exits with status 2.
* **Simulator failures are SimulationError**, whose code is the name of a ``sim_status`` value returned by the
  Thread simulator's C core (``lib/pqlab/transport/sim_core.h``, with a strerror-like table mapped by the binding).
* **Control-cycle harness failures are CycleError**; when its C loop refuses an argument or fails, the code is the
  name of the ``pq_cycle_status`` value (``lib/pqlab/experiments/cycle/cycle_core.h``) and the field names the argument.
* **Symmetric-timing loop failures are SymmetricTimingError**; when its C loop refuses an argument or fails, the code
  is the name of the ``sym_status`` value (``lib/pqlab/experiments/symmetric/sym_timing.h``) and the field names the
  argument.
* Control flow never depends on catching KeyError.
"""

from __future__ import annotations

import os
import sys


class PqlabError(Exception):
    """Base class: every pqlab error carries a machine-readable ``code``."""

    code = "PQLAB_ERROR"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None) -> None:
        """``code`` replaces the class's own (a C core's status name, a notebook's failure kind)."""
        if code:
            self.code = code
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)

    def _render_traceback_(self) -> list[str]:
        """How IPython and Jupyter show the error: its one line (``PQLAB_TRACEBACK=1``: the full traceback)."""
        if os.environ.get("PQLAB_TRACEBACK"):
            from IPython import get_ipython

            shell = get_ipython()
            if shell is not None:
                return shell.InteractiveTB.structured_traceback(type(self), self, self.__traceback__)
        return [one_line(self)]


class ParamsError(PqlabError):
    """A parameters file is missing, malformed, or fails validation."""

    code = "PARAMS_INVALID"


class UnknownAlgorithmError(PqlabError):
    """No backend offers the requested algorithm."""

    code = "UNKNOWN_ALGORITHM"


class UnknownBackendError(PqlabError):
    """The requested backend does not exist or is not usable on this machine."""

    code = "UNKNOWN_BACKEND"


class CryptoInputError(PqlabError):
    """A key, ciphertext or signature has the wrong type or length."""

    code = "CRYPTO_BAD_INPUT"


class OutputError(PqlabError):
    """An output location cannot be written."""

    code = "OUTPUT_UNWRITABLE"


class TpmUnavailableError(PqlabError):
    """No TPM 2.0 can be reached: swtpm or tpm2-tss is not installed, or the device node cannot be opened."""

    code = "TPM_UNAVAILABLE"


class TpmCommandError(PqlabError):
    """A TPM 2.0 command failed (the TSS response code is in the message)."""

    code = "TPM_COMMAND_FAILED"


class ProverProcessError(PqlabError):
    """The prover process broke its pipe protocol, exited unexpectedly, or did not answer in time."""

    code = "PROVER_FAILED"


class SimulationError(PqlabError):
    """The Thread simulator's C core refused a plan or failed: ``code`` is its sim_status name (sim_core.h)."""

    code = "SIMULATION_ERROR"

    def __init__(self, status: str, message: str) -> None:
        self.code = status
        super().__init__(message, field="thread simulator")


class CycleError(PqlabError):
    """The control-cycle harness could not run as configured (CPU, evidence path, background signer, an argument
    out of range): ``code`` is the C loop's pq_cycle_status name when the loop said so, else CYCLE_UNAVAILABLE."""

    code = "CYCLE_UNAVAILABLE"


class SymmetricTimingError(PqlabError):
    """Table I's symmetric C timing loops are unavailable, or refused an argument or failed: ``code`` is the loop's
    sym_status name (sym_timing.h) when the loop said so, else SYMMETRIC_UNAVAILABLE."""

    code = "SYMMETRIC_UNAVAILABLE"


class InputError(PqlabError):
    """An input file (raw data, metrics, a resume part, a configurations file) is unreadable or corrupt."""

    code = "INPUT_CORRUPT"


class UnverifiedInputError(InputError):
    """A file a stage reads lacks pqlab's content digest (or its provenance): pqlab cannot tell it from an edited copy,
    so it is refused rather than used as it is."""

    code = "INPUT_UNVERIFIED"


class InputInvalidError(PqlabError):
    """An input pqlab cannot take as it is: a file name that is not valid UTF-8, a special file (FIFO, socket,
    device) where a regular file or folder belongs."""

    code = "INPUT_INVALID"


class BusyError(PqlabError):
    """Another run is using the same folder (a resume cache or an output set being replaced)."""

    code = "BUSY"


class SchedulerError(PqlabError):
    """The Dask scheduler named by --scheduler or $PQLAB_DASK_SCHEDULER cannot be reached."""

    code = "SCHEDULER_UNREACHABLE"


class NotebookError(PqlabError):
    """A notebook run headless failed outside pqlab, timed out (``execution_timeout_s``) or lost its kernel."""

    code = "NOTEBOOK_FAILED"


def one_line(exc: PqlabError) -> str:
    """The error as the single line every entry point prints: ``pqlab: error [CODE]: field: message``."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"pqlab: error [{exc.code}]: {text}"


def warn(message: str) -> None:
    """One warning line on stderr (``pqlab: warning: ...``): shown by the CLI, in notebooks and by dvc repro."""
    print(f"pqlab: warning: {' '.join(message.split())}", file=sys.stderr, flush=True)


class MeasurementError(PqlabError):
    """A measurement subprocess failed or returned something unusable."""

    code = "MEASUREMENT_FAILED"


class StudyInputError(PqlabError):
    """A study's input from another stage is missing or lacks what the study needs."""

    code = "STUDY_INPUT"


class MetricsMismatchError(PqlabError):
    """A stage's metrics file does not match its typed model, or lacks a key a report row reads: the metrics were
    written by another version of the study, or the reference file names a key the study does not write."""

    code = "METRICS_MISMATCH"


class RawSamplesError(PqlabError):
    """A raw-sample file is missing, was measured for another stage or with other measurement parameters, or its
    provenance block is incomplete: the analysis refuses it rather than analyse samples it cannot vouch for."""

    code = "RAW_SAMPLES"
