"""Commands that only read the run store refuse a path that does not exist (a mistyped --store)
instead of creating an empty store there."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli._output import open_existing_store
from harness.core.errors import ConfigError
from tests.cli.test_catalog import galapagos


def test_a_missing_store_is_bad_input_and_nothing_is_created(tmp_path: Path) -> None:
    missing = tmp_path / "nodir" / "x.sqlite"
    with pytest.raises(ConfigError, match="no run store at .*x.sqlite; runs are created by"):
        open_existing_store(missing)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_store_opens(tmp_path: Path) -> None:
    from harness.store.sqlite import SQLiteStore

    SQLiteStore(tmp_path / "s.sqlite").close()
    store = open_existing_store(tmp_path / "s.sqlite")
    assert store.list_runs() == []
    store.close()


@pytest.mark.parametrize("command", [["show", "abc"], ["export", "abc"]])
def test_reading_commands_refuse_a_mistyped_store(tmp_path: Path, command: list[str]) -> None:
    missing = tmp_path / "nodir" / "x.sqlite"
    proc = galapagos(*command, "--store", str(missing))
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == f"error: no run store at {missing}; runs are created by galapagos run"
    )
    assert not (tmp_path / "nodir").exists()


def test_runs_on_a_fresh_machine_lists_nothing(tmp_path: Path, monkeypatch) -> None:
    """No store named and none at the default place yet: an empty list, not an error."""
    monkeypatch.delenv("GALAPAGOS_STORE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from typer.testing import CliRunner

    from harness.cli import app

    result = CliRunner().invoke(app, ["runs", "--json"])
    assert result.exit_code == 0 and result.stdout.strip() == "[]"
    assert list(tmp_path.iterdir()) == []
