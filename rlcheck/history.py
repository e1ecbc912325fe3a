"""Trends over the kept reports (`--history DIR`): per check and per node, status per run, and for verdicts
with a measured figure (GEMM TFLOP/s, all-reduce GB/s) the figure and its change against the median of the
last N good runs (pure, but for reading the folder and drawing the PNG)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import statistics
from pathlib import Path
from typing import Any

from rlcheck.scan_output import safe

FIGURE = re.compile(r"(?<![\w.,+-])(?P<token>[\w.,+-]*)\s*(?P<unit>TFLOP/s|GB/s)")
"""A measured figure in a verdict's summary (else its details): the first number with a throughput unit. The whole
run of number-like characters before the unit is taken, so that `1e+300` or `1.2.3` is never read as 300 or 2.3
(starting only where a run starts: a long run is read once, not once per character)."""
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
"""The number grammar of a figure: ASCII decimal digits with an optional sign, fraction and exponent."""
_ATTEMPT = re.compile(r"[+-]?(?:\.?\d|nan|inf)", re.IGNORECASE)
"""A token that tries to be a number (a digit of any script, nan, inf); `bf16` before a unit is a word, no figure."""
FIGURE_MAX = 1e6
"""No GPU measures a million TFLOP/s or GB/s (the fastest dense BF16 is about 2,500 TFLOP/s): above it a figure is
refused as absurd, never drawn."""
GOOD = "PASS"
"""Only a passing run's figure joins the band a later run is compared with."""
HIGHLIGHT_DROP = 0.05
"""A node whose latest figure is this far below its own band (history_band.WARN_DROP) is drawn as one to look at."""
LINES_UP_TO = 4
"""Up to this many series of a unit are drawn as lines; more (a fleet) as one heat map per check: a row per node."""
MAX_RUN_TICKS = 12
"""Dates under a heat map: at most this many, evenly spaced, so they never overlap."""


class HistoryError(ValueError):
    """A history folder that cannot be judged at all (missing, or no report in it)."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Point:
    created: str
    """When the run's report was made (report.json's `created`)."""
    path: str
    """The kept report file."""
    status: str
    figure: float | None = None
    unit: str = ""
    median: float | None = None
    """Median figure of the last N good runs before this one; None when there was none."""
    baseline_runs: int = 0
    refused: str = ""
    """Why the verdict's figure was not read (`'1e+300 TFLOP/s' is above ...`); empty when read or absent."""

    @property
    def change(self) -> float | None:
        """This run's figure against the band's median, as a fraction (-0.08: 8% lower)."""
        if self.figure is None or not self.median:
            return None
        return self.figure / self.median - 1.0


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Series:
    check_id: str
    node: str | None
    points: tuple[Point, ...]

    @property
    def label(self) -> str:
        return f"{self.check_id} [{self.node}]" if self.node else self.check_id


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class History:
    series: tuple[Series, ...]
    runs: int
    errors: tuple[str, ...]
    """Files that could not be read as a report, each with why: they make the command exit 2."""


def read_report(path: Path) -> dict[str, Any]:
    """One kept report, or ValueError / OSError saying why it is not one."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or doc.get("rlcheck_report") != 1:
        raise ValueError("not an rlcheck report.json (no \"rlcheck_report\": 1)")
    if not isinstance(doc.get("created"), str) or not isinstance(doc.get("verdicts"), list):
        raise ValueError("no \"created\" time or no \"verdicts\" list")
    for v in doc["verdicts"]:
        if not (isinstance(v, dict) and isinstance(v.get("check_id"), str) and isinstance(v.get("status"), str)):
            raise ValueError(f"a verdict without check_id and status: {str(v)[:80]}")
    return doc


def _judge_token(token: str, unit: str) -> tuple[tuple[float, str] | None, str]:
    shown = repr(f"{token[:40]}{'...' if len(token) > 40 else ''} {unit}")
    if NUMBER.fullmatch(token):
        value = float(token)
        if not math.isfinite(value):
            return None, f"{shown} is not finite"
        if value < 0:
            return None, f"{shown} is negative"
        if value > FIGURE_MAX:
            return None, f"{shown} is above {FIGURE_MAX:g} (no GPU measures that)"
        return (value, unit), ""
    if token.lstrip("+-").lower() in ("nan", "inf", "infinity"):
        return None, f"{shown} is not finite"
    return None, f"{shown} is not a number (decimal digits, an optional fraction and exponent: 779.7, 7.797e2)"


def read_figure(verdict: dict[str, Any]) -> tuple[tuple[float, str] | None, str]:
    """(figure, unit) of the first number with a throughput unit in the summary, else the details; or (None, why)
    when that number cannot be read (not a number, not finite, negative, above FIGURE_MAX); (None, "") without one."""
    for text in (verdict.get("summary") or "", verdict.get("details") or ""):
        for m in FIGURE.finditer(str(text)):
            if _ATTEMPT.match(m["token"]):
                return _judge_token(m["token"], m["unit"])
    return None, ""


def figure_of(verdict: dict[str, Any]) -> tuple[float, str] | None:
    """The verdict's measured figure; None when it has none or it cannot be read (read_figure says why)."""
    return read_figure(verdict)[0]


def _points(rows: list[tuple[str, str, dict[str, Any]]], last: int) -> tuple[Point, ...]:
    points: list[Point] = []
    good: list[float] = []
    for created, path, v in rows:
        fig, refused = read_figure(v)
        band = good[-last:]
        points.append(Point(created=created, path=path, status=v["status"], figure=fig[0] if fig else None,
                            unit=fig[1] if fig else "", median=statistics.median(band) if band else None,
                            baseline_runs=len(band), refused=refused))
        if fig and v["status"] == GOOD:
            good.append(fig[0])
    return tuple(points)


def load(history_dir: Path, *, check: str | None = None, node: str | None = None, last: int = 5) -> History:
    """Every *.json in the folder, oldest first; a file that is no report is named in `errors`, never dropped."""
    if not history_dir.is_dir():
        raise HistoryError(f"{history_dir}: no such folder (keep reports there with pytest --history {history_dir})")
    files = sorted(history_dir.glob("*.json"))
    if not files:
        raise HistoryError(f"{history_dir}: no report (*.json) in it; runs with --history {history_dir} keep them")
    docs, errors = [], []
    for path in files:
        try:
            docs.append((path, read_report(path)))
        except (OSError, ValueError) as exc:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
            errors.append(safe(f"{path}: {exc}"))
    docs.sort(key=lambda pd: (pd[1]["created"], pd[0].name))
    by_key: dict[tuple[str, str | None], list[tuple[str, str, dict[str, Any]]]] = {}
    for path, doc in docs:
        for v in doc["verdicts"]:
            if (check is None or v["check_id"] == check) and (node is None or v.get("node") == node):
                by_key.setdefault((v["check_id"], v.get("node")), []).append((doc["created"], str(path), v))
    series = tuple(Series(check_id=c, node=n, points=_points(rows, last))
                   for (c, n), rows in sorted(by_key.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")))
    return History(series=series, runs=len(docs), errors=tuple(errors))


def _point_line(p: Point) -> str:
    line = f"  {safe(p.created):25} {safe(p.status):7}"
    if p.figure is not None:
        line += f" {p.figure:10.1f} {p.unit}"
    if p.refused:
        line += f"  figure refused: {safe(p.refused)}"
    if p.change is not None:
        line += f"  {p.change:+.1%} vs median {p.median:.1f} of {p.baseline_runs} good run(s)"
    return line.rstrip()


def render_text(history: History) -> str:
    out = [f"rlcheck history: {history.runs} run(s), {len(history.series)} series"]
    for s in history.series:
        out += ["", safe(s.label), *(_point_line(p) for p in s.points)]
    return "\n".join(out) + "\n"


def to_json(history: History) -> dict[str, Any]:
    return {"runs": history.runs, "errors": list(history.errors),
            "series": [{"check_id": s.check_id, "node": s.node,
                        "points": [{**dataclasses.asdict(p), "change": p.change} for p in s.points]}
                       for s in history.series]}


def _plain(text: str) -> str:
    """text drawn as written: a `$` would start matplotlib's math mode (and a malformed one fails the drawing)."""
    return safe(text).replace("$", r"\$")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class FleetPanel:
    """One check's figure at fleet scale: a row per node, worst first, a column per run."""

    check_id: str
    unit: str
    nodes: tuple[str, ...]
    """Worst first: a latest run that did not pass, then the largest drop against its own band."""
    runs: tuple[str, ...]
    changes: tuple[tuple[float | None, ...], ...]
    """Per node and run: the figure against that node's band (-0.08: 8% below); None without a figure or band."""
    flagged: tuple[tuple[bool, ...], ...]
    """Per node and run: the run did not pass (WARN, FAIL, UNKNOWN)."""
    highlighted: tuple[str, ...]
    """Nodes to look at: latest run not passing, or latest figure HIGHLIGHT_DROP or more below its band."""


def _latest_score(s: Series) -> tuple[int, float]:
    last = s.points[-1]
    return (0 if last.status != GOOD else 1, last.change if last.change is not None else 0.0)


def fleet_panels(history: History, *, every: bool = False) -> list[FleetPanel]:
    """The heat-map panels for every (check, unit) measured on more than LINES_UP_TO series (every: on any)."""
    panels = []
    keys = sorted({(s.check_id, p.unit) for s in history.series for p in s.points if p.figure is not None})
    for check_id, unit in keys:
        rows = [s for s in history.series if s.check_id == check_id
                and any(p.figure is not None and p.unit == unit for p in s.points)]
        if len(rows) <= LINES_UP_TO and not every:
            continue
        rows.sort(key=lambda s: (*_latest_score(s), s.node or ""))
        runs = tuple(sorted({p.created for s in rows for p in s.points}))
        at = {r: i for i, r in enumerate(runs)}
        changes, flagged = [], []
        for s in rows:
            row: list[float | None] = [None] * len(runs)
            bad = [False] * len(runs)
            for p in s.points:
                row[at[p.created]] = p.change if p.unit == unit else None
                bad[at[p.created]] = p.status != GOOD
            changes.append(tuple(row))
            flagged.append(tuple(bad))
        highlighted = tuple(s.node or s.check_id for s in rows if s.points[-1].status != GOOD
                            or (s.points[-1].change is not None and s.points[-1].change <= -HIGHLIGHT_DROP))
        panels.append(FleetPanel(check_id=check_id, unit=unit, nodes=tuple(s.node or s.check_id for s in rows),
                                 runs=runs, changes=tuple(changes), flagged=tuple(flagged), highlighted=highlighted))
    return panels


def run_ticks(runs: tuple[str, ...], most: int = MAX_RUN_TICKS) -> list[int]:
    """Which runs get a date under a heat map: every k-th so that at most `most` are written, the last always."""
    if not runs:
        return []
    step = max(1, math.ceil(len(runs) / most))
    ticks = list(range(0, len(runs), step))
    if ticks[-1] != len(runs) - 1:
        if len(ticks) == most:
            ticks.pop()
        ticks.append(len(runs) - 1)
    return ticks


def _draw_fleet(plt: Any, panels: list[FleetPanel]) -> Any:
    fig, axes = plt.subplots(len(panels), 1, squeeze=False,
                             figsize=(11, sum(1.5 + 0.28 * len(p.nodes) for p in panels)))
    for ax, panel in zip(axes[:, 0], panels, strict=True):
        grid = [[math.nan if c is None else 100.0 * c for c in row] for row in panel.changes]
        image = ax.imshow(grid, aspect="auto", cmap="RdBu", vmin=-20, vmax=20, interpolation="nearest")
        for y, row in enumerate(panel.flagged):
            xs = [x for x, bad in enumerate(row) if bad]
            ax.scatter(xs, [y] * len(xs), marker="x", color="black", s=18, linewidths=1)
        ax.set_yticks(range(len(panel.nodes)))
        ax.set_yticklabels([_plain(n) for n in panel.nodes], fontsize="small")
        for label, node in zip(ax.get_yticklabels(), panel.nodes, strict=True):
            if node in panel.highlighted:
                label.set_color("darkred")
                label.set_fontweight("bold")
        ticks = run_ticks(panel.runs)
        ax.set_xticks(ticks)
        ax.set_xticklabels([_plain(panel.runs[i][:16]) for i in ticks], rotation=30, ha="right", fontsize="small")
        ax.set_title(_plain(f"{panel.check_id}: {panel.unit} against each node's own band (x: run not passing; "
                            f"{len(panel.highlighted)} node(s) to look at, worst first)"), fontsize="medium")
        fig.colorbar(image, ax=ax, label="% vs band median", fraction=0.03)
    return fig


def _draw_lines(plt: Any, measured: list[Series]) -> Any:
    units = sorted({p.unit for s in measured for p in s.points if p.figure is not None})
    runs = sorted({p.created for s in measured for p in s.points})  # one x position per run, in time order
    fig, axes = plt.subplots(len(units), 1, figsize=(8, 4 * len(units)), squeeze=False)
    for ax, unit in zip(axes[:, 0], units, strict=True):
        for s in measured:
            shown = [p for p in s.points if p.figure is not None and p.unit == unit]
            if shown:
                ax.plot([runs.index(p.created) for p in shown], [p.figure for p in shown], marker="o",
                        label=_plain(s.label))
        ticks = run_ticks(tuple(runs))
        ax.set_xticks(ticks)
        ax.set_xticklabels([_plain(runs[i]) for i in ticks], rotation=30, ha="right", fontsize="small")
        ax.set_ylabel(unit)
        ax.set_title(f"rlcheck history: {unit} per run")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the lines, hiding none
    return fig


def plot(history: History, path: Path) -> Path | None:
    """The measured figures over the runs; None when no verdict has a figure or matplotlib is missing. Up to
    LINES_UP_TO series per check: one panel of lines per unit; a fleet (more): one heat map per check, a row per
    node worst first, the nodes to look at in bold red, the runs not passing crossed (fleet_panels)."""
    measured = [s for s in history.series if any(p.figure is not None for p in s.points)]
    if not measured:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    panels = fleet_panels(history, every=True)
    if any(len(panel.nodes) > LINES_UP_TO for panel in panels):  # a fleet: every check as a heat map
        fig = _draw_fleet(plt, panels)
    else:
        fig = _draw_lines(plt, measured)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
