"""Before a compat folder's first evaluation (so before any LLM call): does the sandbox image have
what the folder needs?

What a folder needs is read from its files, statically:

- **Python packages**: the modules the evaluator, its helper files and a Python seed import at
  module level or inside the evaluator's entry functions (``evaluate``, ``evaluate_stageN``),
  leaving out the standard library, the folder's own modules and imports guarded by
  ``try: … except ImportError``;
- **commands**: the programs the evaluator starts (``subprocess.run(["cargo", …])`` and the
  like), and the toolchain of the program's language (``.rs``: ``cargo``; ``.r``: ``Rscript``
  …).

A probe job in the task's own image then looks each one up (``importlib.util.find_spec``,
``shutil.which``): one container, about half a second.  Anything missing stops the run with one
line naming every missing piece and how to add it (:func:`missing_message`), instead of a run
whose every evaluation fails.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.sandbox.protocol import Job, Limits

__all__ = ["Needs", "missing_message", "needs_of", "probe_job", "read_probe"]

#: The toolchain a program in each language needs (the first command names it).
TOOLCHAINS = {
    "rust": ("cargo", "rustc"),
    "r": ("Rscript",),
    "cpp": ("g++",),
    "c": ("gcc",),
    "go": ("go",),
    "java": ("javac", "java"),
    "julia": ("julia",),
    "javascript": ("node",),
    "typescript": ("node",),
}
#: How to get each toolchain (the images of ``sandbox_images/images.yaml``).
TOOLCHAIN_IMAGES = {"rust": "rust-eval", "r": "r-eval"}
_ENTRY = ("evaluate", "evaluate_stage1", "evaluate_stage2", "evaluate_stage3")
_SPAWN = {"run", "call", "check_call", "check_output", "Popen", "system", "spawnlp", "execvp"}
#: Import names whose PyPI package is named otherwise (for the message).
_PACKAGES = {"yaml": "pyyaml", "bs4": "beautifulsoup4", "sklearn": "scikit-learn",
             "PIL": "pillow", "cv2": "opencv-python-headless",
             "skimage": "scikit-image"}  # fmt: skip
PROBE_MODULE = "galapagos_preflight"
_PROBE = '''"""Galapagos' preflight: which modules and commands a folder needs are missing."""
import importlib.util
import shutil

MODULES = {modules!r}
COMMANDS = {commands!r}


def evaluate(program_path):
    missing_modules = [m for m in MODULES if importlib.util.find_spec(m) is None]
    missing_commands = [c for c in COMMANDS if shutil.which(c) is None]
    missing = {{"modules": ",".join(missing_modules), "commands": ",".join(missing_commands)}}
    return {{"ok": 1.0, **missing}}
'''


@dataclass
class Needs:
    """What a folder needs of its image, and which file asks for it."""

    modules: dict[str, str] = field(default_factory=dict)
    commands: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.modules or self.commands)


def _optional(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """An import under ``try: … except ImportError``, or under ``if __name__ == "__main__"``."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.Try) and child in parent.body:
            for handler in parent.handlers:
                names = handler.type
                text = ast.unparse(names) if names is not None else "Exception"
                if any(n in text for n in ("ImportError", "ModuleNotFoundError", "Exception")):
                    return True
        if isinstance(parent, ast.If) and "__main__" in ast.unparse(parent.test):
            return True
        child, parent = parent, parents.get(parent)
    return False


def _in_scope(node: ast.AST, parents: Mapping[ast.AST, ast.AST], entries: Iterable[str]) -> bool:
    """At module level, or inside one of the ``entries`` functions."""
    parent = parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            return (
                parent.name in entries
                and parents.get(parent) is not None
                and isinstance(parents.get(parent), ast.Module)
            )
        if isinstance(parent, ast.ClassDef | ast.Lambda):
            return False
        parent = parents.get(parent)
    return True


def _scan(path: Path, needs: Needs, local: set[str], entries: Iterable[str]) -> None:
    try:
        tree = ast.parse(path.read_text())
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return  # the evaluation says what is wrong with it
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module.split(".")[0]]
        elif isinstance(node, ast.Call) and _spawn(node):
            command = _command(node)
            if command and not _optional(node, parents):
                needs.commands.setdefault(command, path.name)
            continue
        if not names or _optional(node, parents) or not _in_scope(node, parents, entries):
            continue
        for name in names:
            if name not in sys.stdlib_module_names and name not in local and name != "__future__":
                needs.modules.setdefault(name, path.name)


def _local_imports(path: Path, local: set[str]) -> set[str]:
    try:
        tree = ast.parse(path.read_text())
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names & local


def _spawn(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in _SPAWN


def _command(node: ast.Call) -> str | None:
    if not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.List | ast.Tuple) and first.elts:
        first = first.elts[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        word = first.value.split()[0] if first.value.split() else ""
        # A command name, not a path into the folder or a shell snippet.
        if word and "/" not in word and word.replace("-", "").replace("+", "").isalnum():
            return word
    return None


def needs_of(folder: Path, evaluator: Path, seed: Path | None, language: str) -> Needs:
    """What the folder's evaluator (and the folder's modules it imports, transitively) and its
    seed need (see the module docstring); the folder's other scripts are not looked at."""
    home = evaluator.parent
    local = {p.stem for p in home.glob("*.py")} | {p.stem for p in folder.glob("*.py")}
    local |= {p.name for p in folder.iterdir() if p.is_dir()}
    needs = Needs()
    queue, seen = [evaluator], set()
    while queue:
        path = queue.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        _scan(path, needs, local, _ENTRY)
        queue += [home / f"{name}.py" for name in _local_imports(path, local)]
    if seed is not None and seed.suffix == ".py" and seed.is_file():
        _scan(seed, needs, local, ())
    for command in TOOLCHAINS.get(language, ())[:1]:
        needs.commands.setdefault(command, f"{language} programs")
    return needs


def probe_job(needs: Needs, image: str, labels: Mapping[str, str] | None = None) -> Job:
    """The compat job that looks up every need in ``image``."""
    source = _PROBE.format(modules=sorted(needs.modules), commands=sorted(needs.commands))
    return Job(
        mode="compat",
        function="evaluate",
        candidate="",
        files={f"{PROBE_MODULE}.py": source.encode()},
        evaluator_module=PROBE_MODULE,
        candidate_filename="program.py",
        limits=Limits(wall_s=60.0),
        image=image,
        labels=dict(labels or {}),
    )


def read_probe(
    artifacts: Mapping[str, Any], metrics: Mapping[str, Any]
) -> tuple[list[str], list[str]]:
    """(missing modules, missing commands) from the probe's answer."""
    if metrics.get("ok") != 1.0:
        raise ValueError(f"the preflight probe did not answer: {json.dumps(dict(artifacts))[:300]}")
    modules = [m for m in str(artifacts.get("modules", "")).split(",") if m]
    commands = [c for c in str(artifacts.get("commands", "")).split(",") if c]
    return modules, commands


def missing_message(
    task: str, image: str, needs: Needs, modules: list[str], commands: list[str], language: str
) -> str:
    """One line: what is missing, who needs it, how to add it."""
    parts = []
    if modules:
        named = ", ".join(f"{m} ({needs.modules[m]})" for m in modules)
        pip = " ".join(sorted({_PACKAGES.get(m, m) for m in modules}))
        parts.append(
            f"Python package(s) {named}: list them in the folder's requirements.txt (e.g. "
            f"{pip}; installed from the host into a derived image on first use)"
        )
    if commands:
        named = ", ".join(f"{c} ({needs.commands[c]})" for c in commands)
        toolchain = TOOLCHAIN_IMAGES.get(language)
        how = (
            f"build the {language} image with `galapagos sandbox build {toolchain}` (folders in "
            f"{language} then run in it)"
            if toolchain
            else "no shipped image has it; see docs/sandbox.md, 'Another language or tool'"
        )
        parts.append(f"command(s) {named}: {how}")
    return (
        f"task {task} needs what sandbox image {image} lacks — " + "; ".join(parts) + ". No LLM "
        "call was made (docs/sandbox.md)"
    )


# -- what an image was found to have --------------------------------------------------------------


def cache_dir() -> Path:
    """Where probes that found nothing missing are remembered: ``$GALAPAGOS_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/galapagos`` (``~/.cache/galapagos``), ``/preflight``."""
    root = os.environ.get("GALAPAGOS_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = os.path.join(base, "galapagos")
    return Path(root) / "preflight"


def probe_key(image_id: str, needs: Needs) -> str:
    """The probe's answer depends only on the image's content (its id, a digest) and the
    needs asked about."""
    data = json.dumps([image_id, sorted(needs.modules), sorted(needs.commands)])
    return hashlib.sha256(data.encode()).hexdigest()


def known_complete(key: str) -> bool:
    """An earlier probe of the same image content found every one of the same needs."""
    return (cache_dir() / key).is_file()


def remember_complete(key: str) -> None:
    """Remember that nothing was missing (never a missing piece: that is looked up again)."""
    folder = cache_dir()
    with contextlib.suppress(OSError):  # a read-only home only costs the next run a probe
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}"
        tmp.write_text("complete\n")
        os.replace(tmp, folder / key)
