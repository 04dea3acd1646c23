"""WarmPool bookkeeping with a fake starter (the Docker behaviour is in test_pool.py)."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from harness.core.errors import SandboxError
from harness.sandbox.pool import PoolKey, WarmPool
from harness.sandbox.protocol import Limits

KEY = PoolKey("img", (), Limits())
OTHER = PoolKey("img", ("numpy",), Limits())


class Fake:
    def __init__(self, fail_first: int = 0) -> None:
        self.ids = itertools.count()
        self.discarded: list[int] = []
        self.fail_first = fail_first
        self.lock = threading.Lock()

    def start(self, key: PoolKey) -> int:
        with self.lock:
            if self.fail_first > 0:
                self.fail_first -= 1
                raise SandboxError("engine hiccup")
            return next(self.ids)

    def discard(self, item: int) -> None:
        self.discarded.append(item)


def wait_for(predicate, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.01)


def test_a_wanted_key_is_filled_to_size_and_items_are_handed_out_once() -> None:
    fake = Fake()
    pool = WarmPool(fake.start, fake.discard, size=3, creators=2, refill_delay_s=0.0)
    try:
        assert pool.take(KEY) is None  # nothing yet: the caller starts one cold
        time.sleep(0.3)
        assert pool.idle() == 0  # a first, unannounced job may be a one-off: no pool for it
        assert pool.take(KEY) is None  # asked again: from now on the key is kept filled
        wait_for(lambda: pool.idle() == 3)
        taken = [pool.take(KEY) for _ in range(3)]
        assert len(set(taken)) == 3 and None not in taken
        wait_for(lambda: pool.idle() == 3)  # refilled with new items
        taken.append(pool.take(KEY))
        assert len(set(taken)) == 4
        assert pool.take(OTHER) is None  # keys are separate
    finally:
        pool.close()
    # Idle items are discarded at close; handed-out items belong to whoever took them.
    assert pool.idle() == 0 and len(fake.discarded) >= 2
    assert not set(fake.discarded) & set(taken)


@pytest.mark.slow
def test_start_failures_are_retried() -> None:
    fake = Fake(fail_first=2)
    pool = WarmPool(fake.start, fake.discard, size=1, creators=1, refill_delay_s=0.0)
    try:
        pool.want(KEY)
        wait_for(lambda: pool.idle() == 1)
    finally:
        pool.close()


def test_keys_nobody_wants_any_more_are_drained() -> None:
    fake = Fake()
    pool = WarmPool(fake.start, fake.discard, size=2, creators=1, idle_ttl_s=0.3)
    try:
        pool.want(KEY)
        wait_for(lambda: pool.idle() == 2)
        wait_for(lambda: pool.idle() == 0, timeout=5.0)
        assert len(fake.discarded) == 2
    finally:
        pool.close()


def test_a_flush_drops_every_ready_item_and_the_pool_refills_with_new_ones() -> None:
    """After an engine outage the warm containers are dead: none is handed out again."""
    fake = Fake()
    pool = WarmPool(fake.start, fake.discard, size=2, creators=1, refill_delay_s=0.0)
    try:
        pool.want(KEY)
        wait_for(lambda: pool.idle() == 2)
        pool.flush()
        assert len(fake.discarded) == 2
        wait_for(lambda: pool.idle() == 2)
        fresh = [pool.take(KEY), pool.take(KEY)]
        assert None not in fresh and not set(fresh) & set(fake.discarded)
    finally:
        pool.close()


def test_a_keys_demand_starts_containers_for_all_its_jobs_before_the_first() -> None:
    """Zygote-style pool (one spare before a key's first job): a run that says how many jobs it
    runs at once has containers for all of them (and one more) before it takes the first, so
    its first wave of parallel iterations does not wait for starts; another key keeps one."""
    fake = Fake()
    pool = WarmPool(
        fake.start, fake.discard, size=8, creators=2, spare=1, reused=True, refill_delay_s=0.0
    )
    try:
        pool.want(KEY)
        pool.want(OTHER)
        wait_for(lambda: pool.idle() == 2)
        time.sleep(0.2)
        assert pool.idle() == 2  # one spare per key until demand raises it
        pool.want(KEY, demand=4)
        wait_for(lambda: pool.idle() == 6)  # KEY: 4 jobs + 1 spare; OTHER: its one
        time.sleep(0.2)
        assert pool.idle() == 6
        taken = [pool.take(KEY) for _ in range(5)]
        assert None not in taken and pool.take(OTHER) is not None
    finally:
        pool.close()


def test_a_keys_demand_is_capped_by_the_pool_size_and_dropped_with_the_key() -> None:
    fake = Fake()
    pool = WarmPool(
        fake.start, fake.discard, size=3, creators=2, spare=1, reused=True, refill_delay_s=0.0
    )
    try:
        pool.want(KEY, demand=16)
        wait_for(lambda: pool.idle() == 3)
        time.sleep(0.2)
        assert pool.idle() == 3
        assert pool.drop(lambda key: False) == 3
        pool.want(KEY)  # wanted again, by a run that did not say: one spare, not 16
        wait_for(lambda: pool.idle() == 1)
        assert pool.take(KEY) is not None  # one busy: one more ready (a stale 16 wants 3)
        wait_for(lambda: pool.idle() == 1)
        time.sleep(0.2)
        assert pool.idle() == 1
    finally:
        pool.close()
