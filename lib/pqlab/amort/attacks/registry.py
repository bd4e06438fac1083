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
from pqlab.amort.lab import KeySet, Lab

ACCEPT = "ACCEPT"


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
    expected: str
    fn: Callable[[Context], Outcome]
    table: str = "table6"
    expected_detail: str = ""


@dataclass
class Context:
    """What a scenario receives: shared key sets, a seed for this case, a scratch folder, and the sizes."""

    keys: KeySet
    slh_keys: KeySet
    seed: int
    workdir: Path
    stream_records: int = 640
    stream_k: int = 64
    labs: list[Lab] = field(default_factory=list)

    def lab(self, keys: KeySet | None = None, seed: int | None = None, **config: object) -> Lab:
        """A fresh world for this case (closed by the runner afterwards)."""
        lab = Lab(keys or self.keys, self.seed if seed is None else seed, self.workdir, ControllerConfig(**config))
        self.labs.append(lab)
        return lab


CASES: list[Case] = []


def case(id: str, cls: str, action: str, expected: str, *, table: str = "table6", detail: str = ""):
    def register(fn: Callable[[Context], Outcome]) -> Callable[[Context], Outcome]:
        CASES.append(Case(id, cls, action, expected, fn, table, detail))
        return fn
    return register


def ordered() -> list[Case]:
    """All registered cases: Table VI attacks, its positive controls, then the extra cases."""
    return sorted(CASES, key=lambda c: (c.table != "table6", c.cls == "P", c.id))


def attempt(action: Callable[[], object]) -> Outcome:
    """Run the adversary's action: the protocol error it raises, or ACCEPT."""
    try:
        action()
    except AmortError as exc:
        return Outcome(exc.code, str(exc))
    return Outcome(ACCEPT, "accepted")


def run_matrix(keys: KeySet, seed: int, *, slh_keys: KeySet | None = None, stream_records: int = 640,
               stream_k: int = 64, cases: list[Case] | None = None, workdir: str | Path | None = None) -> pd.DataFrame:
    """Run every case; one row each: case, class, adversary action, expected/observed code, pass, detail."""
    rows = []
    slh_keys = slh_keys or KeySet.generate(2, checkpoint_signer="SLH-DSA-SHA2-128f")
    with tempfile.TemporaryDirectory(prefix="amort-matrix-", dir=workdir) as tmp:
        for item in cases if cases is not None else ordered():
            case_seed = int.from_bytes(hashlib.sha256(f"{seed}:{item.id}".encode()).digest()[:8], "big")
            ctx = Context(keys, slh_keys, case_seed, Path(tmp) / item.id, stream_records, stream_k)
            start = time.perf_counter()
            try:
                outcome = item.fn(ctx)
            except AmortError as exc:
                outcome = Outcome(f"SETUP:{exc.code}", str(exc))
            finally:
                for lab in ctx.labs:
                    lab.close()
            expected_detail = item.expected_detail.format(records=stream_records,
                                                          fsyncs=stream_records // stream_k)
            passed = outcome.code == item.expected and (item.cls != "P" or outcome.detail == expected_detail)
            rows.append({"case": item.id, "class": item.cls, "adversary action": item.action,
                         "expected code": item.expected + (f" ({expected_detail})" if expected_detail else ""),
                         "observed code": outcome.code + (f" ({outcome.detail})" if item.cls == "P" else ""),
                         "pass": passed, "table": item.table, "detail": outcome.detail,
                         "counts": dict(outcome.counts), "seconds": time.perf_counter() - start})
    return pd.DataFrame(rows)
