"""Typed knobs for the sparse-MLA kernels: compiler pass configs, tiles and problem shapes.

Everything here imports without TileLang, so CPU CI can build, validate and print configs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

# GLM-5.2 / DeepSeek-V3.2 sparse MLA geometry: 512 latent dims + 64 rope dims per key,
# values are the 512 latent dims of the same KV row.
DIM_V: int = 512
DIM_ROPE: int = 64
DIM_QK: int = DIM_V + DIM_ROPE
LOG2_E: float = 1.4426950408889634

# TileLang's pass-config keys, spelled as strings so no import of tilelang is needed.
KEY_AGGRESSIVE_MERGE = "tl.enable_aggressive_shared_memory_merge"
KEY_DISABLE_WARP_SPECIALIZED = "tl.disable_warp_specialized"
KEY_DISABLE_TMA_LOWER = "tl.disable_tma_lower"


@dataclass(frozen=True, kw_only=True, slots=True)
class PassConfig:
    """The compiler switches the GLM-5.2 bisect flipped by hand (miles PR #1571)."""

    aggressive_merge: bool = False
    """TileLang's aggressive shared-memory merge; miscompiles sparse-MLA bwd on 0.1.9 (tilelang #2199)."""
    warp_specialized: bool = False
    """Producer/consumer warp specialization of pipelined loops."""
    num_stages: int = 0
    """Software-pipelining depth of the main loop over index blocks (0 = not pipelined)."""
    tma_lower: bool = True
    """Lower eligible bulk copies to the Hopper TMA engine."""

    def __post_init__(self) -> None:
        if self.num_stages not in (0, 1, 2, 3):
            raise ValueError(f"num_stages={self.num_stages}: allowed 0, 1, 2 or 3")

    def tilelang_pass_configs(self) -> dict[str, bool]:
        """The `pass_configs` dict that `tilelang.compile` takes."""
        return {
            KEY_AGGRESSIVE_MERGE: self.aggressive_merge,
            KEY_DISABLE_WARP_SPECIALIZED: not self.warp_specialized,
            KEY_DISABLE_TMA_LOWER: not self.tma_lower,
        }

    def label(self) -> str:
        """Short stable name, e.g. `merge=on,ws=off,stages=0,tma=on`."""
        onoff = {True: "on", False: "off"}
        return (
            f"merge={onoff[self.aggressive_merge]},ws={onoff[self.warp_specialized]},"
            f"stages={self.num_stages},tma={onoff[self.tma_lower]}"
        )

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def parse(cls, text: str) -> PassConfig:
        """Inverse of `label()`; unknown keys or values raise ValueError."""
        names = {"merge": "aggressive_merge", "ws": "warp_specialized", "stages": "num_stages", "tma": "tma_lower"}
        fields: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            key, _, value = item.partition("=")
            if key not in names:
                raise ValueError(f"pass config key={key!r}: allowed {sorted(names)}")
            if key == "stages":
                fields[names[key]] = int(value)
            elif value in ("on", "off"):
                fields[names[key]] = value == "on"
            else:
                raise ValueError(f"{key}={value!r}: allowed on or off")
        return cls(**fields)


# The configuration GLM-5.2 shipped when it died at step 1 (upstream example at v0.1.9 too).
SHIPPED_BWD_CONFIG = PassConfig(aggressive_merge=True, warp_specialized=False, num_stages=0, tma_lower=True)
# Our default: merge off, the fix miles and prime-rl adopted; correct on every TileLang we ran.
SAFE_BWD_CONFIG = PassConfig(aggressive_merge=False, warp_specialized=False, num_stages=0, tma_lower=True)
# The forward never showed the fault. One stage of pipelining: with a data-dependent loop
# extent, 2 stages fail TileLang 0.1.15's codegen (non-constant cp.async wait count).
DEFAULT_FWD_CONFIG = PassConfig(aggressive_merge=False, warp_specialized=False, num_stages=1, tma_lower=True)


def padded_heads(num_heads: int) -> int:
    """Heads a kernel block computes: the next power of two, at least 16 (the MMA row tile)."""
    if not 1 <= num_heads <= 64:
        raise ValueError(f"num_heads={num_heads}: allowed 1..64 heads per rank (kv_group 1)")
    return max(16, 1 << math.ceil(math.log2(num_heads)))


@dataclass(frozen=True, kw_only=True, slots=True)
class MlaShape:
    """One sparse-MLA problem: q [batch, seq_len, heads, 576], kv [batch, seq_len_kv, 1, 576]."""

    batch: int = 1
    """Sequences per launch."""
    seq_len: int
    """Query tokens per sequence."""
    seq_len_kv: int
    """KV rows per sequence (the pool the top-k indices point into)."""
    heads: int
    """Query heads per rank (GLM-5.2: 64 / TP)."""
    topk: int
    """Selected KV indices per query; -1 marks padding."""

    def __post_init__(self) -> None:
        for name in ("batch", "seq_len", "seq_len_kv", "topk"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)}: must be >= 1")
        padded_heads(self.heads)
        if self.topk % 64:
            raise ValueError(f"topk={self.topk}: must be a multiple of 64 (the forward's index block)")

    def label(self) -> str:
        return f"B{self.batch}-S{self.seq_len}-SKV{self.seq_len_kv}-H{self.heads}-topk{self.topk}"
