"""Judge a measured figure against this cluster's own history: the band of the last N good runs kept with
`--history DIR` (same check, same node, same hardware profile). Tells "this node got 12% slower since last week"
when the profile's fixed floor still passes it. The band only ever tightens a verdict: a run below the fixed floor
is FAIL anyway, and so never joins the band (pure, but for reading the kept reports)."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rlcheck.history import GOOD, figure_of, read_figure, read_report
from rlcheck.verdict import Status, Verdict

MIN_RUNS = 3
"""Good runs a band needs before it judges: one or two earlier runs are no history yet (the floor judges alone)."""
WARN_DROP = 0.05
"""A figure more than 5% below the band's median is WARN: within run-to-run noise of a healthy GEMM or all-reduce
(about 3% on the measured H200s) it is not, but one slow run is no NO-GO."""
FAIL_DROP = 0.10
"""More than 10% below the median is FAIL: a GPU throttling, a downtrained link, another job on the GPUs."""
_WORSE = {Status.PASS: 0, Status.WARN: 1, Status.FAIL: 2}
REMEDY = ("This node measures below its own history on this cluster: look at its GPU health (cluster_node_throttle, "
          "cluster_node_bus, clocks), at other jobs on its GPUs and at its NVLink/EFA counters. If the change is "
          "intended (new driver, other instance type), start a new --history folder so the band restarts.")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Band:
    figures: tuple[float, ...]
    """The figures of the last good runs, oldest first (at most the N asked for)."""
    unit: str

    @property
    def median(self) -> float:
        return statistics.median(self.figures)


def good_figures(reports: Iterable[dict[str, Any]], *, check_id: str, node: str | None, profile: str | None,
                 unit: str) -> list[float]:
    """The figures of passing verdicts of this check and node, in the reports' order, from runs on the same hardware
    profile (a report of an H100 run never joins an H200 band)."""
    figures: list[float] = []
    for doc in reports:
        if ((doc.get("hardware") or {}).get("profile") or None) != profile:
            continue
        for v in doc.get("verdicts") or ():
            if v.get("check_id") != check_id or v.get("node") != node or v.get("status") != GOOD:
                continue
            if (fig := figure_of(v)) is not None and fig[1] == unit:
                figures.append(fig[0])
    return figures


def band_of(figures: list[float], unit: str, last: int) -> Band | None:
    """The band of the last `last` good figures; None while there are fewer than MIN_RUNS."""
    kept = tuple(figures[-last:]) if last > 0 else ()
    return Band(figures=kept, unit=unit) if len(kept) >= MIN_RUNS else None


def judge(verdict: Verdict, figures: list[float], *, last: int) -> Verdict:
    """The verdict as the band judges it: unchanged when it has no measured figure or is not a judged PASS/WARN/FAIL;
    with a note when the band is not established yet; else the worse of its own status and the band's."""
    fig = figure_of(verdict.to_dict())
    if fig is None or verdict.status not in _WORSE:
        return verdict
    value, unit = fig
    band = band_of(figures, unit, last)
    if band is None:
        note = (f"band: {len(figures[-last:]) if last > 0 else 0} good run(s) of this check kept in --history "
                f"(needs {MIN_RUNS}); judged by the fixed floor alone")
        return dataclasses.replace(verdict, details="\n".join(x for x in (verdict.details, note) if x))
    median = band.median
    change = value / median - 1.0 if median > 0 else 0.0
    seen = (f"{value:.1f} {unit} is {change:+.1%} against the median {median:.1f} {unit} of the last "
            f"{len(band.figures)} good run(s) of this cluster")
    status = (Status.FAIL if value < median * (1 - FAIL_DROP) else
              Status.WARN if value < median * (1 - WARN_DROP) else Status.PASS)
    note = f"band: {seen} (WARN below -{WARN_DROP:.0%}, FAIL below -{FAIL_DROP:.0%})"
    details = "\n".join(x for x in (verdict.details, note) if x)
    if _WORSE[status] <= _WORSE[verdict.status]:
        return dataclasses.replace(verdict, details=details)
    return dataclasses.replace(verdict, status=status, details=details, remedy=REMEDY,
                               summary=f"{seen}; the fixed floor passed it ({verdict.summary})")


def read_reports(history_dir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The kept reports, oldest first, and the files that could not be read (named in the verdicts they touch)."""
    docs: list[tuple[str, str, dict[str, Any]]] = []
    errors: list[str] = []
    for path in sorted(history_dir.glob("*.json")) if history_dir.is_dir() else ():
        try:
            doc = read_report(path)
        except (OSError, ValueError) as exc:
            errors.append(f"{path.name}: {exc}")
            continue
        docs.append((doc["created"], path.name, doc))
    docs.sort(key=lambda d: (d[0], d[1]))
    return [d for _, _, d in docs], errors


def judge_all(verdicts: list[Verdict], reports: list[dict[str, Any]], errors: list[str], *, profile: str | None,
              last: int) -> list[Verdict]:
    """Every verdict with a measured figure judged against its band; unreadable kept reports are named in it, and
    so is a figure of the verdict's own that cannot be read (the verdict is left as it is, never judged by a
    misread number)."""
    out = []
    for v in verdicts:
        fig, refused = read_figure(v.to_dict())
        if fig is None or last <= 0:
            note = f"band: not judged: {refused}" if refused and last > 0 else ""
            out.append(dataclasses.replace(v, details="\n".join(x for x in (v.details, note) if x)) if note else v)
            continue
        judged = judge(v, good_figures(reports, check_id=v.check_id, node=v.node, profile=profile, unit=fig[1]),
                       last=last)
        if errors:
            skipped = f"band: {len(errors)} kept report(s) unreadable and left out: " + "; ".join(errors[:3])
            judged = dataclasses.replace(judged, details="\n".join(x for x in (judged.details, skipped) if x))
        out.append(judged)
    return out

