"""The whole-run differential cases (standard library only: the golden recorder imports it
too): the task fixture, and per case the scaffold and the config written into the folder's
``config.yaml`` in the reference's own format (Galapagos reads the same file)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "differential" / "constants"
ITERATIONS = 20
MODEL = "fake-deterministic"

_SKYDISCOVER = """\
max_iterations: {iterations}
random_seed: 42
diff_based_generation: true
llm:
  api_base: {url}
  models: [{{name: {model}, api_base: {url}}}]
search:
  type: {search}
  num_inspirations: 3
  database: {{random_seed: 42{database}}}
evaluator:
  cascade_evaluation: false
  timeout: 60
"""
#: A small population, archive and migration interval, so that twenty iterations migrate,
#: evict, replace archive members and draw diverse programs.
_OPENEVOLVE = """\
max_iterations: {iterations}
random_seed: 42
diff_based_evolution: {diff}
llm:
  api_base: {url}
  models: [{{name: {model}, weight: 1.0}}]
prompt:
  num_top_programs: 2
  num_diverse_programs: 2
database:
  num_islands: 3
  population_size: 12
  archive_size: 6
  migration_interval: 2
evaluator:
  cascade_evaluation: false
  timeout: 60
  parallel_evaluations: 1
"""
#: HEAD's format (``num_context_programs``; its top-level random_seed is not read).
_ADAEVOLVE_HEAD = """\
max_iterations: {iterations}
diff_based_generation: true
llm:
  api_base: {url}
  models: [{{name: {model}, api_base: {url}}}]
search:
  type: adaevolve
  num_context_programs: 4
  database: {{use_paradigm_breakthrough: false}}
evaluator:
  cascade_evaluation: false
  timeout: 60
"""


@dataclass(frozen=True)
class Case:
    """One comparison: the scaffold, the config template and what Galapagos adds to it."""

    name: str
    scaffold: str
    template: str
    fields: dict[str, str] = field(default_factory=dict)
    #: ``--set`` items of Galapagos' run besides reference mode.
    settings: tuple[str, ...] = ()
    #: Whether the endpoint sends diffs whose SEARCH part is missing (see ``adaevolve``).
    unmatched: bool = True

    def config(self, url: str, iterations: int = ITERATIONS) -> str:
        return self.template.format(url=url, model=MODEL, iterations=iterations, **self.fields)


#: SkyDiscover's controller makes three attempts per iteration (``retry_times=3``); the
#: greedy scaffolds' card default is one (README), so the comparison sets three.
RETRIES = ("general.inner_retry_times=3",)
CASES = {
    "topk": Case("topk", "topk", _SKYDISCOVER, {"search": "topk", "database": ""}, RETRIES),
    "best_of_n": Case(
        "best_of_n",
        "best_of_n",
        _SKYDISCOVER,
        {"search": "best_of_n", "database": ", best_of_n: 3"},
        RETRIES,
    ),
    "openevolve_diff": Case("openevolve_diff", "openevolve", _OPENEVOLVE, {"diff": "true"}),
    "openevolve_rewrite": Case("openevolve_rewrite", "openevolve", _OPENEVOLVE, {"diff": "false"}),
    # HEAD evaluates a child whose SEARCH parts all missed (it equals its parent); the card's
    # proposer rejects it (README, "Differences"): such answers are left out of this case.
    # HEAD's config has no seed: the recorded run seeds ``random`` with 42.
    "adaevolve": Case("adaevolve", "adaevolve", _ADAEVOLVE_HEAD, {}, ("seed=42",), False),
}


def fixture_files() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(FIXTURE.iterdir()) if p.is_file()}


def endpoint_source() -> str:
    """The endpoint's source: changing how it answers changes every recorded trace."""
    return Path(__file__).with_name("fake_endpoint.py").read_text()
