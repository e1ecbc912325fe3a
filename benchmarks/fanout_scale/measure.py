"""One node count's measurements against a running Ray: the fan-out (cold, then warm rounds) and the reports it makes.

Two ways, in its own process (run by benchmarks.fanout_scale.cluster):

1. fan_out(), as rlcheck's cluster checks call it: a driver process per call, which connects as a new Ray job, so
   every node starts a fresh Python worker for it. getrusage(RUSAGE_CHILDREN) here is those drivers' peak memory.
2. The driver's own work, inside one connected job (rlcheck.cluster.fanout.fan_out_connected, the function the
   driver process runs): a first round that starts the workers, then --rounds more that find them started. This is
   what grows with N once worker starts run in parallel, one per node, as they do on a real cluster (on this
   machine's 2 cores they cannot). RUSAGE_SELF / VmRSS here is that driver's memory, read before any report is made.

Then the reports (report.json, report.md, JUnit) from the last round's answers.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from benchmarks.fanout_scale.standin import COLLECTOR
from rlcheck import recipes, report
from rlcheck.cluster.fanout import fan_out, fan_out_connected
from rlcheck.cluster.fanout_result import FanoutResult, Outcome
from rlcheck.plugin import junit
from rlcheck.preflight.cluster import CHECKS
from rlcheck.preflight.registry import Inputs

RESULT = "RLCHECK_SCALE_MEASURE "
NOT_JUDGED = ("cluster_pairs_allreduce",)
"""Runs its own all-reduces (a second driver): the pairwise plan is judged apart (tests/), not timed here."""


def _kib(who: int) -> int:
    return int(resource.getrusage(who).ru_maxrss)  # KiB on Linux


def timed(address: str, kwargs: dict[str, Any], node_timeout_s: float) -> tuple[float, FanoutResult]:
    start = time.perf_counter()
    result = fan_out(address, collector=COLLECTOR, kwargs=kwargs, node_timeout_s=node_timeout_s,
                     connect_timeout_s=60)
    return time.perf_counter() - start, result


def verdicts(result: FanoutResult) -> list[report.Recorded]:
    inputs = Inputs(recipe=recipes.get("qwen3-4b-colocated"), profile=None, fanout=result)
    out = []
    for check in CHECKS:
        if check.id in NOT_JUDGED:
            continue
        test_id = f"checks/test_cluster.py::test_cluster[{check.id}]"
        out += [report.Recorded(verdict=v, kind="check", test_id=test_id) for v in check.run(inputs)]
    return out


def junit_file(recorded: list[report.Recorded], path: Path) -> None:
    """The JUnit file pytest's junitxml writes for these checks (one testcase per check, each verdict's properties
    in it, as rlcheck's record_verdict leaves them), then rewritten by rlcheck's own junit plugin steps."""
    root = ET.Element("testsuites")
    suite = ET.SubElement(root, "testsuite", name="pytest", errors="0", failures="0", skipped="0", tests="0")
    cases: dict[str, ET.Element] = {}
    for r in recorded:
        case = cases.get(r.test_id)
        if case is None:
            name = r.test_id.split("::", 1)[1]
            case = cases[r.test_id] = ET.SubElement(suite, "testcase", classname="checks.test_cluster", name=name,
                                                    time="0.010")
            ET.SubElement(case, "properties")
        props = case.find("properties")
        assert props is not None
        for name, value in junit.verdict_properties(r.verdict):
            ET.SubElement(props, "property", name=name, value=value)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    junit.split_per_node(path)
    junit.to_schema(path)


def reports(result: FanoutResult, folder: Path) -> dict[str, Any]:
    recorded = verdicts(result)
    decision = report.decide(recorded, "qwen3-4b-colocated", "none")
    context = {"hardware": {"requested": "none", "profile": None, "evidence": "--hardware=none (scale benchmark)"},
               "recipe": "qwen3-4b-colocated", "ray_address": result.address, "framework": {"judged": ""}}
    json_path, md_path = report.write(report.build_document(recorded, decision, context), folder)
    junit_path = folder / "junit.xml"
    junit_file(recorded, junit_path)
    statuses: dict[str, int] = {}
    for r in recorded:
        statuses[r.verdict.status.value] = statuses.get(r.verdict.status.value, 0) + 1
    return {"verdicts": len(recorded), "statuses": statuses, "report_json_bytes": json_path.stat().st_size,
            "report_md_bytes": md_path.stat().st_size, "junit_bytes": junit_path.stat().st_size}


def _rss_kib() -> int:
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1])


def in_job(address: str, kwargs: dict[str, Any], rounds: int, node_timeout_s: float) -> dict[str, Any]:
    """Connect once, then fan_out_connected() 1 + rounds times in this one job; the last round's result too."""
    import logging

    import ray

    start = time.perf_counter()
    ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    connect_s = time.perf_counter() - start
    rss_connected = _rss_kib()
    walls, answered, last = [], [], []
    for _ in range(1 + rounds):
        start = time.perf_counter()
        last = fan_out_connected(COLLECTOR, kwargs, node_timeout_s)
        walls.append(round(time.perf_counter() - start, 3))
        answered.append(sum(a.outcome is Outcome.ANSWERED for a in last))
    rss_after = _rss_kib()
    result = FanoutResult(address=address, connected=True, tried="in-job", nodes=tuple(last))
    ray.shutdown()
    return {"connect_s": round(connect_s, 2), "first_round_s": walls[0], "warm_rounds_s": walls[1:],
            "answered_per_round": answered, "driver_rss_kib_connected": rss_connected,
            "driver_rss_kib_after_rounds": rss_after, "driver_peak_rss_kib": _kib(resource.RUSAGE_SELF),
            "result": result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--address", required=True)
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hold-s", type=float, required=True)
    parser.add_argument("--observation", required=True)
    parser.add_argument("--node-timeout-s", type=float, default=300.0)
    args = parser.parse_args(argv)
    kwargs = {"hold_s": args.hold_s, "observation_path": args.observation}
    call_s, called = timed(args.address, kwargs, args.node_timeout_s)
    driver_process_kib = _kib(resource.RUSAGE_CHILDREN)
    job = in_job(args.address, kwargs, args.rounds, args.node_timeout_s)
    last: FanoutResult = job.pop("result")
    answered = [sum(a.outcome is Outcome.ANSWERED for a in called.nodes), *job["answered_per_round"]]
    result_bytes = len(json.dumps(last.to_dict()))
    with tempfile.TemporaryDirectory(prefix="rlcheck-scale-report-") as tmp:
        sizes = reports(last, Path(tmp))
    doc = {"nodes": args.nodes, "nodes_listed": len(last.nodes), "answered_per_run": answered,
           "every_node_answered_every_run": all(a == args.nodes for a in answered),
           "fan_out_call_s": round(call_s, 2), "fan_out_call_driver_elapsed_s": round(called.elapsed_s, 2),
           "fan_out_call_driver_peak_rss_kib": driver_process_kib, "in_job": job,
           "caller_peak_rss_kib": _kib(resource.RUSAGE_SELF), "result_bytes": result_bytes,
           "result_bytes_per_node": round(result_bytes / max(1, len(last.nodes))), **sizes}
    print(RESULT + json.dumps(doc), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
