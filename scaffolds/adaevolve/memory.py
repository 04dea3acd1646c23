"""``ParadigmMemory``: AdaEvolve's Level 3, breakthrough paradigms on global stagnation.

- A window of the last ``paradigm_window_size`` binary ticks, one per admitted non-migrant
  program (the seed's included): 1 if it raised the global best.
- Stagnating ⇔ the window is full, no usable paradigm remains and its mean is below
  ``paradigm_improvement_threshold``.  Checked at the start of every iteration ≥ 1, so the
  ideas reach that iteration's prompts.  Then one guide-model request (purpose ``paradigm``,
  up to ``paradigm_generation_attempts`` calls while answers do not parse): the first
  ``paradigm_num_to_generate`` valid ideas are installed.  A failed generation installs nothing
  and the next iteration asks again (no cooldown, as the reference's code).
- Each idea serves ``paradigm_max_uses`` prompts (one use per attempt's prompt, failed attempts
  included), round-robin.  A new batch archives the previous one's used ideas with their
  outcome (SUCCESS when the best rose by more than 0.001 meanwhile), keeping the last
  ``paradigm_max_tried``; the guide prompt lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from harness.core.block import Step
from harness.core.blocks import block
from harness.core.errors import LLMError
from harness.core.memory import BaseMemory
from harness.core.records import IterationOutcome, Selection, TaskInfo
from harness.core.validation import StrictModel
from scaffolds.adaevolve.paradigms import format_guidance, paradigm_prompt, parse_ideas
from scaffolds.adaevolve.population import AdaEvolveArchipelago

__all__ = ["ParadigmMemory", "ParadigmMemoryConfig"]


class ParadigmMemoryConfig(StrictModel):
    #: ``false``: no guide calls, no paradigms (ablation).
    use_paradigm_breakthrough: bool = True
    paradigm_window_size: int = Field(10, ge=1)
    paradigm_improvement_threshold: float = Field(0.12, ge=0.0)
    paradigm_max_uses: int = Field(2, ge=1)
    #: Ideas asked of the guide model per request; at most this many are installed.
    paradigm_num_to_generate: int = Field(3, ge=1, le=20)
    paradigm_max_tried: int = Field(10, ge=0)
    #: Guide calls per request while the answer has no valid idea (the reference: 3).
    paradigm_generation_attempts: int = Field(3, ge=1, le=10)


@block(
    "adaevolve_paradigms",
    "Global-improvement window; on stagnation a guide-model call for breakthrough ideas, each "
    "used a bounded number of times, with a tried-idea history.",
)
class ParadigmMemory(BaseMemory):
    parallel_ok = False

    def __init__(
        self, config: ParadigmMemoryConfig, population: AdaEvolveArchipelago, task: TaskInfo
    ) -> None:
        self.config = config
        self.population = population
        self.task = task
        self.window: list[float] = []
        self.active: list[dict[str, str]] = []
        self.uses: dict[int, int] = {}
        self.index = 0
        self.tried: list[dict[str, Any]] = []
        self.score_at_install = 0.0
        self.best_during = 0.0
        self._notes: list[tuple[str, dict[str, Any]]] = []

    # -- the window -------------------------------------------------------------------------
    def tick(self, improved: bool, best_score: float) -> None:
        """One admitted non-migrant program; ``improved``: it raised the global best."""
        self.window.append(1.0 if improved else 0.0)
        del self.window[: max(0, len(self.window) - self.config.paradigm_window_size)]
        if self.active and best_score > self.best_during:
            self.best_during = best_score

    def rate(self) -> float:
        return sum(self.window) / len(self.window) if self.window else 0.0

    def stagnating(self) -> bool:
        cfg = self.config
        return (
            cfg.use_paradigm_breakthrough
            and len(self.window) >= cfg.paradigm_window_size
            and self.current() is None
            and self.rate() < cfg.paradigm_improvement_threshold
        )

    def observe(self, outcome: IterationOutcome) -> None:
        if outcome.child is not None and outcome.admitted:
            self.tick(self.population.last_improved, self.population.best_score)

    # -- paradigms --------------------------------------------------------------------------
    def current(self) -> dict[str, str] | None:
        """The paradigm in use (rotating past exhausted ones), or None."""
        if not self.active:
            return None
        if self.uses.get(self.index, 0) >= self.config.paradigm_max_uses and not self._rotate():
            return None
        return self.active[self.index]

    def _rotate(self) -> bool:
        n = len(self.active)
        for step in range(n):
            candidate = (self.index + 1 + step) % n
            if self.uses.get(candidate, 0) < self.config.paradigm_max_uses:
                if candidate != self.index:
                    self._notes.append(("paradigm_rotated", {"index": candidate}))
                self.index = candidate
                return True
        return False

    def render(self, selection: Selection, iteration: int) -> str:
        """The paradigm block of this attempt's prompt; rendering it spends one use."""
        paradigm = self.current()
        if paradigm is None:
            return ""
        self.uses[self.index] = self.uses.get(self.index, 0) + 1
        text = format_guidance(paradigm)
        self._rotate()
        return text

    def install(self, ideas: list[dict[str, str]], best_score: float) -> None:
        self._archive_batch()
        self.active = ideas
        self.uses = {}
        self.index = 0
        self.score_at_install = best_score
        self.best_during = best_score

    def _archive_batch(self) -> None:
        gain = self.best_during - self.score_at_install
        for i, idea in enumerate(self.active):
            if self.uses.get(i, 0) == 0:
                continue
            self.tried.append(
                {
                    **idea,
                    "uses": self.uses[i],
                    "score_improvement": gain,
                    "outcome": "SUCCESS" if gain > 0.001 else "FAILED",
                }
            )
        del self.tried[: max(0, len(self.tried) - self.config.paradigm_max_tried)]

    def tried_ideas(self) -> list[str]:
        return [
            f"{t['outcome']}: {t.get('approach_type', 'unknown')} - {t.get('idea', 'unknown')} "
            f"(improvement: {t['score_improvement']:+.4f})"
            for t in self.tried
        ]

    # -- hooks ------------------------------------------------------------------------------
    async def start_iteration(self, step: Step) -> None:
        if step.iteration < 1 or not self.stagnating():
            return
        best = self.population.best()
        if best is None:
            return
        cfg = self.config
        prompt = paradigm_prompt(
            best,
            self.population.best_score,
            self.tried_ideas(),
            self.task,
            cfg.paradigm_num_to_generate,
        )
        errors: list[str] = []
        for _ in range(cfg.paradigm_generation_attempts):
            try:
                call = await step.llm.generate(prompt, purpose="paradigm")
            except LLMError as exc:
                errors.append(f"LLM error: {exc}"[:300])
                continue
            ideas = parse_ideas(call.text)
            if ideas:
                kept = ideas[: cfg.paradigm_num_to_generate]
                self.install(kept, self.population.best_score)
                step.event(
                    "paradigm_installed",
                    ideas=[i["idea"][:200] for i in kept],
                    offered=len(ideas),
                    rate=self.rate(),
                    best_score=self.population.best_score,
                )
                return
            errors.append("the answer had no valid idea")
        step.event("paradigm_generation_failed", errors=errors, rate=self.rate())

    async def end_iteration(self, step: Step, outcome: IterationOutcome) -> None:
        for kind, payload in self._notes:
            step.event(kind, **payload)
        self._notes.clear()

    # -- checkpoint -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "window": list(self.window),
            "active": list(self.active),
            "uses": {str(k): v for k, v in self.uses.items()},
            "index": self.index,
            "tried": list(self.tried),
            "score_at_install": self.score_at_install,
            "best_during": self.best_during,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.window = [float(v) for v in state["window"]]
        self.active = [dict(i) for i in state["active"]]
        self.uses = {int(k): int(v) for k, v in state["uses"].items()}
        self.index = int(state["index"])
        self.tried = [dict(t) for t in state["tried"]]
        self.score_at_install = float(state["score_at_install"])
        self.best_during = float(state["best_during"])
        self._notes = []
