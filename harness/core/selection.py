"""SelectionPolicy: chooses the parent and the inspirations for each attempt.

Contract:

- ``await select(population, step)`` is called by the controller once per iteration (once per
  attempt with ``loop.resample_each_attempt``), after the ``start_iteration`` hooks and before
  the prompt is built.  It reads the population (a read-only view) and may update only the
  policy's own state (counters, its RNG).  It may await (EvoX's strategy answers it from a
  container) and record events (``step.event``).
- ``observe(outcome)`` is called once per iteration after admission, with the child (or
  ``None`` when every attempt failed).  Budget counters that depend on the outcome live here.
- Randomness comes only from the ``rng`` the scaffold builder passes in (seeded from the run
  seed); with the same seed and the same outcomes a policy makes the same choices.
- ``state_dict``/``load_state_dict`` must capture everything, RNG state included, so that a
  resumed run continues exactly.
- ``Selection.tags`` (island, mode, …) travel with the child to admission, in its metadata.
- Policies that need another block (an island population, a paradigm memory) take it as a
  typed constructor parameter (see :mod:`harness.core.blocks`).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from harness.core.block import Block, Step
from harness.core.population import PopulationView
from harness.core.records import IterationOutcome, Selection
from harness.core.rng import rng_from_state, rng_state

__all__ = ["BaseSelectionPolicy"]


class BaseSelectionPolicy(Block, ABC):
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    @abstractmethod
    async def select(self, population: PopulationView, step: Step) -> Selection:
        """Return the parent and inspirations for the next attempt of ``step.iteration``."""

    def observe(self, outcome: IterationOutcome) -> None:  # noqa: B027 - optional hook
        """Called after each iteration with its outcome."""

    def state_dict(self) -> dict[str, Any]:
        return {"rng": rng_state(self.rng)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        rng_from_state(self.rng, state["rng"])
