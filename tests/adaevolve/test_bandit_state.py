"""The island bandit's checkpoint equals ``dataclasses.asdict`` (written by hand: it is taken
every iteration) and restores an equal bandit."""

from __future__ import annotations

from dataclasses import asdict

from scaffolds.adaevolve.adaptive import IslandBandit


def test_bandit_state_is_asdict_and_round_trips() -> None:
    bandit = IslandBandit()
    for _ in range(3):
        bandit.add_island(0.1, 0.5)
    bandit.record(1, 0.7)
    bandit.record(0, 0.2)
    bandit.receive(2, 0.9)
    state = bandit.state_dict()
    assert state == asdict(bandit)
    assert list(state) == list(asdict(bandit))
    assert [list(s) for s in state["states"]] == [list(s) for s in asdict(bandit)["states"]]
    assert state["visits"] is not bandit.visits  # a fresh list, as a checkpoint needs
    assert IslandBandit.from_state(state) == bandit
