"""Run configuration: YAML validated into strict pydantic models.

A run's config is built from ordered, named layers (the scaffold's composition, the task's
defaults, the user's file, overrides, settings): see :mod:`harness.core.config_layers`.  Every
section is strict: a misspelled or unknown key is a :class:`ConfigError` that lists the valid
keys (SkyDiscover silently ignores them; we don't).  Block sections (``population``,
``selection_policy``, ``prompt``, ``proposer``, ``memory``) are typed by the config model of the
block named for that slot in ``blocks``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError

from harness.core.errors import ConfigError
from harness.core.llm_config import LLMConfig
from harness.core.validation import StrictModel, validation_problems

__all__ = [
    "COMPONENT_SECTIONS",
    "SLOTS",
    "Composition",
    "EmptySection",
    "LoopConfig",
    "EvaluatorConfig",
    "GeneralConfig",
    "RunConfig",
    "SeedFrom",
    "StrictModel",
    "deep_merge",
    "override_patch",
    "shown_override",
    "read_yaml",
    "validate_config",
]

#: The six block slots, in the order they are listed (cards, `galapagos blocks`).
SLOTS = ("population", "selection_policy", "prompt", "proposer", "evaluator", "memory")
#: Slots whose block takes a config section of the same name (the evaluator block is configured
#: by the run's ``evaluator`` section: sandbox, limits).
COMPONENT_SECTIONS = ("population", "selection_policy", "prompt", "proposer", "memory")


class EmptySection(StrictModel):
    """A component section that takes no options."""


class Composition(StrictModel):
    """A scaffold's six named blocks (see ``galapagos blocks``)."""

    population: str
    selection_policy: str
    prompt: str
    proposer: str
    evaluator: str = "task"
    memory: str = "none"

    def named(self) -> dict[str, str]:
        return {slot: getattr(self, slot) for slot in SLOTS}


class LoopConfig(StrictModel):
    """Scaffold-level control flow: how the one loop treats a method's attempts.

    These are the method's semantics (set by its composition), not tuning knobs; a user's own
    composition may set them like any block.  A block that cannot run with an option says so
    (its ``unsupported_loop``) and the composition is refused before the run starts.
    """

    #: Run ``select`` before every attempt instead of once per iteration (AdaEvolve).
    resample_each_attempt: bool = False
    #: An LLM error (after the client's own retries) costs the attempt, not the iteration: the
    #: next attempt runs (AdaEvolve's controller).  Default: the iteration ends at once.
    retry_llm_errors: bool = False
    #: Admit a child whose evaluation failed (OpenEvolve admits every evaluated child); it is
    #: scored from its metrics as usual.  Default: a failed evaluation is a failed attempt.
    admit_failed_evaluations: bool = False
    #: Reference mode: the ported blocks draw their random numbers from one stream seeded with
    #: the run seed, in the order the reference implementation draws them (and sample on its
    #: schedule where it samples ahead), so a seeded run can be compared with the reference
    #: draw for draw (see each scaffold's README).  Default: one seeded stream per block.
    reference_mode: bool = False


class GeneralConfig(StrictModel):
    #: LLM iterations after the seed evaluation (iteration 0).
    max_iterations: int = Field(100, ge=0, le=1_000_000)
    #: Attempts per iteration; failed attempts are fed back into the next prompt.
    inner_retry_times: int = Field(1, ge=1, le=20)
    #: Iterations in flight at once (LLM calls and evaluations overlap) where a scaffold allows.
    max_parallel_iterations: int = Field(1, ge=1, le=64)
    #: Store prompts and responses with each LLM call.
    log_prompts: bool = True
    #: Stop before any LLM call when the seed program cannot be evaluated (its evaluation
    #: crashed, timed out, or failed the failure predicate): a broken evaluator or seed would
    #: otherwise spend every iteration's LLM calls.  ``false`` searches anyway.
    stop_on_failed_seed: bool = True
    #: Stop the run as failed (resumable) after this many consecutive iterations that failed
    #: for the same infrastructure cause (the LLM endpoint, the sandbox); 0 never stops.
    max_consecutive_infra_failures: int = Field(5, ge=0, le=1_000_000)
    #: Stop the run as failed (resumable) when the task's evaluator itself raised the same
    #: exception at the same line for this many consecutive candidates: a broken evaluator
    #: would otherwise spend every LLM call.  0 never stops (``run --keep-going``).
    max_consecutive_evaluator_errors: int = Field(5, ge=0, le=1_000_000)
    #: A program becomes the run's new best only when its score beats the best by more than
    #: ``max(improvement_rtol * max(|new|, |best|), improvement_atol)``: float noise in the
    #: last digits is not an improvement (the same rule in runs, benchmarks and the hub).
    improvement_rtol: float = Field(1e-12, ge=0.0, le=1.0)
    improvement_atol: float = Field(1e-15, ge=0.0)


class EvaluatorConfig(StrictModel):
    #: ``docker`` (default): every candidate in a fresh locked-down container.  ``local`` runs
    #: candidates in host subprocesses and is unsafe for untrusted code.
    sandbox: Literal["docker", "local"] = "docker"
    #: Overrides the task card's wall-clock limit per stage (seconds).
    timeout_s: float | None = Field(None, gt=0, le=3600)
    #: Overrides the task card's memory limit (MiB).
    memory_mb: int | None = Field(None, ge=64, le=65536)
    #: Warm containers kept ready per job shape; ``None`` sizes the pool to the machine.
    pool_size: int | None = Field(None, ge=0, le=64)
    #: Evaluations of this run at once (parallel iterations beyond it wait for a turn);
    #: ``None``: one per core (at least two) for a lone ``galapagos run``, whose evaluations are
    #: mostly CPU-bound (its warm pool keeps one container more); a benchmark's or the hub's
    #: runs share their machine's cap.  Raise it for evaluators that mostly wait (a remote
    #: service, I/O).
    max_concurrent: int | None = Field(None, ge=1, le=64)
    #: Docker only: how long an evaluation waits for an unreachable engine (restarting, or
    #: stopped) before the run stops as interrupted, resumable (seconds).
    engine_wait_s: float = Field(300.0, gt=0, le=86400)
    #: Docker only: before the run, a few canary candidates (non-root, no capabilities,
    #: read-only root, no network, no score forgery) must be contained, or the run refuses to
    #: start (fail closed).  They run as the first two boxes of the run's own first container
    #: (≈0.1 s; a separate container for images outside python-eval and its pip additions).
    canaries: bool = True
    #: Compat folders whose evaluator runs the program as ``[sys.executable, program]``: that
    #: subprocess runs in a warm interpreter forked in the candidate's box before the job
    #: (numpy already imported: ≈20 ms a stage instead of ≈100 ms), which shows the program
    #: what a fresh one would.  ``false``: a fresh interpreter every time (docs/sandbox.md).
    warm_python: bool = True


class SeedFrom(StrictModel):
    """A run started from another run's program (``galapagos run --from RUN``) instead of the
    task's initial program; the code is kept so the run resumes without the source run."""

    run_id: str
    program_id: str
    code: str


#: Seeds are stored as SQLite INTEGERs (signed 64-bit).
MAX_SEED = 2**63 - 1


class RunConfig(StrictModel):
    scaffold: str
    blocks: Composition
    loop: LoopConfig = LoopConfig()
    seed: int = Field(0, ge=0, le=MAX_SEED)
    #: Set by ``run --from``: the program the run starts from (else the task's initial program).
    seed_from: SeedFrom | None = None
    #: ``--task-config``: the compat folder's config file the run used (else its config.yaml).
    task_config: str | None = None
    general: GeneralConfig = GeneralConfig()
    llm: LLMConfig = LLMConfig()
    evaluator: EvaluatorConfig = EvaluatorConfig()
    population: BaseModel = EmptySection()
    selection_policy: BaseModel = EmptySection()
    prompt: BaseModel = EmptySection()
    proposer: BaseModel = EmptySection()
    memory: BaseModel = EmptySection()


def read_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping; malformed files and non-mappings are ``ConfigError``."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"malformed YAML in {path}{where}: {problem}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: expected a mapping of config sections, got {type(data).__name__}"
        )
    return data


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


#: Key words whose values are never repeated in a message (an ``api_key`` given by mistake).
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "credential")


def shown_override(item: str, word: str = "set") -> str:
    """How a ``key=value`` override is named in messages (``word`` is how the caller calls
    overrides: the CLI's ``--set``): its value hidden when the key looks secret."""
    key, sep, _ = item.partition("=")
    last = key.strip().rsplit(".", 1)[-1].lower()
    if sep and any(w in last for w in _SECRET_WORDS) and not last.endswith("_env"):
        return f"{word} {key.strip()}=***"
    return f"{word} {item}"


def override_patch(item: str, word: str = "set") -> dict[str, Any]:
    """One ``key.sub=value`` override as a nested mapping; the value is parsed as YAML."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(
            f"{shown_override(item, word)!r}: expected KEY=VALUE, e.g. general.max_iterations=50"
        )
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"{shown_override(item, word)}: the value is not valid YAML (quote it: '{key}=\"…\"')"
        ) from exc
    return nest(key, value)


def nest(dotted: str, value: Any) -> dict[str, Any]:
    """``"a.b", 1`` → ``{"a": {"b": 1}}``."""
    for part in reversed(dotted.split(".")):
        value = {part: value}
    return dict(value)


def dotted_get(data: Any, dotted: str) -> Any:
    """The value at ``"a.b"`` in nested mappings, or None."""
    for part in dotted.split("."):
        data = data.get(part) if isinstance(data, Mapping) else None
    return data


def validate_config(
    model: type[RunConfig],
    data: Mapping[str, Any],
    *,
    source: str | Callable[[Sequence[Any], str], tuple[str, str]],
) -> RunConfig:
    """Validate merged ``data``; errors name where each bad value came from.

    ``source`` is one name, or a function of a problem's location and text that gives the
    problem's origin and text (:meth:`harness.core.config_layers.Layers.validate`)."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        problems = validation_problems(exc, model)
        named = [
            (source, text) if isinstance(source, str) else source(loc, text)
            for loc, text in problems
        ]
        if len({origin for origin, _ in named}) == 1:
            detail = f" ({named[0][0]}): " + "; ".join(text for _, text in named)
        else:
            detail = ": " + "; ".join(f"{text} ({origin})" for origin, text in named)
        raise ConfigError(f"invalid config{detail}") from exc
