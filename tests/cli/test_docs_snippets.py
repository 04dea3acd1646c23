"""The Python helpers the docs show work as shown: the ``check_task`` example of
docs/writing-a-task.md runs and returns a ``CheckReport``."""

from __future__ import annotations

import re

import pytest

from harness.evaluation.check import CheckReport
from tests.cli.helpers import ROOT

MARK = "<!-- check_task example: run by tests/cli/test_docs_snippets.py -->"


def _example() -> str:
    doc = (ROOT / "docs" / "writing-a-task.md").read_text()
    after = doc[doc.index(MARK) + len(MARK) :]
    match = re.match(r"\s*```python\n(.*?)```", after, re.DOTALL)
    assert match, "the check_task example must follow its marker"
    return match.group(1)


@pytest.mark.docker
@pytest.mark.slow
def test_the_check_task_example_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # its task path is relative to the checkout, as in the docs
    namespace: dict[str, object] = {"print": lambda *args: None}
    exec(compile(_example(), "writing-a-task.md", "exec"), namespace)
    report = namespace["report"]
    assert isinstance(report, CheckReport) and report.ok
