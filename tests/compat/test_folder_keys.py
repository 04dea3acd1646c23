"""Every key of a peer's config file is applied, named with its reason, or refused with the
file, line and why (``harness.evaluation._folder_keys``); a folder's method keys reach a run on
that method's blocks only."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.core.errors import TaskError
from harness.evaluation.folder_config import FolderConfig, read_folder_config
from harness.evaluation.task import load_task
from harness.runs import plan_run

EVALUATOR = "def evaluate(program_path):\n    return {'combined_score': 1.0}\n"
OE_BLOCKS = {"population": "map_elites_islands", "selection_policy": "three_tier_explore_exploit"}
ADA_BLOCKS = {"population": "adaevolve_archipelago", "selection_policy": "adaevolve_adaptive"}


def folder(tmp_path: Path, config: str) -> Path:
    path = tmp_path / "task"
    path.mkdir(parents=True, exist_ok=True)
    (path / "evaluator.py").write_text(EVALUATOR)
    (path / "initial_program.py").write_text("# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\n")
    (path / "config.yaml").write_text(textwrap.dedent(config))
    return path


def read(tmp_path: Path, config: str) -> FolderConfig:
    return read_folder_config(folder(tmp_path, config) / "config.yaml")


def test_openevolve_database_and_prompt_keys_are_the_openevolve_methods(tmp_path: Path) -> None:
    config = read(
        tmp_path,
        """\
        database:
          num_islands: 3
          population_size: 50
          feature_dimensions: [score, complexity]
          feature_bins: {score: 5, complexity: 8}
          exploration_ratio: 0.3
          migration_interval: 7
          db_path: /tmp/x
        prompt:
          num_top_programs: 4
          num_diverse_programs: 3
          include_artifacts: false
          template_variations: {greeting: [hi, hello]}
        evaluator:
          parallel_evaluations: 2
        """,
    )
    assert config.method == config.scaffold == "openevolve"
    assert config.method_search == {
        "population.num_islands": 3,
        "population.population_size": 50,
        "population.feature_dimensions": ["score", "complexity"],
        "population.feature_bins": {"score": 5, "complexity": 8},
        "population.migration_interval": 7,
        "selection_policy.exploration_ratio": 0.3,
        # 0.4.0 sizes the inspirations by num_diverse_programs (openevolve#452)
        "prompt.num_top_programs": 4,
        "prompt.num_diverse_programs": 3,
        "selection_policy.num_inspirations": 3,
        "prompt.include_artifacts": False,
        "prompt.template_variations": {"greeting": ["hi", "hello"]},
        "selection_policy.workers": 2,
    }
    assert config.ignored == ["database.db_path"]
    assert config.defaults_for(OE_BLOCKS)["population.num_islands"] == 3
    # adaevolve has a population.num_islands of its own meaning: never forwarded there.
    assert "population.num_islands" not in config.defaults_for(ADA_BLOCKS)
    named = config.unused_for(ADA_BLOCKS)
    (reason,) = [r for r in named if r.startswith("openevolve's settings")]
    assert "database.num_islands" in named[reason]


def test_every_key_of_a_runnable_openevolve_folder_reaches_a_valid_run(tmp_path: Path) -> None:
    path = folder(
        tmp_path,
        """\
        database: {num_islands: 3, archive_size: 20, elite_selection_ratio: 0.2}
        prompt: {num_diverse_programs: 1, use_template_stochasticity: false}
        evaluator: {parallel_evaluations: 3, enable_artifacts: false}
        """,
    )
    plan = plan_run(scaffold=None, task=str(path), iterations=1, sandbox="local")
    config = plan.config
    assert config.scaffold == "openevolve"  # the folder's method, without --scaffold
    assert config.population.num_islands == 3  # type: ignore[attr-defined]
    assert config.selection_policy.workers == 3  # type: ignore[attr-defined]
    assert config.selection_policy.num_inspirations == 1  # type: ignore[attr-defined]
    assert config.prompt.num_top_programs == 3  # type: ignore[attr-defined]  # OE's default
    assert config.prompt.include_artifacts is False  # type: ignore[attr-defined]
    assert any("scaffold: openevolve, the method" in n for n in plan.notes)


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("database:\n  embedding_model: text-embedding-3-small\n", "database.embedding_model",
         "novelty filter is not supported"),
        ("database: {}\nenforce_evolve_blocks: true\n", "enforce_evolve_blocks", "EVOLVE-BLOCK"),
        ("database: {}\nearly_stopping_patience: 10\nmax_iterations: 100\n",
         "early_stopping_patience", "no early stopping"),
        ("database: {}\nevaluator:\n  use_llm_feedback: true\n", "evaluator.use_llm_feedback",
         "grade candidates"),
        ("database: {}\nprompt:\n  programs_as_changes_description: true\n",
         "prompt.programs_as_changes_description", "changes description"),
        ("search:\n  type: adaevolve\n  database:\n    pareto_objectives: [a, b]\n",
         "search.database.pareto_objectives", "Pareto"),
        ("search:\n  type: evox\n  database:\n    database_file_path: mine.py\n",
         "search.database.database_file_path", "initial search strategy"),
        ("search: {}\nagentic:\n  enabled: true\n", "agentic.enabled", "agentic"),
        ("llm:\n  models:\n    - {name: a, api_base: 'http://x/v1'}\n    - {name: b, api_base: "
         "'http://y/v1'}\nsearch: {}\n", "llm.models[0].api_base", "different endpoints"),
    ],
)  # fmt: skip
def test_a_key_that_cannot_be_honoured_is_one_line_naming_file_and_line(
    tmp_path: Path, text: str, key: str, expected: str
) -> None:
    with pytest.raises(TaskError) as refused:
        read(tmp_path, text)
    message = str(refused.value)
    assert "\n" not in message and expected in message and key in message
    assert "config.yaml at line " in message


def test_harmless_values_of_those_keys_and_what_the_reference_ignores_are_named(
    tmp_path: Path,
) -> None:
    config = read(
        tmp_path,
        """\
        max_iterations: 50
        early_stopping_patience: 100   # cannot trigger within 50 iterations
        enforce_evolve_blocks: false
        checkpoint_interval: 5
        database: {embedding_model: null}
        novelty: {enabled: true}       # not an OpenEvolve 0.4 key: OpenEvolve ignores it too
        llm: {api_key: "${KEY}", system_message: "never sent"}
        """,
    )
    reasons = {key: reason for reason, keys in config.unused.items() for key in keys}
    assert "cannot trigger within the file's 50 iterations" in reasons["early_stopping_patience"]
    assert reasons["enforce_evolve_blocks"] == reasons["database.embedding_model"]
    assert reasons["checkpoint_interval"].startswith("logging and storage")
    assert reasons["novelty.enabled"].startswith("not OpenEvolve 0.4 keys")
    assert reasons["llm.api_key"].startswith("secrets")
    assert "never sends" in reasons["llm.system_message"]


def test_skydiscover_search_keys_go_to_the_search_they_name(tmp_path: Path) -> None:
    best = read(tmp_path / "b", "search:\n  type: best_of_n\n  num_context_programs: 2\n"
                "  database: {best_of_n: 7, random_seed: 3}\n")  # fmt: skip
    assert best.method == "best_of_n"
    assert best.method_search == {
        "selection_policy.num_inspirations": 2,
        "selection_policy.best_of_n": 7,
    }
    assert best.search["seed"] == 3
    ada = read(
        tmp_path / "a",
        """\
        search:
          type: adaevolve
          num_inspirations: 5             # the 0.1.0 name
          database:
            num_islands: 4
            decay: 0.8
            local_inspiration_ratio: 0.5  # 0.1.0's name of local_context_program_ratio
            use_paradigm_breakthrough: false
            max_error_retries: 1
            stagnation_threshold: 3       # AdaEvolve never reads it
        """,
    )
    assert ada.method_search == {
        "selection_policy.num_inspirations": 5,
        "population.num_islands": 4,
        "selection_policy.decay": 0.8,
        "selection_policy.local_context_program_ratio": 0.5,
        "memory.use_paradigm_breakthrough": False,
    }
    assert ada.search["general.inner_retry_times"] == 2
    assert ada.ignored == ["search.database.stagnation_threshold"]
    evox = read(tmp_path / "e", "search:\n  type: evox\n  switch_interval: 4\n")
    assert evox.method_search == {"memory.switch_interval": 4}
    plain = read(tmp_path / "t", "max_solution_length: 9000\n")
    assert plain.format == "skydiscover" and plain.method == plain.scaffold == "topk"


def test_one_endpoint_named_on_the_models_is_the_runs(tmp_path: Path) -> None:
    config = read(
        tmp_path,
        "search: {}\nllm:\n  models:\n    - {name: m, api_base: 'http://127.0.0.1:9/v1'}\n",
    )
    assert config.search["llm.api_base"] == "http://127.0.0.1:9/v1"
    assert config.shown("llm.api_base") == "llm.models[0].api_base → llm.api_base"
    assert config.ignored == []


def test_a_search_without_a_scaffold_needs_one_named(tmp_path: Path) -> None:
    path = folder(tmp_path, "search:\n  type: beam_search\n  database: {beam_width: 3}\n")
    assert load_task(path).folder_config.scaffold is None  # type: ignore[union-attr]
    with pytest.raises(Exception, match="beam_search has no Galapagos scaffold"):
        plan_run(scaffold=None, task=str(path), iterations=1)
    plan = plan_run(scaffold="topk", task=str(path), iterations=1, sandbox="local")
    assert any("search.database.beam_width" in n for n in plan.notes)
