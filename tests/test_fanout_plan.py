"""The fan-out's deadlines grow with its plan (the node count the driver prints), and its streamed answers are put
back together by the caller (pure, plus one tiny child process per deadline case)."""

from __future__ import annotations

import json
import sys

import pytest

from rlcheck.cluster import fanout_result as fr
from rlcheck.cluster.fanout import run_planned
from rlcheck.cluster.fanout_result import NODE, PLAN, RESULT, FanoutResult, NodeAnswer, NodeFacts, Outcome


def test_fanout_plan_node_deadline_grows_per_node_from_the_node_timeout():
    assert fr.node_deadline_s(60.0, 0) == 60.0
    assert fr.node_deadline_s(60.0, 1) == pytest.approx(60.0 + fr.PER_NODE_S)
    assert fr.node_deadline_s(60.0, 1000) == pytest.approx(60.0 + 1000 * fr.PER_NODE_S)
    assert fr.node_deadline_s(60.0, 1000) > fr.node_deadline_s(60.0, 999)
    with pytest.raises(ValueError, match="nodes=-1"):
        fr.node_deadline_s(60.0, -1)


def test_fanout_plan_caller_deadline_before_and_after_the_plan():
    unknown = fr.plan_deadline_s(30.0, 60.0, None, margin_s=45.0)
    assert unknown == 30.0 + 60.0 + 45.0
    assert fr.plan_deadline_s(30.0, 60.0, 0, margin_s=45.0) == unknown
    # the node wait and the per-node result lines: the caller always outlasts the driver's own node deadline
    big = fr.plan_deadline_s(30.0, 60.0, 1000, margin_s=45.0)
    assert big == pytest.approx(unknown + 2 * 1000 * fr.PER_NODE_S)
    assert big > 30.0 + fr.node_deadline_s(60.0, 1000) + 45.0


def _facts(i: int) -> NodeFacts:
    return NodeFacts(node_id=f"{i:02d}" * 28, address=f"10.0.0.{i}", hostname=f"n{i}", is_head=i == 0, ray_gpus=8.0)


def _answer(i: int, observation: dict | None) -> NodeAnswer:
    return NodeAnswer(node=_facts(i), outcome=Outcome.ANSWERED, elapsed_s=1.0, observation=observation)


def _output(*lines: str) -> str:
    return "\n".join(["ray noise", *lines]) + "\n"


def test_fanout_plan_streamed_answers_rejoin_the_result_by_index():
    observations = [{"hostname": f"n{i}", "gpus": [i]} for i in range(3)]
    stripped = FanoutResult(address="a:1", connected=True, tried="t",
                            nodes=tuple(_answer(i, None) for i in range(3)))
    node_lines = [NODE + json.dumps({"index": i, **_answer(i, observations[i]).to_dict()}) for i in (2, 0, 1)]
    got = fr.parse_output(_output(PLAN + '{"nodes": 3}', *node_lines, RESULT + json.dumps(stripped.to_dict())))
    assert got is not None
    assert [a.observation for a in got.nodes] == observations
    assert [a.node.hostname for a in got.nodes] == ["n0", "n1", "n2"]


def test_fanout_plan_a_node_without_a_line_keeps_no_observation_and_no_result_line_is_none():
    stripped = FanoutResult(address="a:1", connected=True, tried="t", nodes=(_answer(0, None), _answer(1, None)))
    line = NODE + json.dumps({"index": 1, **_answer(1, {"hostname": "n1"}).to_dict()})
    got = fr.parse_output(_output(line, RESULT + json.dumps(stripped.to_dict())))
    assert got is not None and got.nodes[0].observation is None and got.nodes[1].observation == {"hostname": "n1"}
    assert fr.parse_output(_output(line)) is None
    whole = FanoutResult(address="a:1", connected=True, tried="t", nodes=(_answer(0, {"hostname": "old"}),))
    kept = fr.parse_output(_output(RESULT + json.dumps(whole.to_dict())))  # a driver from before the NODE lines
    assert kept is not None and kept.nodes[0].observation == {"hostname": "old"}


def _child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_fanout_plan_the_plan_line_extends_the_callers_deadline():
    code = f"import time; print({PLAN!r} + '{{\"nodes\": 7}}', flush=True); time.sleep(1.5); print('done')"
    seen: list[int | None] = []

    def deadline(nodes: int | None) -> float:
        seen.append(nodes)
        return 0.8 if nodes is None else 60.0

    done, limit = run_planned(_child(code), env={}, deadline_s=deadline)
    assert not done.timed_out and done.returncode == 0 and "done" in done.stdout
    assert seen == [None, 7] and limit == 60.0


def test_fanout_plan_without_a_plan_line_the_driver_is_killed_at_the_first_deadline():
    code = "import time; print('connecting', flush=True); time.sleep(30)"
    done, limit = run_planned(_child(code), env={}, deadline_s=lambda nodes: 0.8 if nodes is None else 60.0)
    assert done.timed_out and done.returncode is None and limit == 0.8
    assert "connecting" in done.stdout


class _Status:
    def __init__(self, value: str) -> None:
        self.value = value

    def is_terminal(self) -> bool:
        return self.value in ("SUCCEEDED", "FAILED", "STOPPED")


class _Job:
    """A Jobs API client as the wait sees it (harness logic only): the job's log grows with a fake clock, its status
    turns terminal at ends_at (None: never)."""

    def __init__(self, log: list[tuple[float, str]], ends_at: float | None) -> None:
        self.now, self.log, self.ends_at, self.stopped = 0.0, log, ends_at, False

    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s

    def get_job_status(self, job_id: str) -> _Status:
        assert job_id == "job-1"
        done = self.ends_at is not None and self.now >= self.ends_at
        return _Status("STOPPED" if self.stopped else "SUCCEEDED" if done else "RUNNING")

    def get_job_logs(self, job_id: str) -> str:
        return "".join(line + "\n" for at, line in self.log if at <= self.now)

    def stop_job(self, job_id: str) -> None:
        self.stopped = True


def _wait(job: _Job, wait_s=None) -> tuple[tuple[str, str], list[str]]:
    from rlcheck.cluster.fanout_job import job_wait_s, wait_planned

    relayed: list[str] = []
    got = wait_planned(job, "job-1", wait_s or (lambda n: job_wait_s(30.0, 60.0, n)), relay=relayed.append,
                       poll_s=1.0, clock=job.clock, sleep=job.sleep)
    return got, relayed


def test_fanout_plan_job_wait_grows_with_the_job_drivers_plan_and_relays_it_once():
    from rlcheck.cluster.fanout_job import job_wait_s

    first = job_wait_s(30.0, 60.0, None)
    assert first == 30.0 + 60.0 + fr.JOB_SLACK_S == job_wait_s(30.0, 60.0, 0)
    assert job_wait_s(30.0, 60.0, 1000) == pytest.approx(first + 1000 * 2 * fr.PER_NODE_S)
    # a 1,000-node job still running past the fixed wait: planned, it ends on its own; unplanned, it is stopped
    ends = first + 50.0
    planned = _Job([(5.0, "starting"), (8.0, PLAN + json.dumps({"nodes": 1000})), (ends, RESULT + "{}")], ends)
    (status, logs), relayed = _wait(planned)
    assert status == "SUCCEEDED" and RESULT in logs and not planned.stopped
    assert relayed == [PLAN + json.dumps({"nodes": 1000})]
    unplanned = _Job([(5.0, "starting")], ends)
    (status, _), relayed = _wait(unplanned)
    assert status == "TIMEOUT" and unplanned.stopped and relayed == []
    assert unplanned.now == pytest.approx(first)  # stopped at the first deadline, not before, not after


def test_fanout_plan_job_wait_a_small_plan_keeps_the_deadline_near_the_fixed_one():
    job = _Job([(1.0, PLAN + json.dumps({"nodes": 2}))], None)
    (status, _), relayed = _wait(job)
    assert status == "TIMEOUT" and job.stopped and relayed == [PLAN + json.dumps({"nodes": 2})]
    deadline = 30.0 + 60.0 + fr.JOB_SLACK_S + 0.4  # 2 nodes x (node wait + result line)
    assert deadline <= job.now < deadline + 1.0  # stopped at the first poll past it


@pytest.mark.parametrize("line, nodes", [
    (PLAN + '{"nodes": 64}', 64), (PLAN + '{"nodes": 0}', 0), (PLAN + '{"nodes": -1}', None),
    (PLAN + '{"nodes": true}', None), (PLAN + '{"nodes": "64"}', None), (PLAN + "not json", None),
    (PLAN + '{"count": 64}', None), (PLAN + "[64]", None), ("  " + PLAN + '{"nodes": 64}', None),
    ("RLCHECK_FANOUT_PLANX {\"nodes\": 64}", None), ("", None),
])
def test_fanout_plan_job_log_plan_line_read_only_when_well_formed(line, nodes):
    from rlcheck.cluster.fanout_job import plan_nodes

    assert plan_nodes(f"ray start\n{line}\nmore\n") == nodes
