"""The small expression language of the reference file: a claim's predicate, a derived value, a consistency check.

Python expression syntax restricted to arithmetic, comparisons, ``and``/``or``/``not``, conditional expressions,
literals, subscripts, comprehensions and a fixed set of functions (``all any min max len abs sum round sorted set
int float log10 floor ceil``, and ``items keys values`` of a mapping, sorted by key) over named values. Names are
the row's data (this run's metrics) or a check's inputs (the paper's numbers); nothing else is reachable (no
attributes, no imports, no builtins beyond the list). Written by hand because the reference file needs exactly
this and no more: a general evaluator would reach far more.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Iterable, Mapping
from typing import Any

FUNCTIONS: dict[str, Any] = {
    "all": all, "any": any, "min": min, "max": max, "len": len, "abs": abs, "sum": sum, "round": round,
    "sorted": sorted, "set": set, "int": int, "float": float, "log10": math.log10, "floor": math.floor,
    "ceil": math.ceil, "items": lambda d: sorted(d.items()), "keys": lambda d: sorted(d),
    "values": lambda d: [d[k] for k in sorted(d)],
}

_NODES = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd, ast.BinOp, ast.Add,
    ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE,
    ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.Name, ast.Load, ast.Store, ast.Constant, ast.Call,
    ast.List, ast.Tuple, ast.Set, ast.Subscript, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.comprehension,
    ast.IfExp, ast.Slice,
)


class ExpressionError(ValueError):
    """An expression outside the language, or one that names something it was not given."""


def names(expression: str) -> set[str]:
    """The free names of ``expression`` (not functions, not comprehension variables); ExpressionError if it is
    not in the language."""
    tree = _parse(expression)
    bound = {n.id for node in ast.walk(tree) if isinstance(node, ast.comprehension)
             for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} \
        - bound - set(FUNCTIONS)


def _parse(expression: str) -> ast.Expression:
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"not an expression: {expression!r} ({exc.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise ExpressionError(f"{type(node).__name__} is not allowed in {expression!r}")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                                               and not node.keywords):
            raise ExpressionError(f"only {', '.join(sorted(FUNCTIONS))} may be called in {expression!r}")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bool, type(None))):
            raise ExpressionError(f"constant {node.value!r} is not allowed in {expression!r}")
    return tree


def evaluate(expression: str, values: Mapping[str, Any]) -> Any:
    """The value of ``expression`` with ``values`` bound to its names."""
    tree = _parse(expression)
    missing = names(expression) - set(values)
    if missing:
        raise ExpressionError(f"{expression!r} uses {', '.join(sorted(missing))}, which it was not given")
    code = compile(tree, "<reference expression>", "eval")
    # one namespace (globals): comprehensions see the names; the language is checked above
    return eval(code, {"__builtins__": {}, **FUNCTIONS, **values})


MAX_CORNERS = 4096


def corners(values: Mapping[str, tuple[float, float]]) -> Iterable[dict[str, float]]:
    """Every combination of each value's two ends (a printed number's rounding interval); values whose two ends
    are equal count once. More than :data:`MAX_CORNERS` combinations is an ExpressionError."""
    keys = list(values)
    ends = [sorted(set(values[k])) for k in keys]
    if math.prod(len(e) for e in ends) > MAX_CORNERS:
        raise ExpressionError(f"{len(keys)} rounded inputs give too many combinations: mark exact inputs as exact")
    for combo in itertools.product(*ends):
        yield dict(zip(keys, combo, strict=True))


def substituted(expression: str, values: Mapping[str, Any]) -> str:
    """``expression`` with each name replaced by its value as written (for showing the arithmetic)."""
    tree = _parse(expression)

    class _Swap(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in values and not isinstance(values[node.id], (list, dict, set, tuple)):
                return ast.Name(id=str(values[node.id]), ctx=node.ctx)
            return node

    return ast.unparse(_Swap().visit(tree))
