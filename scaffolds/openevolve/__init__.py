"""``openevolve``: island MAP-Elites with three-tier parent sampling (OpenEvolve 0.4.0 port).

The composition is ``config.yaml``; this package adds the ``map_elites_islands`` population,
the ``three_tier_explore_exploit`` selection policy and the ``openevolve_template`` prompt.
"""

from __future__ import annotations

from scaffolds.openevolve.population import MapElitesIslandsPopulation
from scaffolds.openevolve.prompt import openevolve_template
from scaffolds.openevolve.selection import three_tier

__all__ = ["BLOCKS"]

BLOCKS = (MapElitesIslandsPopulation, three_tier, openevolve_template)
