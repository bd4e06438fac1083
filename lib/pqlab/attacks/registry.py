"""The attack-matrix registry: cases, outcomes, the scenario context, and the runner."""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pqlab.amort.controller import ControllerConfig
from pqlab.amort.errors import AmortError
from pqlab.amort.profile import HARDENED, IMPLIED, PAPER, Profile
from pqlab.experiments.amort_lab import CONTROLLER_ID, KeySet, Lab

ACCEPT = "ACCEPT"
TABLES = ("table6", "extra", "new", "outsider")  # Table VI, pqlab's extra cases, issue 27's and issue 35's
KINDS = ("defect", "gap")  # issue 27: a defect against the paper's own design, or a gap in the design


@dataclass(frozen=True)
class Outcome:
    code: str
    detail: str
    counts: tuple[tuple[str, int], ...] = ()  # instrumented counts a control reports (e.g. fsync calls)


@dataclass(frozen=True)
class Case:
    id: str
    cls: str  # C cryptographic, D decoder, S protocol-semantic, P positive control
    action: str
    expected: str  # under the paper variant
    fn: Callable[[Context], Outcome]
    table: str = "table6"
    expected_detail: str = ""
    hardened: str | None = None  # the expected code under the hardened variant (None: the same)
    kind: str = ""  # issue 27 cases: "defect" or "gap"
    denial: bool = False  # the adversary wants an honest action refused: it wins when that action is not ACCEPT

    def expected_for(self, variant: str) -> str:
        return self.hardened if variant == HARDENED and self.hardened is not None else self.expected


@dataclass
class Context:
    """What a scenario receives: shared key sets, a seed for this case, a scratch folder, and the sizes."""

    keys: KeySet
    slh_keys: KeySet
    seed: int
    workdir: Path
    stream_records: int = 640
    stream_k: int = 64
    profile: Profile = field(default_factory=Profile)
    labs: list[Lab] = field(default_factory=list)
    cleanups: list[Callable[[], object]] = field(default_factory=list)  # run after the case, e.g. closing logs

    @property
    def hardened(self) -> bool:
        return self.profile.hardened

    def lab(self, keys: KeySet | None = None, seed: int | None = None, *, controller_id: bytes = CONTROLLER_ID,
            **config: object) -> Lab:
        """A fresh world for this case with the run's variant and wire format (closed by the runner afterwards)."""
        lab = Lab(keys or self.keys, self.seed if seed is None else seed, self.workdir, ControllerConfig(**config),
                  controller_id=controller_id, profile=self.profile)
        self.labs.append(lab)
        return lab


CASES: list[Case] = []


def case(id: str, cls: str, action: str, expected: str, *, table: str = "table6", detail: str = "",
         hardened: str | None = None, kind: str = "", denial: bool = False):
    if table not in TABLES or (kind and kind not in KINDS):
        raise ValueError(f"case {id}: table {table!r}, kind {kind!r}")

    def register(fn: Callable[[Context], Outcome]) -> Callable[[Context], Outcome]:
        CASES.append(Case(id, cls, action, expected, fn, table, detail, hardened, kind, denial))
        return fn
    return register


def ordered() -> list[Case]:
    """All registered cases: Table VI attacks, its positive controls, the extra cases, then issue 27's."""
    return sorted(CASES, key=lambda c: (TABLES.index(c.table), c.cls == "P", c.id))


def attempt(action: Callable[[], object]) -> Outcome:
    """Run the adversary's action: the protocol error it raises, or ACCEPT."""
    try:
        action()
    except AmortError as exc:
        return Outcome(exc.code, str(exc))
    return Outcome(ACCEPT, "accepted")


def attempt_each(actions: dict[str, Callable[[], object]]) -> Outcome:
    """Several forms of one attack: their common code; if they differ, each form with its code (e.g. one of
    them ACCEPT), so a case passes only when every form gives the expected code."""
    outcomes = {name: attempt(action) for name, action in actions.items()}
    codes = {o.code for o in outcomes.values()}
    detail = "; ".join(f"{name}: {o.detail}" for name, o in outcomes.items())
    if len(codes) == 1:
        return Outcome(codes.pop(), detail)
    return Outcome(" / ".join(f"{name} {o.code}" for name, o in outcomes.items()), detail)


def run_matrix(keys: KeySet, seed: int, *, slh_keys: KeySet | None = None, stream_records: int = 640,
               stream_k: int = 64, cases: list[Case] | None = None, workdir: str | Path | None = None,
               variant: str = PAPER, wire_format: str = IMPLIED) -> pd.DataFrame:
    """Run every case under one protocol variant and wire format; one row each: case, class, adversary action,
    expected/observed code, pass, detail, and whether the adversary got what it wanted."""
    rows = []
    profile = Profile(variant, wire_format)
    slh_keys = slh_keys or KeySet.generate(2, checkpoint_signer="SLH-DSA-SHA2-128f")
    with tempfile.TemporaryDirectory(prefix="amort-matrix-", dir=workdir) as tmp:
        for item in cases if cases is not None else ordered():
            case_seed = int.from_bytes(hashlib.sha256(f"{seed}:{item.id}".encode()).digest()[:8], "big")
            ctx = Context(keys, slh_keys, case_seed, Path(tmp) / f"{variant}-{item.id}", stream_records, stream_k,
                          profile)
            start = time.perf_counter()
            try:
                outcome = item.fn(ctx)
            except AmortError as exc:
                outcome = Outcome(f"SETUP:{exc.code}", str(exc))
            finally:
                for lab in ctx.labs:
                    lab.close()
                for cleanup in ctx.cleanups:
                    cleanup()
            expected_detail = item.expected_detail.format(records=stream_records,
                                                          fsyncs=stream_records // stream_k)
            expected = item.expected_for(variant)
            passed = outcome.code == expected and (item.cls != "P" or outcome.detail == expected_detail)
            succeeded = outcome.code != ACCEPT if item.denial else outcome.code == ACCEPT
            rows.append({"case": item.id, "class": item.cls, "adversary action": item.action,
                         "expected code": expected + (f" ({expected_detail})" if expected_detail else ""),
                         "observed code": outcome.code + (f" ({outcome.detail})" if item.cls == "P" else ""),
                         "pass": passed, "table": item.table, "kind": item.kind, "variant": variant,
                         "wire_format": wire_format,
                         "attack_succeeded": None if item.cls == "P" else bool(succeeded),
                         "detail": outcome.detail, "counts": dict(outcome.counts),
                         "seconds": time.perf_counter() - start})
    return pd.DataFrame(rows)
