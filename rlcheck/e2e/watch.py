"""Live job-log watcher: known-failure signatures, milestones in order, phase deadlines, in-run invariants.

`Watcher` is a pure state machine: feed it log lines with their arrival time and ask it for the
deadline at any moment; it never reads a clock or a job itself (rlcheck.e2e.runner drives it against a Ray
job). Every way a run can end has a verdict: a known failure (catalogue id, line, cause, fix), a phase
that outlived its deadline (the hypothesis named), an invariant broken, the job ending early, or all
milestones of every loop reached.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import re

from rlcheck.scan import Matcher


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Milestone:
    name: str
    pattern: str
    """Regex over one log line; the first match reaches the milestone."""
    timeout_s: float
    """Most seconds allowed since the previous milestone (or the job's start)."""
    hypothesis: str = ""
    """The catalogue id a timeout here points to, '' for plain 'no progress'."""
    first_loop_only: bool = False


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Invariants:
    max_step0_kl: float = 1e-8
    """SLIME's own CI bound on train/ppo_kl and train/kl_loss at step 0."""
    min_rollouts_for_zero_reward: int = 1
    """Rollouts of all-zero raw_reward after which reward-silent-zero is declared."""
    max_truncated_ratio: float = 0.2
    """The seed's healthy GLM-5.2 run truncated 0.0-0.3% of samples; its broken one 84%."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Event:
    kind: str
    """milestone, failure (a known signature), invariant, timeout, done."""
    name: str
    """Milestone name, catalogue id, or invariant name."""
    line: str
    at_s: float
    loop: int = 0


_DICT = re.compile(r"(?:^|\s)(?P<what>rollout|step) (?P<index>\d+): (?P<body>\{.*\})\s*$")


def metrics(line: str) -> tuple[str, int, dict[str, object]] | None:
    """SLIME's `rollout N: {...}` and `step N: {...}` metric lines, parsed (None for any other line)."""
    found = _DICT.search(line)
    if not found:
        return None
    try:
        body = ast.literal_eval(found.group("body"))
    except (ValueError, SyntaxError):
        return None
    return (found.group("what"), int(found.group("index")), body) if isinstance(body, dict) else None


class Watcher:
    def __init__(self, milestones: tuple[Milestone, ...], loops: int, *, matcher: Matcher | None = None,
                 invariants: Invariants = Invariants(), keep_lines: int = 200) -> None:
        self.milestones, self.loops, self.invariants = milestones, loops, invariants
        self.matcher = matcher or Matcher()
        self._compiled = [re.compile(m.pattern) for m in milestones]
        self.loop, self.index = 0, 0
        self.last_progress_s = 0.0
        self.events: list[Event] = []
        self.tail: collections.deque[str] = collections.deque(maxlen=keep_lines)
        self.zero_reward_rollouts = 0
        self.ended: Event | None = None

    def _expected(self) -> int:
        """Index of the next milestone, skipping first-loop-only ones after loop 0."""
        while self.index < len(self.milestones) and self.loop > 0 and self.milestones[self.index].first_loop_only:
            self.index += 1
        return self.index

    def _end(self, event: Event) -> list[Event]:
        self.events.append(event)
        self.ended = self.ended or event
        return [event]

    def feed(self, line: str, at_s: float) -> list[Event]:
        if self.ended:
            return []
        self.tail.append(line)
        known = self.matcher.match_line(line)
        if known:
            return self._end(Event(kind="failure", name=known[0], line=line, at_s=at_s, loop=self.loop))
        return self._invariants(line, at_s) or self._milestone(line, at_s)

    def _milestone(self, line: str, at_s: float) -> list[Event]:
        i = self._expected()
        if i >= len(self.milestones) or not self._compiled[i].search(line):
            return []
        event = Event(kind="milestone", name=self.milestones[i].name, line=line, at_s=at_s, loop=self.loop)
        self.events.append(event)
        self.index, self.last_progress_s = i + 1, at_s
        if self._expected() >= len(self.milestones):
            self.loop, self.index = self.loop + 1, 0
            if self.loop >= self.loops:
                return [event, *self._end(Event(kind="done", name="all milestones", line=line, at_s=at_s,
                                                 loop=self.loop - 1))]
        return [event]

    def _invariants(self, line: str, at_s: float) -> list[Event]:
        parsed = metrics(line)
        if parsed is None:
            return []
        what, index, body = parsed
        inv = self.invariants
        if what == "step" and index == 0:
            for key in ("train/ppo_kl", "train/kl_loss"):
                value = body.get(key)
                if isinstance(value, (int, float)) and abs(value) >= inv.max_step0_kl:
                    return self._end(Event(kind="invariant", name=f"step-0 {key} = {value} >= {inv.max_step0_kl}",
                                           line=line, at_s=at_s, loop=self.loop))
        if what == "rollout":
            return self._rollout_invariants(body, line, at_s)
        return []

    def _rollout_invariants(self, body: dict[str, object], line: str, at_s: float) -> list[Event]:
        inv = self.invariants
        reward = body.get("rollout/raw_reward")
        if isinstance(reward, (int, float)):
            self.zero_reward_rollouts = self.zero_reward_rollouts + 1 if reward == 0 else 0
            if self.zero_reward_rollouts >= inv.min_rollouts_for_zero_reward:
                return self._end(Event(kind="invariant", name="reward-silent-zero", line=line, at_s=at_s,
                                       loop=self.loop))
        ratio = body.get("rollout/truncated_ratio")
        if isinstance(ratio, (int, float)) and ratio > inv.max_truncated_ratio:
            return self._end(Event(kind="invariant", name="kv-pool-truncation", line=line, at_s=at_s, loop=self.loop))
        return []

    def deadline(self) -> tuple[float, Milestone] | None:
        """(time by which the next milestone is due, that milestone), None once the run has ended."""
        if self.ended:
            return None
        i = self._expected()
        milestone = self.milestones[i]
        return self.last_progress_s + milestone.timeout_s, milestone

    def check(self, now_s: float) -> list[Event]:
        """A timeout event when the next milestone is overdue at now_s."""
        due = self.deadline()
        if due is None or now_s < due[0]:
            return []
        milestone = due[1]
        return self._end(Event(kind="timeout", name=milestone.name, at_s=now_s, loop=self.loop,
                               line=timeout_line(milestone, now_s - self.last_progress_s)))

    def phase_times(self) -> list[dict[str, float]]:
        """Seconds from the previous milestone to each milestone, per loop."""
        out: list[dict[str, float]] = [{} for _ in range(self.loop + 1)]
        previous = 0.0
        for e in self.events:
            if e.kind == "milestone":
                out[e.loop][e.name] = round(e.at_s - previous, 3)
                previous = e.at_s
        return [loop for loop in out if loop]


PHASES = {"sglang-health-hang": "sglang-health", "placement-group-oversubscribed": "placement-group"}


def timeout_line(milestone: Milestone, waited_s: float) -> str:
    """The line rlcheck writes when a phase outlives its deadline (the catalogue's scanner knows it)."""
    phase = PHASES.get(milestone.hypothesis, milestone.name)
    return f"rlcheck: phase {phase} timed out after {waited_s:.0f} s (waiting for {milestone.name})"
