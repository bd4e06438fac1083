"""The 149 differential vectors: native and reference fast paths give the recorded outputs and states (§V-A)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pqlab.amort import differential, vectors
from pqlab.amort.errors import Code
from pqlab.amort.fastpath import MAX_BATCH, native_status

VECTORS = Path(__file__).resolve().parent.parent / "vectors" / "amort_differential"
FILES = sorted(p for p in VECTORS.glob("*.json") if vectors.FILE.match(p.name))
PER_REPORT_CODES = {Code.TRUNCATED, Code.TRAILING, Code.BAD_DOMAIN, Code.BAD_VERSION, Code.TAGLEN_DOWNGRADE,
                    Code.DEVICE_UNKNOWN, Code.REVOKED, Code.EPOCH_STALE, Code.MAC_FAIL, Code.SEQ_DUPLICATE,
                    Code.SEQ_GAP}
native = pytest.mark.skipif(not native_status()[0], reason=f"native fast path not built: {native_status()[1]}")


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_there_are_149_vectors_and_a_manifest() -> None:
    manifest = load(VECTORS / vectors.MANIFEST)
    assert len(FILES) == vectors.COUNT == 149
    assert manifest["count"] == 149
    assert manifest["files"] == [p.name for p in FILES]


@native
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_native_matches_the_vector(path: Path) -> None:
    vector = load(path)
    assert differential.differences(vector, "native") == []


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_reference_matches_the_vector(path: Path) -> None:
    vector = load(path)
    assert differential.differences(vector, "reference") == []


def test_vectors_regenerate_byte_for_byte() -> None:
    """``pqlab amort-vectors --seed <manifest seed>`` writes exactly the committed files."""
    manifest = load(VECTORS / vectors.MANIFEST)
    fresh = vectors.generate(manifest["seed"])
    assert [vectors.file_name(v) for v in fresh] == manifest["files"]
    for vector in fresh:
        assert vectors.dumps(vector) == (VECTORS / vectors.file_name(vector)).read_text(), vectors.file_name(vector)
    assert vectors.dumps(vectors.manifest(fresh, manifest["seed"])) == (VECTORS / vectors.MANIFEST).read_text()


def test_vectors_cover_what_the_issue_lists() -> None:
    codes, tag_lengths, ops, shapes = set(), set(), set(), set()
    for path in FILES:
        vector = load(path)
        for step in vector["steps"]:
            ops.add(step["op"])
            args, result = step.get("args", {}), step["expect"].get("result")
            if "tag_len" in args:
                tag_lengths.add(args["tag_len"])
            if step["op"] == "ingest":
                n = len(args["reports"]) if "reports" in args else None
                shapes.add("framed" if "framed" in args else "empty" if n == 0 else "maximal" if n == MAX_BATCH
                           else "over" if n and n > MAX_BATCH else "list")
            if result and "verdicts" in result:
                codes |= {Code(v.split()[0]) for v in result["verdicts"] if v}
    assert codes == PER_REPORT_CODES
    assert {8, 12, 16} <= tag_lengths
    assert {"register_epoch", "revoke", "ingest", "checkpoint_body", "commit", "report", "chain_key"} <= ops
    assert {"framed", "empty", "maximal", "over", "list"} <= shapes
