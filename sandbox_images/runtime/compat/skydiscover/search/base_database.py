"""``Program`` and ``ProgramDatabase`` with the shape SkyDiscover strategies subclass.

Written for Galapagos from the documented contract (field names, helper names, scoring rules);
strategies written for SkyDiscover's EvoX import these names unchanged.  Differences that a
strategy can observe: nothing is ever saved to disk (``save``/``load``/``_save_program`` do
nothing; the host owns persistence), and multi-objective mode is off unless the config lists
``pareto_objectives`` (then the front is computed on those metrics, larger is better unless
``higher_is_better`` says otherwise).
"""

from __future__ import annotations

import logging
import statistics
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from skydiscover.search.database_config import DatabaseConfig

__all__ = ["DatabaseConfig", "Program", "ProgramDatabase", "get_score", "is_numeric_metric"]

logger = logging.getLogger(__name__)


def is_numeric_metric(value: Any) -> bool:
    """Real numbers only: ``True`` is an ``int`` in Python but never a score."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def get_score(metrics: dict[str, Any] | None) -> float:
    """``combined_score`` when it converts to float, else the mean of numeric metrics, else 0."""
    if not metrics:
        return 0.0
    if "combined_score" in metrics:
        try:
            return float(metrics["combined_score"])
        except (TypeError, ValueError):
            pass
    numbers = [float(v) for v in metrics.values() if is_numeric_metric(v)]
    return sum(numbers) / len(numbers) if numbers else 0.0


@dataclass
class Program:
    id: str
    solution: str
    language: str = "python"
    metrics: dict[str, Any] = field(default_factory=dict)
    iteration_found: int = 0
    parent_id: str | None = None
    other_context_ids: list[str] | None = None
    parent_info: tuple[str, str] | None = None
    context_info: list[tuple[str, str]] | None = None
    timestamp: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)
    artifacts: dict[str, Any] = field(default_factory=dict)
    prompts: dict[str, Any] | None = None
    generation: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Program:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class ProgramDatabase(ABC):
    """Keeps ``self.programs`` (id → Program); subclasses decide ``add`` and ``sample``."""

    DIVERGE_LABEL = ""
    REFINE_LABEL = ""

    def __init__(self, name: str, config: DatabaseConfig | None = None, **kwargs: Any) -> None:
        self.name = name
        self.config = config if config is not None else DatabaseConfig()
        self.programs: dict[str, Program] = {}
        self.last_iteration = 0
        self.initial_program_id: str | None = None
        self.initial_program_score: float | None = None
        self.best_program_id: str | None = None
        self.prompts_by_program: dict[str, dict[str, Any]] | None = None
        self._pareto_front_cache: list[Program] | None = None

    @abstractmethod
    def add(self, program: Program, iteration: int | None = None, **kwargs: Any) -> str:
        """Store ``program``; return its id."""

    @abstractmethod
    def sample(self, num_context_programs: int | None = 4, **kwargs: Any) -> Any:
        """``({label: parent}, {label: [context…]})`` or ``(parent, [context…])``."""

    # -- persistence: the host owns it ------------------------------------------------------
    def save(self, path: str | None = None, iteration: int = 0) -> None:
        return None

    def load(self, path: str) -> None:
        return None

    def _save_program(
        self, program: Program, base_path: str | None = None, prompts: dict[str, Any] | None = None
    ) -> None:
        return None

    # -- lookups and best tracking ----------------------------------------------------------
    def get(self, program_id: str) -> Program | None:
        return self.programs.get(program_id)

    def is_multiobjective_enabled(self) -> bool:
        return bool(getattr(self.config, "pareto_objectives", None))

    def _objectives(self, program: Program) -> list[float] | None:
        hib = getattr(self.config, "higher_is_better", None) or {}
        out = []
        for key in getattr(self.config, "pareto_objectives", None) or []:
            value: Any = (program.metrics or {}).get(key)
            if not is_numeric_metric(value):
                return None
            out.append(float(value) if hib.get(key, True) else -float(value))
        return out

    def _proxy_score(self, program: Program) -> float:
        metrics = program.metrics or {}
        key = getattr(self.config, "fitness_key", None)
        if key and is_numeric_metric(metrics.get(key)):
            hib = getattr(self.config, "higher_is_better", None) or {}
            return float(metrics[key]) if hib.get(key, True) else -float(metrics[key])
        if self.is_multiobjective_enabled() and "combined_score" not in metrics:
            vector = self._objectives(program)
            if vector:
                return sum(vector) / len(vector)
        return get_score(metrics) if metrics else float("-inf")

    def _invalidate_pareto_cache(self) -> None:
        self._pareto_front_cache = None

    def get_pareto_front(self) -> list[Program]:
        if not self.programs:
            return []
        if not self.is_multiobjective_enabled():
            best = self.get_best_program()
            return [best] if best is not None else []
        if self._pareto_front_cache is None:
            scored = [(p, v) for p in self.programs.values() if (v := self._objectives(p))]
            front = [
                p
                for p, v in scored
                if not any(
                    all(a >= b for a, b in zip(w, v, strict=True)) and w != v for _, w in scored
                )
            ]
            front.sort(key=self._proxy_score, reverse=True)
            self._pareto_front_cache = front
        return list(self._pareto_front_cache)

    def _is_better(self, first: Program, second: Program) -> bool:
        if not first.metrics:
            return False
        if not second.metrics:
            return True
        if self.is_multiobjective_enabled():
            return self._proxy_score(first) > self._proxy_score(second)
        return get_score(first.metrics) > get_score(second.metrics)

    def _update_best_program(self, program: Program) -> None:
        self._invalidate_pareto_cache()
        current = self.programs.get(self.best_program_id) if self.best_program_id else None
        if current is None or self._is_better(program, current):
            self.best_program_id = program.id

    def _ranked(self, metric: str | None = None) -> list[Program]:
        if metric:
            have = [p for p in self.programs.values() if metric in (p.metrics or {})]
            return sorted(have, key=lambda p: p.metrics[metric], reverse=True)
        key = (
            self._proxy_score
            if self.is_multiobjective_enabled()
            else (lambda p: get_score(p.metrics))
        )
        return sorted(self.programs.values(), key=key, reverse=True)

    def get_best_program(self, metric: str | None = None) -> Program | None:
        if not self.programs:
            return None
        if metric is None and self.best_program_id in self.programs:
            return self.programs[self.best_program_id]
        ranked = self._ranked(metric)
        if ranked and metric is None:
            self.best_program_id = ranked[0].id
        return ranked[0] if ranked else None

    def get_top_programs(self, n: int = 10, metric: str | None = None) -> list[Program]:
        return self._ranked(metric)[: max(0, n)]

    # -- prompt log and statistics ----------------------------------------------------------
    def log_prompt(
        self,
        program_id: str,
        template_key: str,
        prompt: dict[str, Any],
        responses: list[str] | None = None,
    ) -> None:
        if self.prompts_by_program is None:
            self.prompts_by_program = {}
        entry = dict(prompt, responses=list(responses or []))
        self.prompts_by_program.setdefault(program_id, {})[template_key] = entry

    def log_status(self) -> None:
        logger.debug("database %s holds %d programs", self.name, len(self.programs))

    def get_statistics(
        self, num_recent_iterations: int = 100, k: int = 20, improvement_threshold: float = 0.10
    ) -> dict[str, Any]:
        """A summary of the population (the keys SkyDiscover strategies read)."""
        programs = list(self.programs.values())
        scores: list[float] = [
            float(p.metrics["combined_score"])
            for p in programs
            if is_numeric_metric((p.metrics or {}).get("combined_score"))
        ]
        last = max(
            (p.iteration_found for p in programs if isinstance(p.iteration_found, int)), default=0
        )
        summary: dict[str, Any] = {
            "best": None,
            "q75": None,
            "q50": None,
            "q25": None,
            "worst": None,
        }
        if scores:
            ordered = sorted(scores, reverse=True)
            q25, q50, q75 = (
                statistics.quantiles(scores, n=4)
                if len(scores) >= 4
                else [statistics.median(scores)] * 3
            )
            summary = {
                "best": ordered[0],
                "q75": q75,
                "q50": q50,
                "q25": q25,
                "worst": ordered[-1],
                "unique_scores": len({round(s, 4) for s in scores}),
            }
        recent = sorted(
            (
                p
                for p in programs
                if isinstance(p.iteration_found, int)
                and p.iteration_found > last - num_recent_iterations
            ),
            key=lambda p: p.iteration_found,
        )
        parents = Counter(p.parent_id for p in recent if p.parent_id)
        with_parent = sum(parents.values())
        stale = 0
        if scores:
            near = [
                p.iteration_found
                for p in programs
                if is_numeric_metric((p.metrics or {}).get("combined_score"))
                and p.metrics["combined_score"] >= max(scores) - improvement_threshold
            ]
            stale = last - min(near) if near else 0
        return {
            "previous_programs": recent,
            "population_size": len(programs),
            "solution_score_summary": summary,
            "avg_solutions_per_parent": with_parent / len(parents) if parents else 0.0,
            "top_solution_scores": sorted(scores, reverse=True)[:k],
            "recent_solution_stats": {
                "num_recent_iterations": len(recent),
                "score_trajectory": [p.metrics.get("combined_score") for p in recent],
                "iterations_without_improvement": stale,
                "improvement_threshold": improvement_threshold,
                "most_reused_parent_ratio": (
                    parents.most_common(1)[0][1] / with_parent if with_parent else 0.0
                ),
            },
        }
