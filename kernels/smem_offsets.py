"""Where TileLang put q_shared and the fp32 dKV stage of our backward in shared memory.

The sparse-MLA miscompile (tilelang #2199) is visible without a GPU: with the faulty merge,
the fp32 dKV stage (written inside the loop) is packed over q_shared (read in every
iteration). This compiles our backward for each pass config (nvcc only; on a CPU machine set
RLCHECK_KERNEL_ARCH=sm_90a) and reads both byte ranges out of the generated CUDA source.
It relies on TileLang's codegen text (named pointers since ~0.1.12, raw offsets before);
the GPU run stays the proof, this is the cheap look.

    RLCHECK_KERNEL_ARCH=sm_90a python -m kernels.smem_offsets --json offsets.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from kernels.config import DIM_V, PassConfig

_NAMED = re.compile(r"void\* (\w+) = \(\(void\*\)\(\(char\*\)buf_dyn_shmem \+ (\d+)\)\);")
_STAGE_STORE = re.compile(r"\(\(float\*\)buf_dyn_shmem\) \+ (\(.*?\)) = \*\(float2\*\)\(acc_dkv \+")
_FIRST_A_DESC = re.compile(r"desc_a, \(&\(\(\(bfloat16_t\*\)buf_dyn_shmem\)\[(\d+)\]")


@dataclass(frozen=True, kw_only=True, slots=True)
class SmemLayout:
    config: str
    q_offset_bytes: int
    q_bytes: int
    stage_offset_bytes: int
    stage_bytes: int

    @property
    def overlap(self) -> bool:
        q_end, stage_end = self.q_offset_bytes + self.q_bytes, self.stage_offset_bytes + self.stage_bytes
        return self.q_offset_bytes < stage_end and self.stage_offset_bytes < q_end


def find_offsets(source: str) -> tuple[int, int] | None:
    """(q_shared, dkv_stage) byte offsets in generated CUDA, or None if the text is unfamiliar."""
    named = dict((name, int(offset)) for name, offset in _NAMED.findall(source))
    if "q_shared" in named and "dkv_stage" in named:
        return named["q_shared"], named["dkv_stage"]
    store, desc = _STAGE_STORE.search(source), _FIRST_A_DESC.search(source)
    if not store or not desc:
        return None
    constant = re.search(r"\+ (\d+)\)+$", store.group(1))
    stage_floats = int(constant.group(1)) if constant else 0
    return int(desc.group(1)) * 2, stage_floats * 4  # bf16 and fp32 element offsets


def layout_for(config: PassConfig, heads: int = 64, topk: int = 256) -> SmemLayout | None:
    from kernels.sparse_mla_bwd import BwdTile
    from kernels.variants import KernelSpec

    kernel = KernelSpec(kind="bwd", heads=heads, topk=topk, config=config).build()
    offsets = find_offsets(kernel.get_kernel_source())
    if offsets is None:
        return None
    half = BwdTile().block_s // BwdTile().split_store
    return SmemLayout(
        config=config.label(),
        q_offset_bytes=offsets[0],
        q_bytes=heads * DIM_V * 2,
        stage_offset_bytes=offsets[1],
        stage_bytes=half * DIM_V * 4,
    )


def main(argv: Sequence[str] | None = None) -> int:
    from kernels.build import tilelang_version

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write the layouts here")
    parser.add_argument(
        "--tma", choices=("on", "off"), default="on", help="off: for TileLang 0.1.8, whose TMA codegen fails here"
    )
    args = parser.parse_args(argv)
    rows = []
    for merge, ws, stages in itertools.product((True, False), (False, True), (0, 1)):
        config = PassConfig(aggressive_merge=merge, warp_specialized=ws, num_stages=stages, tma_lower=args.tma == "on")
        try:
            layout = layout_for(config)
        except Exception as exc:  # a variant this TileLang cannot build is a result, not a crash
            rows.append(
                {"config": config.label(), "parsed": False, "error": f"{type(exc).__name__}: {str(exc)[-200:]}"}
            )
            continue
        row = {"config": config.label(), "parsed": layout is not None}
        if layout is not None:
            row |= asdict(layout) | {"overlap": layout.overlap}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"tilelang": tilelang_version(), "layouts": rows}, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
