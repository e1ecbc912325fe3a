"""Right rewards on a busy host under SLIME's client, rlcheck beside the reference design, and issue 29's done-when.

Two CPU hogs spin for the whole run. The client is SLIME's remote_rm as it is (rollout.py): one
64-connection pool per rollout process, 120 s timeout, 10 attempts with backoff on any failure
(503 included); 256 in flight is one process gathering groups of 256, 512 is two. Each phase gets
a fresh server. Ground truth is SLIME's own grader's verdict (corpus_mix.py). Phases:
- normal mix (graded answers from the corpus) and pathological mix (8% of the corpus's pathological
  answers, slow expressions, one 9^{9^{9^{9}}}), each side, at each in-flight count; a phase is cut at
  --cap-s and what has no outcome by then is stuck;
- done-when, rlcheck only, --done-when-runs times: ten distinct bodies of the answer SLIME accepts in
  about 0.75 CPU s, sent with 256 graded others; all ten must score 1.0 in every run.
Before the hogs start, the slow answer is graded in this process by rlcheck's slime_math (idle, cold).

Usage: python -m benchmarks.reward_load.busy_host [--in-flight 256 --in-flight 512] [--name reward_load_busy]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

if not __package__:  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import results_file  # noqa: E402
from benchmarks.reward_load import corpus_mix, rollout  # noqa: E402
from benchmarks.reward_load.run import WORK, scrape_metrics  # noqa: E402
from benchmarks.reward_load.slime_groups import server_argv  # noqa: E402
from rlcheck.process.wait import free_loopback_port  # noqa: E402
from rlcheck.reward.harness import running_server  # noqa: E402

SIDES = ("baseline", "rlcheck")


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def phase(side: str, label: str, samples: list[Any], in_flight: int, cap_s: float) -> dict[str, Any]:
    port = free_loopback_port()
    print(f"[{time.strftime('%H:%M:%S')}] {label} {side}: {len(samples)} samples, {in_flight} in flight", flush=True)
    load_before = _load()
    with running_server(server_argv(side, port), port=port, log_path=WORK / f"busy_{label}_{side}.log",
                        ready_timeout_s=120) as server:
        replies, unsent, wall_s = rollout.run_phase(server.base_url + "/score", [s.payload for s in samples],
                                                    in_flight, cap_s)
        result = corpus_mix.tally(samples, replies, wall_s)
        result["never_sent"] = unsent
        if side == "rlcheck":
            metrics = scrape_metrics(server.base_url)
            result["server_metrics"] = {k: v for k, v in metrics.items() if v and not k.endswith("_bucket")}
    result["load_average_before"], result["load_average_after"] = load_before, _load()
    print(f"    right {result['right']} wrong {result['wrong_by_cause']} stuck {result['stuck']} "
          f"{result['samples_per_s']}/s p50 {result['latency_p50_s']} p99 {result['latency_p99_s']} "
          f"503s {result['http_503_seen']} attempts {result['attempts']}", flush=True)
    return result


def slow_right(samples: list[Any], replies: list[Any]) -> list[dict[str, Any]]:
    return [{"reward": None if r is None or not r.ok else corpus_mix.reward_of(r),
             "x_reward_status": None if r is None else r.reward_status, "attempts": None if r is None else r.attempts,
             "latency_s": None if r is None else round(r.latency_s, 2)}
            for s, r in zip(samples, replies, strict=True) if s.kind == "slow_right"]


def done_when_run(rows: list[dict[str, Any]], run: int, args: argparse.Namespace) -> dict[str, Any]:
    samples = corpus_mix.done_when_mix(rows, args.done_when_others, 10, seed=args.seed + 100 + run, tag=str(run))
    port = free_loopback_port()
    print(f"[{time.strftime('%H:%M:%S')}] done-when run {run}", flush=True)
    load_before = _load()
    with running_server(server_argv("rlcheck", port), port=port, log_path=WORK / f"busy_done_when_{run}.log",
                        ready_timeout_s=120) as server:
        replies, _, wall_s = rollout.run_phase(server.base_url + "/score", [s.payload for s in samples],
                                               rollout.GROUP, args.cap_s)
        metrics = scrape_metrics(server.base_url)
    ten = slow_right(samples, replies)
    others = corpus_mix.tally([s for s in samples if s.kind != "slow_right"],
                              [r for s, r in zip(samples, replies, strict=True) if s.kind != "slow_right"], wall_s)
    passed = all(t["reward"] == 1.0 for t in ten)
    print(f"    ten slow right answers: {[t['reward'] for t in ten]} -> {'PASS' if passed else 'FAIL'}", flush=True)
    return {"passed": passed, "slow_right_answers": ten, "others": others, "load_average_before": load_before,
            "load_average_after": _load(),
            "server_metrics": {k: v for k, v in metrics.items() if v and not k.endswith("_bucket")}}


def grade_slow_answer_idle() -> dict[str, Any]:
    from rlcheck.reward.slime_math import score_slime_math

    started = time.process_time()
    reward = score_slime_math(corpus_mix.SLOW_RIGHT_RESPONSE, corpus_mix.SLOW_RIGHT_LABEL)
    return {"response": corpus_mix.SLOW_RIGHT_RESPONSE, "label": corpus_mix.SLOW_RIGHT_LABEL,
            "slime_math_reward": reward, "cpu_s_cold": round(time.process_time() - started, 3),
            "load_average": _load()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--in-flight", type=int, action="append", default=None, help="default 256 and 512")
    parser.add_argument("--groups", type=int, default=2, help="groups of 256 per rollout process (default 2)")
    parser.add_argument("--hogs", type=int, default=2, help="CPU hogs for the whole run (default 2)")
    parser.add_argument("--cap-s", type=float, default=125.0, help="a phase is cut here; past SLIME's 120 s timeout")
    parser.add_argument("--done-when-runs", type=int, default=3)
    parser.add_argument("--done-when-others", type=int, default=256)
    parser.add_argument("--skip-mixes", action="store_true", help="only the done-when phase")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="reward_load_busy")
    args = parser.parse_args(argv)
    doc: dict[str, Any] = {"load_average_at_start": _load(), "slow_answer_graded_idle": grade_slow_answer_idle(),
                           "results": {}, "done_when": {}}
    rows, started = corpus_mix.corpus_rows(), time.monotonic()
    with rollout.cpu_hogs(args.hogs, cap_s=3600) as hogs:
        doc["cpu_hog_pids"] = hogs
        for in_flight in ([] if args.skip_mixes else args.in_flight or [256, 512]):
            n = rollout.GROUP * args.groups * max(1, in_flight // rollout.GROUP)
            for mix, samples in (("normal", corpus_mix.normal_mix(rows, n, seed=args.seed)),
                                 ("pathological", corpus_mix.pathological_mix(rows, n, seed=args.seed))):
                key = f"{mix}_{in_flight}_in_flight"
                doc["results"][key] = {side: phase(side, key, samples, in_flight, args.cap_s) for side in SIDES}
        runs = [done_when_run(rows, run, args) for run in range(1, args.done_when_runs + 1)]
    doc["done_when"] = {"passed_every_run": all(r["passed"] for r in runs), "runs": runs}
    doc["benchmark_wall_s"] = round(time.monotonic() - started, 1)
    doc["settings"] = {k: v for k, v in vars(args).items() if k != "name"}
    doc["notes"] = NOTES
    print(f"written: {results_file.write(args.name, doc)}")
    return 0 if doc["done_when"]["passed_every_run"] else 1


NOTES = ("baseline: the reference design (benchmarks/reward_load/baseline_app.py: one uvicorn worker, math-verify "
         "in Starlette's thread pool with its timeouts off, exceptions answered 0.0, no X-Reward-Status, so its "
         "wrong rewards read as grading differences). rlcheck: `rlcheck reward-service` defaults (slime_math, "
         "--reply-mode retry). Ground truth: SLIME's grade_answer_verl verdicts (624b824) from "
         "tests/data/reward/slime_grader_corpus.jsonl; labels sent as JSON numbers left out. stuck: no outcome when "
         "the phase was cut at cap_s (never_sent counts those whose group had not started). samples_per_s: "
         "answered samples over the phase's wall time. machine.load_average_1m_at_start is read when the file is "
         "written (the end); load_average_at_start is read before the hogs start.")


if __name__ == "__main__":
    sys.exit(main())
