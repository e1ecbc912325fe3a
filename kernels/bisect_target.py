"""The default `kernels.bisect` target: our sparse-MLA backward on one reproducible input."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass

from kernels.config import DEFAULT_FWD_CONFIG, MlaShape, PassConfig, padded_heads
from kernels.outcome import Outcome
from kernels.variants import KernelSpec


@dataclass(frozen=True, kw_only=True, slots=True)
class Problem:
    """The input a bisect runs on."""

    shape: MlaShape
    padding: str = "causal"
    """Padding pattern of the indices (kernels.inputs.PADDING_PATTERNS)."""
    seed: int = 0
    skip_padding_blocks: bool = True
    """Which loop structure of our kernel to bisect (see BwdTile)."""
    compile_jobs: int = 8
    """Parallel compile workers used to prepare all flipped configs at once."""


def add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--seq-len-kv", type=int, default=0, help="0 = 2 x seq-len (upstream's example)")
    parser.add_argument("--heads", type=int, default=64)
    parser.add_argument("--topk", type=int, default=256)
    parser.add_argument("--padding", default="causal")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--full-extent", action="store_true", help="loop over all index blocks (no padding skip)")
    parser.add_argument("--compile-jobs", type=int, default=min(8, os.cpu_count() or 1))


def problem_from_args(args: argparse.Namespace) -> Problem:
    shape = MlaShape(
        batch=args.batch,
        seq_len=args.seq_len,
        seq_len_kv=args.seq_len_kv or 2 * args.seq_len,
        heads=args.heads,
        topk=args.topk,
    )
    return Problem(
        shape=shape,
        padding=args.padding,
        seed=args.seed,
        skip_padding_blocks=not args.full_extent,
        compile_jobs=args.compile_jobs,
    )


class SparseMlaBwdTarget:
    """run(config) -> Outcome for our backward; input, forward and reference are computed once."""

    def __init__(self, problem: Problem) -> None:
        from kernels.checks import reference_for, run_forward
        from kernels.inputs import make_inputs

        self.problem = problem
        self.inputs = make_inputs(problem.shape, problem.padding, problem.seed)
        self.reference = reference_for(self.inputs)
        self.out, self.lse = run_forward(self.inputs, DEFAULT_FWD_CONFIG, problem.skip_padding_blocks)

    def _spec(self, config: PassConfig) -> KernelSpec:
        return KernelSpec(
            kind="bwd",
            heads=padded_heads(self.problem.shape.heads),
            topk=self.problem.shape.topk,
            config=config,
            skip_padding_blocks=self.problem.skip_padding_blocks,
        )

    def prepare(self, configs: Sequence[PassConfig]) -> None:
        from kernels.precompile import precompile

        precompile([self._spec(config) for config in configs], jobs=self.problem.compile_jobs)

    def __call__(self, config: PassConfig) -> Outcome:
        import torch

        from kernels.checks import check_backward, run_backward

        try:
            dq, dkv = run_backward(self.inputs, self.out, self.lse, config, self.problem.skip_padding_blocks)
            torch.cuda.synchronize()
        except Exception as exc:  # a compile or launch failure is a result of the trial, not a crash
            return Outcome(bad=False, detail="", error=f"{type(exc).__name__}: {str(exc)[-300:]}")
        result = check_backward(dq, dkv, self.reference)
        return Outcome(bad=not result.ok(), detail=result.summary(), metrics=result.as_dict())


def sparse_mla_bwd_target(problem: Problem) -> SparseMlaBwdTarget:
    return SparseMlaBwdTarget(problem)
