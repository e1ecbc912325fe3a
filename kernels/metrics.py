"""How a kernel output is judged against the fp32 reference.

Bounds, and why:
- `REL_ERR_BOUND` = 1e-2 on ||x - ref|| / ||ref|| over the whole tensor. The inputs are bf16
  and therefore exact in fp32, so the reference sees the same numbers; the kernels round P
  and dS to bf16 before the tensor-core products and round the result to bf16, each a
  relative error of at most 2^-9 (about 1.1e-3 in norm for random rounding). Two or three of
  those add up to 2-3e-3, which is what upstream reports (~3e-3). 1e-2 leaves 3-5x margin;
  a wrong index, a skipped block or a clobbered buffer costs 1e-1 or more.
- `ROW_REL_ERR_BOUND` = 3e-2 on the worst single token row (or KV row), so damage confined
  to a few rows cannot hide in the global norm. A row whose reference is exactly zero (an
  all-padding query, a KV row nobody selected) must come out exactly zero.
- Any NaN or Inf fails; the fraction is reported because it is the miscompile's signature.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch

REL_ERR_BOUND = 1e-2
ROW_REL_ERR_BOUND = 3e-2
LSE_ABS_ERR_BOUND = 1e-3


@dataclass(frozen=True, kw_only=True, slots=True)
class TensorCheck:
    name: str
    """Which output (`out`, `lse`, `dq`, `dkv`)."""
    nonfinite_fraction: float
    """Share of NaN/Inf elements."""
    rel_err: float
    """||x - ref|| / ||ref|| over finite elements; NaN when any element is not finite."""
    worst_row_rel_err: float
    """Largest per-row relative error among rows with a non-zero reference."""
    nonzero_in_zero_rows: int
    """Rows whose reference is exactly zero but the kernel's is not."""
    cos_diff: float
    """Upstream's similarity metric 1 - 2<x,ref>/(|x|^2 + |ref|^2), for comparison with its reports."""

    def ok(self) -> bool:
        return (
            self.nonfinite_fraction == 0.0
            and self.rel_err <= REL_ERR_BOUND
            and self.worst_row_rel_err <= ROW_REL_ERR_BOUND
            and self.nonzero_in_zero_rows == 0
        )

    def summary(self) -> str:
        return (
            f"{self.name}: nonfinite {self.nonfinite_fraction:.1%}, rel_err {self.rel_err:.2e} "
            f"(bound {REL_ERR_BOUND:.0e}), worst row {self.worst_row_rel_err:.2e} (bound {ROW_REL_ERR_BOUND:.0e})"
        )

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def nonfinite_fraction(x: torch.Tensor) -> float:
    return float((~torch.isfinite(x)).float().mean().item())


def compare(name: str, x: torch.Tensor, ref: torch.Tensor, row_dim: int = 1) -> TensorCheck:
    """Judge `x` (any dtype) against fp32 `ref`; rows are the slices along `row_dim` (tokens)."""
    x32, ref32 = x.float(), ref.float()
    bad = nonfinite_fraction(x32)
    diff = torch.nan_to_num(x32 - ref32, nan=0.0, posinf=0.0, neginf=0.0)
    ref_norm = float(ref32.norm().item())
    rel = float("nan") if bad else float(diff.norm().item()) / max(ref_norm, 1e-30)
    rows_diff = diff.movedim(row_dim, 0).flatten(1).norm(dim=1)
    rows_ref = ref32.movedim(row_dim, 0).flatten(1).norm(dim=1)
    live = rows_ref > 0
    worst = float((rows_diff[live] / rows_ref[live]).max().item()) if bool(live.any()) else 0.0
    zero_rows_hit = int(((rows_diff > 0) & ~live).sum().item())
    dot = float((torch.nan_to_num(x32) * ref32).sum().item())
    denom = float((torch.nan_to_num(x32) ** 2).sum().item() + (ref32**2).sum().item())
    cos_diff = 1.0 - 2.0 * dot / denom if denom > 0 else 0.0
    return TensorCheck(
        name=name,
        nonfinite_fraction=bad,
        rel_err=rel,
        worst_row_rel_err=float("nan") if bad else worst,
        nonzero_in_zero_rows=zero_rows_hit,
        cos_diff=cos_diff,
    )


def lse_abs_err(lse_log2: torch.Tensor, ref_lse_natural: torch.Tensor) -> float:
    """Largest |kernel - reference| on rows with a valid index; -inf rows must match exactly."""
    ref_log2 = ref_lse_natural.float() * 1.4426950408889634
    empty = torch.isneginf(ref_log2)
    if not torch.equal(torch.isneginf(lse_log2), empty):
        return float("inf")
    live = ~empty
    if not bool(live.any()):
        return 0.0
    return float((lse_log2.float()[live] - ref_log2[live]).abs().max().item())
