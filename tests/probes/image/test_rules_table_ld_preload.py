"""LD_PRELOAD in the job's runtime env against torch_memory_saver's preload as rule tables
(rlcheck/probes/image/ld_preload.py): which roles SLIME runs under torch_memory_saver (each --offload* spelling,
--colocate with and without --release-train, the PPO critic, the last of --flag / --no-flag winning) and each
verdict with its whole summary."""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.probes.image.ld_preload import FAILURE_ID, evaluate_ld_preload_env, offload_roles
from rlcheck.verdict import Status

REMEDY = catalog.get(FAILURE_ID).remedy
HOOK = "/usr/local/lib/python3.12/site-packages/torch_memory_saver_hook_mode_preload.abi3.so"


@pytest.mark.parametrize(("argv", "roles"), [
    ([], []),
    (["--offload-train"], ["train"]),
    (["--offload-rollout"], ["rollout"]),
    (["--offload-train", "--no-offload-train"], []),
    (["--no-offload-train", "--offload-train"], ["train"]),
    (["--offload-rollout", "--no-offload-rollout"], []),
    (["--offload"], ["train", "rollout"]),
    (["--offload", "--no-offload-train", "--no-offload-rollout"], ["train", "rollout"]),  # --offload sets both
    (["--colocate"], ["train", "rollout"]),
    (["--colocate", "--no-offload-train"], ["rollout"]),
    (["--colocate", "--no-offload-rollout"], ["train"]),
    (["--colocate", "--no-offload-train", "--no-offload-rollout"], []),
    (["--colocate", "--release-train"], ["rollout"]),
    (["--colocate", "--release-train", "--offload-train"], ["rollout"]),
    (["--colocate", "--release-train", "--no-offload-rollout"], ["rollout"]),
    (["--release-train"], []),  # without --colocate it settles nothing
    (["--release-train", "--offload-rollout"], ["rollout"]),
    (["--advantage-estimator", "ppo"], ["train"]),  # the critic forces offload_train
    (["--advantage-estimator=ppo"], ["train"]),
    (["--advantage-estimator", "ppo", "--advantage-estimator", "grpo"], []),  # the last one given
    (["--advantage-estimator", "grpo"], []),
    (["--advantage-estimator"], []),
    (["ppo", "--advantage-estimator"], []),
    (["--colocate", "--no-offload-train", "--advantage-estimator", "ppo"], ["train", "rollout"]),
    (["--debug-rollout-only", "--offload"], []),
    (["--offload", "--debug-rollout-only", "--colocate"], []),
])
def test_rules_table_ld_preload_offload_roles(argv, roles):
    assert offload_roles(argv) == roles


def _verdict(value: str | None, *argv: str):
    env = {} if value is None else {"LD_PRELOAD": value}
    return evaluate_ld_preload_env(env, list(argv), "job")


TWO = ("the engines see two torch_memory_saver entries and torch_memory_saver asserts invalid LD_PRELOAD")


@pytest.mark.parametrize(("value", "argv", "status", "summary"), [
    (None, ("--offload",), Status.PASS, "job: no LD_PRELOAD in the job's runtime env"),
    ("", ("--offload",), Status.PASS, "job: no LD_PRELOAD in the job's runtime env"),
    ("  ", ("--offload",), Status.PASS, "job: no LD_PRELOAD in the job's runtime env"),
    (HOOK, (), Status.SKIP, "job: LD_PRELOAD is set but offload is off: torch_memory_saver is not preloaded"),
    ("libjemalloc.so", ("--debug-rollout-only", "--colocate"), Status.SKIP,
     "job: LD_PRELOAD is set but offload is off: torch_memory_saver is not preloaded"),
    (HOOK, ("--offload-rollout",), Status.FAIL,
     f"job: the job's runtime env preloads {HOOK} with offload on (rollout): SGLang's memory saver prepends its own "
     f"hook, so {TWO}"),
    (f" {HOOK} ", ("--colocate",), Status.FAIL,
     f"job: the job's runtime env preloads {HOOK} with offload on (train and rollout): SGLang's memory saver prepends "
     f"its own hook, so {TWO}"),
    (f"libjemalloc.so:{HOOK}:/x/torch_memory_saver.so", ("--offload",), Status.FAIL,
     f"job: the job's runtime env preloads {HOOK}, /x/torch_memory_saver.so with offload on (train and rollout): "
     f"SGLang's memory saver prepends its own hook, so {TWO}"),
    (HOOK, ("--offload-train",), Status.WARN,
     f"job: the job's runtime env preloads {HOOK} with offload on (train): SLIME replaces it in its train actors, "
     "every other process of the job loads that build"),
    (f"{HOOK}:/x/torch_memory_saver.so", ("--offload-train",), Status.WARN,
     f"job: the job's runtime env preloads {HOOK}, /x/torch_memory_saver.so with offload on (train): SLIME replaces it "
     "in its train actors, every other process of the job loads that build"),
    ("libjemalloc.so", ("--offload-train",), Status.WARN,
     "job: the job's runtime env preloads libjemalloc.so with offload on (train): torch_memory_saver before #64 "
     "(0.0.9 and older) asserts invalid LD_PRELOAD beside another library, and SLIME's train actors lose it (their "
     "LD_PRELOAD is the hook alone)"),
    ("a.so::b.so:", ("--offload-rollout",), Status.WARN,
     "job: the job's runtime env preloads a.so, b.so with offload on (rollout): torch_memory_saver before #64 "
     "(0.0.9 and older) asserts invalid LD_PRELOAD beside another library, and SLIME's train actors lose it (their "
     "LD_PRELOAD is the hook alone)"),
    ("TORCH_MEMORY_SAVER.so", ("--offload-rollout",), Status.WARN,  # the hook's name is matched as written
     "job: the job's runtime env preloads TORCH_MEMORY_SAVER.so with offload on (rollout): torch_memory_saver before "
     "#64 (0.0.9 and older) asserts invalid LD_PRELOAD beside another library, and SLIME's train actors lose it "
     "(their LD_PRELOAD is the hook alone)"),
])
def test_rules_table_ld_preload_verdicts(value, argv, status, summary):
    verdict = _verdict(value, *argv)
    assert (verdict.status, verdict.summary) == (status, summary)
    assert verdict.remedy == (REMEDY if status in (Status.FAIL, Status.WARN) else "")
    assert verdict.failure_id == FAILURE_ID
