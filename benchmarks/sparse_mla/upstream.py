"""Runs tile-ai/tilelang's own example (examples/deepseek_v32 at tag v0.1.9) beside our kernels.

The example is never committed: fetch it into the ignored folder `.upstream/v0.1.9/`
(sparse_mla_fwd.py, sparse_mla_bwd.py, utils.py from that tag) before a benchmark run.
Its conventions differ from ours, bridged here:
- padding is the out-of-range index S_kv, masked by `index <= query position`; TileLang's
  inserted bounds checks (`0 <= idx < S_kv`, seen in the generated CUDA of 0.1.9 and 0.1.15)
  zero-fill those loads and skip those atomics. So -1 becomes S_kv, as in its own benchmark.
  (An in-bounds dummy row instead sends every padded slot's atomic to one row and doubles its
  backward time: not what upstream measures.)
- its backward is specialized on (B, S, S_kv) and its pass configs are fixed in a decorator, so
  merge on/off is compiled from `bwd.get_tir(...)` with the configs we choose;
- its backward hard-codes 256 threads, which cannot partition 16 heads (`No valid warp
  partition for T.gemm: M=16`); below 64 heads we pass 128 threads, the choice upstream made
  later (tilelang #2592, adaptive threads).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from kernels.build import compile_program
from kernels.config import DIM_ROPE, DIM_V, KEY_AGGRESSIVE_MERGE, KEY_DISABLE_WARP_SPECIALIZED

DEFAULT_DIR = Path(".upstream/v0.1.9")
UPSTREAM_FILES = ("sparse_mla_fwd.py", "sparse_mla_bwd.py", "utils.py")


@dataclass(frozen=True, kw_only=True, slots=True)
class UpstreamSpec:
    """One upstream kernel to compile: `fwd` (symbolic S) or `bwd`, `pre`, `post` (static shapes)."""

    kind: str
    batch: int
    seq_len: int
    seq_len_kv: int
    heads: int
    topk: int
    merge: bool = True

    @property
    def threads(self) -> int:
        return 256 if self.heads >= 64 else 128

    def label(self) -> str:
        return (
            f"upstream-{self.kind}-S{self.seq_len}-H{self.heads}-topk{self.topk}-merge={'on' if self.merge else 'off'}"
        )


def missing_files(folder: Path) -> list[str]:
    return [name for name in UPSTREAM_FILES if not (folder / name).is_file()]


def load_modules(folder: Path) -> tuple[ModuleType, ModuleType]:
    """Import the example's forward and backward modules (they import each other by bare name)."""
    if missing := missing_files(folder):
        raise FileNotFoundError(f"upstream example not found in {folder}: missing {missing}")
    sys.path.insert(0, str(folder.resolve()))
    return importlib.import_module("sparse_mla_fwd"), importlib.import_module("sparse_mla_bwd")


class Upstream:
    def __init__(self, folder: Path = DEFAULT_DIR) -> None:
        self.fwd_mod, self.bwd_mod = load_modules(folder)

    def build(self, spec: UpstreamSpec) -> Any:
        """Compile one of the example's kernels from its prim_func, with the example's own configs
        (merge aside), so RLCHECK_KERNEL_ARCH compile-only checks work for it too."""
        fwd, bwd = self.fwd_mod, self.bwd_mod
        no_ws = {KEY_DISABLE_WARP_SPECIALIZED: True}
        if spec.kind == "pre":
            return compile_program(bwd.preprocess.get_tir(spec.batch, spec.seq_len, spec.heads, DIM_V), [-1])
        if spec.kind == "post":
            program = bwd.postprocess.get_tir(spec.batch, spec.seq_len_kv, DIM_V, DIM_ROPE, 1)
            return compile_program(program, [-1])
        if spec.kind == "fwd":
            program = fwd.sparse_mla_fwd.get_tir(spec.heads, DIM_V, DIM_ROPE, spec.topk, 1, None, True)
            return compile_program(program, [-2, -1], no_ws)
        program = bwd.bwd.get_tir(
            spec.batch, spec.seq_len, spec.seq_len_kv, spec.heads, DIM_V, DIM_ROPE, spec.topk, threads=spec.threads
        )
        return compile_program(program, [-2], no_ws | {KEY_AGGRESSIVE_MERGE: spec.merge})

    def fwd_runner(self, spec: UpstreamSpec) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
        """`run(q, kv, indices) -> (out, lse)`, the kernel resolved once."""
        kernel = self.build(dataclasses.replace(spec, kind="fwd"))
        return lambda q, kv, indices: kernel(q, kv, indices)

    def bwd_runner(self, spec: UpstreamSpec) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
        """`run(q, kv, out, grad_out, indices, lse) -> (dq, dkv)`: the example's
        `sparse_mla_bwd` interface (preprocess, zeros, bwd, postprocess), kernels resolved once."""
        pre = self.build(dataclasses.replace(spec, kind="pre"))
        bwd = self.build(dataclasses.replace(spec, kind="bwd"))
        post = self.build(dataclasses.replace(spec, kind="post"))

        def run(q, kv, out, grad_out, indices, lse):  # noqa: ANN001, ANN202 - tensors
            delta = pre(out, grad_out)
            dkv = torch.zeros_like(kv, dtype=torch.float32)
            dq = bwd(q, kv, grad_out, indices, lse, delta, dkv)
            return dq, post(dkv)

        return run


def upstream_indices(indices: torch.Tensor, seq_len_kv: int) -> torch.Tensor:
    """Our -1 padding as upstream's: the out-of-range index S_kv."""
    return torch.where(indices < 0, torch.full_like(indices, seq_len_kv), indices).contiguous()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="compile one upstream kernel (a benchmark precompile worker)")
    parser.add_argument("--worker", required=True, help="JSON {folder, spec}")
    args = parser.parse_args(argv)
    payload = json.loads(args.worker)
    Upstream(Path(payload["folder"])).build(UpstreamSpec(**payload["spec"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
