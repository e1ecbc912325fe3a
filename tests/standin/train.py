"""A stand-in for SLIME's train.py that honours its process contract, for rlcheck's harness tests only.

It parses the rendered argv strictly (an unknown flag exits 2, as argparse does), prints SLIME's real
progress lines (SGLang's readiness, `Final collected N samples from rollout to train`, `Timer X end
(elapsed: Ns)`, the `rollout N: {...}` and `step N: {...}` metric lines) in their real order for
--num-rollout loops, and on request ($RLCHECK_STANDIN_FAULT) goes wrong the way a real run does:

    known:<failure_id>   print that catalogue entry's real log line during loop 0, then hang
    hang:<milestone>     stop just before that milestone and hang (sglang-ready, rollout-collected, ...)
    crash                die with a Python traceback (exit 1)
    dead-worker          Ray's actor-died error, then exit 1
    zero-reward | kl | truncation   metric lines that break the in-run invariants
"""

from __future__ import annotations

import argparse
import os
import sys
import time

BOOL_FLAGS = (
    "apply-chat-template", "colocate", "disable-bias-linear", "enable-experimental", "group-query-attention",
    "moe-grouped-gemm", "moe-permute-fusion", "moe-router-enable-expert-bias", "moe-router-pre-softmax",
    "multi-latent-attention", "no-position-embedding", "optimizer-cpu-offload", "qk-layernorm", "rollout-shuffle",
    "sequence-parallel", "sglang-enable-dp-attention", "sglang-enable-dp-lm-head", "swiglu",
    "untie-embeddings-and-output-weights", "use-dynamic-batch-size", "use-kl-loss", "use-tis", "moe-enable-deepep",
)
VALUE_FLAGS = (
    "actor-num-gpus-per-node", "actor-num-nodes", "adam-beta1", "adam-beta2", "advantage-estimator",
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
PHASES = ("ref_log_probs", "actor_train", "train", "update_weights")


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


def say(actor: str, text: str) -> None:
    print(f"({actor} pid={os.getpid()}) [{time.strftime('%Y-%m-%d %H:%M:%S')}] INFO {text}", flush=True)


def hang() -> None:
    time.sleep(600)


def fault_line(failure_id: str) -> str:
    from rlcheck.catalog import get

    return get(failure_id).examples[0]


def loop(i: int, samples: int, fault: str, phase_s: float) -> None:
    if fault == "hang:rollout-collected":
        hang()
    time.sleep(phase_s)
    say("RolloutManager", f"Final collected {samples} samples from rollout to train")
    reward, truncated = (0.0 if fault == "zero-reward" else 0.4375), (0.84 if fault == "truncation" else 0.0)
    say("RolloutManager", f"rollout {i}: {{'rollout/raw_reward': {reward}, 'rollout/truncated_ratio': {truncated}, "
                          f"'rollout/response_len/mean': 2311.5}}")
    if fault.startswith("known:") and i == 0:
        line = fault_line(fault.removeprefix("known:"))
        print(f"rlcheck-standin: signature at {time.time():.6f}", flush=True)  # for benchmarks/failfast
        print(line, flush=True)
        hang()
    say("MegatronTrainRayActor", "Timer train start")
    for phase in PHASES:
        if fault == f"hang:{phase}":
            hang()
        time.sleep(phase_s)
        if phase == "train":
            kl = 0.03 if fault == "kl" and i == 0 else 0.0
            say("MegatronTrainRayActor", f"step {i}: {{'train/loss': 0.0123, 'train/ppo_kl': {kl}, "
                                         f"'train/kl_loss': 0.0, 'train/step': {i}}}")
        say("MegatronTrainRayActor", f"Timer {phase} end (elapsed: {phase_s:.1f}s)")


def main() -> int:
    args = parser().parse_args()
    fault = os.environ.get("RLCHECK_STANDIN_FAULT", "")
    phase_s = float(os.environ.get("RLCHECK_STANDIN_PHASE_S", "0.1"))
    print("2026-07-01 10:00:01,123 INFO worker.py:1843 -- Connecting to existing Ray cluster", flush=True)
    if fault == "crash":
        raise RuntimeError("stand-in trainer crashed on purpose")
    if fault == "dead-worker":
        print("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.", flush=True)
        return 1
    if fault == "hang:sglang-ready":
        hang()
    say("SGLangEngine", "The server is fired up and ready to roll!")
    samples = int(args.global_batch_size) * int(args.num_steps_per_rollout or 1)
    for i in range(int(args.num_rollout)):
        loop(i, samples, fault, phase_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
