"""Fail-fast: time from a known-failure line appearing in a job's log to the job stopped and the verdict built.

On a local loopback Ray, the stand-in trainer (tests/standin/train.py) prints a catalogued failure line
(stamped just before with its wall time) and then hangs, as a broken SLIME run does. rlcheck's watcher
(Ray's log tail + the catalogue matcher + stop) is measured side by side with a baseline that polls the
job's logs every 2 s, as a person or a simple script would with `ray job logs`. Median over N runs each.
Usage: python -m benchmarks.failfast.run [--runs 20]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

from rlcheck.cluster.ray import EmbeddedRay

from benchmarks import results_file
from rlcheck import recipes
from rlcheck.catalog import load_catalog
from rlcheck.cluster import launch
from rlcheck.e2e import runner as e2e
from rlcheck.e2e.slime_log import DEFAULT_VERSION, Deadlines, plan
from rlcheck.e2e.watch import Watcher
from rlcheck.scan import Matcher

STANDIN = Path(__file__).resolve().parents[2] / "tests" / "standin" / "train.py"
MARK = "rlcheck-standin: signature at "


def job_argv() -> list[str]:
    recipe = recipes.get("qwen3-30b-a3b-disaggregated")
    recipe = recipe.replace(rollout=dataclasses.replace(recipe.rollout, num_rollout=1))
    return [sys.executable, str(STANDIN), *recipe.argv()[2:]]


def signature_time(log_text: str) -> float:
    line = next(x for x in log_text.splitlines() if x.startswith(MARK))
    return float(line.removeprefix(MARK))


def ours(url: str, failure_id: str, work: Path) -> float:
    env = {"env_vars": {"RLCHECK_STANDIN_FAULT": f"known:{failure_id}", "RLCHECK_STANDIN_PHASE_S": "0.05"}}
    argv = job_argv()
    milestones, _ = plan(DEFAULT_VERSION, Deadlines(placement_s=60, startup_s=60, rollout_s=60, phase_s=60), argv)
    run = e2e.run_case(url, argv, Watcher(milestones, 1), log_path=work / f"{failure_id}.log", runtime_env=env)
    verdict = e2e.verdict_for("failfast", run, 1)
    done = time.time()
    assert verdict.failure_id == failure_id and run.job_status == "STOPPED", verdict.render()
    return done - signature_time(Path(run.log_path).read_text())


def polling(url: str, failure_id: str, interval_s: float = 2.0) -> float:
    from ray.job_submission import JobSubmissionClient

    env = {"env_vars": {"RLCHECK_STANDIN_FAULT": f"known:{failure_id}", "RLCHECK_STANDIN_PHASE_S": "0.05"}}
    job = launch.submit_argv(url, job_argv(), runtime_env=env)
    client, matcher = JobSubmissionClient(url), Matcher()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        logs = client.get_job_logs(job)
        if any(matcher.match_line(line) for line in logs.splitlines()):
            client.stop_job(job)
            if launch.await_terminal(client, job, 30.0, poll_s=0.1) is None:
                raise TimeoutError(f"baseline: job {job} not stopped within 30 s")
            return time.time() - signature_time(logs)
        time.sleep(interval_s)
    client.stop_job(job)
    raise TimeoutError(f"baseline never saw {failure_id}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    ids = sorted(load_catalog())
    work = Path(__file__).resolve().parents[1] / ".work" / "failfast"
    work.mkdir(parents=True, exist_ok=True)
    samples: dict[str, list[float]] = {"rlcheck watcher": [], "baseline: poll logs every 2 s": []}
    with EmbeddedRay() as ray:
        for i in range(args.runs):
            failure_id = ids[i % len(ids)]
            samples["rlcheck watcher"].append(round(ours(ray.dashboard_url, failure_id, work), 3))
            samples["baseline: poll logs every 2 s"].append(round(polling(ray.dashboard_url, failure_id), 3))
    doc = {"runs": args.runs, "samples_s": samples,
           "median_s": {k: round(statistics.median(v), 3) for k, v in samples.items()},
           "max_s": {k: max(v) for k, v in samples.items()},
           "goal": "median under 5 s from the signature in the log to the job stopped and the verdict built",
           "notes": ["the same machine's wall clock stamps the signature (stand-in) and the verdict (harness)",
                     "the stop includes Ray stopping the job: SIGTERM to the entrypoint's process group"]}
    path = results_file.write("failfast", doc)
    print(doc["median_s"], "->", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
