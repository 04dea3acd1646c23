"""The Python API page's examples run as written: the three-line search in Docker with the
offline model, then the blocks that read its result and make scaffold and task objects (the
page's other blocks need a real endpoint or a long run)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "python-api.md"
#: How many of the page's python blocks run here, in order, in one namespace.
RUN = 3


def _python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), re.M | re.S)


@pytest.mark.docker
def test_the_python_api_page_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = _python_blocks()
    assert len(blocks) > RUN and "galapagos.run(" in blocks[0]
    assert len(blocks[0].strip().splitlines()) == 4  # import, blank line, run, print
    monkeypatch.setenv("GALAPAGOS_STORE", str(tmp_path / "store.sqlite"))
    namespace: dict[str, object] = {}
    for block in blocks[:RUN]:
        exec(compile(block, str(PAGE), "exec"), namespace)  # the page's own code
    result = namespace["result"]
    from galapagos import Result

    assert isinstance(result, Result)
    assert (result.status, result.iterations_done) == ("completed", 5)
    assert result.record.config["evaluator"]["sandbox"] == "docker"
    assert result.best is not None and result.best_score == result.best.score
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"{result.best_score} {result.best.id}"
    assert (tmp_path / "store.sqlite").is_file()
