"""Summary ratios and the printed table of a sparse-MLA benchmark report."""

from __future__ import annotations

from typing import Any

from kernels.config import SAFE_BWD_CONFIG, SHIPPED_BWD_CONFIG

FULL_EXTENT = ",full-extent"  # our bwd without the padding-block skip: the example's loop structure


def summarize(rows: list[dict[str, Any]]) -> dict[str, float]:
    times = {(row["impl"], row["pass"], row["config"]): row["median_ms"] for row in rows}
    safe, shipped = SAFE_BWD_CONFIG.label(), SHIPPED_BWD_CONFIG.label()
    summary: dict[str, float] = {}
    for label, ours_key, theirs_key in (
        ("bwd_ours_over_upstream_merge_off", ("ours", "bwd", safe), ("upstream", "bwd", safe)),
        ("bwd_ours_over_upstream_merge_on", ("ours", "bwd", shipped), ("upstream", "bwd", shipped)),
        ("bwd_ours_default_over_upstream_shipped", ("ours", "bwd", safe), ("upstream", "bwd", shipped)),
        (
            "bwd_ours_full_extent_over_upstream_merge_off",
            ("ours", "bwd", safe + FULL_EXTENT),
            ("upstream", "bwd", safe),
        ),
    ):
        if ours_key in times and theirs_key in times:
            summary[label] = round(times[ours_key] / times[theirs_key], 3)
    ref = [row["median_ms"] for row in rows if row["impl"] == "reference" and row["pass"] == "bwd"]
    if ref and ("ours", "bwd", safe) in times:
        summary["bwd_reference_over_ours"] = round(ref[0] / times[("ours", "bwd", safe)], 1)
    return summary


def _row_line(row: dict[str, Any]) -> str:
    head = f"  {row['impl']:<10}{row['pass']:<5}{row['config'][:37]:<38}"
    if row.get("error"):
        return f"{head}  error: {row['error'][-120:]}"
    errs = ", ".join(f"{k} {v['rel_err']:.1e} nan {v['nonfinite_fraction']:.0%}" for k, v in row["checks"].items())
    return f"{head}{row['median_ms']:>9.3f}{row['unique_bytes_bound_ms']:>10.3f}  {errs}"


def render_table(report: dict[str, Any]) -> str:
    meta = report["meta"]
    lines = [f"sparse MLA on {meta['gpu']}, tilelang {meta['tilelang']}, copy {meta['copy_bandwidth_tb_per_s']} TB/s"]
    for case in report["cases"]:
        valid = case.get("valid_fraction", 0)
        lines.append(f"\n{case['shape']} ({case.get('padding')}, valid {valid:.2f}) vs {case.get('baseline')}")
        if case.get("error"):
            lines.append(f"  error: {case['error']}")
            continue
        lines.append(f"  {'impl':<10}{'pass':<5}{'config':<38}{'ms':>9}{'bound ms':>10}  errors vs baseline")
        lines += [_row_line(row) for row in case["results"]]
        lines.append(f"  summary: {case['summary']}")
    return "\n".join(lines)
