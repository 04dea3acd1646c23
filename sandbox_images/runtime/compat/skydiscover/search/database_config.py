"""The config objects a strategy's ``__init__(name, config)`` receives (shape of SkyDiscover's).

Only the fields strategies read are meaningful; nothing here touches files: ``db_path`` is
always ``None`` inside a strategy container (the host keeps the canonical population).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DatabaseConfig", "EvoxDatabaseConfig"]


@dataclass
class DatabaseConfig:
    db_path: str | None = None
    log_prompts: bool = True
    #: SkyDiscover 0.1.0's seed strategy seeds ``random`` with this in ``__init__``.  The
    #: reference defaults to 42; the strategy server passes the seed it derived from the run's.
    random_seed: int | None = 42


@dataclass
class EvoxDatabaseConfig(DatabaseConfig):
    database_file_path: str | None = None
    evaluation_file: str | None = None
    config_path: str | None = None
    auto_generate_variation_operators: bool = True
    higher_is_better: dict[str, bool] = field(default_factory=dict)
    fitness_key: str | None = None
    pareto_objectives: list[str] = field(default_factory=list)
    pareto_objectives_weight: float = 0.0
    #: Anything else a strategy may look up with ``getattr(self.config, name, default)``.
    extra: dict[str, Any] = field(default_factory=dict)
