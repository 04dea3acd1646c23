"""The hub's policy: what a run the hub starts or resumes may be, whoever made it.

A token holder may launch, cancel and resume searches on the hub's tasks and configure them
within :data:`CLIENT_KEYS`; nothing a client sends selects a host path, a sandbox backend, an
image, an engine setting or the LLM endpoint.  :meth:`HubPolicy.check_plan` runs on every
plan the hub is about to execute — a launch, a resume, a run continued after a restart — and
judges the run's *stored* config, not the request: a run made by the CLI, by another hub or by
an older version is held to the same rule.  It refuses, with one line saying why, a run whose

- task folder lies outside the hub's task roots (or holds a link leading out of it);
- config (any ``sandbox`` key) runs code on the host while the hub allows only Docker;
- config differs from what the hub itself would build for the same blocks and task (the
  composition's defaults, the task's own layer, the operator's endpoint) in a key outside
  :data:`CLIENT_KEYS`: a template folder, an image, container or engine settings, another
  endpoint or key variable, ...
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from harness.core.config import override_patch
from harness.core.errors import ConfigError, TaskError
from harness.core.redact import redact_url
from harness.core.registry import list_scaffolds, load_config
from harness.llm.config import resolve_llm_config
from harness.runs import RunPlan
from harness.service.settings import ServiceSettings
from harness.service.tasks import TaskRoots

__all__ = ["CLIENT_KEYS", "HubPolicy", "PolicyRefused", "composition_file"]

#: Config keys (dotted, ``*`` matches the rest) a hub client may set in ``overrides``.
CLIENT_KEYS = (
    "seed",
    "general.*",
    "loop.*",
    "llm.max_total_tokens",
    "llm.max_cost",
    "llm.offline.*",
    "evaluator.sandbox",
    "evaluator.timeout_s",
    "evaluator.memory_mb",
    "evaluator.engine_wait_s",
    "evaluator.max_concurrent",
    "population.*",
    "selection_policy.*",
    "prompt.*",
    "proposer.*",
    "memory.*",
)
#: Parts of a key no client sets, whatever its section: folders and files on the host, images,
#: container and engine settings, the endpoint.  (``evaluator.sandbox`` is judged by value.)
_OPERATOR_PARTS = frozenset(
    {
        "template_dir",
        "image",
        "images",
        "container",
        "sandbox",
        "pool_size",
        "canaries",
        "api_base",
        "api_key_env",
        "provider",
        "models",
        "guide_models",
    }
)
_OPERATOR_SUFFIXES = ("_dir", "_path", "_file", "_url", "_image", "_env")
#: What a resume may change besides the client keys: its length, seed and budget caps, and the
#: program it started from (data, run only in the sandbox).
_RESUME_KEYS = ("general.max_iterations", "seed", "llm.max_total_tokens", "llm.max_cost")
_MAX_OVERRIDE = 500
_MAX_NODES = 200
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,47}")


class PolicyRefused(ConfigError):
    """A run the hub's policy does not allow (answered 403; a queued run is stored failed)."""


def client_may_set(key: str) -> bool:
    parts = key.split(".")
    if key == "evaluator.sandbox":  # judged by its value (docker, or local if allowed)
        return True
    if any(p in _OPERATOR_PARTS or p.endswith(_OPERATOR_SUFFIXES) for p in parts):
        return False
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in CLIENT_KEYS)


def _leaves(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` of every leaf of nested mappings (lists are leaves)."""
    if isinstance(data, Mapping) and (data or not prefix):
        for key, value in data.items():
            yield from _leaves(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, data


def _size(value: Any, budget: int = _MAX_NODES) -> int:
    """Nodes in a parsed YAML value, counting up to ``budget`` (aliases make big trees)."""
    seen = 0
    stack = [value]
    while stack and seen <= budget:
        node = stack.pop()
        seen += 1
        if isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
    return seen


def composition_file(folder: Path, composition: Mapping[str, Any]) -> Path:
    """A composition (``name``, ``blocks``, ``loop``) as the file :func:`plan_run` reads,
    named by its content in ``folder``."""
    name = str(composition.get("name") or "custom")
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"composition name {name[:60]!r}: use lowercase letters, digits, '_' or '-'"
        )
    if name in list_scaffolds():
        raise ConfigError(f"composition name {name!r} is a shipped scaffold's; choose another name")
    unknown = set(composition) - {"name", "blocks", "loop"}
    if unknown:
        raise ConfigError(
            f"composition keys {sorted(unknown)} unknown; a composition has name, blocks and loop"
        )
    data = {"name": name, "blocks": dict(composition.get("blocks") or {})}
    if composition.get("loop"):
        data["loop"] = dict(composition["loop"])
    text = yaml.safe_dump(data, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{digest}.yaml"
    if not path.exists():
        path.write_text(text)
    return path


class HubPolicy:
    def __init__(self, settings: ServiceSettings, tasks: TaskRoots, data_dir: Path) -> None:
        self.settings = settings
        self.tasks = tasks
        self.data_dir = data_dir

    # -- what a client sends ------------------------------------------------------------------
    def check_overrides(self, overrides: Sequence[str]) -> None:
        """Every ``section.key=value`` a client sends must name keys of :data:`CLIENT_KEYS`."""
        for item in overrides:
            if len(item) > _MAX_OVERRIDE:
                raise ConfigError(
                    f"override {item[:40]!r}…: longer than {_MAX_OVERRIDE} characters"
                )
            patch = override_patch(item)
            if _size(patch) > _MAX_NODES:
                raise ConfigError(f"override {item[:40]!r}: its value is too large")
            for key, _ in _leaves(patch):
                if key == "llm" or key.startswith(("llm.api_base", "llm.api_key", "llm.provider")):
                    raise ConfigError(
                        f"override {key}: the hub's operator chooses the LLM endpoint "
                        "(galapagos serve --api-base/--model); it cannot be set per run"
                    )
                if not client_may_set(key):
                    raise ConfigError(
                        f"override {key[:80]}: not a key a hub client may set (host paths, "
                        "images, container and engine settings, the endpoint and the blocks "
                        "are the operator's; send blocks as a composition); allowed: "
                        + ", ".join(CLIENT_KEYS)
                    )

    # -- what the hub executes ----------------------------------------------------------------
    def check_plan(self, plan: RunPlan) -> None:
        """Refuse (:class:`PolicyRefused`, one line) a plan the hub must not execute."""
        name = plan.run.id if plan.run is not None else plan.task.name
        what = f"run {name}" if plan.run is not None else "this run"
        try:
            self.tasks.contains(plan.task.path)
        except TaskError as exc:
            raise PolicyRefused(f"{what}: {exc}") from None
        config = plan.config.model_dump(mode="json")
        if not self.settings.allow_local_sandbox:
            for key, value in _leaves(config):
                if key.rsplit(".", 1)[-1] == "sandbox" and value == "local":
                    raise PolicyRefused(
                        f"{what}: {key}=local runs LLM-written code on the hub's host; this "
                        "hub allows only docker (galapagos serve --allow-local-sandbox changes "
                        "that)"
                    )
        if plan.config.task_config is not None:
            chosen = (plan.task.path / plan.config.task_config).resolve()
            if not chosen.is_relative_to(plan.task.path):
                raise PolicyRefused(f"{what}: its task_config lies outside the task folder")
        baseline = self.baseline(plan)
        theirs = dict(_leaves(_comparable(config)))
        ours = dict(_leaves(_comparable(baseline)))
        for key in sorted(set(theirs) | set(ours)):
            if key in ("scaffold", "task_config") or key.startswith("seed_from"):
                continue
            if theirs.get(key) == ours.get(key) or key in _RESUME_KEYS or client_may_set(key):
                continue
            raise PolicyRefused(
                f"{what}: its config sets {key} (to {_shown(theirs.get(key))}), which only the "
                f"hub's operator may choose (the hub's own value: {_shown(ours.get(key))}); "
                "this hub does not start it"
            )

    def baseline(self, plan: RunPlan) -> dict[str, Any]:
        """The config this hub would build for the plan's blocks and task, with no client
        setting: the composition's defaults, the task's layer, the operator's endpoint."""
        blocks = plan.config.blocks.named()
        loop = plan.config.loop.model_dump(mode="json")
        scaffold = plan.spec.name
        if scaffold not in list_scaffolds():
            scaffold = str(
                composition_file(
                    self.data_dir / "compositions",
                    {"name": _NAME.fullmatch(scaffold) and scaffold or "custom", "blocks": blocks,
                     "loop": loop},
                )
            )  # fmt: skip
        try:
            _, config = load_config(
                scaffold,
                flags={"blocks": blocks, "loop": loop},
                task_layer=plan.task.config_layer(),
            )
        except ConfigError as exc:
            raise PolicyRefused(f"the hub cannot rebuild this run's config: {exc}") from None
        resolved = resolve_llm_config(
            config.llm, api_base=self.settings.api_base, models=self.settings.models
        )
        return config.model_copy(update={"llm": resolved.as_config()}).model_dump(mode="json")


def _comparable(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with its endpoint URL redacted (the hub stores it so; a URL with the same
    host and path and other credentials is the same endpoint)."""
    data = dict(config)
    llm = data.get("llm")
    if isinstance(llm, Mapping) and llm.get("api_base"):
        data["llm"] = {**llm, "api_base": redact_url(str(llm["api_base"]))}
    return data


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
