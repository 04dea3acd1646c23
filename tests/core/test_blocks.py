"""Blocks wired by type: what a block's parameters ask for, how ``check`` refuses a composition
it cannot wire (one line naming the blocks), and how ``assemble`` builds in dependency order."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol

import pytest

from harness.components import BLOCKS as COMPONENTS
from harness.components.memory import NullMemory
from harness.components.population import InMemoryPopulation, InMemoryPopulationConfig
from harness.components.prompt import DefaultPromptConfig
from harness.components.proposer import DiffProposerConfig
from harness.core.block import Step
from harness.core.blocks import BlockSpec, BuildEnv, assemble, block, build_order, check, index
from harness.core.config import Composition, LoopConfig, RunConfig
from harness.core.errors import ConfigError
from harness.core.memory import BaseMemory
from harness.core.population import PopulationView
from harness.core.records import Program, Selection, TaskInfo
from harness.core.rng import make_rng
from harness.core.selection import BaseSelectionPolicy
from harness.core.validation import StrictModel
from tests.fakes import ScoreEvaluator


class Islands(InMemoryPopulation):
    islands = 2


@block("islands", "A population with islands.")
def islands(config: InMemoryPopulationConfig) -> Islands:
    return Islands()


class Counts(Protocol):
    """What a policy may need of a memory, by structure."""

    def counts(self) -> Sequence[int]: ...


@block("counter", "A memory that counts.")
class Counter(BaseMemory):
    def counts(self) -> Sequence[int]:
        return [1, 2]


class IslandPolicyConfig(StrictModel):
    k: int = 2


@block("island_policy", "Needs islands; takes a counting memory when there is one.")
class IslandPolicy(BaseSelectionPolicy):
    unsupported_loop = {"admit_failed_evaluations": "it never sees failed children"}

    def __init__(
        self,
        config: IslandPolicyConfig,
        *,
        rng: random.Random,
        population: Islands,
        memory: Counts | None,
        task: TaskInfo,
    ) -> None:
        super().__init__(rng)
        self.config = config
        self.population = population
        self.memory = memory
        self.task = task

    async def select(self, population: PopulationView, step: Step) -> Selection:
        return Selection(parent=population.best())


@block("policy_needing_memory", "Needs the memory below, which needs it.")
class Circular(IslandPolicy):
    def __init__(self, *, rng: random.Random, population: Islands, memory: NeedsCircular) -> None:
        super().__init__(
            IslandPolicyConfig(), rng=rng, population=population, memory=None, task=TaskInfo()
        )


@block("needs_policy", "Needs the policy above.")
class NeedsCircular(BaseMemory):
    def __init__(self, *, selection_policy: Circular) -> None:
        self.policy = selection_policy


CATALOG = index([*COMPONENTS, islands, Counter, IslandPolicy])


def composition(**chosen: str) -> Composition:
    blocks = {
        "population": "islands",
        "selection_policy": "island_policy",
        "prompt": "default",
        "proposer": "diff",
        "memory": "counter",
    }
    return Composition(**{**blocks, **chosen})


def built(**chosen: str) -> Any:
    config = RunConfig(
        scaffold="t",
        blocks=composition(**chosen),
        population=InMemoryPopulationConfig(),
        selection_policy=IslandPolicyConfig(),
        prompt=DefaultPromptConfig(),
        proposer=DiffProposerConfig(),
    )
    env = BuildEnv(seed=3, evaluator=ScoreEvaluator(), task=TaskInfo(name="toy"))
    return assemble("t", config, env, CATALOG)


def test_a_block_says_what_it_needs_with_its_parameters() -> None:
    spec = CATALOG["selection_policy"]["island_policy"]
    assert spec.slot == "selection_policy" and spec.builds is IslandPolicy
    assert spec.config is IslandPolicyConfig and spec.takes_config
    assert [(n.slot, n.kind, n.optional) for n in spec.needs] == [
        ("population", Islands, False),
        ("memory", Counts, True),
    ]
    assert spec.resources == ("rng", "task")
    assert spec.requires == {"population": ["Islands"]}
    described = spec.describe()
    assert described["optional"] == {"memory": ["Counts"]}
    assert described["unsupported_loop"] == {
        "admit_failed_evaluations": "it never sees failed children"
    }
    # A function block's slot is that of the type it returns.
    assert CATALOG["population"]["islands"].builds is Islands


def test_the_assembler_gives_each_block_what_it_asked_for() -> None:
    scaffold = built()
    policy = scaffold.selection
    assert isinstance(policy, IslandPolicy)
    assert policy.population is scaffold.population and policy.memory is scaffold.memory
    assert policy.task.name == "toy" and policy.config.k == 2
    assert policy.rng.random() == make_rng(3, "selection_policy").random()  # its own stream


def test_an_optional_block_of_another_type_is_none() -> None:
    assert built(memory="none").selection.memory is None


def test_a_required_block_of_the_wrong_type_is_one_line_naming_both() -> None:
    with pytest.raises(ConfigError) as refused:
        check(composition(population="keep_all"), CATALOG)
    assert str(refused.value) == (
        "incompatible blocks: selection_policy 'island_policy' needs a population block that "
        "is a Islands, which population 'keep_all' (InMemoryPopulation) is not; use one of: "
        "islands"
    )


def test_a_protocol_is_met_by_structure() -> None:
    spec = CATALOG["selection_policy"]["island_policy"]
    counts = next(n for n in spec.needs if n.slot == "memory")
    assert counts.met_by(Counter) and not counts.met_by(NullMemory)


def test_blocks_that_need_each_other_are_refused() -> None:
    catalog = index([*COMPONENTS, islands, Circular, NeedsCircular])
    with pytest.raises(ConfigError) as refused:
        check(composition(selection_policy="policy_needing_memory", memory="needs_policy"), catalog)
    assert str(refused.value) == (
        "incompatible blocks: these blocks need each other: memory 'needs_policy' needs "
        "selection_policy, selection_policy 'policy_needing_memory' needs memory"
    )


def test_blocks_are_built_after_the_blocks_they_get() -> None:
    specs = check(composition(), CATALOG)
    order = build_order(specs)
    assert order.index("proposer") < order.index("prompt")  # the prompt reads its answer kind
    assert order.index("memory") < order.index("selection_policy")
    assert order.index("population") < order.index("selection_policy")


def test_a_loop_option_a_block_cannot_run_with_is_refused_with_the_reason() -> None:
    check(composition(), CATALOG, LoopConfig(resample_each_attempt=True))
    with pytest.raises(ConfigError) as refused:
        check(composition(), CATALOG, LoopConfig(admit_failed_evaluations=True))
    assert str(refused.value) == (
        "incompatible loop: selection_policy 'island_policy' cannot run with "
        "loop.admit_failed_evaluations: it never sees failed children"
    )


def test_a_parameter_the_assembler_cannot_give_is_named_when_the_catalogue_is_read() -> None:
    @block("bad", "Asks for something nobody gives.")
    class Bad(BaseMemory):
        def __init__(self, *, database: object) -> None:
            self.database = database

    with pytest.raises(
        TypeError, match="block 'bad': parameter 'database' is not config, another slot"
    ):
        BlockSpec.of(Bad)
    with pytest.raises(TypeError, match="is not a named block"):
        BlockSpec.of(NullMemory.__mro__[1])


def test_two_blocks_of_one_slot_cannot_share_a_name() -> None:
    @block("counter", "Another counter.")
    class Other(BaseMemory):
        pass

    with pytest.raises(ConfigError, match="two memory blocks are named 'counter'"):
        index([Counter, Other])


def test_a_subclass_is_not_named_by_its_base() -> None:
    class Unnamed(Counter):
        pass

    with pytest.raises(TypeError, match="is not a named block"):
        BlockSpec.of(Unnamed)
    assert Program  # the records module stays importable without the registry
