"""Builds the AMORT-V1 differential vectors from the reference model (``pqlab amort-vectors``, §V-A): the paper's 149
(set ``paper``) and the extension set (explicit wire format, hardened variant, issue 27's defects).

Every key, digest, signature and choice comes from the seed: key material is HKDF over the seed and the
vector's name (:class:`Material`), choices come from ``random.Random`` seeded with both; nothing else varies,
so the same seed writes the same files byte for byte. The vector inputs are built by the cases in
:mod:`pqlab.amort.conformance.cases`; their expectations and states are what the reference path returns
(:func:`pqlab.amort.conformance.differential.execute`). Signatures are opaque octets to the fast path (it assembles and
chains the signed checkpoint; verifying is the auditor's job), so the vectors carry seeded octets: 64 of
them by default, the real ML-DSA-65 / SLH-DSA-SHA2-128f sizes (3309 / 17088) where a case asks for them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pqlab.amort.conformance.builder import Builder
from pqlab.amort.conformance.cases import CASES, mixed_stream
from pqlab.amort.conformance.differential import FORMAT
from pqlab.amort.conformance.extension import EXTENSION, MIXED, mixed
from pqlab.amort.profile import IMPLIED, PAPER_PROFILE, Profile

COUNT = 149
"""The paper's "149 differential-test vectors" (§V-A): the named set ``paper``, under the default profile."""
SETS = ("paper", "extension")
FOLDERS = {"paper": "", "extension": "extension"}  # under tests/vectors/amort_differential/
DEFAULT_SEED = 20261202
FILE = re.compile(r"^\d{3}_[a-z0-9_]+\.json$")
MANIFEST = "manifest.json"


def _build(seed: int, name: str, category: str, description: str, fn: object, profile: Profile) -> dict[str, Any]:
    if profile.wire_format == IMPLIED:
        description = getattr(fn, "implied_description", description)
    builder = Builder(seed, name, category, description, profile)
    fn(builder)
    return builder.vector()


def generate(seed: int = DEFAULT_SEED, vector_set: str = "paper") -> list[dict[str, Any]]:
    """The vectors of ``vector_set`` for ``seed``, numbered in catalogue order: ``paper`` is the :data:`COUNT`
    vectors of the paper's count (default profile), ``extension`` the explicit wire format, the hardened variant and
    issue 27's defects (pqlab.amort.conformance.extension)."""
    if vector_set not in SETS:
        raise ValueError(f"vector set {vector_set!r}: one of {SETS}")
    vectors = []
    if vector_set == "paper":
        for fn, category, description in CASES:
            vectors.append(_build(seed, fn.__name__, category, description, fn, PAPER_PROFILE))
        for i in range(COUNT - len(vectors)):
            vectors.append(_build(seed, f"mixed_stream_{i + 1:02d}", "mixed", MIXED_DESCRIPTION, mixed_stream,
                                  PAPER_PROFILE))
        if len(vectors) != COUNT:
            raise ValueError(f"the catalogue holds {len(vectors)} vectors, more than {COUNT}")
    else:
        for fn, category, description, profile, name in EXTENSION:
            vectors.append(_build(seed, name, category, description, fn, profile))
        for profile, label, count in MIXED:
            for i in range(count):
                vectors.append(_build(seed, f"mixed_{label}_{i + 1:02d}", "mixed", f"{MIXED_DESCRIPTION} "
                                      f"[{label.replace('_', ' ')}]", mixed, profile))
    return [{"id": f"{i:03d}", **v} for i, v in enumerate(vectors, start=1)]


MIXED_DESCRIPTION = ("seeded stream: several devices, honest and mutated reports, replays, epoch changes, revocation "
                     "and checkpoints in random order")


def file_name(vector: dict[str, Any]) -> str:
    return f"{vector['id']}_{vector['name']}.json"


def dumps(data: Any) -> str:
    """The canonical JSON text of a vector file: sorted keys, one-space indent, each step on one line."""
    head = {k: v for k, v in data.items() if k != "steps"}
    text = json.dumps(head, indent=1, sort_keys=True)
    if "steps" not in data:
        return text + "\n"
    steps = ",\n".join("  " + json.dumps(step, sort_keys=True, separators=(",", ":")) for step in data["steps"])
    return f'{text[:-2]},\n "steps": [\n{steps}\n ]\n}}\n'


def default_out(vector_set: str = "paper") -> str:
    """The folder the set is committed in (``pqlab amort-vectors``' default ``--out``)."""
    return "tests/vectors/amort_differential" + (f"/{FOLDERS[vector_set]}" if FOLDERS[vector_set] else "")


def manifest(vectors: list[dict[str, Any]], seed: int, vector_set: str = "paper",
             out: str | None = None) -> dict[str, Any]:
    """What a set's ``manifest.json`` records, the command that wrote it with its real ``--out`` among it."""
    categories: dict[str, int] = {}
    profiles: dict[str, int] = {}
    for v in vectors:
        categories[v["category"]] = categories.get(v["category"], 0) + 1
        key = f"{v['variant']}/{v['wire_format']}"
        profiles[key] = profiles.get(key, 0) + 1
    out = default_out(vector_set) if out is None else out
    return {"format": FORMAT, "set": vector_set, "seed": seed, "count": len(vectors),
            "profiles": dict(sorted(profiles.items())),
            "command": f"pqlab amort-vectors --set {vector_set} --out {out} --seed {seed}",
            "source": "generated from the reference model (pqlab.amort.controller / device via "
                      "pqlab.amort.fastpath, path 'reference')",
            "categories": dict(sorted(categories.items())), "files": [file_name(v) for v in vectors]}


def files(seed: int = DEFAULT_SEED, vector_set: str = "paper", out: str | None = None,
          sign: Callable[[dict[str, Any]], dict[str, Any]] = lambda data: data) -> dict[str, str]:
    """Every vector file of a set and its ``manifest.json`` (last, passed through ``sign``: the writer's mark), as
    file name -> text; ``pqlab amort-vectors --out OUT`` writes them."""
    vectors = generate(seed, vector_set)
    texts = {file_name(v): dumps(v) for v in vectors}
    texts[MANIFEST] = dumps(sign(manifest(vectors, seed, vector_set, out)))
    return texts
