"""The lines SLIME (v0.2.4) prints that mark a GRPO loop's progress, as patterns the watcher waits for.

Sources: slime/utils/timer.py (`Timer {name} start` / `Timer {name} end (elapsed: {s:.1f}s)`), the
rollout manager's `Final collected {n} samples from rollout to train` (seed 000 quotes it), SGLang's
`The server is fired up and ready to roll!` once an engine serves, and the metric lines
`rollout {id}: {...}` / `step {id}: {...}`.
"""

from __future__ import annotations

from rlcheck.e2e.watch import Milestone

SGLANG_READY = "The server is fired up and ready to roll!"
COLLECTED = "Final collected {n} samples from rollout to train"
TIMER_END = "Timer {name} end (elapsed: {seconds:.1f}s)"
TIMER_START = "Timer {name} start"
# The order the seed's 30B loop showed on H200: rollout, ref log-probs, actor train, train end, weight update.
LOOP_PHASES = ("rollout-collected", "ref_log_probs", "actor_train", "train", "update_weights")


def milestones(*, sglang_ready_s: float, rollout_s: float, phase_s: float, eval_s: float | None = None,
               placement_hypothesis: bool = False) -> tuple[Milestone, ...]:
    """The milestones of one loop (the engines' readiness in the first loop only)."""
    first = Milestone(name="sglang-ready", pattern=r"The server is fired up and ready to roll!",
                      timeout_s=sglang_ready_s, first_loop_only=True,
                      hypothesis="placement-group-oversubscribed" if placement_hypothesis else "sglang-health-hang")
    loop = [
        Milestone(name="rollout-collected", pattern=r"Final collected \d+ samples from rollout to train",
                  timeout_s=rollout_s),
        *(Milestone(name=name, pattern=rf"Timer {name} end \(elapsed: [\d.]+s\)", timeout_s=phase_s)
          for name in LOOP_PHASES[1:]),
    ]
    if eval_s is not None:
        loop.append(Milestone(name="eval", pattern=r"(?:^|\s)eval \d+: \{", timeout_s=eval_s))
    return (first, *loop)
