"""The hub's policy refuses what it must and nothing else: every shipped scaffold, on a shipped
task and on an OpenEvolve-format folder, passes the check at launch and again when its stored
config is resumed; the same stored configs with one operator key changed are refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.core.registry import list_scaffolds
from harness.runs import plan_resume, plan_run
from harness.service.policy import HubPolicy, PolicyRefused
from harness.service.settings import ServiceSettings
from harness.service.tasks import TaskRoots
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import stored_run

ROOT = Path(__file__).resolve().parents[2]


def _policy(tmp_path: Path, root: Path | None = None) -> HubPolicy:
    roots = (root,) if root else ()
    return HubPolicy(ServiceSettings(task_roots=roots), TaskRoots(roots), tmp_path / "hub")


@pytest.mark.parametrize("scaffold", list_scaffolds())
def test_every_shipped_scaffold_passes_at_launch_and_on_resume(
    tmp_path: Path, scaffold: str
) -> None:
    policy = _policy(tmp_path)
    plan = plan_run(scaffold=scaffold, task="function_minimization", iterations=2)
    policy.check_plan(plan)
    store = tmp_path / "s.sqlite"
    SQLiteStore(store).close()
    run_id = stored_run(store, plan.task.path, scaffold=scaffold)
    with_store = SQLiteStore(store)
    try:
        policy.check_plan(plan_resume(with_store, run_id))
    finally:
        with_store.close()


def test_a_compat_folder_with_its_own_search_keys_passes(tmp_path: Path) -> None:
    """An OpenEvolve folder (its config.yaml sets islands, timeouts, the system message): the
    task's own layer is part of the hub's baseline, not a client's change."""
    root = tmp_path / "roots"
    fixture = ROOT / "tests" / "openevolve" / "fixtures" / "function_minimization"
    shutil.copytree(fixture, root / "oe_min")
    policy = _policy(tmp_path, root)
    for scaffold in ("openevolve", "topk"):
        plan = plan_run(scaffold=scaffold, task=str(root / "oe_min"), iterations=1)
        assert plan.task.folder_config is not None
        policy.check_plan(plan)


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("evaluator.canaries=false", "evaluator.canaries"),
        ("evaluator.pool_size=16", "evaluator.pool_size"),
        ("prompt.template_dir=/tmp", "prompt.template_dir"),
        ("llm.api_key_env=HOME", "llm.api_key_env"),
    ],
)
def test_a_stored_config_with_an_operator_key_changed_is_refused(
    tmp_path: Path, override: str, key: str
) -> None:
    store = tmp_path / "s.sqlite"
    SQLiteStore(store).close()
    plan = plan_run(scaffold="topk", task="function_minimization", iterations=1)
    run_id = stored_run(store, plan.task.path, overrides=(override,))
    with_store = SQLiteStore(store)
    try:
        with pytest.raises(PolicyRefused, match=key.replace(".", r"\.")):
            _policy(tmp_path).check_plan(plan_resume(with_store, run_id))
    finally:
        with_store.close()
