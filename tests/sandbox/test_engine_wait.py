"""The engine wait every sandbox user shares: one wait per outage, announced once, cleaned up
after once, bounded by its deadline; the probe is scripted (the real engine is stopped and
started in tests/chaos)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from harness.core.errors import EngineUnavailable, SandboxError
from harness.sandbox.engine import EngineWaiter


class Engine:
    """A scripted engine probe: answers while ``answering``; counts the pings."""

    def __init__(self, answering: bool = True) -> None:
        self.answering = answering
        self.pings = 0

    def __call__(self) -> bool:
        self.pings += 1
        return self.answering


def waiter(
    engine: Engine, deadline_s: float = 30.0, config_key: str = "evaluator.engine_wait_s"
) -> tuple[EngineWaiter, tuple[list[str], list[float]]]:
    """A waiter polling every 10 ms; what it said, and the waits its clean-up ran after."""
    said: list[str] = []
    returns: list[float] = []
    made = EngineWaiter(
        engine,
        deadline_s,
        on_return=returns.append,
        notice=said.append,
        poll_s=0.01,
        config_key=config_key,
    )
    return made, (said, returns)


def in_threads(
    n: int, target: Callable[[], float]
) -> tuple[list[threading.Thread], list[float | Exception]]:
    outcomes: list[float | Exception] = []

    def run() -> None:
        try:
            outcomes.append(target())
        except Exception as exc:  # the outcome under test
            outcomes.append(exc)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for thread in threads:
        thread.start()
    return threads, outcomes


def test_an_answering_engine_is_not_waited_for() -> None:
    engine = Engine()
    made, (said, returns) = waiter(engine)
    assert made.wait("why") == 0.0
    assert said == [] and returns == [] and made.outages == 0


def test_concurrent_callers_share_one_wait_announced_once_and_cleaned_up_once() -> None:
    engine = Engine(answering=False)
    made, (said, returns) = waiter(engine)
    entered: list[int] = []

    def call() -> float:
        entered.append(1)
        return made.wait("the container vanished")

    threads, outcomes = in_threads(5, call)
    deadline = time.monotonic() + 30
    while len(entered) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    seen = engine.pings
    while engine.pings < seen + 10 and time.monotonic() < deadline:
        time.sleep(0.01)  # every caller is inside and the leader keeps polling
    engine.answering = True
    for thread in threads:
        thread.join(10)
    assert len(outcomes) == 5 and all(isinstance(o, float) and o > 0 for o in outcomes)
    assert len(said) == 2, said
    assert "not answering (the container vanished)" in said[0]
    assert "waiting up to 30 s" in said[0] and "evaluator.engine_wait_s" in said[0]
    assert said[1].startswith("the Docker engine is back after")
    assert len(returns) == 1 and made.outages == 1


def test_every_caller_gets_the_deadline_verdict_with_the_remedy() -> None:
    made, (said, returns) = waiter(Engine(answering=False), deadline_s=0.2)
    threads, outcomes = in_threads(3, lambda: made.wait("no socket"))
    for thread in threads:
        thread.join(10)
    assert len(outcomes) == 3 and all(isinstance(o, EngineUnavailable) for o in outcomes)
    message = str(outcomes[0])
    assert "stayed unreachable for 0.2 s (no socket)" in message
    assert "bash scripts/docker-engine.sh" in message and "galapagos resume" in message
    assert "\n" not in message
    assert returns == [] and made.outages == 0


def test_a_new_outage_after_one_ended_is_waited_for_again() -> None:
    engine = Engine(answering=False)
    made, (said, returns) = waiter(engine)
    for _ in range(2):
        engine.answering = False
        threads, outcomes = in_threads(1, lambda: made.wait())
        time.sleep(0.05)
        engine.answering = True
        threads[0].join(10)
        assert isinstance(outcomes[0], float)
    assert made.outages == 2 and len(returns) == 2 and len(said) == 4


def test_close_ends_a_wait_in_progress() -> None:
    made, _ = waiter(Engine(answering=False), deadline_s=600)
    threads, outcomes = in_threads(2, lambda: made.wait())
    time.sleep(0.05)
    made.close()
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()
    assert len(outcomes) == 2 and all(isinstance(o, SandboxError) for o in outcomes)
    assert not any(isinstance(o, EngineUnavailable) for o in outcomes)


def test_the_deadline_key_is_named_as_configured() -> None:
    made, (said, _) = waiter(Engine(answering=False), deadline_s=0.05, config_key="bench.x")
    with pytest.raises(EngineUnavailable):
        made.wait()
    assert "(bench.x)" in said[0]
