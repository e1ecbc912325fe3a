"""The watcher as a pure state machine: SLIME's milestones in order, known failures, deadlines, invariants."""

from __future__ import annotations

import pytest

from rlcheck.e2e import replay, runner, slime_log
from rlcheck.e2e.slime_metrics import MAX_KEYS, parse_metrics
from rlcheck.e2e.watch import MAX_LINE_CHARS, TAIL_CHARS, Invariants, Watcher

DEADLINES = slime_log.Deadlines(placement_s=10, startup_s=30, rollout_s=20, phase_s=5)
KL_ARGV = ("--use-kl-loss",)
V024 = slime_log.tables()["v0.2.4"]


def plan(version: str = "v0.2.4", argv: tuple[str, ...] = KL_ARGV):
    return slime_log.plan(version, DEADLINES, argv)


def timer(name: str, s: float | None = None) -> str:
    st = V024.statements
    text = st["timer_start"].render(name=name) if s is None else st["timer_end"].render(name=name, elapsed_time=s)
    return f"(MegatronTrainRayActor pid=3301) [2026-07-01 10:00:00] timer.py:32 - {text}"


STARTUP = ["[2026-07-01 10:00:00] placement_group.py:71 -   bundle    0, actual_bundle_index:    0, node: n, gpu: 0",
           timer("train_wait"), timer("update_weights"), timer("update_weights", 12.1)]
PERF = "(RolloutManager pid=2201) [2026-07-01 10:00:00] rollout.py:1190 - perf {i}: {{'rollout/truncated_ratio': {t}, "\
       "'perf/rollout_time': 98.1}}"
LOOP = [PERF.format(i=0, t=0.0), timer("ref_log_probs", 27.4), timer("log_probs", 9.0), timer("actor_train", 55.4),
        timer("train", 93.2), timer("update_weights", 12.1)]


def feed(watcher: Watcher, lines: list[str], step_s: float = 1.0) -> float:
    now = 0.0
    for line in lines:
        now += step_s
        watcher.feed(line, now)
    return now


def test_watch_clean_run_reaches_every_milestone_of_every_loop():
    milestones, invariants = plan()
    watcher = Watcher(milestones, loops=2, invariants=invariants)
    feed(watcher, ["noise", *STARTUP, *LOOP, *LOOP])
    assert watcher.ended and watcher.ended.kind == "done" and watcher.ended.failure_id is None
    times = watcher.phase_times()
    assert list(times[0]) == ["placement-group", "train-actor-ready", "weights-synced", "rollout", "ref_log_probs",
                              "log_probs", "actor_train", "train", "update_weights"]
    assert list(times[1]) == ["rollout", "ref_log_probs", "log_probs", "actor_train", "train", "update_weights"]


def test_watch_optional_phases_follow_the_argv():
    names = [m.name for m in plan(argv=("--use-rollout-logprobs",))[0]]
    assert "ref_log_probs" not in names and "log_probs" not in names and "actor_train" in names


def test_watch_milestones_must_come_in_order():
    watcher = Watcher(plan()[0], loops=1)
    feed(watcher, [*STARTUP, timer("train", 9.0), *LOOP])
    assert watcher.ended.kind == "done"
    assert [e.name for e in watcher.events if e.kind == "milestone"][3:5] == ["rollout", "ref_log_probs"]


def test_watch_train_actors_perf_line_is_not_the_rollout():
    watcher = Watcher(plan()[0], loops=1)
    feed(watcher, [*STARTUP, "[2026-07-01 10:00:00] train_metric_utils.py:44 - perf 0: {'perf/train_time': 9.0}"])
    assert [e.name for e in watcher.events][-1] == "weights-synced"


def test_watch_known_failure_ends_the_run_with_its_id():
    watcher = Watcher(plan()[0], loops=3)
    feed(watcher, [*STARTUP, "KeyError: 'warn'", *LOOP])
    assert watcher.ended.kind == "failure" and watcher.ended.failure_id == "uvicorn-log-level"
    assert watcher.feed("more", 99.0) == []


@pytest.mark.parametrize(("version", "lines", "missing", "failure_id"), [
    ("v0.2.4", [], "placement-group", "placement-group-oversubscribed"),
    ("v0.2.4", STARTUP[:1], "train-actor-ready", "sglang-health-hang"),  # engines first, then Megatron
    ("v0.2.4", STARTUP[:3], "weights-synced", None),
    ("v0.3.1", STARTUP[:1], "train-actor-ready", None),  # Megatron init while the engines start
    ("v0.3.1", STARTUP[:3], "weights-synced", "sglang-health-hang"),  # the sync waits for the engines
    ("main", STARTUP[:3], "weights-synced", "sglang-health-hang"),
    ("main", [*STARTUP, *LOOP[:3]], "actor_train", None),
])
def test_watch_deadline_names_the_phase_and_its_hypothesis(version, lines, missing, failure_id):
    watcher = Watcher(plan(version)[0], loops=1)
    now = feed(watcher, lines)
    due, milestone = watcher.deadline()
    assert milestone.name == missing and watcher.check(due - 0.01) == []
    [event] = watcher.check(due)
    assert event.kind == "timeout" and event.name == missing and event.failure_id == failure_id and due >= now


def rollout(i: int, reward: float) -> str:
    return f"(MegatronTrainRayActor pid=3309, ip=10.1.0.6) [x] data.py:208 - rollout {i}: " \
           f"{{'rollout/raw_reward': {reward}}}"


@pytest.mark.parametrize(("rewards", "loops", "ends"), [
    ([0.0], 3, False), ([0.0, 0.0], 3, False), ([0.0, 0.0, 0.0], 3, True), ([0.0, 0.5, 0.0, 0.0], 5, False),
    ([0.0], 1, True),  # a one-loop run has one rollout to judge
])
def test_watch_zero_reward_is_judged_over_a_window(rewards, loops, ends):
    watcher = Watcher(plan()[0], loops=loops)
    feed(watcher, [rollout(i, r) for i, r in enumerate(rewards)])
    assert (watcher.ended is not None) is ends
    if ends:
        assert watcher.ended.kind == "invariant" and watcher.ended.failure_id == "reward-silent-zero"


@pytest.mark.parametrize(("line", "failure_id", "name"), [
    (PERF.format(i=0, t=0.4609375), "kv-pool-truncation", "rollout/truncated_ratio = 0.461 > 0.2"),
    ("[x] data.py:208 - rollout 0: {'rollout/raw_reward': 0.5, 'rollout/truncated': 0.84}", "kv-pool-truncation",
     "rollout/truncated = 0.840"),
    ("[x] model.py:660 - step 0: {'train/ppo_kl': 0.03, 'train/kl_loss': 0.0}", None, "step-0 train/ppo_kl = 0.03"),
    ("[x] model.py:660 - step 0: {'train/ppo_kl': 0.0, 'train/kl_loss': 0.002}", None, "step-0 train/kl_loss"),
    ("[x] model.py:660 - step 4: {'train/loss': nan, 'train/grad_norm': 0.4}", None, "step 4 train/loss = nan"),
    ("[x] data.py:208 - rollout 1: {'rollout/raw_reward': -inf}", None, "rollout 1 rollout/raw_reward = -inf"),
])
def test_watch_invariants(line, failure_id, name):
    watcher = Watcher(plan()[0], loops=3)
    feed(watcher, [*STARTUP, line])
    assert watcher.ended.kind == "invariant" and watcher.ended.failure_id == failure_id and name in watcher.ended.name


@pytest.mark.parametrize("line", [
    PERF.format(i=0, t=0.2),  # at the bound
    "[x] model.py:660 - step 0: {'train/ppo_kl': 0.0, 'train/kl_loss': 0.0}",
    "[x] model.py:660 - step 1: {'train/ppo_kl': 0.2}",  # only step 0 is on-policy
    "[x] model.py:660 - critic-step 0: {'train/critic-ppo_kl': 0.2}",
    "[x] rollout.py:1190 - perf 0: {'perf/longest_sample_tokens_per_sec': nan, 'perf/rollout_time': 1.0}",
])
def test_watch_invariants_hold_at_and_inside_their_bounds(line):
    watcher = Watcher(plan()[0], loops=3)
    feed(watcher, [*STARTUP, line])
    assert watcher.ended is None


def test_watch_step0_kl_loss_is_skipped_under_routing_replay():
    line = "[x] model.py:660 - step 0: {'train/ppo_kl': 0.0, 'train/kl_loss': 0.002}"
    milestones, invariants = plan(argv=(*KL_ARGV, "--use-rollout-routing-replay"))
    assert invariants == Invariants(step0_kl_loss=False)
    watcher = Watcher(milestones, loops=1, invariants=invariants)
    feed(watcher, [line])
    assert watcher.ended is None


def test_watch_nonfinite_metric_outside_loss_and_reward_is_reported():
    watcher = Watcher(plan()[0], loops=3)
    feed(watcher, ["[x] rollout.py:1190 - perf 0: {'perf/log_probs_tflops': inf, 'perf/rollout_time': 1.0}"])
    assert watcher.ended is None and watcher.notes == ["perf 0 perf/log_probs_tflops = inf (not finite)"]


@pytest.mark.parametrize(("line", "what", "index", "values", "complete"), [
    ("(RolloutManager pid=1) [t] rollout.py:1 - perf 3: {'a': 0.5, 'b': nan, 'c': -inf, 'd': np.float64(0.25)}",
     "perf", 3, {"a": "0.5", "b": "nan", "c": "-inf", "d": "0.25"}, True),
    ("step 0: {'t': tensor(0.5, device='cuda:0'), 'k': 'x, y', 'n': None}", "step", 0,
     {"t": "0.5", "k": "'x, y'", "n": "None"}, True),
    ("rollout 7: {'a': 1.0, 'b': 2", "rollout", 7, {"a": "1.0", "b": "2.0"}, False),  # cut: what was read is kept
])
def test_watch_metric_lines(line, what, index, values, complete):
    parsed = parse_metrics(line)
    assert parsed is not None and (parsed.what, parsed.index, parsed.complete) == (what, index, complete)
    assert {k: str(v) for k, v in parsed.values.items()} == values  # floats as str: nan != nan


@pytest.mark.parametrize("line", ["Timer train end (elapsed: 1.0s)", "rollout 3: {not python}",
                                  "fully-async rollout 3: collected 4/8", "step 0: nothing"])
def test_watch_non_metric_lines(line):
    assert parse_metrics(line) is None


def test_watch_hostile_lines_are_bounded():
    huge = "step 0: {" + ", ".join(f"'k{i}': 1.0" for i in range(400_000)) + "}"  # ~5 MB of metrics
    parsed = parse_metrics(huge)
    assert parsed is not None and len(parsed.values) <= MAX_KEYS and not parsed.complete
    watcher = Watcher(plan()[0], loops=3)
    for i in range(20):
        watcher.feed("x" * 1_000_000 + f" line {i}", float(i))
    assert sum(map(len, watcher.tail)) <= TAIL_CHARS and max(map(len, watcher.tail)) == MAX_LINE_CHARS
    assert watcher.notes[0] == f"a 1000007-character line was cut at {MAX_LINE_CHARS} before matching"


NAN_LINE = ("RuntimeError: Rank 3, node n, device 3, iteration 1: Unexpected result nan (message='found NaN in local "
            "grad norm for bucket #0 in backward pass before data-parallel communication collective')")


@pytest.mark.parametrize(("traits", "failure_id"), [
    (frozenset({"dsa"}), "sparse-mla-bwd-nan"),
    (frozenset(), "nan-result"),
    (None, "sparse-mla-bwd-nan"),
])
def test_watch_trait_entry_names_the_line_only_on_a_job_with_the_trait(traits, failure_id):
    milestones, invariants = plan()
    watcher = Watcher(milestones, 1, invariants=invariants, traits=traits)
    watcher.feed(NAN_LINE, 1.0)
    assert watcher.ended is not None and watcher.ended.failure_id == failure_id


# SLIME's http_utils._post retry line (v0.2.0 on; Miles' is the same), written from the source: "Error: <exception>,
# retrying... (attempt N/M, url=<url>, response=<body or None>)"; httpx.ConnectError reads "All connection attempts
# failed". The posted 503 form (THUDM/slime#1328) carries no_available_workers and is caught on its own line.
RETRY = "(RolloutManager pid=1191) [2026-07-01 10:00:00] http_utils.py:185 - Error: All connection attempts failed, " \
        "retrying... (attempt {n}/60, url=http://10.1.0.5:3592/generate, response=None)"
LOOSE = Invariants(max_generate_retries=3)


@pytest.mark.parametrize(("lines", "ends", "supporting"), [
    ([RETRY.format(n=1), RETRY.format(n=2)], False, ()),
    ([RETRY.format(n=1), "noise", RETRY.format(n=2), RETRY.format(n=3)], True, (1, 3, 4)),  # at the bound
    ([RETRY.format(n=1), RETRY.format(n=2), *LOOP, RETRY.format(n=1), RETRY.format(n=2)], False, ()),  # per loop
    ([RETRY.format(n=i) for i in range(1, 11)], True, (1, 2, 3)),  # ends at the bound, not later
    # the reward model's URL, SLIME v0.1.0's url-less wording, the give-up line and a successful POST do not count
    ([RETRY.format(n=1).replace("/generate", "/judge"), "Error: timed out, retrying... (attempt 2/60)",
      "Max retries (60) reached, failing... (url=http://10.1.0.5:3592/generate)",
      '"POST /generate HTTP/1.1" 200 OK'] * 3, False, ()),
])
def test_watch_generate_retries_are_counted_per_loop(lines, ends, supporting):
    watcher = Watcher(plan()[0], loops=3, invariants=LOOSE)
    feed(watcher, [*STARTUP, *lines])
    assert (watcher.ended is not None) is ends
    if ends:
        offset = len(STARTUP)
        assert watcher.ended.kind == "invariant" and watcher.ended.failure_id == "rollout-engines-unreachable"
        assert watcher.ended.supporting == tuple(offset + n for n in supporting)
        assert "3 retried /generate requests in loop 0 (bound 3)" in watcher.ended.name


@pytest.mark.parametrize(("count", "ends"), [(99, False), (100, True)])
def test_watch_generate_retry_default_bound(count, ends):
    watcher = Watcher(plan()[0], loops=3)
    feed(watcher, [RETRY.format(n=i % 60 + 1) for i in range(count)])
    assert (watcher.ended is not None) is ends
    if ends:  # the first five line numbers and the one that crossed the bound
        assert watcher.ended.supporting == (1, 2, 3, 4, 5, 100) and watcher.ended.lines_text().startswith("lines 1, 2")


def test_watch_generate_retry_bound_is_validated():
    with pytest.raises(ValueError, match="max_generate_retries=0"):
        Invariants(max_generate_retries=0)


WEIGHTS_SLOW = "(MegatronTrainRayActor pid=6437) [2026-02-11 10:02:41] timer.py:32 - Timer update_weights end " \
               "(elapsed: 1204.9s)"


@pytest.mark.parametrize(("lines", "failure_id", "supporting"), [
    ([*STARTUP, "noise", "KeyError: 'warn'"], "uvicorn-log-level", (6,)),
    ([*STARTUP, *LOOP[:5], WEIGHTS_SLOW], "weight-update-slow", (10,)),  # the weight-update band's line
    ([*STARTUP, PERF.format(i=0, t=0.4609375)], "kv-pool-truncation", (5,)),
    ([*STARTUP, rollout(0, 0.0), "noise", rollout(1, 0.0), rollout(2, 0.0)], "reward-silent-zero", (5, 7, 8)),
    ([*STARTUP, rollout(0, 0.0), rollout(1, 0.5), rollout(2, 0.0), rollout(3, 0.0), rollout(4, 0.0)],
     "reward-silent-zero", (7, 8, 9)),  # a non-zero reward restarts the window
])
def test_watch_ending_event_names_its_supporting_lines(lines, failure_id, supporting):
    watcher = Watcher(plan()[0], loops=5)
    feed(watcher, lines)
    assert watcher.ended.failure_id == failure_id and watcher.ended.supporting == supporting


@pytest.mark.parametrize(("lines", "supporting"), [([], ()), (["noise", *STARTUP[:1]], (2,)), (STARTUP, (4,))])
def test_watch_timeout_names_the_line_of_the_last_progress(lines, supporting):
    watcher = Watcher(plan()[0], loops=1)
    feed(watcher, lines)
    [event] = watcher.check(watcher.deadline()[0])
    assert event.kind == "timeout" and event.supporting == supporting
    assert [e.supporting for e in watcher.events if e.kind == "milestone"][-1:] == ([supporting] if lines else [])


@pytest.mark.parametrize(("lines", "fragment"), [
    ([*STARTUP, "KeyError: 'warn'"], "(line 5 of the log)"),
    ([*STARTUP, rollout(0, 0.0), rollout(1, 0.0), rollout(2, 0.0)], "(lines 5, 6, 7 of the log)"),
])
def test_watch_verdict_and_replay_report_show_the_supporting_lines(tmp_path, lines, fragment):
    watcher = Watcher(plan()[0], loops=3)
    feed(watcher, lines)
    run = runner.CaseRun(job_id="j", end=watcher.ended, job_status="STOPPED", phase_times=[], tail=[],
                         log_path="job.log", stopped_s=0.0)
    verdict = runner.verdict_for("case", run, 3)
    where = fragment[1:].split(" of")[0]
    assert verdict.summary.endswith(fragment) and f"supporting {where} of job.log" in verdict.details
    log = tmp_path / "job.log"
    log.write_text("\n".join(lines) + "\n")
    report = replay.replay(log, loops=3)
    assert report["verdict"]["supporting"] == list(watcher.ended.supporting)
    shown = ", ".join(map(str, watcher.ended.supporting))
    assert f"supporting line(s) of the log: {shown}" in replay.render_text(report)


AUTOSCALER_GPU = "(autoscaler +9m40s) Warning: The following resource request cannot be scheduled right now: " \
                 "{'CPU': 1.0, 'GPU': 1.0}. This is likely due to all cluster resources being claimed by actors. " \
                 "Consider creating fewer actors or adding more nodes to this Ray cluster."
HEARTBEAT = "Waiting for placement group of 20 GPUs (elapsed {s}s): 16 GPUs registered with Ray, 16 available."


@pytest.mark.parametrize(("lines", "ends_on_a_line"), [
    ([AUTOSCALER_GPU] * 3, False),  # Ray's pending-demand warning: only the placement deadline decides
    ([HEARTBEAT.format(s=30), AUTOSCALER_GPU, HEARTBEAT.format(s=1770)], False),
    ([HEARTBEAT.format(s=30), AUTOSCALER_GPU, HEARTBEAT.format(s=1800)], True),  # SLIME's own 30-minute mark
])
def test_watch_placement_wait_is_a_failure_only_past_its_deadline(lines, ends_on_a_line):
    watcher = Watcher(plan()[0], loops=1)
    feed(watcher, lines)
    if ends_on_a_line:
        assert watcher.ended.failure_id == "placement-group-oversubscribed" and watcher.ended.supporting == (3,)
        return
    assert watcher.ended is None
    [event] = watcher.check(watcher.deadline()[0])
    assert (event.kind, event.failure_id, event.supporting) == ("timeout", "placement-group-oversubscribed", ())
