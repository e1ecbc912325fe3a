"""The four end-to-end GRPO test cases, as data: one runner (test_e2e.py) is parametrized over them."""

from __future__ import annotations

import dataclasses

from rlcheck.e2e import slime_log
from rlcheck.e2e.slime_log import Deadlines
from rlcheck.e2e.watch import Invariants, Milestone


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
    deadlines: Deadlines
    """Seconds per phase kind (rlcheck/data/e2e_cases.toml, shared with `rlcheck watch --case`)."""
    loops: int = 3
    """GRPO loops of the smoke run (seed 000 verified with 3)."""
    est_time_s: int
    needs_reward_service: bool = False
    min_scored_requests: int = 0
    """remote-rm: reward requests that must be scored, all 200 (seed 000: 250+)."""

    def plan(self, argv: tuple[str, ...] | list[str], version: str = slime_log.DEFAULT_VERSION,
             ) -> tuple[tuple[Milestone, ...], Invariants]:
        """The milestones and invariants of this case's job at a SLIME version (its statements, its argv)."""
        return slime_log.plan(version, self.deadlines, argv)


def _case(name: str, **kw: object) -> TestCase:
    loops, deadlines = slime_log.case_deadlines()[name]
    return TestCase(name=name, recipe_id=name, loops=loops, deadlines=deadlines, **kw)  # type: ignore[arg-type]


EIGHT_GPU = ("h100", "h200", "b200", "b300")
CASES = (
    _case("qwen3-4b-colocated", hardware=(*EIGHT_GPU, "gb200", "gb300"), gpus=16,
          nodes="2 x 8 (4 x 4 on GB200/GB300)", est_time_s=1800),
    _case("qwen3-30b-a3b-disaggregated", hardware=(*EIGHT_GPU, "gb200", "gb300"), gpus=16,
          nodes="2 x 8: 12 train + 4 rollout", est_time_s=2700),
    _case("qwen3-4b-remote-rm", hardware=(*EIGHT_GPU, "gb200", "gb300"), gpus=16, nodes="2 x 8 + CPU reward service",
          est_time_s=1800, needs_reward_service=True, min_scored_requests=250),
    _case("glm5.2-gb300", hardware=("gb300",), gpus=64, nodes="16 x 4",
          est_time_s=3 * 1000 + 3600),  # seed 004: ~1000 s per step, plus loading 744B
)
