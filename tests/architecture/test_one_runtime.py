"""One place creates containers: EvoX reaches its sandboxes only through sandbox sessions."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_evox_imports_neither_docker_nor_the_sandbox_internals() -> None:
    offenders = []
    for top in ("scaffolds/evox",):
        for path in (ROOT / top).rglob("*.py"):
            for name in _imports(path):
                if name.split(".")[0] == "docker" or "harness.sandbox._runtime" in name:
                    offenders.append(f"{path.relative_to(ROOT)} imports {name}")
                if name.startswith("harness.sandbox.") and name.split(".")[2] in (
                    "docker_backend",
                    "hardening",
                    "attach",
                    "ownership",
                    "engine",
                ):
                    offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_only_the_sandbox_package_creates_containers() -> None:
    """``containers.create``/``run`` appear in harness/sandbox only (the Runtime's backends)."""
    offenders = []
    for path in (ROOT / "harness").rglob("*.py"):
        if path.is_relative_to(ROOT / "harness" / "sandbox"):
            continue
        text = path.read_text()
        if "containers.create(" in text or "containers.run(" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
