"""What a derived file's ``pqlab`` metadata says about where it came from, read from the keys its writers set."""

from __future__ import annotations

from typing import Any

PROVENANCE_KEY = "raw_samples"  # the provenance block inside a raw file's ``pqlab`` metadata
EDITED_KEY = "edited_by_hand"   # in a provenance block: the record `pqlab raw import --edited` leaves
HAND_EDITED = "hand_edited"     # in a measurement's metadata and the metrics' source: the files edited by hand


def hand_edited(metadata: dict[str, Any]) -> list[str]:
    """The raw files edited by hand behind a derived file, as ``<file> (<stage>)``."""
    stage = (metadata.get("measured") or {}).get("stage", "?")
    return [f"{name} ({stage})" for name in metadata.get(HAND_EDITED) or []]


def analysis_profile(metadata: dict[str, Any]) -> str | None:
    """The profile an analysis output was computed under (``analysis.params.profile``, written by
    ``raw_provenance.analysis_metadata``), else the profile its samples were measured under."""
    analysed = ((metadata.get("analysis") or {}).get("params") or {}).get("profile")
    return analysed or (metadata.get("measured") or {}).get("profile")
