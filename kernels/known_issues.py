"""Compiler faults our kernels are known to hit, as data, so tests can expect them.

`sparse-mla-bwd-nan` (tilelang #2199, fixed by #2204): TileLang's aggressive shared-memory
merge shortens the lifetime of a shared buffer that is filled before a loop and read in
every iteration (q_shared) at the first write of another buffer inside the loop (the fp32
dKV stage), and packs both at one offset. The backward then reads a Q overwritten by fp32
partial sums from its second index block on: dQ and dKV become NaN, dV-like terms that do not
read Q stay clean. Flipping any of merge off, warp specialization on, or num_stages >= 1
changes the packing and cures it.

The range where the fault is live is the catalogue's (`rlcheck/data/failures/kernel.toml`,
single source); `kernels/test_kernels_cpu.py` checks it against what we measured on an H200 with
our kernel: 0.1.9 and 0.1.10 bad, 0.1.11 and 0.1.15 clean (benchmarks/results/kernels_h200_*.json).
TileLang's history agrees: the heuristic arrived in 3a956e0e (first tagged in v0.1.9) and #2204
removed it (first tagged in v0.1.11); compiled on CPU, our kernel shows the same aliasing in 0.1.9
and 0.1.10 and none in 0.1.11 or 0.1.15 (benchmarks/results/kernels_smem_offsets_cpu.json).
"""

from __future__ import annotations

from kernels.config import PassConfig

SPARSE_MLA_BWD_NAN_ID = "sparse-mla-bwd-nan"


def affected_range() -> str:
    """The catalogue's TileLang specifier for the miscompile, e.g. `>=0.1.9.dev0,<0.1.11`."""
    from rlcheck import catalog

    return " ".join(a.specifier for a in catalog.get(SPARSE_MLA_BWD_NAN_ID).affected if a.package == "tilelang")


def tilelang_in_affected_range(version: str) -> bool:
    """True for versions inside the catalogue's range, nightly/dev builds and local labels included."""
    from rlcheck import catalog

    return catalog.get(SPARSE_MLA_BWD_NAN_ID).live_in({"tilelang": version}) is True


def config_triggers_merge_miscompile(config: PassConfig) -> bool:
    """The pass-config combination under which the faulty packing happens (measured: any one flip cures)."""
    return config.aggressive_merge and not config.warp_specialized and config.num_stages == 0


def expect_merge_miscompile(tilelang_version: str, config: PassConfig) -> bool:
    """Whether our backward is expected to produce NaN with this TileLang and config."""
    return tilelang_in_affected_range(tilelang_version) and config_triggers_merge_miscompile(config)
