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
        if tail_done:  # the log ended: a consequence still waiting for its cause is named now
            watcher.finish()
    ended_at = time.monotonic() - start
    reader_done.set()
    end = watcher.ended
    status = _finish(dashboard_url, job_id, stop=end is not None and end.kind != "done")
    stopped_s = time.monotonic() - start - (end.at_s if end else ended_at)
    return CaseRun(job_id=job_id, end=end, job_status=status, phase_times=watcher.phase_times(),
                   tail=list(watcher.tail)[-30:], log_path=str(log_path), stopped_s=round(stopped_s, 3))


def verdict_for(case: str, run: CaseRun, loops: int) -> Verdict:
    """The case's verdict: PASS only when every milestone of every loop was reached."""
    end = run.end
    where = [f"supporting {end.lines_text()} of {run.log_path}"] if end is not None and end.supporting else []
    base = {"check_id": f"e2e_{case}",
            "details": "\n".join([f"log: {run.log_path}", *where, "last lines:", *run.tail[-15:]])}
    at = f" ({end.lines_text()} of the log)" if end is not None and end.supporting else ""
    if end is None:
        return Verdict(**base, status=Status.FAIL, summary=f"job {run.job_status} before any verdict: the log ended "
                                                           f"without the milestones of {loops} loop(s)")
    if end.kind == "done":
        return Verdict(**base, status=Status.PASS, summary=f"{loops} GRPO loop(s), every milestone reached; "
                                                           f"job {run.job_status}")
    if end.kind == "failure" and end.failure_id:
        entry = catalog.get(end.failure_id)
        return Verdict(**base, status=Status.FAIL, failure_id=end.failure_id, remedy=entry.remedy,
                       summary=f"{end.failure_id} at loop {end.loop}: {end.line.strip()[:300]} -- {entry.title}{at}")
    if end.kind == "timeout":
        return Verdict(**base, status=Status.FAIL, failure_id=end.failure_id,
                       summary=f"phase {end.name} timed out at loop {end.loop}: {end.line}; "
                               f"last progress at {end.lines_text() or 'no line'}")
    remedy = catalog.get(end.failure_id).remedy if end.failure_id else ""
    return Verdict(**base, status=Status.FAIL, failure_id=end.failure_id, remedy=remedy,
                   summary=f"invariant broken at loop {end.loop}: {end.name}: {end.line.strip()[:300]}{at}")


FALLBACK_SHARE_FAIL_ABOVE = 0.05
"""The remote-rm case FAILs (`reward-silent-zero`) when more than this share of the reward service's last
replies (`rlcheck_reward_fallback_share`, its last 1000 rewards) were fallbacks: past a few pathological answers
the trainer is learning from wrong zeros. A share above 0, or a fallback counted earlier, is a WARN."""

_REWARD_SERIES = ("rlcheck_reward_scorer_timeouts_total", "rlcheck_reward_scorer_errors_total",
                  "rlcheck_reward_fallback_share", "rlcheck_reward_fallback_share_replies")

_REPLIES_REMEDY = ("check that the job's --rm-url is this service, and read the service log for the replies that "
                   "were not 200 (422: a body it could not read; 413: past --max-body-bytes; 503: past --max-queued "
                   "or shutting down)")


def _label_value(series: str, label: str) -> str:
    return series.split(f'{label}="', 1)[1].split('"', 1)[0] if f'{label}="' in series else ""


def reward_counts(metrics_text: str) -> dict[str, float]:
    """rlcheck reward service /metrics: replies by HTTP code (`code_200`), scorer timeouts and errors, fallbacks
    by reason (`fallbacks_timeout`), and the fallback share of the last replies (`fallback_share`, over
    `fallback_share_replies`). A series that is absent or not a number is left out."""
    counts: dict[str, float] = {}
    for line in metrics_text.splitlines():
        series, _, value = line.rpartition(" ")
        if not series or line.startswith("#"):
            continue
        try:
            number = float(value)
        except ValueError:
            continue
        if series.startswith("rlcheck_reward_requests_total{"):
            counts[f"code_{_label_value(series, 'code')}"] = number
        elif series.startswith("rlcheck_reward_fallbacks_total{"):
            counts[f"fallbacks_{_label_value(series, 'reason')}"] = number
        elif series in _REWARD_SERIES:
            counts[series.removeprefix("rlcheck_reward_")] = number
    return counts


def _share_text(share: float | None, replies: float, bound: float) -> str:
    if share is None:
        return "fallback share unreadable: rlcheck_reward_fallback_share is not in /metrics"
    if not 0.0 <= share <= 1.0:  # NaN too
        return f"fallback share unreadable: rlcheck_reward_fallback_share is {share}, not a share in 0..1"
    return f"fallback share {share:g} of the last {int(replies)} replies (bound {bound:g})"


def reward_verdict(case: str, counts: dict[str, float], min_scored: int, *,
                   max_fallback_share: float = FALLBACK_SHARE_FAIL_ABOVE) -> Verdict:
    """The remote-rm case's reward side: at least min_scored requests scored, every reply 200, and fallbacks
    (wrong zeros to the trainer) at most max_fallback_share of the service's last replies.

    FAIL past either bound (past the share: `reward-silent-zero`); UNKNOWN when the share cannot be read;
    WARN for any fallback within the bound (share above 0, or timeouts/errors/fallbacks counted earlier)."""
    if not 0.0 <= max_fallback_share < 1.0:
        raise ValueError(f"max_fallback_share={max_fallback_share!r}: 0 <= value < 1")
    check_id, entry = f"e2e_{case}_reward", catalog.get("reward-silent-zero")
    ok = int(counts.get("code_200", 0))
    other = {k: int(v) for k, v in counts.items() if k.startswith("code_") and k != "code_200" and v}
    failed = int(counts.get("scorer_timeouts_total", 0) + counts.get("scorer_errors_total", 0))
    reasons = {k.removeprefix("fallbacks_"): int(v) for k, v in counts.items() if k.startswith("fallbacks_") and v}
    share = counts.get("fallback_share")
    readable = share is not None and 0.0 <= share <= 1.0
    summary = (f"{ok} scored (200), other replies {other or 'none'}, scorer timeouts/errors {failed}, "
               f"fallbacks {reasons or 'none'}, "
               f"{_share_text(share, counts.get('fallback_share_replies', 0), max_fallback_share)}")
    too_many = readable and share is not None and share > max_fallback_share
    if ok < min_scored or other or too_many:
        return Verdict(check_id=check_id, status=Status.FAIL, failure_id=entry.id if too_many else None,
                       remedy=entry.remedy if too_many else _REPLIES_REMEDY,
                       summary=f"{summary}; expected >= {min_scored} scored, all 200, "
                               f"fallback share <= {max_fallback_share:g}")
    if not readable:
        return Verdict(check_id=check_id, status=Status.UNKNOWN, remedy="run rlcheck's reward service "
                       "(`rlcheck reward-service`) at --rm-url: its /metrics has the share",
                       summary=f"{summary}; the fallback bound could not be judged")
    if share or failed or reasons:
        return Verdict(check_id=check_id, status=Status.WARN, failure_id=entry.id, remedy=entry.remedy,
                       summary=f"{summary}; every fallback is a wrong 0 to the trainer (see the service log)")
    return Verdict(check_id=check_id, status=Status.PASS, summary=f"{summary} (>= {min_scored})")
