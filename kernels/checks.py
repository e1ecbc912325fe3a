"""Run our TileLang kernels on one input and judge them against the fp32 reference.

Shared by the GPU tests, `kernels.bisect` and the benchmark, so all three call the kernels
and read the errors the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kernels.config import DEFAULT_FWD_CONFIG, SAFE_BWD_CONFIG, PassConfig
from kernels.inputs import MlaInputs
from kernels.metrics import LSE_ABS_ERR_BOUND, TensorCheck, compare, lse_abs_err
from kernels.reference import ReferenceGrads, reference_backward, reference_forward


@dataclass(frozen=True, slots=True)
class Reference:
    """fp32 reference results for one input (computed once, reused across configs)."""

    out: torch.Tensor
    lse: torch.Tensor
    grads: ReferenceGrads


@dataclass(frozen=True, kw_only=True, slots=True)
class ForwardResult:
    out: TensorCheck
    lse_abs_err: float

    def ok(self) -> bool:
        return self.out.ok() and self.lse_abs_err <= LSE_ABS_ERR_BOUND

    def summary(self) -> str:
        return f"{self.out.summary()}; lse abs err {self.lse_abs_err:.1e} (bound {LSE_ABS_ERR_BOUND:.0e})"


@dataclass(frozen=True, kw_only=True, slots=True)
class BackwardResult:
    dq: TensorCheck
    dkv: TensorCheck

    def ok(self) -> bool:
        return self.dq.ok() and self.dkv.ok()

    def summary(self) -> str:
        return f"{self.dq.summary()}; {self.dkv.summary()}"

    def as_dict(self) -> dict[str, Any]:
        return {"dq": self.dq.as_dict(), "dkv": self.dkv.as_dict()}


def reference_for(inputs: MlaInputs) -> Reference:
    out, lse = reference_forward(inputs.q, inputs.kv, inputs.indices)
    grads = reference_backward(inputs.q, inputs.kv, inputs.indices, inputs.grad_out)
    return Reference(out=out, lse=lse, grads=grads)


def run_forward(
    inputs: MlaInputs, config: PassConfig = DEFAULT_FWD_CONFIG, skip_padding_blocks: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    from kernels.sparse_mla_fwd import FwdTile, sparse_mla_fwd

    tile = FwdTile(skip_padding_blocks=skip_padding_blocks)
    return sparse_mla_fwd(inputs.q, inputs.kv, inputs.indices, config=config, tile=tile)


def run_backward(
    inputs: MlaInputs,
    out: torch.Tensor,
    lse_log2: torch.Tensor,
    config: PassConfig = SAFE_BWD_CONFIG,
    skip_padding_blocks: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    from kernels.sparse_mla_bwd import BwdTile, sparse_mla_bwd

    tile = BwdTile(skip_padding_blocks=skip_padding_blocks)
    return sparse_mla_bwd(inputs.q, inputs.kv, out, inputs.grad_out, inputs.indices, lse_log2, config=config, tile=tile)


def check_forward(out: torch.Tensor, lse_log2: torch.Tensor, ref: Reference) -> ForwardResult:
    return ForwardResult(out=compare("out", out, ref.out), lse_abs_err=lse_abs_err(lse_log2, ref.lse))


def check_backward(dq: torch.Tensor, dkv: torch.Tensor, ref: Reference) -> BackwardResult:
    return BackwardResult(dq=compare("dq", dq, ref.grads.dq), dkv=compare("dkv", dkv, ref.grads.dkv))
