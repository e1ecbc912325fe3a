"""Rule table for the fan-out through Ray's Jobs API (rlcheck.cluster.fanout_job): the job's argv, the whole result
of each way it ends (the head's API not answering, a job that gave no result line, a driver's result handed on with
what was tried), the wait's bound before and after the PLAN line (both sides of the deadline) and the PLAN line
relayed once. A stand-in Jobs client and clock; no Ray."""

from __future__ import annotations

import argparse
import json
import sys
import types

import pytest

from rlcheck.cluster import fanout_job, launch
from rlcheck.cluster import fanout_result as fr
from rlcheck.cluster.fanout_result import PLAN, RESULT, FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.process.wait import WaitResult


def args(**over) -> argparse.Namespace:
    base = {"address": "http://head:8265/", "job_python": "/venv/bin/python3", "collector": "pkg.mod:fn",
            "kwargs": '{"a": 1}', "node_timeout_s": 60.0, "connect_timeout_s": 30.0}
    return argparse.Namespace(**(base | over))


def test_the_jobs_argv_runs_the_driver_on_the_head_with_each_option():
    assert fanout_job._job_argv(args(node_timeout_s=7.5, connect_timeout_s=3)) == [
        "/venv/bin/python3", "-m", "rlcheck.cluster.fanout", "--address", "auto", "--collector", "pkg.mod:fn",
        "--kwargs", '{"a": 1}', "--node-timeout-s", "7.5", "--connect-timeout-s", "3"]


class Clock:
    def __init__(self, step: float = 1.0) -> None:
        self.now, self.step = 100.0, step

    def monotonic(self) -> float:
        self.now += self.step
        return self.now


@pytest.fixture
def drive(monkeypatch):
    """drive_through_job with a stand-in head: what the version probe, the submission and the wait answer."""
    seen: dict = {}
    clock = Clock()
    monkeypatch.setattr(fanout_job, "time", types.SimpleNamespace(monotonic=clock.monotonic))

    class Client:
        def __init__(self, url):
            seen["client"] = url

    monkeypatch.setitem(sys.modules, "ray.job_submission", types.SimpleNamespace(JobSubmissionClient=Client))

    def run(probe: WaitResult, status: str = "SUCCEEDED", logs: str = "", a=None):
        def wait_http_ok(url, *, timeout_s):
            seen["probe"] = (url, timeout_s)
            return probe

        def submit_argv(url, argv, *, runtime_env, metadata):
            seen["submit"] = (url, argv, runtime_env, metadata)
            return "raysubmit_1"

        def wait_planned(client, job_id, wait_s, *, relay):
            seen["wait"] = (type(client).__name__, job_id, wait_s(None), wait_s(4))
            relay("PLAN-LINE")
            return status, logs

        monkeypatch.setattr(fanout_job, "wait_http_ok", wait_http_ok)
        monkeypatch.setattr(launch, "submit_argv", submit_argv)
        monkeypatch.setattr(fanout_job, "wait_planned", wait_planned)
        return fanout_job.drive_through_job(a or args())

    return run, seen


def test_a_head_whose_api_does_not_answer_is_not_connected_and_no_job_is_sent(drive):
    run, seen = drive
    got = run(WaitResult(ok=False, elapsed_s=30.0, attempts=4, last_error="connection refused"))
    assert got == FanoutResult(address="http://head:8265/", connected=False,
                               tried="GET http://head:8265/api/version for up to 30 s", elapsed_s=1.0,
                               error="4 attempt(s), last: connection refused")
    assert seen == {"probe": ("http://head:8265/api/version", 30.0)}


def test_a_job_with_no_result_line_says_how_it_ended_and_its_last_three_lines(drive, capsys):
    run, seen = drive
    logs = "\n  one\ntwo\nthree\nfour  \n\n"
    got = run(WaitResult(ok=True, elapsed_s=0.1, attempts=1, last_error=""), status="FAILED", logs=logs,
              a=args(connect_timeout_s=12.6))
    assert got == FanoutResult(
        address="http://head:8265/", connected=False, elapsed_s=1.0,
        tried="GET http://head:8265/api/version for up to 13 s; then Ray job raysubmit_1 (python -m "
              "rlcheck.cluster.fanout on the head)",
        error="job raysubmit_1 ended FAILED with no result: two | three | four")
    assert seen["submit"] == ("http://head:8265", fanout_job._job_argv(args(connect_timeout_s=12.6)),
                              fr.package_runtime_env(), {"rlcheck": "per-node fan-out"})
    assert seen["client"] == "http://head:8265"
    assert seen["wait"] == ("Client", "raysubmit_1", fanout_job.job_wait_s(12.6, 60.0, None),
                            fanout_job.job_wait_s(12.6, 60.0, 4))
    assert capsys.readouterr().out == "PLAN-LINE\n"


def test_the_plan_line_is_relayed_flushed(drive, monkeypatch):
    run, _ = drive
    written: list[str] = []
    out = types.SimpleNamespace(write=written.append, flush=lambda: written.append("<flush>"))
    monkeypatch.setattr(sys, "stdout", out)
    run(WaitResult(ok=True, elapsed_s=0.1, attempts=1, last_error=""), status="FAILED")
    assert written == ["PLAN-LINE", "\n", "<flush>"]


def test_a_head_named_with_a_trailing_slash_and_no_port(drive):
    run, seen = drive
    run(WaitResult(ok=False, elapsed_s=1.0, attempts=1, last_error="x"), a=args(address="http://HEAD-X/"))
    assert seen["probe"] == ("http://HEAD-X/api/version", 30.0)


def test_the_drivers_result_is_handed_on_with_what_was_tried(drive):
    run, _ = drive
    node = NodeFacts(node_id="ab" * 28, address="10.0.0.1", hostname="n1", is_head=True, ray_gpus=8.0)
    answer = NodeAnswer(node=node, outcome=Outcome.ANSWERED, elapsed_s=1.0, observation={"x": 1})
    inner = FanoutResult(address="auto", connected=True, tried="ray.init(auto)", error="partial", nodes=(answer,),
                         dead_nodes=2, elapsed_s=9.0)
    got = run(WaitResult(ok=True, elapsed_s=0.1, attempts=1, last_error=""),
              logs=f"noise\n{RESULT}{json.dumps(inner.to_dict())}\n")
    assert got == FanoutResult(
        address="http://head:8265/", connected=True, error="partial", nodes=(answer,), dead_nodes=2, elapsed_s=1.0,
        tried="GET http://head:8265/api/version for up to 30 s; then Ray job raysubmit_1 (python -m "
              "rlcheck.cluster.fanout on the head); ray.init(auto)")


def test_a_driver_that_could_not_connect_inside_the_job_is_not_connected(drive):
    run, _ = drive
    inner = FanoutResult(address="auto", connected=False, tried="ray.init(auto)", error="no GCS")
    got = run(WaitResult(ok=True, elapsed_s=0.1, attempts=1, last_error=""),
              logs=f"{RESULT}{json.dumps(inner.to_dict())}")
    assert (got.connected, got.error, got.nodes, got.dead_nodes) == (False, "no GCS", (), 0)


@pytest.mark.parametrize(("nodes", "expected"), [
    (None, 30.0 + 60.0 + fr.JOB_SLACK_S),
    (0, 30.0 + 60.0 + fr.JOB_SLACK_S),
    (1, 30.0 + 60.0 + fr.PER_NODE_S + fr.JOB_SLACK_S + fr.PER_NODE_S),
    (10, 30.0 + 60.0 + 1.0 + fr.JOB_SLACK_S + 1.0),
])
def test_the_jobs_wait_is_connect_node_deadline_slack_and_a_line_per_node(nodes, expected):
    assert fanout_job.job_wait_s(30.0, 60.0, nodes) == pytest.approx(expected)


@pytest.mark.parametrize(("logs", "nodes"), [
    (f"{PLAN}{{\"nodes\": 3}}\n{PLAN}{{\"nodes\": 9}}\n", 3),  # the first PLAN line counts
    (f"x\n{PLAN}{{\"nodes\": 5}}", 5),
    (f"{PLAN}null\n{PLAN}{{\"nodes\": 9}}\n", None),  # the first is unreadable: no plan yet
    (f"{PLAN}{{\"nodes\": 2.0}}", None),
    (f"{PLAN}{{\"nodes\": false}}", None),
    (f"{PLAN}{{\"nodes\": 1}}", 1),
    ("", None),
])
def test_the_plan_line_read_from_the_log_so_far(logs, nodes):
    assert fanout_job.plan_nodes(logs) == nodes


class Status:
    def __init__(self, value: str, terminal: bool) -> None:
        self.value, self.terminal = value, terminal

    def is_terminal(self) -> bool:
        return self.terminal


class Job:
    """The Jobs API as wait_planned sees it: status RUNNING until done_at, the log lines present by each time."""

    def __init__(self, log: list[tuple[float, str]], done_at: float | None = None) -> None:
        self.now, self.log, self.done_at, self.calls = 0.0, log, done_at, []

    def get_job_status(self, job_id):
        self.calls.append(("status", job_id))
        done = self.done_at is not None and self.now >= self.done_at
        return Status("SUCCEEDED", True) if done else Status("RUNNING", False)

    def get_job_logs(self, job_id):
        self.calls.append(("logs", job_id))
        return "".join(f"{line}\n" for at, line in self.log if at <= self.now)

    def stop_job(self, job_id):
        self.calls.append(("stop", job_id))

    def sleep(self, s):
        self.calls.append(("sleep", s))
        self.now += s


def wait(job: Job, wait_s, poll_s=1.0):
    relayed: list[str] = []
    got = fanout_job.wait_planned(job, "j", wait_s, relay=relayed.append, poll_s=poll_s, clock=lambda: job.now,
                                  sleep=job.sleep)
    return got, relayed


def test_a_job_that_ends_returns_its_status_and_log_without_being_stopped():
    job = Job([(0.0, "hello")], done_at=0.0)
    assert wait(job, lambda n: 10.0) == (("SUCCEEDED", "hello\n"), [])
    assert job.calls == [("status", "j"), ("logs", "j")]


@pytest.mark.parametrize(("limit", "stopped_at"), [(2.0, 2.0), (2.5, 3.0), (0.0, 0.0)])
def test_a_job_running_at_its_deadline_is_stopped_then_and_not_before(limit, stopped_at):
    job = Job([(0.0, "running")])
    (status, logs), relayed = wait(job, lambda n: limit)
    assert (status, logs, relayed, job.now) == ("TIMEOUT", "running\n", [], stopped_at)
    assert job.calls[-2:] == [("stop", "j"), ("logs", "j")]
    assert [c for c in job.calls if c[0] == "sleep"] == [("sleep", 1.0)] * int(stopped_at)


def test_the_plan_line_moves_the_deadline_and_is_relayed_once():
    job = Job([(2.0, f"{PLAN}{{\"nodes\": 7, \"extra\": 1}}")], done_at=6.0)
    asked: list[int | None] = []

    def wait_s(nodes):
        asked.append(nodes)
        return 3.0 if nodes is None else 10.0

    (status, _), relayed = wait(job, wait_s, poll_s=2.0)
    assert (status, relayed) == ("SUCCEEDED", [PLAN + '{"nodes": 7}'])
    assert asked == [None, 7, 7]
    # once the plan is known the log is not read for it again
    assert job.calls == [("status", "j"), ("logs", "j"), ("sleep", 2.0), ("status", "j"), ("logs", "j"),
                         ("sleep", 2.0), ("status", "j"), ("sleep", 2.0), ("status", "j"), ("logs", "j")]


def test_the_deadline_counts_from_the_start_not_from_zero():
    job = Job([(0.0, "running")])
    job.now = 100.0
    (status, _), _ = wait(job, lambda n: 2.0)
    assert (status, job.now) == ("TIMEOUT", 102.0)


def test_the_wait_polls_every_half_second_by_default():
    job = Job([], done_at=1.0)
    got = fanout_job.wait_planned(job, "j", lambda n: 10.0, relay=print, clock=lambda: job.now, sleep=job.sleep)
    assert got == ("SUCCEEDED", "") and [c for c in job.calls if c[0] == "sleep"] == [("sleep", 0.5)] * 2


def test_a_plan_of_zero_nodes_is_a_plan():
    job = Job([(0.0, f"{PLAN}{{\"nodes\": 0}}")])
    (status, _), relayed = wait(job, lambda n: 1.0 if n is None else 2.0)
    assert (status, relayed, job.now) == ("TIMEOUT", [PLAN + '{"nodes": 0}'], 2.0)
