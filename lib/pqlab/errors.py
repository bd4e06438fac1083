"""Typed exceptions shared by the whole package, each carrying a stable error code."""

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


class MeasurementError(PqlabError):
    """A measurement subprocess failed or returned something unusable."""

    code = "MEASUREMENT_FAILED"
