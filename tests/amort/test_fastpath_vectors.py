"""The differential vectors — the paper's 149 and the extension set — give the recorded outputs and states on both
the native and the reference fast path (§V-A)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pqlab.amort.conformance import differential, vectors
from pqlab.amort.errors import Code
from pqlab.amort.fastpath.api import MAX_BATCH, native_status
from pqlab.generated import signed

VECTORS = Path(__file__).resolve().parent.parent / "vectors" / "amort_differential"
EXTENSION = VECTORS / vectors.FOLDERS["extension"]
FILES = sorted(p for p in VECTORS.glob("*.json") if vectors.FILE.match(p.name))
EXTENSION_FILES = sorted(p for p in EXTENSION.glob("*.json") if vectors.FILE.match(p.name))
ALL = FILES + EXTENSION_FILES
PER_REPORT_CODES = {Code.TRUNCATED, Code.TRAILING, Code.BAD_DOMAIN, Code.BAD_VERSION, Code.TAGLEN_DOWNGRADE,
                    Code.DEVICE_UNKNOWN, Code.REVOKED, Code.EPOCH_STALE, Code.MAC_FAIL, Code.SEQ_DUPLICATE,
                    Code.SEQ_GAP}
native = pytest.mark.skipif(not native_status()[0], reason=f"native fast path not built: {native_status()[1]}")


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def test_there_are_149_paper_vectors_and_an_extension_set() -> None:
    manifest = load(VECTORS / vectors.MANIFEST)
    assert len(FILES) == vectors.COUNT == 149
    assert manifest["count"] == 149 and manifest["set"] == "paper"
    assert manifest["files"] == [p.name for p in FILES]
    assert manifest["profiles"] == {"paper/implied": 149}  # the paper's design, the default encoding
    extension = load(EXTENSION / vectors.MANIFEST)
    assert extension["set"] == "extension" and extension["files"] == [p.name for p in EXTENSION_FILES]
    assert set(extension["profiles"]) == {"paper/implied", "paper/explicit", "hardened/implied", "hardened/explicit"}


@native
@pytest.mark.parametrize("path", ALL, ids=[_id(p) for p in ALL])
def test_native_matches_the_vector(path: Path) -> None:
    vector = load(path)
    assert differential.differences(vector, "native") == []


@pytest.mark.parametrize("path", ALL, ids=[_id(p) for p in ALL])
def test_reference_matches_the_vector(path: Path) -> None:
    vector = load(path)
    assert differential.differences(vector, "reference") == []


@pytest.mark.parametrize("vector_set", vectors.SETS)
def test_vectors_regenerate_byte_for_byte(vector_set: str) -> None:
    """``pqlab amort-vectors --set <set> --seed <manifest seed>`` writes exactly the committed files."""
    folder = VECTORS / vectors.FOLDERS[vector_set]
    manifest = load(folder / vectors.MANIFEST)
    fresh = vectors.generate(manifest["seed"], vector_set)
    assert [vectors.file_name(v) for v in fresh] == manifest["files"]
    for vector in fresh:
        assert vectors.dumps(vector) == (folder / vectors.file_name(vector)).read_text(), vectors.file_name(vector)
    assert vectors.dumps(signed(vectors.manifest(fresh, manifest["seed"], vector_set))) == \
        (folder / vectors.MANIFEST).read_text()


def _verdict_codes(paths: list[Path]) -> set[Code]:
    codes = set()
    for path in paths:
        for step in load(path)["steps"]:
            result = step["expect"].get("result")
            if result and "verdicts" in result:
                codes |= {Code(v.split()[0]) for v in result["verdicts"] if v}
    return codes


def test_the_extension_set_covers_issue_27s_fast_path_defects() -> None:
    names = {p.stem.split("_", 1)[1] for p in EXTENSION_FILES}
    assert {"timestamps_monotonic", "timestamps_not_before", "timestamps_freshness", "device_seq_exhaustion",
            "checkpoint_link_over_body", "checkpoint_epoch_exceptions", "hardened_dtag_flips"} <= names
    stale = [p for p in EXTENSION_FILES if "timestamps" in p.stem]
    assert Code.EPOCH_STALE in _verdict_codes(stale)
    hardened = [p for p in EXTENSION_FILES if load(p)["variant"] == "hardened"]
    assert Code.MAC_FAIL in _verdict_codes(hardened)
    assert _verdict_codes([p for p in EXTENSION_FILES if load(p)["wire_format"] == "explicit"]) >= PER_REPORT_CODES


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
