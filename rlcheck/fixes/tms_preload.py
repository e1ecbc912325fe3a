"""Make the torch_memory_saver preload library SLIME picks by name match the CUDA runtime (tms-cu12-preload).

SLIME v0.2.4 LD_PRELOADs `torch_memory_saver_hook_mode_preload.abi3.so` by name; in torch_memory_saver
0.0.10 that file is the cu12 build. On a CUDA 13 image this replaces it with the _cu13 build (a copy;
the original is kept as .orig). Where the names already agree with the runtime it does nothing, so
the step can stay in the Dockerfile after SLIME chooses by CUDA major itself (THUDM/slime#2186).

    python3 -m rlcheck.fixes.tms_preload --cuda-major 13 [--dry-run]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from rlcheck.probes.node import tms

STEMS = ("torch_memory_saver_hook_mode_preload", "torch_memory_saver_hook_mode_torch")


def plan(folder: Path, cuda_major: int) -> list[tuple[Path, Path]]:
    """(source, target) copies that make each unsuffixed library the build for cuda_major."""
    copies = []
    for stem in STEMS:
        target, source = folder / f"{stem}.abi3.so", folder / f"{stem}_cu{cuda_major}.abi3.so"
        if not target.exists() or not source.exists():
            continue
        if tms.cudart_major(target) != cuda_major and tms.cudart_major(source) == cuda_major:
            copies.append((source, target))
    return copies


def apply(copies: list[tuple[Path, Path]]) -> None:
    for source, target in copies:
        backup = target.with_name(target.name + ".orig")
        if not backup.exists():
            shutil.copy2(target, backup)
        shutil.copy2(source, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuda-major", type=int, required=True, help="the image's CUDA runtime major (12, 13)")
    parser.add_argument("--folder", type=Path, default=None, help="where the hook libraries are (site-packages)")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    folder = args.folder or tms.package_dir()
    if folder is None:
        print("tms_preload: torch_memory_saver is not installed: nothing to do")
        return 0
    copies = plan(folder, args.cuda_major)
    for source, target in copies:
        print(f"tms_preload: {target.name} <- {source.name} (CUDA {args.cuda_major})")
    if not copies:
        print(f"tms_preload: the libraries SLIME picks by name already need libcudart.so.{args.cuda_major}")
    if not args.dry_run:
        apply(copies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
