# EVOLVE-BLOCK-START
"""Seed search strategy: uniform random parent, random context, no variation labels."""

import random
from dataclasses import dataclass

from skydiscover.config import DatabaseConfig
from skydiscover.search.base_database import Program, ProgramDatabase


@dataclass
class EvolvedProgram(Program):
    """Programs as this strategy stores them (no extra fields)."""


class EvolvedProgramDatabase(ProgramDatabase):
    """Keeps every program; samples the parent uniformly and the context at random."""

    def __init__(self, name: str, config: DatabaseConfig):
        super().__init__(name, config)
        self.initial_program = None

    def add(self, program: EvolvedProgram, iteration: int | None = None, **kwargs) -> str:
        if iteration == 0 or program.iteration_found == 0:
            self.initial_program = program
        self.programs[program.id] = program
        if iteration is not None:
            self.last_iteration = max(self.last_iteration, iteration)
        self._update_best_program(program)
        return program.id

    def sample(
        self, num_context_programs: int | None = 4, **kwargs
    ) -> tuple[dict[str, EvolvedProgram], dict[str, list[EvolvedProgram]]]:
        pool = list(self.programs.values())
        if not pool:
            raise ValueError("No candidates available for sampling: the database is empty")
        wanted = num_context_programs or 0
        parent = random.choice(pool)
        drawn = random.sample(pool, min(wanted + 1, len(pool)))
        context = [p for p in drawn if p.id != parent.id][:wanted]
        return {"": parent}, {"": context}


# EVOLVE-BLOCK-END
