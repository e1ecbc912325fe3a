"""The live watcher's rules as tables, both sides of each boundary, on SLIME's own line shapes: the step-0 KL
bound (negative values, rounding, the flags that lift it), the zero-reward window (a negative mean reward is a
reward, not a zero), the truncation bound (tied at it), non-finite metrics (which stop a run, which are noted),
long lines, the consequence's wait for its cause (in lines, in seconds, and how far back a cause is looked for),
and what an ending event keeps of its supporting lines (rlcheck.e2e.watch, pure)."""

from __future__ import annotations

import pytest

from rlcheck.e2e import slime_log
from rlcheck.e2e.watch import (
    KEEP_UNCATALOGUED,
    LOOKBACK_LINES,
    MAX_LINE_CHARS,
    PENDING_LINES,
    PENDING_S,
    SUPPORTING_SHOWN,
    TAIL_CHARS,
    Event,
    Invariants,
    Milestone,
    Watcher,
)
from tests.test_watch import DEADLINES, LOOP, STARTUP, feed

# SLIME's step line (megatron_utils/model.py: f"{role_tag}step {accumulated_step_id}: {log_dict}") behind Ray's prefix
# of the last pipeline stage, and the train actor's rollout line (data.py / train_metric_utils.py).
STEP = "(MegatronTrainRayActor pid=3309, ip=10.1.0.6) [2026-07-01 10:06:01] model.py:660 - step {i}: {d}"
ROLLOUT = "(MegatronTrainRayActor pid=3309, ip=10.1.0.6) [2026-07-01 10:05:01] data.py:208 - rollout {i}: {d}"
PERF = "(RolloutManager pid=2201) [2026-07-01 10:05:00] rollout.py:1190 - perf {i}: {d}"
DIED = "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task."
NCCL = "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
UNCATALOGUED = "ValueError: bad shape {n}"


def step(i: int, **values: object) -> str:
    return STEP.format(i=i, d=repr({f"train/{k}": v for k, v in values.items()}))


def watch(lines: list[str], *, loops: int = 3, argv: tuple[str, ...] = ("--use-kl-loss",),
          invariants: Invariants | None = None) -> Watcher:
    milestones, planned = slime_log.plan("v0.2.4", DEADLINES, argv)
    watcher = Watcher(milestones, loops, invariants=invariants or planned)
    feed(watcher, [*STARTUP, *lines])
    return watcher


# (the step line, the name of the broken invariant or None when the run goes on)
STEP0_ROWS = [
    (step(0, ppo_kl=0.0, kl_loss=0.0), None),
    (step(0, ppo_kl=-0.0, kl_loss=-0.0), None),
    (step(0, ppo_kl=9.9e-9, kl_loss=0.0), None),  # inside SLIME's bound
    (step(0, ppo_kl=1e-8, kl_loss=0.0), "step-0 train/ppo_kl = 1e-08 >= 1e-08"),  # at it: SLIME's `< 1e-8` fails
    (step(0, ppo_kl=-1e-10, kl_loss=0.0), None),  # rounding below zero
    (step(0, ppo_kl=-9.9e-9, kl_loss=0.0), None),
    (step(0, ppo_kl=-1e-8, kl_loss=0.0), "step-0 train/ppo_kl = -1e-08 >= 1e-08"),
    (step(0, ppo_kl=-0.03, kl_loss=0.0), "step-0 train/ppo_kl = -0.03"),  # negative: the same mismatch
    (step(0, ppo_kl=0.0, kl_loss=-0.002), "step-0 train/kl_loss = -0.002"),
    (step(0, ppo_kl=0.0, kl_loss=9e-9), None),
    (step(0, ppo_kl=0.03, kl_loss=0.03), "step-0 train/ppo_kl = 0.03"),  # the first key broken is named
    (step(1, ppo_kl=-0.5, kl_loss=0.5), None),  # only step 0 is on-policy
    (step(0, loss=0.01), None),  # a step line without KL keys
    (step(0, ppo_kl="None"), None),  # a value that is no number is not judged
    (STEP.format(i=0, d="{'train/ppo_kl': np.float64(-0.03), 'train/kl_loss': 0.0}"), "step-0 train/ppo_kl = -0.03"),
    (STEP.format(i=0, d="{'train/ppo_kl': tensor(0.5, device='cuda:0')}"), "step-0 train/ppo_kl = 0.5"),
    (STEP.format(i=0, d="{'train/critic-ppo_kl': 0.2}").replace("step 0", "critic-step 0"), None),
    (step(0, ppo_kl=float("nan")), "step 0 train/ppo_kl = nan"),  # not finite: fatal, whatever the bound
]


@pytest.mark.parametrize(("line", "broken"), STEP0_ROWS)
def test_rules_table_e2e_watch_step0_kl(line, broken):
    watcher = watch([line])
    if broken is None:
        assert watcher.ended is None, watcher.ended
        return
    assert watcher.ended is not None and watcher.ended.kind == "invariant" and watcher.ended.failure_id is None
    assert watcher.ended.name.startswith(broken), watcher.ended.name
    n = len(STARTUP) + 1  # feed() gives line n the time n
    assert (watcher.ended.supporting, watcher.ended.line, watcher.ended.at_s, watcher.ended.loop) == ((n,), line, n, 0)


@pytest.mark.parametrize(("argv", "ppo_kl", "kl_loss", "broken"), [
    # --use-rollout-logprobs: SLIME's ratio compares the trainer's log-probs with SGLang's; step 0's ppo_kl is the
    # train/inference mismatch, kl_loss (actor against ref, the same weights at step 0) is still zero
    (("--use-kl-loss", "--use-rollout-logprobs"), 0.0012, 0.0, None),
    (("--use-kl-loss", "--use-rollout-logprobs"), -0.0012, 0.0, None),
    (("--use-kl-loss", "--use-rollout-logprobs"), 0.0012, 0.002, "step-0 train/kl_loss"),
    (("--use-kl-loss",), 0.0012, 0.0, "step-0 train/ppo_kl"),
    # routing replay: ref runs with normal routing, so kl_loss is not zero at step 0; ppo_kl still is
    (("--use-kl-loss", "--use-rollout-routing-replay"), 0.0, 0.002, None),
    (("--use-kl-loss", "--use-routing-replay"), 0.0, 0.002, None),
    (("--use-kl-loss", "--use-rollout-routing-replay"), 0.03, 0.0, "step-0 train/ppo_kl"),
    (("--use-kl-loss", "--use-rollout-routing-replay", "--use-rollout-logprobs"), 0.03, 0.03, None),
])
def test_rules_table_e2e_watch_step0_bounds_follow_the_argv(argv, ppo_kl, kl_loss, broken):
    watcher = watch([step(0, ppo_kl=ppo_kl, kl_loss=kl_loss)], argv=argv)
    assert (watcher.ended.name.split(" =")[0] if watcher.ended else None) == broken


def rollouts(rewards: list[object]) -> list[str]:
    return [ROLLOUT.format(i=i, d=f"{{'rollout/raw_reward': {r}, 'rollout/truncated': 0.0}}")
            for i, r in enumerate(rewards)]


@pytest.mark.parametrize(("rewards", "loops", "window", "ends"), [
    ([-0.5, -0.5, -0.5], 3, 3, False),  # a healthy run whose mean reward is negative (rewards in [-1, 1])
    ([-1.0], 1, 3, False),  # every answer wrong is a reward too, not the silent zero of a broken reward service
    ([-1e-9, -1e-9, -1e-9], 3, 3, False),
    ([1e-9, 1e-9, 1e-9], 3, 3, False),
    ([-0.0, -0.0, -0.0], 3, 3, True),  # -0.0 is zero
    (["np.float64(0.0)"] * 3, 3, 3, True),  # numpy 2's repr
    ([0.0, 0.0, -0.5], 3, 3, False),
    ([0.0, 0.0], 3, 3, False),  # one short of the window
    ([0.0, -0.5, 0.0, 0.0], 4, 3, False),  # a negative reward restarts the window
    ([0.0], 1, 3, True),  # the window is capped at the run's loops
    ([0.0], 2, 3, False),
    ([0.0, 0.0], 2, 3, True),
    ([0.0], 3, 1, True),
    ([0.0], 3, 0, True),  # a window below 1 is 1
    (["'n/a'"] * 3, 3, 3, False),  # no number: not judged
])
def test_rules_table_e2e_watch_zero_reward_window(rewards, loops, window, ends):
    watcher = watch(rollouts(rewards), loops=loops, invariants=Invariants(zero_reward_window=window))
    assert (watcher.ended is not None) is ends, watcher.ended
    if ends:
        shown = max(1, min(window, loops))
        assert watcher.ended.failure_id == "reward-silent-zero" and watcher.ended.kind == "invariant"
        assert watcher.ended.name == f"reward-silent-zero: mean raw reward 0.0 in {shown} consecutive rollout(s)"


def test_rules_table_e2e_watch_rewards_are_kept_as_read():
    watcher = watch(rollouts([-0.5, "np.float64(0.25)", "'n/a'", 1.0]), loops=5)
    assert watcher.rewards == [-0.5, 0.25, 1.0] and watcher.ended is None


@pytest.mark.parametrize(("count", "supporting"), [
    (SUPPORTING_SHOWN, tuple(range(1, SUPPORTING_SHOWN + 1))),
    (SUPPORTING_SHOWN + 1, (*range(1, SUPPORTING_SHOWN), SUPPORTING_SHOWN + 1)),  # the first ones and the last
    (SUPPORTING_SHOWN + 3, (*range(1, SUPPORTING_SHOWN), SUPPORTING_SHOWN + 3)),
])
def test_rules_table_e2e_watch_supporting_lines_are_bounded(count, supporting):
    watcher = watch(rollouts([0.0] * count), loops=count, invariants=Invariants(zero_reward_window=count))
    assert watcher.ended.supporting == tuple(len(STARTUP) + n for n in supporting)


@pytest.mark.parametrize(("line", "limit", "broken"), [
    (PERF.format(i=0, d="{'rollout/truncated_ratio': 0.2, 'perf/rollout_time': 9.0}"), 0.2, None),  # tied
    (PERF.format(i=0, d="{'rollout/truncated_ratio': 0.20001, 'perf/rollout_time': 9.0}"), 0.2,
     "kv-pool-truncation: rollout/truncated_ratio = 0.200 > 0.2 in rollout 0"),
    (PERF.format(i=2, d="{'rollout/truncated_ratio': 0.4609375}"), 0.2,
     "kv-pool-truncation: rollout/truncated_ratio = 0.461 > 0.2 in rollout 2"),
    (PERF.format(i=0, d="{'rollout/truncated_ratio': 0.4609375}"), 0.5, None),
    (ROLLOUT.format(i=0, d="{'rollout/raw_reward': 0.5, 'rollout/truncated': 0.2}"), 0.2, None),
    (ROLLOUT.format(i=1, d="{'rollout/raw_reward': 0.5, 'rollout/truncated': 0.21}"), 0.2,
     "kv-pool-truncation: rollout/truncated = 0.210 > 0.2 in rollout 1"),
    (ROLLOUT.format(i=0, d="{'rollout/raw_reward': 0.5, 'rollout/truncated_ratio': 0.9}"), 0.2, None),  # perf's key
    (PERF.format(i=0, d="{'rollout/truncated': 0.9}"), 0.2, None),  # the train actor's key on the perf line
    (PERF.format(i=0, d="{'rollout/truncated_ratio': -0.1}"), 0.2, None),
])
def test_rules_table_e2e_watch_truncation_bound(line, limit, broken):
    watcher = watch([line], invariants=Invariants(max_truncated_ratio=limit))
    assert (watcher.ended.name if watcher.ended else None) == broken
    if broken:
        n = len(STARTUP) + 1
        assert watcher.ended.failure_id == "kv-pool-truncation" and watcher.ended.kind == "invariant"
        assert (watcher.ended.line, watcher.ended.at_s, watcher.ended.supporting) == (line, n, (n,))


def test_rules_table_e2e_watch_truncated_ratios_are_kept_from_the_perf_line_only():
    watcher = watch([PERF.format(i=0, d="{'rollout/truncated_ratio': 0.125}"),
                     ROLLOUT.format(i=0, d="{'rollout/raw_reward': 0.5, 'rollout/truncated': 0.0625}")])
    assert watcher.truncated == [0.125] and watcher.ended is None


@pytest.mark.parametrize(("key", "value", "fatal"), [
    ("train/loss", "inf", True), ("train/pg_loss", "nan", True), ("train/kl_loss", "-inf", True),
    ("train/ppo_kl", "nan", True), ("train/grad_norm", "nan", True), ("train/entropy_loss", "inf", True),
    ("train/critic-loss", "nan", True), ("train/critic-grad_norm", "inf", True),
    ("rollout/raw_reward", "nan", True), ("rollout/rewards", "-inf", True),
    ("train/lr-pg_0", "nan", False), ("train/pg_clipfrac", "nan", False), ("perf/rollout_time", "inf", False),
    ("rollout/raw_reward_std", "nan", False), ("train/loss_scale", "inf", False), ("xtrain/loss", "nan", False),
    ("train/loss", "np.float64(nan)", True), ("train/loss", "1e999", True),  # 1e999 is read as inf
])
def test_rules_table_e2e_watch_nonfinite_metrics(key, value, fatal):
    line = STEP.format(i=3, d=f"{{'{key}': {value}, 'train/step': 3}}")
    watcher = watch([line])
    shown = "inf" if value == "1e999" else value.removeprefix("np.float64(").removesuffix(")")
    assert (watcher.ended is not None) is fatal
    if fatal:
        assert watcher.ended.name == f"step 3 {key} = {shown}" and watcher.ended.kind == "invariant"
        assert (watcher.ended.line, watcher.ended.at_s, watcher.ended.failure_id) == (line, len(STARTUP) + 1, None)
    else:
        assert watcher.notes == [f"step 3 {key} = {shown} (not finite)"]


def test_rules_table_e2e_watch_notes_are_bounded():
    line = PERF.format(i=0, d="{'perf/tflops': nan}")
    watcher = watch([line] * 60)
    assert len(watcher.notes) == 50 and watcher.metric_lines == 60


@pytest.mark.parametrize(("chars", "cut"), [(MAX_LINE_CHARS - 1, False), (MAX_LINE_CHARS, False),
                                            (MAX_LINE_CHARS + 1, True), (1 << 20, True)])
def test_rules_table_e2e_watch_long_lines_are_cut_and_named(chars, cut):
    watcher = watch(["x" * chars])
    assert watcher.notes == ([f"a {chars}-character line was cut at {MAX_LINE_CHARS} before matching"] if cut else [])
    assert len(watcher.tail[-1]) == min(chars, MAX_LINE_CHARS) and watcher.ended is None


@pytest.mark.parametrize(("line", "failure_id"), [
    ("KeyError: 'warn'" + " " * (1 << 20), "uvicorn-log-level"),  # a signature inside the cut is found
    (" " * MAX_LINE_CHARS + "KeyError: 'warn'", None),  # one past it is not: the bound on hostile input
])
def test_rules_table_e2e_watch_signature_in_a_long_line(line, failure_id):
    watcher = watch([line])
    assert (watcher.ended.failure_id if watcher.ended else None) == failure_id


def test_rules_table_e2e_watch_megabyte_line_between_milestones_keeps_the_run():
    prompt = "[2026-07-01 10:00:00 TP0] Receive: obj=GenerateReqInput(text='" + "Solve for x. " * 80_000 + "')"
    watcher = watch([*LOOP[:3], prompt, *LOOP[3:]], loops=1)
    assert watcher.ended is not None and watcher.ended.kind == "done" and len(watcher.notes) == 1


@pytest.mark.parametrize(("kept", "count"), [(KEEP_UNCATALOGUED, KEEP_UNCATALOGUED),
                                             (KEEP_UNCATALOGUED, KEEP_UNCATALOGUED + 1), (3, 3)])
def test_rules_table_e2e_watch_uncatalogued_lines_are_bounded(kept, count):
    watcher = watch([UNCATALOGUED.format(n=n) for n in range(count)])
    assert [text for _, text in watcher.uncatalogued] == [UNCATALOGUED.format(n=n) for n in range(kept)]
    assert watcher.ended is None


@pytest.mark.parametrize(("noise", "ended"), [(PENDING_LINES - 1, False), (PENDING_LINES, True)])
def test_rules_table_e2e_watch_consequence_waits_its_lines(noise, ended):
    watcher = watch([DIED, *["noise"] * noise])
    assert (watcher.ended is not None) is ended
    if ended:
        assert watcher.ended.failure_id == "ray-actor-died" and watcher.ended.supporting == (len(STARTUP) + 1,)


@pytest.mark.parametrize(("waited_s", "named"), [(PENDING_S - 0.001, False), (PENDING_S, True)])
def test_rules_table_e2e_watch_consequence_waits_its_seconds(waited_s, named):
    watcher = watch([DIED])
    at = watcher._pending.at_s  # noqa: SLF001 - the wait starts at the line's time
    events = watcher.check(at + waited_s)
    assert [e.failure_id for e in events] == (["ray-actor-died"] if named else [])
    assert (watcher.ended is not None) is named


@pytest.mark.parametrize(("gap", "failure_id"), [
    (LOOKBACK_LINES - 1, "uncatalogued"), (LOOKBACK_LINES, "ray-actor-died")])
def test_rules_table_e2e_watch_cause_is_looked_for_a_bounded_way_back(gap, failure_id):
    # the consequence at line n looks back to n - LOOKBACK_LINES; the waits after it are within PENDING_LINES
    watcher = watch([UNCATALOGUED.format(n=0), *["noise"] * gap, DIED])
    watcher.finish()
    at = len(STARTUP) + gap + 2
    assert watcher.ended.failure_id == failure_id
    assert watcher.ended.supporting == ((len(STARTUP) + 1, at) if failure_id == "uncatalogued" else (at,))


def test_rules_table_e2e_watch_cause_after_a_consequence_names_both_lines():
    watcher = watch([DIED, "noise", NCCL])
    n = len(STARTUP)
    assert (watcher.ended.failure_id, watcher.ended.line, watcher.ended.supporting) == (
        "nccl-system-error", NCCL, (n + 1, n + 3))


def test_rules_table_e2e_watch_first_consequence_waits_not_the_second():
    wrapper = "[2025-03-29 18:18:34 TP0] Scheduler hit an exception: Traceback (most recent call last):"
    watcher = watch([DIED, wrapper])
    watcher.finish()
    assert watcher.ended.failure_id == "ray-actor-died" and watcher.ended.supporting == (len(STARTUP) + 1,)
    assert watcher.finish() == []  # once named, nothing waits


def test_rules_table_e2e_watch_uncatalogued_line_after_a_consequence_ends_the_wait():
    watcher = watch([DIED, UNCATALOGUED.format(n=1)])
    n = len(STARTUP)
    end = watcher.ended
    assert (end.kind, end.name, end.failure_id, end.line, end.supporting, end.at_s) == (
        "failure", "uncatalogued", "uncatalogued", UNCATALOGUED.format(n=1), (n + 1, n + 2), n + 1)


def test_rules_table_e2e_watch_no_deadline_while_a_consequence_waits():
    watcher = watch([DIED])
    due, _ = watcher.deadline()
    assert watcher.check(due + PENDING_S * 10)[0].kind == "failure"  # named, never a timeout


@pytest.mark.parametrize(("supporting", "text"), [((), ""), ((12,), "line 12"), ((3, 5, 9), "lines 3, 5, 9")])
def test_rules_table_e2e_watch_event_lines_text(supporting, text):
    assert Event(kind="failure", name="x", line="", at_s=0.0, supporting=supporting).lines_text() == text


@pytest.mark.parametrize(("retries", "valid"), [(1, True), (0, False), (-1, False)])
def test_rules_table_e2e_watch_retry_bound_is_validated(retries, valid):
    if valid:
        assert Invariants(max_generate_retries=retries).max_generate_retries == retries
        return
    with pytest.raises(ValueError, match=f"max_generate_retries={retries}: at least 1"):
        Invariants(max_generate_retries=retries)


def test_rules_table_e2e_watch_timeout_line_says_what_was_waited_for():
    watcher = watch([])
    due, milestone = watcher.deadline()
    [event] = watcher.check(due + 2.4)
    assert event.line == (f"no {milestone.name} within {milestone.timeout_s:.0f} s of the previous milestone "
                          f"(waited {due + 2.4 - watcher.last_progress_s:.0f} s, loop 0)")
    assert watcher.deadline() is None and watcher.check(due + 100) == []


def test_rules_table_e2e_watch_a_failure_after_the_end_is_not_fed():
    watcher = watch([*LOOP] * 3)
    assert watcher.ended.kind == "done" and watcher.ended.loop == 2
    lines = watcher.line_no
    assert watcher.feed(NCCL, 1e6) == [] and watcher.line_no == lines and watcher.ended.kind == "done"


@pytest.mark.parametrize("loops_before", [0, 1, 2])
def test_rules_table_e2e_watch_known_failure_event(loops_before):
    watcher = watch([*LOOP * loops_before, "noise", NCCL])
    n = len(STARTUP) + len(LOOP) * loops_before + 2
    end = watcher.ended
    assert (end.kind, end.name, end.failure_id, end.line, end.at_s, end.loop, end.supporting) == (
        "failure", "nccl-system-error", "nccl-system-error", NCCL, n, loops_before, (n,))
    assert watcher.events[-1] is end and watcher.check(1e9) == [] and watcher.deadline() is None
    assert watcher.finish() == []


def test_rules_table_e2e_watch_consequence_event_keeps_its_loop_and_time():
    watcher = watch([*LOOP, DIED])
    watcher.finish()
    n = len(STARTUP) + len(LOOP) + 1
    end = watcher.ended
    assert (end.kind, end.name, end.line, end.at_s, end.loop) == ("failure", "ray-actor-died", DIED, n, 1)


@pytest.mark.parametrize("line", [step(6, loss=float("inf")), PERF.format(i=1, d="{'rollout/truncated_ratio': 0.9}"),
                                  ROLLOUT.format(i=1, d="{'rollout/raw_reward': nan}")])
def test_rules_table_e2e_watch_invariant_names_its_loop(line):
    watcher = watch([*LOOP, line])
    assert watcher.ended.kind == "invariant" and watcher.ended.loop == 1 and watcher.ended.line == line


RETRACT = "[2026-07-01 10:00:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 12"


@pytest.mark.parametrize(("lines", "first"), [
    (["x" * (MAX_LINE_CHARS + 1)] * 60, f"a {MAX_LINE_CHARS + 1}-character line was cut at {MAX_LINE_CHARS} before "
                                        "matching"),
    ([RETRACT] * 60, f"line {len(STARTUP) + 1}: kv-pool-truncation (routine; judged by its invariant): {RETRACT}"),
])
def test_rules_table_e2e_watch_notes_of_each_kind_are_bounded(lines, first):
    watcher = watch(lines)
    assert len(watcher.notes) == 50 and watcher.notes[0] == first and watcher.ended is None


def test_rules_table_e2e_watch_routine_note_shows_the_lines_start_only():
    long_retract = RETRACT + " " + "y" * 500
    watcher = watch([long_retract])
    assert watcher.notes == [f"line {len(STARTUP) + 1}: kv-pool-truncation (routine; judged by its invariant): "
                             f"{long_retract[:200]}"]


def test_rules_table_e2e_watch_tail_keeps_the_last_200_lines():
    watcher = watch([f"line {i}" for i in range(250)])
    assert len(watcher.tail) == 200 and watcher.tail[0] == "line 50" and watcher.tail[-1] == "line 249"


@pytest.mark.parametrize(("what", "ends"), [("rollout", True), ("eval", False), ("passrate", False), ("perf", False),
                                            ("multi_turn", False)])
def test_rules_table_e2e_watch_only_the_rollout_line_carries_the_reward(what, ends):
    lines = [ROLLOUT.format(i=i, d="{'rollout/raw_reward': 0.0}").replace(f"rollout {i}", f"{what} {i}")
             for i in range(3)]
    assert (watch(lines).ended is not None) is ends


def test_rules_table_e2e_watch_phase_times_are_rounded_seconds_between_milestones():
    milestones, _ = slime_log.plan("v0.2.4", DEADLINES, ("--use-kl-loss",))
    watcher = Watcher(milestones, 2)
    feed(watcher, ["noise", *STARTUP, *LOOP, *LOOP[:2]], step_s=0.12345)
    times = watcher.phase_times()
    assert times[0]["placement-group"] == round(2 * 0.12345, 3) and times[0]["train-actor-ready"] == 0.123
    assert list(times[1]) == ["rollout", "ref_log_probs"] and times[1]["rollout"] == 0.123


def test_rules_table_e2e_watch_milestone_events_carry_their_line_time_and_loop():
    watcher = watch([*LOOP, *LOOP[:1]])
    events = [e for e in watcher.events if e.kind == "milestone"]
    lines = [*STARTUP, *LOOP, *LOOP[:1]]
    assert len(events) == 10 and all(e.line == lines[e.supporting[0] - 1] == lines[int(e.at_s) - 1] for e in events)
    assert [e.loop for e in events] == [0] * 9 + [1] and events[-1].line == LOOP[0]


def test_rules_table_e2e_watch_timeout_names_its_loop():
    watcher = watch([*LOOP, *LOOP[:2]])
    [event] = watcher.check(watcher.deadline()[0])
    assert (event.kind, event.loop, event.name) == ("timeout", 1, "log_probs")


def test_rules_table_e2e_watch_without_milestones_feeds_without_error():
    watcher = Watcher((), 1)
    assert watcher.feed("Timer train end (elapsed: 1.0s)", 1.0) == [] and watcher.line_no == 1


# the rows mutation testing asked for: the first deadline counts from 0 s, the tail's character bound, the retry
# count's start in loop 0, a loop after the last restarting at the first milestone, the ending events whole
TWO = (Milestone(name="a", pattern="^A$", timeout_s=10.0), Milestone(name="b", pattern="^B$", timeout_s=10.0))


@pytest.mark.parametrize(("now", "ends"), [(9.999, False), (10.0, True)])
def test_rules_table_e2e_watch_first_deadline_counts_from_zero(now, ends):
    watcher = Watcher(TWO, 1)
    assert watcher.deadline() == (10.0, TWO[0])
    assert bool(watcher.check(now)) is ends


def test_rules_table_e2e_watch_every_loop_starts_at_the_first_milestone_and_done_is_whole():
    watcher = Watcher(TWO, 2)
    for i, line in enumerate(["A", "B", "A", "B"]):
        watcher.feed(line, float(i))
    assert [(e.kind, e.name, e.loop) for e in watcher.events] == [
        ("milestone", "a", 0), ("milestone", "b", 0), ("milestone", "a", 1), ("milestone", "b", 1),
        ("done", "all milestones", 1)]
    assert watcher.ended == Event(kind="done", name="all milestones", line="B", at_s=3.0, loop=1, supporting=(4,))


@pytest.mark.parametrize(("extra", "kept"), [(0, 9), (1, 8)])
def test_rules_table_e2e_watch_tail_keeps_at_most_tail_chars(extra, kept):
    full = TAIL_CHARS // MAX_LINE_CHARS
    assert full * MAX_LINE_CHARS == TAIL_CHARS and full + 1 <= 200  # whole lines fill it, none of them cut
    watcher = Watcher(TWO, 1)
    watcher.feed("a", 0.0)
    for _ in range(full - 1):
        watcher.feed("x" * MAX_LINE_CHARS, 0.0)
    watcher.feed("y" * (MAX_LINE_CHARS - 1 + extra), 0.0)  # together exactly TAIL_CHARS, then one more
    assert len(watcher.tail) == kept and (watcher.tail[0] == "a") is (kept == full + 1)


RETRY = "[2026-07-01 10:04:00] http_utils.py:1 - retrying... (attempt 1/5, url=http://10.0.0.5:30000/generate)"


@pytest.mark.parametrize(("count", "ends"), [(2, False), (3, True)])
def test_rules_table_e2e_watch_retries_counted_from_zero_in_loop_0(count, ends):
    watcher = Watcher(TWO, 1, invariants=Invariants(max_generate_retries=3))
    for i in range(count):
        watcher.feed(RETRY, 5.0 + i)
    assert (watcher.ended is not None) is ends
    if ends:
        assert watcher.ended == Event(kind="invariant", name="rollout-engines-unreachable: 3 retried /generate "
                                      "requests in loop 0 (bound 3)", line=RETRY, at_s=7.0, loop=0,
                                      failure_id="rollout-engines-unreachable", supporting=(1, 2, 3))
