"""pqlab.amort imports one way (issue 22 item 5): no module reaches itself through imports, lazy ones included.

Run ``python -m tests.amort.test_import_graph`` to print the graph's size and any cycle.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.import_closure import LIB, _imports


def import_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (every ``import`` statement, also inside functions)."""
    modules = {}
    for path in (LIB / Path(*package.split("."))).rglob("*.py"):
        rel = path.relative_to(LIB).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        modules[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = set()
        for target in _imports(path, name):
            while target and target not in modules:  # `from pkg.mod import name` names a module's attribute
                target = target.rpartition(".")[0]
            if target and target != name:
                deps.add(target)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
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


def test_amort_has_no_import_cycles() -> None:
    graph = import_graph("pqlab.amort")
    assert len(graph) > 40
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_fast_path_and_vector_modules_import_one_way() -> None:
    graph = import_graph("pqlab.amort")
    assert "pqlab.amort.fastpath" not in graph["pqlab.amort.fastpath_native"]
    assert "pqlab.amort.fastpath" not in graph["pqlab.amort.fastpath_reference"]
    assert {"pqlab.amort.fastpath_native", "pqlab.amort.fastpath_reference"} <= graph["pqlab.amort.fastpath"]
    assert "pqlab.amort.vectors" not in graph["pqlab.amort.vector_cases"]
    assert "pqlab.amort.vector_cases" in graph["pqlab.amort.vectors"]


if __name__ == "__main__":
    package = sys.argv[1] if len(sys.argv) > 1 else "pqlab.amort"
    graph = import_graph(package)
    found = cycles(graph)
    print(f"{len(graph)} modules under {package}, {sum(map(len, graph.values()))} imports, {len(found)} cycles")
    for component in found:
        print("  cycle:", " <-> ".join(component))
    sys.exit(1 if found else 0)
