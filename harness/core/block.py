"""What every block shares: iteration hooks, the :class:`Step` they receive, and closing.

The six slots (population, selection policy, prompt builder, proposer, evaluator, memory) each
have an abstract base in ``harness.core``; all but the evaluator derive from :class:`Block`.

Hook contract (the controller is the only caller):

- ``start_iteration(step)`` runs before the iteration's first ``select``; ``end_iteration(step,
  outcome)`` after the child was admitted and ``observe``-d — also when every attempt failed,
  and for iteration 0 (the seed's evaluation), so a block can initialise from the seed there.
- Hooks run in a fixed slot order: population, memory, selection policy, prompt builder,
  proposer.  A block that must act after another block's hook says so in its docstring and
  reads that block (it got it at build time), rather than relying on a different order.
- A hook may call the LLM through ``step.llm`` (seeded, accounted, recorded as every call).  An
  :class:`~harness.core.errors.LLMError` escaping a hook is recorded as a ``hook_skipped`` event
  and the rest of that hook is skipped: never a failed run.  A spent budget
  (:class:`~harness.core.errors.BudgetExhausted`) ends the run as everywhere else.
- A hook may create programs (migrants, island seeds, spawned copies) with
  ``step.new_program(source, **changes)``: the controller allocates the id (``p<it>.<n>``),
  stores the program with the iteration and checkpoints it; code, metrics and score are the
  source's — only an evaluation produces scores.  The block decides where the copy lives.
- Hooks may mutate only their own block's state (and, for island blocks, the population's
  structure through its own methods); everything must round-trip through ``state_dict``.
- ``state_dict`` returns a fresh structure of JSON values, never the block's own lists or dicts:
  the store keeps the last one to write the next checkpoint as the difference from it.
- ``parallel_ok = False`` on any block makes the scaffold's iterations sequential.
- ``unsupported_loop`` names the loop options (:class:`~harness.core.config.LoopConfig` fields,
  or a tuple of them that must all be on) a block cannot run with, and why; ``check`` refuses
  such a composition before the run starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from harness.core.llm import LLM
from harness.core.records import IterationOutcome, Program

__all__ = ["Block", "Step"]


class Step(Protocol):
    """One iteration, as block hooks see it."""

    @property
    def iteration(self) -> int: ...

    @property
    def max_iterations(self) -> int: ...

    @property
    def llm(self) -> LLM: ...

    def event(self, kind: str, **payload: Any) -> None:
        """Record a decision (stored with the iteration, shown by ``galapagos show``)."""
        ...

    def new_program(self, source: Program, **changes: Any) -> Program:
        """A stored copy of ``source`` with a controller-allocated id.

        ``changes`` may set ``metadata`` (merged over the source's), ``parent_id``,
        ``generation``, ``parent_label``, ``inspiration_ids`` and ``changes``.  The copy's
        ``metadata["copy_of"]`` names the original program.
        """
        ...

    def programs(self) -> Mapping[str, Program]:
        """Every program of the run so far (members or not), by id; read-only."""
        ...


class Block:
    """Optional hooks shared by the block slots (no-ops here)."""

    #: Whether iterations may overlap while this block is part of the scaffold.
    parallel_ok: ClassVar[bool] = True
    #: Loop options this block cannot run with (an option, or options all on) → why.
    unsupported_loop: ClassVar[Mapping[str | tuple[str, ...], str]] = {}

    async def start_iteration(self, step: Step) -> None:
        """Runs before the iteration's first ``select`` (iteration 0: before the seed)."""

    async def end_iteration(self, step: Step, outcome: IterationOutcome) -> None:
        """Runs after admission and ``observe``, failed iterations included."""

    async def aclose(self) -> None:
        """Release what the block started (containers, servers); always called once."""
