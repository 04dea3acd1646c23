"""Checkpoint deltas: what changed between two JSON-like states, and applying it.

A run's checkpoint is a base state plus a chain of deltas, each against the state before it, so
an iteration writes what its blocks changed, not the whole population again.  A delta is a
*node*, a dict whose ``"~"`` key names the operation:

- ``{"~": "=", "v": value}``: the value, whole;
- ``{"~": "d", "s": {key: node}, "x": {key: 0}}``: a dict, keys set (recursively) and removed
  (removed keys are the keys of ``x``, so that JSON turns them into strings as it does the
  state's own keys);
- ``{"~": "l", "d": n, "t": [...]}``: a list, its first ``n`` items dropped and ``t`` appended
  (appends, and queues that drop their oldest);
- ``{"~": "p", "p": n, "q": m, "v": [...]}``: a list, its first ``n`` and last ``m`` items kept and
  ``v`` between them (an insertion or removal in the middle);
- ``{"~": "i", "s": {index: node}}``: a list of the same length, items changed in place (a
  short list, or a long list of containers whose changes lie within ``_SCAN`` items).

An unchanged value has no node (``diff`` returns ``None``).  Dicts are compared key by key and
scalars by type and value; lists by Python's ``==`` (in C: a list of 10,000 ids costs tens of
microseconds), so an item of a list that only changes between equal numbers of another type
(``1``, ``1.0``, ``True``) keeps its earlier form until the next base.  Tuples are lists, as JSON
has them.  A :class:`~harness.core.store.LastChanged` list whose ``base`` is the old list is
taken at its word: only its last item is compared.
"""

from __future__ import annotations

from typing import Any

from harness.core.store import LastChanged

__all__ = ["apply", "diff"]

#: Lists at most this long whose items changed in place get per-item nodes.
_SHORT = 64
#: So do longer lists of the same length whose changed stretch (from the first changed item to
#: the last) is at most this long and starts and ends with a list or dict.
_SCAN = 4096


def diff(old: Any, new: Any) -> dict[str, Any] | None:
    """The node that turns ``old`` into ``new`` (``None``: equal)."""
    if old is new:
        return None
    if isinstance(new, dict) and isinstance(old, dict):
        return _diff_dict(old, new)
    if isinstance(new, list | tuple) and isinstance(old, list | tuple):
        return _diff_list(old, new)
    if type(old) is type(new) and old == new:
        return None
    return {"~": "=", "v": new}


def _diff_dict(old: dict[Any, Any], new: dict[Any, Any]) -> dict[str, Any] | None:
    keys = list(new)
    kept = list(old)
    if keys == kept:  # the same keys in the same order (the common case)
        removed: set[Any] | Any = ()
    else:
        removed = old.keys() - new.keys()
        if removed:
            kept = [k for k in kept if k not in removed]
        if keys[: len(kept)] != kept:  # the order of the kept keys changed: whole
            return {"~": "=", "v": new}
    changed: dict[Any, Any] = {}
    for key in kept:
        value, before = new[key], old[key]
        if value is not before and (sub := diff(before, value)) is not None:
            changed[key] = sub
    for key in keys[len(kept) :]:  # new keys, in their order
        changed[key] = {"~": "=", "v": new[key]}
    if not changed and not removed:
        return None
    out: dict[str, Any] = {"~": "d", "s": changed}
    if removed:
        out["x"] = dict.fromkeys(removed, 0)
    return out


def _diff_list(old: Any, new: Any) -> dict[str, Any] | None:
    if type(new) is LastChanged and new.base is old:  # it says: all but the last are old's
        last, before = new[-1], old[-1]
        if last is before or last == before:
            return None
        return {"~": "i", "s": {len(new) - 1: diff(before, last)}}
    old = old if isinstance(old, list) else list(old)
    new = new if isinstance(new, list) else list(new)
    n, m = len(old), len(new)
    if n == m:
        if old[:-1] == new[:-1]:
            last, before = new[-1] if n else None, old[-1] if n else None
            if last is before or last == before:  # (as ``==`` of the lists compares items)
                return None
            # the last item only (an RNG's position, a growing tail)
            return {"~": "i", "s": {n - 1: diff(before, last)}}
    elif m > n and new[:n] == old:
        return {"~": "l", "d": 0, "t": new[n:]}
    if n and m:
        # ``in`` before ``index``: a missing item's ValueError would spell out its repr (a
        # chunk of 1,024 ids: ~100 us).
        start = old.index(new[0]) if new[0] in old else -1
        if start > 0 and m >= n - start and new[: n - start] == old[start:]:
            return {"~": "l", "d": start, "t": new[n - start :]}
    if n == m and n <= _SHORT:
        return {"~": "i", "s": _changed_items(old, new, 0, n)}
    prefix = _common(old, new, n, m, from_end=False)
    suffix = _common(old, new, n - prefix, m - prefix, from_end=True)
    stop = m - suffix
    if n == m and stop - prefix <= _SCAN and _container(new[prefix]) and _container(new[stop - 1]):
        # A long list of containers changed in place (a roster's chunks: a removal in one, an
        # append in the last): each changed item by its own node, the rest skipped by identity.
        return {"~": "i", "s": _changed_items(old, new, prefix, stop)}
    middle = new[prefix : m - suffix]
    if len(middle) * 2 > m:
        return {"~": "=", "v": new}
    return {"~": "p", "p": prefix, "q": suffix, "v": middle}


def _changed_items(old: list[Any], new: list[Any], start: int, stop: int) -> dict[int, Any]:
    """Per index in ``start:stop`` (both lists have it), the node of the item that changed."""
    return {
        i: node
        for i in range(start, stop)
        if (a := old[i]) is not (b := new[i]) and (node := diff(a, b)) is not None
    }


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


def apply(state: Any, node: dict[str, Any] | None) -> Any:
    """``state`` (as JSON loaded it) with ``node`` applied; dicts and lists are changed in
    place where they can be."""
    if node is None:
        return state
    op = node["~"]
    if op == "=":
        return node["v"]
    if op == "d":
        for key, sub in node["s"].items():
            state[key] = apply(state[key], sub) if key in state else sub["v"]
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
            state[i] = apply(state[i], sub)
        return state
    raise ValueError(f"unknown checkpoint delta operation {op!r}")
