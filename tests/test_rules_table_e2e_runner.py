"""Rule table for one e2e case's run and verdict (rlcheck.e2e.runner): the whole verdict for each way a watch ends
(no verdict, done, a known failure, a phase timeout, a broken invariant, with and without the lines it stands on),
the reward side's counts and verdicts on odd /metrics text, and the run itself without Ray: the job's log read
through a recorded job client, every line judged on a clock the test holds, and how the job is stopped or let end."""

from __future__ import annotations

import codecs
import queue
import sys
import threading
import types
from pathlib import Path

import pytest

from rlcheck import catalog
from rlcheck.e2e import runner
from rlcheck.e2e.watch import Event
from rlcheck.verdict import Status

TAIL = [f"tail line {i}" for i in range(20)]
SHOWN_TAIL = "\n".join(TAIL[5:])


def _run(end: Event | None, tail: list[str] = TAIL, status: str = "STOPPED") -> runner.CaseRun:
    return runner.CaseRun(job_id="raysubmit_1", end=end, job_status=status, phase_times=[], tail=tail,
                          log_path="/r/case.log", stopped_s=0.5)


def _event(kind: str, name: str = "x", line: str = "the line", failure_id: str | None = None,
           supporting: tuple[int, ...] = (), loop: int = 2) -> Event:
    return Event(kind=kind, name=name, line=line, at_s=1.0, loop=loop, failure_id=failure_id, supporting=supporting)


DIED, ZERO = catalog.get("ray-actor-died"), catalog.get("reward-silent-zero")
HANG = catalog.get("sglang-health-hang")
LONG = "  " + "E" * 310 + "  "

VERDICTS = [
    # name, end, status, failure id, remedy, summary, the supporting-lines line of the details ("" when none)
    ("no-verdict", None, Status.FAIL, None, "",
     "job STOPPED before any verdict: the log ended without the milestones of 3 loop(s)", ""),
    ("no-verdict-lines-unsaid", None, Status.FAIL, None, "",
     "job STOPPED before any verdict: the log ended without the milestones of 3 loop(s)", ""),
    ("done", _event("done", supporting=(40,)), Status.PASS, None, "",
     "3 GRPO loop(s), every milestone reached; job STOPPED", "supporting line 40 of /r/case.log"),
    ("failure", _event("failure", "ray-actor-died", "  ActorDiedError: gone  ", "ray-actor-died", (7,)),
     Status.FAIL, "ray-actor-died", DIED.remedy,
     f"ray-actor-died at loop 2: ActorDiedError: gone -- {DIED.title} (line 7 of the log)",
     "supporting line 7 of /r/case.log"),
    ("failure-two-lines", _event("failure", "ray-actor-died", "boom", "ray-actor-died", (3, 9)),
     Status.FAIL, "ray-actor-died", DIED.remedy, f"ray-actor-died at loop 2: boom -- {DIED.title} (lines 3, 9 of "
     "the log)", "supporting lines 3, 9 of /r/case.log"),
    ("failure-no-lines", _event("failure", "ray-actor-died", "boom", "ray-actor-died"),
     Status.FAIL, "ray-actor-died", DIED.remedy, f"ray-actor-died at loop 2: boom -- {DIED.title}", ""),
    ("failure-long-line-cut", _event("failure", "ray-actor-died", LONG, "ray-actor-died"),
     Status.FAIL, "ray-actor-died", DIED.remedy, f"ray-actor-died at loop 2: {'E' * 300} -- {DIED.title}", ""),
    ("timeout-with-hypothesis", _event("timeout", "train-actor-ready", "no train-actor-ready within 30 s",
                                       "sglang-health-hang", (12,), loop=0),
     Status.FAIL, "sglang-health-hang", "",
     "phase train-actor-ready timed out at loop 0: no train-actor-ready within 30 s; last progress at line 12",
     "supporting line 12 of /r/case.log"),
    ("timeout-no-progress", _event("timeout", "placement-group", "no placement-group within 30 s"),
     Status.FAIL, None, "", "phase placement-group timed out at loop 2: no placement-group within 30 s; "
     "last progress at no line", ""),
    ("invariant-with-entry", _event("invariant", "reward-silent-zero: mean raw reward 0.0", "  step 3 reward 0  ",
                                    "reward-silent-zero", (4, 5)),
     Status.FAIL, "reward-silent-zero", ZERO.remedy,
     "invariant broken at loop 2: reward-silent-zero: mean raw reward 0.0: step 3 reward 0 (lines 4, 5 of the log)",
     "supporting lines 4, 5 of /r/case.log"),
    ("invariant-without-entry", _event("invariant", "step 0 train/loss = nan", LONG, None, (8,)),
     Status.FAIL, None, "", f"invariant broken at loop 2: step 0 train/loss = nan: {'E' * 300} (line 8 of the log)",
     "supporting line 8 of /r/case.log"),
    # a failure event without a catalogue id is judged as a broken invariant (nothing to look up)
    ("failure-without-id", _event("failure", "odd", "odd line"), Status.FAIL, None, "",
     "invariant broken at loop 2: odd: odd line", ""),
]


@pytest.mark.parametrize(("end", "status", "failure_id", "remedy", "summary", "where"), [r[1:] for r in VERDICTS],
                         ids=[r[0] for r in VERDICTS])
def test_verdict_for_each_way_a_watch_ends(end, status, failure_id, remedy, summary, where):
    verdict = runner.verdict_for("qwen3-4b-colocated", _run(end), 3)
    assert (verdict.check_id, verdict.status, verdict.failure_id) == ("e2e_qwen3-4b-colocated", status, failure_id)
    assert (verdict.summary, verdict.remedy) == (summary, remedy)
    # the log's path, the lines the verdict stands on, then the last 15 lines of the log
    assert verdict.details == "\n".join(["log: /r/case.log", *([where] if where else []), "last lines:",
                                         SHOWN_TAIL])


def test_verdict_for_a_short_tail_shows_all_of_it():
    verdict = runner.verdict_for("c", _run(_event("done"), tail=["only line"], status="SUCCEEDED"), 1)
    assert verdict.details == "log: /r/case.log\nlast lines:\nonly line"
    assert verdict.summary == "1 GRPO loop(s), every milestone reached; job SUCCEEDED"


# The reward side: /metrics text as a service (or something else at --rm-url) may answer it.
COUNTS = [
    ("comments-and-blank", "# HELP x\n# TYPE rlcheck_reward_fallback_share gauge\n\nnovalue\n", {}),
    ("code-label", 'rlcheck_reward_requests_total{code="503",path="/score"} 4\n', {"code_503": 4.0}),
    ("code-label-missing", 'rlcheck_reward_requests_total{path="/score"} 4\n', {"code_": 4.0}),
    ("reason-label", 'rlcheck_reward_fallbacks_total{reason="timeout"} 2.5\n', {"fallbacks_timeout": 2.5}),
    ("reason-label-unclosed", 'rlcheck_reward_fallbacks_total{reason="late} 1\n', {"fallbacks_late}": 1.0}),
    ("plain-series", "rlcheck_reward_scorer_errors_total 3\nrlcheck_reward_fallback_share_replies 10\n",
     {"scorer_errors_total": 3.0, "fallback_share_replies": 10.0}),
    ("not-a-number", "rlcheck_reward_scorer_errors_total three\n", {}),
    ("other-series", "rlcheck_reward_pool_idle 2\nprocess_cpu_seconds_total 1\n", {}),
    ("a-series-named-like-a-prefix", "rlcheck_reward_requests_total 7\n", {}),
    ("leading-space-value", " 5\n", {}),
    # a label's value runs to its closing quote, spaces too; the value is the last word
    ("label-with-a-space", 'rlcheck_reward_fallbacks_total{reason="no answer"} 2\n', {"fallbacks_no answer": 2.0}),
    ("label-text-twice", 'rlcheck_reward_requests_total{code="acode="b",x="c"} 1\n', {"code_acode=": 1.0}),
    ("first-of-two-labels", 'rlcheck_reward_requests_total{code="200",status_code="500"} 9\n', {"code_200": 9.0}),
    ("garbled-then-good", "rlcheck_reward_scorer_errors_total x\nrlcheck_reward_scorer_timeouts_total 2\n",
     {"scorer_timeouts_total": 2.0}),
]


@pytest.mark.parametrize(("text", "counts"), [r[1:] for r in COUNTS], ids=[r[0] for r in COUNTS])
def test_reward_counts_reads_only_the_series_it_knows(text, counts):
    assert runner.reward_counts(text) == counts


SCORED = {"code_200": 300.0, "fallback_share": 0.0, "fallback_share_replies": 1000.0}
HEAD = "300 scored (200), other replies none, scorer timeouts/errors 0, fallbacks none, "
REWARD = [
    # name, counts, status, failure id, summary
    ("pass", SCORED, Status.PASS, None,
     HEAD + "fallback share 0 of the last 1000 replies (bound 0.05) (>= 250)"),
    ("zero-counts-are-no-replies-or-fallbacks", {**SCORED, "code_500": 0.0, "fallbacks_timeout": 0.0},
     Status.PASS, None, HEAD + "fallback share 0 of the last 1000 replies (bound 0.05) (>= 250)"),
    ("scorer-error-only-warns", {**SCORED, "scorer_errors_total": 2.0}, Status.WARN, "reward-silent-zero",
     "300 scored (200), other replies none, scorer timeouts/errors 2, fallbacks none, fallback share 0 of the last "
     "1000 replies (bound 0.05); every fallback is a wrong 0 to the trainer (see the service log)"),
    ("timeouts-and-errors-add", {**SCORED, "scorer_errors_total": 2.0, "scorer_timeouts_total": 1.0}, Status.WARN,
     "reward-silent-zero", "300 scored (200), other replies none, scorer timeouts/errors 3, fallbacks none, "
     "fallback share 0 of the last 1000 replies (bound 0.05); every fallback is a wrong 0 to the trainer (see the "
     "service log)"),
    ("fallback-reason-only-warns", {**SCORED, "fallbacks_label": 1.0}, Status.WARN, "reward-silent-zero",
     "300 scored (200), other replies none, scorer timeouts/errors 0, fallbacks {'label': 1}, fallback share 0 of "
     "the last 1000 replies (bound 0.05); every fallback is a wrong 0 to the trainer (see the service log)"),
    ("share-only-warns", {**SCORED, "fallback_share": 0.01}, Status.WARN, "reward-silent-zero",
     HEAD + "fallback share 0.01 of the last 1000 replies (bound 0.05); every fallback is a wrong 0 to the trainer "
     "(see the service log)"),
    ("none-scored", {"fallback_share": 0.0}, Status.FAIL, None,
     "0 scored (200), other replies none, scorer timeouts/errors 0, fallbacks none, fallback share 0 of the last 0 "
     "replies (bound 0.05); expected >= 250 scored, all 200, fallback share <= 0.05"),
    ("non-200", {**SCORED, "code_422": 3.0}, Status.FAIL, None,
     "300 scored (200), other replies {'code_422': 3}, scorer timeouts/errors 0, fallbacks none, fallback share 0 "
     "of the last 1000 replies (bound 0.05); expected >= 250 scored, all 200, fallback share <= 0.05"),
    ("share-above-1-unreadable", {**SCORED, "fallback_share": 1.5}, Status.UNKNOWN, None,
     HEAD + "fallback share unreadable: rlcheck_reward_fallback_share is 1.5, not a share in 0..1; the fallback "
     "bound could not be judged"),
    ("share-below-0-unreadable", {**SCORED, "fallback_share": -0.1}, Status.UNKNOWN, None,
     HEAD + "fallback share unreadable: rlcheck_reward_fallback_share is -0.1, not a share in 0..1; the fallback "
     "bound could not be judged"),
    ("share-at-1-fails", {**SCORED, "fallback_share": 1.0}, Status.FAIL, "reward-silent-zero",
     HEAD + "fallback share 1 of the last 1000 replies (bound 0.05); expected >= 250 scored, all 200, fallback "
     "share <= 0.05"),
]


@pytest.mark.parametrize(("counts", "status", "failure_id", "summary"), [r[1:] for r in REWARD],
                         ids=[r[0] for r in REWARD])
def test_reward_verdict_whole(counts, status, failure_id, summary):
    verdict = runner.reward_verdict("rm", counts, 250)
    assert (verdict.check_id, verdict.status, verdict.failure_id, verdict.summary) == (
        "e2e_rm_reward", status, failure_id, summary)
    remedy = {Status.PASS: "", Status.WARN: ZERO.remedy,
              Status.UNKNOWN: "run rlcheck's reward service (`rlcheck reward-service`) at --rm-url: its /metrics has "
                              "the share",
              Status.FAIL: ZERO.remedy if failure_id else runner._REPLIES_REMEDY}[status]
    assert verdict.remedy == remedy


def test_reward_verdict_bound_zero_is_allowed_and_a_bound_of_one_is_not():
    assert runner.reward_verdict("rm", SCORED, 250, max_fallback_share=0.0).status is Status.PASS
    with pytest.raises(ValueError, match=r"^max_fallback_share=1\.0: 0 <= value < 1$"):
        runner.reward_verdict("rm", SCORED, 250, max_fallback_share=1.0)
    assert runner._REPLIES_REMEDY.startswith("check that the job's --rm-url is this service")


# The run without Ray: a recorded job client, a reader run in place, a clock that moves one second per reading.
class Status_:
    def __init__(self, value: str) -> None:
        self.value = value

    def is_terminal(self) -> bool:
        return self.value in ("SUCCEEDED", "FAILED", "STOPPED")


class Client:
    """Ray's JobSubmissionClient as a recording: the log as it grows, the status per poll, the stop asked."""

    logs: list[str] = []
    statuses: list[str] = []
    made: list[str] = []
    calls: list[tuple[str, str]] = []

    def __init__(self, address: str) -> None:
        Client.made.append(address)

    def get_job_status(self, job_id: str) -> Status_:
        Client.calls.append(("status", job_id))
        return Status_(Client.statuses.pop(0) if len(Client.statuses) > 1 else Client.statuses[0])

    def get_job_logs(self, job_id: str) -> str:
        Client.calls.append(("logs", job_id))
        text = Client.logs.pop(0) if len(Client.logs) > 1 else Client.logs[0]
        if isinstance(text, Exception):
            raise text
        return text

    def stop_job(self, job_id: str) -> None:
        Client.calls.append(("stop", job_id))


@pytest.fixture
def ray_client(monkeypatch):
    """ray.job_submission answered by the recording (Ray itself is never imported)."""
    Client.logs, Client.statuses, Client.made, Client.calls = [""], ["RUNNING"], [], []
    module = types.ModuleType("ray.job_submission")
    module.JobSubmissionClient = Client  # type: ignore[attr-defined]
    package = types.ModuleType("ray")
    package.job_submission = module  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", package)
    monkeypatch.setitem(sys.modules, "ray.job_submission", module)
    return Client


class Clock:
    """time for the runner: monotonic() moves one second per reading (or gives the readings set); sleep() is
    recorded, never slept."""

    def __init__(self) -> None:
        self.now, self.slept, self.readings = 100.0, [], []

    def monotonic(self) -> float:
        self.now = self.readings.pop(0) if self.readings else self.now + 1.0
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def _drain(lines: queue.Queue[str | None]) -> list[str | None]:
    out = []
    while not lines.empty():
        out.append(lines.get_nowait())
    return out


@pytest.fixture
def clock(monkeypatch):
    held = Clock()
    monkeypatch.setattr(runner, "time", held)
    return held


def test_poll_logs_pushes_whole_lines_as_they_come_then_the_rest_and_the_end(ray_client, clock):
    ray_client.logs = ["a\nb", "a\nbc\n\nd", "a\nbc\n\nd" + "x" * 2**20 + "\ne\nf"]
    ray_client.statuses = ["RUNNING", "RUNNING", "SUCCEEDED"]
    lines: queue.Queue[str | None] = queue.Queue()
    runner._poll_logs("http://127.0.0.1:8265", "job1", lines, threading.Event())
    assert _drain(lines) == ["a", "bc", "", "d" + "x" * 2**20, "e", "f", None]
    assert ray_client.made == ["http://127.0.0.1:8265"]  # the dashboard asked
    assert ray_client.calls == [("status", "job1"), ("logs", "job1")] * 3
    # the interval grows with the log read so far: 0.25 s plus 50 ms per MB
    assert clock.slept == [0.25 + 0.05 * 3 / 2**20, 0.25 + 0.05 * 7 / 2**20]


def test_poll_logs_stops_when_told_and_keeps_a_last_partial_line(ray_client, clock):
    done = threading.Event()
    ray_client.logs = ["first\nhalf"]

    def stop_after_sleep(seconds):
        clock.slept.append(seconds)
        done.set()

    clock.sleep = stop_after_sleep
    lines: queue.Queue[str | None] = queue.Queue()
    runner._poll_logs("u", "job1", lines, done)
    assert _drain(lines) == ["first", "half", None]
    assert ray_client.calls == [("status", "job1"), ("logs", "job1")]


def test_poll_logs_told_to_stop_before_it_starts_reads_nothing(ray_client, clock):
    done = threading.Event()
    done.set()
    lines: queue.Queue[str | None] = queue.Queue()
    runner._poll_logs("u", "job1", lines, done)
    assert _drain(lines) == [None] and ray_client.calls == [] and clock.slept == []


def test_poll_logs_a_broken_reader_is_a_line_never_a_hang(ray_client, clock):
    ray_client.logs = ["ok\npart", ConnectionError("dashboard gone")]
    lines: queue.Queue[str | None] = queue.Queue()
    runner._poll_logs("u", "job1", lines, threading.Event())
    assert _drain(lines) == ["ok", "rlcheck: log reader ended: ConnectionError: dashboard gone", None]


class Watch:
    """The watcher's side of run_case as a recording: what was checked and fed when; ends as scripted."""

    def __init__(self, end_on: str = "", overdue_at: float = -1.0) -> None:
        self.end_on, self.overdue_at = end_on, overdue_at
        self.ended: Event | None = None
        self.checked: list[float] = []
        self.fed: list[tuple[str, float]] = []
        self.finished = 0
        self.tail = [f"kept {i}" for i in range(40)]

    def check(self, now_s: float) -> list[Event]:
        self.checked.append(now_s)
        if self.ended is None and now_s == self.overdue_at:
            self.ended = Event(kind="timeout", name="rollout", line="no rollout", at_s=now_s)
            return [self.ended]
        return []

    def feed(self, line: str, at_s: float) -> list[Event]:
        self.fed.append((line, at_s))
        if line == self.end_on:
            kind = "done" if line == "DONE" else "failure"
            self.ended = Event(kind=kind, name=line, line=line, at_s=at_s, failure_id="ray-actor-died")
            return [self.ended]
        return []

    def finish(self) -> list[Event]:
        self.finished += 1
        return []

    def phase_times(self) -> list[dict[str, float]]:
        return [{"rollout": 1.5}]


class InPlace:
    """threading for the runner: the reader runs to its end when started (or never, `silent`), so every line is
    queued before the watch reads one (the recorded job has ended by its first poll)."""

    started: list[dict[str, object]] = []
    silent = False

    def __init__(self, *, target, args, daemon) -> None:
        self.target, self.args = target, args
        InPlace.started.append({"daemon": daemon, "args": args[:2]})

    def start(self) -> None:
        if not InPlace.silent:
            self.target(*self.args)


@pytest.fixture
def held_run(monkeypatch, ray_client, clock):
    InPlace.started, InPlace.silent = [], False
    monkeypatch.setattr(runner, "threading", types.SimpleNamespace(Thread=InPlace, Event=threading.Event))
    submitted: list[tuple[object, ...]] = []

    def submit(url, argv, *, runtime_env=None):
        submitted.append((url, list(argv), runtime_env))
        return "raysubmit_7"

    monkeypatch.setattr(runner.launch, "submit_argv", submit)
    awaited: list[tuple[str, float]] = []
    answers: list[str | None] = []

    def await_terminal(client, job_id, timeout_s):
        assert isinstance(client, Client)
        awaited.append((job_id, timeout_s))
        return answers.pop(0)

    monkeypatch.setattr(runner.launch, "await_terminal", await_terminal)
    return types.SimpleNamespace(submitted=submitted, awaited=awaited, answers=answers, client=ray_client, clock=clock)


def test_run_case_log_that_ends_lets_the_job_end_and_names_a_waiting_consequence(held_run, tmp_path):
    held_run.client.logs, held_run.client.statuses = ["one\n\ntwo\nthree"], ["SUCCEEDED"]
    held_run.answers[:] = ["SUCCEEDED"]
    watch = Watch()
    log = tmp_path / "deep" / "deeper" / "case.log"
    run = runner.run_case("http://d:8265", ["python", "train.py"], watch, log_path=log, runtime_env={"env_vars": {}})
    assert held_run.submitted == [("http://d:8265", ["python", "train.py"], {"env_vars": {}})]
    assert InPlace.started == [{"daemon": True, "args": ("http://d:8265", "raysubmit_7")}]
    # the clock: 101 at the start; per line one reading to check, one to feed, one to check again (a blank line is
    # neither written nor fed, only checked), and a last check once the reader says the log ended
    assert watch.fed == [("one", 2.0), ("two", 6.0), ("three", 9.0)]
    assert watch.checked == [1.0, 3.0, 4.0, 5.0, 7.0, 8.0, 10.0, 11.0]
    assert watch.finished == 1 and log.read_text() == "one\ntwo\nthree\n"
    assert held_run.awaited == [("raysubmit_7", 60.0)] and ("stop", "raysubmit_7") not in held_run.client.calls
    assert held_run.client.made == ["http://d:8265", "http://d:8265"]  # the reader's client, then the one that ends it
    assert run == runner.CaseRun(job_id="raysubmit_7", end=None, job_status="SUCCEEDED",
                                 phase_times=[{"rollout": 1.5}], tail=[f"kept {i}" for i in range(10, 40)],
                                 log_path=str(log), stopped_s=1.0)


def test_run_case_job_that_does_not_end_within_a_minute_is_stopped(held_run, tmp_path):
    held_run.client.logs, held_run.client.statuses = ["one\n"], ["SUCCEEDED"]
    held_run.answers[:] = [None, "STOPPED"]
    run = runner.run_case("u", ["a"], Watch(), log_path=tmp_path / "case.log")
    assert held_run.submitted == [("u", ["a"], None)]
    assert held_run.awaited == [("raysubmit_7", 60.0), ("raysubmit_7", 30.0)]
    assert held_run.client.calls[-1] == ("stop", "raysubmit_7") and run.job_status == "STOPPED"


@pytest.mark.parametrize(("answer", "status"), [("STOPPED", "STOPPED"), (None, "STOP-TIMEOUT")])
def test_run_case_known_failure_stops_the_job_at_once(held_run, tmp_path, answer, status):
    held_run.client.logs, held_run.client.statuses = ["one\nboom\nafter\n"], ["SUCCEEDED"]
    held_run.answers[:] = [answer]
    watch = Watch(end_on="boom")
    run = runner.run_case("u", ["a"], watch, log_path=tmp_path / "case.log")
    assert watch.fed == [("one", 2.0), ("boom", 5.0)] and watch.finished == 0  # nothing after the verdict
    assert (tmp_path / "case.log").read_text() == "one\nboom\n"
    assert held_run.awaited == [("raysubmit_7", 30.0)] and held_run.client.calls[-1] == ("stop", "raysubmit_7")
    # the stop is timed from the ending line (5 s after the start) to the result (8 s after it)
    assert (run.end, run.job_status, run.stopped_s) == (watch.ended, status, 3.0)


def test_run_case_all_milestones_let_the_job_end_by_itself(held_run, tmp_path):
    held_run.client.logs, held_run.client.statuses = ["DONE\nmore\n"], ["SUCCEEDED"]
    held_run.answers[:] = ["SUCCEEDED"]
    watch = Watch(end_on="DONE")
    run = runner.run_case("u", ["a"], watch, log_path=tmp_path / "case.log")
    assert held_run.awaited == [("raysubmit_7", 60.0)] and ("stop", "raysubmit_7") not in held_run.client.calls
    assert (run.end.kind, run.job_status, watch.finished) == ("done", "SUCCEEDED", 0)


def test_run_case_an_overdue_line_is_written_not_fed(held_run, tmp_path):
    held_run.client.logs, held_run.client.statuses = ["one\ntwo\n"], ["SUCCEEDED"]
    held_run.answers[:] = ["STOPPED"]
    watch = Watch(overdue_at=4.0)  # the check before "two" finds the phase overdue: "two" is written, not fed
    run = runner.run_case("u", ["a"], watch, log_path=tmp_path / "case.log")
    assert watch.fed == [("one", 2.0)] and watch.checked == [1.0, 3.0, 4.0, 5.0]
    assert (tmp_path / "case.log").read_text() == "one\ntwo\n"
    assert (run.end, run.stopped_s, held_run.awaited) == (watch.ended, 3.0, [("raysubmit_7", 30.0)])


class Lines:
    """queue for the runner: an empty queue answers at once, recording the wait it was given."""

    Empty = queue.Empty
    waits: list[float] = []

    class Queue:
        def __init__(self) -> None:
            self.items: list[str | None] = []

        def put(self, item: str | None) -> None:
            self.items.append(item)

        def get(self, timeout: float) -> str | None:
            Lines.waits.append(timeout)
            if not self.items:
                raise queue.Empty
            return self.items.pop(0)


def test_run_case_a_silent_log_still_meets_its_deadline(held_run, tmp_path, monkeypatch):
    InPlace.silent = True  # the reader never answers: the watch waits poll_s (0.2 s) at a time and checks each time
    monkeypatch.setattr(runner, "queue", Lines)
    Lines.waits = []
    held_run.answers[:] = ["STOPPED"]
    held_run.clock.readings = [100.0, 100.5, 101.0, 101.75, 102.23456]
    watch = Watch(overdue_at=1.0)
    run = runner.run_case("u", ["a"], watch, log_path=tmp_path / "silent.log")
    assert watch.fed == [] and watch.checked == [0.5, 1.0] and watch.finished == 0 and Lines.waits == [0.2, 0.2]
    assert (tmp_path / "silent.log").read_text() == "" and run.end is watch.ended
    assert run.stopped_s == 1.235  # from the ending check (1 s in) to the result (2.23456 s in), in ms
    assert Path(run.log_path) == tmp_path / "silent.log"


class Written(type(Path())):  # type: ignore[misc]
    """A log path that records how it was opened."""

    opened: list[dict[str, object]] = []

    def open(self, *args, **kwargs):  # type: ignore[override]
        Written.opened.append(kwargs)
        return super().open(*args, **kwargs)


def test_run_case_writes_the_log_as_utf_8_whatever_the_locale(held_run, tmp_path):
    held_run.client.logs, held_run.client.statuses = ["思考 → done\n"], ["SUCCEEDED"]
    held_run.answers[:] = ["SUCCEEDED"]
    Written.opened = []
    log = Written(tmp_path / "case.log")
    runner.run_case("u", ["a"], Watch(), log_path=log)
    ((kwargs,),) = [Written.opened]
    assert codecs.lookup(str(kwargs.get("encoding"))).name == "utf-8"
    assert log.read_bytes() == "思考 → done\n".encode()
