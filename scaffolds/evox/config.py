"""Config sections of the EvoX scaffold (defaults in ``config.yaml``, strict like every section).

``selection_policy`` configures how the evolved strategy runs (its sandbox and limits);
``memory`` configures the strategy history: when to switch and how rewrites are vetted
(Valid(·) limits).  Fault injection is no setting: tests build the offline model with it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from harness.core.validation import StrictModel
from scaffolds.evox.factory import ContainerLimits
from scaffolds.evox.valid import ValidConfig

__all__ = [
    "ContainerSection",
    "EvolvedSamplerConfig",
    "EvoxPopulationConfig",
    "StrategyHistoryConfig",
    "ValidSection",
]


class EvoxPopulationConfig(StrictModel):
    #: Must stay ``None``: the deployed strategy keeps its own copy of every program it was
    #: given and has no remove operation, so an evicted program would come back from it.
    capacity: int | None = None

    @field_validator("capacity")
    @classmethod
    def _keep_all(cls, value: int | None) -> int | None:
        if value is not None:
            raise ValueError(
                "EvoX keeps every program: the evolved strategy holds its own population and "
                "cannot be told of evictions; leave population.capacity null"
            )
        return value


class ContainerSection(StrictModel):
    memory_mb: int = Field(512, ge=64, le=65536)
    cpus: float = Field(1.0, gt=0, le=64)
    pids: int = Field(32, ge=8, le=4096)
    tmpfs_mb: int = Field(16, ge=1, le=1024)
    #: Deadline of one add/sample call; a strategy that misses it is killed and replaced.
    call_timeout_s: float = Field(5.0, gt=0, le=600)
    #: Deadline of start-up and of one migration batch (256 programs).
    bulk_timeout_s: float = Field(60.0, gt=0, le=3600)

    def limits(self) -> ContainerLimits:
        return ContainerLimits(
            memory_mb=self.memory_mb,
            cpus=self.cpus,
            pids=self.pids,
            tmpfs_mb=self.tmpfs_mb,
            call_s=self.call_timeout_s,
            bulk_s=self.bulk_timeout_s,
        )


class EvolvedSamplerConfig(StrictModel):
    #: Context programs asked of the strategy per iteration (the reference's default 4).
    num_context_programs: int = Field(4, ge=0, le=64)
    #: ``auto`` follows ``evaluator.sandbox``; ``local`` is UNSAFE for LLM-written strategies.
    sandbox: Literal["auto", "docker", "local"] = "auto"
    #: Sandbox image (a key of sandbox_images/images.yaml) the strategy server runs in.
    image: str = "python-eval"
    container: ContainerSection = ContainerSection()


class ValidSection(StrictModel):
    stress_programs: int = Field(1000, ge=10, le=100_000)
    stress_every: int = Field(10, ge=1)
    max_call_s: float = Field(1.0, gt=0)
    max_rss_mb: int = Field(256, ge=16)
    #: The whole validation of one strategy (sandbox start and removal included).
    deadline_s: float = Field(180.0, ge=10)
    container: ContainerSection = ContainerSection(call_timeout_s=10.0)

    def config(self, seed: int) -> ValidConfig:
        return ValidConfig(
            stress_programs=self.stress_programs,
            stress_every=self.stress_every,
            max_call_s=self.max_call_s,
            max_rss_mb=self.max_rss_mb,
            deadline_s=self.deadline_s,
            limits=self.container.limits(),
            seed=seed,
        )


class StrategyHistoryConfig(StrictModel):
    #: Stagnant steps before a rewrite; ``null`` = max(1, int(0.1 · max_iterations)).
    switch_interval: int | None = Field(None, ge=1)
    #: A step counts as progress only when the best score gains more than this (absolute).
    improvement_threshold: float = Field(0.01, ge=0)
    #: Meta-LLM attempts per rewrite (failures are fed back), as the reference's 3.
    generation_retries: int = Field(3, ge=1, le=10)
    #: Other strategies shown next to the argmax-J one.
    meta_context: int = Field(2, ge=0, le=10)
    #: Let strategies attach DIVERGE/REFINE labels (texts below, or the built-in defaults).
    use_labels: bool = True
    diverge_label: str | None = None
    refine_label: str | None = None
    #: At run start, the guide model writes problem-specific examples into the DIVERGE/REFINE
    #: texts (once; kept on resume); the generic texts when it fails or this is off.
    auto_generate_variation_operators: bool = True
    #: Per strategy rewrite, the guide model reads the population statistics, summarises the
    #: problem and how earlier strategies changed the population (three calls); off: numbers.
    use_llm_stats_insight: bool = True
    prefilter: bool = True
    validation: ValidSection = ValidSection()
