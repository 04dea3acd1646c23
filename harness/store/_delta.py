"""Checkpoint deltas: what changed between two JSON-like states, and applying it.

A run's checkpoint is a base state plus a chain of deltas, each against the state before it, so
an iteration writes what its blocks changed, not the whole population again.  A delta is a flat
list of *operations*, applied in order, each ``[op, path, ...]`` where ``path`` lists the keys
(a dict's key as JSON writes it: a string) and indices from the state's root to the value the
operation changes:

- ``["=", path, value]``: the value, whole (a dict's new key joins last; ``[]``: the state);
- ``["x", path, keys]``: the dict at ``path`` loses ``keys``;
- ``["l", path, n, items]``: the list at ``path`` drops its first ``n`` items and appends
  ``items`` (appends, and queues that drop their oldest);
- ``["p", path, n, m, items]``: the list at ``path`` keeps its first ``n`` and last ``m`` items
  with ``items`` between them (an insertion or removal in the middle).

A list of the same length whose items changed in place (a short list, or a long list of
containers whose changes lie within ``_SCAN`` items) gets the operations of its changed items.
An unchanged state has no delta (``diff`` returns ``None``).  Dicts are compared key by key and
scalars by type and value; lists by Python's ``==`` (in C: a list of 10,000 ids costs tens of
microseconds), so an item of a list that only changes between equal numbers of another type
(``1``, ``1.0``, ``True``) keeps its earlier form until the next base.  Tuples are lists, as JSON
has them.  A :class:`~harness.core.store.LastChanged` list whose ``base`` is the old list is
taken at its word: only its last item is compared.

Until schema v8 a delta was one nested node per changed container (a dict whose ``"~"`` names
the operation, its changes keyed under it); ``apply`` still reads those.  The flat list is
cheaper to build and to write: JSON encodes a dict (one per nested node) several times slower
than a list.
"""

from __future__ import annotations

import json
from typing import Any

from harness.core.store import LastChanged

__all__ = ["apply", "diff"]

#: Lists at most this long whose items changed in place get per-item operations.
_SHORT = 64
#: So do longer lists of the same length whose changed stretch (from the first changed item to
#: the last) is at most this long and starts and ends with a list or dict.
_SCAN = 4096

Path = list[Any]


def diff(old: Any, new: Any) -> list[list[Any]] | None:
    """The operations that turn ``old`` into ``new`` (``None``: equal)."""
    out: list[list[Any]] = []
    _diff(old, new, [], out)
    return out or None


def _diff(old: Any, new: Any, path: Path, out: list[list[Any]]) -> None:
    if old is new:
        return
    if isinstance(new, dict) and isinstance(old, dict):
        _diff_dict(old, new, path, out)
    elif isinstance(new, list | tuple) and isinstance(old, list | tuple):
        _diff_list(old, new, path, out)
    elif type(old) is not type(new) or old != new:
        out.append(["=", [*path], new])


def _key(key: Any) -> str:
    """A dict key as JSON writes it (``1`` → ``"1"``, ``None`` → ``"null"``)."""
    if type(key) is str:
        return key
    if type(key) is int:
        return int.__repr__(key)
    return str(next(iter(json.loads(json.dumps({key: 0})))))


def _diff_dict(old: dict[Any, Any], new: dict[Any, Any], path: Path, out: list[list[Any]]) -> None:
    keys = list(new)
    kept = list(old)
    removed: set[Any] | tuple[()] = ()
    if keys != kept:
        removed = old.keys() - new.keys()
        if removed:
            kept = [k for k in kept if k not in removed]
        if keys[: len(kept)] != kept:  # the order of the kept keys changed: whole
            out.append(["=", [*path], new])
            return
    for key in kept:
        value, before = new[key], old[key]
        if value is not before:
            path.append(_key(key))
            _diff(before, value, path, out)
            path.pop()
    for key in keys[len(kept) :]:  # new keys, in their order
        out.append(["=", [*path, _key(key)], new[key]])
    if removed:
        out.append(["x", [*path], [_key(k) for k in old if k in removed]])


def _diff_list(old: Any, new: Any, path: Path, out: list[list[Any]]) -> None:
    base = new.base if type(new) is LastChanged else None
    if base is not None and base is old:  # it says: all but the last are old's
        _diff_last(base[-1], new[-1], len(new) - 1, path, out)
        return
    old = old if isinstance(old, list) else list(old)
    new = new if isinstance(new, list) else list(new)
    n, m = len(old), len(new)
    if n == m:
        if old[:-1] == new[:-1]:  # the last item only (an RNG's position, a growing tail)
            if n:
                _diff_last(old[-1], new[-1], n - 1, path, out)
            return
    elif m > n and new[:n] == old:
        out.append(["l", [*path], 0, new[n:]])
        return
    if n and m:
        # ``in`` before ``index``: a missing item's ValueError would spell out its repr (a
        # chunk of 1,024 ids: ~100 us).
        start = old.index(new[0]) if new[0] in old else -1
        if start > 0 and m >= n - start and new[: n - start] == old[start:]:
            out.append(["l", [*path], start, new[n - start :]])
            return
    if n == m and n <= _SHORT:
        _changed_items(old, new, 0, n, path, out)
        return
    prefix = _common(old, new, n, m, from_end=False)
    suffix = _common(old, new, n - prefix, m - prefix, from_end=True)
    stop = m - suffix
    if n == m and stop - prefix <= _SCAN and _container(new[prefix]) and _container(new[stop - 1]):
        # A long list of containers changed in place (a roster's chunks: a removal in one, an
        # append in the last): each changed item by its own operations, the rest skipped by
        # identity.
        _changed_items(old, new, prefix, stop, path, out)
        return
    middle = new[prefix:stop]
    if len(middle) * 2 > m:
        out.append(["=", [*path], new])
    else:
        out.append(["p", [*path], prefix, suffix, middle])


def _diff_last(before: Any, last: Any, index: int, path: Path, out: list[list[Any]]) -> None:
    if last is before or last == before:  # (as ``==`` of the lists compares items)
        return
    path.append(index)
    _diff(before, last, path, out)
    path.pop()


def _changed_items(
    old: list[Any], new: list[Any], start: int, stop: int, path: Path, out: list[list[Any]]
) -> None:
    """The operations of the items in ``start:stop`` (both lists have them) that changed."""
    for i in range(start, stop):
        a, b = old[i], new[i]
        if a is not b:
            path.append(i)
            _diff(a, b, path, out)
            path.pop()


def _container(value: Any) -> bool:
    return isinstance(value, list | dict)


def _common(old: list[Any], new: list[Any], n: int, m: int, *, from_end: bool) -> int:
    """The length of the longest common prefix (suffix) of the two lists, at most ``min(n, m)``
    (binary search on slice equality, which runs in C)."""
    low, high = 0, min(n, m)
    while low < high:
        mid = (low + high + 1) // 2
        if from_end:
            same = old[len(old) - mid :] == new[len(new) - mid :]
        else:
            same = old[:mid] == new[:mid]
        if same:
            low = mid
        else:
            high = mid - 1
    return low


def apply(state: Any, delta: list[list[Any]] | dict[str, Any] | None) -> Any:
    """``state`` (as JSON loaded it) with ``delta`` (as JSON loaded it) applied; dicts and lists
    are changed in place where they can be.  A delta written before schema v8 (a nested node)
    is read as it was written."""
    if delta is None:
        return state
    if isinstance(delta, dict):
        return _apply_node(state, delta)
    for op in delta:
        kind, path = op[0], op[1]
        if kind == "=":
            if not path:
                state = op[2]
                continue
            target = state
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = op[2]
            continue
        target = state
        for key in path:
            target = target[key]
        if kind == "x":
            for key in op[2]:
                del target[key]
        elif kind == "l":
            del target[: op[2]]
            target.extend(op[3])
        elif kind == "p":
            target[op[2] : len(target) - op[3]] = op[4]
        else:
            raise ValueError(f"unknown checkpoint delta operation {kind!r}")
    return state


def _apply_node(state: Any, node: dict[str, Any] | None) -> Any:
    """A delta of schema v7: one node per changed container, ``{"~": op, ...}`` (``"="``: the
    value whole, ``"d"``: a dict's keys set under ``"s"`` and removed under ``"x"``, ``"l"``
    and ``"p"`` as the operations above, ``"i"``: a list's items changed in place)."""
    if node is None:
        return state
    op = node["~"]
    if op == "=":
        return node["v"]
    if op == "d":
        for key, sub in node["s"].items():
            state[key] = _apply_node(state[key], sub) if key in state else sub["v"]
        for key in node.get("x", {}):
            del state[key]
        return state
    if op == "l":
        del state[: node["d"]]
        state.extend(node["t"])
        return state
    if op == "p":
        end = len(state) - node["q"]
        state[node["p"] : end] = node["v"]
        return state
    if op == "i":
        for index, sub in node["s"].items():
            i = int(index)
            state[i] = _apply_node(state[i], sub)
        return state
    raise ValueError(f"unknown checkpoint delta operation {op!r}")
