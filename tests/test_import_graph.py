"""lib/pqlab imports one way: no cycles (issue 22 item 5), and no import against the layer order of pqlab.layers
(issue 38), lazy imports and ``importlib.import_module`` included.

The graph is built from the source (``ast``), not by importing: every ``import`` / ``from ... import`` statement
counts, at module level or inside a function, except those under ``if TYPE_CHECKING:`` (never run). ``from pkg
import name`` is an edge to the submodule ``pkg.name`` when there is one, else to ``pkg`` itself (a name its
``__init__`` defines); a module's implicit dependence on its parent packages is not an edge. An
``importlib.import_module("pqlab....")`` call is an edge to the module it names; with an f-string, to the package
its literal prefix names (``f"pqlab.studies.{stage}"`` -> ``pqlab.studies``).

Run ``python -m tests.test_import_graph [package]`` to print the graph's size, every cycle as a path and every import
against the layer order.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from pqlab.layers import against_the_order, layer_of
from pqlab.pipeline.import_closure import LIB


def _modules(package: str) -> dict[str, Path]:
    modules = {}
    for path in (LIB / Path(*package.split("."))).rglob("*.py"):
        rel = path.relative_to(LIB).with_suffix("")
        modules[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = path
    return modules


def _type_checking_only(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _dynamic_target(node: ast.AST) -> str | None:
    """The module an ``importlib.import_module(...)`` / ``import_module(...)`` call names, or None for other nodes.

    A literal names its module; an f-string names the package of its literal prefix (up to the last dot before the
    first placeholder)."""
    if not (isinstance(node, ast.Call) and node.args):
        return None
    func = node.func
    if not ((isinstance(func, ast.Attribute) and func.attr == "import_module") or
            (isinstance(func, ast.Name) and func.id == "import_module")):
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value).rpartition(".")[0] or None
    return None


def _statements(tree: ast.AST):
    """Every import statement of ``tree`` and every ``import_module`` call, at any depth, outside ``if
    TYPE_CHECKING:`` bodies."""
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom) or _dynamic_target(node):
            yield node
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                todo.extend(child.orelse)  # the else branch runs
            else:
                todo.append(child)


def _owner(target: str, modules: dict[str, Path]) -> str | None:
    """The module ``target`` names, or the module that holds it as an attribute."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def import_graph(package: str = "pqlab") -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports."""
    modules = _modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in _statements(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                targets = [_dynamic_target(node)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                parent = ".".join(base.split(".")[: len(base.split(".")) - node.level + 1]) if node.level else ""
                source = ".".join(part for part in (parent, node.module) if part)
                targets = [f"{source}.{alias.name}" for alias in node.names]
            deps.update(owner for owner in (_owner(t, modules) for t in targets) if owner and owner != name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module, as a path a -> b -> ... -> a."""
    found = []
    for component in _components(graph):
        members = set(component)
        start = component[0]
        path, seen = [start], {start}
        while True:  # walk inside the component until a module repeats; every member has an edge inside it
            following = sorted(graph[path[-1]] & members)
            nxt = next((m for m in following if m == start), None) or next((m for m in following if m not in seen),
                                                                             following[0])
            if nxt in seen:
                found.append([*path[path.index(nxt):], nxt])
                break
            path.append(nxt)
            seen.add(nxt)
    return found


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def against_order(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every (importer, imported) pair where the imported module sits in a higher layer than its importer."""
    return sorted((importer, imported) for importer, deps in graph.items() for imported in deps
                  if against_the_order(importer, imported))


def _report(package: str) -> tuple[str, list[list[str]], list[tuple[str, str]]]:
    graph = import_graph(package)
    found = cycles(graph)
    upward = against_order(graph)
    lines = [f"{len(graph)} modules under {package}, {sum(map(len, graph.values()))} imports, {len(found)} cycles, "
             f"{len(upward)} imports against the layer order"]
    lines += ["  cycle: " + " -> ".join(cycle) for cycle in found]
    lines += [f"  against the order: {a} ({layer_of(a)}) imports {b} ({layer_of(b)})" for a, b in upward]
    return "\n".join(lines), found, upward


def test_lib_pqlab_has_no_import_cycles() -> None:
    text, found, _ = _report("pqlab")
    assert len(import_graph("pqlab")) > 150
    assert not found, text


def test_no_module_imports_from_a_higher_layer() -> None:
    text, _, upward = _report("pqlab")
    assert not upward, text


def test_every_module_has_a_layer() -> None:
    for module in import_graph("pqlab"):
        layer_of(module)  # raises KeyError naming the module


def test_the_layer_check_catches_an_upward_import_through_importlib(tmp_path, monkeypatch) -> None:
    from pqlab.pipeline import import_closure

    root = tmp_path / "pqlab"
    for package in ("analysis", "studies", "experiments"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "studies" / "costs.py").write_text("")
    (root / "experiments" / "timer.py").write_text("")
    dynamic = "import importlib\ndef f(stage):\n    return importlib.import_module(f'pqlab.studies.{stage}')\n"
    (root / "analysis" / "a.py").write_text(dynamic)
    (root / "analysis" / "b.py").write_text("def g():\n    from pqlab.experiments import timer\n")
    (root / "studies" / "c.py").write_text("from pqlab.analysis import a\nfrom pqlab.experiments import timer\n")
    monkeypatch.setattr(sys.modules[__name__], "LIB", tmp_path)
    monkeypatch.setattr(import_closure, "LIB", tmp_path)
    graph = import_graph("pqlab")
    assert graph["pqlab.analysis.a"] == {"pqlab.studies"}
    assert against_order(graph) == [("pqlab.analysis.a", "pqlab.studies"),
                                    ("pqlab.analysis.b", "pqlab.experiments.timer")]


def test_the_cycle_finder_finds_a_cycle_and_prints_it_as_a_path() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert cycles({"a": {"b", "c"}, "b": {"a"}, "c": {"b"}}) == [["a", "b", "a"]]


def test_lazy_imports_count_and_type_checking_imports_do_not(tmp_path, monkeypatch) -> None:
    from pqlab.pipeline import import_closure

    pkg = tmp_path / "pqlab" / "demo"
    pkg.mkdir(parents=True)
    (tmp_path / "pqlab" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("VALUE = 1\n")
    (pkg / "a.py").write_text("def f():\n    from pqlab.demo import b\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pqlab.demo import c\n"
                              "from . import a\n")
    (pkg / "c.py").write_text("from pqlab.demo import VALUE, b\n")
    monkeypatch.setattr(sys.modules[__name__], "LIB", tmp_path)
    monkeypatch.setattr(import_closure, "LIB", tmp_path)
    graph = import_graph("pqlab.demo")
    assert graph == {"pqlab.demo": set(), "pqlab.demo.a": {"pqlab.demo.b"}, "pqlab.demo.b": {"pqlab.demo.a"},
                     "pqlab.demo.c": {"pqlab.demo", "pqlab.demo.b"}}
    assert cycles(graph) == [["pqlab.demo.a", "pqlab.demo.b", "pqlab.demo.a"]]


def test_the_fast_path_and_vector_modules_import_one_way() -> None:
    graph = import_graph("pqlab")
    assert "pqlab.amort.fastpath.api" not in graph["pqlab.amort.fastpath.native.adapter"]
    assert "pqlab.amort.fastpath.api" not in graph["pqlab.amort.fastpath.reference"]
    implementations = {"pqlab.amort.fastpath.native.adapter", "pqlab.amort.fastpath.reference"}
    assert implementations <= graph["pqlab.amort.fastpath.api"]
    # the C core's loader stays light: a stage timing only the C primitives imports no protocol code with it
    assert graph["pqlab.amort.fastpath"] == set()
    assert graph["pqlab.amort.fastpath.native"] <= {"pqlab.amort.errors", "pqlab.native_override"}
    assert "pqlab.amort.conformance.vectors" not in graph["pqlab.amort.conformance.cases"]
    assert "pqlab.amort.conformance.cases" in graph["pqlab.amort.conformance.vectors"]


if __name__ == "__main__":
    report, cycles_found, upward_found = _report(sys.argv[1] if len(sys.argv) > 1 else "pqlab")
    print(report)
    sys.exit(1 if cycles_found or upward_found else 0)
