"""The static checks of ``task check``: the card, the files, and what the entry point looks like.

Nothing here runs code: the seed and the evaluator are only parsed (``ast``).
"""

from __future__ import annotations

import ast
import math
import re
import textwrap

from harness.evaluation.check._report import CheckResult
from harness.evaluation.folder_config import folder_config_files
from harness.evaluation.task import Task

__all__ = [
    "card_check",
    "files_check",
    "folder_config_check",
    "hidden_data_check",
    "infer_entry_point",
    "lie_precondition",
]


def _top_level_functions(source: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(source)
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _required_args(func: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = func.args
    positional = len(args.posonlyargs) + len(args.args)
    return positional - len(args.defaults)


def infer_entry_point(task: Task) -> str | None:
    """For a compat folder: a seed function the evaluator names (``program.run_packing()``)."""
    if task.initial_program is None:
        return None
    try:
        seed_funcs = _top_level_functions(task.initial_program)
    except SyntaxError:
        return None
    evaluator = task.files.get(task.card.evaluator, b"").decode("utf-8", "replace")
    called = re.findall(r"\.\s*([A-Za-z_]\w*)\s*\(", evaluator)
    named = re.findall(r"""["']([A-Za-z_]\w*)["']""", evaluator)
    for name in [*called, *named]:
        if name in seed_funcs:
            return name
    return None


def card_check(task: Task) -> CheckResult:
    """``card``: the metric, the best known value and its source, validity rules, the prose."""
    card = task.card
    if card.mode == "compat":
        return CheckResult(
            "card",
            "skip",
            "compat folder: the card is synthesised (no metric, "
            "no best-known value); add a task.yaml to check it",
        )
    problems = []
    if not card.metric:
        problems.append("no 'metric' (the metric holding the raw objective value)")
    if card.best_known is None:
        problems.append("no 'best_known' (value and source)")
    else:
        if not math.isfinite(card.best_known.value):
            problems.append("best_known.value is not finite")
        if not card.best_known.source.strip():
            problems.append("best_known.source is empty")
    if not card.validity.strip():
        problems.append("no 'validity' rules (state the checks and tolerances)")
    if not card.description.strip() or not card.objective.strip():
        problems.append("empty description or objective")
    if problems:
        return CheckResult("card", "fail", "; ".join(problems))
    bk = card.best_known
    assert bk is not None
    # The line quotes the source whole when it is short, else cut at a word with an ellipsis;
    # --json carries it whole.
    source = textwrap.shorten(bk.source, width=120, placeholder=" …")
    return CheckResult(
        "card",
        "pass",
        f"metric {card.metric!r}, best known {bk.value:g} ({card.direction}) from: {source}",
        {"best_known_source": bk.source},
    )


def files_check(task: Task, entry: str | None) -> CheckResult:
    """``files``: the seed parses and defines ``entry``, the evaluator defines every stage with
    one parameter, and the EVOLVE-BLOCK markers balance."""
    card = task.card
    problems: list[str] = []
    notes: list[str] = []
    seed = task.initial_program
    if seed is None:
        problems.append(f"the seed program {card.initial_program!r} does not exist")
    else:
        try:
            # A program in another language (an OpenEvolve folder's .r or .rs) is not parsed.
            seed_funcs = _top_level_functions(seed) if card.language == "python" else {}
        except SyntaxError as exc:
            seed_funcs = {}
            problems.append(f"the seed does not parse: {exc}")
        if entry and seed_funcs and entry not in seed_funcs:
            problems.append(f"the seed defines no top-level function {entry!r} (the entry point)")
        starts = seed.count("EVOLVE-BLOCK-START")
        ends = seed.count("EVOLVE-BLOCK-END")
        if starts != ends:
            problems.append(f"unbalanced EVOLVE-BLOCK markers ({starts} START, {ends} END)")
        elif starts == 0:
            notes.append("no EVOLVE-BLOCK markers: the whole seed is evolvable")
    evaluator = task.files.get(card.evaluator)
    if evaluator is None:
        problems.append(f"the evaluator {card.evaluator!r} does not exist")
    else:
        try:
            funcs = _top_level_functions(evaluator.decode("utf-8"))
        except (SyntaxError, UnicodeDecodeError) as exc:
            funcs = {}
            problems.append(f"the evaluator does not parse: {exc}")
        for stage in card.stages:
            func = funcs.get(stage.function)
            if func is None:
                problems.append(f"the evaluator defines no function {stage.function!r}")
            elif _required_args(func) != 1:
                problems.append(
                    f"{stage.function}() must take exactly one argument "
                    "(the candidate handle, or the program path in compat mode)"
                )
    if problems:
        return CheckResult("files", "fail", "; ".join(problems))
    detail = (
        f"entry point {entry!r}; stages {', '.join(s.function for s in card.stages)}; "
        f"files {', '.join(task.files)}"
    )
    return CheckResult("files", "pass", "; ".join([detail, *notes]))


def lie_precondition(seed: str, entry: str | None) -> str:
    """Why the lying variant cannot apply to this entry point ("" when it can)."""
    func = _top_level_functions(seed).get(entry or "")
    if entry is None or func is None:
        return "no entry point to wrap"
    if _required_args(func) > 0:
        return (
            f"{entry}() takes arguments: it answers the scorer's questions and reports "
            "no value of its own to inflate"
        )
    return ""


def hidden_data_check(task: Task) -> CheckResult:
    """``hidden_data``: nothing of a file the card marks hidden reaches what a model is shown."""
    from harness.evaluation.visible import hidden_leaks, model_view

    hidden = task.card.model_context.hidden
    view = model_view(task)
    data = {"model_view_chars": len(view), "evaluator": task.card.model_context.evaluator}
    if not hidden:
        return CheckResult(
            "hidden_data",
            "pass",
            f"no file is marked hidden; models see the description and "
            f"{task.card.model_context.evaluator} evaluator parts ({len(view)} characters)",
            data,
        )
    missing = [name for name in hidden if not (task.path / name).is_file()]
    if missing:
        return CheckResult(
            "hidden_data",
            "fail",
            f"model_context.hidden names {', '.join(missing)}, which does not exist in the folder",
            data,
        )
    leaks = hidden_leaks(task)
    if leaks:
        return CheckResult(
            "hidden_data",
            "fail",
            f"the text shown to guide/meta models contains data of hidden file(s) "
            f"{', '.join(leaks)}: move that data out of the evaluator's visible parts (or set "
            "model_context.evaluator: none)",
            {**data, "leaks": leaks},
        )
    return CheckResult(
        "hidden_data",
        "pass",
        f"{len(hidden)} hidden file(s) never appear in the {len(view)} characters models see",
        data,
    )


def folder_config_check(task: Task) -> CheckResult:
    """``folder_config``: what a compat folder's own config file contributes (and does not)."""
    config = task.folder_config
    if config is None:
        if task.card.mode == "sealed":
            return CheckResult("folder_config", "skip", "native task: task.yaml is the config")
        others = folder_config_files(task.path)
        why = "the folder has no config.yaml"
        if others:
            why += f" (its config files {', '.join(others)}: choose one with --task-config)"
        return CheckResult("folder_config", "skip", why)
    applied = config.task_keys
    search = [config.shown(key) for key in config.search]
    method = [config.shown(key) for key in config.method_search]
    data = {
        "file": str(config.path),
        "format": config.format,
        "method": config.method,
        "scaffold": config.scaffold,
        "task_keys": applied,
        "system_message": config.system_message_source if config.system_message else None,
        "search_defaults": {key: config.origins.get(key, key) for key in config.search},
        "method_defaults": {key: config.origins.get(key, key) for key in config.method_search},
        "not_used": list(config.ignored),
        "not_used_why": {reason: list(keys) for reason, keys in config.unused.items()},
        "notes": list(config.notes),
    }
    parts = [f"{config.path.name} ({config.format} format, written for {config.method})"]
    parts.append(f"task keys: {', '.join(applied) or 'none'}")
    parts.append(f"search defaults: {', '.join(search) or 'none'}")
    if method:
        parts.append(f"{config.method} defaults: {', '.join(method)}")
    if config.ignored:
        parts.append(f"not used: {', '.join(config.ignored)}")
    parts += config.notes
    return CheckResult("folder_config", "pass", "; ".join(parts), data)
