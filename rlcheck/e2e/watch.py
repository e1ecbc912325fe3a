"""Live job-log watcher: known-failure signatures, milestones in order, phase deadlines, in-run invariants.

`Watcher` is a pure state machine: feed it log lines with their time and ask it for the deadline at
any moment; it never reads a clock or a job itself (rlcheck.e2e.runner drives it against a Ray job on the
monotonic clock, rlcheck.e2e.replay against a recorded log on the log's timestamps). Every way a run can end
has an Event, and every Event names its catalogue id when there is one (`failure_id`): a known failure,
a phase that outlived its deadline (the hypothesis of that phase), an invariant broken, or all
milestones of every loop reached; and every Event names the numbers of the lines it stands on (`supporting`),
counted over the lines fed. Bounded on hostile input: lines are cut at MAX_LINE_CHARS before any
matching, the tail is bounded in characters, metric dicts are read by a linear scanner.
"""

from __future__ import annotations

import collections
import dataclasses
import re

from rlcheck.catalog import FALLBACK_ID
from rlcheck.e2e.slime_metrics import MetricLine, parse_metrics
from rlcheck.scan import Matcher

MAX_LINE_CHARS = 32 * 1024
"""Longer lines are cut here before matching: SLIME's longest metric dicts are a few KiB."""
TAIL_CHARS = 256 * 1024


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
    requires: str = ""
    """Text the line must also contain (tells two statements of one format apart)."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Invariants:
    max_step0_kl: float = 1e-8
    """SLIME's own CI bound on train/ppo_kl and train/kl_loss at step 0, held on both sides: step 0 is on-policy, so
    either is zero but for rounding (SLIME's invariant, THUDM/slime#777), and -0.03 is the same mismatch as 0.03."""
    step0_kl_loss: bool = True
    """False under routing replay: SLIME's CI skips the step-0 kl_loss bound there (ref uses normal routing)."""
    step0_ppo_kl: bool = True
    """False under --use-rollout-logprobs: the PPO ratio then compares the trainer's log-probs with SGLang's, so
    step 0's train/ppo_kl is the train/inference mismatch (about 1e-3 on a healthy run), not zero."""
    zero_reward_window: int = 3
    """Consecutive rollouts whose mean raw reward is 0.0 before reward-silent-zero (capped at the run's loops)."""
    max_truncated_ratio: float = 0.2
    """The seed's healthy GLM-5.2 run truncated 0.0-0.3% of samples; its broken one 84%."""
    max_generate_retries: int = 100
    """Retried /generate requests (SLIME's http_utils retry lines) in one loop before rollout-engines-unreachable.
    A dead engine under --use-fault-tolerance costs one retry per request in flight on it (tens); engines the
    router cannot reach cost 60 per request, one a second."""

    def __post_init__(self) -> None:
        if self.max_generate_retries < 1:
            raise ValueError(f"max_generate_retries={self.max_generate_retries}: at least 1")


# Keys whose non-finite value means the run is broken (loss, gradients, reward); others are only reported.
FATAL_NONFINITE = re.compile(r"^(?:train/(?:[\w-]+-)?(?:loss|pg_loss|kl_loss|ppo_kl|grad_norm|entropy_loss)"
                             r"|rollout/(?:raw_reward|rewards))$")
# SLIME's http_utils._post (v0.2.0 on, Miles alike) logs "Error: <e>, retrying... (attempt N/M, url=<url>,
# response=...)" for each failed try of a request; only requests to a /generate URL count (not the reward model's).
GENERATE_RETRY = re.compile(r"retrying\.\.\. \(attempt \d+/\d+, url=[^\s,]*/generate[,)]")
SUPPORTING_SHOWN = 6
"""Line numbers an event keeps: the first ones and the last (the count says how many there were)."""
PENDING_LINES = 200
"""A consequence line (an actor's death, SGLang's "hit an exception" wrapper) waits this many lines for the cause it
follows or wraps (the traceback's last line) before it names the incident itself."""
PENDING_S = 30.0
"""... or this many seconds of the feed's clock (check() names it then)."""
LOOKBACK_LINES = 300
"""An uncatalogued failure line this close before a consequence is the incident's first cause."""
KEEP_UNCATALOGUED = 20


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Event:
    kind: str
    """milestone, failure (a known signature), invariant, timeout, done."""
    name: str
    """Milestone name, catalogue id, or invariant name."""
    line: str
    at_s: float
    loop: int = 0
    failure_id: str | None = None
    """The catalogue id this event names: the signature's, the invariant's, or the timed-out phase's hypothesis."""
    supporting: tuple[int, ...] = ()
    """1-based numbers of the fed lines the event stands on (a timeout: the last milestone's line, if any)."""

    def lines_text(self) -> str:
        """'line 12', 'lines 3, 5, 9', or '' when no line supports it."""
        if not self.supporting:
            return ""
        return ("line " if len(self.supporting) == 1 else "lines ") + ", ".join(map(str, self.supporting))


def _shown(numbers: list[int]) -> tuple[int, ...]:
    """The first SUPPORTING_SHOWN - 1 line numbers and the last one."""
    if len(numbers) <= SUPPORTING_SHOWN:
        return tuple(numbers)
    return (*numbers[:SUPPORTING_SHOWN - 1], numbers[-1])


class Watcher:
    def __init__(self, milestones: tuple[Milestone, ...], loops: int, *, matcher: Matcher | None = None,
                 invariants: Invariants = Invariants(), traits: frozenset[str] | None = None) -> None:
        self.milestones, self.loops, self.invariants = milestones, loops, invariants
        self.matcher = matcher or Matcher()
        self.traits = traits
        """The job's catalogue traits (catalog.job_traits); None: unknown, every matching entry may name a line."""
        self._compiled = [re.compile(m.pattern) for m in milestones]
        self.loop, self.index = 0, 0
        self.last_progress_s = 0.0
        self.events: list[Event] = []
        self.notes: list[str] = []
        """Findings that do not end the run (a non-finite metric outside loss/reward, a cut line)."""
        self.tail: collections.deque[str] = collections.deque()
        self._tail_chars = 0
        self.zero_reward_rollouts = 0
        self.rewards: list[float] = []
        self.truncated: list[float] = []
        self.metric_lines = 0
        self.line_no = 0
        """Lines fed so far; the number of the line being judged."""
        self._progress_line = 0
        self._zero_lines: list[int] = []
        self._retry_lines: list[int] = []
        self._retry_loop = self._retry_count = 0
        self.ended: Event | None = None
        self.uncatalogued: list[tuple[int, str]] = []
        """(line number, line) of the first KEEP_UNCATALOGUED failure lines no entry knows; each is reported, and one
        is the incident's cause when a consequence follows it, but none stops a run by itself."""
        self._pending: Event | None = None

    def _expected(self) -> int:
        """Index of the next milestone, skipping first-loop-only ones after loop 0."""
        while self.index < len(self.milestones) and self.loop > 0 and self.milestones[self.index].first_loop_only:
            self.index += 1
        return self.index

    def _end(self, event: Event) -> list[Event]:
        self.events.append(event)
        self.ended = self.ended or event
        return [event]

    def _keep(self, line: str) -> None:
        self.tail.append(line)
        self._tail_chars += len(line)
        while len(self.tail) > 200 or self._tail_chars > TAIL_CHARS:
            self._tail_chars -= len(self.tail.popleft())

    def feed(self, line: str, at_s: float) -> list[Event]:
        if self.ended:
            return []
        self.line_no += 1
        if len(line) > MAX_LINE_CHARS:
            if len(self.notes) < 50:
                self.notes.append(f"a {len(line)}-character line was cut at {MAX_LINE_CHARS} before matching")
            line = line[:MAX_LINE_CHARS]
        self._keep(line)
        known = [fid for fid in self.matcher.match_line(line) if self._fits(fid)]
        role = self.matcher.catalog[known[0]].role if known else ""
        if role in ("cause", "consequence"):
            return self._known(known[0], role, line, at_s)
        if role == "fallback" and len(self.uncatalogued) < KEEP_UNCATALOGUED:
            self.uncatalogued.append((self.line_no, line))
            if self._pending is not None:  # the wrapped traceback's last line: the cause the consequence waited for
                return self.finish()
        if role == "invariant" and len(self.notes) < 50:  # routine (SGLang's retraction): the metrics judge it
            self.notes.append(f"line {self.line_no}: {known[0]} (routine; judged by its invariant): {line[:200]}")
        if self._pending is not None and self.line_no - self._pending.supporting[-1] >= PENDING_LINES:
            return self.finish()
        return self._retries(line, at_s) or self._invariants(line, at_s) or self._milestone(line, at_s)

    def _known(self, failure_id: str, role: str, line: str, at_s: float) -> list[Event]:
        """A cause ends the run at once (with the consequence it explains, if one waits); a consequence waits for it."""
        event = Event(kind="failure", name=failure_id, line=line, at_s=at_s, loop=self.loop, failure_id=failure_id,
                      supporting=(self.line_no,))
        if role == "cause":
            before = self._pending.supporting if self._pending is not None else ()
            self._pending = None
            return self._end(dataclasses.replace(event, supporting=(*before, self.line_no)))
        if self._pending is None:
            self._pending = event
        return []

    def finish(self) -> list[Event]:
        """Name a waiting consequence's incident: the uncatalogued failure line just before it, else itself. The
        caller calls it when the log ends (check() does once PENDING_S have passed)."""
        pending, self._pending = self._pending, None
        if pending is None or self.ended:
            return []
        at = pending.supporting[0]
        cause = next(((n, text) for n, text in self.uncatalogued if n >= at - LOOKBACK_LINES), None)
        if cause is None:
            return self._end(pending)
        return self._end(dataclasses.replace(pending, name=FALLBACK_ID, failure_id=FALLBACK_ID, line=cause[1],
                                             supporting=tuple(sorted({cause[0], at}))))

    def _retries(self, line: str, at_s: float) -> list[Event]:
        """Retried /generate requests, counted per loop; past the bound the engines are out of the router's reach."""
        if not GENERATE_RETRY.search(line):
            return []
        if self._retry_loop != self.loop:
            self._retry_loop, self._retry_count, self._retry_lines = self.loop, 0, []
        self._retry_count += 1
        self._retry_lines = [*self._retry_lines[:SUPPORTING_SHOWN - 1], self.line_no]  # bounded: first ones + latest
        count, limit = self._retry_count, self.invariants.max_generate_retries
        if count < limit:
            return []
        return self._breach(f"rollout-engines-unreachable: {count} retried /generate requests in loop {self.loop} "
                            f"(bound {limit})", line, at_s, "rollout-engines-unreachable", tuple(self._retry_lines))

    def _fits(self, failure_id: str) -> bool:
        """An entry tied to a trait names a line only on a job that has it (or whose traits are unknown)."""
        trait = self.matcher.catalog[failure_id].only_when
        return not trait or self.traits is None or trait in self.traits

    def _milestone(self, line: str, at_s: float) -> list[Event]:
        i = self._expected()
        if i >= len(self.milestones) or not self._compiled[i].search(line):
            return []
        if self.milestones[i].requires and self.milestones[i].requires not in line:
            return []
        event = Event(kind="milestone", name=self.milestones[i].name, line=line, at_s=at_s, loop=self.loop,
                      supporting=(self.line_no,))
        self.events.append(event)
        self.index, self.last_progress_s, self._progress_line = i + 1, at_s, self.line_no
        if self._expected() >= len(self.milestones):
            self.loop, self.index = self.loop + 1, 0
            if self.loop >= self.loops:
                return [event, *self._end(Event(kind="done", name="all milestones", line=line, at_s=at_s,
                                                 loop=self.loop - 1, supporting=(self.line_no,)))]
        return [event]

    def _breach(self, name: str, line: str, at_s: float, failure_id: str | None = None,
                supporting: tuple[int, ...] = ()) -> list[Event]:
        return self._end(Event(kind="invariant", name=name, line=line, at_s=at_s, loop=self.loop,
                               failure_id=failure_id, supporting=supporting or (self.line_no,)))

    def _invariants(self, line: str, at_s: float) -> list[Event]:
        parsed = parse_metrics(line)
        if parsed is None:
            return []
        self.metric_lines += 1
        for key in parsed.nonfinite:
            if FATAL_NONFINITE.match(key):
                return self._breach(f"{parsed.what} {parsed.index} {key} = {parsed.values[key]}", line, at_s)
            if len(self.notes) < 50:
                self.notes.append(f"{parsed.what} {parsed.index} {key} = {parsed.values[key]} (not finite)")
        if parsed.what == "step" and parsed.index == 0 and not parsed.role:
            return self._step0(parsed, line, at_s)
        if parsed.what == "rollout":
            return self._reward(parsed, line, at_s) or self._truncation(parsed, "rollout/truncated", line, at_s)
        if parsed.what == "perf":
            return self._truncation(parsed, "rollout/truncated_ratio", line, at_s)
        return []

    def _step0(self, parsed: MetricLine, line: str, at_s: float) -> list[Event]:
        inv = self.invariants
        keys = ("train/ppo_kl",) * inv.step0_ppo_kl + ("train/kl_loss",) * inv.step0_kl_loss
        for key in keys:
            value = parsed.number(key)
            if value is not None and abs(value) >= inv.max_step0_kl:
                return self._breach(f"step-0 {key} = {value} >= {inv.max_step0_kl}", line, at_s)
        return []

    def _reward(self, parsed: MetricLine, line: str, at_s: float) -> list[Event]:
        reward = parsed.number("rollout/raw_reward")
        if reward is None:
            return []
        self.rewards.append(reward)
        self.zero_reward_rollouts = self.zero_reward_rollouts + 1 if reward == 0 else 0
        self._zero_lines = [*self._zero_lines, self.line_no] if reward == 0 else []
        window = max(1, min(self.invariants.zero_reward_window, self.loops))
        if self.zero_reward_rollouts >= window:
            return self._breach(f"reward-silent-zero: mean raw reward 0.0 in {window} consecutive rollout(s)",
                                line, at_s, "reward-silent-zero", _shown(self._zero_lines))
        return []

    def _truncation(self, parsed: MetricLine, key: str, line: str, at_s: float) -> list[Event]:
        ratio = parsed.number(key)
        if ratio is None:
            return []
        if parsed.what == "perf":
            self.truncated.append(ratio)
        limit = self.invariants.max_truncated_ratio
        if ratio > limit:
            return self._breach(f"kv-pool-truncation: {key} = {ratio:.3f} > {limit} in rollout {parsed.index}",
                                line, at_s, "kv-pool-truncation")
        return []

    def deadline(self) -> tuple[float, Milestone] | None:
        """(time by which the next milestone is due, that milestone), None once the run has ended."""
        if self.ended:
            return None
        milestone = self.milestones[self._expected()]
        return self.last_progress_s + milestone.timeout_s, milestone

    def check(self, now_s: float) -> list[Event]:
        """A timeout event when the next milestone is overdue at now_s (a waiting consequence is named first)."""
        if self._pending is not None:  # never a deadline while a consequence waits for its cause
            return self.finish() if now_s - self._pending.at_s >= PENDING_S else []
        due = self.deadline()
        if due is None or now_s < due[0]:
            return []
        milestone = due[1]
        waited = now_s - self.last_progress_s
        line = (f"no {milestone.name} within {milestone.timeout_s:.0f} s of the previous milestone "
                f"(waited {waited:.0f} s, loop {self.loop})")
        return self._end(Event(kind="timeout", name=milestone.name, at_s=now_s, loop=self.loop, line=line,
                               failure_id=milestone.hypothesis or None,
                               supporting=(self._progress_line,) if self._progress_line else ()))

    def phase_times(self) -> list[dict[str, float]]:
        """Seconds from the previous milestone to each milestone, per loop."""
        out: list[dict[str, float]] = [{} for _ in range(self.loop + 1)]
        previous = 0.0
        for e in self.events:
            if e.kind == "milestone":
                out[e.loop][e.name] = round(e.at_s - previous, 3)
                previous = e.at_s
        return [loop for loop in out if loop]
