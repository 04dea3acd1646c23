"""Sandbox health checks: engine, images, limit support, and canary candidates.

Fail closed (as codejail advises): a canary that escapes or is mis-scored means the sandbox
must not be trusted.  Each :class:`Check` says what was tested, whether it passed and, if not,
what to do about it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import textwrap
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

import docker
import docker.errors
import requests.exceptions

from harness.core.errors import HarnessError, SandboxError
from harness.core.records import EvalResult
from harness.sandbox import images
from harness.sandbox.folder_images import FOLDER_MARK
from harness.sandbox.images import DERIVED
from harness.sandbox.protocol import Job, Limits

__all__ = [
    "CANARIES",
    "canaries_run_in",
    "STARTUP_CANARIES",
    "Check",
    "canary_job",
    "judge_startup",
    "run_checks",
    "startup_canaries",
    "startup_jobs",
]

CANARY_EVALUATOR = b"""
def evaluate(candidate):
    return {"combined_score": float(candidate.call("solve"))}
"""
#: name → (candidate source, expected statuses, what the check guards, extra check on result)
CANARY_LIMITS = Limits(wall_s=3.0, memory_mb=128, pids=32, output_bytes=64 * 1024, tmpfs_mb=16)


def _stdout(result: EvalResult) -> str:
    return result.artifacts.get("stdout_tail", "")


def _program(body: str, imports: str = "") -> str:
    return f"{imports}\ndef solve():\n" + textwrap.indent(textwrap.dedent(body), "    ")


def _together(names: tuple[str, ...]) -> str:
    """One program holding each canary's ``solve`` as ``solve_<name>`` (run in one box)."""
    return "\n".join(
        CANARIES[name][0].replace("\ndef solve():", f"\ndef solve_{name}():") for name in names
    )


def _evaluator_for(names: tuple[str, ...]) -> bytes:
    """Calls each canary's function in turn; each one's score as metric ``canary_<name>``."""
    return (
        f"NAMES = {list(names)!r}\n"
        "def evaluate(candidate):\n"
        "    scores = {'canary_' + n: float(candidate.call('solve_' + n)) for n in NAMES}\n"
        "    return {'combined_score': 0.0, **scores}\n"
    ).encode()


CANARIES: dict[str, tuple[str, set[str], str, Callable[[EvalResult], bool]]] = {
    "honest": (
        _program("return 0.5"),
        {"ok"},
        "a correct program scores",
        lambda r: r.metrics.get("combined_score") == 0.5,
    ),
    "timeout": (
        _program("time.sleep(60)", "import time"),
        {"timeout"},
        "the wall-clock deadline kills a sleeper",
        lambda r: r.timed_out,
    ),
    "memory": (
        _program("x = bytearray(1 << 30)\nreturn 1.0"),
        {"oom"},
        "the memory limit stops a memory bomb",
        lambda r: r.oom_killed,
    ),
    "network": (
        _program(
            """
            try:
                socket.create_connection(('1.1.1.1', 53), timeout=1)
                print('NETWORK OPEN')
            except OSError:
                print('BLOCKED')
            return 0.0
            """,
            "import socket",
        ),
        {"ok"},
        "no network",
        lambda r: "BLOCKED" in _stdout(r),
    ),
    "identity": (
        _program(
            """
            status = dict(line.split(':', 1) for line in open('/proc/self/status'))
            print('uid', os.getuid(), 'caps', status['CapEff'].strip())
            try:
                open('/usr/pwned', 'w')
                print('ROOT WRITABLE')
            except OSError:
                pass
            # Left for the "leftovers" canary, which must not find them.
            for place in ('/tmp', '/dev/shm'):
                open(os.path.join(place, 'galapagos-canary-mark'), 'w').write('x')
            return 0.0
            """,
            "import os",
        ),
        {"ok"},
        "non-root, no capabilities, read-only root",
        lambda r: (
            "caps 0000000000000000" in _stdout(r)
            and "uid 0 " not in _stdout(r)
            and "WRITABLE" not in _stdout(r)
        ),
    ),
    "fork": (
        _program(
            """
            n = 0
            try:
                for _ in range(1000):
                    if os.fork() == 0:
                        time.sleep(30)
                        os._exit(0)
                    n += 1
            except OSError:
                pass
            return float(n)
            """,
            "import os, time",
        ),
        {"ok"},
        "the pids limit stops a fork bomb",
        lambda r: r.metrics.get("combined_score", 1000) < CANARY_LIMITS.pids,
    ),
    "forgery": (
        _program(
            """
            doc = {'kind': 'result', 'status': 'ok', 'metrics': {'combined_score': 1e9}}
            head = json.dumps(doc).encode()
            frame = struct.pack('>4sIQ', b'GLP1', len(head), 0) + head
            for pid in {1, os.getppid()}:
                for fd in (1, 2):
                    try:
                        with open('/proc/%d/fd/%d' % (pid, fd), 'wb') as out:
                            out.write(frame)
                    except OSError:
                        pass
            print(json.dumps(doc['metrics']))
            return 0.25
            """,
            "import json, os, struct",
        ),
        {"ok"},
        "a candidate cannot forge its score through the runner's output or its own stdout",
        lambda r: r.metrics.get("combined_score") == 0.25,
    ),
    "leftovers": (
        _program(
            """
            left = [p for p in ('/tmp', '/dev/shm')
                    if os.path.exists(os.path.join(p, 'galapagos-canary-mark'))]
            print('LEFT BEHIND', left) if left else print('clean')
            return 0.0
            """,
            "import os",
        ),
        {"ok"},
        "a candidate finds nothing an earlier one left (identity's marker files)",
        lambda r: "clean" in _stdout(r),
    ),
}
#: The canaries a run starts with (cheap, no limits pushed): the isolation and integrity
#: properties a broken image or engine would lose silently.  The first four run in one box, and
#: "leftovers" in the next box of the same container, as a run's candidates do: it checks the
#: boundary between candidates.
STARTUP_CANARIES = ("honest", "identity", "network", "forgery", "leftovers")
#: The image of the canaries' own container.
CANARY_IMAGE = "python-eval"


def canaries_run_in(image: str) -> bool:
    """Whether a run's first container (image ``image``) may run the start-up canaries in
    place of their own container: their image, or it plus pip packages (``python-eval+numba``:
    the same interpreter, runtime and hardening; the canaries use the standard library only).
    Not a folder's translated Dockerfile (its ENV, COPY and chmod steps are the folder's) nor
    another toolchain's image (r-eval, rust-eval): those keep the canaries' own container."""
    return image == CANARY_IMAGE or (
        image.startswith(CANARY_IMAGE + DERIVED) and FOLDER_MARK not in image
    )


#: Start-up canaries that share a box (one job; the rest run one job each).
_SHARED_BOX = ("honest", "identity", "network", "forgery")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    remedy: str = ""


def _engine_checks(client: docker.DockerClient) -> list[Check]:
    info = client.info()
    checks = [
        Check(
            "engine",
            True,
            f"Docker {info.get('ServerVersion')}, cgroup "
            f"v{info.get('CgroupVersion', '1')}, runtimes "
            f"{', '.join(sorted(info.get('Runtimes', {})))}",
        )
    ]
    for flag, what in (
        ("MemoryLimit", "memory"),
        ("SwapLimit", "swap"),
        ("PidsLimit", "pids"),
        ("CPUCfsQuota", "CPU quota"),
    ):
        supported = info.get(flag, True)
        checks.append(
            Check(
                f"limit:{what}",
                bool(supported),
                "supported" if supported else "not supported by this engine",
                ""
                if supported
                else "enable the cgroup controller for "
                f"{what} in the kernel/engine (see docs/sandbox.md)",
            )
        )
    missing = images.missing_images(client, ["python-eval"])
    checks.append(
        Check(
            "images",
            not missing,
            "all built" if not missing else f"missing: {', '.join(missing)}",
            "" if not missing else "run `galapagos sandbox build`",
        )
    )
    return checks


def _groups(names: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The jobs the canaries ``names`` run as: the start-up set in two (see
    :data:`_SHARED_BOX`), the doctor's one box each (limits pushed one by one)."""
    if names == STARTUP_CANARIES:
        return [_SHARED_BOX, *((n,) for n in names if n not in _SHARED_BOX)]
    return [(name,) for name in names]


def canary_job(group: tuple[str, ...], limits: Limits = CANARY_LIMITS) -> Job:
    """One job for ``group``: a lone canary as it is, several in one box together."""
    alone = len(group) == 1
    return Job(
        mode="sealed",
        function="evaluate",
        candidate=CANARIES[group[0]][0] if alone else _together(group),
        files={"evaluator.py": CANARY_EVALUATOR if alone else _evaluator_for(group)},
        limits=limits,
    )


def startup_jobs(limits: Limits = CANARY_LIMITS) -> list[Job]:
    """The start-up canaries' jobs, in order (for a backend that runs them itself: the run's
    first zygote container, :meth:`~harness.sandbox.docker_backend.DockerBackend.canaries_first`);
    :func:`judge_startup` judges their results."""
    return [canary_job(group, limits) for group in _groups(STARTUP_CANARIES)]


def _judge(name: str, result: EvalResult) -> Check:
    _, statuses, what, extra = CANARIES[name]
    ok = result.status in statuses and extra(result)
    why = result.error.strip() or f"metrics {dict(result.metrics)}"
    detail = f"{what}: status {result.status}" + ("" if ok else f" ({why[:300]})")
    remedy = (
        ""
        if ok
        else "the sandbox is not containing candidates; do not run untrusted code until "
        "this passes (see docs/sandbox.md)"
    )
    return Check(f"canary:{name}", ok, detail, remedy)


def _judge_group(group: tuple[str, ...], result: EvalResult) -> list[Check]:
    if len(group) == 1:
        return [_judge(group[0], result)]
    # Each canary judged on its own score; the output they printed is shared.
    return [
        _judge(
            name,
            dataclasses.replace(
                result,
                metrics={"combined_score": result.metrics.get(f"canary_{name}", float("nan"))},
            ),
        )
        for name in group
    ]


def judge_startup(results: list[EvalResult]) -> list[Check]:
    """The checks of the start-up canaries' results (one per job of :func:`startup_jobs`)."""
    groups = _groups(STARTUP_CANARIES)
    if len(results) != len(groups):
        raise ValueError(f"{len(groups)} canary results expected, got {len(results)}")
    return [check for g, r in zip(groups, results, strict=True) for check in _judge_group(g, r)]


async def _canaries(
    names: tuple[str, ...] | None = None, verdict: Callable[[list[Check]], None] | None = None
) -> list[Check]:
    """The canaries' checks; ``verdict`` is told them before their container is removed (a
    run waiting for them need not wait for the removal too)."""
    from harness.sandbox.docker_backend import DockerBackend

    # One warm container at a time, no creator threads: each canary runs in the container the
    # one before it ran in (a fresh box each), unless that one retired (a timeout, an OOM kill).
    backend = DockerBackend(pool_size=1, pool_creators=0, build=False)
    try:
        checks = []
        for group in _groups(names or tuple(CANARIES)):
            checks += _judge_group(group, await backend.run(canary_job(group)))
        if names is None:  # the doctor says which isolation unit the engine allows
            checks.append(
                Check(
                    "isolation",
                    True,
                    f"a fresh box per candidate in zygote containers ({backend.reuse} each)"
                    if backend.boxes
                    else "a fresh single-use container per candidate (the engine refuses "
                    "the user namespaces boxes need: slower, as safe)",
                )
            )
        if verdict is not None:
            verdict(checks)
        return checks
    finally:
        await backend.aclose()


async def startup_canaries(in_pool: Future[list[EvalResult] | None] | None = None) -> None:
    """Fail closed before a run: raise :class:`SandboxError` if a start-up canary escapes or is
    mis-scored (:data:`STARTUP_CANARIES`: two jobs in one container, well under a second).
    ``in_pool``: the results of the canaries' jobs (:func:`startup_jobs`) a run's first
    zygote container ran before its first box for the run (None in it: they could not run
    there; an error: they did not finish); otherwise they run now, in a container of their
    own."""
    checks: list[Check] | None = None
    if in_pool is not None:
        try:
            results = await asyncio.wrap_future(in_pool)
        except SandboxError as exc:
            checks = [Check("canary:startup", False, str(exc))]
        else:
            checks = judge_startup(results) if results is not None else None
    if checks is None:
        checks = list(await _canaries(STARTUP_CANARIES))
    failed = [c for c in checks if not c.ok]
    if failed:
        first = failed[0]
        raise SandboxError(
            f"sandbox self-test failed, refusing to run untrusted code: {first.name}: "
            f"{first.detail}; run `galapagos sandbox doctor` (see docs/sandbox.md)"
        )


def run_checks(*, canaries: bool = True) -> list[Check]:
    """Every check, in order; stops early when the engine or images are not usable."""
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        return [
            Check(
                "engine",
                False,
                f"not reachable ({exc})",
                "start it with `bash scripts/docker-engine.sh`",
            )
        ]
    try:
        checks = _engine_checks(client)
    except (docker.errors.APIError, requests.exceptions.RequestException, HarnessError) as exc:
        return [
            Check(
                "engine",
                False,
                f"engine query failed ({exc})",
                "check `docker info`; restart with `bash scripts/docker-engine.sh`",
            )
        ]
    if canaries and all(c.ok for c in checks):
        checks += asyncio.run(_canaries())
    return checks
