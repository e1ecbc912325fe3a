"""A cluster's own floors: `rlcheck baseline record` turns a healthy run into a baseline file; `--baseline` uses it.

The figures come from a healthy run's report.json (the gpu_bf16_gemm and gpu_nccl_allreduce verdicts), or from the
same measures run here (--measure). The floor is FRACTION of the figure: the slowest GPU's GEMM rate, the
all-reduce bus bandwidth. A baseline names the hardware profile it was recorded on; a run with
`--baseline=PATH` takes its floors in place of the profile's, with provenance 'baseline' (below them is FAIL,
as below a measured floor). The file is plain TOML, validated when loaded; a bad one is refused naming the field.

Every figure is read strictly: a decimal number (an exponent allowed: 7.797e2), finite, positive, and within BOUND
of the profile's own floor (at most BOUND times it, at least 1/BOUND_BELOW of it); anything else is refused naming
the field and the file, never recorded as inf or rounded to 0. Strings are written as TOML basic strings escaped
per the TOML spec, so a path with any character (emoji, quotes, backslashes, newlines) reads back as it was.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from rlcheck.data_types import check_fields
from rlcheck.hardware import PERFORMANCE_FLOORS, HardwareProfile, get_profile
from rlcheck.probes.gpu.gpu_smoke import BUSBW_FLOOR, GEMM_FLOOR

FRACTION = 0.8
"""The rule of the measured H200 floors: 80% of the figure leaves room for clock and thermal variation."""
GEMM_CHECK, ALLREDUCE_CHECK = "gpu_bf16_gemm", "gpu_nccl_allreduce"
GEMM_LINE = re.compile(r"^(?P<device>\S+) (?P<name>.+): (?P<tflops>\S+) TFLOP/s$")
"""One line of gpu_bf16_gemm's details, as rlcheck.probes.gpu.gpu_smoke.evaluate_bf16_gemm writes it."""
BUSBW_TEXT = re.compile(r"all-reduce bus bandwidth (?P<gbps>\S+) GB/s over (?P<gpus>\d+) GPU")
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
"""A figure as rlcheck writes it: decimal ASCII digits, an optional sign, fraction and exponent (no nan, inf, hex,
underscores or other scripts' digits, all of which float() would take)."""
BOUND = 10.0
"""A figure or floor more than BOUND x the profile's own floor is refused: the profile's GEMM floors are 0.62-0.8 of
the dense peak, so 10 x is past any GPU's peak, and 8-GPU all-reduce measures about 2 x the 2-GPU floor."""
BOUND_BELOW = 100.0
"""A figure or floor below 1/BOUND_BELOW of the profile's floor is refused: a baseline may lie well below a public
floor (a PCIe board, a smaller all-reduce), never a hundred times below it (a misread unit or a broken run)."""
HEALTHY = ("PASS", "WARN", "SKIP")
"""A measure that ran: PASS, WARN (below a public floor: the case a baseline is for) or SKIP (no floor to judge)."""
FIELDS = {"hardware": "str", "recorded": "str", "recorded_from": "str", "fraction": "number",
          "thresholds": "table[number]", "source": "table[str]"}


class BaselineError(ValueError):
    """A report cannot become a baseline, or a baseline file is malformed; the message says which and why."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Baseline:
    hardware: str
    """The profile it was recorded on; a run on another profile refuses it."""
    recorded: str
    """When (UTC, ISO 8601)."""
    recorded_from: str
    """The report.json it was read from, or 'measured here'."""
    fraction: float
    thresholds: dict[str, float]
    source: dict[str, str]
    """Per floor: the figure and where it came from."""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.fraction) and 0 < self.fraction <= 1):
            raise ValueError(f"fraction={self.fraction}: between 0 (exclusive) and 1")
        odd = [k for k in self.thresholds if k not in PERFORMANCE_FLOORS]
        if odd or not self.thresholds:
            raise ValueError(f"thresholds: {odd or 'none'}: a baseline holds {', '.join(PERFORMANCE_FLOORS)}")
        if missing := [k for k in self.thresholds if not self.source.get(k)]:
            raise ValueError(f"source: no source for {', '.join(missing)}")
        if bad := [f"{k}={v}" for k, v in self.thresholds.items() if not math.isfinite(v)]:
            raise ValueError(f"thresholds: {', '.join(bad)}: must be a finite number")
        if bad := [f"{k}={v}" for k, v in self.thresholds.items() if v <= 0]:
            raise ValueError(f"thresholds: {', '.join(bad)}: must be > 0")


def _verdicts(doc: dict[str, Any], check_id: str) -> list[dict[str, Any]]:
    return [v for v in doc.get("verdicts", ()) if isinstance(v, dict) and v.get("check_id") == check_id]


def _unhealthy(doc: dict[str, Any]) -> list[str]:
    return [f"{v['check_id']} {v['status']}: {v.get('summary', '')}" for v in doc.get("verdicts", ())
            if isinstance(v, dict) and str(v.get("check_id", "")).startswith(("gpu_", "cluster_node_"))
            and v.get("status") not in HEALTHY]


def figure(text: str, field: str, where: str) -> float:
    """text read as a figure of `field`: NUMBER, finite and positive; BaselineError naming the field and `where`."""
    shown = repr(text[:40] + ("..." if len(text) > 40 else ""))
    if not NUMBER.fullmatch(text):
        raise BaselineError(f"{where}: {field}: {shown} is not a number (a decimal such as 779.7 or 7.797e2)")
    value = float(text)
    if not math.isfinite(value):
        raise BaselineError(f"{where}: {field}: {shown} is not finite (it overflows a float)")
    if value <= 0:
        raise BaselineError(f"{where}: {field}: {shown} is not positive")
    return value


def check_bound(field: str, value: float, profile: HardwareProfile, where: str, what: str = "figure") -> None:
    """BaselineError naming the field and `where` when value lies outside BOUND of the profile's own floor."""
    floor = profile.thresholds.get(field)
    if floor is None or floor <= 0:
        return
    if value > floor * BOUND:
        raise BaselineError(f"{where}: {field}: the {what} {value:g} is above {BOUND:g} x the {profile.name} "
                            f"floor {floor:g} (at most {floor * BOUND:g}): a misread figure, not a measure")
    if value < floor / BOUND_BELOW:
        raise BaselineError(f"{where}: {field}: the {what} {value:g} is below 1/{BOUND_BELOW:g} of the "
                            f"{profile.name} floor {floor:g} (at least {floor / BOUND_BELOW:g})")


def _read_figure(text: str, field: str, where: str, profile: HardwareProfile | None) -> float:
    value = figure(text, field, where)
    if profile is not None:
        check_bound(field, value, profile, where)
    return value


def figures_from_report(doc: dict[str, Any], where: str = "the report",
                        profile: HardwareProfile | None = None) -> dict[str, tuple[float, str]]:
    """{floor name: (figure, what it is)} from a report.json; BaselineError when it is no healthy GPU run or any
    figure (every GPU's, not only the slowest) is no number or, with a profile, outside BOUND of its floor (naming
    the field and `where`, the report's file)."""
    if doc.get("rlcheck_report") != 1 or not isinstance(doc.get("verdicts"), list):
        raise BaselineError("not an rlcheck report.json (no rlcheck_report = 1 and verdicts list)")
    if bad := _unhealthy(doc):
        raise BaselineError(f"not a healthy run: {'; '.join(bad[:3])}")
    figures: dict[str, tuple[float, str]] = {}
    rates = [(_read_figure(m["tflops"], GEMM_FLOOR, where, profile), m["device"]) for v in _verdicts(doc, GEMM_CHECK)
             for line in str(v.get("details", "")).splitlines() if (m := GEMM_LINE.match(line))]
    if rates:
        slowest, device = min(rates)
        figures[GEMM_FLOOR] = (slowest, f"bf16 GEMM of the slowest of {len(rates)} GPU(s) ({device})")
    for v in _verdicts(doc, ALLREDUCE_CHECK):
        if m := BUSBW_TEXT.search(str(v.get("summary", ""))):
            gbps = _read_figure(m["gbps"], BUSBW_FLOOR, where, profile)
            figures[BUSBW_FLOOR] = (gbps, f"NCCL all-reduce bus bandwidth over {m['gpus']} GPU(s)")
    if not figures:
        raise BaselineError(f"no measured {GEMM_CHECK} or {ALLREDUCE_CHECK} verdict in the report (run "
                            "`pytest checks/ -k 'bf16_gemm or nccl_allreduce'` on a GPU node first)")
    return figures


def read_report(path: Path) -> tuple[dict[str, Any], str]:
    """(report document, its hardware profile name)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise BaselineError(f"{path}: cannot read the report: {exc}") from exc
    if not isinstance(doc, dict):
        raise BaselineError(f"{path}: not an rlcheck report.json (a JSON object)")
    hardware = doc.get("hardware", {})
    return doc, str(hardware.get("profile") or "") if isinstance(hardware, dict) else ""


def make(hardware: str, figures: dict[str, tuple[float, str]], recorded_from: str,
         fraction: float = FRACTION) -> Baseline:
    """The baseline of these figures; BaselineError naming the field and recorded_from when a figure, or the floor
    fraction x figure, lies outside BOUND of the profile's own floor (an unknown profile: KeyError)."""
    profile = get_profile(hardware)
    for name, (value, _) in figures.items():
        check_bound(name, value, profile, recorded_from)
        if math.isfinite(fraction) and 0 < fraction <= 1:  # else Baseline refuses the fraction itself
            floor = round(fraction * value, 1)
            check_bound(name, floor, profile, recorded_from, f"floor (--fraction {fraction:g} x {value:g})")
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    return Baseline(hardware=hardware, recorded=now, recorded_from=recorded_from, fraction=fraction,
                    thresholds={k: round(fraction * v, 1) for k, (v, _) in figures.items()},
                    source={k: f"{fraction:g} x {v:g} ({what}), recorded {now} from {recorded_from}"
                            for k, (v, what) in figures.items()})


_TOML_SHORT = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_TOML_ESCAPE = re.compile(r'[\\"\x00-\x1f\x7f\ud800-\udfff]')


def _toml_char(ch: str) -> str:
    if "\ud800" <= ch <= "\udfff":  # a lone surrogate (a file name that is no UTF-8): no TOML string can hold it
        return "\ufffd"
    return _TOML_SHORT.get(ch) or f"\\u{ord(ch):04X}"


def toml_string(text: str) -> str:
    """text as a TOML basic string: backslash, quote and the control characters U+0000-U+001F and U+007F escaped,
    every other character kept as UTF-8 (TOML 1.0, "Basic strings")."""
    return '"' + _TOML_ESCAPE.sub(lambda m: _toml_char(m.group()), text) + '"'


def _toml(value: object) -> str:
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    raise ValueError(f"{value!r}: a baseline holds strings and finite numbers only")


def render(baseline: Baseline) -> str:
    head = ["# rlcheck baseline: this cluster's own floors, from a healthy run (rlcheck baseline record).",
            "# Use it with: pytest checks/ --baseline=THIS_FILE (or rlcheck preflight --baseline=THIS_FILE)."]
    top = [f"{k} = {_toml(getattr(baseline, k))}" for k in ("hardware", "recorded", "recorded_from", "fraction")]
    floors = [f"{k} = {_toml(v)}" for k, v in baseline.thresholds.items()]
    sources = [f"{k} = {_toml(v)}" for k, v in baseline.source.items()]
    return "\n".join([*head, *top, "", "[thresholds]", *floors, "", "[source]", *sources]) + "\n"


def load(path: Path) -> Baseline:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        check_fields(raw, FIELDS, tuple(FIELDS))
        return Baseline(**raw)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, TypeError, ValueError) as exc:
        raise BaselineError(f"{path}: not a usable baseline: {exc}") from exc


def apply(profile: HardwareProfile, baseline: Baseline, path: Path) -> HardwareProfile:
    """The profile with the baseline's floors in place of its own (provenance 'baseline')."""
    if baseline.hardware != profile.name:
        raise BaselineError(f"{path}: recorded on hardware {baseline.hardware!r}, this run judges {profile.name!r}")
    for name, floor in baseline.thresholds.items():
        check_bound(name, floor, profile, str(path), "floor")
    provenance = {**profile.provenance, **dict.fromkeys(baseline.thresholds, "baseline")}
    source = {**profile.source, **{k: f"baseline {path}: {v}" for k, v in baseline.source.items()}}
    return dataclasses.replace(profile, thresholds=profile.thresholds.replace(baseline.thresholds),
                               provenance=provenance, source=source)


def figures_measured_here(gpus: int) -> dict[str, tuple[float, str]]:
    """The GEMM (every GPU) and, with two or more GPUs, the all-reduce, measured now as the gpu_* checks do."""
    from rlcheck.probes.gpu.gpu_smoke import collect_allreduce, collect_bf16_gemm

    if gpus < 1:
        raise BaselineError("no GPU here to measure (nvidia-smi found none)")
    gemm = collect_bf16_gemm()
    if gemm.error:
        raise BaselineError(f"the bf16 GEMM did not run: {gemm.error}")
    device, _, slowest = min(gemm.tflops_by_device, key=lambda row: row[2])
    figures = {GEMM_FLOOR: (slowest, f"bf16 GEMM of the slowest of {len(gemm.tflops_by_device)} GPU(s) ({device})")}
    if gpus >= 2:
        reduce = collect_allreduce(world_size=gpus)
        if reduce.error:
            raise BaselineError(f"the all-reduce did not run: {reduce.error}")
        figures[BUSBW_FLOOR] = (reduce.busbw_gbps, f"NCCL all-reduce bus bandwidth over {gpus} GPU(s)")
    return figures
