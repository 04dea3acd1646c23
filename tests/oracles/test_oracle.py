"""The oracle machinery itself: a missing reference fails under CI, the freeze pins the two
references, and every golden recipe has its trace from HEAD 59643ef."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.oracles.reference import GOLDEN, HERE, require_oracle

HEAD = "59643ef8e7aa9ae071e86028d9ba56849fad0d80"


def test_a_missing_oracle_skips_locally_and_fails_under_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "bin" / "python"
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="oracle-venv.sh"):
        require_oracle(missing)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="oracle-venv.sh"):
        require_oracle(missing)


def test_the_freeze_pins_both_references_and_every_dependency() -> None:
    lines = [
        line.strip()
        for line in (HERE / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert all("==" in line for line in lines), [line for line in lines if "==" not in line]
    assert "skydiscover==0.1.0" in lines
    assert "openevolve==0.4.0" in lines


def test_every_recipe_has_a_golden_trace_from_head() -> None:
    tree = ast.parse((GOLDEN / "recipes.py").read_text())
    registry = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "RECIPES" for t in node.targets)
    )
    assert isinstance(registry, ast.Dict)
    recipes = {key.value for key in registry.keys if isinstance(key, ast.Constant)}
    traces = {path.stem: json.loads(path.read_text()) for path in GOLDEN.glob("*.json")}
    assert set(traces) == recipes
    for name, trace in traces.items():
        assert trace["commit"] == HEAD, name
        assert trace["recipe"] == name
        assert "Pinned because" in trace["why"], name
