"""Run one end-to-end case on Ray under the watcher: submit argv-safe, stream logs, stop on the first verdict.

The job's logs arrive through a background reader (feeding a queue); every line goes
through the Watcher; the deadlines are checked while waiting. A known failure, a phase timeout or a
broken invariant stops the job at once. The full log is written beside the report.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlcheck import catalog
from rlcheck.cluster import launch
from rlcheck.e2e.watch import Event, Watcher
from rlcheck.verdict import Status, Verdict


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class CaseRun:
    job_id: str
    end: Event | None
    """What ended the watch (None: the job ended before any verdict)."""
    job_status: str
    phase_times: list[dict[str, float]]
    tail: list[str]
    log_path: str
    stopped_s: float
    """Seconds from the ending event's line to the job stopped and this result built."""


def _poll_logs(dashboard_url: str, job_id: str, lines: queue.Queue[str | None], done: threading.Event) -> None:
    """Push the job's new log lines as they appear; None once the job has ended and everything is read.

    Ray's own log tail polls its file once a second and again between reads (up to ~2 s late); fetching
    the log and keeping what is new is faster for a smoke run's log. The interval grows with the log's
    size (0.25 s, plus 50 ms per MB) so a long run's log is not re-read too often.
    """
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(dashboard_url)
    seen, pending = 0, ""
    try:
        while not done.is_set():
            finished = client.get_job_status(job_id).is_terminal()
            text = client.get_job_logs(job_id)
            pending += text[seen:]
            seen = len(text)
            *complete, pending = pending.split("\n")
            for line in complete:
                lines.put(line)
            if finished:
                break
            time.sleep(0.25 + 0.05 * seen / 2**20)
        if pending:
            lines.put(pending)
    except Exception as exc:  # the log reader breaking is reported as a line, never a hang
        lines.put(f"rlcheck: log reader ended: {type(exc).__name__}: {exc}")
    lines.put(None)


def _finish(dashboard_url: str, job_id: str, *, stop: bool) -> str:
    """Stop the job (or let it end by itself, within a minute), and say how it ended."""
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(dashboard_url)
    if not stop and (status := launch.await_terminal(client, job_id, 60.0)):
        return status
    client.stop_job(job_id)
    return launch.await_terminal(client, job_id, 30.0) or "STOP-TIMEOUT"


def run_case(dashboard_url: str, argv: Sequence[str], watcher: Watcher, *, log_path: Path,
             runtime_env: Mapping[str, Any] | None = None, poll_s: float = 0.2) -> CaseRun:
    job_id = launch.submit_argv(dashboard_url, argv, runtime_env=runtime_env)
    lines: queue.Queue[str | None] = queue.Queue()
    reader_done = threading.Event()
    threading.Thread(target=_poll_logs, args=(dashboard_url, job_id, lines, reader_done), daemon=True).start()
    start = time.monotonic()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    tail_done = False
    with log_path.open("w", encoding="utf-8") as log:
        while watcher.ended is None and not tail_done:
            try:
                line = lines.get(timeout=poll_s)
            except queue.Empty:
                line = ""
            if line is None:
                tail_done = True
            elif line:
                log.write(line + "\n")
                # The deadline is judged on the monotonic clock before the line, so a flood of lines
                # (or one slow line) never postpones it; the watcher cuts every line it matches.
                if not watcher.check(time.monotonic() - start):
                    watcher.feed(line, time.monotonic() - start)
            watcher.check(time.monotonic() - start)
    ended_at = time.monotonic() - start
    reader_done.set()
    end = watcher.ended
    status = _finish(dashboard_url, job_id, stop=end is not None and end.kind != "done")
    stopped_s = time.monotonic() - start - (end.at_s if end else ended_at)
    return CaseRun(job_id=job_id, end=end, job_status=status, phase_times=watcher.phase_times(),
                   tail=list(watcher.tail)[-30:], log_path=str(log_path), stopped_s=round(stopped_s, 3))


def verdict_for(case: str, run: CaseRun, loops: int) -> Verdict:
    """The case's verdict: PASS only when every milestone of every loop was reached."""
    base = {"check_id": f"e2e_{case}", "details": "\n".join([f"log: {run.log_path}", "last lines:", *run.tail[-15:]])}
    end = run.end
    if end is None:
        return Verdict(**base, status=Status.FAIL, summary=f"job {run.job_status} before any verdict: the log ended "
                                                           f"without the milestones of {loops} loop(s)")
    if end.kind == "done":
        return Verdict(**base, status=Status.PASS, summary=f"{loops} GRPO loop(s), every milestone reached; "
                                                           f"job {run.job_status}")
    if end.kind == "failure" and end.failure_id:
        entry = catalog.get(end.failure_id)
        return Verdict(**base, status=Status.FAIL, failure_id=end.failure_id, remedy=entry.remedy,
                       summary=f"{end.failure_id} at loop {end.loop}: {end.line.strip()[:300]} -- {entry.title}")
    if end.kind == "timeout":
        return Verdict(**base, status=Status.FAIL, failure_id=end.failure_id,
                       summary=f"phase {end.name} timed out at loop {end.loop}: {end.line}")
    remedy = catalog.get(end.failure_id).remedy if end.failure_id else ""
    return Verdict(**base, status=Status.FAIL, failure_id=end.failure_id, remedy=remedy,
                   summary=f"invariant broken at loop {end.loop}: {end.name}: {end.line.strip()[:300]}")


def reward_counts(metrics_text: str) -> dict[str, float]:
    """rlcheck reward service /metrics: replies by HTTP code, and scorer timeouts and errors."""
    counts: dict[str, float] = {}
    for line in metrics_text.splitlines():
        if line.startswith("rlcheck_reward_requests_total{"):
            code = line.split('code="', 1)[1].split('"', 1)[0]
            counts[f"code_{code}"] = float(line.rsplit(" ", 1)[1])
        elif line.startswith(("rlcheck_reward_scorer_timeouts_total ", "rlcheck_reward_scorer_errors_total ")):
            counts[line.split(" ", 1)[0].removeprefix("rlcheck_reward_")] = float(line.rsplit(" ", 1)[1])
    return counts


def reward_verdict(case: str, counts: dict[str, float], min_scored: int) -> Verdict:
    """The remote-rm case's reward side: enough requests scored, every reply 200, no scorer timeout or error."""
    ok = int(counts.get("code_200", 0))
    other = {k: int(v) for k, v in counts.items() if k.startswith("code_") and k != "code_200" and v}
    failed = int(counts.get("scorer_timeouts_total", 0) + counts.get("scorer_errors_total", 0))
    summary = f"{ok} scored (200), other replies {other or 'none'}, scorer timeouts/errors {failed}"
    if ok >= min_scored and not other and not failed:
        return Verdict(check_id=f"e2e_{case}_reward", status=Status.PASS, summary=f"{summary} (>= {min_scored})")
    return Verdict(check_id=f"e2e_{case}_reward", status=Status.FAIL,
                   failure_id="reward-silent-zero" if failed else None,
                   summary=f"{summary}; expected >= {min_scored} scored, all 200, none failed")
