"""Static pre-filter for LLM-written strategy code: a first gate that closes routes by class.

Nothing is executed.  Two passes over the source:

1. RestrictedPython's ``compile_restricted_exec`` with its rules loosened the way strategy code
   needs (single-underscore names and attributes, annotated and augmented assignments).
2. An AST policy built on allow-lists (:mod:`scaffolds.evox.allowlist`), each rule closing a class
   of route rather than a known case:

   - **Modules and their attributes.**  Imports only of listed modules; ``mod.attr``,
     ``from mod import attr`` and ``getattr(mod, "attr")`` only for attributes listed under that
     module.  A module is never a value: it appears only as ``mod.attr`` (no ``m = copy``, no
     ``f(np)``), so every use of a module is visible here.
   - **No writes into libraries.**  No assignment or deletion of an attribute or item reached
     from a module, from a name imported out of one, or from a name or attribute path that was
     bound to such an object in any binding form (``=``, ``:=``, unpacking, ``for``,
     comprehensions, containers and conditionals of them): ``np.x = …``, ``Program.sample = …``,
     ``f = copy.deepcopy; f.x = …``, ``self.f = copy.deepcopy; self.f.x = …``; a class body's
     names as ``Class.name``.  (A library object laundered through a function's return value
     or a library container is not followed: the sandbox is the boundary, the host keeps the
     canonical programs and reads resources from the kernel.)
   - **Free names are builtins from a list**; ``exec``, ``eval``, ``open``, ``__import__``,
     ``globals``, ``vars``, ``setattr`` … are simply not on it.
   - **Getattr-like callables are never values.**  ``getattr``/``hasattr`` only as direct calls
     with a literal name, which passes every rule an attribute written ``x.name`` does — so no
     alias (``g = getattr``), no ``reduce(getattr, …)``, no ``partial(getattr)``, no
     ``getattr(t, "format")``; callables that take attribute names as strings
     (``operator.attrgetter``/``methodcaller``, ``functools.wraps``) are not on their lists.
   - **Private attributes only of the strategy's own objects**: ``x._name`` only as
     ``self._name``/``cls._name`` where ``self``/``cls`` is the first parameter of a method of a
     class of the module and never rebound, or ``super()._name`` (and namedtuple's
     ``_replace``/``_asdict``/``_fields``/``_make``), so library internals
     (``random.Random()._randbelow``, ``E._create_``) are out.  (A method called through its
     class with a foreign first argument is not followed.)
   - **No dunder access of any kind**: no dunder attribute (except ``super().__init__(…)`` and
     the other listed dunder methods called on ``super()``), no dunder name but ``__name__``,
     no string constant naming a dunder; class bodies define only listed dunder methods.
   - **No frames**: the attributes of frames, code objects, generators, coroutines and
     tracebacks (``gi_frame``, ``f_back``, ``f_globals``, ``tb_frame``, ``co_consts`` …) are
     refused on any object.
   - **No format-string field access**: ``str.format``/``format_map`` only on a string literal
     whose fields name no attribute or item (``"{0.__globals__}"`` and ``"{x[k]}"`` are refused).
   - **No class-making tricks**: no ``metaclass=`` (no class keywords at all); ``type`` only as
     ``type(x)`` compared with ``is``/``is not``, or with ``==``/``!=``/``in`` against plain
     classes (a builtin, a library class, a class the module defines, another ``type(y)``) —
     a comparison with an object of the strategy's own class would hand ``type`` to its
     ``__eq__``; ``super`` only as ``super().name``; no listed attribute is a metaclass or stands
     for one (``typing.Type`` is not listed; a test checks the lists); the ``enum`` classes only
     as bases of a class that defines members, so the functional API (a class from a namespace
     mapping, dunders included) cannot run.

A rejection carries readable, line-numbered reasons that are fed back to the meta-LLM.  What
passes still runs only in a locked-down sandbox: this gate is cheap and early, not the boundary.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from RestrictedPython import compile_restricted_exec
from RestrictedPython.transformer import RestrictingNodeTransformer

from scaffolds.evox._bindings import assignment, bindings, class_names, dotted, library_valued
from scaffolds.evox.allowlist import (
    ALLOWED,
    BUILTINS,
    DUNDER_METHODS,
    FRAME_ATTRIBUTES,
    RESTRICTED_BUILTINS,
    WHY,
)

__all__ = ["ALLOWED_IMPORTS", "Finding", "PrefilterResult", "prefilter"]

ALLOWED_IMPORTS = frozenset(ALLOWED)
MAX_CHARS = 200_000
#: Attribute names refused on any object (ndarray file output, raw pointers).
ANY_DENIED = {
    "tofile": "file output",
    "dump": "file output",
    "ctypes": "raw memory access",
    "cffi": "raw memory access",
}
#: Why a notable module attribute is not on its module's list (shown to the meta-LLM).
ATTRIBUTE_WHY = {
    "operator.attrgetter": "string-keyed attribute access",
    "operator.methodcaller": "string-keyed attribute access",
    "logging.currentframe": "frames",
    "logging.Formatter": "format strings that walk attributes",
    "logging.FileHandler": "files or sockets",
    "logging.handlers": "files or sockets",
    "logging.config": "files or sockets",
    "logging.basicConfig": "files or sockets",
    "typing.get_type_hints": "evaluates strings as code",
    "typing.ForwardRef": "evaluates strings as code",
    "functools.singledispatch": "evaluates annotations as code",
    "dataclasses.make_dataclass": "builds classes from a namespace",
    "typing.Type": "the metaclass type: subclassing it makes a metaclass; annotate with the class",
    "functools.wraps": "copies attributes named by strings",
    "functools.update_wrapper": "copies attributes named by strings",
    "abc.ABCMeta": "metaclasses",
    "enum.EnumMeta": "metaclasses",
    "enum.EnumType": "metaclasses",
    "random.SystemRandom": "non-deterministic",
}
_NUMPY_IO = frozenset(
    "load save savez savez_compressed savetxt loadtxt genfromtxt fromfile fromregex memmap "
    "ctypeslib lib testing f2py distutils DataSource core _core".split()
)
_DUNDER = re.compile(r"__[A-Za-z0-9_]+__")
#: Single-underscore attributes that are public API (namedtuple's).
PUBLIC_UNDERSCORE = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})
#: Receivers whose private attributes are the strategy's own.
_OWN = frozenset({"self", "cls"})
#: ``enum`` classes whose call with a namespace builds a class (the functional API).
_ENUM_FAMILY = frozenset({"enum.Enum", "enum.IntEnum", "enum.Flag", "enum.IntFlag", "enum.StrEnum"})
_SAFE_COMPARE = (ast.Is, ast.IsNot)
_SHOWN_NAMES = 40


@dataclass(frozen=True)
class Finding:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


@dataclass(frozen=True)
class PrefilterResult:
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not self.findings

    def reason(self) -> str:
        """The rejection as one readable text (empty when the code passed)."""
        if self.ok:
            return ""
        lines = [str(f) for f in self.findings[:10]]
        more = len(self.findings) - len(lines)
        if more > 0:
            lines.append(f"… and {more} more")
        allowed = ", ".join(sorted(ALLOWED_IMPORTS))
        return (
            "The strategy was rejected by the static pre-filter:\n- "
            + "\n- ".join(lines)
            + f"\nStrategies may import only: {allowed} (and only the usual public names of "
            "each)."
        )


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


def _private(name: str) -> bool:
    return name.startswith("_") and not _dunder(name)


class _StrategyTransformer(RestrictingNodeTransformer):
    """RestrictedPython's rules, minus the ban on single-underscore names (dunders are the
    policy's business, with its own messages)."""

    def check_name(self, node, name, allow_magic_methods=False):  # type: ignore[no-untyped-def]
        if name is None or _private(name) or name == "__name__":
            return
        if allow_magic_methods and name in DUNDER_METHODS and node.col_offset != 0:
            return
        super().check_name(node, name, allow_magic_methods)

    def visit_AnnAssign(self, node):  # type: ignore[no-untyped-def]
        # ``best: float = 0.0`` is everyday LLM code; RestrictedPython has no rule for it.
        return self.node_contents_visit(node)

    def visit_AugAssign(self, node):  # type: ignore[no-untyped-def]
        # ``self.count += 1``: RestrictedPython refuses it only because it cannot guard the
        # in-place operation at run time; we never run the restricted code.
        return self.node_contents_visit(node)

    def visit_Attribute(self, node):  # type: ignore[no-untyped-def]
        if _private(node.attr) or node.attr in DUNDER_METHODS:
            node.attr = "u" + node.attr.lstrip("_")  # this tree is checked, never executed
        return super().visit_Attribute(node)


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the module binds anywhere (any scope): what is not here is a builtin."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return bound


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
        ):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _format_fields(text: str) -> Iterable[str]:
    """Field names of a ``str.format`` template, nested specs included; raises ValueError."""
    for _, field, spec, _ in string.Formatter().parse(text):
        if field is not None:
            yield field
        if spec:
            yield from _format_fields(spec)


class _Policy(ast.NodeVisitor):
    def __init__(self, tree: ast.Module, allowed: Mapping[str, frozenset[str] | None]) -> None:
        self.allowed = allowed
        self.findings: list[Finding] = []
        self.bound = _bound_names(tree)
        self.docstrings = _docstrings(tree)
        self.modules: dict[str, str] = {}  # local name → module path
        self.library: set[str] = set()  # names and attribute paths bound to library objects
        self.imported: dict[str, str] = {}  # local name → module.attr of a from-import
        self.classes = class_names(tree)
        self.parent: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[id(child)] = node
        self._collect_imports(tree)

    # -- helpers -------------------------------------------------------------------------------
    def flag(self, node: ast.AST, message: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 0), message))

    def _up(self, node: ast.AST) -> ast.AST | None:
        return self.parent.get(id(node))

    def _allows(self, module: str, attr: str) -> bool:
        names = self.allowed.get(module)
        return (not _private(attr) and not _dunder(attr)) if names is None else attr in names

    def _collect_imports(self, tree: ast.Module) -> None:
        """Module aliases and imported library names (any scope), before the checks."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.modules[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        self.modules[root] = root
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    local = alias.asname or alias.name
                    if full in self.allowed:
                        self.modules[local] = full
                    elif alias.name != "*":
                        self.library.add(local)
                        self.imported[local] = full
        bound = list(bindings(tree))
        while True:  # ``n = mod.attr``, ``a, b = X, Y``, ``for f in [X]``…: to a fixed point
            grown = False
            for paths, value in bound:
                if library_valued(value, self._rooted):
                    for path in paths:
                        if path not in self.library:
                            self.library.add(path)
                            grown = True
            if not grown:
                break
        # ``self``/``cls`` bound other than as a method's first parameter are not the strategy's
        # own object (``self = random.Random()``).
        self.foreign_self = {
            n.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in _OWN
        }

    def _rooted(self, node: ast.expr) -> bool:
        return self._root(node, calls=False) is not None

    def _root(self, node: ast.expr, *, calls: bool) -> str | None:
        """The module or library name (or attribute path) an ``a.b[c].d`` chain starts from."""
        while True:
            path = dotted(node)
            if path is not None and (path in self.library or path in self.modules):
                return path
            if isinstance(node, ast.Attribute | ast.Subscript):
                node = node.value
            elif calls and isinstance(node, ast.Call):
                node = node.func
            else:
                return None

    def _module_of(self, node: ast.expr) -> str | None:
        """The module path an expression names (``np``, ``np.random``), or None."""
        if isinstance(node, ast.Name):
            return self.modules.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self._module_of(node.value)
            if base is not None and f"{base}.{node.attr}" in self.allowed:
                return f"{base}.{node.attr}"
        return None

    def _module_attribute(self, node: ast.AST, module: str, attr: str) -> bool:
        """Check ``module.attr`` against the lists; False (and a finding) if refused."""
        path = f"{module}.{attr}"
        if _private(attr):
            self.flag(node, f"'{path}' is a private attribute of a module; use its public API")
        elif attr in ANY_DENIED:
            self.flag(node, f"'.{attr}' is not allowed ({ANY_DENIED[attr]})")
        elif self._allows(module, attr):
            return True
        elif module.split(".")[0] == "numpy" and attr in _NUMPY_IO:
            self.flag(node, f"'{path}' is not allowed (file I/O or native code)")
        elif path in ATTRIBUTE_WHY:
            self.flag(node, f"'{path}' is not allowed ({ATTRIBUTE_WHY[path]})")
        else:
            names = sorted(self.allowed.get(module) or ())
            shown = ", ".join(names[:_SHOWN_NAMES]) + (", …" if len(names) > _SHOWN_NAMES else "")
            self.flag(
                node,
                f"'{path}' is not allowed: strategies may use only these names of {module}: "
                f"{shown}",
            )
        return False

    def _module_import(self, node: ast.AST, name: str) -> bool:
        if name in self.allowed:
            return True
        why = WHY.get(name.split(".")[0])
        self.flag(node, f"import of {name!r} is not allowed" + (f" ({why})" if why else ""))
        return False

    # -- imports -------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            parts = alias.name.split(".")
            for cut in range(1, len(parts) + 1):  # ``import a.b.c`` uses a, a.b and a.b.c
                if not self._module_import(node, ".".join(parts[:cut])):
                    break

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.flag(node, "relative imports are not allowed")
            return
        module = node.module or ""
        if not self._module_import(node, module):
            return
        for alias in node.names:
            if alias.name == "*":
                self.flag(node, f"'from {module} import *' is not allowed (name what you use)")
            else:
                self._module_attribute(node, module, alias.name)

    # -- names ---------------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        name, up = node.id, self._up(node)
        if isinstance(node.ctx, ast.Store | ast.Del):
            if _dunder(name):
                self.flag(node, f"assigning the dunder name {name!r} is not allowed")
            elif name in RESTRICTED_BUILTINS or name in self.modules:
                self.flag(node, f"rebinding {name!r} is not allowed")
            return
        if _dunder(name) and name != "__name__":
            self.flag(node, f"{name!r} is not allowed in a strategy (no dunder names)")
        elif self.imported.get(name) in _ENUM_FAMILY:
            self._enum_use(node, up)
        elif name in self.modules:
            usable = isinstance(up, ast.Attribute) and up.value is node
            if not usable and not self._getattr_target(node, up):
                self.flag(
                    node,
                    f"the module {name!r} may only be used as {name}.name (not passed, stored, "
                    "returned or aliased)",
                )
        elif name not in self.bound:
            if name not in BUILTINS:
                self.flag(node, f"{name!r} is not allowed in a strategy")
            elif name in RESTRICTED_BUILTINS:
                self._restricted(node, up)

    def _getattr_target(self, node: ast.Name, up: ast.AST | None) -> bool:
        return (
            isinstance(up, ast.Call)
            and isinstance(up.func, ast.Name)
            and up.func.id in ("getattr", "hasattr")
            and bool(up.args)
            and up.args[0] is node
        )

    def _restricted(self, node: ast.Name, up: ast.AST | None) -> None:
        called = isinstance(up, ast.Call) and up.func is node
        if node.id in ("getattr", "hasattr"):
            if not called:
                self.flag(
                    node,
                    f"{node.id} may only be called directly, with a literal name (not aliased, "
                    "passed or stored)",
                )
        elif node.id == "type":
            assert up is None or isinstance(up, ast.AST)
            one_arg = (
                called
                and isinstance(up, ast.Call)
                and len(up.args) == 1
                and not up.keywords
                and not isinstance(up.args[0], ast.Starred)
            )
            compare = self._up(up) if one_arg else None  # type: ignore[arg-type]
            if not isinstance(compare, ast.Compare):
                self.flag(
                    node,
                    "type() is allowed only as type(x) inside a comparison (no metaclasses, no "
                    "three-argument type()); use isinstance()",
                )
            elif not self._plain_compare(compare, up):  # type: ignore[arg-type]
                self.flag(
                    node,
                    "type(x) may be compared with 'is'/'is not', or with ==, != or 'in' only "
                    "against plain classes (int, np.ndarray, a class of this module, type(y)); "
                    "an object's __eq__ or __contains__ would receive the type",
                )
        elif node.id == "super":
            outer = self._up(up) if called else None  # type: ignore[arg-type]
            if not (isinstance(outer, ast.Attribute) and outer.value is up):
                self.flag(node, "super() may only be used as super().method(...)")

    def _plain_compare(self, compare: ast.Compare, call: ast.Call) -> bool:
        if all(isinstance(op, _SAFE_COMPARE) for op in compare.ops):
            return True
        others = [e for e in (compare.left, *compare.comparators) if e is not call]
        return all(self._plain_class(e) for e in others)

    def _plain_class(self, node: ast.expr) -> bool:
        """A class whose comparison cannot run strategy code (its metaclass is a library's)."""
        if isinstance(node, ast.Constant) and node.value is None:
            return True
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return all(self._plain_class(e) for e in node.elts)
        if isinstance(node, ast.Name):
            if node.id in self.classes:
                return True
            if node.id in self.imported:
                return True
            return node.id in BUILTINS and node.id not in self.bound
        if isinstance(node, ast.Attribute):
            return self._module_of(node.value) is not None
        if isinstance(node, ast.Call):  # another type(y)
            func = node.func
            return (
                isinstance(func, ast.Name)
                and func.id == "type"
                and "type" not in self.bound
                and len(node.args) == 1
                and not node.keywords
            )
        return False

    def _enum_use(self, node: ast.expr, up: ast.AST | None) -> None:
        """The enum classes only as a class's base (with members) or isinstance's second
        argument: called with a namespace they build classes, dunder methods included."""
        if isinstance(up, ast.ClassDef) and node in up.bases:
            return
        if (
            isinstance(up, ast.Call)
            and isinstance(up.func, ast.Name)
            and up.func.id in ("isinstance", "issubclass")
            and len(up.args) == 2
            and up.args[1] is node
        ):
            return
        self.flag(
            node,
            f"'{ast.unparse(node)}' may only be a class's base (a class that defines its members)"
            " or isinstance()'s second argument: the functional Enum API builds classes from a "
            "namespace",
        )

    # -- attributes ----------------------------------------------------------------------------
    def _attribute_rules(
        self, node: ast.AST, receiver: ast.expr, attr: str, via: str | None = None
    ) -> bool:
        """Reading ``receiver.attr``, written so or as ``via(receiver, "attr")`` (getattr):
        the same rules either way.  True when a rule flagged the read."""
        shown = f"{via}() of {attr!r}" if via else f"'.{attr}'"
        if _dunder(attr):
            self.flag(
                node,
                f"{via}() of the dunder {attr!r} is not allowed"
                if via
                else f"the dunder attribute '.{attr}' is not allowed",
            )
        elif attr in FRAME_ATTRIBUTES:
            self.flag(
                node, f"{shown} is not allowed (frames, code, generator and traceback internals)"
            )
        elif attr in ANY_DENIED:
            self.flag(node, f"{shown} is not allowed ({ANY_DENIED[attr]})")
        elif attr in ("format", "format_map"):
            return self._format(node, receiver, attr)
        elif (
            _private(attr)
            and attr not in PUBLIC_UNDERSCORE
            and self._module_of(receiver) is None  # a module's privates have their own message
            and not self._own(receiver)
        ):
            self.flag(
                node,
                f"{shown}: private attributes are allowed only on self or cls (the strategy's "
                "own objects), not on other objects or library internals",
            )
        else:
            return False
        return True

    def _own(self, receiver: ast.expr) -> bool:
        """``self``/``cls`` as the first parameter of a method of a class of this module (never
        rebound), or ``super()``."""
        if isinstance(receiver, ast.Name):
            if receiver.id not in _OWN or receiver.id in self.foreign_self:
                return False
            node: ast.AST | None = receiver
            while node is not None and not isinstance(node, ast.FunctionDef | ast.Lambda):
                node = self._up(node)
            if not isinstance(node, ast.FunctionDef) or not isinstance(
                self._up(node), ast.ClassDef
            ):
                return False
            params = [*node.args.posonlyargs, *node.args.args]
            return bool(params) and params[0].arg == receiver.id
        return (  # super()._helper()
            isinstance(receiver, ast.Call)
            and isinstance(receiver.func, ast.Name)
            and receiver.func.id == "super"
            and not receiver.args
        )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr, up = node.attr, self._up(node)
        if not (_dunder(attr) and self._super_dunder_call(node, up)):
            self._attribute_rules(node, node.value, attr)
        module = self._module_of(node.value)
        if module is not None and f"{module}.{attr}" in _ENUM_FAMILY:
            self._enum_use(node, up)
        if module is not None and not _dunder(attr):
            if self._module_attribute(node, module, attr) and f"{module}.{attr}" in self.allowed:
                # The attribute is itself a module: it may only be looked into further.
                if not (isinstance(up, ast.Attribute) and up.value is node):
                    self.flag(
                        node,
                        f"the module '{module}.{attr}' may only be used as "
                        f"{module}.{attr}.name (not passed, stored, returned or aliased)",
                    )
        if isinstance(node.ctx, ast.Store | ast.Del):
            self._library_write(node)
        self.generic_visit(node)

    def _super_dunder_call(self, node: ast.Attribute, up: ast.AST | None) -> bool:
        value = node.value
        return (
            node.attr in DUNDER_METHODS
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "super"
            and isinstance(up, ast.Call)
            and up.func is node
        )

    def _format(self, node: ast.AST, receiver: ast.expr, attr: str) -> bool:
        """Flags a ``.format``/``.format_map`` that can reach past plain values; True if so."""
        if not (isinstance(receiver, ast.Constant) and isinstance(receiver.value, str)):
            self.flag(node, f".{attr}() is allowed only on a string literal (use an f-string)")
            return True
        try:
            fields = list(_format_fields(receiver.value))
        except ValueError as exc:
            self.flag(node, f"malformed format string for .{attr}(): {exc}")
            return True
        flagged = False
        for field in fields:
            if "." in field or "[" in field:
                self.flag(
                    node,
                    f"format field '{{{field}}}' reaches into an attribute or item; format "
                    "plain values (use an f-string)",
                )
                flagged = True
        return flagged

    def _library_write(self, node: ast.Attribute | ast.Subscript) -> None:
        root = self._root(node.value, calls=True)
        if root is not None:
            self.flag(
                node,
                f"assigning to '{ast.unparse(node)}' (an attribute or item of a library module "
                "or object) is not allowed",
            )

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self._library_write(node)
        self.generic_visit(node)

    # -- calls, classes, functions, constants --------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr"):
            if func.id not in self.bound:
                self._literal_getattr(node, func.id)
        self.generic_visit(node)

    def _literal_getattr(self, node: ast.Call, fn: str) -> None:
        name = node.args[1] if len(node.args) >= 2 else None
        shaped = not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)
        if not (shaped and isinstance(name, ast.Constant) and isinstance(name.value, str)):
            self.flag(node, f"{fn}() needs a literal attribute name (no dynamic lookup)")
            return
        attr = name.value
        if not self._attribute_rules(node, node.args[0], attr, via=fn):
            module = self._module_of(node.args[0])
            if module is not None and self._module_attribute(node, module, attr):
                if f"{module}.{attr}" in self.allowed:
                    self.flag(node, f"{fn}() may not fetch the module '{module}.{attr}'")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node.keywords:
            self.flag(node, "class keywords (metaclass=…) are not allowed")
        if any(self._enum_base(b) for b in node.bases) and not _members(node):
            self.flag(
                node,
                f"the Enum class {node.name!r} must define its members in its body (an Enum "
                "without members builds classes from a namespace through its functional API)",
            )
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _dunder(item.name):
                if item.name not in DUNDER_METHODS:
                    self.flag(item, f"defining {item.name}() is not allowed in a strategy")
        self.generic_visit(node)

    def _enum_base(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return self.imported.get(node.id) in _ENUM_FAMILY
        if isinstance(node, ast.Attribute):
            module = self._module_of(node.value)
            return module is not None and f"{module}.{node.attr}" in _ENUM_FAMILY
        return False

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if _dunder(node.name) and not isinstance(self._up(node), ast.ClassDef):
            self.flag(node, f"defining {node.name}() outside a class is not allowed")
        self.generic_visit(node)

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and id(node) not in self.docstrings:
            for found in _DUNDER.findall(node.value):
                if found != "__main__":
                    self.flag(
                        node,
                        f"the string {found!r} names a dunder (dunders are not reachable by "
                        "name either)",
                    )
                    break


def _members(node: ast.ClassDef) -> bool:
    """Whether a class body assigns at least one public name (an Enum member)."""
    for item in node.body:
        targets, _ = assignment(item) or ([], None)
        for target in targets:
            if isinstance(target, ast.Name) and not target.id.startswith("_"):
                return True
    return False


def _restricted_findings(source: str) -> Iterable[Finding]:
    result = compile_restricted_exec(source, policy=_StrategyTransformer)
    for error in result.errors:
        head, _, rest = error.partition(": ")
        if head.startswith("Line ") and head[5:].isdigit():
            yield Finding(int(head[5:]), rest)
        else:
            yield Finding(0, error)


def _allowed(
    allowed_imports: Iterable[str] | Mapping[str, Iterable[str]] | None,
) -> dict[str, frozenset[str] | None]:
    if allowed_imports is None:
        return dict(ALLOWED)
    if isinstance(allowed_imports, Mapping):
        return {m: frozenset(a) for m, a in allowed_imports.items()}
    # Names without their own lists: ours where we have one, else any public attribute.
    return {m: ALLOWED.get(m) for m in allowed_imports}


def prefilter(
    source: str, *, allowed_imports: Iterable[str] | Mapping[str, Iterable[str]] | None = None
) -> PrefilterResult:
    """Check ``source`` against the strategy policy; ``ok`` means "worth a sandbox"."""
    if len(source) > MAX_CHARS:
        return PrefilterResult(
            (
                Finding(
                    0, f"the module has {len(source)} characters; at most {MAX_CHARS} are accepted"
                ),
            )
        )
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return PrefilterResult((Finding(exc.lineno or 0, f"syntax error: {exc.msg}"),))
    policy = _Policy(tree, _allowed(allowed_imports))
    policy.visit(tree)
    findings: dict[tuple[int, str], Finding] = {}
    for finding in [*_restricted_findings(source), *policy.findings]:
        findings.setdefault((finding.line, finding.message), finding)
    return PrefilterResult(tuple(sorted(findings.values(), key=lambda f: f.line)))
