"""``adaevolve``: G-signal intensity, UCB islands, paradigm breakthroughs (SkyDiscover AdaEvolve).

The composition is ``config.yaml``; this package adds AdaEvolve's blocks: the
``adaevolve_archipelago`` population (per-island quality-diversity archives), the
``adaevolve_adaptive`` selection (G intensity, modes, UCB, migration, spawning; it takes the
paradigm memory when the composition has it), the ``adaevolve_paradigms`` memory (stagnation
window, guide-model ideas) and the ``adaevolve`` prompt (search guidance, EXPLORE/EXPLOIT
labels; island siblings over the archipelago).  Sequential, as the reference.
"""

from __future__ import annotations

from scaffolds.adaevolve.memory import ParadigmMemory
from scaffolds.adaevolve.policy import AdaEvolvePolicy
from scaffolds.adaevolve.population import AdaEvolveArchipelago
from scaffolds.adaevolve.prompt import AdaEvolvePromptBuilder

__all__ = ["BLOCKS"]

BLOCKS = (AdaEvolveArchipelago, AdaEvolvePolicy, ParadigmMemory, AdaEvolvePromptBuilder)
