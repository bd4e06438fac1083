"""A user's deployment, described by flags or a small YAML file, validated strictly (every error names its field).

Two descriptions: :class:`CaseDeployment` (a Matter device on a Thread mesh: key exchange, NOC/ICAC/RCAC, how the
responder authenticates and what is cached, the device's pqm4 implementation and clock, the mesh, the transport)
and :class:`AmortDeployment` (a PLC fleet: report rate, identities, a detection window or a per-report budget,
checkpoint signer and backend, storage, a checkpoint size budget, costs typed in). The models follow
``pqlab.params``: frozen, strict, unknown keys and non-finite numbers refused; a name is checked against the
registry that uses it (the CASE size model's algorithms, pqm4's table, the crypto backends, the Thread scenarios).
A problem is one :class:`pqlab.errors.ParamsError` naming the flag (``--hops``) or the file and field
(``fleet.yaml: deployments[1].mesh.hops``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, ValidationInfo, field_validator, model_validator

from pqlab.case import algorithms
from pqlab.case.config import TABLE1_NAMES
from pqlab.case.configurations import TABLE1, CaseConfig, CaseConfigError
from pqlab.config import BackendChoice, Strict, name_problem, read_yaml
from pqlab.crypto import names as crypto_names
from pqlab.errors import ParamsError
from pqlab.transport.config import MAX_HOPS, LossScenario
from pqlab.validation import dotted, first_problem

TRANSPORTS = ("ipv6", "pull", "block", "best")
KEM_OPERATIONS, SIGNATURE_OPERATIONS = ("encaps", "decaps"), ("sign", "verify")
NO_LOG = "none"  # storage: the deployment keeps no durable evidence log

# field path -> the command-line flag that sets it, so an error names what the user typed
CASE_FLAGS: dict[tuple[str, ...], str] = {
    ("name",): "--name", ("preset",): "--preset", ("key_exchange",): "--kex", ("noc",): "--noc",
    ("icac",): "--icac", ("rcac",): "--rcac", ("auth",): "--auth", ("cached",): "--cached",
    ("transport",): "--transport", ("runs",): "--runs", ("device", "implementation"): "--implementation",
    ("device", "clock_mhz"): "--clock-mhz", ("device", "cycles"): "--cycles", ("mesh", "hops"): "--hops",
    ("mesh", "interference"): "--interference", ("mesh", "gilbert_elliott"): "--gilbert-elliott",
    ("mesh", "sleepy"): "--sleepy", ("mesh", "poll_interval_ms"): "--poll-interval-ms",
}
AMORT_FLAGS: dict[tuple[str, ...], str] = {
    ("name",): "--name", ("rate_hz",): "--rate", ("identities",): "--identities", ("window_s",): "--window-s",
    ("budget_us",): "--budget-us", ("signer",): "--signer", ("backend",): "--backend", ("storage",): "--storage",
    ("size_budget_octets",): "--size-budget", ("costs", "c_mac"): "--c-mac", ("costs", "c_leaf"): "--c-leaf",
    ("costs", "c_sign"): "--c-sign", ("costs", "c_fsync"): "--c-fsync",
}


# flat names (the CLI's options and the notebook's parameters) -> field paths
CASE_FIELDS: dict[str, tuple[str, ...]] = {
    "name": ("name",), "preset": ("preset",), "key_exchange": ("key_exchange",), "noc": ("noc",), "icac": ("icac",),
    "rcac": ("rcac",),
    "auth": ("auth",), "cached": ("cached",), "transport": ("transport",), "runs": ("runs",),
    "implementation": ("device", "implementation"), "clock_mhz": ("device", "clock_mhz"),
    "cycles": ("device", "cycles"), "hops": ("mesh", "hops"), "interference": ("mesh", "interference"),
    "gilbert_elliott": ("mesh", "gilbert_elliott"), "sleepy": ("mesh", "sleepy"),
    "poll_interval_ms": ("mesh", "poll_interval_ms"),
}
AMORT_FIELDS: dict[str, tuple[str, ...]] = {
    "name": ("name",), "rate_hz": ("rate_hz",), "identities": ("identities",), "window_s": ("window_s",),
    "budget_us": ("budget_us",), "signer": ("signer",), "backend": ("backend",), "storage": ("storage",),
    "size_budget_octets": ("size_budget_octets",), "c_mac": ("costs", "c_mac"), "c_leaf": ("costs", "c_leaf"),
    "c_sign": ("costs", "c_sign"), "c_fsync": ("costs", "c_fsync"),
}


def field_values(values: Mapping[str, Any], fields: Mapping[str, tuple[str, ...]]) -> dict[tuple[str, ...], Any]:
    """Flat values (``hops=4``, ``mode="kem-pdk/both"``) as the field paths they set; ``mode`` sets auth and
    cached, the word ``none`` clears ``icac`` (no intermediate CA)."""
    out: dict[tuple[str, ...], Any] = {}
    for name, value in values.items():
        if name == "mode":
            auth, _, cached = str(value).partition("/")
            out[("auth",)], out[("cached",)] = auth, cached
        elif name == "icac" and value == NO_LOG:
            out[("icac",)] = None
        elif name not in fields:
            raise ParamsError(f"unknown deployment field; known: {', '.join(fields)}", field=name)
        else:
            out[fields[name]] = value
    return out


def _known(value: str, names: Sequence[str], what: str) -> str:
    if value not in names:
        raise ValueError(f"{value!r} is not {what}; known: {', '.join(names)}")
    return value


class DeviceSpec(Strict):
    """The responder's processor: a pqm4 implementation choice (or cycles typed in) and its clock."""

    implementation: str = Field(default="fastest", min_length=1)  # fastest | portable | a pqm4 implementation name
    clock_mhz: float = Field(default=64.0, gt=0.0, le=100_000.0)
    cycles: dict[str, dict[str, int]] = Field(default_factory=dict)  # algorithm -> operation -> cycles (given)

    @field_validator("implementation")
    @classmethod
    def _implementation_known(cls, value: str, info: ValidationInfo) -> str:
        known = (info.context or {}).get("implementations")
        return value if known is None else _known(value, ("fastest", "portable", *sorted(known)),
                                                  "fastest, portable or a pqm4 implementation")

    @field_validator("cycles")
    @classmethod
    def _cycles_name_real_operations(cls, value: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
        for name, operations in value.items():
            if name in algorithms.KEMS:
                allowed = KEM_OPERATIONS
            elif name in algorithms.SIGNATURES and name != "ECDSA-P256":
                allowed = SIGNATURE_OPERATIONS
            else:
                raise ValueError(f"{name!r} is not a post-quantum algorithm of the CASE size model")
            for operation, cycles in operations.items():
                if operation not in allowed:
                    raise ValueError(f"{name}.{operation}: operations of {name} are {', '.join(allowed)}")
                if isinstance(cycles, bool) or cycles <= 0:
                    raise ValueError(f"{name}.{operation}: a cycle count must be > 0 (got {cycles!r})")
        return value


class MeshSpec(Strict):
    """The Thread mesh: hops, interference (a named scenario or Gilbert–Elliott parameters), sleepy or not."""

    hops: int = Field(default=1, ge=1, le=MAX_HOPS)
    interference: str = Field(default="none", min_length=1)  # a transport.scenarios name of params.yaml
    gilbert_elliott: LossScenario | None = None  # given: this channel instead of the named scenario
    sleepy: bool = False
    poll_interval_ms: int = Field(default=200, ge=1, le=3_600_000)  # a sleepy device's data-poll interval

    @field_validator("interference")
    @classmethod
    def _scenario_known(cls, value: str, info: ValidationInfo) -> str:
        scenarios = (info.context or {}).get("scenarios")
        return value if scenarios is None else _known(value, tuple(scenarios), "an interference scenario of "
                                                      "transport.scenarios (or give --gilbert-elliott)")


def _printable_name(value: str) -> str:
    """A deployment's name heads table rows and error lines: printable (no tab, newline, control byte), bounded;
    empty means "derived from its settings"."""
    problem = name_problem(value) if value else None
    if problem:
        raise ValueError(problem)
    return value


class CaseDeployment(Strict):
    """One Matter device on a Thread mesh: what it runs and where (defaults: Table I's drop-in D3, one quiet hop)."""

    name: str = ""
    _name_printable = field_validator("name")(_printable_name)
    preset: str | None = None  # a Table I configuration whose algorithms and modes are the starting point
    key_exchange: str = "ML-KEM-768"
    noc: str = "ML-DSA-44"
    icac: str | None = "ML-DSA-44"
    rcac: str = "ML-DSA-44"
    auth: Literal["sig", "kem", "kem-pdk"] = "sig"
    cached: Literal["none", "responder", "both"] = "none"
    device: DeviceSpec = Field(default_factory=DeviceSpec)
    mesh: MeshSpec = Field(default_factory=MeshSpec)
    transport: Literal["ipv6", "pull", "block", "best"] = "best"
    runs: int = Field(default=300, ge=1, le=100_000)

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        """``preset: D3`` fills the algorithms and modes of that Table I row; fields given beside it win."""
        if not isinstance(data, dict) or data.get("preset") is None:
            return data
        row = next((c for c in TABLE1 if c.name == data["preset"]), None)
        if row is None:  # the field check below names the bad preset
            return data
        filled = {"key_exchange": row.key_exchange, "noc": row.noc, "icac": row.icac, "rcac": row.rcac,
                  "auth": row.auth, "cached": row.cached}
        return {**filled, **data, "name": data.get("name") or row.name}

    @field_validator("preset")
    @classmethod
    def _preset_known(cls, value: str | None) -> str | None:
        return value if value is None else _known(value, TABLE1_NAMES, "a Table I configuration")

    @field_validator("key_exchange")
    @classmethod
    def _key_exchange_known(cls, value: str) -> str:
        try:
            algorithms.key_exchange_parts(value)
        except algorithms.UnknownCaseAlgorithmError:
            kems = ", ".join(algorithms.KEMS)
            raise ValueError(f"{value!r} is not a key exchange: P-256, one of {kems}, or a hybrid such as "
                             "P-256+ML-KEM-768") from None
        return value

    @field_validator("noc", "icac", "rcac")
    @classmethod
    def _signature_known(cls, value: str | None) -> str | None:
        if value is None:
            return value
        for part in value.split("+"):
            _known(part, tuple(algorithms.SIGNATURES), "a signature algorithm of the CASE size model")
        return value

    @model_validator(mode="after")
    def _buildable(self) -> CaseDeployment:
        try:
            self.config()
        except CaseConfigError as exc:
            raise ValueError(str(exc)) from None
        return self

    @property
    def label(self) -> str:
        return self.name or f"{self.key_exchange} {self.config().chain_label} {self.auth}/{self.cached}"

    def config(self) -> CaseConfig:
        """The CASE configuration the size and device models evaluate."""
        return CaseConfig(key_exchange=self.key_exchange, noc=self.noc, icac=self.icac, rcac=self.rcac,
                          auth=self.auth, cached=self.cached, name=self.name or "whatif")

    def algorithms_used(self) -> tuple[str, ...]:
        """Every algorithm of the handshake (key-exchange parts, chain parts, the responder's static KEM)."""
        config = self.config()
        names = [*self.key_exchange.split("+")]
        for alg in (self.noc, self.icac, self.rcac):
            names += alg.split("+") if alg else []
        if self.auth != "sig":
            names.append(config.responder_kem)
        return tuple(dict.fromkeys(names))


class TypedCosts(Strict):
    """Eq. 1's inputs typed in by the user (µs; e.g. measured on their PLC); any one may be left out."""

    c_mac: float | None = Field(default=None, ge=0.0, le=1e9)
    c_leaf: float | None = Field(default=None, ge=0.0, le=1e9)
    c_sign: float | None = Field(default=None, ge=0.0, le=1e9)
    c_fsync: float | None = Field(default=None, ge=0.0, le=1e9)


class AmortDeployment(Strict):
    """A PLC fleet under AMORT-V1: who reports how often, what the operator will accept, where the log lives."""

    name: str = ""
    _name_printable = field_validator("name")(_printable_name)
    rate_hz: float = Field(gt=0.0, le=1e7)           # reports per second of one identity
    identities: int = Field(default=1, ge=1, le=10_000_000)
    window_s: float | None = Field(default=None, gt=0.0, le=1e9)   # the longest acceptable detection window ...
    budget_us: float | None = Field(default=None, gt=0.0, le=1e9)  # ... or the highest cost per report
    signer: str = "ML-DSA-65"
    backend: BackendChoice = "auto"
    storage: str | None = None  # a folder whose fsync is probed; "none": no durable log; None: params' log storage
    size_budget_octets: int = Field(default=1_000_000, ge=1, le=1 << 40)
    costs: TypedCosts = Field(default_factory=TypedCosts)

    @field_validator("signer")
    @classmethod
    def _signer_known(cls, value: str) -> str:
        return _known(value, crypto_names.SIGNATURES, "a signature algorithm of any pqlab backend")

    @field_validator("storage")
    @classmethod
    def _storage_exists(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or value == NO_LOG:
            return value
        folder = Path(value)
        if not folder.is_absolute() and (info.context or {}).get("root") is not None:
            folder = Path(info.context["root"]) / folder
        if not folder.is_dir():
            raise ValueError(f"no such folder {str(folder)!r} (give an existing folder whose fsync to probe, "
                             f"or {NO_LOG!r} for no durable log)")
        return value

    @model_validator(mode="after")
    def _window_or_budget(self) -> AmortDeployment:
        given = [name for name in ("window_s", "budget_us") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of window_s (--window-s) and budget_us (--budget-us); got "
                             f"{' and '.join(given) or 'neither'}")
        return self

    @property
    def aggregate_rate_hz(self) -> float:
        """Reports per second arriving at the controller: the fleet's identities times each one's rate."""
        return self.rate_hz * self.identities

    @property
    def label(self) -> str:
        return self.name or f"{self.identities:,} × {self.rate_hz:g}/s, {self.signer}"


# --- validation with errors that name the flag or the file and field -------------------------------------------

def _error(exc: ValidationError, source: str, flags: Mapping[tuple[str, ...], str], given_by_flag: set,
           prefix: Sequence[Any] = ()) -> ParamsError:
    problem = first_problem(exc)
    loc = problem.loc
    for length in range(len(loc), 0, -1):  # the longest field path a flag set
        if loc[:length] in flags and loc[:length] in given_by_flag:
            return ParamsError(problem.line(), field=flags[loc[:length]])
    return ParamsError(problem.line(dotted((*prefix, *loc)) or "deployment"), field=source)


def _nested(flat: Mapping[tuple[str, ...], Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, value in flat.items():
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return out


def _merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) \
            else value
    return merged


def _documents(path: str | Path) -> list[dict[str, Any]]:
    """One deployment mapping, or ``deployments: [...]`` (with optional shared ``defaults:``), from a YAML file."""
    data = read_yaml(path, "deployment file")
    if not isinstance(data, dict):
        raise ParamsError("must be a mapping (one deployment) or have a `deployments:` list", field=str(path))
    if "deployments" not in data:
        return [data]
    extra = set(data) - {"deployments", "defaults"}
    if extra:
        raise ParamsError(f"unknown key(s) {sorted(extra)} beside `deployments:` (only `defaults:` may be there)",
                          field=str(path))
    listed, defaults = data["deployments"], data.get("defaults") or {}
    if not isinstance(listed, list) or not listed or not all(isinstance(d, dict) for d in listed):
        raise ParamsError("deployments: a non-empty list of mappings expected", field=str(path))
    if not isinstance(defaults, dict):
        raise ParamsError("defaults: a mapping expected", field=str(path))
    return [_merge(defaults, d) for d in listed]


def _validated(model: type[BaseModel], documents: list[tuple[str, Sequence[Any], dict[str, Any]]],
               flags: Mapping[tuple[str, ...], Any], flag_names: Mapping[tuple[str, ...], str],
               context: Mapping[str, Any] | None) -> list[Any]:
    given = set(flags)  # only what the user set (a None value sets a field to None, e.g. --icac none)
    override = _nested(dict(flags))
    out = []
    for source, prefix, document in documents:
        try:
            out.append(model.model_validate(_merge(document, override), context=dict(context or {})))
        except ValidationError as exc:
            raise _error(exc, source, flag_names, given, prefix) from None
    return out


def _from_files(files: Sequence[str | Path]) -> list[tuple[str, Sequence[Any], dict[str, Any]]]:
    documents = []
    for path in files:
        found = _documents(path)
        several = len(found) > 1 or "deployments" in (read_yaml(path, "deployment file") or {})
        documents += [(str(path), ("deployments", i) if several else (), d) for i, d in enumerate(found)]
    return documents


def case_deployments(files: Sequence[str | Path] = (), flags: Mapping[tuple[str, ...], Any] | None = None,
                     presets: Sequence[str] = (), *, scenarios: Sequence[str] | None = None,
                     implementations: Sequence[str] | None = None) -> list[CaseDeployment]:
    """The deployments to compare: each file's (one, or a ``deployments:`` list), each ``--preset`` given several
    times, or the flags alone; flags set on the command line apply to every deployment. ``scenarios`` (the
    Thread scenario names) and ``implementations`` (pqm4's) are the registries names are checked against."""
    flags = dict(flags or {})
    documents = _from_files(files)
    if len(presets) > 1:  # several presets side by side: one deployment each
        flags.pop(("preset",), None)
        documents += [("--preset", (), {"preset": p}) for p in presets]
    elif presets:
        flags[("preset",)] = presets[0]
    if not documents:
        documents = [("deployment", (), {})]
    context = {"scenarios": scenarios, "implementations": implementations}
    return _validated(CaseDeployment, documents, flags, CASE_FLAGS, context)


def amort_deployments(files: Sequence[str | Path] = (), flags: Mapping[tuple[str, ...], Any] | None = None,
                      *, root: str | Path | None = None) -> list[AmortDeployment]:
    """The fleets to answer for: each file's, or the flags alone; flags apply to every fleet. A relative
    ``storage`` folder is looked up under ``root`` (the project) and must exist."""
    documents = _from_files(files) or [("fleet", (), {})]
    return _validated(AmortDeployment, documents, dict(flags or {}), AMORT_FLAGS, {"root": root})


def parse_cycles(items: Sequence[str]) -> dict[str, dict[str, int]]:
    """``--cycles ML-KEM-768.encaps=700000`` (repeatable) as algorithm -> operation -> cycles."""
    out: dict[str, dict[str, int]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        name, dot, operation = key.rpartition(".")
        try:
            cycles = int(value.replace("_", ""))
        except ValueError:
            cycles = None
        if not sep or not dot or cycles is None:
            raise ParamsError(f"expected ALGORITHM.OPERATION=CYCLES, e.g. ML-KEM-768.encaps=700000 (got {item!r})",
                              field="--cycles")
        out.setdefault(name, {})[operation] = cycles
    return out


def parse_gilbert_elliott(text: str) -> dict[str, float]:
    """``--gilbert-elliott P_GOOD,P_BAD,FRACTION_BAD,MEAN_BURST_MS`` as the LossScenario fields."""
    parts = text.split(",")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 4:
        raise ParamsError(f"expected P_GOOD,P_BAD,FRACTION_BAD,MEAN_BURST_MS, e.g. 0.02,0.9,0.3,30 (got {text!r})",
                          field="--gilbert-elliott")
    return dict(zip(("p_good", "p_bad", "fraction_bad", "mean_burst_ms"), values, strict=True))
