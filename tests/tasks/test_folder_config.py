"""A compat folder's own config file read as OpenEvolve and SkyDiscover read it (key names from
their config classes, openevolve 0.4.0 and skydiscover 0.1.0), sorted into task keys, search
defaults and keys named as not used; bad files are one-line errors with file, line and column.
The end-to-end runs are in ``tests/cli/test_folder_config.py``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.core.errors import TaskError
from harness.evaluation.folder_config import read_folder_config
from harness.evaluation.task import load_task

EVALUATOR = '''"""Three cascade stages and a plain evaluate()."""


def evaluate_stage1(program_path):
    return {"combined_score": 0.6}


def evaluate_stage2(program_path):
    return {"combined_score": 0.8}


def evaluate_stage3(program_path):
    return {"combined_score": 0.9}


def evaluate(program_path):
    return {"combined_score": 0.9}
'''


def folder(tmp_path: Path, config: str, *, seed: str = "initial_program.py") -> Path:
    path = tmp_path / "task"
    path.mkdir(parents=True)
    (path / "evaluator.py").write_text(EVALUATOR)
    (path / seed).write_text("def solve():\n    return 1\n")
    (path / "config.yaml").write_text(textwrap.dedent(config))
    return path


def read(tmp_path: Path, config: str) -> object:
    return read_folder_config(folder(tmp_path, config) / "config.yaml")


def test_openevolve_primary_and_secondary_models_become_the_ensemble(tmp_path: Path) -> None:
    config = read(
        tmp_path,
        """\
        max_iterations: 7
        llm:
          primary_model: model-a
          primary_model_weight: 0.8
          secondary_model: model-b
          api_base: http://127.0.0.1:9/v1
          temperature: 0.4
          max_tokens: 900
          reasoning_effort: low
          system_message: "OpenEvolve never sends the llm section's system message"
        database:
          num_islands: 3
        """,
    )
    assert config.format == "openevolve"
    assert config.search["llm.models"] == [
        {"name": "model-a", "weight": 0.8, "temperature": 0.4, "max_tokens": 900,
         "extra_body": {"reasoning_effort": "low"}},
        {"name": "model-b", "weight": 0.2, "temperature": 0.4, "max_tokens": 900,
         "extra_body": {"reasoning_effort": "low"}},
    ]  # fmt: skip
    assert config.search["llm.api_base"] == "http://127.0.0.1:9/v1"
    assert config.shown("llm.models") == "llm.primary_model/llm.secondary_model → llm.models"
    assert config.system_message is None  # prompt.system_message unset: the generic one
    assert set(config.ignored) == {"llm.system_message"}
    assert config.method_search == {"population.num_islands": 3}


def test_a_model_entrys_keys_without_an_equivalent_are_named(tmp_path: Path) -> None:
    config = read(
        tmp_path,
        """\
        diff_based_generation: false
        llm:
          models:
            - {name: m1, weight: 2, api_key: "${NOT_A_SECRET}", retry_delay: 3}
          guide_models:
            - {name: g1}
        """,
    )
    assert config.format == "skydiscover"
    assert config.search["llm.models"] == [{"name": "m1", "weight": 2}]
    assert config.search["llm.guide_models"] == [{"name": "g1"}]
    assert config.search["proposer.diff_based"] is False
    assert set(config.ignored) == {"llm.models[0].api_key", "llm.models[0].retry_delay"}


def test_a_system_message_naming_a_template_is_that_template(tmp_path: Path) -> None:
    path = folder(
        tmp_path,
        """\
        database: {}
        prompt:
          template_dir: prompts
        """,
    )
    (path / "prompts").mkdir()
    (path / "prompts" / "system_message.txt").write_text("TEMPLATE-SYSTEM-5521")
    (path / "prompts" / "diff_user.txt").write_text("{metrics}")
    config = read_folder_config(path / "config.yaml")
    assert config.system_message == "TEMPLATE-SYSTEM-5521"
    assert config.task_keys == ["prompt.template_dir/system_message.txt"]
    assert config.ignored == []  # the folder's diff template replaces the prompt's own
    assert config.method_search == {"prompt.templates": {"diff_user": "{metrics}"}}


def test_the_formats_own_template_name_means_the_generic_message(tmp_path: Path) -> None:
    config = read(tmp_path, "database: {}\nprompt:\n  system_message: system_message\n")
    assert config.system_message is None and "prompt.system_message" not in config.ignored


def test_skydiscover_reads_a_system_message_file_only_inside_the_folder(tmp_path: Path) -> None:
    path = folder(tmp_path, "search: {}\nprompt:\n  system_message: notes/system.txt\n")
    (path / "notes").mkdir()
    (path / "notes" / "system.txt").write_text("FILE-SYSTEM-3307")
    assert read_folder_config(path / "config.yaml").system_message == "FILE-SYSTEM-3307"
    (tmp_path / "secret.txt").write_text("not for a model")
    (path / "config.yaml").write_text("search: {}\nprompt:\n  system_message: ../secret.txt\n")
    with pytest.raises(TaskError, match=r"outside the task folder"):
        read_folder_config(path / "config.yaml")
    (path / "config.yaml").write_text("search: {}\nprompt:\n  system_message: missing.txt\n")
    with pytest.raises(TaskError, match=r"line 3, column 19: .*'missing.txt', which is not in"):
        read_folder_config(path / "config.yaml")


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        ("database: {}\nevaluator:\n  timeout: sixty\n", "line 3, column 12",
         "evaluator.timeout: expected a positive number, got 'sixty'"),
        ("search: {}\nevaluator:\n  cascade_thresholds: [0.5, high]\n", "line 3, column 29",
         "evaluator.cascade_thresholds[1]: expected a number"),
        ("search: {}\nevaluator:\n  cascade_evaluation: maybe\n", "line 3, column 23",
         "expected true or false"),
        ("max_iterations: 3\ncheckpoints: 2\n", "line 2, column 1",
         "not an OpenEvolve or SkyDiscover config (unknown top-level key(s): checkpoints)"),
        ("diff_based_evolution: true\nsearch:\n  type: topk\n", "line 2, column 1",
         "a SkyDiscover key in a file with OpenEvolve keys"),
        ("llm:\n  models:\n    - gpt-4\n", "line 3, column 7", "expected a model with a name"),
        ("evaluator:\n  timeout: [1\n", "line 3, column 1", "malformed YAML in"),
    ],
)  # fmt: skip
def test_a_bad_file_is_one_error_with_line_and_column(
    tmp_path: Path, text: str, where: str, expected: str
) -> None:
    path = folder(tmp_path, text) / "config.yaml"
    with pytest.raises(TaskError) as info:
        read_folder_config(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    assert where in message and expected in message, message


def test_task_keys_reach_the_card_and_the_formats_defaults_fill_the_rest(tmp_path: Path) -> None:
    oe = load_task(
        folder(
            tmp_path / "a",
            """\
            database: {}
            evaluator:
              timeout: 7200
              memory_limit_mb: 2048
              cpu_limit: 2
              cascade_thresholds: [0.7]
            """,
        )
    )
    assert oe.card.limits.wall_s == 3600  # said in a note, never dropped
    assert oe.folder_config is not None
    assert oe.folder_config.notes == [
        "evaluator.timeout 7200 is outside the sandbox's range: 3600 applies"
    ]
    assert (oe.card.limits.memory_mb, oe.card.limits.cpus) == (2048, 2.0)
    # One threshold: OpenEvolve runs two stages (its third needs a second threshold).
    assert [(s.function, s.threshold) for s in oe.card.cascade] == [
        ("evaluate_stage1", 0.7),
        ("evaluate_stage2", None),
    ]
    sd = load_task(folder(tmp_path / "b", "search: {}\n"))
    assert sd.card.limits.wall_s == 360  # SkyDiscover's default timeout
    # SkyDiscover runs two stages with its default first threshold.
    assert [(s.function, s.threshold) for s in sd.card.cascade] == [
        ("evaluate_stage1", 0.3),
        ("evaluate_stage2", None),
    ]
    off = load_task(
        folder(tmp_path / "c", "database: {}\nevaluator:\n  cascade_evaluation: false\n")
    )
    assert off.card.cascade == () and off.card.limits.wall_s == 300  # OpenEvolve's default


def test_the_file_suffix_names_the_seed_the_candidate_and_the_language(tmp_path: Path) -> None:
    from harness.evaluation.driver import TaskEvaluator

    path = folder(tmp_path, "database: {}\nfile_suffix: .rs\n", seed="initial_program.rs")
    task = load_task(path)
    assert task.card.initial_program == "initial_program.rs" and task.card.language == "rust"
    assert TaskEvaluator(task, backend=None).candidate_filename == "program.rs"  # type: ignore[arg-type]


def test_the_task_layer_carries_the_system_message_and_the_search_defaults(
    tmp_path: Path,
) -> None:
    path = folder(
        tmp_path,
        """\
        max_iterations: 4
        random_seed: null
        diff_based_evolution: false
        prompt:
          system_message: "LAYER-FIXTURE-118"
        """,
    )
    layer = load_task(path).config_layer()
    assert layer is not None and layer.kind == "task"
    assert layer.name == str(path / "config.yaml")
    assert layer.where("general.max_iterations") == f"{path / 'config.yaml'}:1"
    assert layer.where("prompt.system_message") == f"{path / 'config.yaml'}:5"
    assert layer.data == {
        "prompt": {"system_message": "LAYER-FIXTURE-118"},
        "general": {"max_iterations": 4},
        "proposer": {"diff_based": False},
    }  # a null seed is the format's default: not a value to pass on
    native = load_task("function_minimization")
    layer = native.config_layer()
    assert layer is not None and layer.name.endswith("function_minimization/task.yaml")
    assert layer.data == {"prompt": {"system_message": native.card.system_message}}


def test_a_long_one_line_system_message_is_text_not_a_file_name(tmp_path: Path) -> None:
    text = "Literal guidance without a file behind it. " * 10  # one line, under 500 chars
    config = read(tmp_path, f"search: {{}}\nprompt:\n  system_message: '{text}'\n")
    assert config.system_message == text


def test_a_system_message_the_prompt_block_cannot_take_is_named(tmp_path: Path) -> None:
    """A prompt block without ``system_message`` (the bare section of a composition whose
    block takes no options) gets a note, for a native card as for a folder's file."""
    from harness.core.config import Composition, RunConfig
    from harness.core.config_layers import Layers
    from harness.evaluation.task_notes import task_notes

    blocks = Composition(population="p", selection_policy="s", prompt="bare", proposer="d")
    config = RunConfig(scaffold="x", blocks=blocks)
    native = load_task("function_minimization")
    assert task_notes(native, config, Layers()) == [
        f"{native.path / 'task.yaml'}: not used here: system_message (the bare prompt block "
        "takes none)"
    ]
    compat = load_task(folder(tmp_path, "max_iterations: 3\nprompt:\n  system_message: HI\n"))
    notes = task_notes(compat, config, Layers())
    assert notes[-1] == (
        "config.yaml: prompt.system_message — not used here: this composition's blocks have no "
        "such setting"
    )
    assert "applies: max_iterations → general.max_iterations" in notes[0]
    assert "prompt.system_message" not in notes[0]
