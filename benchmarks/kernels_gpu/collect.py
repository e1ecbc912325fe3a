"""One GPU pass's result file, written on the GPU machine at the end of `kernels/gpu_run.sh` from what the pass
left in its output folder: the kernel tests' records and final line, the pass-config bisect and its log, and the
versions that ran. Nothing is copied by hand: the file's `command` is the gpu_run.sh call that produced it.
Usage (by gpu_run.sh): python3 -m benchmarks.kernels_gpu.collect OUT_DIR TAG --command "bash kernels/gpu_run.sh ..."
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import platform
import re
import sys
from pathlib import Path
from typing import Any

SIDE_PACKAGES = ("tilelang", "apache-tvm-ffi", "torch-c-dlpack-ext", "z3-solver")
OUTCOME = re.compile(r"^(PASSED|FAILED|XFAIL|XPASS|ERROR|SKIPPED) ")
FINAL = re.compile(r"\d+ (passed|failed|error)")


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def machine() -> str:
    try:
        import torch

        gpus = torch.cuda.device_count()
        name = torch.cuda.get_device_name(0) if gpus else "no GPU"
        cuda, torch_v = torch.version.cuda, torch.__version__
    except Exception as exc:  # noqa: BLE001 - the file must still be written, saying what could not be read
        return f"torch unreadable: {exc}"
    return f"{gpus}x {name}, CUDA {cuda}, torch {torch_v}, Python {platform.python_version()}, {platform.node()}"


def collect(out: Path, tag: str, command: str) -> dict[str, Any]:
    tests = _json(out / f"kernels_{tag}.json") or {}
    log = _lines(out / f"pytest_{tag}.log")
    return {
        "what": "pytest kernels/ (GPU correctness + pass-config matrix) and python -m kernels.bisect, rlcheck's "
                "TileLang sparse-MLA kernels",
        "command": command,
        "machine": machine(),
        "date_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "meta": tests.get("meta"),
        "pytest": {"final_line": next((x.strip("= ") for x in reversed(log) if FINAL.search(x)), "no final line"),
                   "outcomes": [x[:220] for x in log if OUTCOME.match(x)]},
        "records": tests.get("records", []),
        "bisect": _json(out / f"bisect_{tag}.json"),
        "bisect_log": [x[:240] for x in _lines(out / f"bisect_{tag}.log") if "INFO" not in x],
        "side_packages": {name: _version(name) for name in SIDE_PACKAGES},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("tag")
    parser.add_argument("--command", required=True)
    args = parser.parse_args(argv)
    doc = collect(args.out, args.tag, args.command)
    version = (doc["meta"] or {}).get("tilelang") or doc["side_packages"]["tilelang"] or "unknown"
    path = args.out / f"kernels_h200_tilelang-{version}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
