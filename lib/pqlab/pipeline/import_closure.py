"""The files a pqlab module depends on: its import closure inside the package (static, from the source; what
dvc.yaml lists as each stage's deps)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

LIB = Path(__file__).resolve().parents[2]  # the folder holding the pqlab package


def module_file(name: str) -> Path | None:
    """The source of module ``name`` (a .py file, a package's __init__.py, or a C extension's .c source)."""
    base = LIB.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py", base.with_suffix(".c")):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path, name: str) -> frozenset[str]:
    if path.suffix == ".c":
        return frozenset()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return _imports_of_source(path.read_text(), str(path), package)


@functools.cache
def _imports_of_source(source: str, filename: str, package: str) -> frozenset[str]:
    """The pqlab modules a source imports (parsed once per text: every stage's closure meets the same modules)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)  # `from pkg import submodule`
    return frozenset(m for m in found if m == "pqlab" or m.startswith("pqlab."))


def closure(name: str) -> set[Path]:
    """Every source file reached from module ``name`` through imports inside pqlab (parents' __init__ too)."""
    seen: set[str] = set()
    files: set[Path] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        path = module_file(current)
        if path is None:
            continue
        files.add(path)
        parts = current.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # importing a.b.c runs a and a.b
        todo.extend(_imports(path, current))
    return files
