"""The four end-to-end GRPO test cases, as data: one runner (test_e2e.py) is parametrized over them."""

from __future__ import annotations

import dataclasses

from rlcheck.e2e.slime_log import milestones
from rlcheck.e2e.watch import Milestone


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class TestCase:
    __test__ = False  # data, not a pytest class

    name: str
    recipe_id: str
    hardware: tuple[str, ...]
    """Profiles the case fits (the recipe renders there)."""
    gpus: int
    nodes: str
    """GPU nodes, as the hardware shapes them (e.g. '2 x 8' or '16 x 4')."""
    milestones: tuple[Milestone, ...]
    loops: int = 3
    """GRPO loops of the smoke run (seed 000 verified with 3)."""
    est_time_s: int
    needs_reward_service: bool = False
    min_scored_requests: int = 0
    """remote-rm: reward requests that must be scored, all 200 (seed 000: 250+)."""


EIGHT_GPU = ("h100", "h200", "b200", "b300")
CASES = (
    TestCase(name="qwen3-4b-colocated", recipe_id="qwen3-4b-colocated", hardware=(*EIGHT_GPU, "gb200", "gb300"),
             gpus=16, nodes="2 x 8 (4 x 4 on GB200/GB300)", est_time_s=1800,
             milestones=milestones(sglang_ready_s=1200, rollout_s=1800, phase_s=900)),
    TestCase(name="qwen3-30b-a3b-disaggregated", recipe_id="qwen3-30b-a3b-disaggregated",
             hardware=(*EIGHT_GPU, "gb200", "gb300"), gpus=16, nodes="2 x 8: 12 train + 4 rollout", est_time_s=2700,
             milestones=milestones(sglang_ready_s=1800, rollout_s=1800, phase_s=1200, placement_hypothesis=True)),
    TestCase(name="qwen3-4b-remote-rm", recipe_id="qwen3-4b-remote-rm", hardware=(*EIGHT_GPU, "gb200", "gb300"),
             gpus=16, nodes="2 x 8 + CPU reward service", est_time_s=1800, needs_reward_service=True,
             min_scored_requests=250, milestones=milestones(sglang_ready_s=1200, rollout_s=1800, phase_s=900)),
    TestCase(name="glm5.2-gb300", recipe_id="glm5.2-gb300", hardware=("gb300",), gpus=64, nodes="16 x 4",
             est_time_s=3 * 1000 + 3600,  # seed 004: ~1000 s per step, plus loading 744B
             milestones=milestones(sglang_ready_s=3600, rollout_s=3600, phase_s=3600)),
)
