"""The strategy server's operations, without I/O: load a module, make instances, add, sample.

A :class:`Session` holds one strategy module and any number of named instances of its
``EvolvedProgramDatabase`` (Valid(·) uses several; a deployed strategy uses one).  Every
operation takes and returns plain data.  Exceptions raised by strategy code propagate to the
caller (the server turns them into error responses); :class:`LoadError` means the module
cannot be a strategy at all.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import random
import resource
import sys
import time
import types
import typing
from typing import Any

from galapagos_strategy.records import metric_issues, normalize_answer, to_program

__all__ = ["LoadError", "Session"]

MODULE_NAME = "evolved_strategy"


class LoadError(Exception):
    """The module failed to import (``stage="load"``) or is not a strategy (``"structure"``)."""

    def __init__(self, message: str, stage: str = "structure") -> None:
        super().__init__(message)
        self.stage = stage


def _alias_config_module() -> None:
    """Make ``skydiscover.config`` importable when the image carries only our shims."""
    if "skydiscover.config" in sys.modules or importlib.util.find_spec("skydiscover") is None:
        return
    if importlib.util.find_spec("skydiscover.config") is not None:
        return
    import skydiscover  # noqa: PLC0415
    from skydiscover.search import database_config  # noqa: PLC0415

    alias = types.ModuleType("skydiscover.config", "Compat alias of database_config.")
    alias.DatabaseConfig = database_config.DatabaseConfig  # type: ignore[attr-defined]
    alias.EvoxDatabaseConfig = database_config.EvoxDatabaseConfig  # type: ignore[attr-defined]
    sys.modules["skydiscover.config"] = alias
    skydiscover.config = alias  # type: ignore[attr-defined]


def _structure(db_cls: Any, prog_cls: Any, base_db: type, base_prog: type) -> None:
    if not (isinstance(db_cls, type) and db_cls.__name__ == "EvolvedProgramDatabase"):
        raise LoadError("the module must define a class named EvolvedProgramDatabase")
    if not issubclass(db_cls, base_db):
        raise LoadError(
            "EvolvedProgramDatabase must inherit from ProgramDatabase "
            "(from skydiscover.search.base_database)"
        )
    if not (isinstance(prog_cls, type) and issubclass(prog_cls, base_prog)):
        raise LoadError(
            "the module must define EvolvedProgram, a subclass of Program "
            "(from skydiscover.search.base_database)"
        )
    abstract = sorted(getattr(db_cls, "__abstractmethods__", ()))
    if abstract:
        raise LoadError(
            "EvolvedProgramDatabase leaves abstract method(s) of ProgramDatabase undefined: "
            + ", ".join(f"{name}()" for name in abstract)
            + "; define them in the class (sample(self, num_context_programs=4, **kwargs) "
            "and add(self, program, iteration=None, **kwargs))"
        )
    sample: Any = getattr(db_cls, "sample", None)
    params = list(inspect.signature(sample).parameters.values())
    # ``num_inspirations`` is the name SkyDiscover 0.1.0 (PyPI) used; ``sample`` is called with
    # the count as its first positional argument, so strategies of either release work.
    if len(params) < 2 or params[1].name not in ("num_context_programs", "num_inspirations"):
        raise LoadError(
            "sample() must have the signature sample(self, num_context_programs="
            "4, **kwargs); its second parameter must be named num_context_programs"
        )
    annotation = inspect.signature(sample).return_annotation
    if typing.get_origin(annotation) is tuple and len(typing.get_args(annotation)) != 2:
        raise LoadError(
            f"sample() is annotated to return {annotation}; it must return a "
            "2-tuple Tuple[Dict[str, Program], Dict[str, List[Program]]]"
        )


class Session:
    def __init__(self) -> None:
        _alias_config_module()
        from skydiscover.search import base_database  # noqa: PLC0415

        self.base = base_database
        self.module: types.ModuleType | None = None
        self.seed = 0
        self.labels: dict[str, str] = {"diverge": "", "refine": ""}
        self.instances: dict[str, Any] = {}
        #: handle → id → metrics as sent by the host (what "unchanged" is checked against).
        self.originals: dict[str, dict[str, dict[str, Any]]] = {}

    # -- lifecycle ---------------------------------------------------------------------------
    def load(self, source: str, labels: dict[str, str], seed: int) -> dict[str, Any]:
        self.labels = {
            "diverge": str(labels.get("diverge", "")),
            "refine": str(labels.get("refine", "")),
        }
        self.reseed(seed)
        module = types.ModuleType(MODULE_NAME)
        module.__file__ = "strategy.py"
        sys.modules[MODULE_NAME] = module  # dataclasses resolve annotations through sys.modules
        try:
            exec(compile(source, "strategy.py", "exec"), module.__dict__)  # noqa: S102
        except Exception as exc:  # noqa: BLE001 - any failure of the module is a load failure
            raise LoadError(
                f"the module failed to load: {type(exc).__name__}: {exc}", stage="load"
            ) from exc
        db_cls = module.__dict__.get("EvolvedProgramDatabase")
        _structure(
            db_cls,
            module.__dict__.get("EvolvedProgram"),
            self.base.ProgramDatabase,
            self.base.Program,
        )
        self.module = module
        return {"classes": ["EvolvedProgramDatabase", "EvolvedProgram"]}

    def reseed(self, seed: int) -> None:
        self.seed = seed
        random.seed(seed)
        np = sys.modules.get("numpy")
        if np is None and importlib.util.find_spec("numpy") is not None:
            import numpy as np  # noqa: PLC0415
        if np is not None:
            np.random.seed(seed % (1 << 32))

    def new(self, handle: str, name: str, config: str) -> None:
        if self.module is None:
            raise LoadError("no strategy is loaded", stage="load")
        from skydiscover.search import database_config  # noqa: PLC0415

        cls = self.module.EvolvedProgramDatabase
        cfg = (
            database_config.EvoxDatabaseConfig(random_seed=self.seed)
            if config == "evox"
            else database_config.DatabaseConfig(random_seed=self.seed)
        )
        db = cls(name, cfg)
        db.DIVERGE_LABEL = self.labels["diverge"]
        db.REFINE_LABEL = self.labels["refine"]
        original_add = db.add

        def add(program: Any, iteration: int | None = None, **kwargs: Any) -> Any:
            out = original_add(program, iteration=iteration, **kwargs)
            db._update_best_program(program)  # best tracking even if the strategy forgets
            return out

        db.add = add
        self.instances[handle] = db
        self.originals[handle] = {}

    def drop(self, handle: str) -> None:
        self.instances.pop(handle, None)
        self.originals.pop(handle, None)

    def _db(self, handle: str) -> Any:
        try:
            return self.instances[handle]
        except KeyError:
            raise LoadError(f"no strategy instance {handle!r}", stage="load") from None

    # -- the strategy's two methods ----------------------------------------------------------
    def add(
        self, handle: str, records: list[dict[str, Any]], *, base: bool = False, check: bool = False
    ) -> dict[str, Any]:
        db = self._db(handle)
        assert self.module is not None
        cls = self.base.Program if base else self.module.EvolvedProgram
        ids, issues, elapsed = [], [], 0.0
        for record in records:
            program = to_program(record, cls, self.labels)
            pid = program.id
            original = copy.deepcopy(record.get("metrics") or {})
            self.originals[handle][pid] = original
            started = time.perf_counter()
            returned = db.add(program, iteration=record.get("iteration_found"))
            elapsed = max(elapsed, time.perf_counter() - started)
            if record.get("iteration_found") == 0 and db.initial_program_id is None:
                db.initial_program_id = pid
                db.initial_program_score = self.base.get_score(original)
            ids.append(returned if isinstance(returned, str) else repr(returned)[:200])
            if check:
                issues += self._add_issues(db, pid, returned, original, program)
        return {"ids": ids, "issues": issues, "elapsed": elapsed}

    def _add_issues(
        self, db: Any, pid: str, returned: Any, original: dict[str, Any], program: Any
    ) -> list[str]:
        if not (isinstance(returned, str) and returned == pid):
            return [f"add() returned {returned!r}, expected the program's id {pid!r}"]
        stored = db.get(pid)
        if stored is None:
            return [f"get({pid!r}) found nothing right after add()"]
        return metric_issues(original, stored.metrics, "add() (stored)", pid) + metric_issues(
            original, program.metrics, "add() (original object)", pid
        )

    def sample(self, handle: str, k: int | None, *, check: bool = False) -> dict[str, Any]:
        db = self._db(handle)
        started = time.perf_counter()
        result = db.sample(k)
        elapsed = time.perf_counter() - started
        parent, context, objects = normalize_answer(result, self.base.Program, self.labels)
        issues = self._sample_issues(handle, db, objects) if check else []
        return {
            "parent": list(parent),
            "context": [list(c) for c in context],
            "issues": issues,
            "elapsed": elapsed,
        }

    def _sample_issues(self, handle: str, db: Any, objects: list[Any]) -> list[str]:
        issues = []
        for i, obj in enumerate(objects):
            role = "parent" if i == 0 else "context program"
            pid = obj.id
            if pid not in db.programs:
                issues.append(f"the {role} {pid!r} is not in self.programs")
            stored = db.get(pid)
            if stored is None:
                issues.append(f"get({pid!r}) finds no {role} with that id")
            original = self.originals[handle].get(pid)
            if original is None:
                issues.append(f"the {role} {pid!r} was never added (fabricated program)")
                continue
            issues += metric_issues(original, obj.metrics, f"sample() ({role} returned)", pid)
            if stored is not None:
                issues += metric_issues(original, stored.metrics, f"sample() ({role} stored)", pid)
        return issues

    # -- probes ------------------------------------------------------------------------------
    def count(self, handle: str) -> int:
        return len(self._db(handle).programs)

    def get(self, handle: str, pid: str) -> dict[str, Any]:
        db = self._db(handle)
        stored = db.get(pid)
        original = self.originals.get(handle, {}).get(pid)
        issues = (
            []
            if stored is None or original is None
            else metric_issues(original, stored.metrics, "get()", pid)
        )
        return {"found": stored is not None, "issues": issues}

    @staticmethod
    def stats() -> dict[str, Any]:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        peak = usage.ru_maxrss
        # ru_maxrss survives exec (a child of a big parent starts "big"); VmHWM is this image's.
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = int(line.split()[1])
        except (OSError, ValueError):
            pass
        return {"max_rss_kb": peak, "cpu_s": usage.ru_utime + usage.ru_stime}
