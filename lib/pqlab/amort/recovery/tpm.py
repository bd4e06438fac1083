"""A TPM 2.0 NV counter through tpm2-tss (the ``tpm2-pytss`` ESAPI binding): define, read, increment, undefine.

The same code talks to a software TPM (``swtpm``, TCTI ``swtpm:host=127.0.0.1,port=P``) and to a kernel resource
manager (``device:/dev/tpmrm0``). Defining or removing the index uses owner authorization (empty password, the
default on a cleared TPM); reads and increments use the index's own (empty) authorization value, so nothing else
needs a secret. Password authorization opens no TPM session, so a prover killed mid-command leaves no session behind.
"""

from __future__ import annotations

import importlib.util
import subprocess
from types import ModuleType
from typing import Any

from pqlab.errors import TpmCommandError, TpmUnavailableError

COUNTER_OCTETS = 8
NV_INDEX_FIRST, NV_INDEX_LAST = 0x01000000, 0x01FFFFFF  # TPM_HT_NV_INDEX range


def binding_problem() -> str | None:
    """Why the tpm2-pytss binding cannot be used here, or None when it can."""
    if importlib.util.find_spec("tpm2_pytss") is None:
        return ("the Python binding tpm2-pytss is not installed (it builds from PyPI against Debian's libtss2-dev: "
                "apt-get install libtss2-dev, then make setup)")
    try:
        import tpm2_pytss  # noqa: F401
    except (ImportError, OSError) as exc:  # the binding is there but libtss2 is not loadable
        return f"tpm2-pytss does not load: {exc}"
    return None


def _pytss() -> ModuleType:
    problem = binding_problem()
    if problem is not None:
        raise TpmUnavailableError(problem, field="tpm")
    import tpm2_pytss

    return tpm2_pytss


def parse_tcti(spec: str) -> tuple[str, str]:
    """``"swtpm:host=…,port=…"`` or ``"device:/dev/tpmrm0"`` -> (TCTI name, TCTI configuration)."""
    name, sep, conf = spec.partition(":")
    if not sep or name not in ("swtpm", "device", "mssim") or not conf:
        raise ValueError(f"TCTI spec must be 'swtpm:host=H,port=P' or 'device:/dev/tpmrmN', got {spec!r}")
    return name, conf


def check_index(index: int) -> int:
    """An NV index must lie in the TPM's NV handle range."""
    if not NV_INDEX_FIRST <= index <= NV_INDEX_LAST:
        raise ValueError(f"NV index 0x{index:08x} is outside 0x{NV_INDEX_FIRST:08x}..0x{NV_INDEX_LAST:08x}")
    return index


class NvCounter:
    """One TPM NV counter index (TPM_NT_COUNTER, 8 octets), over one TCTI connection."""

    def __init__(self, tcti: str, index: int) -> None:
        self.tcti_spec = tcti
        self.index = check_index(index)
        self._t = _pytss()
        name, conf = parse_tcti(tcti)
        try:
            self._tcti = self._t.TCTILdr(name, conf)
            self._esys = self._t.ESAPI(self._tcti)
        except self._t.TSS2_Exception as exc:
            raise TpmUnavailableError(f"cannot open TPM at {tcti}: {exc}", field="tpm") from exc
        self._handle: Any = None

    # --- connection ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the ESAPI context and its TCTI connection."""
        if self._esys is not None:
            self._esys.close()
            self._esys = None
        tcti, self._tcti = self._tcti, None
        if tcti is not None and hasattr(tcti, "close"):
            tcti.close()

    def __enter__(self) -> NvCounter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except self._t.TSS2_Exception as exc:
            raise TpmCommandError(f"{what} on NV index 0x{self.index:08x}: {exc}", field="tpm") from exc

    def _nv(self) -> Any:
        if self._handle is None:
            self._handle = self._call("TR_FromTPMPublic", self._esys.tr_from_tpmpublic, self.index)
        return self._handle

    # --- NV index lifecycle --------------------------------------------------------------------------
    def exists(self) -> bool:
        """Whether the index is defined (reads the TPM's NV handle list)."""
        t = self._t
        _more, data = self._call("GetCapability", self._esys.get_capability, t.TPM2_CAP.HANDLES, self.index, 1)
        handles = list(data.data.handles)
        return bool(handles) and handles[0] == self.index

    def define(self) -> None:
        """Define the index as a counter, writable and readable with its own empty authorization."""
        t = self._t
        attrs = (t.TPMA_NV.OWNERWRITE | t.TPMA_NV.OWNERREAD | t.TPMA_NV.AUTHWRITE | t.TPMA_NV.AUTHREAD
                 | (t.TPM2_NT.COUNTER << t.TPMA_NV.TPM2_NT_SHIFT))
        public = t.TPM2B_NV_PUBLIC(nvPublic=t.TPMS_NV_PUBLIC(nvIndex=self.index, nameAlg=t.TPM2_ALG.SHA256,
                                                           attributes=attrs, dataSize=COUNTER_OCTETS))
        self._handle = self._call("NV_DefineSpace", self._esys.nv_define_space, None, public,
                                  auth_handle=t.ESYS_TR.OWNER)

    def undefine(self) -> None:
        """Remove the index (owner authorization)."""
        self._call("NV_UndefineSpace", self._esys.nv_undefine_space, self._nv(), auth_handle=self._t.ESYS_TR.OWNER)
        self._handle = None

    # --- the counter ---------------------------------------------------------------------------------
    def read(self) -> int | None:
        """The counter value, or None if the index was defined but never incremented (TPM_RC_NV_UNINITIALIZED)."""
        t = self._t
        try:
            data = self._esys.nv_read(self._nv(), COUNTER_OCTETS, 0, auth_handle=self._nv())
        except t.TSS2_Exception as exc:
            if exc.rc & 0xFFF == t.TPM2_RC.NV_UNINITIALIZED & 0xFFF:
                return None
            raise TpmCommandError(f"NV_Read on NV index 0x{self.index:08x}: {exc}", field="tpm") from exc
        return int.from_bytes(bytes(data), "big")

    def increment(self) -> None:
        """TPM2_NV_Increment: one NV write, the only durable TPM operation a reservation performs."""
        self._call("NV_Increment", self._esys.nv_increment, self._nv(), auth_handle=self._nv())


def ensure_counter(tcti: str, index: int) -> bool:
    """Define the counter index if it is missing; returns True when this call defined it."""
    with NvCounter(tcti, index) as counter:
        if counter.exists():
            return False
        counter.define()
        return True


def remove_counter(tcti: str, index: int) -> None:
    """Undefine the counter index if it exists."""
    with NvCounter(tcti, index) as counter:
        if counter.exists():
            counter.undefine()


def client_versions() -> dict[str, str | None]:
    """The TPM client stack: the tpm2-pytss binding and the tpm2-tss ESAPI library it was built against."""
    from importlib import metadata

    try:
        pytss = metadata.version("tpm2-pytss")
    except metadata.PackageNotFoundError:
        pytss = None
    try:
        out = subprocess.run(["pkg-config", "--modversion", "tss2-esys"], capture_output=True, text=True, check=False)
        esys = out.stdout.strip() or None
    except OSError:
        esys = None
    return {"tpm2-pytss": pytss, "tss2-esys": esys}
