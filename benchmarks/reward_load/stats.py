"""Numbers from a phase's log: throughput, latencies, failures, /health, CPU of the server's process tree."""

from __future__ import annotations

import collections
import os
from pathlib import Path
from typing import Any

from benchmarks.reward_load.load import PhaseLog, Sent

_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def _spread(values: list[float]) -> dict[str, float | None]:
    def r(v: float | None) -> float | None:
        return None if v is None else round(v, 4)

    return {"p50": r(percentile(values, 50)), "p99": r(percentile(values, 99)), "max": r(max(values, default=None))}


def tree_cpu_s(root_pid: int) -> float:
    """CPU seconds of root_pid and its descendants, with the children they have reaped (forkserver's workers)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = sum(int(x) for x in fields[11:15]) / _TICKS_PER_S  # utime stime cutime cstime
    tree, frontier = {root_pid}, [root_pid]
    while frontier:
        pid = frontier.pop()
        children = [c for c, p in parents.items() if p == pid and c not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(times.get(pid, 0.0) for pid in tree)


def machine_busy_s() -> tuple[float, float]:
    """CPU seconds this machine has spent busy (all CPUs), and those stolen by the hypervisor, since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq) / _TICKS_PER_S, steal / _TICKS_PER_S


def own_cpu_s() -> float:
    """CPU seconds of this process (the client), all threads."""
    times = os.times()
    return times.user + times.system


def _kind(log: PhaseLog, kind: str) -> list[Sent]:
    return [s for s in log.sent if s.request.kind == kind]


def _ok(items: list[Sent]) -> list[Sent]:
    return [s for s in items if s.reply is not None and s.reply.ok]


def _slow(items: list[Sent], deadline_s: float) -> dict[str, Any]:
    answered = _ok(items)
    statuses = collections.Counter(s.reply.reward_status or "(none)" for s in answered if s.reply)
    return {"sent": len(items), "answered": len(answered),
            "answered_with_fallback_0": sum(s.reply is not None and s.reply.value == 0.0 for s in answered),
            "answered_within_deadline": sum(s.latency_s <= deadline_s for s in answered),
            "x_reward_status": dict(statuses), "latency_s": _spread([s.latency_s for s in answered])}


def _health(log: PhaseLog) -> dict[str, Any]:
    latencies = [lat for lat, _ in log.health]
    return {"probes": len(log.health), "latency_s": _spread(latencies),
            "not_200": sum(status != 200 for _, status in log.health),
            "over_1s": sum(lat > 1.0 for lat in latencies),
            "over_200ms": sum(lat > 0.2 for lat in latencies)}


def summarize(log: PhaseLog, *, total: int, cpu_s: float, deadline_s: float) -> dict[str, Any]:
    replies = [s.reply for s in log.sent if s.reply is not None]
    answered = _ok(log.sent)
    normal = _kind(log, "normal")
    normal_ok = _ok(normal)
    http_errors = collections.Counter(e.split(":")[0] for r in replies for e in r.errors if e.startswith("HTTP"))
    return {
        "requests": total, "answered_200": len(answered), "wall_s": round(log.wall_s, 2),
        "requests_per_s": round(len(answered) / log.wall_s, 1) if log.wall_s else None,
        "stop_reason": log.stop_reason, "not_answered": total - len(answered), "never_sent": log.unsent,
        "normal_latency_s": _spread([s.latency_s for s in normal_ok]),
        "normal_wrong_value": sum(s.reply is not None and s.reply.value != s.request.expected for s in normal_ok),
        "non_200_replies": dict(http_errors), "connection_resets": sum(r.resets for r in replies),
        "client_timeouts": sum(r.timeouts for r in replies), "retries": sum(r.attempts - 1 for r in replies),
        "requests_over_10s": sum(s.latency_s > 10 for s in log.sent),
        "pathological": _slow(_kind(log, "pathological"), deadline_s),
        "freezer": _slow(_kind(log, "freezer"), deadline_s),
        "health_during_run": _health(log),
        "server_cpu_s": round(cpu_s, 2),
        "server_cpu_ms_per_answered_request": round(1000 * cpu_s / len(answered), 3) if answered else None,
    }
