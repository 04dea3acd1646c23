"""Static pre-filter for LLM-written strategy code: a cheap first gate, never the sandbox.

Two passes over the source, nothing is executed:

1. RestrictedPython's ``compile_restricted_exec`` with its rules loosened the way strategy code
   needs: names and attributes with *one* leading underscore (``_helper``, ``self._cache``) are
   allowed, dunders are not (except method definitions such as ``__init__``/``__post_init__``,
   ``super().__init__`` and ``__name__``), and annotated and augmented assignments
   (``x: int = 0``, ``self.n += 1``) pass.
2. An AST pass with the strategy policy: imports only from :data:`ALLOWED_IMPORTS`; no
   ``exec``/``eval``/``compile``/``open``/``__import__``/``globals``/``locals``/``vars``/
   ``setattr``/``delattr``/``input``/``breakpoint``; ``getattr``/``hasattr`` only with a
   literal, non-dunder name (the static equivalent of ``obj.name``); no numpy file I/O or
   ctypes attributes; no assignment to attributes of imported modules (``np.allclose = …``).
   What a strategy reaches through an allowed module is resolved on the host (the allowed
   modules are trusted libraries): a private attribute (``random._os``) or one that is itself a
   module outside the allow-list (``logging.os``, ``dataclasses.sys``) is refused, whether
   written as ``mod.name``, ``from mod import name`` or ``getattr(mod, "name")``; and
   ``operator.attrgetter``/``methodcaller`` are accepted only when called directly with literal,
   non-underscore names (they are string-keyed attribute access).

A rejection carries readable, line-numbered reasons that are fed back to the meta-LLM.  What
passes still runs only inside a locked-down container (RestrictedPython is not a sandbox).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from RestrictedPython import compile_restricted_exec
from RestrictedPython.transformer import ALLOWED_FUNC_NAMES, RestrictingNodeTransformer

__all__ = ["ALLOWED_IMPORTS", "Finding", "PrefilterResult", "prefilter"]

ALLOWED_IMPORTS = frozenset(
    {
        "__future__",
        "abc",
        "bisect",
        "collections",
        "collections.abc",
        "copy",
        "dataclasses",
        "enum",
        "functools",
        "heapq",
        "itertools",
        "json",
        "logging",
        "math",
        "numpy",
        "numpy.linalg",
        "numpy.random",
        "operator",
        "random",
        "re",
        "statistics",
        "typing",
        "skydiscover.config",
        "skydiscover.search",
        "skydiscover.search.base_database",
        "skydiscover.search.database_config",
    }
)
#: Why the usual suspects are refused (shown to the meta-LLM).
WHY = {
    "os": "operating-system access",
    "sys": "interpreter internals",
    "subprocess": "processes",
    "socket": "network access",
    "ctypes": "raw memory access",
    "gc": "interpreter internals",
    "inspect": "reflection",
    "importlib": "dynamic imports",
    "builtins": "interpreter internals",
    "pickle": "arbitrary code on load",
    "marshal": "code objects",
    "threading": "threads",
    "multiprocessing": "processes",
    "signal": "signals",
    "resource": "process limits",
    "time": "wall-clock time makes a strategy non-deterministic",
    "shutil": "file access",
    "pathlib": "file access",
    "io": "file access",
    "tempfile": "file access",
    "urllib": "network access",
    "http": "network access",
    "requests": "network access",
    "asyncio": "event loops",
    "atexit": "interpreter hooks",
    "platform": "host details",
}
FORBIDDEN_NAMES = frozenset(
    {
        "exec",
        "eval",
        "compile",
        "open",
        "__import__",
        "globals",
        "locals",
        "vars",
        "setattr",
        "delattr",
        "input",
        "breakpoint",
        "exit",
        "quit",
        "__builtins__",
        "__loader__",
        "__spec__",
    }
)
LITERAL_REFLECTION = frozenset({"getattr", "hasattr"})
NUMPY_DENIED = frozenset(
    {
        "load",
        "save",
        "savez",
        "savez_compressed",
        "savetxt",
        "loadtxt",
        "genfromtxt",
        "fromfile",
        "fromregex",
        "memmap",
        "ctypeslib",
        "lib",
        "testing",
        "f2py",
        "distutils",
        "DataSource",
        "tofile",
        "dump",
    }
)
LOGGING_DENIED = frozenset({"FileHandler", "handlers", "config", "basicConfig"})
#: Attribute names refused on any object (ndarray file output and pickling).
ANY_DENIED = frozenset({"tofile", "dump"})
DUNDER_METHODS = frozenset(
    ALLOWED_FUNC_NAMES
    | {
        "__post_init__",
        "__repr__",
        "__str__",
        "__len__",
        "__iter__",
        "__hash__",
        "__getitem__",
        "__bool__",
    }
)
DUNDER_ATTRS = frozenset({"__init__", "__post_init__", "__name__"})
#: String-keyed attribute access: only a direct call with literal, public names passes.
STRING_GETTERS = frozenset({"operator.attrgetter", "operator.methodcaller"})
_MISSING = object()
MAX_CHARS = 200_000


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
            + f"\nStrategies may import only: {allowed}."
        )


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


@cache
def _host_module(name: str) -> ModuleType | None:
    """An allowed module imported on the host, to see what its attributes are (or None)."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - e.g. the skydiscover shims exist only in the image
        return None


def _resolve(path: str, allowed: frozenset[str]) -> object:
    """The object ``path`` (``module.attr.attr``) names on the host, or ``_MISSING``."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        if head in allowed:
            obj: object = _host_module(head)
            if obj is None:
                return _MISSING
            for attr in parts[cut:]:
                obj = getattr(obj, attr, _MISSING)
                if obj is _MISSING:
                    return _MISSING
            return obj
    return _MISSING


class _StrategyTransformer(RestrictingNodeTransformer):
    """RestrictedPython's rules, minus the ban on single-underscore names."""

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
        if _private(node.attr) or node.attr in DUNDER_ATTRS:
            node.attr = "u" + node.attr.lstrip("_")  # this tree is checked, never executed
        return super().visit_Attribute(node)


class _Policy(ast.NodeVisitor):
    def __init__(self, allowed: frozenset[str]) -> None:
        self.allowed = allowed
        self.findings: list[Finding] = []
        self.modules: dict[str, str] = {}  # local alias → module
        self.functions: dict[str, str] = {}  # local alias → a STRING_GETTERS function
        self.called: set[int] = set()  # ids of STRING_GETTERS references called directly

    def flag(self, node: ast.AST, message: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 0), message))

    def _module(self, node: ast.AST, name: str) -> bool:
        if name in self.allowed:
            return True
        root = name.split(".")[0]
        why = WHY.get(root)
        self.flag(node, f"import of {name!r} is not allowed" + (f" ({why})" if why else ""))
        return False

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if self._module(node, alias.name):
                local = alias.asname or alias.name.split(".")[0]
                self.modules[local] = alias.name if alias.asname else local

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.flag(node, "relative imports are not allowed")
            return
        module = node.module or ""
        if not self._module(node, module):
            return
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if alias.name == "*":
                self.flag(node, f"'from {module} import *' is not allowed (name what you use)")
            elif self._module_attribute(node, module, alias.name):
                if full in self.allowed or module.startswith("numpy"):
                    self.modules[alias.asname or alias.name] = full
                elif full in STRING_GETTERS:
                    self.functions[alias.asname or alias.name] = full

    def _module_attribute(self, node: ast.AST, module: str, attr: str) -> bool:
        """Check ``module.attr`` (``module`` an allowed module or below one); False if refused."""
        root = module.split(".")[0]
        path = f"{module}.{attr}"
        if attr in ANY_DENIED:
            self.flag(node, f"'.{attr}' is not allowed (file output)")
        elif root == "numpy" and attr in NUMPY_DENIED:
            self.flag(node, f"'{path}' is not allowed (file I/O or native code)")
        elif root == "logging" and attr in LOGGING_DENIED:
            self.flag(node, f"'{path}' is not allowed (files or sockets)")
        elif _private(attr):
            self.flag(node, f"'{path}' is a private attribute of a module; use its public API")
        else:
            value = _resolve(path, self.allowed)
            if not isinstance(value, ModuleType) or path in self.allowed:
                return True
            if value.__name__ in self.allowed:
                return True
            why = WHY.get(value.__name__.split(".")[0])
            self.flag(
                node,
                f"'{path}' is the module {value.__name__!r}, which strategies may not use"
                + (f" ({why})" if why else ""),
            )
        return False

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES:
            self.flag(node, f"{node.id!r} is not allowed in a strategy")
        self._uncalled_getter(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in LITERAL_REFLECTION:
            name = node.args[1] if len(node.args) >= 2 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self.flag(node, f"{func.id}() needs a literal attribute name (no dynamic lookup)")
            elif name.value.startswith("__"):
                self.flag(node, f"{func.id}() of the dunder {name.value!r} is not allowed")
            else:
                module = self._module_of(node.args[0]) if node.args else None
                if module is not None:
                    self._module_attribute(node, module, name.value)
        getter = self._string_getter(func)
        if getter is not None:
            self.called.add(id(func))
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if getter.endswith("methodcaller") and arg is not node.args[0]:
                    continue  # methodcaller's later arguments are the call's, not names
                literal = arg.value if isinstance(arg, ast.Constant) else None
                if not isinstance(literal, str) or any(
                    p.startswith("_") for p in literal.split(".")
                ):
                    self.flag(node, f"{getter}() needs literal, public attribute names")
                    break
        self.generic_visit(node)

    def _string_getter(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.functions.get(node.id)
        if isinstance(node, ast.Attribute):
            module = self._module_of(node.value)
            path = f"{module}.{node.attr}" if module else None
            return path if path in STRING_GETTERS else None
        return None

    def _uncalled_getter(self, node: ast.expr) -> None:
        getter = self._string_getter(node)
        if getter is not None and id(node) not in self.called:
            self.flag(node, f"{getter} may only be called directly, with literal names")

    def _module_of(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.modules.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self._module_of(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def visit_Attribute(self, node: ast.Attribute) -> None:
        module = self._module_of(node.value)
        if module is not None:
            self._module_attribute(node, module, node.attr)
        elif node.attr in ANY_DENIED:
            self.flag(node, f"'.{node.attr}' is not allowed (file output)")
        self._uncalled_getter(node)
        if isinstance(node.ctx, ast.Store | ast.Del) and module is not None:
            self.flag(
                node, f"assigning to '{module}.{node.attr}' (a module attribute) is not allowed"
            )
        self.generic_visit(node)


def _restricted_findings(source: str) -> Iterable[Finding]:
    result = compile_restricted_exec(source, policy=_StrategyTransformer)
    for error in result.errors:
        head, _, rest = error.partition(": ")
        if head.startswith("Line ") and head[5:].isdigit():
            yield Finding(int(head[5:]), rest)
        else:
            yield Finding(0, error)


def prefilter(source: str, *, allowed_imports: Iterable[str] | None = None) -> PrefilterResult:
    """Check ``source`` against the strategy policy; ``ok`` means "worth a container"."""
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
    policy = _Policy(frozenset(allowed_imports) if allowed_imports else ALLOWED_IMPORTS)
    policy.visit(tree)
    findings: dict[tuple[int, str], Finding] = {}
    for finding in [*_restricted_findings(source), *policy.findings]:
        findings.setdefault((finding.line, finding.message), finding)
    return PrefilterResult(tuple(sorted(findings.values(), key=lambda f: f.line)))
