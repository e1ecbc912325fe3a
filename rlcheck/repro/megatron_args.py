"""Megatron's validate_args in a child process: the seed recipes' argv and rlcheck's driver guard.

SLIME parses and validates Megatron's arguments in the Ray job driver, which has no GPU. The
reproducers run the real megatron.training.arguments the same way: in a child with no visible GPU,
with WORLD_SIZE / RANK as the launcher sets them, and never in the pytest process itself. Each child is
forked from one warm interpreter that imported megatron.training.arguments once in that GPU-less driver
environment (rlcheck.process.warm); only the variables Megatron reads at run time differ between children.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from rlcheck import catalog
from rlcheck.process import subproc, warm

# SLIME scripts/models/qwen3-30B-A3B.sh (reference: slime-miles.md 1.3).
QWEN3_30B_A3B_MODEL = (
    "--num-layers", "48", "--hidden-size", "2048", "--ffn-hidden-size", "6144",
    "--num-attention-heads", "32", "--group-query-attention", "--num-query-groups", "4", "--kv-channels", "128",
    "--disable-bias-linear", "--qk-layernorm", "--normalization", "RMSNorm", "--norm-epsilon", "1e-6",
    "--position-embedding-type", "rope", "--rotary-percent", "1.0", "--rotary-base", "1000000", "--swiglu",
    "--untie-embeddings-and-output-weights", "--vocab-size", "151936",
    "--num-experts", "128", "--moe-router-topk", "8", "--moe-ffn-hidden-size", "768", "--moe-grouped-gemm",
    "--moe-token-dispatcher-type", "alltoall", "--moe-router-score-function", "softmax",
    "--moe-token-drop-policy", "probs", "--moe-router-dtype", "fp32", "--moe-permute-fusion",
    "--moe-aux-loss-coeff", "0", "--moe-layer-freq", "([1]*48)",
)
# The seed's 30B run: 12 train GPUs at TP2 / EP2 / CP2 (sequence parallel with TP).
SEED_30B_PARALLELISM = (
    "--tensor-model-parallel-size", "2", "--context-parallel-size", "2",
    "--expert-model-parallel-size", "2", "--sequence-parallel",
)
SEED_30B_WORLD_SIZE = 16
"""TP x PP x CP = 4 divides it; 16 = two 8-GPU nodes."""
# What validate_args needs beyond the model on CPU (reference: feasibility.md 5); no tokenizer files.
CPU_MINIMUM = (
    "--micro-batch-size", "1", "--global-batch-size", "256", "--seq-length", "4096",
    "--max-position-embeddings", "4096", "--tokenizer-type", "NullTokenizer", "--train-iters", "10",
    "--lr", "1e-6", "--bf16",
)
TINY_DENSE = ("--num-layers", "2", "--hidden-size", "64", "--num-attention-heads", "4", "--vocab-size", "1000")

# The driver guard is rlcheck's fix (rlcheck.fixes.driver_guard): where no GPU is visible it answers
# Megatron's two device probes with the workers' compute capability; GPU workers keep the real probes.
VALIDATE = """
import os, sys
from megatron.training import arguments
capability = os.environ.get("RLCHECK_GUARD_CAPABILITY")
if capability:
    from rlcheck.fixes.driver_guard import install
    print("guard installed:", install(arguments, tuple(int(x) for x in capability.split("."))))
sys.argv = ["train.py", *sys.argv[1:]]
arguments.validate_args(arguments.parse_args())
print("RESULT validate_args completed")
"""
_ERROR_LINE = re.compile(r"^(?:\[rank\d+\]: )?[\w.]*(?:Error|Exception): .*$", re.MULTILINE)


PRELOAD = ("megatron.training.arguments",)
TORCH_PRELOAD = ("numpy", "torch", "torch.distributed")
"""The warm interpreter of the children that import Megatron themselves: one whose run must reach CUDA (importing
Megatron counts the devices: a fork after that cannot initialise CUDA), and those that bring their own Megatron (a
side directory, or none: a mirror without it). numpy and torch are imported once, never Megatron, and nothing counts
the devices. The numpy-2 children share one with numpy 2 on PYTHONPATH."""
# Read by parse_args / validate_args / torch.distributed when the code runs, not when Megatron is imported.
RUNTIME = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "RLCHECK_GUARD_CAPABILITY",
           "CUDA_DEVICE_MAX_CONNECTIONS")


def driver_env(pythonpath: Sequence[str] = ()) -> dict[str, str]:
    """A fresh Ray job driver's environment: no GPU visible, offline, CUDA_DEVICE_MAX_CONNECTIONS only if set."""
    child = subproc.child_env(pythonpath)
    child.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)  # only what the caller sets, as in a fresh Ray job env
    return child | {"CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def run_python(code: str, argv: Sequence[str] = (), *, env: Mapping[str, str] | None = None,
               pythonpath: Sequence[str] = (), timeout_s: float = 180,
               preload: Sequence[str] = PRELOAD) -> subproc.Completed:
    """`python -c code argv...` in the driver environment plus env (RUNTIME names only: the rest is the set's).

    preload TORCH_PRELOAD: forked from the interpreter that imported torch but not Megatron, for a run that must reach
    CUDA initialisation: importing Megatron counts the devices, after which a fork cannot (rlcheck.process.warm).
    """
    extra = dict(env or {})
    if set(extra) - set(RUNTIME):
        raise ValueError(f"only {RUNTIME} may differ between runs of one warm interpreter, got {sorted(extra)}")
    return warm.python(code, argv, preload=tuple(preload), env=driver_env(pythonpath) | extra, runtime=RUNTIME,
                       timeout_s=timeout_s)


def qwen3_30b_a3b_argv() -> tuple[str, ...]:
    """The seed's Qwen3-30B-A3B MoE recipe as Megatron receives it (model, parallelism, CPU minimum)."""
    return (*QWEN3_30B_A3B_MODEL, *SEED_30B_PARALLELISM, *CPU_MINIMUM)


def tiny_dense_argv() -> tuple[str, ...]:
    """A two-layer dense model, TP 1: validate_args on one rank, no device probe."""
    return (*TINY_DENSE, *CPU_MINIMUM)


def error_line(text: str) -> str:
    """The last 'SomethingError: message' line of a child's output, '' when there is none."""
    found = _ERROR_LINE.findall(text)
    return found[-1] if found else ""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Validated:
    ok: bool
    """validate_args returned."""
    error: str
    """The error line the child died with, '' when ok."""
    output: subproc.Completed

    def matches(self, failure_id: str) -> bool:
        """The child died with a line the catalogue attributes to failure_id."""
        return not self.ok and any(p.search(self.error) for p in catalog.get(failure_id).patterns)

    def outcome(self) -> str:
        return "validate_args completed" if self.ok else (self.error or self.output.why())


def run_validate_args(argv: Sequence[str], *, world_size: int, guard_capability: str | None = None,
                      env: Mapping[str, str] | None = None, pythonpath: Sequence[str] = (),
                      timeout_s: float = 180, preload: Sequence[str] = PRELOAD) -> Validated:
    """parse_args + validate_args of the real megatron.training in a child that sees no GPU."""
    child = {"WORLD_SIZE": str(world_size), "RANK": "0", "LOCAL_RANK": "0"}
    if guard_capability:
        child["RLCHECK_GUARD_CAPABILITY"] = guard_capability
    child |= dict(env or {})
    done = run_python(VALIDATE, argv, env=child, pythonpath=pythonpath, timeout_s=timeout_s, preload=preload)
    ok = done.returncode == 0 and "RESULT validate_args completed" in done.stdout
    return Validated(ok=ok, error="" if ok else error_line(done.stderr), output=done)
