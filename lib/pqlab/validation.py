"""A pydantic ValidationError as pqlab's one-line error: the field's path, what is wrong, and the value given."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

_MARKERS = ("function-after[", "function-before[", "function-wrap[", "function-plain[")  # validator steps, not fields
_OWN_MESSAGE = ("missing", "value_error")          # no value to show, or a validator's message that names it


def short(value: Any) -> str:
    """``repr(value)`` cut to 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def dotted(loc: Sequence[Any]) -> str:
    """A field path as ``section.field[0].name``: an error in a mapping's key reads "(the name)", a key with a
    control character is shown as its repr (one line), a key over 80 characters is cut."""
    text = ""
    for part in loc:
        if part == "[key]":
            text += " (the name)"
            continue
        if not isinstance(part, int | str) or (isinstance(part, str) and not part.isprintable()):
            part = repr(part)
        if isinstance(part, str) and len(part) > 80:
            part = short(part)
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


@dataclass(frozen=True)
class FieldProblem:
    """The first error of a validation: where, what, and `` (got …)`` when the message does not show the value."""

    loc: tuple[Any, ...]
    message: str
    got: str
    count: int  # errors in the whole validation

    def line(self, where: str | None = None) -> str:
        """``where: message (got value)``; ``where`` defaults to the dotted path (the message alone without one)."""
        where = dotted(self.loc) if where is None else where
        return f"{where}: {self.message}{self.got}" if where else f"{self.message}{self.got}"


def first_problem(exc: ValidationError) -> FieldProblem:
    """The first error of ``exc``, its path without pydantic's validator markers and its message without the
    ``Value error, `` prefix."""
    errors = exc.errors()
    first = errors[0]
    loc = tuple(part for part in first["loc"] if not (isinstance(part, str) and part.startswith(_MARKERS)))
    got = "" if first["type"] in _OWN_MESSAGE else f" (got {short(first.get('input'))})"
    return FieldProblem(loc, str(first["msg"]).removeprefix("Value error, "), got, len(errors))
