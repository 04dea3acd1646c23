"""An exported run as a reproducible bundle, and its rerun (``galapagos run --from EXPORT``).

``galapagos export RUN`` writes the run as OpenEvolve/SkyDiscover users expect it
(:func:`harness.report.export_run`: the best program, every program, the lineage, the events)
plus what it takes to run it again elsewhere:

- ``task/<folder>/``: a copy of the task folder, when its files still hash to the run's
  ``task_hash`` (else only the hash and where the task came from are recorded, and said);
- ``scaffold.yaml``: the composed scaffold (six blocks, loop, block sections), usable as
  ``galapagos run -s scaffold.yaml``; ``config.yaml``: the resolved run config (seed, budget,
  endpoint and models, never a key);
- ``bundle.json``: what the folder is (run, task hash and origin, seed, versions, model),
  ``usage.json``: calls, tokens and cost by model, purpose and iteration, with the prices;
- ``README.md``: what the folder is and the one command that reruns it.

:func:`plan_rerun` turns such a folder back into a run plan: the same config, seed and task
files (checked against the recorded hash), so with the offline model the rerun makes the same
programs, from any directory, into any store.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from harness.core.config import COMPONENT_SECTIONS, read_yaml
from harness.core.config_layers import Layers, explain, file_layer
from harness.core.errors import ConfigError, HarnessError, TaskError
from harness.core.registry import ScaffoldSpec, validate_stored
from harness.core.store import RunRecord
from harness.evaluation.task import load_task
from harness.llm.config import resolve_llm_config
from harness.provenance import run_llm, versions
from harness.report import export_run, llm_usage
from harness.runs import RunPlan, describe_run
from harness.store.protocols import RunReader

__all__ = ["BUNDLE", "export_bundle", "is_bundle", "plan_rerun"]

BUNDLE = "bundle.json"
FORMAT = "galapagos-export"
#: A task folder larger than this is not copied (its hash and origin are recorded).
MAX_TASK_COPY_BYTES = 64 << 20


def is_bundle(path: str | Path) -> bool:
    folder = Path(path)
    return folder.is_dir() and (folder / BUNDLE).is_file()


def export_bundle(
    store: RunReader, run: RunRecord, out: Path, *, with_prompts: bool = False
) -> dict[str, Any]:
    """Write ``run`` to ``out`` as a reproducible bundle (see the module docstring); returns
    what was written (paths relative to ``out``) and a ``note`` when the task was not copied."""
    made = versions()
    task = _task_info(run)
    summary = {
        **describe_run(store, run),
        "task_hash": run.task_hash,
        "task_origin": task["origin"],
        "versions": made,
    }
    written = export_run(store, run, out, with_prompts=with_prompts, summary=summary)
    files: list[str] = written["files"]
    if task.pop("source", None) is not None:
        files += _copy_task(Path(task["origin"]), out, task)

    def write(rel: str, text: str) -> None:
        (out / rel).write_text(text)
        files.append(rel)

    write("scaffold.yaml", yaml.safe_dump(_composition(run), sort_keys=False))
    write("usage.json", _dump(llm_usage(store, run)))
    manifest = {
        "format": FORMAT,
        "format_version": 1,
        "run_id": run.id,
        "exported_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "scaffold": run.scaffold,
        "task": task,
        "seed": run.seed,
        "iterations": run.max_iterations,
        "status": summary["status"],
        "best_program": written["best_program"],
        "best_score": run.best_score,
        "llm": run_llm(run.config),
        "made_by": [e.payload for e in store.events(run.id, ["run_started", "run_resumed"])],
        "exported_by": made,
        "files": {
            "config": "config.yaml",
            "composition": "scaffold.yaml",
            "usage": "usage.json",
            "best_program": next((f for f in files if f.startswith("best/best_program.")), None),
        },
    }
    write(BUNDLE, _dump(manifest))
    write("README.md", _readme(run, manifest, summary))
    return {**written, "files": files, "note": task["note"]}


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, default=str, allow_nan=False) + "\n"


def _task_info(run: RunRecord) -> dict[str, Any]:
    """The task's name, hash and origin, and (``source``) whether its folder can be copied."""
    origin = run.task_path if run.task_path and Path(run.task_path).is_dir() else run.task
    info: dict[str, Any] = {
        "name": run.task,
        "hash": run.task_hash,
        "origin": run.task_path or run.task,
        "folder": None,
        "note": "",
    }
    try:
        task = load_task(origin, config_file=run.config.get("task_config"))
    except HarnessError as exc:
        info["note"] = f"the task is not here any more ({exc}); only its hash is recorded"
        return info
    if run.task_hash and task.digest() != run.task_hash:
        info["note"] = (
            f"the task's files at {task.path} changed since the run (hash {task.digest()}, "
            f"the run's {run.task_hash}); only the run's hash is recorded"
        )
        return info
    size = sum(p.stat().st_size for p in task.path.rglob("*") if p.is_file())
    if size > MAX_TASK_COPY_BYTES:
        info["note"] = f"the task folder holds {size >> 20} MiB; only its hash is recorded"
        return info
    info["origin"] = str(task.path)
    info["source"] = str(task.path)
    return info


def _copy_task(folder: Path, out: Path, info: dict[str, Any]) -> list[str]:
    dest = out / "task" / folder.name
    shutil.copytree(folder, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".git"))
    info["folder"] = f"task/{folder.name}"
    return [str(p.relative_to(out)) for p in sorted(dest.rglob("*")) if p.is_file()]


def _composition(run: RunRecord) -> dict[str, Any]:
    """The run's scaffold as a composition file: its blocks, loop and block sections."""
    config = run.config
    out: dict[str, Any] = {"name": run.scaffold, "blocks": dict(config.get("blocks") or {})}
    if config.get("loop"):
        out["loop"] = config["loop"]
    for section in COMPONENT_SECTIONS:
        if config.get(section):
            out[section] = config[section]
    return out


def _readme(run: RunRecord, manifest: Mapping[str, Any], summary: Mapping[str, Any]) -> str:
    llm = manifest["llm"]
    task = manifest["task"]
    model = (
        "the offline mutation model (not an LLM: a deterministic operator)"
        if llm["provider"] == "offline"
        else f"{llm['label']} via {llm['provider']} ({llm['endpoint']})"
    )
    version = manifest["exported_by"]
    commit = f", commit {version['galapagos_commit']}" if version.get("galapagos_commit") else ""
    if task["folder"]:
        how = (
            f"`{task['folder']}/` holds the task files (hash `{task['hash']}`, from "
            f"`{task['origin']}`)."
        )
        rerun = (
            "From this folder:\n\n```bash\ngalapagos run --from .\n```\n\n"
            "(or `galapagos run --from PATH/TO/THIS/FOLDER` from anywhere; add `--store FILE` "
            "to choose the run store). It runs the same scaffold, config and seed on these task "
            "files, checked against the recorded hash."
        )
    else:
        how = (
            f"The task files are not included: {task['note']}. The run used task "
            f"`{task['name']}` with hash `{task['hash']}` from `{task['origin']}`."
        )
        rerun = (
            "With the task folder at hand (its files must hash to the value above):\n\n"
            f"```bash\ngalapagos run -s scaffold.yaml -c config.yaml -t PATH/TO/{task['name']}\n```"
        )
    same = (
        "With the offline model the rerun makes the same programs as this run."
        if llm["provider"] == "offline"
        else "The rerun calls the endpoint again (set its key in the environment): language "
        "models are not reproducible, so expect other programs. `--api-base`/`--model` point "
        "it elsewhere."
    )
    score = "-" if run.best_score is None else f"{run.best_score:.6g}"
    about = (
        f"Exported {manifest['exported_at']} by Galapagos {version['galapagos']}{commit} "
        f"(Python {version['python']}). Model: {model}. Seed {run.seed}, {run.iterations_done} "
        f"of {run.max_iterations} iterations, status {summary['status']}; best program "
        f"`{manifest['best_program']}` with score {score}; {run.tokens} tokens, cost "
        f"{run.cost:.4f} USD."
    )
    return f"""# Galapagos run {run.id}: {run.scaffold} on {run.task}

{about}

{how}

## Rerun it

{rerun}

{same}

## What is here

| file | what |
|---|---|
| `best/` | the best program, and its metrics, parent and ancestry |
| `programs/` | every stored program and `index.json` |
| `lineage.json`, `events.jsonl` | the ancestry tree; every decision of the run |
| `config.yaml` | the resolved run config (seed, budget, endpoint and models; never a key) |
| `scaffold.yaml` | the composed scaffold: `galapagos run -s scaffold.yaml` |
| `run.json`, `usage.json` | the run's summary; LLM calls, tokens and cost by model and iteration |
| `bundle.json` | this bundle: task hash and origin, seed, versions, model |
"""


def plan_rerun(
    folder: Path,
    *,
    sandbox: str | None = None,
    api_base: str | None = None,
    models: tuple[str, ...] = (),
) -> RunPlan:
    """The run an export folder records, to run again: its config and seed, its task files
    (checked against the recorded hash); optionally another sandbox or endpoint."""
    manifest = _manifest(folder)
    data = read_yaml(folder / "config.yaml")
    if sandbox is not None:
        data["evaluator"] = {**(data.get("evaluator") or {}), "sandbox": sandbox}
    config = validate_stored(data, source=str(folder / "config.yaml"))
    notes = [f"rerunning run {manifest['run_id']} from the export {folder}"]
    if api_base is not None or models:
        resolved = resolve_llm_config(config.llm, api_base=api_base, models=models)
        config = config.model_copy(update={"llm": resolved.as_config()})
        notes += list(resolved.notes)
    task_info = manifest.get("task") or {}
    if not task_info.get("folder"):
        raise ConfigError(
            f"the export {folder} holds no task files ({task_info.get('note') or 'none copied'}); "
            f"rerun it with the task: galapagos run -s {folder / 'scaffold.yaml'} -c "
            f"{folder / 'config.yaml'} -t PATH/TO/{task_info.get('name', 'TASK')}"
        )
    task = load_task(folder / task_info["folder"], config_file=config.task_config)
    if task_info.get("hash") and task.digest() != task_info["hash"]:
        raise TaskError(
            f"the task files in {folder / task_info['folder']} hash to {task.digest()}, not to "
            f"the exported run's {task_info['hash']}: they were changed; a rerun would not be "
            "the same run"
        )
    spec = ScaffoldSpec(name=config.scaffold, path=folder / "scaffold.yaml")
    layers = Layers([file_layer("config", folder / "config.yaml")])
    derived = {"evaluator.sandbox": "sandbox"} if sandbox is not None else {}
    if api_base is not None or models:
        derived["llm"] = "api_base/models"
    sources = explain(config, layers, derived, default=f"{folder / 'config.yaml'}")
    return RunPlan(spec, config, task, notes=tuple(notes), sources=tuple(sources))


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / BUNDLE
    if not path.is_file():
        raise ConfigError(
            f"{folder} is not an export folder (no {BUNDLE}); galapagos export RUN writes one"
        )
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a readable bundle manifest ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ConfigError(f"{path}: not a Galapagos export manifest (format {FORMAT!r})")
    return manifest
