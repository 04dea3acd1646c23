"""What a model may be shown of a task: its description and, as its card allows, the public
parts of its evaluator — never the files it marks hidden (see ``TaskCard.model_context``).

Guide and meta prompts (EvoX's variation operators and problem summary, AdaEvolve's paradigms)
take their task context from :func:`model_view`; :func:`hidden_leaks` is ``task check``'s test
that no hidden file's content reaches that text.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from harness.evaluation.task import Task

__all__ = ["MARK_END", "MARK_START", "evaluator_view", "hidden_leaks", "model_view"]

MARK_START = "# MODEL-VISIBLE-START"
MARK_END = "# MODEL-VISIBLE-END"
#: Characters of a hidden file that, found in the model's view, count as a leak.
LEAK_WINDOW = 24
MAX_VIEW_CHARS = 12_000


def _marked(source: str) -> list[str]:
    parts: list[str] = []
    inside: list[str] | None = None
    for line in source.splitlines():
        if line.strip() == MARK_START:
            inside = []
        elif line.strip() == MARK_END and inside is not None:
            parts.append("\n".join(inside))
            inside = None
        elif inside is not None:
            inside.append(line)
    return parts


def _signatures(source: str) -> list[str]:
    """The module docstring and each top-level function's signature and docstring."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out: list[str] = []
    doc = ast.get_docstring(tree)
    if doc:
        out.append(f'"""{doc}"""')
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith(
            "_"
        ):
            args = ast.unparse(node.args)
            line = f"def {node.name}({args}):"
            fdoc = ast.get_docstring(node)
            out.append(line + (f'\n    """{fdoc}"""' if fdoc else "\n    ..."))
    return out


def evaluator_view(task: Task) -> str:
    """The evaluator as the card allows a model to see it ("" for ``none``)."""
    policy = task.card.model_context.evaluator
    raw = task.files.get(task.card.evaluator, b"")
    source = raw.decode("utf-8", "replace")
    if policy == "none" or not source:
        return ""
    if policy == "full":
        return source
    parts = _marked(source) or _signatures(source)
    return "\n\n".join(parts)


def model_view(task: Task) -> str:
    """The task as guide and meta models see it: description, objective, validity, the task's
    own system message (its domain knowledge; the reference shows its guide model the system
    message too), and the evaluator's visible parts."""
    text = task.prompt_description()
    if task.system_message:
        text += "\n\nWhat the task's author tells the model:\n" + task.system_message.strip()
    view = evaluator_view(task)
    if view:
        text += "\n\nHow candidates are evaluated (the evaluator's visible parts):\n" + view
    return text if len(text) <= MAX_VIEW_CHARS else text[:MAX_VIEW_CHARS] + "\n…"


def _windows(text: str) -> Iterator[str]:
    compact = text.strip()
    if len(compact) < LEAK_WINDOW:
        if compact:
            yield compact
        return
    step = max(1, LEAK_WINDOW // 2)
    for start in range(0, len(compact) - LEAK_WINDOW + 1, step):
        piece = compact[start : start + LEAK_WINDOW]
        if piece.strip():
            yield piece


def hidden_leaks(task: Task) -> list[str]:
    """The hidden files whose content appears in :func:`model_view` (empty: none leaks)."""
    view = model_view(task)
    leaks = []
    for name in task.card.model_context.hidden:
        data = task.files.get(name)
        if data is None:
            path = task.path / name
            data = path.read_bytes() if path.is_file() else b""
        text = data.decode("utf-8", "replace")
        if any(piece in view for piece in _windows(text)):
            leaks.append(name)
    return leaks
