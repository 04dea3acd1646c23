"""The static pre-filter: what a strategy may write, and the readable reasons when it may not."""

from __future__ import annotations

import pytest

from scaffolds.evox.allowlist import ALLOWED
from scaffolds.evox.prefilter import ALLOWED_IMPORTS, prefilter
from scaffolds.evox.seed import seed_source

ORDINARY = """
import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional
import numpy as np

from skydiscover.config import DatabaseConfig
from skydiscover.search.base_database import Program, ProgramDatabase


@dataclass
class EvolvedProgram(Program):
    tags: List[str] = field(default_factory=list)

    def __post_init__(self):
        self._seen = 0


class EvolvedProgramDatabase(ProgramDatabase):
    def __init__(self, name: str, config: DatabaseConfig):
        super().__init__(name, config)
        self._uses: Dict[str, int] = defaultdict(int)
        self._best: float = float("-inf")

    def _helper(self, p) -> float:
        v = p.metrics.get("combined_score")
        return float(v) if isinstance(v, (int, float)) else 0.0

    def add(self, program, iteration=None, **kwargs):
        self.programs[program.id] = program
        self._uses[program.id] += 1
        self._best = max(self._best, self._helper(program))
        info = getattr(program, "parent_info", None)
        return program.id

    def sample(self, num_context_programs: Optional[int] = 4, **kwargs):
        pool = list(self.programs.values())
        weights = np.array([self._helper(p) for p in pool]) + 1e-9
        parent = pool[int(np.random.choice(len(pool), p=weights / weights.sum()))]
        print(self.name, len(pool), type(parent) is EvolvedProgram)
        return {"": parent}, {"": [p for p in pool if p.id != parent.id][:num_context_programs]}
"""


def test_the_seed_strategy_and_ordinary_llm_code_pass() -> None:
    assert prefilter(seed_source()).ok
    result = prefilter(ORDINARY)
    assert result.ok, result.reason()
    assert result.reason() == ""


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import os\n", "import of 'os' is not allowed (operating-system access)"),
        ("import socket\n", "import of 'socket' is not allowed (network access)"),
        ("import subprocess\n", "import of 'subprocess' is not allowed"),
        ("from ctypes import CDLL\n", "import of 'ctypes' is not allowed"),
        ("import importlib\n", "import of 'importlib' is not allowed"),
        ("import time\n", "wall-clock time"),
        ("from . import x\n", "relative imports are not allowed"),
        ("x = eval('1')\n", "'eval' is not allowed"),
        ("exec('x = 1')\n", "'exec' is not allowed"),
        ("f = open('/etc/passwd')\n", "'open' is not allowed"),
        ("m = __import__('os')\n", '"__import__" is an invalid variable name'),
        ("g = globals()\n", "'globals' is not allowed"),
        ("x = 1\nsetattr(x, 'a', 1)\n", "'setattr' is not allowed"),
        ("x = name = 1\nv = getattr(x, name)\n", "getattr() needs a literal attribute name"),
        ("x = 1\nv = getattr(x, '__class__')\n", "getattr() of the dunder '__class__'"),
        ("c = ().__class__.__bases__\n", '"__class__" is an invalid attribute name'),
        ("b = __builtins__\n", "'__builtins__' is not allowed"),
        ("import numpy as np\nnp.load('x.npy')\n", "'numpy.load' is not allowed (file I/O"),
        ("import numpy\nnumpy.fromfile('f')\n", "'numpy.fromfile' is not allowed"),
        ("import numpy as np\nf = np.ctypeslib.x\n", "'numpy.ctypeslib' is not allowed"),
        ("from numpy import memmap\n", "'numpy.memmap' is not allowed"),
        ("import numpy as np\nnp.allclose = None\n", "assigning to 'np.allclose'"),
        ("import random\nrandom.random = lambda: 0\n", "assigning to 'random.random'"),
        ("a = 1\na.tofile('x')\n", "'.tofile' is not allowed"),
        ("import logging\nlogging.FileHandler('x')\n", "'logging.FileHandler' is not allowed"),
        ("def f(:\n", "syntax error"),
        # What an allowed module leads to: only the attributes on its list.
        ("import logging\nlogging.os.system('x')\n", "'logging.os' is not allowed"),
        ("import dataclasses\nm = dataclasses.sys.modules\n", "'dataclasses.sys' is not allowed"),
        ("import random\ne = random._os.environ\n", "'random._os' is a private attribute"),
        ("import collections\nm = collections._sys.x\n", "'collections._sys' is a private"),
        ("from random import _os\n", "'random._os' is a private attribute"),
        ("from logging import FileHandler\n", "'logging.FileHandler' is not allowed"),
        ("from typing import sys\n", "'typing.sys' is not allowed"),
        ("from math import *\n", "'from math import *' is not allowed"),
        ("import numpy as np\nf = getattr(np, 'fromfile')\n", "'numpy.fromfile' is not allowed"),
        ("import logging\nm = getattr(logging, 'os')\n", "'logging.os' is not allowed"),
        ("import numpy as np\nc = np.core.x\n", "'numpy.core' is not allowed"),
        ("import numpy as np\nr = np.random\n", "the module 'numpy.random' may only be used"),
        ("import copy\nc = copy\n", "the module 'copy' may only be used as copy.name"),
        ("import numpy as np\nm = getattr(np, 'random')\n", "may not fetch the module"),
        ("import operator\ng = operator.attrgetter('x')\n", "string-keyed attribute access"),
        ("from operator import methodcaller\n", "'operator.methodcaller' is not allowed"),
        ("import typing\nh = typing.get_type_hints\n", "evaluates strings as code"),
        ("import logging\nf = logging.currentframe()\n", "'logging.currentframe' is not allowed"),
        ("g = getattr\n", "getattr may only be called directly"),
        ("import functools\nf = functools.partial(getattr)\n", "may only be called directly"),
        ("x = 1\nf = x.gi_frame\n", "'.gi_frame' is not allowed (frames"),
        ("x = 1\nf = x.f_back.f_globals\n", "'.f_globals' is not allowed"),
        ("x = 1\nt = x.tb_frame\n", "'.tb_frame' is not allowed"),
        ("x = 1\nt = getattr(x, 'f_builtins')\n", "getattr() of 'f_builtins' is not allowed"),
        ("f = 1\ns = '{0.__globals__}'.format(f)\n", "format field '{0.__globals__}'"),
        ("d = {}\ns = '{x[k]}'.format_map(d)\n", "format field '{x[k]}'"),
        ("t = '{}'\ns = t.format(1)\n", ".format() is allowed only on a string literal"),
        ("s = str.format('{}', 1)\n", ".format() is allowed only on a string literal"),
        ("class M(type):\n    pass\n", "type() is allowed only as type(x) inside a comparison"),
        ("X = type('X', (), {})\n", "no three-argument type()"),
        ("M = 1\nclass A(metaclass=M):\n    pass\n", "class keywords (metaclass=…)"),
        ("k = {'__call__': 1}\n", "the string '__call__' names a dunder"),
        ("class A:\n    def __getattr__(self, n):\n        return 1\n", "defining __getattr__()"),
        ("s = super()\n", "super() may only be used as super().method(...)"),
        ("x = 1\ny = x.__name__\n", "the dunder attribute '.__name__' is not allowed"),
        ("__slots__ = ()\n", "assigning the dunder name '__slots__'"),
        ("from skydiscover.search.base_database import Program\nProgram.x = 1\n", "assigning to"),
        ("import numpy as np\nnp.random.seed = print\n", "assigning to 'np.random.seed'"),
        # Private attributes: only a method's own first parameter, never rebound.
        ("import random\nself = random.Random()\nx = self._randbelow(2)\n", "'._randbelow'"),
        ("f = lambda self: self._x\n", "private attributes are allowed only on self or cls"),
        ("def f(self):\n    return self._x\n", "private attributes are allowed only on self"),
        # A library object bound in a class body is followed as Class.name.
        ("import copy\nclass A:\n    f = copy.deepcopy\nA.f.x = 1\n", "assigning to 'A.f.x'"),
    ],
)
def test_each_rule_rejects_with_a_readable_reason(source: str, expected: str) -> None:
    result = prefilter(source)
    assert not result.ok
    assert expected in result.reason()
    assert "Strategies may import only:" in result.reason()


def test_reasons_carry_line_numbers() -> None:
    result = prefilter("import math\n\n\nimport os\n")
    assert [f.line for f in result.findings] == [4]
    assert "line 4:" in result.reason()


def test_single_underscore_names_are_allowed_but_not_dunders() -> None:
    assert prefilter("class A:\n    def _h(self):\n        self._c = 1\n        _tmp = 2\n").ok
    assert not prefilter("class A:\n    def f(self):\n        return self.__dict__\n").ok
    assert not prefilter("y = 1\nx = y.__globals__\n").ok
    # The reference's seed: logging.getLogger(__name__); super().__init__ in __init__.
    assert prefilter("import logging\nlog = logging.getLogger(__name__)\n").ok
    assert prefilter(
        "class A(object):\n    def __init__(self):\n        super().__init__()\n"
        "    def __repr__(self):\n        return 'A'\n"
    ).ok
    assert prefilter('"""Docs may say __init__."""\nif __name__ == "__main__":\n    pass\n').ok


def test_annotated_and_augmented_assignments_pass() -> None:
    source = (
        "class A:\n    def f(self, d, k):\n        n: int = 0\n        self.n += 1\n"
        "        d[k] += 1\n"
    )
    assert prefilter(source).ok, prefilter(source).reason()


def test_imports_are_limited_to_the_allow_list() -> None:
    for name in ALLOWED_IMPORTS - {"__future__"}:
        assert prefilter(f"import {name}\n").ok, name
    assert prefilter("from __future__ import annotations\n").ok
    assert not prefilter("import pickle\n").ok
    assert not prefilter("import numpy.lib\n").ok
    assert prefilter("import pickle\n", allowed_imports={"pickle"}).ok


def test_oversized_sources_are_refused_without_parsing() -> None:
    result = prefilter("x = 1\n" * 50_000)
    assert not result.ok and "characters" in result.reason()


def test_public_module_api_and_literal_getters_pass() -> None:
    source = (
        "import collections\nimport numpy as np\nfrom operator import itemgetter\n"
        "from numpy import random as npr\nfrom collections import abc\n"
        "rng = np.random.default_rng(0)\nv = np.linalg.norm(np.ones(2))\n"
        "m = collections.abc.Mapping\nd = collections.defaultdict(list)\nk2 = itemgetter(0)\n"
        "e = getattr(np, 'pi')\nh = hasattr(d, 'items')\nnpr.seed(1)\nM = abc.Mapping\n"
        "same = type(d) is type(m)\ns = '{0} {name:>4}'.format(1, name='x')\n"
        "t = f'{v:.2f} {d!r}'\n"
    )
    assert prefilter(source).ok, prefilter(source).reason()


@pytest.mark.parametrize("module", sorted(m for m in ALLOWED if not m.startswith("skydiscover")))
def test_every_allowed_attribute_exists_and_is_no_unlisted_module(module: str) -> None:
    """The allow-list names real things, and none of them opens a module that is not listed."""
    import importlib
    import types

    if module == "__future__":
        return
    found = importlib.import_module(module)
    for attr in sorted(ALLOWED[module]):
        assert hasattr(found, attr), f"{module}.{attr} does not exist"
        value = getattr(found, attr)
        if isinstance(value, types.ModuleType):
            assert f"{module}.{attr}" in ALLOWED, f"{module}.{attr} is an unlisted module"


def test_the_skydiscover_names_exist_in_the_shims(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from harness.sandbox import _runtime

    monkeypatch.syspath_prepend(str(_runtime.COMPAT_DIR))
    for module in ("skydiscover.search.base_database", "skydiscover.search.database_config"):
        found = importlib.import_module(module)
        assert all(hasattr(found, attr) for attr in ALLOWED[module]), module
    config = ALLOWED["skydiscover.config"]  # the server aliases it to database_config
    assert config == ALLOWED["skydiscover.search.database_config"]


@pytest.mark.parametrize(
    "source",
    [
        "class A:\n    pass\nx = 1\nt = type(x) == A\n",
        "x = y = 1\nt = type(x) == type(y) and type(x) != float\n",
        "x = 1\nt = type(x) in (int, float)\n",
        "import numpy as np\nx = 1\nt = type(x) == np.ndarray or type(x) is not None\n",
        "import enum\nfrom enum import Enum, auto\nclass E(Enum):\n    A = auto()\n"
        "class F(enum.IntEnum):\n    X = 1\nok = isinstance(E.A, Enum)\n",
        "import collections\nT = collections.namedtuple('T', 'a')\nt = T(1)._replace(a=2)\n",
        "class A:\n    def f(self):\n        self._x = 1\n        return getattr(self, '_x', 0)\n",
        "class A:\n    @classmethod\n    def f(cls):\n        return cls._y + super()._z()\n",
        "import typing\nx = typing.get_origin(typing.List[int])\n",
        "import math\nbest = math.inf\nbest = min(best, 3)\n",
        "def f(p):\n    p.metadata['x'] = 1\n    p.tags = []\n",
        "s = getattr('{0}', 'format')(1)\n",
    ],
)
def test_the_class_rules_leave_ordinary_code_alone(source: str) -> None:
    result = prefilter(source)
    assert result.ok, result.reason()


def test_no_allowed_attribute_is_or_stands_for_a_metaclass() -> None:
    """``type`` reached as a value makes classes from a namespace (any dunder): no listed name
    may be a metaclass, or a typing alias or base entry that resolves to one."""
    import importlib
    import typing

    def metaclass(value: object) -> bool:
        return value is type or (isinstance(value, type) and issubclass(value, type))

    found = []
    for module, names in ALLOWED.items():
        if module.startswith("skydiscover") or module == "__future__":
            continue
        loaded = importlib.import_module(module)
        for attr in names:
            value = getattr(loaded, attr)
            resolved: tuple[object, ...] = ()
            entries = getattr(value, "__mro_entries__", None)
            if callable(entries) and not isinstance(value, type):
                try:
                    resolved = tuple(entries((value,)))
                except (TypeError, ValueError):  # not a base on its own (typing.Optional)
                    pass
            if (
                metaclass(value)
                or metaclass(typing.get_origin(value))
                or any(metaclass(e) for e in resolved)
            ):
                found.append(f"{module}.{attr}")
    assert found == []


def test_what_the_rules_let_a_strategy_reach_holds_no_module_frame_or_metaclass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Walk everything reachable from the allow-lists (and from the objects a strategy gets by
    ordinary calls) through the attribute names the pre-filter lets through and through the items
    of containers, three steps deep: nothing found may be a module off the list, a frame, code
    object or traceback, ``type`` or a metaclass, or a builtin the strategy may not name."""
    import builtins
    import collections
    import functools
    import importlib
    import inspect
    import logging
    import random
    import re
    import types

    import numpy as np

    from harness.sandbox import _runtime
    from scaffolds.evox.allowlist import FRAME_ATTRIBUTES
    from scaffolds.evox.prefilter import ANY_DENIED, PUBLIC_UNDERSCORE

    monkeypatch.syspath_prepend(str(_runtime.COMPAT_DIR))
    from skydiscover.search.base_database import Program  # type: ignore[import-not-found]
    from skydiscover.search.database_config import DatabaseConfig  # type: ignore[import-not-found]

    refused = {
        builtins.eval, builtins.exec, builtins.compile, builtins.open, builtins.__import__,
        builtins.getattr, builtins.setattr, builtins.delattr, builtins.vars, builtins.globals,
        builtins.locals, builtins.dir, builtins.input, builtins.breakpoint,
    }  # fmt: skip

    def passes(name: str) -> bool:
        if name.startswith("__") and name.endswith("__"):
            return False
        if name.startswith("_") and name not in PUBLIC_UNDERSCORE:
            return False
        return name not in FRAME_ATTRIBUTES and name not in ANY_DENIED

    roots: list[tuple[str, object]] = []
    for module, names in ALLOWED.items():
        if module in ("__future__", "skydiscover", "skydiscover.config"):
            continue
        loaded = importlib.import_module(module)
        roots += [(f"{module}.{attr}", getattr(loaded, attr)) for attr in names]
    roots += [
        ("logging.getLogger()", logging.getLogger()),
        ("random.Random()", random.Random(0)),
        ("np.random.default_rng()", np.random.default_rng(0)),
        ("np.random.RandomState()", np.random.RandomState(0)),
        ("np.zeros()", np.zeros(2)),
        ("re.compile()", re.compile("x")),
        ("collections.Counter()", collections.Counter("ab")),
        ("collections.defaultdict()", collections.defaultdict(list)),
        ("functools.partial()", functools.partial(print)),
        ("Program()", Program(id="p", solution="x = 1", metrics={"combined_score": 1.0})),
        ("DatabaseConfig()", DatabaseConfig()),
    ]
    seen: set[int] = set()
    found: list[str] = []
    todo = [(path, value, 0) for path, value in roots]
    while todo:
        path, value, depth = todo.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, types.ModuleType):
            if value.__name__ not in ALLOWED:
                found.append(f"{path} is the module {value.__name__}")
            continue  # a module's own attributes are the roots above
        if isinstance(value, types.FrameType | types.CodeType | types.TracebackType):
            found.append(f"{path} is a frame, code object or traceback")
        elif value is type or (isinstance(value, type) and issubclass(value, type)):
            found.append(f"{path} is the metaclass {value!r}")
        elif any(value is f for f in refused):
            found.append(f"{path} is {value!r}")
        if found or depth >= 3:
            continue
        if isinstance(value, dict):
            todo += [(f"{path}[{k!r}]", v, depth + 1) for k, v in list(value.items())[:200]]
        elif isinstance(value, list | tuple | set | frozenset):
            todo += [(f"{path}[{i}]", v, depth + 1) for i, v in enumerate(list(value)[:50])]
        for name in dir(value):
            if passes(name):
                try:
                    inspect.getattr_static(value, name)
                    todo.append((f"{path}.{name}", getattr(value, name), depth + 1))
                except Exception:  # noqa: S112 - a property that raises leads nowhere
                    continue
    assert found == []
    assert len(seen) > 1000  # the walk went somewhere
