"""``DefaultPromptBuilder``: task → metrics → feedback → previous attempts → inspirations →
current program last (in the final fenced block, where diff proposers and the offline model look).

Previous attempts follow the reference (SkyDiscover's default context builder): among the
population's programs found in the last 100 iterations (counted back from the newest member)
that report a numeric ``combined_score``, the 3 with the highest ``combined_score`` (ties keep
admission order), each with its change summary and its outcome against its parent.

Templates are jinja2 files in ``templates/``; a scaffold may pass its own directory.  Every
prompt template renders in a sandboxed, immutable Jinja2 environment (:func:`template_env`):
a template reaches no Python internals (``{{ ''.__class__ }}`` and the like are refused when the
builder is made, and the sandbox refuses whatever that check misses).
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jinja2
import jinja2.nodes
import jinja2.sandbox
from pydantic import Field

from harness.core.blocks import block
from harness.core.errors import ConfigError
from harness.core.population import PopulationView
from harness.core.prompt import BasePromptBuilder, PromptContext
from harness.core.proposer import BaseProposer
from harness.core.records import Program, Prompt, Selection
from harness.core.validation import StrictModel
from harness.diffs import fenced

__all__ = [
    "DefaultPromptBuilder",
    "DefaultPromptConfig",
    "default_prompt",
    "format_value",
    "outcome",
    "previous_attempts",
    "tail",
    "template_env",
]

TEMPLATES = Path(__file__).with_name("templates")
#: Previous attempts: the best ``HISTORY_SIZE`` of the programs of the last ``HISTORY_WINDOW``
#: iterations (reference values).
HISTORY_WINDOW = 100
HISTORY_SIZE = 3
#: How far admission order may lag iteration order (iterations in flight complete out of order;
#: ``general.max_parallel_iterations`` is at most 64).
_OUT_OF_ORDER = 64


def _combined_score(program: Program) -> float | None:
    value = program.metrics.get("combined_score")
    if type(value) is float:  # the usual case, without the ABC check (~100 programs a prompt)
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def previous_attempts(population: PopulationView) -> list[Program]:
    """The reference's "Previous Attempts" (see the module docstring).

    Members are listed in admission order, so their iterations only grow (up to the few
    iterations in flight at once that may complete out of order): the window is found by
    walking back from the newest member, not by scanning (or copying) the whole population.
    """
    newest = population.newest_first()
    head = list(itertools.islice(newest, _OUT_OF_ORDER))
    if not head:
        return []
    last = max(p.iteration for p in head)
    floor = last - HISTORY_WINDOW
    stop = floor - _OUT_OF_ORDER
    scored: list[tuple[float, int, Program]] = []
    # ~165 members per prompt: the usual float score read in line (``_combined_score`` the rest).
    back = 0
    for p in itertools.chain(head, newest):
        iteration = p.iteration
        if iteration <= stop:
            break
        if iteration > floor:
            score = p.metrics.get("combined_score")
            if type(score) is not float:
                score = _combined_score(p)
            if score is not None:
                # Best first, ties in admission order (``back``: 0 for the newest, then -1,
                # -2, …): the order of the tuples themselves (no two share ``back``).
                scored.append((-score, back, p))
        back -= 1
    scored.sort()
    return [p for _, _, p in scored[:HISTORY_SIZE]]


class DefaultPromptConfig(StrictModel):
    #: Replaces the default system message.
    system_message: str | None = None
    #: ``true``: ask for SEARCH/REPLACE edits; ``false``: ask for a full rewrite.
    diff_mode: bool = True
    #: Characters of the parent's evaluation feedback shown.
    max_feedback_chars: int = Field(2000, ge=0)
    #: Characters of a failed attempt's code / traceback shown.
    max_failed_code_chars: int = Field(1500, ge=0)
    max_traceback_chars: int = Field(800, ge=0)
    #: Directory with ``system.j2``/``user.j2``/``scratch.j2`` overriding the defaults.  Fence
    #: code with the ``fenced`` filter (``{{ code | fenced(language) }}``), never fixed backticks.
    template_dir: str | None = None


def format_value(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    f = float(value)
    if math.isfinite(f) and f == int(f) and abs(f) < 1e15 and isinstance(value, numbers.Integral):
        return str(int(f))
    return f"{f:.6g}"


def tail(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text``, marked with a leading ``…`` when cut."""
    return text if len(text) <= limit else "…" + text[-limit:]


def outcome(program: Program) -> str:
    """How ``program`` did against its parent (``metadata["parent_score"]``): ``improvement``,
    ``regression``, ``no change``, or ``no parent``."""
    parent_score = program.metadata.get("parent_score")
    if parent_score is None:
        return "no parent"
    if program.score > parent_score:
        return "improvement"
    if program.score < parent_score:
        return "regression"
    return "no change"


def _head(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "\n…"


def template_env(*folders: str | Path) -> jinja2.Environment:
    """The environment every prompt template renders in: sandboxed and immutable (no access
    to Python internals, no mutation of what it is given), plain text, strict about undefined
    names, with the ``fenced`` filter.  Templates of ``folders`` are searched in order; each
    is checked once, when first loaded, for attribute access to private names, and then kept:
    a template file edited while a run goes on does not change its later prompts (nor is its
    file looked at again for every prompt)."""
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        loader=_CheckedLoader([str(f) for f in folders]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701 - plain-text prompts, not HTML
        auto_reload=False,
    )
    # ``{{ code | fenced(language) }}``: a fence longer than any backtick line in the code.
    env.filters["fenced"] = fenced
    return env


class _CheckedLoader(jinja2.FileSystemLoader):
    """Refuses (``ConfigError``) a template that reaches for ``_private``/``__dunder__``
    attributes: no prompt needs them, and they are the road out of a template."""

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        source, filename, uptodate = super().get_source(environment, template)
        for node in environment.parse(source).find_all(
            (jinja2.nodes.Getattr, jinja2.nodes.Getitem)
        ):
            name = node.attr if isinstance(node, jinja2.nodes.Getattr) else None
            if isinstance(node, jinja2.nodes.Getitem) and isinstance(node.arg, jinja2.nodes.Const):
                name = node.arg.value
            if isinstance(name, str) and name.startswith("_"):
                raise ConfigError(
                    f"prompt template {filename or template}: refused, it reads the attribute "
                    f"{name!r} (templates may not reach private or internal attributes)"
                )
        return source, filename, uptodate


def _render(template: jinja2.Template, **context: Any) -> str:
    name = template.name
    try:
        return template.render(**context)
    except jinja2.exceptions.SecurityError as exc:
        raise ConfigError(f"prompt template {name}: refused by the sandbox: {exc}") from None
    except jinja2.exceptions.TemplateError as exc:  # an undefined name, a bad filter, ...
        raise ConfigError(f"prompt template {name}: cannot render: {exc}") from None


def _plain_text(env: jinja2.Environment, name: str) -> bool:
    """Whether template ``name`` is text alone (no tag or expression; comments drop out)."""
    if env.loader is None:
        return False
    source = env.loader.get_source(env, name)[0]
    body = env.parse(source).body
    return all(
        isinstance(node, jinja2.nodes.Output)
        and all(isinstance(part, jinja2.nodes.TemplateData) for part in node.nodes)
        for node in body
    )


class DefaultPromptBuilder(BasePromptBuilder):
    def __init__(self, config: DefaultPromptConfig | None = None) -> None:
        self.config = config or DefaultPromptConfig()
        dirs: list[str | Path] = [TEMPLATES]
        if self.config.template_dir:
            dirs.insert(0, self.config.template_dir)
        self._env = template_env(*dirs)
        # A refused template fails here, before the run.  Kept: ``get_template`` costs about
        # as much as rendering a short template (its cache key, lock and LRU per call).
        self._templates = {
            name: self._env.get_template(name) for name in ("system.j2", "user.j2", "scratch.j2")
        }
        #: The system message, rendered once when its template is plain text (the default's):
        #: it is then the same text every time (a template with any tag or expression, which
        #: might draw ``lipsum`` or ``random``, is rendered for every prompt, as before).
        self._system: str | None = None
        if self.config.system_message is None and _plain_text(self._env, "system.j2"):
            self._system = _render(self._templates["system.j2"]).strip()

    def system_message(self) -> str:
        if self.config.system_message is not None:
            return self.config.system_message
        if self._system is not None:
            return self._system
        return _render(self._templates["system.j2"]).strip()

    def build(self, selection: Selection, context: PromptContext) -> Prompt:
        cfg = self.config
        failures = [
            {
                "index": a.index + 1,
                "stage": a.stage,
                "error": tail(a.error, cfg.max_traceback_chars),
                "traceback": tail(a.traceback, cfg.max_traceback_chars) if a.traceback else "",
                "code": _head(a.code, cfg.max_failed_code_chars) if a.code else "",
            }
            for a in context.attempts
        ]
        parent = selection.parent
        if parent is None:
            user = _render(
                self._templates["scratch.j2"],
                task=context.task_description,
                memory=context.memory,
                failures=failures,
                language=context.language,
            )
            return Prompt(system=self.system_message(), user=user.strip() + "\n", kind="rewrite")
        labels = list(selection.inspiration_labels) or [""] * len(selection.inspirations)
        user = _render(
            self._templates["user.j2"],
            task=context.task_description,
            memory=context.memory,
            metrics=self._metrics(parent.metrics),
            feedback=self._feedback(parent),
            history=[self._history_item(p) for p in previous_attempts(context.population)],
            failures=failures,
            inspirations=[
                {
                    "label": label or "Context program",
                    "id": p.id,
                    "score": format_value(p.score),
                    "code": p.code.rstrip("\n"),
                }
                for p, label in zip(selection.inspirations, labels, strict=False)
            ],
            rewrite=not cfg.diff_mode,
            evolve_block="EVOLVE-BLOCK-START" in parent.code,
            timeout=format_value(context.eval_timeout_s) if context.eval_timeout_s else "",
            parent_label=selection.parent_label,
            code=parent.code.rstrip("\n"),
            language=context.language,
        )
        kind = "diff" if cfg.diff_mode else "rewrite"
        return Prompt(system=self.system_message(), user=user.strip() + "\n", kind=kind)

    @staticmethod
    def _metrics(metrics: Mapping[str, Any]) -> list[tuple[str, str]]:
        return [(k, format_value(v)) for k, v in metrics.items() if k != "error"]

    def _feedback(self, parent: Program) -> str:
        parts = [f"{k}: {v}" for k, v in parent.artifacts.items() if v]
        return tail("\n".join(parts), self.config.max_feedback_chars) if parts else ""

    @staticmethod
    def _history_item(program: Program) -> dict[str, str]:
        return {
            "id": program.id,
            "score": format_value(program.score),
            "outcome": outcome(program),
            "changes": program.changes or "(not recorded)",
        }


@block(
    "default",
    "Task, metrics, feedback, previous attempts, context programs, current program last; asks "
    "for SEARCH/REPLACE edits or a whole program as the proposer expects.",
)
def default_prompt(config: DefaultPromptConfig, *, proposer: BaseProposer) -> DefaultPromptBuilder:
    """The default builder; it asks for whole programs when the proposer expects them."""
    if config.diff_mode and proposer.response_kind == "rewrite":
        config = config.model_copy(update={"diff_mode": False})
    return DefaultPromptBuilder(config)
