"""AdaEvolve's archive and policy against SkyDiscover's ``AdaEvolveDatabase``, run for real.

Live: ``skydiscover==0.1.0`` (its database equals HEAD's in scalar mode, audit §3.1) on
scripted runs with seeded RNGs — the same islands, modes, parents and contexts at every
sample, and the same next island, island count and archive members after every
``end_iteration`` (spawns, migrations and crowding included).
"""

from __future__ import annotations

import pytest

from tests.adaevolve.helpers import drive
from tests.oracles import cases
from tests.oracles.reference import Reference, require_oracle

LIVE_SEEDS = (7, 8, 9)
LIVE_COUNT = 20


@pytest.fixture(scope="module")
def oracle() -> Reference:
    return require_oracle()


@pytest.mark.parametrize("seed", LIVE_SEEDS)
def test_every_step_matches_skydiscover_0_1_0(oracle: Reference, seed: int) -> None:
    scripts = cases.adaevolve_scripts(seed, LIVE_COUNT)
    expected = oracle.probe("drive_adaevolve", scripts)
    spawned = copied = 0
    for n, (script, reference) in enumerate(zip(scripts, expected, strict=True)):
        ours = drive(script)
        for i, (mine, theirs) in enumerate(zip(ours, reference, strict=True), 1):
            assert mine == theirs, f"script {n} (seed {seed}), iteration {i}"
        spawned += ours[-1][2] > script["num_islands"]
        last = ours[-1][3]
        copied += any("." in m and not m.startswith("p0.") for isl in last for m in isl)
    assert spawned > 0 and copied > 0  # the scripts exercise spawning and migration
