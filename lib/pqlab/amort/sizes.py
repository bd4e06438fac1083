"""AMORT-V1's byte sizes from real encodings: how a report and a checkpoint split into record, tags, fixed part,
spans and closes, and a fleet's checkpoint size (Table III's bytes, the what-if tools' checkpoints)."""

from __future__ import annotations

from dataclasses import dataclass

from pqlab.amort.messages import HASH, ID_OCTETS, Checkpoint, CloseEntry, Report, Span


@dataclass(frozen=True)
class Decomposition:
    """How the bytes split, each part the ``len()`` of a real encoding (report, empty checkpoint, one span...)."""

    record: int
    tags: int
    report: int
    signature: int
    checkpoint_fixed: int
    span: int
    close: int
    wire_format: str = "implied"

    def checkpoint(self, spans: int, closes: int = 0) -> int:
        return self.checkpoint_fixed + spans * self.span + closes * self.close


def _checkpoint(spans: tuple[Span, ...], closes: tuple[CloseEntry, ...], signature_octets: int,
                wire_format: str = "implied") -> bytes:
    return Checkpoint(bytes(ID_OCTETS), 0, bytes(HASH), len(spans), bytes(HASH), spans, closes, 1,
                      bytes(signature_octets), wire_format=wire_format).encode()


def one_report_spans(n: int) -> tuple[Span, ...]:
    """``n`` spans of one report each (distinct dev_ids), as a checkpoint of one report per identity holds."""
    return tuple(Span(i.to_bytes(ID_OCTETS, "big"), 1, 1, 1, bytes(HASH)) for i in range(n))


def checkpoint_octets(spans: int, signature_octets: int, wire_format: str = "implied") -> int:
    """``len()`` of a real Checkpoint encoding with ``spans`` one-report spans and a ``signature_octets`` signature
    (the what-if tools' checkpoint size for a fleet)."""
    return len(_checkpoint(one_report_spans(spans), (), signature_octets, wire_format))


def decompose(report: bytes, signature_octets: int, wire_format: str = "implied") -> Decomposition:
    """Record, tags and report from ``report``'s own encoding; the checkpoint's fixed part, per-span and per-close
    octets from real Checkpoint encodings carrying a signature of ``signature_octets`` (in ``wire_format``)."""
    record = len(Report.decode(report, wire_format=wire_format).record.encode())
    empty = len(_checkpoint((), (), signature_octets, wire_format))
    span = len(_checkpoint(one_report_spans(1), (), signature_octets, wire_format)) - empty
    close = len(_checkpoint((), (CloseEntry(bytes(ID_OCTETS), 1, 0, 0),), signature_octets, wire_format)) - empty
    return Decomposition(record=record, tags=len(report) - record, report=len(report), signature=signature_octets,
                         checkpoint_fixed=empty, span=span, close=close, wire_format=wire_format)
