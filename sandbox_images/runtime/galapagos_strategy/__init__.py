"""In-container side of EvoX strategies: an RPC server around one LLM-written strategy module.

The host sends one request frame at a time (``load``, ``new``, ``add``, ``sample``, probes) and
reads one response frame back; frames use :mod:`galapagos_sandbox.wire`.  The strategy runs in
this process, inside its own locked-down container: nothing here is a security boundary, the
container is, and the host re-validates every answer against its own copy of the population.

Modules: :mod:`.session` (the operations, no I/O), :mod:`.records` (wire records ↔ ``Program``
objects, answer normalisation), :mod:`.server` (the frame loop), ``seed_strategy.py`` (the
trusted seed strategy's source, as the meta-LLM sees it).
"""

from __future__ import annotations

#: Bumped when requests or responses change incompatibly (the host checks it at ``hello``).
PROTOCOL_VERSION = 1

__all__ = ["PROTOCOL_VERSION"]
