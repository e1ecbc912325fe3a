"""Sparse-MLA benchmark: our TileLang forward/backward beside tile-ai's example and the PyTorch
reference, merge on against merge off, against the memory-bandwidth bound, in one run.

    python -m benchmarks.sparse_mla --out benchmarks/results/sparse_mla_h200.json

Inputs follow the example's own benchmark (B=1, S_kv = 2S, top-k 2048, query t picks among
KV rows [0, t)), so the first 2048 queries carry trailing padding.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from benchmarks.sparse_mla import cases as bench
from benchmarks.sparse_mla.report import render_table
from benchmarks.sparse_mla.timing import copy_bandwidth_bytes_per_s
from benchmarks.sparse_mla.upstream import DEFAULT_DIR, missing_files
from kernels.build import tilelang_version
from kernels.config import MlaShape


def _shapes(seq_lens: Sequence[int], heads: Sequence[int], topk: int) -> list[MlaShape]:
    return [MlaShape(seq_len=s, seq_len_kv=2 * s, heads=h, topk=topk) for s, h in zip(seq_lens, heads, strict=True)]


def _ints(text: str) -> list[int]:
    return [int(item) for item in text.split(",") if item.strip()]


def _meta(argv: Sequence[str], bandwidth: float) -> dict[str, Any]:
    return {
        "date_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": "python -m benchmarks.sparse_mla " + shlex.join(argv),
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "tilelang": tilelang_version(),
        "python": platform.python_version(),
        "copy_bandwidth_tb_per_s": round(bandwidth / 1e12, 3),
        "timing": "CUDA events, L2 flushed before each rep, median",
    }


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="result JSON path")
    parser.add_argument("--upstream-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--seq-lens", default="4096,4096", help="reference-checked cases (S_kv = 2S)")
    parser.add_argument("--heads", default="64,16", help="heads of each reference-checked case")
    parser.add_argument("--large-seq-lens", default="32768,16384", help="try in order; keep the first that fits")
    parser.add_argument("--topk", type=int, default=2048)
    parser.add_argument("--jobs", type=int, default=min(14, os.cpu_count() or 1))
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if missing := missing_files(args.upstream_dir):
        print(f"upstream example missing in {args.upstream_dir}: {missing}; running ours and the reference only")
    with_upstream = not missing
    checked = _shapes(_ints(args.seq_lens), _ints(args.heads), args.topk)
    large_seq_lens = _ints(args.large_seq_lens)
    large = _shapes(large_seq_lens, [64] * len(large_seq_lens), args.topk)
    compile_log = bench.precompile_all([*checked, *large[:1]], args.upstream_dir if with_upstream else None, args.jobs)
    meta = _meta(argv, copy_bandwidth_bytes_per_s())
    # command, date and machine at the top, as every result file under benchmarks/results/ has them
    report: dict[str, Any] = {"command": meta["command"], "date": meta["date_utc"],
                              "machine": f"{meta['gpu']}, torch {meta['torch']}, Python {meta['python']}",
                              "meta": meta, "compile": compile_log, "cases": []}
    runner = bench.CaseRunner(
        args.upstream_dir if with_upstream else None, report["meta"]["copy_bandwidth_tb_per_s"] * 1e12
    )
    for shape in checked:
        report["cases"].append(runner.run(shape, with_reference=True))
        _write(args.out, report)
    for shape in large:  # largest first; stop at the first that runs
        case = runner.run(shape, with_reference=False)
        report["cases"].append(case)
        _write(args.out, report)
        if not case.get("error"):
            break
    print(render_table(report))
    return 0


def _write(path: str, report: dict[str, Any]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2)


if __name__ == "__main__":
    raise SystemExit(main())
