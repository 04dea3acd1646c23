"""``openevolve_template`` in both of OpenEvolve's modes, and with a folder's own templates:
full rewrites ask for a whole program (no SEARCH/REPLACE instructions, the current program
last), so a folder shipped with ``diff_based_evolution: false`` runs and admits children;
``prompt.template_dir`` templates and ``fragments.json`` replace ours; template variations
are drawn; a template OpenEvolve could not fill is refused when the block is built."""

from __future__ import annotations

import json
import random
import shutil
import textwrap
from pathlib import Path

import pytest

from harness.core.errors import ConfigError
from harness.core.prompt import PromptContext
from harness.core.records import Program, Selection, TaskInfo
from harness.core.registry import BuildEnv, build_scaffold, load_config
from harness.evaluation.folder_config import read_folder_config
from scaffolds.openevolve.population import MapElitesIslandsConfig, MapElitesIslandsPopulation
from scaffolds.openevolve.prompt import OpenEvolvePromptBuilder, OpenEvolvePromptConfig
from tests.cli.helpers import galapagos
from tests.fakes import ScoreEvaluator

FIXTURE = Path(__file__).with_name("fixtures") / "function_minimization"
SEED = "# EVOLVE-BLOCK-START\nX = 0.5\nY = 2\n# EVOLVE-BLOCK-END\n"


def population() -> tuple[MapElitesIslandsPopulation, Program]:
    pop = MapElitesIslandsPopulation(MapElitesIslandsConfig(), random.Random(0))
    for i in range(4):
        code = SEED.replace("0.5", f"0.{i + 1}") + "#" * i
        pop.add(
            Program(
                id=f"p{i}",
                code=code,
                iteration=i,
                metrics={"combined_score": i / 10},
                score=i / 10,
                metadata={"island": 0},
                artifacts={"stdout": "ran fine"},
            )
        )
    best = pop.best()
    assert best is not None
    return pop, best


def build(config: OpenEvolvePromptConfig, *, diff_mode: bool) -> str:
    pop, parent = population()
    builder = OpenEvolvePromptBuilder(config, pop, diff_mode=diff_mode)
    prompt = builder.build(
        Selection(parent=parent, inspirations=tuple(pop.programs()[:1])),
        PromptContext(iteration=3),
    )
    assert prompt.kind == ("diff" if diff_mode else "rewrite")
    return prompt.user


def test_the_full_rewrite_prompt_asks_for_a_whole_program_with_the_parent_last() -> None:
    rewrite = build(OpenEvolvePromptConfig(), diff_mode=False)
    diff = build(OpenEvolvePromptConfig(), diff_mode=True)
    assert "<<<<<<< SEARCH" not in rewrite and "<<<<<<< SEARCH" in diff
    assert "complete new program" in rewrite
    # The same information sections in both modes.
    for section in ("- Fitness:", "## Last Execution Output", "## Previous Attempts",
                    "## Top Performing Programs"):  # fmt: skip
        assert section in rewrite and section in diff
    assert rewrite.rstrip().endswith("```") and "X = 0.4" in rewrite.rsplit("```python", 1)[1]


def test_a_folders_templates_and_fragments_replace_ours() -> None:
    config = OpenEvolvePromptConfig(
        templates={
            "full_rewrite_user": "MINE {fitness_score}\n{evolution_history}\n"
            "```{language}\n{current_program}\n```\n{tone}",
            "top_program": "TOP {program_number}: {score}",
        },
        fragments={"fitness_improved": "UP {prev:.1f}->{current:.1f}"},
        template_variations={"tone": ["Be bold.", "Be careful."]},
    )
    user = build(config, diff_mode=False)
    assert user.startswith("MINE 0.3000")
    assert "TOP 1: 0.3000" in user
    assert user.rstrip().endswith(("Be bold.", "Be careful."))
    # Without stochasticity {tone} is a field nothing fills: OpenEvolve would fail at the first
    # prompt; here the block refuses to build.
    pop, _ = population()
    off = config.model_copy(update={"use_template_stochasticity": False})
    with pytest.raises(ConfigError, match=r"uses \{tone\}"):
        OpenEvolvePromptBuilder(off, pop, diff_mode=False)


@pytest.mark.parametrize(
    ("templates", "fragments", "expected"),
    [
        ({"diff_user": "{current_program} {secret}"}, {}, "uses {secret}"),
        ({"diff_user": "{current_program.__class__}"}, {}, "plain names"),
        ({"diff_user": "{current_program"}, {}, "not a valid template"),
        ({}, {"fitness_improved": "{nope}"}, "fragment 'fitness_improved' uses {nope}"),
    ],
)
def test_a_template_openevolve_could_not_fill_is_refused_when_built(
    templates: dict[str, str], fragments: dict[str, str], expected: str
) -> None:
    pop, _ = population()
    with pytest.raises(ConfigError, match=expected.replace("{", r"\{").replace("}", r"\}")):
        OpenEvolvePromptBuilder(
            OpenEvolvePromptConfig(templates=templates, fragments=fragments), pop
        )


def test_a_template_dir_reaches_the_prompt_block(tmp_path: Path) -> None:
    folder = tmp_path / "oe"
    shutil.copytree(FIXTURE, folder)
    (folder / "templates").mkdir()
    (folder / "templates" / "diff_user.txt").write_text(
        "FOLDER TEMPLATE {fitness_score}\n```{language}\n{current_program}\n```\n"
        "<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n"
    )
    (folder / "templates" / "fragments.json").write_text(json.dumps({"artifact_title": "OUT"}))
    config_path = folder / "config.yaml"
    config_path.write_text(config_path.read_text() + "\nprompt:\n  template_dir: templates\n")
    folder_config = read_folder_config(config_path)
    layer = {"population": "map_elites_islands"}
    defaults = folder_config.defaults_for(layer)
    assert defaults["prompt.templates"] == {
        "diff_user": (folder / "templates" / "diff_user.txt").read_text()
    }
    assert defaults["prompt.fragments"] == {"artifact_title": "OUT"}
    spec, run_config = load_config(
        "openevolve",
        task_layer=(str(config_path), {"prompt": {"templates": defaults["prompt.templates"]}}),
    )
    scaffold = build_scaffold(spec, run_config, BuildEnv(seed=0, evaluator=ScoreEvaluator()))
    assert isinstance(scaffold.prompt_builder, OpenEvolvePromptBuilder)
    assert scaffold.prompt_builder.texts.templates["diff_user"].startswith("FOLDER TEMPLATE")


@pytest.mark.slow
def test_a_full_rewrite_folder_runs_and_admits_children(tmp_path: Path) -> None:
    """OpenEvolve's circle_packing ships ``diff_based_evolution: false``: every iteration was
    rejected when the prompt asked for diffs.  The offline model answers the prompt's kind."""
    folder = tmp_path / "oe"
    shutil.copytree(FIXTURE, folder)
    config = folder / "config.yaml"
    config.write_text(config.read_text() + "\ndiff_based_evolution: false\n")
    store = tmp_path / "s.sqlite"
    done = galapagos(
        "run", "--task", str(folder), "-i", "4", "--sandbox", "local", "--offline",
        "--store", str(store), "--json", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["scaffold"] == "openevolve" and summary["iterations_done"] == 4
    assert summary["iterations_failed"] == 0, summary["failure_reasons"]
    assert "diff_based_evolution → proposer.diff_based" in done.stderr
    assert "--offline: the offline model (not an LLM) answers" in done.stderr


def test_offline_refuses_an_endpoint_given_with_it(tmp_path: Path) -> None:
    done = galapagos(
        "run", "--task", str(FIXTURE), "-i", "1", "--offline", "--api-base",
        "http://127.0.0.1:9/v1", "--model", "m", timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--offline runs the offline model: drop --api-base and --model" in done.stderr


def test_folder_endpoint_without_offline_is_used_and_offline_replaces_it(tmp_path: Path) -> None:
    from harness.runs import plan_run

    folder = tmp_path / "oe"
    shutil.copytree(FIXTURE, folder)
    config = folder / "config.yaml"
    config.write_text(
        config.read_text()
        + textwrap.dedent(
            """
            llm:
              api_base: https://api.example.invalid/v1
              primary_model: some-hosted-model
            """
        )
    )
    online = plan_run(scaffold=None, task=str(folder), iterations=1, sandbox="local")
    assert online.config.llm.provider == "openai"
    assert online.config.llm.api_base == "https://api.example.invalid/v1"
    offline = plan_run(scaffold=None, task=str(folder), iterations=1, sandbox="local", offline=True)
    assert offline.config.llm.provider == "offline" and offline.config.llm.api_base is None
    note = next(n for n in offline.notes if n.startswith("offline:"))
    assert "https://api.example.invalid/v1" in note and "some-hosted-model" in note


def test_remembered_sections_give_the_prompts_a_fresh_builder_gives() -> None:
    """The builder keeps each program's rendered section (top, diverse, inspiration, previous
    attempt) for the next prompt that shows it: prompt after prompt over a growing population
    (a program shown again, with a new number, as a migrant, after the kept sections were
    dropped when full) equals what a builder that never saw a prompt before renders."""
    from scaffolds.openevolve import prompt as prompt_module
    from scaffolds.openevolve.selection import ThreeTierConfig, ThreeTierPolicy

    rng = random.Random(4)
    pop = MapElitesIslandsPopulation(MapElitesIslandsConfig(num_islands=2), random.Random(1))
    policy = ThreeTierPolicy(random.Random(2), ThreeTierConfig(), pop)
    kept = OpenEvolvePromptBuilder(OpenEvolvePromptConfig(), pop, context=policy)
    hits = 0
    for i in range(120):
        code = f"{SEED}# {'x' * rng.randint(0, 40)}\nfor k in range({i}):\n    pass\n"
        score = rng.random()
        meta = {"island": i % 2, "migrant": i % 9 == 0, "parent_metrics": {"combined_score": 0.4}}
        pop.add(
            Program(
                id=f"p{i}",
                code=code,
                iteration=i,
                metrics={"combined_score": score},
                score=score,
                changes=rng.choice(["", "tightened the loop"]),
                metadata=meta,
            )
        )
        selection = policy._select(i + 1, i % 2)  # noqa: SLF001
        task = TaskInfo(language=rng.choice(["python", "rust"]))
        context = PromptContext(iteration=i + 1, task=task)
        before = len(kept._sections)  # noqa: SLF001
        fresh = OpenEvolvePromptBuilder(OpenEvolvePromptConfig(), pop, context=policy)
        assert kept.build(selection, context).user == fresh.build(selection, context).user
        hits += len(kept._sections) - before < 8  # noqa: SLF001 - some sections came back
        if i == 80:  # dropped when full: rendered again
            prompt_module.SECTIONS_KEPT, limit = 1, prompt_module.SECTIONS_KEPT
            try:
                assert kept.build(selection, context).user == fresh.build(selection, context).user
            finally:
                prompt_module.SECTIONS_KEPT = limit
    assert hits > 50
