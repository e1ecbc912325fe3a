"""Tile sweep of our backward beside tile-ai's example (both merge off), to choose defaults.

    python -m benchmarks.sparse_mla.tune --out benchmarks/results/sparse_mla_tune_h200.json

Each variant is timed like the main benchmark and checked against the example's gradients.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from benchmarks.sparse_mla.cases import PADDING, _upstream_specs
from benchmarks.sparse_mla.timing import time_cuda
from benchmarks.sparse_mla.upstream import DEFAULT_DIR, Upstream, upstream_indices
from kernels.build import tilelang_version
from kernels.config import DEFAULT_FWD_CONFIG, MlaShape
from kernels.inputs import make_inputs
from kernels.metrics import compare
from kernels.precompile import precompile, run_workers
from kernels.sparse_mla_bwd import sparse_mla_bwd
from kernels.sparse_mla_fwd import sparse_mla_fwd
from kernels.variants import KernelSpec

SHAPES = (
    MlaShape(seq_len=4096, seq_len_kv=8192, heads=64, topk=2048),
    MlaShape(seq_len=4096, seq_len_kv=8192, heads=16, topk=2048),
    MlaShape(seq_len=32768, seq_len_kv=65536, heads=64, topk=2048),
)
# (block_s, split_store, skip_padding_blocks); 16-row blocks cannot partition 16 heads over 4 warps.
TILES = {64: [(32, 2, True), (32, 2, False), (16, 1, True), (16, 2, True)], 16: [(32, 2, True), (32, 2, False)]}


def _specs(shape: MlaShape) -> list[KernelSpec]:
    return [
        KernelSpec(kind="bwd", heads=shape.heads, topk=shape.topk, block_s=bs, split_store=sp, skip_padding_blocks=skip)
        for bs, sp, skip in TILES[shape.heads]
    ]


def _precompile(folder: Path, jobs: int) -> list[dict[str, Any]]:
    ours = [KernelSpec(kind="delta")] + [spec for shape in SHAPES for spec in _specs(shape)]
    ours += [KernelSpec(kind="fwd", heads=h, topk=2048, config=DEFAULT_FWD_CONFIG) for h in (16, 64)]
    results = precompile(ours, jobs)
    ups = [spec for shape in SHAPES for spec in _upstream_specs(shape) if spec.kind != "bwd" or not spec.merge]
    payloads = [(spec.label(), json.dumps({"folder": str(folder), "spec": dataclasses.asdict(spec)})) for spec in ups]
    return [dataclasses.asdict(r) for r in results + run_workers("benchmarks.sparse_mla.upstream", payloads, jobs)]


def _case(shape: MlaShape, upstream: Upstream) -> dict[str, Any]:
    x = make_inputs(shape, PADDING, seed=0)
    reps = 10 if shape.seq_len <= 8192 else 4
    specs = _upstream_specs(shape)
    idx = upstream_indices(x.indices, shape.seq_len_kv)
    up_out, up_lse = upstream.fwd_runner(specs[0])(x.q, x.kv, idx)
    up_bwd = upstream.bwd_runner(specs[4])
    ref_dq, ref_dkv = up_bwd(x.q, x.kv, up_out, x.grad_out, idx, up_lse)
    rows = [
        {
            "impl": "upstream",
            "tile": "example, merge off",
            **time_cuda(lambda: up_bwd(x.q, x.kv, up_out, x.grad_out, idx, up_lse), 2, reps).as_dict(),
        }
    ]
    out, lse = sparse_mla_fwd(x.q, x.kv, x.indices)
    for spec in _specs(shape):
        tile = spec.bwd_tile()
        run = lambda t=tile: sparse_mla_bwd(x.q, x.kv, out, x.grad_out, x.indices, lse, tile=t)  # noqa: E731
        dq, dkv = run()
        checks = {"dq": compare("dq", dq, ref_dq).as_dict(), "dkv": compare("dkv", dkv, ref_dkv).as_dict()}
        rows.append({"impl": "ours", "tile": spec.label(), **time_cuda(run, 2, reps).as_dict(), "checks": checks})
    return {"shape": shape.label(), "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--upstream-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--jobs", type=int, default=min(14, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"tilelang": tilelang_version(), "gpu": torch.cuda.get_device_name()}
    report["compile"] = _precompile(args.upstream_dir, args.jobs)
    upstream = Upstream(args.upstream_dir)
    report["cases"] = [_case(shape, upstream) for shape in SHAPES]
    Path(args.out).write_text(json.dumps(report, indent=2), encoding="utf-8")
    for case in report["cases"]:
        for row in case["rows"]:
            errs = {k: f"{v['rel_err']:.1e}" for k, v in row.get("checks", {}).items()}
            print(f"{case['shape']:<34} {row['impl']:<9} {row['tile'][:52]:<53} {row['median_ms']:9.3f} ms {errs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
