"""A stand-in for SLIME's train.py that honours its process contract, for rlcheck's harness tests only.

It parses the rendered argv strictly (an unknown flag exits 2, as argparse does) and prints what SLIME
prints, at the version $RLCHECK_STANDIN_SLIME (default v0.2.4): lines rendered from rlcheck's per-version
table of SLIME's own log statements (tests/standin/slime_lines.py), with Ray's actor prefixes, colours,
SLIME's logger format, and a second actor whose timestamps run a second behind. SGLang stays at
--log-level warning, so no SGLang readiness line is printed. On request ($RLCHECK_STANDIN_FAULT) it goes
wrong the way a real run does:

    known:<failure_id>   print that catalogue entry's real log line during loop 0, then hang
    hang:<milestone>     stop just before that milestone and hang (placement-group, weights-synced, ...)
    crash                die with a Python traceback (exit 1)
    dead-worker          Ray's actor-died error, then exit 1
    zero-reward | kl | truncation | nan-loss   metric lines that break the in-run invariants
    long-line:<chars>    one line of that many characters (an echoed prompt) as each loop's rollout starts

$RLCHECK_STANDIN_HANG_EXITS (any value) makes every hang an exit (status 0) instead, so a test can read the lines
printed before it without a job or a wait.

$RLCHECK_STANDIN_SHAPE sets the metrics every loop prints, as comma-separated field=value pairs of
slime_lines.LoopShape (reward, kl, kl_loss, loss, truncated_ratio): edge values such as reward=-0.5 (a healthy run whose
mean reward is negative), kl=-1e-10 (rounding at step 0), loss=inf or truncated_ratio=0.2 (at the bound).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import slime_lines  # tests/standin/ is on sys.path when this file runs as a script

BOOL_FLAGS = (
    "apply-chat-template", "colocate", "disable-bias-linear", "enable-experimental", "group-query-attention",
    "moe-grouped-gemm", "moe-permute-fusion", "moe-router-enable-expert-bias", "moe-router-pre-softmax",
    "multi-latent-attention", "no-position-embedding", "optimizer-cpu-offload", "qk-layernorm", "rollout-shuffle",
    "sequence-parallel", "sglang-enable-dp-attention", "sglang-enable-dp-lm-head", "swiglu", "use-rollout-logprobs",
    "untie-embeddings-and-output-weights", "use-dynamic-batch-size", "use-kl-loss", "use-tis", "moe-enable-deepep",
)
VALUE_FLAGS = (
    "actor-num-gpus-per-node", "actor-num-nodes", "adam-beta1", "adam-beta2", "advantage-estimator",
    "attention-dropout", "hidden-dropout",
    "context-parallel-size", "decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers", "entropy-coef",
    "eps-clip", "eps-clip-high", "expert-model-parallel-size", "expert-tensor-parallel-size", "ffn-hidden-size",
    "global-batch-size", "hf-checkpoint", "hidden-size", "input-key", "kl-loss-coef", "kl-loss-type", "kv-channels",
    "kv-lora-rank", "label-key", "load", "lr", "lr-decay-style", "make-vocab-size-divisible-by", "max-tokens-per-gpu",
    "micro-batch-size", "moe-aux-loss-coeff", "moe-ffn-hidden-size", "moe-layer-freq", "moe-router-bias-update-rate",
    "moe-router-dtype", "moe-router-load-balancing-type", "moe-router-score-function", "moe-router-topk",
    "moe-router-topk-scaling-factor", "moe-shared-expert-intermediate-size", "moe-token-dispatcher-type",
    "moe-token-drop-policy", "n-samples-per-prompt", "norm-epsilon", "normalization", "num-attention-heads",
    "num-experts", "num-gpus-per-node", "num-layers", "num-query-groups", "num-rollout", "num-steps-per-rollout",
    "optimizer", "pipeline-model-parallel-size", "position-embedding-type", "prefill-num-servers", "prompt-data",
    "q-lora-rank", "qk-head-dim", "qk-pos-emb-head-dim", "recompute-granularity", "recompute-method",
    "recompute-num-layers", "ref-load", "reward-key", "rm-type", "rm-url", "rollout-batch-size",
    "rollout-max-response-len", "rollout-num-gpus", "rollout-num-gpus-per-engine", "rollout-temperature",
    "rotary-base", "rotary-percent", "save", "save-interval", "tensor-model-parallel-size", "tis-clip",
    "tis-clip-low", "update-weight-buffer-size", "v-head-dim", "vocab-size", "weight-decay",
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="train.py", allow_abbrev=False)
    for flag in BOOL_FLAGS:
        p.add_argument(f"--{flag}", action="store_true")
    for flag in VALUE_FLAGS:
        p.add_argument(f"--{flag}")
    p.add_argument("--spec", nargs=2)
    p.add_argument("--sglang-log-level")  # SLIME re-registers every SGLang option as --sglang-*
    for flag in ("mem-fraction-static", "ep-size", "router-policy", "kv-cache-dtype", "attention-backend",
                 "nsa-decode-backend", "nsa-prefill-backend", "page-size", "max-running-requests",
                 "chunked-prefill-size", "watchdog-timeout", "dp-size", "moe-dense-tp-size", "moe-a2a-backend",
                 "speculative-algorithm", "speculative-num-steps", "speculative-eagle-topk",
                 "speculative-num-draft-tokens", "log-level-http"):
        p.add_argument(f"--sglang-{flag}")
    return p


def hang() -> None:
    if os.environ.get("RLCHECK_STANDIN_HANG_EXITS"):  # what comes before a hang, read without a job or a wait
        sys.exit(0)
    time.sleep(600)


def fault_line(failure_id: str) -> str:
    from rlcheck.catalog import get

    return get(failure_id).examples[0]


SHAPE_FIELDS = ("reward", "kl", "kl_loss", "loss", "truncated_ratio")


def overrides(text: str) -> dict[str, float]:
    """'reward=-0.5,kl=-1e-10' -> {'reward': -0.5, 'kl': -1e-10}; a field or value it cannot take exits 2."""
    out: dict[str, float] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = pair.partition("=")
        if name not in SHAPE_FIELDS:
            sys.exit(f"RLCHECK_STANDIN_SHAPE: {name!r} is not one of {', '.join(SHAPE_FIELDS)}")
        try:
            out[name] = float(value)
        except ValueError:
            sys.exit(f"RLCHECK_STANDIN_SHAPE: {name}={value!r} is not a number (nan and inf are)")
    return out


def shape(args: argparse.Namespace, fault: str, phase_s: float, edges: dict[str, float]) -> slime_lines.LoopShape:
    return slime_lines.LoopShape(**{
        "samples": int(args.global_batch_size) * int(args.num_steps_per_rollout or 1),
        "steps": int(args.num_steps_per_rollout or 1), "rollout_s": phase_s, "phase_s": phase_s,
        "reward": 0.0 if fault == "zero-reward" else 0.4375,
        "truncated_ratio": 0.4609375 if fault == "truncation" else 0.0,
        "kl": 0.03 if fault == "kl" else 0.0, "loss": float("nan") if fault == "nan-loss" else 0.0123, **edges})


def long_line(chars: int) -> str:
    """An SGLang line echoing a prompt of `chars` characters in all (a request dump at --log-level debug)."""
    head = "[2026-07-01 10:00:00 TP0] Receive: obj=GenerateReqInput(text='"
    return head + ("Solve for x: 3x + 7 = 22. " * (chars // 26 + 1))[:max(0, chars - len(head) - 2)] + "')"


def main() -> int:
    args = parser().parse_args()
    fault = os.environ.get("RLCHECK_STANDIN_FAULT", "")
    phase_s = float(os.environ.get("RLCHECK_STANDIN_PHASE_S", "0.1"))
    version = os.environ.get("RLCHECK_STANDIN_SLIME", slime_lines.slime_log.DEFAULT_VERSION)
    edges = overrides(os.environ.get("RLCHECK_STANDIN_SHAPE", ""))

    def before(milestone: str) -> None:
        if fault == f"hang:{milestone}":
            hang()
        if fault.startswith("long-line:") and milestone == "rollout":
            print(long_line(int(fault.removeprefix("long-line:"))), flush=True)

    log = slime_lines.SlimeLog(version=version, write=lambda line: print(line, flush=True), now=time.time,
                               wait=time.sleep)
    if fault == "crash":
        raise RuntimeError("stand-in trainer crashed on purpose")
    if fault == "dead-worker":
        print("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.", flush=True)
        return 1
    before("placement-group")
    log.startup(num_gpus=int(args.actor_num_nodes or 1) * int(args.actor_num_gpus_per_node or 8), startup_s=0)
    before("train-actor-ready")
    log.train_actor_ready()
    before("weights-synced")
    log.first_sync(phase_s)
    for i in range(int(args.num_rollout)):
        if fault.startswith("known:") and i == 0:
            print(f"rlcheck-standin: signature at {time.time():.6f}", flush=True)  # for benchmarks/failfast
            print(fault_line(fault.removeprefix("known:")), flush=True)
            hang()
        slime_lines.loop(log, i, shape(args, fault, phase_s, edges), before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
