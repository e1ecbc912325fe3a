"""Compile many kernel variants in parallel worker processes, filling TileLang's disk cache.

A later `spec.build()` in the test or benchmark process then loads from the cache instead
of spending 10-50 s per variant. Each worker is its own process with a timeout, so one
variant that crashes or hangs the compiler is recorded and the others go on.

    python -m kernels.precompile --jobs 12 --timeout-s 300 SPEC_JSON...
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from kernels.variants import KernelSpec

DEFAULT_TIMEOUT_S = 300


@dataclass(frozen=True, kw_only=True, slots=True)
class CompileResult:
    label: str
    ok: bool
    seconds: float
    error_tail: str
    """Last lines of the worker's stderr when it failed, else empty."""


def run_workers(
    module: str, payloads: Sequence[tuple[str, str]], jobs: int = 8, timeout_s: float = DEFAULT_TIMEOUT_S
) -> list[CompileResult]:
    """Run `python -m MODULE --worker PAYLOAD` for each (label, payload), `jobs` at a time."""

    def one(item: tuple[str, str]) -> CompileResult:
        label, payload = item
        start = time.monotonic()
        argv = [sys.executable, "-m", module, "--worker", payload]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            return CompileResult(label=label, ok=False, seconds=timeout_s, error_tail=f"timeout after {timeout_s} s")
        tail = "" if proc.returncode == 0 else "\n".join(proc.stderr.strip().splitlines()[-8:])
        return CompileResult(
            label=label, ok=proc.returncode == 0, seconds=round(time.monotonic() - start, 1), error_tail=tail
        )

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, payloads))


def precompile(specs: Sequence[KernelSpec], jobs: int = 8, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[CompileResult]:
    """Compile every distinct spec in worker processes; results in the order given."""
    unique = list(dict.fromkeys(specs))
    return run_workers("kernels.precompile", [(spec.label(), spec.to_json()) for spec in unique], jobs, timeout_s)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", help="compile this one spec (JSON) in this process")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--timeout-s", type=float, default=DEFAULT_TIMEOUT_S)
    parser.add_argument("specs", nargs="*", help="KernelSpec JSON strings")
    args = parser.parse_args(argv)
    if args.worker:
        KernelSpec.from_json(args.worker).build()
        return 0
    results = precompile([KernelSpec.from_json(text) for text in args.specs], args.jobs, args.timeout_s)
    for result in results:
        print(
            json.dumps({"label": result.label, "ok": result.ok, "seconds": result.seconds, "error": result.error_tail})
        )
    return 0 if all(result.ok for result in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
