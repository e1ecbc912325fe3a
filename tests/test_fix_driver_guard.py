"""The image's driver guard, with the real megatron.training in GPU-less children: armed from a .pth file."""

from __future__ import annotations

import sys

from rlcheck.fixes import driver_guard
from rlcheck.process import subproc
from rlcheck.repro.megatron_args import SEED_30B_WORLD_SIZE, qwen3_30b_a3b_argv

VALIDATE = """
import site, sys
if sys.argv[1] != "-":
    site.addsitedir(sys.argv[1])  # processes the .pth file, as interpreter start does in site-packages
from megatron.training.arguments import parse_args, validate_args
sys.argv = ["train.py", *sys.argv[2:]]
validate_args(parse_args())
print("RESULT validate_args completed")
"""


def validate(site_dir: str, **env: str) -> subproc.Completed:
    child = subproc.child_env() | {"WORLD_SIZE": str(SEED_30B_WORLD_SIZE), "RANK": "0", "CUDA_VISIBLE_DEVICES": ""}
    child.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)
    return subproc.run([sys.executable, "-c", VALIDATE, site_dir, *qwen3_30b_a3b_argv()], timeout_s=240,
                       env=child | env)


def test_fix_driver_guard_pth_lets_the_gpu_less_driver_validate(tmp_path):
    assert driver_guard.main(["--install", "--site-packages", str(tmp_path)]) == 0
    assert (tmp_path / driver_guard.PTH_NAME).exists()
    unguarded, guarded = subproc.concurrently(  # two cold interpreters, each on a core
        lambda: validate("-", CUDA_DEVICE_MAX_CONNECTIONS="1"),
        lambda: validate(str(tmp_path), CUDA_DEVICE_MAX_CONNECTIONS="1", RLCHECK_WORKER_CAPABILITY="9.0"))
    assert "Found no NVIDIA driver" in unguarded.stderr
    assert "RESULT validate_args completed" in guarded.stdout, guarded.tail()


def test_fix_driver_guard_keeps_hoppers_connection_assert(tmp_path):
    driver_guard.main(["--install", "--site-packages", str(tmp_path)])
    hopper, blackwell = subproc.concurrently(lambda: validate(str(tmp_path), RLCHECK_WORKER_CAPABILITY="9.0"),
                                             lambda: validate(str(tmp_path), RLCHECK_WORKER_CAPABILITY="10.3"))
    assert "require setting the environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1" in hopper.stderr
    assert "RESULT validate_args completed" in blackwell.stdout, blackwell.tail()


def test_fix_driver_guard_refuses_a_bad_capability(monkeypatch):
    monkeypatch.setenv(driver_guard.ENV_NAME, "hopper")
    try:
        driver_guard.capability_from_env()
    except ValueError as exc:
        assert "RLCHECK_WORKER_CAPABILITY='hopper': a compute capability such as '9.0'" in str(exc)
    else:
        raise AssertionError("a bad capability was accepted")
