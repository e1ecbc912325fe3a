"""A compiled kernel variant as data: which kernel, for which heads/top-k, with which configs.

Specs travel as JSON to compile workers (see `kernels.precompile`) and into result files.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from kernels.config import DEFAULT_FWD_CONFIG, DIM_QK, SAFE_BWD_CONFIG, PassConfig
from kernels.reference import default_sm_scale

KINDS: tuple[str, ...] = ("fwd", "bwd", "delta")


@dataclass(frozen=True, kw_only=True, slots=True)
class KernelSpec:
    kind: str
    """`fwd`, `bwd` or `delta` (the backward's O.dO row sums)."""
    heads: int = 64
    """Padded heads the kernel computes (16, 32 or 64)."""
    topk: int = 2048
    """Indices per query."""
    config: PassConfig = SAFE_BWD_CONFIG
    """Compiler pass configs and pipeline depth."""
    skip_padding_blocks: bool = True
    """Data-dependent loop extent (see BwdTile / FwdTile)."""
    block_s: int = 32
    """Backward only: selected KV rows per step."""
    split_store: int = 2
    """Backward only: slices of the fp32 dKV stage."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind={self.kind!r}: allowed {KINDS}")
        if self.heads not in (16, 32, 64):
            raise ValueError(f"heads={self.heads}: allowed 16, 32 or 64 (pad smaller head counts)")

    def label(self) -> str:
        if self.kind == "delta":
            return "delta"
        extent = "skip" if self.skip_padding_blocks else "full"
        tile = f"-bs{self.block_s}x{self.split_store}" if self.kind == "bwd" else ""
        return f"{self.kind}-H{self.heads}-topk{self.topk}-{extent}{tile}-{self.config.label()}"

    def build(self) -> Any:
        """Compile (or load from TileLang's disk cache) and return the kernel."""
        scale = default_sm_scale(DIM_QK)
        if self.kind == "fwd":
            from kernels.sparse_mla_fwd import FwdTile, build_fwd

            tile = FwdTile(skip_padding_blocks=self.skip_padding_blocks)
            return build_fwd(self.heads, self.topk, scale, self.config, tile)
        from kernels.sparse_mla_bwd import build_bwd, build_delta

        if self.kind == "delta":
            return build_delta()
        return build_bwd(self.heads, self.topk, scale, self.config, self.bwd_tile())

    def bwd_tile(self) -> Any:
        from kernels.sparse_mla_bwd import BwdTile

        return BwdTile(block_s=self.block_s, split_store=self.split_store, skip_padding_blocks=self.skip_padding_blocks)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> KernelSpec:
        fields = json.loads(text)
        fields["config"] = PassConfig(**fields["config"])
        return cls(**fields)


def fwd_spec(heads: int, topk: int, config: PassConfig = DEFAULT_FWD_CONFIG) -> KernelSpec:
    return KernelSpec(kind="fwd", heads=heads, topk=topk, config=config)
