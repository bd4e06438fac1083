"""Bounded parsing of the YAML and JSON files a user hands to pqlab: size, alias expansion, integer length, nesting.

PyYAML and the json module parse whatever they are given: a few hundred bytes of nested aliases ("billion
laughs") expand to 10^9 nodes once a caller walks them, and an integer of 5,000 digits ends in Python's own
``ValueError``. Every check here happens before the document is built, so a hostile or mistaken file costs
milliseconds and a few megabytes, and is one :class:`ParamsError` naming the file:

* a document larger than ``max_bytes`` (``MAX_DOCUMENT_BYTES`` unless the caller states its own bound);
* aliases that would add more than ``ALIAS_EXPANSION_BUDGET`` nodes when expanded (aliases stay allowed:
  ``params/paper_reference.yaml`` names its tolerance bands with them), or an alias that refers to itself;
* an integer with more than ``MAX_INT_DIGITS`` digits; duplicate keys; nesting deeper than libyaml's
  1,000 levels (the interpreter's stack where PyYAML has no libyaml).

A document whose first character is ``{`` or ``[`` is read as JSON first (JSON is YAML, but PyYAML limits a
flow mapping's key to 1,024 characters and would call a valid JSON file "not valid YAML"); if it is not JSON it
is read as YAML. No library offers these bounds for PyYAML, hence this module.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from pqlab.errors import ParamsError

MAX_DOCUMENT_BYTES = 2 << 20        # 2 MiB: params.yaml is ~9 kB, paper_reference.yaml ~0.1 MB
ALIAS_EXPANSION_BUDGET = 100_000    # nodes that aliases may add when expanded (paper_reference.yaml: a few thousand)
MAX_INT_DIGITS = 100


def _mib(octets: int) -> str:
    return f"{octets / (1 << 20):.2f} MiB" if octets >= 1 << 20 else f"{octets / 1024:.1f} KiB"


# libyaml's parser when PyYAML was built with it (the wheels are): it composes paper_reference.yaml in 30 ms where
# the pure-Python one takes 1.8 s, and bounds nesting itself (1,000 levels); the constructors stay PyYAML's.
_SafeLoader = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


class BoundedLoader(_SafeLoader):
    """PyYAML's safe loader that refuses duplicate keys and over-long integers (errors name the file and line)."""

    def __init__(self, stream: str, name: str) -> None:
        super().__init__(stream)
        self.name = name


def _mapping_without_duplicates(loader: BoundedLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key (a list): construct_mapping below says so
            continue
        seen.setdefault(key, key_node.start_mark.line)
        if first is not None:
            raise ParamsError(f"duplicate key {key!r} (line {key_node.start_mark.line + 1}; first on line "
                              f"{first + 1})", field=loader.name)
    return loader.construct_mapping(node, deep=deep)


def _bounded_int(loader: BoundedLoader, node: yaml.ScalarNode) -> int:
    digits = sum(ch.isdigit() for ch in node.value)
    if digits > MAX_INT_DIGITS:
        raise ParamsError(f"the integer on line {node.start_mark.line + 1} has {digits:,} digits; at most "
                          f"{MAX_INT_DIGITS} are accepted", field=loader.name)
    return loader.construct_yaml_int(node)


BoundedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)
BoundedLoader.add_constructor("tag:yaml.org,2002:int", _bounded_int)


def expansion(root: yaml.Node) -> tuple[int, int]:
    """(distinct nodes, nodes once every alias is expanded) of a composed document; ValueError on a cycle.

    PyYAML composes an alias as the anchored node itself, so the document is a graph: the first number counts
    its nodes, the second what a walk of the built data (copying, validating, printing) would visit.
    """
    expanded: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            expanded[key] = 1 + sum(expanded[id(child)] for child in _children(node))
            continue
        if key in expanded:
            continue
        if key in on_path:
            raise ValueError(f"the alias on line {node.start_mark.line + 1} refers to a node that contains it")
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise ValueError(f"the alias on line {child.start_mark.line + 1} refers to a node that contains it")
            if id(child) not in expanded:
                stack.append((child, False))
    return len(expanded), expanded[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _read_text(path: Path, what: str, max_bytes: int) -> str:
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise ParamsError(f"{what} is not a regular file", field=str(path))
        if info.st_size > max_bytes:
            raise ParamsError(f"{what} is {_mib(info.st_size)}; at most {_mib(max_bytes)} is accepted",
                              field=str(path))
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise ParamsError(f"cannot read {what}: {exc.strerror or exc}", field=str(path)) from None
    if len(raw) > max_bytes:  # grew since stat, or a file whose size the kernel does not report
        raise ParamsError(f"{what} is over {_mib(max_bytes)}; at most {_mib(max_bytes)} is accepted",
                          field=str(path))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParamsError(f"{what} is not UTF-8 text (byte {exc.start})", field=str(path)) from None


def _json_pairs(name: str):
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise ParamsError(f"duplicate key {key!r}", field=name)
            out[key] = value
        return out
    return pairs


def _json_int(name: str):
    def parse(text: str) -> int:
        digits = len(text.lstrip("-"))
        if digits > MAX_INT_DIGITS:
            raise ParamsError(f"an integer has {digits:,} digits; at most {MAX_INT_DIGITS} are accepted", field=name)
        return int(text)
    return parse


def _json_constant(name: str):
    def refuse(text: str) -> None:
        raise ParamsError(f"{text} is not a number JSON allows", field=name)
    return refuse


def _json(text: str, name: str) -> tuple[bool, Any]:
    """(True, data) when ``text`` is a JSON document, (False, None) when it is not JSON at all."""
    try:
        return True, json.loads(text, object_pairs_hook=_json_pairs(name), parse_int=_json_int(name),
                                parse_constant=_json_constant(name))
    except json.JSONDecodeError:
        return False, None


def load_yaml(path: str | Path, what: str = "parameters file", *, max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """Read one YAML (or JSON) document within the bounds above; anything else is one ParamsError naming ``path``."""
    path = Path(path)
    name = str(path)
    text = _read_text(path, what, max_bytes)
    try:
        if text.lstrip()[:1] in ("{", "["):
            is_json, data = _json(text, name)
            if is_json:
                return data
        loader = BoundedLoader(text, name)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            try:
                distinct, total = expansion(node)
            except ValueError as exc:
                raise ParamsError(f"{what}: {exc}", field=name) from None
            if total - distinct > ALIAS_EXPANSION_BUDGET:
                raise ParamsError(f"{what}: its aliases expand to {total:,} nodes from {distinct:,} written; aliases "
                                  f"may add at most {ALIAS_EXPANSION_BUDGET:,} nodes", field=name)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):  # libyaml's own bound (1,000 levels)
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            raise ParamsError(f"{what} is nested too deeply{where}", field=name) from None
        raise ParamsError(f"not valid YAML: {' '.join(str(exc).split())}", field=name) from None
    except RecursionError:
        raise ParamsError(f"{what} is nested too deeply", field=name) from None
