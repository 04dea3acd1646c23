"""The strategy server's operations, without I/O: load a module, make instances, add, sample.

A :class:`Session` holds one strategy module and any number of named instances of its
``EvolvedProgramDatabase`` (Valid(·) uses several; a deployed strategy uses one).  Every
operation takes and returns plain data.  Exceptions raised by strategy code propagate to the
caller (the server turns them into error responses); :class:`LoadError` means the module
cannot be a strategy at all.

This code shares its process with the strategy, so it judges nothing: it reports what it
observes (ids, the metrics the strategy holds) and the host compares them with its own copies
of what it sent; time, memory and threads are read by the host from the kernel.
"""

from __future__ import annotations

import importlib.util
import inspect
import random
import sys
import types
import typing
from typing import Any

from galapagos_strategy.records import normalize_answer, plain_metrics, to_program

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
            # dont_inherit: not this module's ``from __future__ import annotations``.
            code = compile(source, "strategy.py", "exec", dont_inherit=True)
            exec(code, module.__dict__)  # noqa: S102
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

    def drop(self, handle: str) -> None:
        self.instances.pop(handle, None)

    def _db(self, handle: str) -> Any:
        try:
            return self.instances[handle]
        except KeyError:
            raise LoadError(f"no strategy instance {handle!r}", stage="load") from None

    # -- the strategy's two methods ----------------------------------------------------------
    def add(
        self, handle: str, records: list[dict[str, Any]], *, base: bool = False, check: bool = False
    ) -> dict[str, Any]:
        """Add each record; ``ids`` are what ``add`` returned.  With ``check``, also what the
        strategy holds afterwards (``observed``: the stored program's and the given object's
        metrics) — plain observations, judged on the host against its own copies."""
        db = self._db(handle)
        assert self.module is not None
        cls = self.base.Program if base else self.module.EvolvedProgram
        ids: list[str] = []
        observed: list[dict[str, Any]] = []
        for record in records:
            program = to_program(record, cls, self.labels)
            pid = program.id
            returned = db.add(program, iteration=record.get("iteration_found"))
            if record.get("iteration_found") == 0 and db.initial_program_id is None:
                db.initial_program_id = pid
                db.initial_program_score = self.base.get_score(record.get("metrics") or {})
            ids.append(returned if isinstance(returned, str) else repr(returned)[:200])
            if check:
                stored = db.get(pid)
                observed.append(
                    {
                        "stored": None if stored is None else plain_metrics(stored.metrics),
                        "given": plain_metrics(program.metrics),
                    }
                )
        return {"ids": ids, "observed": observed} if check else {"ids": ids}

    def sample(self, handle: str, k: int | None, *, check: bool = False) -> dict[str, Any]:
        """The answer as label tokens and ids; with ``check``, what each returned program
        looks like (``observed``: returned and stored metrics, membership of self.programs)."""
        db = self._db(handle)
        result = db.sample(k)
        parent, context, objects = normalize_answer(result, self.base.Program, self.labels)
        answer: dict[str, Any] = {"parent": list(parent), "context": [list(c) for c in context]}
        if check:
            answer["observed"] = [self._observe(db, obj) for obj in objects]
        return answer

    def _observe(self, db: Any, obj: Any) -> dict[str, Any]:
        stored = db.get(obj.id)
        return {
            "id": obj.id,
            "member": obj.id in db.programs,
            "returned": plain_metrics(obj.metrics),
            "stored": None if stored is None else plain_metrics(stored.metrics),
        }

    # -- probes ------------------------------------------------------------------------------
    def count(self, handle: str) -> int:
        return len(self._db(handle).programs)

    def get(self, handle: str, pid: str) -> dict[str, Any]:
        stored = self._db(handle).get(pid)
        return {
            "found": stored is not None,
            "metrics": None if stored is None else plain_metrics(stored.metrics),
        }
