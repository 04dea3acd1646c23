"""The configuration reference (``docs/configuration.md``), generated from the pydantic models.

Every key of the run config with its type, default and the ``#:`` comment above its field; block
sections once per named block, with the scaffolds whose composition uses the block.

    python -m harness.config_reference            # print
    python -m harness.config_reference --write    # update docs/configuration.md
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
import textwrap
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from harness.core.config import COMPONENT_SECTIONS, GeneralConfig, LoopConfig, RunConfig
from harness.core.llm_config import ModelConfig
from harness.core.registry import block_catalog, get_spec, list_scaffolds

__all__ = ["render", "main"]

DOC = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"

HEADER = """\
# Configuration reference

Generated from the config models by `python -m harness.config_reference --write`; a test fails
when this page and the code disagree. Every section is strict: an unknown key is an error that
lists the valid ones. Secrets never go in a config (keys come from the environment variable
named by `llm.api_key_env`).

## Layers: where each value comes from

A run's config is built by one pipeline (`harness/core/config_layers.py`) from ordered, named
layers; a later layer wins over an earlier one, key by key:

1. **scaffold**: the composition, `scaffolds/<name>/config.yaml` or your composition file (a
   block you swap drops the composition's section for the block it replaced);
2. **task**: the task's own defaults: its system message as `prompt.system_message` (from
   `task.yaml`), and a compat folder's search-level keys (its `config.yaml` or `--task-config
   FILE`, see docs/writing-a-task.md);
3. **config**: `--config FILE` (the Python API: `config=` as a file or a mapping);
4. **set**: each `--set key=value`, in the order given (the value is read as YAML);
5. **flag**: `--iterations`, `--seed`, `--sandbox`, `--max-cost`, `--max-tokens`,
   `--keep-going` (the Python API: `iterations=`, `seed=`); `--api-base`/`--model` and
   `--offline` then resolve the `llm` section (the environment fills what they leave open).

`galapagos run … --explain-config` (also `galapagos resume RUN --explain-config`) prints every
key of the final config with its value and its source, and exits without running: a file's
values as `file:line`, `--set a.b=1`, a flag, `resolved (endpoint, environment, price table)`,
or `default` (the model's default below). `--json` prints the same as a list. An invalid value
is one error line naming its layer the same way (`invalid config (my.yaml:3): …`); a value a
flag replaces is named in a note (`seed: 4 from my.yaml:1 overridden by --seed 5`).

Environment variables: `GALAPAGOS_STORE` (the run store, like `--store`), `GALAPAGOS_TASKS`
(folders of your own named tasks, separated by `:`, added to the shipped tasks; a shipped
task's name wins), `GALAPAGOS_PRICES` (a price table added to the shipped one, see
docs/llm.md), `GALAPAGOS_CACHE_DIR` (what the sandbox images were found to have, see
docs/sandbox.md; default `~/.cache/galapagos`), `OPENAI_API_KEY` (or the variable
`llm.api_key_env` names), `OPENAI_BASE_URL` / `OPENAI_API_BASE` (the endpoint when neither
`--api-base` nor `llm.api_base` is given).
"""


def _comments(model: type[BaseModel]) -> dict[str, str]:
    """The ``#:`` comment lines above each field of ``model`` (and its bases)."""
    out: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            source = textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError):
            continue
        lines = source.splitlines()
        tree = ast.parse(source)
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node in body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                comment: list[str] = []
                index = node.lineno - 2
                while index >= 0 and lines[index].strip().startswith("#:"):
                    comment.insert(0, lines[index].strip()[2:].strip())
                    index -= 1
                if comment:
                    out[node.target.id] = " ".join(comment).replace("``", "`")
    return out


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _type(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type(a) for a in args)
    if origin in (list, tuple, dict, set, frozenset):
        inner = ", ".join(_type(a) for a in args if a is not Ellipsis)
        return f"{origin.__name__}[{inner}]" if inner else origin.__name__
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _default(value: Any) -> str:
    if isinstance(value, BaseModel):
        return "(section)"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return repr(value) if value else '""'
    return repr(value)


def _rows(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, str, str, str]]:
    comments = _comments(model)
    for name, info in model.model_fields.items():
        key = f"{prefix}{name}"
        nested = _model_in(info.annotation)
        if nested is not None and name not in ("population", "selection_policy"):
            yield key, nested.__name__, "(section)", comments.get(name, "")
            yield from _rows(nested, key + ".")
            continue
        default = (
            "(required)"
            if info.is_required()
            else _default(info.get_default(call_default_factory=True))
        )
        yield key, _type(info.annotation), default, comments.get(name, "")


def _table(rows: Iterator[tuple[str, str, str, str]]) -> list[str]:
    out = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key, type_, default, meaning in rows:
        cells = [f"`{key}`", type_.replace("|", "\\|") if "\\|" not in type_ else type_,
                 f"`{default}`" if default not in ("(section)", "(required)") else default,
                 meaning.replace("|", "\\|")]  # fmt: skip
        out.append("| " + " | ".join(cells) + " |")
    return out


def render() -> str:
    lines = [HEADER]
    lines += ["## Run-level keys (every scaffold)", ""]
    run_level = [
        ("seed", RunConfig.model_fields["seed"]),
    ]
    lines += ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key, info in run_level:
        lines.append(f"| `{key}` | {_type(info.annotation)} | `{_default(info.default)}` | "
                     "the run seed: every RNG and the offline model derive from it |")  # fmt: skip
    lines.append(
        "| `blocks.<slot>` | str | (from the composition) | the named block of each slot "
        "(`galapagos blocks`); a swapped block takes its own section defaults |"
    )
    lines.append("")
    for title, model, prefix in (
        ("general", GeneralConfig, "general."),
        ("loop (a method's control flow, set by its composition)", LoopConfig, "loop."),
        ("llm", RunConfig.model_fields["llm"].annotation, "llm."),
        ("evaluator", RunConfig.model_fields["evaluator"].annotation, "evaluator."),
    ):
        assert isinstance(model, type) and issubclass(model, BaseModel)
        lines += [f"### `{title}`", "", *_table(_rows(model, prefix)), ""]
        if prefix == "llm.":
            lines += ["Each item of `llm.models` and `llm.guide_models`:", ""]
            lines += [*_table(_rows(ModelConfig, "llm.models[].")), ""]
    users: dict[tuple[str, str], list[str]] = {}
    for name in list_scaffolds():
        for slot, block in get_spec(name).composition.named().items():
            users.setdefault((slot, block), []).append(name)
    lines += [
        "## Block sections",
        "",
        "Each block section (`population`, `selection_policy`, `prompt`, `proposer`, `memory`) "
        "takes the keys of the block the composition names for that slot.",
        "",
    ]
    catalog = block_catalog()
    for slot in COMPONENT_SECTIONS:
        for block_name, spec in sorted(catalog[slot].items()):
            scaffolds = ", ".join(f"`{s}`" for s in users.get((slot, block_name), [])) or "none"
            lines += [f"### `{slot}: {block_name}`", "", spec.summary, "",
                      f"Used by: {scaffolds}.", ""]  # fmt: skip
            if spec.config.model_fields:
                lines += [*_table(_rows(spec.config, f"{slot}.")), ""]
            else:
                lines += ["(no options)", ""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {DOC}")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        DOC.write_text(text)
        print(f"wrote {DOC}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
