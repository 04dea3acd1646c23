"""Red team for the strategy pre-filter: every evasion route of issue 20, as a hostile strategy.

Each route is a complete strategy module (the well-behaved base of :mod:`tests.evox.strategies`
with the route planted in ``add``) and must be rejected by the pre-filter with the reason that
names its class.  Routes that end in ``os`` are also run as plain Python (no pre-filter, no
sandbox) to show they are real: the snippet really reaches the ``os`` module, so a pass here
would be an escape into the container, not a harmless oddity.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest

from scaffolds.evox.prefilter import prefilter
from tests.evox.strategies import module


@dataclass(frozen=True)
class Route:
    name: str
    imports: str
    code: str  # runs inside add(); a route that reaches os binds it to ``_os``
    reason: str  # the part of the rejection that names the route's class
    reaches_os: bool = True


ROUTES = [
    # -- getattr-like callables ------------------------------------------------------------
    Route(
        "getattr_alias",
        "import logging",
        "_g = getattr\n_os = _g(logging, 'os')",
        "getattr may only be called directly, with a literal name (not aliased",
    ),
    Route(
        "getattr_alias_walrus",
        "import logging",
        "if (_g := getattr):\n    _os = _g(logging, 'os')",
        "getattr may only be called directly",
    ),
    Route(
        "reduce_getattr",
        "import functools\nimport logging",
        "_os = functools.reduce(getattr, ['os'], logging)",
        "getattr may only be called directly",
    ),
    Route(
        "partial_getattr",
        "from functools import partial\nimport logging",
        "_os = partial(getattr, logging)('os')",
        "getattr may only be called directly",
    ),
    Route(
        "getattr_dynamic_name",
        "import logging",
        "_name = 'o' + 's'\n_os = getattr(logging, _name)",
        "getattr() needs a literal attribute name",
    ),
    Route(
        "getattr_literal_unlisted",
        "import logging",
        "_os = getattr(logging, 'os')",
        "'logging.os' is not allowed",
    ),
    Route(
        "attrgetter_os",
        "import operator\nimport logging",
        "_os = operator.attrgetter('os')(logging)",
        "'operator.attrgetter' is not allowed (string-keyed attribute access)",
    ),
    Route(
        "attrgetter_dotted_path",
        "from operator import attrgetter\nimport logging",
        "_os = attrgetter('os.path.os')(logging)",
        "'operator.attrgetter' is not allowed (string-keyed attribute access)",
    ),
    Route(
        "methodcaller",
        "import operator\nimport logging",
        "_os = operator.methodcaller('get', 'os')(logging.os.sys.modules)",
        "'operator.methodcaller' is not allowed (string-keyed attribute access)",
    ),
    Route(
        "wraps_copies_named_attributes",
        "import functools\nimport logging",
        "class _Box:\n    pass\n_b = _Box()\n"
        "functools.wraps(logging.exception, assigned=('_' + '_globals__',), updated=())(_b)\n"
        "_os = vars(_b)['_' + '_globals__']['os']",
        "'functools.wraps' is not allowed (copies attributes named by strings)",
    ),
    # -- frames ------------------------------------------------------------------------------
    Route(
        "logging_currentframe",
        "import logging",
        "_os = logging.currentframe().f_globals['logging'].os",
        "'logging.currentframe' is not allowed (frames)",
    ),
    Route(
        "generator_gi_frame_f_back_f_globals",
        "import logging",
        "def _gen():\n    yield 1\n_g = _gen()\nnext(_g)\n"
        "_os = _g.gi_frame.f_globals['logging'].os",
        "'.gi_frame' is not allowed (frames, code, generator and traceback internals)",
    ),
    Route(
        "frame_f_builtins_import",
        "",
        "def _gen():\n    yield 1\n_g = _gen()\n"
        "_os = getattr(_g.gi_frame, 'f_builtins')['_' + '_import__']('os')",
        "getattr() of 'f_builtins' is not allowed (frames, code, generator and traceback",
    ),
    Route(
        "frame_f_back",
        "",
        "def _gen():\n    yield 1\n_g = _gen()\nnext(_g)\n_f = _g.gi_frame.f_back",
        "'.f_back' is not allowed (frames",
        reaches_os=False,
    ),
    # -- class-making ------------------------------------------------------------------------
    Route(
        "metaclass_type_three_args",
        "",
        "_M = type('M', (type,), {'_' + '_call__': lambda c, *a: 0})",
        "type() is allowed only as type(x) inside a comparison (no metaclasses, no "
        "three-argument type())",
        reaches_os=False,
    ),
    Route(
        "metaclass_keyword",
        "",
        "class _Meta(object):\n    pass\nclass _X(metaclass=_Meta):\n    pass",
        "class keywords (metaclass=…) are not allowed",
        reaches_os=False,
    ),
    Route(
        "metaclass_from_typing_Type",
        "import typing",
        "class _Meta(typing.Type):\n    pass\n_X = _Meta('X', (), {'_' + '_call__': print})",
        "'typing.Type' is not allowed (the metaclass type",
        reaches_os=False,
    ),
    Route(
        "type_handed_out_by_eq",
        "",
        "class _Grab:\n    def __eq__(self, other):\n        self.got = other\n"
        "        return True\n"
        "_k = _Grab()\n_t = _k == type(_k)\n"
        "_X = _k.got('X', (), {'_' + '_call__': print})",
        "type(x) may be compared with 'is'/'is not', or with ==, != or 'in' only against plain",
        reaches_os=False,
    ),
    Route(
        "enum_functional_api_namespace",
        "import enum",
        "class _E(enum.Enum):\n    def f(self):\n        return 0\n"
        "_X = _E('X', {'_' + '_getattr__': lambda s, n: 0, 'A': 1})",
        "the Enum class '_E' must define its members in its body",
        reaches_os=False,
    ),
    # -- writes into libraries ---------------------------------------------------------------
    Route(
        "module_attribute_through_alias",
        "import copy",
        "_c = copy\n_c.deepcopy = lambda x, *a: x",
        "the module 'copy' may only be used as copy.name (not passed, stored, returned or aliased)",
        reaches_os=False,
    ),
    Route(
        "module_attribute_direct",
        "import copy",
        "copy.deepcopy = lambda x, *a: x",
        "assigning to 'copy.deepcopy' (an attribute or item of a library module or object)",
        reaches_os=False,
    ),
    Route(
        "library_object_through_self_attribute",
        "import copy",
        "self.f = copy.deepcopy\nself.f.cache = {}",
        "assigning to 'self.f.cache' (an attribute or item of a library module or object)",
        reaches_os=False,
    ),
    Route(
        "library_object_through_loop",
        "import numpy as np",
        "for _f in [np.mean, np.median]:\n    _f.hook = print",
        "assigning to '_f.hook' (an attribute or item of a library module or object)",
        reaches_os=False,
    ),
    # -- format strings ----------------------------------------------------------------------
    Route(
        "str_format_field_access",
        "import logging",
        "_s = '{0.__globals__[os]}'.format(logging.exception)",
        "format field '{0.__globals__[os]}' reaches into an attribute or item",
        reaches_os=False,
    ),
    Route(
        "str_format_on_a_variable",
        "",
        "_t = '{0.gi_frame.f_globals}'\n_s = _t.format(program)",
        ".format() is allowed only on a string literal",
        reaches_os=False,
    ),
    Route(
        "format_map_field_access",
        "",
        "_s = '{p.gi_frame}'.format_map({'p': program})",
        "format field '{p.gi_frame}' reaches into an attribute or item",
        reaches_os=False,
    ),
    Route(
        "format_through_getattr",
        "",
        "_t = '{0.gi_frame}'\n_s = getattr(_t, 'format')(program)",
        ".format() is allowed only on a string literal",
        reaches_os=False,
    ),
    # -- dunders -----------------------------------------------------------------------------
    Route(
        "dunder_attribute_subclasses",
        "",
        "_all = ().__class__.__base__.__subclasses__()",
        '"__class__" is an invalid attribute name',
        reaches_os=False,
    ),
    Route(
        "dunder_through_getattr",
        "",
        "_c = getattr(program, '__class__')",
        "getattr() of the dunder '__class__' is not allowed",
        reaches_os=False,
    ),
    Route(
        "dunder_string_key",
        "",
        "_k = {'__getattr__': 0}",
        "the string '__getattr__' names a dunder",
        reaches_os=False,
    ),
    Route(
        "dunder_method_defined",
        "",
        "class _Hook:\n    def __getattr__(self, name):\n        return 0",
        "__getattr__",
        reaches_os=False,
    ),
    Route(
        "private_library_internals",
        "import random",
        "_r = random.Random(0)._randbelow(3)",
        "'._randbelow': private attributes are allowed only on self or cls",
        reaches_os=False,
    ),
    Route(
        "private_module_attribute",
        "import random",
        "_os = random._os",
        "'random._os' is a private attribute of a module",
    ),
]


def strategy(route: Route) -> str:
    return module(imports=route.imports, add=route.code)


def test_every_route_of_the_issue_is_covered() -> None:
    names = {r.name for r in ROUTES}
    assert len(names) == len(ROUTES)
    for required in (
        "getattr_alias",
        "reduce_getattr",
        "partial_getattr",
        "attrgetter_os",
        "attrgetter_dotted_path",
        "methodcaller",
        "logging_currentframe",
        "generator_gi_frame_f_back_f_globals",
        "frame_f_builtins_import",
        "metaclass_type_three_args",
        "module_attribute_through_alias",
        "str_format_field_access",
        "format_map_field_access",
        "dunder_attribute_subclasses",
    ):
        assert required in names


@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_the_prefilter_rejects_the_route_with_its_reason(route: Route) -> None:
    result = prefilter(strategy(route))
    assert not result.ok, f"{route.name} passed the pre-filter"
    assert route.reason in result.reason(), result.reason()


def test_the_strategies_are_otherwise_acceptable() -> None:
    """Without its route each strategy passes: the rejection is the route's, nothing else's
    (a from-import that is itself the route goes too)."""
    for route in ROUTES:
        imports = route.imports if prefilter(route.imports + "\n").ok else ""
        harmless = Route(route.name, imports, "pass", route.reason)
        result = prefilter(strategy(harmless))
        assert result.ok, (route.name, result.reason())


def _reaches_os(route: Route) -> bool:
    """Run the route as plain Python (as if there were no pre-filter) with a stand-in program."""
    body = textwrap.indent(route.code, "    ")
    source = (
        f"{route.imports}\n\nclass _P:\n    pass\n\n"
        f"def attempt(self, program):\n{body}\n    return _os\n\n"
        "found = attempt(_P(), _P())\nprint('REACHED' if found.getpid() > 0 else 'no')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=60
    )
    return done.stdout.strip() == "REACHED"


@pytest.mark.parametrize(
    "route", [r for r in ROUTES if r.reaches_os], ids=[r.name for r in ROUTES if r.reaches_os]
)
def test_the_route_is_real_without_the_prefilter(route: Route) -> None:
    assert _reaches_os(route), f"{route.name} does not reach os as written: not a real route"
