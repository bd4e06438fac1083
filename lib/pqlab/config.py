"""The base of every typed config (strict, frozen, finite), the name rule they share, and reading one from YAML."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from pqlab import bounded
from pqlab.errors import ParamsError
from pqlab.validation import first_problem

BackendChoice = Literal["auto", "liboqs", "openssl", "pqcrypto"]
NAME_MAX_CHARS = 64  # configuration, scenario and baseline names: they head table rows and figure legends


class Strict(BaseModel):
    """Unknown keys, silent type coercion (e.g. "10" -> 10) and non-finite numbers (.inf, .nan) are errors."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a configuration, scenario or baseline, or None: 1 to ``NAME_MAX_CHARS`` printable
    characters (no newline, tab, NUL or other control character, which would break a Markdown table's row)."""
    if not isinstance(name, str):
        return f"a name is a string, not {type(name).__name__}"
    if not name:
        return "a name is at least one character"
    if len(name) > NAME_MAX_CHARS:
        return f"a name is at most {NAME_MAX_CHARS} characters; this one has {len(name):,}"
    for position, char in enumerate(name):
        if not char.isprintable():
            return f"a name is printable characters only; {char!r} at position {position} is not"
    return None


def _valid_name(name: str) -> str:
    problem = name_problem(name)
    if problem:
        raise ValueError(problem)
    return name


Name = Annotated[str, AfterValidator(_valid_name)]


def powers_of_two(low: int, high: int) -> tuple[int, ...]:
    """2**low, ..., 2**high."""
    return tuple(1 << e for e in range(low, high + 1))


def strictly_increasing(values: tuple[int, ...], field: str) -> None:
    """A ValueError naming ``field`` unless ``values`` increase strictly."""
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise ValueError(f"{field} must be strictly increasing, got {list(values)}")


_Model = TypeVar("_Model", bound=BaseModel)


def read_table(model: type[_Model], path: str | Path, what: str) -> _Model:
    """A YAML input table (cycle counts, implementations) validated as ``model``: its first problem is one ParamsError
    naming the file and the entry."""
    try:
        return model.model_validate(read_yaml(path, what))
    except ValidationError as exc:
        raise ParamsError(first_problem(exc).line(), field=str(path)) from None


def read_yaml(path: str | Path, what: str = "parameters file", *, max_bytes: int = bounded.MAX_DOCUMENT_BYTES) -> Any:
    """Read any YAML input of pqlab (params, cycle tables, configurations, the paper reference): UTF-8, no
    duplicate keys, bounded size, alias expansion, integer length and nesting (:mod:`pqlab.bounded`); anything
    unreadable or over a bound is one ParamsError naming the file."""
    return bounded.load_yaml(path, what, max_bytes=max_bytes)
