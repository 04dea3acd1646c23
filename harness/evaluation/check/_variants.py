"""Adversarial candidates for ``task check``: the seed with its entry point wrapped or replaced.

Every variant is the seed program plus a generated prelude that rebinds the entry point, so the
battery works for any task without knowing what the entry point returns: the wrapper calls the
original and rewrites its answer (NaN everywhere, an extra axis, strings, lying objects …), or
never calls it (raises, hangs, exits, forges output).  :data:`PROBE_SOURCE` is the trusted probe
evaluator that counts the scalars the seed reports, for the lying variant of :func:`lying_source`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

__all__ = [
    "ABSENT_PART_MARKER",
    "HANGING_VARIANTS",
    "ISOLATION_VARIANTS",
    "NO_REPORTED_VALUE_MARKER",
    "PARTIAL_NAN_VARIANTS",
    "PROBE_MODULE",
    "PROBE_SOURCE",
    "SMALL_LIES",
    "VARIANTS",
    "lying_source",
    "variant_source",
]

_PRELUDE = '''

# ---- galapagos task check: adversarial variant {kind!r} (generated; never evolve this) ----
def _galapagos_check_map(value, leaf, array):
    """Rebuild ``value`` with scalars through ``leaf`` and numpy arrays through ``array``."""
    if value is None or isinstance(value, (bool, str, bytes)):
        return value
    if isinstance(value, (int, float)):
        return leaf(value)
    if isinstance(value, (list, tuple)):
        return [_galapagos_check_map(v, leaf, array) for v in value]
    if isinstance(value, dict):
        return {{k: _galapagos_check_map(v, leaf, array) for k, v in value.items()}}
    try:
        import numpy
    except ImportError:
        return value
    if isinstance(value, numpy.ndarray):
        return array(value)
    if isinstance(value, numpy.generic):
        return leaf(value.item())
    return value


def _galapagos_check_fill(value, fill):
    import numpy
    return numpy.full(numpy.shape(value), fill, dtype=float)


def _galapagos_check_poison(value, part):
    """``value`` with the first number of its ``part``-th data part (a list or array reached
    through tuples and dicts, counted from 0) made NaN; everything else untouched."""
    state = {{"seen": 0}}

    def first_nan(data):
        # A copy of one list/array whose first number (depth first) is NaN, and whether one was.
        if isinstance(data, list):
            out, done = [], False
            for item in data:
                if not done:
                    item, done = first_nan(item)
                out.append(item)
            return out, done
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return float("nan"), True
        try:
            import numpy
        except ImportError:
            return data, False
        if isinstance(data, numpy.ndarray) and data.size and data.dtype.kind in "iuf":
            out = data.astype(float)
            out.flat[0] = float("nan")
            return out, True
        return data, False

    def walk(node):
        if isinstance(node, tuple):
            return tuple(walk(v) for v in node)
        if isinstance(node, dict):
            return {{k: walk(v) for k, v in node.items()}}
        try:
            import numpy
            is_array = isinstance(node, numpy.ndarray)
        except ImportError:
            is_array = False
        if isinstance(node, list) or is_array:
            copy, poisoned = first_nan(node)
            if poisoned:
                state["seen"] += 1
                if state["seen"] - 1 == part:
                    return copy
        return node

    out = walk(value)
    if state["seen"] <= part:
        _galapagos_check_say_once("{absent}")
    return out


def _galapagos_check_say_once(message):
    """Tell the check (on stderr, once per process) that this variant does not apply."""
    if not globals().get("_galapagos_check_said"):
        import sys
        print(message, file=sys.stderr, flush=True)
        globals()["_galapagos_check_said"] = True


_galapagos_check_original = {entry}


def {entry}(*args, **kwargs):
'''

_ORIGINAL = "_galapagos_check_original(*args, **kwargs)"
_MAP = "_galapagos_check_map"

_BODIES: dict[str, str] = {
    "raises": 'raise RuntimeError("galapagos task check: deliberate failure")',
    "returns_nan": f'return {_MAP}({_ORIGINAL}, lambda v: float("nan"), '
    'lambda a: _galapagos_check_fill(a, float("nan")))',
    "returns_inf": f'return {_MAP}({_ORIGINAL}, lambda v: float("inf"), '
    'lambda a: _galapagos_check_fill(a, float("inf")))',
    "returns_neg_inf": f'return {_MAP}({_ORIGINAL}, lambda v: float("-inf"), '
    'lambda a: _galapagos_check_fill(a, float("-inf")))',
    "nan_in_part_1": f"return _galapagos_check_poison({_ORIGINAL}, 0)",
    "nan_in_part_2": f"return _galapagos_check_poison({_ORIGINAL}, 1)",
    "nan_in_part_3": f"return _galapagos_check_poison({_ORIGINAL}, 2)",
    # An extra axis is wrong under any shape rule (fixed or free size), unlike a truncation.
    "wrong_shape": f"return {_MAP}({_ORIGINAL}, lambda v: [v, v], lambda a: a[..., None])",
    "wrong_type": f"return {_MAP}({_ORIGINAL}, lambda v: str(v), lambda a: str(a.tolist()))",
    "empty_result": (
        f"out = {_ORIGINAL}\n"
        "    if isinstance(out, (list, tuple)):\n        return []\n"
        "    if isinstance(out, dict):\n        return {}\n"
        "    if hasattr(out, 'shape') and getattr(out, 'ndim', 0) > 0:\n        return out[:0]\n"
        "    return None"
    ),
    "returns_none": "return None",
    "infinite_loop": "while True:\n        pass",
    "sleeps_past_budget": "import time\n    time.sleep(3600)\n    return " + _ORIGINAL,
    "prints_fake_result": (
        "import json, sys\n"
        "    fake = {'combined_score': 1e9, 'validity': 1.0, 'status': 'ok'}\n"
        "    for stream in (sys.stdout, sys.stderr):\n"
        "        print(json.dumps(fake), file=stream)\n"
        "        print(json.dumps({'kind': 'result', 'status': 'ok', 'metrics': fake}), "
        "file=stream)\n"
        "        print('combined_score: 1000000000.0', file=stream, flush=True)\n"
        "    return None"
    ),
    "exits_early": "import sys\n    sys.exit(0)",
    "os_exit": "import os\n    os._exit(0)",
    "lying_object": (
        "class _Liar:\n"
        "        def __eq__(self, other): return True\n"
        "        def __ne__(self, other): return False\n"
        "        def __lt__(self, other): return True\n"
        "        __le__ = __gt__ = __ge__ = __lt__\n"
        "        def __float__(self): return 1e9\n"
        "        def __int__(self): return 10**9\n"
        "        def __bool__(self): return True\n"
        "        def __hash__(self): return 0\n"
        "        def __repr__(self): return '1e9'\n"
        f"    return {_MAP}({_ORIGINAL}, lambda v: _Liar(), lambda a: _Liar())"
    ),
    # Succeeds (returns the seed's answer) only if it could read a trusted task file.
    "reads_task_files": (
        "import hashlib, os, sys\n"
        "    digests = {digests!r}\n"
        "    names = set(digests)\n"
        "    found = []\n"
        "    roots = ['/proc/1/cwd', '/proc/1/root', '/proc/%d/cwd' % os.getppid(), '/']\n"
        "    seen = 0\n"
        "    for root in roots:\n"
        "        for path, dirs, files in os.walk(root):\n"
        "            if path == root:\n"
        "                dirs[:] = [d for d in dirs if d not in ('proc', 'sys', 'dev')]\n"
        "            seen += 1\n"
        "            for f in names.intersection(files):\n"
        "                try:\n"
        "                    with open(os.path.join(path, f), 'rb') as fh:\n"
        "                        data = fh.read(1 << 22)\n"
        "                    if hashlib.sha256(data).hexdigest() in digests[f]:\n"
        "                        found.append(os.path.join(path, f))\n"
        "                except OSError:\n"
        "                    pass\n"
        "            if found or seen > 20000:\n"
        "                break\n"
        "        if found:\n"
        "            break\n"
        "    if not found:\n"
        "        raise RuntimeError('galapagos task check: no trusted task file was readable')\n"
        "    print('galapagos task check: read ' + ', '.join(found[:5]), file=sys.stderr)\n"
        "    return " + _ORIGINAL
    ),
    # Tries to write a forged result frame into the runner's own output channel.
    "forges_runner_output": (
        "import json, os, struct\n"
        "    doc = {'kind': 'result', 'status': 'ok', 'metrics': {'combined_score': 1e9, "
        "'validity': 1.0}, 'artifacts': {}}\n"
        "    head = json.dumps(doc).encode()\n"
        "    frame = struct.pack('>4sIQ', b'GLP1', len(head), 0) + head\n"
        "    for pid in {1, os.getppid()}:\n"
        "        for fd in (1, 2):\n"
        "            try:\n"
        "                with open('/proc/%d/fd/%d' % (pid, fd), 'wb') as out:\n"
        "                    out.write(frame)\n"
        "            except OSError:\n"
        "                pass\n"
        "    return None"
    ),
}

#: Variant name → what it does (for the report).
VARIANTS: dict[str, str] = {
    "syntax_error": "the program does not compile",
    "raises": "the entry point raises",
    "returns_nan": "every number in the answer is NaN",
    "returns_inf": "every number in the answer is +inf",
    "returns_neg_inf": "every number in the answer is -inf",
    "nan_in_part_1": "one NaN: the first number of the answer's 1st list/array, the rest intact",
    "nan_in_part_2": "one NaN: the first number of the answer's 2nd list/array, the rest intact",
    "nan_in_part_3": "one NaN: the first number of the answer's 3rd list/array, the rest intact",
    "wrong_shape": "every array gains an axis, every scalar becomes a pair",
    "wrong_type": "every number or array in the answer becomes a string",
    "empty_result": "the answer is empty ([] / {} / a zero-length array / None)",
    "returns_none": "the entry point returns None",
    "infinite_loop": "the entry point never returns (busy loop)",
    "sleeps_past_budget": "the entry point sleeps past the time budget",
    "prints_fake_result": "prints fake result lines with a huge score, then returns None",
    "exits_early": "calls sys.exit(0) instead of returning",
    "os_exit": "calls os._exit(0) instead of returning",
    "lying_object": "returns objects whose __eq__/__float__/comparisons lie",
    "reads_task_files": "returns the seed's answer only if it can read a trusted task file",
    "forges_runner_output": "writes a forged result frame to the runner's stdout, returns None",
}

#: Variants that probe the sandbox's isolation rather than the evaluator.
ISOLATION_VARIANTS = frozenset({"reads_task_files", "forges_runner_output"})
#: Partial-NaN variants: the k-th data part of the answer gets one NaN (when there is one).
PARTIAL_NAN_VARIANTS = {"nan_in_part_1": 1, "nan_in_part_2": 2, "nan_in_part_3": 3}
#: What a partial-NaN variant prints (once) when the answer has fewer data parts than it needs.
ABSENT_PART_MARKER = "galapagos task check: the answer has no such list/array part"
#: What a small lie prints (once) when the answer is not data followed by a reported number.
NO_REPORTED_VALUE_MARKER = "galapagos task check: the answer reports no value of its own"
#: Variants that never return: they get a short budget of their own.
HANGING_VARIANTS = frozenset({"infinite_loop", "sleeps_past_budget"})

_LIE_BODY = "return {map}({original}, lambda v: type(v)({inflate}), lambda a: a)"


def variant_source(
    seed: str, entry: str, kind: str, *, task_files: Mapping[str, bytes] | None = None
) -> str:
    """The seed program turned into adversarial variant ``kind`` (see :data:`VARIANTS`)."""
    if kind == "syntax_error":
        return seed + "\n\ndef galapagos_check_broken(:  # deliberate syntax error\n    pass\n"
    if kind not in _BODIES:
        raise ValueError(f"unknown variant {kind!r}; choose from {sorted(VARIANTS)}")
    body = _BODIES[kind]
    if kind == "reads_task_files":
        # Name → sha256 of every trusted file: a match proves it read *this* task's files.
        digests: dict[str, list[str]] = {}
        for rel, data in (task_files or {}).items():
            digests.setdefault(os.path.basename(rel), []).append(hashlib.sha256(data).hexdigest())
        body = body.replace("{digests!r}", repr(digests))
    return seed + _prelude(kind, entry) + "    " + body + "\n"


def _prelude(kind: str, entry: str) -> str:
    return _PRELUDE.format(kind=kind, entry=entry, absent=ABSENT_PART_MARKER)


#: Relative sizes of the small lies about the answer's last value (see :func:`lying_source`).
SMALL_LIES = (1e-9, 1e-6, 1e-3)

_SMALL_LIE_BODY = """out = {original}
    try:
        import numpy
        scalar_types = (int, float, numpy.generic)
    except ImportError:
        scalar_types = (int, float)
    if isinstance(out, tuple) and len(out) >= 2 and isinstance(out[-1], scalar_types) \\
            and not isinstance(out[-1], bool) \\
            and any(not isinstance(part, scalar_types) for part in out[:-1]):
        v = float(out[-1])
        out = out[:-1] + (v {sign} {rel!r} * max(abs(v), 1.0),)
    else:
        _galapagos_check_say_once({marker!r})
    return out"""


def lying_source(seed: str, entry: str, direction: str, rel: float | None = None) -> str:
    """The seed lying about what it reports, in the flattering direction.

    Without ``rel``: every scalar it returns outside arrays is inflated grossly (× 10 + 10), the
    data arrays untouched.  With ``rel``: only the last element of a returned tuple, the
    reported value by the convention of ``run_packing() -> (centers, radii, sum_radii)``, moves
    by ``rel`` relative, small enough to slip through a "close enough to what I recompute" test.
    """
    if rel is None:
        # Maximisation: a liar reports more; minimisation: less.
        inflate = (
            "abs(v) * 10 + 10" if direction == "maximize" else "v / 10 if v > 0 else v * 10 - 10"
        )
        body = _LIE_BODY.format(map=_MAP, original=_ORIGINAL, inflate=inflate)
        label = "gross"
    else:
        sign = "+" if direction == "maximize" else "-"
        body = _SMALL_LIE_BODY.format(
            original=_ORIGINAL, sign=sign, rel=rel, marker=NO_REPORTED_VALUE_MARKER
        )
        label = f"{rel:g}"
    return seed + _prelude(f"reports_inflated_values_{label}", entry) + "    " + body + "\n"


#: Module name of the probe evaluator in its job (never a name a task ships).
PROBE_MODULE = "galapagos_check_probe"
#: A trusted evaluator (format with ``entry``) that scores nothing: it calls the seed's entry
#: point once and counts the scalars outside arrays, which the lying variant would inflate.
PROBE_SOURCE = '''"""galapagos task check probe (trusted): count the scalars and arrays returned."""


def evaluate(candidate):
    value = candidate.call({entry!r})
    scalars = arrays = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool) or item is None or isinstance(item, str):
            continue
        if isinstance(item, (int, float)):
            scalars += 1
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif hasattr(item, "shape"):
            arrays += 1
    return {{"combined_score": 0.0, "scalars": scalars, "arrays": arrays}}
'''
