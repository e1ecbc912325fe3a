"""Generate a large, realistic SLIME job log with a few known failures in it.

The healthy lines are shaped like what a GRPO run prints (Ray, SGLang, Megatron,
SLIME timers, NCCL), with changing numbers so that no two blocks are byte-equal.
Known-failure lines are the catalogue's own examples, sprinkled at fixed offsets.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from rlcheck.catalog import load_catalog

HEALTHY = (
    "(RolloutManager pid={pid}) [2026-07-01 10:{m:02d}:{s:02d}] INFO rollout.py:{n}: collected {k} samples",
    "[2026-07-01 10:{m:02d}:{s:02d} TP{tp}] Decode batch. #running-req: {k}, #token: {n}, token usage: 0.{tp}{k}, "
    "gen throughput (token/s): {n}.{s}, #queue-req: 0",
    "[2026-07-01 10:{m:02d}:{s:02d} TP{tp}] Prefill batch. #new-seq: {k}, #new-token: {n}, #cached-token: {pid}, "
    "token usage: 0.{k}, #running-req: {tp}, #queue-req: 0",
    "(MegatronTrainRayActor pid={pid}, ip=10.1.{tp}.{k}) [2026-07-01 10:{m:02d}:{s:02d}] INFO timer.py:24: "
    "Timer actor_train end (elapsed: {n}.{s}s)",
    " [2026-07-01 10:{m:02d}:{s:02d}] iteration {k}/ 300 | consumed samples: {n} | elapsed time per iteration (ms): "
    "{pid}.{s} | learning rate: 1.000000E-06 | global batch size: 128 | lm loss: 0.{n} | grad norm: 1.{k}",
    "node-{tp}:{pid}:{pid} [{tp}] NCCL INFO Channel {k:02d}/0 : {tp}[{tp}] -> {k}[{k}] via P2P/CUMEM/read",
    "(raylet) [2026-07-01 10:{m:02d}:{s:02d}] INFO worker_pool.cc:{n}: Started worker process with pid {pid}",
    "INFO:     10.1.{tp}.{k}:{n} - \"POST /generate HTTP/1.1\" 200 OK",
    "(RolloutManager pid={pid}) rollout {k}: rollout/raw_reward: 0.{n}, rollout/response_len/mean: {n}.{s}, "
    "rollout/truncated_ratio: 0.0{tp}",
    "[2026-07-01 10:{m:02d}:{s:02d}] WARNING: tokenizer {pid} special tokens mapping loaded, vocab size 151936",
)


def healthy_block(rng: random.Random, lines: int) -> str:
    out = []
    for _ in range(lines):
        template = HEALTHY[rng.randrange(len(HEALTHY))]
        out.append(template.format(pid=rng.randrange(1000, 99999), m=rng.randrange(60), s=rng.randrange(60),
                                   n=rng.randrange(100, 99999), k=rng.randrange(1, 512), tp=rng.randrange(8)))
    return "\n".join(out) + "\n"


def generate(path: Path, size_mb: int, seed: int = 0, failures_every_mb: int = 97) -> list[str]:
    """Write about size_mb MB to path; returns the failure ids planted, in order."""
    rng = random.Random(seed)
    examples = [(e.id, x) for e in load_catalog().values() for x in e.examples]
    blocks = [healthy_block(rng, 4000) for _ in range(64)]
    planted: list[str] = []
    written = 0
    next_failure = failures_every_mb * 2**20
    with path.open("w", encoding="utf-8") as out:
        while written < size_mb * 2**20:
            block = blocks[rng.randrange(len(blocks))]
            out.write(block)
            written += len(block)
            if written >= next_failure:
                fid, line = examples[len(planted) % len(examples)]
                out.write(f"(MegatronTrainRayActor pid=4242) {line}\n")
                planted.append(fid)
                next_failure += failures_every_mb * 2**20
    return planted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", type=Path)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    planted = generate(args.path, args.size_mb, args.seed)
    print(f"wrote {args.path} ({args.path.stat().st_size / 2**20:.0f} MiB), planted: {', '.join(planted)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
