"""Builds the 149 AMORT-V1 differential vectors from the reference model (``pqlab amort-vectors``, §V-A).

Every key, digest, signature and choice comes from the seed: key material is HKDF over the seed and the
vector's name (:class:`Material`), choices come from ``random.Random`` seeded with both; nothing else varies,
so the same seed writes the same files byte for byte. The vector inputs are built by the cases in
:mod:`pqlab.amort.vector_cases`; their expectations and states are what the reference path returns
(:func:`pqlab.amort.differential.execute`). Signatures are opaque octets to the fast path (it assembles and
chains the signed checkpoint; verifying is the auditor's job), so the vectors carry seeded octets: 64 of
them by default, the real ML-DSA-65 / SLH-DSA-SHA2-128f sizes (3309 / 17088) where a case asks for them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pqlab.amort.differential import FORMAT
from pqlab.amort.vector_builder import Builder
from pqlab.amort.vector_cases import CASES, mixed_stream

COUNT = 149
DEFAULT_SEED = 20261202
FILE = re.compile(r"^\d{3}_[a-z0-9_]+\.json$")
MANIFEST = "manifest.json"


def generate(seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """All :data:`COUNT` vectors for ``seed``, numbered in catalogue order."""
    vectors = []
    for fn, category, description in CASES:
        builder = Builder(seed, fn.__name__, category, description)
        fn(builder)
        vectors.append(builder.vector())
    for i in range(COUNT - len(vectors)):
        builder = Builder(seed, f"mixed_stream_{i + 1:02d}", "mixed",
                          "seeded stream: several devices, honest and mutated reports, replays, epoch changes, "
                          "revocation and checkpoints in random order")
        mixed_stream(builder)
        vectors.append(builder.vector())
    if len(vectors) != COUNT:
        raise ValueError(f"the catalogue holds {len(vectors)} vectors, more than {COUNT}")
    return [{"id": f"{i:03d}", **v} for i, v in enumerate(vectors, start=1)]


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


def manifest(vectors: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    categories: dict[str, int] = {}
    for v in vectors:
        categories[v["category"]] = categories.get(v["category"], 0) + 1
    return {"format": FORMAT, "seed": seed, "count": len(vectors),
            "command": f"pqlab amort-vectors --out tests/vectors/amort_differential --seed {seed}",
            "source": "generated from the reference model (pqlab.amort.controller / device via "
                      "pqlab.amort.fastpath, path 'reference')",
            "categories": dict(sorted(categories.items())), "files": [file_name(v) for v in vectors]}


def files(seed: int = DEFAULT_SEED) -> dict[str, str]:
    """Every vector file and ``manifest.json`` (last), as file name -> text; ``pqlab amort-vectors`` writes them."""
    vectors = generate(seed)
    out = {file_name(v): dumps(v) for v in vectors}
    out[MANIFEST] = dumps(manifest(vectors, seed))
    return out
