"""Every key of OpenEvolve 0.4's and SkyDiscover's config files, and what it becomes here.

A key is one of:

- a **search default** for any scaffold (``max_iterations`` → ``general.max_iterations``);
- a **method default**: it applies when the run uses the method the folder was written for (its
  signature block, :data:`METHOD_BLOCKS`), e.g. OpenEvolve's ``database.num_islands`` →
  ``population.num_islands`` under the ``openevolve`` scaffold — the ``adaevolve`` scaffold has a
  ``population.num_islands`` too, with another meaning, so it is never forwarded there;
- **unused**, with the reason (logging and storage, a key the reference ignores too, a key that
  only matters with a feature the file leaves off): named in a note, never dropped silently;
- **refused**: the reference reads it and it changes what the search does, and Galapagos cannot
  do that — a one-line error naming the file, line and why, before anything runs.

The reader itself (file, line and column, values) is :mod:`harness.evaluation.folder_config`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.evaluation.folder_config import _Reader

__all__ = ["METHOD_BLOCKS", "METHOD_SCAFFOLDS", "read_openevolve_keys", "read_skydiscover_keys"]

#: The block that identifies each method's composition: a method's keys apply to a run whose
#: composition has this block in this slot (``--scaffold openevolve``, or a composition of
#: one's own built on it).
METHOD_BLOCKS: dict[str, tuple[str, str]] = {
    "openevolve": ("population", "map_elites_islands"),
    "adaevolve": ("population", "adaevolve_archipelago"),
    "topk": ("selection_policy", "top_k"),
    "best_of_n": ("selection_policy", "best_of_n_reuse"),
    "evox": ("selection_policy", "evolved_strategy_sampler"),
}
#: SkyDiscover search types with a Galapagos scaffold (its ``openevolve`` backend runs
#: OpenEvolve itself, which the ``openevolve`` scaffold ports).
METHOD_SCAFFOLDS = {
    "topk": "topk",
    "best_of_n": "best_of_n",
    "adaevolve": "adaevolve",
    "evox": "evox",
    "openevolve": "openevolve",
}

LOGGING = "logging and storage (the run store keeps every prompt, answer and evaluation)"
SECRET = "secrets come from the environment only (llm.api_key_env)"
PROCESS = "process-pool settings (Galapagos runs every candidate in its own container)"
MONITOR = "the live dashboard (galapagos serve shows runs live)"
RETRIES = (
    "evaluator retries (Galapagos evaluates a candidate once: an evaluator that raises is a "
    "failed evaluation)"
)
SERIAL = (
    "parallel evaluations (Galapagos runs one iteration at a time, reproducibly; "
    "--set general.max_parallel_iterations=N overlaps them)"
)
JUDGE_OFF = "LLM feedback and judge settings (the file leaves the feedback off)"


def _false(value: Any) -> bool:
    return value is False or value is None


def _empty(value: Any) -> bool:
    return value in (None, "", [], {})


def read_openevolve_keys(r: _Reader, max_iterations: Any) -> None:
    """OpenEvolve 0.4 (``openevolve/config.py``): what each key does here."""
    r.search("max_iterations", "general.max_iterations")
    r.search("random_seed", "seed")
    r.search("diff_based_evolution", "proposer.diff_based")
    r.search("max_code_length", "proposer.max_solution_length")
    r.unused(["checkpoint_interval", "log_level", "log_dir", "evolution_trace.*"], LOGGING)
    r.unused(["max_tasks_per_child"], PROCESS)
    r.refuse(
        "enforce_evolve_blocks",
        _false,
        "Galapagos does not revert edits made outside the EVOLVE-BLOCK regions; remove the key",
    )
    r.refuse(
        "diff_pattern",
        lambda v: v in (None, r"<<<<<<< SEARCH\n(.*?)=======\n(.*?)>>>>>>> REPLACE"),
        "Galapagos parses the standard SEARCH/REPLACE blocks only; remove the custom pattern",
    )
    _early_stopping(r, max_iterations)
    # llm
    r.search("llm.timeout", "llm.timeout_s")
    r.search("llm.retries", "llm.retries")
    r.search("llm.retry_delay", "llm.retry_backoff_s")
    r.unused(["llm.api_key", "llm.models[*].api_key", "llm.evaluator_models[*].api_key"], SECRET)
    r.unused(["llm.system_message"], "OpenEvolve never sends llm.system_message (prompt.* is sent)")
    r.unused(
        ["llm.random_seed", "llm.models[*].random_seed"],
        "the ensemble's draw seed (Galapagos derives it from the run seed)",
    )
    feedback = r.get("evaluator.use_llm_feedback") is True
    r.refuse(
        "evaluator.use_llm_feedback",
        _false,
        "Galapagos does not ask an LLM to grade candidates; set it to false",
    )
    if not feedback:
        r.unused(
            ["llm.evaluator_models", "prompt.evaluator_system_message",
             "evaluator.llm_feedback_weight"],
            JUDGE_OFF,
        )  # fmt: skip
    r.refuse("llm.manual_mode", _false, "human-answered prompts are not supported; remove it")
    r.unused(
        [
            "llm.provider",
            "llm.models[*].provider",
            "llm.max_budget_usd",
            "llm.max_ai_credits",
            "llm.allow_all_tools",
        ],
        "provider and CLI-agent settings (Galapagos speaks to one OpenAI-compatible endpoint)",
    )
    # prompt
    r.refuse(
        "prompt.programs_as_changes_description",
        _false,
        "Galapagos evolves the program itself, not a changes description; set it to false",
    )
    r.unused(
        ["prompt.system_message_changes_description", "prompt.initial_changes_description"],
        "only with prompt.programs_as_changes_description, which is off",
    )
    r.unused(
        ["prompt.use_meta_prompting", "prompt.meta_prompt_weight"],
        "OpenEvolve 0.4 does not implement meta prompting",
    )
    r.unused(
        ["prompt.diff_summary_max_line_len", "prompt.diff_summary_max_lines"],
        "change summaries are written by Galapagos' diff engine (prompt wording)",
    )
    r.method("prompt.num_top_programs", "prompt.num_top_programs")
    diverse = r.get("prompt.num_diverse_programs")
    if diverse is not None:  # 0.4.0 sizes the inspirations by it too (openevolve#452)
        r.method("prompt.num_diverse_programs", "prompt.num_diverse_programs")
        r.method("prompt.num_diverse_programs", "selection_policy.num_inspirations")
        if r.get("prompt.num_top_programs") is None:
            r.set_method("prompt.num_top_programs", 3, "prompt.num_top_programs (default 3)")
    for key in (
        "use_template_stochasticity",
        "template_variations",
        "include_artifacts",
        "max_artifact_bytes",
        "artifact_security_filter",
        "suggest_simplification_after_chars",
        "include_changes_under_chars",
        "concise_implementation_max_lines",
        "comprehensive_implementation_min_lines",
    ):
        r.method(f"prompt.{key}", f"prompt.{key}")
    if r.get("prompt.suggest_simplification_after_chars") is None:
        r.method("prompt.code_length_threshold", "prompt.suggest_simplification_after_chars")
    else:
        r.unused(["prompt.code_length_threshold"], "prompt.suggest_simplification_after_chars wins")
    # database
    for key in (
        "population_size",
        "archive_size",
        "num_islands",
        "feature_dimensions",
        "feature_bins",
        "migration_interval",
        "migration_rate",
        "diversity_reference_size",
    ):
        r.method(f"database.{key}", f"population.{key}")
    for key in ("elite_selection_ratio", "exploration_ratio", "exploitation_ratio"):
        r.method(f"database.{key}", f"selection_policy.{key}")
    if "random_seed" in r.file.data and r.file.data["random_seed"] is None:
        r.search("database.random_seed", "seed")
    else:
        r.unused(["database.random_seed"], "OpenEvolve replaces it by the top-level random_seed")
    r.unused(
        ["database.diversity_metric"],
        "OpenEvolve 0.4 always uses its structural diversity, whatever it says",
    )
    r.unused(
        [
            "database.db_path",
            "database.in_memory",
            "database.log_prompts",
            "database.artifacts_base_path",
            "database.artifact_size_threshold",
            "database.cleanup_old_artifacts",
            "database.artifact_retention_days",
            "database.max_snapshot_artifacts",
            "evaluator.max_artifact_storage",
        ],
        LOGGING,
    )
    r.refuse(
        "database.embedding_model",
        _empty,
        "the embedding novelty filter is not supported (it needs an embedding endpoint); remove it",
    )
    r.unused(
        ["database.embedding_api_base", "database.similarity_threshold", "database.novelty_llm"],
        "only with database.embedding_model, which is unset",
    )
    # evaluator (timeout, limits and the cascade are task keys)
    r.unused(["evaluator.max_retries"], RETRIES)
    r.method("evaluator.parallel_evaluations", "selection_policy.workers")
    r.unused(["evaluator.distributed"], "OpenEvolve 0.4 does not implement it")
    if r.get("evaluator.enable_artifacts") is False:
        r.method("evaluator.enable_artifacts", "prompt.include_artifacts")
    else:
        r.unused(["evaluator.enable_artifacts"], "on, as here")


def _early_stopping(r: _Reader, max_iterations: Any) -> None:
    patience = r.get("early_stopping_patience")
    followers = ["convergence_threshold", "early_stopping_metric"]
    if patience is None:
        r.unused(["early_stopping_patience", *followers], "early stopping is off")
        return
    limit = max_iterations if isinstance(max_iterations, int) else 10000
    if isinstance(patience, int) and not isinstance(patience, bool) and patience >= limit > 0:
        r.unused(
            ["early_stopping_patience", *followers],
            f"early stopping cannot trigger within the file's {limit} iterations (Galapagos has "
            "none: a longer run goes on to its last iteration)",
        )
        return
    r.refuse(
        "early_stopping_patience",
        lambda v: False,
        "Galapagos has no early stopping, and this one can stop the reference's run early; "
        "remove it or choose another config file with --task-config",
    )


def read_skydiscover_keys(r: _Reader, method: str) -> None:
    """SkyDiscover (0.1.0 and the repository's ``config.py``): what each key does here."""
    r.search("max_iterations", "general.max_iterations")
    r.search("diff_based_generation", "proposer.diff_based")
    r.search("max_solution_length", "proposer.max_solution_length")
    r.search("max_parallel_iterations", "general.max_parallel_iterations")
    seed = "search.database.random_seed" if r.get("search.database.random_seed") is not None else ""
    if seed:
        r.search(seed, "seed")
        r.unused(["random_seed"], "search.database.random_seed wins, as in SkyDiscover 0.1.0")
    else:
        r.search("random_seed", "seed")
    r.unused(["checkpoint_interval", "log_level", "log_dir"], LOGGING)
    r.unused(["monitor.*"], MONITOR)
    r.unused(
        ["human_feedback_enabled", "human_feedback_file", "human_feedback_mode"],
        "human feedback: a file a person edits during the run; Galapagos reads none, so the "
        "search is what it is without a person (use --set prompt.system_message=… instead)",
    )
    r.refuse("agentic.enabled", _false, "agentic generation is not supported; set it to false")
    r.unused(["agentic.*"], "only with agentic.enabled, which is off")
    r.refuse("benchmark.enabled", _false, "benchmark resolvers are not supported; remove it")
    r.unused(["benchmark.*"], "only with benchmark.enabled, which is off")
    # llm
    r.search("llm.timeout", "llm.timeout_s")
    r.search("llm.retries", "llm.retries")
    r.search("llm.retry_delay", "llm.retry_backoff_s")
    r.unused(["llm.api_key", "llm.models[*].api_key", "llm.guide_models[*].api_key"], SECRET)
    r.unused(
        ["llm.system_message"], "SkyDiscover's llm.system_message mirrors prompt.system_message"
    )
    r.unused(
        ["llm.random_seed", "llm.models[*].random_seed"],
        "the ensemble's draw seed (Galapagos derives it from the run seed)",
    )
    judge = r.get("evaluator.llm_as_judge") is True or r.get("evaluator.use_llm_feedback") is True
    r.refuse(
        "evaluator.llm_as_judge", _false, "LLM-as-judge scoring is not supported; set it to false"
    )
    r.refuse(
        "evaluator.use_llm_feedback",
        _false,
        "Galapagos does not ask an LLM to grade candidates; set it to false",
    )
    if not judge:
        r.unused(
            [
                "llm.evaluator_models",
                "prompt.evaluator_system_message",
                "evaluator.llm_feedback_weight",
            ],
            JUDGE_OFF,
        )
    # prompt (the system message is a task key)
    r.refuse(
        "prompt.template",
        lambda v: v in (None, "default", "evox"),
        "only SkyDiscover's default and evox prompt templates exist",
    )
    r.unused(["prompt.template"], "the method's own prompt block renders it")
    r.method_if(method in ("topk", "best_of_n"), "prompt.suggest_simplification_after_chars",
                "prompt.suggest_simplification_after_chars")  # fmt: skip
    r.unused(
        ["prompt.template_variations"],
        "SkyDiscover's default prompt has no variation placeholders",
    )
    # evaluator (timeout and the cascade are task keys)
    r.unused(["evaluator.max_retries"], RETRIES)
    r.unused(["evaluator.parallel_evaluations"], SERIAL)
    r.unused(["evaluator.evaluation_file", "evaluator.file_suffix"], "the folder names them")
    r.refuse("evaluator.is_image_mode", _false, "image generation is not supported")
    # search
    r.use("search.type")  # the method: the default scaffold, and whose keys apply
    r.unused(["search.output_dir", "search.database.db_path", "search.database.log_prompts"],
             LOGGING)  # fmt: skip
    r.unused(["search.share_llm"], "EvoX's meta model shares the run's models here")
    context = "search.num_context_programs"
    if r.get(context) is None:
        context = "search.num_inspirations"  # the 0.1.0 name
    target = "num_context_programs" if method == "evox" else "num_inspirations"
    r.method_if(
        method in ("topk", "best_of_n", "adaevolve", "evox"), context, f"selection_policy.{target}"
    )
    reader = _DATABASE.get(method)
    if reader is not None:
        reader(r)
    # retries per iteration (AdaEvolve's error retry) are read where any scaffold can use them
    retries = r.get("search.database.max_error_retries")
    if retries is not None and r.get("search.database.enable_error_retry") is not False:
        if isinstance(retries, int) and not isinstance(retries, bool):
            retries += 1  # the reference's attempts per iteration: 1 + retries
        r.set_search("general.inner_retry_times", retries, "search.database.max_error_retries")
        r.used.update({"search.database.max_error_retries", "search.database.enable_error_retry"})


def _best_of_n(r: _Reader) -> None:
    r.method("search.database.best_of_n", "selection_policy.best_of_n")


def _evox(r: _Reader) -> None:
    r.method("search.switch_interval", "memory.switch_interval")
    r.method(
        "search.database.auto_generate_variation_operators",
        "memory.auto_generate_variation_operators",
    )
    r.refuse(
        "search.database.database_file_path",
        _empty,
        "a custom initial search strategy is not supported (Galapagos starts from its own "
        "port of the reference's seed strategy); remove it",
    )
    _pareto(r)
    r.unused(["search.database.evaluation_file", "search.database.config_path"],
             "the folder names them")  # fmt: skip


def _pareto(r: _Reader) -> None:
    r.refuse(
        "search.database.pareto_objectives",
        _empty,
        "multi-objective (Pareto) search is not supported; remove it",
    )
    r.refuse(
        "search.database.higher_is_better",
        _empty,
        "per-metric directions are not supported (combined_score is maximised); remove it",
    )
    r.refuse(
        "search.database.fitness_key",
        lambda v: v in (None, "combined_score"),
        "the fitness is combined_score here; remove it",
    )
    r.unused(["search.database.pareto_objectives_weight"], "only with Pareto objectives")


#: AdaEvolve's database keys and the section of our blocks that has each.
_ADAEVOLVE = {
    "population_size": "population",
    "num_islands": "population",
    "k_neighbors": "population",
    "archive_elite_ratio": "population",
    "fitness_weight": "population",
    "novelty_weight": "population",
    "pareto_weight": "population",
    "migration_count": "population",
    "decay": "selection_policy",
    "intensity_min": "selection_policy",
    "intensity_max": "selection_policy",
    "use_adaptive_search": "selection_policy",
    "fixed_intensity": "selection_policy",
    "use_ucb_selection": "selection_policy",
    "use_migration": "selection_policy",
    "migration_interval": "selection_policy",
    "use_dynamic_islands": "selection_policy",
    "max_islands": "selection_policy",
    "spawn_productivity_threshold": "selection_policy",
    "spawn_cooldown_iterations": "selection_policy",
    "local_context_program_ratio": "selection_policy",
    "use_paradigm_breakthrough": "memory",
    "paradigm_window_size": "memory",
    "paradigm_improvement_threshold": "memory",
    "paradigm_max_uses": "memory",
    "paradigm_num_to_generate": "memory",
    "paradigm_max_tried": "memory",
}


def _adaevolve(r: _Reader) -> None:
    for key, section in _ADAEVOLVE.items():
        r.method(f"search.database.{key}", f"{section}.{key}")
    r.method(
        "search.database.local_inspiration_ratio", "selection_policy.local_context_program_ratio"
    )
    r.refuse(
        "search.database.use_unified_archive",
        lambda v: v in (None, True),
        "Galapagos' adaevolve keeps the unified quality-diversity archive; remove it",
    )
    r.refuse(
        "search.database.diversity_strategy",
        lambda v: v in (None, "code"),
        "only the code diversity strategy is ported; remove it",
    )
    r.unused(
        [
            "search.database.stagnation_threshold",
            "search.database.stagnation_multi_child_count",
            "search.database.sibling_context_limit",
            "search.database.archive_size",
        ],
        "AdaEvolve's controller does not read them",
    )
    _pareto(r)


_DATABASE: Mapping[str, Callable[[_Reader], None]] = {
    "best_of_n": _best_of_n,
    "evox": _evox,
    "adaevolve": _adaevolve,
}
