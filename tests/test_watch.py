"""The watcher as a pure state machine: milestones in order, known failures, deadlines, invariants."""

from __future__ import annotations

import pytest

from rlcheck.e2e.slime_log import milestones
from rlcheck.e2e.watch import Invariants, Watcher, metrics

PLAN = milestones(sglang_ready_s=10, rollout_s=20, phase_s=5)
LOOP = ["Final collected 96 samples from rollout to train", "Timer ref_log_probs end (elapsed: 27.4s)",
        "Timer actor_train end (elapsed: 55.4s)", "Timer train end (elapsed: 93.2s)",
        "Timer update_weights end (elapsed: 12.1s)"]


def feed(watcher: Watcher, lines: list[str], step_s: float = 1.0) -> float:
    now = 0.0
    for line in lines:
        now += step_s
        watcher.feed(line, now)
    return now


def test_watch_clean_run_reaches_every_milestone_of_every_loop():
    watcher = Watcher(PLAN, loops=2)
    feed(watcher, ["noise", "The server is fired up and ready to roll!", *LOOP, *LOOP])
    assert watcher.ended and watcher.ended.kind == "done"
    times = watcher.phase_times()
    assert list(times[0]) == ["sglang-ready", "rollout-collected", "ref_log_probs", "actor_train", "train",
                              "update_weights"]
    assert list(times[1]) == ["rollout-collected", "ref_log_probs", "actor_train", "train", "update_weights"]


def test_watch_milestones_must_come_in_order():
    watcher = Watcher(PLAN, loops=1)
    feed(watcher, ["The server is fired up and ready to roll!", "Timer train end (elapsed: 9.0s)", *LOOP])
    assert watcher.ended.kind == "done"
    assert [e.name for e in watcher.events if e.kind == "milestone"][2] == "ref_log_probs"


def test_watch_known_failure_ends_the_run_with_its_id():
    watcher = Watcher(PLAN, loops=3)
    feed(watcher, ["The server is fired up and ready to roll!", "KeyError: 'warn'", *LOOP])
    assert watcher.ended.kind == "failure" and watcher.ended.name == "uvicorn-log-level"
    assert watcher.feed("more", 99.0) == []


@pytest.mark.parametrize(("lines", "missing", "hypothesis_line"), [
    ([], "sglang-ready", "rlcheck: phase sglang-health timed out after"),
    (["The server is fired up and ready to roll!"], "rollout-collected", "rlcheck: phase rollout-collected timed"),
    (["The server is fired up and ready to roll!", *LOOP[:3]], "train", "rlcheck: phase train timed out"),
])
def test_watch_deadline_names_the_phase(lines, missing, hypothesis_line):
    watcher = Watcher(PLAN, loops=1)
    now = feed(watcher, lines)
    due, milestone = watcher.deadline()
    assert milestone.name == missing and watcher.check(due - 0.01) == []
    [event] = watcher.check(due)
    assert event.kind == "timeout" and event.line.startswith(hypothesis_line) and due >= now


@pytest.mark.parametrize(("line", "name"), [
    ("rollout 0: {'rollout/raw_reward': 0.0, 'rollout/truncated_ratio': 0.0}", "reward-silent-zero"),
    ("rollout 0: {'rollout/raw_reward': 0.5, 'rollout/truncated_ratio': 0.84}", "kv-pool-truncation"),
    ("step 0: {'train/ppo_kl': 0.03, 'train/kl_loss': 0.0}", "step-0 train/ppo_kl = 0.03 >= 1e-08"),
])
def test_watch_invariants(line, name):
    watcher = Watcher(PLAN, loops=1)
    feed(watcher, ["The server is fired up and ready to roll!", LOOP[0], line])
    assert watcher.ended.kind == "invariant" and watcher.ended.name == name


def test_watch_invariants_hold_for_healthy_metrics():
    watcher = Watcher(PLAN, loops=1, invariants=Invariants(min_rollouts_for_zero_reward=2))
    feed(watcher, ["rollout 0: {'rollout/raw_reward': 0.0, 'rollout/truncated_ratio': 0.01}",
                   "step 0: {'train/ppo_kl': 0.0, 'train/kl_loss': 0.0}", "step 1: {'train/ppo_kl': 0.2}"])
    assert watcher.ended is None


@pytest.mark.parametrize(("line", "parsed"), [
    ("(RolloutManager pid=1) INFO rollout 3: {'rollout/raw_reward': 0.5}", ("rollout", 3, {"rollout/raw_reward": 0.5})),
    ("step 0: {'train/ppo_kl': 0.0}", ("step", 0, {"train/ppo_kl": 0.0})),
    ("rollout 3: {not python}", None),
    ("Timer train end (elapsed: 1.0s)", None),
])
def test_watch_metric_lines(line, parsed):
    assert metrics(line) == parsed
