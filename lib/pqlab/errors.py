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
* **Simulator failures are SimulationError**, whose code is the name of a ``sim_status`` value returned by the
  Thread simulator's C core (``lib/pqlab/thread/sim_core.h``, with a strerror-like table mapped by the binding).
* Control flow never depends on catching KeyError.
"""

from __future__ import annotations


class PqlabError(Exception):
    """Base class: every pqlab error carries a machine-readable ``code``."""

    code = "PQLAB_ERROR"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


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


class MeasurementError(PqlabError):
    """A measurement subprocess failed or returned something unusable."""

    code = "MEASUREMENT_FAILED"


class StudyInputError(PqlabError):
    """A study's input from another stage is missing or lacks what the study needs."""

    code = "STUDY_INPUT"
