"""The goals of issue 7 checked against a run's numbers, a table for the terminal, and how it ran."""

from __future__ import annotations

import argparse
import importlib.metadata
from typing import Any

PACKAGES = ("fastapi", "starlette", "uvicorn", "h11", "pydantic", "math-verify", "sympy", "latex2sympy2_extended",
            "aiohttp", "uvloop", "httptools")


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 1) if a is not None and b else None


def _goal(value: Any, met: bool) -> dict[str, Any]:
    return {"value": value, "met": bool(met)}


def goals(results: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    normal, patho = results.get("normal", {}), results.get("pathological_1pct", {})
    if "baseline" in normal and "rlcheck" in normal:
        ratio = _ratio(normal["rlcheck"]["requests_per_s"], normal["baseline"]["requests_per_s"])
        out["normal mix: requests/s >= 1.5x baseline (math-verify timeouts off)"] = _goal(
            ratio, ratio is not None and ratio >= 1.5)
    if "baseline" in patho and "rlcheck" in patho:
        ratio = _ratio(patho["rlcheck"]["requests_per_s"], patho["baseline"]["requests_per_s"])
        out["1% pathological: requests/s >= 10x baseline (math-verify timeouts off)"] = _goal(
            ratio, ratio is not None and ratio >= 10)
    if "rlcheck" in patho:
        r = patho["rlcheck"]
        slow = [r["pathological"], r["freezer"]]
        sent = sum(s["sent"] for s in slow)
        timely = sum(min(s["answered_within_deadline"], s["answered_with_fallback_0"]) for s in slow)
        out["1% pathological: each answered by its deadline with the fallback"] = _goal(f"{timely}/{sent}",
                                                                                         timely == sent)
        p99 = r["normal_latency_s"]["p99"]
        out["1% pathological: normal-request p99 < 1 s"] = _goal(p99, p99 is not None and p99 < 1.0)
        hp99 = r["health_during_run"]["latency_s"]["p99"]
        out["1% pathological: /health p99 < 200 ms"] = _goal(hp99, hp99 is not None and hp99 < 0.2)
        out["1% pathological: no request over 10 s"] = _goal(r["requests_over_10s"], r["requests_over_10s"] == 0)
    ours = [mix["rlcheck"] for mix in results.values() if "rlcheck" in mix]
    if ours:
        resets = sum(r["connection_resets"] + r.get("keepalive_probe", {}).get("resets", 0) for r in ours)
        out["no connection reset (runs and keep-alive probe)"] = _goal(resets, resets == 0)
        clean = all(r["sigterm"]["stopped_within_10s"] and r["sigterm"]["in_flight_answered_200"] ==
                    r["sigterm"]["in_flight"] for r in ours)
        out["clean stop on SIGTERM, in-flight requests answered"] = _goal(clean, clean)
    return out


BASELINE_IS = ("the reference design (baseline_app.py: one uvicorn worker, sync handler) with math-verify's "
               "timeouts off (parsing_timeout=None, timeout_seconds=None: its signal.alarm fails outside the main "
               "thread)")


def headline(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """One line that says what the ratios measure: against a baseline that lets a slow expression run to its end,
    so the pathological ratio shows what a per-request deadline buys, not a faster scorer."""
    parts = []
    for mix, label in (("normal", "normal mix"), ("pathological_1pct", "1% pathological expressions")):
        services = results.get(mix, {})
        if "baseline" in services and "rlcheck" in services:
            ratio = _ratio(services["rlcheck"]["requests_per_s"], services["baseline"]["requests_per_s"])
            parts.append(f"{ratio}x requests/s on the {label}")
    if not parts:
        return "no baseline comparison in this run"
    return (f"rlcheck's reward service vs {BASELINE_IS}: {', '.join(parts)}; the pathological gap is mostly "
            "the baseline waiting out each 1.5-4 s expression where rlcheck answers the fallback at its deadline")


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    rows = [("mix", "service", "req/s", "p50 s", "p99 s", "max s", "non-200", "resets run/probe", ">10 s",
             "unanswered", "health p50", "health p99", "SIGTERM", "other CPU s")]
    for mix, services in results.items():
        for name, r in services.items():
            lat, health = r["normal_latency_s"], r["health_during_run"]["latency_s"]
            resets = f"{r['connection_resets']}/{r.get('keepalive_probe', {}).get('resets', '-')}"
            rows.append((mix, name, r["requests_per_s"], lat["p50"], lat["p99"], lat["max"],
                         sum(r["non_200_replies"].values()), resets, r["requests_over_10s"], r["not_answered"],
                         health["p50"], health["p99"],
                         f"{r['sigterm']['stopped_within_10s']} ({r['sigterm']['seconds']} s)",
                         r["interference"]["other_processes_cpu_s"]))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)) for row in rows)


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def describe(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "versions": {name: _version(name) for name in PACKAGES},
        "client": "one aiohttp session, TCPConnector(limit=64), ClientTimeout(total=120), 64 requests in flight, "
                  "10 attempts with min(2**attempt, 30) + U(0,1) s backoff (SLIME v0.2.4 remote_rm)",
        "baseline": "benchmarks/reward_load/baseline_app.py: uvicorn --workers 1 (keep-alive 5 s default), sync "
                    "FastAPI handler, math-verify with parsing_timeout=None and timeout_seconds=None, static /health",
        "rlcheck": f"python -m rlcheck.reward --scorer-timeout-s {args.scorer_timeout_s}"
                   f"{' --workers ' + str(args.workers) if args.workers else ''} {' '.join(args.rlcheck_arg)}"
                   "(other options default)",
        "workload": "normal: distinct responses (40-250 words of reasoning, then a \\boxed answer: integer, fraction, "
                    "a*sqrt(b), decimal), half right, labels as strings in several spellings, prompt a string or a "
                    "chat list; pathological: every 100th request a distinct expression that takes sympy 1.5-4 s "
                    "here (big powers, binomials, factorials, 10^n+c), the middle one replaced by 9^{9^{9^{9}}}",
        "notes": ["access logs off on both servers", "latency percentiles are over answered normal requests; "
                  "requests without an outcome when a phase stopped count in not_answered and in requests_over_10s "
                  "when they waited over 10 s", "/health polled every 0.25 s on its own connection, 5 s timeout",
                  "keep-alive probe: bursts of 64 after idle gaps of 4.990-4.999 s on the same session"],
    }
