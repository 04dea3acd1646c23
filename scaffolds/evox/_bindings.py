"""Binding tracking for the pre-filter: which names and attribute paths a module binds, to
which values, so that a library object stays visible under every name it is bound to."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def store_paths(target: ast.expr) -> Iterable[str]:
    """Every name or attribute path a binding target stores into."""
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from store_paths(element)
    elif isinstance(target, ast.Starred):
        yield from store_paths(target.value)
    else:
        path = dotted(target)
        if path is not None:
            yield path


def assignment(node: ast.AST) -> tuple[list[ast.expr], ast.expr] | None:
    """(targets, value) of an ``Assign`` or of an ``AnnAssign`` with a value, else None."""
    if isinstance(node, ast.Assign):
        return list(node.targets), node.value
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return [node.target], node.value
    return None


def bindings(tree: ast.AST) -> Iterable[tuple[list[str], ast.expr]]:
    """(paths bound, value) of every binding in the module: assignments of every form, loops
    and comprehensions (the value is the iterable: its elements are what get bound); a name
    bound in a class body is bound as ``Class.name`` too."""
    for node in ast.walk(tree):
        targets: list[ast.expr]
        if (assigned := assignment(node)) is not None:
            targets, value = assigned
        elif isinstance(node, ast.NamedExpr):
            targets, value = [node.target], node.value
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            targets, value = [node.target], node.iter
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            targets, value = [node.optional_vars], node.context_expr
        else:
            continue
        yield [path for target in targets for path in store_paths(target)], value
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef):
            for item in cls.body:
                if (assigned := assignment(item)) is not None:
                    targets, value = assigned
                    yield [f"{cls.name}.{p}" for t in targets for p in store_paths(t)], value


def class_names(tree: ast.Module) -> set[str]:
    """Names bound only by ``class`` statements (so they always hold a class)."""
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            other.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            other.add(node.name)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, ast.alias):
            other.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.Global | ast.Nonlocal):
            other.update(node.names)
    return defined - other


def library_valued(node: ast.expr, rooted: Callable[[ast.expr], bool]) -> bool:
    """Whether ``node`` may evaluate to an object out of a library (not a call's result);
    ``rooted`` says whether an ``a.b[c].d`` chain starts from a module or library name."""
    if rooted(node):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(library_valued(e, rooted) for e in node.elts)
    if isinstance(node, ast.Dict):
        return any(library_valued(v, rooted) for v in node.values)
    if isinstance(node, ast.Starred | ast.NamedExpr):
        return library_valued(node.value, rooted)
    if isinstance(node, ast.Subscript):
        return library_valued(node.value, rooted)
    if isinstance(node, ast.IfExp):
        return library_valued(node.body, rooted) or library_valued(node.orelse, rooted)
    if isinstance(node, ast.BoolOp):
        return any(library_valued(v, rooted) for v in node.values)
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
        return library_valued(node.elt, rooted)
    if isinstance(node, ast.DictComp):
        return library_valued(node.value, rooted)
    return False
